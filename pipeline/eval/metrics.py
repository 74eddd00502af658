"""Scoring: one row per question, then the run's metrics, calibration, trade-off and truthfulness.

A row is plain JSON (it is written to questions.jsonl and read by the HTML report), so
every number in a report can be recomputed from the rows alone. Metric keys are
documented in docs/evaluation.md; they are stable.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

from .receipts import same_law

BANDS = ("TINGGI", "SEDANG", "RENDAH")


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(-(-q * len(ordered) // 100)) - 1))
    return round(ordered[k], 1)


def _split(rows: Sequence[dict]) -> tuple[list[dict], list[dict]]:
    return [r for r in rows if r["answerable"]], [r for r in rows if not r["answerable"]]


def gated_metrics(rows: Sequence[dict], k_values: Iterable[int], recall_basis: str) -> dict:
    """The contract as shown to a user: what was answered, refused, displayed, demoted."""
    ans, imp = _split(rows)
    answered_ans = [r for r in ans if r["outcome"] == "answer"]
    correct_ans = [r for r in ans if r["correct"]]
    refused = [r for r in rows if r["outcome"] == "refusal"]
    refused_imp = [r for r in imp if r["outcome"] == "refusal"]
    demotions = Counter(reason for r in rows for reason in r["demotion_reasons"])
    quotes_checked = sum(r["quotes_checked"] for r in rows)
    quotes_exact = sum(r["quotes_exact"] for r in rows)
    latencies = [r["latency_ms"] for r in rows]
    recall = {}
    for k in k_values:  # the gold passage among the first k reranked candidates of the first attempt
        recall[str(k)] = _rate(sum(1 for r in ans if r["gold_rank"] is not None and r["gold_rank"] <= k), len(ans))
    return {
        "questions": len(rows),
        "answerable": len(ans),
        "unanswerable": len(imp),
        "attributed_accuracy": _rate(len(correct_ans), len(ans)),
        "attributed_accuracy_top1": _rate(sum(1 for r in ans if r["correct_top1"]), len(ans)),
        "answered_answerable_rate": _rate(len(answered_ans), len(ans)),
        "abstention_recall": _rate(len(refused_imp), len(imp)),
        "abstention_precision": _rate(len(refused_imp), len(refused)),
        "overall_accuracy": _rate(len(correct_ans) + len(refused_imp), len(rows)),
        "quote_exactness": _rate(quotes_exact, quotes_checked),
        "quotes_checked": quotes_checked,
        "numbers_without_basis_displayed": sum(r["numbers_without_basis"] for r in rows),
        "claims_displayed_supported": sum(r["supported_claims"] for r in rows),
        "claims_demoted": sum(r["demoted_claims"] for r in rows),
        "demotion_reasons": dict(demotions.most_common()),
        "corrective_retries": sum(1 for r in rows if r["retried"]),
        "answered_after_retry": sum(1 for r in rows if r["retried"] and r["outcome"] == "answer"),
        "refusal_reasons": dict(Counter(r["reason_code"] for r in refused).most_common()),
        "retrieval_recall": {"basis": recall_basis, "at": recall},
        "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95),
                       "mean": round(sum(latencies) / len(latencies), 1) if latencies else None},
    }


def ungated_metrics(rows: Sequence[dict]) -> dict:
    """The same retrieval and first generator output with the gates off: every claim shown."""
    ans, imp = _split(rows)
    u = [r["ungated"] for r in rows]
    shown = sum(x["claims"] for x in u)
    answered = [r for r in rows if r["ungated"]["answered"]]
    correct_ans = [r for r in ans if r["ungated"]["correct"]]
    refused_imp = [r for r in imp if not r["ungated"]["answered"]]
    not_answered = [r for r in rows if not r["ungated"]["answered"]]
    return {
        "questions": len(rows),
        "attributed_accuracy": _rate(len(correct_ans), len(ans)),
        "answered_answerable_rate": _rate(sum(1 for r in ans if r["ungated"]["answered"]), len(ans)),
        "abstention_recall": _rate(len(refused_imp), len(imp)),
        "abstention_precision": _rate(len(refused_imp), len(not_answered)),
        "answered_unanswerable_rate": _rate(len(imp) - len(refused_imp), len(imp)),
        "overall_accuracy": _rate(len(correct_ans) + len(refused_imp), len(rows)),
        "claims_displayed": shown,
        "unsupported_claim_rate": _rate(sum(x["unsupported"] for x in u), shown),
        "quote_exactness": _rate(sum(x["quotes_exact"] for x in u), sum(x["quotes_checked"] for x in u)),
        "numbers_without_basis_displayed": sum(x["numbers_without_basis"] for x in u),
        "answers_missing_required_evidence": sum(1 for x in u if x["answered"] and x["missing_evidence"]),
        "answer_precision": _rate(len(correct_ans), len(answered)),
    }


def answer_precision(rows: Sequence[dict]) -> float | None:
    answered = [r for r in rows if r["outcome"] == "answer"]
    return _rate(sum(1 for r in answered if r["correct"]), len(answered))


_COMPARED = [
    ("attributed_accuracy", "Attributed accuracy (answerable)", "higher"),
    ("abstention_recall", "Abstention recall (unanswerable refused)", "higher"),
    ("answered_unanswerable_rate", "Answered an unanswerable question", "lower"),
    ("answer_precision", "Answers that were correct", "higher"),
    ("overall_accuracy", "Overall accuracy", "higher"),
    ("unsupported_claim_rate", "Claims shown as answer that fail a gate", "lower"),
    ("quote_exactness", "Quote exactness", "higher"),
    ("numbers_without_basis_displayed", "Numbers without basis displayed", "lower"),
    ("answers_missing_required_evidence", "Answers missing required evidence", "lower"),
]


def comparison(gated: dict, ungated: dict, rows: Sequence[dict]) -> list[dict]:
    """Side by side. With the gates, nothing that fails a gate is shown as the answer, so
    the gated unsupported-claim rate and missing-evidence count are 0 by construction;
    quote exactness and unbacked numbers are re-measured independently from the sources."""
    imp = [r for r in rows if not r["answerable"]]
    g = dict(gated)
    g["answered_unanswerable_rate"] = _rate(sum(1 for r in imp if r["outcome"] == "answer"), len(imp))
    g["answer_precision"] = answer_precision(rows)
    g["unsupported_claim_rate"] = 0.0 if gated["claims_displayed_supported"] else None
    g["answers_missing_required_evidence"] = 0
    return [{"metric": key, "label": label, "gated": g.get(key), "ungated": ungated.get(key), "better": better}
            for key, label, better in _COMPARED]


def gates_changed(rows: Sequence[dict]) -> int:
    """Questions whose shown outcome (answered or not, right or not) differs with the gates off."""
    return sum(1 for r in rows if (r["outcome"] == "answer", r["correct"]) != (r["ungated"]["answered"],
                                                                                 r["ungated"]["correct"]))


def _bin_of(confidence: float, n_bins: int) -> int:
    """Equal-width bins on [0, 1]: lo ≤ c < hi, the last bin also holds 1.0."""
    return next((i for i in range(n_bins) if confidence < (i + 1) / n_bins), n_bins - 1)


def _bins(pairs: Sequence[tuple[float, bool]], n_bins: int) -> list[dict]:
    """(confidence, correct) pairs in equal-width bins: count, mean confidence, accuracy."""
    grouped: list[list[tuple[float, bool]]] = [[] for _ in range(n_bins)]
    for c, ok in pairs:
        grouped[_bin_of(c, n_bins)].append((c, ok))
    return [{"lo": i / n_bins, "hi": (i + 1) / n_bins, "n": len(got),
             "mean_confidence": round(sum(c for c, _ in got) / len(got), 4) if got else None,
             "accuracy": _rate(sum(1 for _, ok in got if ok), len(got))} for i, got in enumerate(grouped)]


def calibration(rows: Sequence[dict], n_bins: int = 20) -> dict:
    """Does a higher band mean a more often correct answer? Over every answered question
    (an answered unanswerable question is wrong)."""
    answered = [r for r in rows if r["outcome"] == "answer" and r["confidence"] is not None]
    bands = []
    for band in BANDS:
        got = [r for r in answered if r["band"] == band]
        ok = sum(1 for r in got if r["correct"])
        bands.append({"band": band, "answered": len(got), "correct": ok, "accuracy": _rate(ok, len(got))})
    return {"bands": bands, "bins": _bins([(r["confidence"], r["correct"]) for r in answered], n_bins)}


def tradeoff(rows: Sequence[dict], step: float = 0.05) -> list[dict]:
    """What an answer-level confidence threshold would do: answer only when the best
    supported claim reaches it, otherwise refuse."""
    ans, imp = _split(rows)
    out = []
    n = int(round(1 / step))
    for i in range(n + 1):
        t = round(i * step, 4)

        def shown(r: dict) -> bool:
            return r["outcome"] == "answer" and (r["confidence"] or 0.0) >= t
        answered = [r for r in rows if shown(r)]
        correct = sum(1 for r in ans if shown(r) and r["correct"])
        answered_imp = sum(1 for r in imp if shown(r))
        out.append({"threshold": t, "answered_rate": _rate(len(answered), len(rows)),
                    "attributed_accuracy": _rate(correct, len(ans)),
                    "abstention_recall": _rate(len(imp) - answered_imp, len(imp)),
                    "answered_unanswerable_rate": _rate(answered_imp, len(imp)),
                    "precision": _rate(correct, len(answered))})
    return out


# --------------------------------------------------------------------------- do shown answers answer?


def _right(r: dict) -> bool:
    """An answered question answered correctly (an answer to an unanswerable question never is)."""
    return r["outcome"] == "answer" and r["answerable"] and r["correct"]


def shown_claims(rows: Sequence[dict]) -> list[dict]:
    """Every supported claim of an answered question, in order; one answering an unanswerable
    question is wrong whatever it quotes."""
    return [{**c, "correct": bool(c["correct"]) and r["answerable"]}
            for r in rows if r["outcome"] == "answer" for c in r.get("shown_claims") or ()]


def _claim_pairs(rows: Sequence[dict]) -> list[tuple[float, bool]]:
    return [(c["confidence"], c["correct"]) for c in shown_claims(rows) if c["confidence"] is not None]


def _answer_pairs(rows: Sequence[dict]) -> list[tuple[float, bool]]:
    return [(r["confidence"], _right(r)) for r in rows if r["outcome"] == "answer" and r["confidence"] is not None]


def ece(pairs: Sequence[tuple[float, bool]], n_bins: int = 10) -> float | None:
    """Expected calibration error: Σ over equal-width bins of (n_b / N)·|accuracy_b − mean confidence_b|."""
    if not pairs:
        return None
    gap = [0.0] * n_bins
    for c, ok in pairs:
        gap[_bin_of(c, n_bins)] += float(ok) - c
    return round(sum(abs(g) for g in gap) / len(pairs), 4)


def claim_bands(rows: Sequence[dict]) -> list[dict]:
    """Per band, the claims shown with it and the share that hold a gold answer."""
    claims = shown_claims(rows)
    out = []
    for band in BANDS:
        got = [c for c in claims if c["band"] == band]
        ok = sum(1 for c in got if c["correct"])
        out.append({"band": band, "claims": len(got), "correct": ok, "precision": _rate(ok, len(got))})
    return out


def truthfulness(rows: Sequence[dict], n_bins: int = 10) -> dict:
    """CRAG-style: +1 a correct answer, 0 a refusal, −1 a wrong answer or any answer to an
    unanswerable question; with the answer and refusal precision behind it and the claims' bands."""
    ans, imp = _split(rows)
    correct = sum(1 for r in rows if _right(r))
    answered = sum(1 for r in rows if r["outcome"] == "answer")
    wrong = answered - correct
    tp = sum(1 for r in imp if r["outcome"] != "answer")                     # unanswerable, refused
    fp = sum(1 for r in ans if r["outcome"] != "answer")                     # answerable, refused
    claims = shown_claims(rows)
    right_claims = sum(1 for c in claims if c["correct"])
    return {
        "score": _rate(correct - wrong, len(rows)),
        "questions": len(rows), "correct_answers": correct, "wrong_answers": wrong,
        "answered_unanswerable": len(imp) - tp, "refusals": len(rows) - answered,
        "answer_precision": _rate(correct, answered),
        "refusal": {"precision": _rate(tp, tp + fp), "recall": _rate(tp, len(imp)),
                    "f1": _rate(2 * tp, 2 * tp + fp + (len(imp) - tp))},
        "claims": {"shown": len(claims), "correct": right_claims, "precision": _rate(right_claims, len(claims))},
        "bands": claim_bands(rows),
        "ece": {"bins": n_bins, "claims": ece(_claim_pairs(rows), n_bins), "answers": ece(_answer_pairs(rows), n_bins)},
    }


