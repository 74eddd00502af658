"""A call whose replica dies under it is made once more, within its deadline (serve/handles.py `_call`)."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest
from ray.exceptions import ActorDiedError, ActorUnavailableError

from pipeline.backends.fakes import FakeHashEmbedder
from serve.handles import HandleEmbedder

from ..fake_handles import FakeHandle

pytestmark = pytest.mark.unit


class _LosesReplicas:
    """A fake deployment whose first `lost` calls die with their replica (as Ray reports it), then answer."""

    def __init__(self, lost: int, error=ActorDiedError, delay: float = 0.0):
        self.lost, self.error, self.delay, self.inner = lost, error, delay, FakeHashEmbedder()

    async def embed_queries(self, texts):
        await asyncio.sleep(self.delay)
        if self.lost:
            self.lost -= 1
            raise self.error()
        return await self.inner.embed_queries(texts)


@pytest.mark.parametrize("error", [ActorDiedError, lambda: ActorUnavailableError("unreachable", None)])
def test_a_call_whose_replica_died_is_answered_by_another(error):
    handle = FakeHandle(_LosesReplicas(1, error))
    vectors = asyncio.run(HandleEmbedder(handle, "fake-hash", 64, timeout=5).embed_queries(["pajak"]))
    assert handle.calls["embed_queries"] == 2
    np.testing.assert_array_equal(vectors, asyncio.run(FakeHashEmbedder().embed_queries(["pajak"])))


def test_only_once():
    handle = FakeHandle(_LosesReplicas(2))
    with pytest.raises(ActorDiedError):
        asyncio.run(HandleEmbedder(handle, "fake-hash", 64, timeout=5).embed_queries(["pajak"]))
    assert handle.calls["embed_queries"] == 2


def test_the_retry_keeps_the_first_calls_deadline():
    handle = FakeHandle(_LosesReplicas(1, delay=0.3))  # the first call dies after 0.3 s of a 0.4 s deadline
    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(HandleEmbedder(handle, "fake-hash", 64, timeout=0.4).embed_queries(["pajak"]))
    assert handle.calls["embed_queries"] == 2


def test_other_errors_are_not_retried():
    class Broken:
        async def embed_queries(self, texts):
            raise ValueError("a bug, not a lost replica")

    handle = FakeHandle(Broken())
    with pytest.raises(ValueError):
        asyncio.run(HandleEmbedder(handle, "fake-hash", 64, timeout=5).embed_queries(["pajak"]))
    assert handle.calls["embed_queries"] == 1
