"""VLLMGenerator on vLLM's online engine (AsyncLLM): batching, timeouts, cancellation, truncation.

vLLM cannot run here (no GPU, not installed). The engine is FakeAsyncEngine, a test double of
`vllm.v1.engine.async_llm.AsyncLLM`: it streams each request's answer a few characters at a time
with asyncio delays, keeps a request in flight until it finishes or is aborted (it does NOT abort
on its own when its consumer goes away, so these tests prove that the generator aborts), and
records how many requests it held at once. `vllm.SamplingParams` and friends come from a fake
`vllm` module (fake_vllm). The generator's own code — the tiny model's real tokenizer and chat
template, prompt fitting, the engine loop, request ids, timeouts and aborts — runs for real, and
its output goes to the real parser and orchestrator.
"""
from __future__ import annotations

import asyncio
import json
import sys
import time

import pytest

from pipeline.backends.local_llm import VLLMGenerator, vllm_engine_args
from pipeline.claims import ParseFailure, claim_json_schema, parse_claims
from pipeline.config import LocalLLMSettings
from pipeline.errors import GenerationError
from pipeline.types import ContextItem, GenerationOutput, GenerationRequest

from .fake_vllm import ANSWER, FakeAsyncEngine, FakeRequestOutputKind, fake_vllm_modules

RATE = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"


@pytest.fixture
def fake_vllm(monkeypatch):
    """A fake `vllm` package with what VLLMGenerator imports besides the engine."""
    vllm, sampling = fake_vllm_modules()
    monkeypatch.setitem(sys.modules, "vllm", vllm)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sampling)
    return vllm


def record(i: int) -> ContextItem:
    return ContextItem(chunk_id=f"c{i}", document="PMK 34 tahun 2017", location=f"Pasal {i}",
                       text="pajak penghasilan atas sewa tanah dan bangunan adalah sebesar 10 persen",
                       is_example=False, lang="id", retrieval_score=1.0 - i / 10)


def request(question: str = RATE) -> GenerationRequest:
    return GenerationRequest(question=question, lang="id", context=tuple(record(i) for i in range(3)))


def generator(model_dir, engine: FakeAsyncEngine, **settings) -> VLLMGenerator:
    seen = []

    def factory(s, path):
        seen.append((s, path))
        return engine

    gen = VLLMGenerator(LocalLLMSettings(model=str(model_dir), **settings), engine_factory=factory)
    assert seen == [(gen.settings, str(model_dir))]
    return gen


async def until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


def test_32_concurrent_questions_are_batched_by_the_engine_and_all_answered(fake_vllm, causal_lm_dir):
    engine = FakeAsyncEngine(token_delay=0.05)  # ~ 1 s of streaming per answer
    gen = generator(causal_lm_dir, engine, max_tokens=256, seed=3)

    async def ask_all():
        return await asyncio.gather(*(gen.generate(request(f"{RATE} ({i})")) for i in range(32)))

    try:
        t = time.monotonic()
        outputs = asyncio.run(ask_all())
        elapsed = time.monotonic() - t
    finally:
        gen.close()
    assert len(outputs) == 32 and all(isinstance(o, GenerationOutput) for o in outputs)
    assert all(o.raw == ANSWER and o.finish_reason == "stop" and o.model == gen.name for o in outputs)
    assert all(parse_claims(o.raw, o.finish_reason).claims == [] for o in outputs)
    assert len({rid for rid, _, _ in engine.requests}) == 32 and len(engine.finished) == 32
    assert engine.max_in_flight == 32, f"the engine held at most {engine.max_in_flight} requests at once"
    assert elapsed < 32 * 1.0 / 2  # one at a time would take ~32 s
    assert not engine.in_flight and not engine.aborted and engine.shut_down
    # every request asked for the same explicit, constrained, greedy decoding
    for _, ids, params in engine.requests:
        kw = params.kwargs
        assert (kw["temperature"], kw["seed"], kw["max_tokens"], kw["repetition_penalty"]) == (0.0, 3, 256, 1.0)
        assert kw["structured_outputs"].kwargs == {"json": claim_json_schema(), "disable_any_whitespace": True}
        assert kw["output_kind"] == FakeRequestOutputKind.FINAL_ONLY
        assert ids  # the chat-templated prompt, as token ids


