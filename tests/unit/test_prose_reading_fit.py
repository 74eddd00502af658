"""bench/prose_reading_fit.py split: the part of a training split the reader's trees never saw."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pipeline.answer_reader.training import in_calibration

ROOT = Path(__file__).resolve().parents[2]


def test_split_keeps_the_calibration_questions_and_every_passage(tmp_path):
    ids = [f"q{n}" for n in range(40)]
    rows = [{"context": f"Kalimat nomor {n} tentang topik {n}. Jawabannya adalah {n}.",
             "qas": [{"id": qid, "question": f"Apa jawaban topik {n}?", "is_impossible": False,
                      "answers": [{"text": str(n), "answer_start": 0}]}]}
            for n, qid in enumerate(ids)]
    source, out = tmp_path / "train.json", tmp_path / "cal.json"
    source.write_text(json.dumps(rows), encoding="utf-8")
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "prose_reading_fit.py"), "split", str(source), str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    part = json.loads(out.read_text(encoding="utf-8"))
    kept = [qa["id"] for ctx in part for qa in ctx["qas"]]
    assert kept == [q for q in ids if in_calibration(q)] and 0 < len(kept) < len(ids)
    assert [c["context"] for c in part] == [r["context"] for r in rows]  # every passage stays in the corpus
    assert f"{len(kept)} of 40 questions" in done.stdout


def test_bad_input_is_a_message_and_exit_2(tmp_path):
    """A dataset that is missing or not a list of passages, and a run that is not an eval output, end in one line and
    exit 2, not a traceback."""
    script = str(ROOT / "bench" / "prose_reading_fit.py")
    (tmp_path / "dict.json").write_text('{"data": 1}', encoding="utf-8")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "questions.jsonl").write_text(
        json.dumps({"id": "q1", "question": "?", "answerable": True, "golds": ["x"], "trace": "traces/gone.json"})
        + "\n", encoding="utf-8")
    for args in (["split", str(tmp_path / "missing.json"), str(tmp_path / "o.json")],
                 ["split", str(tmp_path / "dict.json"), str(tmp_path / "o.json")],
                 ["fit", str(tmp_path)],
                 ["fit", str(tmp_path / "run")]):
        done = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("prose_reading_fit: ") and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "o.json").exists()
