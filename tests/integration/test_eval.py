"""`saksi eval` as a user runs it: datasets made here in all three formats, the real lite
profile, and (with --limit) the shared IDK-MRC validation set."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.eval.report import JSON_KEYS

from ..conftest import SAMPLE, SHARED_DATA

pytestmark = pytest.mark.integration

SAKSI = str(Path(sys.executable).parent / "saksi")

# written for this test: small Indonesian passages with answerable and unanswerable questions
PASSAGES = [
    ("Danau Toba adalah danau vulkanik terbesar di Asia Tenggara. Danau ini terletak di Provinsi Sumatera Utara "
     "dan terbentuk dari letusan gunung api purba sekitar 74.000 tahun yang lalu.",
     [("t1", "Di provinsi mana Danau Toba terletak?", ["Sumatera Utara", "Provinsi Sumatera Utara"]),
      ("t2", "Siapa gubernur pertama Sumatera Utara?", [])]),
    ("Candi Prambanan adalah kompleks candi Hindu terbesar di Indonesia. Candi ini dibangun pada abad ke-9 "
     "dan dipersembahkan untuk Trimurti, yaitu Brahma, Wisnu, dan Siwa.",
     [("p1", "Candi Prambanan dipersembahkan untuk siapa?", ["Trimurti"]),
      ("p2", "Berapa tinggi candi utama Prambanan dalam meter?", [])]),
    ("Rendang adalah masakan daging berbumbu dari Minangkabau, Sumatera Barat. Daging dimasak perlahan dengan "
     "santan kelapa dan campuran rempah selama beberapa jam hingga kering.",
     [("r1", "Rendang berasal dari daerah mana?", ["Minangkabau", "Minangkabau, Sumatera Barat"]),
      ("r2", "Siapa yang pertama kali memasak rendang?", [])]),
    ("Komodo adalah spesies kadal terbesar di dunia. Hewan ini hidup di Pulau Komodo, Rinca, dan Flores di "
     "Provinsi Nusa Tenggara Timur.",
     [("k1", "Di pulau mana saja komodo hidup?", ["Pulau Komodo, Rinca, dan Flores"]),
      ("k2", "Berapa lama komodo dapat hidup di alam liar?", [])]),
]


def squad_paragraphs() -> list[dict]:
    out = []
    for context, qas in PASSAGES:
        out.append({"context": context, "qas": [
            {"id": qid, "question": q, "is_impossible": not golds,
             "answers": [{"text": g, "answer_start": context.find(g)} for g in golds]} for qid, q, golds in qas]})
    return out


def saksi(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SAKSI, *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("datasets")
    flat, official, jsonl = d / "flat.json", d / "official.json", d / "questions.jsonl"
    flat.write_text(json.dumps(squad_paragraphs(), ensure_ascii=False), encoding="utf-8")
    official.write_text(json.dumps({"version": "v2.0", "data": [{"title": "Nusantara", "paragraphs":
                                                                  squad_paragraphs()}]}, ensure_ascii=False))
    with jsonl.open("w", encoding="utf-8") as f:
        for context, qas in PASSAGES:
            for qid, q, golds in qas:
                f.write(json.dumps({"id": qid, "question": q, "answers": golds, "answerable": bool(golds),
                                    "context": context}, ensure_ascii=False) + "\n")
    return {"flat": flat, "official": official, "jsonl": jsonl}


@pytest.fixture(scope="module")
def runs(datasets, tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, Path]]:
    out = {}
    for name, path in datasets.items():
        target = tmp_path_factory.mktemp("eval") / name
        out[name] = (saksi("eval", str(path), "--out", str(target), "--json"), target)
    return out


@pytest.mark.parametrize("shape", ["flat", "official", "jsonl"])
def test_eval_prints_the_documented_metrics_and_keeps_the_contract(runs, shape):
    done, out = runs[shape]
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert tuple(report) == tuple(k for k in JSON_KEYS if k in report) and set(JSON_KEYS) <= set(report)
    m = report["metrics"]
    assert (m["questions"], m["answerable"], m["unanswerable"]) == (8, 4, 4)
    assert m["quote_exactness"] == 1.0 and m["quotes_checked"] > 0
    assert m["numbers_without_basis_displayed"] == 0
    assert report["contract"] == {"quote_exactness_100": True, "no_number_without_basis": True}
    # the lite profile answers most of these with the gold in its quotes and refuses most of the rest
    assert m["attributed_accuracy"] >= 0.5 and m["abstention_recall"] >= 0.5
    assert m["retrieval_recall"]["basis"] == "gold_passage" and m["retrieval_recall"]["at"]["1"] >= 0.75
    assert m["latency_ms"]["p50"] > 0 and sum(m["refusal_reasons"].values()) == 8 - sum(
        1 for r in map(json.loads, (out / "questions.jsonl").read_text().splitlines()) if r["outcome"] == "answer")
    for key in ("attributed_accuracy", "abstention_recall", "unsupported_claim_rate", "answered_unanswerable_rate"):
        assert key in report["ungated"]


def test_the_three_shapes_give_the_same_decisions(runs):
    decisions = {}
    for shape, (_, out) in runs.items():
        rows = [json.loads(x) for x in (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
        decisions[shape] = [(r["id"], r["outcome"], r["correct"]) for r in rows]
    assert decisions["flat"] == decisions["official"] == decisions["jsonl"]


def test_report_is_one_self_contained_page_linking_every_trace(runs):
    _, out = runs["flat"]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<link" not in html and 'src="http' not in html
    assert html.count("<svg") >= 3
    rows = [json.loads(x) for x in (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    for r in rows:
        assert r["trace"] and (out / r["trace"]).is_file() and f'href="{r["trace"]}"' in html
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert {c["metric"] for c in report["comparison"]} >= {"answered_unanswerable_rate", "unsupported_claim_rate"}
    assert report["tradeoff"][0]["threshold"] == 0.0 and report["calibration"]["bands"]


def test_eval_reuses_its_corpus_and_rebuilds_it_when_passages_change(datasets, runs, tmp_path):
    _, out = runs["flat"]
    done = saksi("eval", str(datasets["flat"]), "--out", str(out), "--json")
    assert json.loads(done.stdout)["corpus"]["fresh"] is False
    done = saksi("eval", str(datasets["flat"]), "--out", str(out), "--json", "--limit", "2")
    report = json.loads(done.stdout)
    assert report["corpus"]["fresh"] is True and report["corpus"]["documents"] == 2
    assert report["metrics"]["questions"] == 4


def test_eval_against_an_existing_corpus_measures_recall_by_answer_text(datasets, runs, tmp_path):
    _, out = runs["flat"]
    done = saksi("eval", str(datasets["jsonl"]), "--corpus", str(out / "corpus"), "--out", str(tmp_path / "e"),
                 "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["corpus"]["from_dataset"] is False
    assert report["metrics"]["retrieval_recall"]["basis"] == "answer_string"


def test_bad_invocations_are_clear_errors(tmp_path):
    done = saksi("eval")
    assert done.returncode == 2 and "needs a DATASET" in done.stderr
    done = saksi("eval", str(tmp_path / "nope.json"))
    assert done.returncode == 2 and "no dataset file" in done.stderr and "Traceback" not in done.stderr
    (tmp_path / "x.json").write_text("[1, 2]")
    done = saksi("eval", str(tmp_path / "x.json"))
    assert done.returncode == 2 and "no usable questions" in done.stderr


def test_eval_on_the_shared_idk_mrc_validation_set(tmp_path):
    dataset = SHARED_DATA / "idk_mrc" / "valid.json"
    if not dataset.is_file():
        pytest.fail(f"shared IDK-MRC validation set not found at {dataset} (set SAKSI_SHARED_DATA)")
    done = saksi("eval", str(dataset), "--limit", "12", "--out", str(tmp_path / "idk"), "--json")
    assert done.returncode == 0, done.stderr
    m = json.loads(done.stdout)["metrics"]
    assert m["answerable"] > 0 and m["unanswerable"] > 0
    assert m["quote_exactness"] in (None, 1.0) and m["numbers_without_basis_displayed"] == 0
    assert m["abstention_recall"] > 0 and m["attributed_accuracy"] > 0


def test_eval_asks_a_named_collection_of_a_data_directory(datasets, tmp_path):
    data = tmp_path / "data"
    done = saksi("ingest", str(SAMPLE), "--data-dir", str(data), "--collection", "named")
    assert done.returncode == 0, done.stderr
    done = saksi("eval", str(datasets["jsonl"]), "--corpus", str(data), "--collection", "named",
                 "--out", str(tmp_path / "e"), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["corpus"]["data_dir"] == str(data / "collections" / "named")
    assert report["corpus"]["chunks"] > 0 and report["metrics"]["questions"] > 0
    done = saksi("eval", str(datasets["jsonl"]), "--corpus", str(data), "--collection", "Not A Name")
    assert done.returncode == 2 and "is not a collection name" in done.stderr and "Traceback" not in done.stderr
    done = saksi("eval", str(datasets["jsonl"]), "--collection", "named")
    assert done.returncode == 2 and "--corpus" in done.stderr
