"""Batch answering as a Ray Data job: questions.jsonl in, answers.jsonl out.

Each question goes through the same orchestrator as `saksi ask` and the served app, inside
an actor pool (`map_batches` with a class): every actor loads the models once and answers
batch after batch. With Milvus Lite one process owns the index file, so the lite profile
runs a pool of one; with a Milvus server the pool can grow (`--concurrency`).

Input lines: `{"id": "...", "question": "...", "lang": "id"|"en" (optional)}`.
Output lines, in input order: `{"id", ...the `saksi ask --json` object...}`; a question over the
profile's `limits.max_question_chars` gets `{"id", "error": {"type": "question_too_long", "message"}}`
and the other lines are answered.

Submit to a cluster with:  ray job submit --working-dir . -- saksi batch questions.jsonl --out answers.jsonl
"""
from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Callable

import numpy as np

from pipeline.config import load_profile
from pipeline.corpus import Corpus
from pipeline.errors import QuestionRejected, SaksiError
from pipeline.index import is_milvus_lite
from pipeline.responses import result_json

from .ray_start import start_or_join

log = logging.getLogger(__name__)


class BatchInputError(SaksiError):
    stage = "batch"


class Answerer:
    """One actor of the pool: the whole in-process pipeline, loaded once."""

    def __init__(self, profile: str, data_dir: str):
        self.corpus = Corpus(Path(data_dir), load_profile(profile))
        self.orchestrator = self.corpus.orchestrator()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, list]:
        answers = []
        for question, lang in zip(batch["question"], batch["lang"]):
            try:
                result = asyncio.run(self.orchestrator.answer(str(question), lang=str(lang) if lang else None))
            except QuestionRejected as e:  # this line's answer is the error; the rest are answered
                answers.append(json.dumps({"error": {"type": e.kind, "message": e.message}},
                                          ensure_ascii=False))
                continue
            answers.append(json.dumps(result_json(result), ensure_ascii=False))
        return {"id": list(batch["id"]), "answer": answers}


def read_questions(path: Path) -> list[dict]:
    """Validate the input before any cluster work: a bad line is an error naming it."""
    rows, seen = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            raise BatchInputError(f"{path}:{n}: not JSON ({e.msg})") from None
        if not isinstance(item, dict) or not isinstance(item.get("question"), str) or not item["question"].strip():
            raise BatchInputError(f"{path}:{n}: expected an object with a non-empty 'question'")
        qid = str(item.get("id") or f"q{n}")
        if qid in seen:
            raise BatchInputError(f"{path}:{n}: duplicate id {qid!r}")
        seen.add(qid)
        lang = item.get("lang") or ""
        if lang not in ("", "id", "en"):
            raise BatchInputError(f"{path}:{n}: lang must be 'id' or 'en'")
        rows.append({"id": qid, "question": item["question"], "lang": lang})
    if not rows:
        raise BatchInputError(f"{path}: no questions")
    return rows


def run_batch(questions: Path, out: Path, profile: str, data_dir: Path, concurrency: int = 1,
              batch_size: int = 8, progress: Callable[[str], None] | None = None) -> int:
    import ray

    say = progress or (lambda m: log.info(m))
    rows = read_questions(questions)
    with Corpus(data_dir, load_profile(profile)) as corpus:  # fail here, with the reason, not in an actor;
        corpus.check()                                       # closing hands the Milvus Lite file over
        lite = is_milvus_lite(corpus.milvus_uri)
    if concurrency > 1 and lite:
        raise BatchInputError("Milvus Lite lets one process own the index file: use --concurrency 1 with a "
                              "local data directory (a Milvus server lets the pool grow)")
    start_or_join(say=lambda m: print(m, file=sys.stderr))
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    say(f"answering {len(rows)} questions with a pool of {concurrency} actor(s) …")
    ds = ray.data.from_items(rows).map_batches(
        Answerer, fn_constructor_kwargs={"profile": profile, "data_dir": str(data_dir.resolve())},
        compute=ray.data.ActorPoolStrategy(size=concurrency), batch_size=batch_size)
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with out.open("w", encoding="utf-8") as f:
        for row in ds.iter_rows():
            f.write(json.dumps({"id": row["id"], **json.loads(row["answer"])}, ensure_ascii=False) + "\n")
            n += 1
    say(f"{n} answers written to {out}")
    return n
