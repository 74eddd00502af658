"""Measuring helpers shared by both sides of a peer benchmark: memory, ranks, recall, latency."""
from __future__ import annotations

import os
import resource
import statistics
import threading
from typing import Iterable, Sequence



def _descendants(root: int) -> list[int]:
    """`root` and every process below it, from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:  # ended meanwhile
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


class PeakRss:
    """Samples the resident memory of this process and all its descendants (saksi's Milvus Lite
    runs as a child server process) every `interval` seconds; `peak_mib` is the largest sum seen."""

    def __init__(self, interval: float = 0.1):
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> int:
        total = sum(_rss(p) for p in _descendants(os.getpid()))
        self.peak = max(self.peak, total)
        return total

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self) -> "PeakRss":
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    @property
    def peak_mib(self) -> float:
        return round(self.peak / 2**20, 1)


def hwm_mib() -> float:
    """This process's peak resident memory (VmHWM) in MiB. Not getrusage's ru_maxrss: on Linux
    that carries the parent's RSS at fork over the exec, so a worker started by a parent that
    had imported saksi would report the parent's ~75 MiB as its own floor."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def memory_report(sampler: PeakRss) -> dict:
    children = [_name(p) for p in _descendants(os.getpid())[1:]]
    return {"vmhwm_self_mib": hwm_mib(), "peak_rss_tree_mib": sampler.peak_mib,
            "child_processes_at_end": children}


def gold_rank(passages: Iterable[str], gold: str) -> int | None:
    """1-based rank of the first retrieved item from the gold passage, or None."""
    for r, p in enumerate(passages, 1):
        if p == gold:
            return r
    return None


def recall(ranks: Sequence[int | None], ks: Sequence[int] = (1, 5, 30)) -> dict[str, float]:
    n = len(ranks) or 1
    out = {f"recall@{k}": round(sum(1 for r in ranks if r is not None and r <= k) / n, 4) for k in ks}
    out["mrr@30"] = round(sum(1 / r for r in ranks if r is not None and r <= 30) / n, 4)
    return out


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(round(q / 100 * len(ordered) + 0.5)) - 1))]


def cpu_seconds() -> float:
    """CPU time (user + system) this process has used so far, all its threads together. Less
    sensitive than wall time to what else runs on a shared machine."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def throughput(latencies: Sequence[float], wall: float, callers: int, cpu_s: float) -> dict:
    n = len(latencies)
    return {"callers": callers, "n": n, "wall_s": round(wall, 3), "qps": round(n / wall, 2),
            "p50_ms": round(1000 * statistics.median(latencies), 1), "p95_ms": round(1000 * pct(latencies, 95), 1),
            "cpu_s": round(cpu_s, 3), "queries_per_cpu_s": round(n / cpu_s, 2) if cpu_s else None}
