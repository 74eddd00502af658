"""The shapes that pass between stages: frozen dataclasses, rescored with `replace`.

Every later capability (the Ray Serve app, real model backends, evaluation) builds on
these, and traces are these same objects serialised through pydantic's TypeAdapter, so a
trace reads back into exactly what the pipeline held.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Literal

Lang = Literal["id", "en"]
Authority = Literal["official", "primary", "institutional", "academic", "media", "unknown"]
VerdictLabel = Literal["entailed", "neutral", "contradicted"]
Band = Literal["TINGGI", "SEDANG", "RENDAH"]


# --- corpus -------------------------------------------------------------------------

# "Pasal 9", "Pasal 12 ayat (1)–(3)", "Pasal 18 (bagian 2/2)"; in an amending regulation "Pasal I angka 1 › Pasal 5"
_PROVISION = re.compile(r"(?:^|› )(?:Pasal|Article)\s+\w")


def is_provision(location: str, spans: tuple["Span", ...] = ()) -> bool:
    """A regulation's provision: a chunk whose ayat/huruf/angka are known, or a Pasal of one paragraph ("Pasal 9
    Pemberi kerja orang perseorangan dilarang mempekerjakan TKA."), which has none. The reader reads it with its
    regulation scorer, the generator with agreement, the gates with the regulation TINGGI boundary; a preamble,
    a closing or an annex paragraph is not one."""
    return bool(spans) or bool(_PROVISION.search(location or ""))


@dataclass(frozen=True)
class Span:
    """A located sub-unit inside a chunk (an ayat, a lettered item), for precise citations."""

    label: str
    start: int
    end: int


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    original: str                    # the ingested file (absolute path): what a receipt downloads
    lang: Lang
    content_hash: str
    doc_type: str | None = None
    issuer: str | None = None
    authority: Authority = "unknown"
    published: str | None = None
    effective: str | None = None
    illustrative: bool = False
    url: str | None = None
    # what the document says about itself (pipeline/ingest/metadata.py), overridable by front matter/sidecar
    number: str | None = None        # "98"
    year: int | None = None          # 2025
    cite_as: str | None = None       # how citations name it: "PMK 98/2025"
    promulgated: str | None = None   # "diundangkan" date, ISO
    domain: str | None = None        # the URL's host
    fmt: str = "text"                # pdf | html | docx | markdown | text
    pages: int | None = None         # page count when the format has pages
    pages_without_text: tuple[int, ...] = ()  # 1-based pages that need OCR (reported, not read)
    rendition: str = ""              # the cleaned text file every chunk is an exact slice of
    # provenance: who put the document in the corpus ("local": an operator's `saksi ingest`; "key:<id>":
    # an upload through the API with that key) and when (ISO, UTC); uploads' authority is capped by the key
    uploaded_by: str | None = None
    uploaded_at: str | None = None

    @property
    def made(self) -> str | None:
        """The date the document was made: signed (`published`), else promulgated (a scan may keep only one)."""
        return self.published or self.promulgated


@dataclass(frozen=True)
class Chunk:
    """A retrievable passage: an exact slice [start, end) of its source file's text."""

    chunk_id: str
    doc_id: str
    title: str
    location: str
    text: str
    lang: Lang
    unit: str
    ordinal: int
    start: int
    end: int
    is_example: bool = False
    categories: tuple[str, ...] = ()
    heading: str = ""
    spans: tuple[Span, ...] = ()
    authority: Authority = "unknown"
    published: str | None = None
    rendition: str = ""    # the document's rendition (cleaned text file) that [start, end) slices
    path: str = ""         # the structural path a citation shows: "PMK 98/2025 › BAB II › Pasal 3"
    page: tuple[int, int] | None = None     # first and last page of the original (paged formats)
    page_breaks: tuple[int, ...] = ()       # offsets in `text` where a new page begins
    original_span: tuple[int, int] | None = None  # offsets in the original file's text (text formats)
    original: str = ""                      # the ingested file
    uploaded_by: str | None = None          # the document's provenance (Document.uploaded_by / uploaded_at)
    uploaded_at: str | None = None


# --- legal status (pipeline/status.py) ------------------------------------------------------

EdgeKind = Literal["revokes", "revokes_part", "amends"]
StandingState = Literal["in_force", "not_yet", "ended", "unknown"]


