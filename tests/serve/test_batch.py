"""`saksi batch` on Ray Data gives the same decisions as the online path."""
from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from serve.batch import BatchInputError, read_questions, run_batch

pytestmark = pytest.mark.integration

QUESTIONS = [
    {"id": "rate", "question": "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"},
    {"id": "penalty", "question": "What is the penalty for filing the SPT Masa late?", "lang": "en"},
    {"id": "unrelated", "question": "Berapa tarif bea masuk untuk impor mobil listrik?"},
    {"id": "deadline", "question": "Kapan Pajak Penghasilan atas sewa wajib disetor?"},
]


def test_batch_answers_match_the_online_path(app, served_corpus, in_process, tmp_path):
    data, _ = served_corpus
    own = tmp_path / "data"  # the batch actor owns its Milvus Lite file, like the Retriever replica does
    shutil.copytree(data, own, ignore=shutil.ignore_patterns("traces", "uploads"))
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n", encoding="utf-8")
    out = tmp_path / "answers.jsonl"
    assert run_batch(questions, out, "lite", own) == len(QUESTIONS)
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [q["id"] for q in QUESTIONS]  # input order
    for q, r in zip(QUESTIONS, rows):
        local = asyncio.run(in_process.answer(q["question"], lang=q.get("lang")))
        status, served, _ = app.call("POST", "/v1/answer", {"question": q["question"], "lang": q.get("lang")})
        assert status == 200
        for other in (served, {"outcome": local.outcome, "reason_code": local.reason_code,
                               "claims": [{"text": c.text, "status": c.status} for c in local.claims]}):
            assert r["outcome"] == other["outcome"] and r["reason_code"] == other["reason_code"]
            assert [(c["text"], c["status"]) for c in r["claims"]] == [(c["text"], c["status"])
                                                                      for c in other["claims"]]


@pytest.mark.parametrize("content, message", [
    ('{"question": ""}\n', "non-empty 'question'"),
    ("not json\n", "not JSON"),
    ('{"id": "a", "question": "x"}\n{"id": "a", "question": "y"}\n', "duplicate id"),
    ('{"question": "x", "lang": "fr"}\n', "lang must be"),
    ("\n\n", "no questions"),
])
def test_bad_batch_input_is_rejected_before_any_work(tmp_path, content, message):
    f = tmp_path / "q.jsonl"
    f.write_text(content)
    with pytest.raises(BatchInputError, match=message):
        read_questions(f)


def test_an_over_long_question_gets_an_error_record_and_the_rest_are_answered(served_corpus, tmp_path):
    import numpy as np

    from serve.batch import Answerer

    data, _ = served_corpus
    own = tmp_path / "data"
    shutil.copytree(data, own, ignore=shutil.ignore_patterns("traces", "uploads"))
    answerer = Answerer("lite", str(own))
    try:
        out = answerer({"id": np.array(["long", "rate"]), "question": np.array(["x" * 501, QUESTIONS[0]["question"]]),
                        "lang": np.array(["", ""])})
    finally:
        answerer.corpus.close()
    long, rate = (json.loads(a) for a in out["answer"])
    assert long == {"error": {"type": "question_too_long", "message": long["error"]["message"]}}
    assert "501 characters" in long["error"]["message"]
    assert rate["outcome"] == "answer"
