"""Receipts against a gold reference: which law, Pasal, ayat and huruf/angka a shown claim cites.

A receipt is a citation path as pipeline/citations.py writes it: the document's citation name,
its headings, then "Pasal N", "ayat (N)", "huruf x", "angka N" as separate " › " steps
("PP 34/2021 › BAB VI … › Pasal 35 › ayat (1) › huruf b"; an amended article reads
"Pasal I angka 1 › Pasal 14"). A dataset row's `reference` names the gold receipt:
``{"law": "PP 34/2021", "pasal": ["12"], "ayat": "2", "huruf": "h"}`` — `pasal` lists every
Pasal that counts (a question about a whole BAB lists the BAB's), a `huruf` that is a digit is
an *angka* item (Pasal 1 angka 9), a letter a huruf item.

Everything here is pure: the runner feeds it paths and quotes, the metrics read its fields
back from questions.jsonl.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass
from typing import Iterable, Mapping, Sequence

from .datasets import Reference, answer_key

LEVELS = ("law", "pasal", "ayat", "huruf")

# -------------------------------------------------------------------------------------------- law names

_KIND_ALIASES = {  # long forms a document title uses, to the short form citations use
    "UNDANGUNDANG": "UU", "PERATURANPEMERINTAH": "PP", "PERATURANPRESIDEN": "PERPRES",
    "PERATURANMENTERIKEUANGAN": "PMK", "PERATURANDAERAH": "PERDA",
    "PERATURANPEMERINTAHPENGGANTIUNDANGUNDANG": "PERPPU",
}
_LAW = re.compile(
    r"^\s*(?P<kind>[^\W\d_][^\d/]*?)\s*(?:\bNo\b\.?|\bNomor\b)?\s*(?P<num>\d+[A-Za-z]?)"
    r"\s*(?:/\s*[^\W\d_][\w.]*\s*)?(?:/|\bTahun\b)\s*(?P<year>\d{4})\s*$", re.IGNORECASE)


def law_key(name: str | None) -> tuple[str, str, str] | None:
    """(kind, number, year) of a regulation's name, tolerant of spacing and case: "PP 34/2021",
    "pp 34 / 2021", "PP Nomor 34 Tahun 2021" and "Peraturan Pemerintah Nomor 34 Tahun 2021" are one
    law. None when the name is not a regulation's."""
    if not name:
        return None
    m = _LAW.match(unicodedata.normalize("NFKC", name))
    if not m:
        return None
    kind = re.sub(r"[^A-Z]", "", m["kind"].upper()).removesuffix("REPUBLIKINDONESIA")
    kind = _KIND_ALIASES.get(kind, kind)
    if not kind:
        return None
    return kind, m["num"].upper().lstrip("0") or "0", m["year"]


def same_law(a: str | None, b: str | None) -> bool:
    """Two names of one law: by (kind, number, year) when both parse, else by their text
    (case and spacing ignored)."""
    if not a or not b:
        return False
    ka, kb = law_key(a), law_key(b)
    if ka is not None and kb is not None:
        return ka == kb
    return re.sub(r"\s+", "", a).casefold() == re.sub(r"\s+", "", b).casefold()


def law_slug(name: str) -> str:
    """"PP 35/2021" → "pp-35-2021": a directory name for a corpus without that law."""
    key = law_key(name)
    text = "-".join(key) if key else name
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "law"


# -------------------------------------------------------------------------------------------- paths

_ITEM = r"\(?[0-9A-Za-z]+\)?"
_RANGE = re.compile(r"\s*(?:–|—|-|s\.d\.|s/d|sampai dengan)\s*")
_TOKEN = re.compile(rf"\b(Pasal|ayat|huruf|angka|paragraph|letter|point)\s+({_ITEM}(?:{_RANGE.pattern}{_ITEM})?)",
                    re.IGNORECASE)
