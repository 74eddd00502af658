"""Load curves of the served lite profile: latency, throughput and errors from 1 to 64 users.

One `saksi serve` (lite profile), started here as a subprocess on a free 127.0.0.1 port, over a
corpus of the first passages of the shared IDK-MRC validation set (real data, read in place from
../shared/data/idk_mrc/valid.json, written as one Markdown file per passage into a temp dir and
ingested with `saksi ingest`). The questions are every question of those passages (answerable
and unanswerable), shuffled with a fixed seed, asked in a rotation shared by all users.

A locust run (library API, headless, in this process, one local runner) steps through 1, 2, 4,
8, 16, 32, 64 concurrent users (up to --max-users), each step --step-seconds long; users are
added at each step, never stopped in between. Closed loop: each user asks (POST /v1/answer),
waits for the answer, asks again, with no think time. A request counts in the step in which it
completed. Per step: users, requests, throughput (req/s), mean/p50/p95/max latency, users / mean
latency (Little's law: what the step would do in steady state), counts by HTTP
status, and the error rate: anything but a 200 is an error for this curve (a 503 `overloaded`
from max_in_flight, a 429, a client timeout, a connection error). Answers the server cut at its
own deadline (a 200 refusal with reason_code `timeout`) are not errors but are counted apart, as
are the outcomes (answer / refusal). The 1-minute load average is recorded at each step's start.

Rate limits. The served app limits each API key (configs/serve/lite.yaml `runtime:`
rate_per_minute 600, rate_burst 100, answer_units_per_minute 60, answer_units_burst 40): with them
a capacity curve would measure the limiter (one user alone asks several questions a second). So
the whole configs/ directory is copied into the temp dir, those four limits are raised there (to
1,000,000), and every `saksi` command here runs with $SAKSI_CONFIG_DIR pointing at the copy. All
users share one reader key. Everything else, max_in_flight (64) and request_timeout_s included,
is as configured; the 503s max_in_flight produces are reported. The JSON records both the
configured and the used limits.

In-process baseline. Before the server starts (Milvus Lite lets one process own the index), a
separate Python process (this script with --in-process-worker: no gevent there) answers the same
rotation through the in-process orchestrator with 1 and 8 concurrent asyncio callers, closed
loop, --in-process-seconds each, counted the same way. Reported: throughput and p50 ratios
served / in-process at 1 and 8 users.

Written: bench/results/load_curves.json (per-step numbers, the baseline, the ratios, the
settings, load averages) and bench/results/load_curves.png (matplotlib, Agg: p50/p95 latency and
throughput against users, steps with errors marked). The machine is shared and noisy: compare
ratios and shapes, not single numbers, and look at the load averages.

It is a measurement, not a test: it exits nonzero only when the set-up failed, the server died,
or some response was a 500. The server is always stopped (SIGTERM to its process group, then
SIGKILL to whatever of its session is left) and the temp dir removed.

    .venv/bin/python bench/load_curves.py [--step-seconds 20] [--max-users 64] [--passages 50]
                                          [--in-process-seconds 15] [--client-timeout 60]
                                          [--out bench/results/load_curves.json]

About 5 minutes with the defaults on a 2-core machine (ingest ~40 s, in-process baseline ~40 s,
server start ~30 s, seven 20 s steps, shutdown).
"""
from __future__ import annotations

import sys

IN_PROCESS_WORKER = "--in-process-worker" in sys.argv
if not IN_PROCESS_WORKER:
    # locust monkey-patches the standard library for gevent when imported: import it first.
    # The in-process worker must not be patched (asyncio, Milvus Lite's gRPC).
    import locust  # noqa: I001
    from locust import HttpUser, constant, task
    from locust.env import Environment
    import gevent

import argparse
import itertools
import json
import logging
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

from served_process import free_port, get, pct, stop_server, wait_ready

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
SAKSI = ROOT / ".venv" / "bin" / "saksi"
DATASET = ROOT.parent / "shared" / "data" / "idk_mrc" / "valid.json"
PROFILE = "lite"
RAISED_LIMITS = {"rate_per_minute": 1_000_000, "rate_burst": 1_000_000,
                 "answer_units_per_minute": 1_000_000, "answer_units_burst": 1_000_000}
