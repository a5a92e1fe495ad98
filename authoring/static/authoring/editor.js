// The rung editor: CodeMirror for every code textarea (the textarea stays the
// form field and is kept in sync), a live Markdown + KaTeX preview rendered by
// the server's own renderer, hidden-test rows that follow test_hidden.py, and
// polling of a running Check. Without JavaScript the plain form still works.
(function () {
  "use strict";

  function dark() {
    var theme = document.documentElement.dataset.theme;
    if (theme === "dark") return true;
    if (theme === "light") return false;
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  }

  function csrf() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  var editors = {};
  // Tests and tools reach the editors through this (by form field name).
  window.dojoAuthoring = {
    editors: editors,
    setValue: function (field, text) {
      if (editors[field]) { editors[field].setValue(text); return; }
      var textarea = document.querySelector("textarea[name='" + field + "']");
      textarea.value = text;
      textarea.dispatchEvent(new Event("input"));
    },
    getValue: function (field) {
      return document.querySelector("textarea[name='" + field + "']").value;
    },
  };
  document.addEventListener("dojo:theme", function (event) {
    Object.keys(editors).forEach(function (name) { editors[name].setDark(event.detail.dark); });
  });

  function mount(textarea, onChange) {
    if (!window.DojoEditor || textarea.dataset.mounted) return null;
    textarea.dataset.mounted = "1";
    var holder = document.createElement("div");
    holder.className = "code-editor";
    textarea.parentNode.insertBefore(holder, textarea);
    textarea.classList.add("visually-hidden");
    textarea.setAttribute("tabindex", "-1");
    textarea.setAttribute("aria-hidden", "true");
    var label = textarea.getAttribute("aria-label") || textarea.name;
    var editor = window.DojoEditor.create(holder, {
      doc: textarea.value,
      dark: dark(),
      label: label,
      onChange: function (text) {
        textarea.value = text;
        if (onChange) onChange(text);
      },
    });
    holder.dataset.field = textarea.name;
    editors[textarea.name] = editor;
    return editor;
  }

  // --- Hidden tests: one description row per test function ---------------
  var hiddenRows = document.getElementById("hidden-rows");
  var hiddenTotal = document.getElementById("id_hidden-TOTAL_FORMS");

  function testNames(source) {
    var names = [];
    var re = /^(?:async\s+)?def\s+(test_\w+)\s*\(/gm;
    var match;
    while ((match = re.exec(source))) names.push(match[1]);
    return names;
  }

  function addRow(templateId, container, total) {
    var template = document.getElementById(templateId);
    var index = parseInt(total.value, 10);
    var html = template.innerHTML.replace(/__prefix__/g, String(index));
    var holder = document.createElement(container.tagName === "TBODY" ? "tbody" : "div");
    holder.innerHTML = html;
    var row = holder.firstElementChild;
    container.appendChild(row);
    total.value = String(index + 1);
    return row;
  }

  function syncHiddenRows(source) {
    if (!hiddenRows) return;
    var names = testNames(source);
    var inputs = Array.prototype.slice.call(hiddenRows.querySelectorAll("input[name$='-name']"));
    var present = inputs.map(function (input) { return input.value; });
    names.forEach(function (name) {
      if (present.indexOf(name) !== -1) return;
      // A row whose test is gone most likely names a test just renamed: follow it
      // (keeping its description); else take a blank row; else add one.
      var orphans = inputs.filter(function (input) { return input.value && names.indexOf(input.value) === -1; });
      var blank = orphans[0] || inputs.filter(function (input) { return !input.value; })[0];
      if (!blank) {
        var row = addRow("hidden-empty", hiddenRows, hiddenTotal);
        blank = row.querySelector("input[name$='-name']");
        inputs.push(blank);
      }
      blank.value = name;
      present.push(name);
    });
    inputs.forEach(function (input) {
      var row = input.closest("tr");
      var orphan = input.value && names.indexOf(input.value) === -1;
      row.classList.toggle("orphan", Boolean(orphan));
      input.title = orphan ? "No such test in test_hidden.py" : "";
    });
  }

  // --- Live preview --------------------------------------------------------
  var preview = document.getElementById("preview");
  var instructions = document.getElementById("id_instructions_md");
  var timer = null;

  function refreshPreview() {
    if (!preview || !instructions) return;
    var body = new URLSearchParams();
    body.set("text", instructions.value);
    fetch(preview.dataset.url, {
      method: "POST",
      headers: { "X-CSRFToken": csrf(), "Content-Type": "application/x-www-form-urlencoded" },
      body: body.toString(),
      credentials: "same-origin",
    }).then(function (response) {
      // 413: the text is over the Markdown cap, and the answer says so.
      if (!response.ok && response.status !== 413) throw new Error(response.status);
      return response.text();
    }).then(function (html) {
      preview.innerHTML = html;
      if (window.DojoMath) window.DojoMath.render(preview.parentNode);
      preview.dataset.rendered = String(Date.now());
    }).catch(function () { /* keep the last preview */ });
  }

  if (instructions) {
    instructions.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(refreshPreview, 250);
    });
  }

  // --- Editors ---------------------------------------------------------------
  document.querySelectorAll("textarea.code").forEach(function (textarea) {
    if (textarea.closest("template")) return;
    mount(textarea, textarea.name === "hidden_tests" ? syncHiddenRows : null);
  });
  var hiddenSource = document.getElementById("id_hidden_tests");
  if (hiddenSource) syncHiddenRows(hiddenSource.value);

  // Wrong solutions and alternatives: the same rows, each list with its own prefix.
  [["add-wrong", "wrong"], ["add-alt", "alt"]].forEach(function (pair) {
    var button = document.getElementById(pair[0]);
    if (!button) return;
    button.addEventListener("click", function () {
      var row = addRow(pair[1] + "-empty", document.getElementById(pair[1] + "-rows"), document.getElementById("id_" + pair[1] + "-TOTAL_FORMS"));
      var code = row.querySelector("textarea.code");
      if (code) mount(code, null);
      var name = row.querySelector("input[name$='-name']");
      if (name) name.focus();
    });
  });

  // --- A running Check: poll until it is done, then show the facts ------------
  var check = document.getElementById("check");
  if (check && check.dataset.status !== "done") {
    var poll = function () {
      fetch(check.dataset.stateUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) { return response.json(); })
        .then(function (state) {
          if (state.status === "done") {
            window.location.reload();
          } else {
            setTimeout(poll, 1500);
          }
        })
        .catch(function () { setTimeout(poll, 3000); });
    };
    setTimeout(poll, 1000);
  }
})();