def test_the_engine_keeps_its_own_loop_across_callers_loops(fake_vllm, causal_lm_dir):
    """The CLI and eval call asyncio.run more than once; AsyncLLM stays on one loop."""
    engine = FakeAsyncEngine(token_delay=0.001)
    gen = generator(causal_lm_dir, engine)
    try:
        for _ in range(2):
            assert asyncio.run(gen.generate(request())).raw == ANSWER
    finally:
        gen.close()
    assert len(engine.loops) == 1 and len(engine.finished) == 2


def test_a_request_past_its_timeout_is_aborted_and_a_generation_error(fake_vllm, causal_lm_dir):
    engine = FakeAsyncEngine(token_delay=0.05)  # ~ 1 s, against a 0.2 s timeout
    gen = generator(causal_lm_dir, engine, request_timeout_s=0.2)
    try:
        t = time.monotonic()
        with pytest.raises(GenerationError, match="did not finish within 0.2 s.*aborted"):
            asyncio.run(gen.generate(request()))
        assert time.monotonic() - t < 1.0
        (rid, _, _), = engine.requests
        assert engine.aborted == [rid] and not engine.in_flight and not engine.finished  # the slot is free
        engine.token_delay = 0.001  # the engine answers the next request
        assert asyncio.run(gen.generate(request())).raw == ANSWER
        assert not engine.in_flight and len(engine.aborted) == 1
    finally:
        gen.close()


def test_a_timed_out_generation_is_a_refusal_through_the_orchestrator(fake_vllm, causal_lm_dir, fake_corpus):
    engine = FakeAsyncEngine(token_delay=0.05)
    gen = generator(causal_lm_dir, engine, request_timeout_s=0.1)
    try:
        result, trace = asyncio.run(fake_corpus.orchestrator(generator=gen, write_traces=False).run(RATE))
    finally:
        gen.close()
    assert result.outcome == "refusal"
    attempts = trace.parts[0].attempts
    assert attempts and all(a.failure == "generator_failed" and "aborted" in a.failure_detail for a in attempts)
    assert len(engine.aborted) == len(attempts) and not engine.in_flight


def test_a_cancelled_call_aborts_its_request(fake_vllm, causal_lm_dir):
    engine = FakeAsyncEngine(token_delay=0.05)
    gen = generator(causal_lm_dir, engine)

    async def cancel_one():
        task = asyncio.create_task(gen.generate(request()))
        await until(lambda: bool(engine.in_flight))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await until(lambda: bool(engine.aborted))  # the abort runs on the engine's loop
        return task

    try:
        asyncio.run(cancel_one())
    finally:
        gen.close()
    (rid, _, _), = engine.requests
    assert engine.aborted == [rid] and not engine.in_flight and not engine.finished


def test_an_answer_cut_at_max_tokens_is_a_truncation_refusal(fake_vllm, causal_lm_dir, fake_corpus):
    long = json.dumps({"claims": [{"text": "Tarif " * 50, "citations": [{"chunk_id": "x", "quote": "y"}]}]})
    engine = FakeAsyncEngine(text=long, token_delay=0.0)
    gen = generator(causal_lm_dir, engine, max_tokens=16)
    try:
        out = asyncio.run(gen.generate(request()))
        assert out.finish_reason == "length" and out.raw == long[:16 * 4]
        with pytest.raises(ParseFailure) as e:
            parse_claims(out.raw, out.finish_reason)
        assert e.value.reason == "generator_output_truncated"
        engine.finish = "length"  # the engine says so even where the text would parse
        engine.text = ANSWER
        result, trace = asyncio.run(fake_corpus.orchestrator(generator=gen, write_traces=False).run(RATE))
    finally:
        gen.close()
    assert result.outcome == "refusal" and result.reason_code == "generator_output_truncated"
    assert trace.parts[0].attempts[0].generator_output.finish_reason == "length"


