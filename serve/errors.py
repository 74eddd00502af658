"""The API's one error shape, `{"error": {"type", "message"}}`: the exception the endpoints raise,
and the same response as raw ASGI messages for the middlewares that answer before the app runs
(serve/auth.py, serve/body_limit.py)."""
from __future__ import annotations

import asyncio
import json


class ApiError(Exception):
    """A typed 4xx/5xx: the API's exception handler turns it into the error shape."""

    def __init__(self, status: int, type_: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.type, self.message, self.headers = status, type_, message, headers or {}


def error_messages(status: int, kind: str, message: str,
                   headers: dict[str, str] | None = None) -> tuple[dict, dict]:
    """The error as the two ASGI messages (response start, body) a middleware sends."""
    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
           *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items())]
    return ({"type": "http.response.start", "status": status, "headers": raw},
            {"type": "http.response.body", "body": body, "more_body": False})


async def within(seconds: float, what: str, fn, /, *args, **kwargs):
    """`fn(*args, **kwargs)` in a worker thread, awaited at most `seconds`: CPU work of a request (reading a trace,
    rebuilding an answer, rendering a page) never runs on the event loop that serves every other request. Past the
    deadline the caller gets a typed 503 `timeout`; the thread's work is bounded by the ingest caps, so it ends
    and its result is dropped."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(fn, *args, **kwargs), seconds)
    except asyncio.TimeoutError:
        raise ApiError(503, "timeout", f"{what} took longer than {seconds:g} s (runtime.page_timeout_s); retry in a "
                                       "moment", {"Retry-After": str(max(1, round(seconds)))}) from None
