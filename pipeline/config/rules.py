"""The rule files a profile points to: routes (the evidence categories a question needs), category rules, the
glossary, normalisation and the analysis rules."""
from __future__ import annotations

import re
from functools import cached_property

from pydantic import Field

from ..errors import ConfigError
from .base import _Strict


class Route(_Strict):
    """A kind of question: how to recognise it and what evidence an answer needs."""

    name: str
    description: str = ""
    match: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    examples_satisfy: bool = False
    authority_weight: float = Field(0.05, ge=0)
    freshness_weight: float = Field(0.05, ge=0)

    @cached_property
    def patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p, re.IGNORECASE) for p in self.match)


class RouteTable(_Strict):
    routes: tuple[Route, ...]
    default: Route

    def route(self, question: str) -> Route:
        """First route whose pattern matches; order in the file is priority."""
        for r in self.routes:
            if any(p.search(question) for p in r.patterns):
                return r
        return self.default


class CategoryRule(_Strict):
    patterns: tuple[str, ...] = ()
    headings: tuple[str, ...] = ()
    description: str = ""


class CategoryRules(_Strict):
    categories: dict[str, CategoryRule]


class Glossary(_Strict):
    en_to_id: dict[str, tuple[str, ...]]
    synonyms: dict[str, tuple[str, ...]] = {}

    @cached_property
    def id_to_en(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        for en, ids in self.en_to_id.items():
            for i in ids:
                out.setdefault(i, []).append(en)
        return {k: tuple(v) for k, v in out.items()}


class Normalisation(_Strict):
    abbreviations: dict[str, str] = {}
    variants: dict[str, str] = {}


class AnalysisRules(_Strict):
    """Lucene-style keyword protection and stem overrides for the Indonesian stemmer."""

    id_keywords: tuple[str, ...] = ()
    id_stem_overrides: dict[str, str] = {}
    id_extra_stopwords: tuple[str, ...] = ()
    id_not_stopwords: tuple[str, ...] = ()
    en_extra_stopwords: tuple[str, ...] = ()


def _check_regex(pattern: str, where: str) -> None:
    try:
        re.compile(pattern)
    except re.error as e:
        raise ConfigError(f"{where}: bad pattern {pattern!r}: {e}") from None
