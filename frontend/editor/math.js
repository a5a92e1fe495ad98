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
  }
}

window.DojoMath = { render };
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", () => render(document));
} else {
  render(document);
}
