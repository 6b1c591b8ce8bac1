// plangate run viewer: local times, and following a run live without reloading.
// The page polls its stamp (/runs/ID/stamp.json); when it changes, the page is fetched
// again and every [data-live] region is swapped in place, keeping what you were typing,
// which <details> you had open, and where the conversation was scrolled.
(function () {
  "use strict";

  var ACTIVE_MS = 1000;
  var IDLE_MS = 3000;
  var body = document.body;

  function two(n) { return (n < 10 ? "0" : "") + n; }

  function localTimes(root) {
    var now = new Date();
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d.getTime())) return;
      var clock = two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds());
      var sameDay = d.toDateString() === now.toDateString();
      el.textContent = sameDay ? clock : d.toLocaleDateString(undefined, { day: "numeric", month: "short" }) + " " + clock;
      el.title = d.toLocaleString();
    });
  }

  // A check's tail ends with what matters (the failures); show its end first.
  function tailsToEnd(root) {
    root.querySelectorAll("pre.tail").forEach(function (pre) { pre.scrollTop = pre.scrollHeight; });
  }

  function stickToBottom(list, wasAtBottom) {
    if (list && wasAtBottom) list.scrollTop = list.scrollHeight;
  }

  function atBottom(list) {
    return !list || list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  }

  function swap(fresh) {
    document.querySelectorAll("[data-live]").forEach(function (old) {
      var next = fresh.getElementById(old.id);
      if (!next) return;
      old.querySelectorAll("details[id]").forEach(function (d) {
        var twin = next.querySelector("#" + CSS.escape(d.id));
        if (twin) twin.open = d.open;
      });
      var typing = old.querySelector("textarea");
      var keep = typing && (typing.value || document.activeElement === typing) ? typing : null;
      var list = old.matches(".messages") ? old : old.querySelector(".messages");
      var bottom = atBottom(list);
      var scroll = list ? list.scrollTop : 0;
      if (keep) {
        var target = next.querySelector("textarea[name='" + keep.name + "']");
        if (target) target.value = keep.value;
      }
      var focused = keep && document.activeElement === keep;
      var start = keep ? keep.selectionStart : 0;
      var end = keep ? keep.selectionEnd : 0;
      old.replaceWith(next);
      var newList = next.matches(".messages") ? next : next.querySelector(".messages");
      if (newList) { newList.scrollTop = scroll; stickToBottom(newList, bottom); }
      if (focused) {
        var area = next.querySelector("textarea");
        if (area) { area.focus(); area.setSelectionRange(start, end); }
      }
      localTimes(next);
      tailsToEnd(next);
    });
    document.title = fresh.title;
  }

  function follow() {
    var url = body.getAttribute("data-stamp-url");
    var page = body.getAttribute("data-page-url") || location.pathname + location.search;
    if (!url) return;
    var live = document.getElementById("live");
    var stamp = body.getAttribute("data-stamp");
    var timer = null;

    function schedule(ms) { clearTimeout(timer); timer = setTimeout(tick, ms); }

    function tick() {
      if (document.hidden) { schedule(IDLE_MS); return; }
      fetch(url, { cache: "no-store", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
        .then(function (data) {
          if (live) live.className = "live";
          var active = !data.state || ["queued", "running", "checking", "replanning"].indexOf(data.state) >= 0;
          if (data.stamp === stamp) { schedule(active ? ACTIVE_MS : IDLE_MS); return null; }
          return fetch(page, { cache: "no-store", headers: { Accept: "text/html" } })
            .then(function (r) { return r.text(); })
            .then(function (html) {
              var fresh = new DOMParser().parseFromString(html, "text/html");
              swap(fresh);
              stamp = fresh.body.getAttribute("data-stamp") || data.stamp;
              body.setAttribute("data-stamp", stamp);
              schedule(ACTIVE_MS);
            });
        })
        .catch(function () {
          if (live) live.className = "live failed";
          schedule(IDLE_MS);
        });
    }

    document.addEventListener("visibilitychange", function () { if (!document.hidden) schedule(0); });
    schedule(ACTIVE_MS);
  }

  // Picking a version (in the Plan panel's Version list, "See version N", or "View version
  // N" in the conversation) shows it in place: its Plan panel, with its "Why this version",
  // is fetched and swapped in, without a page load. data-layout="above" opens it above the
  // conversation (as the version's own page has it); "beside" puts it back beside it.
  function showVersion(link) {
    var href = link.getAttribute("href");
    var layout = link.getAttribute("data-layout");
    var panel = document.getElementById("plan");
    var grid = document.getElementById("run-grid");
    if (!panel || !grid || !window.fetch) return false;
    panel.classList.add("switching");
    fetch(href, { cache: "no-store", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var next = fresh.getElementById("plan");
        if (!next) { location.href = href; return; }
        document.getElementById("plan").replaceWith(next);
        localTimes(next);
        tailsToEnd(next);
        if (layout === "above") grid.classList.add("plan-above");
        if (layout === "beside") grid.classList.remove("plan-above");
        body.setAttribute("data-page-url", href);
        document.title = fresh.title;
        history.pushState({ version: href }, "", href);
        if (layout === "above") next.scrollIntoView({ block: "start" });
      })
      .catch(function () { location.href = href; });
    return true;
  }

  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    var link = event.target.closest ? event.target.closest("a[data-version-link]") : null;
    if (link && showVersion(link)) event.preventDefault();
  });

  // Back and forward between versions picked in place: show what the address says.
  window.addEventListener("popstate", function () { location.reload(); });

  document.addEventListener("change", function (event) {
    var el = event.target;
    if (el && el.hasAttribute && el.hasAttribute("data-autosubmit") && el.form) el.form.submit();
  });

  localTimes(document);
  tailsToEnd(document);
  var list = document.querySelector(".messages");
  if (list && !location.hash) list.scrollTop = list.scrollHeight;
  follow();
})();
