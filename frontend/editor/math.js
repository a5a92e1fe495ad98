// Math in instructions and module pages: KaTeX auto-render over elements
// marked data-math, for $...$, $$...$$, \(...\) and \[...\]. Bundled by
// build.mjs into frontend/static/frontend/math.bundle.js; the stylesheet and
// fonts are copied next to it (no CDN).
import renderMathInElement from "katex/contrib/auto-render";

const delimiters = [
  { left: "$$", right: "$$", display: true },
  { left: "\\[", right: "\\]", display: true },
  { left: "$", right: "$", display: false },
  { left: "\\(", right: "\\)", display: false },
];

function render(root) {
  for (const el of (root || document).querySelectorAll("[data-math]")) {
    renderMathInElement(el, { delimiters, throwOnError: false });
    // A wide display or code block scrolls sideways: a keyboard user must be able to
    // focus it to scroll it (WCAG 2.1.1; axe's scrollable-region-focusable).
    for (const block of el.querySelectorAll(".katex-display, pre")) {
      if (!block.hasAttribute("tabindex")) block.setAttribute("tabindex", "0");
    }
  }
}

window.DojoMath = { render };
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", () => render(document));
} else {
  render(document);
}
