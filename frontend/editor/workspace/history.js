// The learner's attempts at this rung, each viewable with a diff against the editor.
import { $, setStatus } from "./dom.js";
import { lineDiff } from "./diff.js";

/**
 * url: the history endpoint. code: { getCode, setCode }.
 * resume(latest): called on load when the latest attempt is still in flight.
 * Returns { load(resume) }.
 */
export function createHistory(url, code, resume) {
  let attempts = [];
  let shown = null;

  function showAttempt(attempt) {
    shown = attempt;
    for (const b of $("history-list").querySelectorAll("button")) b.setAttribute("aria-current", String(b.dataset.id === String(attempt.id)));
    $("history-code").textContent = attempt.code;
    const diff = $("history-diff");
    diff.replaceChildren();
    const lines = lineDiff(attempt.code, code.getCode());
    if (lines.every(([op]) => op === " ")) {
      diff.textContent = "No differences: your current code is this attempt.";
    } else {
      for (const [op, text] of lines) {
        const span = document.createElement("span");
        span.className = op === "+" ? "add" : op === "-" ? "del" : "same";
        span.textContent = op + " " + text;
        diff.appendChild(span);
      }
    }
    $("history-view").hidden = false;
  }

  async function load(resuming) {
    const resp = await fetch(url, { credentials: "same-origin", cache: "no-store" });
    if (!resp.ok) return;
    attempts = (await resp.json()).attempts;
    const latest = attempts[0];
    if (resuming && latest && (latest.status === "queued" || latest.status === "running")) resume(latest);
    const list = $("history-list");
    list.replaceChildren();
    $("history-empty").hidden = attempts.length > 0;
    for (const attempt of attempts) {
      const li = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.id = String(attempt.id);
      const when = new Date(attempt.enqueued_at);
      button.textContent = (attempt.kind === "submit" ? "Submit" : "Run") + " #" + attempt.id + " \u00b7 " +
        (attempt.outcome || attempt.status) + " \u00b7 " + when.toLocaleString();
      button.addEventListener("click", () => showAttempt(attempt));
      li.appendChild(button);
      list.appendChild(li);
    }
    if (shown) {
      const again = attempts.find((a) => a.id === shown.id);
      if (again) showAttempt(again);
    }
  }

  $("history-load").addEventListener("click", () => {
    if (!shown) return;
    code.setCode(shown.code);
    setStatus("Loaded attempt #" + shown.id + " into the editor. Ctrl/Cmd+Z in the editor undoes it.");
    showAttempt(shown);
  });
  $("history").addEventListener("toggle", () => { if ($("history").open) load(false); });
  return { load };
}
