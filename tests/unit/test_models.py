"""Model resolution (offline: a local directory or the local HF cache) and `saksi models check`.
No torch needed: these run in every environment."""
from __future__ import annotations

import json

import pytest

from pipeline.cli import main
from pipeline.config import load_profile
from pipeline.models import ModelUnavailable, check_profile, hf_cache_dir, resolve_model

pytestmark = pytest.mark.unit


def _model_dir(path):
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text("{}")
    return path


def test_a_local_directory_resolves_to_itself(tmp_path):
    d = _model_dir(tmp_path / "my-model")
    assert resolve_model(str(d), "judge") == d


def test_a_hub_id_resolves_to_its_snapshot_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    repo = tmp_path / "models--BAAI--bge-m3"
    _model_dir(repo / "snapshots" / "old")
    snap = _model_dir(repo / "snapshots" / "abc123")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123\n")
    assert resolve_model("BAAI/bge-m3", "embedder") == snap


def test_a_snapshot_without_refs_is_still_found(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    snap = _model_dir(tmp_path / "models--org--m" / "snapshots" / "r1")
    assert resolve_model("org/m", "reranker") == snap


def test_an_incomplete_snapshot_does_not_count(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    (tmp_path / "models--org--m" / "snapshots" / "r1").mkdir(parents=True)  # no config.json
    with pytest.raises(ModelUnavailable):
        resolve_model("org/m", "reranker")


def test_a_missing_model_names_the_model_where_it_looked_and_how_to_fetch_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ModelUnavailable) as e:
        resolve_model("MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7", "judge")
    msg = str(e.value)
    assert "judge model 'MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7'" in msg
    assert str(tmp_path / "cache" / "models--MoritzLaurer--mDeBERTa-v3-base-xnli-multilingual-nli-2mil7") in msg
    assert "hf download MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7" in msg


def test_the_cache_location_follows_hugging_face_variables(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert hf_cache_dir() == tmp_path / "hf" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "c"))
    assert hf_cache_dir() == tmp_path / "c"


def test_lite_needs_no_models():
    report = check_profile(load_profile("lite"))
    assert report["ok"] and report["models"] == [] and report["libraries"] == []


@pytest.mark.parametrize("profile, roles", [("gpu", {"embedder", "reranker", "generator", "judge"}),
                                            ("full-cpu", {"embedder", "reranker", "generator", "judge"})])
def test_production_profiles_report_every_missing_model(profile, roles, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    report = check_profile(load_profile(profile))
    assert not report["ok"]
    assert {m["role"] for m in report["models"]} == roles
    assert all(not m["available"] and f"hf download {m['name']}" in m["error"] for m in report["models"])


def test_a_present_model_is_reported_available(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    snap = _model_dir(tmp_path / "models--BAAI--bge-m3" / "snapshots" / "r")
    report = check_profile(load_profile("gpu"))
    emb = next(m for m in report["models"] if m["role"] == "embedder")
    assert emb["available"] and emb["path"] == str(snap)
    assert not report["ok"]  # the others are still missing


def test_models_check_cli_exits_non_zero_with_fetch_commands(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert main(["models", "check", "--profile", "gpu"]) == 1
    out = capsys.readouterr().out
    for name in ("BAAI/bge-m3", "BAAI/bge-reranker-v2-m3", "Qwen/Qwen2.5-7B-Instruct",
                 "MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7"):
        assert f"hf download {name}" in out
    assert main(["models", "check", "--profile", "gpu", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["ok"] is False
    assert main(["models", "check"]) == 0
