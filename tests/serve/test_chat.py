"""The OpenAI-compatible endpoint and the streamed answer (issue 29), on the app the Ingress serves, built around a
service in this process (no Ray): `GET /v1/models`, `POST /v1/chat/completions` with and without `stream`,
`POST /v1/answer` with `stream: true`, and the ask page's stream. The official `openai` SDK against a real
`saksi serve` is in test_openai_sdk.py."""
from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from pipeline.config import load_profile
from pipeline.corpus import Corpus
from pipeline.keys import KeyStore
from serve.auth import Guard
from serve.config import RuntimeSettings
from serve.http_app import make_app
from serve.rates import RateLimiter
from serve.service import Service
from serve.schemas import UploadFile

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration

ANSWERED = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
REFUSED = "Berapa tarif bea masuk untuk impor mobil listrik?"
NOTE = ("---\nid: catatan-chat\ntitle: Catatan Uji Chat\ndoc_type: guidance\nlang: id\n---\n\n"
        "1. Bea meterai atas kuitansi sewa gudang uji chat adalah Rp10.000 per dokumen.\n")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("chat") / "data"
    with Corpus(root, load_profile()) as c:
        c.ingest([SAMPLE])
    svc = Service.in_process("lite", root, RuntimeSettings(answer_units_per_minute=1e6, answer_units_burst=1e6))
    store = KeyStore(root)
    tokens = {"reader": store.create("reader", ["default"], name="chat reader")[1],
              "admin": store.create("admin", ["*"], name="chat admin")[1],
              "curator": store.create("curator", ["gudang"], name="chat curator")[1]}
    import asyncio
    asyncio.run(svc.ingest(svc.where(store.authenticate(tokens["curator"]), "gudang", "curator", create=True),
                           [UploadFile(name="catatan.md", content=NOTE)]))
    client = TestClient(make_app(svc, Guard(store, RateLimiter(1e6, 1e6))))
    yield client, tokens, root
    svc.corpus.corpus.close()


def auth(tokens, role="reader"):
    return {"Authorization": f"Bearer {tokens[role]}"}


def chat(client, tokens, messages, role="reader", **body):
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    return client.post("/v1/chat/completions", headers=auth(tokens, role),
                       json={"model": "saksi", "messages": messages, **body})


def chunks(response) -> list:
    """The SSE stream's chunks, in order; the last line must be `data: [DONE]`."""
    lines = [b for b in response.text.split("\n\n") if b.strip()]
    assert lines[-1] == "data: [DONE]"
    return [json.loads(b[len("data: "):]) for b in lines[:-1]]


def test_models_are_the_collections_the_key_may_read(served):
    client, tokens, _ = served
    assert [m["id"] for m in client.get("/v1/models", headers=auth(tokens)).json()["data"]] == ["saksi"]
    admin = client.get("/v1/models", headers=auth(tokens, "admin")).json()
    assert admin["object"] == "list" and [m["id"] for m in admin["data"]] == ["saksi", "saksi:gudang"]
    assert client.get("/v1/models").status_code == 401


def test_an_answer_in_the_chat_shape_carries_its_receipts_in_the_text(served):
    client, tokens, root = served
    tools = [{"type": "function", "function": {"name": "search_web", "parameters": {}}}]  # offered, never called
    r = chat(client, tokens, ANSWERED, temperature=0.7, top_p=0.5, max_tokens=50, stream_options=None, tools=tools)
    assert r.status_code == 200
    body = r.json()
    content = body["choices"][0]["message"]["content"]
    answer = body["saksi"]["answer"]
    assert body["object"] == "chat.completion" and body["choices"][0]["finish_reason"] == "stop"
    supported = [c for c in answer["claims"] if c["status"] == "supported"]
    assert supported and "[1]" in content and "**Sumber**" in content
    for c in supported:  # every claim, each receipt's path and exact quote, in the text a plain client shows
        assert " ".join(c["text"].split()) in content
        for x in c["citations"]:
            assert x["path"] in content and " ".join(x["quote"].split()) in content
    assert len(body["citations"]) == len({(x["chunk_id"], x["quote"]) for c in supported for x in c["citations"]})
    assert all(u.startswith("http://testserver/ui/documents/default/") for u in body["citations"])
    assert body["saksi"]["ignored"] == ["max_tokens", "stream_options", "temperature", "tools", "top_p"]
    assert (root / "traces" / f"{body['saksi']['trace_id']}.json").is_file()  # its trace, as /v1/answer leaves
    direct = client.post("/v1/answer", headers=auth(tokens), json={"question": ANSWERED}).json()
    assert [c["text"] for c in direct["claims"]] == [c["text"] for c in answer["claims"]]


