"""Chapters: the BAB a question asks about as a whole.

People ask about a regulation's topics the way its chapters name them: "Bagaimana ketentuan mengenai
kepesertaan dan tata cara pendaftaran …?" is answered by "BAB II KEPESERTAAN DAN TATA CARA PENDAFTARAN",
and any of its Pasal is where the answer starts (the legal_qa gold of such questions lists the chapter's
Pasal). The title of a chapter is in its passages' `heading`, not in their text, so the reader meets it
only through the passage's label, at half credit; this module says when a question names a chapter of a
passage it reads:

- the question asks about provisions as a whole (`asks_whole`: "Bagaimana …", "Apa saja …", "Jelaskan …",
  "What are the rules on …"), not a yes/no question, a who/when/how-much question or a definition;
- every word of the chapter's title is said by the question, by a translation or expansion of one of its terms
  (the glossary's "dispute settlement" -> "penyelesaian sengketa"), or spelt by one of its abbreviations ("TKA" for
  "Tenaga Kerja Asing", "JKK" for "Jaminan Kecelakaan Kerja");
- the title, with the document's title (which a question names as "dalam penyelenggaraan program JKK dan
  JKM"), states at least `share` (generator.chapter) of the terms the question asks, each counted once; words that only
  say "the provisions on" (ketentuan, aturan, mekanisme, …) are not counted against it. Not by the terms' weights:
  those are the collection's (how rare a word is in it) and change as it grows — "PKWT" weighs 2.8 among four
  regulations and 8.3 in the statute book, where "Apa saja yang perlu dimuat dalam PKWT?" would read as a question
  about the whole PKWT chapter (issue 30) — while what a question asks does not.

The reader's mined chapter questions (reader/mining.py) take their chapters from here too (`heading_title`,
`askable`), so training and the generator's chapter reading (backends/lite.py) agree on what a chapter is.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from .types import Term

_HEADING = re.compile(r"^(?:BAB|CHAPTER)\s+[IVXLC\d]+\s+(?P<title>.+)$")
_CLOSING = re.compile(r"ketentuan\s+(umum|penutup|peralihan|lain)")
# a question about provisions as a whole: how something is regulated, what is regulated, explain
_WHOLE = re.compile(
    r"^\W*(?:bagaimana(?:kah)?|apa\s+saja|apa\s+(?:ketentuan|aturan|kebijakan|pengaturan|yang\s+diatur|yang\s+perlu)|"
    r"jelaskan|uraikan|what\s+are\s+the\s+(?:rules|provisions|requirements)|what\s+does\s+the\s+\w+\s+(?:say|provide)|"
    r"how\s+(?:is|are)\b[^?]*\bregulated)\b", re.IGNORECASE)
# words that say only "the provisions on …": neither for nor against a chapter
FRAME = frozenset({
    "bagaimana", "bagaimanakah", "apa", "saja", "jelaskan", "uraikan", "uraian", "ketentuan", "ketentuan-ketentuan",
    "aturan", "aturan-aturan", "pengaturan", "diatur", "mengatur", "kebijakan", "mekanisme", "hal", "hal-hal",
    "terkait", "mengenai", "tentang", "berkaitan", "kaitannya", "perlu", "diperhatikan", "dasar", "berlaku",
    "rules", "provisions", "requirements", "regulated", "regulation", "say", "provide", "law",
})
_FUNCTION = frozenset({"dan", "atau", "bagi", "pada", "dalam", "yang", "di", "ke", "dari", "untuk", "serta", "oleh",
                       "dengan", "terhadap", "the", "of", "and", "or", "for", "in", "on", "to", "by"})
_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*", re.UNICODE)
_ACRONYM = re.compile(r"^[A-Z]{2,7}$")


def heading_title(heading: str | None) -> str | None:
    """The title of the chapter a passage's heading opens with, as written ("BAB IV KEPESERTAAN DAN TATA CARA
    PENDAFTARAN › …" -> "KEPESERTAAN DAN TATA CARA PENDAFTARAN"); None when the heading is no chapter's."""
    m = _HEADING.match(heading.split(" › ")[0]) if heading else None
    return m.group("title") if m else None


def askable(title: str) -> bool:
    """A (lower-cased) chapter title someone asks about as a topic: not "ketentuan umum", the transitional or the
    closing chapter, and short enough to be a topic."""
    return 1 <= len(title.split()) <= 10 and not _CLOSING.search(title)


def chapter_title(heading: str | None) -> str | None:
    """A BAB's title as a question names it: "BAB IV KEPESERTAAN DAN TATA CARA PENDAFTARAN" -> "kepesertaan dan tata
    cara pendaftaran"; None for a heading that is no chapter, or a chapter no one asks about (`askable`)."""
    raw = heading_title(heading)
    if raw is None:
        return None
    title = " ".join(_WORD.findall(raw)).lower()
    return title if askable(title) else None


def asks_whole(question: str) -> bool:
    """The question asks how something is regulated, or what is, as a whole ("Bagaimana ketentuan …", "Apa saja …")."""
    return bool(_WHOLE.match(question))


def _spelt(acronym: str, words: Sequence[str]) -> set[int]:
    """Positions of the content words a run of `words` spells `acronym` with (function words inside the run are
    skipped: "Jaminan Kecelakaan Kerja" is JKK, "Pemberi Kerja dan Tenaga Kerja" is not PKTK)."""
    letters = acronym.lower()
    content = [i for i, w in enumerate(words) if w.lower() not in _FUNCTION]
    for start in range(len(content) - len(letters) + 1):
        run = content[start:start + len(letters)]
        if all(words[i][0].lower() == ch for i, ch in zip(run, letters)) and run[-1] - run[0] < 2 * len(letters):
            return set(run)
    return set()


@dataclass(frozen=True)
class ChapterMatch:
    """How a chapter's title meets a question: `said` — every content word of the title is in the question (or
    spelt by one of its abbreviations); `share` — the share of the question's terms (frame words aside, each counted
    once) that the title and the document's title state."""

    said: bool
    share: float


def match(question: str, terms: Iterable[Term], title: str, document: str,
          tokens: Callable[[str], frozenset[str]]) -> ChapterMatch:
    """How `title` (a chapter_title) of a passage of `document` (its title) meets the question. `tokens`: the
    analyser's tokens of a text (QueryAnalyzer.all_tokens), so stems meet as the searches meet them."""
    q_tokens = tokens(question)
    acronyms = [w for w in _WORD.findall(question) if _ACRONYM.match(w)]
    t_words = _WORD.findall(title)
    covered: set[int] = set()
    for a in acronyms:
        covered |= _spelt(a, t_words)
    # a title word is said by the question's own words, or by a question term whose form (a glossary translation, an
    # expanded abbreviation: "dispute settlement" -> "penyelesaian sengketa", "PHK") the title states whole
    t_tokens = tokens(title)
    heard = set(q_tokens)
    for t in terms:
        for alt in t.alternatives:
            if alt and all(x in t_tokens for x in alt):
                heard.update(alt)
    said = all(i in covered or bool(tokens(w) & heard)
               for i, w in enumerate(t_words) if w.lower() not in _FUNCTION)
    stated = tokens(f"{title} {document}")
    d_words = _WORD.findall(f"{title} {document}")
    asked = [t for t in terms if t.term.lower() not in FRAME]
    hit = sum(t.matched_by(stated) or (t.term.upper() in acronyms and bool(_spelt(t.term.upper(), d_words)))
              for t in asked)
    return ChapterMatch(said, hit / len(asked) if asked else 0.0)
