/* Small progressive enhancements. The pages work without them; htmx does the rest. */
(function () {
  "use strict";

  document.documentElement.classList.add("js");

  /* Tabs (WAI-ARIA pattern): the server renders every panel; with JS only the selected
     one shows. The selected tab is kept in a hidden input so a re-render keeps it. */
  function selectTab(tab, focus) {
    var list = tab.closest("[role=tablist]");
    if (!list) return;
    list.querySelectorAll("[role=tab]").forEach(function (other) {
      var selected = other === tab;
      other.setAttribute("aria-selected", selected ? "true" : "false");
      other.tabIndex = selected ? 0 : -1;
      var panel = document.getElementById(other.getAttribute("aria-controls"));
      if (panel) panel.hidden = !selected;
    });
    var keep = list.dataset.keep && document.getElementById(list.dataset.keep);
    if (keep) keep.value = tab.dataset.value || "";
    if (focus) tab.focus();
  }

  function initTabs(root) {
    root.querySelectorAll("[role=tablist]").forEach(function (list) {
      var tabs = Array.prototype.slice.call(list.querySelectorAll("[role=tab]"));
      if (!tabs.length) return;
      var keep = list.dataset.keep && document.getElementById(list.dataset.keep);
      var wanted = keep && keep.value;
      var current = tabs.filter(function (t) { return t.dataset.value === wanted; })[0] || tabs[0];
      selectTab(current, false);
    });
  }

  document.addEventListener("click", function (event) {
    var tab = event.target.closest("[role=tab]");
    if (tab) { event.preventDefault(); selectTab(tab, false); }
    var copy = event.target.closest("[data-copy]");
    if (copy) {
      var source = document.getElementById(copy.dataset.copy);
      if (source && navigator.clipboard) {
        navigator.clipboard.writeText(source.textContent.trim()).then(function () {
          announce("Copied to the clipboard.");
        });
      }
    }
  });

  /* The phone navigation: its button folds and unfolds the workspace's pages. */
  document.addEventListener("click", function (event) {
    var toggle = event.target.closest(".nav-toggle");
    if (!toggle) return;
    var list = document.getElementById(toggle.getAttribute("aria-controls"));
    if (!list) return;
    var open = !list.classList.contains("open");
    list.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  });

  /* Plain forms that destroy something ask first (htmx requests use hx-confirm). */
  document.addEventListener("submit", function (event) {
    var message = event.target.dataset && event.target.dataset.confirm;
    if (message && !window.confirm(message)) event.preventDefault();
  });

  document.addEventListener("keydown", function (event) {
    var tab = event.target.closest && event.target.closest("[role=tab]");
    if (!tab) return;
    var tabs = Array.prototype.slice.call(tab.closest("[role=tablist]").querySelectorAll("[role=tab]"));
    var i = tabs.indexOf(tab);
    var next = null;
    if (event.key === "ArrowRight") next = tabs[(i + 1) % tabs.length];
    else if (event.key === "ArrowLeft") next = tabs[(i - 1 + tabs.length) % tabs.length];
    else if (event.key === "Home") next = tabs[0];
    else if (event.key === "End") next = tabs[tabs.length - 1];
    if (next) { event.preventDefault(); selectTab(next, true); }
  });

  /* Pre-select the browser's time zone where a form asks for one and has no value yet. */
  function guessZone(root) {
    root.querySelectorAll("select[data-guess-zone]").forEach(function (select) {
      if (select.dataset.guessed) return;
      select.dataset.guessed = "1";
      var zone;
      try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return; }
      if (zone && select.value === "UTC" && select.querySelector('option[value="' + zone + '"]')) {
        select.value = zone;
      }
    });
  }

  var liveRegion;
  function announce(text, shownMs) {
    liveRegion = liveRegion || document.getElementById("live-region");
    if (!liveRegion) return;
    liveRegion.textContent = text;
    window.clearTimeout(announce.timer);
    announce.timer = window.setTimeout(function () { liveRegion.textContent = ""; }, shownMs || 4000);
  }

  /* Seconds to wait from a Retry-After header (seconds, or an HTTP date); null if absent. */
  function retryAfterSeconds(value) {
    if (!value) return null;
    var seconds = /^\s*\d+\s*$/.test(value) ? parseInt(value, 10)
      : Math.ceil((Date.parse(value) - Date.now()) / 1000);
    return isNaN(seconds) ? null : Math.max(1, seconds);
  }

  function waitWords(seconds) {
    return seconds < 60 ? seconds + " s" : Math.ceil(seconds / 60) + " min";
  }

  /* A polled fragment replaces its <details>: keep the ones a person opened open. */
  var openDetails = {};
  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (details.tagName === "DETAILS" && details.id) openDetails[details.id] = details.open;
  }, true);
  function keepOpen(root) {
    Object.keys(openDetails).forEach(function (id) {
      var details = document.getElementById(id);
      if (details && openDetails[id] && !details.open && root.contains(details)) details.open = true;
    });
  }

  function init(root) { initTabs(root); guessZone(root); keepOpen(root); }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:load", function (event) { init(event.target); });
  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr.status;
    var refusal = event.detail.xhr.getResponseHeader("X-Refusal");  // says why, when set
    if (status === 429) {
      // Rate limited: say so, and when to try again, for as long as the wait (up to 30 s).
      var wait = retryAfterSeconds(event.detail.xhr.getResponseHeader("Retry-After"));
      announce(
        (refusal || "Too many requests: you are rate limited for a moment.") +
          (wait ? " Try again in " + waitWords(wait) + "." : " Try again shortly."),
        Math.max(4000, Math.min(wait || 0, 30) * 1000)
      );
      return;
    }
    var text = refusal ? refusal
      : status === 403 ? "Your role does not allow this."
      : status === 404 ? "This page no longer exists."
      : status === 503 ? "The service is under maintenance; try again shortly."
      : "Something went wrong (" + status + "). Nothing was lost; try again.";
    announce(text);
  });
  document.addEventListener("htmx:sendError", function () {
    announce("The server could not be reached. Check your connection and try again.");
  });
})();