def reliability(rows: Sequence[dict], n_bins: int = 10) -> dict:
    """The reliability diagrams' data: shown claims (composite confidence vs holding a gold
    answer) and answered questions (top confidence vs answered correctly), in equal-width bins."""
    return {"claims": _bins(_claim_pairs(rows), n_bins), "answers": _bins(_answer_pairs(rows), n_bins)}


def risk_coverage(rows: Sequence[dict]) -> list[dict]:
    """Answer only when the top confidence reaches t, otherwise refuse. One point per distinct
    top confidence of an answered question (4 places), highest first, so coverage only grows;
    the last point is the run as it was."""
    answered = sorted((r for r in rows if r["outcome"] == "answer"),
                      key=lambda r: round(r["confidence"] or 0.0, 4), reverse=True)
    out: list[dict] = []
    correct = 0
    for i, r in enumerate(answered):
        correct += _right(r)
        t = round(r["confidence"] or 0.0, 4)
        if i + 1 < len(answered) and round(answered[i + 1]["confidence"] or 0.0, 4) == t:
            continue  # ties enter together
        kept, wrong = i + 1, i + 1 - correct
        out.append({"threshold": t, "answered": kept, "correct": correct, "wrong": wrong,
                    "coverage": _rate(kept, len(rows)), "precision": _rate(correct, kept),
                    "truthfulness": _rate(correct - wrong, len(rows))})
    return out


