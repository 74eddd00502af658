"""Evidence in place: a document's text with the quoted span highlighted on its page.

A citation links here with the chunk it cites and its quote. The document's rendition (the
cleaned text every chunk is an exact slice of) is shown a window at a time around the cited passage
(`pipeline.corpus.reading`), with links to the text before and after: what one page costs is bounded
whatever the document's size. The quote is found in the cited
chunk as the quote gate found it (else the whole chunk is highlighted and the page says so).
Page breaks, the structural path and the pages of the quote come from the chunks; each cross-reference in the text links to the passage it resolves to, and
an unresolved one is marked with the reason. The original file can be downloaded.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import FileResponse

from pipeline.citations import cite_path, cited_location, quote_pages
from pipeline.corpus.reading import WINDOW_CHARS
from pipeline.keys import COLLECTION_NAME
from pipeline.text import locate as text_locate
from pipeline.types import Chunk

from ..errors import ApiError
from .common import key_of, page_work, render, service

router = APIRouter()

CollectionName = Annotated[str, Path(pattern=COLLECTION_NAME)]
DocId = Annotated[str, Path(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]


def locate(text: str, quote: str) -> tuple[int, int] | None:
    """Where `quote` stands in `text`, found as the quote gate finds it (`pipeline.text.locate`:
    verbatim, else under the gate's normalisation), so the span highlighted is the span verified;
    quotation marks around the whole quote are not part of it."""
    quote = quote.strip().strip("“”\"")
    return text_locate(text, quote) if quote else None


@dataclass
class Piece:
    """A run of the text with one set of marks: highlighted or not, inside a reference or not."""

    text: str
    start: int
    highlight: bool = False
    link: dict | None = None
    page: int | None = None
    anchors: list[str] = field(default_factory=list)   # chunk ids that begin here
    page_break: int | None = None                      # a new page begins here (its number)
    first_highlight: bool = False                      # the highlight begins here (the page scrolls to it)


def pieces(text: str, chunks: list[Chunk], links: list[dict], highlight: tuple[int, int] | None,
           base: int = 0) -> list[Piece]:
    """The text (the document's from offset `base`, which is a passage's start; offsets are the document's) cut at
    every place something begins or ends, each piece with its marks; one sweep over the cuts, so the time is linear
    in the pieces shown however many references the document holds."""
    lo, hi = base, base + len(text)
    chunks = [c for c in chunks if lo <= c.start < hi]
    cuts = {lo, hi}
    anchors: dict[int, list[str]] = {}
    breaks: dict[int, int] = {}
    page_at: list[tuple[int, int]] = []  # (offset, page) where a page begins
    last_page = None  # the page the previous chunk ends on
    for c in sorted(chunks, key=lambda c: c.start):
        anchors.setdefault(c.start, []).append(c.chunk_id)
        cuts.add(c.start)
        if c.page:
            if c.page[0] > (last_page or 1):  # a page begins with this chunk (or between it and the last)
                breaks[c.start] = c.page[0]
            last_page = c.page[1]
            page_at.append((c.start, c.page[0]))
            for k, b in enumerate(sorted(c.page_breaks)):
                breaks[c.start + b] = c.page[0] + k + 1
                page_at.append((c.start + b, c.page[0] + k + 1))
                cuts.add(c.start + b)
    page_at.sort()
    starts = {c.chunk_id: c.start for c in chunks}
    opens: dict[int, list[int]] = {}   # offset -> the references (by their order) that begin there
    closes: dict[int, list[int]] = {}  # offset -> those that end there
    spans = []
    for r in links:
        if r["chunk_id"] in starts:
            a, b = starts[r["chunk_id"]] + r["start"], starts[r["chunk_id"]] + r["end"]
            if lo <= a < b <= hi:
                opens.setdefault(a, []).append(len(spans))
                closes.setdefault(b, []).append(len(spans))
                spans.append(r)
                cuts.update((a, b))
    if highlight:
        cuts.update(highlight)
    ordered = sorted(c for c in cuts if lo <= c <= hi)
    out: list[Piece] = []
    k = 0
    inside: set[int] = set()  # the references the current piece lies in (every boundary is a cut: one sweep)
    for a, b in zip(ordered, ordered[1:]):
        while k + 1 < len(page_at) and page_at[k + 1][0] <= a:
            k += 1
        page = page_at[k][1] if page_at and page_at[k][0] <= a else None
        inside.difference_update(closes.get(a, ()))
        inside.update(opens.get(a, ()))
        link = spans[min(inside)] if inside else None
        marked = bool(highlight and highlight[0] <= a and b <= highlight[1])
        out.append(Piece(text[a - base:b - base], a, marked, link, page, anchors.get(a, []), breaks.get(a)))
    first = next((p for p in out if p.highlight), None)
    if first is not None:
        first.first_highlight = True
    return out


async def retrieved_document(request: Request, name: str, doc_id: str, part: str, **kw) -> tuple[str, dict]:
    """The collection's name and the service's `part` ("document": its page's report; "document_text": a window
    of its text) of one document; 404 when it has none by that id or citation name."""
    svc = service(request)
    where = svc.where(key_of(request), name)
    data = await getattr(svc, part)(where, doc_id, **kw)
    if data is None:
        raise ApiError(404, "not_found", f"no document {doc_id!r} in collection {where.name!r}")
    return where.name, data


@router.get("/ui/documents/{name}/{doc_id}/text")
async def document_text(request: Request, name: CollectionName, doc_id: DocId, chunk: str | None = None,
                        quote: str | None = None, at: Annotated[int | None, Query(ge=0)] = None):
    collection, data = await retrieved_document(request, name, doc_id, "document_text", chunk=chunk, at=at)
    # cutting and rendering the text is CPU work: off the event loop that serves every other request
    return await page_work(request, "the document's text", _text_page, request, collection, data, chunk, quote)


def _text_page(request: Request, collection: str, data: dict, chunk: str | None, quote: str | None):
    text, span, cited = data["text"], data["span"], data["cited"]
    highlight, located = None, None
    if cited and text is not None:
        located = locate(cited.text, quote) if quote else None
        a, b = located if located else (0, len(cited.text))
        highlight = (cited.start + a, cited.start + b)
    parts = pieces(text, data["chunks"], data["links"], highlight, span[0]) if text is not None else []
    from_trace = request.query_params.get("from")
    keep = {k: v for k, v in (("chunk", chunk), ("quote", quote), ("from", from_trace)) if v}
    earlier = f"?{urlencode({**keep, 'at': max(0, span[0] - WINDOW_CHARS)})}#text" if span[0] > 0 else None
    later = f"?{urlencode({**keep, 'at': span[1]})}#text" if text is not None and span[1] < data["length"] else None
    receipt = cite_path(cited, cited_location(cited, located)) if cited else None
    pages = quote_pages(cited, located) if cited else None
    back = (f"/ui/answers/{collection}/{from_trace}" if from_trace and re.fullmatch(r"[0-9a-f]{32}", from_trace)
            else None)
    return render(request, "evidence.html", collection=collection, doc=data["document"], text=text,
                  length=data["length"],
                  pieces=parts, cited=cited, receipt=receipt, quote=quote, quote_located=located is not None,
                  quote_pages=list(pages) if pages else None, back=back, span=span, earlier=earlier, later=later)


@router.get("/ui/documents/{name}/{doc_id}/original")
async def original(request: Request, name: CollectionName, doc_id: DocId):
    svc = service(request)
    path = await svc.original(svc.where(key_of(request), name), doc_id)
    return FileResponse(path, filename=path.name)
