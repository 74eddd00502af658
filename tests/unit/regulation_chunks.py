"""A hand-written regulation as the real chunker cuts it, and its chunks as the generator reads them: shared by the
answer-unit tests."""
from __future__ import annotations

from pipeline.ingest.chunker import Chunker
from pipeline.types import Chunk, ContextItem, Document


def chunks_of(text: str) -> dict[str, Chunk]:
    """The chunks of `text` as PP 34/2021 (a Government Regulation), by location."""
    doc = Document(doc_id="pp-34-2021", title="PERATURAN PEMERINTAH NOMOR 34 TAHUN 2021", original="pp.md",
                   content_hash="x", lang="id", cite_as="PP 34/2021", rendition="pp.txt")
    return {c.location: c for c in Chunker(1500).chunks(doc, text)}


def context_item(chunk: Chunk) -> ContextItem:
    """The chunk as the generator's context item (first in the context, Indonesian, retrieval score 0.8)."""
    return ContextItem(chunk.chunk_id, chunk.title, chunk.location, chunk.text, False, "id", 0.8, chunk.heading, (),
                       chunk.spans)
