"""The contract's number check: every figure in a claim must appear in its quotes.

A figure is an amount, percentage, date, year, or article/paragraph number. Figures are
compared by canonical value, not by surface form, so "IDR 1,250,000.50" is backed by
"Rp 1.250.000,50" and "10 percent" by "10%", while "15%" against "10%" fails.

Decisions the callers rely on:

* Offsets: each character is NFKC-normalised on its own and every normalised character
  remembers the original index it came from, so `text/start/end` always refer to the
  ORIGINAL string even when NFKC changes length (fullwidth digits, "％", NBSP).
* Numbers written as words ("sepuluh", "ten") are not extracted: the check is about
  digits shown to the user; a quote's spelled-out number never backs a digit claim.
* Numeric dates are day/month/year (Indonesian order): "01/02/2025" is 1 February. Only
  when that reading is impossible ("12/13/2025") is month/day/year used. Days are only
  range-checked (1-31), so "31 Februari 2025" stays the date "2025-02-31" and matches
  nothing but itself.
* An ambiguous single separator followed by exactly three digits ("1.250", "1,250") is
  read per `lang` (guessed from the text when None, default "id"); the other reading
  goes into `alternatives`, and either reading may match. Failing closed is preferred
  everywhere else: a separator pattern that is not valid grouping in either notation
  ("5208.21.00", "5.5.1") is kept as a literal string that only matches itself.
* Dates expose no alternatives; their year and day back a claimed plain number (a
  claimed "2025" is backed by the quoted date "1 Januari 2025"), never the reverse.
  A claimed partial date ("Januari 2025", "15 Maret") is backed by any quoted date
  it is a part of.
* Scale words (ribu/juta/miliar/triliun, thousand/million/billion/trillion) multiply
  plain numbers too: "5 juta" is the number 5000000.
* Signs are ignored ("-5%" yields 5%); the check is about digits, not arithmetic.
"""
from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Iterator, Sequence

__all__ = [
    "Figure",
    "canonical_decimal",
    "extract_figures",
    "figures_without_basis",
    "guess_lang",
]


@dataclass(frozen=True)
class Figure:
    kind: str  # "number" | "percent" | "money" | "date"
    value: str  # canonical decimal, literal token, or ISO-style date
    unit: str | None  # currency code for money, "%" for percent, else None
    text: str  # exact surface text in the original input
    start: int
    end: int
    alternatives: tuple[str, ...] = ()  # other canonical readings of an ambiguous form


def canonical_decimal(s: str | Decimal | int) -> str:
    """Plain decimal string without exponent or trailing zeros: "1250000.50" -> "1250000.5".

    Accepts only what `Decimal` accepts (no thousands separators), so it never guesses
    a notation; raises ValueError otherwise.
    """
    try:
        d = Decimal(str(s).strip())
    except InvalidOperation as exc:
        raise ValueError(f"not a decimal: {s!r}") from exc
    if not d.is_finite():
        raise ValueError(f"not a finite decimal: {s!r}")
    if d == 0:
        return "0"
    return format(d.normalize(), "f")


# --------------------------------------------------------------------------- patterns

_NUM = r"[0-9]+(?:[.,][0-9]+)*"
# never start inside a digit run such as the "250" of "1.250"
_START = r"(?<![0-9])(?<![0-9][.,])"
# never end inside one
_STOP = r"(?![0-9])(?![.,][0-9])"

_MONTHS: dict[str, int] = {
    "januari": 1, "january": 1, "jan": 1,
    "februari": 2, "pebruari": 2, "february": 2, "feb": 2, "peb": 2,
    "maret": 3, "march": 3, "mar": 3,
    "april": 4, "apr": 4,
    "mei": 5, "may": 5,
    "juni": 6, "june": 6, "jun": 6,
    "juli": 7, "july": 7, "jul": 7,
    "agustus": 8, "august": 8, "agu": 8, "ags": 8, "agt": 8, "aug": 8,
    "september": 9, "sept": 9, "sep": 9,
    "oktober": 10, "october": 10, "okt": 10, "oct": 10,
    "november": 11, "nopember": 11, "nov": 11,
    "desember": 12, "december": 12, "des": 12, "dec": 12,
}
_MONTH = (
    r"(?P<mon>"
    + "|".join(sorted(_MONTHS, key=len, reverse=True))
    + r")(?![A-Za-z])\.?"
)
_ORD = r"(?:st|nd|rd|th)?"
_DAY = r"(?P<d>[0-9]{1,2})"
_YEAR = r"(?P<y>[0-9]{4})"