def test_a_refusal_reads_as_a_refusal_with_its_nearest_records(served):
    client, tokens, _ = served
    body = chat(client, tokens, REFUSED).json()
    content = body["choices"][0]["message"]["content"]
    assert content.startswith("**Tidak ada jawaban yang dapat dikutip.**") and "**Catatan terdekat**" in content
    assert "tarif atau persentase" in content and body["citations"] == []
    assert body["saksi"]["answer"]["outcome"] == "refusal"


def test_what_is_found_only_as_history_is_shown_as_history_and_refused_streamed_or_not(served):
    """Contract 12 (issue 30): asked as of 2021, before either rent regulation took effect, every rule found is not
    yet in force: a refusal (`only_history`) that still shows each claim with its standing and receipts, the same
    claims in the whole answer and in the stream."""
    client, tokens, _ = served
    body = chat(client, tokens, ANSWERED, as_of="2021-01-01").json()
    answer, content = body["saksi"]["answer"], body["choices"][0]["message"]["content"]
    assert answer["outcome"] == "refusal" and answer["reason_code"] == "only_history"
    supported = [c for c in answer["claims"] if c["status"] == "supported"]
    assert supported and all(c["standing"]["state"] == "not_yet" for c in supported)
    assert "riwayat" in content and "belum berlaku" in content and "**Sumber**" in content and body["citations"]
    assert content.index(" ".join(supported[0]["text"].split())) < content.index("riwayat")  # the claims, then why
    streamed = chunks(chat(client, tokens, ANSWERED, as_of="2021-01-01", stream=True))
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in streamed if c.get("choices"))
    assert all(" ".join(c["text"].split()) in text for c in supported) and "riwayat" in text
    assert text.index("riwayat") < text.index("**Sumber**")  # the claims, why, then their sources, as whole
    assert streamed[-1]["saksi"]["answer"]["reason_code"] == "only_history" and streamed[-1]["citations"]


def test_a_key_cannot_ask_a_collection_it_may_not_read_and_an_unknown_model_is_a_404(served):
    client, tokens, _ = served
    r = chat(client, tokens, ANSWERED, model="saksi:gudang")
    assert r.status_code == 403 and r.json()["error"]["type"] == "forbidden"
    r = chat(client, tokens, ANSWERED, role="admin", model="gpt-4o")
    assert r.status_code == 404 and r.json()["error"]["type"] == "model_not_found"
    assert chat(client, tokens, "Berapa bea meterai kuitansi sewa gudang?", role="admin",
                model="saksi:gudang").json()["saksi"]["collection"] == "gudang"


@pytest.mark.parametrize("extra, field", [
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}], "tool_choice": "required"},
     "tool_choice"),
    ({"n": 2}, "n"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}}}, "response_format"),
    ({"logprobs": True}, "logprobs"),
])
def test_what_would_change_the_contract_is_a_400_naming_the_field(served, extra, field):
    client, tokens, _ = served
    r = chat(client, tokens, ANSWERED, **extra)
    assert r.status_code == 400 and r.json()["error"]["message"].startswith(f"{field}:")


