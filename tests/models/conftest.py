"""Tiny models, built once per session into a temp dir (see tiny.py). Every test here is
marked `models`; the torch/transformers stack comes from the `models` extra."""
from __future__ import annotations

import os

import pytest

# the models here are built locally; any attempt to reach the Hugging Face Hub is a bug, and
# should fail at once rather than wait on a network this machine may not have
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytest.importorskip("torch", reason="the `models` extra is not installed (pip install -e '.[models]')")

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
