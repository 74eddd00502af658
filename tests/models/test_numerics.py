"""Numerics of the real backends on the tiny random-init models (issue 17, part 4):

- the NLI judge loads in float32 on every device unless bfloat16 is asked for explicitly, and
  float16 is refused with one ConfigError naming microsoft/DeBERTa#77 (mDeBERTa overflows to NaN
  in it, and a NaN is no verdict for every claim);
- BGE-M3's embedder fails fast: FlagEmbedding's batch-shrinking loop catches any RuntimeError,
  so a failing forward pass must still end the call at once and release the embedder's lock, and
  out-of-memory is retried a bounded number of times.
"""
from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
import torch
from pydantic import ValidationError

from pipeline.backends.embedders import _OOM_RETRIES, BGEM3Embedder, EmbedderFailed
from pipeline.backends.nli import NLIJudge, judge_dtype
from pipeline.config import EmbedderSettings, JudgeSettings, load_config_file
from pipeline.errors import ConfigError
from pipeline.types import JudgeInput

PARAGRAPH = "pajak penghasilan atas sewa tanah dan bangunan"
CLAIM = "pajak penghasilan"


def _judge_settings(nli_dir, **kw) -> JudgeSettings:
    return JudgeSettings(backend="nli", model=str(nli_dir), device="cpu", **kw)


def _dtypes(model) -> set[torch.dtype]:
    return {p.dtype for p in model.parameters() if p.is_floating_point()}


# -- the judge's precision ----------------------------------------------------------------------

def test_the_judge_loads_in_float32_by_default(nli_dir):
    judge = NLIJudge(_judge_settings(nli_dir))
    assert judge.dtype == torch.float32
    assert _dtypes(judge.model) == {torch.float32}
    verdicts = asyncio.run(judge.judge([JudgeInput(CLAIM, PARAGRAPH)]))
    assert verdicts[0].label is not None


def test_a_checkpoint_saved_in_float16_still_loads_in_float32(nli_dir, tmp_path):
    """The weights' own dtype is not a request: an fp16 checkpoint (config torch_dtype float16)
    comes up in float32 all the same."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    half = tmp_path / "nli-fp16"
    AutoModelForSequenceClassification.from_pretrained(nli_dir).half().save_pretrained(half)
    AutoTokenizer.from_pretrained(nli_dir).save_pretrained(half)
    config = json.loads((half / "config.json").read_text())
    assert config.get("dtype", config.get("torch_dtype")) == "float16"  # "dtype" from transformers 4.56
    judge = NLIJudge(_judge_settings(half))
    assert _dtypes(judge.model) == {torch.float32}


def test_bfloat16_only_when_asked_for(nli_dir):
    judge = NLIJudge(_judge_settings(nli_dir, dtype="bf16"))
    assert judge.settings.dtype == "bfloat16" and judge.dtype == torch.bfloat16
    assert _dtypes(judge.model) == {torch.bfloat16}
    verdicts = asyncio.run(judge.judge([JudgeInput(CLAIM, PARAGRAPH)]))
    assert verdicts[0].label is not None and 0.0 <= verdicts[0].score <= 1.0


@pytest.mark.parametrize("spelling", ["float16", "fp16", "half", "FLOAT16"])
def test_float16_is_refused_naming_the_deberta_issue(nli_dir, spelling):
    with pytest.raises(ValidationError, match=r"microsoft/DeBERTa#77"):
        _judge_settings(nli_dir, dtype=spelling)
    # settings that skipped validation are refused by the judge itself, before anything loads
    unchecked = _judge_settings(nli_dir).model_copy(update={"dtype": spelling})
    with pytest.raises(ConfigError, match=r"microsoft/DeBERTa#77"):
        NLIJudge(unchecked)


def test_an_explicit_fp16_true_is_refused_and_the_shared_default_is_not_a_request(nli_dir):
    assert JudgeSettings().fp16 is True  # ModelSettings' default, shared with the embedder and reranker
    assert judge_dtype(_judge_settings(nli_dir)) == torch.float32
    with pytest.raises(ValidationError, match=r"microsoft/DeBERTa#77"):
        _judge_settings(nli_dir, fp16=True)
    assert judge_dtype(_judge_settings(nli_dir, fp16=False)) == torch.float32


def test_a_profile_asking_for_a_float16_judge_is_one_config_error(tmp_path):
    path = tmp_path / "judge.yaml"
    path.write_text("backend: nli\nmodel: x/y\ndtype: float16\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"microsoft/DeBERTa#77"):
        load_config_file(JudgeSettings, path)
    path.write_text("backend: nli\nmodel: x/y\nfp16: true\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"microsoft/DeBERTa#77"):
        load_config_file(JudgeSettings, path)
    path.write_text("backend: nli\nmodel: x/y\ndtype: float64\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"float32 \(default\) or bfloat16"):
        load_config_file(JudgeSettings, path)


def test_the_gpu_profile_runs_the_judge_in_float32():
    from pipeline.config import load_profile

    judge = load_profile("gpu").settings.judge
    assert judge.dtype == "float32" and "fp16" not in judge.model_fields_set


# -- the embedder fails fast ----------------------------------------------------------------------

@pytest.fixture
def m3(bge_m3_dir):
    return BGEM3Embedder(EmbedderSettings(backend="bge-m3", model=str(bge_m3_dir), sparse=True, batch_size=8,
                                          max_length=64, device="cpu"))


def _encoder(m3):
    """The transformer inside FlagEmbedding's BGE-M3 module: where a real forward pass runs."""
    return m3._model.model.inner.model


