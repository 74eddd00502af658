// saksi's page needs no script to work; this only helps: a busy ask button, a sign-in link that
// carries the key in its fragment (never sent to a server), and focus on the highlighted quote.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var ask = document.getElementById("ask");
  if (ask) {
    ask.addEventListener("submit", function () {
      var b = document.getElementById("ask-submit");
      b.disabled = true; b.textContent = b.getAttribute("data-busy");
    });
  }
  var key = document.getElementById("key");
  var m = /(?:^#|&)key=([^&]+)/.exec(window.location.hash);
  if (key && m) {
    key.value = decodeURIComponent(m[1]);
    history.replaceState(null, "", window.location.pathname + window.location.search);
    document.getElementById("signin").submit();
  }
  var hl = document.getElementById("hl");
  if (hl) {
    hl.setAttribute("tabindex", "-1");
    hl.scrollIntoView({block: "center"});
    hl.focus({preventScroll: true});
  }
});
