"""The embedding cache's read-only view (bulk-ingest's actors): reads what the writer stored, writes nothing."""
from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from pipeline.index.embedding_cache import FILENAME, EmbeddingCache

pytestmark = pytest.mark.unit

TEXTS = ["Pasal 3 ayat (1) tarif 10%", "Pasal 7 denda Rp100.000"]


def test_no_cache_to_read_is_none_and_creates_nothing(tmp_path):
    assert EmbeddingCache.reader(tmp_path) is None
    assert EmbeddingCache.reader(tmp_path / "elsewhere") is None
    assert not (tmp_path / FILENAME).exists() and not (tmp_path / "elsewhere").exists()


def test_the_reader_sees_the_writer_s_vectors_and_cannot_write(tmp_path):
    writer = EmbeddingCache(tmp_path)
    reader = EmbeddingCache.reader(tmp_path)
    assert reader is not None and reader.get("m", TEXTS) == {}
    dense = np.arange(2 * 4, dtype=np.float32).reshape(2, 4) / 10
    writer.put("m", TEXTS, dense, [{3: 0.5}, {}])  # stored after the reader opened: it sees them
    got = reader.get("m", TEXTS + ["unknown"])
    assert set(got) == {0, 1} and reader.get("other-model", TEXTS) == {}
    np.testing.assert_array_equal(np.stack([got[0][0], got[1][0]]), dense)
    assert got[0][1] == {3: 0.5}
    with pytest.raises(sqlite3.OperationalError):
        reader.put("m", ["new"], dense[:1], None)
    reader.close()
    writer.close()
