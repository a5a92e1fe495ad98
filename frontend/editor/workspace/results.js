// Rendering a submission's JSON state: status line, test rows, timings, output.
import { $, setStatus } from "./dom.js";

const PHASES = [
  ["queue_wait_s", "Waiting in the queue"],
  ["container_start_s", "Starting the sandbox"],
  ["harness_ready_s", "Loading the test harness"],
  ["run_s", "Running the tests"],
  ["total_s", "Total in the sandbox"],
];

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

function testRow(t) {
  const li = document.createElement("li");
  li.dataset.name = t.name;
  fillTestRow(li, t);
  return li;
}

// Keyed update: rows that already exist are left alone, so screen readers
// announce only the tests that just finished.
function renderTests(tests) {
  const testsBox = $("tests");
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

function renderTimings(timings) {
  const timingsBox = $("timings");
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

// Where the result was graded: device, torch, CUDA, Python, image (one line from the server).
function renderMachine(line) {
  const box = $("machine");
  box.textContent = line ? "Graded on " + line : "";
  box.hidden = !line;
}

/** Clear the output before a new job. */
export function clearResults() {
  $("tests").replaceChildren();
  $("timings").hidden = true;
  $("machine").hidden = true;
  $("stdout-box").hidden = true;
}

export function render(state) {
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
    renderMachine(state.machine || "");
  }
  const out = [state.stdout, state.stderr].filter(Boolean).join("\n");
  $("stdout-box").hidden = !out;
  $("stdout").textContent = out;
}
