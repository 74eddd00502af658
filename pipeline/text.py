"""Text primitives shared by every stage: the contract's normalisation, sentences, language.

`normalise` is the one definition of "the same text" the quote gate uses: Unicode NFKC,
whitespace runs folded to a single space, nothing else — no case folding, no paraphrase.
"""
from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

import regex

if TYPE_CHECKING:
    from .types import Chunk

_WS = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, then every run of whitespace becomes one space; ends stripped."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text)).strip()


def embedding_text(chunk: "Chunk") -> str:
    """A passage as the models read it (the dense lane's embedder, the cross-encoder): the title
    and location give a bare paragraph its context."""
    return f"{chunk.title} — {chunk.location}\n{chunk.text}"


def contains_normalised(haystack: str, needle: str) -> bool:
    """True when `needle` is an exact substring of `haystack` after normalisation."""
    n = normalise(needle)
    return bool(n) and n in normalise(haystack)


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str  # exactly text[start:end] of the source it was cut from


# A sentence ends at . ! ? ; followed by whitespace and something that starts a new
# sentence; "1.250.000" or "5.5.1" never end one (no whitespace after the dot). Such an
# end is ignored after an abbreviation ("Rp.", "No.", "dll.", "huruf a.").
_SOFT_END = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[]?[A-Z0-9(])")
# Structure always breaks: a blank line, a new ayat "(2)", a list item "a." / "1.", or a
# colon before a list.
_HARD_BREAK = re.compile(r"\n\s*\n|\n\s*(?=\(\d{1,2}[a-z]?\)\s|[a-z]\.\s|\d{1,2}\.\s)"
                         r"|(?<=:)\s*\n\s*(?=\(?[a-z0-9]{1,3}[.)]\s)")
_ABBREV = re.compile(r"(?:\b(?:Rp|No|Nomor|Jl|dll|dsb|dst|tsb|Yth|Bpk|Ibu|Sdr|Prof|Dr|Ir|hlm|psl|ayat|huruf|angka|e\.g|i\.e|etc|vs|cf|Mr|Mrs|Ms|St|Co|Inc|Ltd|Tbk)\.|\b[A-Za-z]\.)$")


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) of text without its leading and trailing whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def split_sentences(text: str, min_chars: int = 1) -> list[Sentence]:
    """Cut text into sentences, returning exact slices so quotes stay verbatim.

    Pieces shorter than `min_chars` are merged into their neighbour, so a list marker or
    a stray heading never becomes a sentence on its own.
    """
    cuts = {0, len(text)}
    for m in _SOFT_END.finditer(text):
        if not _ABBREV.search(text[max(0, m.start() - 12):m.start()]):
            cuts.add(m.start())
    cuts.update(m.start() for m in _HARD_BREAK.finditer(text))
    cuts = sorted(cuts)
    raw: list[tuple[int, int]] = []
    for a, b in zip(cuts, cuts[1:]):
        # strip leading/trailing whitespace by moving offsets, never by editing text
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            raw.append((a, b))
    merged: list[tuple[int, int]] = []
    for a, b in raw:
        if merged and (merged[-1][1] - merged[-1][0] < min_chars):
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    if len(merged) > 1 and merged[-1][1] - merged[-1][0] < min_chars:
        last = merged.pop()
        merged[-1] = (merged[-1][0], last[1])
    return [Sentence(a, b, text[a:b]) for a, b in merged]


_ID_MARKERS = frozenset(
    "yang dan di ke dari untuk dengan adalah dalam pada tidak atau ini itu sebagaimana "
    "dimaksud atas oleh bahwa secara tersebut serta akan dapat wajib harus paling".split())
_EN_MARKERS = frozenset(
    "the and of to in is are be for with that this by on or as an which shall must "
    "from at not it its when should "
    # question words and modals: a short English question may hold none of the words above
    # ("Can a private individual, rather than a company, hire a foreign worker?"). Not "do": it
    # names things in Indonesian text ("Jeet Kune Do").
    "what how who whom whose where why can could does did was were has have had may might will "
    "would than if there their they into after before about under any".split())
_WORD = re.compile(r"[A-Za-z]+")


def detect_language(text: str) -> str:
    """'id' or 'en' by counting function words; Indonesian when undecided.

    Good enough for routing analysers over formal prose; documents can state their
    language in front matter, which always wins.
    """
    words = [w.lower() for w in _WORD.findall(text[:20000])]
    ids = sum(w in _ID_MARKERS for w in words)
    ens = sum(w in _EN_MARKERS for w in words)
    return "en" if ens > ids else "id"


