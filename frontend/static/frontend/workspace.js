// The rung workspace: editor, Run / Submit with live results, drafts, history,
// the reference once passed, and resizable panels.
//
// Live results: the server sends tiny "changed" hints (server-sent events on
// the submission's unguessable channel); on each, the page re-fetches the
// submission's JSON state, which is the truth. When the stream fails, polling
// takes over.
(function () {
  "use strict";
  const root = document.getElementById("workspace");
  if (!root) return;
  const $ = (id) => document.getElementById(id);
  const textarea = $("code");
  const statusBox = $("status");
  const testsBox = $("tests");
  const timingsBox = $("timings");
  const saveState = $("save-state");
  const csrf = document.querySelector("input[name=csrfmiddlewaretoken]").value;
  const starter = JSON.parse($("starter-code").textContent);
  const POLL_MS = 700;
  const SAFETY_POLL_MS = 5000;
  const DRAFT_DEBOUNCE_MS = 800;

  // ---- Editor --------------------------------------------------------------
  let editor = null;
  function isDark() { return window.DojoTheme ? window.DojoTheme.isDark() : false; }
  if (window.DojoEditor) {
    const host = $("editor-host");
    const initial = textarea.value;
    host.replaceChildren();
    editor = window.DojoEditor.create(host, {
      doc: initial,
      dark: isDark(),
      label: "Your solution (Python)",
      onChange: scheduleDraftSave,
      onRun: () => send("run"),
      onSubmit: () => send("submit"),
    });
    document.addEventListener("dojo:theme", (e) => editor.setDark(e.detail.dark));
  } else {
    textarea.addEventListener("input", scheduleDraftSave);
  }
  const getCode = () => (editor ? editor.getValue() : textarea.value);
  const setCode = (text) => { if (editor) editor.setValue(text); else { textarea.value = text; scheduleDraftSave(); } };
  // Tests and tools reach the editor through this.
  window.dojoWorkspace = { getCode, setCode, editor };

  // ---- Drafts ----------------------------------------------------------------
  let draftTimer = null;
  let draftDirty = false;
  function scheduleDraftSave() {
    draftDirty = true;
    saveState.textContent = "Unsaved changes";
    clearTimeout(draftTimer);
    draftTimer = setTimeout(saveDraft, DRAFT_DEBOUNCE_MS);
  }
  async function saveDraft(keepalive) {
    clearTimeout(draftTimer);
    if (!draftDirty) return;
    draftDirty = false;
    try {
      const resp = await fetch(root.dataset.draftUrl, {
        method: "POST", credentials: "same-origin", keepalive: Boolean(keepalive),
        headers: { "X-CSRFToken": csrf }, body: new URLSearchParams({ code: getCode() }),
      });
      if (resp.ok) { saveState.textContent = "Draft saved"; return; }
      const data = await resp.json().catch(() => ({}));
      saveState.textContent = "Draft not saved: " + (data.error || resp.status);
    } catch (e) {
      draftDirty = true;
      saveState.textContent = "Draft not saved (offline?)";
    }
  }
  window.addEventListener("pagehide", () => { if (draftDirty) saveDraft(true); });
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden" && draftDirty) saveDraft(true); });

  $("reset-button").addEventListener("click", () => {
    setCode(starter);
    setStatus("Reset to the starter code. Ctrl/Cmd+Z in the editor undoes it.");
    if (editor) editor.focus();
  });

  // ---- Output --------------------------------------------------------------
  function setStatus(text, cls) {
    statusBox.textContent = text;
    statusBox.className = "status" + (cls ? " " + cls : "");
  }

  function testRow(t) {
    const li = document.createElement("li");
    li.dataset.name = t.name;
    fillTestRow(li, t);
    return li;
  }
  function fillTestRow(li, t) {
    li.className = "test test-" + t.outcome;
    const head = document.createElement("div");
    const icon = document.createElement("span");
    icon.className = "icon-" + t.outcome;
    icon.textContent = t.outcome === "passed" ? "\u2714 " : t.outcome === "skipped" ? "\u2013 " : "\u2718 ";
    icon.setAttribute("aria-hidden", "true");
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = t.name;
    const meta = document.createElement("span");
    meta.className = "meta";
    // A hidden test's duration is withheld (it could encode the hidden input).
    meta.textContent = " " + t.outcome + (t.hidden ? " (hidden test)" : " \u00b7 " + Number(t.duration_s || 0).toFixed(3) + " s");
    head.append(icon, name, meta);
    li.replaceChildren(head);
    if (t.message) {
      // Visible tests: the assertion message. Hidden tests: the author's description only (the API sends nothing else).
      const pre = document.createElement(t.hidden ? "p" : "pre");
      pre.textContent = t.message;
      li.appendChild(pre);
    }
    li.dataset.outcome = t.outcome;
    li.dataset.message = t.message || "";
  }
  // Keyed update: rows that already exist are left alone, so screen readers
  // announce only the tests that just finished.
  function renderTests(tests) {
    const existing = new Map();
    for (const li of testsBox.children) existing.set(li.dataset.name, li);
    const wanted = new Set(tests.map((t) => t.name));
    for (const [name, li] of existing) if (!wanted.has(name)) li.remove();
    for (const t of tests) {
      const li = existing.get(t.name);
      if (!li) testsBox.appendChild(testRow(t));
      else if (li.dataset.outcome !== t.outcome || li.dataset.message !== (t.message || "")) fillTestRow(li, t);
    }
  }

  const PHASES = [
    ["queue_wait_s", "Waiting in the queue"],
    ["container_start_s", "Starting the sandbox"],
    ["harness_ready_s", "Loading the test harness"],
    ["run_s", "Running the tests"],
    ["total_s", "Total in the sandbox"],
  ];
  function renderTimings(timings) {
    timingsBox.replaceChildren();
    let any = false;
    for (const [key, label] of PHASES) {
      if (typeof timings[key] !== "number") continue;
      const dt = document.createElement("dt");
      dt.textContent = label;
      const dd = document.createElement("dd");
      dd.textContent = timings[key].toFixed(2) + " s";
      timingsBox.append(dt, dd);
      any = true;
    }
    timingsBox.hidden = !any;
  }

  function render(state) {
    renderTests(state.tests || []);
    const label = state.kind === "submit" ? "Submit" : "Run";
    if (state.status === "queued") {
      setStatus(label + ": queued" + (state.queue_position ? " (position " + state.queue_position + ")" : "") + "\u2026", "queued");
    } else if (state.status === "running") {
      const n = (state.tests || []).length;
      setStatus(label + ": running" + (n ? " \u2014 " + n + " test" + (n === 1 ? "" : "s") + " done so far" : "") + "\u2026", "running");
    } else {
      const tests = state.tests || [];
      const passed = tests.filter((t) => t.outcome === "passed").length;
      let text = label + " " + state.outcome.replace("_", " ") + (tests.length ? " \u2014 " + passed + "/" + tests.length + " tests passed" : "") + ". " + (state.summary || "");
      if (state.message) text += "\n" + state.message;
      setStatus(text, state.outcome);
      renderTimings(state.timings || {});
    }
    const out = [state.stdout, state.stderr].filter(Boolean).join("\n");
    $("stdout-box").hidden = !out;
    $("stdout").textContent = out;
  }

  // ---- Tracking one submission ----------------------------------------------
  let current = null;  // { stateUrl, source, timers, done, fetching, again }

  function stopTracking(track) {
    track.done = true;
    if (track.source) track.source.close();
    for (const timer of track.timers) clearInterval(timer);
  }

  async function refresh(track) {
    if (track.done) return;
    if (track.fetching) { track.again = true; return; }
    track.fetching = true;
    try {
      const resp = await fetch(track.stateUrl, { credentials: "same-origin", cache: "no-store" });
      if (!resp.ok) { setStatus("Could not fetch the result (" + resp.status + ").", "error"); stopTracking(track); return; }
      const state = await resp.json();
      if (track !== current || track.done) return;
      render(state);
      if (state.status === "done") {
        stopTracking(track);
        finished(state);
      }
    } catch (e) {
      // A network blip: the next hint or poll tries again.
    } finally {
      track.fetching = false;
      if (track.again && !track.done) { track.again = false; refresh(track); }
    }
  }

  function startPolling(track, ms) { track.timers.push(setInterval(() => refresh(track), ms)); }

  function follow(stateUrl, eventsUrl) {
    if (current) stopTracking(current);
    const track = { stateUrl, source: null, timers: [], done: false, fetching: false, again: false };
    current = track;
    root.dataset.live = "connecting";
    if (window.EventSource && eventsUrl) {
      const source = new EventSource(eventsUrl);
      track.source = source;
      source.addEventListener("changed", () => {
        root.dataset.live = "sse";
        root.dataset.hints = String(Number(root.dataset.hints || 0) + 1);
        refresh(track);
      });
      source.addEventListener("error", () => {
        // Includes the server ending a long stream: poll from here on.
        if (track.done) return;
        source.close();
        track.source = null;
        root.dataset.live = "polling";
        startPolling(track, POLL_MS);
      });
      startPolling(track, SAFETY_POLL_MS);  // queue position moves without events
    } else {
      root.dataset.live = "polling";
      startPolling(track, POLL_MS);
    }
    refresh(track);
  }

  let busy = false;
  function setBusy(value) {
    busy = value;
    $("run-button").disabled = value;
    $("submit-button").disabled = value;
  }

  async function finished(state) {
    setBusy(false);
    loadHistory();
    if (state.kind === "submit" && state.outcome === "passed") markSolved();
    if (state.kind === "submit" && state.reference_unlocked) await showReference(state.outcome === "passed");
  }

  async function send(kind) {
    if (busy) return;
    setBusy(true);
    testsBox.replaceChildren();
    timingsBox.hidden = true;
    $("stdout-box").hidden = true;
    setStatus(kind === "run" ? "Sending to the visible tests\u2026" : "Submitting to the hidden tests\u2026", "queued");
    saveDraft();
    try {
      const body = new URLSearchParams({ code: getCode(), version: root.dataset.version });
      const resp = await fetch(kind === "run" ? root.dataset.runUrl : root.dataset.submitUrl, {
        method: "POST", credentials: "same-origin", body, headers: { "X-CSRFToken": csrf },
      });
      const data = await resp.json().catch(() => ({}));
      if (!resp.ok) { setStatus(data.error || "The request was refused (" + resp.status + ").", "error"); setBusy(false); return; }
      follow(data.state_url, data.events_url);
    } catch (e) {
      setStatus("Could not reach the server. Your draft is kept; try again.", "error");
      setBusy(false);
    }
  }

  $("run-button").addEventListener("click", () => send("run"));
  $("submit-button").addEventListener("click", () => send("submit"));
  // Outside the editor too (the editor binds these itself).
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter" && !e.defaultPrevented) {
      e.preventDefault();
      send(e.shiftKey ? "submit" : "run");
    }
  });

  // ---- Solved, reference -------------------------------------------------------
  function markSolved() {
    root.dataset.solved = "true";
    const badge = $("solved-badge");
    badge.textContent = "\u2714 Solved";
    badge.className = "badge solved";
  }

  async function showReference(focus) {
    const resp = await fetch(root.dataset.referenceUrl, { credentials: "same-origin" });
    if (!resp.ok) return;
    const data = await resp.json();
    $("reference-code").textContent = data.reference;
    $("your-code").textContent = data.your_solution || getCode();
    const list = $("hidden-tests");
    list.replaceChildren();
    for (const t of data.hidden_tests) {
      const li = document.createElement("li");
      const name = document.createElement("code");
      name.textContent = t.name;
      li.append(name, document.createTextNode(": " + (t.description || "")));
      list.appendChild(li);
    }
    const section = $("reference");
    section.hidden = false;
    if (focus) {
      statusBox.textContent += "\nThe reference solution is unlocked below, beside yours.";
      section.scrollIntoView({ behavior: "smooth", block: "start" });
    }
  }
  if (root.dataset.solved === "true") showReference(false);

  // ---- History and diff ----------------------------------------------------------
  let attempts = [];
  let shown = null;

  // Line diff by longest common subsequence; falls back to "all removed, all
  // added" past a size where the table would be too large for a page.
  function lineDiff(a, b) {
    const x = a.split("\n"), y = b.split("\n");
    const n = x.length, m = y.length;
    if (n * m > 4000000) return x.map((l) => ["-", l]).concat(y.map((l) => ["+", l]));
    const width = m + 1;
    const table = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        table[i * width + j] = x[i] === y[j] ? table[(i + 1) * width + j + 1] + 1 : Math.max(table[(i + 1) * width + j], table[i * width + j + 1]);
      }
    }
    const out = [];
    let i = 0, j = 0;
    while (i < n && j < m) {
      if (x[i] === y[j]) { out.push([" ", x[i]]); i++; j++; }
      else if (table[(i + 1) * width + j] >= table[i * width + j + 1]) { out.push(["-", x[i]]); i++; }
      else { out.push(["+", y[j]]); j++; }
    }
    while (i < n) out.push(["-", x[i++]]);
    while (j < m) out.push(["+", y[j++]]);
    return out;
  }

  function showAttempt(attempt) {
    shown = attempt;
    for (const b of $("history-list").querySelectorAll("button")) b.setAttribute("aria-current", String(b.dataset.id === String(attempt.id)));
    $("history-code").textContent = attempt.code;
    const diff = $("history-diff");
    diff.replaceChildren();
    const lines = lineDiff(attempt.code, getCode());
    if (lines.every(([op]) => op === " ")) {
      diff.textContent = "No differences: your current code is this attempt.";
    } else {
      for (const [op, text] of lines) {
        const span = document.createElement("span");
        span.className = op === "+" ? "add" : op === "-" ? "del" : "same";
        span.textContent = op + " " + text;
        diff.appendChild(span);
      }
    }
    $("history-view").hidden = false;
  }

  async function loadHistory(resume) {
    const resp = await fetch(root.dataset.historyUrl, { credentials: "same-origin", cache: "no-store" });
    if (!resp.ok) return;
    attempts = (await resp.json()).attempts;
    const latest = attempts[0];
    if (resume && latest && (latest.status === "queued" || latest.status === "running") && !current) {
      // The page was reloaded while a job was in flight: follow it again.
      setBusy(true);
      follow(latest.state_url, latest.events_url);
    }
    const list = $("history-list");
    list.replaceChildren();
    $("history-empty").hidden = attempts.length > 0;
    for (const attempt of attempts) {
      const li = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.id = String(attempt.id);
      const when = new Date(attempt.enqueued_at);
      button.textContent = (attempt.kind === "submit" ? "Submit" : "Run") + " #" + attempt.id + " \u00b7 " +
        (attempt.outcome || attempt.status) + " \u00b7 " + when.toLocaleString();
      button.addEventListener("click", () => showAttempt(attempt));
      li.appendChild(button);
      list.appendChild(li);
    }
    if (shown) {
      const again = attempts.find((a) => a.id === shown.id);
      if (again) showAttempt(again);
    }
  }
  $("history-load").addEventListener("click", () => {
    if (!shown) return;
    setCode(shown.code);
    setStatus("Loaded attempt #" + shown.id + " into the editor. Ctrl/Cmd+Z in the editor undoes it.");
    showAttempt(shown);
  });
  $("history").addEventListener("toggle", () => { if ($("history").open) loadHistory(false); });
  loadHistory(true);

  // ---- Resizable panels ----------------------------------------------------------
  const STORE = "dojo-panels";
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
})();
