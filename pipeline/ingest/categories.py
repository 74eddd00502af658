"""Evidence categories: which kinds of evidence a chunk can supply, by configured rules.

Sufficiency checks a route's required categories against these tags, so a question about
a rate is only answered from a record that states a rate.
"""
from __future__ import annotations

import re

from ..config import CategoryRules


class CategoryTagger:
    def __init__(self, rules: CategoryRules):
        self._rules = [
            (name,
             [re.compile(p, re.IGNORECASE) for p in rule.patterns],
             [re.compile(p, re.IGNORECASE) for p in rule.headings])
            for name, rule in rules.categories.items()
        ]

    def tag(self, text: str, heading: str = "", location: str = "") -> tuple[str, ...]:
        where = f"{heading} {location}"
        return tuple(
            name for name, patterns, headings in self._rules
            if any(p.search(text) for p in patterns) or any(h.search(where) for h in headings)
        )
