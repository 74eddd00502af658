"""`saksi doctor`: on a machine without the weights or a GPU it stops at once with the messages of
`saksi models check`; with every model present (the tiny random-init models) it loads them,
ingests the sample corpus, asks its questions and writes every section of the report."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from pipeline.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_doctor_without_weights_or_gpu_fails_fast_with_the_models_check_messages(tmp_path):
    """The real entry point, gpu profile, on this machine: non-zero before loading anything, naming
    each missing model like `saksi models check` does, and the missing GPU. The time bound guards
    against a hang (something loading or downloading), it is not a speed target."""
    env_home = {k: v for k, v in os.environ.items() if k != "SAKSI_CONFIG_DIR"}
    env_home.update(HF_HUB_CACHE=str(tmp_path / "hf-cache"), HF_HUB_OFFLINE="1")
    cmd = [sys.executable, "-m", "pipeline.cli"]
    t = time.perf_counter()
    doctor = subprocess.run([*cmd, "doctor", "--profile", "gpu", "--out", str(tmp_path / "doctor.json")], cwd=ROOT,
                            env=env_home, capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - t
    check = subprocess.run([*cmd, "models", "check", "--profile", "gpu"], cwd=ROOT, env=env_home,
                           capture_output=True, text=True, timeout=300)
    assert doctor.returncode == check.returncode == 1, doctor.stderr
    assert elapsed < 120
    missing = [line for line in check.stdout.splitlines() if "MISSING" in line]
    assert missing and any("is not available offline" in line for line in missing)
    for line in missing:  # the same words as models check
        assert line in doctor.stdout
    import torch

    if not torch.cuda.is_available():
        assert "no GPU" in doctor.stdout
    assert "stopped before loading any model" in doctor.stderr
    report = json.loads((tmp_path / "doctor.json").read_text())
    assert report["ok"] is False and report["stage"] == "preflight"
    assert report["preflight"]["gpu"]["needed_by"] == ["generator (vllm)"]


def test_doctor_runs_end_to_end_on_the_tiny_models(tiny_config_dir, tmp_path, monkeypatch, capsys):
    """The plumbing, not quality: every model of a profile is a tiny random-init model, so the
    generator writes garbage and the structured-output pass rate may well be 0 — that is fine.
    What is checked is that each section is measured and has sane types."""
    monkeypatch.setenv("SAKSI_CONFIG_DIR", str(tiny_config_dir))
    out, data = tmp_path / "doctor.json", tmp_path / "doctor-data"
    assert main(["doctor", "--profile", "tiny", "--out", str(out), "--data-dir", str(data)]) == 0
    text = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["ok"] is True and report["stage"] == "done" and report["preflight"]["ok"] is True

    assert set(report["models"]) == {"embedder", "reranker", "judge", "generator"}
    assert report["models"]["generator"]["name"].startswith("transformers/")
    assert report["corpus"]["chunks"] > 0 and not report["corpus"]["errors"]
    assert len(report["questions"]) == 6
    assert {q["outcome"] for q in report["questions"]} <= {"answer", "refusal"}
    assert all((data / "traces" / f"{q['trace_id']}.json").is_file() for q in report["questions"])

    s = report["structured_output"]
    assert s["outputs"] > 0 and 0.0 <= s["pass_rate"] <= 1.0
    q = report["quotes"]
    assert q["share_verbatim"] is None if q["claims"] == 0 else 0.0 <= q["share_verbatim"] <= 1.0
    t = report["throughput"]
    assert t["tokens_counted_by"] == "the generator's tokenizer"
    assert t["single"]["tokens_per_s"] > 0 and t["concurrent"]["tokens_per_s"] > 0
    assert t["concurrent"]["requests"] == 8
    assert isinstance(report["determinism"]["same_bytes_twice"], bool)
    assert report["determinism"]["same_bytes_twice"] is True  # greedy transformers on CPU
    assert report["gpu_memory"] == "no GPU"
    assert report["judge_agreement"]["agreement"] is None and "no GPU" in report["judge_agreement"]["status"]

    for section in ("models", "corpus", "questions", "throughput", "structured output", "verbatim quotes",
                    "judge agreement", "gpu memory", "determinism"):
        assert section in text, section


def test_judge_agreement_compares_float32_with_bfloat16(tiny_config_dir, monkeypatch):
    """The comparison a GPU run makes, forced on CPU: the same pairs in both dtypes, the share with
    the same label (the tiny model's labels mean nothing; the counting is what is checked)."""
    import asyncio

    from pipeline.backends import make_judge
    from pipeline.config import load_profile
    from pipeline.cli.doctor import judge_agreement
    from pipeline.types import JudgeInput

    monkeypatch.setenv("SAKSI_CONFIG_DIR", str(tiny_config_dir))
    profile = load_profile("tiny")
    pairs = [JudgeInput("tarif pajak 10 persen", "tarif pajak penghasilan atas sewa tanah adalah 10 persen"),
             JudgeInput("denda sanksi administrasi", "laporan keuangan entitas diakui pada nilai wajar")]
    got = asyncio.run(judge_agreement(profile, make_judge(profile), pairs))
    assert got["reference"] == "float32" and got["candidate"] == "bfloat16" and got["pairs"] == 2
    assert 0.0 <= got["agreement"] <= 1.0 and got["max_score_diff"] >= 0
