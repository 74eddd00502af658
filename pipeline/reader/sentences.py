"""The sentences of a context that may be quoted as an answer, as the extractive generator
and the reader's training both see them: exact slices of a chunk, without a leading
structural label, not a heading, not an instruction planted in the record, and (when the
question's route requires evidence categories) stating one of them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ..ingest.categories import CategoryTagger
from ..instructions import instruction_spans
from ..text import split_sentences
from ..types import ContextItem

# structural labels a quote need not start with: "Pasal 3", "(1)", "12.", "B4.", "a."
_LEADING_LABEL = re.compile(r"^(?:Pasal\s+\d+[A-Z]?\s*\n\s*)?(?:\(\d{1,2}[a-z]?\)\s+|[A-Z]{0,2}\d{1,3}\.\s+|[a-z]\.\s+)?")


def without_label(sentence: str) -> tuple[int, str]:
    """The sentence minus a leading structural label (offset, text); still an exact slice."""
    m = _LEADING_LABEL.match(sentence)
    cut = m.end() if m else 0
    return (cut, sentence[cut:]) if len(sentence) - cut >= 0.5 * len(sentence) else (0, sentence)


def is_heading(text: str) -> bool:
    """Title blocks and headings ("PERATURAN MENTERI KEUANGAN … NOMOR 98") state nothing."""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(c.isupper() for c in letters) > 0.6 * len(letters)


@dataclass(frozen=True)
class SentenceCandidate:
    item: int    # index of the context item
    index: int   # the sentence's position among the item's sentences
    start: int   # offsets of the quote in the item's text
    end: int
    quote: str


def candidate_sentences(context: Sequence[ContextItem], min_chars: int, max_chars: int,
                        tagger: CategoryTagger | None = None, required: Sequence[str] = ()) -> list[SentenceCandidate]:
    out = []
    for ci, item in enumerate(context):
        planted = instruction_spans(item.text)
        for si, sent in enumerate(split_sentences(item.text, min_chars)):
            if any(a < sent.end and sent.start < b for a, b in planted):
                continue  # an instruction planted in the record is not evidence
            cut, quote = without_label(sent.text)
            if len(quote) < min_chars or len(quote) > max_chars or is_heading(quote):
                continue
            if required and tagger is not None and not set(required) & set(tagger.tag(quote)):
                continue  # a rate question is answered by a sentence that itself states a rate
            out.append(SentenceCandidate(ci, si, sent.start + cut, sent.end, quote))
    return out
