"""One rule written for many subjects: laws made from one template say the same sentence with another name or figure
in its slots. Each regional-formation law: "Gubernur Sulawesi Tenggara melakukan pembinaan … terhadap kinerja Penjabat
Bupati Buton Tengah …" (UU 14/2014), "Gubernur Jawa Barat … Penjabat Bupati Pangandaran …" (UU 21/2012); each year's
budget law its own figure for the same line. Among a statute book's laws a question that does not say which subject it
means ("Siapa yang membina kinerja penjabat bupati?") is answered by whichever of them ranks first, and that answer is
wrong for every other subject: on the mined questions of issue 30, 12 of the statute book's 69 wrong receipts were such
answers (eval-runs/mined13; docs/capacity.md, "Twelfth session").

`template` tells two sentences of one template apart from two rules (words other than names and figures differ) and
from one sentence restated word for word (`restatements.restates`: the same rule, not another subject's).
`other_subjects` finds, among an attempt's candidates, the other documents that write the answer's sentence for
another subject, where the question names no word that sets the answer's own subject apart
(pipeline/decision.py refuses such a part and names them: `SEVERAL_SUBJECTS`).
"""
from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence

from .answer_reader.answers import without_label
from .citations import cited_location
from .references import extract_references
from .restatements import stated_citation
from .text import split_sentences
from .types import Candidate, Chunk, DocumentStatus, VerifiedClaim

_WORD = re.compile(r"\d+(?:[.,/]\d+)*|[^\W\d_]+(?:-[^\W\d_]+)*")  # a figure ("92.683.000,00") or a word
_HEADING = re.compile(r"^\s*(?:pasal|article)\s+[\w.]+\s*$", re.IGNORECASE)  # "Pasal 14" on its own
_PASAL_HEAD = re.compile(r"^\s*(?:pasal|article)\s+[\w.]+\s*\n", re.IGNORECASE)  # "Pasal II\n" before the sentence
_NUMBER_WORDS = frozenset(
    "nol satu dua tiga empat lima enam tujuh delapan sembilan sepuluh sebelas belas puluh ratus ribu juta miliar "
    "triliun seratus seribu se".split())
# words that name nothing: a title's "dan", "di", "tentang" set no subject apart
_FUNCTION_WORDS = frozenset(
    "dan atau di ke dari yang atas tentang dalam untuk pada serta oleh dengan nomor tahun the and of for in on by"
    .split())
MIN_SHARED_WORDS = 6      # a template's fixed words: fewer say too little to be one rule
MIN_SHARED_SHARE = 0.6    # of the longer sentence's words
MAX_REWORDED_SHARE = 0.2  # a template reworded: its other words (no name, no figure), of the words both share


def _figure(word: str) -> bool:
    return any(ch.isdigit() for ch in word) or word.casefold() in _NUMBER_WORDS


def _words_at(text: str) -> list[tuple[str, int, int]]:
    """The words of `text` (NFKC) with their offsets there, each run of figures one word ("Rp331.244.708.907 (tiga
    ratus … tujuh rupiah)" is "Rp", "331.244.708.907 tiga ratus … tujuh", "rupiah"): an amount is one slot however
    many words spell it out."""
    out: list[tuple[str, int, int]] = []
    figures = False
    for m in _WORD.finditer(text):
        w = m.group()
        if figures and _figure(w):
            out[-1] = (out[-1][0] + " " + w, out[-1][1], m.end())
        else:
            out.append((w, m.start(), m.end()))
        figures = _figure(w)
    return out


def _slot(word: str) -> bool:
    """A word a template fills in: a name (capitalised), a figure (a digit), a number written out."""
    return word[:1].isupper() or _figure(word.split()[0])


def _own_parts(text: str) -> tuple[tuple[str | None, str | None, str | None], ...]:
    """The parts of its own Pasal a text refers to ("sebagaimana dimaksud pada ayat (1) dan ayat (2)": ayat 1 and 2;
    `references.Reference.relative`), in order."""
    return tuple((r.ayat, r.huruf, r.angka) for r in extract_references(text) if r.relative)