TEXTS = [f"{PARAGRAPH} {i}" for i in range(20)]


def test_the_guard_keeps_the_embedder_working(m3):
    dense, lexical = asyncio.run(m3.embed_passages_hybrid(TEXTS))
    assert dense.shape == (len(TEXTS), m3.dim) and len(lexical) == len(TEXTS)
    assert all(lexical) and all(isinstance(k, int) for w in lexical for k in w)
    assert torch.allclose(torch.from_numpy(dense).norm(dim=1), torch.ones(len(TEXTS)), atol=1e-4)
    # the same vectors as FlagEmbedding unguarded
    guard = m3._model.model
    m3._model.model = guard.inner
    try:
        plain = m3._model.encode(TEXTS, batch_size=8, max_length=64, return_dense=True, return_sparse=False)
    finally:
        m3._model.model = guard
    assert torch.allclose(torch.from_numpy(dense), torch.nn.functional.normalize(
        torch.from_numpy(plain["dense_vecs"]).float(), dim=1), atol=1e-5)


@pytest.mark.parametrize("call", ["embed_queries", "embed_passages", "embed_passages_hybrid"])
def test_a_failing_forward_pass_raises_at_once_and_releases_the_lock(m3, monkeypatch, call):
    calls = []

    def broken(*args, **kwargs):
        calls.append(threading.get_ident())
        raise RuntimeError("CUDA error: device-side assert triggered")

    monkeypatch.setattr(_encoder(m3), "forward", broken)
    started = time.monotonic()
    with pytest.raises(EmbedderFailed, match="device-side assert") as info:
        asyncio.run(getattr(m3, call)(TEXTS))
    assert time.monotonic() - started < 5  # a guard against the loop spinning, not a speed target
    assert isinstance(info.value.__cause__, RuntimeError) and not isinstance(info.value, RuntimeError)
    assert len(calls) == 1  # FlagEmbedding did not retry it with a smaller batch
    assert not m3._lock.locked()
    monkeypatch.undo()
    assert asyncio.run(m3.embed_queries(["apa"])).shape == (1, m3.dim)  # a second call proceeds


def test_out_of_memory_is_retried_a_bounded_number_of_times(m3, monkeypatch):
    calls = []

    def oom(*args, **kwargs):
        calls.append(args[0].shape[0] if args and hasattr(args[0], "shape") else None)
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(_encoder(m3), "forward", oom)
    started = time.monotonic()
    with pytest.raises(EmbedderFailed, match="out of memory"):
        asyncio.run(m3.embed_passages(TEXTS))
    assert time.monotonic() - started < 5
    assert len(calls) == _OOM_RETRIES + 1
    assert not m3._lock.locked()


def test_out_of_memory_once_then_the_smaller_batch_succeeds(m3, monkeypatch):
    encoder = _encoder(m3)
    real = encoder.forward
    seen = []

    def first_oom(*args, **kwargs):
        seen.append(1)
        if len(seen) == 1:
            raise torch.OutOfMemoryError("CUDA out of memory")
        return real(*args, **kwargs)

    monkeypatch.setattr(encoder, "forward", first_oom)
    vectors = asyncio.run(m3.embed_passages(TEXTS))
    assert vectors.shape == (len(TEXTS), m3.dim) and len(seen) > 1
    # the next call starts with a fresh budget
    monkeypatch.undo()
    assert asyncio.run(m3.embed_queries(["apa"])).shape == (1, m3.dim)


def test_a_waiting_caller_proceeds_after_a_failure(m3, monkeypatch):
    """Two callers: the first fails inside the model while holding the lock; the second, waiting on
    the lock, gets it and embeds."""
    encoder = _encoder(m3)
    real = encoder.forward
    entered, go = threading.Event(), threading.Event()
    state = {"n": 0}

    def fail_first(*args, **kwargs):
        state["n"] += 1
        if state["n"] == 1:
            entered.set()
            go.wait(5)
            raise RuntimeError("boom")
        return real(*args, **kwargs)

    monkeypatch.setattr(encoder, "forward", fail_first)
    errors, results = [], []

    def first():
        try:
            asyncio.run(m3.embed_passages(TEXTS))
        except EmbedderFailed as e:
            errors.append(e)

    def second():
        results.append(asyncio.run(m3.embed_queries(["apa"])))

    a = threading.Thread(target=first)
    a.start()
    assert entered.wait(5)
    b = threading.Thread(target=second)
    b.start()
    time.sleep(0.1)
    assert not results  # waiting on the lock
    go.set()
    a.join(10)
    b.join(10)
    assert not a.is_alive() and not b.is_alive()
    assert len(errors) == 1 and len(results) == 1 and results[0].shape == (1, m3.dim)
