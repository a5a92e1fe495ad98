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

  // In place the workspace takes the window's height and the page is its one
  // scroller: at >= 1000 px (in the frame) the frame is as tall as its page,
  // whose workspace is one window high (--ws-h); below, tabs and a sticky Run
  // bar need the frame itself one window high.
  function fit(frame) {
    const doc = frame.contentDocument;
    if (!doc || !doc.body) return;
    // The entry's own row (its title and Close) stays in view above the frame.
    const entry = frame.closest(".rung");
    const above = frame.getBoundingClientRect().top - entry.getBoundingClientRect().top;
    const high = Math.max(320, Math.floor(window.innerHeight - above - 4));
    doc.documentElement.style.setProperty("--ws-h", high + "px");
    const narrow = frame.contentWindow.matchMedia("(max-width: 999.98px)").matches;
    const border = frame.offsetHeight - frame.clientHeight;
    frame.style.height = (narrow ? high : doc.documentElement.scrollHeight + border) + "px";
  }
  window.addEventListener("resize", () => document.querySelectorAll(".workspace-frame").forEach(fit));

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
        if (!doc || !doc.body) return;
        fit(frame);
        new frame.contentWindow.ResizeObserver(() => fit(frame)).observe(doc.body);
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

  // A rung's state on the ladder (and the solved counts) after its Run, Submit or pass in place.
  function setState(slug, state) {
    const entry = document.getElementById("rung-" + slug);
    const badge = entry && entry.querySelector(".state");
    if (!badge || entry.classList.contains("rung-state-solved")) return;  // a solve stands
    if (state === "attempted" && !entry.classList.contains("rung-state-not-started")) return;
    entry.classList.remove("rung-state-not-started", "rung-state-attempted");
    entry.classList.add("rung-state-" + state);
    badge.className = "state badge " + state;
    badge.textContent = (state === "solved" ? "\u2713 " : "") + state;
    if (state !== "solved") return;
    document.querySelectorAll("#ladder-count, .start-row .meta").forEach((line) => {
      for (const node of line.childNodes) {
        if (node.nodeType === Node.TEXT_NODE) node.textContent = node.textContent.replace(/(\d+)\/(\d+) solved/, (_, n, total) => (Number(n) + 1) + "/" + total + " solved");
      }
    });
  }

  // The workspace in a frame reaches this page through this (same origin): "Next
  // rung" opens that rung's own entry; Runs, Submits and passes update the ladder.
  window.dojoModulePage = {
    open(slug) {
      const entry = document.getElementById("rung-" + slug);
      const button = entry && entry.querySelector(".open-here");
      if (!button) return false;
      open(button);
      return true;
    },
    setState,
  };

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
