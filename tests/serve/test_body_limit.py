"""serve/body_limit.py: the body limit is enforced before the app reads or parses the body.

A small FastAPI app with JSON endpoints, driven through httpx's ASGITransport (which hands
a streamed request body to the app one chunk per `receive()`). Two counting layers: one
outside the whole app (what the server was asked for: `receive()` calls) and one between
the middleware and the routes (what the app saw: body bytes).
"""
from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from fastapi import FastAPI
from pydantic import BaseModel
from starlette.responses import StreamingResponse

from serve.body_limit import (INGEST_SLACK, SMALL_BODY_LIMIT, BodyLimit, BodyTooLarge, _content_length,
                              default_limits)

pytestmark = pytest.mark.unit

LIMIT = 1000          # every route but ingest, in these tests
INGEST_LIMIT = 5000   # POST …/ingest


class Payload(BaseModel):
    text: str


class Stats:
    def __init__(self):
        self.calls = 0   # receive() calls
        self.bytes = 0   # body bytes those calls returned


class Counting:
    """ASGI wrapper: counts receive() calls and the body bytes they returned into `stats`."""

    def __init__(self, app, stats: Stats):
        self.app = app
        self.stats = stats

    async def __call__(self, scope, receive, send):
        async def counted():
            self.stats.calls += 1
            message = await receive()
            if message["type"] == "http.request":
                self.stats.bytes += len(message.get("body", b""))
            return message
        await self.app(scope, counted, send)


def limits(method: str, path: str) -> int:
    return INGEST_LIMIT if method == "POST" and path.endswith("/ingest") else LIMIT


def make_app(limit_for=limits):
    """(app, server, seen, ran): the app as the server calls it; its receive() calls and body
    bytes (`server`); the body bytes the routes got, behind the middleware (`seen`); the
    endpoints that ran."""
    app = FastAPI()
    ran: list[str] = []

    @app.get("/healthz")
    async def healthz():
        ran.append("healthz")
        return {"ok": True}

    @app.post("/v1/answer")
    async def answer(body: Payload):
        ran.append("answer")
        return {"chars": len(body.text)}

    @app.post("/v1/ingest")
    async def ingest(body: Payload):
        ran.append("ingest")
        return {"chars": len(body.text)}

    @app.post("/v1/collections/{name}/ingest")
    async def ingest_into(name: str, body: Payload):
        ran.append(f"ingest:{name}")
        return {"chars": len(body.text)}

    @app.post("/v1/stream")
    async def stream(body: Payload):  # noqa: ARG001  (never reached when over the limit)
        ran.append("stream")
        return {}

    inner = Stats()                     # between the middleware and the routes
    app.add_middleware(Counting, stats=inner)
    app.add_middleware(BodyLimit, limit_for=limit_for)  # added last: runs first
    server = Stats()                    # outside the whole app: what the server was asked for
    return Counting(app, server), server, inner, ran


def body_of(chars: int) -> bytes:
    """A JSON body of exactly `chars` + 12 bytes."""
    return json.dumps({"text": "x" * chars}).encode()


def request(app, method: str, path: str, **kw) -> httpx.Response:
    async def go():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.request(method, path, **kw)
    return asyncio.run(go())


def chunks(data: bytes, size: int, sent: list[int]):
    async def gen():
        for i in range(0, len(data), size):
            sent.append(1)
            yield data[i:i + size]
    return gen()


# --- under the limit -----------------------------------------------------------------------