_FIELD = {"pasal": "pasal", "ayat": "ayat", "paragraph": "ayat", "huruf": "huruf", "letter": "huruf",
          "angka": "angka", "point": "angka"}


@dataclass(frozen=True)
class Cite:
    """Where a receipt points: the law, the innermost Pasal, and its ayat, huruf and angka (a range
    such as "a–m" when the quote spans several items)."""

    law: str | None
    pasal: str | None = None
    ayat: str | None = None
    huruf: str | None = None
    angka: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def _value(raw: str) -> str:
    parts = [p.strip("()").strip() for p in _RANGE.split(raw.strip())]
    return "–".join(p for p in parts if p)


# the marker the chunker gives each piece of a unit too long for one chunk ("Pasal 10 ayat (1) (bagian 1/2)",
# ingest/chunker.py, ingest/units.LABELS "part"): which piece, not where in the regulation
_PIECE = re.compile(r"\s*\((?:bagian|part)\s+\d+\s*/\s*\d+\)", re.IGNORECASE)


def _structural(step: str) -> bool:
    """A step made only of Pasal/ayat/huruf/angka tokens (not a heading such as "BAB II …")."""
    return bool(_TOKEN.match(step)) and not _TOKEN.sub("", step).strip(" ,")


def parse_receipt(path: str | None, location: str | None = None, document: str | None = None) -> Cite:
    """A receipt path read into a Cite. The first step is the document's citation name unless it is
    itself a location; a later "Pasal" starts afresh (an amending "Pasal I angka 1 › Pasal 14" is Pasal 14).
    Without a path, `location` ("Pasal 35 ayat (1) huruf b") and `document` stand in."""
    steps = [s.strip() for s in (path or "").split("›") if s.strip()]
    if not steps:
        steps = [s for s in (document, location) if s]
    steps = [_PIECE.sub("", s).strip() for s in steps]
    law = None
    if steps and not _structural(steps[0]):
        law = steps.pop(0)
    found: dict[str, str | None] = {"pasal": None, "ayat": None, "huruf": None, "angka": None}
    for step in steps:
        if not _structural(step):
            continue
        for m in _TOKEN.finditer(step):
            field = _FIELD[m[1].lower()]
            if field == "pasal":
                found = {"pasal": None, "ayat": None, "huruf": None, "angka": None}
            elif field == "ayat":
                found.update(huruf=None, angka=None)
            found[field] = _value(m[2])
    return Cite(law, **found)


def _item_key(v: str) -> tuple[int, int | str]:
    v = v.strip().casefold()
    return (0, int(v)) if v.isdigit() else (1, v)


def same_item(cited: str | None, gold: str | None) -> bool:
    """A cited Pasal/ayat/huruf/angka is the gold one, or a range ("a–m", "1–5") that holds it."""
    if not cited or not gold:
        return False
    g = _item_key(gold)
    ends = cited.split("–")
    if len(ends) == 2:
        lo, hi = _item_key(ends[0]), _item_key(ends[1])
        if lo[0] == hi[0] == g[0] and (g[0] == 0 or (len(str(lo[1])) == len(str(hi[1])) == len(str(g[1])) == 1)):
            return lo[1] <= g[1] <= hi[1]
    return _item_key(cited) == g


def cite_hits(cite: Cite, ref: Reference) -> dict[str, bool | None]:
    """Which gold levels one cite reaches, each requiring the ones above it in the same cite: law;
    Pasal (law and one of the gold Pasal); ayat (and the gold ayat) where the gold has one; huruf/angka
    (and the gold item: an angka when the gold `huruf` is a digit) where the gold has one."""
    law = same_law(cite.law, ref.law)
    pasal = law and any(same_item(cite.pasal, p) for p in ref.pasal)
    ayat = (pasal and same_item(cite.ayat, ref.ayat)) if ref.ayat else None
    huruf = None
    if ref.huruf:
        item = cite.angka if ref.huruf.isdigit() else cite.huruf
        huruf = pasal and ayat is not False and same_item(item, ref.huruf)
    return {"law": law, "pasal": pasal, "ayat": ayat, "huruf": huruf}


