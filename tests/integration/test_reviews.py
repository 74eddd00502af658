"""Reviewers' decisions on a real answer: stored, listed, exported, audited, and replayed as
regression cases by `saksi eval --reviews` against today's pipeline (the lite profile, no fakes)."""
from __future__ import annotations

import asyncio
import csv
import io
import json
import logging
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pipeline.analysis import query_analyzer
from pipeline.audit import verify
from pipeline.corpus import Corpus
from pipeline.errors import ReviewError
from pipeline.eval.reviews import _find, _Shown, claim_key
from pipeline.replay import recorded_result
from pipeline.reviews import REJECT_REASONS, Review, ReviewStore
from pipeline.text import normalise
from pipeline.trace import load_trace
from serve.cli import main

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration

SAKSI = str(Path(sys.executable).parent / "saksi")
QUESTION = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
KEY = "key:0123456789ab"


@pytest.fixture(scope="module")
def answered(tmp_path_factory, profile):
    """The sample corpus (lite profile) and one answer to QUESTION, its trace written: the 2025
    rule's 10% and the 2022 rule's 15%, both supported."""
    data = tmp_path_factory.mktemp("reviews") / "data"
    with Corpus(data, profile) as corpus:
        corpus.ingest([SAMPLE])
        result = asyncio.run(corpus.orchestrator().answer(QUESTION))
    assert result.outcome == "answer" and result.trace_path
    return data, result


def by_doc(result, doc_id: str) -> int:
    """The index of the supported claim citing `doc_id`."""
    return next(i for i, c in enumerate(result.claims)
                if c.status == "supported" and any(x.doc_id == doc_id for x in c.citations))


def decide(store: ReviewStore, result, claim: int, decision: str, **kw) -> Review:
    c = result.claims[claim]
    return store.record(collection="default", trace_id=result.trace_id, claim=claim, decision=decision,
                        by=kw.pop("by", "local"), question=result.question, claim_text=c.text,
                        chunk_ids=[x.chunk_id for x in c.citations], **kw)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_decisions_are_validated_stored_and_the_latest_counts(answered, tmp_path, caplog):
    data, result = answered
    shutil.copy(data / "audit.jsonl", tmp_path)  # the chain so far: reviews continue it
    shutil.copy(data / "audit.head", tmp_path)
    store = ReviewStore(tmp_path)
    first = decide(store, result, 0, "accepted")
    second = decide(store, result, 0, "rejected", reason="wrong_number", note="angka dari aturan lama", by=KEY)
    flagged = decide(store, result, 1, "flagged", reason="incomplete")
    assert len(first.review_id) == 16 and first.at.endswith("+00:00") and first.reason is None
    assert second.by == KEY and second.chunk_ids == [x.chunk_id for x in result.claims[0].citations]
    assert [r.review_id for r in store.all()] == [first.review_id, second.review_id, flagged.review_id]
    assert [r.review_id for r in store.latest()] == [second.review_id, flagged.review_id]
    assert store.for_trace("default", result.trace_id) == {0: second, 1: flagged}
    assert store.for_trace("other", result.trace_id) == {} and store.all("other") == []

    bad = [dict(decision="rejected"), dict(decision="rejected", reason="because"), dict(decision="approved"),
           dict(decision="flagged", note="x" * 2001), dict(decision="accepted", reason="wrong_number"),
           dict(decision="accepted", trace_id="not-a-trace"), dict(decision="accepted", trace_id="A" * 32),
           dict(decision="accepted", claim=-1), dict(decision="accepted", claim="0"),
           dict(decision="accepted", by="someone")]
    for kw in bad:
        args = dict(collection="default", trace_id=result.trace_id, claim=0, by="local", question=QUESTION,
                    claim_text="x", chunk_ids=[])
        with pytest.raises(ReviewError) as e:
            store.record(**{**args, **kw})
        assert e.value.stage == "review" and str(e.value).startswith("[review] ")
    assert len(store.all()) == 3  # nothing written by a refused decision
    assert decide(store, result, 1, "flagged", reason="", note="").reason is None  # a form's empty choice

    audit = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    review_entries = [e for e in audit if e["event"] == "review"]
    assert len(review_entries) == 4 and audit[0]["event"] in ("ingest", "ingest_document")
    assert review_entries[1]["key"] == KEY and review_entries[1]["data"] == {
        "collection": "default", "trace_id": result.trace_id, "claim": 0, "decision": "rejected",
        "reason": "wrong_number", "review_id": second.review_id}
    assert verify(tmp_path).ok

    # a damaged line, and a writer that died mid-line, are skipped; the next decision still gets its own line
    with open(store.path, "ab") as f:
        f.write(b"{not json}\n" + json.dumps({"review_id": "x"}).encode() + b"\n" + b'{"review_id": "ab')
    caplog.set_level(logging.WARNING, logger="pipeline.reviews")
    after = decide(store, result, 1, "accepted")
    assert [r.review_id for r in store.all()][-1] == after.review_id and len(store.all()) == 5
    assert store.for_trace("default", result.trace_id)[1] == after
    assert sum("is not a review, skipped" in m for m in caplog.messages) >= 3


