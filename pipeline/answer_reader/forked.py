"""Work over many items in forked worker processes that share one read-only state (copy-on-write).

Training asks tens of thousands of mined questions, and tokenizes a hundred thousand pairs, each independent of the
others but all reading the same large state (a bm25 pool of every law's chunks, the reader, the model file).
Pickling that state to each worker would cost more than the work; a forked worker inherits it. `forked_map` runs
`fn(state, batch)` over the items in batches and returns the results in item order, so what it gives does not
depend on how many workers ran it (one: in this process, no fork).
"""
from __future__ import annotations

import multiprocessing
import os
from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_WORK: tuple[Callable, Any] | None = None  # (fn, state): what the forked workers inherit


def _run(batch: list) -> list:
    fn, state = _WORK
    return fn(state, batch)


def forked_map(fn: Callable[[Any, list[T]], list[R]], state: Any, items: Sequence[T], *, batch: int,
               workers: int | None = None, done: Callable[[int], None] | None = None) -> list[R]:
    """fn(state, batch) over `items` in batches of `batch`, in `workers` forked processes (default: the CPUs this
    process may use); the results in item order. `done(n)` after each batch, with its item count. `fn` must be a
    module-level function (it is named to the workers, not pickled with its state)."""
    global _WORK
    batches = [list(items[i:i + batch]) for i in range(0, len(items), batch)]
    workers = workers or len(os.sched_getaffinity(0))
    out: list[R] = []
    _WORK = (fn, state)
    try:
        if workers > 1 and len(batches) > 1:
            with multiprocessing.get_context("fork").Pool(workers) as procs:
                parts = procs.imap(_run, batches)  # in order: the i-th result is the i-th batch's
                for b, got in zip(batches, parts):
                    out.extend(got)
                    if done:
                        done(len(b))
        else:
            for b in batches:
                out.extend(fn(state, b))
                if done:
                    done(len(b))
    finally:
        _WORK = None
    return out
