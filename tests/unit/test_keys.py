"""API keys: stored hashed, checked in constant time, roles ordered, revocation at once; the rate limiter."""
from __future__ import annotations

import json
import stat

import pytest

from pipeline.audit import verify
from pipeline.errors import KeyManagementError
from pipeline.keys import KeyStore, cap_authority
from serve.auth import Authenticate, Guard
from serve.rates import RateLimiter
from serve.errors import ApiError


def test_a_key_is_shown_once_and_stored_only_as_a_hash(tmp_path):
    store = KeyStore(tmp_path)
    key, token = store.create("reader", ["default"], name="auditor A")
    raw = (tmp_path / "keys.json").read_text()
    assert token.startswith(f"saksi_{key.id}_") and token not in raw and token.split("_", 2)[2] not in raw
    assert json.loads(raw)["keys"][0]["sha256"] == key.sha256
    assert stat.S_IMODE((tmp_path / "keys.json").stat().st_mode) == 0o600
    assert store.authenticate(token) == key


@pytest.mark.parametrize("mangle", [lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"), lambda t: t + "x",
                                    lambda t: t.replace("saksi_", "saksj_"), lambda t: "", lambda t: "Bearer " + t,
                                    lambda t: "saksi_000000000000_" + t.split("_", 2)[2]])
def test_anything_but_the_exact_token_is_refused(tmp_path, mangle):
    store = KeyStore(tmp_path)
    _, token = store.create("admin", ["*"])
    assert store.authenticate(mangle(token)) is None


def test_revoking_takes_effect_for_a_store_that_already_read_the_file(tmp_path):
    serving, cli = KeyStore(tmp_path), KeyStore(tmp_path)
    key, token = cli.create("curator", ["kebun"])
    assert serving.authenticate(token) == key  # read and cached
    cli.revoke(key.id)
    assert serving.authenticate(token) is None
    with pytest.raises(KeyManagementError, match="no key"):
        cli.revoke("ffffffffffff")


def test_roles_are_ordered_and_collections_bound(tmp_path):
    store = KeyStore(tmp_path)
    reader, _ = store.create("reader", ["default"])
    curator, _ = store.create("curator", ["kebun", "pajak"])
    admin, _ = store.create("admin", ["default"])
    assert reader.has_role("reader") and not reader.has_role("curator")
    assert curator.has_role("reader") and curator.has_role("curator") and not curator.has_role("admin")
    assert admin.has_role("curator") and admin.may_use("anything")  # admin: every collection
    assert reader.may_use("default") and not reader.may_use("kebun")
    assert curator.may_use("pajak") and not curator.may_use("default")
    everything, _ = store.create("reader", ["*"])
    assert everything.may_use("kebun")


def test_bad_key_requests_are_refused_with_the_reason(tmp_path):
    store = KeyStore(tmp_path)
    with pytest.raises(KeyManagementError, match="role"):
        store.create("owner")
    with pytest.raises(KeyManagementError, match="collection name"):
        store.create("reader", ["../etc"])
    with pytest.raises(KeyManagementError, match="authority"):
        store.create("curator", ["default"], authority="supreme")
    (tmp_path / "keys.json").write_text("[]")
    with pytest.raises(KeyManagementError, match="not a key file"):
        store.keys()


def test_key_changes_are_in_the_audit_log_without_secrets(tmp_path):
    store = KeyStore(tmp_path)
    key, token = store.create("curator", ["kebun"], authority="institutional", actor="key:0123456789ab")
    store.revoke(key.id)
    entries = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [(e["event"], e["key"], e["data"]["id"]) for e in entries] == [
        ("key_create", "key:0123456789ab", key.id), ("key_revoke", "local", key.id)]
    assert token not in (tmp_path / "audit.jsonl").read_text() and key.sha256 not in (tmp_path / "audit.jsonl").read_text()
    assert verify(tmp_path).ok


