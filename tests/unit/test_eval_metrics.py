"""Metrics from rows, checked against counts worked out by hand."""
from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

from pipeline.eval import metrics
from pipeline.eval.datasets import Question
from pipeline.eval.runner import SourceChecker, score
from pipeline.progress import ProgressBar
from pipeline.types import CitationCheck, Confidence, Result, VerifiedClaim

pytestmark = pytest.mark.unit


def row(answerable, outcome, correct, confidence=None, band=None, *, reason=None, retried=False, gold_rank=None,
        supported=0, demoted=(), u_answered=False, u_correct=False, u_claims=0, u_unsupported=0, u_missing=False,
        latency=10.0, claims=None):
    shown = {} if claims is None else {
        "shown_claims": [{"confidence": c, "band": b, "correct": ok} for c, b, ok in claims]}
    return {**shown, "answerable": answerable, "outcome": outcome, "correct": correct, "correct_top1": correct and answerable,
            "confidence": confidence,
            "band": band, "reason_code": reason, "retried": retried, "gold_rank": gold_rank,
            "supported_claims": supported, "demoted_claims": len(demoted), "demotion_reasons": list(demoted),
            "quotes_checked": supported, "quotes_exact": supported, "numbers_without_basis": 0,
            "latency_ms": latency,
            "ungated": {"answered": u_answered, "correct": u_correct, "claims": u_claims,
                        "unsupported": u_unsupported, "quotes_checked": u_claims, "quotes_exact": u_claims,
                        "numbers_without_basis": 0, "missing_evidence": u_missing}}


ROWS = [
    # answerable: right answer, wrong answer, refused
    row(True, "answer", True, 0.9, "TINGGI", gold_rank=1, supported=1, u_answered=True, u_correct=True, u_claims=1),
    row(True, "answer", False, 0.6, "SEDANG", gold_rank=4, supported=1, u_answered=True, u_claims=2,
        u_unsupported=1, latency=30.0),
    row(True, "refusal", False, reason="no_supported_claims", retried=True, gold_rank=None,
        demoted=("quote_not_found",), u_answered=True, u_claims=1, u_unsupported=1, latency=20.0),
    # unanswerable: refused, answered
    row(False, "refusal", True, reason="missing_evidence", u_answered=True, u_claims=1, u_missing=True,
        latency=40.0),
    row(False, "answer", False, 0.7, "SEDANG", supported=2, u_answered=True, u_claims=2, latency=50.0),
]


def test_gated_metrics_by_hand():
    m = metrics.gated_metrics(ROWS, [1, 6], "gold_passage")
    assert (m["questions"], m["answerable"], m["unanswerable"]) == (5, 3, 2)
    assert m["attributed_accuracy"] == m["attributed_accuracy_top1"] == round(1 / 3, 4)
    assert m["answered_answerable_rate"] == round(2 / 3, 4)
    assert m["abstention_recall"] == 0.5          # 1 of 2 unanswerable refused
    assert m["abstention_precision"] == 0.5       # 2 refusals, 1 of them on an unanswerable question
    assert m["overall_accuracy"] == 0.4           # 1 correct answer + 1 correct refusal of 5
    assert m["claims_displayed_supported"] == 4 and m["claims_demoted"] == 1
    assert m["demotion_reasons"] == {"quote_not_found": 1}
    assert m["corrective_retries"] == 1 and m["answered_after_retry"] == 0
    assert m["refusal_reasons"] == {"no_supported_claims": 1, "missing_evidence": 1}
    assert m["retrieval_recall"] == {"basis": "gold_passage", "at": {"1": round(1 / 3, 4), "6": round(2 / 3, 4)}}
    assert m["latency_ms"] == {"p50": 30.0, "p95": 50.0, "mean": 30.0}
    assert m["quote_exactness"] == 1.0 and m["numbers_without_basis_displayed"] == 0


