"""A `kill -9` at each step of an upload (issue 27): parsing, embedding, writing, and (a server's upload) between the
write and the swap of the derived state. Whatever step it hit, the data
directory opens (`check_collections`, what `saksi serve` runs first: it completes an interrupted ingest and says
so), serves, and its audit log and corpus agree: every document the store holds has its `ingest_document` entry
(written in the same transaction as the document, moved to the log after), and none that it does not hold."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from pipeline.audit import verify
from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.corpus import Corpus, DataDir, check_collections

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration

UPLOAD = """---
id: catatan-baru
title: Catatan Baru Pajak Sewa
doc_type: guidance
lang: id
---

1. Catatan ini menjelaskan tata cara penyetoran Pajak Penghasilan atas persewaan tanah dan bangunan.

2. Penyetoran dilakukan paling lambat tanggal 15 bulan berikutnya.
"""

# the step of an upload a process is killed at: the method that has just run when it dies
STEPS = {"parse": "pipeline.ingest.prepare.DocumentPreparer.prepare",
         "embed": "pipeline.corpus.ingestor.Ingestor._write_vectors",
         "write": "pipeline.index.store.ChunkStore.replace_document",
         # a server's upload (serve/deployments.py): the rows written, the derived state computed, not yet swapped in
         "swap": "pipeline.corpus.ingestor.Ingestor.derive"}

CHILD = textwrap.dedent("""
    import importlib, os, sys
    from pathlib import Path
    from pipeline.backends.fakes import FakeHashEmbedder
    from pipeline.config import load_profile
    from pipeline.corpus import Corpus
    from pipeline.corpus.ingestor import Upload

    target, data, folder = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    module, cls, name = target.rsplit(".", 2)
    owner = getattr(importlib.import_module(module), cls)
    original = getattr(owner, name)
    def dying(*a, **kw):
        original(*a, **kw)
        os._exit(137)  # as kill -9 would, right after this step
    setattr(owner, name, dying)
    with Corpus(data, load_profile(), embedder=FakeHashEmbedder()) as c:
        if name == "derive":  # as the Retriever does: write, derive with the lock free, then apply
            from pipeline.corpus.ingestor import Ingestor
            ingestor = Ingestor(c, None, "key:curator", Upload("unknown"), defer_vectors=True)
            report = ingestor.ingest([folder], finalize=False)
            ingestor.apply(ingestor.derive(), report)
        else:
            c.ingest([folder], actor="key:curator", upload=Upload("unknown"))
""")


@pytest.mark.parametrize("step", list(STEPS))
def test_a_kill_at_any_step_of_an_upload_leaves_a_directory_that_serves_and_agrees_with_its_log(
        step, tmp_path, profile, monkeypatch):
    monkeypatch.setattr("pipeline.corpus.corpus.make_embedder", lambda profile: FakeHashEmbedder())
    monkeypatch.setattr("pipeline.corpus.corpus.embedder_name", lambda settings: FakeHashEmbedder().name)
    data = tmp_path / "data"
    with Corpus(data, profile, embedder=FakeHashEmbedder()) as c:
        c.ingest([SAMPLE])
    folder = tmp_path / "upload"
    folder.mkdir()
    (folder / "catatan-baru.md").write_text(UPLOAD, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", CHILD, STEPS[step], str(data), str(folder)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 137, done.stderr[-2000:]

    said = []
    counts, damaged = check_collections(data, profile, say=said.append)
    assert not damaged and counts["default"] > 0, damaged
    if step == "write":  # the document was written: its entry was with it, and the indexes are completed
        assert said and "recovered" in said[0], said
    if step == "swap":  # its entry already in the log; the derived state and its vectors completed from the store
        assert said and "an interrupted ingest completed" in said[0], said
    with Corpus(data, profile) as c:
        c.check()  # serves
        held = {d.doc_id for d, _ in c.store.documents()}
        assert c.store.pending_audit() == []
    entries = [json.loads(line) for line in (data / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    recorded = {e["data"]["doc_id"] for e in entries if e["event"] == "ingest_document"}
    assert recorded <= held and ("catatan-baru" in held) == ("catatan-baru" in recorded)
    assert ("catatan-baru" in held) == (step in ("write", "swap"))
    assert verify(data).ok
    assert DataDir(data).state() is not None
