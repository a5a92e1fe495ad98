// The learner's draft, never lost: every change is copied at once to this
// browser's localStorage, then autosaved to the server (debounced, and on
// page hide with sendBeacon). A reload right after typing may reach the
// server before the last save does; the local copy, not yet confirmed by
// the server, then wins and is saved again.
import { $ } from "./dom.js";
import { draftRefusal, isLoggedOut, markLoggedOut } from "./refusals.js";

const DRAFT_DEBOUNCE_MS = 800;

/** Returns { schedule, save, restore, isDirty }; getCode() reads the current code. */
export function createDrafts(root, csrf, getCode) {
  const url = root.dataset.draftUrl;
  const key = "dojo-draft:" + root.dataset.user + ":" + root.dataset.slug;
  const saveState = $("save-state");
  let timer = null;
  let dirty = false;

  function keepLocal(code, saved) {
    try { localStorage.setItem(key, JSON.stringify({ code, saved, at: Date.now() })); } catch (e) { /* full or private mode */ }
  }
  function readLocal() {
    try { return JSON.parse(localStorage.getItem(key) || "null"); } catch (e) { return null; }
  }

  function schedule() {
    dirty = true;
    keepLocal(getCode(), false);
    saveState.textContent = "Unsaved changes (kept in this browser)";
    clearTimeout(timer);
    timer = setTimeout(save, DRAFT_DEBOUNCE_MS);
  }

  async function save() {
    clearTimeout(timer);
    if (!dirty) return;
    dirty = false;
    const code = getCode();
    try {
      const resp = await fetch(url, {
        method: "POST", credentials: "same-origin",
        headers: { "X-CSRFToken": csrf }, body: new URLSearchParams({ code }),
      });
      // A redirect is the login page answering: the session has ended, nothing was saved.
      if (resp.ok && !resp.redirected) {
        const local = readLocal();
        if (local && local.code === code) keepLocal(code, true);
        saveState.textContent = "Draft saved";
        return;
      }
      const json = (resp.headers.get("content-type") || "").includes("application/json");
      const data = json ? await resp.json().catch(() => null) : null;
      saveState.textContent = "Draft kept in this browser only: " + draftRefusal(resp, data);
      if (isLoggedOut(resp)) markLoggedOut();
    } catch (e) {
      dirty = true;
      saveState.textContent = "Draft kept in this browser only: the server cannot be reached. It is saved when the connection is back.";
    }
  }

  function flush() {
    if (!dirty) return;
    const code = getCode();
    keepLocal(code, false);
    const body = new URLSearchParams({ code, csrfmiddlewaretoken: csrf });
    // sendBeacon survives the page going away; its body is capped (about 64 KiB), the local copy is not.
    if (!(navigator.sendBeacon && navigator.sendBeacon(url, body))) {
      fetch(url, { method: "POST", credentials: "same-origin", keepalive: true, headers: { "X-CSRFToken": csrf }, body }).catch(() => {});
    }
  }

  /** On load: edits this browser kept but the server never confirmed replace what the page opened with. */
  function restore(setCode) {
    const local = readLocal();
    if (!local || local.saved || typeof local.code !== "string" || local.code === getCode()) return false;
    setCode(local.code);
    saveState.textContent = "Restored your latest edits from this browser";
    return true;
  }

  window.addEventListener("pagehide", flush);
  window.addEventListener("online", () => { if (dirty) save(); });
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") flush(); });
  return { schedule, save, restore, isDirty: () => dirty };
}
