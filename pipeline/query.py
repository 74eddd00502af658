"""From a question to what retrieval searches for: decomposition, planning, rewriting.

All rule-based and cheap: these run before any model. Decomposition splits a
multi-part question so each part must find its own support. The corrective rewrite
widens *recall* (explicit expansions, keywords only); it never relaxes what an answer
must cover — dropping an unmatched term would turn "no source" into a wrong answer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .analysis import QueryAnalyzer, raw_tokens, weigh
from .protocols import LexicalIndex
from .types import QueryPlan, Term

_QUESTION_WORDS_ID = r"apa|apakah|berapa|berapakah|kapan|bagaimana|siapa|mengapa|di\s?mana|manakah|bilamana"
_QUESTION_WORDS_EN = (r"what|when|how|who|whom|which|why|where|is|are|does|do|must|should|can|may|shall|"
                      r"will|was|were|did")
_SPLIT_Q = re.compile(r"(?<=\?)\s+(?=\S)")
_SPLIT_CONJ = re.compile(
    rf"\s*(?:[,;]\s*)?\b(?:dan|serta|lalu|kemudian|and|also|then)\b\s+(?=(?:{_QUESTION_WORDS_ID}|{_QUESTION_WORDS_EN})\b)",
    re.IGNORECASE)
_LEADING_Q = re.compile(rf"^\s*(?:(?:{_QUESTION_WORDS_ID}|{_QUESTION_WORDS_EN})\b\s*)+", re.IGNORECASE)


@dataclass(frozen=True)
class Part:
    text: str
    topic: str = ""  # what an elliptical follow-up part is about, carried from the first part


def decompose(question: str) -> list[Part]:
    """Split "A? B?" and "A and how/when B?" into parts; a follow-up keeps the first part's topic."""
    pieces: list[str] = []
    for q in _SPLIT_Q.split(question.strip()):
        pieces.extend(p.strip(" ,;") for p in _SPLIT_CONJ.split(q) if p.strip(" ,;"))
    pieces = [p for p in pieces if raw_tokens(p)] or [question.strip()]
    if len(pieces) == 1:
        return [Part(pieces[0])]
    topic = _LEADING_Q.sub("", pieces[0]).rstrip("?")
    return [Part(pieces[0])] + [Part(p, topic) for p in pieces[1:]]


class QueryPlanner:
    def __init__(self, analyzer: QueryAnalyzer, lexical: LexicalIndex):
        self.analyzer = analyzer
        self.lexical = lexical

    async def plan(self, part: Part, lang: str) -> QueryPlan:
        """Terms to cover come from the part itself; its carried topic only steers retrieval."""
        normalised = self.analyzer.normalise(part.text)
        terms = await self._weighted(self.analyzer.term_groups(normalised, lang))
        topic_terms = self.analyzer.term_groups(self.analyzer.normalise(part.topic), lang) if part.topic else []
        expansions = [e for t in terms for e in t.expansions]
        dense_text = " ".join([normalised, part.topic, *expansions]).strip()
        tokens = tuple(dict.fromkeys(tok for t in (*terms, *topic_terms) for alt in t.alternatives for tok in alt))
        return QueryPlan(text=part.text, normalised=normalised, lang=lang, dense_text=dense_text,
                         lexical_tokens=tokens, terms=tuple(terms))

    async def rewrite(self, plan: QueryPlan, part: Part) -> QueryPlan:
        """The corrective rewrite: keywords plus every expansion, spelled out for both lanes."""
        words = [t.term for t in plan.terms]
        expansions = [e for t in plan.terms for e in t.expansions]
        keyword_text = " ".join(dict.fromkeys([*words, *expansions, *(raw_tokens(part.topic) if part.topic else [])]))
        extra = self.analyzer.term_groups(self.analyzer.normalise(" ".join(expansions)), "id") if expansions else []
        tokens = tuple(dict.fromkeys([*plan.lexical_tokens, *(tok for t in extra for alt in t.alternatives for tok in alt)]))
        return QueryPlan(text=plan.text, normalised=plan.normalised, lang=plan.lang, dense_text=keyword_text or plan.text,
                         lexical_tokens=tokens, terms=plan.terms,
                         rewrite="keywords and glossary expansions, wider retrieval")

    async def rewrite_from(self, plan: QueryPlan, part: Part, text: str, how: str) -> QueryPlan:
        """A corrective query written by a model: it steers both lanes (its words join the
        lexical tokens, it is the dense text), while the terms an answer must cover stay the
        question's own."""
        normalised = self.analyzer.normalise(text)
        groups = self.analyzer.term_groups(normalised, plan.lang)
        tokens = tuple(dict.fromkeys([*plan.lexical_tokens, *(tok for t in groups for alt in t.alternatives
                                                               for tok in alt)]))
        return QueryPlan(text=plan.text, normalised=plan.normalised, lang=plan.lang, dense_text=normalised or plan.text,
                         lexical_tokens=tokens, terms=plan.terms, rewrite=f"{how}: {text}, wider retrieval")

    async def _weighted(self, groups: list[Term]) -> list[Term]:
        tokens = [tok for g in groups for alt in g.alternatives for tok in alt]
        idf = await self.lexical.idf(tokens)
        return weigh(groups, idf, await self.lexical.max_idf())
