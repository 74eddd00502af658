"""The JSON a user gets, defined once: one pydantic model per response.

`saksi ask --json`, `saksi batch`, `saksi ingest --json`, `saksi corpus ls --json` and the HTTP
API (serve/api.py) all serialise through these models, so the documented fields (README,
"ask --json"), the OpenAPI schema and what is actually sent cannot drift apart. The models
are views read from the pipeline's frozen dataclasses by attribute (`from_attributes`); where
the documented name differs from the pipeline's own, `of` maps it (a citation's `source` is the
chunk's rendition, a claim's `confidence` the composite's value).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from .restatements import restating
from .types import Band, CitationCheck, Result, VerdictLabel, VerifiedClaim

if TYPE_CHECKING:
    from .replay import ReplayReport


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, from_attributes=True)


# --- an answer ---------------------------------------------------------------------------------


class Citation(_Out):
    chunk_id: str
    document: str | None  # the document's title
    doc_id: str | None
    location: str | None  # "Pasal 3 ayat (1)", "paragraf 12"
    quote: str            # the exact words of the record
    verified: bool        # passed the quote gate
    is_example: bool
    source: str | None    # the rendition (cleaned text) the chunk is a slice of
    source_span: list[int] | None  # [start, end) of the chunk in it
    path: str | None = None        # the receipt: "PMK 98/2025 › Pasal 6 › ayat (1)"
    pages: list[int] | None = None  # [first, last] page of the quote in the original (paged sources)
    original: str | None = None     # the ingested file
    authority: str | None = None    # the document's authority as recorded (an upload's is at most its key's)
    uploaded_by: str | None = None  # "local" (an operator's `saksi ingest`) or "key:<id>" (an API upload)
    uploaded_at: str | None = None  # when (ISO 8601, UTC)
    restates: bool = False          # the claim's sentence again, where its regulation states it in another place too

    @classmethod
    def of(cls, x: CitationCheck, restates: bool = False) -> "Citation":
        return cls(chunk_id=x.chunk_id, document=x.document, doc_id=x.doc_id, location=x.location, quote=x.quote,
                   verified=x.ok, is_example=x.is_example, source=x.rendition,
                   source_span=list(x.chunk_span) if x.chunk_span else None, path=x.path,
                   pages=list(x.page) if x.page else None, original=x.original, authority=x.authority,
                   uploaded_by=x.uploaded_by, uploaded_at=x.uploaded_at, restates=restates)


class VerdictOut(_Out):
    label: VerdictLabel | None  # None: no verdict (never read as yes)
    score: float | None
    judge: str


class ConfidenceBreakdown(_Out):
    judge: float | None
    retrieval: float
    generator: float
    weights: dict[str, float]
    raw: float
    cap: float | None
    capped_by: Literal["no_verdict", "answerability", "not_in_force", "unmentioned", "other_definitions",
                       "several_definitions", "several_subjects", "several_regulations"] | None = None


class StatusEdgeOut(_Out):
    """A provision that revokes or amends another, with its receipt (pipeline/status.py)."""

    kind: Literal["revokes", "revokes_part", "amends"]
    source_doc: str
    source_chunk: str
    source_path: str     # "PMI 7/2025 › BAB IV › Pasal 9 › ayat (1)"
    quote: str           # the exact words that say it
    target_label: str    # "PMI 3/2022", "PMK 237/2022 › Pasal 14"
    target_doc: str | None
    target_pasal: str | None
    date: str | None     # when it takes effect (ISO); None: unknown
    issued: str | None


class StandingOut(_Out):
    """A claim's provision on the answer's date: in_force, not_yet (in force from `until`), ended (on `until`, by
    `edge`), or unknown (the collection cannot settle it; `edge` says why)."""

    state: Literal["in_force", "not_yet", "ended", "unknown"]
    on: str
    since: str | None
    until: str | None
    edge: StatusEdgeOut | None


class AsOfOut(_Out):
    date: str                                                  # ISO
    source: Literal["request", "question", "profile", "today"]  # where the date came from
    words: str | None                                          # what the question said, when it came from there


class CitedDocumentOut(_Out):
    """A document the answer cites, as its receipts show it: what it is, its dates, and its standing on the answer's
    date (document-wide)."""

    doc_id: str
    cite_as: str | None
    title: str | None
    doc_type: str | None
    number: str | None
    year: int | None
    published: str | None
    effective: str | None
    standing: StandingOut | None


class DirectAnswerOut(_Out):
    """The line above the claims: values as the quotes write them, with `[n]` markers (the n-th supported claim)."""

    text: str
    band: Band | None
    claims: list[int]   # the claims its markers cite (indexes into `claims`)
    as_of: str | None


class Claim(_Out):
    text: str
    status: Literal["supported", "unsupported"]
    confidence: float | None  # None when not supported
    band: Band | None
    is_example: bool
    part: int
    reasons: list[str]        # why a claim was demoted ("quote_not_found: …", "number_without_basis: 15%")
    verdict: VerdictOut | None
    confidence_breakdown: ConfidenceBreakdown | None
    citations: list[Citation]
    standing: StandingOut | None = None  # its provision on the answer's date (supported claims of dated documents)

    @classmethod
    def of(cls, c: VerifiedClaim) -> "Claim":
        conf = c.confidence
        return cls(
            text=c.text, status=c.status, confidence=conf.value if conf else None, band=conf.band if conf else None,
            is_example=c.is_example, part=c.part, reasons=list(c.reasons),
            verdict=c.verdict, confidence_breakdown=conf, citations=[Citation.of(x, again) for x, again in zip(c.citations, restating(c))],
            standing=c.standing)


class ConflictOut(_Out):
    kind: Literal["figures", "ambiguous"]  # records disagree on a figure / several regulations answer the question
    detail: str            # both sides, with document, location and date
    claims: list[int]      # indexes into the answer's claims
    chunk_ids: list[str]
    applies: int | None = None              # the claim in force on the answer's date, where the status graph decides
    decided_by: StatusEdgeOut | None = None  # the provision that ended the other side, where one did
    unquoted: int = 0  # the asked term's other definers: regulations that define it, named in `detail`, that no claim quotes


class PartOut(_Out):
    index: int
    question: str
    route: str
    answered: bool
    attempt_used: int | None  # 0, or 1 after the corrective retry
    reason: str | None
    missing_categories: list[str]


class NearestOut(_Out):
    chunk_id: str
    document: str
    location: str
    path: str | None
    text: str     # an excerpt
    score: float  # the rerank score
    why: list[str] = []  # the question's terms it states


class AnswerResponse(_Out):
    """An answer with receipts, or a refusal that says what is missing (README, "ask --json")."""

    outcome: Literal["answer", "refusal"]
    question: str
    lang: Literal["id", "en"]
    claims: list[Claim]  # supported first, then demoted ones
    conflicts: list[ConflictOut]
    parts: list[PartOut]
    retried: bool
    reason_code: str | None
    reason: str | None
    missing_categories: list[str]
    nearest: list[NearestOut]
    trace_id: str
    trace_path: str | None
    not_in_corpus: list[str]  # documents the question names that the corpus does not hold
    as_of: AsOfOut | None = None  # the date the answer is given as of, and where it came from
    direct_answer: DirectAnswerOut | None = None  # the direct answer line (answers only)
    documents: list[CitedDocumentOut] = []  # the documents the claims cite (by `citations[].doc_id`)
    unmentioned: list[str] = []  # the question's terms no record of the collection mentions in any form

    @classmethod
    def of(cls, r: Result) -> "AnswerResponse":
        return cls(outcome=r.outcome, question=r.question, lang=r.lang, claims=[Claim.of(c) for c in r.claims],
                   conflicts=r.conflicts, parts=r.parts, retried=r.retried, reason_code=r.reason_code,
                   reason=r.reason, missing_categories=r.missing_categories, nearest=r.nearest, trace_id=r.trace_id,
                   trace_path=r.trace_path, not_in_corpus=r.not_in_corpus, as_of=r.as_of, direct_answer=r.direct,
                   documents=r.documents, unmentioned=r.unmentioned)


def relative_path(path: str | None, root: Path) -> str | None:
    """A file as an API caller sees it: relative to the data directory (`texts/…`, `uploads/…`),
    or only its name when it lies outside it; never a server's absolute path."""
    if not path:
        return path
    p = Path(path)
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return p.name


