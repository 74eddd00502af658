"""Fakes of vLLM's output and parameter objects (vLLM cannot be installed here), shared by the
tests of the vLLM generator (test_local_llm.py, test_async_generator.py): named as fakes."""
from __future__ import annotations

from dataclasses import dataclass


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