@dataclass(frozen=True)
class StatusEdge:
    """One statement of the status graph: a provision (of `source_doc`) that ends `target`, with its receipt."""

    kind: EdgeKind
    source_doc: str
    source_chunk: str
    source_path: str           # the receipt's citation: "PMI 7/2025 › BAB IV › Pasal 9 › ayat (1)"
    quote: str                 # the exact words that say it (a slice of the source chunk's text)
    target_label: str          # how the source names what it ends: "PMI 3/2022", "PMK 237/2022 › Pasal 14"
    target_doc: str | None     # the collection's document, None when it is not ingested
    target_pasal: str | None   # the Pasal ended ("14"); None: the whole document
    date: str | None           # ISO: when it takes effect (the source's effective date); None: unknown
    issued: str | None         # ISO: the source's own date (published/promulgated), before which it ends nothing


@dataclass(frozen=True)
class DocumentStatus:
    """What decides a document's standing on any date (its own start and the edges that end it or its Pasal), and
    what a receipt shows of it beside a citation (title, type, number, year, dates)."""

    doc_id: str
    since: str | None                 # ISO: its effective date, else the date it was signed or promulgated; None: unknown
    edges: tuple[StatusEdge, ...] = ()
    cite_as: str | None = None
    title: str | None = None
    doc_type: str | None = None
    number: str | None = None
    year: int | None = None
    published: str | None = None
    effective: str | None = None
    cites: tuple[str, ...] = ()       # the other documents its text refers to (resolved references), sorted

    @classmethod
    def of(cls, doc: Document, edges, cites: Iterable[str] = ()) -> "DocumentStatus":
        """`doc`'s status from the edges (of other documents) that end it or its Pasal, among `edges`, and the
        documents it refers to (`cites`)."""
        return cls(doc.doc_id, doc.effective or doc.made,
                   tuple(e for e in edges if e.target_doc == doc.doc_id and e.source_doc != doc.doc_id),
                   doc.cite_as, doc.title, doc.doc_type, doc.number, doc.year, doc.published, doc.effective,
                   tuple(sorted({d for d in cites if d != doc.doc_id})))


@dataclass(frozen=True)
class CitedDocument:
    """A document an answer cites, as its receipts show it: what it is, its dates, and its standing on the answer's
    date (document-wide; a claim's own `standing` is its Pasal's)."""

    doc_id: str
    cite_as: str | None
    title: str | None
    doc_type: str | None
    number: str | None
    year: int | None
    published: str | None
    effective: str | None
    standing: "Standing | None" = None


@dataclass(frozen=True)
class AsOf:
    """The date an answer is given as of, and where it came from."""

    date: str                    # ISO
    source: Literal["request", "question", "profile", "today"]
    words: str | None = None     # what the question said ("pada tahun 2024"), when it came from there


@dataclass(frozen=True)
class Standing:
    """A document's (or one of its Pasal's) standing on a date, and the edge that decides it."""

    state: StandingState
    on: str                      # ISO date asked about
    since: str | None = None     # in force since (the document's effective date, where known)
    until: str | None = None     # ended on / not yet in force until
    edge: StatusEdge | None = None

    @property
    def history(self) -> bool:
        """Ended, or not yet in force, on the date: such a provision answers nothing then (`unknown` is not history:
        it is shown, said to be unknown)."""
        return self.state in ("ended", "not_yet")


# --- query and retrieval ---------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """A weighted term group (see analysis.TermGroup), in serialisable form."""

    term: str
    alternatives: tuple[tuple[str, ...], ...]
    weight: float
    expansions: tuple[str, ...] = ()
    unseen: bool = False  # no form of it occurs in any record of the collection (analysis.weigh)

    def matched_by(self, tokens: set[str] | frozenset[str]) -> bool:
        """Covered when every token of any one alternative is present."""
        return any(alt and all(t in tokens for t in alt) for alt in self.alternatives)


@dataclass(frozen=True)
class QueryPlan:
    """What one retrieval round searched for."""

    text: str
    normalised: str
    lang: Lang
    dense_text: str
    lexical_tokens: tuple[str, ...]
    terms: tuple[Term, ...]
    rewrite: str | None = None  # how this query was derived from the original, if it was


