// The layout. At >= 1000 px: instructions | editor over output, with a
// vertical and a horizontal splitter (pointer and keyboard), sizes kept in
// localStorage; the instructions never take more than half, so the editor
// has at least half the width. Below 1000 px: Instructions | Code | Output
// tabs (the last one chosen on each rung is remembered: "Next rung" opens on
// the code, not on the previous rung's output) and a sticky Run/Submit bar.
import { $ } from "./dom.js";

const STORE = "dojo-layout";
const NARROW = window.matchMedia("(max-width: 999.98px)");
const LIMITS = { side: [20, 45], output: [15, 75] };  // percent of the workspace (the editor keeps over half the window)

function load() {
  try { return JSON.parse(localStorage.getItem(STORE) || "{}") || {}; } catch (e) { return {}; }
}
function keep(layout) {
  try { localStorage.setItem(STORE, JSON.stringify(layout)); } catch (e) { /* private mode */ }
}

/** Returns { showTab(name), isNarrow() }. */
export function initPanels(root) {
  const layout = load();
  const clamp = (axis, pct) => Math.round(Math.max(LIMITS[axis][0], Math.min(LIMITS[axis][1], pct)) * 10) / 10;

  function apply() {
    if (layout.side) root.style.setProperty("--side-w", clamp("side", layout.side) + "%");
    if (layout.output) root.style.setProperty("--out-h", clamp("output", layout.output) + "%");
    for (const handle of root.querySelectorAll(".splitter")) {
      const axis = handle.dataset.axis;
      handle.setAttribute("aria-valuenow", String(Math.round(layout[axis] || (axis === "side" ? 36 : 27))));
    }
  }
  function setSize(axis, pct) {
    layout[axis] = clamp(axis, pct);
    apply();
    keep(layout);
  }
  function current(axis) {
    const box = root.getBoundingClientRect();
    if (axis === "side") return ($("panel-instructions").getBoundingClientRect().width / box.width) * 100;
    const output = $("panel-output").getBoundingClientRect().height;
    const column = $("panel-code").getBoundingClientRect().height + output;
    return (output / column) * 100;
  }

  for (const handle of root.querySelectorAll(".splitter")) {
    const axis = handle.dataset.axis;
    handle.addEventListener("pointerdown", (e) => {
      e.preventDefault();
      handle.setPointerCapture(e.pointerId);
      handle.classList.add("dragging");
      const box = root.getBoundingClientRect();
      const move = (ev) => setSize(axis, axis === "side"
        ? ((ev.clientX - box.left) / box.width) * 100
        : ((box.bottom - ev.clientY) / box.height) * 100);
      const up = () => {
        handle.classList.remove("dragging");
        handle.removeEventListener("pointermove", move);
        handle.removeEventListener("pointerup", up);
      };
      handle.addEventListener("pointermove", move);
      handle.addEventListener("pointerup", up);
    });
    handle.addEventListener("keydown", (e) => {
      const step = e.shiftKey ? 10 : 3;
      const grow = axis === "side" ? { ArrowRight: step, ArrowLeft: -step } : { ArrowUp: step, ArrowDown: -step };
      if (!(e.key in grow)) return;
      e.preventDefault();
      setSize(axis, current(axis) + grow[e.key]);
    });
  }

  const tabs = [...root.querySelectorAll(".ws-tabs [role=tab]")];
  function showTab(name, remember = true) {
    root.dataset.tab = name;
    for (const tab of tabs) {
      const selected = tab.dataset.tab === name;
      tab.setAttribute("aria-selected", String(selected));
      tab.tabIndex = selected ? 0 : -1;
    }
    if (remember) { layout.tabs = { ...(layout.tabs || {}), [root.dataset.slug]: name }; keep(layout); }
  }
  tabs.forEach((tab, i) => {
    tab.addEventListener("click", () => showTab(tab.dataset.tab));
    tab.addEventListener("keydown", (e) => {
      const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
      if (!step) return;
      e.preventDefault();
      const next = tabs[(i + step + tabs.length) % tabs.length];
      showTab(next.dataset.tab);
      next.focus();
    });
  });
  function syncMode() { root.classList.toggle("tabbed", NARROW.matches); }
  NARROW.addEventListener("change", syncMode);
  syncMode();
  // The rung's title above the tabs (shown while the Instructions are not). It is the page's
  // level-one heading then: the Instructions' h1 is hidden with its panel (axe's page-has-heading-one).
  const title = document.createElement("p");
  title.className = "ws-title";
  title.setAttribute("role", "heading");
  title.setAttribute("aria-level", "1");
  title.textContent = ($("rung-title") || {}).textContent || "";
  root.prepend(title);
  // A rung not started yet opens on its Instructions, one under way on the Code.
  showTab((layout.tabs || {})[root.dataset.slug] || (root.dataset.fresh === "true" ? "instructions" : "code"), false);
  apply();
  return { showTab, isNarrow: () => NARROW.matches };
}
