// The module page: each ladder entry opens its rung's workspace in place, in a
// same-origin frame of the workspace page with ?embed=1 (no site chrome). The
// frame is made on first open (lazy) and kept, so work in it survives closing
// and reopening; one entry is open at a time. The Start/Continue button opens
// the learner's next rung the same way. Without JavaScript every link still
// goes to the full-page workspace.
(function () {
  "use strict";
  const buttons = Array.from(document.querySelectorAll(".ladder .open-here"));

  function frameOf(button) { return document.getElementById(button.getAttribute("aria-controls")); }

  function close(button) {
    const host = frameOf(button);
    button.setAttribute("aria-expanded", "false");
    button.textContent = "Open here";
    host.hidden = true;
    host.closest(".rung").classList.remove("open");
  }

  function open(button) {
    buttons.forEach((other) => { if (other !== button && other.getAttribute("aria-expanded") === "true") close(other); });
    const host = frameOf(button);
    if (!host.querySelector("iframe")) {
      const frame = document.createElement("iframe");
      frame.src = button.dataset.src;
      frame.title = "Workspace: " + button.closest(".rung").querySelector(".rung-title").textContent;
      frame.className = "workspace-frame";
      // Links that leave the workspace (the module page, the reference's
      // links) open in the whole window, not inside the frame.
      frame.addEventListener("load", () => {
        const doc = frame.contentDocument;
        // A link that asks for another embedded page (the next rung) stays in the frame.
        if (doc) doc.querySelectorAll('a[href]:not([href^="#"]):not([href*="embed=1"])').forEach((link) => { link.target = "_top"; });
      });
      host.appendChild(frame);
    }
    host.hidden = false;
    button.setAttribute("aria-expanded", "true");
    button.textContent = "Close";
    const entry = host.closest(".rung");
    entry.classList.add("open");
    entry.scrollIntoView({ block: "start" });
  }

  buttons.forEach((button) => button.addEventListener("click", () => {
    if (button.getAttribute("aria-expanded") === "true") close(button); else open(button);
  }));

  const start = document.getElementById("start-button");
  if (start && start.dataset.open) {
    start.addEventListener("click", (event) => {
      const entry = document.getElementById("rung-" + start.dataset.open);
      const button = entry && entry.querySelector(".open-here");
      if (!button) return; // logged out: follow the link (it asks to log in)
      event.preventDefault();
      open(button);
    });
  }
})();
