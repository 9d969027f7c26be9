/* The queue page: drag a post onto another post of the same account to swap their times.
   The drop fills the dragged post's move form (the one its up and down buttons submit)
   and submits it, so htmx posts it and swaps the account's queue back in. */
(function () {
  "use strict";

  var dragged = null;

  function item(target) {
    return target && target.closest ? target.closest(".queue-item.movable") : null;
  }

  function sameQueue(a, b) {
    return a && b && a !== b && a.parentElement === b.parentElement;
  }

  document.addEventListener("dragstart", function (event) {
    dragged = item(event.target);
    if (!dragged) return;
    dragged.classList.add("dragging");
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", dragged.dataset.rendition);
  });

  document.addEventListener("dragend", function () {
    if (dragged) dragged.classList.remove("dragging");
    document.querySelectorAll(".queue-item.drop-over").forEach(function (el) {
      el.classList.remove("drop-over");
    });
    dragged = null;
  });

  document.addEventListener("dragover", function (event) {
    var over = item(event.target);
    if (!sameQueue(dragged, over)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    over.classList.add("drop-over");
  });

  document.addEventListener("dragleave", function (event) {
    var over = item(event.target);
    if (over && !over.contains(event.relatedTarget)) over.classList.remove("drop-over");
  });

  document.addEventListener("drop", function (event) {
    var over = item(event.target);
    if (!sameQueue(dragged, over)) return;
    event.preventDefault();
    var field = dragged.querySelector("[data-drop-target]");
    if (!field) return;
    field.value = over.dataset.rendition + ":" + over.dataset.revision;
    field.disabled = false;
    field.form.requestSubmit();
  });
})();
