"""Traces: everything a request did, written as JSON, readable back into the same objects.

A trace holds the route, queries, every candidate with each lane's score, what reached
the generator, its raw output, each gate's verdict, the confidence arithmetic, and the
decision with its reason — enough to re-run the gates (`saksi replay`) without any index
or model.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, field_serializer, field_validator, \
    model_serializer

from .config import ConfidenceSettings, ConflictSettings, JudgeSettings, Profile, Route
from .errors import TraceError
from .types import (Candidate, Chunk, Conflict, DocumentStatus, GenerationOutput, GenerationRequest, JudgeCall,
                    PartOutcome, QueryPlan, Result, Sufficiency, VerifiedClaim)

log = logging.getLogger(__name__)

TRACE_VERSION = 2  # 2: the agreed field names (see `upgrade`), `referenced` apart from `reranked`


@dataclass(frozen=True)
class RouteRecord:
    name: str
    required: tuple[str, ...]
    examples_satisfy: bool
    authority_weight: float
    freshness_weight: float

    @classmethod
    def of(cls, route: Route) -> "RouteRecord":
        return cls(route.name, tuple(route.required), route.examples_satisfy, route.authority_weight,
                   route.freshness_weight)

    def as_route(self) -> Route:
        """The route as the decision needs it (replay has no route table)."""
        return Route(name=self.name, required=self.required, examples_satisfy=self.examples_satisfy,
                     authority_weight=self.authority_weight, freshness_weight=self.freshness_weight)


@dataclass(frozen=True)
class AttemptTrace:
    attempt: int
    query: QueryPlan
    candidates: tuple[Candidate, ...]          # fused, with lane scores; dropped ones marked; referenced ones added
    reranked: tuple[str, ...]                  # chunk ids the reranker ordered, best first (and nothing else)
    context: tuple[str, ...]                   # chunk ids the generator read
    paragraphs: dict[str, str]                 # chunk id -> full paragraph the judge read
    generator_request: GenerationRequest | None
    generator_output: GenerationOutput | None
    failure: str | None                        # why the generator's output could not be verified at all:
    failure_detail: str | None                 # generator_failed, generator_output_truncated / _invalid_json / _off_schema
    claims: tuple[VerifiedClaim, ...]
    judge_calls: tuple[JudgeCall, ...]
    sufficiency: Sufficiency
    ok: bool                                   # the attempt answers its part (decision.AttemptSummary.ok)
    timings_ms: dict[str, float] = field(default_factory=dict)
    referenced: tuple[str, ...] = ()           # chunk ids added to the context because its cross-references
                                               # point at them (marked `referenced_from`; never reranked)
    status: tuple[DocumentStatus, ...] = ()    # what decided each context document's legal standing (status.py)
    output_cut: str | None = None              # what stopped the output after its last complete claim (cut off,
                                               # malformed, the generator failed while writing): its claims stand


@dataclass(frozen=True)
class PartTrace:
    index: int
    question: str
    topic: str
    route: RouteRecord
    attempts: tuple[AttemptTrace, ...]
    outcome: PartOutcome


class TraceSettings(BaseModel):
    """The settings in force when the answer was decided, as its trace records them: what replay re-runs the gates
    and the decision with (`settings` below, `of` for the live path). A trace refused before any attempt finished
    records only its deadline. Written without the fields it does not have, and the judge without `fp16` (which the
    judge never used; traces that carry it load as before)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: JudgeSettings | None = None
    confidence: ConfidenceSettings | None = None
    conflicts: ConflictSettings | None = None
    nearest_records: int | None = None
    as_of: dict[str, Any] | None = None  # the answer's date and where it came from (orchestrator._as_of)
    timeout_s: float | None = None

    @classmethod
    def of(cls, profile: Profile, as_of: dict[str, Any] | None) -> "TraceSettings":
        s = profile.settings
        return cls(judge=s.judge, confidence=s.confidence, conflicts=s.conflicts,
                   nearest_records=s.nearest_records, as_of=as_of)

    @field_validator("judge", mode="before")
    @classmethod
    def _without_fp16(cls, v: Any) -> Any:
        return {k: x for k, x in v.items() if k != "fp16"} if isinstance(v, dict) else v

    @field_serializer("judge")
    def _judge(self, judge: JudgeSettings | None) -> dict | None:
        return None if judge is None else judge.model_dump(mode="json", exclude={"fp16"})

    @model_serializer(mode="wrap")
    def _present(self, handler) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if v is not None}


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
    settings: TraceSettings                    # the verification settings in force
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


