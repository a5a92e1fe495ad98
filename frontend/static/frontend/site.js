// Every page: the light / dark / auto theme toggle. The choice is kept in
// localStorage and applied before paint by an inline snippet in base.html;
// "auto" follows prefers-color-scheme. Pages listen for "dojo:theme".
(function () {
  "use strict";
  const root = document.documentElement;
  const media = window.matchMedia("(prefers-color-scheme: dark)");
  const button = document.getElementById("theme-toggle");
  const order = ["auto", "light", "dark"];

  function choice() { return root.dataset.theme || "auto"; }
  function isDark() { return choice() === "dark" || (choice() === "auto" && media.matches); }
  function announce() {
    if (button) {
      button.textContent = "Theme: " + choice();
      button.setAttribute("aria-pressed", String(choice() !== "auto"));
    }
    document.dispatchEvent(new CustomEvent("dojo:theme", { detail: { dark: isDark() } }));
  }
  function set(next) {
    if (next === "auto") delete root.dataset.theme; else root.dataset.theme = next;
    try { if (next === "auto") localStorage.removeItem("dojo-theme"); else localStorage.setItem("dojo-theme", next); } catch (e) { /* private mode */ }
    announce();
  }
  window.DojoTheme = { isDark };
  if (button) button.addEventListener("click", () => set(order[(order.indexOf(choice()) + 1) % order.length]));
  media.addEventListener("change", announce);
  announce();
})();
