"""Regulation answers among neighbours (issue 25): the legal_qa dev questions asked of a corpus that
holds their four regulations *and* the shared regulations and 100+ laws of the statute book, the
laws that implement, restate and define the same terms (the Manpower Law, the Social Security and
BPJS laws, the Civil Service Law, Immigration, …) among them.

    .venv/bin/python bench/legal_neighbours.py [--laws 100] [--out eval-runs/legal-neighbours]

The corpus (OUT/corpus) is built once with the real ingest path and kept: a second run reuses it.
The laws are the related ones listed below plus the first N of the others ≥ 1990 in a fixed,
seeded order (the same corpus on every machine). The questions then go through `saksi eval
--corpus`, whose report (OUT/report.json, report.html) carries the receipt metrics; this script
prints them beside the small corpus's (OUT/small, the four regulations alone) from the same code,
and the two runs question by question (`saksi eval --compare OUT/small OUT/neighbours`; in
summary.json as `compared`).

Data: ../shared/data (legal_qa/dev.jsonl and its corpus, regulations/pmk, peraturan/uu.tar.xz),
read in place; nothing is copied into the repository.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
DEV = SHARED / "legal_qa" / "dev.jsonl"
# the laws the four regulations implement or sit beside: they define and restate the same terms
RELATED = ("2003/13", "2004/40", "2011/24", "2014/5", "2011/6", "2004/2", "2000/21", "2017/18", "1999/43", "1992/3",
           "1970/1", "2020/11")


def _extract(out: Path, n_others: int) -> list[str]:
    """The related laws and the first `n_others` of the rest (≥ 1990, seeded order), as uu-YYYY-N.md files."""
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(SHARED / "peraturan" / "uu.tar.xz", "r:*") as tar:
        members = {m.name.split("uu/", 1)[1][:-3]: m for m in tar.getmembers() if m.isfile() and m.name.endswith(".md")}
        related = [k for k in RELATED if k in members]
        others = sorted((k for k in members if k not in related and int(k.split("/")[0]) >= 1990),
                        key=lambda k: hashlib.sha256(f"neighbour:{k}".encode()).hexdigest())[:n_others]
        chosen = related + others
        for key in chosen:
            year, number = key.split("/")
            target = out / f"uu-{year}-{number}.md"
            if not target.exists():
                target.write_bytes(tar.extractfile(members[key]).read())
    return chosen


def _eval(corpus: Path | None, out: Path) -> dict:
    from pipeline.config import load_profile
    from pipeline.eval.runner import run_eval

    return run_eval(DEV, load_profile("lite"), out, corpus_dir=corpus, progress=lambda m: print(m, file=sys.stderr))


def _line(name: str, report: dict) -> str:
    r = report["receipts"]
    pasal = r["levels"]["pasal"]["top"]
    tinggi = next((b for b in r["pasal_by_band"] if b["band"] == "TINGGI"), {})
    return (f"{name:<26} answered {r['answered']:>3}/{r['questions']} ({r['answered_rate']:.1%})  Pasal precision "
            f"{pasal['precision']}  TINGGI {tinggi.get('precision')} of {tinggi.get('answered')}  "
            f"span hits {r['span']['hits']}/{r['span']['questions']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--laws", type=int, default=100, help="laws beside the related ones (default 100)")
    ap.add_argument("--out", type=Path, default=ROOT / "eval-runs" / "legal-neighbours")
    args = ap.parse_args()
    for need in (DEV, SHARED / "peraturan" / "uu.tar.xz", SHARED / "regulations" / "pmk"):
        if not need.exists():
            print(f"legal_neighbours: {need} not found", file=sys.stderr)
            return 2
    from pipeline.config import load_profile
    from pipeline.corpus import Corpus

    laws_dir = args.out / "laws"
    chosen = _extract(laws_dir, args.laws)
    t = time.perf_counter()
    corpus = Corpus(args.out / "corpus", load_profile("lite"))
    try:
        report = corpus.ingest([DEV.parent / "corpus", SHARED / "regulations" / "pmk", laws_dir],
                               progress=lambda m: print(m, file=sys.stderr))
        documents, chunks = report.total_documents, report.total_chunks
    finally:
        corpus.close()
    ingest_s = time.perf_counter() - t
    print(f"corpus: {documents} documents, {chunks} chunks ({len(chosen)} laws), ingest {ingest_s:.0f} s",
          file=sys.stderr)
    small = _eval(None, args.out / "small")
    big = _eval(args.out / "corpus", args.out / "neighbours")
    from pipeline.eval.compare import compare, compare_text, load_rows

    paired = compare(load_rows(args.out / "small"), load_rows(args.out / "neighbours"))
    summary = {"laws": chosen, "documents": documents, "chunks": chunks, "ingest_seconds": round(ingest_s, 1),
               "small": small["receipts"], "neighbours": big["receipts"], "compared": paired,
               "contract": {"small": small["contract"], "neighbours": big["contract"]}}
    (args.out / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")
    print(_line("4 regulations alone", small))
    print(_line(f"+ {documents - 4} neighbours", big))
    print(compare_text(paired, "4 regulations alone", "among neighbours"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