def claim_hits(cites: Sequence[Cite], ref: Reference) -> dict[str, bool | None]:
    """A claim (or several) reaches a level when one of its verified cites does; None where the
    gold has no such level."""
    each = [cite_hits(c, ref) for c in cites]
    out: dict[str, bool | None] = {}
    for level in LEVELS:
        if (level == "ayat" and not ref.ayat) or (level == "huruf" and not ref.huruf):
            out[level] = None
        else:
            out[level] = any(h[level] for h in each)
    return out


# -------------------------------------------------------------------------------------------- answers

_REF_NUM = r"(?:\d+[A-Za-z]?|[IVXLC]+)"
_REF_AT = r"(?:\s*ayat\s*\(\s*\d+[a-z]?\s*\))?(?:\s*huruf\s+[a-z])?(?:\s*angka\s+\d+)?"
_REF_SEP = r"(?:\s*(?:-|–|—|\.\.\.|…|,|s\.d\.|s/d|sampai dengan|dan|atau|hingga)\s*)"
_REFERENCE_ONLY = re.compile(
    rf"^\(?\s*(?:[A-Za-z]+\s*\d+\s*/\s*\d{{4}}\s*,?\s*)?Pasal\s+{_REF_NUM}{_REF_AT}"
    rf"(?:{_REF_SEP}(?:Pasal\s+)?{_REF_NUM}{_REF_AT})*\s*\)?\s*\.?$", re.IGNORECASE)


def is_reference_only(answer: str) -> bool:
    """A gold answer that only points somewhere ("Pasal 34", "Pasal 32-35", "(PP 34/2021 Pasal 28...Pasal
    31)"): no quote can contain it, so it is no span answer."""
    return bool(_REFERENCE_ONLY.match(" ".join(answer.split())))


_MARKER = re.compile(r"^\s*(?:\(\s*\d{1,3}\s*\)|\d{1,3}[.)]|[a-z][.)])\s+", re.MULTILINE)


_PASAL_HEADING = re.compile(r"^\s*Pasal\s+\d{1,4}[A-Z]?\s+(?=\S)")


def answer_variants(gold: str) -> tuple[str, ...]:
    """The gold, the gold without the Pasal heading it opens with ("Pasal 60 Pengawasan …" → "Pengawasan …": the
    receipt's citation names the Pasal, its quote holds the text), and each without the list markers that open its
    lines ("e. lembaga …" → "lembaga …"): a quote of one item of an enumeration does not carry its "e.", the gold
    often does."""
    body = _PASAL_HEADING.sub("", gold, count=1)
    forms = (gold, body, _MARKER.sub("", gold), _MARKER.sub("", body))
    return tuple(dict.fromkeys(f for f in forms if f.strip()))


def span_golds(golds: Iterable[str]) -> tuple[str, ...]:
    """The gold answers a quote could hold: every one but those that are only a reference."""
    return tuple(g for g in golds if g.strip() and not is_reference_only(g))


def _hay(text: str) -> str:
    return f" {answer_key(text)} "


def holds_span(text: str, golds: Iterable[str]) -> bool:
    """A gold answer (or its variant without list markers) inside `text`, as whole words, after the
    eval's answer normalisation (NFKC, case folded, punctuation as space)."""
    hay = _hay(text)
    return any(k and f" {k} " in hay for g in golds for k in map(answer_key, answer_variants(g)))


def gold_lines(gold: str) -> list[str]:
    """A gold answer written on several lines (a lead-in and its items, a Pasal's ayat), each line normalised without
    its list marker ("(1)", "a."): a quote carries an item's letter but not an ayat's number, or neither."""
    return [k for k in (answer_key(_MARKER.sub("", ln)) for ln in gold.splitlines()) if k]