def test_engine_args_come_from_the_settings():
    s = LocalLLMSettings(model="m", dtype="bfloat16", max_model_len=2048, gpu_memory_utilization=0.6,
                         tensor_parallel_size=2, seed=5)
    base = {"model": "/w/m", "seed": 5, "dtype": "bfloat16", "max_model_len": 2048, "gpu_memory_utilization": 0.6,
            "tensor_parallel_size": 2}
    assert vllm_engine_args(s, "/w/m") == base
    assert vllm_engine_args(s.model_copy(update={"max_num_seqs": 64}), "/w/m") == {**base, "max_num_seqs": 64}


def test_the_gpu_profile_aborts_before_the_serve_deadline_and_batches_what_serve_admits():
    from pipeline.config import load_profile
    from serve.config import load_serve_config

    local = load_profile("gpu").settings.generator.local
    serve = load_serve_config("gpu")
    assert local.request_timeout_s < serve.runtime.request_timeout_s
    assert local.max_num_seqs >= serve.deployments["Generator"].max_ongoing_requests


def test_the_stream_hands_on_each_step_and_ends_with_the_output(fake_vllm, causal_lm_dir):
    text = json.dumps({"claims": [{"text": "Tarif 10%.", "citations": [{"chunk_id": "c0", "quote": "10 persen"}]}]})
    engine = FakeAsyncEngine(text=text, token_delay=0.001, chars_per_token=3)
    gen = generator(causal_lm_dir, engine)

    async def collect():
        return [item async for item in gen.stream(request())]
    try:
        items = asyncio.run(collect())
    finally:
        gen.close()
    pieces, out = items[:-1], items[-1]
    assert len(pieces) > 10 and "".join(pieces) == out.raw == text and out.finish_reason == "stop"
    assert engine.requests[0][2].kwargs["output_kind"] == FakeRequestOutputKind.CUMULATIVE


def test_a_listener_that_goes_away_aborts_the_streamed_request(fake_vllm, causal_lm_dir):
    engine = FakeAsyncEngine(text="x" * 400, token_delay=0.01, chars_per_token=1)
    gen = generator(causal_lm_dir, engine)

    async def two_pieces():
        stream = gen.stream(request())
        got = [await stream.__anext__(), await stream.__anext__()]
        await stream.aclose()  # the client went away
        await until(lambda: engine.aborted)
        return got
    try:
        assert len(asyncio.run(two_pieces())) == 2
    finally:
        gen.close()
    assert engine.aborted and not engine.finished


def test_the_first_claim_is_shown_while_the_engine_is_still_writing(fake_vllm, causal_lm_dir, lite_corpus):
    """A 4-claim answer streamed by the engine: the first claim passes its gates and is released while the engine
    is still decoding the rest (bench/first_claim.py measures how much sooner)."""
    from .fake_vllm import quoted_answer

    _, trace = asyncio.run(lite_corpus.orchestrator(write_traces=False).run(RATE))
    engine = FakeAsyncEngine(text=quoted_answer(trace), token_delay=0.002, chars_per_token=4)
    gen = generator(causal_lm_dir, engine)
    seen = []

    def emit(kind, data):
        if kind == "claim":
            seen.append((data["claim"].status, len(engine.finished), len(engine.in_flight)))
    try:
        result, _ = asyncio.run(lite_corpus.orchestrator(generator=gen, write_traces=False).run(RATE, emit=emit))
    finally:
        gen.close()
    assert result.outcome == "answer" and len([c for c in result.claims if c.status == "supported"]) == 4
    assert len(seen) == 4 and seen[0] == ("supported", 0, 1)  # nothing finished, the request still decoding
