"""forked_map (pipeline/answer_reader/forked.py): training's work over many items in forked workers sharing one state."""
from __future__ import annotations

import os

from pipeline.answer_reader.forked import forked_map


def _scaled_with_pid(state: dict, batch: list[int]) -> list[tuple[int, int]]:
    return [(state["k"] * x, os.getpid()) for x in batch]


def test_results_come_back_in_item_order_whatever_the_workers_and_each_batch_is_counted():
    items = list(range(23))
    seen: list[int] = []
    alone = forked_map(_scaled_with_pid, {"k": 3}, items, batch=5, workers=1, done=seen.append)
    assert [v for v, _ in alone] == [3 * x for x in items]
    assert {pid for _, pid in alone} == {os.getpid()}  # one worker: in this process, no fork
    assert seen == [5, 5, 5, 5, 3]
    seen.clear()
    two = forked_map(_scaled_with_pid, {"k": 3}, items, batch=5, workers=2, done=seen.append)
    assert [v for v, _ in two] == [v for v, _ in alone]
    assert os.getpid() not in {pid for _, pid in two}  # the batches ran in forked workers, state inherited
    assert seen == [5, 5, 5, 5, 3]
    assert forked_map(_scaled_with_pid, {"k": 3}, [], batch=5, workers=2) == []