# --------------------------------------------------------------------------- receipts against gold references

RECEIPT_LEVELS = ("law", "pasal", "ayat", "huruf")


def _receipt_rows(rows: Sequence[dict]) -> list[dict]:
    return [r for r in rows if isinstance(r.get("receipt"), dict)]


def _gold_has(r: dict, level: str) -> bool:
    ref = r["receipt"]["reference"]
    return level in ("law", "pasal") or bool(ref.get(level))


def _top_hit(r: dict, level: str) -> bool:
    top = r["receipt"].get("top")
    return bool(top and top.get(level))


def _answered(r: dict) -> bool:
    return r["outcome"] == "answer"


def receipt_levels(rows: Sequence[dict]) -> dict:
    """Per level (law; Pasal = law and Pasal; ayat and huruf/angka where the gold has one): of the
    referenced questions whose gold has the level and of those answered, how many the top claim's
    (and any shown claim's) verified receipts hit; precision over answered, recall over all."""
    refd = _receipt_rows(rows)
    out = {}
    for level in RECEIPT_LEVELS:
        have = [r for r in refd if _gold_has(r, level)]
        answered = [r for r in have if _answered(r)]
        top = sum(1 for r in answered if _top_hit(r, level))
        anyc = sum(1 for r in answered if r["receipt"]["any"].get(level))
        out[level] = {"questions": len(have), "answered": len(answered),
                      "top": {"hits": top, "precision": _rate(top, len(answered)), "recall": _rate(top, len(have))},
                      "any": {"hits": anyc, "precision": _rate(anyc, len(answered)), "recall": _rate(anyc, len(have))}}
    return out