IN_PROCESS_CALLERS = (1, 8)
WARM_UP = 5  # questions asked before measuring, in process and served


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def outcome_of(body: dict) -> str:
    """answer, refusal, or refusal_timeout (the server's own deadline cut the question)."""
    if body.get("reason_code") == "timeout":
        return "refusal_timeout"
    return str(body.get("outcome") or "unknown")


def summarise(rows: list[tuple[float, float, str, str]], seconds: float, concurrency: int) -> dict:
    """rows: (completed at, latency s, status, outcome), already limited to one window.
    `littles_law_rps` is concurrency / mean latency, what a closed loop without think time does in
    steady state: far above the measured throughput, the window was too short for a steady state
    (latencies near the step length, users just added)."""
    lat = [r[1] for r in rows]
    statuses = Counter(r[2] for r in rows)
    errors = sum(n for s, n in statuses.items() if s != "200")
    out = {"requests": len(rows), "throughput_rps": round(len(rows) / seconds, 3) if seconds > 0 else None,
           "littles_law_rps": None, "mean_ms": None, "p50_ms": None, "p95_ms": None, "max_ms": None,
           "errors": errors, "error_rate": round(errors / len(rows), 4) if rows else None,
           "statuses": dict(sorted(statuses.items())),
           "outcomes": dict(sorted(Counter(r[3] for r in rows if r[2] == "200").items()))}
    if lat:
        mean = statistics.fmean(lat)
        out.update(littles_law_rps=round(concurrency / mean, 3) if mean > 0 else None,
                   mean_ms=round(1000 * mean, 1), p50_ms=round(1000 * statistics.median(lat), 1),
                   p95_ms=round(1000 * pct(lat, 95), 1), max_ms=round(1000 * max(lat), 1))
    return out


# --- the in-process baseline (a separate, unpatched process) ------------------------------------

def in_process_worker(data: Path, questions_file: Path, out: Path, seconds: float, callers: list[int]) -> int:
    import asyncio

    sys.path.insert(0, str(ROOT))
    from pipeline.config import load_profile
    from pipeline.corpus import Corpus

    questions = json.loads(questions_file.read_text(encoding="utf-8"))
    result: dict = {}
    with Corpus(data, load_profile(PROFILE)) as corpus:
        orch = corpus.orchestrator(write_traces=True)  # the served app writes traces too
        for q in questions[:WARM_UP]:  # warm-up, not counted (as the served run's)
            asyncio.run(orch.answer(q))

        async def closed_loop(n: int) -> dict:
            rotation = itertools.cycle(questions)
            rows: list[tuple[float, float, str, str]] = []
            t0 = time.perf_counter()
            deadline = t0 + seconds

            async def caller():
                while time.perf_counter() < deadline:
                    q = next(rotation)
                    t = time.perf_counter()
                    try:
                        r = await orch.answer(q)
                        status, outcome = "200", ("refusal_timeout" if r.reason_code == "timeout" else r.outcome)
                    except Exception as e:  # an error is a row, as a served one is
                        status, outcome = type(e).__name__, ""
                    end = time.perf_counter()
                    rows.append((end, end - t, status, outcome))

            load = loadavg()
            await asyncio.gather(*(caller() for _ in range(n)))
            drained = time.perf_counter() - t0
            window = [r for r in rows if r[0] <= deadline]
            return {"callers": n, "seconds": seconds, **summarise(window, seconds, n),
                    "completed_after_window": len(rows) - len(window), "drain_s": round(drained - seconds, 1),
                    "loadavg_at_start": load}

        for n in callers:
            result[f"c{n}"] = asyncio.run(closed_loop(n))
            print(f"in process, {n} callers: {json.dumps(result[f'c{n}'])}", flush=True)
    out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


# --- the corpus, the config copy, the server -----------------------------------------------------

