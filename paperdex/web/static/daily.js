// The daily page's reading aids (progressive enhancement: without this file the page works,
// the compact view's "more" link opening the next part of the day).
(function () {
  "use strict";
  var list = document.querySelector("[data-nav]");
  if (!list) return;

  // Keyboard reading: j / k move to the next / previous paper, Enter or x opens a compact line
  // in place, o opens the paper's page, s saves it. The lines are looked up at each key, so
  // the parts brought in below count as soon as they are there.
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
    var tag = (document.activeElement && document.activeElement.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
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

  // The compact view's next part: asked for when its link comes within two screens of the
  // bottom of the window (j on the last lines brings it there too), and put under the lines. Lines
  // already shown are skipped (a sync between two parts can move a paper). On a failed answer
  // the link stays, a plain link to that part.
  var loading = false;
  var watcher = window.IntersectionObserver && new IntersectionObserver(function (seen) {
    if (seen.some(function (s) { return s.isIntersecting; })) more();
  }, { rootMargin: "0px 0px 200% 0px" });
  function link() { return list.querySelector(":scope > .more-rows a[data-more]"); }
  function more() {
    var a = link();
    if (!a || loading || !window.fetch) return;
    loading = true;
    a.setAttribute("aria-busy", "true");
    fetch(a.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var nav = a.parentNode;
        doc.querySelectorAll("#results > details.row").forEach(function (row) {
          if (!document.getElementById(row.id)) list.insertBefore(document.adoptNode(row), nav);
        });
        var next = doc.querySelector("#results > .more-rows a[data-more]");
        if (next) { a.setAttribute("href", next.getAttribute("href")); a.textContent = next.textContent; } else nav.remove();
        typeset(doc);
        loading = false;
        a.removeAttribute("aria-busy");
        if (next && watcher) { watcher.unobserve(a); watcher.observe(a); }  // still near: the next at once
      })
      .catch(function () { loading = false; a.removeAttribute("aria-busy"); if (watcher) watcher.unobserve(a); });
  }
  // app.js typesets the new lines' math; KaTeX first, when this part needs it and the first did not
  function typeset(doc) {
    var added = function () { list.dispatchEvent(new CustomEvent("paperdex:added", { bubbles: true })); };
    var tex = !window.katex && doc.querySelector('script[src^="/static/katex/"]');
    if (!tex) { added(); return; }
    var s = document.createElement("script");
    s.src = tex.getAttribute("src");
    s.onload = added;
    document.head.appendChild(s);
  }
  if (link() && watcher) watcher.observe(link());
})();
