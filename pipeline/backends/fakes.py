"""Deterministic fakes for tests — named as fakes, never used by a profile.

- FakeHashEmbedder: hashes word tokens into a normalised vector; similar wording gives
  similar vectors, no model needed. `seconds_per_text` makes it as slow as a model would be
  (a job that must still be running when a test interrupts it); the vectors do not change.
- FakeScriptedGenerator: returns scripted raw outputs, including the adversarial ones a
  language model might produce (fabricated quotes, changed numbers, foreign citations).
- FakeScriptedJudge: returns scripted verdicts, or raises to simulate an outage.
"""
from __future__ import annotations

import hashlib
import json
import time
from typing import Callable, Sequence

import numpy as np

from ..analysis import raw_tokens
from ..types import GenerationOutput, GenerationRequest, JudgeInput, Verdict


class FakeHashEmbedder:
    name = "fake-hash"

    def __init__(self, dim: int = 64, seconds_per_text: float = 0.0):
        self.dim, self.seconds_per_text = dim, seconds_per_text

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for tok in raw_tokens(text):
            h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
            v[h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        n = np.linalg.norm(v)
        if n == 0:
            v[0] = 1.0
            n = 1.0
        return v / n

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if self.seconds_per_text:
            time.sleep(self.seconds_per_text * len(texts))  # as a model holds its worker while it computes
        return await self.embed_queries(texts)


Script = Callable[[GenerationRequest], "str | dict | GenerationOutput"]


class FakeScriptedGenerator:
    """Plays back scripted outputs in order (the last repeats), or calls a script function.

    A script returning a dict is serialised as claim JSON; a string is passed through raw
    (so malformed output can be scripted); a GenerationOutput sets finish_reason too.
    """

    name = "fake-scripted"

    def __init__(self, outputs: Sequence["str | dict | GenerationOutput"] | Script):
        self._outputs = outputs
        self.requests: list[GenerationRequest] = []

    async def generate(self, request: GenerationRequest) -> GenerationOutput:
        self.requests.append(request)
        if callable(self._outputs):
            out = self._outputs(request)
        else:
            out = self._outputs[min(len(self.requests) - 1, len(self._outputs) - 1)]
        if isinstance(out, GenerationOutput):
            return out
        raw = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
        return GenerationOutput(raw=raw, model=self.name)


class FakeScriptedJudge:
    """Returns `verdict(item)` for each item; `fail=True` simulates an unavailable judge."""

    name = "fake-judge"

    def __init__(self, verdict: Callable[[JudgeInput], Verdict] | None = None, fail: bool = False):
        self._verdict = verdict
        self._fail = fail

    async def judge(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        if self._fail:
            raise ConnectionError("fake judge: unavailable")
        return [self._verdict(it) if self._verdict else Verdict(None, None, self.name) for it in items]
