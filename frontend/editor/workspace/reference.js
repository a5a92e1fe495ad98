// The solved badge, and the reference solution beside the learner's once passed.
import { $ } from "./dom.js";

export function markSolved(root) {
  root.dataset.solved = "true";
  const badge = $("solved-badge");
  badge.textContent = "\u2714 Solved";
  badge.className = "badge solved";
}

export async function showReference(url, getCode, focus) {
  const resp = await fetch(url, { credentials: "same-origin" });
  if (!resp.ok) return;
  const data = await resp.json();
  $("reference-code").textContent = data.reference;
  $("your-code").textContent = data.your_solution || getCode();
  const list = $("hidden-tests");
  list.replaceChildren();
  for (const t of data.hidden_tests) {
    const li = document.createElement("li");
    const name = document.createElement("code");
    name.textContent = t.name;
    li.append(name, document.createTextNode(": " + (t.description || "")));
    list.appendChild(li);
  }
  const section = $("reference");
  section.hidden = false;
  if (focus) {
    $("status").textContent += "\nThe reference solution is unlocked below, beside yours.";
    section.scrollIntoView({ behavior: "smooth", block: "start" });
  }
}
