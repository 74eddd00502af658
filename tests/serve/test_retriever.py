"""The retriever deployment's class, in process: it follows ingests made by someone else."""
from __future__ import annotations

import asyncio
import shutil

import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.config import load_profile
from pipeline.corpus import Corpus
from serve.deployments import RetrieverDeployment

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration


def test_retriever_reloads_when_another_writer_ingests(tmp_path, monkeypatch):
    # the fake embedder on both sides: the state file names the embedder, and both must agree
    monkeypatch.setattr("pipeline.corpus.corpus.make_embedder", lambda profile: FakeHashEmbedder())
    monkeypatch.setattr("pipeline.corpus.corpus.embedder_name", lambda settings: FakeHashEmbedder().name)
    data = tmp_path / "data"
    with Corpus(data, load_profile()) as c:
        c.ingest([SAMPLE])
    retriever = RetrieverDeployment.func_or_class("lite", str(data))
    before = asyncio.run(retriever.ready())
    assert before["ready"] and before["chunks"] > 0

    extra = tmp_path / "more"
    extra.mkdir()
    shutil.copy(SAMPLE / next(p.name for p in SAMPLE.iterdir() if p.suffix == ".md" and p.name != "README.md"),
                extra / "copy-under-another-id.md")
    text = (extra / "copy-under-another-id.md").read_text(encoding="utf-8")
    (extra / "copy-under-another-id.md").write_text(text.replace("id: ", "id: x-", 1), encoding="utf-8")
    # another writer (a job, another replica). In one process both share Milvus Lite's server for
    # the file; closing the writer would stop it under the retriever, so it stays open here. (Across
    # processes this needs a Milvus server: Lite lets one process own a file.)
    writer = Corpus(data, load_profile())
    report = writer.ingest([extra])
    writer.store.close()
    assert report.ingested and not report.errors, report.as_dict()
    after = asyncio.run(retriever.ready())
    assert after["ready"] and after["chunks"] == report.total_chunks > before["chunks"]
    ix = retriever.indexes()
    hits = asyncio.run(ix.lexical.search(["tarif"], 50))
    chunks = asyncio.run(ix.chunks.get([cid for cid, _ in hits]))
    assert any(ch.doc_id.startswith("x-") for ch in chunks.values())


def test_a_damaged_collection_is_out_of_service_while_the_others_serve(tmp_path, monkeypatch):
    """Issue 27: one collection's damaged index no longer stops the server; readiness names it."""
    from pipeline.corpus import DataDir

    monkeypatch.setattr("pipeline.corpus.corpus.make_embedder", lambda profile: FakeHashEmbedder())
    monkeypatch.setattr("pipeline.corpus.corpus.embedder_name", lambda settings: FakeHashEmbedder().name)
    data = tmp_path / "data"
    for name in ("default", "bcol"):
        with Corpus(DataDir(data).collection(name), load_profile()) as c:
            c.ingest([SAMPLE])
    (data / "collections" / "bcol" / "state.json").write_text("[]")  # its index damaged
    retriever = RetrieverDeployment.func_or_class("lite", str(data))
    state = asyncio.run(retriever.ready())
    assert state["ready"] and state["chunks"] > 0 and "bcol" in state["problem"], state
    assert asyncio.run(retriever.documents("default"))  # the other serves
    with pytest.raises(RuntimeError, match="bcol"):
        asyncio.run(retriever.documents("bcol"))
