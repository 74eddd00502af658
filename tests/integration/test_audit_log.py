"""Every answer, ingest and delete enters the data directory's audit log; `saksi audit verify`
names the line someone changed."""
from __future__ import annotations

import asyncio
import json

import pytest

from pipeline.audit import file_hash
from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.cli import main
from pipeline.corpus import Corpus

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration


def test_answers_ingests_and_deletes_are_chained_and_verified(tmp_path, profile, capsys):
    data = tmp_path / "data"
    with Corpus(data, profile, embedder=FakeHashEmbedder()) as corpus:
        corpus.ingest([SAMPLE])
        result = asyncio.run(corpus.orchestrator().answer("Berapa tarif pajak penghasilan atas persewaan tanah?"))
        doc = corpus.store.documents()[0][0].doc_id
        assert corpus.delete(doc, actor="curator-1")
    entries = [json.loads(x) for x in (data / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    documents = [e for e in entries if e["event"] == "ingest_document"]  # one per document, with its write
    assert len(documents) >= 4 and all(e["key"] == "local" and e["data"]["source_hash"] for e in documents)
    entries = [e for e in entries if e["event"] != "ingest_document"]
    assert [e["event"] for e in entries] == ["ingest", "answer", "delete"]
    ingest, answer, delete = entries
    assert ingest["key"] == "local" and ingest["data"]["documents"] >= 4 and ingest["data"]["ingested"]
    assert answer["data"]["trace_id"] == result.trace_id
    assert answer["data"]["trace_sha256"] == file_hash(result.trace_path)  # the trace as written, unchanged since
    assert delete["key"] == "curator-1" and delete["data"]["doc_id"] == doc

    capsys.readouterr()
    assert main(["audit", "verify", "--data-dir", str(data)]) == 0
    assert f"intact: {len(documents) + 3} entries" in capsys.readouterr().out

    lines = (data / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if '"event":"answer"' in line)
    lines[at] = lines[at].replace('"answer"', '"refusal"', 1)
    (data / "audit.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["audit", "verify", "--data-dir", str(data), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["line"] == at + 1 and "edited" in report["problem"]
