"""Cross-references: find "sebagaimana dimaksud dalam Pasal 5 ayat (2)" in a chunk and say which chunk it means.

Regulations lean on each other ("Pasal 70 ayat (1) Peraturan Pemerintah Nomor 34 Tahun
2011") and on themselves ("pada ayat (1)"); a passage read alone is often incomplete
without the one it points at. Extraction is deliberately narrow: only numbered
instruments, numbered Pasal/ayat/huruf/angka and standards' paragraphs count, so a
self-reference ("Peraturan Menteri ini") or a gazette citation ("Lembaran Negara ... Nomor
66") never becomes a link. Resolution never guesses: a target that is not in the corpus,
or a Pasal the document does not have, comes back unresolved with the reason.

Ranges ("Pasal 2 sampai dengan Pasal 5", "paragraf 15–17") give their two endpoints, each
with its own offsets; the closing one has `range_end=True` so a reader may expand it.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .types import Chunk, Document
from .document_names import REGIONAL_SHORT_NAMES, SHORT_NAMES
from .text import SCANNED_YEAR, scanned_year

# --- reference -------------------------------------------------------------------------

_ABBREVIATION = {**SHORT_NAMES, **REGIONAL_SHORT_NAMES}
_ALIASES = {"perpu": "Peraturan Pemerintah Pengganti Undang-Undang", "perwal": "Peraturan Walikota"}
_BY_ABBREVIATION = {**{a.casefold(): t for t, a in _ABBREVIATION.items()}, **_ALIASES}
_REGIONAL = set(REGIONAL_SHORT_NAMES)
_REG_LEVELS = ("pasal", "ayat", "huruf", "angka")
_RANK = {"pasal": 0, "ayat": 1, "huruf": 2, "angka": 3, "standard": 0, "paragraph": 1}
_FAMILY = {"pasal": "reg", "ayat": "reg", "huruf": "reg", "angka": "reg", "standard": "std", "paragraph": "std"}


@dataclass(frozen=True)
class Reference:
    """One reference as written. Targets are canonical: English "Article 5 paragraph (2)" is pasal 5 ayat 2."""

    raw: str
    start: int
    end: int
    scope: Literal["internal", "external"]  # internal = the document the chunk belongs to
    doc_type: str | None = None              # canonical: "Peraturan Pemerintah", "Undang-Undang", ...
    number: str | None = None
    year: int | None = None
    standard: str | None = None              # "PSAK 71", "ISAK 16", "IFRS 9", "IAS 16"
    pasal: str | None = None
    ayat: str | None = None
    huruf: str | None = None
    angka: str | None = None
    paragraph: str | None = None             # standards: "15", "B12", "5.5.1"
    relative: bool = False                   # ayat/huruf/angka of the Pasal the reference stands in
    region: str | None = None                # regional instruments: "Kabupaten Magelang"
    range_end: bool = False                  # closes a range whose start is the previous reference
    lang: str = "id"

    @property
    def document_label(self) -> str | None:
        """The target document as citations name it ("PP 34/2011"), None for an internal reference."""
        if self.standard:
            return self.standard
        if self.doc_type is None:
            return None
        name = " ".join(filter(None, (_ABBREVIATION.get(self.doc_type, self.doc_type), self.region)))
        if self.number is None:
            return f"{name} {self.year}" if self.year else name
        return f"{name} {self.number}/{self.year}" if self.year else f"{name} {self.number}"

    @property
    def target_label(self) -> str:
        """Human-readable target in the chunker's vocabulary, so it reads like the location it resolves to."""
        parts = [self.document_label, _structure_label(self.pasal, self.ayat, self.huruf, self.angka)]
        if self.paragraph:
            parts.append(f"{'paragraph' if self.lang == 'en' else 'paragraf'} {self.paragraph}")
        return " ".join(p for p in parts if p)


def _structure_label(pasal: str | None, ayat: str | None, huruf: str | None, angka: str | None) -> str:
    return " ".join(p for p in (pasal and f"Pasal {pasal}", ayat and f"ayat ({ayat})",
                                huruf and f"huruf {huruf}", angka and f"angka {angka}") if p)


# --- patterns --------------------------------------------------------------------------