def receipt_bands(rows: Sequence[dict]) -> list[dict]:
    """Pasal precision of answered referenced questions per band of the top claim, beside the confidence the top
    claims stated (their mean): a band is calibrated where the two agree."""
    answered = [r for r in _receipt_rows(rows) if _answered(r)]
    out = []
    for band in BANDS:
        got = [r for r in answered if (r["receipt"].get("top") or {}).get("band") == band]
        hits = sum(1 for r in got if _top_hit(r, "pasal"))
        stated = [c for r in got if (c := r["receipt"]["top"].get("confidence")) is not None]
        out.append({"band": band, "answered": len(got), "pasal_hits": hits, "precision": _rate(hits, len(got)),
                    "mean_confidence": round(sum(stated) / len(stated), 4) if stated else None})
    return out


def receipt_curve(rows: Sequence[dict]) -> list[dict]:
    """Answer a referenced question only when its top confidence reaches t: one point per distinct top
    confidence (4 places), highest first, with the answered rate (over referenced questions) and the
    top claim's Pasal precision; the last point is the run as it was."""
    refd = _receipt_rows(rows)
    answered = sorted((r for r in refd if _answered(r)), key=lambda r: round(r["confidence"] or 0.0, 4),
                      reverse=True)
    out: list[dict] = []
    hits = 0
    for i, r in enumerate(answered):
        hits += _top_hit(r, "pasal")
        t = round(r["confidence"] or 0.0, 4)
        if i + 1 < len(answered) and round(answered[i + 1]["confidence"] or 0.0, 4) == t:
            continue  # ties enter together
        out.append({"threshold": t, "answered": i + 1, "answered_rate": _rate(i + 1, len(refd)),
                    "pasal_hits": hits, "pasal_precision": _rate(hits, i + 1)})
    return out


