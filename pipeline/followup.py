"""A chat's last question made standalone: a follow-up that leans on the turn before it ("dan kalau untuk tahun
2024?", "what about for Singapore?") is rewritten into a question that can be asked alone, and the answer says
which question it answered (the chat endpoint shows it). Nothing is answered from the conversation itself: it
only says what the question is; the answer still comes from the records, with receipts.

By rules (lite, and wherever no model rewrites): a follow-up opens with a connective or a preposition and does not
stand as a question of its own ("dan kalau …", "bagaimana dengan …", "lalu …", "what about …", "and for …", "untuk
…"). Its rest is put into the previous question: a date it names replaces the date the previous one named (or is
added), anything else is added to it. A generator with `rewrite_followup` (a local LLM) writes the standalone
question itself; a rewrite that drops a word of the follow-up or of the question it leans on is not used, and the
rules are.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Protocol, Sequence, runtime_checkable

from .status import asked_date

log = logging.getLogger(__name__)

_LEAD = re.compile(
    r"^\s*(?:(?:dan|lalu|terus|kemudian|sedangkan|bagaimana|gimana|kalau|jika|bila|apabila|dengan|and|but|so|then|"
    r"what|how|about|if)\b[\s,]*)+", re.IGNORECASE)
_PREPOSITION = re.compile(r"^\s*(?:untuk|bagi|pada|di|dalam|atas|for|in|on|at|of)\b", re.IGNORECASE)
_CONNECTIVE = re.compile(r"^\s*(?:dan kalau|dan bagaimana|bagaimana dengan|bagaimana kalau|gimana dengan|lalu|terus|"
                         r"kalau|sedangkan|what about|how about|and what about|and for|and in|and if|and)\b",
                         re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_FUNCTION = frozenset("untuk bagi pada dalam atas dengan tentang yang adalah apakah berapa berapakah bagaimana tahun "
                      "what about with which does from that this year".split())
_ASKS = re.compile(r"\b(?:apa|apakah|berapa|berapakah|kapan|siapa|bagaimana|mengapa|kenapa|dimana|di mana|mana|"
                   r"what|when|who|whom|which|how|why|where|is|are|does|do|can|must)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Standalone:
    question: str                 # what is asked
    rewritten: bool               # it is not the last message as written
    by: str | None = None         # "rules", or the generator's name
    follows: str | None = None    # the question it leans on


@runtime_checkable
class FollowupRewriter(Protocol):
    """Optional on a Generator: its model writes the standalone question (None: it cannot; the rules then)."""

    async def rewrite_followup(self, previous: str, followup: str, lang: str) -> str | None:
        ...


def is_followup(text: str) -> bool:
    """The message leans on the turn before it: it opens with a connective ("dan kalau", "what about") or, in a few
    words, a preposition ("untuk tahun 2024?", "for Singapore?"), and asks nothing of its own after it."""
    lead = _CONNECTIVE.match(text)
    rest = text[lead.end():] if lead else text
    if _ASKS.search(rest):
        return False  # a question of its own ("And what is the rate?", "Pada tanggal berapa …?")
    return bool(lead) or (bool(_PREPOSITION.match(text)) and len(_WORD.findall(text)) <= 6)


def by_rules(previous: str, followup: str) -> str:
    """The follow-up put into the previous question: its date replaces the previous one's date, else its words are
    added before the question mark."""
    rest = _LEAD.sub("", followup).strip().rstrip("?.! ").strip()
    base = previous.strip().rstrip("?.! ").strip()
    if not rest:
        return previous.strip()
    mark = "?" if previous.strip().endswith("?") or followup.strip().endswith("?") else ""
    new_date, old_date = asked_date(rest), asked_date(base)
    if new_date is not None and old_date is not None and old_date[1] in base and _only_date(rest, new_date[1]):
        return base.replace(old_date[1], new_date[1], 1) + mark
    return f"{base} {rest}{mark}"


def _only_date(rest: str, said: str) -> bool:
    """The follow-up says a date and little else ("untuk tahun 2024", "in 2024")."""
    left = rest.replace(said, " ")
    return len(_WORD.findall(_PREPOSITION.sub("", left.strip()))) <= 1


async def standalone(questions: Sequence[str], lang: str, generator: object | None = None) -> Standalone:
    """The last of a conversation's user questions as it can be asked alone. Each earlier one is made standalone in
    turn, so a follow-up of a follow-up leans on the question the previous one became."""
    if not questions:
        raise ValueError("no question")
    current = questions[0].strip()
    result = Standalone(current, False)
    for q in questions[1:]:
        q = q.strip()
        if not is_followup(q):
            current, result = q, Standalone(q, False)
            continue
        text, by = None, "rules"
        if isinstance(generator, FollowupRewriter):
            try:
                text = await generator.rewrite_followup(current, q, lang)
            except Exception as e:  # a failed rewrite costs the model's help, not the answer
                log.warning("the generator could not rewrite the follow-up: %s", e)
            if text and _keeps_words(text, current, q):
                by = getattr(generator, "name", "generator")
            else:
                text = None
        result = Standalone(text or by_rules(current, q), True, by, current)
        current = result.question
    return result


def _keeps_words(text: str, previous: str, followup: str) -> bool:
    """A model's standalone question keeps the follow-up's content words and most of the previous question's (a
    rewrite that changes what is asked is not used)."""
    have = {w.casefold() for w in _WORD.findall(text)}
    def content(s: str) -> list[str]:
        return [w.casefold() for w in _WORD.findall(s) if (len(w) > 3 or w.isdigit()) and w.casefold() not in _FUNCTION]
    asked, before = content(_LEAD.sub("", followup)), content(previous)
    return all(w in have for w in asked) and (not before or sum(w in have for w in before) >= 0.6 * len(before))
