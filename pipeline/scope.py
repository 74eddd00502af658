"""A question's scope: the documents it names, and whether it asks *within* them.

"Menurut PMK 98/2025, …", "berdasarkan …", "according to PP 34/2011, …" ask within a
document: retrieval is then restricted to the named documents the corpus holds, their
names are not content an answer must cover, and a named document the corpus lacks leaves
nothing to answer from. A document merely mentioned is only recorded, so an answer drawn
from other records is never taken for its. Document names are read with the same grammar
ingest uses for cross-references (`ingest/xrefs.py`), so a question and a regulation name
a document alike. Any named document the corpus holds is also exempt from retrieval's per-source
cap: the question is about its passages, so all of them it finds go to the reranker.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .ingest.xrefs import documents_named, held_by
from .protocols import ChunkSource, ContextSource

# "menurut PMK 98/2025", "berdasarkan …", "sesuai dengan …", "according to …", "under …": the question
# asks within that document, not about it
_SCOPE_WORD = re.compile(r"\b(?:menurut|berdasarkan|sesuai(?:\s+dengan)?|according\s+to|under|pursuant\s+to)\s*$",
                         re.IGNORECASE)


@dataclass(frozen=True)
class Scope:
    named: tuple[tuple[str, str | None], ...] = ()  # (document label, ingested doc id or None)
    restrict: tuple[str, ...] | None = None          # doc ids retrieval is limited to; None: unrestricted
    strip: tuple[str, ...] = ()                      # the scoping names, left out of the terms to cover

    @property
    def held(self) -> tuple[str, ...]:
        """The ids of the named documents the corpus holds."""
        return tuple(dict.fromkeys(d for _, d in self.named if d))

    def without_names(self, text: str) -> str:
        """The text with the scoping document names taken out (they scope the search)."""
        for raw in self.strip:
            text = " ".join(text.replace(raw, " ").split())
        return text


async def question_scope(question: str, lang: str, chunks: ChunkSource | ContextSource) -> Scope:
    """The documents the question names (looked up in the corpus only when it names any)."""
    named = documents_named(question, lang)
    if not named:
        return Scope()
    documents = await chunks.documents()
    held = [(ref, held_by(ref, documents)) for ref in named]
    scoped = [(ref, doc_id) for ref, doc_id in held if _SCOPE_WORD.search(question[:ref.start])]
    return Scope(named=tuple((ref.document_label, doc_id) for ref, doc_id in held),
                 restrict=tuple(sorted({d for _, d in scoped if d})) if scoped else None,
                 strip=tuple(ref.raw for ref, _ in scoped))
