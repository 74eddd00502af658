"""A data directory moved or copied after ingest (a restore from backup, a copy to a server) still reads its own
renditions: a passage's text is a slice of its document's rendition, and receipts, the document view and the eval's
contract check read them. The store records them by absolute path; it reads them from its own texts/ (pipeline/index/
store.py `_relocated`)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.corpus import Corpus
from pipeline.corpus.reading import text_view

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration


def test_a_moved_data_directory_reads_each_passage_from_its_own_renditions(tmp_path, profile):
    before, after = tmp_path / "before", tmp_path / "moved" / "after"
    corpus = Corpus(before, profile, embedder=FakeHashEmbedder())
    corpus.ingest([SAMPLE])
    corpus.close()
    shutil.move(str(before), str(after))
    corpus = Corpus(after, profile, embedder=FakeHashEmbedder())
    try:
        texts = (after / "texts").resolve()
        documents = [d for d, _ in corpus.store.documents()]
        assert documents and all(Path(d.rendition).parent == texts for d in documents)
        chunks = corpus.store.get(corpus.store.ids())
        assert chunks
        for chunk in chunks.values():
            assert Path(chunk.rendition).parent == texts
            assert Path(chunk.rendition).read_text(encoding="utf-8")[chunk.start:chunk.end] == chunk.text
        view = text_view(corpus, documents[0])
        assert view["text"] and view["length"] > 0  # the document view reads the moved text
    finally:
        corpus.close()
    assert not before.exists()  # nothing was read from where it was ingested
