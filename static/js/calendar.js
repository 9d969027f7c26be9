/* The calendar as a planning tool: move a post by dragging it (mouse, pen or touch, all
   through pointer events) or by keyboard (focus a post, arrow keys, Enter; Escape
   cancels), undo the last move, and click an empty day or hour to write a post for then.

   A move is a POST to the calendar's move endpoint with the post's revision; the server
   refuses a stale revision or a post that can no longer move, and the toast says why.
   After every answer the calendar region is fetched again, so what shows is what the
   server holds. Without this script every post still has its "Move to…" form. */
(function () {
  "use strict";

  var DRAG_THRESHOLD = 6; // px a mouse moves before a press becomes a drag
  var TOUCH_HOLD_MS = 300; // a finger held this long picks a post up (moving sooner scrolls)
  var TOAST_MS = 8000;
  var EDGE = 48; // px from an edge where a drag scrolls

  function region() { return document.getElementById("calendar-region"); }
  function view() { var r = region(); return r ? r.dataset.view : ""; }

  function csrfToken() {
    try { return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || ""; }
    catch (e) { return ""; }
  }

  /* --- announcing and the toast ------------------------------------------------------ */

  var toastTimer = null;
  function toast(text, options) {
    options = options || {};
    var box = document.getElementById("calendar-toast");
    if (!box) return;
    box.querySelector(".cal-toast-text").textContent = text;
    box.classList.toggle("error", !!options.error);
    box.setAttribute("role", options.error ? "alert" : "status");
    var undo = box.querySelector("[data-cal-undo]");
    undo.hidden = !options.undo;
    undo.onclick = options.undo ? function () { hideToast(); options.undo(); } : null;
    box.hidden = false;
    window.clearTimeout(toastTimer);
    toastTimer = window.setTimeout(hideToast, options.undo ? TOAST_MS * 1.5 : TOAST_MS);
  }
  function hideToast() {
    var box = document.getElementById("calendar-toast");
    if (box) box.hidden = true;
  }
  function announce(text) {
    var live = document.getElementById("live-region");
    if (live) live.textContent = text;
  }

  /* --- targets: where a post can land ------------------------------------------------ */

  function targetAt(x, y) {
    var element = document.elementFromPoint(x, y);
    var target = element && element.closest("[data-drop-date]");
    return target && region().contains(target) ? target : null;
  }

  function targetOf(card) { return card.closest("[data-drop-date]"); }

  /* The local date and time a card lands at on target: a day keeps the card's time of
     day; an hour slot sets the hour and keeps the minutes. */
  function landing(card, target) {
    var time = card.dataset.time;
    var fold = "0";
    if (target.dataset.dropHour !== undefined) {
      var hour = ("0" + target.dataset.dropHour).slice(-2);
      time = hour + ":" + time.slice(3, 5);
      fold = target.dataset.dropFold || "0";
    }
    return { date: target.dataset.dropDate, time: time, fold: fold };
  }

  function sameSpot(card, spot) {
    return spot.date === card.dataset.date && spot.time === card.dataset.time &&
      spot.fold === (card.dataset.fold || "0");
  }

  function spokenSpot(target, spot) {
    var label = target.dataset.label || spot.date;
    return target.dataset.dropHour !== undefined ? label.replace(/\d\d:00/, spot.time) : label + ", " + spot.time;
  }

  /* --- talking to the server ----------------------------------------------------------- */

  function moveUrl(pk) { return region().dataset.moveUrl.replace(/\/0\/$/, "/" + pk + "/"); }

  function post(pk, spot, revision) {
    var body = new URLSearchParams();
    body.set("date", spot.date);
    body.set("time", spot.time);
    body.set("revision", revision);
    if (spot.fold === "1" || spot.fold === 1) body.set("fold", "on");
    return fetch(moveUrl(pk), {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), "Accept": "application/json" },
      body: body
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        return { ok: response.ok, status: response.status, data: data };
      });
    });
  }

  function errorText(result) {
    if (result.data && result.data.error) return result.data.error.message;
    if (result.status === 403) return "Your role does not allow moving posts.";
    return "The post could not be moved (" + result.status + "). Nothing changed; try again.";
  }

  /* Fetch the calendar again and swap its region in, keeping the week's scroll and the
     focus on the post that moved. */
  function refresh(focusPk) {
    var scroller = document.querySelector("[data-week-scroll]");
    var top = scroller ? scroller.scrollTop : 0;
    var left = scroller ? scroller.scrollLeft : 0;
    return fetch(window.location.href, { credentials: "same-origin" })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("calendar-region");
        var current = region();
        if (!fresh || !current) return;
        current.innerHTML = fresh.innerHTML;
        if (window.htmx) window.htmx.process(current);
        var again = document.querySelector("[data-week-scroll]");
        if (again) { again.scrollTop = top; again.scrollLeft = left; }
        var card = focusPk && document.getElementById("cal-" + focusPk);
        if (card) { card.classList.add("just-moved"); if (focusPk === keyboardPk) card.focus(); }
      });
  }

  var keyboardPk = null;

  function move(card, spot, options) {
    options = options || {};
    var pk = card.dataset.pk;
    card.classList.add("saving");
    keyboardPk = options.keyboard ? pk : null;
    return post(pk, spot, card.dataset.revision).then(function (result) {
      if (result.ok) {
        var undo = result.data.undo;
        var revision = result.data.publication.revision;
        toast(result.data.message, {
          undo: undo && function () { undoMove(pk, undo, revision); }
        });
        announce(result.data.message);
      } else {
        toast(errorText(result), { error: true });
        announce(errorText(result));
      }
      return refresh(pk);
    }, function () {
      card.classList.remove("saving");
      toast("The server could not be reached. Nothing was moved; try again.", { error: true });
    });
  }

  function undoMove(pk, spot, revision) {
    post(pk, { date: spot.date, time: spot.time, fold: String(spot.fold) }, revision).then(function (result) {
      if (result.ok) {
        toast("Moved back to " + spot.label + ".");
        announce("Moved back to " + spot.label + ".");
      } else {
        toast(errorText(result), { error: true });
      }
      return refresh(pk);
    }, function () {
      toast("The server could not be reached, so the post was not moved back.", { error: true });
    });
  }

  /* --- dragging (pointer events: mouse, pen and touch alike) --------------------------- */

  var press = null; // { card, x, y, pointerId, type, timer }
  var drag = null; // { card, ghost, target, dx, dy, x, y }
  var suppressClick = false;

  function clearTarget() {
    var old = document.querySelector(".drop-target");
    if (old) old.classList.remove("drop-target");
  }

  function setTarget(target) {
    clearTarget();
    if (target) target.classList.add("drop-target");
  }

  function startDrag() {
    if (!press) return;
    var card = press.card;
    var box = card.getBoundingClientRect();
    var ghost = card.cloneNode(true);
    ghost.removeAttribute("id");
    ghost.classList.add("cal-ghost");
    ghost.setAttribute("aria-hidden", "true");
    ghost.style.width = box.width + "px";
    document.body.appendChild(ghost);
    drag = { card: card, ghost: ghost, target: null, dx: press.x - box.left, dy: press.y - box.top, x: press.x, y: press.y };
    card.classList.add("dragging");
    document.documentElement.classList.add("cal-dragging");
    place(press.x, press.y);
    if (navigator.vibrate && press.type === "touch") navigator.vibrate(10);
    window.requestAnimationFrame(edgeScroll);
  }

  function place(x, y) {
    drag.x = x; drag.y = y;
    drag.ghost.style.transform = "translate(" + (x - drag.dx) + "px," + (y - drag.dy) + "px)";
    drag.target = targetAt(x, y);
    setTarget(drag.target);
  }

  /* Near an edge of the window (or of the week's scroller) a drag scrolls it. */
  function edgeScroll() {
    if (!drag) return;
    var step = 0;
    if (drag.y < EDGE) step = -12; else if (drag.y > window.innerHeight - EDGE) step = 12;
    var scroller = document.querySelector("[data-week-scroll]");
    if (scroller) {
      var box = scroller.getBoundingClientRect();
      if (drag.y > box.top && drag.y < box.top + EDGE && scroller.scrollTop > 0) scroller.scrollTop -= 12;
      else if (drag.y < box.bottom && drag.y > box.bottom - EDGE) scroller.scrollTop += 12;
    }
    if (step) window.scrollBy(0, step);
    if (step || scroller) { drag.target = targetAt(drag.x, drag.y); setTarget(drag.target); }
    window.requestAnimationFrame(edgeScroll);
  }

  function endDrag(drop) {
    var current = drag;
    drag = null;
    clearTarget();
    document.documentElement.classList.remove("cal-dragging");
    if (!current) return;
    current.ghost.remove();
    current.card.classList.remove("dragging");
    if (!drop || !current.target) return;
    var spot = landing(current.card, current.target);
    if (sameSpot(current.card, spot)) return;
    move(current.card, spot);
  }

  function cancelPress() {
    if (press && press.timer) window.clearTimeout(press.timer);
    press = null;
  }

  document.addEventListener("pointerdown", function (event) {
    if (!region() || event.button !== 0 || drag) return;
    var card = event.target.closest(".cal-item[data-movable]");
    if (!card || !region().contains(card) || event.target.closest(".move")) return;
    press = { card: card, x: event.clientX, y: event.clientY, pointerId: event.pointerId, type: event.pointerType, timer: null };
    if (event.pointerType === "touch") {
      press.timer = window.setTimeout(function () { if (press) startDrag(); }, TOUCH_HOLD_MS);
    }
  });

  document.addEventListener("pointermove", function (event) {
    if (drag) { event.preventDefault(); place(event.clientX, event.clientY); return; }
    if (!press || event.pointerId !== press.pointerId) return;
    var distance = Math.abs(event.clientX - press.x) + Math.abs(event.clientY - press.y);
    if (press.type === "touch") {
      if (distance > 10) cancelPress(); // the finger is scrolling the page
    } else if (distance > DRAG_THRESHOLD) {
      startDrag();
      if (drag) place(event.clientX, event.clientY);
    }
  });

  document.addEventListener("pointerup", function (event) {
    if (drag) { suppressClick = true; endDrag(true); event.preventDefault(); }
    cancelPress();
  });

  document.addEventListener("pointercancel", function () { endDrag(false); cancelPress(); });

  /* Once a finger has picked a post up, it moves the post, not the page. */
  document.addEventListener("touchmove", function (event) { if (drag) event.preventDefault(); }, { passive: false });
  document.addEventListener("contextmenu", function (event) {
    if (press && press.type === "touch" || drag) event.preventDefault();
  });
  /* Links and images inside a card must not start the browser's own drag. */
  document.addEventListener("dragstart", function (event) {
    if (event.target.closest && event.target.closest(".cal-item")) event.preventDefault();
  });

  /* --- clicking: a drag's release is no click; an empty day or hour composes ---------- */

  document.addEventListener("click", function (event) {
    if (suppressClick) { suppressClick = false; event.preventDefault(); event.stopPropagation(); return; }
    var dismiss = event.target.closest("[data-cal-dismiss]");
    if (dismiss) { hideToast(); return; }
    if (!region() || !region().contains(event.target)) return;
    if (event.target.closest(".cal-item, a, button, input, select, textarea")) return;
    var cell = event.target.closest("[data-compose-at]");
    if (!cell) return;
    window.location.assign(region().dataset.composeUrl + "?at=" + encodeURIComponent(cell.dataset.composeAt));
  }, true);

  /* --- the keyboard: pick up, carry with arrows, drop with Enter ----------------------- */

  var carry = null; // { card, origin, target }

  function neighbour(from, key) {
    if (view() === "week") {
      var col = Number(from.dataset.col), row = Number(from.dataset.row);
      var dc = key === "ArrowLeft" ? -1 : key === "ArrowRight" ? 1 : 0;
      var dr = key === "ArrowUp" ? -1 : key === "ArrowDown" ? 1 : 0;
      for (var step = 1; step < 30; step++) {
        var c = col + dc * step, r = row + dr * step;
        if (c < 0 || c > 6 || r < 0) return null;
        var slot = region().querySelector('.slot[data-col="' + c + '"][data-row="' + r + '"]');
        if (slot) return slot;
        if (!region().querySelector('[data-row="' + r + '"]') && dr) return null;
      }
      return null;
    }
    var days = Array.prototype.slice.call(region().querySelectorAll(".day[data-drop-date]"));
    var i = days.indexOf(from);
    var delta = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -7, ArrowDown: 7 }[key];
    return days[i + delta] || null;
  }

  function carryTo(target) {
    carry.target = target;
    setTarget(target);
    if (target.scrollIntoView) target.scrollIntoView({ block: "nearest", inline: "nearest" });
    announce("Move to " + spokenSpot(target, landing(carry.card, target)) + "? Enter to drop, Escape to cancel.");
  }

  function pickUp(card) {
    carry = { card: card, origin: targetOf(card), target: targetOf(card) };
    card.classList.add("carried");
    setTarget(carry.target);
    announce("Picked up the post of " + card.dataset.label + ". Arrow keys choose the new " +
      (view() === "week" ? "day and hour" : "day") + ", Enter drops it, Escape cancels.");
  }

  function putDown(drop) {
    var current = carry;
    carry = null;
    clearTarget();
    if (!current) return;
    current.card.classList.remove("carried");
    if (!drop || !current.target || current.target === current.origin) {
      announce("Not moved.");
      return;
    }
    var spot = landing(current.card, current.target);
    if (sameSpot(current.card, spot)) { announce("Not moved."); return; }
    move(current.card, spot, { keyboard: true });
  }

  document.addEventListener("keydown", function (event) {
    if (!region()) return;
    var card = event.target.closest && event.target.closest(".cal-item[data-movable]");
    if (!card || event.target !== card || !region().contains(card)) {
      if (event.key === "Escape") hideToast();
      return;
    }
    var arrows = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"];
    if (arrows.indexOf(event.key) >= 0) {
      event.preventDefault();
      if (!carry) pickUp(card);
      var next = neighbour(carry.target, event.key);
      if (next) carryTo(next);
    } else if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      if (carry) putDown(true); else pickUp(card);
    } else if (event.key === "Escape" && carry) {
      event.preventDefault();
      putDown(false);
    }
  });

  document.addEventListener("focusout", function (event) {
    if (carry && event.target === carry.card) putDown(false);
  });

  /* --- the week opens at 07:00, or earlier when a post is earlier ---------------------- */

  function openWeek() {
    var scroller = document.querySelector("[data-week-scroll]");
    if (!scroller) return;
    var first = scroller.querySelector(".slot.has-items");
    var seven = scroller.querySelector('.hour-row[data-hour="7"]');
    var firstRow = first && first.closest("tr");
    var row = firstRow && (!seven || firstRow.offsetTop < seven.offsetTop) ? firstRow : seven;
    var head = scroller.querySelector("thead");
    if (row) scroller.scrollTop = row.offsetTop - (head ? head.offsetHeight : 0);
  }

  document.addEventListener("DOMContentLoaded", openWeek);
})();
