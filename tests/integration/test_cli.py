"""The `saksi` command as a user runs it, on the sample corpus with the real lite profile."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from pipeline.text import normalise

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration

SAKSI = str(Path(sys.executable).parent / "saksi")
ID_QUESTION = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
EN_QUESTION = "What is the penalty for filing the SPT Masa late?"
UNRELATED = "Berapa tarif bea masuk untuk impor mobil listrik?"


def saksi(*args: str, data_dir: Path | None = None) -> subprocess.CompletedProcess:
    cmd = [SAKSI, *args] + (["--data-dir", str(data_dir)] if data_dir else [])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli") / "data"
    done = saksi("ingest", str(SAMPLE), data_dir=d)
    assert done.returncode == 0, done.stderr
    return d


def ask_json(question: str, data_dir: Path, *extra: str) -> dict:
    done = saksi("ask", question, "--json", *extra, data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)




def test_reingest_leaves_counts_unchanged(data_dir):
    done = saksi("ingest", str(SAMPLE), "--json", data_dir=data_dir)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["ingested"] == [] and len(report["unchanged"]) == 4
    assert report["embedded"] == 0 and report["total_chunks"] > 0


@pytest.mark.parametrize("question,lang", [(ID_QUESTION, "id"), (EN_QUESTION, "en")])
def test_answers_carry_quotes_found_verbatim_in_the_source(data_dir, question, lang):
    out = ask_json(question, data_dir)
    assert out["outcome"] == "answer" and out["lang"] == lang
    supported = [c for c in out["claims"] if c["status"] == "supported"]
    assert supported
    for claim in supported:
        assert claim["band"] in {"TINGGI", "SEDANG", "RENDAH"} and 0 <= claim["confidence"] <= 1
        for cit in claim["citations"]:
            source = Path(cit["source"]).read_text(encoding="utf-8")
            start, end = cit["source_span"]
            assert cit["quote"] in source[start:end]  # inside the cited chunk's slice of the file
            assert cit["quote"] in source  # raw substring of the file, not just after normalisation
            assert normalise(cit["quote"]) in normalise(source)
            assert cit["location"] and cit["chunk_id"]
    assert Path(out["trace_path"]).exists() and out["trace_id"] in out["trace_path"]


def test_english_question_is_answered_from_the_indonesian_regulation(data_dir):
    out = ask_json(EN_QUESTION, data_dir)
    cited = {c["document"] for claim in out["claims"] for c in claim["citations"]}
    assert any("Peraturan Menteri Ilustratif Nomor 7" in d for d in cited)
    assert any("Rp100.000" in claim["text"] for claim in out["claims"])


def test_unrelated_question_is_refused_with_nearest_records(data_dir):
    out = ask_json(UNRELATED, data_dir)
    assert out["outcome"] == "refusal"
    assert out["reason"] and out["missing_categories"] == ["rate"]
    assert out["nearest"] and {"document", "location", "text", "score", "chunk_id"} <= set(out["nearest"][0])
    assert not [c for c in out["claims"] if c["status"] == "supported"]


def test_text_output_has_receipts_and_labels_in_the_chosen_language(data_dir):
    done = saksi("ask", ID_QUESTION, "--lang", "en", data_dir=data_dir)
    assert done.returncode == 0
    assert "ANSWER" in done.stdout and "Pasal 3 ayat (1)" in done.stdout and "Records disagree" in done.stdout
    refusal = saksi("ask", UNRELATED, data_dir=data_dir)
    assert "TIDAK DAPAT DIJAWAB" in refusal.stdout and "Sumber terdekat" in refusal.stdout


def test_replay_reproduces_a_fresh_trace_and_flags_an_altered_quote(data_dir, tmp_path):
    out = ask_json(ID_QUESTION, data_dir)
    done = saksi("replay", out["trace_id"], data_dir=data_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "same decision" in done.stdout

    trace = json.loads(Path(out["trace_path"]).read_text(encoding="utf-8"))
    output = trace["parts"][0]["attempts"][0]["generator_output"]
    raw = json.loads(output["raw"])
    raw["claims"][0]["citations"][0]["quote"] = raw["claims"][0]["citations"][0]["quote"].replace("persen", "persen)")
    output["raw"] = json.dumps(raw)
    altered = tmp_path / "altered.json"
    altered.write_text(json.dumps(trace), encoding="utf-8")
    done = saksi("replay", str(altered), "--json", data_dir=data_dir)
    report = json.loads(done.stdout)
    assert done.returncode == 1 and not report["same"]
    assert any("replayed not supported" in d for d in report["differences"])


def test_trace_schema_describes_the_traces_written(data_dir):
    out = ask_json(UNRELATED, data_dir)
    schema = json.loads(saksi("schema", "trace").stdout)
    jsonschema.validate(json.loads(Path(out["trace_path"]).read_text(encoding="utf-8")), schema)
    claims = json.loads(saksi("schema", "claims").stdout)
    assert claims["properties"]["claims"]["type"] == "array"


def test_errors_are_messages_not_tracebacks(tmp_path):
    done = saksi("ask", ID_QUESTION, data_dir=tmp_path / "empty")
    assert done.returncode == 2 and "saksi ingest" in done.stderr and "Traceback" not in done.stderr
    done = saksi("replay", str(tmp_path / "nope.json"), data_dir=tmp_path)
    assert done.returncode == 2 and "no trace" in done.stderr and "Traceback" not in done.stderr
    done = saksi("ask", "   ", data_dir=tmp_path)
    assert done.returncode == 2 and "empty" in done.stderr


def test_a_corrupt_file_is_reported_and_the_rest_ingests(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.md").write_text("---\nid: good\n---\n1. Entitas mengakui pendapatan ketika pengendalian "
                                 "atas barang beralih kepada pelanggan.\n", encoding="utf-8")
    (src / "corrupt.md").write_bytes(b"\xff\xfe\x00\x00garbage")
    done = saksi("ingest", str(src), data_dir=tmp_path / "data")
    assert done.returncode == 0
    assert "corrupt.md" in done.stderr and "1 ingested" in done.stdout and "1 skipped" in done.stdout
    strict = saksi("ingest", str(src), "--strict", data_dir=tmp_path / "data")
    assert strict.returncode == 1


@pytest.mark.parametrize("damage", ["{not json", "[]"])
def test_a_damaged_state_file_is_one_clear_error_and_ingest_repairs_it(data_dir, tmp_path, damage):
    import shutil

    copy = tmp_path / "data"
    shutil.copytree(data_dir, copy, ignore=shutil.ignore_patterns("traces"))
    (copy / "state.json").write_text(damage, encoding="utf-8")
    done = saksi("ask", ID_QUESTION, data_dir=copy)
    assert done.returncode == 2 and "state.json is not a corpus state file" in done.stderr, done.stderr
    assert "unexpected" not in done.stderr and "Traceback" not in done.stderr
    repaired = saksi("ingest", str(SAMPLE), data_dir=copy)
    assert repaired.returncode == 0 and "0 ingested, 4 unchanged" in repaired.stdout, repaired.stderr
    assert ask_json(ID_QUESTION, copy)["outcome"] == "answer"


def test_a_question_over_the_profile_cap_is_one_line_and_exit_2(data_dir):
    done = saksi("ask", "a" * 501, data_dir=data_dir)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("saksi: ")
    assert "501 characters" in done.stderr and "500" in done.stderr


@pytest.mark.parametrize("target", ["/dev/zero", "directory"])
def test_replay_refuses_what_is_not_a_regular_file(tmp_path, target):
    path = str(tmp_path) if target == "directory" else target
    if target == "/dev/zero" and not Path(target).exists():
        pytest.skip("this platform has no /dev/zero (the directory case still runs); Linux CI has it")
    done = saksi("replay", path, data_dir=tmp_path)  # /dev/zero used to hang here
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a regular file" in done.stderr


def test_replay_refuses_a_trace_over_the_size_bound(tmp_path, monkeypatch):
    from pipeline import trace as trace_module
    from pipeline.errors import TraceError

    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2048)
    monkeypatch.setattr(trace_module, "MAX_TRACE_BYTES", 1024)
    with pytest.raises(TraceError, match="at most 1024"):
        trace_module.load_trace(big)


@pytest.mark.parametrize("damage", ["file", "contents"])
def test_a_corrupt_dense_index_is_one_line_naming_the_rebuild(data_dir, tmp_path, damage):
    import shutil

    copy = tmp_path / "data"
    shutil.copytree(data_dir, copy, ignore=shutil.ignore_patterns("traces"))
    db = copy / "milvus.db"
    if damage == "file":  # the whole index replaced by garbage bytes
        shutil.rmtree(db) if db.is_dir() else db.unlink()
        db.write_bytes(bytes(range(256)) * 16)
    else:  # every file of the index overwritten with garbage
        for f in [p for p in db.rglob("*") if p.is_file() and p.stat().st_size]:
            f.write_bytes(b"\xb5garbage" * 20)
    done = saksi("ask", ID_QUESTION, data_dir=copy)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert "dense index" in done.stderr and "unreadable" in done.stderr and "--rebuild" in done.stderr
    assert saksi("ingest", str(SAMPLE), "--rebuild", data_dir=copy).returncode == 0
    assert ask_json(ID_QUESTION, copy)["outcome"] == "answer"


def test_a_dense_index_held_by_another_process_is_named_so_not_as_damage(data_dir, tmp_path):
    """Milvus Lite opens a file in one process: while another (here a real Milvus Lite client in a
    child process, as `saksi serve` holds it) has it, the CLI says so instead of "rebuild it"."""
    import shutil
    import time

    copy = tmp_path / "data"
    shutil.copytree(data_dir, copy, ignore=shutil.ignore_patterns("traces"))
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pymilvus import MilvusClient; c = MilvusClient(sys.argv[1]); "
        "c.list_collections(); print('open', flush=True); time.sleep(120)"), str(copy / "milvus.db")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        done = saksi("ask", ID_QUESTION, data_dir=copy)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "open in another process" in done.stderr and "--rebuild" not in done.stderr
    finally:
        holder.kill()
        holder.wait()
    time.sleep(1)
    assert ask_json(ID_QUESTION, copy)["outcome"] == "answer"  # nothing was damaged