def test_ungated_metrics_and_comparison_by_hand():
    u = metrics.ungated_metrics(ROWS)
    assert u["attributed_accuracy"] == round(1 / 3, 4)
    assert u["answered_unanswerable_rate"] == 1.0 and u["abstention_recall"] == 0.0
    assert u["claims_displayed"] == 7 and u["unsupported_claim_rate"] == round(2 / 7, 4)
    assert u["answers_missing_required_evidence"] == 1
    assert u["answer_precision"] == 0.2  # 1 right of 5 answered
    g = metrics.gated_metrics(ROWS, [1], "gold_passage")
    cmp = {c["metric"]: c for c in metrics.comparison(g, u, ROWS)}
    assert cmp["answered_unanswerable_rate"]["gated"] == 0.5 and cmp["answered_unanswerable_rate"]["ungated"] == 1.0
    assert cmp["answer_precision"]["gated"] == round(1 / 3, 4)
    assert cmp["unsupported_claim_rate"]["gated"] == 0.0


def test_gates_changed_counts_questions_whose_shown_outcome_differs():
    # the refused answerable question and the refused unanswerable one were answered without gates;
    # the others were shown the same way either way
    assert metrics.gates_changed(ROWS) == 2


def test_calibration_and_tradeoff():
    cal = metrics.calibration(ROWS)
    bands = {b["band"]: b for b in cal["bands"]}
    assert bands["TINGGI"] == {"band": "TINGGI", "answered": 1, "correct": 1, "accuracy": 1.0}
    assert bands["SEDANG"]["answered"] == 2 and bands["SEDANG"]["accuracy"] == 0.0
    assert sum(b["n"] for b in cal["bins"]) == 3
    curve = {p["threshold"]: p for p in metrics.tradeoff(ROWS)}
    assert curve[0.0]["answered_rate"] == 0.6 and curve[0.0]["abstention_recall"] == 0.5
    assert curve[0.65]["answered_unanswerable_rate"] == 0.5 and curve[0.65]["precision"] == 0.5
    assert curve[0.75]["answered_unanswerable_rate"] == 0.0 and curve[0.75]["precision"] == 1.0
    assert curve[0.95]["answered_rate"] == 0.0 and curve[0.95]["precision"] is None
    answered = [p["answered_rate"] for p in metrics.tradeoff(ROWS)]
    assert answered == sorted(answered, reverse=True)


def test_percentile_nearest_rank():
    assert metrics.percentile([], 50) is None
    assert metrics.percentile([5.0], 95) == 5.0
    assert metrics.percentile(list(map(float, range(1, 101))), 95) == 95.0


def test_source_checker_rejects_a_quote_the_file_does_not_hold(tmp_path):
    f = tmp_path / "doc.md"
    f.write_text("\ufeffPasal 3\n(1) Tarif  PPh atas sewa adalah 10%.\n", encoding="utf-8")
    text = f.read_text(encoding="utf-8")[1:]
    span = (0, len(text))
    c = SourceChecker()
    assert c.exact(str(f), span, "Tarif PPh atas sewa adalah 10%.")  # whitespace folded, nothing else
    assert not c.exact(str(f), span, "Tarif PPh atas sewa adalah 12%.")
    assert not c.exact(str(f), (0, 10), "Tarif PPh atas sewa adalah 10%.")  # outside the chunk's span
    assert not c.exact(str(tmp_path / "gone.md"), span, "Tarif")
    assert not c.exact(None, None, "Tarif")


# --------------------------------------------------------------------------- do shown answers answer?

TRUTH_ROWS = [
    # three correct answers
    row(True, "answer", True, 0.95, "TINGGI", claims=[(0.95, "TINGGI", True)]),
    row(True, "answer", True, 0.92, "TINGGI", claims=[(0.92, "TINGGI", True), (0.6, "SEDANG", False)]),
    row(True, "answer", True, 0.7, "SEDANG", claims=[(0.7, "SEDANG", True)]),
    # a wrong answer to an answerable question
    row(True, "answer", False, 0.85, "TINGGI", claims=[(0.85, "TINGGI", False)]),
    # an answer to an unanswerable question: wrong, and so is its claim whatever the row says
    row(False, "answer", False, 0.9, "TINGGI", claims=[(0.9, "TINGGI", True)]),
    # refusals: an answerable question (its partial claim is not shown as an answer) and an unanswerable one
    row(True, "refusal", False, reason="missing_evidence", claims=[(0.5, "RENDAH", True)]),
    row(False, "refusal", True, reason="no_supported_claims", claims=[]),
]