_I = re.IGNORECASE
_DATE_PATTERNS: list[re.Pattern[str]] = [
    # 2025-01-01, 2025/01/01
    re.compile(_START + r"(?P<y>[0-9]{4})(?P<sep>[-/])(?P<m>[0-9]{1,2})(?P=sep)(?P<d>[0-9]{1,2})" + _STOP),
    # 01/01/2025, 1-1-2025 (day first)
    re.compile(_START + r"(?P<d>[0-9]{1,2})(?P<sep>[-/])(?P<m>[0-9]{1,2})(?P=sep)(?P<y>[0-9]{4})" + _STOP),
    # 1 Januari 2025, 1st of January, 2025
    re.compile(_START + _DAY + _ORD + r"\s+(?:of\s+)?" + _MONTH + r",?\s+" + _YEAR + _STOP, _I),
    # January 1, 2025
    re.compile(r"(?<![A-Za-z])" + _MONTH + r"\s+" + _DAY + _ORD + r",?\s+" + _YEAR + _STOP, _I),
    # Januari 2025
    re.compile(r"(?<![A-Za-z])" + _MONTH + r",?\s+" + _YEAR + _STOP, _I),
    # 15 Maret (no year)
    re.compile(_START + _DAY + _ORD + r"\s+(?:of\s+)?" + _MONTH, _I),
    # March 15 (no year); not "May 10%"
    re.compile(r"(?<![A-Za-z])" + _MONTH + r"\s+" + _DAY + _ORD + _STOP + r"(?!\s*(?:%|persen|percent))", _I),
]

_SCALES: dict[str, int] = {
    "ribu": 3, "rb": 3, "thousand": 3,
    "juta": 6, "jt": 6, "million": 6,
    "miliar": 9, "milyar": 9, "billion": 9, "bn": 9,
    "triliun": 12, "trilyun": 12, "trillion": 12,
}
_SCALE = r"(?:\s*(?P<scale>" + "|".join(sorted(_SCALES, key=len, reverse=True)) + r")(?![A-Za-z]))"
_TAIL = r"(?:[.,]-+)?"  # "Rp100.000,-"

_ISO = r"IDR|USD|EUR|SGD|GBP|JPY|AUD|CNY|MYR|HKD"
_CUR_PREFIX = re.compile(
    r"(?<![A-Za-z0-9$])(?P<cur>US\$|HK\$|S\$|A\$|Rp\.?|" + _ISO + r"|\$|€|£|¥)\s*"
    + r"(?P<num>" + _NUM + r")" + _TAIL + _SCALE + "?",
    _I,
)
_CUR_SUFFIX = re.compile(
    _START + r"(?P<num>" + _NUM + r")" + _TAIL + _SCALE + r"?\s*"
    r"(?P<cur>rupiah"
    r"|(?:US|U\.S\.|Singapore|Australian|Hong\s+Kong)\s+dollars?"
    r"|dolar(?:\s+(?:AS|Amerika(?:\s+Serikat)?|Singapura|Australia|Hong\s+Kong)(?![A-Za-z]))?"
    r"|dollars?|euros?|" + _ISO + r")(?![A-Za-z])",
    _I,
)
_PERCENT = re.compile(
    _START + r"(?P<num>" + _NUM + r")\s*(?:%|(?:persen|percent|per\s*-?\s*cent|pct)(?![A-Za-z]))",
    _I,
)
# paragraph numbers such as B12, AG5, BC4.2 (uppercase only: "x2" is not a paragraph)
_LETTER_NUM = re.compile(r"(?<![A-Za-z0-9])[A-Z]{1,3}[0-9]+(?:\.[0-9]+)*(?![A-Za-z0-9])(?![.,][0-9])")
# plain numbers; an integer directly followed by one capital letter is an article
# number such as "Pasal 4A" / "31E" and kept whole
_PLAIN = re.compile(
    _START + r"(?P<num>" + _NUM + r")(?:(?P<suf>(?-i:[A-Z]))(?![A-Za-z0-9])|" + _SCALE + r")?",
    _I,
)

