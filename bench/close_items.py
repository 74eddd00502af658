"""Choosing generator.close_items on mined questions the reader never trained on: how often the reader's best item of
an enumeration is wrong when a sibling item reads close to it, and how often quoting the close siblings with it
would hold the right item.

    .venv/bin/python bench/close_items.py [--archive ../shared/data/peraturan/uu.tar.xz] [--laws N] [--out FILE.json]

The laws are the *validate* tenth of the archive (pipeline/answer_reader/training.law_part: never fitted or calibrated on).
Each question mined from them whose gold is an enumeration's item, or the enumeration itself, is asked as the reader's
training asks it (its law's chunks and bm25's nearest other chunks as the context, the lite profile's candidates and
features) and read by the committed reader, as the generator reads it (each candidate against its rivals in its own
document). When the reader's best candidate is an item that has siblings (reader/answers.siblings: not a definitions
entry), the bench records the best sibling's reading as a share of the best's, whether the best is the gold, and
whether the gold is among the siblings that reach each share. Printed per share t: the questions whose best item has
a sibling at t or above (they would be quoted with it), how many of those the best item alone answered wrongly, how
many of those the items quoted together hold the gold, and how many right answers gain items beside them.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHARES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8)


def main() -> None:
    from pipeline.config import load_profile
    from pipeline.ingest.chunker import Chunker
    from pipeline.answer_reader import training
    from pipeline.answer_reader.answers import siblings
    from pipeline.answer_reader.mining import mine_law, read_laws
    from pipeline.answer_reader.mining_words import Translator
    from pipeline.answer_reader.model import load_reader, weights_path

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--archive", type=Path, default=ROOT.parent / "shared/data/peraturan/uu.tar.xz")
    ap.add_argument("--laws", type=int, default=None, help="at most this many validation laws (default: all)")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()

    profile = load_profile("lite")
    g = profile.settings.generator
    reader = load_reader(weights_path(g.reader))
    chunker = Chunker(profile.settings.chunking.max_chars)
    laws = list(read_laws(a.archive, chunker, limit=a.laws, keep=lambda name: training.law_part(name) == "validate"))
    asker = training._LawQuestions(profile, training._ChunkPool(laws, training.query_analyzer(profile).analyzers["id"]))
    tr = Translator(profile.glossary, asker.analyzer.analyzers["id"])
    rows = []
    asked = 0
    for law in laws:
        for q in mine_law(law, profile, tr):
            if q.kind not in ("item", "enumeration"):
                continue
            asked += 1
            _, items, cands, x, keep, labels = asker.ask(q)
            if not len(keep):
                continue
            codes: dict[str, int] = {}
            docs = np.array([codes.setdefault(items[cands[i].item].document, len(codes)) for i in keep], np.int64)
            p = reader.probability(x, docs=docs)
            best = int(np.argmax(p))
            c = cands[keep[best]]
            at = {cands[i]: k for k, i in enumerate(keep)}
            sibs = [(float(p[at[o]]) / max(float(p[best]), 1e-12), labels[at[o]] == 1.0)
                    for o in siblings(c, [cands[i] for i in keep])]
            if not sibs:
                continue
            rows.append({"qid": q.qid, "kind": q.kind, "right": labels[best] == 1.0, "read": round(float(p[best]), 4),
                         "siblings": [(round(s, 4), r) for s, r in sorted(sibs, reverse=True)]})
    table = []
    for t in SHARES:
        merged = [r for r in rows if r["siblings"][0][0] >= t]
        wrong = [r for r in merged if not r["right"]]
        held = [r for r in wrong if any(ok for s, ok in r["siblings"] if s >= t)]
        table.append({"share": t, "merged": len(merged), "best_wrong": len(wrong), "gold_among_quoted": len(held),
                      "right_with_more": len(merged) - len(wrong)})
    summary = {"laws": len(laws), "questions": asked, "best_is_item_with_siblings": len(rows),
               "best_right": sum(r["right"] for r in rows), "table": table}
    print(json.dumps({k: v for k, v in summary.items() if k != "table"}))
    print(f"{'share':>6} {'quoted together':>16} {'best was wrong':>15} {'gold among them':>16} {'right + more':>13}")
    for row in table:
        print(f"{row['share']:>6} {row['merged']:>16} {row['best_wrong']:>15} {row['gold_among_quoted']:>16} "
              f"{row['right_with_more']:>13}")
    if a.out:
        a.out.write_text(json.dumps({**summary, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