# pdftotext glues "UndangUndang" at line breaks; laws before ~2004 write "Undang-undang", scans "Undang undang" and may
# lose the first capital ("undang-Undang Nomor 18 Tahun lggg" in UU 2/2017's revocation of UU 18/1999)
_UU = r"[Uu]ndang(?:\s*-\s*|\s+)?[Uu]ndang"
_YEAR = (r"(?:(?:/[A-Za-z][\w.-]*)*/(?P<y1>(?:19|20)\d\d)(?!\d))?"  # 98/PMK.010/2025
         rf"(?:\s+(?:Tahun|of|[Yy]ear)\s+(?P<y2>{SCANNED_YEAR}))?")
_NUMBER = r"\s+(?:Nomor|No\.|Number)\s*:?\s*(?P<num>\d+[A-Z]?)" + _YEAR
_ID_DOC = re.compile(
    rf"\b(?P<head>Peraturan\s+Pemerintah\s+Pengganti\s+{_UU}|Peraturan\s+Pemerintah|Peraturan\s+Presiden"
    rf"|(?:Keputusan|Instruksi)\s+Presiden|Peraturan\s+Otoritas\s+Jasa\s+Keuangan|Peraturan\s+Bank\s+Indonesia"
    rf"|(?:Peraturan|Keputusan)\s+Menteri|Peraturan\s+(?:Daerah|Bupati|Wali\s*[Kk]ota|Gubernur)|{_UU}(?:\s+Darurat)?)"
    rf"(?P<name>(?:\s+(?:[A-Z][\w'.-]*|dan)){{0,6}}?)" + _NUMBER)
_EN_NAME = r"[A-Z]\w*(?:\s+(?:and\s+)?[A-Z]\w*){0,3}?"
_EN_DOC = re.compile(
    r"\b(?:(?P<head>Government\s+Regulation\s+in\s+Lieu\s+of\s+Law|Government\s+Regulation"
    r"|Presidential\s+(?:Regulation|Decree|Instruction)|(?:Regional|Regent|Mayor|Governor)\s+Regulation|Law)"
    rf"|Regulation\s+of\s+the\s+Minister\s+of\s+(?P<minister>{_EN_NAME})"
    rf"|Minister\s+of\s+(?P<minister_>{_EN_NAME})\s+Regulation)"
    rf"(?:\s+of\s+(?P<region>{_EN_NAME}))?(?:\s+of\s+the\s+Republic\s+of\s+Indonesia)?" + _NUMBER)
# a regional instrument's short name may carry its place, as saksi's own citations do ("Perbup Kotabaru 21/2019",
# "Perda Kab. Magelang 8/2010": ingest/metadata.citation), so a citation copied from a receipt names its document
_ABBR_DOC = re.compile(
    r"\b(?P<abbr>PMK|PP|UU|Perppu|Perpu|Perpres|Keppres|Inpres|Permendagri|POJK|KMK"
    r"|(?P<regional>Perda|Perbup|Perwal|Perwali|Pergub))"
    r"(?(regional)(?P<place>(?:\s+(?!Nomor\b|No\b|Tahun\b)(?:Kab\.|Prov\.|[A-Z][\w'-]*)){0,4}?))"
    r"(?:\s+(?:Nomor|No\.?))?\s*(?P<num>\d+[A-Z]?)"
    r"(?:(?:/[A-Za-z][\w.-]*)*/(?P<y1>(?:19|20)\d\d)|\s+Tahun\s+(?P<y2>(?:19|20)\d\d))(?!\d)")
_CONSTITUTION = re.compile(
    rf"\b(?:{_UU}\s+Dasar(?:\s+Negara)?(?:\s+Republik\s+Indonesia)?(?:\s+Tahun)?|UUD(?:\s+NRI)?(?:\s+Tahun)?)"
    r"\s+1945\b")
# Instruments named without a number: a Pasal before one is not the citing document's own
_NAMED = re.compile(
    rf"\b(?:(?:{_UU}|UU)\s+(?!Nomor\b|Dasar\b|Darurat\b|Republik\b|ini\b)"
    r"(?P<act>[A-Z][\w/&-]*(?:\s+(?:dan\s+)?[A-Z][\w/&-]*){0,4})"
    r"|(?:Persetujuan\s+Penghindaran\s+Pajak(?:\s+Berganda)?|P3B|[Tt]ax\s+[Tt]reaty))")
