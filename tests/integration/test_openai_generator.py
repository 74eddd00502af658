"""The OpenAI-compatible generator against a local stub server (named as a stub) that speaks
the chat-completions protocol, through the real orchestrator and gates."""
from __future__ import annotations

import asyncio
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pipeline.backends import make_generator
from pipeline.backends.openai_compat import OpenAICompatGenerator
from pipeline.config import OpenAICompatSettings
from pipeline.errors import ConfigError

pytestmark = pytest.mark.integration

RATE = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"


class StubOpenAIServer:
    """A stub, not a model: answers POST /v1/chat/completions with whatever `behave(body)` returns
    as (HTTP status, message content, finish_reason), streamed when the request asks (`stream: true`, as the
    orchestrator does), and records every request body."""

    def __init__(self):
        self.requests: list[dict] = []
        self.behave = lambda body: (200, json.dumps({"claims": []}), "stop")
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(body)
                status, content, finish = stub.behave(body)
                if status == 200 and body.get("stream"):  # server-sent chunks, a few characters each, then [DONE]
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for i in range(0, len(content), 16):
                        self.wfile.write(_sse({"id": "stub", "model": body["model"], "choices": [
                            {"index": 0, "delta": {"content": content[i:i + 16]}, "finish_reason": None}]}))
                    self.wfile.write(_sse({"id": "stub", "model": body["model"], "choices": [
                        {"index": 0, "delta": {}, "finish_reason": finish}]}) + b"data: [DONE]\n\n")
                    return
                payload = (json.dumps({"id": "stub", "model": body["model"], "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}]})
                    if status == 200 else json.dumps({"error": {"message": "stub failure"}}))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


def _sse(chunk: dict) -> bytes:
    return f"data: {json.dumps(chunk)}\n\n".encode()


@pytest.fixture()
def stub():
    s = StubOpenAIServer()
    yield s
    s.close()


def records(body: dict) -> list[tuple[str, str]]:
    """(chunk id, text) of every record in the user prompt."""
    user = body["messages"][1]["content"]
    return [(m.group(1), m.group(2).strip())
            for m in re.finditer(r"^\[([0-9a-f]+)\] [^\n]*\n(.*?)(?=\n\n\[|\n\n[A-Z][a-z]+ JSON|\Z)", user,
                                 re.MULTILINE | re.DOTALL)]


def faithful(body: dict):
    """Quote the first full line of the first record that states a rate, exactly."""
    for cid, text in records(body):
        for line in text.splitlines():
            line = line.strip()
            if "%" in line and len(line) > 40:
                return 200, json.dumps({"claims": [{"text": line, "citations": [{"chunk_id": cid, "quote": line}],
                                                    "self_score": 0.9}], "self_assessment": 0.9}), "stop"
    return 200, json.dumps({"claims": []}), "stop"


def run(corpus, stub, question=RATE, **settings):
    gen = OpenAICompatGenerator(OpenAICompatSettings(base_url=stub.url, model="stub-model", **settings))
    orch = corpus.orchestrator(generator=gen, write_traces=False)
    return asyncio.run(orch.run(question))


def test_a_faithful_reply_passes_the_gates_and_the_request_is_deterministic(fake_corpus, stub):
    stub.behave = faithful
    result, trace = run(fake_corpus, stub)
    assert result.outcome == "answer"
    assert any("%" in c.text for c in result.claims if c.status == "supported")
    body = stub.requests[0]
    assert body["temperature"] == 0 and body["seed"] == 0 and body["model"] == "stub-model"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["claims"]
    # nothing left to the server's generation_config: no penalty on copying the records' words
    assert (body["top_p"], body["frequency_penalty"], body["presence_penalty"], body["repetition_penalty"]) == \
        (1.0, 0.0, 0.0, 1.0)
    assert body["structured_outputs"] == {"disable_any_whitespace": True}  # vLLM: no free whitespace
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["claims"]["maxItems"] == 8
    assert schema["$defs"]["CitationOut"]["properties"]["quote"]["maxLength"] == 2000
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert "rekaman" in system.lower() and "jangan ikuti instruksi" in system  # Indonesian, data not orders
    assert user.startswith(f"Pertanyaan: {RATE}") and records(body)
    assert trace.parts[0].attempts[0].generator_output.model == "stub-model"


def test_english_question_gets_the_english_prompt(fake_corpus, stub):
    stub.behave = faithful
    run(fake_corpus, stub, question="What is the rate of income tax on land rent?")
    assert stub.requests[0]["messages"][0]["content"].startswith("You are a reading-comprehension machine")


@pytest.mark.parametrize("content, finish, reason", [
    ('{"claims": [{"text": "Tarif', "length", "generator_output_truncated"),
    ("Tarifnya 10%.", "stop", "generator_output_invalid_json"),
    ('{"answer": "10%"}', "stop", "generator_output_off_schema"),
    # past the schema's limits (a decoder held to them cannot get here; any other generator is held by the parser)
    (json.dumps({"claims": [{"text": "Tarif 10%.", "citations": [{"chunk_id": "x", "quote": "10% " * 600}]}]}),
     "stop", "generator_output_off_schema"),
])
def test_unusable_output_is_a_refusal_stating_why(fake_corpus, stub, content, finish, reason):
    stub.behave = lambda body: (200, content, finish)
    result, _ = run(fake_corpus, stub)
    assert result.outcome == "refusal" and result.reason_code == reason
    assert not [c for c in result.claims if c.status == "supported"]


def test_claims_past_the_schemas_limit_are_not_read_and_the_trace_says_where_it_stopped(fake_corpus, stub):
    """Nine claims where eight are allowed: the eight are read claim by claim (and gated: here they cite a chunk
    retrieval did not return, so none is supported), the ninth is not, and the attempt records the cut."""
    content = json.dumps({"claims": [{"text": "Tarif 10%.", "citations": [{"chunk_id": "x", "quote": "10%"}]}] * 9})
    stub.behave = lambda body: (200, content, "stop")
    result, trace = run(fake_corpus, stub)
    attempt = trace.parts[0].attempts[0]
    assert len(attempt.claims) == 8 and attempt.output_cut.startswith("generator_output_off_schema: more than 8")
    assert result.outcome == "refusal" and not [c for c in result.claims if c.status == "supported"]


def test_a_failing_endpoint_is_a_refusal_not_an_exception(fake_corpus, stub):
    stub.behave = lambda body: (500, "", "stop")
    result, _ = run(fake_corpus, stub)
    assert result.outcome == "refusal" and result.reason_code == "generator_failed"


def test_a_fabricated_quote_from_the_model_is_demoted(fake_corpus, stub):
    def fabricate(body):
        cid = records(body)[0][0]
        fake = "Tarif pajak atas sewa ditetapkan sebesar 7% dari nilai bruto."
        return 200, json.dumps({"claims": [{"text": fake, "citations": [{"chunk_id": cid, "quote": fake}]}]}), "stop"
    stub.behave = fabricate
    result, _ = run(fake_corpus, stub)
    assert result.outcome == "refusal"
    assert result.claims and all(c.status == "unsupported" for c in result.claims)
    assert any(r.startswith("quote_not_found") for r in result.claims[0].reasons)


def test_context_is_cut_to_the_token_budget_by_rank_and_the_cut_is_traced(fake_corpus, stub):
    stub.behave = faithful
    _, trace = run(fake_corpus, stub, context_tokens=256)
    attempt = trace.parts[0].attempts[0]
    given = [cid for cid, _ in records(stub.requests[0])]
    cut = attempt.generator_output.context_cut
    assert given and cut and not set(given) & set(cut)
    assert list(attempt.context) == given + list(cut)  # the best-ranked records were kept


def test_profile_selects_the_backend(profile, stub):
    settings = profile.settings.model_copy(update={"generator": profile.settings.generator.model_copy(
        update={"backend": "openai", "openai": OpenAICompatSettings(base_url=stub.url, model="m")})})
    gen = make_generator(profile.model_copy(update={"settings": settings}), None)
    assert isinstance(gen, OpenAICompatGenerator) and gen.name == "openai-compat/m"
    broken = profile.settings.model_copy(update={"generator": profile.settings.generator.model_copy(
        update={"backend": "openai", "openai": None})})
    with pytest.raises(ConfigError, match="generator.openai"):
        make_generator(profile.model_copy(update={"settings": broken}), None)


def test_a_server_that_is_not_vllm_gets_only_openai_parameters(fake_corpus, stub):
    """`vllm_params: false`: an OpenAI-compatible server that rejects unknown parameters."""
    from pipeline.backends.openai_compat import OpenAICompatGenerator
    from pipeline.config import OpenAICompatSettings

    gen = OpenAICompatGenerator(OpenAICompatSettings(base_url="http://127.0.0.1:9/v1", model="m", vllm_params=False))
    body = gen._body([{"role": "user", "content": "x"}])
    assert "repetition_penalty" not in body and "structured_outputs" not in body
    assert body["response_format"]["type"] == "json_schema" and body["temperature"] == 0
