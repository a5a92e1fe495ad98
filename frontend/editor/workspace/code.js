// The learner's code: CodeMirror when its bundle loaded, else the plain textarea.
import { $ } from "./dom.js";

function isDark() { return window.DojoTheme ? window.DojoTheme.isDark() : false; }

/**
 * Mount the editor. handlers: onChange(), onRun(), onSubmit().
 * Returns { getCode, setCode, focus, editor }.
 */
export function createCode(handlers) {
  const textarea = $("code");
  let editor = null;
  if (window.DojoEditor) {
    const host = $("editor-host");
    const initial = textarea.value;
    host.replaceChildren();
    editor = window.DojoEditor.create(host, {
      doc: initial,
      dark: isDark(),
      label: "Your solution (Python)",
      onChange: handlers.onChange,
      onRun: handlers.onRun,
      onSubmit: handlers.onSubmit,
    });
    document.addEventListener("dojo:theme", (e) => editor.setDark(e.detail.dark));
  } else {
    textarea.addEventListener("input", handlers.onChange);
  }
  const getCode = () => (editor ? editor.getValue() : textarea.value);
  const setCode = (text) => { if (editor) editor.setValue(text); else { textarea.value = text; handlers.onChange(); } };
  const focus = () => { if (editor) editor.focus(); };
  return { getCode, setCode, focus, editor };
}