_TREATY = "Persetujuan Penghindaran Pajak Berganda"
_STANDARD = re.compile(r"\b(?P<kind>PSAK|ISAK|PPSAK|IFRS|IAS|IFRIC|SIC)\s*(?:No\.?\s*|Nomor\s+)?"
                       r"(?P<num>\d{1,3})(?!\w|[.,]\d)")

_EN_HEADS = {"Government Regulation in Lieu of Law": "Peraturan Pemerintah Pengganti Undang-Undang",
             "Government Regulation": "Peraturan Pemerintah", "Presidential Regulation": "Peraturan Presiden",
             "Presidential Decree": "Keputusan Presiden", "Presidential Instruction": "Instruksi Presiden",
             "Regional Regulation": "Peraturan Daerah", "Regent Regulation": "Peraturan Bupati",
             "Mayor Regulation": "Peraturan Walikota", "Governor Regulation": "Peraturan Gubernur",
             "Law": "Undang-Undang"}
_EN_MINISTRIES = {"Finance": "Keuangan", "Home Affairs": "Dalam Negeri", "Trade": "Perdagangan",
                  "Industry": "Perindustrian"}

_PARA_NUM = r"(?:[A-Z]{1,3})?\d{1,3}(?:\.\d{1,3}){0,3}[A-Z]?(?!\w|\.\d)"
# Structural parts, by the text's language. Lower-case "ayat"/"huruf" only: "Ayat (1)" in an
# explanation and "Lampiran huruf A" are headings and appendix parts, not references.
_PARTS = {
    "id": (
        re.compile(r"\bPasal\s+(?P<pasal>\d+[A-Z]?|[IVXLC]+)(?!\w)"),
        re.compile(r"\bayat\s*(?:\(\s*(?P<ayat>\d+[a-z]?)\s*\)|(?P<ayat_>\d+[a-z]?)(?!\w))"),
        re.compile(r"\bhuruf\s+\(?(?P<huruf>[a-z])\)?(?!\w)"),
        re.compile(r"\bangka\s+(?P<angka>\d{1,3})(?!\w|[.,]\d)"),
        re.compile(rf"\b[Pp]aragraf\s+(?P<paragraph>{_PARA_NUM})"),
    ),
    "en": (
        re.compile(r"\bArticles?\s+(?P<pasal>\d+[A-Z]?|[IVXLC]+)(?:\((?P<ayat>\d+[a-z]?)\))?(?:\((?P<huruf>[a-z])\))?"
                   r"(?![\w(])"),
        re.compile(r"\bparagraphs?\s*\((?P<ayat>\d+[a-z]?)\)"),
        re.compile(r"\bparagraphs?\s+(?P<ayat>\d{1,2}[a-z]?)(?=\s+of\s+Articles?\b)"),  # treaty style
        re.compile(r"\b(?:letters?|points?)\s+\(?(?P<huruf>[a-z])\)?(?!\w)"),
        re.compile(r"\b(?:numbers?|points?)\s+(?P<angka>\d{1,3})(?!\w|[.,]\d)"),
        re.compile(rf"\b[Pp]aragraphs?\s+(?P<paragraph>{_PARA_NUM})"),
    ),
}
_APPENDIX = {"id": re.compile(r"\b(?:Lampiran|LAMPIRAN)\b"), "en": re.compile(r"\b(?:Appendix|Annex|Attachment)\b")}

