"""`saksi eval` with gold references, and `--leave-out`, on two tiny regulations written for this
test (fictional: "PP 90/2030" and "PP 91/2030", numbered so they cannot be mistaken for real
ones).

The receipts and the leave-one-out counts are checked by hand against a scripted generator (it
quotes the sentences named below from whatever retrieval put in its context), so they do not move
when the reader is retrained; everything else is real: the lite embedder, ingest, retrieval,
gates, decision and the eval runner. The command line is run as a user runs it, with the real
reader, for what does not depend on what the reader chooses."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.backends.fakes import FakeScriptedGenerator
from pipeline.config import load_profile
from pipeline.corpus import Corpus, DataDir
from pipeline.eval import metrics
from pipeline.eval.datasets import EvalDataError
from pipeline.eval.receipts import same_law
from pipeline.eval.runner import run_eval

pytestmark = pytest.mark.integration

SAKSI = str(Path(sys.executable).parent / "saksi")

# written for this test (fictional regulations, not real law)
PP_90 = """# PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 90 TAHUN 2030

BAB I
KETENTUAN UMUM

Pasal 1
Dalam Peraturan Pemerintah ini yang dimaksud dengan:
1. Tunjangan Kebersihan adalah tunjangan yang diberikan kepada petugas kebersihan gedung pemerintah.
2. Petugas Kebersihan adalah pegawai yang bertugas menjaga kebersihan gedung pemerintah.

BAB II
TUNJANGAN KEBERSIHAN

Pasal 2
(1) Petugas Kebersihan berhak atas Tunjangan Kebersihan setiap bulan.
(2) Tunjangan Kebersihan dibayarkan paling lambat tanggal 10 setiap bulan.

Pasal 3
Tunjangan Kebersihan tidak diberikan kepada:
a. Petugas Kebersihan yang sedang menjalani cuti di luar tanggungan negara;
b. Petugas Kebersihan yang diberhentikan sementara.
"""

PP_91 = """# PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 91 TAHUN 2030

BAB I
KETENTUAN UMUM

Pasal 1
Dalam Peraturan Pemerintah ini yang dimaksud dengan:
1. Tunjangan Kerajinan adalah tunjangan yang diberikan kepada pegawai honorer pengelola taman kota.

BAB II
TUNJANGAN KERAJINAN

Pasal 4
(1) Pegawai honorer pengelola taman kota berhak atas Tunjangan Kerajinan setiap bulan.
(2) Tunjangan Kerajinan dan tunjangan kebersihan dibayarkan paling lambat tanggal 10 setiap bulan.

