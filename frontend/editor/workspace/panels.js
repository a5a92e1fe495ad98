// Resizable side panels (pointer and keyboard), widths kept in localStorage.
import { $ } from "./dom.js";

const STORE = "dojo-panels";

export function initPanels(root) {
  function applyWidths(widths) {
    if (widths.left) root.style.setProperty("--left-w", widths.left + "px");
    if (widths.right) root.style.setProperty("--right-w", widths.right + "px");
  }
  let widths = {};
  try { widths = JSON.parse(localStorage.getItem(STORE) || "{}"); } catch (e) { widths = {}; }
  applyWidths(widths);
  function clampWidth(px) {
    const total = root.getBoundingClientRect().width;
    return Math.round(Math.max(200, Math.min(px, total * 0.6)));
  }
  function setWidth(side, px) {
    widths[side] = clampWidth(px);
    applyWidths(widths);
    try { localStorage.setItem(STORE, JSON.stringify(widths)); } catch (e) { /* private mode */ }
  }
  function panelWidth(side) {
    const panel = side === "left" ? $("panel-instructions") : $("panel-output");
    return panel.getBoundingClientRect().width;
  }
  for (const handle of root.querySelectorAll(".splitter")) {
    const side = handle.dataset.side;
    handle.addEventListener("pointerdown", (e) => {
      e.preventDefault();
      handle.setPointerCapture(e.pointerId);
      handle.classList.add("dragging");
      const box = root.getBoundingClientRect();
      const move = (ev) => setWidth(side, side === "left" ? ev.clientX - box.left : box.right - ev.clientX);
      const up = () => {
        handle.classList.remove("dragging");
        handle.removeEventListener("pointermove", move);
        handle.removeEventListener("pointerup", up);
      };
      handle.addEventListener("pointermove", move);
      handle.addEventListener("pointerup", up);
    });
    handle.addEventListener("keydown", (e) => {
      const step = e.shiftKey ? 80 : 24;
      let delta = 0;
      if (e.key === "ArrowLeft") delta = side === "left" ? -step : step;
      else if (e.key === "ArrowRight") delta = side === "left" ? step : -step;
      else return;
      e.preventDefault();
      setWidth(side, panelWidth(side) + delta);
    });
  }
}
