// "Ask the mentor": post the question, show the answer and the module
// passages it came from. With a model configured the server streams
// newline-delimited JSON events (passages, delta..., done | error);
// otherwise it answers with one JSON object. All text is set with
// textContent: nothing from the server is parsed as HTML.
(function () {
  "use strict";

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text) node.textContent = text;
    return node;
  }

  function renderPassages(area, passages) {
    var old = area.querySelector(".mentor-passages");
    if (old) old.remove();
    if (!passages || !passages.length) return;
    var wrap = el("div", "mentor-passages");
    wrap.appendChild(el("h3", null, "From the module"));
    var list = el("ol");
    passages.forEach(function (passage) {
      var item = el("li");
      var link = el("a", null, passage.title);
      link.href = passage.url;
      item.appendChild(link);
      if (passage.text) item.appendChild(el("p", "mentor-excerpt", passage.text));
      list.appendChild(item);
    });
    wrap.appendChild(list);
    area.appendChild(wrap);
  }

  function answerNode(area) {
    var node = area.querySelector(".mentor-text");
    if (!node) {
      node = el("p", "mentor-text");
      area.insertBefore(node, area.firstChild);
    }
    return node;
  }

  function showError(area, message) {
    var node = el("p", "mentor-error", message);
    node.setAttribute("role", "alert");
    area.insertBefore(node, area.firstChild);
  }

  function handleEvent(area, event, state) {
    if (event.type === "passages") {
      renderPassages(area, event.passages);
    } else if (event.type === "delta") {
      state.text += event.text;
      answerNode(area).textContent = state.text;
    } else if (event.type === "done") {
      if (event.answer && !state.text) answerNode(area).textContent = event.answer;
    } else if (event.type === "error") {
      showError(area, event.message);
    }
  }

  async function readStream(response, area) {
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    var state = { text: "" };
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      var lines = buffer.split("\n");
      buffer = lines.pop();
      lines.forEach(function (line) {
        if (line.trim()) handleEvent(area, JSON.parse(line), state);
      });
    }
    if (buffer.trim()) handleEvent(area, JSON.parse(buffer), state);
  }

  async function ask(form, area) {
    var button = form.querySelector("button[type=submit]");
    area.textContent = "";
    area.setAttribute("aria-busy", "true");
    if (button) button.disabled = true;
    try {
      var response = await fetch(form.action + "?stream=1", {
        method: "POST",
        body: new FormData(form),
        credentials: "same-origin",
        headers: { "X-Requested-With": "fetch" },
      });
      var type = response.headers.get("Content-Type") || "";
      if (response.ok && type.indexOf("application/x-ndjson") === 0 && response.body) {
        await readStream(response, area);
      } else {
        var data = await response.json().catch(function () { return { error: "The mentor could not answer (HTTP " + response.status + ")." }; });
        if (!response.ok) {
          showError(area, data.error || "The mentor could not answer.");
        } else {
          answerNode(area).textContent = data.answer;
          renderPassages(area, data.passages);
        }
      }
    } catch (err) {
      showError(area, "The mentor could not be reached. Please try again.");
    } finally {
      area.setAttribute("aria-busy", "false");
      if (button) button.disabled = false;
    }
  }

  function bind(form) {
    if (form.dataset.mentorBound) return;
    form.dataset.mentorBound = "1";
    var area = form.parentNode.querySelector("[data-mentor-answer]");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      ask(form, area);
    });
  }

  function init() {
    document.querySelectorAll("form[data-mentor-form]").forEach(bind);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
