"""Tiny models, built once per session into a temp dir (see tiny.py). Every test here is
marked `models`; the torch/transformers stack comes from the `models` extra."""
from __future__ import annotations

import os

import pytest

# the models here are built locally; any attempt to reach the Hugging Face Hub is a bug, and
# should fail at once rather than wait on a network this machine may not have
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

try:  # `make test` installs the models extra; without it these tests fail loudly rather than skip
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover
    raise ImportError("tests/models need the `models` extra: pip install -e '.[dev,models]'") from e

from . import tiny  # noqa: E402


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/models/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.models)


@pytest.fixture(scope="session")
def bge_m3_dir(tmp_path_factory):
    return tiny.build_bge_m3(tmp_path_factory.mktemp("bge-m3"))


@pytest.fixture(scope="session")
def cross_encoder_dir(tmp_path_factory):
    return tiny.build_cross_encoder(tmp_path_factory.mktemp("reranker"))


@pytest.fixture(scope="session")
def nli_dir(tmp_path_factory):
    return tiny.build_nli(tmp_path_factory.mktemp("nli"))


@pytest.fixture(scope="session")
def causal_lm_dir(tmp_path_factory):
    return tiny.build_causal_lm(tmp_path_factory.mktemp("qwen2"))


@pytest.fixture(scope="session")
def tiny_config_dir(tmp_path_factory, bge_m3_dir, cross_encoder_dir, nli_dir, causal_lm_dir):
    """A copy of configs/ with a `tiny` profile: every real backend, on the tiny models, so the
    CLI and the Serve deployments load them by profile name, as users do."""
    import shutil
    from pathlib import Path

    import yaml

    src = Path(__file__).resolve().parents[2] / "configs"
    dst = tmp_path_factory.mktemp("configs") / "configs"
    shutil.copytree(src, dst)
    profile = yaml.safe_load((src / "full-cpu.yaml").read_text(encoding="utf-8"))
    profile["profile"] = "tiny"
    profile["embedder"].update(model=str(bge_m3_dir), max_length=128)
    profile["reranker"].update(model=str(cross_encoder_dir), max_length=128)
    profile["judge"].update(model=str(nli_dir))
    profile["generator"]["local"].update(model=str(causal_lm_dir), max_tokens=24, context_tokens=512)
    (dst / "tiny.yaml").write_text(yaml.safe_dump(profile, allow_unicode=True), encoding="utf-8")
    return dst
