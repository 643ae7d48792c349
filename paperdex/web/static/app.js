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
  // "/" focuses the search box, as on most search sites.
  document.addEventListener("keydown", function (e) {
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
    var tag = (document.activeElement && document.activeElement.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    var box = document.querySelector('input[name="q"]');
    if (box) { e.preventDefault(); box.focus(); box.select(); }
  });
})();
