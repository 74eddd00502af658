"""Evidence categories: which kinds of evidence a chunk can supply, by configured rules.

Sufficiency checks a route's required categories against these tags, so a question about
a rate is only answered from a record that states a rate.
"""
from __future__ import annotations

import re

from .config import CategoryRules


class CategoryTagger:
    CACHED = 20000  # texts whose tags are remembered: the same passages and sentences meet many questions

    def __init__(self, rules: CategoryRules):
        self._rules = [
            (name,
             [re.compile(p, re.IGNORECASE) for p in rule.patterns],
             [re.compile(p, re.IGNORECASE) for p in rule.headings])
            for name, rule in rules.categories.items()
        ]
        self._seen: dict[tuple[str, str, str], tuple[str, ...]] = {}  # a plain dict: the tagger travels to Ray workers

    def tag(self, text: str, heading: str = "", location: str = "") -> tuple[str, ...]:
        key = (text, heading, location)
        got = self._seen.get(key)
        if got is None:
            if len(self._seen) >= self.CACHED:
                self._seen.clear()
            where = f"{heading} {location}"
            got = self._seen[key] = tuple(
                name for name, patterns, headings in self._rules
                if any(p.search(text) for p in patterns) or any(h.search(where) for h in headings)
            )
        return got
