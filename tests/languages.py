"""The words of one language that a text in the other must not show (issue 26, part 8: one language per page).

A language's vocabulary is every word of three letters or more in its tables of words (the page's labels, the
answer's labels, refusal reasons, evidence categories, standings, export words, review reasons, replay's differences,
the trace's notes): a word of the other language's tables that this language's tables never use is a
sign of a string left untranslated. A handful of common function words are added, for strings that reach a page
without going through a table at all.
"""
from __future__ import annotations

import re

from pipeline import decision, replay, reviews, status
from pipeline.rendering import export
from pipeline.rendering.answer_text import LABELS
from serve.web import labels as web

_COMMON = {"id": {"yang", "dan", "tidak", "dengan", "untuk", "dalam", "atas", "dari", "oleh", "atau", "ini", "ada",
                  "sebagai", "belum", "sudah", "karena"},
           "en": {"the", "and", "not", "with", "for", "from", "this", "are", "was", "which", "that", "has", "have",
                  "been", "because", "found"}}


def _strings(x) -> list[str]:
    if isinstance(x, str):
        return [x]
    if isinstance(x, dict):
        return [s for v in x.values() for s in _strings(v)]
    if isinstance(x, (list, tuple)):
        return [s for v in x for s in _strings(v)]
    return []


def _tables(lang: str) -> list[str]:
    per_lang = [web.WEB[lang], LABELS[lang], status._WORDS[lang], export.WORDS[lang], replay._DIFF_WORDS[lang]]
    by_code = [decision._REASONS, decision.CATEGORY_WORDS, reviews.REJECT_REASONS]
    out = [s for t in per_lang for s in _strings(t)] + [s for t in by_code for v in t.values() for s in _strings(v[lang])]
    out += [words if lang == "id" else pattern.pattern for pattern, words in web._NOTES]
    return out


def vocabulary(lang: str) -> set[str]:
    return {w.casefold() for s in _tables(lang) for w in re.findall(r"[^\W\d_]{3,}", re.sub(r"\{[^}]*\}", " ", s))}


def _foreign() -> dict[str, set[str]]:
    idn, en = vocabulary("id") | _COMMON["id"], vocabulary("en") | _COMMON["en"]
    return {"id": en - idn, "en": idn - en}


FOREIGN = _foreign()


def foreign_words(text: str, lang: str) -> list[str]:
    """The words of `text` that belong to the other language (sorted, each once)."""
    return sorted({w for w in re.findall(r"[^\W\d_]+", text) if w.casefold() in FOREIGN[lang]})
