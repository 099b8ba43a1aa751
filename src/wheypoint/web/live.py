"""The one script `serve` sends (/live.js, a string here): it polls /changes and reloads or flags a changed store.

A page that runs it says, in two meta elements, the store version it was drawn from and its own GET address.
Every few seconds the script asks `/changes?since=<version>`; once the store has changed it loads the page's
address again, unless the person is typing (a field with focus, or one whose value is not the one drawn): then
it shows a "store changed" notice with a button instead, and never throws away what was typed. It builds that
notice with DOM calls only (no markup from text), sends the session cookie only to this server, and stops asking
once the server is gone. The pages' CSP lets this one address run and nothing else.
"""

from __future__ import annotations

POLL_SECONDS = 4

LIVE_JS = """\
(function () {
  "use strict";
  var version = document.querySelector('meta[name="wheypoint-version"]');
  var page = document.querySelector('meta[name="wheypoint-page"]');
  if (!version || !page || !window.fetch) { return; }
  var since = version.getAttribute("content");
  var address = page.getAttribute("content");
  if (!/^\\/(?![\\/\\\\])/.test(address)) { address = "/"; }  // a path of this server, never //host
  var failures = 0;
  var flagged = false;

  function edited() {
    var active = document.activeElement;
    if (active && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName) && active.type !== "hidden") { return true; }
    var fields = document.querySelectorAll("input, textarea");
    for (var i = 0; i < fields.length; i++) {
      if (fields[i].type !== "hidden" && fields[i].value !== fields[i].defaultValue) { return true; }
    }
    var choices = document.querySelectorAll("select");
    for (var j = 0; j < choices.length; j++) {
      if (chosen(choices[j])) { return true; }
    }
    return false;
  }

  // A choice the person changed. A single choice none of whose options was drawn `selected` shows its first
  // option (a diff from before the first revision draws its `from` so): that is the page's, not the person's.
  function chosen(choice) {
    var options = choice.options;
    var drawn = -1;
    for (var k = 0; k < options.length; k++) {
      if (choice.multiple && options[k].selected !== options[k].defaultSelected) { return true; }
      if (options[k].defaultSelected) { drawn = k; }
    }
    if (choice.multiple) { return false; }
    if (drawn < 0 && choice.size <= 1) {
      for (var m = 0; m < options.length && drawn < 0; m++) { if (!options[m].disabled) { drawn = m; } }
    }
    return choice.selectedIndex !== drawn;
  }

  function flag() {
    if (flagged) { return; }
    flagged = true;
    var notice = document.createElement("p");
    notice.className = "notice live";
    notice.setAttribute("role", "status");
    notice.appendChild(document.createTextNode("The store changed since this page was drawn. "));
    var button = document.createElement("button");
    button.type = "button";
    button.appendChild(document.createTextNode("Reload"));
    button.addEventListener("click", function () { window.location.assign(address); });
    notice.appendChild(button);
    var nav = document.querySelector("nav");
    if (nav && nav.parentNode) { nav.parentNode.insertBefore(notice, nav.nextSibling); }
    else { document.body.insertBefore(notice, document.body.firstChild); }
  }

  function changed() {
    if (edited()) { flag(); } else { window.location.assign(address); }
  }

  function poll() {
    fetch("/changes?since=" + encodeURIComponent(since), {credentials: "same-origin", cache: "no-store",
                                                          redirect: "error"})
      .then(function (reply) {
        if (!reply.ok) { throw new Error(String(reply.status)); }
        return reply.json();
      })
      .then(function (answer) {
        failures = 0;
        if (answer.changed) { changed(); }
        if (!answer.changed || flagged) { schedule(); }
      })
      .catch(function () {
        failures += 1;
        if (failures < 5) { schedule(); }
      });
  }

  function schedule() { window.setTimeout(poll, %d); }
  schedule();
}());
""" % (POLL_SECONDS * 1000)  # noqa: UP031 (the script's own braces would need doubling in an f-string)
