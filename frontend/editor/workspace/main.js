// The rung workspace: editor, Run / Submit with live results, a timer and
// Cancel, drafts that survive a reload, history, the reference once passed,
// and the layout (panels.js). Bundled by build.mjs into
// frontend/static/frontend/workspace.bundle.js; each concern is its own module.
import { createCode } from "./code.js";
import { $, setStatus } from "./dom.js";
import { createDrafts } from "./drafts.js";
import { initEmbed, tellLadder } from "./embed.js";
import { attemptNumber, createHistory } from "./history.js";
import { initPanels } from "./panels.js";
import { markSolved, showReference } from "./reference.js";
import { OFFLINE, OFFLINE_CANCEL, isLoggedOut, markLoggedOut, refusalText } from "./refusals.js";
import { clearResults, render } from "./results.js";
import { createSize } from "./size.js";
import { createTimer } from "./timer.js";
import { createTracker } from "./tracking.js";

function start(root) {
  const csrf = document.querySelector("input[name=csrfmiddlewaretoken]").value;
  const starter = JSON.parse($("starter-code").textContent);
  const panels = initPanels(root);
  initEmbed();
  const limit = Number(root.dataset.maxBytes);

  // The editor, the drafts and the size meter need each other: the editor
  // reports changes, the others read the code.
  let drafts = null, size = null;
  const code = createCode({
    onChange: () => { drafts.schedule(); size.update(); },
    onRun: () => send("run"),
    onSubmit: () => send("submit"),
  });
  drafts = createDrafts(root, csrf, code.getCode);
  size = createSize(limit, code.getCode);
  drafts.restore(code.setCode);
  size.update();
  // Tests and tools reach the editor through this.
  window.dojoWorkspace = { getCode: code.getCode, setCode: code.setCode, editor: code.editor };

  function resetToStarter() {
    code.setCode(starter);
    setStatus("Reset to the starter code. Ctrl/Cmd+Z in the editor undoes it.");
    code.focus();
  }
  $("reset-button").addEventListener("click", resetToStarter);
  $("empty-reset").addEventListener("click", resetToStarter);

  const timer = createTimer($("timer"));
  let busy = false;
  let cancelUrl = null;
  // Why the last Cancel failed: kept under the live status until the job ends
  // (a queued or running update would otherwise replace it at once).
  let cancelNote = "";
  function setBusy(value) {
    busy = value;
    $("run-button").disabled = value;
    $("submit-button").disabled = value;
    $("cancel-button").hidden = !value;
    $("cancel-button").disabled = false;
    if (value) timer.start(); else timer.stop();
  }

  // After Run or Submit the result comes into view: the Output tab when
  // tabbed, else the output panel scrolled into the window.
  function revealOutput() {
    if (panels.isNarrow()) panels.showTab("output");
    $("panel-output").scrollIntoView({ block: "nearest" });
    // The status heads the result; the panel may have been scrolled down to the history.
    $("status").scrollIntoView({ block: "nearest" });
  }

  function onState(state) {
    if (state.cancel_url) cancelUrl = state.cancel_url;
    render(state);
    if (cancelNote) $("status").textContent += "\n" + cancelNote;
    if (state.status === "done") cancelNote = "";
  }
  // The job can no longer be followed (logged out, or it is gone): say so, free the buttons.
  function lost(resp) {
    setBusy(false);
    cancelNote = "";
    cancelUrl = null;
    setStatus(refusalText(resp, null, { missing: "This job is no longer available." }), "error");
  }
  const tracker = createTracker(root, onState, finished, lost);
  const history = createHistory(root.dataset.historyUrl, code, {
    resume: (latest) => {
      // The page was reloaded while a job was in flight: follow it again.
      if (tracker.isFollowing()) return;
      setBusy(true);
      tracker.follow(latest.state_url, latest.events_url);
    },
    restore: async (latest) => {
      // The last result, as it was before the reload.
      if (tracker.isFollowing()) return;
      const resp = await fetch(latest.state_url, { credentials: "same-origin", cache: "no-store" });
      if (resp.ok && !tracker.isFollowing()) render(await resp.json(), "Last result \u00b7 ");
    },
    reopen: async (attempt) => {
      if (busy) return;
      const resp = await fetch(attempt.state_url, { credentials: "same-origin", cache: "no-store" }).catch(() => null);
      if (!resp) { setStatus(OFFLINE, "error"); revealOutput(); return; }
      if (!resp.ok || resp.redirected) {
        setStatus(refusalText(resp, null, { missing: "This attempt is no longer available." }), "error");
        revealOutput();
        return;
      }
      render(await resp.json(), "Attempt #" + attemptNumber(attempt) + " \u00b7 ");
      revealOutput();
    },
  });

  // The last result no longer stands (the code was refused): it goes, with "Next rung" under it.
  function staleResults() {
    clearResults();
    $("after-pass").hidden = true;
  }

  // Another tab's job of this rung is still being graded: this tab follows it
  // quietly, and once it ends its result replaces the notice (if still shown).
  async function watchOtherTab(notice) {
    const latest = await history.latestAttempt();
    if (!latest || tracker.isFollowing()) return;
    const quiet = { dataset: {} };
    createTracker(quiet, () => {}, (state) => {
      history.load(false);
      if (state.kind === "submit" && state.outcome === "passed") { markSolved(root); tellLadder(root.dataset.slug, "solved"); }
      if (tracker.isFollowing() || $("status").textContent !== notice) return;
      render(state, "From your other tab \u00b7 ");
      if (root.dataset.solved === "true") $("after-pass").hidden = false;
    }, () => {}).follow(latest.state_url, latest.events_url);
  }

  // Coming back to the tab: a session that ended meanwhile is said at once.
  document.addEventListener("visibilitychange", async () => {
    if (document.visibilityState !== "visible") return;
    const resp = await fetch(root.dataset.historyUrl, { credentials: "same-origin", cache: "no-store" }).catch(() => null);
    if (resp && isLoggedOut(resp)) markLoggedOut();
  });

  async function finished(state) {
    setBusy(false);
    if (root.dataset.solved === "true") $("after-pass").hidden = false;
    cancelUrl = null;
    history.load(false);
    const badge = $("tab-output-badge");
    badge.hidden = false;
    badge.textContent = state.outcome === "passed" ? "\u2714" : "\u2718";
    if (state.kind === "submit" && state.outcome === "passed") { markSolved(root); tellLadder(root.dataset.slug, "solved"); }
    if (state.kind === "submit" && state.reference_unlocked) await showReference(root.dataset.referenceUrl, code.getCode, state.outcome === "passed");
  }

  async function send(kind) {
    if (busy) return;
    const problem = size.problem();
    if (problem) { staleResults(); setStatus(problem, "error"); revealOutput(); return; }
    setBusy(true);
    cancelNote = "";
    clearResults();
    revealOutput();
    setStatus(kind === "run" ? "Sending to the visible tests\u2026" : "Submitting to the hidden tests\u2026", "queued");
    drafts.save();
    try {
      const body = new URLSearchParams({ code: code.getCode(), version: root.dataset.version });
      // A speed rung that asks for a prediction: the server rules on it (grader.speed_board.check_prediction).
      const prediction = document.getElementById("speed-prediction");
      if (kind === "submit" && prediction && prediction.value.trim()) body.set("prediction", prediction.value.trim());
      const resp = await fetch(kind === "run" ? root.dataset.runUrl : root.dataset.submitUrl, {
        method: "POST", credentials: "same-origin", body, headers: { "X-CSRFToken": csrf },
      });
      const json = (resp.headers.get("content-type") || "").includes("application/json");
      const data = json ? await resp.json().catch(() => null) : null;
      if (!resp.ok || !data || !data.state_url) {
        const text = refusalText(resp, data, { limit });
        staleResults();
        setStatus(text, "error");
        setBusy(false);
        if (resp.status === 409 && data && data.code !== "version_changed") watchOtherTab(text);
        return;
      }
      tracker.follow(data.state_url, data.events_url);
      tellLadder(root.dataset.slug, "attempted");
    } catch (e) {
      setStatus(OFFLINE, "error");
      setBusy(false);
    }
  }

  $("cancel-button").addEventListener("click", async () => {
    if (!busy || !cancelUrl) return;
    $("cancel-button").disabled = true;
    setStatus("Cancelling\u2026", "queued");
    try {
      const resp = await fetch(cancelUrl, { method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": csrf } });
      if (!resp.ok || resp.redirected) {
        const data = (resp.headers.get("content-type") || "").includes("application/json") ? await resp.json().catch(() => null) : null;
        const text = refusalText(resp, data, { missing: "This job is no longer available." });
        setStatus(text, "error");
        $("cancel-button").disabled = false;
        cancelNote = text;
      } else {
        cancelNote = "";
      }
      tracker.refresh();
    } catch (e) {
      setStatus(OFFLINE_CANCEL, "error");
      cancelNote = OFFLINE_CANCEL;
      $("cancel-button").disabled = false;
    }
  });
  $("run-button").addEventListener("click", () => send("run"));
  $("submit-button").addEventListener("click", () => send("submit"));
  // Outside the editor too (the editor binds these itself).
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter" && !e.defaultPrevented) {
      e.preventDefault();
      send(e.shiftKey ? "submit" : "run");
    }
  });

  // Solved, or staff of a course that uses the rung (they see what a learner who solved it sees).
  if (root.dataset.solved === "true" || root.dataset.referenceOpen === "true") showReference(root.dataset.referenceUrl, code.getCode, false);
  history.load(true);
}

const root = document.getElementById("workspace");
if (root) start(root);
