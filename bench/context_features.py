"""Why an answer of the small corpus is refused among neighbours: the reader's context features, swapped one at a time.

    .venv/bin/python bench/context_features.py SMALL_RUN LARGE_RUN --small-corpus DIR --large-corpus DIR
        [--out bench/results/context_features.json]

SMALL_RUN and LARGE_RUN are two `saksi eval` runs of the same referenced dataset (legal_qa dev: the small corpus, and
`bench/legal_neighbours.py`'s neighbours corpus), each directory holding its questions.jsonl and traces. For every
question the small run answered right and the large one refused, the small run's top claim (the candidate its
generator claimed first, on the attempt that answered) is looked up among the candidates the large corpus's first
attempt reads, and read again by the reader (its own reading, before agreement) in the large corpus's context:
as it is, with the small corpus's value of each context feature put back one at a time (`coverage_gap_best`,
`coverage_rank`, `n_candidates`, `n_full_coverage`, `same_item_best`, and `title_coverage`, which moves with the
collection's term weights), and with the small corpus's whole row. A feature that gives back most of the fall is
what the neighbours changed (docs/capacity.md, issue 30, eighth session: `n_full_coverage` counts every document's
candidates). Nothing is refitted; the questions are asked again with the default profile.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SWAPPED = ("coverage_gap_best", "coverage_rank", "n_candidates", "n_full_coverage", "same_item_best", "title_coverage")


def _rows(run: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, (run / "questions.jsonl").read_text(encoding="utf-8").splitlines())}


def _right(row: dict) -> bool:
    """Answered, its top claim at the gold Pasal."""
    top = (row.get("receipt") or {}).get("top") or {}
    return row["outcome"] == "answer" and bool(top.get("pasal"))


def _claimed_quote(run: Path, row: dict) -> str | None:
    """The quote of the candidate the answering attempt claimed first."""
    trace = json.loads((run / row["trace"]).read_text(encoding="utf-8"))
    part = trace["parts"][0]
    attempt = part["attempts"][-1] if row.get("retried") else part["attempts"][0]
    return next((s["quote"] for s in attempt["generator_output"]["scores"] if s["claimed"]), None)


def _reading(corpus, question: str, quote: str):
    """The first attempt's reader input (features, model, its keyword arguments) and the row of `quote`, or None."""
    from pipeline.answer_reader.features import Featurizer
    from pipeline.answer_reader.model import ReaderModel

    seen, calls = [], []
    matrix, probability = Featurizer.matrix, ReaderModel.probability

    def capture_matrix(self, *args, **kwargs):
        x, keep = matrix(self, *args, **kwargs)
        seen.append((keep, args[2]))
        return x, keep

    def capture_probability(self, x, **kwargs):
        calls.append((self, x.copy(), kwargs))
        return probability(self, x, **kwargs)
    Featurizer.matrix, ReaderModel.probability = capture_matrix, capture_probability
    try:
        asyncio.run(corpus.orchestrator(write_traces=False).run(question))
    finally:
        Featurizer.matrix, ReaderModel.probability = matrix, probability
    (keep, views), (model, x, kwargs) = seen[0], calls[0]
    row = next((r for r, i in enumerate(keep) if views[i].text == quote), None)
    if row is None:  # a unit's view joins its pieces as the quote does not
        row = next((r for r, i in enumerate(keep) if views[i].text.startswith(quote[:80])), None)
    return (model, x, kwargs, row) if row is not None else None


def _one(question: str, quote: str, small_corpus, large_corpus) -> dict:
    from pipeline.answer_reader import FEATURES

    small, large = _reading(small_corpus, question, quote), _reading(large_corpus, question, quote)
    if small is None or large is None:
        return {"read": None, "why": "the claimed candidate is not read in " + ("the small" if small is None else
                                                                               "the large") + " corpus"}
    _, xs, _, rs = small
    model, xl, kwargs, rl = large

    def read(x) -> float:
        return round(float(model.probability(x, **kwargs)[rl]), 4)
    out = {"small": round(float(small[0].probability(xs, **small[2])[rs]), 4), "large": read(xl), "swapped": {}}
    for name in SWAPPED:
        j = FEATURES.index(name)
        x = xl.copy()
        x[rl, j] = xs[rs, j]
        out["swapped"][name] = {"large": float(xl[rl, j]), "small": float(xs[rs, j]), "read": read(x)}
    x = xl.copy()
    x[rl] = xs[rs]
    out["whole_row"] = read(x)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("small_run", type=Path)
    ap.add_argument("large_run", type=Path)
    ap.add_argument("--small-corpus", type=Path, required=True)
    ap.add_argument("--large-corpus", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "context_features.json")
    args = ap.parse_args()
    from pipeline.config import load_profile
    from pipeline.corpus.corpus import Corpus

    small, large = _rows(args.small_run), _rows(args.large_run)
    result = {}
    with Corpus(args.small_corpus, load_profile("lite")) as small_corpus, \
            Corpus(args.large_corpus, load_profile("lite")) as large_corpus:  # each opened once
        for qid, row in small.items():
            other = large.get(qid)
            if not (_right(row) and other is not None and other["outcome"] != "answer"):
                continue
            quote = _claimed_quote(args.small_run, row)
            result[qid] = _one(row["question"], quote, small_corpus, large_corpus) if quote else {"read": None}
            print(qid, json.dumps(result[qid])[:200], file=sys.stderr)
    explained = {name: sum(1 for r in result.values() if r.get("large") is not None and r["small"] - r["large"] > 0.1
                           and r["swapped"][name]["read"] - r["large"] >= 0.8 * (r["small"] - r["large"]))
                 for name in SWAPPED}
    fell = sum(1 for r in result.values() if r.get("large") is not None and r["small"] - r["large"] > 0.1)
    summary = {"questions": len(result), "reading_fell_by_over_0.1": fell,
               "fall_given_back_by_one_feature (80%)": explained, "per_question": result}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in summary.items() if k != "per_question"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
