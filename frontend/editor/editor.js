// The workspace editor: CodeMirror 6 with Python, one-dark for the dark theme,
// and Run / Submit shortcuts. Bundled by build.mjs into
// frontend/static/frontend/editor.bundle.js, which exposes window.DojoEditor.
import { basicSetup } from "codemirror";
import { EditorView, keymap } from "@codemirror/view";
import { EditorState, Compartment, Prec } from "@codemirror/state";
import { indentWithTab } from "@codemirror/commands";
import { indentUnit } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { oneDark } from "@codemirror/theme-one-dark";

const lightTheme = EditorView.theme({
  "&": { backgroundColor: "var(--bg, #fff)", color: "var(--fg, #1b1f23)" },
  ".cm-gutters": { backgroundColor: "var(--card, #f6f8fa)", color: "var(--muted, #57606a)", border: "none" },
}, { dark: false });

/**
 * Mount an editor in `parent`.
 * options: doc (string), dark (bool), label (string), onChange(text),
 *          onRun(), onSubmit() (Ctrl/Cmd-Enter and Ctrl/Cmd-Shift-Enter).
 */
function create(parent, options = {}) {
  const theme = new Compartment();
  const shortcuts = Prec.highest(keymap.of([
    { key: "Mod-Enter", run: () => { if (options.onRun) options.onRun(); return true; } },
    { key: "Shift-Mod-Enter", run: () => { if (options.onSubmit) options.onSubmit(); return true; } },
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
        // Tab indents; Escape then Tab moves focus on (CodeMirror's documented escape hatch).
        keymap.of([indentWithTab]),
        shortcuts,
        theme.of(options.dark ? oneDark : lightTheme),
        EditorView.contentAttributes.of({ "aria-label": options.label || "Code editor" }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && options.onChange) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    getValue: () => view.state.doc.toString(),
    setValue: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    setDark: (dark) => view.dispatch({ effects: theme.reconfigure(dark ? oneDark : lightTheme) }),
    focus: () => view.focus(),
  };
}

window.DojoEditor = { create };
