"""`saksi bulk-ingest` on Ray Data builds exactly the corpus `saksi ingest` builds."""
from __future__ import annotations

import json
import re
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.config import load_profile
from pipeline.corpus import Corpus
from pipeline.corpus.ingestor import SilentMeter
from serve.bulk_ingest import bulk_ingest
from serve.cli import main

from ..conftest import SAMPLE, require_regulations

pytestmark = pytest.mark.integration

REGULATIONS = ("pmk-098-2025.md", "pmk-117-2025.md", "pmk-119-2025.md")


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> list[Path]:
    """The sample corpus, three real regulations and a PDF that is not one."""
    regulations = require_regulations()
    missing = [n for n in REGULATIONS if not (regulations / n).is_file()]
    if missing:
        pytest.fail(f"shared regulations missing from {regulations}: {missing}")
    broken = tmp_path_factory.mktemp("broken") / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 16)
    return [SAMPLE, *(regulations / n for n in REGULATIONS), broken]


@pytest.fixture(scope="module")
def built(tmp_path_factory, ray_session, sources):
    """The same files ingested in process and in bulk, into two data directories."""
    here, bulk = tmp_path_factory.mktemp("in-process"), tmp_path_factory.mktemp("bulk")
    with Corpus(here, load_profile(), embedder=FakeHashEmbedder()) as corpus:
        local = corpus.ingest(sources)
    remote = bulk_ingest(sources, "lite", bulk, batch_size=16, embedder_factory=FakeHashEmbedder)
    return here, local, bulk, remote


