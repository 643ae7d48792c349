// The daily page's compact view, when the period has more lines than its first part (the page
// links this file only then): the next parts brought in as the reader scrolls. Progressive
// enhancement: without this file the "more" link opens the next part.
(function () {
  "use strict";
  var list = document.querySelector("[data-nav]");
  if (!list) return;

  // The next part: asked for when its link comes within two screens of the bottom of the
  // window (j on the last lines brings it there too), and put under the lines. Lines already
  // shown are skipped (a sync between two parts can move a paper). On a failed answer the link
  // stays, a plain link to that part.
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
