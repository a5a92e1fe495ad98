// Autosave of the learner's draft: debounced, and flushed when the page hides.
import { $ } from "./dom.js";

const DRAFT_DEBOUNCE_MS = 800;

/** Returns { schedule, save, isDirty }; getCode() reads the current code. */
export function createDrafts(url, csrf, getCode) {
  const saveState = $("save-state");
  let timer = null;
  let dirty = false;

  function schedule() {
    dirty = true;
    saveState.textContent = "Unsaved changes";
    clearTimeout(timer);
    timer = setTimeout(save, DRAFT_DEBOUNCE_MS);
  }

  async function save(keepalive) {
    clearTimeout(timer);
    if (!dirty) return;
    dirty = false;
    try {
      const resp = await fetch(url, {
        method: "POST", credentials: "same-origin", keepalive: Boolean(keepalive),
        headers: { "X-CSRFToken": csrf }, body: new URLSearchParams({ code: getCode() }),
      });
      if (resp.ok) { saveState.textContent = "Draft saved"; return; }
      const data = await resp.json().catch(() => ({}));
      saveState.textContent = "Draft not saved: " + (data.error || resp.status);
    } catch (e) {
      dirty = true;
      saveState.textContent = "Draft not saved (offline?)";
    }
  }

  window.addEventListener("pagehide", () => { if (dirty) save(true); });
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden" && dirty) save(true); });
  return { schedule, save, isDirty: () => dirty };
}