def locate(haystack: str, needle: str) -> tuple[int, int] | None:
    """Where `needle` occurs in `haystack` under normalisation, as raw offsets of `haystack`.

    Used to cite a quote to the ayat it came from; the match itself is the quote gate's.
    """
    pos = haystack.find(needle)
    if pos >= 0 and needle:
        return pos, pos + len(needle)
    chars: list[str] = []
    origin: list[int] = []
    in_space = False
    clusters: list[tuple[int, str]] = []  # a base character with its combining marks, so NFKC can compose
    for i, ch in enumerate(haystack):
        if clusters and unicodedata.combining(ch):
            clusters[-1] = (clusters[-1][0], clusters[-1][1] + ch)
        else:
            clusters.append((i, ch))
    for i, ch in clusters:
        norm = unicodedata.normalize("NFKC", ch)
        if norm.isspace() or not norm:
            if not in_space and chars:
                chars.append(" ")
                origin.append(i)
            in_space = bool(chars)
            continue
        in_space = False
        for c in norm:
            chars.append(c)
            origin.append(i)
    norm_hay = "".join(chars)
    n = normalise(needle)
    at = norm_hay.find(n) if n else -1
    if at < 0:
        return None
    return origin[at], origin[at + len(n) - 1] + 1


# --- look-alikes: what a reader sees, for detection, query analysis and names (never for quotes) ---
#
# One normaliser, built on Unicode's own data rather than a hand list:
#   - invisible: every Default_Ignorable_Code_Point (zero-width space, CGJ U+034F, Hangul filler U+3164, variation
#     selectors, Mongolian free variation selectors, …), every format character (Cf) and every combining mark (Mn,
#     Me: "sis\u0323tem" reads "sistem") is dropped; so, for detection, is a symbol or an unassigned or private-use
#     character between two letters (a braille blank U+2800 inside a word);
#   - look-alike: UTS #39's confusables (Unicode's confusables.txt, as the confusable_homoglyphs package ships it,
#     MIT licence): a character drawn like a Latin letter or digit reads as that letter or digit ("Раjak" with a
#     Cyrillic Р, "PMl" with a lower-case L for I, "2O25" with the letter O for zero in a name).

_INVISIBLE = regex.compile(r"[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Mn}\p{Me}]")


def invisible(ch: str) -> bool:
    """Whether a reader sees nothing of `ch` (see above)."""
    return bool(_INVISIBLE.match(ch))


@lru_cache(maxsize=1)
def _confusable_groups() -> dict[str, frozenset[str]]:
    """Each single code point confusables.txt relates to another, with every code point drawn like it (the union of
    its relations, followed through: l ~ 1 ~ I)."""
    data = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    parent: dict[str, str] = {}

    def find(c: str) -> str:
        while parent.setdefault(c, c) != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c
    for ch, alikes in data.items():
        for a in alikes:
            other = _INVISIBLE.sub("", a["c"])  # confusables.json wraps right-to-left letters in LRM marks
            if len(ch) == 1 and len(other) == 1:
                ra, rb = find(ch), find(other)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, set[str]] = {}
    for c in list(parent):
        groups.setdefault(find(c), set()).add(c)
    return {c: frozenset(g) for g in groups.values() for c in g}


@lru_cache(maxsize=1)
def _latin_table() -> dict[int, str]:
    """A non-ASCII character drawn like an ASCII letter or digit -> that letter or digit (the one of its own case
    when its group has several: Cyrillic "а" -> "a", "А" -> "A"; PALOCHKA "Ӏ" -> "I")."""
    table: dict[int, str] = {}
    for ch, group in _confusable_groups().items():
        if ch.isascii():
            continue
        latin = sorted(c for c in group if c.isascii() and c.isalnum())
        if not latin:
            continue
        same_case = [c for c in latin if c.isalpha() and (c.isupper() == ch.isupper())]
        letters = [c for c in latin if c.isalpha()]
        table[ord(ch)] = (same_case or letters or latin)[0]
    return table


@lru_cache(maxsize=1)
def _other_script_table() -> dict[int, str]:
    """`_latin_table` without the Latin script's own letters: a query's "ł" or "ø" is a letter of a name
    ("Stanisław"), read as written; a Cyrillic "Р" in "Раjak" is a disguise."""
    latin = regex.compile(r"\p{Script=Latin}")
    return {k: v for k, v in _latin_table().items() if not latin.match(chr(k))}