_LIST = r"\s*,\s*(?:(?:dan/atau|dan|atau|serta|and/or|and|or)\s+)?|\s+(?:dan/atau|dan|atau|serta|and/or|and|or)\s+"
_RANGE = r"\s+(?:sampai\s+dengan|s\.\s?d\.?|s/d|hingga|to|through|until)\s+|\s*[–—-]\s*"
_GAP_LIST = re.compile(_LIST)
_GAP_RANGE = re.compile(_RANGE)
_GAP_JOIN = re.compile(r"\s*(?:(?:dari|of)(?:\s+the)?\s+)?")  # "ayat (1) Pasal 18", "paragraph (2) of Law ..."
# "ayat (1), (2), dan (3)", "huruf a, b, dan c", "paragraf 15–17": later items without the keyword
_CONTINUATION = {
    "ayat": re.compile(rf"(?:(?P<range>{_RANGE})|{_LIST})(?P<raw>\((?P<value>\d+[a-z]?)\))"),
    "huruf": re.compile(rf"(?:(?P<range>{_RANGE})|{_LIST})(?P<raw>(?P<value>[a-z]))(?!\w)"),
    "paragraph": re.compile(rf"(?:(?P<range>{_RANGE})|{_LIST})(?P<raw>(?P<value>{_PARA_NUM}))"),
}
_HEADING_PREFIX = re.compile(r"[ \t]*(?:-\s*\d+\s*-?\s*)?")  # page numbers pdftotext glues on: "-3Pasal 3"
_CONTINUES = re.compile(r"(?:\b(?:dalam|pada|dan|atau|serta|dengan|dari|oleh|ketentuan|dimaksud"
                        r"|in|of|and|or|to|under)|,)\s*$")
_ANGKA_CONTEXT = re.compile(r"\b(?:pada|dalam|in)\s+$")  # "angka" alone is also just "figure"
_TAX_NAME = re.compile(r"\b(?:Pajak\s+Penghasilan|PPh|Income\s+Tax)\s+$")  # "PPh Pasal 21" names a tax

_SPLIT_AYAT = re.compile(r" ayat \((?P<a1>\w+)\)(?:–\((?P<a2>\w+)\))?")  # "Pasal 5 ayat (1)–(3)": a split Pasal
# Where a relative reference stands: "Pasal 5 ayat (2) huruf a", or in an amending regulation the
# quoted article "Pasal I angka 1 › Pasal 14 ayat (2)" (its "ayat (1)" is that quoted Pasal 14's).
_CONTEXT = re.compile(r"(?:Penjelasan\s+)?(?P<base>(?:[^›]*›\s*)*Pasal\s+\w+)"
                      r"(?:\s+ayat\s+\((?P<ayat>\w+)\)(?!–))?(?:\s+huruf\s+(?P<huruf>[a-z]))?"
                      r"(?:\s+angka\s+(?P<angka>\d+))?")
_BARE_NUMBER = re.compile(r"0*(\d+[A-Z]?)(?=/|$)")  # "237/PMK.04/2022" is number 237
_PARAGRAPH_LOCATION = re.compile(r"paragra(?:f|ph)\s+(?P<paragraph>[^\s(]+)")
_AYAT_KEY = re.compile(r"(\d+)(\w*)")
_ADMIN_WORDS = {"kabupaten", "kab.", "kota", "provinsi", "prov.", "regency", "city", "province", "the", "of"}


# --- extraction ------------------------------------------------------------------------


@dataclass
class _Tok:
    kind: Literal["part", "doc", "named", "appendix"]
    start: int
    end: int
    levels: dict[str, str] = field(default_factory=dict)
    doc: dict[str, object] = field(default_factory=dict)

    @property
    def family(self) -> str:
        return _FAMILY[next(iter(self.levels))] if self.levels else self.kind


@dataclass
class _Draft:
    start: int
    end: int
    levels: dict[str, str]
    range_end: bool = False


def extract_references(text: str, lang: str = "id") -> list[Reference]:
    """Every cross-reference in `text`, in order; `text[r.start:r.end] == r.raw` for each.

    `lang` picks the words for parts (Pasal/ayat/huruf/angka/paragraf, or Article/paragraph
    (n)/letter/point/paragraph); instruments are recognised by their Indonesian, English and
    abbreviated names whatever the language, since translations keep Indonesian names.
    """
    lang = lang if lang in _PARTS else "id"
    toks = _tokens(text, lang)
    out: list[Reference] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        if tok.kind == "doc":
            out.append(Reference(text[tok.start:tok.end], tok.start, tok.end, "external", lang=lang, **tok.doc))
            i += 1
            continue
        if tok.kind in ("named", "appendix"):  # a bare name ("Undang-Undang Cukai") is too vague to link
            i += 1
            continue
        drafts, j = _chain(text, toks, i)
        doc: dict[str, object] = {}
        if (j < len(toks) and toks[j].kind in ("doc", "named") and all("pasal" in d.levels for d in drafts)
                and _GAP_JOIN.fullmatch(text[drafts[-1].end:toks[j].start])):
            doc = toks[j].doc
            drafts[-1].end = toks[j].end
            j += 1
        if _kept(text, toks, i, j, drafts):
            out.extend(_reference(text, d, doc, lang) for d in drafts)
        i = j
    return out


