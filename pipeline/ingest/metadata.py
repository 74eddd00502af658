"""What a document is: parsed from its own text, then what the file declares, then a sidecar.

A regulation names itself in its heading ("PERATURAN MENTERI KEUANGAN REPUBLIK INDONESIA
NOMOR 98 TAHUN 2025 TENTANG …") and dates itself in its closing ("Ditetapkan di Jakarta
pada tanggal 22 Desember 2025"). Reading those lets a citation say "PMK 98/2025, Pasal 3"
without anyone writing front matter. Only what the text says is taken: a number the
scan made illegible stays None, and an effective date that depends on an unknown
promulgation date stays None. What a file declares (front matter, PDF info, HTML <meta>,
DOCX core properties) overrides the text, and a sidecar YAML beside the file overrides
both, so a wrong reading can always be corrected without editing the source.

Choices a reader should know:
- `title` is kept as written (an all-caps heading stays all caps), only whitespace runs
  are folded: a citation should match the document, and re-casing mangles acronyms.
- The issuer of a Peraturan Daerah is the region's government ("Pemerintah Kabupaten
  Magelang"): a Perda is made by the DPRD together with the regional head, and naming the
  Bupati would make it look like a Peraturan Bupati.
- Headings in English get the Indonesian doc_type and short name ("PMK 98/2025"), so a
  translation and its original share a type and a citation.
"""
from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlparse

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import IngestError
from ..text import SCANNED_YEAR, detect_language, scanned_digits, scanned_year
from ..document_names import citation
from ..types import Authority, Lang

# --- declared metadata ------------------------------------------------------------------


