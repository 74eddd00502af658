"""Production embedders: BGE-M3 through FlagEmbedding, and any sentence-transformers model.

- BGEM3Embedder: dense vectors (CLS pooling, normalised) and, when `embedder.sparse` is on,
  BGE-M3's lexical weights (token id → weight) for the sparse lane, both from one pass.
  fp16 on GPU; batch size and max length from the profile.
- SentenceTransformerEmbedder: any sentence-transformers model from a local path or the
  HF cache, with the query/passage prefixes the model was trained with (e5: "query: ").

Weights resolve offline (pipeline/models.py); torch and the libraries load here only.
"""
from __future__ import annotations

import asyncio
import threading
from typing import Sequence

import numpy as np

from ..config import EmbedderSettings
from ..models import resolve_model, torch_device
from . import embedder_name


def _normalised(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    if x.ndim == 1:
        x = x[None, :]
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def _sparse(weights: dict) -> dict[int, float]:
    """FlagEmbedding's {"token id": weight} as {int id: float weight}, zero weights left out."""
    return {int(k): float(v) for k, v in weights.items() if float(v) > 0}


class BGEM3Embedder:
    def __init__(self, settings: EmbedderSettings):
        from FlagEmbedding import BGEM3FlagModel

        self.settings = settings
        path = resolve_model(settings.model or "BAAI/bge-m3", "embedder")
        self.device = torch_device(settings.device)
        self.name = embedder_name(settings)
        self.sparse = settings.sparse
        self._model = BGEM3FlagModel(str(path), use_fp16=settings.fp16 and self.device.startswith("cuda"),
                                     devices=self.device, batch_size=settings.batch_size,
                                     query_max_length=settings.max_length, passage_max_length=settings.max_length)
        self._lock = threading.Lock()  # one model instance; FlagEmbedding is not re-entrant
        self.dim = int(self._model.model.model.config.hidden_size)

    def _encode(self, texts: Sequence[str], sparse: bool) -> tuple[np.ndarray, list[dict[int, float]]]:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), np.float32), []
        with self._lock:
            out = self._model.encode(texts, batch_size=self.settings.batch_size,
                                     max_length=self.settings.max_length, return_dense=True,
                                     return_sparse=sparse, return_colbert_vecs=False)
        dense = _normalised(out["dense_vecs"])
        lexical = [_sparse(w) for w in out["lexical_weights"]] if sparse else []
        return dense, lexical

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return (await asyncio.to_thread(self._encode, texts, False))[0]

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return (await asyncio.to_thread(self._encode, texts, False))[0]

    async def embed_queries_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await asyncio.to_thread(self._encode, texts, True)

    async def embed_passages_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await asyncio.to_thread(self._encode, texts, True)


class SentenceTransformerEmbedder:
    def __init__(self, settings: EmbedderSettings):
        from sentence_transformers import SentenceTransformer

        self.settings = settings
        path = resolve_model(settings.model or "", "embedder")
        self.device = torch_device(settings.device)
        self.name = embedder_name(settings)
        self._model = SentenceTransformer(str(path), device=self.device)
        self._model.max_seq_length = settings.max_length
        if settings.fp16 and self.device.startswith("cuda"):
            self._model.half()
        self._lock = threading.Lock()
        # renamed in sentence-transformers 5.x; older releases have only the first name
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = get_dim()
        self.dim = int(dim if dim is not None else self._model.encode(["x"]).shape[1])

    def _encode(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        texts = [prefix + t for t in texts]
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._lock:
            out = self._model.encode(texts, batch_size=self.settings.batch_size, convert_to_numpy=True,
                                     normalize_embeddings=True, show_progress_bar=False)
        return _normalised(out)

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(self._encode, list(texts), self.settings.query_prefix)

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(self._encode, list(texts), self.settings.passage_prefix)
