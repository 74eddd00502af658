"""What the question's term weights do to the reader at scale: a traced legal_qa run read again by the generator
alone, with the weights the run used and with weights counted another way.

    .venv/bin/python bench/term_weights.py eval-runs/lqa-full-s34c [--data data --collection statute-book]
                                           [--weights-from eval-runs/lqa-small-s34c]
                                           [--out bench/results/term_weights.json]

A term's weight is its idf in the collection (analysis.weigh), so it grows with the collection: "TKA" weighs 7.25
among the statute book's 69,487 passages and 1.76 among the four legal_qa regulations, where every passage of PP
34/2021 says it. For each question of the run, its first attempt's generation request (as traced: the same context,
the same candidates) is read again by the profile's generator with

- `recorded`: the weights the run used;
- `local`: each term's idf over the passages of the documents the context comes from (the collection's chunk store,
  read-only), which a collection of any size gives alike;
- `other run` (with --weights-from): the weights another run of the same questions used (e.g. the small corpus's).

Counted per way: questions whose top claim reaches the generator's `answer_at` ("answered", before the gates: the
lite judge entails every exact quote and the answerability cap is the same reading), and of those, the ones whose
top claim's own place is the gold Pasal (`eval.receipts.cite_hits`, the receipt built as the gates build it). An
approximation of the whole pipeline (no retry, no decision), so its figures compare the ways with each other, not
with the run's report. Nothing is embedded or searched.
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.analysis import bm25_idf, query_analyzer, weigh  # noqa: E402
from pipeline.backends import make_generator  # noqa: E402
from pipeline.citations import cite_path, cited_location  # noqa: E402
from pipeline.config import load_profile  # noqa: E402
from pipeline.corpus.datadir import DataDir  # noqa: E402
from pipeline.errors import UnknownCollectionError  # noqa: E402
from pipeline.eval.datasets import Reference  # noqa: E402
from pipeline.eval.receipts import cite_hits, parse_receipt  # noqa: E402
from pipeline.index.store import ChunkStore  # noqa: E402
from pipeline.trace import load_trace  # noqa: E402


class LocalWeights:
    """Each term's idf over the passages of the documents a context comes from."""

    def __init__(self, store: ChunkStore):
        self.store = store
        ids, tokens = store.all_tokens()
        self.tokens = dict(zip(ids, (frozenset(t) for t in tokens)))
        self._docs: dict[str, list[str]] = {}

    def passages(self, doc_id: str) -> list[str]:
        if doc_id not in self._docs:
            self._docs[doc_id] = [c.chunk_id for c in self.store.doc_chunks(doc_id)]
        return self._docs[doc_id]

    def terms(self, terms, doc_ids):
        pool = [cid for d in dict.fromkeys(doc_ids) for cid in self.passages(d)]
        wanted = {tok for t in terms for alt in t.alternatives for tok in alt}
        df = {tok: sum(1 for cid in pool if tok in self.tokens.get(cid, ())) for tok in wanted}
        return tuple(weigh(terms, {tok: bm25_idf(n, len(pool)) for tok, n in df.items() if n}, bm25_idf(0, len(pool))))


def top_claim(generator, request, chunks) -> tuple[float, object | None] | None:
    """The generator's top claim for `request`: its reading and the receipt (Cite) of its own place."""
    out = asyncio.run(generator.generate(request))
    claims = json.loads(out.raw)["claims"]
    if not claims:
        return None
    first = claims[0]["citations"][0]
    chunk = chunks.get(first["chunk_id"])
    if chunk is None:
        return claims[0]["self_score"], None
    at = chunk.text.find(first["quote"])
    label = cited_location(chunk, (at, at + len(first["quote"])) if at >= 0 else None)
    return claims[0]["self_score"], parse_receipt(cite_path(chunk, label))


def rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a `saksi eval` output folder of legal_qa questions (with traces)")
    ap.add_argument("--data", default="data")
    ap.add_argument("--collection", default="statute-book", help="the collection the run asked")
    ap.add_argument("--weights-from", type=Path, help="another run of the same questions: its weights too")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "term_weights.json"))
    args = ap.parse_args()
    for run in (args.run, *([args.weights_from] if args.weights_from else [])):
        if not (run / "questions.jsonl").is_file():
            sys.exit(f"term_weights: {run} is not a `saksi eval` output (no questions.jsonl)")
    try:
        where = DataDir(args.data).existing(args.collection)
    except UnknownCollectionError as e:
        sys.exit(f"term_weights: {e}")
    profile = load_profile("lite")
    generator = make_generator(profile, query_analyzer(profile))
    answer_at = profile.settings.generator.answer_at or 0.0
    store = ChunkStore(where.root, read_only=True)
    local = LocalWeights(store)
    other = {r["id"]: r for r in rows(args.weights_from)} if args.weights_from else {}
    ways = ["recorded", "local"] + (["other run"] if other else [])
    got: dict[str, dict[str, tuple[bool, bool]]] = {w: {} for w in ways}
    try:
        for row in rows(args.run):
            ref = (row.get("receipt") or {}).get("reference")
            attempt = load_trace(args.run / row["trace"]).parts[0].attempts[0]
            request = attempt.generator_request
            if not ref or request is None:
                continue
            gold = Reference(ref["law"], tuple(ref["pasal"]), ref.get("ayat"), ref.get("huruf"))
            chunks = {c.chunk.chunk_id: c.chunk for c in attempt.candidates}
            terms = {"recorded": request.terms,
                     "local": local.terms(request.terms, [chunks[x.chunk_id].doc_id for x in request.context
                                                          if x.chunk_id in chunks])}
            if other:
                theirs = load_trace(args.weights_from / other[row["id"]]["trace"]).parts[0].attempts[0].query.terms
                weight = {t.term: t.weight for t in theirs}
                terms["other run"] = tuple(dataclasses.replace(t, weight=weight.get(t.term, t.weight))
                                           for t in request.terms)
            for way in ways:
                top = top_claim(generator, dataclasses.replace(request, terms=terms[way]), chunks)
                answered = top is not None and top[0] >= answer_at
                got[way][row["id"]] = (answered, bool(answered and top[1] and cite_hits(top[1], gold)["pasal"]))
    finally:
        store.close()
    result = {"run": str(args.run), "collection": args.collection, "answer_at": answer_at,
              "weights_from": str(args.weights_from) if args.weights_from else None, "ways": {}}
    for way in ways:
        answered = sum(a for a, _ in got[way].values())
        right = sum(r for _, r in got[way].values())
        changed = {q: {"recorded": got["recorded"][q], way: v} for q, v in got[way].items()
                   if way != "recorded" and v != got["recorded"][q]}
        result["ways"][way] = {"questions": len(got[way]), "answered": answered, "right": right,
                               "precision": round(right / answered, 4) if answered else None,
                               "changed": {q: {k: {"answered": a, "right": r} for k, (a, r) in v.items()}
                                           for q, v in changed.items()}}
        print(f"{way:>10}: {answered} answered, {right} right" + (f"; {len(changed)} questions change" if changed
                                                                   else ""))
    Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
