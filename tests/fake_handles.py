"""Test doubles for Ray Serve: a fake deployment handle that calls a deployment's object in this
process, counting the calls, and a stand-in replica context for `@serve.batch` outside Ray."""
from __future__ import annotations

import asyncio
from collections import Counter
from types import SimpleNamespace


class _FakeMethod:
    def __init__(self, handle: "FakeHandle", name: str):
        self.handle, self.name = handle, name

    def remote(self, *args, **kwargs):
        self.handle.calls[self.name] += 1
        out = getattr(self.handle.target, self.name)(*args, **kwargs)
        if asyncio.iscoroutine(out):
            return out  # awaitable, like a DeploymentResponse
        return asyncio.sleep(0, result=out)  # a plain method's answer (info()), awaitable the same way


class FakeHandle:
    """Stands in for a DeploymentHandle: `h.method.remote(*args)` calls the object in process and
    counts the call in `calls` (method name -> calls)."""

    def __init__(self, target):
        self.target = target
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _FakeMethod(self, name)


def fake_replica_context(monkeypatch, max_ongoing_requests: int = 64) -> None:
    """What `@serve.batch` expects of a replica, outside Ray: its settings (this stand-in says
    them), and a fresh event loop per process. Ray keeps one batch queue per decorated method
    per process (a replica is a process), bound to the loop it first ran in; a test runs each
    `asyncio.run` in a new loop, so every batched method of serve/deployments.py starts this
    test with no queue (made again on first use, in the test's loop)."""
    from serve import deployments

    monkeypatch.setattr("ray.serve.get_replica_context", lambda: SimpleNamespace(
        _deployment_config=SimpleNamespace(max_ongoing_requests=max_ongoing_requests)))
    classes = [getattr(d, "func_or_class", d) for d in vars(deployments).values()]
    for cls in classes:
        for method in vars(cls).values() if isinstance(cls, type) else ():
            getter = getattr(method, "_get_max_batch_size", None)  # a @serve.batch method
            if getter is not None:
                monkeypatch.setattr(getter.__self__, "_queue", None)