@dataclass(frozen=True)
class Candidate:
    """A chunk with every lane's score. Ranks are 1-based within a lane's own hit list."""

    chunk: Chunk
    dense_score: float | None = None
    dense_rank: int | None = None
    lexical_score: float | None = None
    lexical_rank: int | None = None
    sparse_score: float | None = None  # the third lane (BGE-M3 lexical weights), when the profile has it
    sparse_rank: int | None = None
    rrf_score: float = 0.0
    rerank_score: float | None = None
    rerank_components: dict[str, float] = field(default_factory=dict)
    dropped: str | None = None  # why it did not go further: "duplicate of <id>", "per-source cap"
    near_duplicate_of: str | None = None  # the same provision in another document: both stay citable
    referenced_from: str | None = None    # pulled in because this chunk's cross-reference points here, not retrieved
    defines: str | None = None  # holds the definition of the term the question asks about (its entry, "Pasal 1 angka 4")


# --- generation -----------------------------------------------------------------------


@dataclass(frozen=True)
class ContextLink:
    """A resolved cross-reference in a chunk's text ("sebagaimana dimaksud dalam Pasal 2") and the chunk it points at."""

    start: int  # offsets of the reference in the chunk's text
    end: int
    target: str  # chunk id


@dataclass(frozen=True)
class ContextItem:
    """A chunk as the generator sees it, labelled so it can cite it back by id."""

    chunk_id: str
    document: str
    location: str
    text: str
    is_example: bool
    lang: Lang
    retrieval_score: float
    heading: str = ""
    links: tuple[ContextLink, ...] = ()  # its resolved references whose targets are also in the context
    spans: tuple[Span, ...] = ()  # its ayat/huruf/angka (offsets in `text`): the units an answer may quote
    uploaded_by: str | None = None  # its document's provenance: "local" (the operator's), "key:<id>" (an API upload)
    first_in_both: bool = False  # the dense and the lexical search each ranked it first: two searches agree on it

    @property
    def provision(self) -> bool:
        """A regulation's provision (is_provision): read and answered as a regulation."""
        return is_provision(self.location, self.spans)


@dataclass(frozen=True)
class GenerationRequest:
    question: str
    lang: Lang
    context: tuple[ContextItem, ...]
    terms: tuple[Term, ...] = ()  # lexical hints; extractive generators use them, LLMs may ignore them
    required: tuple[str, ...] = ()  # evidence categories the answer must state (from the route)
    retry: bool = False  # the second attempt: a rewritten query, wider retrieval, after a first that answered nothing


@dataclass(frozen=True)
class GenerationOutput:
    """The generator's raw text (claim JSON) — gates parse it, so replay can re-parse it."""

    raw: str
    model: str
    finish_reason: str = "stop"
    context_cut: tuple[str, ...] = ()  # chunk ids left out of the prompt to fit the token budget
    scores: tuple["SentenceScore", ...] = ()  # a reader's candidate sentences, best first (extractive generator)


@dataclass(frozen=True)
class SentenceScore:
    """One candidate sentence as the extractive generator scored it (kept in the trace)."""

    chunk_id: str
    quote: str
    coverage: float                # weighted share of the question's terms it states (with what it refers to)
    probability: float | None      # the reader's P(it answers the question); None without a reader
    claimed: bool                  # emitted as a claim
    referenced: tuple[str, ...] = ()  # chunk ids of the spans read with it (its subject by reference)
    kind: str = "sentence"         # the answer unit (reader/answers.py KINDS): sentence, item, enumeration, ayat, pasal
    read: float | None = None      # the reader's own probability when agreement, cross_lingual or prose_reading
                                   # re-read it
    similarity: float | None = None  # the embedder's cosine of question and quote, where it read it (cross_lingual,
                                     # prose_reading)
    neural: float | None = None    # the cross-encoder's log-odds that it answers, where it read it (cross_encoder)
    chapter: str | None = None     # its passage's chapter title, where the question asks about it as a whole (chapter)


# --- verification ---------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeInput:
    claim: str
    premise: str  # the full cited paragraph


@dataclass(frozen=True)
class Verdict:
    """A judge's reading of a claim; `label is None` means no verdict (never read as yes)."""

    label: VerdictLabel | None
    score: float | None
    judge: str
    detail: str = ""


@dataclass(frozen=True)
class JudgeCall:
    """A judge verdict as recorded, keyed by the normalised claim and the premise's hash, so
    replay finds it again for exactly the claim and paragraph it was given for."""

    claim: str
    premise_sha256: str
    verdict: Verdict


