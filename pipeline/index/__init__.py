"""The chunk store and the two retrieval lanes written from it."""
from .dense import MilvusDenseIndex
from .lexical import Bm25LexicalIndex
from .store import ChunkStore, StoreChunkSource, embedding_text

__all__ = ["MilvusDenseIndex", "Bm25LexicalIndex", "ChunkStore", "StoreChunkSource", "embedding_text"]