def test_under_the_limit_passes_with_content_length():
    app, server, seen, ran = make_app()
    body = body_of(500)
    r = request(app, "POST", "/v1/answer", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    assert r.json() == {"chars": 500}
    assert ran == ["answer"] and seen.bytes == len(body)


def test_exactly_the_limit_passes_chunked():
    app, server, seen, ran = make_app()
    body = body_of(LIMIT - 12)
    assert len(body) == LIMIT
    r = request(app, "POST", "/v1/answer", content=chunks(body, 100, []),
                headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    assert ran == ["answer"] and seen.bytes == LIMIT


def test_get_without_body_unaffected():
    app, server, _, ran = make_app()
    r = request(app, "GET", "/healthz")
    assert r.status_code == 200 and r.json() == {"ok": True} and ran == ["healthz"]


def test_unknown_route_and_errors_of_the_app_keep_their_status():
    app, _, _, _ = make_app()
    assert request(app, "GET", "/nope").status_code == 404
    r = request(app, "POST", "/v1/answer", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422


# --- Content-Length over the limit ---------------------------------------------------------

def test_content_length_over_the_limit_is_413_before_any_receive():
    app, server, seen, ran = make_app()
    body = body_of(LIMIT)  # LIMIT + 12 bytes
    r = request(app, "POST", "/v1/answer", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413
    err = r.json()["error"]
    assert err["type"] == "too_large" and str(len(body)) in err["message"] and str(LIMIT) in err["message"]
    assert r.headers["connection"] == "close"
    assert ran == []                       # the endpoint never ran
    assert server.calls == 0                # receive() was never called for the body
    assert seen.calls == 0 and seen.bytes == 0


def test_declared_length_alone_decides_even_if_the_body_is_short():
    app, server, _, ran = make_app()
    r = request(app, "POST", "/v1/answer", content=b"{}",
                headers={"content-length": str(10**30), "content-type": "application/json"})
    assert r.status_code == 413 and "10^18" in r.json()["error"]["message"]
    assert ran == [] and server.calls == 0


@pytest.mark.parametrize("value", ["12x", "-1", "+5", "", " ", "0x10", "1 2", "5, 6", "١٢".encode()])
def test_malformed_content_length_is_400(value):
    app, server, _, ran = make_app()
    r = request(app, "POST", "/v1/answer", content=b"{}",
                headers={"content-length": value, "content-type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "invalid_request"
    assert ran == [] and server.calls == 0


@pytest.mark.parametrize("headers, expected", [
    ([], None),
    ([(b"content-length", b"42")], 42),
    ([(b"Content-Length", b"0042")], 42),
    ([(b"content-length", b"42, 42")], 42),
    ([(b"content-length", b"42"), (b"content-length", b"42")], 42),
    ([(b"content-length", b"42"), (b"content-length", b"43")], "bad"),
    ([(b"content-length", b"4 2")], "bad"),
])
def test_content_length_parsing(headers, expected):
    assert _content_length({"headers": headers}) == expected


# --- chunked (no Content-Length) over the limit --------------------------------------------

def test_chunked_over_the_limit_is_413_and_the_app_saw_at_most_the_limit():
    app, server, seen, ran = make_app()
    body = body_of(50_000)
    sent: list[int] = []
    r = request(app, "POST", "/v1/answer", content=chunks(body, 300, sent),
                headers={"content-type": "application/json"})
    assert "content-length" not in {k.lower() for k in r.request.headers}
    assert r.status_code == 413, r.text
    assert r.json()["error"]["type"] == "too_large"
    assert r.headers["connection"] == "close"
    assert ran == []
    assert seen.bytes <= LIMIT                 # the app never saw more than the limit
    assert seen.bytes == 900                   # 3 chunks of 300; the 4th would pass 1000
    assert server.calls == 4                     # reading stopped at the chunk that went over
    assert len(sent) == 4                       # … so the client was asked for 4 chunks of 167


def test_one_chunk_over_the_limit_is_never_handed_to_the_app():
    app, server, seen, ran = make_app()
    r = request(app, "POST", "/v1/answer", content=chunks(body_of(5000), 10_000, []),
                headers={"content-type": "application/json"})
    assert r.status_code == 413 and seen.bytes == 0 and seen.calls == 1 and ran == []


# --- the ingest routes get the bigger limit ------------------------------------------------

@pytest.mark.parametrize("path, name", [("/v1/ingest", "ingest"), ("/v1/collections/tax/ingest", "ingest:tax")])
def test_ingest_routes_get_the_bigger_limit(path, name):
    app, server, _, ran = make_app()
    ok = body_of(4000)                          # over LIMIT, under INGEST_LIMIT
    r = request(app, "POST", path, content=ok, headers={"content-type": "application/json"})
    assert r.status_code == 200 and ran == [name]
    r = request(app, "POST", path, content=chunks(ok, 512, []), headers={"content-type": "application/json"})
    assert r.status_code == 200
    r = request(app, "POST", path, content=body_of(INGEST_LIMIT), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["type"] == "too_large"
    r = request(app, "POST", "/v1/answer", content=ok, headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_default_limits():
    limit_for = default_limits(2_000_000)
    ingest = 4 * 666_667 + INGEST_SLACK        # base64 of 2,000,000 bytes + slack
    assert limit_for("POST", "/v1/ingest") == ingest == limit_for.ingest_limit
    assert limit_for("POST", "/v1/collections/default/ingest") == ingest
    assert limit_for("post", "/v1/ingest/") == ingest
    assert limit_for("GET", "/v1/ingest") == SMALL_BODY_LIMIT
    assert limit_for("POST", "/v1/answer") == SMALL_BODY_LIMIT
    assert limit_for("POST", "/v1/ingestion") == SMALL_BODY_LIMIT
    assert limit_for("POST", "/v1/replay") == SMALL_BODY_LIMIT
    assert limit_for("POST", "/ui/corpus/default/upload") == ingest  # the web page's upload form
    assert limit_for("POST", "/ui/ask") == SMALL_BODY_LIMIT
    assert limit_for("POST", "/v1/upload") == SMALL_BODY_LIMIT
    with pytest.raises(ValueError):
        default_limits(-1)


def test_default_limits_let_a_max_size_base64_upload_through():
    import base64
    data = b"\xff" * 2_000_000
    body = json.dumps({"files": [{"name": "a.pdf", "content_base64": base64.b64encode(data).decode()}]})
    assert len(body) <= default_limits(2_000_000)("POST", "/v1/ingest")


# --- ASGI corners ----------------------------------------------------------------------------

def run_asgi(app, messages: list[dict], headers=(), method="POST", path="/x"):
    """Call a raw ASGI app; returns (sent messages, receive calls)."""
    scope = {"type": "http", "method": method, "path": path, "headers": list(headers)}
    sent: list[dict] = []
    calls = [0]

    async def receive():
        calls[0] += 1
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(m):
        sent.append(m)

    asyncio.run(app(scope, receive, send))
    return sent, calls[0]


def test_exception_from_receive_becomes_413_without_fastapi():
    async def app(scope, receive, send):
        while (await receive()).get("more_body"):
            pass
        raise AssertionError("unreachable: the body is over the limit")

    mw = BodyLimit(app, limit_for=lambda m, p: 10)
    sent, calls = run_asgi(mw, [{"type": "http.request", "body": b"x" * 8, "more_body": True},
                                {"type": "http.request", "body": b"x" * 8, "more_body": True}])
    assert calls == 2 and sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["error"]["type"] == "too_large"


def test_the_apps_own_error_response_is_replaced_by_413():
    async def app(scope, receive, send):   # swallows the exception, answers 400 (like FastAPI)
        try:
            await receive()
        except BodyTooLarge:
            await send({"type": "http.response.start", "status": 400, "headers": []})
            await send({"type": "http.response.body", "body": b"parse error"})

    mw = BodyLimit(app, limit_for=lambda m, p: 4)
    sent, _ = run_asgi(mw, [{"type": "http.request", "body": b"12345"}])
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert sent[0]["status"] == 413 and b"too_large" in sent[1]["body"]


def test_after_the_response_started_the_error_is_raised_not_a_413():
    async def app(scope, receive, send):   # starts its response, then reads the body
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await receive()

    mw = BodyLimit(app, limit_for=lambda m, p: 4)
    with pytest.raises(BodyTooLarge):
        run_asgi(mw, [{"type": "http.request", "body": b"12345"}])


def test_after_the_limit_receive_keeps_refusing():
    seen = []

    async def app(scope, receive, send):
        for _ in range(3):
            try:
                seen.append(await receive())
            except BodyTooLarge as e:
                seen.append(e)

    mw = BodyLimit(app, limit_for=lambda m, p: 4)
    sent, calls = run_asgi(mw, [{"type": "http.request", "body": b"12345", "more_body": True},
                                {"type": "http.request", "body": b"6"}])
    assert calls == 1 and all(isinstance(s, BodyTooLarge) for s in seen)
    assert sent[0]["status"] == 413


def test_streaming_response_with_body_under_the_limit_is_untouched():
    app = FastAPI()

    @app.post("/s")
    async def s(body: Payload):
        async def gen():
            yield body.text.encode()
        return StreamingResponse(gen())

    app.add_middleware(BodyLimit, limit_for=lambda m, p: 100)
    r = request(app, "POST", "/s", content=body_of(10), headers={"content-type": "application/json"})
    assert r.status_code == 200 and r.text == "x" * 10


def test_websocket_and_lifespan_pass_through():
    got = []

    async def app(scope, receive, send):
        got.append(scope["type"])

    mw = BodyLimit(app, limit_for=lambda m, p: 0)
    asyncio.run(mw({"type": "lifespan"}, None, None))
    asyncio.run(mw({"type": "websocket", "path": "/ws", "headers": []}, None, None))
    assert got == ["lifespan", "websocket"]