def portable(value, data_dir: Path) -> str:
    """JSON with the data directory's path taken out (renditions live under it), and the time each
    chunk's document was ingested (provenance: the two ingests ran at different moments)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str).replace(str(data_dir.resolve()), "<data>")
    return re.sub(r'"uploaded_at": "[^"]*"', '"uploaded_at": "<when>"', text)


def test_bulk_report_matches_the_in_process_one(built):
    _, local, _, remote = built
    assert remote.as_dict() == local.as_dict()
    assert [Path(e.path).name for e in remote.errors] == ["broken.pdf"]
    assert len(remote.ingested) == remote.files - 1 and remote.chunks_written == remote.total_chunks > 0


def test_bulk_corpus_is_the_in_process_corpus(built):
    here, _, bulk, _ = built
    with Corpus(here, load_profile(), embedder=FakeHashEmbedder()) as a, \
            Corpus(bulk, load_profile(), embedder=FakeHashEmbedder()) as b:
        ids = a.store.ids()
        assert b.store.ids() == ids and b.store.fingerprint() == a.store.fingerprint()
        assert (portable({k: asdict(c) for k, c in b.store.get(ids).items()}, bulk)
                == portable({k: asdict(c) for k, c in a.store.get(ids).items()}, here))

        def manifest(corpus, data_dir):
            return portable([{k: v for k, v in m.as_dict().items() if k != "ingested_at"} | {"document": asdict(m.document)}
                             for m in corpus.store.manifest()], data_dir)

        assert manifest(b, bulk) == manifest(a, here)
        resolved = [r for r in a.store.references() if r.status == "resolved"]
        assert resolved and b.store.references() == a.store.references()
        assert b.store.near_duplicates() == a.store.near_duplicates()
        assert json.loads((bulk / "state.json").read_text()) == json.loads((here / "state.json").read_text())
        assert sorted(p.name for p in (bulk / "texts").iterdir()) == sorted(p.name for p in (here / "texts").iterdir())
        assert b.dense.count() == a.dense.count() == len(ids)
        sample = ids[::max(1, len(ids) // 40)]

        def vectors(corpus):
            rows = corpus.dense._client.get(corpus.dense.collection, ids=sample, output_fields=["vector"])
            return np.asarray([v["vector"] for v in sorted(rows, key=lambda r: sample.index(r["id"]))])

        assert len(vectors(b)) == len(sample)
        np.testing.assert_array_equal(vectors(b), vectors(a))


def test_second_bulk_run_changes_nothing(built, sources):
    _, _, bulk, first = built
    state = (bulk / "state.json").read_bytes()
    with Corpus(bulk, load_profile(), embedder=FakeHashEmbedder()) as c:
        manifest = c.store.manifest()
    again = bulk_ingest(sources, "lite", bulk, embedder_factory=FakeHashEmbedder)
    assert again.ingested == [] and sorted(again.unchanged) == sorted(first.ingested)
    assert [e.reason for e in again.errors] == [e.reason for e in first.errors]
    assert again.embedded == 0 and again.total_chunks == first.total_chunks
    assert (bulk / "state.json").read_bytes() == state
    with Corpus(bulk, load_profile(), embedder=FakeHashEmbedder()) as c:
        assert c.store.manifest() == manifest


def test_rebuild_gives_the_same_corpus(built, sources, tmp_path):
    _, _, bulk, first = built
    copy = tmp_path / "data"
    shutil.copytree(bulk, copy)
    again = bulk_ingest(sources, "lite", copy, rebuild=True, embedder_factory=FakeHashEmbedder)
    assert again.ingested == first.ingested and again.unchanged == [] and again.embedded == first.embedded
    assert (copy / "state.json").read_bytes() == (bulk / "state.json").read_bytes()


def test_cli_bulk_ingest(ray_session, tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["bulk-ingest", str(SAMPLE), "--data-dir", str(data), "--batch-size", "8"]) == 0
    out = capsys.readouterr().out
    assert f"{data}: 4 ingested, 0 unchanged, 0 skipped; corpus has 4 documents" in out
    assert main(["bulk-ingest", str(SAMPLE), "--data-dir", str(data), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ingested"] == [] and len(report["unchanged"]) == 4 and report["errors"] == []
    with Corpus(data, load_profile()) as corpus:
        assert corpus.check() == corpus.store.fingerprint()


class _Interrupt(SilentMeter):
    """A meter that stops the job (as Ctrl-C would) once `after` documents are committed."""

    def __init__(self, after: int):
        self.after, self.done = after, 0

    def file_done(self):
        self.done += 1
        if self.done == self.after:
            raise KeyboardInterrupt


def test_an_interrupted_job_resumes_where_it_stopped(built, sources, tmp_path):
    """Stopped after two documents, run again: the committed ones are unchanged, the rest go in, nothing
    is embedded twice, and the corpus is the one an uninterrupted job built."""
    _, _, bulk, first = built
    data = tmp_path / "data"
    with pytest.raises(KeyboardInterrupt):
        bulk_ingest(sources, "lite", data, batch_size=16, embedder_factory=FakeHashEmbedder, meter=_Interrupt(2))
    with Corpus(data, load_profile(), embedder=FakeHashEmbedder()) as c:
        kept = [d.doc_id for d, _ in c.store.documents()]
        kept_chunks = c.store.count()
    assert len(kept) == 2
    resumed = bulk_ingest(sources, "lite", data, batch_size=16, embedder_factory=FakeHashEmbedder)
    assert len(resumed.unchanged) == 2 and len(resumed.ingested) == len(first.ingested) - 2
    assert resumed.total_chunks == first.total_chunks
    assert resumed.embedded == first.total_chunks - kept_chunks  # the committed documents' chunks are not redone
    assert json.loads((data / "state.json").read_text()) == json.loads((bulk / "state.json").read_text())
    with Corpus(bulk, load_profile(), embedder=FakeHashEmbedder()) as a, \
            Corpus(data, load_profile(), embedder=FakeHashEmbedder()) as b:
        assert b.store.ids() == a.store.ids() and b.store.fingerprint() == a.store.fingerprint()
        assert b.dense.count() == a.dense.count()


def test_cli_reads_paths_from_a_file_and_says_its_rate(ray_session, tmp_path, capsys):
    files = sorted(p for p in SAMPLE.iterdir() if p.suffix == ".md" and p.name != "README.md")[:2]
    listing = tmp_path / "order.txt"
    listing.write_text("".join(f"{p}\n" for p in reversed(files)))
    data = tmp_path / "data"
    assert main(["bulk-ingest", f"@{listing}", "--data-dir", str(data), "--batch-size", "8"]) == 0
    captured = capsys.readouterr()
    assert f"{data}: 2 ingested, 0 unchanged, 0 skipped" in captured.out
    assert re.search(r"embedded \d+ passages with the model in \d+ s: [\d.]+ passages/s, [\d.]+ per CPU core "
                     r"\([\d.]+ CPUs in the Ray cluster\)", captured.err), captured.err
