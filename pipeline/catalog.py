"""What the corpus holds, for people: the manifest, one document's coverage, cross-references, legal status.

`saksi corpus ls | show | xrefs | status` print these; they are also the basis for telling a user
"I have no source for that regulation" rather than guessing.
"""
from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import asdict

from . import status
from .corpus import Corpus
from .errors import SaksiError
from .index.store import ReferenceRow
from .citations import cite_path
from .responses import DocumentRow
from .types import Document, DocumentStatus, StatusEdge


class UnknownDocument(SaksiError):
    def __init__(self, query: str, known: list[str], near: list[str] = ()):
        if near:  # a loose match only suggests: a receipt never resolves to a document that merely looks alike
            hint = f"; did you mean {' or '.join(repr(n) for n in near[:3])}?"
        else:
            hint = f"; the corpus has: {', '.join(known[:8])}{' …' if len(known) > 8 else ''}" if known else ""
        super().__init__(f"no document {query!r} in the corpus{hint}")
        self.near = list(near)


def _key(s: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", s.lower())


def _name(s: str) -> str:
    """A citation name as typed: case and runs of spaces do not matter ("pmk  98/2025" is "PMK 98/2025")."""
    return " ".join(s.split()).casefold()


def find_document(corpus: Corpus, query: str) -> Document:
    """By id exactly, else by citation name ("PMK 98/2025", "pmk 98/2025": case and spacing aside). Anything looser
    ("pmk-98-2025") only suggests: it raises UnknownDocument naming the look-alikes, so an id or a name can never
    resolve to another document that happens to share its letters and digits (an upload named "PMI 7-2025" is not
    PMI 7/2025)."""
    docs = [d for d, _ in corpus.store.documents()]
    for d in docs:
        if query == d.doc_id:
            return d
    named = [d for d in docs if d.cite_as and _name(d.cite_as) == _name(query)]
    if len(named) == 1:
        return named[0]
    near = [f"{d.cite_as or d.doc_id} ({d.doc_id})" for d in docs
            if _key(query) and _key(query) in (_key(d.doc_id), _key(d.cite_as or ""))]
    raise UnknownDocument(query, [d.cite_as or d.doc_id for d in docs], near)


def listing(corpus: Corpus) -> list[DocumentRow]:
    """One row per document: number, year, title, version and counts."""
    unresolved = corpus.store.unresolved_counts()
    related: dict[str, set[str]] = {}
    for _, _, a, b, _ in corpus.store.near_duplicates():
        related.setdefault(a, set()).add(b)
        related.setdefault(b, set()).add(a)
    rows = []
    for entry in corpus.store.manifest():
        d: Document = entry.document
        rows.append(DocumentRow(
            doc_id=d.doc_id, cite_as=d.cite_as, doc_type=d.doc_type, number=d.number, year=d.year, title=d.title,
            authority=d.authority, published=d.published, effective=d.effective, lang=d.lang, format=d.fmt,
            version=entry.version, chunks=entry.chunks, pasal=entry.details.get("pasal"), pages=d.pages,
            pages_without_text=list(d.pages_without_text), unresolved_references=unresolved.get(d.doc_id, 0),
            original=d.original, near_duplicates_with=sorted(related.get(d.doc_id, ())),
            ingested_at=entry.ingested_at, source_hash=entry.source_hash, uploaded_by=d.uploaded_by,
            uploaded_at=d.uploaded_at, declared_authority=entry.details.get("declared_authority")))
    return rows


def show(corpus: Corpus, query: str, on: dt.date | None = None) -> dict:
    """One document: metadata and where each field came from, manifest, outline, references, near-duplicates, and its
    legal status on `on` (default today) with the provisions that decide it."""
    doc = find_document(corpus, query)
    on = on or dt.date.today()
    entry = next(e for e in corpus.store.manifest() if e.document.doc_id == doc.doc_id)
    chunks = corpus.store.doc_chunks(doc.doc_id)
    outline: dict[str, dict] = {}
    for c in chunks:
        unit = c.unit.split("#", 1)[1]
        o = outline.setdefault(unit, {"unit": unit, "path": cite_path(c, unit), "chunk_id": c.chunk_id,  # its first
                                      "chunks": 0, "spans": [], "pages": c.page, "categories": []})
        o["chunks"] += 1
        o["spans"].extend(s.label for s in c.spans if s.label not in o["spans"])
        o["categories"].extend(t for t in c.categories if t not in o["categories"])
        if c.page and o["pages"]:
            o["pages"] = (o["pages"][0], c.page[1])
    refs_out = [asdict(r) for r in corpus.store.references(doc.doc_id)]
    refs_in = [asdict(r) for r in corpus.store.references() if r.target_doc == doc.doc_id and r.doc_id != doc.doc_id]
    edges = corpus.store.status_edges()
    dups = corpus.store.near_duplicates(doc.doc_id)
    related = Counter(b if a == doc.doc_id else a for _, _, a, b, _ in dups)
    return {
        "document": asdict(doc), "manifest": entry.as_dict(), "outline": list(outline.values()),
        "references": {"out": refs_out, "in": refs_in,
                       "resolved": sum(r["status"] == "resolved" for r in refs_out),
                       "unresolved": sum(r["status"] == "unresolved" for r in refs_out)},
        "near_duplicates": [{"doc_id": other, "passages": n} for other, n in sorted(related.items())],
        "status": _status(doc, edges, on),
    }


def _status(doc: Document, edges: list[StatusEdge], on: dt.date) -> dict:
    """A document's standing on `on`, the provisions that end it or its Pasal, and what it ends itself."""
    return {"standing": asdict(status.standing(DocumentStatus.of(doc, edges), on)),
            "ended_by": [asdict(e) for e in edges if e.target_doc == doc.doc_id and e.source_doc != doc.doc_id],
            "ends": [asdict(e) for e in edges if e.source_doc == doc.doc_id]}


def status_edges(corpus: Corpus, query: str | None = None, on: dt.date | None = None) -> list[dict]:
    """Every statement of the status graph (pipeline/status.py), or those a document states or is the target of; each
    with its receipt, and the standing of what it ends on `on` (default today; None: not in the collection)."""
    doc_id = find_document(corpus, query).doc_id if query else None
    docs = {d.doc_id: d for d, _ in corpus.store.documents()}
    edges = corpus.store.status_edges()
    rows = []
    for e in edges:
        if doc_id and doc_id not in (e.source_doc, e.target_doc):
            continue
        target = docs.get(e.target_doc) if e.target_doc else None
        now = (status.standing(DocumentStatus.of(target, edges), on or dt.date.today(), e.target_pasal)
               if target else None)
        rows.append({**asdict(e), "target_standing": asdict(now) if now else None})
    return rows


def xrefs(corpus: Corpus, query: str | None = None, status: str | None = None) -> list[dict]:
    """Every extracted reference with where it is, what it points at and whether that is in the corpus."""
    doc_id = find_document(corpus, query).doc_id if query else None
    references = corpus.store.references(doc_id)
    chunks = corpus.store.get(r.chunk_id for r in references)
    names = {d.doc_id: d.cite_as or d.doc_id for d, _ in corpus.store.documents()}
    rows = []
    for r in references:
        if status and r.status != status:
            continue
        c = chunks.get(r.chunk_id)
        rows.append({"doc_id": r.doc_id, "from": cite_path(c) if c else r.chunk_id,
                     "text": " ".join(r.reference["raw"].split()),
                     "status": r.status, "target": _target(r, names),
                     "target_doc": r.target_doc, "target_chunk": r.target_chunk, "reason": r.reason})
    return rows


def _target(r: ReferenceRow, names: dict[str, str]) -> str:
    """What a reference points at, naming the document when it is another one."""
    label = r.target_label or r.reference.get("raw")
    doc = r.target_doc
    if doc and doc != r.doc_id and not label.startswith(names.get(doc, doc)):
        return f"{names.get(doc, doc)} › {label}"
    return label