# A paragraph the judge read can be a whole long document (an upload without structure): kept once, by its
# SHA-256, in `<traces>/paragraphs/`, and named from the trace file (`paragraph_refs`), so a trace stays small
# whatever the corpus and many traces share one copy. The trace file, whose hash the audit log holds, holds the
# paragraph's hash: what it is loaded with is what was read.
PARAGRAPHS = "paragraphs"
INLINE_PARAGRAPH_CHARS = 2_000


def write_trace(trace: Trace, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{trace.trace_id}.json"
    data = dump_trace(trace)
    for part in data.get("parts", ()):
        for attempt in part.get("attempts", ()):
            refs = {}
            for cid, text in list(attempt.get("paragraphs", {}).items()):
                if len(text) > INLINE_PARAGRAPH_CHARS:
                    refs[cid] = _keep_paragraph(directory / PARAGRAPHS, text)
                    del attempt["paragraphs"][cid]
            if refs:
                attempt["paragraph_refs"] = refs
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path


def _keep_paragraph(folder: Path, text: str) -> str:
    """The paragraph's SHA-256, its file written once (or its time refreshed: trace pruning keeps what a kept
    trace refers to)."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    blob = folder / f"{digest}.txt"
    if blob.exists():
        os.utime(blob)
    else:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = blob.with_name(f"{digest}.{uuid.uuid4().hex}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, blob)
    return digest


def _resolve_paragraphs(data: Any, folder: Path) -> Any:
    """A trace file's paragraph references replaced by the paragraphs, each checked against its hash (one missing or
    changed is read as empty: the trace still shows, and replay says the judge's verdict cannot be played back)."""
    if not isinstance(data, dict):
        return data
    for part in data.get("parts") or ():
        for attempt in (part.get("attempts") or ()) if isinstance(part, dict) else ():
            refs = attempt.pop("paragraph_refs", None) if isinstance(attempt, dict) else None
            if not isinstance(refs, dict):
                continue
            paragraphs = attempt.setdefault("paragraphs", {})
            for cid, digest in refs.items():
                try:
                    text = (folder / f"{digest}.txt").read_text(encoding="utf-8")
                except (OSError, TypeError, UnicodeDecodeError):
                    text = None
                if text is None or hashlib.sha256(text.encode("utf-8")).hexdigest() != digest:
                    log.warning("paragraph %s of a trace is missing or changed; read as empty", digest)
                    text = ""
                if isinstance(paragraphs, dict):
                    paragraphs[cid] = text
    return data


MAX_TRACE_BYTES = 50 * 1024 * 1024  # far above any trace written; reading stops there


def load_trace(path: Path) -> Trace:
    """A trace file; a TraceError (one line) for what is not a regular file, is over
    MAX_TRACE_BYTES, or is not a trace."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise TraceError(f"{path} is not a regular file")
        if st.st_size > MAX_TRACE_BYTES:
            raise TraceError(f"{path} is {st.st_size} bytes; a trace is at most {MAX_TRACE_BYTES}")
        with open(path, "rb") as f:
            raw = f.read(MAX_TRACE_BYTES + 1)
        if len(raw) > MAX_TRACE_BYTES:  # grew since the stat
            raise TraceError(f"{path} is over {MAX_TRACE_BYTES} bytes; a trace is at most that")
        data = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise TraceError(f"no trace at {path}") from None
    except (OSError, UnicodeDecodeError, RecursionError, json.JSONDecodeError) as e:
        raise TraceError(f"{path} is not a readable trace: {e}") from None
    try:
        return _ADAPTER.validate_python(upgrade(_resolve_paragraphs(data, Path(path).parent / PARAGRAPHS)))
    except ValidationError as e:
        raise TraceError(f"{path} does not match the trace schema: {str(e).splitlines()[0]} "
                         f"({e.error_count()} errors)") from None


def prune_traces(directory: Path, keep_days: int | None, keep_count: int | None,
                 now: float | None = None) -> int:
    """Delete traces older than `keep_days` and all but the newest `keep_count` (by modification
    time); returns how many were deleted. Files that vanish meanwhile are skipped."""
    if keep_days is None and keep_count is None:
        return 0
    entries = []
    try:
        with os.scandir(directory) as it:
            for e in it:
                if e.name.endswith(".json") and e.is_file(follow_symlinks=False):
                    try:
                        entries.append((e.stat(follow_symlinks=False).st_mtime, e.path))
                    except FileNotFoundError:
                        pass
    except FileNotFoundError:
        return 0
    entries.sort(reverse=True)  # newest first
    cutoff = (now if now is not None else time.time()) - keep_days * 86400 if keep_days is not None else None
    removed = 0
    kept = []
    for n, (mtime, p) in enumerate(entries):
        if (keep_count is not None and n >= keep_count) or (cutoff is not None and mtime < cutoff):
            try:
                os.unlink(p)
                removed += 1
            except FileNotFoundError:
                pass
        else:
            kept.append(mtime)
    if removed:
        _prune_paragraphs(Path(directory) / PARAGRAPHS, min(kept) if kept else None)
    return removed


def _prune_paragraphs(folder: Path, oldest_kept: float | None) -> None:
    """Paragraph files no kept trace can refer to: each trace refreshed the time of every paragraph it refers to
    when it was written, so one older than the oldest trace kept is no kept trace's (none kept: none is)."""
    try:
        with os.scandir(folder) as it:
            for e in it:
                try:
                    if oldest_kept is None or e.stat(follow_symlinks=False).st_mtime < oldest_kept - 1:
                        os.unlink(e.path)
                except FileNotFoundError:
                    pass
    except FileNotFoundError:
        pass


def upgrade(data: Any) -> Any:
    """A trace written by an earlier version, in today's field names (same meaning).

    Version 1 called an attempt's failure `parse_error`/`parse_detail`, a chunk's files
    `source_path`/`document_path` (and its offsets in the original `origin`), a citation's
    `source`/`span`/`origin`; and it listed the chunks pulled in by cross-references at the end
    of `reranked`, where they stay (nothing it recorded is lost; `referenced` is empty)."""
    if not isinstance(data, dict) or not isinstance(data.get("version"), int) or data["version"] >= 2:
        return data
    for part in _dicts(data.get("parts")):
        for attempt in _dicts(part.get("attempts")):
            _rename(attempt, _ATTEMPT_V1)
            for candidate in _dicts(attempt.get("candidates")):
                if isinstance(candidate.get("chunk"), dict):
                    _rename(candidate["chunk"], _CHUNK_V1)
            for claim in _dicts(attempt.get("claims")):
                for citation in _dicts(claim.get("citations")):
                    _rename(citation, _CITATION_V1)
    return data


_ATTEMPT_V1 = {"parse_error": "failure", "parse_detail": "failure_detail"}
_CHUNK_V1 = {"source_path": "rendition", "document_path": "original", "origin": "original_span"}
_CITATION_V1 = {"source": "rendition", "span": "chunk_span", "origin": "original"}


def _dicts(items: Any) -> list[dict]:
    return [x for x in items if isinstance(x, dict)] if isinstance(items, list) else []


def _rename(d: dict, names: dict[str, str]) -> None:
    for old, new in names.items():
        if old in d:
            d[new] = d.pop(old)


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
