"""Legal status, read from the documents themselves: which provision revokes or amends which, and what is in force
on a date.

A regulation says what it ends: "Pada saat Peraturan Menteri ini mulai berlaku, Peraturan Menteri … Nomor 3 Tahun
2022 … dicabut dan dinyatakan tidak berlaku" (the whole document), "Pasal 5 Peraturan … dinyatakan tidak berlaku" (one
Pasal), and an amending regulation ("Beberapa ketentuan dalam Peraturan … diubah sebagai berikut: 1. Ketentuan Pasal
14 diubah …", "Pasal 7 dihapus") replaces Pasal by Pasal. Each such statement becomes an edge of the status graph
with its receipt: the provision that says it and the exact words. An edge takes effect when the document that says it
does (its `effective` date); where that date is unknown, the edge's date is unknown, and what it ends is *unknown*
from the day that document was issued, never guessed. A statement whose target is not in the collection is kept
(`saksi corpus status` lists it) but ends nothing here. A revocation that names only part of a document ("ketentuan
mengenai … dalam Peraturan …", "sepanjang …") makes that document's standing unknown from its date, since the corpus
cannot say which provisions are meant.

Extraction reads the chunk store's cross-references (pipeline/references.py), so a target ingested after the
document that ends it is found on the next ingest's `finalize`, which rebuilds the graph.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from .citations import cite_path
from .text import split_sentences
from .definitions import quoted_entries
from .restatements import restatements_kept
from .config import ConfidenceSettings
from .gates import band_for
from .index.store import ReferenceRow
from .types import (AsOf, CitationCheck, CitedDocument, Chunk, Conflict, Document, DocumentStatus, EdgeKind, Standing,
                    StatusEdge, VerifiedClaim, is_provision)

# bump when a code change alters the graph read from the same chunks and references: the next ingest's finalize of
# any collection re-reads it (nothing is re-chunked or re-embedded). 2: an omnibus law named as another's amendment
# history is not revoked with it; no revocation read from a regulation's considerations or elucidation, nor from a
# drafting guide's paragraph before the sentence that states the formula. 3: an instruction naming the ayat, huruf or
# angka it changes after the Pasal ("Ketentuan Pasal 6 ayat (1) huruf a diubah"), or one that adds to it ("ditambah"),
# amends the Pasal; one that deletes only part of it leaves the Pasal's standing unknown. 4: that sentence is the one
# text.split_sentences cuts (a numbered guideline, "… yang dicabut. 146. Untuk mencabut …", starts a sentence). 5: an
# amendment item (an amending law's instruction and the Pasal it restates, `item_of`) ends when a later law amends or
# revokes that Pasal (`_restatements_followed`);
# instructions over a range ("ayat (1) sampai dengan ayat (3)") or naming the elucidation beside the text; an
# amending law's Pasal I that names the law it amends without "ketentuan dalam"; an omnibus law's list of amendments
# whose law the scan garbled, named by the history ("… terakhir dengan UU 36/2008 tentang Perubahan Keempat atas UU
# 7/1983"); an elucidation changed alone ("Penjelasan Pasal 5 diubah") amends no Pasal. 6: an instruction's item is
# read from its receipt as `item_of` reads a passage's location, so a chunk of several items ("Pasal 27 angka 8–11"),
# a part of one ("angka 21 (bagian 1/2)") or an item running into an ayat ("angka 1–ayat (3b)") is the item its
# passages are. 7: an omnibus law's list opening in the forms a scan garbled (`_AMENDS_LIST`: "diubah" lost after the
# gazette numbers or glued to them, "diubah, sehingga berbunyi sebagai berikut", "diubah:", "sebagai .berikut", a name
# over 600 characters). 8: the same, less an instruction's own "diubah sehingga berbunyi sebagai berikut", which 7 read
# as a list of no law (it cut UU 11/2020's investment list short)
GRAPH_VERSION = 8

# the formula that ends an instrument or a Pasal (Indonesian drafting practice, and its English translations)
_REVOKES = re.compile(r"\bdicabut\s+dan\s+dinyatakan\s+tidak\s+berlaku\b|\bdinyatakan\s+tidak\s+berlaku\b"
                      r"|\b(?:is|are)\s+(?:hereby\s+)?(?:revoked|repealed)\b", re.IGNORECASE)
# part of a document only: "ketentuan (yang mengatur) mengenai … dalam …", "sepanjang mengatur …"
_PART = re.compile(r"\bketentuan\s+(?:yang\s+mengatur\s+)?(?:mengenai|tentang)\b|\bsepanjang\b"
                   r"|\bprovisions?\s+(?:on|concerning)\b", re.IGNORECASE)
# an amending regulation's opening: "Beberapa ketentuan dalam <document> diubah", "Ketentuan dalam <document> diubah"
_AMENDS_DOCUMENT = re.compile(r"\bketentuan\s+dalam\s+(?P<body>.{0,600}?)\bdiubah\b", re.IGNORECASE | re.DOTALL)
# in any document, an opening of a list of amendments, as an omnibus law has once per law it amends (UU 11/2020
# Pasal 81: "Beberapa ketentuan dalam Undang-Undang Nomor 13 Tahun 2003 … diubah sebagai berikut:"), the law named
# first; "… sebagaimana telah diubah dengan <another law>, diubah sebagai berikut" names the amended law's amendments
# after it. A scan may glue the verb to the number before it ("Nomor 42791diubah").
# Where the scan lost, moved or glued a word, as UU 7/2021's and UU 11/2020's lists show: "… Nomor 49991 diubah sebagai
# .berikut:" (KUP), "… Nomor 47551 diubah, sehingga berbunyi sebagai berikut:" (excise), "… Nomor 5069), sebagai
# berikut:" (VAT: "diubah" lost; read only right after the closing bracket of the law's gazette numbers), "… Nomor
# 3881) diubah: 1 …" (telecommunications), "… Nomor 4252lrdiubah sebagai berikut:" (broadcasting); a history naming a
# long title (KUP's, a Perppu's) runs the name to 612 characters. An instruction's own "diubah sehingga berbunyi
# sebagai berikut" (no comma) opens no list
_AMENDS_LIST = re.compile(r"\bketentuan\s+dalam\s+(?P<body>.{0,700}?)"
                          r"(?:diubah(?:,\s+sehingga\s+berbunyi)?\s+(?:menjadi\s+)?sebagai\s+\.?berikut\b|diubah\s*:"
                          r"|(?<=\),\s)sebagai\s+\.?berikut\b)", re.IGNORECASE | re.DOTALL)
_AMENDING_TITLE = re.compile(r"\bperubahan\b|\bamendment\b|\bamending\b", re.IGNORECASE)
# one instruction of it: "Ketentuan ayat (1) Pasal 14 diubah", "Ketentuan Pasal 14 ayat (1) dan ayat (3) diubah",
# "Ketentuan Pasal 23 ditambah 1 (satu) ayat … sehingga Pasal 23 berbunyi", "Pasal 7 dihapus"; the parts of the Pasal
# an instruction names (`lead`, before it; `part`, after it) make a deletion partial ("ayat (3) Pasal 14 dihapus")
_UNIT = r"(?:ayat|huruf|angka)\s+\(?[0-9a-z]{1,3}\)?"
_INSTRUCTION = re.compile(rf"\b(?:Ketentuan\s+(?P<lead>(?:huruf|angka|ayat)\s+[^.;:]{{0,120}}?\s)?|(?<!Penjelasan ))"
                          rf"Pasal\s+"
                          rf"(?P<pasal>\d+[A-Z]?)(?P<part>(?:\s+{_UNIT}(?:\s*(?:,\s*(?:dan\s+)?|dan\s+|serta\s+"
                          rf"|sampai\s+dengan\s+)(?:Penjelasan\s+)?(?:{_UNIT}|\(?[0-9a-z]{{1,3}}\)?))*)+)?\s+"
                          rf"(?P<verb>diubah|dihapus|ditambah)\b")
_ITEM = re.compile(r"\b(?:huruf|angka)\s+\w+$")  # a list item's span label ("Pasal 33 huruf b"), not an ayat
# an amending law's first article, which names the law it amends ("Pasal I Mengubah beberapa ketentuan Undang-undang
# Nomor 7 Tahun 1983 …", "Pasal I Undang-undang Nomor 7 Tahun 1983 … diubah sebagai berikut")
_FIRST_ARTICLE = re.compile(r"^(?:Pasal|Article)\s+I$")
# what names the law an amendment history's last amendment amends: "… terakhir dengan Undang-Undang Nomor 36 Tahun 2008
# tentang Perubahan Keempat atas <the law>"
_AMENDED_BASE = re.compile(r"\bPerubahan\s+(?:\w+\s+)?atas\s*$", re.IGNORECASE)
# what names an instrument's amendment history, just before the amending instrument: "Undang-Undang Nomor 28 Tahun 2009
# … sebagaimana telah beberapa kali diubah, terakhir dengan Undang-Undang Nomor 11 Tahun 2020"
_HISTORY = re.compile(r"\bsebagaimana\s+(?:telah\s+)?(?:beberapa\s+kali\s+|terakhir\s+)?diubah\b[^.;]{0,60}?"
                      r"\b(?:dengan|oleh|melalui)\s*$|\bas\s+(?:last\s+)?amended\b[^.;]{0,40}?\bby\s*$", re.IGNORECASE)


_IN_PASAL = re.compile(r"(?:Pasal|Article)\b")
# a Pasal's heading that a scan ran into a paragraph: "… KETENTUAN PENUTUP Pasal 20 Dengan berlakunya …"
_RUN_IN_HEADING = re.compile(r"(?:^|(?<=\n)|(?<=[A-Z.;] ))(?:Pasal|Article)\s+\d+[A-Z]?\.?\s+(?=[A-Z(])")
# parts of a regulation that state no rule: its considerations and its elucidation
_NOT_OPERATIVE = ("pembukaan", "Menimbang", "Mengingat", "Penjelasan", "Explanation")


def _span_start(chunk: Chunk, at: int) -> int:
    """Where the provision holding offset `at` begins: its ayat (which holds its list items: "a. …; dan b. …,
    dicabut"), else the chunk's text after its "Pasal N" heading line; in a chunk the chunker placed in no Pasal (a
    scan's paragraphs, what follows the signature), the sentence holding it: a drafting guide's or an elucidation's
    paragraph names many laws before it describes the formula ("… digunakan frasa dicabut dan dinyatakan tidak
    berlaku"), and none of them is revoked there; or the last Pasal heading run into the paragraph before it, where
    the scan has one ("KETENTUAN PENUTUP Pasal 20 Dengan berlakunya …")."""
    holding = [s for s in chunk.spans if s.start <= at < s.end and not _ITEM.search(s.label)]
    if holding:
        return min(s.start for s in holding)
    first = chunk.text.find("\n")
    if chunk.text.startswith(("Pasal", "Article")):
        return first + 1 if 0 <= first < at else 0
    if _IN_PASAL.match(chunk.location):  # a Pasal's later part: its list goes on from the part before
        return 0
    headings = [m.start() for m in _RUN_IN_HEADING.finditer(chunk.text, 0, at)]
    if headings:
        return headings[-1]
    return next((x.start for x in reversed(split_sentences(chunk.text)) if x.start <= at), 0)


def _date(doc: Document | None) -> tuple[str | None, str | None]:
    """(when a statement of `doc` takes effect, when `doc` was issued)."""
    if doc is None:
        return None, None
    return doc.effective, doc.made


def edges_of(chunks: Sequence[Chunk], references: Sequence[ReferenceRow],
             documents: Mapping[str, Document], history: dict[StatusEdge, str | None] | None = None) -> list[StatusEdge]:
    """The status edges one document's chunks state. `references`: the store's rows for those chunks (their
    extracted reference, with the resolution's `target_doc`). `history`, when given, receives each revocation of an
    instrument named only as the amendment history of the one before it, with that one's document (`graph` decides
    whether it ends: `_amending_only`)."""
    if not chunks:
        return []
    by_chunk: dict[str, list[ReferenceRow]] = {}
    for r in references:
        if r.reference["scope"] == "external":
            by_chunk.setdefault(r.chunk_id, []).append(r)
    doc = documents.get(chunks[0].doc_id)
    date, issued = _date(doc)
    edges: list[StatusEdge] = []
    amended: ReferenceRow | None = None  # the document an amending regulation ("Perubahan atas …") amends
    amending = doc is not None and _AMENDING_TITLE.search(doc.title or "") is not None
    # the instruments a Pasal too long for one chunk names before its formula: "Pada saat … ini mulai berlaku, maka:
    # 1. … 15. Undang-undang Nomor 28 Tahun 2000 …, dinyatakan tidak berlaku lagi" (UU 13/2003 Pasal 192, in two)
    earlier: list[ReferenceRow] = []
    unit = None
    histories: dict[tuple[str, int], str | None] = {}
    for chunk in chunks:
        refs = sorted(by_chunk.get(chunk.chunk_id, []), key=lambda r: r.reference["start"])
        histories.update(_histories(chunk.text, refs))
        if chunk.unit != unit:
            earlier, unit = [], chunk.unit
        # revocations (none in a regulation's considerations or elucidation: they describe, they do not revoke)
        last = 0
        for m in _REVOKES.finditer("" if chunk.location.startswith(_NOT_OPERATIVE) else chunk.text):
            lo = max(last, _span_start(chunk, m.start()))
            here = [r for r in refs if lo <= r.reference["start"] and r.reference["end"] <= m.start()]
            # the provision began in an earlier chunk of its Pasal: its list goes on from there
            carried = earlier if lo == 0 and not chunk.text.startswith(("Pasal", "Article")) else []
            named = carried + here
            last = m.end()
            earlier = []
            if not named:
                continue  # "pemberian pembebasan … ini dicabut dan dinyatakan tidak berlaku": no instrument named
            quote = chunk.text[lo:m.end()].strip()
            part = _PART.search(chunk.text, lo, here[0].reference["start"] if here else m.start()) is not None
            for r in named:
                ref = r.reference
                kind: EdgeKind = "revokes" if ref["pasal"] or not part else "revokes_part"
                edges.append(_edge(kind, chunk, quote, r, ref["pasal"], date, issued))
                if history is not None and (r.chunk_id, r.ordinal) in histories:
                    history[edges[-1]] = histories[(r.chunk_id, r.ordinal)]
        # what the provision running off this chunk's end names after the last formula goes on in the next chunk
        tail = max(last, _span_start(chunk, len(chunk.text) - 1)) if chunk.text else last
        earlier += [r for r in refs if r.reference["start"] >= tail]
        found, amended = _amendments(chunk, refs, amending, amended, date, issued)
        edges += found
    return list(dict.fromkeys(edges))


def _amendments(chunk: Chunk, refs: Sequence[ReferenceRow], amending: bool, amended: ReferenceRow | None,
                date: str | None, issued: str | None) -> tuple[list[StatusEdge], ReferenceRow | None]:
    """The amendments a chunk states, and the document the next chunk's instructions amend (`amended`: the one the
    chunks before named; an amending regulation, `amending`, amends one document)."""
    edges: list[StatusEdge] = []
    # amendments: the document named in "… ketentuan dalam <document> … diubah", then each instruction after it,
    # until the next such opening names another document (an omnibus law amends many, one after another)
    openings = []
    for m in (_AMENDS_DOCUMENT if amending else _AMENDS_LIST).finditer(chunk.text):
        inside = [r for r in refs if m.start("body") <= r.reference["start"] < m.end("body")
                  and not r.reference["pasal"]]
        if amending:  # an amending regulation amends one document, named in its first opening
            if inside and amended is None and not openings:
                openings.append((m.end(), inside[0]))
            continue
        # in an omnibus law the amended law opens the list; one whose name the scan garbled ("dalam Undang Nomor
        # 23 Tahun 2014 … sebagaimana telah diubah dengan Undang-Undang Nomor 9 Tahun 2015") is no law of this
        # collection, and still ends the previous law's list
        first = inside[0] if inside and inside[0].reference["start"] - m.start("body") <= 3 else None
        if first is None or first.target_doc is None:  # its history may name it: "… terakhir dengan UU 36/2008
            # tentang Perubahan Keempat atas <it>"
            first = next((r for r in inside if r.target_doc and _AMENDED_BASE.search(
                chunk.text, max(0, r.reference["start"] - 40), r.reference["start"])), first)
        openings.append((m.end(), first))
    instructions = [(m.start(), m) for m in _INSTRUCTION.finditer(chunk.text)]
    if amending and amended is None and not openings and _FIRST_ARTICLE.match(chunk.location):
        # "Pasal I Mengubah beberapa ketentuan Undang-undang Nomor 7 Tahun 1983 …": the first law it names
        first_change = instructions[0][0] if instructions else len(chunk.text)
        named = [r for r in refs if r.reference["start"] < first_change and not r.reference["pasal"]]
        if named:
            openings.append((named[0].reference["end"], named[0]))
    for _, item in sorted(openings + instructions, key=lambda x: x[0]):
        if not isinstance(item, re.Match):
            amended = item
        elif amended is not None:
            quote = chunk.text[item.start():item.end()]
            # an ayat, huruf or angka deleted leaves the rest of the Pasal in force: what stands is unknown
            partial = item["verb"] == "dihapus" and (item["lead"] or item["part"])
            edges.append(_edge("revokes_part" if partial else "amends", chunk, quote, amended, item["pasal"], date,
                               issued))
    return edges, amended


def _histories(text: str, refs: Sequence[ReferenceRow]) -> dict[tuple[str, int], str | None]:
    """The references of a chunk (in text order) that name an instrument only as the amendment history of the one named
    just before it ("UU 28/2009 … sebagaimana telah beberapa kali diubah, terakhir dengan UU 11/2020"), each with
    that one's document."""
    return {(r.chunk_id, r.ordinal): refs[k - 1].target_doc for k, r in enumerate(refs)
            if k and not r.reference["pasal"]
            and _HISTORY.search(text, max(refs[k - 1].reference["end"], r.reference["start"] - 160),
                                r.reference["start"])}


def _amending_only(edges: Sequence[StatusEdge], history: Mapping[StatusEdge, str | None]) -> list[StatusEdge]:
    """The graph without the revocations that end an instrument only named as another's amendment history, where that
    instrument amends other documents too: revoking "UU 28/2009 … as last amended by UU 11/2020" ends UU 11/2020
    (Cipta Kerja, an omnibus law amending some seventy) only as it amended UU 28/2009, not as a whole (statute book:
    UU 1/2022 Pasal 189 (1) read as ending all of UU 11/2020 from 2025). One that amends nothing else (a "Perubahan
    atas" law of that instrument alone, or one whose amendments the collection does not read) ends with it."""
    amends: dict[str, set[str]] = {}
    for e in edges:
        if e.kind == "amends" and e.target_doc:
            amends.setdefault(e.source_doc, set()).add(e.target_doc)
    return [e for e in edges
            if e not in history or not (amends.get(e.target_doc or "", set()) - {history[e]})]


def _edge(kind: EdgeKind, chunk: Chunk, quote: str, ref_row: ReferenceRow, pasal: str | None, date: str | None,
          issued: str | None) -> StatusEdge:
    ref = ref_row.reference
    name = ref_row.target_label if ref_row.target_doc and not ref["pasal"] else None
    label = name or _document_label(ref)
    if pasal:
        label = f"{label} › Pasal {pasal}"
    at = chunk.text.find(quote)
    where = next((s.label for s in sorted(chunk.spans, key=lambda s: s.end - s.start)
                  if s.start <= at < s.end and not _ITEM.search(s.label)), None)
    return StatusEdge(kind, chunk.doc_id, chunk.chunk_id, cite_path(chunk, where), quote, label,
                      ref_row.target_doc, pasal, date, issued)


def _document_label(ref: Mapping) -> str:
    from .references import Reference  # the document-name grammar
    return Reference(**ref).document_label or ref["raw"]


def graph(documents: Iterable[Document], chunks_of, references_of) -> list[StatusEdge]:
    """Every edge the collection's documents state (`chunks_of(doc_id)`, `references_of(doc_id)`: the store's), and
    those that follow from them for an amending law's restated Pasal (`_restatements_followed`)."""
    docs = {d.doc_id: d for d in documents}
    out: list[StatusEdge] = []
    history: dict[StatusEdge, str | None] = {}
    for doc_id in docs:
        out.extend(edges_of(chunks_of(doc_id), references_of(doc_id), docs, history))
    return _restatements_followed(_amending_only(out, history))


_ARTICLE = re.compile(r"^(?:Pasal|Article)\s+\w+$")


def _item_of_path(path: str) -> str | None:
    """The amendment item an instruction's receipt is in, read as `item_of` reads the location of each passage of it:
    "UU 36/2008 › Pasal I › angka 13" -> "I angka 13"; a chunk of several items, "… › Pasal 27 › angka 8–11" ->
    "27 angka 8" (its passages' item: a later amendment of any Pasal they restate ends them all); an amending law's
    only change, "… › Pasal I" -> "I"; None for an article of the law's own numbering without an item (that Pasal is
    the law's own, not an amendment's text)."""
    steps = path.split(" › ")
    for k, seg in enumerate(steps):
        if _ARTICLE.match(seg):
            return item_of(" ".join(steps[k:k + 2]))
    return None


def _restatements_followed(edges: Sequence[StatusEdge]) -> list[StatusEdge]:
    """The graph with an edge for each amendment item whose Pasal a later law amends or revokes again: UU 36/2008 Pasal
    I angka 13 restates UU 7/1983 Pasal 17 (the income tax rates); UU 7/2021 amends that Pasal 17 again, so the 2008
    text is history from then, not a rule in force beside the newer one. The edge is the later law's own (its receipt
    and dates), aimed at the item that restated the Pasal ("I angka 13", as `item_of` reads the location of each
    passage of it); a later revocation of the whole amended law ends it too."""
    def when(e: StatusEdge) -> str | None:
        return e.date or e.issued
    into: dict[str, list[StatusEdge]] = {}
    for e in edges:
        if e.target_doc:
            into.setdefault(e.target_doc, []).append(e)
    out = list(edges)
    for a in edges:
        item = _item_of_path(a.source_path)
        if a.kind != "amends" or not a.target_doc or not a.target_pasal or item is None or not when(a):
            continue
        for e in into[a.target_doc]:
            if e.source_doc != a.source_doc and (when(e) or "") > when(a) and (
                    e.target_pasal == a.target_pasal or (e.target_pasal is None and e.kind == "revokes")):
                out.append(replace(e, target_doc=a.source_doc, target_pasal=item,
                                   target_label=f"{a.source_path} (Pasal {a.target_pasal})"))
    return list(dict.fromkeys(out))


def _iso(d: str | dt.date) -> str:
    return d.isoformat() if isinstance(d, dt.date) else dt.date.fromisoformat(d).isoformat()


def cited_documents(claims: Sequence[VerifiedClaim], statuses: Mapping[str, DocumentStatus],
                    on: str | None) -> tuple[CitedDocument, ...]:
    """The documents the supported claims cite, in citation order, each with its standing on `on` (None: undated)."""
    out: dict[str, CitedDocument] = {}
    for c in claims:
        if c.status != "supported":
            continue
        for x in c.citations:
            d = statuses.get(x.doc_id or "")
            if d is None or d.doc_id in out:
                continue
            out[d.doc_id] = CitedDocument(d.doc_id, d.cite_as, d.title, d.doc_type, d.number, d.year, d.published,
                                          d.effective, standing(d, on) if on else None)
    return tuple(out.values())


def standing(doc: DocumentStatus, on: str | dt.date, pasal: str | None = None, item: str | None = None) -> Standing:
    """A document (or its Pasal `pasal`, or the amendment item `item` of a passage: `item_of`) on the date `on`: not yet in force before its effective date (its published
    date where that is unknown), ended from the date of the earliest edge that ends it, unknown where an edge that may
    end it has no date (from its source's issue date) or names only part of the document; else in force."""
    day = _iso(on)
    since = doc.since
    if since and day < since:
        return Standing("not_yet", day, since=since, until=since)
    ends = [e for e in doc.edges if e.target_pasal is None or (e.target_pasal and e.target_pasal in (pasal, item))]
    dated = sorted((e for e in ends if e.kind != "revokes_part" and e.date and e.date <= day), key=lambda e: e.date)
    if dated:
        return Standing("ended", day, since=since, until=dated[0].date, edge=dated[0])
    doubtful = [e for e in ends if (e.date is None and (e.issued is None or e.issued <= day))
                or (e.kind == "revokes_part" and (e.date or e.issued or "") <= day)]
    if doubtful:
        return Standing("unknown", day, since=since, edge=doubtful[0])
    return Standing("in_force", day, since=since)


_PASAL = re.compile(r"^(?:Pasal|Article)\s+(\d+[A-Z]?)\b")
_ROMAN = re.compile(r"^[IVXLC]+$")
_ITEM_LOCATION = re.compile(r"^(?:Pasal|Article)\s+(\w+)(?:\s+angka\s+(\d+))?\b")


def pasal_of(location: str) -> str | None:
    """The Pasal a chunk's location is ("Pasal 14 ayat (1)" -> "14"); None for anything else, including an amending
    regulation's "Pasal I angka 1 › Pasal 14 …" (its text is the amendment: `item_of`)."""
    m = _PASAL.match(location or "")
    return m[1] if m else None


def item_of(location: str) -> str | None:
    """The amendment item a chunk is part of ("Pasal I angka 13 › Pasal 17 ayat (1)" and "Pasal I angka 10 huruf a" ->
    "I angka 13", "I angka 10"; an omnibus law's "Pasal 81 angka 52" -> "81 angka 52"; an amending law's "Pasal I" ->
    "I"): its instruction and the Pasal it restates, which a later amendment of that Pasal ends
    (`_restatements_followed`); None for a location of no item."""
    m = _ITEM_LOCATION.match(location or "")
    if m is None or not (m[2] or _ROMAN.match(m[1])):
        return None
    return f"{m[1]} angka {m[2]}" if m[2] else m[1]


# --- answers as of a date ----------------------------------------------------------------------------------------

def dated(claim: VerifiedClaim, cite: CitationCheck, chunk: Chunk | None, statuses: Mapping[str, DocumentStatus],
          on: str, confidence: ConfidenceSettings | None) -> VerifiedClaim:
    """A supported claim with the standing, on `on`, of the provision it states (`cite`, its stated citation: that
    document, and the Pasal of its location). One that is not in force then (ended, not yet in force, or unknown)
    keeps its receipts but never reaches the top band: it is history, or a rule the collection cannot date. A
    citation quoting the claim's sentence in another place (`restatements.restating`) is kept only where it stands as
    the stated provision does: in the same document; in another, only a definition (a law and its implementing
    regulation define a term in the same words; another regulation's rule in the same words is its own rule), in force
    as the stated provision is."""
    own = cite.doc_id or (chunk.doc_id if chunk else "")
    doc = statuses.get(own)
    if claim.status != "supported":
        return claim
    if doc is None:
        return restatements_kept(claim, lambda x: x.doc_id == own)
    location = cite.location or (chunk.location if chunk else "")
    where = standing(doc, on, pasal_of(location), item_of(location))

    def alike(x: CitationCheck) -> bool:
        # another place that states the claim's sentence is quoted only where it stands as the claim's own provision
        # does (an amendment may have changed or ended one of them); another document's definition only where both
        # are in force
        other = statuses.get(x.doc_id)
        there = (standing(other, on, pasal_of(x.location or ""), item_of(x.location or "")) if other is not None
                 else None)
        if there is None or (x.doc_id != own and next(quoted_entries([x.quote]), None) is None):
            return False
        return there == where if x.doc_id == own else there.state == where.state == "in_force"
    claim = restatements_kept(claim, alike)
    dated_claim = replace(claim, standing=where)
    if where.state == "in_force" or confidence is None:
        return dated_claim
    return capped(dated_claim, confidence, chunk is not None and is_provision(chunk.location, chunk.spans), NOT_IN_FORCE)


def capped(claim: VerifiedClaim, confidence: ConfidenceSettings, regulation: bool, why: str,
           under: str = "TINGGI", ceiling: float = 1.0) -> VerifiedClaim:
    """The claim kept under the band `under` (the top one; "SEDANG": under the middle one too, so RENDAH, and at most
    `ceiling`) (`why`: Confidence.capped_by); one already below it is unchanged."""
    c = claim.confidence
    cap = round(min((confidence.top(regulation) if under == "TINGGI" else confidence.medium) - 0.01, ceiling), 4)
    if c is None or (c.band != "TINGGI" if under == "TINGGI" else c.value <= cap):
        return claim
    value = min(c.value, cap)
    return replace(claim, confidence=replace(c, cap=cap if c.cap is None else min(c.cap, cap), value=value,
                                             band=band_for(value, confidence, regulation), capped_by=why))


NOT_IN_FORCE = "not_in_force"  # Confidence.capped_by of a claim whose provision is not in force on the answer's date


def in_force_first(claims: Sequence[VerifiedClaim]) -> list[VerifiedClaim]:
    """Supported claims in force (or undated) first, then those whose standing the collection cannot settle
    (`unknown`), then history (`ended`, `not_yet`), then the demoted; each group in its order. A provision the
    collection knows ended never leads an answer that has one it cannot say ended (history is not the answer)."""
    def rank(c: VerifiedClaim) -> int:
        if c.status != "supported":
            return 3
        if c.standing is None or c.standing.state == "in_force":
            return 0
        return 1 if c.standing.state == "unknown" else 2
    return sorted(claims, key=rank)


def decide(conflict: Conflict, claims: Sequence[VerifiedClaim], lang: str) -> Conflict:
    """A conflict between a claim in force and one that is not: which applies on the answer's date, and the provision
    that decides it (the one that ended the other, where one did)."""
    if conflict.kind != "figures" or len(conflict.claims) != 2:
        return conflict
    a, b = conflict.claims
    states = {claims[i].standing.state if claims[i].standing else None for i in (a, b)}
    if states not in ({"in_force", "ended"}, {"in_force", "not_yet"}):
        return conflict
    applies, other = (a, b) if claims[a].standing.state == "in_force" else (b, a)  # type: ignore[union-attr]
    now, then = claims[applies], claims[other]
    here = now.citations[0].path or now.citations[0].document or ""
    said = (f" Yang berlaku per {now.standing.on}: {here}; yang lain {standing_words(then.standing, 'id')}."
            if lang == "id" else f" In force on {now.standing.on}: {here}; the other is "
            f"{standing_words(then.standing, 'en')}.")  # type: ignore[union-attr]
    return replace(conflict, detail=conflict.detail + said, applies=applies, decided_by=then.standing.edge)


# a standing in words: (state, whether an edge decides it) -> template; "brief" drops what the line around it says
_WORDS = {
    "id": {"in_force": "berlaku per {on}{since}", "not_yet": "belum berlaku per {on} (berlaku mulai {until})",
           "ended": "riwayat: {done} mulai {until} oleh {by}", "unknown": "status tidak diketahui per {on}{why}",
           "brief_not_yet": "berlaku mulai {until}", "brief_ended": "{done} mulai {until} oleh {by}",
           "brief_unknown": "status tidak diketahui{why}", "since": " (sejak {since})", "why": ": {done} oleh {by}",
           "undated": ", tanggal berlakunya tidak diketahui",
           "done": {"revokes": "dicabut", "revokes_part": "dicabut sebagian", "amends": "diubah"}},
    "en": {"in_force": "in force on {on}{since}", "not_yet": "not yet in force on {on} (in force from {until})",
           "ended": "history: {done} from {until} by {by}", "unknown": "standing unknown on {on}{why}",
           "brief_not_yet": "in force from {until}", "brief_ended": "{done} from {until} by {by}",
           "brief_unknown": "standing unknown{why}", "since": " (since {since})", "why": ": {done} by {by}",
           "undated": ", on a date the collection does not give",
           "done": {"revokes": "revoked", "revokes_part": "partly revoked", "amends": "amended"}},
}


def standing_words(st: Standing, lang: str, brief: bool = False) -> str:
    """A standing in words, with the provision that decides it: "riwayat: dicabut mulai 2025-04-01 oleh PMI 7/2025 ›
    … › Pasal 9 › ayat (1)" / "history: revoked from 2025-04-01 by …"; `brief`: without the date asked about (the
    direct answer line says it once)."""
    W, e = _WORDS["id" if lang == "id" else "en"], st.edge
    state = "unknown" if st.state == "ended" and e is None else st.state
    done, by = (W["done"][e.kind], e.source_path) if e is not None else ("", "")
    why = (W["why"].format(done=done, by=by) + ("" if e.date else W["undated"])) if e is not None else ""
    key = f"brief_{state}" if brief and f"brief_{state}" in W else state
    return W[key].format(on=st.on, until=st.until, since=W["since"].format(since=st.since) if st.since else "",
                         done=done, by=by, why=why)


def as_of_words(a: AsOf, lang: str) -> str:
    """The answer's date and why: "per 2024-12-31 (disebut dalam pertanyaan: «pada tahun 2024»)"."""
    why = {"id": {"request": "diminta", "question": f"disebut dalam pertanyaan: «{a.words}»",
                  "profile": "tanggal yang ditetapkan profil", "today": "hari ini"},
           "en": {"request": "as requested", "question": f"named in the question: «{a.words}»",
                  "profile": "the profile's date", "today": "today"}}
    L = why["id" if lang == "id" else "en"]
    return (f"Per tanggal {a.date} ({L[a.source]})" if lang == "id" else f"As of {a.date} ({L[a.source]})")


# --- the date a question asks about ------------------------------------------------------------------------------

_MONTHS = {m: i + 1 for i, names in enumerate((
    "januari january jan", "februari february feb pebruari", "maret march mar", "april apr", "mei may",
    "juni june jun", "juli july jul", "agustus august aug", "september sep sept", "oktober october oct okt",
    "november nov nop", "desember december dec des")) for m in names.split()}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_YEAR = r"(?:19|20)\d\d"
# "pada tahun 2023", "sebelum April 2025", "per 1 Maret 2025", "as of 2024", "in 2023", "before April 2025"
_ASKED_DATE = re.compile(
    rf"\b(?P<lead>pada|di|dalam|untuk|per|sejak|sebelum|sesudah|setelah|hingga|sampai|as\s+of|in|on|before|after|"
    rf"during|for|until|by)\s+(?:(?:tahun|tanggal|bulan|the\s+year|year)\s+)?(?:(?:pajak|anggaran)\s+)?"
    rf"(?:(?P<day>\d{{1,2}})\s+)?(?:(?P<month>{_MONTH})\s+)?(?P<year>{_YEAR})\b(?!\s*[/-])", re.IGNORECASE)
# "tahun 2023" anywhere, unless it is a regulation's name ("Nomor 3 Tahun 2022")
_YEAR_ALONE = re.compile(rf"(?<!\w)(?P<before>\S+\s+\S+\s+)?tahun\s+(?:pajak\s+|anggaran\s+)?(?P<year>{_YEAR})\b",
                         re.IGNORECASE)
_NAMED = re.compile(r"(?:nomor|no\.?)\s+\S+\s+$", re.IGNORECASE)


def asked_date(question: str) -> tuple[dt.date, str] | None:
    """The date a question asks about, and the words that say it: a day ("per 1 Maret 2025"), a month (its last day;
    "sebelum April 2025": the day before it), a year (its last day; "sebelum 2025": the day before it). A regulation's
    name ("Nomor 3 Tahun 2022", "PMK 98/2025") is not a date asked about. None when the question names none."""
    for m in _ASKED_DATE.finditer(question):
        if _NAMED.search(question[:m.start("year")]):
            continue
        year = int(m["year"])
        month = _MONTHS.get((m["month"] or "").casefold())
        lead = m["lead"].casefold()
        before = lead in ("sebelum", "before", "until", "hingga", "sampai", "by")
        try:
            if m["day"] and month:
                day = dt.date(year, month, int(m["day"]))
                return (day - dt.timedelta(days=1) if before and lead in ("sebelum", "before") else day), m[0]
            if month:
                first = dt.date(year, month, 1)
                nxt = dt.date(year + (month == 12), month % 12 + 1, 1)
                return (first - dt.timedelta(days=1) if before else nxt - dt.timedelta(days=1)), m[0]
        except ValueError:
            continue
        if m["day"]:
            continue  # "on 31 2024": no month, not a date
        return (dt.date(year - 1, 12, 31) if before else dt.date(year, 12, 31)), m[0]
    for m in _YEAR_ALONE.finditer(question):
        if m["before"] and _NAMED.search(m["before"]):
            continue
        return dt.date(int(m["year"]), 12, 31), question[m.end("before") if m["before"] else m.start():m.end()]
    return None
