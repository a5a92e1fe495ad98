// The workspace opened in place on the module page (?embed=1, a same-origin
// frame). Links leave the frame: the site's pages refuse to be framed, so a
// link followed inside it showed "refused to connect" where the workspace was
// (mentor answers and hints are added after load, hence one listener for all
// clicks). "Next rung" opens that rung's own entry on the module page, and
// the ladder's state of this rung follows its Runs, Submits and passes.
const embedded = window.parent !== window;

/** The module page around this frame (module.js), or null. */
function modulePage() {
  if (!embedded) return null;
  try { return window.parent.dojoModulePage || null; } catch (e) { return null; }
}

/** Tell the ladder this rung's state: "attempted" or "solved". */
export function tellLadder(slug, state) {
  const page = modulePage();
  if (page) page.setState(slug, state);
}

export function initEmbed() {
  if (!embedded) return;
  document.addEventListener("click", (e) => {
    const link = e.target instanceof Element ? e.target.closest("a[href]") : null;
    if (!link || (link.getAttribute("href") || "").startsWith("#")) return;
    const next = link.id === "next-rung" ? link.pathname.match(/^\/rungs\/([^/]+)\/$/) : null;
    const page = modulePage();
    if (next && page && page.open(decodeURIComponent(next[1]))) { e.preventDefault(); return; }
    if (!next) link.target = "_top";
  }, true);
}
