"""A receipt resolves to exactly the document it names (issue 27, evidence swap): an id or a citation name never
reaches another document that merely shares its letters and digits; a loose match only suggests."""
from __future__ import annotations

import pytest

from pipeline import catalog
from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.corpus import Corpus

pytestmark = pytest.mark.integration

GENUINE = """---
id: pmi-7-2025
cite_as: PMI 7/2025
title: Peraturan Menteri Ilustratif Nomor 7 Tahun 2025
doc_type: regulation
lang: id
---

Pasal 3

(1) Tarif pajak adalah 10% dari jumlah bruto.
"""
# an upload whose name shares PMI 7/2025's letters and digits; its id sorts first, so a loose match found it first
IMPOSTOR = GENUINE.replace("id: pmi-7-2025", "id: a-impostor").replace("cite_as: PMI 7/2025",
                                                                      "cite_as: PMI 7-2025").replace("10%", "1%")


@pytest.fixture
def corpus(tmp_path, profile):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "genuine.md").write_text(GENUINE, encoding="utf-8")
    (tmp_path / "docs" / "impostor.md").write_text(IMPOSTOR, encoding="utf-8")
    with Corpus(tmp_path / "data", profile, embedder=FakeHashEmbedder()) as c:
        c.ingest([tmp_path / "docs"])
        yield c


def test_an_id_and_a_citation_name_resolve_exactly_never_to_a_look_alike(corpus) -> None:
    assert [d.doc_id for d, _ in corpus.store.documents()][0] == "a-impostor"  # the look-alike comes first
    assert catalog.find_document(corpus, "pmi-7-2025").doc_id == "pmi-7-2025"  # the evidence link's id
    assert catalog.find_document(corpus, "PMI 7/2025").doc_id == "pmi-7-2025"
    assert catalog.find_document(corpus, "pmi  7/2025").doc_id == "pmi-7-2025"  # case and spacing aside
    assert catalog.find_document(corpus, "PMI 7-2025").doc_id == "a-impostor"  # its own exact name
    assert catalog.show(corpus, "pmi-7-2025")["document"]["doc_id"] == "pmi-7-2025"


def test_a_loose_match_only_suggests(corpus) -> None:
    with pytest.raises(catalog.UnknownDocument) as e:
        catalog.find_document(corpus, "pmi72025")
    assert {n.split(" (")[1].rstrip(")") for n in e.value.near} == {"pmi-7-2025", "a-impostor"}
    assert "did you mean" in str(e.value)