def test_truthfulness_by_hand():
    t = metrics.truthfulness(TRUTH_ROWS)
    assert t["score"] == round((3 - 2) / 7, 4)
    assert (t["questions"], t["correct_answers"], t["wrong_answers"], t["answered_unanswerable"], t["refusals"]) == (
        7, 3, 2, 1, 2)
    assert t["answer_precision"] == 0.6                        # 3 right of 5 answered
    # refusal is the positive class: 1 true (unanswerable refused), 1 false (answerable refused), 1 missed
    assert t["refusal"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert t["claims"] == {"shown": 6, "correct": 3, "precision": 0.5}


def test_truthfulness_of_rows_without_claims():
    t = metrics.truthfulness(ROWS)  # 1 correct answer, 1 wrong, 1 answer to an unanswerable question, 2 refusals
    assert t["score"] == round((1 - 2) / 5, 4) and t["answer_precision"] == round(1 / 3, 4)
    assert t["claims"] == {"shown": 0, "correct": 0, "precision": None} and t["ece"]["claims"] is None
    empty = metrics.truthfulness([])
    assert empty["score"] is None and empty["refusal"] == {"precision": None, "recall": None, "f1": None}


def test_per_band_claim_precision():
    bands = {b["band"]: b for b in metrics.truthfulness(TRUTH_ROWS)["bands"]}
    assert bands["TINGGI"] == {"band": "TINGGI", "claims": 4, "correct": 2, "precision": 0.5}
    assert bands["SEDANG"] == {"band": "SEDANG", "claims": 2, "correct": 1, "precision": 0.5}
    assert bands["RENDAH"] == {"band": "RENDAH", "claims": 0, "correct": 0, "precision": None}
    # the answer-level table is unchanged: one row per answered question, by its top claim's band
    answers = {b["band"]: b for b in metrics.calibration(TRUTH_ROWS)["bands"]}
    assert answers["TINGGI"]["answered"] == 4 and answers["SEDANG"]["answered"] == 1


def test_ece_by_hand():
    # bin 9: 0.95 right, 0.95 wrong → |0.5 − 0.95| × 2/4; bin 6: |1 − 0.65| × 1/4; bin 2: |0 − 0.25| × 1/4
    pairs = [(0.95, True), (0.95, False), (0.65, True), (0.25, False)]
    assert metrics.ece(pairs) == round(0.45 * 2 / 4 + 0.35 / 4 + 0.25 / 4, 4) == 0.375
    assert metrics.ece([(1.0, True), (0.0, False)]) == 0.0     # both edges fall in a bin
    assert metrics.ece([]) is None
    e = metrics.truthfulness(TRUTH_ROWS)["ece"]
    # claims: bin 9 {.95 ✓, .92 ✓, .9 ✗} |2 − 2.77|, bin 8 {.85 ✗} .85, bin 7 {.7 ✓} .3, bin 6 {.6 ✗} .6
    assert e == {"bins": 10, "claims": round((0.77 + 0.85 + 0.3 + 0.6) / 6, 4),
                 "answers": round((0.77 + 0.85 + 0.3) / 5, 4)}


def test_reliability_bins_claims():
    rel = metrics.reliability(TRUTH_ROWS)
    assert len(rel["claims"]) == len(rel["answers"]) == 10
    assert sum(b["n"] for b in rel["claims"]) == 6 and sum(b["n"] for b in rel["answers"]) == 5
    top = rel["claims"][9]
    assert (top["lo"], top["hi"], top["n"]) == (0.9, 1.0, 3)
    assert top["mean_confidence"] == round((0.95 + 0.92 + 0.9) / 3, 4) and top["accuracy"] == round(2 / 3, 4)
    assert rel["claims"][0] == {"lo": 0.0, "hi": 0.1, "n": 0, "mean_confidence": None, "accuracy": None}


def test_risk_coverage_by_hand():
    curve = metrics.risk_coverage(TRUTH_ROWS)
    assert [p["threshold"] for p in curve] == [0.95, 0.92, 0.9, 0.85, 0.7]
    assert [p["answered"] for p in curve] == [1, 2, 3, 4, 5]
    assert [p["precision"] for p in curve] == [1.0, 1.0, round(2 / 3, 4), 0.5, 0.6]
    assert [p["truthfulness"] for p in curve] == [round(x / 7, 4) for x in (1, 2, 1, 0, 1)]
    coverage = [p["coverage"] for p in curve]
    assert coverage == sorted(coverage) and coverage[-1] == round(5 / 7, 4)
    # the last point is the run as it was
    t = metrics.truthfulness(TRUTH_ROWS)
    assert curve[-1]["truthfulness"] == t["score"] and curve[-1]["precision"] == t["answer_precision"]


def test_risk_coverage_ties_enter_together_and_coverage_never_falls():
    rows = [row(True, "answer", i % 2 == 0, c, "SEDANG") for i, c in enumerate([0.7, 0.7, 0.6, 0.9, 0.6, 0.6])]
    rows.append(row(False, "refusal", True))
    curve = metrics.risk_coverage(rows)
    assert [(p["threshold"], p["answered"]) for p in curve] == [(0.9, 1), (0.7, 3), (0.6, 6)]
    assert all(a["coverage"] <= b["coverage"] for a, b in zip(curve, curve[1:]))
    assert metrics.risk_coverage([row(False, "refusal", True)]) == []


def _claim(quote: str, value: float, band: str, ok: bool = True, status: str = "supported") -> VerifiedClaim:
    conf = Confidence(judge=1.0, retrieval=1.0, generator=1.0, weights={}, raw=value, cap=None, value=value, band=band)
    cite = CitationCheck(chunk_id="c1", quote=quote, document="d", location="1", ok=ok)
    return VerifiedClaim(text=quote, status=status, citations=(cite,), confidence=conf)


def test_score_carries_the_shown_claims(tmp_path):
    claims = (_claim("Tarifnya 10% dari bruto.", 0.91, "TINGGI"), _claim("Berlaku sejak 2024.", 0.6, "SEDANG"),
              _claim("Tarifnya 10% juga.", 0.7, "SEDANG", ok=False),                  # a failed quote holds nothing
              _claim("Tarif 10%.", 0.5, "RENDAH", status="unsupported"))             # demoted: not shown
    result = Result("answer", "Berapa tarifnya?", "id", claims, ())
    trace = SimpleNamespace(parts=[])
    q = Question("q1", "Berapa tarifnya?", ("10%",), True)
    r = score(q, result, trace, 5.0, SourceChecker(), True, None)
    assert r["shown_claims"] == [{"confidence": 0.91, "band": "TINGGI", "correct": True},
                                 {"confidence": 0.6, "band": "SEDANG", "correct": False},
                                 {"confidence": 0.7, "band": "SEDANG", "correct": False}]
    unanswerable = score(Question("q2", "Siapa?", (), False), result, trace, 5.0, SourceChecker(), True, None)
    assert [c["correct"] for c in unanswerable["shown_claims"]] == [False, False, False]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_one_line_on_a_terminal_only():
    tty = _Tty()
    bar = ProgressBar(4, "questions", stream=tty, width=8)
    bar.update(1, "1 correct")
    bar.update(4, "3 correct")  # the last update is always drawn
    bar.close()
    out = tty.getvalue()
    assert out.startswith("\r  [##......] 1/4 questions, 1 correct")
    assert "\r  [########] 4/4 questions, 3 correct" in out
    assert out.endswith("\n") and out.count("\n") == 1
    plain = io.StringIO()
    bar = ProgressBar(4, "questions", stream=plain)
    bar.update(4, "4 correct")
    bar.close()
    assert not bar.on and plain.getvalue() == ""
