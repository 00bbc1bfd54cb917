// skillmake viewer: filters, keyboard navigation and feedback. The pages read fine without it.
// Nothing here turns text into markup: values are set with textContent and attributes only.
(function () {
  "use strict";

  function meta(name) {
    var el = document.querySelector('meta[name="' + name + '"]');
    return el ? el.getAttribute("content") : null;
  }
  var served = meta("skillmake-mode") === "served";
  var token = meta("skillmake-token");
  var spec = meta("skillmake-spec");
  var base = meta("skillmake-base") || "";

  function typing(ev) {
    var t = ev.target;
    return t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT" || t.tagName === "SELECT" || t.isContentEditable);
  }

  // ---- filters (index and spec pages) ---------------------------------------------------------------
  var bar = document.querySelector("[data-filters]");
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr[data-row]"));
  function visibleRows() {
    return rows.filter(function (r) { return !r.hidden; });
  }
  function applyFilters() {
    if (!bar) return;
    var fails = bar.querySelector("[name=failures]");
    var arm = bar.querySelector("[name=arm]");
    var tag = bar.querySelector("[name=tag]");
    var q = bar.querySelector("[name=q]");
    var onlyFails = fails && fails.checked;
    var armValue = arm ? arm.value : "";
    var tagValue = tag ? tag.value : "";
    var words = q ? q.value.toLowerCase().split(/\s+/).filter(Boolean) : [];
    var shown = 0;
    rows.forEach(function (r) {
      var failed = (r.getAttribute("data-failed") || "").split(" ").filter(Boolean);
      var ok = true;
      if (onlyFails) ok = armValue ? failed.indexOf(armValue) >= 0 : failed.length > 0;
      if (ok && tagValue) ok = (" " + (r.getAttribute("data-tags") || "") + " ").indexOf(" " + tagValue + " ") >= 0;
      if (ok && words.length) {
        var text = r.getAttribute("data-text") || "";
        ok = words.every(function (w) { return text.indexOf(w) >= 0; });
      }
      r.hidden = !ok;
      if (ok) shown++;
    });
    Array.prototype.forEach.call(document.querySelectorAll("[data-arm]"), function (cell) {
      cell.hidden = !!armValue && cell.getAttribute("data-arm") !== armValue;
    });
    var count = bar.querySelector("[data-count]");
    if (count) count.textContent = shown + " of " + rows.length + " shown";
    rememberOrder();
    var state = {};
    [fails, arm, tag, q].forEach(function (el) {
      if (el) state[el.name] = el.type === "checkbox" ? el.checked : el.value;
    });
    try { sessionStorage.setItem("skillmake:filters:" + location.pathname, JSON.stringify(state)); } catch (e) {}
  }
  function rememberOrder() {
    // The case pages step through the cases the spec page shows, in its order and under its filters.
    if (!spec) return;
    var hrefs = visibleRows().map(function (r) { return r.getAttribute("data-href"); }).filter(Boolean);
    try { sessionStorage.setItem("skillmake:order:" + spec, JSON.stringify(hrefs)); } catch (e) {}
  }
  if (bar) {
    bar.hidden = false;
    try {
      var saved = JSON.parse(sessionStorage.getItem("skillmake:filters:" + location.pathname) || "{}");
      Object.keys(saved).forEach(function (name) {
        var el = bar.querySelector("[name=" + name + "]");
        if (!el) return;
        if (el.type === "checkbox") el.checked = !!saved[name]; else el.value = saved[name];
      });
    } catch (e) {}
    bar.addEventListener("input", applyFilters);
    bar.addEventListener("change", applyFilters);
    bar.addEventListener("submit", function (ev) { ev.preventDefault(); });
    applyFilters();
  }

  // ---- keyboard ---------------------------------------------------------------------------------------
  var current = -1;
  function select(i) {
    var list = visibleRows();
    if (!list.length) return;
    current = Math.max(0, Math.min(list.length - 1, i));
    rows.forEach(function (r) { r.classList.remove("current"); });
    list[current].classList.add("current");
    list[current].scrollIntoView({ block: "nearest" });
  }
  function neighbour(step) {
    // On a case page: the next case the spec page showed, else the page's own next/prev link.
    var here = meta("skillmake-case-href");
    try {
      var order = JSON.parse(sessionStorage.getItem("skillmake:order:" + spec) || "null");
      var i = order ? order.indexOf(here) : -1;
      if (i >= 0 && order[i + step]) return base + order[i + step];
      if (i >= 0) return null;
    } catch (e) {}
    var link = document.querySelector(step > 0 ? "a[rel=next]" : "a[rel=prev]");
    return link ? link.getAttribute("href") : null;
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape" && typing(ev)) { ev.target.blur(); return; }
    if (typing(ev) || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    var key = ev.key;
    if (rows.length) {
      if (key === "j" || key === "ArrowDown") { select(current + 1); ev.preventDefault(); }
      else if (key === "k" || key === "ArrowUp") { select(current - 1); ev.preventDefault(); }
      else if ((key === "Enter" || key === "o") && current >= 0) {
        var link = visibleRows()[current].querySelector("a[data-open]");
        if (link) { location.href = link.getAttribute("href"); ev.preventDefault(); }
      } else if (key === "/" && bar) {
        var q = bar.querySelector("[name=q]");
        if (q) { q.focus(); ev.preventDefault(); }
      }
      return;
    }
    if (key === "j" || key === "ArrowRight" || key === "k" || key === "ArrowLeft") {
      var target = neighbour(key === "j" || key === "ArrowRight" ? 1 : -1);
      if (target) { location.href = target; ev.preventDefault(); }
    } else if (key === "u") {
      var up = document.querySelector("a[rel=up]");
      if (up) location.href = up.getAttribute("href");
    }
  });

  // ---- feedback -----------------------------------------------------------------------------------------
  var storeKey = "skillmake:feedback:" + spec;
  function localNotes() {
    try { return JSON.parse(localStorage.getItem(storeKey) || "{}"); } catch (e) { return {}; }
  }
  function say(form, text, bad) {
    var out = form.querySelector(".saved");
    if (!out) return;
    out.textContent = text;
    out.classList.toggle("bad", !!bad);
  }
  function post(body) {
    return fetch(base + "api/feedback", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Skillmake-Token": token || "" },
      body: JSON.stringify(body),
      credentials: "same-origin",
    }).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (data) {
        if (!resp.ok) throw new Error(data.error || "HTTP " + resp.status);
        return data;
      });
    });
  }
  function save(form) {
    var runId = form.getAttribute("data-run-id");
    var text = form.querySelector("textarea").value;
    if (served) {
      say(form, "saving…");
      post({ spec: spec, run_id: runId, feedback: text }).then(function (data) {
        say(form, text.trim() ? "saved " + (data.timestamp || "") : "cleared");
      }, function (err) { say(form, "not saved: " + err.message, true); });
    } else {
      var notes = localNotes();
      if (text.trim()) notes[runId] = { feedback: text, timestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z") };
      else delete notes[runId];
      try { localStorage.setItem(storeKey, JSON.stringify(notes)); } catch (e) {}
      say(form, "kept in this browser: download feedback.json to keep it");
    }
  }
  var forms = Array.prototype.slice.call(document.querySelectorAll("form.fb"));
  if (!served) {
    var notes = localNotes();
    forms.forEach(function (form) {
      var note = notes[form.getAttribute("data-run-id")];
      if (note) { form.querySelector("textarea").value = note.feedback; say(form, "kept in this browser"); }
    });
  }
  forms.forEach(function (form) {
    var button = form.querySelector("button[type=submit]");
    if (button) button.hidden = false;
    form.addEventListener("submit", function (ev) { ev.preventDefault(); save(form); });
    form.querySelector("textarea").addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); save(form); }
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("[data-feedback-download]"), function (btn) {
    if (served) return;
    btn.hidden = false;
    btn.addEventListener("click", function () {
      var embedded = document.getElementById("feedback-data");
      var doc = { reviews: [], status: "in_progress" };
      try { doc = JSON.parse(embedded.textContent); } catch (e) {}
      var byId = {};
      doc.reviews.forEach(function (r) { byId[r.run_id] = r; });
      var notes = localNotes();
      Object.keys(notes).forEach(function (id) {
        byId[id] = { run_id: id, feedback: notes[id].feedback, timestamp: notes[id].timestamp };
      });
      var out = { reviews: Object.keys(byId).sort().map(function (id) { return byId[id]; }), status: doc.status };
      var blob = new Blob([JSON.stringify(out, null, 2) + "\n"], { type: "application/json" });
      var a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = "feedback.json";
      document.body.appendChild(a);
      a.click();
      setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 0);
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("[data-feedback-done]"), function (btn) {
    if (!served) return;
    btn.hidden = false;
    btn.addEventListener("click", function () {
      post({ spec: spec, status: "complete" }).then(function () { btn.textContent = "marked complete"; },
        function (err) { btn.textContent = "not saved: " + err.message; });
    });
  });
})();
