"""A trace stays small whatever the corpus (issue 27: a 5-character question wrote a 2.18 MB trace, the paragraphs of
a large upload copied in): a long paragraph the judge read is kept once by its hash beside the traces, the trace
names it, loading puts it back (checked against its hash), replay still reaches the same decision, and pruning
removes what no kept trace names."""
from __future__ import annotations

import asyncio
import os
import time

import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.corpus import Corpus
from pipeline.replay import replay
from pipeline.trace import PARAGRAPHS, load_trace, prune_traces

pytestmark = pytest.mark.integration

FILLER = " ".join(f"Kalimat pengisi nomor {i} tentang administrasi umum yang tidak mengatur tarif." for i in range(1500))
NOTE = f"""---
id: catatan-panjang
title: Catatan Panjang Pajak Sewa
doc_type: guidance
lang: id
---

Tarif Pajak Penghasilan atas persewaan tanah dan bangunan adalah 10% dari jumlah bruto nilai persewaan. {FILLER}
"""


def test_a_long_paragraph_is_kept_once_beside_the_traces_and_the_trace_stays_small(tmp_path, profile):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "catatan.md").write_text(NOTE, encoding="utf-8")
    traces = tmp_path / "traces"
    with Corpus(tmp_path / "data", profile, embedder=FakeHashEmbedder()) as corpus:
        corpus.ingest([tmp_path / "docs"])
        orch = corpus.orchestrator(trace_dir=traces)
        _, first = asyncio.run(orch.run("Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"))
        _, second = asyncio.run(orch.run("Berapa tarif pajak sewa tanah dan bangunan?"))
        analyzer = orch.analyzer
    read = [p for part in first.parts for a in part.attempts for p in a.paragraphs.values()]
    assert max(map(len, read)) > 40_000  # the judge read the whole long paragraph
    path = traces / f"{first.trace_id}.json"
    assert os.path.getsize(path) < 200_000 and max(read, key=len) not in path.read_text(encoding="utf-8")
    kept = list((traces / PARAGRAPHS).iterdir())
    assert kept and len(kept) == len({p for p in read if len(p) > 2_000})  # one copy, shared by both traces
    loaded = load_trace(path)
    assert [a.paragraphs for p in loaded.parts for a in p.attempts] == \
        [a.paragraphs for p in first.parts for a in p.attempts]
    assert asyncio.run(replay(loaded, analyzer)).same
    # a paragraph file changed is read as empty, not as what was read
    kept[0].write_text("diubah", encoding="utf-8")
    assert all(len(t) <= 2_000 or t == "" for a in load_trace(path).parts[0].attempts for t in a.paragraphs.values())
    # pruning: the traces gone, their paragraphs with them
    for p in traces.glob("*.json"):
        old = time.time() - 40 * 86400
        os.utime(p, (old, old))
    assert prune_traces(traces, 30, None) == 2
    assert not list((traces / PARAGRAPHS).iterdir())
    assert second.trace_id
