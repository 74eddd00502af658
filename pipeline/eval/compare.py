"""Two runs of one referenced dataset, question by question (`saksi eval --compare A B`).

A target such as "Pasal precision among the statute book no worse than in the small corpus" compares
two precisions of a few hundred answers each, over sets of answered questions that differ. Read from
two report.json files, a difference of three answers looks like a verdict; read question by question
it may be noise. This module reads each run's questions.jsonl (nothing is asked again) and says:

- each run's precision at one receipt level (the top claim; default Pasal) with its Wilson 95% interval;
- the difference B - A with Newcombe's 95% interval (method 10: the two answered sets taken as
  independent samples; they share questions, so the interval is wider than a paired one would be);
- every question's move between *refused*, *right* and *wrong*, the moved questions by id (with the
  band and confidence of the top claim in B);
- among the questions both runs answered, the discordant pairs (right in A and wrong in B, and the
  reverse) with the exact two-sided McNemar p-value (a binomial test of the discordant pairs at 1/2).

What it does not do: decide "no worse". That needs a margin the target does not name; the interval and
the paired counts are what a reader weighs against one.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Mapping, Sequence

from .metrics import RECEIPT_LEVELS, _answered, _gold_has, _receipt_rows, _top_hit, receipt_levels

STATES = ("refused", "right", "wrong")
Z95 = 1.959964


class RunRowsError(ValueError):
    """A run directory without readable rows."""


def load_rows(run: Path) -> dict[str, dict]:
    """A run's referenced rows by question id (questions.jsonl of `saksi eval --out RUN`)."""
    path = Path(run) / "questions.jsonl"
    if not path.is_file():
        raise RunRowsError(f"{run}: no questions.jsonl (a directory written by `saksi eval --out`)")
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise RunRowsError(f"{path}: cannot be read ({e.__class__.__name__})") from None
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise RunRowsError(f"{path}:{n}: not JSON ({e.msg})") from None
            if not isinstance(row, dict):
                raise RunRowsError(f"{path}:{n}: not a row (a JSON object)")
            rows.append(row)
    out = {str(r.get("id")): r for r in _receipt_rows(rows)}
    if not out:
        raise RunRowsError(f"{path}: no question with a gold reference (receipts are compared on referenced "
                           "datasets, such as legal_qa)")
    return out


def state(row: Mapping, level: str) -> str:
    """refused, right (the top claim hits the gold at `level`) or wrong."""
    if not _answered(row):
        return "refused"
    return "right" if _top_hit(row, level) else "wrong"


