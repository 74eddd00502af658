"""The API's one error shape, `{"error": {"type", "message"}}`: the exception the endpoints raise,
and the same response as raw ASGI messages for the middlewares that answer before the app runs
(serve/auth.py, serve/body_limit.py)."""
from __future__ import annotations

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