def lines_in_order(hay: str, lines: Sequence[str], window: int | None = None) -> bool:
    """Every line inside `hay` (an _hay-normalised text) as whole words, in order, the first to the end of the last
    within `window` characters (None: anywhere)."""
    start = hay.find(f" {lines[0]} ")
    while start != -1:
        pos, ok = start + len(lines[0]) + 1, True
        for ln in lines[1:]:
            at = hay.find(f" {ln} ", pos)
            if at == -1 or (window is not None and at + len(ln) - start > window):
                ok = False
                break
            pos = at + len(ln) + 1
        if ok:
            return True
        start = hay.find(f" {lines[0]} ", start + 1)
    return False


def span_hit(claim_quotes: Sequence[Sequence[str]], golds: Iterable[str]) -> bool:
    """A gold answer inside one verified quote of a shown claim, or inside that claim's verified
    quotes joined in order with a space (an enumeration's lead-in and one of its items, quoted
    as two quotes of one claim); a gold of several lines also when each of its lines, without its
    list marker, is inside those joined quotes in order (the rule by which CorpusText counts it a
    span answer: a Pasal's ayat quoted one quote each, their labels not quoted)."""
    golds = span_golds(golds)
    if not golds:
        return False
    multi = [ls for g in golds if len(ls := gold_lines(g)) > 1]
    for quotes in claim_quotes:
        if any(holds_span(q, golds) for q in quotes):
            return True
        joined = " ".join(quotes)
        if len(quotes) > 1 and holds_span(joined, golds):
            return True
        if multi and any(lines_in_order(_hay(joined), ls) for ls in multi):
            return True
    return False


class CorpusText:
    """The corpus's texts (renditions), normalised once, asked whether a gold answer occurs in them."""

    WINDOW = 4000  # normalised characters: a lead-in and its item lie within one Pasal

    def __init__(self, texts: Iterable[str]):
        self._hays = [_hay(t) for t in texts if t]

    def holds(self, golds: Iterable[str]) -> bool:
        """A span answer: a gold answer (not only a reference) occurs in one document as whole words;
        or, for a gold written as a lead-in and items on their own lines, every line (without its list
        marker) occurs in one document, in order, within `WINDOW` characters."""
        golds = span_golds(golds)
        keys = {k for g in golds for k in map(answer_key, answer_variants(g)) if k}
        if any(f" {k} " in hay for hay in self._hays for k in keys):
            return True
        for g in golds:
            lines = gold_lines(g)
            if len(lines) > 1 and any(lines_in_order(hay, lines, self.WINDOW) for hay in self._hays):
                return True
        return False


# -------------------------------------------------------------------------------------------- a row


def receipt_fields(ref: Reference, claims: Sequence[Mapping], golds: Iterable[str], span_answer: bool) -> dict:
    """A question's `receipt` in questions.jsonl, from its shown supported claims in order, each
    ``{"paths": [receipt path of each verified citation], "quotes": [its verified quotes],
    "band", "confidence"}`` (paths may be Cite objects already). `top` is the first claim (as
    `correct_top1`), `any` every claim together."""
    cited = [[p if isinstance(p, Cite) else parse_receipt(p) for p in c.get("paths") or ()] for c in claims]
    top = None
    if claims:
        first = claims[0]
        top = {"band": first.get("band"), "confidence": first.get("confidence"),
               "cites": [c.as_dict() for c in cited[0]], **claim_hits(cited[0], ref)}
    laws = list(dict.fromkeys(c.law for cs in cited for c in cs if c.law))
    return {
        "reference": ref.as_dict(),
        "top": top,
        "any": claim_hits([c for cs in cited for c in cs], ref),
        "laws": laws,
        "span_answer": bool(span_answer),
        "span_hit": span_hit([list(c.get("quotes") or ()) for c in claims], golds),
    }