def claim_relative(c: Claim, root: Path) -> Claim:
    """A claim with its citations' rendition and original relative to `root` (the API)."""
    return c.model_copy(update={"citations": [x.model_copy(update={"source": relative_path(x.source, root),
                                                                   "original": relative_path(x.original, root)})
                                              for x in c.citations]})


def answer_relative(body: AnswerResponse, root: Path) -> AnswerResponse:
    """The answer with its files (trace, citations' rendition and original) relative to `root` (the API)."""
    return body.model_copy(update={"claims": [claim_relative(c, root) for c in body.claims],
                                   "trace_path": relative_path(body.trace_path, root)})


def result_json(r: Result) -> dict:
    """The answer as JSON-ready data (`saksi ask --json`, `saksi batch`)."""
    return AnswerResponse.of(r).model_dump(mode="json")


# --- the corpus --------------------------------------------------------------------------------


class IngestErrorOut(_Out):
    path: str
    reason: str


class IngestResponse(_Out):
    """What an ingest did (`saksi ingest --json`, `saksi bulk-ingest --json`, `POST /v1/ingest`)."""

    files: int
    ingested: list[str]
    unchanged: list[str]
    errors: list[IngestErrorOut]  # files reported and skipped; the rest went in
    chunks_written: int
    embedded: int
    from_cache: int = 0  # of those, vectors the embedding cache already held (the text was embedded before)
    removed_from_dense: int
    total_documents: int
    total_chunks: int
    needs_ocr: dict[str, list[int]]  # file -> pages without a text layer (not read)

    def relative_to(self, root: Path) -> "IngestResponse":
        """The same report with file paths relative to the data directory (the API)."""
        rel = lambda p: relative_path(p, root)  # noqa: E731
        return self.model_copy(update={
            "ingested": [rel(p) for p in self.ingested], "unchanged": [rel(p) for p in self.unchanged],
            "errors": [e.model_copy(update={"path": rel(e.path)}) for e in self.errors],
            "needs_ocr": {rel(k): v for k, v in self.needs_ocr.items()}})