def _tokens(text: str, lang: str) -> list[_Tok]:
    found: list[_Tok] = []
    for rx in _PARTS[lang]:
        for m in rx.finditer(text):
            levels = sorted((m.start(k), k.rstrip("_"), v) for k, v in m.groupdict().items() if v)
            first = levels[0][1]
            if first in ("pasal", "paragraph") and _is_heading(text, m.start(), m.end()):
                continue
            found.append(_Tok("part", m.start(), m.end(), {k: v for _, k, v in levels}))
    for m in _STANDARD.finditer(text):
        found.append(_Tok("part", m.start(), m.end(), {"standard": f"{m['kind']} {int(m['num'])}"}))
    for rx, build in ((_ID_DOC, _id_doc), (_EN_DOC, _en_doc), (_ABBR_DOC, _abbr_doc), (_CONSTITUTION, _constitution)):
        for m in rx.finditer(text):
            found.append(_Tok("doc", m.start(), m.end(), doc=build(m)))
    for m in _NAMED.finditer(text):
        name = f"Undang-Undang {' '.join(m['act'].split())}" if m["act"] else _TREATY
        found.append(_Tok("named", m.start(), m.end(), doc={"doc_type": name}))
    for m in _APPENDIX[lang].finditer(text):
        found.append(_Tok("appendix", m.start(), m.end()))
    found.sort(key=lambda t: (t.start, -t.end))  # stable: on a tie the earlier pattern wins
    toks: list[_Tok] = []
    for t in found:
        if not toks or t.start >= toks[-1].end:
            toks.append(t)
    return toks