def write_corpus(passages: int, folder: Path) -> list[str]:
    """One Markdown file per IDK-MRC validation passage (front matter: id, title); the questions
    of those passages without repeats, shuffled (seed 0): the file keeps each passage's answerable
    and unanswerable questions together, so a short window of the rotation in file order would
    get a skewed mix."""
    import yaml

    data = json.loads(DATASET.read_text(encoding="utf-8"))
    folder.mkdir(parents=True)
    questions: list[str] = []
    for i, p in enumerate(data[:passages]):
        pid = f"idk-mrc-valid-{i:03d}"
        front = yaml.safe_dump({"id": pid, "title": f"IDK-MRC valid {i:03d}"}, allow_unicode=True, sort_keys=False)
        (folder / f"{pid}.md").write_text(f"---\n{front}---\n{p['context'].strip()}\n", encoding="utf-8")
        questions += [qa["question"].strip() for qa in p["qas"] if qa.get("question", "").strip()]
    questions = list(dict.fromkeys(questions))
    random.Random(0).shuffle(questions)
    return questions


def copy_configs(target: Path) -> tuple[dict, dict]:
    """configs/ copied to `target`, with the per-key limits of serve/<profile>.yaml raised there.
    Returns (configured runtime, used runtime)."""
    import yaml

    shutil.copytree(ROOT / "configs", target)
    path = target / "serve" / f"{PROFILE}.yaml"
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    configured = dict(cfg.get("runtime") or {})
    cfg["runtime"] = {**configured, **RAISED_LIMITS}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return configured, cfg["runtime"]


def run_step(cmd: list[str], env: dict, what: str, timeout_s: float, log: Path) -> None:
    """A set-up command in a session of its own (Milvus Lite starts a server process), its output
    in `log`; stopped like the server when it runs past `timeout_s`."""
    with log.open("wb") as f:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            stop_server(proc, grace_s=10)
            raise RuntimeError(f"{what} ran past {timeout_s:.0f} s:\n{log.read_text(errors='replace')[-3000:]}")
        except BaseException:
            stop_server(proc, grace_s=10)
            raise
    if rc != 0:
        raise RuntimeError(f"{what} failed ({rc}):\n{log.read_text(errors='replace')[-3000:]}")


