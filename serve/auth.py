"""Who is calling: the bearer key, its role and collections, and how fast it may call.

Every endpoint but `/healthz` depends on `caller`, which FastAPI also publishes in the
OpenAPI schema as the `bearer` security scheme. A missing, malformed, unknown or revoked key
is 401 (with `WWW-Authenticate: Bearer`); a valid key outside its role or collections is
403; a key calling faster than `runtime.rate_per_minute` (bursts up to `rate_burst`) is 429
with `Retry-After`; the ingress also charges each question against its key's answer budget
(one unit to be admitted, then one per second of the answer's measured work: `serve.rates.answer_charge`). Keys are read from the data directory's `keys.json` and re-read when it
changes, so `saksi keys revoke` takes effect on the next request.

The limiter is per ingress replica (in memory): with N ingress replicas a key may reach N
times the rate. The lite profile runs one.
"""
from __future__ import annotations

import logging
import math
from typing import Callable

from fastapi import Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from pipeline.errors import KeyManagementError
from pipeline.keys import ApiKey, KeyStore

from .errors import ApiError, error_messages
from .rates import RateLimiter

log = logging.getLogger(__name__)

bearer = HTTPBearer(auto_error=False, scheme_name="bearer",
                    description="an API key from `saksi keys create` (shown once when created)")


class Guard:
    """The keys and the limiter one ingress replica checks every request against."""

    def __init__(self, keys: KeyStore, limiter: RateLimiter):
        self.keys, self.limiter = keys, limiter

    def check(self, token: str | None) -> ApiKey:
        if not token:
            raise ApiError(401, "unauthorized", "this endpoint needs an API key: `Authorization: Bearer <key>` "
                                                 "(an operator creates one with `saksi keys create`)",
                            {"WWW-Authenticate": "Bearer"})
        try:
            key = self.keys.authenticate(token)
        except KeyManagementError as e:  # a damaged keys.json: nobody gets in, and nobody gets a 500
            log.error("%s", e)
            raise ApiError(503, "unavailable", "the server's key store cannot be read; an operator must repair it "
                                               "(saksi keys ls says what is wrong)") from None
        if key is None:
            raise ApiError(401, "unauthorized", "the API key is not valid (unknown, revoked or mistyped)",
                            {"WWW-Authenticate": 'Bearer error="invalid_token"'})
        wait = self.limiter.take(key.id)
        if wait > 0:
            raise ApiError(429, "rate_limited", f"too many requests with this key; retry in {math.ceil(wait)} s",
                            {"Retry-After": str(max(1, math.ceil(wait)))})
        return key


PUBLIC = frozenset({"/healthz", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json",
                    "/ui/signin", "/ui/signout"})
PUBLIC_PREFIXES = ("/ui/static/",)
SESSION_COOKIE = "saksi_key"  # the web page's sign-in: the key itself, HttpOnly, SameSite=Strict


def is_page(path: str) -> bool:
    """The web page (serve/web/): `/` and everything under `/ui/`. The JSON API is everything else."""
    return path == "/" or path.startswith("/ui/")


def _header(scope: dict, name: bytes) -> str | None:
    for k, value in scope.get("headers", ()):
        if k == name:
            return value.decode("latin-1")
    return None


def _bearer_token(scope: dict) -> str | None:
    value = _header(scope, b"authorization")
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _cookie_token(scope: dict) -> str | None:
    from http.cookies import CookieError, SimpleCookie

    raw = _header(scope, b"cookie")
    if not raw:
        return None
    try:
        morsel = SimpleCookie(raw).get(SESSION_COOKIE)
    except CookieError:
        return None
    return morsel.value.strip() or None if morsel else None


def _same_origin(scope: dict) -> bool:
    """A page's form POST comes from a page of this server: its Origin (when the browser sends one,
    as every current browser does for POST) names this host. With the SameSite=Strict cookie, this
    keeps other sites from acting with a signed-in reviewer's key."""
    origin = _header(scope, b"origin")
    if origin is None or origin == "null":
        return origin is None
    host = _header(scope, b"host") or ""
    return origin.split("://", 1)[-1].rstrip("/") == host


class Authenticate:
    """ASGI middleware: the key is checked from the headers alone, before anything reads the body,
    so a caller without a key costs no parsing. The checked key waits in the request's state for
    the `caller` dependency. Documentation (/docs, /openapi.json) and /healthz are public.

    The API takes the key from `Authorization: Bearer` only. The web page (`is_page`) takes it from
    the sign-in cookie (or a bearer header); without a valid one a page redirects to the sign-in
    form, and a page's POST from another origin is refused (403)."""

    def __init__(self, app, guard: Callable[[], Guard]):
        self.app, self.guard = app, guard

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] == "http" and is_page(path) and scope.get("method") == "POST" and not _same_origin(scope):
            # every form of the page, signing in and out included (a sign-in posted from another site would sign
            # the browser in with the attacker's key: login CSRF)
            for message in error_messages(403, "forbidden", "a form of this page must be sent from this page"):
                await send(message)
            return
        if scope["type"] != "http" or path in PUBLIC or path.startswith(PUBLIC_PREFIXES):
            return await self.app(scope, receive, send)
        page = is_page(path)
        token = _bearer_token(scope) or (_cookie_token(scope) if page else None)
        try:
            key = self.guard().check(token)
        except ApiError as e:
            if page and e.status == 401:
                return await _redirect(send, _signin_url(scope))
            for message in error_messages(e.status, e.type, e.message, e.headers):
                await send(message)
            return
        scope.setdefault("state", {})["api_key"] = key
        await self.app(scope, receive, send)


def _signin_url(scope: dict) -> str:
    from urllib.parse import quote

    query = scope.get("query_string", b"").decode("latin-1")
    back = scope.get("path", "/") + (f"?{query}" if query else "")
    return "/ui/signin" if back == "/" or scope.get("method") != "GET" else f"/ui/signin?next={quote(back, safe='')}"


async def _redirect(send, location: str) -> None:
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", location.encode("latin-1")), (b"content-length", b"0"),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def caller(request: Request, credentials: HTTPAuthorizationCredentials | None = Security(bearer)) -> ApiKey:
    """The FastAPI dependency: the calling key, as `Authenticate` checked it from the headers (it
    waits in the request's state). `credentials` puts the bearer scheme into the OpenAPI schema."""
    return request.state.api_key
