// "Ask the mentor": post the question, show the answer and the module
// passages it came from. With a model configured the server streams
// newline-delimited JSON events (passages, delta..., done | error);
// otherwise it answers with one JSON object.
// NOTE: only the server's *_html fields are set as HTML: they come from the
// module pages' Markdown renderer, which sanitises with nh3. Everything else,
// including the model's text while it streams, is set with textContent.
(function () {
  "use strict";

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text) node.textContent = text;
    return node;
  }

  var mathLoading = null;

  // Typeset $...$ in the answer with the module pages' KaTeX bundle,
  // loading it once when the page did not.
  function typeset(form, area) {
    if (window.DojoMath) { window.DojoMath.render(area.parentNode); return; }
    if (!form.dataset.mathSrc) return;
    if (!mathLoading) {
      mathLoading = new Promise(function (resolve) {
        if (form.dataset.mathCss && !document.querySelector('link[href="' + form.dataset.mathCss + '"]')) {
          var css = el("link"); css.rel = "stylesheet"; css.href = form.dataset.mathCss;
          document.head.appendChild(css);
        }
        var script = el("script");
        script.src = form.dataset.mathSrc;
        script.onload = resolve;
        script.onerror = resolve;
        document.head.appendChild(script);
      });
    }
    mathLoading.then(function () { if (window.DojoMath) window.DojoMath.render(area.parentNode); });
  }

  function setLabel(area, label) {
    var node = area.querySelector(".mentor-label");
    if (!node) {
      node = el("h3", "mentor-label");
      area.insertBefore(node, area.firstChild);
    }
    node.textContent = label;
  }

  function renderCalculation(area, calculation) {
    var old = area.querySelector(".mentor-calculation");
    if (old) old.remove();
    if (!calculation) return;
    var node = el("div", "mentor-calculation");
    node.innerHTML = calculation.html;
    var passages = area.querySelector(".mentor-passages");
    area.insertBefore(node, passages);
  }

  function renderPassages(area, passages) {
    var old = area.querySelector(".mentor-passages");
    if (old) old.remove();
    if (!passages || !passages.length) return;
    var wrap = el("div", "mentor-passages");
    wrap.appendChild(el("h4", null, "Passages of the module"));
    var list = el("ol");
    passages.forEach(function (passage) {
      var item = el("li");
      var link = el("a", null, passage.title);
      link.href = passage.url;
      item.appendChild(link);
      if (passage.html) {
        var excerpt = el("div", "mentor-excerpt");
        excerpt.innerHTML = passage.html;
        item.appendChild(excerpt);
      } else if (passage.text) {
        item.appendChild(el("p", "mentor-excerpt", passage.text));
      }
      list.appendChild(item);
    });
    wrap.appendChild(list);
    area.appendChild(wrap);
  }

  function answerNode(area) {
    var node = area.querySelector(".mentor-text");
    if (!node) {
      node = el("div", "mentor-text");
      area.insertBefore(node, area.querySelector(".mentor-passages"));
    }
    return node;
  }

  // The text of an answer without a model repeats the calculator's working;
  // the calculation block shows it rendered, so only the rest is shown here.
  function showAnswer(area, html, text, calculation) {
    if (calculation) {
      var rest = text && calculation.markdown ? text.replace(calculation.markdown, "").trim() : text;
      var node = answerNode(area);
      node.textContent = rest || "";
      if (!rest) node.remove();
      return;
    }
    if (html) answerNode(area).innerHTML = html;
    else answerNode(area).textContent = text || "";
  }

  function showError(area, message) {
    var node = el("p", "mentor-error", message);
    node.setAttribute("role", "alert");
    area.insertBefore(node, area.firstChild);
  }

  function handleEvent(area, event, state) {
    if (event.type === "passages") {
      renderPassages(area, event.passages);
      state.calculation = event.calculation;
      renderCalculation(area, event.calculation);
    } else if (event.type === "delta") {
      if (!state.text) setLabel(area, "The mentor's answer");
      state.text += event.text;
      answerNode(area).textContent = state.text;
    } else if (event.type === "done") {
      if (event.label) setLabel(area, event.label);
      if (state.text && event.answer_html) answerNode(area).innerHTML = event.answer_html;
      else if (!state.text) showAnswer(area, event.answer_html, event.answer, state.calculation);
    } else if (event.type === "error") {
      setLabel(area, "From the module");
      showError(area, event.message);
    }
  }

  async function readStream(response, area) {
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    var state = { text: "", calculation: null };
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
          setLabel(area, data.label || "From the module");
          renderPassages(area, data.passages);
          renderCalculation(area, data.calculation);
          if (data.error) showError(area, data.error);
          showAnswer(area, data.answer_html, data.answer, data.answered_by_model ? null : data.calculation);
        }
      }
      typeset(form, area);
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
