"""The chunk store and the two retrieval lanes written from it."""
from .dense import MilvusDenseIndex, is_milvus_lite
from .lexical import Bm25LexicalIndex
from .store import ChunkStore, ManifestEntry, ReferenceRow, StoreChunkSource

__all__ = ["MilvusDenseIndex", "is_milvus_lite", "Bm25LexicalIndex", "ChunkStore", "ManifestEntry", "ReferenceRow",
           "StoreChunkSource"]
