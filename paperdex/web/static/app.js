// Progressive enhancement only: every page works without this file.
(function () {
  "use strict";
  // Math: the server writes each $...$ span as readable text with its TeX in data-tex; when
  // the page has any, load the KaTeX shipped in /static/katex (never a CDN: the CSP allows
  // only this origin) and typeset them. A span KaTeX cannot parse keeps its text form.
  var maths = document.querySelectorAll(".math[data-tex]");
  if (maths.length) {
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = "/static/katex/katex.min.css";
    document.head.appendChild(css);
    var script = document.createElement("script");
    script.src = "/static/katex/katex.min.js";
    script.onload = function () {
      maths.forEach(function (el) {
        try {
          var text = el.textContent;
          window.katex.render(el.getAttribute("data-tex"), el, { throwOnError: true, strict: "ignore", maxSize: 20, maxExpand: 200 });
          el.classList.add("typeset");
          el.setAttribute("title", text);
        } catch (e) {
          el.classList.add("tex-error");
        }
      });
    };
    document.head.appendChild(script);
  }
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
  // "Save to a tag" on cards and paper pages: without script (or without a sign-in) the link
  // opens /save/ID, which says why saving is read-only. For a signed-in browser it opens a
  // small form in place: a tag name (existing tags offered), posted to the JSON API with the
  // sign-in's CSRF value; the link then says where the paper went.
  var saveLinks = document.querySelectorAll("a.save-link[data-id]");
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
    input.setAttribute("list", listId);
    input.setAttribute("aria-label", link.getAttribute("data-label-tag") || "Tag");
    input.setAttribute("data-testid", "save-tag");
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
  saveLinks.forEach(function (link) {
    link.addEventListener("click", function (e) {
      if (link.classList.contains("saved") || e.ctrlKey || e.metaKey || e.shiftKey) return;
      e.preventDefault();
      getSession().then(function (s) {
        if (s.signed_in) openSaveForm(link, s);
        else window.location.href = link.getAttribute("href") + "?next=" + encodeURIComponent(location.pathname + location.search);
      });
    });
  });
  // "/" focuses the search box, as on most search sites.
  document.addEventListener("keydown", function (e) {
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
    var tag = (document.activeElement && document.activeElement.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    var box = document.querySelector('input[name="q"]');
    if (box) { e.preventDefault(); box.focus(); box.select(); }
  });
})();
