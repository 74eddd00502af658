"""How `definitions.restated` reads a collection's definitions: which documents state one definition
in the same words, and which near-identical ones it keeps apart.

    .venv/bin/python bench/restatements.py [--data data] [--collection statute-book] [--samples 12]
                                           [--out bench/results/restatements.json]

Every entry of every definitions article (Pasal 1's angka/huruf spans, as the chunk store's
`definitions` index knows them) is read for its definiens (`definitions.definiens`); for each term
that two or more documents define, every pair of documents' definitions is compared. Printed and
written: entries, terms, terms with several definers, pairs, pairs read as restatements (and of
those, word for word once `term_key` has read them), and random samples of the restatements that
are not word for word, and of the pairs kept apart though 95% of their words are alike (the two
places where `restated` could read wrong: a reader checks them by eye). The samples are drawn with
a fixed seed, so a rerun on the same collection prints the same ones.

The collection is opened read-only; nothing is embedded or searched.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from difflib import SequenceMatcher
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.corpus.datadir import DataDir  # noqa: E402
from pipeline.definitions import definiens, restated  # noqa: E402
from pipeline.index.store import ChunkStore  # noqa: E402

ALIKE = 0.95  # share of words two definitions have alike, for the near misses shown


def definitions(store: ChunkStore) -> dict[str, dict[str, tuple[str, str]]]:
    """term key -> {doc id: (its definiens, the entry as written)}, the first entry of each document."""
    index = store.definitions()
    chunks = store.get({cid for rows in index.values() for cid, _ in rows})
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for key, rows in index.items():
        for cid, label in rows:
            chunk = chunks.get(cid)
            span = next((s for s in chunk.spans if getattr(s, "label", "") == label), None) if chunk else None
            if span is None:
                continue
            entry = chunk.text[span.start:span.end].strip()
            said = definiens(entry)
            if said:
                out.setdefault(key, {}).setdefault(chunk.doc_id, (said, entry))
    return out


def differences(a: str, b: str) -> list[list]:
    """The words two definientia differ by: [op, words of a, words of b] per difference."""
    wa, wb = a.split(), b.split()
    return [[op, wa[i1:i2], wb[j1:j2]] for op, i1, i2, j1, j2
            in SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes() if op != "equal"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="data")
    ap.add_argument("--collection", default="statute-book")
    ap.add_argument("--samples", type=int, default=12)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "restatements.json"))
    args = ap.parse_args()
    where = DataDir(args.data).existing(args.collection)
    store = ChunkStore(where.root, read_only=True)
    try:
        defined = definitions(store)
    finally:
        store.close()
    several = {k: v for k, v in defined.items() if len(v) >= 2}
    pairs = same = word_for_word = 0
    restated_not_identical, kept_apart = [], []
    for key, docs in several.items():
        for (da, (a, ea)), (db, (b, eb)) in combinations(docs.items(), 2):
            pairs += 1
            if restated(a, b):
                same += 1
                if a == b:
                    word_for_word += 1
                else:
                    restated_not_identical.append({"term": key, "documents": [da, db], "differ": differences(a, b)})
            elif SequenceMatcher(None, a.split(), b.split(), autojunk=False).ratio() >= ALIKE:
                kept_apart.append({"term": key, "documents": [da, db], "differ": differences(a, b)})
    rng = random.Random(1)
    result = {
        "collection": args.collection,
        "entries": sum(len(v) for v in defined.values()),
        "terms": len(defined),
        "terms_with_several_definers": len(several),
        "pairs": pairs,
        "restated": same,
        "restated_word_for_word": word_for_word,
        "kept_apart_though_alike": len(kept_apart),
        "alike": ALIKE,
        "samples_restated": rng.sample(restated_not_identical, min(args.samples, len(restated_not_identical))),
        "samples_kept_apart": rng.sample(kept_apart, min(args.samples, len(kept_apart))),
    }
    print(json.dumps({k: v for k, v in result.items() if not k.startswith("samples")}, indent=1))
    for name in ("samples_restated", "samples_kept_apart"):
        print(name)
        for s in result[name]:
            print(f"  {s['term']!r} {s['documents']}: " + "; ".join(
                f"{op} {' '.join(x)!r} / {' '.join(y)!r}" for op, x, y in s["differ"][:3]))
    Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
