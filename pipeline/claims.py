"""The structured claim schema every generator emits, and its parser.

An extractive generator and an LLM constrained by this JSON schema produce the same
shape. Parsing is strict (unknown keys are an error): output that does not fit is not
displayed. It is read claim by claim (`ClaimReader`), as a streaming generator writes it: each claim that
closes complete and valid stands on its own; what comes after the point the output stopped fitting (cut
off at the token limit, malformed, off-schema) is not displayed, and output with no complete claim before
that point becomes a refusal that says why.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

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


TRUNCATED = "generator_output_truncated"
INVALID_JSON = "generator_output_invalid_json"
OFF_SCHEMA = "generator_output_off_schema"
GENERATOR_FAILED = "generator_failed"


@dataclass(frozen=True)
class ParsedClaims:
    """What a generator's output says: its claims, each complete and valid on its own, in order; the self-assessment
    (None when the output never reached it); and `cut`, what stopped the output after its last complete claim (None:
    the whole output fits the schema)."""

    claims: list[ClaimOut]
    self_assessment: float | None = None
    cut: ParseFailure | None = None


class ClaimReader:
    """Reads the claim JSON as it is written, a piece at a time, and hands out each claim as soon as its object
    closes, validated on its own (`feed`); `finish` then reads the whole output. The same reader parses a complete
    output (`parse_claims`), so a claim verified while the generator still writes is the claim the finished output
    holds, and the decision over a streamed output is the decision over the same text given at once.

    A claim stands when its object closed and fits the schema, whatever comes after it: output cut off at the token
    limit, malformed, or off-schema after the last complete claim costs the claims after that point only, and is
    recorded as the output's `cut`. Output with no complete claim before such a point is a ParseFailure, a refusal
    saying why (as ever)."""

    def __init__(self):
        self.text = ""
        self.claims: list[ClaimOut] = []
        self._pos = 0            # scanned up to here
        self._depth = 0          # nesting of objects and arrays
        self._in_string = self._escape = False
        self._string_start = -1
        self._last_key = ""      # the last string closed at depth 1: the key of the value that follows
        self._in_claims = False  # inside the top-level "claims" array
        self._claim_start = -1
        self.failure: ParseFailure | None = None  # the first point the output stopped fitting the schema

    def feed(self, piece: str) -> list[ClaimOut]:
        """The claims whose objects `piece` closed (none once the output has stopped fitting the schema)."""
        self.text += piece
        before = len(self.claims)
        text = self.text
        while self._pos < len(text) and self.failure is None:
            ch = text[self._pos]
            if self._in_string:
                if self._escape:
                    self._escape = False
                elif ch == "\\":
                    self._escape = True
                elif ch == '"':
                    self._in_string = False
                    if self._depth == 1:
                        self._last_key = text[self._string_start + 1:self._pos]
            elif ch == '"':
                self._in_string, self._string_start = True, self._pos
            elif ch in "{[":
                if self._depth == 0 and ch != "{":
                    self._fail(OFF_SCHEMA, "the output is not a JSON object")
                    break
                self._depth += 1
                if self._depth == 2 and ch == "[" and self._last_key == "claims":
                    self._in_claims = True
                elif self._depth == 3 and self._in_claims and ch == "{":
                    self._claim_start = self._pos
            elif ch in "}]":
                if self._depth == 3 and self._in_claims and ch == "}" and self._claim_start >= 0:
                    claim = self._claim(text[self._claim_start:self._pos + 1])
                    self._claim_start = -1
                    if claim is None:
                        break
                    self.claims.append(claim)
                self._depth -= 1
                if self._depth == 1:
                    self._in_claims = False
                if self._depth < 0:
                    self._fail(INVALID_JSON, f"unbalanced {ch!r} at character {self._pos}")
                    break
            elif self._depth == 0 and not ch.isspace():
                self._fail(INVALID_JSON, f"unexpected {ch!r} at character {self._pos}")
                break
            self._pos += 1
        return self.claims[before:]

    def _claim(self, text: str) -> ClaimOut | None:
        if len(self.claims) >= MAX_CLAIMS:
            self._fail(OFF_SCHEMA, f"more than {MAX_CLAIMS} claims")
            return None
        try:
            return ClaimOut.model_validate(json.loads(text))
        except json.JSONDecodeError as e:
            self._fail(INVALID_JSON, f"claim {len(self.claims) + 1}: {e}")
        except ValidationError as e:
            self._fail(OFF_SCHEMA, f"claim {len(self.claims) + 1}: {str(e).splitlines()[0]}")
        return None

    def _fail(self, reason: str, detail: str) -> None:
        self.failure = ParseFailure(reason, detail)

    def finish(self, finish_reason: str = "stop") -> ParsedClaims:
        """The whole output read: its claims and self-assessment, or ParseFailure when no claim stands."""
        whole = None
        if self.failure is None:
            if finish_reason == "length":
                self._fail(TRUNCATED, "the generator stopped at its token limit")
            elif finish_reason == "error":  # a streamed output whose generator failed while writing it
                self._fail(GENERATOR_FAILED, "the generator failed while writing its output")
            else:
                try:
                    whole = GeneratorClaims.model_validate(json.loads(self.text))
                except json.JSONDecodeError as e:
                    self._fail(INVALID_JSON, str(e))
                except ValidationError as e:
                    self._fail(OFF_SCHEMA, str(e).splitlines()[0])
        if whole is not None:  # the envelope fits too (its claims are those read one by one)
            return ParsedClaims(list(self.claims), whole.self_assessment)
        if not self.claims:
            raise self.failure
        return ParsedClaims(list(self.claims), None, self.failure)


def parse_claims(raw: str, finish_reason: str = "stop") -> ParsedClaims:
    """Parse generator output as `ClaimReader` reads it streamed; raise ParseFailure naming why it cannot be used when
    no claim in it stands."""
    reader = ClaimReader()
    reader.feed(raw)
    return reader.finish(finish_reason)
