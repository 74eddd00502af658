"""A request's own CPU work runs in a worker thread within a deadline (`serve.errors.within`, issue 27): the event
loop keeps serving other requests meanwhile, and past the deadline the caller gets a typed 503, not a hang."""
from __future__ import annotations

import asyncio
import time

import pytest

from serve.errors import ApiError, within


def busy(seconds: float) -> str:
    """CPU work of `seconds` that never awaits (what rendering a page is to the event loop)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    return "done"


def test_the_loop_keeps_serving_while_the_work_runs() -> None:
    async def main():
        ticks = 0

        async def other_requests():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        other = asyncio.create_task(other_requests())
        got = await within(5, "the page", busy, 0.5)
        other.cancel()
        return got, ticks

    got, ticks = asyncio.run(main())
    assert got == "done" and ticks >= 10  # on the loop itself, the other task would not have run at all


def test_past_the_deadline_the_caller_gets_a_typed_503() -> None:
    with pytest.raises(ApiError) as e:
        asyncio.run(within(0.05, "the document page", busy, 0.5))
    assert (e.value.status, e.value.type) == (503, "timeout")
    assert "the document page took longer than 0.05 s (runtime.page_timeout_s)" in e.value.message
    assert e.value.headers["Retry-After"] == "1"


def test_an_error_of_the_work_reaches_the_caller_as_it_is() -> None:
    def missing():
        raise ApiError(404, "not_found", "no trace 0")

    with pytest.raises(ApiError) as e:
        asyncio.run(within(5, "reading the trace", missing))
    assert (e.value.status, e.value.type) == (404, "not_found")
