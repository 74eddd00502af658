"""Fakes of vLLM (it cannot be installed here): its output and parameter objects, a `vllm` module with what the
generator imports, and its online engine (`FakeAsyncEngine`), shared by the tests of the vLLM generator
(test_local_llm.py, test_async_generator.py) and bench/first_claim.py: named as fakes."""
from __future__ import annotations

import asyncio
import json
import types
from dataclasses import dataclass

ANSWER = json.dumps({"claims": [], "self_assessment": 0.1}, separators=(",", ":"))


@dataclass
class FakeCompletion:
    text: str
    finish_reason: str | None


@dataclass
class FakeRequestOutput:
    outputs: list[FakeCompletion]
    request_id: str = ""
    finished: bool = True


class FakeParams:
    """Stands in for vLLM's SamplingParams / StructuredOutputsParams / GuidedDecodingParams: keeps its keywords."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs


class FakeRequestOutputKind:
    CUMULATIVE = "cumulative"
    FINAL_ONLY = "final_only"


def fake_vllm_modules() -> tuple[types.ModuleType, types.ModuleType]:
    """A fake `vllm` package and its `vllm.sampling_params`, for sys.modules."""
    vllm = types.ModuleType("vllm")
    sampling = types.ModuleType("vllm.sampling_params")
    sampling.StructuredOutputsParams = type("FakeStructuredOutputsParams", (FakeParams,), {})
    sampling.RequestOutputKind = FakeRequestOutputKind
    vllm.SamplingParams = FakeParams
    vllm.sampling_params = sampling
    return vllm, sampling


class FakeAsyncEngine:
    """A fake of vLLM's AsyncLLM (generate / abort / model_config), for tests only.

    Each request streams `text` in pieces of `chars_per_token` characters, one every
    `token_delay` seconds, cut at the request's `max_tokens` pieces with finish_reason "length"
    (or ended with `finish` when given). `in_flight` holds the requests it is decoding;
    `max_in_flight` is the most it held at once (the batch)."""

    def __init__(self, text: str = ANSWER, token_delay: float = 0.02, chars_per_token: int = 4,
                 finish: str | None = None, max_model_len: int = 4096):
        self.text = text
        self.token_delay = token_delay
        self.chars_per_token = chars_per_token
        self.finish = finish
        self.model_config = types.SimpleNamespace(max_model_len=max_model_len)
        self.in_flight: set[str] = set()
        self.max_in_flight = 0
        self.requests: list[tuple[str, list[int], FakeParams]] = []
        self.finished: list[str] = []
        self.aborted: list[str] = []
        self.loops: set[int] = set()
        self.shut_down = False

    async def generate(self, prompt, sampling_params, request_id):
        assert request_id not in self.in_flight and request_id not in self.finished, "request ids must be unique"
        self.loops.add(id(asyncio.get_running_loop()))
        self.requests.append((request_id, list(prompt["prompt_token_ids"]), sampling_params))
        self.in_flight.add(request_id)
        self.max_in_flight = max(self.max_in_flight, len(self.in_flight))
        params = sampling_params.kwargs
        pieces = [self.text[i:i + self.chars_per_token] for i in range(0, len(self.text), self.chars_per_token)]
        finish = self.finish or ("length" if len(pieces) > params["max_tokens"] else "stop")
        pieces = pieces[:params["max_tokens"]]
        final_only = params.get("output_kind") == FakeRequestOutputKind.FINAL_ONLY
        text = ""
        for piece in pieces:
            await asyncio.sleep(self.token_delay)
            if request_id not in self.in_flight:  # aborted: stop streaming it
                return
            text += piece
            if not final_only:
                yield FakeRequestOutput([FakeCompletion(text, None)], request_id, finished=False)
        self.in_flight.discard(request_id)
        self.finished.append(request_id)
        yield FakeRequestOutput([FakeCompletion(text, finish)], request_id, finished=True)

    async def abort(self, request_id):
        self.aborted.append(request_id)
        self.in_flight.discard(request_id)

    def shutdown(self):
        self.shut_down = True


def quoted_answer(trace, claims: int = 4) -> str:
    """A realistic engine answer for the question a trace answered: one claim per quote the trace's supported
    claims cite (each claim its quote's own words, so every gate can pass), `claims` of them, as a constrained decoder
    writes it (no whitespace). For the streaming tests and bench/first_claim.py."""
    quotes = []
    for part in trace.parts:
        for attempt in part.attempts:
            for c in attempt.claims:
                if c.status == "supported":
                    quotes += [(x.chunk_id, x.quote) for x in c.citations if (x.chunk_id, x.quote) not in quotes]
    if len(quotes) < claims:
        raise ValueError(f"the trace's supported claims cite {len(quotes)} quotes; {claims} are needed")
    out = [{"text": q, "citations": [{"chunk_id": cid, "quote": q}], "self_score": 0.9} for cid, q in quotes[:claims]]
    return json.dumps({"claims": out, "self_assessment": 0.9}, ensure_ascii=False, separators=(",", ":"))
