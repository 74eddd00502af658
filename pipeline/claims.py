"""The structured claim schema every generator emits, and its parser.

An extractive generator and an LLM constrained by this JSON schema produce the same
shape. Parsing is strict (unknown keys are an error): output that does not fit is not
displayed, it becomes a refusal that says why.
"""
from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class CitationOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chunk_id: str = Field(description="id of a chunk from the context, exactly as given")
    quote: str = Field(min_length=1, description="exact words copied from that chunk")


class ClaimOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, description="one statement answering the question")
    citations: list[CitationOut] = Field(min_length=1)
    self_score: float | None = Field(None, ge=0, le=1, description="the generator's own confidence")


class GeneratorClaims(BaseModel):
    model_config = ConfigDict(extra="forbid")
    claims: list[ClaimOut]
    self_assessment: float | None = Field(None, ge=0, le=1)


def claim_json_schema() -> dict:
    """JSON Schema for constrained decoding and for documentation."""
    return GeneratorClaims.model_json_schema()


class ParseFailure(Exception):
    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def parse_claims(raw: str, finish_reason: str = "stop") -> GeneratorClaims:
    """Parse generator output; raise ParseFailure naming why it cannot be used."""
    if finish_reason == "length":
        raise ParseFailure("generator_output_truncated", "the generator stopped at its token limit")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ParseFailure("generator_output_invalid_json", str(e)) from None
    try:
        return GeneratorClaims.model_validate(data)
    except ValidationError as e:
        raise ParseFailure("generator_output_off_schema", str(e).splitlines()[0]) from None
