"""Metrics from rows, checked against counts worked out by hand."""
from __future__ import annotations

import pytest

from pipeline.eval import metrics
from pipeline.eval.runner import SourceChecker

pytestmark = pytest.mark.unit


def row(answerable, outcome, correct, confidence=None, band=None, *, reason=None, retried=False, gold_rank=None,
        supported=0, demoted=(), u_answered=False, u_correct=False, u_claims=0, u_unsupported=0, u_missing=False,
        latency=10.0):
    return {"answerable": answerable, "outcome": outcome, "correct": correct, "correct_top1": correct and answerable,
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
