"""bench/regulations/questions.jsonl: the eval set over the real regulations in ../shared.

The shape is checked from the file alone; the gold strings are checked against the regulation
texts, which live beside the repository (../shared/data/regulations/pmk), as the JSONL's own
relative corpus path says.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipeline.eval.datasets import contains_answer, load_dataset

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT / "bench" / "regulations" / "questions.jsonl"
CORPUS = "../../../shared/data/regulations/pmk"  # from bench/regulations/ to <checkout>/../shared


def _items() -> list[dict]:
    return [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_question_set_shape():
    items = _items()
    assert len(items) >= 24
    assert len({i["id"] for i in items}) == len(items)
    unanswerable = [i for i in items if not i["answerable"]]
    assert 0.25 <= len(unanswerable) / len(items) <= 0.42, "about a third should be unanswerable near-misses"
    assert all(i["answers"] == [] for i in unanswerable)
    assert all(i["answers"] and all(isinstance(a, str) and a.strip() for a in i["answers"])
               for i in items if i["answerable"])
    assert {i["corpus"] for i in items} == {CORPUS}
    english = [i for i in items if re.match(r"(How|What|When|By when|Which|Who)\b", i["question"])]
    assert len(english) >= 5


def test_dataset_loads_and_every_gold_occurs_in_a_regulation():
    corpus = (DATASET.parent / CORPUS).resolve()
    if not corpus.is_dir():  # like every test on shared data: missing data is a failure, not a skip
        pytest.fail(f"the shared regulations are not beside this checkout ({corpus}); "
                    "bench/regulations/questions.jsonl names them by that relative path")
    ds = load_dataset(DATASET)
    assert ds.skipped == ()
    assert ds.corpus_paths == (corpus,)
    assert len(ds.questions) == len(_items())
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(corpus.glob("*.md"))}
    assert len(texts) == 16
    for q in ds.questions:
        if q.answerable:
            found = [name for name, text in texts.items() if contains_answer(text, q.golds)]
            assert found, f"{q.qid}: no regulation contains {q.golds}"
        else:
            assert q.golds == (), q.qid
