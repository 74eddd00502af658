"""The README's commands with a real-model profile (every backend on tiny models): models
check, ingest, ask, replay — the path a user takes with full-cpu or gpu."""
from __future__ import annotations

import json

from pipeline.cli import main

from ..conftest import SAMPLE


def test_models_check_ingest_ask_and_replay_with_real_backends(tiny_config_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SAKSI_CONFIG_DIR", str(tiny_config_dir))
    data = str(tmp_path / "data")
    assert main(["models", "check", "--profile", "tiny"]) == 0
    assert "all available" in capsys.readouterr().out

    assert main(["ingest", str(SAMPLE), "--profile", "tiny", "--data-dir", data, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ingested"] and not report["errors"] and report["embedded"] == report["total_chunks"]

    assert main(["ask", "Berapa tarif PPh final atas sewa tanah dan bangunan?", "--profile", "tiny",
                 "--data-dir", data, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    # a random-init 2-layer model cannot write the claim JSON: the answer is a refusal naming why
    assert answer["outcome"] == "refusal"
    trace = json.loads((tmp_path / "data" / "traces" / f"{answer['trace_id']}.json").read_text())
    assert trace["components"]["generator"].startswith("transformers/")
    assert trace["components"]["embedder"].startswith("bge-m3/")
    first = trace["parts"][0]["attempts"][0]
    assert first["failure"] is not None or first["claims"] == []
    assert any(c["sparse_rank"] is not None for c in first["candidates"])
    assert all("cross_encoder" in c["rerank_components"] for c in first["candidates"] if c["rerank_score"] is not None)

    assert main(["replay", answer["trace_id"], "--profile", "tiny", "--data-dir", data]) == 0

    # the lite profile refuses this corpus rather than misreading BGE-M3 vectors
    monkeypatch.delenv("SAKSI_CONFIG_DIR")
    assert main(["ask", "Berapa tarif PPh?", "--data-dir", data]) == 2
    assert "--rebuild" in capsys.readouterr().err