def wilson(hits: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson's score interval of hits/n (None for n = 0)."""
    if n == 0:
        return None
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe(hits_a: int, n_a: int, hits_b: int, n_b: int, z: float = Z95) -> tuple[float, float] | None:
    """Newcombe's hybrid score interval (1998, method 10) of p_b - p_a, the two taken as independent."""
    wa, wb = wilson(hits_a, n_a, z), wilson(hits_b, n_b, z)
    if wa is None or wb is None:
        return None
    pa, pb = hits_a / n_a, hits_b / n_b
    d = pb - pa
    lower = d - math.sqrt((pb - wb[0]) ** 2 + (wa[1] - pa) ** 2)
    upper = d + math.sqrt((wb[1] - pb) ** 2 + (pa - wa[0]) ** 2)
    return max(-1.0, lower), min(1.0, upper)


def mcnemar_exact(worse: int, better: int) -> float:
    """Exact two-sided McNemar p-value: the smaller of the discordant counts under Binomial(worse + better, 1/2)."""
    n = worse + better
    if n == 0:
        return 1.0
    k = min(worse, better)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def _precision(rows: Sequence[Mapping], level: str) -> dict:
    """The top claim's precision at `level` as the run's report counts it (`metrics.receipt_levels`), with its interval."""
    counted = receipt_levels(rows)[level]
    hits, answered = counted["top"]["hits"], counted["answered"]
    interval = wilson(hits, answered)
    return {"questions": counted["questions"], "answered": answered, "hits": hits,
            "precision": counted["top"]["precision"],
            "interval95": [round(x, 4) for x in interval] if interval else None}


def _top(row: Mapping) -> dict:
    top = row["receipt"].get("top") or {}
    return {"id": str(row.get("id")), "band": top.get("band"), "confidence": top.get("confidence")}


def compare(a: Mapping[str, Mapping], b: Mapping[str, Mapping], level: str = "pasal") -> dict:
    """Run B beside run A (rows by question id, as `load_rows` gives them) at one receipt level."""
    if level not in RECEIPT_LEVELS:
        raise ValueError(f"level must be one of {', '.join(RECEIPT_LEVELS)}, not {level!r}")
    ids = [q for q in a if q in b and _gold_has(a[q], level)]
    if not ids:
        raise RunRowsError("the two runs share no referenced question: were they runs of one dataset?")
    pa, pb = _precision([a[q] for q in ids], level), _precision([b[q] for q in ids], level)
    moves = {f"{x}->{y}": [] for x in STATES for y in STATES}
    for q in ids:
        moves[f"{state(a[q], level)}->{state(b[q], level)}"].append(_top(b[q]) if _answered(b[q]) else
                                                                     {"id": q, "band": None, "confidence": None})
    worse, better = len(moves["right->wrong"]), len(moves["wrong->right"])
    diff = newcombe(pa["hits"], pa["answered"], pb["hits"], pb["answered"])
    return {
        "level": level, "questions": len(ids), "only_in_a": sum(1 for q in a if q not in b),
        "only_in_b": sum(1 for q in b if q not in a), "a": pa, "b": pb,
        "difference": None if diff is None else {"b_minus_a": round(pb["hits"] / pb["answered"]
                                                                   - pa["hits"] / pa["answered"], 4),
                                                 "interval95": [round(x, 4) for x in diff]},
        "paired": {"answered_by_both": sum(len(moves[f"{x}->{y}"]) for x in ("right", "wrong")
                                           for y in ("right", "wrong")),
                   "right_to_wrong": worse, "wrong_to_right": better,
                   "mcnemar_p": round(mcnemar_exact(worse, better), 4)},
        "counts": {k: len(v) for k, v in moves.items()},
        "moves": {k: v for k, v in moves.items() if v and k.split("->")[0] != k.split("->")[1]},
    }


def _pct(v) -> str:
    return "–" if v is None else f"{100 * v:.1f}%"


def _run_line(name: str, p: dict) -> str:
    lo_hi = "" if p["interval95"] is None else f" (95% {_pct(p['interval95'][0])}–{_pct(p['interval95'][1])})"
    return f"{name}: answered {p['answered']} of {p['questions']}, precision {_pct(p['precision'])}{lo_hi}"


def compare_text(result: dict, a_name: str, b_name: str) -> str:
    """The comparison for a terminal."""
    lines = [f"{result['level']} precision of the top claim, {result['questions']} referenced questions in both runs"
             + (f" ({result['only_in_a']} only in A, {result['only_in_b']} only in B: left out)"
                if result["only_in_a"] or result["only_in_b"] else ""),
             _run_line(f"A {a_name}", result["a"]), _run_line(f"B {b_name}", result["b"])]
    d = result["difference"]
    if d is not None:
        lines.append(f"B - A: {100 * d['b_minus_a']:+.1f} points (95% {100 * d['interval95'][0]:+.1f} to "
                     f"{100 * d['interval95'][1]:+.1f}; the answered sets taken as independent)")
    p = result["paired"]
    lines.append(f"answered by both: {p['answered_by_both']}; right in A, wrong in B: {p['right_to_wrong']}; "
                 f"wrong in A, right in B: {p['wrong_to_right']} (exact McNemar p = {p['mcnemar_p']})")
    for move, tops in result["moves"].items():
        shown = ", ".join(t["id"] + (f" ({t['band']} {t['confidence']:.2f})" if t["confidence"] is not None else "")
                          for t in tops)
        lines.append(f"  {move.replace('->', ' -> ')} ({len(tops)}): {shown}")
    return "\n".join(lines)
