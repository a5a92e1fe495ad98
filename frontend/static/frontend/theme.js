// Apply a saved theme before the first paint (no flash); site.js owns the toggle.
// A file, not an inline script: the Content-Security-Policy allows scripts from this site only.
try {
  var saved = localStorage.getItem("dojo-theme");
  if (saved === "light" || saved === "dark") document.documentElement.dataset.theme = saved;
} catch (e) { /* storage blocked: the system theme applies */ }