def test_an_upload_claims_at_most_the_keys_authority():
    assert cap_authority("official", "unknown") == "unknown"
    assert cap_authority("official", "institutional") == "institutional"
    assert cap_authority("media", "institutional") == "media"
    assert cap_authority("official", "official") == "official"


def test_the_rate_limiter_allows_a_burst_then_the_rate():
    now = [0.0]
    limiter = RateLimiter(per_minute=60, burst=3, clock=lambda: now[0])
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.take("a")
    assert wait == pytest.approx(1.0)
    assert limiter.take("b") == 0.0  # per key
    now[0] += 1.0
    assert limiter.take("a") == 0.0 and limiter.take("a") > 0


def test_the_guard_says_401_then_429_with_retry_after(tmp_path):
    store = KeyStore(tmp_path)
    _, token = store.create("reader")
    guard = Guard(store, RateLimiter(per_minute=60, burst=1, clock=lambda: 0.0))
    for bad in (None, "nope"):
        with pytest.raises(ApiError) as e:
            guard.check(bad)
        assert e.value.status == 401 and "WWW-Authenticate" in e.value.headers
    guard.check(token)
    with pytest.raises(ApiError) as e:
        guard.check(token)
    assert e.value.status == 429 and e.value.headers["Retry-After"] == "1"


def test_the_middleware_refuses_before_the_app_or_the_body_is_touched(tmp_path):
    import asyncio

    store = KeyStore(tmp_path)
    _, token = store.create("reader")
    guard = Guard(store, RateLimiter(600, 100))
    reached, received, sent = [], [], []

    async def app(scope, receive, send):
        reached.append(scope.get("state", {}).get("api_key"))

    async def receive():
        received.append(1)
        return {"type": "http.request", "body": b"x" * 10, "more_body": False}

    async def send(message):
        sent.append(message)

    mw = Authenticate(app, lambda: guard)

    def call(path, auth=None):
        headers = [(b"authorization", auth.encode())] if auth else []
        asyncio.run(mw({"type": "http", "path": path, "headers": headers}, receive, send))

    call("/v1/answer")
    call("/v1/answer", "Basic " + token)
    assert [m["status"] for m in sent if m["type"] == "http.response.start"] == [401, 401]
    assert reached == [] and received == []
    call("/v1/answer", "Bearer " + token)
    call("/healthz")  # public: passes without a key (and with none in its state)
    assert reached == [store.authenticate(token), None]


def test_an_answer_is_charged_its_measured_work_and_a_costly_one_leaves_a_debt():
    from serve.rates import ANSWER_ADMISSION, answer_charge

    assert answer_charge(0.3) == 0.0 and answer_charge(21.0) == pytest.approx(20.0)  # beyond the admission's unit
    now = [0.0]
    budget = RateLimiter(per_minute=60, burst=30, clock=lambda: now[0])  # one unit a second
    assert budget.take("k", ANSWER_ADMISSION) == 0.0
    budget.charge("k", answer_charge(45.0))  # a 45-second answer: 29 - 44 = -15 units
    assert budget.take("k", ANSWER_ADMISSION) == pytest.approx(16.0)  # refused until the debt is paid, and one more
    assert budget.take("other", ANSWER_ADMISSION) == 0.0  # another key's budget is its own
    now[0] = 16.0
    assert budget.take("k", ANSWER_ADMISSION) == 0.0
    # many cheap answers cost what they ran: 30 answers of 0.5 s each fit the 30-unit burst
    for _ in range(29):
        budget.charge("c", answer_charge(0.5))
        assert budget.take("c", ANSWER_ADMISSION) == 0.0


def test_a_damaged_key_file_is_a_typed_503_not_a_500(tmp_path):
    store = KeyStore(tmp_path)
    _, token = store.create("reader")
    (tmp_path / "keys.json").write_text("{not json")
    with pytest.raises(ApiError) as e:
        Guard(store, RateLimiter(600, 100)).check(token)
    assert e.value.status == 503 and "key store" in e.value.message
