"""A collection described for the page (issue 26, first steps): `saksi ingest --description/--example` writes its
`about.json`, refused upfront when too long; and every ingest's finalize records whether all its documents are
illustrations (the ask page does not preselect such a collection)."""
from __future__ import annotations

import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.cli import main as saksi
from pipeline.corpus import Corpus, DataDir

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration

REAL = "---\nid: nyata\ntitle: Peraturan Nyata\ndoc_type: regulation\nlang: id\n---\n\nPasal 1\n\nTarif adalah 5%.\n"


def test_finalize_says_whether_every_document_is_an_illustration(tmp_path, profile):
    data = DataDir(tmp_path / "data")
    with Corpus(data, profile, embedder=FakeHashEmbedder()) as c:
        c.ingest([SAMPLE])
        assert data.about().illustrative  # the sample corpus is fiction, and says so in its front matter
        (tmp_path / "real").mkdir()
        (tmp_path / "real" / "nyata.md").write_text(REAL, encoding="utf-8")
        c.ingest([tmp_path / "real"])
        assert not data.about().illustrative
        c.delete("nyata")
        assert data.about().illustrative


def test_saksi_ingest_describes_a_collection_and_refuses_a_description_too_long(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("pipeline.corpus.corpus.make_embedder", lambda profile: FakeHashEmbedder())
    monkeypatch.setattr("pipeline.corpus.corpus.embedder_name", lambda settings: FakeHashEmbedder().name)
    root = tmp_path / "data"
    assert saksi(["ingest", str(SAMPLE), "--data-dir", str(root), "--collection", "contoh",
                  "--description", "Dokumen fiktif.", "--example", "Berapa tarif?", "--example", "Kapan?"]) == 0
    about = DataDir(root).collection("contoh").about()
    assert (about.description, about.examples, about.illustrative) == ("Dokumen fiktif.", ["Berapa tarif?", "Kapan?"],
                                                                       True)
    assert saksi(["ingest", str(SAMPLE), "--data-dir", str(root), "--collection", "contoh",
                  "--description", "x" * 501]) == 2
    assert "description" in capsys.readouterr().err
    assert DataDir(root).collection("contoh").about().description == "Dokumen fiktif."  # kept