def receipts(rows: Sequence[dict]) -> dict | None:
    """Receipts against the gold references (docs/evaluation.md, `receipts`); None without references."""
    refd = _receipt_rows(rows)
    if not refd:
        return None
    answered = [r for r in refd if _answered(r)]
    span = [r for r in refd if r["receipt"]["span_answer"]]
    span_answered = [r for r in span if _answered(r)]
    span_hits = sum(1 for r in span_answered if r["receipt"]["span_hit"])
    return {
        "questions": len(refd), "answered": len(answered), "answered_rate": _rate(len(answered), len(refd)),
        "levels": receipt_levels(rows),
        "pasal_by_band": receipt_bands(rows),
        "span": {"questions": len(span), "answered": len(span_answered), "hits": span_hits,
                 "rate": _rate(span_hits, len(span)), "precision": _rate(span_hits, len(span_answered))},
        "curve": receipt_curve(rows),
        "gold_pasal_read": gold_pasal_read(refd),
    }


def gold_pasal_read(refd: Sequence[dict], ks: Iterable[int] = (1, 6, 30)) -> dict:
    """Of the referenced questions, the share whose first attempt had a passage at the gold law and Pasal among
    its first k reranked candidates (the generator reads the first six): retrieval's part of a receipt."""
    ranks = [r["receipt"].get("gold_pasal_rank") for r in refd]
    return {"questions": len(ranks),
            "at": {str(k): _rate(sum(1 for x in ranks if x is not None and x <= k), len(ranks)) for k in ks}}


def leave_out(rows: Sequence[dict], law: str) -> dict:
    """Questions about a regulation removed from the corpus: how many were answered anyway, from
    another regulation (every law the shown claims cite is another), shown as several regulations
    (an "ambiguous" conflict: not an error), or refused."""
    asked = [r for r in _receipt_rows(rows) if same_law(r["receipt"]["reference"]["law"], law)]
    answered = [r for r in asked if _answered(r)]
    ambiguous = [r for r in answered if "ambiguous" in (r.get("conflicts") or ())]
    citing_removed = [r for r in answered if any(same_law(x, law) for x in r["receipt"]["laws"])]
    apart = {id(r) for r in ambiguous + citing_removed}
    other = [r for r in answered if id(r) not in apart]
    n = len(asked)
    return {
        "law": law, "questions": n,
        "answered": len(answered), "answered_rate": _rate(len(answered), n),
        "answered_from_another": len(other), "answered_from_another_rate": _rate(len(other), n),
        "answered_ambiguous": len(ambiguous), "answered_ambiguous_rate": _rate(len(ambiguous), n),
        "answered_citing_removed": len(citing_removed),
        "refusals": n - len(answered), "refusal_rate": _rate(n - len(answered), n),
        "laws_cited": dict(Counter(x for r in other for x in r["receipt"]["laws"]).most_common()),
    }
