// Hints revealed one at a time, and "report a problem", in the rung workspace.
// Hint HTML comes from the server's Markdown renderer (sanitised with nh3);
// every other text is set with textContent.
(function () {
  "use strict";

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text) node.textContent = text;
    return node;
  }

  function csrf(root) {
    var input = root.querySelector("input[name=csrfmiddlewaretoken]") || document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // The editor's code, from the workspace script when it is there.
  function currentCode() {
    if (window.dojoWorkspace && typeof window.dojoWorkspace.getCode === "function") return window.dojoWorkspace.getCode();
    var textarea = document.getElementById("code");
    return textarea ? textarea.value : "";
  }

  async function post(url, root, fields) {
    var response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrf(root), "X-Requested-With": "fetch" },
      body: new URLSearchParams(fields),
    });
    var data = await response.json().catch(function () { return { error: "Something went wrong (HTTP " + response.status + ")." }; });
    return { ok: response.ok, data: data };
  }

  function bindHints(root) {
    var button = document.getElementById("reveal-hint");
    if (!button) return;
    var list = document.getElementById("hint-list");
    var error = document.getElementById("hint-error");
    button.addEventListener("click", async function () {
      if (button.disabled) return;
      button.disabled = true;
      error.hidden = true;
      try {
        var result = await post(root.dataset.revealUrl, root, { number: button.dataset.next });
        if (!result.ok) {
          error.textContent = result.data.error || "The hint could not be shown.";
          error.hidden = false;
          return;
        }
        list.textContent = "";
        result.data.revealed.forEach(function (hint) {
          var item = el("li", "hint");
          item.dataset.number = hint.number;
          item.innerHTML = hint.html;
          list.appendChild(item);
        });
        var shown = result.data.revealed.length;
        if (shown >= result.data.total) {
          button.hidden = true;
          document.getElementById("hints-done").hidden = false;
        } else {
          button.dataset.next = String(shown + 1);
          button.textContent = "Show hint " + (shown + 1) + " of " + result.data.total;
        }
        if (window.DojoMath) window.DojoMath.render(root);
        var last = list.lastElementChild;
        if (last) { last.tabIndex = -1; last.focus(); }
      } catch (err) {
        error.textContent = "The hint could not be fetched. Please try again.";
        error.hidden = false;
      } finally {
        button.disabled = false;
      }
    });
  }

  function renderReports(reports) {
    var list = document.getElementById("my-reports");
    list.textContent = "";
    document.getElementById("my-reports-title").hidden = !reports.length;
    reports.forEach(function (report) {
      var item = el("li", "report report-" + report.status);
      item.dataset.report = report.id;
      item.appendChild(el("span", "badge", report.status_label));
      item.appendChild(document.createTextNode(" "));
      item.appendChild(el("span", "report-message", report.message));
      if (report.note) {
        var note = el("p", "report-note");
        note.appendChild(el("strong", null, "Instructor's note:"));
        note.appendChild(document.createTextNode(" " + report.note));
        item.appendChild(note);
      }
      list.appendChild(item);
    });
  }

  function bindReport(root) {
    var form = document.getElementById("report-form");
    if (!form) return;
    var status = document.getElementById("report-status");
    form.addEventListener("submit", async function (event) {
      event.preventDefault();
      var button = form.querySelector("button[type=submit]");
      button.disabled = true;
      status.textContent = "Sending…";
      try {
        var result = await post(root.dataset.reportUrl, root, { message: form.message.value, code: currentCode() });
        if (!result.ok) { status.textContent = result.data.error || "The report could not be sent."; return; }
        status.textContent = result.data.message;
        form.message.value = "";
        var listing = await fetch(root.dataset.reportsUrl, { credentials: "same-origin" });
        if (listing.ok) renderReports((await listing.json()).reports);
      } catch (err) {
        status.textContent = "The report could not be sent. Please try again.";
      } finally {
        button.disabled = false;
      }
    });
  }

  function init() {
    var root = document.getElementById("learning-aids");
    if (!root || root.dataset.bound) return;
    root.dataset.bound = "1";
    bindHints(root);
    bindReport(root);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
