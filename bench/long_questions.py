"""How an answer's cost grows with the question's length (in process, lite profile, corpus/sample).

A question of one part (no "?" or "dan kapan" boundary inside, so it is one retrieval and one
answer) is built to each length from the words of real rent-tax questions, and answered a few
times; the median per length is reported with the cost per character against the shortest. The
profile's `limits.max_question_chars` (500) is raised here to 4,000 so the growth past the cap
is visible too: linear growth shows as a roughly constant ms per 100 characters.

    .venv/bin/python bench/long_questions.py [--data-dir data/sample] [--repeats 5]

Writes bench/results/long_questions.json. A measurement, not a test: this machine is shared
and noisy, so read the ratios of one run.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

from pipeline.config import LimitsSettings, load_profile
from pipeline.corpus import Corpus

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("berapa tarif pajak penghasilan atas persewaan tanah bangunan gedung kantor gudang rumah toko apartemen "
         "yang dibayar oleh penyewa badan usaha koperasi yayasan bentuk usaha tetap kepada pemilik orang pribadi "
         "menurut peraturan menteri keuangan terbaru termasuk sanksi denda keterlambatan pelaporan surat "
         "pemberitahuan masa").split()
LENGTHS = (125, 250, 500, 1000, 2000, 4000)  # (a 60-character one is refused and retried: not comparable)


def question(n: int) -> str:
    words, i = [], 0
    while len(" ".join(words)) < n - 12:
        words.append(WORDS[i % len(WORDS)])
        i += 1
    return " ".join(words) + "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=ROOT / "data" / "sample")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "long_questions.json")
    args = ap.parse_args()
    profile = load_profile()
    settings = profile.settings.model_copy(update={"limits": LimitsSettings(max_question_chars=4000)})
    profile = profile.model_copy(update={"settings": settings})
    if not (args.data_dir / "state.json").exists():
        with Corpus(args.data_dir, profile) as c:
            c.ingest([ROOT / "corpus" / "sample"])
    rows = []
    with Corpus(args.data_dir, profile) as corpus:
        orch = corpus.orchestrator(write_traces=False)
        asyncio.run(orch.answer(question(125)))  # warm: models loaded, caches filled
        for n in LENGTHS:
            q = question(n)
            times = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                asyncio.run(orch.answer(q))
                times.append((time.perf_counter() - t) * 1000)
            rows.append({"chars": len(q), "median_ms": round(statistics.median(times), 1)})
    base = rows[0]["median_ms"]
    print(f"{'chars':>6} {'median ms':>10} {'× shortest':>10} {'ms per 100 chars past the shortest':>36}")
    for r in rows:
        r["ratio"] = round(r["median_ms"] / base, 2)
        extra = r["chars"] - rows[0]["chars"]
        r["ms_per_100_chars"] = round((r["median_ms"] - base) / extra * 100, 1) if extra else None
        print(f"{r['chars']:>6} {r['median_ms']:>10} {r['ratio']:>10} {str(r['ms_per_100_chars']):>36}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"repeats": args.repeats, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
