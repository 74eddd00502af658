"""What the load benches share about a `saksi serve` subprocess on 127.0.0.1: a free port, a
readiness wait, a GET that never raises, stopping it and every process of its session, and the
percentile they report. Imported by bench/abuse_load.py, bench/load_curves.py and bench/serve_overhead.py (run as scripts
from bench/, so this module sits beside them)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(round(q / 100 * len(ordered) + 0.5)) - 1))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, token: str | None = None, timeout: float = 10) -> int:
    """The status of a GET (0 when nothing answered)."""
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


def wait_ready(proc: subprocess.Popen, url: str, token: str, limit_s: float = 300) -> float:
    """Seconds until /readyz answers 200; an error if the server exits first or takes too long."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited ({proc.returncode}) before /readyz")
        if get(f"{url}/readyz", token) == 200:
            return time.perf_counter() - t0
        time.sleep(1)
    raise RuntimeError(f"/readyz not 200 after {limit_s} s")


def session_pids(sid: int) -> list[int]:
    """Processes in a session (Ray gives its workers process groups of their own)."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                pids.append(int(d.name))
    return pids


def stop_server(proc: subprocess.Popen, grace_s: float = 60) -> str:
    """SIGTERM to the server, as an operator's `kill PID` (it shuts Serve and its Ray node down itself), SIGKILL to
    its process group after `grace_s`, then SIGKILL to what is left of its session (the server is started with
    start_new_session=True); says how it ended. Not SIGTERM to the whole group: Ray's GCS then dies first, and the
    server's `serve.shutdown()` waits 30 s for a controller that can no longer answer."""
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(grace_s)
            how = "SIGTERM"
        except subprocess.TimeoutExpired:
            how = "SIGKILL"
    else:
        how = f"had exited ({proc.returncode})"
    if how != "SIGTERM":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(1)
    left = session_pids(proc.pid)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if proc.poll() is None:
        proc.wait(10)
    return how + (f"; {len(left)} leftover processes of its session killed" if left else "")


def serve_in_this_process(data, name: str) -> tuple[str, str]:
    """The lite application over `data` on a local Ray node in this process, asked with a new
    reader key named `name`, its per-key rate limits and answer budget raised (the benches measure
    the pipeline's serving cost, not the limiter). Returns (base URL, token); the caller ends it
    with serve.shutdown() and ray.shutdown()."""
    from ray import serve

    from pipeline.keys import KeyStore
    from serve.app import build_app
    from serve.config import load_serve_config
    from serve.ray_start import start_local_ray

    _, token = KeyStore(data).create("reader", name=name)
    cfg = load_serve_config("lite")
    unlimited = {"rate_per_minute": 1e9, "rate_burst": 10**9, "answer_units_per_minute": 1e9,
                 "answer_units_burst": 1e9}
    cfg = cfg.model_copy(update={"runtime": cfg.runtime.model_copy(update=unlimited)})
    port = free_port()
    start_local_ray("127.0.0.1", say=print)  # on loopback, Ray's start-up race retried
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    serve.run(build_app("lite", data, config=cfg), name="saksi", route_prefix="/")
    return f"http://127.0.0.1:{port}", token

