// saksi's page needs no script to work; this only helps: the answer's claims shown as they pass their checks
// (POST /ui/ask/stream; without script, or if the stream cannot start, the form is sent as a page), a sign-in link
// that carries the key in its fragment (never sent to a server), and focus on the highlighted quote.
"use strict";

function streamAnswer(form) {
  var live = document.getElementById("live");
  var claims = document.getElementById("live-claims");
  var status = document.getElementById("live-status");
  claims.innerHTML = "";
  status.textContent = "";
  var sent = false;
  function event(kind, data) {
    if (kind === "claim") {
      live.hidden = false;
      claims.insertAdjacentHTML("beforeend", data.html);
    } else if (kind === "retrieval" || kind === "retry" || kind === "error") {
      live.hidden = false;
      status.textContent = data.text;
    } else if (kind === "done") {
      sent = true;
      status.textContent = live.getAttribute("data-opening");
      window.location.assign(data.url);
    }
  }
  return fetch("/ui/ask/stream", {method: "POST", body: new FormData(form), credentials: "same-origin"})
    .then(function (r) {
      var type = r.headers.get("content-type") || "";
      if (!r.ok || type.indexOf("text/event-stream") !== 0 || !r.body) { throw new Error("no stream"); }
      var reader = r.body.getReader(), decoder = new TextDecoder(), buffer = "";
      function pump() {
        return reader.read().then(function (got) {
          buffer += decoder.decode(got.value || new Uint8Array(), {stream: !got.done});
          var at;
          while ((at = buffer.indexOf("\n\n")) >= 0) {
            var block = buffer.slice(0, at), kind = "message", data = "";
            buffer = buffer.slice(at + 2);
            block.split("\n").forEach(function (line) {
              if (line.indexOf("event: ") === 0) { kind = line.slice(7); }
              else if (line.indexOf("data: ") === 0) { data += line.slice(6); }
            });
            if (data) { event(kind, JSON.parse(data)); }
          }
          if (!got.done) { return pump(); }
          if (!sent) { throw new Error("the stream ended before the answer"); }
        });
      }
      return pump();
    });
}

document.addEventListener("DOMContentLoaded", function () {
  var ask = document.getElementById("ask");
  if (ask) {
    ask.addEventListener("submit", function (e) {
      var b = document.getElementById("ask-submit");
      if (ask.getAttribute("data-streaming") === "no" || !window.fetch || !window.TextDecoder) {
        b.disabled = true; b.textContent = b.getAttribute("data-busy");
        return;  // sent as a page
      }
      e.preventDefault();
      b.disabled = true; b.textContent = b.getAttribute("data-busy");
      streamAnswer(ask).catch(function () {
        ask.setAttribute("data-streaming", "no");
        ask.submit();  // the page as it is without script: the answer, or the ask page with its error
      });
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
