"""Definitions: the terms a regulation defines, and the term a question asks the meaning of.

A regulation defines its terms in its first article: "Dalam Peraturan Pemerintah ini yang
dimaksud dengan: … 4. Rencana Penggunaan Tenaga Kerja Asing yang selanjutnya disingkat
RPTKA adalah …". Each entry defines a term under its long form and, when it says so, a short
form ("disingkat", "disebut"). A question asks for a definition as "Apa yang dimaksud dengan
RPTKA?", "Apa itu …", "Apa pengertian …", "What is meant by …".

The context builder looks the asked term up among the collection's definitions (so the entry
is read even when a hundred passages mention the term), the reader checks that a candidate
defines the very term asked (not a longer one that contains it, "Disiplin PNS" for "PNS"),
and the decision shows every regulation that defines it. One module, so the three agree.

Laws restate each other's definitions ("Pemberi Kerja adalah orang perseorangan, pengusaha, badan
hukum, atau badan-badan lainnya …" in UU 40/2004, UU 24/2011 and PP 44/2015 alike): `restated`
tells one definition written twice from two that say different things, so the reader can show
first the meaning most of the collection's definers share (`restatement_order`).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Iterable, Iterator, Sequence

from .analysis import ocr_initial

# "Tenaga Kerja Asing yang selanjutnya disingkat TKA adalah …": the term before the copula
ENTRY = re.compile(r"^\W*(?:(?:\d{1,3}[a-z]?|[a-z]{1,2})\.\s*)?(?P<term>[^.;:]{2,200}?)\s*,?\s+(?:adalah|ialah|merupakan|means|is\s+defined"
                   r"\s+as|shall\s+mean)\b", re.IGNORECASE)
SHORT = re.compile(r"^(?P<long>.+?)\s*,?\s*(?:yang\s+)?(?:selanjutnya|hereinafter)\s+(?:dapat\s+)?(?:disingkat|disebut|"
                   r"dalam\s+[\w\s]{2,40}?\s+ini\s+disebut|referred\s+to\s+as|abbreviated\s+as)(?:\s+dengan)?\s+(?P<short>.+?)"
                   r"\s*,?$", re.IGNORECASE)
# "Pasal 1", and in an amending regulation the amended "Pasal I angka 1 › Pasal 1"
DEFINITIONS_UNIT = re.compile(r"(?:^|#|› )(?:Pasal|Article)\s+1$")
# a chunk of the definitions article: "Pasal 1 angka 1–8", "Pasal 1 angka 3 (bagian 2/4)" (not "Pasal 10")
DEFINITIONS_LOCATION = re.compile(r"^(?:Pasal|Article)\s+1\b")

# the phrase after the cue, up to where the question names a source or ends
_ASKS = re.compile(
    r"(?:\bapa(?:kah)?\s+(?:yang\s+)?(?:dimaksud|diartikan|disebut)\s+(?:dengan\s+)?|\bapa(?:kah)?\s+(?:itu|arti(?:nya)?|"
    r"pengertian(?:\s+dari)?|definisi(?:\s+dari)?|makna(?:\s+dari)?|kepanjangan(?:\s+dari)?)\s+|\byang\s+dimaksud\s+dengan\s+|"
    r"\b(?:jelaskan\s+)?(?:pengertian|definisi)\s+(?:dari\s+)?|\bwhat\s+(?:is|are)\s+(?:meant\s+by|the\s+(?:meaning|definition)"
    r"\s+of)\s+|\bwhat\s+does\s+|\bdefin(?:e|ition\s+of)\s+|\bmeaning\s+of\s+)(?P<term>.+)", re.IGNORECASE)
# "What is a foreign worker?": a bare "what is X?" asks a meaning unless X says what about it is asked
# ("the maximum duration of …", "the purpose of …"); configs/routes.yaml's definition route says the same
_ASKS_BARE = re.compile(
    r"^\W*what\s+(?:is|are)\s+(?:an?\s+|the\s+)?(?![^?]*\b(?:of|for|to|on|by|from|when|which|that|who|whom|after|before|"
    r"within|between|must|shall|can|may|do|does|did|maximum|minimum|total|amount|number|rate|purpose|penalty|deadline|period|"
    r"duration|role|duty|task)\b)(?P<term>[^?]{1,60}?)\?*\s*$", re.IGNORECASE)
_ASKS_AFTER = re.compile(r"^(?P<term>.{1,80}?)\s+(?:adalah|itu)\s+apa\b", re.IGNORECASE)
_SOURCE_TAIL = re.compile(r"\s*(?:,|\bmenurut\b|\bdalam\b|\bdi\s+dalam\b|\bberdasarkan\b|\bpada\b|\bsesuai\b|\bin\b|\bunder\b|"
                          r"\baccording\b|\bas\s+used\b|\bmean\b|\bstand\s+for\b|\brefer\s+to\b).*$", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:an?|the)\s+", re.IGNORECASE)  # "meant by an RPTKA": the term is "RPTKA"
_PUNCT = re.compile(r"[^\w\s/]", re.UNICODE)
_WS = re.compile(r"\s+")


def term_key(text: str) -> str:
    """How terms compare: NFKC, case-folded, punctuation as space ("Pekerja/Buruh" keeps its slash), each word's first
    letter as it was before a scan swapped I and l (analysis.ocr_initial: "luran" is "iuran")."""
    words = _WS.sub(" ", _PUNCT.sub(" ", unicodedata.normalize("NFKC", text).casefold())).split()
    return " ".join(ocr_initial(w) for w in words)


@dataclass(frozen=True)
class Entry:
    """One definition: the forms it defines ("rencana penggunaan tenaga kerja asing", "rptka")."""

    keys: tuple[str, ...]
    term: str                 # the term as written, long form
    short: str | None = None  # its short form as written ("RPTKA"), when the entry gives one


def entry_of(text: str) -> Entry | None:
    """The definition a text states at its start, if it is one ("X (yang selanjutnya disingkat Y) adalah …")."""
    m = ENTRY.match(text)
    if not m:
        return None
    term = m.group("term").strip()
    short = SHORT.match(term)
    forms = [short.group("long"), short.group("short")] if short else [term]
    keys = tuple(dict.fromkeys(k for k in (term_key(f) for f in forms) if k and len(k.split()) <= 12))
    if not keys:
        return None
    return Entry(keys, (short.group("long") if short else term).strip(), short.group("short").strip() if short else None)


def asked_term(question: str) -> str | None:
    """The term a question asks the meaning of, as a key ("Apa yang dimaksud dengan RPTKA?" → "rptka")."""
    q = unicodedata.normalize("NFKC", question).strip()
    m = _ASKS.search(q) or _ASKS_BARE.search(q) or _ASKS_AFTER.search(q)
    if not m:
        return None
    term = _ARTICLE.sub("", _SOURCE_TAIL.sub("", m.group("term").rstrip(" ?!.")).strip())
    key = term_key(term)
    return key if key and len(key.split()) <= 10 else None


def unasked_entry(asked: str | None, location: str, pieces: Sequence[str]) -> bool:
    """A definitions article's entry ("Pasal 1 angka 5: Pejabat Pembina Kepegawaian adalah …", at `location`,
    quoted as `pieces`: the entry alone, after its lead-in, or in the whole list, one entry a line) read for a
    question that asks no meaning (`asked`: its asked_term, None): the entry says what a word of the question means,
    not what the question asks, so nothing but the reader's own reading may make it the answer (the generator lifts
    it by neither agreement nor the cross-lingual reading; bench/regulation_thresholds.py fits it so)."""
    if asked is not None or not DEFINITIONS_LOCATION.match(location or ""):
        return False
    return next(quoted_entries(pieces), None) is not None


def quoted_entries(pieces: Sequence[str]) -> Iterator[tuple[str, Entry]]:
    """Each line of quoted pieces (an entry alone, after its lead-in, or a whole list, one entry a line) that states a
    definition: (the line, its entry)."""
    for piece in pieces:
        for line in piece.split("\n"):
            if (e := entry_of(line := line.strip())) is not None:
                yield line, e


def asked_definiens(asked: str, pieces: Sequence[str]) -> str | None:
    """What quoted pieces say the asked term is (`definiens` of the line whose entry `defines` it); else None."""
    return next((definiens(line) for line, e in quoted_entries(pieces) if defines(e, asked)), None)


def translations(asked: str, en_to_id: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """An English asked term's Indonesian forms, as keys, through the glossary ("foreign worker" ->
    "tenaga kerja asing"); none when the glossary lacks it."""
    return tuple(dict.fromkeys(term_key(t) for t in en_to_id.get(asked, ())))


def defines(entry: Entry | None, asked: str | None) -> bool:
    """The entry defines exactly the asked term (one of its forms is the asked key)."""
    return bool(entry and asked and asked in entry.keys)


def resolve_asked(asked: str | None, entries: Iterable[tuple[Entry, str]]) -> str | None:
    """The asked term as the given definitions know it ((entry, its text) pairs): the term itself when an
    entry defines it; otherwise the longest entry term it starts with whose entry states every word left
    over — a qualifier the definition carries itself ("Pelanggaran Disiplin PNS" asked, "Pelanggaran
    Disiplin adalah … perbuatan PNS …" defined). Nothing found: the term as asked."""
    if not asked:
        return asked
    entries = list(entries)
    if any(defines(e, asked) for e, _ in entries):
        return asked
    words = asked.split()
    for k in range(len(words) - 1, 0, -1):
        key, rest = " ".join(words[:k]), words[k:]
        for e, text in entries:
            if key in e.keys and set(rest) <= set(term_key(text).split()):
                return key
    return asked


def entries_in(text: str, spans: Iterable) -> list[tuple[str, Entry]]:
    """The definition entries of a definitions article's chunk: (span label, entry), one per item span."""
    out = []
    for s in spans:
        label = getattr(s, "label", "")
        if not re.search(r"\b(?:angka|huruf|point|letter)\s+\w+$", label):
            continue
        body = text[s.start:s.end]
        e = entry_of(body)
        if e:
            out.append((label, e))
    return out


# the end of an entry's sentence: what follows is the next entry or a scan's noise ("… pemerintahan. jr 3 Sg")
_SENTENCE_END = re.compile(r"[.;](?:\s|$)")


def definiens(text: str) -> str | None:
    """What an entry says its term is: the words after its copula, to the end of its sentence, as `term_key` compares
    them ("4. Pemberi Kerja adalah orang pribadi dan badan, …." -> "orang pribadi dan badan …"); None where the text
    states no definition at its start."""
    m = ENTRY.match(text)
    if not m:
        return None
    rest = text[m.end():]
    end = _SENTENCE_END.search(rest)
    return term_key(rest[:end.start()] if end else rest) or None


def _spelling(a: str, b: str) -> bool:
    """Two words one spelling apart ("memperkerjakan", "mempekerjakan"): long, no digits, nearly the same letters,
    at most one letter longer (an affix is a word of its own: "pemerintah", "pemerintahan")."""
    return (min(len(a), len(b)) >= 6 and abs(len(a) - len(b)) <= 1 and not any(ch.isdigit() for ch in a + b)
            and SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.9)


def _acronym(short: Sequence[str], long: Sequence[str]) -> bool:
    """One word that is the initials of the other side's words ("asn", "aparatur sipil negara")."""
    return len(short) == 1 and len(long) >= 2 and short[0] == "".join(w[0] for w in long)


def _reduplicated(words: Sequence[str], inserted: Sequence[str], at: int) -> bool:
    """Words one side has and the other not, each repeating the word beside it ("badan badan lainnya", the
    plural "badan-badan", against "badan lainnya")."""
    return all(w in (words[at - 1] if at > 0 else None, words[at + len(inserted)] if at + len(inserted) < len(words)
                     else None) for w in inserted)


def restated(a: str, b: str) -> bool:
    """Whether two definientia (`definiens`) say the same thing: word for word once each is read as `term_key`
    reads it, but for a word one spelling apart, a word a scan split in two, a reduplicated plural, or an acronym for
    the words it stands for.
    Any other word added, dropped or changed (a number, a negation, "dan/atau Pemerintah") is another definition."""
    wa, wb = a.split(), b.split()
    if not wa or not wb:
        return False
    for op, i1, i2, j1, j2 in SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes():
        x, y = wa[i1:i2], wb[j1:j2]
        if op == "equal":
            continue
        if op == "delete" and _reduplicated(wa, x, i1):
            continue
        if op == "insert" and _reduplicated(wb, y, j1):
            continue
        if op == "replace" and ((len(x) == len(y) == 1 and _spelling(x[0], y[0])) or _acronym(x, y) or _acronym(y, x)
                                or "".join(x) == "".join(y)):  # a word a scan split ("indone sia")
            continue
        return False
    return True


def restatement_order(said: Sequence[str | None], rank: Sequence[int] | None = None) -> list[int]:
    """An order for definitions of one term, each document's (`said`: their definientia in the given order, None
    for a text that is no such definition). The definitions are grouped by restatement and each meaning is shown once
    before any is shown twice: first each group's first member (by `rank`, lower first; default the given order), the
    meaning the most documents state first (ties: the group whose first member comes first in the given order), then
    the groups' other members in the same order, so a cap on the claims drops a restatement before a meaning. Texts
    that are no such definition keep their places. For a question that asks what a term means and names no document,
    the meaning the statute book shares comes before one regulation's own (a tax rule's "pemberi kerja")."""
    groups: list[list[int]] = []
    for i, d in enumerate(said):
        if d is None:
            continue
        for g in groups:
            if restated(said[g[0]], d):
                g.append(i)
                break
        else:
            groups.append([i])
    groups = [sorted(g, key=lambda i: (rank[i] if rank is not None else i, i))
              for g in sorted(groups, key=lambda g: (-len(g), g[0]))]
    ordered = [g[0] for g in groups] + [i for g in groups for i in g[1:]]
    out = list(range(len(said)))
    for slot, i in zip((i for i, d in enumerate(said) if d is not None), ordered):
        out[slot] = i
    return out