def saksi(*args: str, data: Path, env: dict) -> str:
    r = subprocess.run([str(SAKSI), *args, "--data-dir", str(data)], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"saksi {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r.stdout


def ask(url: str, token: str, question: str, timeout: float = 120) -> tuple[int, str]:
    """(status, the start of the body)."""
    req = urllib.request.Request(f"{url}/v1/answer", data=json.dumps({"question": question}).encode(),
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read(300).decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read(300).decode(errors="replace")


# --- the locust side ------------------------------------------------------------------------------

class Shared:
    token = ""
    rotation: itertools.cycle = itertools.cycle([""])
    client_timeout = 60.0


class Recorder:
    """Every request: (completed at, latency s, status, outcome)."""

    def __init__(self):
        self.rows: list[tuple[float, float, str, str]] = []

    def __call__(self, request_type, name, response_time, response_length, response=None, context=None,
                 exception=None, **_):
        now = time.perf_counter()
        status = getattr(response, "status_code", None) or 0
        outcome = ""
        if not status:
            text = repr(exception)
            status = "timeout" if ("Timeout" in text or "timed out" in text) else (
                type(exception).__name__ if exception is not None else "no response")
        elif status == 200:
            try:
                outcome = outcome_of(response.json())
            except ValueError:
                outcome = "unparsable"
        self.rows.append((now, float(response_time) / 1000, str(status), outcome))


if not IN_PROCESS_WORKER:
    class Asker(HttpUser):
        """Closed loop: ask, wait for the answer, ask again."""
        wait_time = constant(0)

        @task
        def ask(self):
            self.client.post("/v1/answer", json={"question": next(Shared.rotation)}, name="answer",
                             headers={"Authorization": f"Bearer {Shared.token}"}, timeout=Shared.client_timeout)


def user_steps(max_users: int) -> list[int]:
    steps, n = [], 1
    while n < max_users:
        steps.append(n)
        n *= 2
    return steps + [max_users]


def run_steps(url: str, steps: list[int], seconds: float, proc: subprocess.Popen) -> tuple[list[dict], bool]:
    """One local runner, users added at each step's start; a request counts in the step in which it
    completed. Returns the steps and whether the server was alive throughout."""
    env = Environment(user_classes=[Asker], host=url)
    rec = Recorder()
    env.events.request.add_listener(rec)
    runner = env.create_local_runner()
    bounds, alive = [], True
    try:
        for users in steps:
            load = loadavg()
            t0 = time.perf_counter()
            runner.start(users, spawn_rate=min(100, 10 * users))  # the new users within a second
            gevent.sleep(seconds)
            bounds.append((users, t0, time.perf_counter(), load))
            done = [r for r in rec.rows if t0 <= r[0] < bounds[-1][2]]
            print(f"{users:>3} users: {len(done)} requests, statuses {dict(Counter(r[2] for r in done))}, "
                  f"load {load[0]}", flush=True)
            if proc.poll() is not None:
                alive = False
                break
    finally:
        runner.quit()
    out = []
    for users, t0, t1, load in bounds:
        window = [r for r in rec.rows if t0 <= r[0] < t1]
        out.append({"users": users, "seconds": round(t1 - t0, 2), **summarise(window, t1 - t0, users),
                    "loadavg_at_start": load})
    return out, alive


# --- the report ------------------------------------------------------------------------------------

def code_version() -> dict:
    """The commit the code came from, and whether the working tree had changes (None outside git)."""
    def git(*a: str) -> str | None:
        try:
            r = subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return r.stdout.strip() if r.returncode == 0 else None
    head = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no", "--", "pipeline", "serve", "configs")
    return {"git_head": head, "pipeline_serve_configs_modified": bool(status) if head and status is not None else None}


def ratios(steps: list[dict], local: dict) -> dict:
    out = {}
    for n in IN_PROCESS_CALLERS:
        served = next((s for s in steps if s["users"] == n), None)
        base = local.get(f"c{n}")
        if not served or not base or not served["requests"] or not base["requests"]:
            out[f"c{n}"] = None
            continue
        out[f"c{n}"] = {
            "throughput_served_over_in_process": round(served["throughput_rps"] / base["throughput_rps"], 2),
            "p50_served_over_in_process": round(served["p50_ms"] / base["p50_ms"], 2),
            "p95_served_over_in_process": round(served["p95_ms"] / base["p95_ms"], 2)}
    return out


def table(result: dict) -> str:
    lines = [f"{'users':>5} {'reqs':>6} {'req/s':>7} {'N/mean':>7} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} "
             f"{'err %':>6} {'load1m':>6}  statuses / outcomes", "-" * 108]
    for s in result["steps"]:
        er = 100 * (s["error_rate"] or 0)
        lines.append(f"{s['users']:>5} {s['requests']:>6} {s['throughput_rps']:>7.2f} "
                     f"{s.get('littles_law_rps') or 0:>7.2f} {s['p50_ms'] or 0:>8.0f} "
                     f"{s['p95_ms'] or 0:>8.0f} {s['max_ms'] or 0:>8.0f} {er:>6.1f} {s['loadavg_at_start'][0]:>6.2f}"
                     f"  {s['statuses']} {s['outcomes']}")
    lines.append("")
    for k, b in result["in_process"].items():
        lines.append(f"in process {b['callers']} callers: {b['requests']} requests, {b['throughput_rps']:.2f} req/s, "
                     f"p50 {b['p50_ms']} ms, p95 {b['p95_ms']} ms, {b['statuses']} {b['outcomes']}")
    for k, r in result["ratios"].items():
        lines.append(f"served / in process at {k[1:]}: {r}")
    lines.append(f"status 500: {result['status_500_total']}; server alive after: {result['server_alive_after']}")
    return "\n".join(lines)


def plot(result: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [s for s in result["steps"] if s["requests"]]
    users = [s["users"] for s in steps]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 8), sharex=True)
    ax1.plot(users, [s["p50_ms"] for s in steps], "o-", label="served p50")
    ax1.plot(users, [s["p95_ms"] for s in steps], "s--", label="served p95")
    local = [b for b in result["in_process"].values() if b["requests"]]
    if local:
        ax1.plot([b["callers"] for b in local], [b["p50_ms"] for b in local], "D", color="C0", mfc="none", ms=9,
                 label="in-process p50")
        ax1.plot([b["callers"] for b in local], [b["p95_ms"] for b in local], "s", color="C1", mfc="none", ms=9,
                 label="in-process p95")
    bad = [s for s in steps if s["errors"]]
    if bad:
        ax1.plot([s["users"] for s in bad], [s["p95_ms"] for s in bad], "x", color="red", ms=12, mew=2,
                 label="step with errors (non-200)")
        for s in bad:
            ax1.annotate(f"{100 * s['error_rate']:.1f}% err", (s["users"], s["p95_ms"]), color="red",
                         textcoords="offset points", xytext=(6, 6), fontsize=8)
    ax1.set_yscale("log")
    ax1.set_ylabel("latency (ms)")
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=8)
    ax2.plot(users, [s["throughput_rps"] for s in steps], "o-", color="C2", label="served throughput")
    if any(s.get("littles_law_rps") for s in steps):
        ax2.plot(users, [s.get("littles_law_rps") for s in steps], ":", color="C2", alpha=0.7,
                 label="users / mean latency (steady state)")
    if local:
        ax2.plot([b["callers"] for b in local], [b["throughput_rps"] for b in local], "D", color="C2", mfc="none",
                 ms=9, label="in-process throughput")
    ax2.set_ylabel("throughput (req/s)")
    ax2.set_ylim(bottom=0)
    ax2.grid(True, alpha=0.3)
    er = ax2.twinx()
    er.bar(users, [100 * (s["error_rate"] or 0) for s in steps], width=[u * 0.25 for u in users], color="red",
           alpha=0.3, label="error rate")
    er.set_ylabel("error rate (%)", color="red")
    er.set_ylim(0, max([5.0] + [100 * (s["error_rate"] or 0) * 1.2 for s in steps]))
    h1, l1 = ax2.get_legend_handles_labels()
    h2, l2 = er.get_legend_handles_labels()
    ax2.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper left")
    ax2.set_xscale("log", base=2)
    ticks = sorted(set(users) | {b["callers"] for b in local})
    ax2.set_xticks(ticks)
    ax2.set_xticklabels([str(u) for u in ticks])
    ax2.minorticks_off()
    ax2.set_xlabel("concurrent users (closed loop, no think time)")
    st = result["settings"]
    fig.suptitle(f"saksi serve, lite profile: {st['passages']} IDK-MRC passages, {st['questions']} questions, "
                 f"{st['step_seconds']:g} s per step\n{result['cpus']} CPUs (shared); load average at the start "
                 f"{result['loadavg_start'][0]}; per-key limits raised", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step-seconds", type=float, default=20, help="length of each step")
    ap.add_argument("--max-users", type=int, default=64, help="last step (steps double from 1)")
    ap.add_argument("--passages", type=int, default=50, help="IDK-MRC validation passages in the corpus")
    ap.add_argument("--in-process-seconds", type=float, default=15, help="length of each in-process run (1, 8)")
    ap.add_argument("--client-timeout", type=float, default=60, help="seconds a user waits for an answer")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "load_curves.json")
    ap.add_argument("--note", default="", help="free text kept in the JSON (which code, what else ran)")
    ap.add_argument("--plot", type=Path, default=None, help="default: --out with .png")
    ap.add_argument("--in-process-worker", nargs=3, metavar=("DATA", "QUESTIONS", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if IN_PROCESS_WORKER:
        data, questions, out = (Path(p) for p in args.in_process_worker)
        return in_process_worker(data, questions, out, args.in_process_seconds, list(IN_PROCESS_CALLERS))
    if args.max_users < 1 or args.step_seconds <= 0:
        ap.error("--max-users must be at least 1 and --step-seconds positive")
    logging.basicConfig(level=logging.WARNING)
    Shared.client_timeout = args.client_timeout
    plot_path = args.plot or args.out.with_suffix(".png")

    tmp = Path(tempfile.mkdtemp(prefix="saksi-load-"))
    data, log = tmp / "data", tmp / "serve.log"
    proc = None
    started = time.perf_counter()
    load_start = loadavg()
    result: dict = {}
    try:
        configured, used = copy_configs(tmp / "configs")
        env = {**os.environ, "SAKSI_CONFIG_DIR": str(tmp / "configs")}
        questions = write_corpus(args.passages, tmp / "passages")
        (tmp / "questions.json").write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
        t = time.perf_counter()
        run_step([str(SAKSI), "ingest", str(tmp / "passages"), "--data-dir", str(data), "--strict"], env,
                 "saksi ingest", 900, tmp / "ingest.log")
        ingest_s = time.perf_counter() - t
        print(f"{args.passages} passages ingested in {ingest_s:.0f} s; {len(questions)} questions", flush=True)
        Shared.token = json.loads(saksi("keys", "create", "--role", "reader", "--name", "load-curves", "--json",
                                        data=data, env=env))["token"]

        t = time.perf_counter()
        run_step([str(PYTHON), str(Path(__file__).resolve()), "--in-process-worker", str(data),
                  str(tmp / "questions.json"), str(tmp / "in_process.json"),
                  "--in-process-seconds", str(args.in_process_seconds)], env, "the in-process baseline",
                 600 + 4 * args.in_process_seconds, tmp / "in_process.log")
        local = json.loads((tmp / "in_process.json").read_text(encoding="utf-8"))
        in_process_s = time.perf_counter() - t
        print(f"in-process baseline in {in_process_s:.0f} s", flush=True)

        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = subprocess.Popen([str(SAKSI), "serve", "--profile", PROFILE, "--data-dir", str(data), "--port",
                                 str(port)], cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                                start_new_session=True)
        ready_s = wait_ready(proc, url, Shared.token)
        print(f"server ready in {ready_s:.0f} s at {url}", flush=True)
        for q in questions[:WARM_UP]:  # warm-up, not counted
            status, body = ask(url, Shared.token, q)
            if status != 200:
                raise RuntimeError(f"a warm-up question was answered {status}: {body}")

        Shared.rotation = itertools.cycle(questions)
        steps, alive = run_steps(url, user_steps(args.max_users), args.step_seconds, proc)
        alive = alive and proc.poll() is None and get(f"{url}/healthz") == 200
        if not alive:
            print(f"the server died:\n{log.read_text(errors='replace')[-4000:]}", file=sys.stderr)
        result = {
            "what": "served lite profile under closed-loop load, 1 to max users; in-process baseline at 1 and 8",
            "note": args.note, "code": code_version(),
            "locust": locust.__version__, "cpus": os.cpu_count(), "loadavg_start": load_start,
            "settings": {
                "step_seconds": args.step_seconds, "max_users": args.max_users, "steps": user_steps(args.max_users),
                "passages": args.passages, "questions": len(questions), "dataset": "idk_mrc/valid.json",
                "rotation": "every question of the passages, shuffled with seed 0, one rotation shared by all "
                            "users; the in-process callers start the same rotation from its beginning",
                "in_process_seconds": args.in_process_seconds, "client_timeout_s": args.client_timeout,
                "think_time_s": 0, "profile": PROFILE,
                "counting": "a request counts in the step in which it completed; error = any status but 200 "
                            "(503, 429, client timeout, connection error)",
                "keys": "one reader key shared by every user",
                "serve_config": "configs/ copied to a temp dir with serve/lite.yaml runtime per-key limits raised "
                                "(rate_per_minute, rate_burst, answer_units_per_minute, answer_units_burst), "
                                "used through $SAKSI_CONFIG_DIR; everything else as configured",
                "runtime_configured": configured, "runtime_used": used,
            },
            "ingest_s": round(ingest_s, 1), "in_process_s": round(in_process_s, 1), "ready_s": round(ready_s, 1),
            "steps": steps, "in_process": local, "ratios": ratios(steps, local),
            "status_500_total": sum(s["statuses"].get("500", 0) for s in steps),
            "server_alive_after": alive,
        }
    except Exception as e:
        print(f"load_curves: {e}", file=sys.stderr)
        if log.exists():
            print(log.read_text(errors="replace")[-4000:], file=sys.stderr)
        return 1
    finally:
        if proc is not None:
            print(f"server stopped: {stop_server(proc)}", flush=True)
        shutil.rmtree(tmp, ignore_errors=True)
    result["loadavg_end"] = loadavg()
    result["total_s"] = round(time.perf_counter() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    plot(result, plot_path)
    print(table(result))
    print(f"wrote {args.out} and {plot_path}")
    return 1 if result["status_500_total"] or not result["server_alive_after"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
