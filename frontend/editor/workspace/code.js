// The learner's code: CodeMirror when its bundle loaded, else the plain
// textarea; and the visible switch for what the Tab key does in it.
import { $ } from "./dom.js";

const TAB_STORE = "dojo-tab-indents";

function isDark() { return window.DojoTheme ? window.DojoTheme.isDark() : false; }

function storedTabIndents() {
  try { return localStorage.getItem(TAB_STORE) !== "false"; } catch (e) { return true; }
}

/**
 * Mount the editor. handlers: onChange(), onRun(), onSubmit().
 * Returns { getCode, setCode, focus, editor }.
 */
export function createCode(handlers) {
  const textarea = $("code");
  const toggle = $("tab-mode");
  const hint = $("tab-hint-text");
  let editor = null;

  function showTabMode(indents, passing) {
    toggle.textContent = indents ? "Tab key: indents" : "Tab key: moves focus";
    toggle.setAttribute("aria-pressed", String(!indents));
    if (passing) {
      hint.textContent = "You reached the editor with Tab: press Tab again to move on, or type to edit (Tab then indents; Ctrl+M switches).";
    } else if (indents) {
      hint.textContent = "Tab indents. Esc then Tab leaves the editor; Ctrl+M (or the Tab key button) makes Tab move focus.";
    } else {
      hint.textContent = "Tab moves focus out of the editor. Ctrl+M (or the Tab key button) makes Tab indent again.";
    }
  }
  function setTabIndents(indents) {
    try { localStorage.setItem(TAB_STORE, String(indents)); } catch (e) { /* private mode */ }
    if (editor) editor.setTabIndents(indents);
    showTabMode(indents, false);
  }

  if (window.DojoEditor) {
    const host = $("editor-host");
    const initial = textarea.value;
    host.replaceChildren();
    editor = window.DojoEditor.create(host, {
      doc: initial,
      dark: isDark(),
      label: "Your solution (Python)",
      tabIndents: storedTabIndents(),
      onChange: handlers.onChange,
      onRun: handlers.onRun,
      onSubmit: handlers.onSubmit,
      onTabMode: setTabIndents,
      onFocus: (byKeyboard) => { $("tab-hint").classList.add("focused"); showTabMode(editor.tabIndents(), byKeyboard && editor.tabIndents()); },
      onBlur: () => $("tab-hint").classList.remove("focused"),
    });
    document.addEventListener("dojo:theme", (e) => editor.setDark(e.detail.dark));
    toggle.addEventListener("click", () => setTabIndents(!editor.tabIndents()));
    showTabMode(editor.tabIndents(), false);
  } else {
    textarea.addEventListener("input", handlers.onChange);
    toggle.hidden = true;
  }
  const getCode = () => (editor ? editor.getValue() : textarea.value);
  const setCode = (text) => { if (editor) editor.setValue(text); else { textarea.value = text; handlers.onChange(); } };
  const focus = () => { if (editor) editor.focus(); else textarea.focus(); };
  return { getCode, setCode, focus, editor };
}
