// The rung workspace: editor, Run / Submit with live results, drafts, history,
// the reference once passed, and resizable panels. Bundled by build.mjs into
// frontend/static/frontend/workspace.bundle.js; each concern is its own module.
import { createCode } from "./code.js";
import { $, setStatus } from "./dom.js";
import { createDrafts } from "./drafts.js";
import { createHistory } from "./history.js";
import { initPanels } from "./panels.js";
import { markSolved, showReference } from "./reference.js";
import { clearResults, render } from "./results.js";
import { createTracker } from "./tracking.js";

function start(root) {
  const csrf = document.querySelector("input[name=csrfmiddlewaretoken]").value;
  const starter = JSON.parse($("starter-code").textContent);

  // The editor and the drafts need each other: the editor reports changes,
  // the drafts read the code.
  let drafts = null;
  const code = createCode({
    onChange: () => drafts.schedule(),
    onRun: () => send("run"),
    onSubmit: () => send("submit"),
  });
  drafts = createDrafts(root.dataset.draftUrl, csrf, code.getCode);
  // Tests and tools reach the editor through this.
  window.dojoWorkspace = { getCode: code.getCode, setCode: code.setCode, editor: code.editor };

  $("reset-button").addEventListener("click", () => {
    code.setCode(starter);
    setStatus("Reset to the starter code. Ctrl/Cmd+Z in the editor undoes it.");
    code.focus();
  });

  let busy = false;
  function setBusy(value) {
    busy = value;
    $("run-button").disabled = value;
    $("submit-button").disabled = value;
  }

  const tracker = createTracker(root, render, finished);
  const history = createHistory(root.dataset.historyUrl, code, (latest) => {
    // The page was reloaded while a job was in flight: follow it again.
    if (tracker.isFollowing()) return;
    setBusy(true);
    tracker.follow(latest.state_url, latest.events_url);
  });

  async function finished(state) {
    setBusy(false);
    history.load(false);
    if (state.kind === "submit" && state.outcome === "passed") markSolved(root);
    if (state.kind === "submit" && state.reference_unlocked) await showReference(root.dataset.referenceUrl, code.getCode, state.outcome === "passed");
  }

  async function send(kind) {
    if (busy) return;
    setBusy(true);
    clearResults();
    setStatus(kind === "run" ? "Sending to the visible tests\u2026" : "Submitting to the hidden tests\u2026", "queued");
    drafts.save();
    try {
      const body = new URLSearchParams({ code: code.getCode(), version: root.dataset.version });
      const resp = await fetch(kind === "run" ? root.dataset.runUrl : root.dataset.submitUrl, {
        method: "POST", credentials: "same-origin", body, headers: { "X-CSRFToken": csrf },
      });
      const data = await resp.json().catch(() => ({}));
      if (!resp.ok) { setStatus(data.error || "The request was refused (" + resp.status + ").", "error"); setBusy(false); return; }
      tracker.follow(data.state_url, data.events_url);
    } catch (e) {
      setStatus("Could not reach the server. Your draft is kept; try again.", "error");
      setBusy(false);
    }
  }

  $("run-button").addEventListener("click", () => send("run"));
  $("submit-button").addEventListener("click", () => send("submit"));
  // Outside the editor too (the editor binds these itself).
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter" && !e.defaultPrevented) {
      e.preventDefault();
      send(e.shiftKey ? "submit" : "run");
    }
  });

  if (root.dataset.solved === "true") showReference(root.dataset.referenceUrl, code.getCode, false);
  history.load(true);
  initPanels(root);
}

const root = document.getElementById("workspace");
if (root) start(root);
