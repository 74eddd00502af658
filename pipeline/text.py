"""Text primitives shared by every stage: the contract's normalisation, sentences, language.

`normalise` is the one definition of "the same text" the quote gate uses: Unicode NFKC,
whitespace runs folded to a single space, nothing else — no case folding, no paraphrase.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

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


# --- look-alikes: what a reader sees, for detection and query analysis (never for quotes) ---

# Cyrillic and Greek letters drawn like Latin ones: "Аbaikan" with a Cyrillic А reads as
# "Abaikan" to a person and to a model, so a filter must read it that way too.
_CONFUSABLES = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j", "ԁ": "d", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Ԁ": "D", "Һ": "H", "Ӏ": "I", "Ԛ": "Q", "Ԝ": "W",
    # Greek
    "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
})


def lookalike_view(text: str) -> tuple[str, list[int]]:
    """`text` as a reader sees it, with the index in `text` of every character of the view.

    Format characters (Unicode category Cf: zero-width space, ZWNJ, ZWJ, word joiner,
    soft hyphen, BOM) are dropped, every other character is NFKC-normalised, and Cyrillic
    and Greek look-alikes become the Latin letter they imitate. `index` has one entry more
    than the view (len(text)), so a view span [a, b) is the source span
    [index[a], index[b - 1] + 1). For detection only: quotes are checked on the source.
    """
    out: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        if ch.isascii():
            out.append(ch)
            index.append(i)
            continue
        if unicodedata.category(ch) == "Cf":
            continue
        for c in unicodedata.normalize("NFKC", ch).translate(_CONFUSABLES):
            out.append(c)
            index.append(i)
    index.append(len(text))
    return "".join(out), index


_MIXED_WORD = re.compile(r"[^\W\d_]+")


def fold_lookalikes(text: str) -> str:
    """Format characters dropped, NFKC, and look-alikes made Latin inside words that also hold
    a Latin letter ("Раjak" → "Pajak"); a word wholly in Cyrillic or Greek is left alone."""
    text = unicodedata.normalize("NFKC", "".join(ch for ch in text if unicodedata.category(ch) != "Cf"))
    if text.isascii():
        return text

    def fold(m: re.Match[str]) -> str:
        w = m.group()
        return w.translate(_CONFUSABLES) if any("a" <= c.lower() <= "z" for c in w) else w

    return _MIXED_WORD.sub(fold, text)