class MetadataOverrides(BaseModel):
    """What front matter, a sidecar YAML or a format's own metadata may set; unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore")
    id: str | None = None
    title: str | None = None
    doc_type: str | None = None
    issuer: str | None = None
    number: str | None = None
    year: int | None = None
    cite_as: str | None = None
    authority: Authority | None = None
    published: dt.date | None = None
    effective: dt.date | None = None
    promulgated: dt.date | None = None
    lang: Lang | None = Field(default=None, validation_alias=AliasChoices("lang", "language"))
    url: str | None = None
    illustrative: bool | None = None

    @field_validator("published", "effective", "promulgated", mode="before")
    @classmethod
    def _full_date(cls, v: object) -> object:
        if isinstance(v, int):
            raise ValueError("give a full date, YYYY-MM-DD (a bare year is ambiguous)")
        return v

    @field_validator("number", mode="before")
    @classmethod
    def _number_text(cls, v: object) -> object:
        if isinstance(v, bool):
            raise ValueError("give the regulation's number, e.g. 98 or 12A")
        return str(v) if isinstance(v, int) else v

    @field_validator("id")
    @classmethod
    def _slug(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", v):
            raise ValueError("id must be letters, digits, '.', '_' or '-' (at most 100)")
        return v


def load_overrides(raw: dict, where: str, label: str = "front matter") -> MetadataOverrides:
    """Validate declared metadata; the error names the field, so the user knows what to fix."""
    if not isinstance(raw, dict):
        raise IngestError(where, f"{label} must be a YAML mapping")
    try:
        return MetadataOverrides.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        raise IngestError(where, f"{label} field {loc!r}: {first['msg']}") from None


def sidecar_for(path: Path) -> Path | None:
    """The sidecar beside a file: "<name>.meta.yaml" (pmk-098-2025.md.meta.yaml) or "<stem>.meta.yaml"."""
    for candidate in (path.with_name(path.name + ".meta.yaml"), path.with_name(path.stem + ".meta.yaml")):
        if candidate.is_file():
            return candidate
    return None


def read_sidecar(path: Path) -> dict:
    """The sidecar's mapping; IngestError naming the sidecar (not the document) when it is unusable."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise IngestError(str(path), f"cannot read sidecar: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise IngestError(str(path), f"sidecar is not UTF-8 text (byte {e.start}: {e.reason})") from None
    except yaml.YAMLError as e:
        raise IngestError(str(path), f"sidecar is not valid YAML: {str(e).splitlines()[0]}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise IngestError(str(path), "sidecar must be a YAML mapping")
    return raw


# --- dates --------------------------------------------------------------------------------

_MONTHS = {
    "januari": 1, "january": 1, "jan": 1, "februari": 2, "pebruari": 2, "february": 2, "feb": 2,
    "maret": 3, "march": 3, "mar": 3, "april": 4, "apr": 4, "mei": 5, "may": 5,
    "juni": 6, "june": 6, "jun": 6, "juli": 7, "july": 7, "jul": 7,
    "djanuari": 1, "djuni": 6, "djuli": 7,  # the spelling before 1972 (laws of the 1950s)
    "agustus": 8, "august": 8, "agust": 8, "agu": 8, "agt": 8, "ags": 8, "aug": 8,
    "september": 9, "sept": 9, "sep": 9, "oktober": 10, "october": 10, "okt": 10, "oct": 10,
    "november": 11, "nopember": 11, "nov": 11, "nop": 11, "desember": 12, "december": 12, "des": 12, "dec": 12,
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
# a day as a scan may write it ("l7 Oktober", "L7", "I April": l, L or I for 1), a month the year may follow unspaced
# ("26 Juli2016")
_DAY = r"[0-9lI]{1,2}"
_DATE = rf"(?:{_DAY}\s+(?:{_MONTH})(?![a-z])\.?\s*{SCANNED_YEAR}|(?:{_MONTH})\b\.?\s+\d{{1,2}},?\s+{SCANNED_YEAR})"
_DATE_DMY = re.compile(rf"({_DAY})\s+({_MONTH})(?![a-z])\.?\s*({SCANNED_YEAR})", re.IGNORECASE)
_DATE_MDY = re.compile(rf"({_MONTH})\b\.?\s+(\d{{1,2}}),?\s+({SCANNED_YEAR})", re.IGNORECASE)


def _to_date(text: str) -> dt.date | None:
    if m := _DATE_DMY.fullmatch(text):
        day, month, year = m[1], m[2], m[3]
    elif m := _DATE_MDY.fullmatch(text):
        month, day, year = m[1], m[2], m[3]
    else:
        return None
    try:
        return dt.date(scanned_year(year), _MONTHS[month.lower()], int(scanned_digits(day)))
    except ValueError:  # "31 Februari": a misread, not a date
        return None


def _add_months(day: dt.date, months: int) -> dt.date:
    y, m = divmod(day.month - 1 + months, 12)
    year, month = day.year + y, m + 1
    return dt.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


# "Ditetapkan di Jakarta / pada tanggal 22 Desember 2025" (a law: "Disahkan di Jakarta …", signed by the President):
# only the first such line is read, so a blank one ("pada tanggal" with nothing after) never borrows a later
# (attachment's) date.
_ENACTED_AT = re.compile(r"\b(?:Ditetapkan|DITETAPKAN|Disahkan|DISAHKAN)\s+(?:di|Di|DI)\b"
                         r"|\b(?:Stipulated|Enacted|Established|Ratified)\s+in\b")
_PROMULGATED_AT = re.compile(r"\b(?:Diundangkan|DIUNDANGKAN)\s+(?:di|Di|DI)\b|\bPromulgated\s+in\b")
# A law of the 1950s is promulgated without a place: "Diundangkan pada tanggal 8 Januari 1951." Read only where no
# line names a place: a recital may cite another regulation "DIUNDANGKAN PADA TANGGAL 2 MARET 1963" before the
# law's own signature block (UU 4/1964).
_PROMULGATED_ON = re.compile(r"\b(?:Diundangkan|DIUNDANGKAN)(?=[\s,:]+(?i:pada\s+)?(?i:tang+al)(?![a-z]))")
# the place (if any), then "pada tanggal" (a scan's "tangal", "tangggal", "tanggal," or "tanggal10" too) or "on",
# then the date
_ON_DATE = re.compile(rf"(?:[ \t]+[^\n]{{1,60}}?)?[\s,:]+(?:(?:pada\s+)?tang+al(?![a-z])[\s,:]*|on\s+)"
                      rf"(?P<date>{_DATE})", re.IGNORECASE)
# "… ini mulai berlaku pada tanggal diundangkan / ditetapkan / 1 Januari 2026", "… setelah 10
# (sepuluh) hari terhitung sejak tanggal diundangkan". "ini" keeps out "Pada saat … ini mulai
# berlaku, …" and provisions with their own start dates.
_IN_FORCE = re.compile(
    rf"\bini\s+mulai\s+berlaku\s+(?:(?:pada|sejak)\s+(?:tanggal|hari)\s+(?:(?P<promulgation>diundangkan(?:nya)?)"
    rf"|(?P<enactment>ditetapkan)|(?P<date>{_DATE}))"
    rf"|(?:setelah\s+)?(?P<n>\d+)\s*(?:\([^)]{{0,40}}\)\s*)?(?P<unit>hari|bulan|tahun)\s+(?P<workdays>kerja\s+)?"
    rf"terhitung\s+(?:mulai\s+|sejak\s+)?tanggal\s+diundangkan)"
    rf"|\bthis\s+[A-Za-z\s]{{1,40}}?\s+(?:shall\s+)?(?:comes?|enters?)\s+into\s+force\s+"
    rf"(?:on\s+(?:the\s+date\s+of\s+(?:its\s+)?(?:(?P<en_promulgation>promulgation)|(?P<en_enactment>"
    rf"stipulation|enactment|issuance))|(?P<en_date>{_DATE}))"
    rf"|(?:after|upon\s+the\s+lapse\s+of)\s+(?P<en_n>\d+)\s*(?:\([^)]{{0,40}}\)\s*)?(?P<en_unit>days?|months?|years?)"
    rf"\s+(?:as\s+of|from|after|following)\s+the\s+date\s+of\s+(?:its\s+)?promulgation)",
    re.IGNORECASE)
# pdftotext splits the two-column closing article "Peraturan Menteri ini mulai berlaku pada
# tanggal diundangkan." so that "diundangkan." lands before the "Pasal N" label.
_IN_FORCE_SPLIT = re.compile(rf"\bdiundangkan\.\s+(?:ini\s+)?Pasal\s+[0-9IVXL]+\s+(?:ini\s+)?mulai\s+berlaku\s+"
                             rf"pada\s+tanggal\s+(?!diundangkan|ditetapkan|{_DATE})", re.IGNORECASE)
# Standards take effect for reporting periods, not on a promulgation.
_STANDARD_EFFECTIVE = re.compile(
    rf"(?:berlaku\s+efektif|menerapkan\s+(?:Standar|Interpretasi|PSAK\s+\d+|ISAK\s+\d+)\s+ini)\s+untuk\s+"
    rf"periode\s+tahun\s+buku\s+yang\s+dimulai\s+pada\s+atau\s+setelah\s+(?:tanggal\s+)?(?P<date>{_DATE})"
    rf"|(?:effective|applies\s+this\s+(?:Standard|Interpretation))\s+for\s+annual\s+(?:reporting\s+)?periods\s+"
    rf"beginning\s+on\s+or\s+after\s+(?P<en_date>{_DATE})", re.IGNORECASE)


def _dated(at: re.Pattern[str], text: str, without_place: re.Pattern[str] | None = None) -> dt.date | None:
    """The date on the first line `at` finds (or, where it finds none, `without_place`)."""
    m = at.search(text) or (without_place.search(text) if without_place else None)
    d = _ON_DATE.match(text, m.end()) if m else None
    return _to_date(" ".join(d["date"].split())) if d else None


def _effective(text: str, published: dt.date | None, promulgated: dt.date | None) -> dt.date | None:
    """The in-force date the closing article states, or None when it rests on an unknown date."""
    found = [m for m in (_IN_FORCE.search(text), _IN_FORCE_SPLIT.search(text)) if m]
    if not found:
        m = _STANDARD_EFFECTIVE.search(text)
        return _to_date(" ".join((m["date"] or m["en_date"]).split())) if m else None
    m = min(found, key=lambda x: x.start())
    if m.re is _IN_FORCE_SPLIT or m["promulgation"] or m["en_promulgation"]:
        return promulgated
    if m["enactment"] or m["en_enactment"]:
        return published
    if m["date"] or m["en_date"]:
        return _to_date(" ".join((m["date"] or m["en_date"]).split()))
    if m["workdays"] or promulgated is None:  # working days need a holiday calendar: not guessed
        return None
    n, unit = int(m["n"] or m["en_n"]), (m["unit"] or m["en_unit"]).lower()
    if unit.startswith(("hari", "day")):
        return promulgated + dt.timedelta(days=n)
    return _add_months(promulgated, 12 * n if unit.startswith(("tahun", "year")) else n)


# --- the heading ----------------------------------------------------------------------------

_DSAK = "Dewan Standar Akuntansi Keuangan"
_PRESIDENT = "Presiden Republik Indonesia"


@dataclass(frozen=True)
class _Kind:
    """One way a document names its own type. `role` kinds take a name after the keyword
    (the region of a Peraturan Bupati, the ministry of a Peraturan Menteri)."""

    pattern: str
    doc_type: str
    issuer: str | None
    lang: Lang | None
    role: str | None = None      # "Bupati", "Walikota", "Gubernur", "Menteri", "Surat Edaran", "Daerah"
    numbered: bool = False       # the number follows the name directly ("PSAK 71"), no NOMOR/TENTANG
    short: bool = False          # an abbreviation: trusted only as the document's first line


_KINDS = tuple((re.compile(rf"^[ \t]*(?:#{{1,6}}[ \t]+)?(?P<kw>{k.pattern})", re.IGNORECASE | re.MULTILINE), k)
               for k in (
    _Kind(r"PERATURAN\s+MENTERI\s+KEUANGAN\b", "Peraturan Menteri Keuangan", "Menteri Keuangan", "id"),
    _Kind(r"KEPUTUSAN\s+MENTERI\s+KEUANGAN\b", "Keputusan Menteri Keuangan", "Menteri Keuangan", "id"),
    _Kind(r"PERATURAN\s+DIREKTUR\s+JENDERAL\s+PAJAK\b", "Peraturan Direktur Jenderal Pajak",
          "Direktur Jenderal Pajak", "id"),
    _Kind(r"PERATURAN\s+PEMERINTAH\s+PENGGANTI\s+UNDANG-\s*UNDANG\b",
          "Peraturan Pemerintah Pengganti Undang-Undang", _PRESIDENT, "id"),
    _Kind(r"PERATURAN\s+PEMERINTAH\b", "Peraturan Pemerintah", _PRESIDENT, "id"),
    _Kind(r"PERATURAN\s+PRESIDEN\b", "Peraturan Presiden", _PRESIDENT, "id"),
    _Kind(r"UNDANG-\s*UNDANG\b(?!\s+DASAR)", "Undang-Undang",
          "Dewan Perwakilan Rakyat dan Presiden Republik Indonesia", "id"),
    _Kind(r"PERATURAN\s+DAERAH\b(?:\s+(?P<level>KABUPATEN|KOTA|PROVINSI)\b)?", "Peraturan Daerah", None, "id",
          role="Daerah"),
    _Kind(r"PERATURAN\s+BUPATI", "Peraturan Bupati", None, "id", role="Bupati"),
    _Kind(r"PERATURAN\s+(?P<wali>WALI\s*KOTA)", "Peraturan Walikota", None, "id", role="Walikota"),
    _Kind(r"PERATURAN\s+GUBERNUR", "Peraturan Gubernur", None, "id", role="Gubernur"),
    _Kind(r"PERATURAN\s+MENTERI\b", "Peraturan Menteri", None, "id", role="Menteri"),
    _Kind(r"SURAT\s+EDARAN\b", "Surat Edaran", None, "id", role="Surat Edaran"),
    _Kind(r"PERNYATAAN\s+STANDAR\s+AKUNTANSI\s+KEUANGAN", "PSAK", _DSAK, "id", numbered=True),
    _Kind(r"INTERPRETASI\s+STANDAR\s+AKUNTANSI\s+KEUANGAN", "ISAK", _DSAK, "id", numbered=True),
    _Kind(r"PSAK", "PSAK", _DSAK, None, numbered=True, short=True),
    _Kind(r"ISAK", "ISAK", _DSAK, None, numbered=True, short=True),
    _Kind(r"(?:REGULATION\s+OF\s+THE\s+MINISTER\s+OF\s+FINANCE|MINISTER\s+OF\s+FINANCE\s+REGULATION)\b",
          "Peraturan Menteri Keuangan", "Menteri Keuangan", "en"),
    _Kind(r"(?:DECREE\s+OF\s+THE\s+MINISTER\s+OF\s+FINANCE|MINISTER\s+OF\s+FINANCE\s+DECREE)\b",
          "Keputusan Menteri Keuangan", "Menteri Keuangan", "en"),
    _Kind(r"(?:REGULATION\s+OF\s+THE\s+DIRECTOR\s+GENERAL\s+OF\s+TAXES|DIRECTOR\s+GENERAL\s+OF\s+TAXES\s+REGULATION)\b",
          "Peraturan Direktur Jenderal Pajak", "Direktur Jenderal Pajak", "en"),
    _Kind(r"GOVERNMENT\s+REGULATION\s+IN\s+LIEU\s+OF\s+(?:THE\s+)?LAW\b",
          "Peraturan Pemerintah Pengganti Undang-Undang", _PRESIDENT, "en"),
    _Kind(r"GOVERNMENT\s+REGULATION\b", "Peraturan Pemerintah", _PRESIDENT, "en"),
    _Kind(r"(?:PRESIDENTIAL\s+REGULATION|REGULATION\s+OF\s+THE\s+PRESIDENT)\b", "Peraturan Presiden", _PRESIDENT, "en"),
    _Kind(r"LAW\s+OF\s+THE\s+REPUBLIC\s+OF\s+INDONESIA\b", "Undang-Undang",
          "Dewan Perwakilan Rakyat dan Presiden Republik Indonesia", "en"),
    _Kind(r"STATEMENTS?\s+OF\s+FINANCIAL\s+ACCOUNTING\s+STANDARDS?", "PSAK", _DSAK, "en", numbered=True),
    _Kind(r"INTERPRETATIONS?\s+OF\s+FINANCIAL\s+ACCOUNTING\s+STANDARDS?", "ISAK", _DSAK, "en", numbered=True),
))

# Where the heading ends: the preamble's first words. The heading is searched before them.
_PREAMBLE = re.compile(r"DENGAN\s*RAHMAT|BY\s+THE\s+(?:GRACE|BLESSINGS?)\s+OF\s+GOD|\bMenimbang\b|\bConsidering\b",
                       re.IGNORECASE)
_HEAD_LIMIT = 4000
_SEGMENT_LIMIT = 300     # from the type to TENTANG: "REPUBLIK INDONESIA NOMOR 98 TAHUN 2025"
_TITLE_LIMIT = 1200
# The block a PDF-to-markdown converter puts on top: "# PMK 098 2025", "**Source File:** …", "---".
# Its H1 is made from the file name, so it is never read as the document's heading.
_CONVERTER_HEADER = re.compile(r"\A\s*#[^\n]*\n(?:[ \t]*\n)*(?:[ \t]*\*\*[^*\n]+:\*\*[^\n]*\n(?:[ \t]*\n)*)+"
                               r"[ \t]*-{3,}[ \t]*\n")
# One [ \t]* before the optional word, not two around it: two adjacent blank runs split a long
# run of blanks every possible way before failing (quadratic in a document's leading blanks).
_SKIPPED_LINE = re.compile(r"[ \t]*(?:(?:SALINAN|-{3,})[ \t]*)?(?:\n|\Z)", re.IGNORECASE)
_INTRO = re.compile(r"\b(?:TENTANG|CONCERNING)\b", re.IGNORECASE)
_NUMBER = re.compile(r"\b(?:NOMOR|NUMBER|NO\.)\s*:?\s*(?P<num>[A-Z]{2,5}-\d[\w./-]*|\d+[A-Z]?(?:/[A-Z0-9.-]+)*)\b",
                     re.IGNORECASE)
_YEAR = re.compile(rf"\b(?:TAHUN|OF|YEAR)\s+(?P<year>{SCANNED_YEAR})", re.IGNORECASE)
_STANDARD_NUMBER = re.compile(r"\s*(?:\((?:PSAK|ISAK|SFAS|IFAS)\)\s*)?(?:NOMOR\s+|NO\.?\s*|NUMBER\s+)?"
                              r"(?P<num>\d+(?:\.\d+)?[A-Z]?)\b[ \t]*[:\-\u2013\u2014]?", re.IGNORECASE)
_TRAILING_YEAR = re.compile(r"/(\d{4})$")
_NAME_WORD = re.compile(r"\s*([A-Za-z][A-Za-z'.-]*)")
_NAME_STOP = {"NOMOR", "NUMBER", "NO", "NO.", "TAHUN", "TENTANG", "CONCERNING", "PROVINSI", "REPUBLIK", "OF",
              "DENGAN", "PERATURAN", "SALINAN"}
_MASTHEAD = re.compile(r"^[ \t]*(?P<role>BUPATI|WALI\s*KOTA|GUBERNUR)", re.IGNORECASE | re.MULTILINE)
_TITLE_END = re.compile(r"DENGAN\s*RAHMAT|BY\s+THE\s+(?:GRACE|BLESSINGS?)\s+OF\s+GOD|\bMenimbang\b|\bMengingat\b"
                        r"|\bConsidering\b|\bMEMUTUSKAN\b", re.IGNORECASE)
_KEEP_UPPER = {"DKI", "DIY", "RI"}
_LEVELS = {"BUPATI": "Kabupaten", "WALIKOTA": "Kota", "GUBERNUR": "Provinsi"}


def _first_content(text: str) -> int:
    """Where the document's own first line starts: after a converter header, blank lines, "SALINAN"."""
    m = _CONVERTER_HEADER.match(text)
    pos = m.end() if m else 0
    while pos < len(text):
        skip = _SKIPPED_LINE.match(text, pos)
        if not skip or skip.end() == pos:
            break
        pos = skip.end()
    return pos


def _name_after(text: str, pos: int, limit: int) -> str | None:
    """The proper name after a keyword ("KOTABARU", "MAMUJU TENGAH"), title-cased, up to NOMOR/PROVINSI/…."""
    words: list[str] = []
    while len(words) < 5:
        m = _NAME_WORD.match(text, pos, limit)
        if not m or m[1].upper() in _NAME_STOP:
            break
        words.append(m[1])
        pos = m.end()
    return " ".join(_title_word(w) for w in words) or None


def _title_word(word: str) -> str:
    if word.upper() in _KEEP_UPPER:
        return word.upper()
    return "-".join(p[:1].upper() + p[1:].lower() for p in word.split("-"))


def _masthead(text: str, start: int, end: int) -> tuple[str, str | None] | None:
    """The regional head named above the heading ("BUPATI BONE BOLANGO"), as (level, name)."""
    m = _MASTHEAD.search(text, start, end)
    if not m:
        return None
    return _LEVELS[re.sub(r"\s+", "", m["role"]).upper()], _name_after(text, m.end(), end)


def _is_upper(line: str) -> bool:
    return line == line.upper() and any(c.isalpha() for c in line)


def _title_from(text: str, pos: int) -> str | None:
    """The title from `pos` on: all-caps lines until the preamble or a line in another case;
    a title in running case is its one line."""
    parts: list[str] = []
    upper: bool | None = None
    for line in text[pos:pos + _TITLE_LIMIT].splitlines():
        line = line.strip()
        if not line:
            if parts:
                break
            continue
        end = _TITLE_END.search(line)
        piece = line[:end.start()].strip() if end else line
        if piece:
            if upper is None:
                upper = _is_upper(piece)
            elif upper and not _is_upper(piece):
                break
            parts.append(piece)
        if end or (upper is False and parts):
            break
    return " ".join(" ".join(parts).split()) or None


def _find_heading(text: str) -> tuple[re.Match[str], _Kind] | None:
    """The document's own heading: an all-caps type line before the preamble, or any
    recognised heading as the document's first line (a running-case heading elsewhere is
    more likely a mention of another regulation)."""
    first = _first_content(text)
    preamble = _PREAMBLE.search(text, first, first + _HEAD_LIMIT)
    end = preamble.start() if preamble else min(len(text), first + _HEAD_LIMIT)
    best: tuple[int, int, re.Match[str], _Kind] | None = None
    for order, (pattern, kind) in enumerate(_KINDS):
        for m in pattern.finditer(text, first, end):
            if m.start() == first or (not kind.short and _is_upper(m["kw"])):
                if best is None or (m.start("kw"), order) < best[:2]:
                    best = (m.start("kw"), order, m, kind)
                break
    return (best[2], best[3]) if best else None


def _regional(kind: _Kind, m: re.Match[str], text: str, segment_end: int) -> tuple[str, str | None]:
    """doc_type and issuer of a role kind, naming the region or ministry it belongs to."""
    name = _name_after(text, m.end(), segment_end)
    if kind.role == "Menteri":
        return (f"Peraturan Menteri {name}", f"Menteri {name}") if name else (kind.doc_type, None)
    if kind.role == "Surat Edaran":
        return (f"Surat Edaran {name}", name) if name else (kind.doc_type, None)
    head = _masthead(text, _first_content(text), m.start())
    level = (m["level"] or "").capitalize() if kind.role == "Daerah" else None
    if head:
        level, name = level or head[0], name or head[1]
    if kind.role == "Daerah":
        issuer = f"Pemerintah {level or 'Daerah'} {name}" if name else None
        return kind.doc_type, issuer
    if kind.role == "Walikota":
        role = "Wali Kota" if re.search(r"\s", m["wali"]) else "Walikota"
        return f"Peraturan {role}", f"{role} {name}" if name else None
    return kind.doc_type, f"{kind.role} {name}" if name else None


# --- parsing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedMetadata:
    """What the document says about itself; None wherever the text does not say (or is illegible)."""

    doc_type: str | None = None
    issuer: str | None = None
    number: str | None = None
    year: int | None = None
    title: str | None = None
    cite_as: str | None = None
    published: str | None = None     # "Ditetapkan … pada tanggal", ISO
    promulgated: str | None = None   # "Diundangkan … pada tanggal", ISO
    effective: str | None = None     # from the closing article, ISO
    authority: Authority | None = None
    lang: Lang | None = None


def parse_metadata(text: str) -> ParsedMetadata:
    """Read the heading and the closing dates; works on cleaned text and on hard-wrapped raw text."""
    published, promulgated = _dated(_ENACTED_AT, text), _dated(_PROMULGATED_AT, text, _PROMULGATED_ON)
    dates = {"published": published and published.isoformat(), "promulgated": promulgated and promulgated.isoformat()}
    effective = _effective(text, published, promulgated)
    dates["effective"] = effective and effective.isoformat()
    found = _find_heading(text)
    if found is None:
        return ParsedMetadata(**dates)
    m, kind = found
    number = year = title = None
    doc_type, issuer = kind.doc_type, kind.issuer
    if kind.numbered:
        n = _STANDARD_NUMBER.match(text, m.end())
        if n is None:
            return ParsedMetadata(**dates)
        number, title = n["num"], _title_from(text, n.end())
    else:
        intro = _INTRO.search(text, m.end(), m.end() + _SEGMENT_LIMIT)
        segment_end = intro.start() if intro else min(len(text), m.end() + _SEGMENT_LIMIT)
        if kind.role:
            doc_type, issuer = _regional(kind, m, text, segment_end)
        num = _NUMBER.search(text, m.end(), segment_end)
        number = re.sub(r"^0+(?=\d)", "", num["num"]) if num else None
        y = _YEAR.search(text, num.end() if num else m.end(), segment_end)
        trailing = _TRAILING_YEAR.search(number or "")
        year = scanned_year(y["year"]) if y else int(trailing[1]) if trailing else None
        title = _title_from(text, intro.end()) if intro else None
    return ParsedMetadata(doc_type=doc_type, issuer=issuer, number=number, year=year, title=title,
                          cite_as=citation(doc_type, number, year, issuer), authority="official", lang=kind.lang,
                          **dates)


# --- merging -------------------------------------------------------------------------------

_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_RANK = {"filename": 0, "document": 1, "declared": 2, "sidecar": 3}
_FIELDS = (*MetadataOverrides.model_fields, "domain")  # what may be declared, plus what the URL gives
_DEFAULTS: dict[str, object] = {"authority": "unknown", "illustrative": False}
_FRONT_MATTER_SUFFIXES = {".md", ".markdown", ".txt"}


@dataclass(frozen=True)
class DocumentMeta:
    """The merged metadata and where each field came from; a field without a provenance entry
    holds its default (authority "unknown", illustrative False, otherwise None)."""

    fields: dict[str, object]     # Document field names, with "id" for doc_id
    provenance: dict[str, str]    # field -> "document" | "declared" | "sidecar" | "filename"


def _declared(overrides: MetadataOverrides) -> dict[str, object]:
    values = overrides.model_dump(exclude_unset=True, exclude_none=True)
    return {k: v.isoformat() if isinstance(v, dt.date) else v for k, v in values.items()}


def describe(path: Path, text: str, declared: dict, sidecar: dict | None = None) -> DocumentMeta:
    """Merge what the text says < what the file declares < the sidecar (None: there is none).

    Fallbacks keep every document nameable: the title from the first markdown H1, else the
    file name; the language by detection; the domain from the URL's host. When a higher layer
    supplies the number or year, the short citation name is rebuilt from the merged fields
    (unless cite_as itself is declared), so a sidecar can complete an illegible heading.
    """
    label = "front matter" if path.suffix.lower() in _FRONT_MATTER_SUFFIXES else "declared metadata"
    layers = [("document", {k: v for k, v in asdict(parse_metadata(text)).items() if v is not None}),
              ("declared", _declared(load_overrides(declared, str(path), label)))]
    if sidecar is not None:
        layers.append(("sidecar", _declared(load_overrides(sidecar, str(sidecar_for(path) or path), "sidecar"))))
    fields: dict[str, object] = {name: _DEFAULTS.get(name) for name in _FIELDS}
    provenance: dict[str, str] = {}
    for source, values in layers:
        fields.update(values)
        provenance.update(dict.fromkeys(values, source))
    parts = [provenance.get(k, "document") for k in ("number", "year")]
    if provenance.get("cite_as", "document") == "document" and set(parts) - {"document"}:
        rebuilt = citation(fields["doc_type"], fields["number"], fields["year"], fields["issuer"])
        if rebuilt:
            fields["cite_as"], provenance["cite_as"] = rebuilt, max(parts, key=_RANK.__getitem__)
    _dates_of_its_year(fields, provenance, text)
    if not fields["title"]:
        h1 = _H1.search(text)
        fields["title"], provenance["title"] = (h1[1], "document") if h1 else (path.stem, "filename")
    if not fields["lang"]:
        fields["lang"], provenance["lang"] = detect_language(text), "document"
    host = urlparse(str(fields["url"])).hostname if fields["url"] else None
    if host:
        fields["domain"], provenance["domain"] = host, provenance["url"]
        tier = authority_of_domain(host)
        if tier and "authority" not in provenance:  # only when nothing said otherwise
            fields["authority"], provenance["authority"] = tier, "domain"
    return DocumentMeta(fields=fields, provenance=provenance)


def _dates_of_its_year(fields: dict[str, object], provenance: dict[str, str], text: str) -> None:
    """A signature date read from the text that the document's own year contradicts (more than a year apart) is a
    misreading, not a date: the statute book's scans sign UU 17/2017 "22 November 2077" and promulgate UU 5/1965 on
    "14 Juni 1985". It is dropped (unknown, so nothing it would date is decided by it), and an effective date the
    text counts from it is read again without it. A date the file or a sidecar declares is kept as declared."""
    year = fields.get("year")
    if not isinstance(year, int):
        return
    dropped = [k for k in ("published", "promulgated")
               if provenance.get(k) == "document" and abs(int(str(fields[k])[:4]) - year) > 1]
    if not dropped:
        return
    for k in dropped:
        fields[k] = None
        provenance.pop(k)
    if provenance.get("effective", "document") == "document":
        published, promulgated = (dt.date.fromisoformat(str(fields[k])) if fields[k] else None
                                  for k in ("published", "promulgated"))
        effective = _effective(text, published, promulgated)
        fields["effective"] = effective and effective.isoformat()
        if effective is None:
            provenance.pop("effective", None)


_OFFICIAL_HOST = re.compile(r"(?:^|\.)(?:go\.id|gov|gov\.[a-z]{2}|gob\.[a-z]{2}|europa\.eu)$")
_ACADEMIC_HOST = re.compile(r"(?:^|\.)(?:ac\.id|edu|ac\.[a-z]{2}|edu\.[a-z]{2})$")
_INSTITUTIONAL_HOST = re.compile(r"(?:^|\.)(?:or\.id|ifrs\.org|iaiglobal\.or\.id|oecd\.org|imf\.org|worldbank\.org)$")
_MEDIA_HOSTS = {"kompas.com", "detik.com", "tempo.co", "kontan.co.id", "bisnis.com", "cnbcindonesia.com",
                "cnnindonesia.com", "antaranews.com", "katadata.co.id", "republika.co.id", "liputan6.com",
                "thejakartapost.com", "reuters.com", "bloomberg.com", "ft.com", "wsj.com"}


def authority_of_domain(host: str) -> str | None:
    """The authority tier a publisher's domain implies: government (go.id, .gov) official,
    universities academic, standard setters and associations institutional, news media media;
    None when the domain says nothing."""
    host = host.lower().removeprefix("www.")
    if _OFFICIAL_HOST.search(host):
        return "official"
    if _ACADEMIC_HOST.search(host):
        return "academic"
    if _INSTITUTIONAL_HOST.search(host):
        return "institutional"
    if any(host == m or host.endswith("." + m) for m in _MEDIA_HOSTS):
        return "media"
    return None
