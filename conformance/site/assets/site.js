/* The candidate page's filters: by surface, mismatch class and tag. Plain script (no module, no library), so it
   runs from file:// too; it only hides and shows what the page already holds, and writes text, never markup. */
(function () {
  "use strict";

  function list(element, name) {
    try {
      var value = JSON.parse(element.getAttribute(name) || "[]");
      return Array.isArray(value) ? value : [];
    } catch (e) {
      return [];
    }
  }

  function setUp() {
    var form = document.getElementById("filters");
    if (!form) {
      return;
    }
    var surface = document.getElementById("filter-surface");
    var cls = document.getElementById("filter-class");
    var tag = document.getElementById("filter-tag");
    var count = document.getElementById("filter-count");
    var entries = Array.prototype.slice.call(document.querySelectorAll(".filterable-group .entry"));
    var groups = Array.prototype.slice.call(document.querySelectorAll(".filterable-group"));

    function apply() {
      var shown = 0;
      entries.forEach(function (entry) {
        var keep = (!surface.value || entry.getAttribute("data-surface") === surface.value) &&
          (!cls.value || list(entry, "data-classes").indexOf(cls.value) >= 0) &&
          (!tag.value || list(entry, "data-tags").indexOf(tag.value) >= 0);
        entry.hidden = !keep;
        if (keep) {
          shown += 1;
        }
      });
      groups.forEach(function (group) {
        group.hidden = !group.querySelector(".entry:not([hidden])");
      });
      count.textContent = shown + " of " + entries.length + " shown";
    }

    form.hidden = false;
    form.addEventListener("change", apply);
    form.addEventListener("reset", function () {
      window.setTimeout(apply, 0); // the selects are reset after the event
    });
    apply();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUp);
  } else {
    setUp();
  }
})();
