// The workspace editor: CodeMirror 6 with Python, one-dark for the dark theme,
// and Run / Submit shortcuts. Bundled by build.mjs into
// frontend/static/frontend/editor.bundle.js, which exposes window.DojoEditor.
import { basicSetup } from "codemirror";
import { EditorView, keymap } from "@codemirror/view";
import { EditorState, Compartment, Prec } from "@codemirror/state";
import { indentLess, indentMore } from "@codemirror/commands";
import { HighlightStyle, defaultHighlightStyle, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { oneDark } from "@codemirror/theme-one-dark";
import { classHighlighter, highlightCode } from "@lezer/highlight";
import { parser as pythonParser } from "@lezer/python";

const lightTheme = EditorView.theme({
  "&": { backgroundColor: "var(--bg, #fff)", color: "var(--fg, #1b1f23)" },
  ".cm-gutters": { backgroundColor: "var(--card, #f6f8fa)", color: "var(--muted, #57606a)", border: "none" },
}, { dark: false });
// CodeMirror's default light colours, but for regexps, escapes and special strings: its
// #e40 is 3.8:1 on white, under WCAG's 4.5:1 (axe's color-contrast); #b33a00 is 6:1.
const lightHighlight = syntaxHighlighting(HighlightStyle.define(
  defaultHighlightStyle.specs.map((spec) => (spec.color === "#e40" ? { ...spec, color: "#b33a00" } : spec)),
));

/**
 * Mount an editor in `parent`.
 * options: doc (string), dark (bool), label (string), onChange(text),
 *          onRun(), onSubmit() (Ctrl/Cmd-Enter and Ctrl/Cmd-Shift-Enter),
 *          tabIndents (bool, default true), onTabMode(indents) (Ctrl-M toggled it),
 *          onFocus(byKeyboard), onBlur().
 *
 * The Tab key: it indents (tabIndents) or moves focus, and Ctrl-M switches
 * (as in Monaco). Even when it indents, a Tab pressed right after reaching
 * the editor with the keyboard, before anything else is typed, moves focus
 * on: a keyboard user passing through is never trapped, and never leaves a
 * stray indent (an IndentationError) behind. Escape then Tab also leaves.
 */
function create(parent, options = {}) {
  const theme = new Compartment();
  let tabIndents = options.tabIndents !== false;
  let passingThrough = false;  // reached by keyboard, nothing typed yet
  const tab = (command) => (view) => (tabIndents && !passingThrough ? command(view) : false);
  const shortcuts = Prec.highest(keymap.of([
    { key: "Mod-Enter", run: () => { if (options.onRun) options.onRun(); return true; } },
    { key: "Shift-Mod-Enter", run: () => { if (options.onSubmit) options.onSubmit(); return true; } },
    { key: "Ctrl-m", run: () => { tabIndents = !tabIndents; if (options.onTabMode) options.onTabMode(tabIndents); return true; } },
  ]));
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.doc || "",
      extensions: [
        basicSetup,
        python(),
        indentUnit.of("    "),
        EditorState.tabSize.of(4),
        // Tab indents unless switched off or passing through; Escape then Tab
        // always moves focus on (CodeMirror's documented escape hatch).
        keymap.of([{ key: "Tab", run: tab(indentMore), shift: tab(indentLess) }]),
        shortcuts,
        EditorView.domEventHandlers({
          keydown: (event) => { if (!["Tab", "Shift", "Control", "Meta", "Alt", "Escape"].includes(event.key)) passingThrough = false; return false; },
          mousedown: () => { passingThrough = false; return false; },
          focus: () => { passingThrough = keyboardFocus; if (options.onFocus) options.onFocus(keyboardFocus); return false; },
          blur: () => { if (options.onBlur) options.onBlur(); return false; },
        }),
        theme.of(options.dark ? oneDark : [lightTheme, lightHighlight]),
        // tabindex: the content is focusable already (contenteditable), but axe counts only a
        // tabindex as focusable content of the scroller (scrollable-region-focusable).
        EditorView.contentAttributes.of({ "aria-label": options.label || "Code editor", tabindex: "0" }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && options.onChange) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    setTabIndents: (value) => { tabIndents = Boolean(value); },
    tabIndents: () => tabIndents,
    getValue: () => view.state.doc.toString(),
    setValue: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    setDark: (dark) => view.dispatch({ effects: theme.reconfigure(dark ? oneDark : [lightTheme, lightHighlight]) }),
    focus: () => view.focus(),
  };
}

// Whether the last interaction before a focus change was the keyboard.
let keyboardFocus = false;
document.addEventListener("keydown", (event) => { if (event.key === "Tab") keyboardFocus = true; }, true);
document.addEventListener("pointerdown", () => { keyboardFocus = false; }, true);

/** Fill `element` with `code` highlighted as Python, in the editor's colours (tok-* classes). */
function highlight(element, code) {
  element.replaceChildren();
  highlightCode(code, pythonParser.parse(code), classHighlighter, (text, classes) => {
    if (!classes) { element.appendChild(document.createTextNode(text)); return; }
    const span = document.createElement("span");
    span.className = classes;
    span.textContent = text;
    element.appendChild(span);
  }, () => element.appendChild(document.createTextNode("\n")));
}

window.DojoEditor = { create, highlight };
