"""What a reader's page of one document holds, bounded whatever the document's size.

A document may hold a few million characters and tens of thousands of cross-references (within the ingest
caps, `limits`); a page that sent all of it cost the server half a second and the reader's browser megabytes
(issue 27, the reference bomb). So the document's text is read a window at a time (`WINDOW_CHARS`, about
fifteen pages of a regulation, from one passage's start to another's), around the passage a citation names,
and its references a page at a time (`REFS_SHOWN`), each page saying how many there are in all. `saksi corpus
show` and `saksi corpus xrefs` still list everything.
"""
from __future__ import annotations

import bisect
import logging
from dataclasses import asdict
from pathlib import Path

from ..citations import cite_path
from ..index.store import ReferenceRow
from ..types import Chunk, Document
from .corpus import Corpus

log = logging.getLogger(__name__)

WINDOW_CHARS = 40_000  # the text one page shows (more only when the cited passage is longer)
REFS_SHOWN = 300       # references out, and references in, one document page lists


def window(length: int, starts: list[int], around: tuple[int, int] | None, at: int | None) -> tuple[int, int]:
    """The part of a text of `length` characters one page shows, given the passages' start offsets (sorted): from a
    passage's start, about WINDOW_CHARS long, ending at a passage's start (or the text's end). It begins at `at` when
    given, else it holds `around` (the cited passage) with text on either side, else it is the text's beginning."""
    starts = sorted({0, *(s for s in starts if 0 <= s < length)})
    if at is not None:
        lo = min(max(0, at), length)
    elif around is not None:
        lo = max(0, min(around[0], (around[0] + around[1] - WINDOW_CHARS) // 2))
    else:
        lo = 0
    lo = starts[bisect.bisect_right(starts, lo) - 1]  # back to the start of the passage it falls in
    hi = max(lo + WINDOW_CHARS, around[1] if around is not None and at is None else 0)
    k = bisect.bisect_left(starts, hi)
    return lo, (starts[k] if k < len(starts) else length)


def _rendition(doc: Document) -> str | None:
    try:
        return Path(doc.rendition).read_text(encoding="utf-8") if doc.rendition else None
    except OSError as e:
        log.warning("rendition of %s unreadable: %s", doc.doc_id, e)
        return None


def page_link(r: ReferenceRow) -> dict:
    """A stored reference as the text view marks it: where it stands in its passage, what it resolves to."""
    return {"chunk_id": r.chunk_id, "start": r.reference["start"], "end": r.reference["end"],
            "raw": r.reference["raw"], "status": r.status, "target_doc": r.target_doc,
            "target_chunk": r.target_chunk, "target_label": r.target_label, "reason": r.reason}


def text_view(corpus: Corpus, doc: Document, chunk_id: str | None = None, at: int | None = None) -> dict:
    """One window of the document's text (`window`): the text of `span` (None: the rendition cannot be read), the
    whole text's `length`, the passages that begin in the window (offsets, structural path, pages, page breaks), the
    references in them with their offsets in each passage's text, and the cited passage (`chunk_id`) wherever it is."""
    chunks = corpus.store.doc_chunks(doc.doc_id)
    cited: Chunk | None = next((c for c in chunks if c.chunk_id == chunk_id), None) if chunk_id else None
    text = _rendition(doc)
    if text is None:
        return {"document": asdict(doc), "text": None, "length": 0, "span": (0, 0), "chunks": [], "links": [],
                "cited": cited}
    lo, hi = window(len(text), [c.start for c in chunks], (cited.start, cited.end) if cited else None, at)
    shown = [c for c in chunks if lo <= c.start < hi]
    ids = {c.chunk_id for c in shown}
    links = [page_link(r) for r in corpus.store.references(doc.doc_id) if r.chunk_id in ids]
    return {"document": asdict(doc), "text": text[lo:hi], "length": len(text), "span": (lo, hi), "chunks": shown,
            "links": links, "cited": cited}


def document_view(corpus: Corpus, report: dict, refs_from: int = 0) -> dict:
    """`catalog.show`'s report of one document for its page: the references out and in from `refs_from`,
    REFS_SHOWN of each (each reference out with the path of the passage it stands in), their totals, and whether
    the document's text can be shown."""
    refs = report["references"]
    page = slice(max(0, refs_from), max(0, refs_from) + REFS_SHOWN)
    where = {cid: cite_path(c) for cid, c in corpus.store.get(r["chunk_id"] for r in refs["out"][page]).items()}
    rendition = report["document"].get("rendition")
    return {**report,
            "references": {**refs, "out_total": len(refs["out"]), "in_total": len(refs["in"]), "from": page.start,
                           "shown": REFS_SHOWN,
                           "out": [{**r, "from": where.get(r["chunk_id"], r["chunk_id"]),
                                    "raw": " ".join(r["reference"]["raw"].split())} for r in refs["out"][page]],
                           "in": [{**r, "raw": " ".join(r["reference"]["raw"].split())} for r in refs["in"][page]]},
            "has_text": bool(rendition) and Path(rendition).is_file()}
