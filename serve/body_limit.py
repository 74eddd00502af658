"""A request-body size limit, enforced before the app reads (or parses) the body.

`BodyLimit` is a pure ASGI middleware:

    app.add_middleware(BodyLimit, limit_for=default_limits(runtime.max_upload_bytes))

`limit_for(method, path)` gives the most body bytes a request may carry. For an HTTP request:

- a `Content-Length` over the limit is answered 413 at once; the app is not called and the
  body is never received;
- a malformed `Content-Length` is a 400 (servers such as uvicorn/h11 usually refuse it first);
- otherwise (`Transfer-Encoding: chunked`, or a length under the limit) `receive` is wrapped
  and counts body bytes: the message that would take the count over the limit is never
  handed to the app (the app sees at most `limit` bytes); `BodyTooLarge` is raised in the
  app instead, and the middleware answers 413 as long as no response has started. When the
  app turns that exception into a response of its own (FastAPI answers a failed body read
  with a 400), the middleware sends its 413 in place of that response. Once a response has
  started a 413 is impossible: the error is re-raised and the server aborts the connection.

Errors have the project's shape, `{"error": {"type", "message"}}`: `too_large` (413) and
`invalid_request` (400). A 413 for an unread body says `Connection: close`.

Behind Ray Serve this runs in the replica: it spares the app from reading and parsing an
oversized body, but the HTTP proxy in front reads the client's body on its own (see
bench/body_limit.py for what that costs).
"""
from __future__ import annotations

import math
from typing import Awaitable, Callable

from .errors import error_messages

Scope = dict
Message = dict
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
LimitFor = Callable[[str, str], int]

SMALL_BODY_LIMIT = 64 * 1024      # every route but ingest: JSON questions, trace ids
INGEST_SLACK = 64 * 1024          # the JSON around the files: names, keys, quotes
_MAX_DIGITS = 18                  # a longer Content-Length is over any limit (and int() stays cheap)


class BodyTooLarge(Exception):
    """Raised by the wrapped `receive` when the body runs over the limit."""

    def __init__(self, received: int, limit: int):
        super().__init__(f"request body over {limit} bytes (at least {received} sent)")
        self.received = received
        self.limit = limit


def default_limits(max_upload_bytes: int, small: int = SMALL_BODY_LIMIT,
                   slack: int = INGEST_SLACK) -> LimitFor:
    """The per-route rule: POST …/ingest (and the web page's upload form) carries files as text or base64, so it may be
    max_upload_bytes * 4/3 (base64) + `slack`; every other request `small` bytes.

    Note: the upload limit itself (decoded bytes) is still checked by the endpoint; this
    one only bounds the JSON. JSON-escaped *text* can be bigger than 4/3 of its UTF-8 bytes
    (`\\uXXXX` escapes for non-ASCII, `\\n`), so such an upload close to max_upload_bytes
    may meet this 413 first.
    """
    if max_upload_bytes < 0 or small < 0 or slack < 0:
        raise ValueError("limits are non-negative byte counts")
    ingest = 4 * math.ceil(max_upload_bytes / 3) + slack

    def limit_for(method: str, path: str) -> int:
        path = path.rstrip("/")
        if method.upper() == "POST" and (path.endswith("/ingest")
                                         or (path.startswith("/ui/corpus/") and path.endswith("/upload"))):
            return ingest  # the API's upload, and the web page's (multipart: raw bytes, below the base64 bound)
        return small

    limit_for.ingest_limit = ingest  # type: ignore[attr-defined]  (for logs and tests)
    limit_for.small_limit = small    # type: ignore[attr-defined]
    return limit_for


def _error_response(status: int, kind: str, message: str, close: bool) -> tuple[Message, Message]:
    return error_messages(status, kind, message, {"Connection": "close"} if close else None)


def _content_length(scope: Scope) -> int | None | str:
    """The request's Content-Length: None when absent, an int, or "bad" when malformed.

    Repeated headers (or a comma-separated list) are accepted only when all values agree
    (RFC 9110 §8.6)."""
    values: list[str] = []
    for name, value in scope.get("headers") or ():
        if name.lower() == b"content-length":
            try:
                values.extend(v.strip() for v in value.decode("latin-1").split(","))
            except (AttributeError, UnicodeDecodeError):
                return "bad"
    if not values:
        return None
    if any(not v.isascii() or not v.isdigit() for v in values):
        return "bad"
    normalized = {v.lstrip("0") or "0" for v in values}
    if len(normalized) != 1:
        return "bad"
    digits = normalized.pop()
    return math.inf if len(digits) > _MAX_DIGITS else int(digits)  # type: ignore[return-value]


class BodyLimit:
    """Pure ASGI middleware: refuse request bodies over `limit_for(method, path)` bytes."""

    def __init__(self, app: ASGIApp, limit_for: LimitFor):
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope.get("method", "GET"), scope.get("path", "/"))
        declared = _content_length(scope)
        if declared == "bad":
            start, body = _error_response(400, "invalid_request", "malformed Content-Length header", close=True)
            await send(start)
            await send(body)
            return
        if declared is not None and declared > limit:
            shown = "more than 10^18" if declared == math.inf else str(declared)
            start, body = _error_response(
                413, "too_large", f"request body of {shown} bytes; the limit for {scope.get('method')} "
                                  f"{scope.get('path')} is {limit} bytes", close=True)
            await send(start)
            await send(body)
            return
        await _Guard(self.app, limit)(scope, receive, send)


class _Guard:
    """One request: counts the body through `receive`, watches the response through `send`."""

    def __init__(self, app: ASGIApp, limit: int):
        self.app = app
        self.limit = limit
        self.received = 0
        self.body_done = False
        self.exceeded: BodyTooLarge | None = None
        self.started = False        # a response start went to the server (the app's or ours)
        self.replaced = False       # our 413 went out instead of the app's response

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._receive, self._send = receive, send
        try:
            await self.app(scope, self.receive, self.send)
        except Exception:
            if self.replaced:
                return  # our 413 is out; whatever the app did after does not matter
            if self.exceeded is None or self.started:
                raise  # not ours, or too late for a 413: the server aborts the connection
            # the exception is ours (BodyTooLarge), or one the app raised because of it
        if self.exceeded is not None and not self.started:
            await self._send_413()

    async def receive(self) -> Message:
        if self.exceeded is not None:
            raise self.exceeded
        message = await self._receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.limit:
                self.exceeded = BodyTooLarge(self.received, self.limit)
                raise self.exceeded
            if not message.get("more_body", False):
                self.body_done = True
        return message

    async def send(self, message: Message) -> None:
        if self.replaced:
            return  # the app's own response to our exception: dropped, the 413 went instead
        if message["type"] == "http.response.start":
            if self.exceeded is not None:
                await self._send_413()
                return
            self.started = True
        await self._send(message)

    async def _send_413(self) -> None:
        self.started = self.replaced = True
        start, body = _error_response(
            413, "too_large", f"request body over {self.limit} bytes (the limit for this route)",
            close=not self.body_done)
        await self._send(start)
        await self._send(body)
