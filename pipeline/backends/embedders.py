"""Production embedders: BGE-M3 through FlagEmbedding, and any sentence-transformers model.

- BGEM3Embedder: dense vectors (CLS pooling, normalised) and, when `embedder.sparse` is on,
  BGE-M3's lexical weights (token id → weight) for the sparse lane, both from one pass.
  fp16 on GPU; batch size and max length from the profile. A model error fails the call at
  once, and out-of-memory is retried a bounded number of times (`_FailFast`): FlagEmbedding's
  own loop would retry any RuntimeError forever-ish while this embedder holds its lock.
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


class EmbedderFailed(Exception):
    """The embedding model failed (its error is the __cause__). Deliberately not a RuntimeError:
    FlagEmbedding's batch-size loop catches RuntimeError, and must not catch this."""


# out-of-memory errors FlagEmbedding may answer by shrinking its batch (by 3/4 each time), per call
_OOM_RETRIES = 3


def _is_oom(e: BaseException) -> bool:
    import torch

    oom = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", ())
    return isinstance(e, oom) or "out of memory" in str(e).lower()


def _fail_fast_module(inner):
    """`inner` (FlagEmbedding's BGE-M3 inference module) behind a guard that bounds FlagEmbedding's
    batch-size loop (see BGEM3Embedder)."""
    import torch

    class _FailFast(torch.nn.Module):
        def __init__(self, module):
            super().__init__()
            self.inner = module  # a submodule: .to() / .eval() / .float() / .half() reach it
            self.ooms = 0  # reset by the embedder before each encode (under its lock)
            self.failed: BaseException | None = None

        def __getattr__(self, name):  # model.model.config and the rest of the inner module's surface
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(super().__getattr__("inner"), name)

        def forward(self, *args, **kwargs):
            if self.failed is not None:  # a library that swallowed our error and called again
                raise EmbedderFailed(f"the embedding model failed: {self.failed}") from self.failed
            try:
                return self.inner(*args, **kwargs)
            except RuntimeError as e:
                if _is_oom(e) and self.ooms < _OOM_RETRIES:
                    self.ooms += 1
                    if torch.cuda.is_available():
                        torch.cuda.empty_cache()
                    raise  # FlagEmbedding shrinks the batch and tries again
                self.failed = e
                what = (f"out of memory {self.ooms + 1} times (batch shrunk each time); lower embedder.batch_size"
                        f" or embedder.max_length" if _is_oom(e) else "")
                raise EmbedderFailed(f"the embedding model failed: {what or e}") from e

    return _FailFast(inner)


class BGEM3Embedder:
    """BGE-M3 through FlagEmbedding's BGEM3FlagModel, one encode at a time (a lock).

    Errors fail fast. FlagEmbedding 1.4.2's `encode_single_device`
    (FlagEmbedding/inference/embedder/encoder_only/m3.py) probes its batch size in a loop that
    catches every RuntimeError raised by the forward pass and tries again with 3/4 of the batch
    (its separate out-of-memory branch is never reached: that error is a RuntimeError too),
    so any RuntimeError (a CUDA device-side assert, a bad input, a shape error), not only
    out-of-memory, is swallowed and retried with a smaller batch, down to 0 and then on an
    empty batch, forever if that raises a RuntimeError too, or ending in an unrelated error
    that hides the real one (measured on the tiny model, batch 8: six failing forward passes,
    then IndexError from padding an empty batch; from batch 32 it would be eleven). All of it under
    `self._lock`, so every other embed call waits.

    Here FlagEmbedding's model (`self._model.model`) sits behind `_FailFast`: a non-OOM
    RuntimeError becomes EmbedderFailed (not a RuntimeError, so the loop does not catch it) and
    propagates at once; an OOM is re-raised for the loop to shrink the batch at most
    `_OOM_RETRIES` times per call, then it too becomes EmbedderFailed. The lock is released
    because the exception leaves the `with` block.
    """

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
        self._guard = _fail_fast_module(self._model.model)
        self._model.model = self._guard

    def _encode(self, texts: Sequence[str], sparse: bool, is_query: bool) -> tuple[np.ndarray, list[dict[int, float]]]:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), np.float32), []
        longest = self.settings.max_length  # a question is read from its first query_max_tokens tokens
        longest = min(longest, self.settings.query_max_tokens) if is_query else longest
        with self._lock:
            self._guard.ooms, self._guard.failed = 0, None
            out = self._model.encode(texts, batch_size=self.settings.batch_size,
                                     max_length=longest, return_dense=True,
                                     return_sparse=sparse, return_colbert_vecs=False)
        dense = _normalised(out["dense_vecs"])
        lexical = [_sparse(w) for w in out["lexical_weights"]] if sparse else []
        return dense, lexical

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return (await asyncio.to_thread(self._encode, texts, False, True))[0]

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return (await asyncio.to_thread(self._encode, texts, False, False))[0]

    async def embed_queries_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await asyncio.to_thread(self._encode, texts, True, True)

    async def embed_passages_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await asyncio.to_thread(self._encode, texts, True, False)


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

    def _encode(self, texts: Sequence[str], prefix: str, longest: int) -> np.ndarray:
        texts = [prefix + t for t in texts]
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._lock:  # the model's one truncation length, set for this call under the lock
            self._model.max_seq_length = longest
            out = self._model.encode(texts, batch_size=self.settings.batch_size, convert_to_numpy=True,
                                     normalize_embeddings=True, show_progress_bar=False)
        return _normalised(out)

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        longest = min(self.settings.max_length, self.settings.query_max_tokens)  # a question's first tokens
        return await asyncio.to_thread(self._encode, list(texts), self.settings.query_prefix, longest)

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(self._encode, list(texts), self.settings.passage_prefix,
                                       self.settings.max_length)
