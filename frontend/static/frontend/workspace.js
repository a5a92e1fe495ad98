// The rung workspace: Run / Submit, then poll the submission's state until done.
(function () {
  "use strict";
  const root = document.querySelector(".workspace");
  if (!root) return;
  const code = document.getElementById("code");
  const statusBox = document.getElementById("status");
  const testsBox = document.getElementById("tests");
  const stdoutBox = document.getElementById("stdout");
  const csrf = document.querySelector("input[name=csrfmiddlewaretoken]").value;
  let busy = false;

  function setStatus(text) { statusBox.textContent = text; }

  function renderTests(tests) {
    testsBox.replaceChildren();
    for (const t of tests) {
      const li = document.createElement("li");
      li.className = "test test-" + t.outcome;
      const head = document.createElement("div");
      head.textContent = (t.outcome === "passed" ? "\u2714 " : "\u2718 ") + t.name + " \u2014 " + t.outcome + " (" + t.duration_s.toFixed(3) + " s)";
      li.appendChild(head);
      if (t.message) {
        const pre = document.createElement("pre");
        pre.textContent = t.message;
        li.appendChild(pre);
      }
      testsBox.appendChild(li);
    }
  }

  async function showReference() {
    const resp = await fetch(root.dataset.referenceUrl, { credentials: "same-origin" });
    if (!resp.ok) return;
    const data = await resp.json();
    document.getElementById("reference-code").textContent = data.reference;
    const list = document.getElementById("hidden-tests");
    list.replaceChildren();
    for (const t of data.hidden_tests) {
      const li = document.createElement("li");
      li.textContent = t.name + ": " + t.description;
      list.appendChild(li);
    }
    document.getElementById("reference").hidden = false;
  }

  function render(state) {
    renderTests(state.tests || []);
    if (state.status === "queued") {
      setStatus("Queued" + (state.queue_position ? " (position " + state.queue_position + ")" : "") + "\u2026");
    } else if (state.status === "running") {
      setStatus("Running\u2026");
    } else {
      let text = state.outcome.toUpperCase() + ": " + state.summary;
      if (state.message) text += "\n" + state.message;
      setStatus(text);
      if (state.timings && state.timings.total_s !== undefined) {
        setStatus(statusBox.textContent + " (graded in " + state.timings.total_s.toFixed(2) + " s)");
      }
    }
    const out = [state.stdout, state.stderr].filter(Boolean).join("\n");
    stdoutBox.hidden = !out;
    stdoutBox.textContent = out;
    if (state.reference_unlocked) showReference();
  }

  async function poll(url) {
    for (;;) {
      const resp = await fetch(url, { credentials: "same-origin" });
      if (!resp.ok) { setStatus("Could not fetch the result (" + resp.status + ")."); return; }
      const state = await resp.json();
      render(state);
      if (state.status === "done") return;
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  async function send(kind) {
    if (busy) return;
    busy = true;
    try {
      setStatus(kind === "run" ? "Sending to the visible tests\u2026" : "Submitting to the hidden tests\u2026");
      testsBox.replaceChildren();
      const body = new URLSearchParams({ code: code.value, version: root.dataset.version });
      const resp = await fetch(kind === "run" ? root.dataset.runUrl : root.dataset.submitUrl, {
        method: "POST", credentials: "same-origin", body: body,
        headers: { "X-CSRFToken": csrf },
      });
      const data = await resp.json();
      if (!resp.ok) { setStatus(data.error || "The request was refused."); return; }
      await poll(data.state_url);
    } finally {
      busy = false;
    }
  }

  document.getElementById("run-button").addEventListener("click", () => send("run"));
  document.getElementById("submit-button").addEventListener("click", () => send("submit"));
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") { e.preventDefault(); send(e.shiftKey ? "submit" : "run"); }
  });
})();
