"""Near-duplicate passages across documents: the same provision in two versions.

Word 5-gram shingles, MinHash signatures and LSH banding find candidate pairs without
comparing every pair; each candidate pair is then confirmed by its exact Jaccard
similarity. Deterministic: hashes are blake2b, not Python's salted hash().
"""
from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from typing import Iterable

import numpy as np

from ..text import normalise
from ..types import Chunk

SHINGLE = 5
MIN_WORDS = 12          # shorter passages (headings, "Cukup jelas.") are alike without being versions
PERMUTATIONS = 64
BANDS = 16              # 16 bands × 4 rows: pairs at Jaccard 0.8 are found with probability > 0.99
_WORD = re.compile(r"\w+")
_PRIME = (1 << 61) - 1
_rng = np.random.default_rng(20251222)
_A = _rng.integers(1, _PRIME, PERMUTATIONS, dtype=np.uint64)
_B = _rng.integers(0, _PRIME, PERMUTATIONS, dtype=np.uint64)


def shingles(text: str) -> frozenset[int]:
    words = _WORD.findall(normalise(text).lower())
    if len(words) < MIN_WORDS:
        return frozenset()
    return frozenset(int.from_bytes(hashlib.blake2b(" ".join(words[i:i + SHINGLE]).encode(), digest_size=7).digest(),
                                    "big") for i in range(len(words) - SHINGLE + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _signature(sh: frozenset[int]) -> np.ndarray:
    x = np.fromiter(sh, dtype=np.uint64)
    # (a*x + b) mod p with uint64 wrap-around is still a fine hash family for banding
    return (np.outer(_A, x) + _B[:, None]).min(axis=1)


def near_duplicate_pairs(chunks: Iterable[Chunk], threshold: float = 0.8) -> list[tuple[str, str, str, str, float]]:
    """(chunk_a, chunk_b, doc_a, doc_b, similarity) for passages of different documents, a < b by chunk id."""
    items: list[tuple[Chunk, frozenset[int]]] = [(c, sh) for c in chunks if (sh := shingles(c.text))]
    buckets: dict[tuple[int, bytes], list[int]] = defaultdict(list)
    rows = PERMUTATIONS // BANDS
    for i, (_, sh) in enumerate(items):
        sig = _signature(sh)
        for b in range(BANDS):
            buckets[(b, sig[b * rows:(b + 1) * rows].tobytes())].append(i)
    seen: set[tuple[int, int]] = set()
    out: list[tuple[str, str, str, str, float]] = []
    for members in buckets.values():
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                i, j = members[x], members[y]
                if (i, j) in seen or items[i][0].doc_id == items[j][0].doc_id:
                    continue
                seen.add((i, j))
                sim = jaccard(items[i][1], items[j][1])
                if sim >= threshold:
                    a, b = sorted((items[i][0], items[j][0]), key=lambda c: c.chunk_id)
                    out.append((a.chunk_id, b.chunk_id, a.doc_id, b.doc_id, round(sim, 4)))
    return sorted(out)