_CURRENCY_SYMBOLS = {
    "rp": "IDR", "rp.": "IDR", "$": "USD", "us$": "USD", "s$": "SGD", "a$": "AUD",
    "hk$": "HKD", "€": "EUR", "£": "GBP", "¥": "JPY",
}

_ID_WORDS = frozenset(
    "yang dan di ke dari untuk dengan atas adalah tidak ini itu atau pada oleh sebesar "
    "tarif pajak dalam akan sebagai bahwa yaitu tersebut paling sampai atau juga wajib "
    "berlaku tahun bulan tanggal pasal ayat huruf dikenakan penghasilan".split()
)
_EN_WORDS = frozenset(
    "the and of to in is for with that by on as are be this or from at which shall "
    "rate tax not an it was were has have applies applied year month income article".split()
)
_WORD = re.compile(r"[A-Za-z]+")
_ANY_NUM = re.compile(_START + _NUM)


# --------------------------------------------------------------------------- helpers


def _normalise(text: str) -> tuple[str, list[int]]:
    """NFKC per character, with the original index of every normalised character."""
    out: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        n = ch if ch.isascii() else unicodedata.normalize("NFKC", ch)
        out.append(n)
        index.extend([i] * len(n))
    index.append(len(text))
    return "".join(out), index


def _valid_grouping(digits: str, sep: str) -> bool:
    """Is `digits` a correctly thousands-grouped integer with separator `sep`?"""
    groups = digits.split(sep)
    head = groups[0]
    if not 1 <= len(head) <= 3 or (head.startswith("0") and (len(head) > 1 or len(groups) > 1)):
        return False
    return all(len(g) == 3 for g in groups[1:])


def _parse_number(s: str, lang: str) -> tuple[Decimal, tuple[Decimal, ...]] | None:
    """Read a digit run in id or en notation; None when it is no valid number in either."""
    dots, commas = s.count("."), s.count(",")
    if not dots and not commas:
        return Decimal(s), ()
    if dots and commas:
        dec_sep = "." if s.rfind(".") > s.rfind(",") else ","
        thou_sep = "," if dec_sep == "." else "."
        if s.count(dec_sep) != 1:
            return None
        whole, frac = s.split(dec_sep)
        if not _valid_grouping(whole, thou_sep):
            return None
        return Decimal(whole.replace(thou_sep, "") + "." + frac), ()
    sep = "." if dots else ","
    parts = s.split(sep)
    if len(parts) > 2:
        return (Decimal("".join(parts)), ()) if _valid_grouping(s, sep) else None
    whole, frac = parts
    as_decimal = Decimal(whole + "." + frac)
    if len(frac) == 3 and _valid_grouping(s, sep):
        as_thousands = Decimal(whole + frac)
        lang_thousands_sep = "." if lang == "id" else ","
        if sep == lang_thousands_sep:
            return as_thousands, (as_decimal,)
        return as_decimal, (as_thousands,)
    return as_decimal, ()


def _readings(num: str, lang: str, scale: str | None) -> tuple[str, tuple[str, ...]] | None:
    """Canonical value and alternatives of a number, scaled; None for a literal."""
    parsed = _parse_number(num, lang)
    if parsed is None:
        return None
    value, alts = parsed
    factor = Decimal(10) ** _SCALES[scale.lower()] if scale else Decimal(1)
    canon = canonical_decimal(value * factor)
    others: list[str] = []
    for a in alts:
        c = canonical_decimal(a * factor)
        if c != canon and c not in others:
            others.append(c)
    return canon, tuple(others)