Pasal 5
Tunjangan Kerajinan dihentikan apabila pegawai honorer mengundurkan diri.
"""

QUESTIONS = [
    ("a1", "Kapan tunjangan kebersihan dibayarkan?", "paling lambat tanggal 10 setiap bulan",
     {"law": "PP 90/2030", "pasal": ["2"], "ayat": "2", "huruf": None}),
    ("a2", "Apa yang dimaksud dengan Petugas Kebersihan?",
     "pegawai yang bertugas menjaga kebersihan gedung pemerintah",
     {"law": "PP 90/2030", "pasal": ["1"], "ayat": None, "huruf": "2"}),
    ("a3", "Kepada siapa Tunjangan Kebersihan tidak diberikan?",
     "Tunjangan Kebersihan tidak diberikan kepada:\nb. Petugas Kebersihan yang diberhentikan sementara.",
     {"law": "PP 90 / 2030", "pasal": ["3"], "ayat": None, "huruf": "b"}),
    ("b1", "Dalam hal apa Tunjangan Kerajinan dihentikan?", "apabila pegawai honorer mengundurkan diri",
     {"law": "PP 91/2030", "pasal": ["5"], "ayat": None, "huruf": None}),
    ("b2", "Siapa yang berhak atas Tunjangan Kerajinan?", "Pasal 4",
     {"law": "PP 91/2030", "pasal": ["4"], "ayat": None, "huruf": None}),
]


# question -> claims to make: each claim a list of sentences quoted as one claim's citations, quoted
# when every one of them is found in the context (from whichever regulation); the first claim
# that can be made is made
SCRIPT = {
    "Kapan tunjangan kebersihan dibayarkan?": [
        ["Tunjangan Kebersihan dibayarkan paling lambat tanggal 10 setiap bulan."],
        ["Tunjangan Kerajinan dan tunjangan kebersihan dibayarkan paling lambat tanggal 10 setiap bulan."]],
    "Apa yang dimaksud dengan Petugas Kebersihan?": [
        ["Petugas Kebersihan adalah pegawai yang bertugas menjaga kebersihan gedung pemerintah."]],
    "Kepada siapa Tunjangan Kebersihan tidak diberikan?": [
        ["Tunjangan Kebersihan tidak diberikan kepada:", "Petugas Kebersihan yang diberhentikan sementara."]],
    "Dalam hal apa Tunjangan Kerajinan dihentikan?": [
        ["Tunjangan Kerajinan dihentikan apabila pegawai honorer mengundurkan diri."]],
    "Siapa yang berhak atas Tunjangan Kerajinan?": [
        ["Pegawai honorer pengelola taman kota berhak atas Tunjangan Kerajinan setiap bulan."]],
}


def script(request) -> dict:
    for quotes in SCRIPT.get(request.question, ()):
        found = [next((c for c in request.context if q in c.text), None) for q in quotes]
        if all(found):
            cites = [{"chunk_id": c.chunk_id, "quote": q} for c, q in zip(found, quotes)]
            return {"claims": [{"text": " ".join(quotes), "citations": cites, "self_score": 0.9}],
                    "self_assessment": 0.9}
    return {"claims": []}


def saksi(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SAKSI, *args], capture_output=True, text=True, timeout=600)


def rows_of(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("legal")
    (d / "regs").mkdir()
    (d / "regs" / "pp-90-2030.md").write_text(PP_90, encoding="utf-8")
    (d / "regs" / "pp-91-2030.md").write_text(PP_91, encoding="utf-8")
    with (d / "dev.jsonl").open("w", encoding="utf-8") as f:
        for qid, q, gold, ref in QUESTIONS:
            f.write(json.dumps({"id": qid, "question": q, "answers": [gold], "answerable": True, "corpus": "regs",
                                "reference": ref}, ensure_ascii=False) + "\n")
    return d / "dev.jsonl"


@pytest.fixture(scope="module")
def scripted(dataset, tmp_path_factory) -> dict:
    """Both runs in one OUT, in process, with the scripted generator: the full corpus, then without
    PP 90/2030 (its kept corpus must survive the second)."""
    out = tmp_path_factory.mktemp("eval") / "scripted"

    real = Corpus.orchestrator

    def orchestrator(self, generator=None, judge=None, write_traces=True, trace_dir=None):
        return real(self, generator=FakeScriptedGenerator(script), judge=judge, write_traces=write_traces,
                    trace_dir=trace_dir)

    profile = load_profile()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Corpus, "orchestrator", orchestrator)
        full = run_eval(dataset, profile, out)
        full_rows = rows_of(out)
        full_html = (out / "report.html").read_text(encoding="utf-8")
        without = run_eval(dataset, profile, out, leave_out="pp 90 / 2030")
    return {"out": out, "full": full, "full_rows": full_rows, "full_html": full_html,
            "without": without, "without_rows": rows_of(out)}


def test_receipts_are_scored_against_the_references(scripted):
    report, rows = scripted["full"], scripted["full_rows"]
    assert report["contract"] == {"quote_exactness_100": True, "no_number_without_basis": True}
    assert len(rows) == 5 and all("receipt" in r and "conflicts" in r for r in rows)
    by_id = {r["id"]: r for r in rows}
    assert all(r["outcome"] == "answer" for r in rows), [(r["id"], r["reason_code"]) for r in rows]
    rc = {i: r["receipt"] for i, r in by_id.items()}
    # b2's gold answer is only a reference; a3's is a lead-in and an item: 4 span answers
    assert {i: x["span_answer"] for i, x in rc.items()} == {"a1": True, "a2": True, "a3": True, "b1": True,
                                                               "b2": False}
    assert rc["a1"]["top"]["cites"] == [{"law": "PP 90/2030", "pasal": "2", "ayat": "2", "huruf": None,
                                         "angka": None}]
    assert rc["a2"]["top"]["cites"] == [{"law": "PP 90/2030", "pasal": "1", "ayat": None, "huruf": None,
                                         "angka": "2"}]
    # a3: the lead-in (Pasal 3) and item b quoted as one claim: a huruf hit and a span hit
    assert [c["huruf"] for c in rc["a3"]["top"]["cites"]] == [None, "b"]
    assert rc["a3"]["top"]["huruf"] and rc["a3"]["span_hit"]
    assert rc["b1"]["top"]["cites"][0]["pasal"] == "5" and rc["b2"]["top"]["cites"][0]["pasal"] == "4"
    assert [x["span_hit"] for x in rc.values()] == [True, True, True, True, False]
    assert all(x["top"]["law"] and x["top"]["pasal"] for x in rc.values())
    assert all(len(x["laws"]) == 1 and same_law(x["laws"][0], x["reference"]["law"]) for x in rc.values())
    r = report["receipts"]
    assert r == metrics.receipts(rows)                                          # recomputable from the rows
    assert (r["questions"], r["answered"], r["answered_rate"]) == (5, 5, 1.0)
    assert r["levels"]["pasal"]["top"] == {"hits": 5, "precision": 1.0, "recall": 1.0}
    assert r["levels"]["ayat"] == {"questions": 1, "answered": 1, "top": {"hits": 1, "precision": 1.0, "recall": 1.0},
                                   "any": {"hits": 1, "precision": 1.0, "recall": 1.0}}
    assert r["levels"]["huruf"]["top"] == {"hits": 2, "precision": 1.0, "recall": 1.0}   # angka 2, huruf b
    assert r["span"] == {"questions": 4, "answered": 4, "hits": 4, "rate": 1.0, "precision": 1.0}
    assert r["curve"][-1]["answered"] == 5 and r["curve"][-1]["pasal_precision"] == 1.0
    assert sum(b["answered"] for b in r["pasal_by_band"]) == 5 and report["leave_out"] is None
    # every question's gold Pasal was among the passages read, and the rank is the first passage at it
    ranks = {i: x["gold_pasal_rank"] for i, x in rc.items()}
    assert all(k is not None and 1 <= k <= 6 for k in ranks.values()), ranks
    assert r["gold_pasal_read"] == {"questions": 5, "at": {"1": metrics._rate(sum(k == 1 for k in ranks.values()), 5),
                                                           "6": 1.0, "30": 1.0}}
    html = scripted["full_html"]
    assert "Receipts against the gold references" in html and 'aria-label="Pasal precision vs answered"' in html
    assert "✓ PP 91/2030 Pasal 5 <br><small>gold: PP 91/2030 Pasal 5</small>" in html


def test_leave_one_out_asks_only_about_the_removed_law(scripted):
    report, rows, out = scripted["without"], scripted["without_rows"], scripted["out"]
    lo = report["leave_out"]
    assert sorted(r["id"] for r in rows) == ["a1", "a2", "a3"]
    assert lo["removed_documents"] == [{"doc_id": "pp-90-2030", "name": "PP 90/2030"}]
    assert report["corpus"]["documents"] == 1 and lo["data_dir"].endswith("corpus-without-pp-90-2030")
    # a1 is answered by PP 91/2030 Pasal 4 ayat (2), which says the same: an answer from another
    # regulation; a2 and a3 are stated only in the removed one: refused
    by_id = {r["id"]: r for r in rows}
    assert by_id["a1"]["outcome"] == "answer" and by_id["a1"]["receipt"]["laws"] == ["PP 91/2030"]
    assert not by_id["a1"]["receipt"]["top"]["law"] and by_id["a1"]["receipt"]["top"]["cites"][0]["pasal"] == "4"
    assert by_id["a2"]["outcome"] == by_id["a3"]["outcome"] == "refusal"
    assert {k: lo[k] for k in ("law", "questions", "dataset_questions", "answered", "answered_rate",
                               "answered_from_another", "answered_from_another_rate", "answered_ambiguous",
                               "answered_citing_removed", "refusals", "refusal_rate", "laws_cited")} == {
        "law": "pp 90 / 2030", "questions": 3, "dataset_questions": 5, "answered": 1, "answered_rate": 0.3333,
        "answered_from_another": 1, "answered_from_another_rate": 0.3333, "answered_ambiguous": 0,
        "answered_citing_removed": 0, "refusals": 2, "refusal_rate": 0.6667, "laws_cited": {"PP 91/2030": 1}}
    assert lo == {**metrics.leave_out(rows, "pp 90 / 2030"), "dataset_questions": 5,
                  "removed_documents": lo["removed_documents"], "data_dir": lo["data_dir"]}
    # no receipt can hit the removed law; a1's gold text is also PP 91/2030's: the one span answer left
    assert report["receipts"]["levels"]["law"]["top"]["hits"] == 0
    assert report["receipts"]["span"] == {"questions": 1, "answered": 1, "hits": 1, "rate": 1.0, "precision": 1.0}
    # the normal corpus in OUT/corpus still holds both regulations and answers
    with Corpus(out / "corpus", load_profile()) as kept:
        assert sorted(d.doc_id for d, _ in kept.store.documents()) == ["pp-90-2030", "pp-91-2030"]
        kept.check()
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>Leave one out</h2>" in html and "answered from another regulation" in html


def test_the_command_line_leaves_a_law_out(dataset, tmp_path):
    """With the real reader: what does not depend on which sentences it chooses."""
    out = tmp_path / "cli"
    done = saksi("eval", str(dataset), "--out", str(out), "--json", "--leave-out", "PP 91/2030")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    lo, rows = report["leave_out"], rows_of(out)
    assert sorted(r["id"] for r in rows) == ["b1", "b2"] and lo["questions"] == 2
    assert lo["removed_documents"] == [{"doc_id": "pp-91-2030", "name": "PP 91/2030"}]
    assert lo["answered_citing_removed"] == 0 and lo["answered"] + lo["refusals"] == 2
    assert lo["answered_from_another"] + lo["answered_ambiguous"] == lo["answered"]
    assert report["receipts"]["questions"] == 2 and "curve" not in report["receipts"]
    assert (out / "corpus-without-pp-91-2030").is_dir() and not (out / "corpus").exists()


def test_leave_out_bad_usage_is_refused_clearly(dataset, tmp_path):
    done = saksi("eval", str(dataset), "--out", str(tmp_path / "x"), "--leave-out", "PP 34/2021")
    assert done.returncode == 2 and "no question" in done.stderr and "PP 90/2030" in done.stderr
    assert "Traceback" not in done.stderr
    done = saksi("eval", str(dataset), "--leave-out", "PP 90/2030", "--corpus", str(tmp_path / "none"))
    assert done.returncode != 0 and "no corpus in" in done.stderr and "Traceback" not in done.stderr
    done = saksi("eval", "--adversarial", "--leave-out", "PP 90/2030")
    assert done.returncode == 2 and "--leave-out" in done.stderr
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"id": "p", "question": "Apa?", "answers": ["x"], "context": "x y z"}) + "\n")
    done = saksi("eval", str(plain), "--out", str(tmp_path / "y"), "--leave-out", "PP 90/2030")
    assert done.returncode == 2 and "reference" in done.stderr
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()   # refused before any work


def test_a_given_corpus_is_asked_without_the_law_in_a_copy(dataset, tmp_path):
    """`--corpus DATA_DIR --collection NAME --leave-out LAW` (the statute book without the regulation a question is
    about): the collection is copied into OUT and the law deleted from the copy; the given one is never written."""
    profile = load_profile()
    given = DataDir(tmp_path / "data").collection("regs")
    with Corpus(given, profile) as corpus:
        corpus.ingest([dataset.parent / "regs"])
        before = corpus.check()
    out = tmp_path / "out"
    report = run_eval(dataset, profile, out, corpus_dir=given, leave_out="PP 91/2030")
    lo, rows = report["leave_out"], rows_of(out)
    assert sorted(r["id"] for r in rows) == ["b1", "b2"] and lo["questions"] == 2
    assert lo["removed_documents"] == [{"doc_id": "pp-91-2030", "name": "PP 91/2030"}]
    assert lo["data_dir"] == str(out / "corpus-without-pp-91-2030" / "collections" / "regs")
    assert report["corpus"]["copied_from"] == str(given.root) and report["corpus"]["documents"] == 1
    assert lo["answered_citing_removed"] == 0 and lo["answered"] + lo["refusals"] == 2
    with Corpus(given, profile) as kept:  # the given collection: both regulations, its indexes as they were
        assert sorted(d.doc_id for d, _ in kept.store.documents()) == ["pp-90-2030", "pp-91-2030"]
        assert kept.check() == before


def test_a_law_the_given_corpus_lacks_is_refused_before_anything_is_copied(dataset, tmp_path):
    profile = load_profile()
    given = DataDir(tmp_path / "data").collection("regs")
    with Corpus(given, profile) as corpus:
        corpus.ingest([dataset.parent / "regs" / "pp-90-2030.md"])
    out = tmp_path / "out"
    with pytest.raises(EvalDataError, match="no document of the corpus is cited as that law"):
        run_eval(dataset, profile, out, corpus_dir=given, leave_out="PP 91/2030")
    assert not (out / "corpus-without-pp-91-2030").exists()