class DocumentRow(_Out):
    """One ingested document (`saksi corpus ls`, `GET /v1/corpus`)."""

    doc_id: str
    cite_as: str | None  # how citations name it: "PMK 98/2025"
    doc_type: str | None
    number: str | None
    year: int | None
    title: str
    authority: str
    published: str | None
    effective: str | None
    lang: str
    format: str
    version: int
    chunks: int
    pasal: int | None
    pages: int | None
    pages_without_text: list[int]
    unresolved_references: int
    original: str  # the ingested file
    near_duplicates_with: list[str]
    ingested_at: str
    source_hash: str | None
    uploaded_by: str | None = None         # "local" or "key:<id>" (documents from before provenance: None)
    uploaded_at: str | None = None
    declared_authority: str | None = None  # what an upload claimed, when its key's ceiling lowered it


class CorpusResponse(_Out):
    """What the served corpus holds, and whether it can answer (`GET /v1/corpus`)."""

    data_dir: str
    fingerprint: str | None
    ready: bool
    problem: str | None
    documents: int
    chunks: int
    items: list[DocumentRow]

    def relative_to(self, root: Path) -> "CorpusResponse":
        """The listing as the API sends it: `data_dir` is the directory's name and every `original`
        is relative to it (a file outside it: its name only). `saksi corpus ls --json` keeps full paths."""
        return self.model_copy(update={
            "data_dir": root.name or ".",
            "items": [r.model_copy(update={"original": relative_path(r.original, root)}) for r in self.items]})


class CollectionsResponse(_Out):
    """The collections a key may use (`GET /v1/collections`)."""

    collections: list[str]


class DeleteResponse(_Out):
    """A document taken out of a collection (`DELETE …/documents/{doc_id}`, `saksi corpus rm`)."""

    doc_id: str
    collection: str
    documents: int  # what the collection holds now
    chunks: int


# --- keys --------------------------------------------------------------------------------------


class KeyInfo(_Out):
    """An API key as `saksi keys ls` and `GET /v1/keys` show it: never its secret or hash."""

    id: str
    role: Literal["reader", "curator", "admin"]
    collections: list[str]
    authority: str        # the highest authority its uploads may claim
    name: str
    created: str
    created_by: str
    revoked: str | None


class KeysResponse(_Out):
    keys: list[KeyInfo]


class KeyCreated(KeyInfo):
    token: str  # shown once: only its hash is kept


# --- checks and the service --------------------------------------------------------------------


class ReplayResponse(_Out):
    """A trace's recorded decision against the gates re-run on its generator output (`saksi replay --json`,
    `POST /v1/replay`)."""

    trace_id: str
    same: bool
    recorded: Literal["answer", "refusal"]
    replayed: Literal["answer", "refusal"]
    differences: list[str]
    result: AnswerResponse  # the replayed result

    @classmethod
    def of(cls, report: "ReplayReport", trace_id: str) -> "ReplayResponse":
        return cls(trace_id=trace_id, same=report.same, recorded=report.recorded.outcome,
                   replayed=report.replayed.outcome, differences=report.differences(),
                   result=AnswerResponse.of(report.result))


class Health(_Out):
    status: Literal["ok"]
    version: str


class DeploymentReadiness(_Out):
    ready: bool
    problem: str | None = None  # why not
    chunks: int | None = None   # the retriever: chunks it answers from


class Readiness(_Out):
    ready: bool  # every deployment answers and the indexes are loaded
    deployments: dict[str, DeploymentReadiness]


class ErrorBody(_Out):
    type: str     # invalid_request, question_too_long, invalid_trace_id, not_found, unknown_collection, too_large, …
    message: str  # which field or what, and why


class ErrorResponse(_Out):
    error: ErrorBody