def _bare(sentence: str) -> str:
    return without_label(_PASAL_HEAD.sub("", sentence.strip()))[1]


@dataclass(frozen=True)
class Template:
    """Two sentences of one template, as `template` aligned them: the first's own slot words (case-folded, a word each:
    what a question would name to mean it) and what fills each one's slots, as written, in order, each once ("Jawa
    Barat", "Pangandaran")."""

    own: frozenset[str]
    own_fills: tuple[str, ...]
    other_fills: tuple[str, ...]


def _as_written(runs: Sequence[str]) -> str:
    """A slot's words as written; an amount by its digits, not the words that spell it out."""
    return " ".join(w.split()[0] if any(ch.isdigit() for ch in w) else w for w in runs)


def _fill(text: str, run: Sequence[tuple[str, int, int]]) -> str:
    """What fills a slot, as `text` writes it from its first name or figure to its last ("Kabupaten Nunukan, Kabupaten
    Malinau, … dan Kota Bontang"); an amount by its digits, not the words that spell it out (`_as_written`)."""
    slots = [(w, start, end) for w, start, end in run if _slot(w)]
    if any(_figure(w.split()[0]) for w, _, _ in slots):
        return _as_written([w for w, _, _ in slots])
    return text[slots[0][1]:slots[-1][2]]


def _spelled_alike(a: Sequence[str], b: Sequence[str]) -> bool:
    """Two runs of words that are one spelling split or joined otherwise ("Badan U saha" for "Badan Usaha",
    "Undang- Undang" for "Undang-Undang"): a scan's spacing, not another word."""
    return "".join(a).replace("-", "") == "".join(b).replace("-", "")