@dataclass(frozen=True)
class CitationCheck:
    chunk_id: str
    quote: str
    document: str | None
    location: str | None
    ok: bool
    reason: str | None = None
    is_example: bool = False
    doc_id: str | None = None
    rendition: str | None = None  # the rendition (cleaned text file) the chunk is a slice of
    chunk_span: tuple[int, int] | None = None  # the chunk's offsets in that file
    path: str | None = None  # the receipt: "PMK 98/2025 › BAB II › Pasal 3 › ayat (2)"
    page: tuple[int, int] | None = None  # the quote's pages in the original (paged formats)
    original: str | None = None  # the ingested file
    authority: str | None = None    # the document's authority as recorded (an upload's: at most its key's)
    uploaded_by: str | None = None  # who put the document in the corpus, and when
    uploaded_at: str | None = None


@dataclass(frozen=True)
class Confidence:
    """The composite, with its arithmetic, so a reader can redo it by hand."""

    judge: float | None
    retrieval: float
    generator: float
    weights: dict[str, float]
    raw: float
    cap: float | None
    value: float
    band: Band
    capped_by: str | None = None  # "no_verdict" or "answerability" when the cap applies


@dataclass(frozen=True)
class VerifiedClaim:
    text: str
    status: Literal["supported", "unsupported"]
    citations: tuple[CitationCheck, ...]
    reasons: tuple[str, ...] = ()
    is_example: bool = False
    figures: tuple[str, ...] = ()
    verdict: Verdict | None = None
    confidence: Confidence | None = None
    self_score: float | None = None
    part: int = 0
    standing: Standing | None = None  # its provision's legal standing on the answer's date (pipeline/status.py)


@dataclass(frozen=True)
class Sufficiency:
    required: tuple[str, ...]
    satisfied: dict[str, str]  # category -> chunk id that satisfied it
    missing: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.missing


@dataclass(frozen=True)
class Conflict:
    kind: Literal["figures", "ambiguous"]  # records disagree on a figure / several regulations answer
    detail: str
    claims: tuple[int, ...]  # indexes into the answer's claims
    chunk_ids: tuple[str, ...]
    applies: int | None = None  # the claim in force on the answer's date, where the status graph decides it
    decided_by: StatusEdge | None = None  # the provision that decides it (ends the other side)
    unquoted: int = 0  # "ambiguous", a term asked: regulations that define it but no claim quotes (each named in detail)


@dataclass(frozen=True)
class NearestRecord:
    chunk_id: str
    document: str
    location: str
    text: str
    score: float
    path: str | None = None  # "PMK 98/2025 › Pasal 3"
    why: tuple[str, ...] = ()  # the question's terms it states (why it is near)


@dataclass(frozen=True)
class DirectAnswer:
    """The line above the claims (pipeline/direct_answer.py): values as the quotes write them, bands, dates and
    citation paths only."""

    text: str                 # with [n] markers: the n-th supported claim
    band: Band | None         # the first claim's
    claims: tuple[int, ...]   # the claims its markers cite (indexes into the answer's claims)
    as_of: str | None = None


@dataclass(frozen=True)
class PartOutcome:
    """The decision for one part of a (possibly multi-part) question."""

    index: int
    question: str
    route: str
    answered: bool
    attempt_used: int | None
    reason: str | None
    missing_categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class Result:
    """What a user gets: an answer with receipts, or a refusal that says what is missing.

    A refusal is a normal result. `claims` holds supported claims first, then claims the
    gates demoted (shown as not supported, never scored).
    """

    outcome: Literal["answer", "refusal"]
    question: str
    lang: Lang
    claims: tuple[VerifiedClaim, ...]
    parts: tuple[PartOutcome, ...]
    conflicts: tuple[Conflict, ...] = ()
    reason_code: str | None = None
    reason: str | None = None
    missing_categories: tuple[str, ...] = ()
    nearest: tuple[NearestRecord, ...] = ()
    retried: bool = False
    trace_id: str = ""
    trace_path: str | None = None
    not_in_corpus: tuple[str, ...] = ()  # documents the question names that the corpus does not hold
    as_of: "AsOf | None" = None  # the date the answer is given as of (claims carry their standing on it)
    direct: DirectAnswer | None = None  # the direct answer line, built from the supported claims only
    documents: tuple[CitedDocument, ...] = ()  # the documents its claims cite, as their receipts show them
    unmentioned: tuple[str, ...] = ()  # the question's terms no record of the collection mentions in any form
