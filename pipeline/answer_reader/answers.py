"""The answers a context offers: exact slices of its chunks that may be quoted as an answer,
at the granularity a lawyer cites. The extractive generator and the reader's training both
see a context through `answer_candidates`, so what is learned is what is offered.

Kinds of candidate:

- **sentence**: a sentence without its leading structural label ("(1)", "b.") — in prose and
  regulations alike;
- in a regulation chunk (one whose ayat/huruf/angka spans are known):
  - **item**: an enumeration's lead-in with one of its items, and the words that close the
    enumeration after its last item when there are any: "Pengawasan penggunaan TKA
    dilaksanakan oleh: [...] b. Pejabat imigrasi …". A definitions article's entries are
    items of its "yang dimaksud dengan:" list;
  - **enumeration**: a lead-in with all its items;
  - **ayat**: a whole ayat of more than one sentence;
  - **pasal**: a whole Pasal of two or more ayat, when the chunk holds all of it.

A candidate is one or more *segments*, each an exact slice of the chunk text. An item is a
segment apart from its lead-in (even the first, which touches it), so the claim quotes each
piece exactly, each cited to its own ayat or huruf, and its text joins them with `ELISION`. The verbatim judge accepts such a claim only when what was left out between the
pieces is whole items of the same enumeration (`pipeline.backends.quote_checks.elided_verbatim`).

Not a candidate: a heading, a lead-in on its own (a sentence ending in ":"), text that
addresses the model (pipeline/instructions.py), and,
when the question's route requires evidence categories, text that states none of them.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Sequence

from ..definitions import entry_of
from ..categories import CategoryTagger
from ..instructions import instruction_spans
from ..text import split_sentences, trim_span
from ..types import ContextItem, Span

ELISION = " [...] "  # joins the quoted pieces of one answer, as an omission is marked in a legal quotation (ASCII:
#                      NFKC, which the quote gate applies, would turn an ellipsis character into three dots)

KINDS = ("sentence", "item", "enumeration", "ayat", "pasal")

# structural labels a sentence quote need not start with: "Pasal 3", "(1)", "12.", "B4.", "a."
_LEADING_LABEL = re.compile(r"^(?:Pasal\s+\d+[A-Z]?\s*\n\s*)?(?:\(\d{1,2}[a-z]?\)\s+|[A-Z]{0,2}\d{1,3}\.\s+|[a-z]\.\s+)?")
_PASAL_HEADER = re.compile(r"^\s*(?:Pasal|Article)\s+\w+\s*\n")
_WHOLE_PASAL = re.compile(r"^(?:Pasal|Article)\s+\w+$")
_SPAN_KIND = re.compile(r"\b(ayat|huruf|angka|paragraph|letter|point)\s+\(?\w+\)?$")
_LIST_KINDS = frozenset({"huruf", "angka", "letter", "point"})
# the label a span's text starts with: "(2) ", "b. ", "12. "
_SPAN_LABEL = re.compile(r"\s*(?:\(\w{1,3}\)|\w{1,3}[.)])\s*")
_WORDS = re.compile(r"[^\W\d_]{2,}")


def without_label(sentence: str) -> tuple[int, str]:
    """The sentence minus a leading structural label (offset, text); still an exact slice."""
    m = _LEADING_LABEL.match(sentence)
    cut = m.end() if m else 0
    return (cut, sentence[cut:]) if len(sentence) - cut >= 0.5 * len(sentence) else (0, sentence)


def is_heading(text: str) -> bool:
    """Title blocks and headings ("PERATURAN MENTERI KEUANGAN … NOMOR 98") state nothing. Read from
    the first 300 characters: a heading is short, and a long unit is judged by how it opens."""
    letters = [c for c in text[:300] if c.isalpha()]
    return bool(letters) and sum(c.isupper() for c in letters) > 0.6 * len(letters)


@dataclass(frozen=True)
class AnswerCandidate:
    """One quotable answer: its context item, kind and segments (offsets in the item's text)."""

    item: int                               # index of the context item
    index: int                              # the sentence of the item it starts in
    kind: str                               # one of KINDS
    segments: tuple[tuple[int, int], ...]   # exact slices of the item's text, in order
    quotes: tuple[str, ...]                 # the text of each segment
    lead: str = ""                          # an item's or enumeration's lead-in ("" for other kinds)
    body: str = ""                          # what answers beyond the lead-in: the item, the items, or the text
    items: int = 0                          # items of its enumeration (0: not in one)
    position: int = 0                       # an item's place in its enumeration (1-based)

    @property
    def start(self) -> int:
        return self.segments[0][0]

    @property
    def end(self) -> int:
        return self.segments[-1][1]

    @property
    def quote(self) -> str:
        """The claim's text before normalisation: the pieces joined with ELISION."""
        return ELISION.join(self.quotes)


@dataclass(frozen=True)
class _Node:
    """A span of the chunk (or the chunk's body, for the root) with the spans directly inside it."""

    label: str
    start: int          # where its label starts
    content: int        # where its words start (after the label)
    end: int
    kind: str           # ayat | huruf | angka | root | other
    children: tuple["_Node", ...] = ()


def _span_kind(label: str) -> str:
    m = _SPAN_KIND.search(label)
    if not m:
        return "other"
    k = m.group(1)
    return {"paragraph": "ayat", "letter": "huruf", "point": "angka"}.get(k, k)


def item_label(label: str) -> bool:
    """A span label whose innermost level is an item of an enumeration ("ayat (1) huruf b", "angka 3"; not "Pasal I
    angka 1 › Pasal 14 ayat (2)", an ayat an amending regulation's item holds)."""
    return _span_kind(label) in ("huruf", "angka")


def _tree(text: str, spans: Sequence[Span]) -> _Node:
    """The chunk's spans as a tree under its body (the text after a "Pasal N" line)."""
    header = _PASAL_HEADER.match(text)
    body = header.end() if header else 0
    seen: dict[tuple[int, int], Span] = {}
    for s in spans:
        if 0 <= s.start < s.end <= len(text):
            seen.setdefault((s.start, s.end), s)
    ordered = sorted(seen.values(), key=lambda s: (s.start, -s.end))

    def build(lo: int, hi: int, items: list[Span]) -> tuple[_Node, ...]:
        out = []
        i = 0
        while i < len(items):
            s = items[i]
            j = i + 1
            while j < len(items) and items[j].start < s.end:
                j += 1
            label = _SPAN_LABEL.match(text, s.start)
            out.append(_Node(s.label, s.start, label.end() if label else s.start, s.end, _span_kind(s.label),
                             build(s.start, s.end, [x for x in items[i + 1:j] if x.end <= s.end])))
            i = j
        return tuple(out)

    return _Node("", body, body, len(text), "root", build(body, len(text), [s for s in ordered if s.start >= body]))


def _has_words(text: str, a: int, b: int, n: int = 2) -> bool:
    return len(_WORDS.findall(text[a:b])) >= n


def _segments(text: str, pieces: Sequence[tuple[int, int]], join: bool = True) -> tuple[tuple[int, int], ...]:
    """Trimmed pieces, empty ones dropped; with `join`, pieces separated only by whitespace are one.
    An item stays apart from its lead-in even when they touch, so each is cited to its own span."""
    out: list[tuple[int, int]] = []
    for a, b in pieces:
        a, b = trim_span(text, a, b)
        if a >= b:
            continue
        if join and out and not text[out[-1][1]:a].strip():
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return tuple(out)


def _units(text: str, spans: Sequence[Span], location: str) -> list[tuple[str, tuple[tuple[int, int], ...], str, str,
                                                                            int, int]]:
    """(kind, segments, lead, body, items, position) for the structural units of one chunk."""
    root = _tree(text, spans)
    out = []

    def visit(node: _Node) -> None:
        kids = node.children
        lists = [k for k in kids if k.kind in _LIST_KINDS]
        if lists and len(lists) == len(kids):  # an enumeration: lead-in, items, closing words
            la, lb = trim_span(text, node.content, kids[0].start)
            ta, tb = trim_span(text, kids[-1].end, node.end)
            tail = (ta, tb) if _has_words(text, ta, tb) else None
            if _has_words(text, la, lb):
                lead = text[la:lb]
                whole = _segments(text, [(la, node.end)])
                out.append(("enumeration", whole, lead, text[kids[0].start:kids[-1].end], len(kids), 0))
                for n, k in enumerate(kids, 1):
                    segs = _segments(text, [(la, lb), (k.start, k.end)] + ([tail] if tail else []), join=False)
                    out.append(("item", segs, lead, text[k.start:k.end], len(kids), n))
        if node.kind == "ayat" and not lists:
            a, b = trim_span(text, node.content, node.end)
            if len(split_sentences(text[a:b], 20)) > 1:
                out.append(("ayat", ((a, b),), "", text[a:b], 0, 0))
        if node.kind == "root" and _WHOLE_PASAL.match(location or ""):
            ayat = [k for k in kids if k.kind == "ayat"]
            if len(ayat) >= 2:
                a, b = trim_span(text, node.start, node.end)
                out.append(("pasal", ((a, b),), "", text[a:b], 0, 0))
        for k in kids:
            visit(k)

    visit(root)
    return out


def answer_candidates(context: Sequence[ContextItem], min_chars: int, max_chars: int,
                      tagger: CategoryTagger | None = None, required: Sequence[str] = (),
                      max_unit_chars: int | None = None) -> list[AnswerCandidate]:
    """Every candidate answer of the context, item by item: its sentences, then (regulation
    chunks) its items, enumerations, ayat and Pasal. `max_chars` bounds a sentence,
    `max_unit_chars` (default `max_chars`) a structural unit."""
    unit_limit = max_unit_chars or max_chars
    out: list[AnswerCandidate] = []
    tags: dict[str, frozenset[str]] = {}

    def states(piece: str) -> frozenset[str]:
        """The evidence categories a piece states (each piece tagged once per call)."""
        got = tags.get(piece)
        if got is None:
            got = tags[piece] = frozenset(tagger.tag(piece))
        return got

    for ci, item in enumerate(context):
        text = item.text
        planted = instruction_spans(text)
        sentences = split_sentences(text, min_chars)
        starts = [s.start for s in sentences]

        def sentence_of(pos: int) -> int:
            k = 0
            for i, a in enumerate(starts):
                if a <= pos:
                    k = i
            return k

        def acceptable(segments: tuple[tuple[int, int], ...], limit: int) -> bool:
            if not segments:
                return False
            if any(a < pb and pa < b for a, b in segments for pa, pb in planted):
                return False  # an instruction planted in the record is not evidence
            size = sum(b - a for a, b in segments)
            if size < min_chars or size > limit or is_heading(text[segments[0][0]:segments[0][1]]):
                return False
            # a rate question is answered by a text that itself states a rate (in one of its pieces)
            return not (required and tagger is not None
                        and not any(set(required) & states(text[a:b]) for a, b in segments))

        seen: set[tuple[tuple[int, int], ...]] = set()
        for si, sent in enumerate(sentences):
            cut, quote = without_label(sent.text)
            segs = ((sent.start + cut, sent.end),)
            if quote.endswith(":"):
                continue  # a lead-in ("… dilaksanakan oleh:") says nothing until its items: they are its units
            if len(quote) > max_chars or not acceptable(segs, max_chars) or segs in seen:
                continue
            seen.add(segs)
            out.append(AnswerCandidate(ci, si, "sentence", segs, (quote,), body=quote))
        if not item.spans:
            continue
        for kind, segs, lead, body, n, pos in _units(text, item.spans, item.location):
            if segs in seen or not acceptable(segs, unit_limit):
                continue
            seen.add(segs)
            out.append(AnswerCandidate(ci, sentence_of(segs[0][0]), kind, segs, tuple(text[a:b] for a, b in segs),
                                       lead, body, n, pos))
    return out


# a reference back to an ayat of the same Pasal: "sebagaimana dimaksud pada ayat (1)", "pada ayat (1) dan ayat (2)",
# "pada ayat (1) huruf a", "pada ayat (2) sampai dengan ayat (4)", "referred to in paragraph (1)". "dalam Pasal 5 ayat
# (1)" names another Pasal and is not one: the Pasal stands between the preposition and the ayat.
_AYAT_REF = r"(?:ayat|paragraphs?)\s*\(\s*\w{1,3}\s*\)(?:\s*(?:huruf|angka|letter|point)\s+\w{1,3}\b)?"
_AYAT_SEP = r"\s*(?:,\s*(?:dan|atau|and|or)?|dan|atau|and|or|sampai\s+dengan|s\.\s?d\.|hingga|to|through)\s*"
_BACK_REFERENCE = re.compile(rf"\b(?:pada|dalam|in)\s+({_AYAT_REF}(?:{_AYAT_SEP}(?:(?:ayat|paragraphs?)\s*)?"
                             rf"\(\s*\w{{1,3}}\s*\)(?:\s*(?:huruf|angka|letter|point)\s+\w{{1,3}}\b)?)*)", re.IGNORECASE)
_AYAT_NUMBER = re.compile(r"\(\s*(\w{1,3})\s*\)")
_RANGE = re.compile(r"^\s*(?:ayat|paragraphs?)?\s*(?:sampai\s+dengan|s\.\s?d\.|hingga|to|through)\s*"
                    r"(?:ayat|paragraphs?)?\s*$", re.IGNORECASE)


def ayat_referred(text: str) -> frozenset[str]:
    """The ayat of its own Pasal a text refers back to ("sebagaimana dimaksud pada ayat (1) dan ayat (3)" → {"1", "3"};
    "pada ayat (1) sampai dengan ayat (3)" → {"1", "2", "3"})."""
    out: set[str] = set()
    for m in _BACK_REFERENCE.finditer(text):
        chain = m.group(1)
        found = list(_AYAT_NUMBER.finditer(chain))
        for k, n in enumerate(found):
            out.add(n.group(1).lower())
            if k and _RANGE.match(chain[found[k - 1].end():n.start()]):
                lo, hi = found[k - 1].group(1), n.group(1)
                if lo.isdigit() and hi.isdigit() and int(lo) < int(hi) <= int(lo) + 20:
                    out.update(str(v) for v in range(int(lo) + 1, int(hi)))
    return frozenset(out)


def bound_ayat(text: str, spans: Sequence[Span], segments: Sequence[tuple[int, int]],
               max_chars: int) -> tuple[tuple[int, int], ...]:
    """The other ayat of a candidate's Pasal bound to the ayat it lies in by a reference back ("sebagaimana dimaksud
    pada ayat (1)"), in the Pasal's order:

    - the later ayat that refer back to it, or to one that does: "(1) Pemberi Kerja TKA dilarang …" is qualified by
      "(2) Jabatan … sebagaimana dimaksud pada ayat (1) ditetapkan oleh Menteri …", as a rule is by its exception
      ("Kewajiban sebagaimana dimaksud pada ayat (1) tidak berlaku bagi …");
    - the earlier ayat it refers back to, or that one does: "(2) Jabatan … sebagaimana dimaksud pada ayat (1) …" names
      its subject only by pointing at ayat (1).

    A claim quoting the ayat quotes them too, so what it depends on and what qualifies it are read with it. Each is
    the ayat's words without its label, an exact slice of `text`; one longer than `max_chars` is left out. None when
    the candidate does not lie within one ayat (a whole Pasal already holds them)."""
    if not segments:
        return ()
    root = _tree(text, spans)
    ayat = [k for k in root.children if k.kind == "ayat"]
    home = next((k for k in ayat if k.start <= segments[0][0] and segments[-1][1] <= k.end), None)
    if home is None:
        return ()

    def number(node: _Node) -> str | None:
        m = _AYAT_NUMBER.search(node.label.rsplit("ayat", 1)[-1])
        return m.group(1).lower() if m else None

    at = ayat.index(home)
    by_number = {n: k for k in ayat[:at] if (n := number(k))}
    chosen: list[_Node] = []
    # earlier: what it refers back to, and what that refers back to in turn
    pending = [home]
    while pending:
        node = pending.pop()
        for n in sorted(ayat_referred(text[node.content:node.end])):
            k = by_number.pop(n, None)
            if k is not None:
                chosen.append(k)
                pending.append(k)
    # later: what refers back to it, or to an ayat that does
    bound = {number(home)} - {None}
    for k in ayat[at + 1:]:
        if bound and ayat_referred(text[k.content:k.end]) & bound:
            chosen.append(k)
            bound |= {number(k)} - {None}
    out = []
    for k in sorted(chosen, key=lambda k: k.start):
        a, b = trim_span(text, k.content, k.end)
        if 0 < b - a <= max_chars:
            out.append((a, b))
    return tuple(out)


def siblings(c: AnswerCandidate, others: Sequence[AnswerCandidate]) -> list[AnswerCandidate]:
    """The other items of the enumeration an item candidate belongs to (same chunk, same lead-in), among `others`.
    None for a definitions entry: each entry of "yang dimaksud dengan:" answers its own term, and an entry read
    close to the asked one is another term's meaning, not a part of the answer."""
    label = _SPAN_LABEL.match(c.body)
    if c.kind != "item" or len(c.segments) < 2 or entry_of(c.body[label.end() if label else 0:]) is not None:
        return []
    return [o for o in others if o.kind == "item" and o.item == c.item and o.items == c.items
            and o.segments[0] == c.segments[0] and o.position != c.position]


def with_items(c: AnswerCandidate, more: Sequence[AnswerCandidate]) -> AnswerCandidate:
    """An item candidate quoted together with other items of its enumeration (`siblings`): its lead-in, the items in
    the enumeration's order, and its closing words, each an exact slice as before. The verbatim judge accepts it as it
    does one item: only whole items of the enumeration are left out between the pieces."""
    items = sorted({o.position: o for o in (c, *more)}.values(), key=lambda o: o.position)
    if len(items) == 1:
        return c
    # the lead-in, each item, then the closing words after the last item (c.segments[2:], when there are any)
    return dataclasses.replace(c, segments=(c.segments[0], *(o.segments[1] for o in items), *c.segments[2:]),
                               quotes=(c.quotes[0], *(o.quotes[1] for o in items), *c.quotes[2:]),
                               body="\n".join(o.body for o in items))
