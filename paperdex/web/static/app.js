// Progressive enhancement only: every page works without this file.
(function () {
  "use strict";
  // Math: the local KaTeX, deferred before this file on a page that needs it, typesets the
  // data-tex spans as MathML before the first frame; one it cannot parse keeps its text
  // (docs/web.md, page weight).
  function typeset(root) {
    if (!window.katex) return;
    root.querySelectorAll(".math[data-tex]:not(.typeset):not(.tex-error)").forEach(function (el) {
      try {
        var text = el.textContent;
        window.katex.render(el.getAttribute("data-tex"), el, { output: "mathml", throwOnError: true, strict: "ignore", maxSize: 20, maxExpand: 200 });
        el.classList.add("typeset");
        el.setAttribute("title", text);
      } catch (e) {
        el.classList.add("tex-error");
      }
    });
  }
  typeset(document);
  // Copy buttons (BibTeX): shown only when the clipboard API exists.
  document.querySelectorAll("button.copy[data-copy]").forEach(function (btn) {
    var target = document.querySelector(btn.getAttribute("data-copy"));
    if (!target || !navigator.clipboard) return;
    btn.hidden = false;
    var label = btn.textContent;
    btn.addEventListener("click", function () {
      navigator.clipboard.writeText(target.textContent).then(function () {
        btn.textContent = btn.getAttribute("data-copied") || "Copied";
        setTimeout(function () { btn.textContent = label; }, 1500);
      });
    });
  });
  // Leave empty and default filters out of the URL, so it stays short and shareable.
  document.querySelectorAll("form.searchform").forEach(function (form) {
    var defaults = { sort: "relevance", mode: "hybrid" };
    form.addEventListener("submit", function () {
      form.querySelectorAll("input, select").forEach(function (el) {
        if (el.name && el.name !== "q" && (el.value === "" || defaults[el.name] === el.value)) el.disabled = true;
      });
    });
  });
  // Back/forward cache can restore disabled fields; enable them again.
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form.searchform [disabled]").forEach(function (el) { el.disabled = false; });
  });
  // "Save to a tag": the link opens /save/ID (which says why saving is read-only); for a
  // signed-in browser, a small form in place posting to the JSON API with the CSRF value.
  var session = null;
  function getSession() {
    if (!session) {
      session = fetch("/api/library/session", { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : { signed_in: false, tags: [] }; })
        .catch(function () { return { signed_in: false, tags: [] }; });
    }
    return session;
  }
  function lastTag() {
    try { return localStorage.getItem("paperdex.tag") || ""; } catch (e) { return ""; }
  }
  function openSaveForm(link, s) {
    var open = link.parentNode.querySelector("form.save-pop");
    if (open) { open.querySelector("input").focus(); return; }
    var form = document.createElement("form");
    form.className = "save-pop";
    form.setAttribute("data-testid", "save-pop");
    var listId = "tags-" + Math.random().toString(36).slice(2);
    var input = document.createElement("input");
    input.name = "tag";
    input.required = true;
    input.maxLength = 64;
    input.id = "save-tag-" + listId;
    input.setAttribute("list", listId);
    input.setAttribute("data-testid", "save-tag");
    // a label the reader sees (a placeholder or aria-label alone vanishes once typing starts)
    var label = document.createElement("label");
    label.className = "save-pop-label";
    label.htmlFor = input.id;
    label.textContent = link.getAttribute("data-label-tag") || "Tag";
    input.value = lastTag() || (s.tags.length === 1 ? s.tags[0] : "");
    var list = document.createElement("datalist");
    list.id = listId;
    s.tags.forEach(function (n) { var o = document.createElement("option"); o.value = n; list.appendChild(o); });
    var btn = document.createElement("button");
    btn.type = "submit";
    btn.className = "btn";
    btn.textContent = "✓";
    btn.setAttribute("data-testid", "save-submit");
    var err = document.createElement("span");
    err.className = "save-error";
    err.setAttribute("role", "alert");
    form.appendChild(label);
    form.appendChild(input);
    form.appendChild(list);
    form.appendChild(btn);
    form.appendChild(err);
    link.insertAdjacentElement("afterend", form);
    input.focus();
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var name = input.value.trim();
      if (!name) return;
      btn.disabled = true;
      err.textContent = "";
      fetch("/api/tags/" + encodeURIComponent(name) + "/papers", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": s.csrf, Accept: "application/json" },
        body: JSON.stringify({ ids: [link.getAttribute("data-id")] })
      }).then(function (r) {
        return r.json().then(function (body) { return { ok: r.ok, status: r.status, body: body }; });
      }).then(function (res) {
        btn.disabled = false;
        if (!res.ok) { err.textContent = (res.body && res.body.error && res.body.error.message) || "error " + res.status; return; }
        try { localStorage.setItem("paperdex.tag", res.body.name); } catch (e2) { /* private mode */ }
        if (s.tags.indexOf(res.body.name) < 0) s.tags.push(res.body.name);
        form.remove();
        link.textContent = "★ " + (link.getAttribute("data-saved") || "Saved to") + " " + res.body.name;
        link.classList.add("saved");
        link.setAttribute("href", "/tag/" + encodeURIComponent(res.body.name));
        link.setAttribute("data-testid", "saved-link");
      }, function () { btn.disabled = false; err.textContent = "network error"; });
    });
  }
  // one listener: lines added later (daily.js) too
  document.addEventListener("click", function (e) {
    var link = e.target.closest("a.save-link[data-id]");
    if (!link || link.classList.contains("saved") || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    getSession().then(function (s) {
      if (s.signed_in) openSaveForm(link, s);
      else window.location.href = link.getAttribute("href") + "?next=" + encodeURIComponent(location.pathname + location.search);
    });
  });
  // a key pressed while a field has the focus is typing
  function typing() { return /^(INPUT|TEXTAREA|SELECT)$/.test((document.activeElement || {}).tagName); }
  // "/" focuses the search box, as on most search sites.
  document.addEventListener("keydown", function (e) {
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (typing()) return;
    var box = document.querySelector('input[name="q"]');
    if (box) { e.preventDefault(); box.focus(); box.select(); }
  });

  // Keyboard reading of a list of papers (the daily page): j / k move to the next / previous
  // paper, Enter or x opens a compact line in place, o opens the paper's page, s saves it.
  var list = document.querySelector("[data-nav]");
  if (list) {
    var items = function () { return Array.prototype.slice.call(list.querySelectorAll(":scope > details.row, :scope > article.card")); };
    var current = -1;
    var focusItem = function (i) {
      var all = items();
      if (!all.length) return;
      current = Math.max(0, Math.min(all.length - 1, i));
      all.forEach(function (el) { el.classList.remove("current"); });
      var el = all[current];
      el.classList.add("current");
      var target = el.tagName === "DETAILS" ? el.querySelector("summary") : el.querySelector(".card-title a");
      if (target) target.focus({ preventScroll: true });
      el.scrollIntoView({ block: "nearest" });
    };
    list.addEventListener("focusin", function (e) {
      var all = items();
      for (var i = 0; i < all.length; i++) if (all[i].contains(e.target)) { current = i; break; }
    });
    document.addEventListener("keydown", function (e) {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (typing()) return;
      var all = items();
      if (!all.length) return;
      if (e.key === "j") { e.preventDefault(); focusItem(current + 1); return; }
      if (e.key === "k") { e.preventDefault(); focusItem(current < 0 ? 0 : current - 1); return; }
      if (current < 0) return;
      var el = all[current];
      if (e.key === "x" && el.tagName === "DETAILS") { e.preventDefault(); el.open = !el.open; return; }
      if (e.key === "o") {
        e.preventDefault();
        var a = el.querySelector(".card-title a");
        if (a) window.location.href = a.getAttribute("href");
        return;
      }
      if (e.key === "s") {
        var save = el.querySelector("a.save-link:not(.saved)");
        if (save) {
          e.preventDefault();
          if (el.tagName === "DETAILS") el.open = true;
          save.click();
        }
      }
    });
    // a paper named in the day's shape: open its line in place
    document.querySelectorAll("a[data-goto]").forEach(function (a) {
      a.addEventListener("click", function () {
        var row = document.getElementById("r-" + a.getAttribute("data-goto").replace(/\//g, "-"));
        if (row) row.open = true;
      });
    });
  }

  // lines added later (daily.js): their math
  document.addEventListener("paperdex:added", function (e) { typeset(e.target); });

  // Suggestions while typing (web/suggest.py) from /api/suggest: a listbox under the box, driven
  // by the arrow keys, Enter and Escape. Nothing is asked while an input method is composing.
  var box = document.querySelector("input[data-suggest]");
  var listbox = document.getElementById("suggestions");
  if (box && listbox && window.fetch) {
    var endpoint = box.getAttribute("data-suggest");
    var active = -1, timer = null, composing = false, asked = "";
    var options = function () { return listbox.querySelectorAll("[role=option]"); };
    var close = function () {
      listbox.hidden = true;
      listbox.textContent = "";
      box.removeAttribute("aria-activedescendant");
      active = -1;
    };
    var choose = function (opt) {
      box.value = opt.getAttribute("data-query");
      close();
      box.focus();
      if (!/:$/.test(box.value)) box.value += " ";
      else ask();
    };
    var show = function (items) {
      listbox.textContent = "";
      active = -1;
      if (!items.length) { close(); return; }
      items.forEach(function (s, i) {
        var li = document.createElement("li");
        li.id = "sugg-" + i;
        li.setAttribute("role", "option");
        li.setAttribute("aria-selected", "false");
        li.setAttribute("data-query", s.query);
        li.className = "sugg " + s.kind;
        var label = document.createElement("span");
        label.className = "sugg-label";
        label.textContent = s.label;
        var note = document.createElement("span");
        note.className = "sugg-note";
        note.textContent = s.note;
        li.appendChild(label);
        li.appendChild(note);
        li.addEventListener("mousedown", function (e) { e.preventDefault(); choose(li); });
        listbox.appendChild(li);
      });
      listbox.hidden = false;
    };
    var ask = function () {
      var q = box.value;
      if (q === asked) return;
      asked = q;
      fetch(endpoint + "&q=" + encodeURIComponent(q), { headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : { suggestions: [] }; })
        .then(function (d) { if (box.value === q && document.activeElement === box) show(d.suggestions || []); })
        .catch(function () { /* offline: no suggestions */ });
    };
    var move = function (delta) {
      var opts = options();
      if (!opts.length) return;
      if (active >= 0) opts[active].setAttribute("aria-selected", "false");
      active = (active + delta + opts.length) % opts.length;
      opts[active].setAttribute("aria-selected", "true");
      box.setAttribute("aria-activedescendant", opts[active].id);
    };
    box.addEventListener("compositionstart", function () { composing = true; });
    box.addEventListener("compositionend", function () { composing = false; clearTimeout(timer); timer = setTimeout(ask, 120); });
    box.addEventListener("input", function () {
      if (composing) return;
      clearTimeout(timer);
      timer = setTimeout(ask, 120);
    });
    box.addEventListener("keydown", function (e) {
      if (e.isComposing || composing) return;
      if (e.key === "ArrowDown") { if (listbox.hidden) { asked = ""; ask(); } else move(1); e.preventDefault(); }
      else if (e.key === "ArrowUp" && !listbox.hidden) { move(-1); e.preventDefault(); }
      else if (e.key === "Escape" && !listbox.hidden) { close(); e.preventDefault(); }
      else if ((e.key === "Enter" || e.key === "Tab") && !listbox.hidden && active >= 0) { choose(options()[active]); e.preventDefault(); }
    });
    box.addEventListener("blur", function () { setTimeout(close, 100); });
  }
})();