def _currency(raw: str) -> str:
    """Map a currency symbol, code or word to an ISO-style code (IDR == Rp == rupiah)."""
    key = " ".join(raw.lower().split())
    if key in _CURRENCY_SYMBOLS:
        return _CURRENCY_SYMBOLS[key]
    if "rupiah" in key:
        return "IDR"
    if "singap" in key:
        return "SGD"
    if "austral" in key:
        return "AUD"
    if "hong" in key:
        return "HKD"
    if "euro" in key:
        return "EUR"
    if "dolar" in key or "dollar" in key:
        return "USD"
    return key.upper()


def _valid_date(day: int | None, month: int) -> bool:
    """Range check only: dates are compared as written, not against a calendar."""
    return 1 <= month <= 12 and (day is None or 1 <= day <= 31)


def _date_value(m: re.Match[str]) -> str | None:
    """ISO-style value of a date match, or None when day or month is out of range."""
    groups = m.groupdict()
    year = int(groups["y"]) if groups.get("y") else None
    day = int(groups["d"]) if groups.get("d") else None
    if groups.get("mon"):
        word = groups["mon"]
        if word == "may":  # lower-case "may" is the English verb, not the month
            return None
        month = _MONTHS[word.lower()]
    else:
        month = int(groups["m"])
        day_first = m.start("d") < m.start("m")
        if day_first and day is not None and not _valid_date(day, month) and _valid_date(month, day):
            month, day = day, month  # "12/13/2025": only month/day/year makes sense
    if not _valid_date(day, month):
        return None
    if year is None:
        return f"--{month:02d}-{day:02d}"
    if day is None:
        return f"{year:04d}-{month:02d}"
    return f"{year:04d}-{month:02d}-{day:02d}"


def _check_lang(lang: str | None) -> str | None:
    if lang is None:
        return None
    code = lang.strip().lower()[:2]
    if code not in ("id", "en"):
        raise ValueError(f"lang must be 'id', 'en' or None, not {lang!r}")
    return code


def guess_lang(text: str) -> str:
    """Notation ("id" or "en") for ambiguous separators; unambiguous numbers count most.

    Defaults to "id": the corpus is Indonesian, and Rp amounts use dot thousands.
    """
    norm = unicodedata.normalize("NFKC", text)
    score = 0  # > 0 leans English
    for m in _ANY_NUM.finditer(norm):
        s = m.group()
        dots, commas = s.count("."), s.count(",")
        if dots and commas:
            score += 2 if s.rfind(".") > s.rfind(",") else -2
        elif dots + commas == 1 and len(s.split("." if dots else ",")[1]) != 3:
            score += 2 if dots else -2
    for w in _WORD.findall(norm):
        lw = w.lower()
        if lw in _EN_WORDS:
            score += 1
        elif lw in _ID_WORDS:
            score -= 1
    return "en" if score > 0 else "id"


# --------------------------------------------------------------------------- extraction


