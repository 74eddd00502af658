"""The structured claim schema every generator emits, and its parser.

An extractive generator and an LLM constrained by this JSON schema produce the same
shape. Parsing is strict (unknown keys are an error): output that does not fit is not
displayed, it becomes a refusal that says why.
"""
from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field, ValidationError


# Limits a constrained decoder is held to, so no output can run on until max_tokens (a chunk is at
# most ~1,500 characters: chunking.max_chars; a quote is a slice of one chunk). The parser holds
# every generator to them: past one, the output is off-schema, a refusal saying so.
MAX_CLAIMS = 8
MAX_CITATIONS = 4
MAX_TEXT_CHARS = 2000
MAX_CHUNK_ID_CHARS = 64


class CitationOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chunk_id: str = Field(min_length=1, max_length=MAX_CHUNK_ID_CHARS,
                          description="id of a chunk from the context, exactly as given")
    quote: str = Field(min_length=1, max_length=MAX_TEXT_CHARS, description="exact words copied from that chunk")


class ClaimOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS, description="one statement answering the question")
    citations: list[CitationOut] = Field(min_length=1, max_length=MAX_CITATIONS)
    self_score: float | None = Field(None, ge=0, le=1, description="the generator's own confidence")


class GeneratorClaims(BaseModel):
    model_config = ConfigDict(extra="forbid")
    claims: list[ClaimOut] = Field(max_length=MAX_CLAIMS)
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
