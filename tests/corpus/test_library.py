"""The collections a serving process holds (`pipeline.corpus.library`), without Ray: it follows ingests made by
someone else, keeps a damaged collection out of service, and locks only for writes."""
from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.config import load_profile
from pipeline.corpus import Corpus
from pipeline.corpus.library import Library

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration


@pytest.fixture
def fake_embedder(monkeypatch):
    """The fake embedder wherever a corpus makes one: the state file names the embedder, and every side must agree."""
    monkeypatch.setattr("pipeline.corpus.corpus.make_embedder", lambda profile: FakeHashEmbedder())
    monkeypatch.setattr("pipeline.corpus.corpus.embedder_name", lambda settings: FakeHashEmbedder().name)


def test_retriever_reloads_when_another_writer_ingests(tmp_path, fake_embedder):
    data = tmp_path / "data"
    with Corpus(data, load_profile()) as c:
        c.ingest([SAMPLE])
    library = Library.local("lite", data)
    before = asyncio.run(library.ready())
    assert before["ready"] and before["chunks"] > 0

    extra = tmp_path / "more"
    extra.mkdir()
    shutil.copy(SAMPLE / next(p.name for p in SAMPLE.iterdir() if p.suffix == ".md" and p.name != "README.md"),
                extra / "copy-under-another-id.md")
    text = (extra / "copy-under-another-id.md").read_text(encoding="utf-8")
    (extra / "copy-under-another-id.md").write_text(text.replace("id: ", "id: x-", 1), encoding="utf-8")
    # another writer (a job, another replica). In one process both share Milvus Lite's server for
    # the file; closing the writer would stop it under the library, so it stays open here. (Across
    # processes this needs a Milvus server: Lite lets one process own a file.)
    writer = Corpus(data, load_profile())
    report = writer.ingest([extra])
    writer.store.close()
    assert report.ingested and not report.errors, report.as_dict()
    after = asyncio.run(library.ready())
    assert after["ready"] and after["chunks"] == report.total_chunks > before["chunks"]
    ix = library.indexes()
    hits = asyncio.run(ix.lexical.search(["tarif"], 50))
    chunks = asyncio.run(ix.chunks.get([cid for cid, _ in hits]))
    assert any(ch.doc_id.startswith("x-") for ch in chunks.values())


def test_a_damaged_collection_is_out_of_service_while_the_others_serve(tmp_path, fake_embedder):
    """Issue 27: one collection's damaged index no longer stops the server; readiness names it."""
    from pipeline.corpus import DataDir

    data = tmp_path / "data"
    for name in ("default", "bcol"):
        with Corpus(DataDir(data).collection(name), load_profile()) as c:
            c.ingest([SAMPLE])
    (data / "collections" / "bcol" / "state.json").write_text("[]")  # its index damaged
    library = Library.local("lite", data)
    state = asyncio.run(library.ready())
    assert state["ready"] and state["chunks"] > 0 and "bcol" in state["problem"], state
    assert asyncio.run(library.documents("default"))  # the other serves
    with pytest.raises(RuntimeError, match="bcol"):
        asyncio.run(library.documents("bcol"))