class _Extractor:
    """One pass over one text: claims spans so later, looser patterns skip them."""

    def __init__(self, text: str, lang: str):
        self.original = text
        self.norm, self.index = _normalise(text)
        self.lang = lang
        # claimed spans, disjoint and kept sorted: a lookup is a bisection, not a scan of
        # every earlier figure (which made a text with many figures quadratic)
        self._starts: list[int] = []
        self._ends: list[int] = []
        self.found: list[Figure] = []

    def free(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self._starts, start)
        if i and self._ends[i - 1] > start:  # the span starting at or before `start` reaches into it
            return False
        return i == len(self._starts) or self._starts[i] >= end  # the next span starts after it

    def add(self, kind: str, value: str, unit: str | None, start: int, end: int,
            alternatives: tuple[str, ...] = ()) -> None:
        i = bisect.bisect_right(self._starts, start)
        self._starts.insert(i, start)
        self._ends.insert(i, end)
        o_start, o_end = self.index[start], self.index[end - 1] + 1
        self.found.append(Figure(kind, value, unit, self.original[o_start:o_end],
                                 o_start, o_end, alternatives))

    def matches(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        for m in pattern.finditer(self.norm):
            if m.end() > m.start() and self.free(m.start(), m.end()):
                yield m

    def run(self) -> list[Figure]:
        for pattern in _DATE_PATTERNS:
            for m in self.matches(pattern):
                value = _date_value(m)
                if value is not None:
                    self.add("date", value, None, m.start(), m.end())
        for pattern in (_CUR_PREFIX, _CUR_SUFFIX):
            for m in self.matches(pattern):
                read = _readings(m.group("num"), self.lang, m.group("scale"))
                if read is not None:  # a literal is left for the plain-number pass
                    self.add("money", read[0], _currency(m.group("cur")), m.start(), m.end(), read[1])
        for m in self.matches(_PERCENT):
            read = _readings(m.group("num"), self.lang, None)
            if read is not None:
                self.add("percent", read[0], "%", m.start(), m.end(), read[1])
        for m in self.matches(_LETTER_NUM):
            self.add("number", m.group(), None, m.start(), m.end())
        for m in self.matches(_PLAIN):
            self._plain(m)
        self.found.sort(key=lambda f: (f.start, f.end))
        return self.found

    def _plain(self, m: re.Match[str]) -> None:
        num = m.group("num")
        if m.group("suf") and "." not in num and "," not in num:
            self.add("number", num + m.group("suf"), None, m.start(), m.end())
            return
        scale = m.group("scale")
        read = _readings(num, self.lang, scale)
        if read is None:  # not a number in either notation: keep as written
            self.add("number", num, None, m.start("num"), m.end("num"))
        else:
            self.add("number", read[0], None, m.start(), m.end() if scale else m.end("num"), read[1])


def extract_figures(text: str, lang: str | None = None) -> list[Figure]:
    """All figures in `text`, in order; dates first so their parts are not plain numbers."""
    code = _check_lang(lang) or guess_lang(text)
    return _Extractor(text, code).run()


# --------------------------------------------------------------------------- matching


def _values(f: Figure) -> set[str]:
    return {f.value, *f.alternatives}


def _number_keys(f: Figure) -> set[str]:
    """Values a figure offers to a claimed plain number: a date offers its year and day."""
    if f.kind != "date":
        return _values(f)
    v = f.value
    keys: set[str] = set()
    if v.startswith("--"):  # --MM-DD
        keys.add(str(int(v[5:7])))
    else:
        keys.add(str(int(v[0:4])))
        if len(v) == 10:
            keys.add(str(int(v[8:10])))
    return keys


def _date_backs(claim: str, quote: str) -> bool:
    """Same date, or the claim is a part of the quoted date (month-year, day-month)."""
    if claim == quote:
        return True
    if len(claim) == 7 and not claim.startswith("--"):  # YYYY-MM
        return quote.startswith(claim + "-")
    if claim.startswith("--") and len(quote) == 10:  # --MM-DD
        return quote[4:] == claim[1:]
    return False


def _has_basis(claim: Figure, quoted: Sequence[Figure]) -> bool:
    for q in quoted:
        if claim.kind == "number":
            if _values(claim) & _number_keys(q):
                return True
        elif claim.kind != q.kind:
            continue
        elif claim.kind == "date":
            if _date_backs(claim.value, q.value):
                return True
        elif claim.unit == q.unit and _values(claim) & _values(q):
            return True
    return False


def figures_without_basis(claim: str, quotes: Sequence[str], lang: str | None = None) -> list[Figure]:
    """Figures of `claim` not found among the figures of the quotes (empty list = the claim passes).

    With `lang` None each text's notation is guessed on its own, since an English claim
    may quote an Indonesian source.
    """
    if isinstance(quotes, str):
        raise TypeError("quotes must be a sequence of strings, not one string")
    code = _check_lang(lang)
    quoted = [f for q in quotes for f in extract_figures(q, code)]
    return [f for f in extract_figures(claim, code) if not _has_basis(f, quoted)]