def test_a_message_that_is_not_text_or_a_conversation_ending_elsewhere_is_refused(served):
    client, tokens, _ = served
    image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}]
    assert chat(client, tokens, image).status_code == 400
    ends = [{"role": "user", "content": ANSWERED}, {"role": "assistant", "content": "…"}]
    assert chat(client, tokens, ends).status_code == 400
    assert chat(client, tokens, [{"role": "user", "content": " "}]).status_code == 422


def test_a_followup_is_answered_as_the_standalone_question_it_was_made_into(served):
    client, tokens, _ = served
    messages = [{"role": "system", "content": "Jawab singkat."}, {"role": "user", "content": ANSWERED},
                {"role": "assistant", "content": "10% …"}, {"role": "user", "content": "dan kalau untuk tahun 2024?"}]
    body = chat(client, tokens, messages).json()
    asked = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan untuk tahun 2024?"
    assert body["saksi"]["question"] == asked and body["saksi"]["rewritten"] and body["saksi"]["follows"] == ANSWERED
    assert body["saksi"]["answer"]["as_of"]["date"] == "2024-12-31"
    assert body["choices"][0]["message"]["content"].startswith(f"> Pertanyaan yang dijawab: *{asked}*")
    assert "messages[0] (system)" in body["saksi"]["ignored"]


@pytest.mark.parametrize("question", [ANSWERED, REFUSED, "What is the penalty for filing the SPT Masa late?"])
def test_streamed_claims_are_the_answers_and_each_comes_with_its_exact_quote(served, question):
    client, tokens, _ = served
    r = chat(client, tokens, question, stream=True)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    got = chunks(r)
    assert got[0]["choices"][0]["delta"]["role"] == "assistant"
    assert all(c["object"] == "chat.completion.chunk" for c in got)
    final = got[-1]
    answer = final["saksi"]["answer"]
    assert final["choices"][0]["finish_reason"] == "stop" and final["usage"]["total_tokens"] > 0
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in got if c["choices"])
    sources = [c["event"]["data"] for c in got if c.get("event", {}).get("type") == "source"]
    statuses = [c["event"]["data"] for c in got if c.get("event", {}).get("type") == "status"]
    assert statuses and statuses[-1]["done"]
    supported = [c for c in answer["claims"] if c["status"] == "supported"]
    demoted = [c for c in answer["claims"] if c["status"] != "supported"]
    cited = [(x["quote"], x["path"]) for c in supported for x in c["citations"]]
    assert [(s["document"][0], s["source"]["name"]) for s in sources] == list(dict.fromkeys(cited))
    assert final["citations"] == [s["source"]["url"] for s in sources]
    annotations = [a for c in got if c["choices"] for a in c["choices"][0]["delta"].get("annotations", [])]
    assert [a["url_citation"]["url"] for a in annotations] == final["citations"]
    shown, _, tail = content.partition("<details>")
    for c in demoted:  # a demoted claim is never content: only in the collapsed section at the end
        assert " ".join(c["text"].split()) not in shown.split("**Sumber**")[0]
    if answer["outcome"] == "answer":
        claim_chunks = [c for c in got if c["choices"] and c["choices"][0]["delta"].get("annotations")]
        assert len(claim_chunks) <= len(supported) and supported
        for c in supported:
            assert " ".join(c["text"].split()) in shown
    else:
        assert "Tidak ada jawaban" in content or "No answer" in content
        assert not sources
    whole = chat(client, tokens, question).json()["saksi"]["answer"]
    assert [c["text"] for c in whole["claims"] if c["status"] == "supported"] == [c["text"] for c in supported]