def test_an_upload_holds_the_collection_lock_only_for_its_writes(tmp_path, fake_embedder, monkeypatch):
    """Issue 27: an ingest locks the collection for the write of the documents' rows and for the swap of what is
    derived from them, not while it computes cross-references, the status graph, near-duplicates and the lexical
    index (readers answer meanwhile). Between the two, the new passages are in the store but in neither lane: no
    reader can retrieve a passage whose references and standing are not yet known. A delete likewise."""
    from pipeline.corpus.ingestor import Ingestor

    data = tmp_path / "data"
    with Corpus(data, load_profile()) as c:
        c.ingest([SAMPLE])
    library = Library.local("lite", data)
    assert asyncio.run(library.ready())["ready"]
    col = library.collection("default")
    seen: list[dict] = []
    derive, apply = Ingestor.derive, Ingestor.apply

    def spied_derive(self, store=None):
        ids = [c.chunk_id for c in col.corpus.store.doc_chunks("catatan-lock")]
        seen.append({"step": "derive", "locked": col.lock.locked(), "rows": len(ids),
                     "dense": len(col.corpus.dense.present(ids)) if ids else 0,
                     "lexical": sum(i in col.lexical.ids for i in ids)})
        return derive(self, store)

    def spied_apply(self, derived, report):
        seen.append({"step": "apply", "locked": col.lock.locked()})
        return apply(self, derived, report)

    monkeypatch.setattr(Ingestor, "derive", spied_derive)
    monkeypatch.setattr(Ingestor, "apply", spied_apply)
    doc = ("---\nid: catatan-lock\ntitle: Catatan Uji Kunci\ndoc_type: guidance\nlang: id\n---\n\n"
           "1. Bea meterai atas kuitansi sewa gudang uji kunci adalah Rp10.000 per dokumen.\n").encode()
    report = asyncio.run(library.ingest([("catatan-lock.md", doc)], "key:curator", "unknown"))
    assert report.ingested and not report.errors, report
    written = seen[0]
    assert seen[0]["step"] == "derive" and seen[1] == {"step": "apply", "locked": True}
    assert not written["locked"] and written["rows"] >= 1 and written["dense"] == 0 and written["lexical"] == 0
    ix = library.indexes()  # after the swap: in both lanes
    ids = [c.chunk_id for c in col.corpus.store.doc_chunks("catatan-lock")]
    assert set(ids) <= set(col.lexical.ids) and col.corpus.dense.present(ids) == set(ids)
    assert any(cid in ids for cid, _ in asyncio.run(ix.lexical.search(["kuitansi", "gudang", "kunci"], 5)))
    assert col.corpus.consistent()

    seen.clear()
    assert asyncio.run(library.delete("catatan-lock", "key:curator")) is not None
    assert [s["step"] for s in seen] == ["derive", "apply"] and not seen[0]["locked"] and seen[1]["locked"]
    assert not col.corpus.store.doc_chunks("catatan-lock") and not set(ids) & set(col.lexical.ids)
    assert not col.corpus.dense.present(ids) and col.corpus.consistent()


def test_an_upload_whose_swap_fails_keeps_the_file_its_written_rows_name(tmp_path, fake_embedder, monkeypatch):
    """Issue 27's leftover: the swap after an upload's write fails (here `Ingestor.apply` raises). The documents' rows
    are in the store, so the uploaded original stays on disk (its download must not 404), while a file whose document
    was never written is not kept; recovery then completes the swap from the store."""
    from pipeline.corpus import DataDir, Ingestor

    data = tmp_path / "data"
    with Corpus(data, load_profile()) as c:
        c.ingest([SAMPLE])
    library = Library.local("lite", data)
    assert asyncio.run(library.ready())["ready"]

    def fails(self, derived, report):
        raise OSError("disk full during the swap")

    real_apply = Ingestor.apply
    monkeypatch.setattr(Ingestor, "apply", fails)
    doc = ("---\nid: catatan-swap\ntitle: Catatan Uji Tukar\ndoc_type: guidance\nlang: id\n---\n\n"
           "1. Bea meterai atas kuitansi sewa gudang uji tukar adalah Rp10.000 per dokumen.\n").encode()
    with pytest.raises(OSError, match="disk full"):
        asyncio.run(library.ingest([("catatan-swap.md", doc), ("kosong.md", b"   ")], "key:curator", "unknown"))
    col = library.collection("default")
    written = col.corpus.store.document("catatan-swap")
    assert written is not None and Path(written.original).is_file()  # its rows are in the store: the file stays
    assert not (Path(written.original).parent / "kosong.md").exists()  # never written: not kept

    monkeypatch.setattr(Ingestor, "apply", real_apply)
    col.corpus.close()
    with Corpus(DataDir(data), load_profile()) as c:
        assert Ingestor(c).recover() is not None  # the next start completes the swap from the store
        assert c.store.document("catatan-swap") is not None and c.consistent()