def _joined(ops: Sequence[tuple[str, int, int, int, int]], wa: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    """An alignment's runs (`difflib` opcodes over the words `wa`), two differing runs joined where only names or
    figures lie between them: "Sulawesi Tenggara" against "Nusa Tenggara Timur" is one name filled otherwise, not
    "Sulawesi" for "Nusa" and "Timur" added."""
    out: list[tuple[str, int, int, int, int]] = []
    for op in ops:
        if (op[0] != "equal" and len(out) >= 2 and out[-1][0] == "equal" and out[-2][0] != "equal"
                and all(map(_slot, wa[out[-1][1]:out[-1][2]]))):
            out.pop()  # the names between
            before = out.pop()
            op = ("replace", before[1], op[2], before[3], op[4])
        out.append(op)
    return out


def template(sentence: str, other: str) -> Template | None:
    """Whether `other` writes `sentence`'s template for another subject: the same words but for names and figures
    (capitalised words, digits, numbers written out), each filling a slot after a word both share ("Gubernur …",
    "sebesar Rp…"), with at least `MIN_SHARED_WORDS` words and `MIN_SHARED_SHARE` of the longer one shared, and both
    referring to the same parts of their own Pasal, if any (`_own_parts`: "Personel sebagaimana dimaksud pada ayat (1)
    dan ayat (2) meliputi … Kabupaten Tambrauw" and "… Kabupaten Manokwari Selatan" are the template's same place in two
    regional-formation laws; one pointing at ayat (1) and the other at ayat (3) is another rule). Returns the two
    aligned (`Template`), else None; None too for the same words throughout (a restatement, not another subject;
    a scan's split word, `_spelled_alike`, is the same word). A sentence that opens differently ("Penerimaan
    Pembangunan …" for "Pengeluaran Pembangunan …") is another rule, and so is one with a differing word that is no
    name or figure ("menetapkan" for "mengesahkan"), unless the two also fill a slot with another name or figure on
    both sides and such other words are few (`MAX_REWORDED_SHARE` of the words both share): one law's template
    reworded in the next ("Gubernur Sulawesi Tenggara mengoordinasikan dan memfasilitasi …", "Gubernur Nusa Tenggara
    Timur mengkoordinasikan dan memfasilitasi …"; each regency's list of its assets)."""
    a, b = unicodedata.normalize("NFKC", _bare(sentence)), unicodedata.normalize("NFKC", _bare(other))
    at_a, at_b = _words_at(a), _words_at(b)
    wa, wb = [w for w, _, _ in at_a], [w for w, _, _ in at_b]
    la, lb = [w.casefold() for w in wa], [w.casefold() for w in wb]
    longer = max(len(la), len(lb))
    if la == lb or sum((Counter(la) & Counter(lb)).values()) < max(MIN_SHARED_WORDS, MIN_SHARED_SHARE * longer):
        return None  # the same words throughout, or too few in common for any alignment to share enough
    if _own_parts(a) != _own_parts(b):
        return None  # each points at another part of its own Pasal: another rule, whatever its words
    ops = difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes()
    shared = sum(i2 - i1 for op, i1, i2, _, _ in ops if op == "equal")
    reworded, own, own_fills, other_fills = 0, set(), [], []
    for op, i1, i2, j1, j2 in _joined(ops, wa):
        if op == "equal" or _spelled_alike(la[i1:i2], lb[j1:j2]):
            continue
        if i1 == 0 or j1 == 0:
            return None
        mine, theirs = [w for w in wa[i1:i2] if _slot(w)], [w for w in wb[j1:j2] if _slot(w)]
        reworded += max(i2 - i1 - len(mine), j2 - j1 - len(theirs))
        own.update(w.casefold() for run in mine for w in run.split())
        own_fills += [_fill(a, at_a[i1:i2])] if mine else []
        other_fills += [_fill(b, at_b[j1:j2])] if theirs else []
    if not own_fills and not other_fills:
        return None  # nothing but a scan's spacing differs: a restatement
    renamed = {f.casefold() for f in own_fills} != {f.casefold() for f in other_fills}
    if reworded and (not (own_fills and other_fills and renamed) or reworded > MAX_REWORDED_SHARE * shared):
        return None  # other words without another name on both sides, or too many of them: another rule
    if shared < MIN_SHARED_WORDS or shared < MIN_SHARED_SHARE * longer:
        return None
    # a word the other sentence writes too sets nothing apart ("Kabupaten" where one law's run adds it)
    own -= {w for run in lb for w in run.split()}
    return Template(frozenset(own), tuple(dict.fromkeys(own_fills)), tuple(dict.fromkeys(other_fills)))


def naming_words(text: str) -> frozenset[str]:
    """The words of `text` that can name a subject, case-folded (function words and one-letter words left out)."""
    words = (x.casefold() for x in _WORD.findall(unicodedata.normalize("NFKC", text)))
    return frozenset(w for w in words if w not in _FUNCTION_WORDS and len(w) > 1)


@dataclass(frozen=True)
class OtherSubject:
    """A document that writes the answer's sentence for another subject: its candidate, the sentence, and the words
    that fill its slots there (as written: "Jawa Barat", "Pangandaran")."""

    candidate: Candidate
    where: tuple[int, int]  # the sentence's offsets in the candidate's text
    fills: tuple[str, ...]
    lead_fills: tuple[str, ...] = ()  # what fills the answer's own sentence where this one differs from it


def related(a: str, b: str, statuses: Mapping[str, DocumentStatus]) -> bool:
    """Whether one of two documents amends or revokes the other (an edge of the status graph, as far as `statuses`
    hold either): a later version restating a Pasal with a new figure is the same subject's rule (pipeline/status.py
    decides which stands), not another subject's."""
    return any(e.source_doc in (a, b) for d in (a, b) if d in statuses for e in statuses[d].edges)


def refers(a: str, b: str, statuses: Mapping[str, DocumentStatus]) -> bool:
    """Whether one of two documents refers to the other (its references resolved to it: `DocumentStatus.cites`), as far
    as `statuses` hold either: a regulation implementing a law, or a law enacting another, that repeats its words
    states that law's rule (ambiguity.restating_regulations). Not a sign of one subject: the plant-variety law refers
    to the patent law and writes its compulsory-licence clause for its own rights (`other_subjects` does not ask it)."""
    return any(other in statuses[d].cites for d, other in ((a, b), (b, a)) if d in statuses)


def sentence_runs(text: str, size: int) -> Iterator[tuple[int, int]]:
    """Each run of `size` consecutive sentences of `text`, as offsets, then each sentence: a quote of a list ("Aset dan
    dokumen … meliputi: a. …; b. …") is read against as many sentences of another document, and a quote with a scan's
    stray line ("… kepada Menteri Dalam Negeri. DISTRIBUSI II") still against its one sentence."""
    sentences = [s for s in split_sentences(text) if not _HEADING.match(s.text)]  # "Pasal 14" alone is no sentence
    for n in dict.fromkeys((size, 1)):
        for i in range(len(sentences) - n + 1):
            yield sentences[i].start, sentences[i + n - 1].end


def other_subjects(quote: str, doc_id: str, title: str, question: str, candidates: Iterable[Candidate],
                   statuses: Mapping[str, DocumentStatus] | None = None) -> list[OtherSubject]:
    """The other documents among `candidates` (one each, in the order given) with a sentence (for a quote of several,
    as many consecutive sentences: `sentence_runs`) that writes `quote`'s template for another subject (`template`),
    where `question` names no word that sets the quote's own subject apart: none of the quote's slot words, none of its
    document's title words (`title`) that the other's title lacks. A document related to the quote's by the status
    graph (`related`) is another version, not another subject."""
    asked = naming_words(question)
    own_title = naming_words(title)
    size = max(1, len(split_sentences(quote)))
    out: dict[str, OtherSubject] = {}
    for c in candidates:
        other = c.chunk.doc_id
        if other == doc_id or other in out or related(doc_id, other, statuses or {}):
            continue
        for start, end in sentence_runs(c.chunk.text, size):
            t = template(quote, c.chunk.text[start:end])
            if t is None:
                continue
            apart = (t.own | (own_title - naming_words(c.chunk.title))) - _FUNCTION_WORDS
            if not apart & asked:
                out[other] = OtherSubject(c, (start, end), t.other_fills, t.own_fills)
                break
    return list(out.values())


def subjects_of(claim: VerifiedClaim, chunks: Mapping[str, Chunk], candidates: Sequence[Candidate], question: str,
                statuses: Mapping[str, DocumentStatus]) -> list[OtherSubject]:
    """The other documents among `candidates` that write the sentence `claim` states (`stated_citation`) of other
    subjects, the question naming nothing that sets the claim's own apart (`subjects.other_subjects`)."""
    cite = stated_citation(claim) if claim.citations else None
    own = chunks.get(cite.chunk_id) if cite else None
    return [] if own is None else other_subjects(cite.quote, own.doc_id, own.title, question, candidates, statuses)


MAX_SUBJECTS_NAMED = 5  # a refusal names this many documents that write the sentence of other subjects, then counts


def subjects_listing(lead: VerifiedClaim, others: Sequence[OtherSubject], chunks: Mapping[str, Chunk],
                     lang: str) -> str:
    """The lead claim's document and those that write its sentence of other subjects, each with its provision and what
    fills the sentence's slots there: "UU 14/2014 Pasal 7 ayat (6) (Sulawesi Tenggara, Buton Tengah); …"."""
    cite = stated_citation(lead)
    own = chunks[cite.chunk_id]

    def one(chunk: Chunk, location: str, fills: Sequence[str]) -> str:
        name = chunk.path.split(" › ")[0] if chunk.path else chunk.title
        return f"{name} {location}" + (f" ({', '.join(fills)})" if fills else "")
    listed = [one(own, cite.location or own.location, others[0].lead_fills),
              *(one(o.candidate.chunk, cited_location(o.candidate.chunk, o.where), o.fills)
                for o in others[:MAX_SUBJECTS_NAMED])]
    more = len(others) - MAX_SUBJECTS_NAMED
    if more > 0:
        listed.append(f"dan {more} lainnya" if lang == "id" else f"and {more} more")
    return "; ".join(listed)
