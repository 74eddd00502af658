"""Traces: everything a request did, written as JSON, readable back into the same objects.

A trace holds the route, queries, every candidate with each lane's score, what reached
the generator, its raw output, each gate's verdict, the confidence arithmetic, and the
decision with its reason — enough to re-run the gates (`saksi replay`) without any index
or model.
"""
from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from .errors import TraceError
from .gates import JudgeCall
from .types import (Candidate, Chunk, Conflict, GenerationOutput, GenerationRequest, PartOutcome, QueryPlan, Result,
                    Sufficiency, VerifiedClaim)

TRACE_VERSION = 1


@dataclass(frozen=True)
class RouteRecord:
    name: str
    required: tuple[str, ...]
    examples_satisfy: bool
    authority_weight: float
    freshness_weight: float


@dataclass(frozen=True)
class AttemptTrace:
    attempt: int
    query: QueryPlan
    candidates: tuple[Candidate, ...]          # fused, with lane scores; dropped ones marked
    reranked: tuple[str, ...]                  # chunk ids in rerank order
    context: tuple[str, ...]                   # chunk ids the generator read
    paragraphs: dict[str, str]                 # chunk id -> full paragraph the judge read
    generator_request: GenerationRequest | None
    generator_output: GenerationOutput | None
    parse_error: str | None
    parse_detail: str | None
    claims: tuple[VerifiedClaim, ...]
    judge_calls: tuple[JudgeCall, ...]
    sufficiency: Sufficiency
    ok: bool
    timings_ms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class PartTrace:
    index: int
    question: str
    topic: str
    route: RouteRecord
    attempts: tuple[AttemptTrace, ...]
    outcome: PartOutcome


@dataclass(frozen=True)
class Decision:
    """What replay must reproduce: the outcome and every claim's fate."""

    outcome: str
    reason_code: str | None
    claims: tuple[tuple[int, str, str, str | None, tuple[str, ...]], ...]  # (part, text, status, band, reasons)


@dataclass(frozen=True)
class Trace:
    trace_id: str
    version: int
    created_at: str
    saksi_version: str
    profile: str
    components: dict[str, str]
    question: str
    question_lang: str
    lang: str
    settings: dict[str, Any]                   # the verification settings in force
    parts: tuple[PartTrace, ...]
    conflicts: tuple[Conflict, ...]
    decision: Decision
    why: str
    timings_ms: dict[str, float] = field(default_factory=dict)
    named_documents: tuple[tuple[str, str | None], ...] = ()  # documents the question names → doc id or None
    scoped_to: tuple[str, ...] | None = None  # doc ids retrieval was limited to ("menurut PMK 98/2025, …")


_ADAPTER = TypeAdapter(Trace)


def new_trace_id() -> str:
    return uuid.uuid4().hex


def decision_of(result: Result) -> Decision:
    return Decision(
        outcome=result.outcome,
        reason_code=result.reason_code,
        claims=tuple((c.part, c.text, c.status, c.confidence.band if c.confidence else None, c.reasons)
                     for c in result.claims),
    )


def trace_schema() -> dict:
    schema = _ADAPTER.json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "saksi trace"
    return schema


def dump_trace(trace: Trace) -> dict:
    return _ADAPTER.dump_python(trace, mode="json")


def write_trace(trace: Trace, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{trace.trace_id}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(dump_trace(trace), ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path


def load_trace(path: Path) -> Trace:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TraceError(f"no trace at {path}") from None
    except (OSError, json.JSONDecodeError) as e:
        raise TraceError(f"{path} is not a readable trace: {e}") from None
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as e:
        raise TraceError(f"{path} does not match the trace schema: {str(e).splitlines()[0]} "
                         f"({e.error_count()} errors)") from None


def find_trace(ref: str, data_dir: Path) -> Path:
    """A trace path, or a trace id looked up in the data directory's traces/."""
    p = Path(ref)
    if p.exists():
        return p
    candidate = data_dir / "traces" / f"{ref}.json"
    if candidate.exists():
        return candidate
    raise TraceError(f"no trace {ref!r} (looked for the file and for {candidate})")


def context_chunks(attempt: AttemptTrace) -> dict[str, Chunk]:
    by_id = {c.chunk.chunk_id: c.chunk for c in attempt.candidates}
    return {cid: by_id[cid] for cid in attempt.context if cid in by_id}