def lookalike_view(text: str) -> tuple[str, list[int]]:
    """`text` as a reader sees it, with the index in `text` of every character of the view.

    Invisible characters are dropped, every other character is NFKC-normalised, and a character drawn like a Latin
    letter or digit becomes it (above). `index` has one entry more than the view (len(text)), so a view span [a, b)
    is the source span [index[a], index[b - 1] + 1). For detection only: quotes are checked on the source.
    """
    table = _latin_table()
    out: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        if ch.isascii():
            out.append(ch)
            index.append(i)
            continue
        if invisible(ch):
            continue
        for c in unicodedata.normalize("NFKC", ch):
            if invisible(c):
                continue
            out.append(table.get(ord(c), c))
            index.append(i)
    # a symbol, private-use or unassigned character inside a word ("penjaw\u2800ab": a braille blank) splits
    # nothing a reader reads as a word: dropped too
    keep = [not (0 < k < len(out) - 1 and out[k - 1].isalpha() and out[k + 1].isalpha()
                 and unicodedata.category(out[k])[0] in "SC" and not out[k].isspace()) for k in range(len(out))]
    if not all(keep):
        out = [c for c, k in zip(out, keep) if k]
        index = [i for i, k in zip(index, keep) if k]
    index.append(len(text))
    return "".join(out), index


def name_keys(name: str) -> frozenset[str]:
    """A name (a citation name, an id) as a reader tells names apart: invisible characters dropped, NFKC, every
    character replaced by the first of those drawn like it (the skeleton of UTS #39, over confusables.txt), only
    letters and digits kept, case folded. Two keys, the name's skeleton and its lower case's ("PMI" is drawn like
    "PM1" and "PMl"; "pmi" like "PMI"): two names are alike when they share one. "PMl 7-2025", "PMI\u034f 7/2025",
    "РМI 7∕2025" and "pmi 7/2025" are all alike "PMI 7/2025"."""
    groups = _confusable_groups()
    base = unicodedata.normalize("NFKC", _INVISIBLE.sub("", unicodedata.normalize("NFD", name)))

    def skeleton(text: str) -> str:
        return "".join(c for c in "".join(min(groups.get(ch, (ch,))) for ch in text).casefold() if c.isalnum())
    return frozenset({skeleton(base), skeleton(base.casefold())})


_MIXED_WORD = re.compile(r"[^\W\d_]+")


def fold_lookalikes(text: str) -> str:
    """Invisible characters dropped, NFKC, and look-alikes made Latin inside words that also hold
    a Latin letter ("Раjak" → "Pajak"); a word wholly in another script is left alone."""
    # composed first: an accented letter of a name ("Józef") stays itself; a mark that composes with nothing
    # (inserted to break a word) is dropped
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    if text.isascii():
        return text
    table = _other_script_table()

    def fold(m: re.Match[str]) -> str:
        w = m.group()
        return w.translate(table) if any("a" <= c.lower() <= "z" for c in w) else w

    return _MIXED_WORD.sub(fold, text)


# A year as a scan reads it: OCR of older laws turns 0 into O, 1 into l, L or I, 9 into g and 5 into s or S
# ("2 November 2O2O", "Nomor 13 Tahun 2OO3", "Tahun 2Oll", "Tahun lggg", "Tahun L945", "Tahun 194S"). It must start as
# a year of this statute book does (19.., 20..); used only where a year is expected (after "Tahun", in a closing's
# date); `scanned_year` gives the number back. Not Z: the scans write 2 and 7 alike as Z (UU 2/2017 is signed
# "12 Januari 2OlZ"), so a year with a Z is not read.
SCANNED_YEAR = r"(?:[1lIL][9g]|2[0Oo])[0-9OoIiLlgsS]{2}(?!\d)"
_OCR_DIGITS = str.maketrans("OoIiLlgsS", "001111955")


def scanned_digits(text: str) -> str:
    """Digits as a scan wrote them, as digits ("2O2O" -> "2020", "2oll" -> "2011", "lggg" -> "1999")."""
    return text.translate(_OCR_DIGITS)


def scanned_year(text: str) -> int:
    """The year a SCANNED_YEAR match stands for ("2O2O" -> 2020)."""
    return int(scanned_digits(text))
