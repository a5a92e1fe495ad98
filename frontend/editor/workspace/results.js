// Rendering a submission's JSON state: the status line, a "3 failed · 9
// passed" summary, failures first and passes collapsed, timings, output.
import { $, setStatus } from "./dom.js";

const PHASES = [
  ["queue_wait_s", "Waiting in the queue"],
  ["container_start_s", "Starting the sandbox"],
  ["harness_ready_s", "Loading the test harness"],
  ["run_s", "Running the tests"],
  ["total_s", "Total in the sandbox"],
];
const OUTCOME_WORDS = { passed: "passed", failed: "failed", error: "error", timeout: "time limit", skipped: "not run" };
// Failures first, then tests that never ran; passes go to their own, collapsed list.
const RANK = { failed: 0, error: 0, timeout: 0, skipped: 1 };

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
  const words = OUTCOME_WORDS[t.outcome] || t.outcome;
  meta.textContent = " " + words + (t.hidden ? " (hidden test)" : t.outcome === "skipped" ? "" : " \u00b7 " + Number(t.duration_s || 0).toFixed(3) + " s");
  head.append(icon, name, meta);
  li.replaceChildren(head);
  if (t.message) {
    // Visible tests: the assertion message. Hidden tests: the author's description only (the API sends nothing else).
    const pre = document.createElement(t.hidden || t.outcome === "skipped" ? "p" : "pre");
    pre.textContent = t.message;
    li.appendChild(pre);
  }
  li.dataset.outcome = t.outcome;
  li.dataset.message = t.message || "";
}

// Keyed update: rows that already exist are left alone, so screen readers
// announce only the tests that just finished.
function renderTests(tests) {
  const failing = $("tests"), passing = $("tests-passed");
  const existing = new Map();
  for (const li of [...failing.children, ...passing.children]) existing.set(li.dataset.name, li);
  const wanted = new Set(tests.map((t) => t.name));
  for (const [name, li] of existing) if (!wanted.has(name)) li.remove();
  for (const t of tests) {
    let li = existing.get(t.name);
    if (!li) { li = document.createElement("li"); li.dataset.name = t.name; fillTestRow(li, t); }
    else if (li.dataset.outcome !== t.outcome || li.dataset.message !== (t.message || "")) fillTestRow(li, t);
    const list = t.outcome === "passed" ? passing : failing;
    if (li.parentElement !== list) list.appendChild(li);
  }
  const rows = [...failing.children];
  const sorted = [...rows].sort((a, b) => (RANK[a.dataset.outcome] ?? 0) - (RANK[b.dataset.outcome] ?? 0));
  if (sorted.some((li, i) => li !== rows[i])) for (const li of sorted) failing.appendChild(li);

  const count = (o) => tests.filter((t) => t.outcome === o).length;
  const timedOut = count("timeout");
  const failed = tests.length - count("passed") - count("skipped") - timedOut, passed = count("passed"), notRun = count("skipped");
  const parts = [];
  if (failed) parts.push(failed + " failed");
  if (timedOut) parts.push(timedOut + " hit the time limit");
  if (passed) parts.push(passed + " passed");
  if (notRun) parts.push(notRun + " not run");
  const summary = $("test-summary");
  summary.textContent = parts.join(" \u00b7 ");
  summary.hidden = parts.length === 0;
  summary.className = "test-summary" + (failed || timedOut ? " has-failures" : passed && !notRun ? " all-passed" : "");
  $("passed-box").hidden = passed === 0;
  $("passed-summary").textContent = passed + " passed test" + (passed === 1 ? "" : "s");
  return { failed: failed + timedOut, passed, notRun };
}

// words: a Submit's timings said coarsely by the server ("under 1 s", "about 2 s"): they are whole seconds.
function renderTimings(timings, words = {}) {
  const timingsBox = $("timings");
  timingsBox.replaceChildren();
  let any = false;
  for (const [key, label] of PHASES) {
    if (typeof timings[key] !== "number") continue;
    const dt = document.createElement("dt");
    dt.textContent = label;
    const dd = document.createElement("dd");
    dd.textContent = words[key] || timings[key].toFixed(2) + " s";
    timingsBox.append(dt, dd);
    any = true;
  }
  timingsBox.hidden = !any;
}

// Where the result was graded: device, torch, CUDA, Python, image (one line from the server).
function renderMachine(line) {
  const box = $("machine");
  box.textContent = line ? "Graded on " + line : "";
  box.hidden = !line;
}

/** Clear the output before a new job, or when a refusal makes the last result stale. */
export function clearResults() {
  $("tests").replaceChildren();
  $("tests-passed").replaceChildren();
  $("passed-box").hidden = true;
  $("test-summary").hidden = true;
  $("timings").hidden = true;
  $("machine").hidden = true;
  $("stdout-box").hidden = true;
}

function outcomeWords(outcome) {
  return { passed: "passed", failed: "failed", error: "error", timeout: "stopped at the time limit", memory_limit: "stopped at the memory limit",
    output_limit: "stopped at the output limit", infra_error: "failed on our side", cancelled: "cancelled" }[outcome] || outcome;
}

/** Show a state; `prefix` (e.g. "Attempt #12: ") labels results reopened from the history. */
export function render(state, prefix = "") {
  const counts = renderTests(state.tests || []);
  const label = prefix + (state.kind === "submit" ? "Submit" : "Run");
  if (state.status === "queued") {
    setStatus(label + ": queued" + (state.queue_position ? " (position " + state.queue_position + ")" : "") + "\u2026", "queued");
  } else if (state.status === "running") {
    const n = (state.tests || []).length;
    setStatus(label + ": running" + (n ? " \u2014 " + n + " test" + (n === 1 ? "" : "s") + " done so far" : "") + "\u2026", "running");
  } else {
    const total = (state.tests || []).length;
    let text = label + " " + outcomeWords(state.outcome) + (total ? " \u2014 " + counts.passed + "/" + total + " tests passed" : "") + ". " + (state.summary || "");
    if (state.message) text += "\n" + state.message;
    if (state.regraded) {
      const r = state.regraded;
      text += "\nRegraded against version " + r.version + ": " + outcomeWords(r.old_outcome) + " \u2192 " + outcomeWords(r.new_outcome) + ".";
    }
    setStatus(text, state.outcome);
    renderTimings(state.timings || {}, state.timings_words || {});
    renderMachine(state.machine || "");
  }
  const out = [state.stdout, state.stderr].filter(Boolean).join("\n");
  $("stdout-box").hidden = !out;
  $("stdout").textContent = out;
  return counts;
}
