"""A running saksi application on this machine (lite profile), shared by the serve tests."""
from __future__ import annotations

import json
import shutil
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from pipeline.config import load_profile
from pipeline.corpus import Corpus

from ..conftest import SAMPLE


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


NO_KEY = ""  # `call(..., key=NO_KEY)`: a request without an Authorization header


class Http:
    """A tiny JSON client over urllib (what a caller of the API sees), sending `key` as its bearer
    token unless a call names another (or NO_KEY)."""

    def __init__(self, base: str, key: str | None = None):
        self.base, self.key = base, key

    def as_key(self, key: str) -> "Http":
        return Http(self.base, key)

    def call(self, method: str, path: str, body=None, raw: bytes | None = None, timeout: float = 120,
             key: str | None = None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        token = self.key if key is None else key
        headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read() or b"null"), {k.lower(): v for k, v in r.headers.items()}
        except urllib.error.HTTPError as e:
            payload = e.read()
            try:
                parsed = json.loads(payload)
            except ValueError:
                parsed = payload.decode(errors="replace")
            return e.code, parsed, {k.lower(): v for k, v in e.headers.items()}


def start_ray(ray, attempts: int = 3) -> None:
    """A local Ray node for the tests, as `saksi serve` starts one: bound to 127.0.0.1, and retried
    (ending the leftover processes) when a loaded 2-core machine makes Ray's own start-up time out."""
    from serve.ray_start import start_local_ray

    start_local_ray("127.0.0.1", attempts=attempts, num_cpus=4, ignore_reinit_error=True)


@pytest.fixture(scope="module")
def ray_session():
    """One local Ray node for a module that runs Ray jobs itself (or the one the serve tests already started)."""
    import ray

    started = not ray.is_initialized()
    if started:
        start_ray(ray)
    yield
    if started:
        ray.shutdown()


@pytest.fixture(scope="session")
def served_corpus(tmp_path_factory):
    """The sample corpus embedded with the lite embedder, plus an untouched copy for in-process runs."""
    root = tmp_path_factory.mktemp("served")
    data = root / "data"
    with Corpus(data, load_profile()) as c:
        c.ingest([SAMPLE])
    copy = root / "copy"
    shutil.copytree(data, copy)
    return data, copy


@pytest.fixture(scope="session")
def admin_key(served_corpus) -> str:
    """An admin key of the served data directory: what the shared `app` client sends."""
    from pipeline.keys import KeyStore

    _, token = KeyStore(served_corpus[0]).create("admin", ["*"], name="serve tests")
    return token


@pytest.fixture(scope="session")
def app(served_corpus, admin_key):
    import ray
    from ray import serve

    from serve.app import build_app
    from serve.config import load_serve_config

    data, _ = served_corpus
    port = free_port()
    start_ray(ray)
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    # the profile's serve options, but the per-key answer budget out of the way: the whole session asks
    # with one admin key (test_trust.py measures the budget on an application of its own)
    cfg = load_serve_config("lite")
    cfg = cfg.model_copy(update={"runtime": cfg.runtime.model_copy(update={"answer_units_per_minute": 1e6,
                                                                            "answer_units_burst": 1e6})})
    serve.run(build_app("lite", data, config=cfg), name="saksi", route_prefix="/")
    http = Http(f"http://127.0.0.1:{port}", admin_key)
    yield http
    serve.shutdown()
    ray.shutdown()


def lite_with_model_deployments(**runtime):
    """The lite serve options with every model in its own deployment, as full-cpu and gpu place them
    (lite runs them inside their callers): for the tests that replace or kill a model's replica.
    `runtime` overrides runtime settings."""
    from serve.config import Batch, DeploymentOptions, Placement, load_serve_config

    cfg = load_serve_config("lite")
    batch = Batch(max_batch_size=16, batch_wait_timeout_s=0.002)
    small = {"max_ongoing_requests": 64, "ray_actor_options": {"num_cpus": 0.1}}
    models = {"Reranker": DeploymentOptions(num_replicas=1, batch=batch, **small),
              "Generator": DeploymentOptions(num_replicas=1, **small),
              "Judge": DeploymentOptions(num_replicas=2, batch=batch, **small)}  # two: one can be lost
    placement = Placement(query_embedder="embedder", reranker="reranker", generator="generator", judge="judge")
    return type(cfg).model_validate({
        **cfg.model_dump(), "deployments": {**cfg.model_dump()["deployments"],
                                            **{k: v.model_dump() for k, v in models.items()}},
        "runtime": {**cfg.runtime.model_dump(), "placement": placement.model_dump(), **runtime}})


@pytest.fixture(scope="session")
def in_process(served_corpus):
    """The same corpus asked in process: the reference the served answers must match."""
    _, copy = served_corpus
    corpus = Corpus(Path(copy), load_profile())
    yield corpus.orchestrator(write_traces=False)
    corpus.close()