def _is_heading(text: str, start: int, end: int) -> bool:
    """A "Pasal 5" alone on its line starts that Pasal, unless the line before runs on into it."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    if text[end:len(text) if line_end < 0 else line_end].strip():
        return False
    if not _HEADING_PREFIX.fullmatch(text, line_start, start):
        return False
    return not _CONTINUES.search(text, max(0, line_start - 40), line_start)


def _chain(text: str, toks: list[_Tok], i: int) -> tuple[list[_Draft], int]:
    """Parts joined by lists and ranges: "Pasal 6 ayat (1), ayat (2), dan ayat (5)".

    Adjacent parts form one element ("Pasal 4 ayat (3) huruf b", or reversed "ayat (1) Pasal
    18"); an element inherits the levels above its own from the one before it.
    """
    family = toks[i].family
    drafts: list[_Draft] = []
    range_end = False
    while True:
        tok = toks[i]
        levels, start, end, reversed_levels = dict(tok.levels), tok.start, tok.end, {}
        i += 1
        while i < len(toks) and toks[i].kind == "part" and toks[i].family == family:
            nxt, gap = toks[i], text[end:toks[i].start]
            ranks, have = [_RANK[k] for k in nxt.levels], [_RANK[k] for k in levels]
            backwards = max(ranks) < min(have) and _GAP_JOIN.fullmatch(gap)
            if not (backwards or (min(ranks) > max(have) and not gap.strip())):
                break
            if backwards:
                reversed_levels.update(nxt.levels)
            levels.update(nxt.levels)
            end = nxt.end
            i += 1
        top = min(_RANK[k] for k in levels)
        if drafts:
            levels = {**{k: v for k, v in drafts[-1].levels.items() if _RANK[k] < top}, **levels}
        for d in drafts:  # "ayat (4) dan ayat (5) Pasal 14": the Pasal applies to both
            for k, v in reversed_levels.items():
                if k not in d.levels and _RANK[k] < min(_RANK[x] for x in d.levels):
                    d.levels[k] = v
        drafts.append(_Draft(start, end, levels, range_end))
        end = _continuations(text, drafts)
        if i < len(toks) and toks[i].kind == "part" and toks[i].family == family:
            gap = text[end:toks[i].start]
            range_end = bool(_GAP_RANGE.fullmatch(gap))
            if range_end or _GAP_LIST.fullmatch(gap):
                continue
        return drafts, i


def _continuations(text: str, drafts: list[_Draft]) -> int:
    end = drafts[-1].end
    level = max(drafts[-1].levels, key=_RANK.__getitem__)
    rx = _CONTINUATION.get(level)
    while rx and (m := rx.match(text, end)):
        if level == "huruf" and m["value"] <= drafts[-1].levels["huruf"]:  # "letter b and a ...": prose
            break
        levels = {k: v for k, v in drafts[-1].levels.items() if _RANK[k] < _RANK[level]}
        drafts.append(_Draft(m.start("raw"), m.end("raw"), {**levels, level: m["value"]}, m["range"] is not None))
        end = m.end()
    return end


def _kept(text: str, toks: list[_Tok], i: int, j: int, drafts: list[_Draft]) -> bool:
    """Drop appendix parts ("huruf a Lampiran I"), tax names ("PPh Pasal 21") and a bare "angka 2" (a figure)."""
    first, last = drafts[0], drafts[-1]
    if _TAX_NAME.search(text, max(0, first.start - 30), first.start):
        return False
    if i > 0 and toks[i - 1].kind == "appendix" and not text[toks[i - 1].end:first.start].strip():
        return False
    if j < len(toks) and toks[j].kind == "appendix" and not text[last.end:toks[j].start].strip():
        return False
    return set(first.levels) != {"angka"} or bool(_ANGKA_CONTEXT.search(text, max(0, first.start - 20), first.start))


def _reference(text: str, d: _Draft, doc: dict[str, object], lang: str) -> Reference:
    lv = d.levels
    standard = lv.get("standard")
    return Reference(
        text[d.start:d.end], d.start, d.end, "external" if doc or standard else "internal", **doc,
        standard=standard, pasal=lv.get("pasal"), ayat=lv.get("ayat"), huruf=lv.get("huruf"),
        angka=lv.get("angka"), paragraph=lv.get("paragraph"),
        relative=_FAMILY[next(iter(lv))] == "reg" and "pasal" not in lv, range_end=d.range_end, lang=lang)


def _number(m: re.Match[str]) -> dict[str, object]:
    year = m["y1"] or m["y2"]
    return {"number": m["num"].lstrip("0") or "0", "year": scanned_year(year) if year else None}


def _id_doc(m: re.Match[str]) -> dict[str, object]:
    head = re.sub(r"Wali\s*[Kk]ota", "Walikota", " ".join(re.sub(_UU, "Undang-Undang", m["head"]).split()))
    name = " ".join(re.sub(r"\bRepublik\s+Indonesia\b", "", m["name"]).split()) or None
    region = name if head in _REGIONAL else None
    if head in ("Peraturan Menteri", "Keputusan Menteri") and name:
        head = f"{head} {name}"
    return {"doc_type": head, "region": region, **_number(m)}


def _en_doc(m: re.Match[str]) -> dict[str, object]:
    minister = m["minister"] or m["minister_"]
    if minister:
        name = " ".join(minister.split())
        return {"doc_type": f"Peraturan Menteri {_EN_MINISTRIES.get(name, name)}", **_number(m)}
    head = _EN_HEADS[" ".join(m["head"].split())]
    region = " ".join(m["region"].split()) if m["region"] and head in _REGIONAL else None
    return {"doc_type": head, "region": region, **_number(m)}


def _abbr_doc(m: re.Match[str]) -> dict[str, object]:
    place = " ".join((m["place"] or "").split()) or None
    return {"doc_type": _BY_ABBREVIATION[m["abbr"].casefold()], "region": place, **_number(m)}


def _constitution(m: re.Match[str]) -> dict[str, object]:
    return {"doc_type": "Undang-Undang Dasar", "year": 1945}


# --- resolution ------------------------------------------------------------------------


@dataclass(frozen=True)
class Resolution:
    reference: Reference
    status: Literal["resolved", "unresolved"]
    doc_id: str | None
    chunk_id: str | None
    label: str | None   # the most precise span label (or chunk location) that holds the target
    reason: str | None  # why it is unresolved


def resolve(ref: Reference, here: Chunk, documents: Sequence[Document],
            chunks_of: Callable[[str], Sequence[Chunk]]) -> Resolution:
    """The chunk a reference points at, found in `here`'s document or among `documents`.

    A reference to a whole document ("Peraturan Pemerintah Nomor 34 Tahun 2011") resolves to
    the document: chunk_id None, label its cite_as. A relative part ("pada ayat (1)") takes its
    Pasal from where it stands (the span holding it, else here.location); outside any Pasal
    (a preamble's "huruf a") it resolves to `here` itself. A missing ayat/huruf/angka falls
    back to the enclosing ayat or Pasal, visible in the label; a missing Pasal or paragraph,
    or a document not ingested, is unresolved.
    """
    if ref.scope == "external":
        doc = next((d for d in documents if _matches(ref, d)), None)
        if doc is None:
            return Resolution(ref, "unresolved", None, None, None,
                              f"document not in the corpus: {ref.document_label}")
        if ref.pasal is None and ref.paragraph is None:
            return Resolution(ref, "resolved", doc.doc_id, None, doc.cite_as or ref.document_label, None)
        return _locate(ref, doc.doc_id, f"Pasal {ref.pasal}", _parts(ref), chunks_of(doc.doc_id))
    if not ref.relative:
        return _locate(ref, here.doc_id, f"Pasal {ref.pasal}", _parts(ref), chunks_of(here.doc_id))
    m = _CONTEXT.match(_innermost_label(here, ref.start))
    if m is None:
        return Resolution(ref, "resolved", here.doc_id, here.chunk_id, here.location, None)
    own = _parts(ref)
    top = min(_RANK[k] for k in own)
    inherited = {k: v for k, v in m.groupdict().items() if k != "base" and v and _RANK[k] < top}
    parts = {k: v for k in _REG_LEVELS[1:] if (v := own.get(k) or inherited.get(k))}
    return _locate(ref, here.doc_id, m["base"], parts, chunks_of(here.doc_id))


def documents_named(text: str, lang: str = "id") -> list[Reference]:
    """The documents a text (a question) names — "PMK 12/2024", "Peraturan Pemerintah Nomor 34
    Tahun 2011", "PSAK 71" — one reference per document."""
    out: dict[str, Reference] = {}
    for ref in extract_references(text, lang):
        label = ref.document_label
        if ref.scope == "external" and label and (ref.number or ref.standard) and label not in out:
            out[label] = ref
    return list(out.values())


def held_by(ref: Reference, documents: Sequence[Document]) -> str | None:
    """The id of the ingested document a reference names, or None."""
    return next((d.doc_id for d in documents if _matches(ref, d)), None)


def _parts(ref: Reference) -> dict[str, str]:
    """The levels below the Pasal (or the paragraph), in order."""
    if ref.paragraph:
        return {"paragraph": ref.paragraph}
    return {k: v for k in _REG_LEVELS[1:] if (v := getattr(ref, k))}


def _innermost_label(here: Chunk, pos: int) -> str:
    holding = [s for s in here.spans if s.start <= pos < s.end]
    return min(holding, key=lambda s: s.end - s.start).label if holding else here.location


def _locate(ref: Reference, doc_id: str, base: str, parts: dict[str, str], chunks: Sequence[Chunk]) -> Resolution:
    """The chunk of `base` ("Pasal 5") holding the most precise of `parts`, by span label."""
    if "paragraph" in parts:
        for c in chunks:
            m = _PARAGRAPH_LOCATION.match(c.location)
            if m and m["paragraph"] == parts["paragraph"]:
                return Resolution(ref, "resolved", doc_id, c.chunk_id, m.group(0), None)
        word = "paragraph" if ref.lang == "en" else "paragraf"
        return Resolution(ref, "unresolved", doc_id, None, None, f"no {word} {parts['paragraph']} in {doc_id}")
    # the chunks of the unit "Pasal 5", whatever their pieces are named ("Pasal 5 ayat (1)–(3)", "Pasal 5
    # huruf a (bagian 1/2)"); never "Penjelasan Pasal 5". In an amending regulation, an article it
    # quotes in full ("Pasal I angka 2 › Pasal 15A") is that Pasal's current text.
    # (an English document's "Article 5 paragraph (2) letter a" is compared as "Pasal 5 ayat (2) huruf a")
    body = [c for c in chunks if _id_words(c.unit.split("#", 1)[-1]) == base]
    if not body:
        body = [c for c in chunks if _id_words(c.unit.split("#", 1)[-1]).endswith(f" › {base}")]
    if not body:
        return Resolution(ref, "unresolved", doc_id, None, None, f"no {base} in {doc_id}")
    keys = list(parts)
    for n in range(len(keys), 0, -1):  # most precise first
        label = " ".join([base, _structure_label(None, *(parts.get(k) if k in keys[:n] else None
                                                         for k in _REG_LEVELS[1:]))])
        for c in body:
            own = _en_words(label) if c.unit.split("#", 1)[-1].startswith("Article") else label
            if (any(_id_words(sp.label) == label or _id_words(sp.label).startswith(label + " ") for sp in c.spans)
                    or (keys[n - 1] == "ayat" and _piece_holds(_id_words(c.location)[len(base):], parts["ayat"]))):
                return Resolution(ref, "resolved", doc_id, c.chunk_id, own, None)
    return Resolution(ref, "resolved", doc_id, body[0].chunk_id, body[0].unit.split("#", 1)[-1], None)


_EN_WORDS = (("Article ", "Pasal "), (" paragraph (", " ayat ("), (" letter ", " huruf "), (" point ", " angka "))


def _id_words(label: str) -> str:
    """An English label in the Indonesian words references are parsed into."""
    for en, id_ in _EN_WORDS:
        label = label.replace(en, id_)
    return label


def _en_words(label: str) -> str:
    for en, id_ in _EN_WORDS:
        label = label.replace(id_, en)
    return label


def _piece_holds(suffix: str, ayat: str) -> bool:
    """A split Pasal's piece is named for its ayat: "… ayat (4)" or "… ayat (1)–(3)"."""
    m = _SPLIT_AYAT.match(suffix)
    if not m:
        return False
    return _ayat_key(m["a1"]) <= _ayat_key(ayat) <= _ayat_key(m["a2"] or m["a1"])


def _ayat_key(ayat: str) -> tuple[int, str]:
    m = _AYAT_KEY.match(ayat)
    return (int(m[1]), m[2]) if m else (0, ayat)


def _fold(s: str | None) -> str:
    return " ".join((s or "").split()).casefold()


def _canon_type(doc_type: str | None) -> str:
    s = _fold(re.sub(r"Undang\s*-?\s*Undang", "Undang-Undang", doc_type or "", flags=re.IGNORECASE))
    s = s.replace("wali kota", "walikota")
    return _fold(_BY_ABBREVIATION.get(s, s))


def _matches(ref: Reference, doc: Document) -> bool:
    if ref.standard:
        kind, number = ref.standard.split()
        return _fold(doc.cite_as) == _fold(ref.standard) or (
            _canon_type(doc.doc_type) == _canon_type(kind) and _bare_number(doc.number) == number)
    if doc.cite_as and _fold(doc.cite_as) == _fold(ref.document_label):
        return True
    if ref.number and ref.year and _named_by_title(ref.raw, doc.title):
        return True
    return (_canon_type(doc.doc_type) == _canon_type(ref.doc_type)
            and _bare_number(doc.number) == ref.number and doc.year == ref.year
            and _region_matches(ref.region, doc))


def _named_by_title(raw: str, title: str | None) -> bool:
    """A document whose title begins with the reference as written ("Peraturan Menteri Ilustratif Nomor 3 Tahun
    2022" of "Peraturan Menteri Ilustratif Nomor 3 Tahun 2022 tentang …"): an instrument type the short-name tables
    do not know is still found by its full name, never by a longer number ("Nomor 3" is not "Nomor 31")."""
    name, whole = _fold(raw), _fold(title)
    return bool(name) and whole.startswith(name) and not whole[len(name):len(name) + 1].isalnum()


def _bare_number(number: str | None) -> str | None:
    m = _BARE_NUMBER.match(number or "")
    return m[1] if m else number


def _region_matches(region: str | None, doc: Document) -> bool:
    """"Kabupaten Magelang" matches a document whose title, issuer or cite_as names Magelang."""
    if not region:
        return True
    names = _fold(" ".join(filter(None, (doc.title, doc.issuer, doc.cite_as))))
    return all(w in names for w in _fold(region).split() if w not in _ADMIN_WORDS)
