// The learner's attempts at this rung, a page at a time: each with its
// score, its results (reopened into the output) and a diff against the editor.
import { $, setStatus } from "./dom.js";
import { lineDiff } from "./diff.js";

/** The learner's own count of attempts at this rung (ids are global, with gaps). */
export function attemptNumber(a) { return a.number || a.id; }

function attemptLabel(a) {
  const kind = a.kind === "submit" ? "Submit" : "Run";
  const score = a.total ? " \u00b7 " + a.passed + "/" + a.total + " passed" : "";
  const outcome = (a.outcome || a.status).replace("_", " ");
  const regraded = a.regraded ? " \u00b7 regraded against v" + a.regraded.version + " (" + a.regraded.old_outcome + " \u2192 " + a.regraded.new_outcome + ")" : "";
  // A Submit after the close of the learner's course assignments: the server words it (grader.messages).
  const practice = a.practice ? " \u00b7 " + a.practice : "";
  // A Submit every test passed and the speed phase alone failed: the server words which way (grader.messages).
  const speed = a.speed ? " \u00b7 " + a.speed : "";
  return kind + " #" + attemptNumber(a) + " \u00b7 " + outcome + score + speed + regraded + practice + " \u00b7 " + new Date(a.enqueued_at).toLocaleString();
}

/**
 * url: the history endpoint. code: { getCode, setCode }.
 * resume(latest): the latest attempt is still in flight (on load).
 * restore(latest): the latest finished attempt, to show its result again (on load).
 * reopen(attempt): show an attempt's results in the output.
 * Returns { load(first) }.
 */
export function createHistory(url, code, { resume, restore, reopen }) {
  let attempts = [];
  let shown = null;
  let nextPage = null;

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

  function draw() {
    const list = $("history-list");
    list.replaceChildren();
    $("history-empty").hidden = attempts.length > 0;
    for (const attempt of attempts) {
      const li = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.id = String(attempt.id);
      button.className = "attempt attempt-" + (attempt.outcome || attempt.status);
      button.textContent = attemptLabel(attempt);
      button.addEventListener("click", () => showAttempt(attempt));
      li.appendChild(button);
      list.appendChild(li);
    }
    $("history-more").hidden = nextPage === null;
    if (shown) {
      const again = attempts.find((a) => a.id === shown.id);
      if (again) showAttempt(again);
    }
  }

  async function fetchPage(page) {
    const resp = await fetch(url + "?page=" + page, { credentials: "same-origin", cache: "no-store" });
    if (!resp.ok) return null;
    return resp.json();
  }

  /** Reload the first page; on the page's first load, resume or restore the latest attempt. */
  async function load(first) {
    const data = await fetchPage(1);
    if (!data) return;
    // Keep older pages already shown: a refresh only renews the newest.
    const oldest = Math.min(...data.attempts.map((a) => a.id));
    const older = attempts.filter((a) => a.id < oldest);
    attempts = data.attempts.concat(older);
    if (!older.length) nextPage = data.next_page;
    const latest = attempts[0];
    if (first && latest) {
      if (latest.status === "queued" || latest.status === "running") resume(latest);
      else restore(latest);
    }
    draw();
  }

  /** The latest attempt (another tab's job, after a "still being graded" refusal), else null.
   *  It may have ended between the refusal and this fetch: following it then shows its result at once. */
  async function latestAttempt() {
    const data = await fetchPage(1).catch(() => null);
    return (data && data.attempts[0]) || null;
  }

  $("history-more").addEventListener("click", async () => {
    if (nextPage === null) return;
    const data = await fetchPage(nextPage);
    if (!data) return;
    const known = new Set(attempts.map((a) => a.id));
    attempts = attempts.concat(data.attempts.filter((a) => !known.has(a.id)));
    nextPage = data.next_page;
    draw();
  });
  $("history-load").addEventListener("click", () => {
    if (!shown) return;
    code.setCode(shown.code);
    setStatus("Loaded attempt #" + attemptNumber(shown) + " into the editor. Ctrl/Cmd+Z in the editor undoes it.");
    showAttempt(shown);
  });
  $("history-results").addEventListener("click", () => { if (shown) reopen(shown); });
  $("history").addEventListener("toggle", () => { if ($("history").open) load(false); });
  return { load, latestAttempt };
}