def test_the_native_answer_streams_its_events_and_ends_with_the_answer(served):
    client, tokens, _ = served
    r = client.post("/v1/answer", headers=auth(tokens), json={"question": ANSWERED, "stream": True})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = []
    for block in r.text.strip().split("\n\n"):
        kind, data = block.split("\n", 1)
        assert kind.startswith("event: ") and data.startswith("data: ")
        events.append((kind[7:], json.loads(data[6:])))
    kinds = [k for k, _ in events]
    assert kinds[0] == "analysis" and "retrieval" in kinds and kinds[-1] == "done" and "refusal" not in kinds
    done = events[-1][1]
    answer = done["answer"]
    assert answer["outcome"] == "answer" and done["trace_id"] == answer["trace_id"] and done["withdrawn"] == []
    claims = [d["claim"] for k, d in events if k == "claim"]
    assert claims == [c for c in answer["claims"] if c["status"] == "supported"]
    assert [d["position"] for k, d in events if k == "claim"] == list(range(len(claims)))
    r = client.post("/v1/answer", headers=auth(tokens), json={"question": REFUSED, "stream": True})
    events = [(b.split("\n", 1)[0][7:], json.loads(b.split("\n", 1)[1][6:])) for b in r.text.strip().split("\n\n")]
    assert [k for k, _ in events][-2:] == ["refusal", "done"] and not [k for k, _ in events if k == "claim"]
    assert events[-2][1]["reason_code"] == events[-1][1]["answer"]["reason_code"] and events[-2][1]["nearest"]
    # admission is decided before the stream: a bad question is a typed error, not a stream
    r = client.post("/v1/answer", headers=auth(tokens), json={"question": "x" * 600, "stream": True})
    assert r.status_code == 422 and r.json()["error"]["type"] == "question_too_long"


def test_the_ask_page_streams_rendered_claims_then_the_answers_address(served):
    client, tokens, _ = served
    s = TestClient(client.app)
    s.headers["Origin"] = "http://testserver"
    assert s.post("/ui/signin", data={"key": tokens["reader"], "next": "/"}, follow_redirects=False).status_code == 303
    r = s.post("/ui/ask/stream", data={"question": ANSWERED, "collection": "default"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    blocks = [b.split("\n", 1) for b in r.text.strip().split("\n\n")]
    events = [(k[7:], json.loads(d[6:])) for k, d in blocks]
    claims = [d["html"] for k, d in events if k == "claim"]
    assert claims and all('class="claim supported live"' in h and "<blockquote>" in h for h in claims)
    kind, done = events[-1]
    assert kind == "done" and done["url"].startswith("/ui/answers/default/")
    assert s.get(done["url"]).status_code == 200
    # a question the service will not take: the ask page with its error, as the form without script gets it
    r = s.post("/ui/ask/stream", data={"question": " ", "collection": "default"})
    assert r.status_code == 422 and "text/html" in r.headers["content-type"]


def test_a_records_words_are_shown_as_written_never_as_markup():
    """A quote is Markdown text in a chat client: a leading number is not a list, and a tag an uploaded record holds
    is shown as text, not rendered by the client."""
    from serve.chat import quoted

    assert quoted("19. Contoh:  PT  Ilustrasi") == "19\\. Contoh: PT Ilustrasi"
    assert quoted('Tarif <img src=x onerror="alert(1)"> 10%') == 'Tarif &lt;img src=x onerror="alert(1)"> 10%'
    assert quoted("kurang dari < 5 persen") == "kurang dari < 5 persen"


@pytest.mark.parametrize("body, status, starts", [
    ({"messages": [{"role": "user", "content": ANSWERED}], "stream": "yes"}, 422, "stream:"),  # no coercion
    ({"messages": [{"role": "user", "content": [{"type": "text"}]}]}, 422, "messages[0].content:"),
    ({"messages": [{"role": "user", "content": ANSWERED}], "as_of": "2024-02-30"}, 422, "as_of:"),
    ({"messages": [{"role": "user", "content": "x" * 5000}]}, 422, "question:"),
    ({"messages": []}, 422, "messages:"),
    ({"model": "saksi:" + "a" * 70, "messages": [{"role": "user", "content": ANSWERED}]}, 404, "no model"),
])
def test_a_malformed_chat_request_is_a_typed_error_naming_what(served, body, status, starts):
    client, tokens, _ = served
    r = client.post("/v1/chat/completions", headers=auth(tokens), json={"model": "saksi", **body})
    assert r.status_code == status and r.json()["error"]["message"].startswith(starts), r.text