def test_concurrent_decisions_from_threads_and_processes_are_whole_lines(answered, tmp_path):
    _, result = answered
    store = ReviewStore(tmp_path)
    claim = result.claims[0]
    script = (f"import sys; from pipeline.reviews import ReviewStore\n"
              f"s = ReviewStore({str(tmp_path)!r})\n"
              f"for i in range(15):\n"
              f"    s.record(collection='default', trace_id={result.trace_id!r}, claim=i, decision='flagged', "
              f"by='key:' + sys.argv[1] * 12, question={QUESTION!r}, claim_text={claim.text!r} * 3, "
              f"chunk_ids=['c'], note='n' * 1500)\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(n)]) for n in range(3)]

    def write(n: int) -> None:
        for i in range(15):
            decide(store, result, 0, "rejected", reason="other", note=f"thread {n} #{i} " + "z" * 1500)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(p.wait(timeout=60) == 0 for p in procs)
    lines = store.path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 90
    assert len({Review.model_validate_json(x).review_id for x in lines}) == 90  # every line whole and valid
    assert verify(tmp_path).ok and verify(tmp_path).entries == 90


def test_reviews_ls_and_export_through_the_saksi_command(answered, tmp_path, capsys):
    data, result = answered
    store = ReviewStore(tmp_path)
    ten, fifteen = by_doc(result, "pmi-7-2025"), by_doc(result, "pmi-3-2022")
    decide(store, result, fifteen, "accepted")
    rejected = decide(store, result, fifteen, "rejected", reason="outdated", note="diganti PMI 7/2025,\nlihat Pasal 3")
    decide(store, result, ten, "flagged", by=KEY)

    code, out, _ = run(capsys, "reviews", "ls", "--data-dir", str(tmp_path))
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert result.trace_id[:8] in lines[0] and f"claim {fifteen}" in lines[0] and "rejected (outdated)" in lines[0]
    assert "diganti PMI 7/2025, lihat Pasal 3" in lines[0] and rejected.at in lines[0]
    assert result.claims[fifteen].text[:100] in lines[0]
    assert "flagged" in lines[1] and KEY in lines[1] and result.claims[ten].text[:100] in lines[1]
    code, out, _ = run(capsys, "reviews", "ls", "--all", "--json", "--data-dir", str(tmp_path))
    assert code == 0 and [r["decision"] for r in json.loads(out)] == ["accepted", "rejected", "flagged"]
    code, out, _ = run(capsys, "reviews", "ls", "--collection", "other", "--data-dir", str(tmp_path))
    assert code == 0 and out.startswith("no reviews")

    code, out, _ = run(capsys, "reviews", "export", "--data-dir", str(tmp_path))
    exported = [Review.model_validate_json(x) for x in out.splitlines()]
    assert code == 0 and exported == store.latest()
    target = tmp_path / "all.jsonl"
    code, _, err = run(capsys, "reviews", "export", "--all", "--output", str(target), "--data-dir", str(tmp_path))
    assert code == 0 and "wrote 3 review(s)" in err
    assert [Review.model_validate_json(x) for x in target.read_text(encoding="utf-8").splitlines()] == store.all()

    done = subprocess.run([SAKSI, "reviews", "export", "--format", "csv", "--data-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert list(rows[0]) == list(Review.model_fields) and len(rows) == 2
    assert rows[0]["review_id"] == rejected.review_id and rows[0]["reason"] == "outdated"
    assert rows[0]["note"] == rejected.note and rows[0]["claim_text"] == result.claims[fifteen].text
    assert rows[0]["chunk_ids"] == ";".join(rejected.chunk_ids) and rows[1]["reason"] == ""

    # a note that begins like a spreadsheet formula is exported as text (issue 27: CSV injection)
    decide(store, result, ten, "rejected", reason="other", note='=HYPERLINK("http://evil.example","klik")')
    done = subprocess.run([SAKSI, "reviews", "export", "--format", "csv", "--data-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    noted = [r for r in csv.DictReader(io.StringIO(done.stdout)) if r["note"].lstrip("'").startswith("=HYPERLINK")]
    assert noted and all(r["note"].startswith("'=HYPERLINK") for r in noted)

    code, _, err = run(capsys, "reviews", "ls", "--format", "csv", "--data-dir", str(tmp_path))
    assert code == 2 and "export" in err
    assert set(REJECT_REASONS) >= {"not_supported", "wrong_number", "outdated", "wrong_document", "incomplete",
                                   "other"}
    assert all(set(labels) == {"id", "en"} for labels in REJECT_REASONS.values())


def test_a_review_in_a_collection_without_a_corpus_is_not_checked_and_fails(answered, tmp_path, capsys):
    _, result = answered
    ReviewStore(tmp_path).record(collection="gone", trace_id=result.trace_id, claim=0, decision="rejected",
                                 reason="other", by="local", question=QUESTION, claim_text="x", chunk_ids=[])
    code, out, _ = run(capsys, "eval", "--reviews", "--data-dir", str(tmp_path))
    assert code == 1 and "NOT CHECKED" in out and "no collection 'gone'" in out


def test_quote_matching_finds_a_claim_worded_differently_that_cites_the_same_quote(answered, profile):
    _, result = answered
    trace = load_trace(Path(result.trace_path))
    shown = recorded_result(trace, query_analyzer(profile))
    assert [c.text for c in shown.claims] == [c.text for c in result.claims]  # the index the reviewer saw
    claim = shown.claims[1]
    quotes = frozenset((x.chunk_id, normalise(x.quote)) for x in claim.citations)
    assert _find(_Shown(QUESTION, None, frozenset({"something else"}), quotes, None), result) == (1, "quote")
    assert _find(_Shown(QUESTION, None, frozenset({claim_key(claim.text.upper() + " .")}), frozenset(), None),
                 result) == (1, "text")
    assert _find(_Shown(QUESTION, None, frozenset({"something else"}), frozenset(), None), result) is None


def test_eval_reviews_flags_a_rejected_claim_until_the_pipeline_no_longer_shows_it(answered, profile, capsys):
    data, result = answered
    store = ReviewStore(data)
    ten, fifteen = by_doc(result, "pmi-7-2025"), by_doc(result, "pmi-3-2022")

    code, _, err = run(capsys, "eval", "--reviews", "--data-dir", str(data))
    assert code == 2 and "no rejected reviews" in err
    decide(store, result, ten, "accepted")
    code, _, err = run(capsys, "eval", "--reviews", "--data-dir", str(data))
    assert code == 2 and "no rejected reviews" in err  # an accepted claim is no regression case

    rejected = decide(store, result, fifteen, "rejected", reason="outdated", note="PMI 3/2022 diganti PMI 7/2025")
    entry = json.loads((data / "audit.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert entry["event"] == "review" and entry["data"]["review_id"] == rejected.review_id
    code, out, _ = run(capsys, "eval", "--reviews", "--data-dir", str(data))
    assert code == 1, out
    assert f"STILL SHOWN     default {result.trace_id[:8]} claim {fifteen} rejected (outdated)" in out
    assert "still shown" in out and "FAIL" in out
    code, out, _ = run(capsys, "eval", "--reviews", "--json", "--data-dir", str(data))
    report = json.loads(out)
    assert code == 1 and report["passed"] is False and report["summary"]["still_shown"] == 1
    [check] = report["rejected"]
    assert check["status"] == "shown" and check["matched_by"] == "text" and check["note"] is None
    assert check["review"]["review_id"] == rejected.review_id
    assert check["today_trace_id"] != result.trace_id and (data / "traces" / f"{check['today_trace_id']}.json").exists()

    # today's pipeline can no longer show the 2022 rule's 15%: its document is gone from the corpus
    with Corpus(data, profile) as corpus:
        assert corpus.delete("pmi-3-2022")
    code, out, _ = run(capsys, "eval", "--reviews", "--data-dir", str(data))
    assert code == 0, out
    assert f"gone            default {result.trace_id[:8]} claim {fifteen} rejected (outdated)" in out
    assert f"still shown     default {result.trace_id[:8]} claim {ten} accepted" in out and "PASS" in out

    # a missing trace is reported and compared by the claim's text; the rest carries on
    Path(result.trace_path).rename(Path(result.trace_path).with_suffix(".moved"))
    code, out, _ = run(capsys, "eval", "--reviews", "--json", "--data-dir", str(data))
    report = json.loads(out)
    assert code == 0 and report["passed"] is True
    assert [c["status"] for c in report["rejected"]] == ["gone"]
    assert [c["status"] for c in report["accepted"]] == ["shown"]
    assert all("no trace at" in c["note"] and "text only" in c["note"] for c in report["rejected"] + report["accepted"])

    code, out, _ = run(capsys, "audit", "verify", "--data-dir", str(data))
    assert code == 0 and "intact" in out
