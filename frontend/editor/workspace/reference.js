// The solved badge, and the reference solution beside the learner's once
// passed, both highlighted like the editor.
import { $ } from "./dom.js";

export function markSolved(root) {
  root.dataset.solved = "true";
  const badge = $("solved-badge");
  badge.textContent = "\u2714 Solved";
  badge.className = "badge solved";
  $("after-pass").hidden = false;
}

function showCode(element, code) {
  const pre = document.createElement("pre");
  pre.className = "highlighted";
  if (window.DojoEditor && window.DojoEditor.highlight) window.DojoEditor.highlight(pre, code);
  else pre.textContent = code;
  element.replaceChildren(pre);
}

export async function showReference(url, getCode, focus) {
  const resp = await fetch(url, { credentials: "same-origin" });
  if (!resp.ok) return;
  const data = await resp.json();
  showCode($("reference-code"), data.reference);
  showCode($("your-code"), data.your_solution || getCode());
  const list = $("hidden-tests");
  list.replaceChildren();
  for (const t of data.hidden_tests) {
    const li = document.createElement("li");
    const name = document.createElement("code");
    name.textContent = t.name;
    li.append(name, document.createTextNode(": " + (t.description || "")));
    if (t.source) {
      // Its author chose to show this test's code once the rung is solved.
      const code = document.createElement("div");
      code.className = "code-view hidden-test-source";
      showCode(code, t.source);
      li.appendChild(code);
    }
    list.appendChild(li);
  }
  const section = $("reference");
  section.hidden = false;
  if (focus) $("status").textContent += "\nThe reference solution is unlocked below the workspace, beside yours.";
}
