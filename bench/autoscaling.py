"""Autoscaling seen to act: under a locust ramp the Embedder deployment scales up and back down,
read from Serve's own state, with the errors counted through every scale event and a replica killed
at the peak.

The application is saksi's own (`build_app`, lite profile, the sample corpus), run by this process
as `saksi serve` runs it, with a copy of configs/ ($SAKSI_CONFIG_DIR) changed in four places and
nowhere else:
  - runtime.placement.query_embedder: embedder. Every question's embedding goes to the Embedder
    deployment, as on a GPU cluster (lite embeds questions inside the Retriever, where nothing
    scales: Milvus Lite allows one Retriever);
  - the Embedder autoscales 1 → 3 replicas at target_ongoing_requests 1, with upscale_delay_s 2 and
    downscale_delay_s 20 (Serve's defaults, 30 s and 600 s, would make this bench take 15 minutes);
  - the per-key rate limits are raised (as bench/load_curves.py does): this measures scaling, not
    the limiter.
Everything else (max_in_flight, request_timeout_s, every deployment's options) is as shipped.

The load (bench/autoscaling_locust.py, its own process): users rise 1 → --peak-users, hold, then
fall to 1 and stay there while the autoscaler removes replicas. Each request that fails (5xx,
connection error) is asked once more, as a client with one retry; lost = failed twice. At the
middle of the hold, one Embedder replica's process is killed (SIGKILL).

Every second, `serve.status()` gives the Embedder's replicas by state (RUNNING, STARTING,
STOPPING, …): the timeline is Serve's own account. Written: bench/results/autoscaling.json (the
timeline, users, requests per second by status, the kill, the summary) and autoscaling.png.

    .venv/bin/python bench/autoscaling.py [--peak-users 12] [--rise 40] [--hold 60] [--tail 60]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
QUESTIONS = ["Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?",
             "What is the penalty for filing the SPT Masa late?",
             "Kapan pendapatan diakui menurut standar ilustratif?",
             "Siapa yang wajib memotong PPh atas sewa bangunan?",
             "What is the income tax rate on land and building rental?",
             "Berapa tarif bea masuk untuk impor mobil listrik?"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def configs(tmp: Path) -> Path:
    """The copy of configs/ with the four changes the docstring names."""
    out = tmp / "configs"
    shutil.copytree(ROOT / "configs", out)
    path = out / "serve" / "lite.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["runtime"]["placement"]["query_embedder"] = "embedder"
    cfg["deployments"]["Embedder"]["autoscaling_config"] = {
        "min_replicas": 1, "max_replicas": 3, "target_ongoing_requests": 1, "upscale_delay_s": 2,
        "downscale_delay_s": 20}
    for limit in ("rate_per_minute", "rate_burst", "answer_units_per_minute", "answer_units_burst"):
        cfg["runtime"][limit] = 1_000_000
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return out


def replica_pids(deployment: str) -> list[int]:
    import psutil

    out = []
    for p in psutil.process_iter(["cmdline"]):
        if any(f"ServeReplica:saksi:{deployment}" in part for part in (p.info["cmdline"] or [])):
            out.append(p.pid)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--peak-users", type=int, default=12)
    p.add_argument("--rise", type=float, default=40, help="seconds from 1 user to the peak (in 4 steps)")
    p.add_argument("--hold", type=float, default=60, help="seconds at the peak (the kill is at its middle)")
    p.add_argument("--tail", type=float, default=60, help="seconds at 1 user after the peak")
    p.add_argument("--settle", type=float, default=60, help="seconds with no load, waiting for the minimum")
    p.add_argument("--no-kill", action="store_true")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "autoscaling.json")
    args = p.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="saksi-autoscaling-"))
    os.environ["SAKSI_CONFIG_DIR"] = str(configs(tmp))
    from ray import serve

    from pipeline.config import load_profile
    from pipeline.corpus import Corpus
    from pipeline.keys import KeyStore
    from serve.app import build_app
    from serve.ray_start import start_local_ray

    data = tmp / "data"
    with Corpus(data, load_profile("lite")) as corpus:
        corpus.ingest([ROOT / "corpus" / "sample"])
    _, key = KeyStore(data).create("reader", name="autoscaling bench")
    port = _port()
    start_local_ray("127.0.0.1", say=lambda m: print(m, file=sys.stderr))
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    serve.run(build_app("lite", data), name="saksi", route_prefix="/")

    timeline: list[dict] = []
    stop = threading.Event()
    t0 = time.time()

    def poll():
        while not stop.is_set():
            try:
                st = serve.status().applications["saksi"].deployments["Embedder"]
                timeline.append({"t": round(time.time() - t0, 2), "status": str(st.status),
                                 **{str(getattr(k, "value", k)): v for k, v in st.replica_states.items()}})
            except Exception as e:  # a status read that fails is recorded, not fatal
                timeline.append({"t": round(time.time() - t0, 2), "error": f"{type(e).__name__}: {e}"[:200]})
            stop.wait(1.0)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    peak = args.peak_users
    steps = [max(1, round(peak * k / 4)) for k in (1, 2, 3, 4)]
    stages, at = [], 0.0
    for users in steps:
        at += args.rise / 4
        stages.append([at, users])
    stages[-1][0] += args.hold
    hold_start, hold_end = at, at + args.hold
    stages.append([hold_end + args.tail, 1])
    log, users_log = tmp / "requests.jsonl", tmp / "users.jsonl"
    env = {**os.environ, "RAMP_QUESTIONS": json.dumps(QUESTIONS), "RAMP_LOG": str(log), "RAMP_USERS_LOG": str(users_log),
           "RAMP_STAGES": json.dumps(stages), "RAMP_KEY": key}
    time.sleep(3)
    load_t0 = time.time()
    locust = subprocess.Popen([str(Path(sys.executable).parent / "locust"), "-f", str(ROOT / "bench" / "autoscaling_locust.py"),
                               "--headless", "--host", f"http://127.0.0.1:{port}", "--only-summary",
                               "--loglevel", "WARNING"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    killed = None
    kill_at = hold_start + args.hold / 2
    while locust.poll() is None:
        if not args.no_kill and killed is None and time.time() - load_t0 >= kill_at:
            pids = replica_pids("Embedder")
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed = {"t": round(time.time() - t0, 2), "pid": pids[0], "replicas_alive_before": len(pids)}
                print(f"killed Embedder replica {pids[0]} ({len(pids)} alive)", file=sys.stderr)
        time.sleep(0.5)
    load_end = time.time()
    settle_deadline = time.time() + args.settle
    while time.time() < settle_deadline:
        last = timeline[-1] if timeline else {}
        if last.get("RUNNING") == 1 and not any(last.get(k) for k in ("STARTING", "STOPPING", "RECOVERING")):
            break
        time.sleep(1)
    time.sleep(2)
    stop.set()
    poller.join()
    serve.shutdown()

    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []
    users = [json.loads(line) for line in users_log.read_text().splitlines() if line.strip()] if users_log.exists() else []
    for r in rows:
        r["t"] = round(r["t"] - t0, 2)
    users = [{"t": round(u["t"] - t0, 2), "users": u["users"]} for u in users]
    running = [(s["t"], s.get("RUNNING", 0)) for s in timeline if "error" not in s]
    peak_running = max((n for _, n in running), default=0)
    first_up = next((t for t, n in running if n > 1), None)
    last_peak = max((t for t, n in running if n == peak_running), default=None)
    down_again = next((t for t, n in running if last_peak is not None and t > last_peak and n == 1), None)
    lost = [r for r in rows if r["status"] != 200]
    summary = {
        "requests": len(rows), "answered_200": sum(r["status"] == 200 for r in rows),
        "lost_after_one_retry": len(lost), "retried": sum(r["retried"] for r in rows),
        "retried_and_answered": sum(r["retried"] and r["status"] == 200 for r in rows),
        "statuses": dict(Counter(str(r["status"]) for r in rows)),
        "outcomes": dict(Counter(r["outcome"] if r["status"] == 200 else "error" for r in rows)),
        "p50_s": round(statistics.median(r["seconds"] for r in rows), 3) if rows else None,
        "p95_s": round(sorted(r["seconds"] for r in rows)[int(0.95 * (len(rows) - 1))], 3) if rows else None,
        "replicas_min_max_seen": [min((n for _, n in running), default=0), peak_running],
        "first_scale_up_s": first_up, "load_ended_s": round(load_end - t0, 2),
        "last_at_peak_s": last_peak, "back_to_one_replica_s": down_again, "killed": killed,
        "scaled_up_and_down": bool(first_up is not None and down_again is not None),
    }
    result = {"what": __doc__.split("\n\n")[0], "command": " ".join(["bench/autoscaling.py", *(argv or sys.argv[1:])]),
              "machine": {"cpus": os.cpu_count(), "load_avg_end": os.getloadavg()[0]},
              "settings": {"stages_s_users": stages, "kill_at_s_into_load": None if args.no_kill else kill_at,
                           "embedder_autoscaling": yaml.safe_load((tmp / "configs" / "serve" / "lite.yaml").read_text())
                           ["deployments"]["Embedder"]["autoscaling_config"]},
              "summary": summary, "timeline": timeline, "users": users, "requests": rows,
              "locust_stderr_tail": (locust.stderr.read() or "")[-2000:]}
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    _plot(result, args.out.with_suffix(".png"))
    print(json.dumps(summary, indent=1))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _plot(result: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    tl = [s for s in result["timeline"] if "error" not in s]
    ax.step([s["t"] for s in tl], [s.get("RUNNING", 0) for s in tl], where="post", label="Embedder replicas RUNNING")
    ax.step([s["t"] for s in tl], [s.get("STARTING", 0) for s in tl], where="post", label="STARTING", alpha=0.6)
    ax2 = ax.twinx()
    ax2.plot([u["t"] for u in result["users"]], [u["users"] for u in result["users"]], color="grey", alpha=0.5,
             label="locust users")
    errors = [r["t"] for r in result["requests"] if r["status"] != 200]
    if errors:
        ax.plot(errors, [0.2] * len(errors), "rx", label="lost request")
    if result["summary"]["killed"]:
        ax.axvline(result["summary"]["killed"]["t"], color="red", linestyle="--", label="replica killed")
    ax.set_xlabel("seconds")
    ax.set_ylabel("replicas")
    ax2.set_ylabel("users")
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title("Embedder autoscaling under a locust ramp (Serve's own replica states)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
