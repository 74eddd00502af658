"""Limits from the profile: the question cap, trace retention, and paths in API responses."""
from __future__ import annotations

import os
import threading
import time
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from pipeline.config import LimitsSettings, Settings, TracesSettings, load_profile
from pipeline.errors import QuestionTooLongError
from pipeline.limits import check_question
from pipeline.orchestrator import Orchestrator
from pipeline.responses import CorpusResponse, IngestResponse, relative_path
from pipeline.trace import prune_traces


def test_every_profile_caps_questions_at_500_by_default():
    for name in ("lite", "full-cpu", "gpu"):
        assert load_profile(name).settings.limits.max_question_chars == 500
    assert Settings(profile="x").limits.max_question_chars == 500


def test_limits_are_validated_strictly():
    with pytest.raises(ValidationError):
        LimitsSettings(max_question_chars=0)
    with pytest.raises(ValidationError):
        LimitsSettings(max_question_chars=10_001)  # above the API schema's ceiling
    with pytest.raises(ValidationError):
        LimitsSettings(max_questions=5)
    with pytest.raises(ValidationError):
        TracesSettings(keep_count=0)


def test_check_question_counts_the_stripped_question():
    limits = LimitsSettings(max_question_chars=5)
    assert check_question("  abcde \n", limits) == "abcde"
    with pytest.raises(QuestionTooLongError) as e:
        check_question("abcdef", limits)
    assert e.value.length == 6 and e.value.limit == 5 and "\n" not in str(e.value)


def test_a_question_of_too_many_parts_is_refused_alike(capsys):
    """Each part is a whole retrieval and answer: 17 questions glued into 500 characters cost 17."""
    from pipeline.cli import main
    from pipeline.errors import QuestionRejected, TooManyPartsError

    limits = LimitsSettings(max_parts=4)
    assert check_question("Berapa tarif PPh sewa? Kapan disetor? Apa sanksinya? Siapa pemotongnya?", limits)
    many = "Berapa tarif PPh sewa? Kapan disetor? Apa sanksinya? Siapa pemotongnya? Di mana dilaporkan?"
    with pytest.raises(TooManyPartsError) as e:
        check_question(many, limits)
    assert isinstance(e.value, QuestionRejected) and e.value.kind == "too_many_parts"
    assert (e.value.parts, e.value.limit) == (5, 4) and "ask them separately" in e.value.message
    assert load_profile().settings.limits.max_parts == 4
    assert main(["ask", many]) == 2  # before anything is loaded: one line, no data directory needed
    err = capsys.readouterr().err
    assert "asks 5 things at once" in err and len(err.strip().splitlines()) == 1


def test_the_orchestrator_refuses_an_over_long_question_before_any_work():
    import asyncio

    orch = Orchestrator.__new__(Orchestrator)  # nothing else is touched before the check
    orch.settings = Settings(profile="x", limits=LimitsSettings(max_question_chars=10))
    with pytest.raises(QuestionTooLongError):
        asyncio.run(orch.run("x" * 11))


def _traces(d, n, age_s=0.0):
    now = time.time()
    for i in range(n):
        p = d / f"{i:032x}.json"
        p.write_text("{}")
        t = now - age_s - (n - i)  # later index: newer
        os.utime(p, (t, t))


def test_prune_keeps_the_newest_by_count(tmp_path):
    _traces(tmp_path, 10)
    (tmp_path / "notes.txt").write_text("kept")
    assert prune_traces(tmp_path, None, 4) == 6
    assert sorted(p.name for p in tmp_path.glob("*.json")) == [f"{i:032x}.json" for i in range(6, 10)]
    assert (tmp_path / "notes.txt").exists()


def test_prune_deletes_by_age(tmp_path):
    _traces(tmp_path, 3, age_s=40 * 86400)
    fresh = tmp_path / ("f" * 32 + ".json")
    fresh.write_text("{}")
    assert prune_traces(tmp_path, 30, None) == 3 and [p.name for p in tmp_path.glob("*.json")] == [fresh.name]
    assert prune_traces(tmp_path, None, None) == 0 and prune_traces(tmp_path / "none", 1, 1) == 0


def test_retention_runs_on_the_first_write_and_every_prune_every(tmp_path):
    _traces(tmp_path, 5)
    orch = Orchestrator.__new__(Orchestrator)
    orch.settings = SimpleNamespace(traces=TracesSettings(keep_days=None, keep_count=2, prune_every=3))
    orch.trace_dir, orch._traces_written, orch._counting = tmp_path, 0, threading.Lock()
    orch._retain_traces()
    assert len(list(tmp_path.glob("*.json"))) == 2
    _traces(tmp_path, 5)  # same names, rewritten: 5 files again
    orch._retain_traces()
    orch._retain_traces()
    assert len(list(tmp_path.glob("*.json"))) == 5  # writes 2 and 3: no scan
    orch._retain_traces()  # write 4: scan
    assert len(list(tmp_path.glob("*.json"))) == 2


def test_api_paths_are_relative_to_the_data_directory(tmp_path):
    data = tmp_path / "data"
    inside = data / "uploads" / "a.md"
    assert relative_path(str(inside), data) == "uploads/a.md"
    assert relative_path("/srv/corpus/b.md", data) == "b.md" and relative_path(None, data) is None
    row = dict(doc_id="a", cite_as=None, doc_type=None, number=None, year=None, title="A", authority="unknown",
               published=None, effective=None, lang="id", format="md", version=1, chunks=1, pasal=None, pages=None,
               pages_without_text=[], unresolved_references=0, original=str(inside), near_duplicates_with=[],
               ingested_at="2025-01-01", source_hash=None)
    listing = CorpusResponse(data_dir=str(data), fingerprint=None, ready=True, problem=None, documents=1, chunks=1,
                             items=[row]).relative_to(data)
    assert listing.data_dir == "data" and listing.items[0].original == "uploads/a.md"
    report = IngestResponse(files=1, ingested=[str(inside)], unchanged=[], errors=[{"path": str(inside),
                            "reason": "x"}], chunks_written=0, embedded=0, removed_from_dense=0, total_documents=1,
                            total_chunks=1, needs_ocr={str(inside): [1]}).relative_to(data)
    assert report.ingested == ["uploads/a.md"] and report.errors[0].path == "uploads/a.md"
    assert report.needs_ocr == {"uploads/a.md": [1]}
    assert str(tmp_path) not in report.model_dump_json() + listing.model_dump_json()
