"""bench/capacity.py: the plan's arithmetic follows its inputs (it measures nothing itself)."""
from __future__ import annotations

import importlib.util
import math
import sys

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def capacity():
    spec = importlib.util.spec_from_file_location("capacity", ROOT / "bench" / "capacity.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["capacity"] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("capacity", None)


def _gpus(plan: dict, name: str) -> float:
    return next(r["gpus"] for r in plan["deployments"] if r["deployment"] == name)


def test_more_answers_need_more_generators_and_a_faster_gpu_fewer(capacity):
    base = capacity.plan(10, 68_332, "h100", dict(capacity.DEFAULTS))
    double = capacity.plan(20, 68_332, "h100", dict(capacity.DEFAULTS))
    cap = next(r for r in base["deployments"] if r["deployment"] == "Generator")["answers_per_s_per_gpu"]
    assert _gpus(base, "Generator") == math.ceil(10 / cap)
    assert _gpus(double, "Generator") == math.ceil(20 / cap) > _gpus(base, "Generator")
    assert _gpus(capacity.plan(10, 68_332, "l4", dict(capacity.DEFAULTS)), "Generator") > _gpus(base, "Generator")
    # the cost of 1,000 answers is the hourly cost over the answers of an hour
    assert base["usd_per_1000_answers"] == pytest.approx(base["usd_per_hour"] / (10 * 3600) * 1000, abs=1e-3)


def test_each_input_moves_what_it_should(capacity):
    a = dict(capacity.DEFAULTS)
    slower = dict(a, generator_prefill_factor=a["generator_prefill_factor"] / 2)
    assert _gpus(capacity.plan(10, 10_000, "h100", slower), "Generator") >= \
        2 * _gpus(capacity.plan(10, 10_000, "h100", a), "Generator") - 1
    small = capacity.plan(10, 100_000, "h100", a)["milvus"]
    big = capacity.plan(10, 1_000_000, "h100", a)["milvus"]
    assert big["raw_vectors_gb"] == pytest.approx(10 * small["raw_vectors_gb"], rel=0.01)
    assert big["raw_vectors_gb"] == pytest.approx(1_000_000 * 1024 * 4 / 1e9, rel=0.01)  # BGE-M3's 1024-d float32
    split = capacity.plan(10, 68_332, "h100", a, "l4")
    assert {r["deployment"]: r["gpu"] for r in split["deployments"]}["Reranker"] == capacity.GPUS["l4"].name
    assert {r["deployment"]: r["gpu"] for r in split["deployments"]}["Generator"] == capacity.GPUS["h100"].name


def test_every_published_figure_names_its_source(capacity):
    for gpu in capacity.GPUS.values():
        assert gpu.llm_source and gpu.encoder_source and gpu.price_source
        assert gpu.llm_output_tok_s > 0 and gpu.encoder_tok_s > 0 and gpu.usd_per_hour > 0


def test_an_unknown_input_is_refused(capacity, capsys):
    assert capacity.main(["--answers-per-s", "1", "--passages", "10", "--set", "nonsense=1"]) == 2
    assert "no input 'nonsense'" in capsys.readouterr().err
    assert capacity.main(["--answers-per-s", "1", "--passages", "10", "--set", "gpu_utilisation=abc"]) == 2
    assert "must be a number" in capsys.readouterr().err
