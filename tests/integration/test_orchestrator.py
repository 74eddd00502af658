"""The orchestrator end to end over real indexes, driven by a scripted fake generator.

The fake plays a language model at its worst, so the gates, the corrective retry and
the structured refusal are exercised exactly as they would be behind an LLM.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from pipeline.analysis import query_analyzer
from pipeline.backends.fakes import FakeScriptedGenerator, FakeScriptedJudge
from pipeline.replay import replay
from pipeline.trace import dump_trace, load_trace, trace_schema
from pipeline.types import GenerationOutput, GenerationRequest

pytestmark = pytest.mark.integration

QUESTION = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"


def ask(corpus, generator=None, judge=None, question=QUESTION, lang=None):
    return asyncio.run(corpus.orchestrator(generator=generator, judge=judge).run(question, lang=lang))


def tariff_item(request: GenerationRequest):
    return next(i for i in request.context if "10% (sepuluh persen)" in i.text)


def exact_tariff_claim(request: GenerationRequest) -> dict:
    item = tariff_item(request)
    start = item.text.index("Besarnya")
    quote = item.text[start:item.text.index("bangunan.", start) + len("bangunan.")]
    return {"text": " ".join(quote.split()), "citations": [{"chunk_id": item.chunk_id, "quote": quote}],
            "self_score": 0.9}


def test_lite_pipeline_answers_with_receipts_and_surfaces_the_conflicting_version(fake_corpus):
    result, trace = ask(fake_corpus)
    assert result.outcome == "answer"
    supported = [c for c in result.claims if c.status == "supported"]
    assert any("10%" in c.text for c in supported) and any("15%" in c.text for c in supported)
    for c in supported:
        for cit in c.citations:
            assert cit.ok and cit.location.startswith("Pasal")
    assert result.conflicts and "10%" in result.conflicts[0].detail and "15%" in result.conflicts[0].detail
    assert trace.parts[0].route.name == "rate"
    candidate = trace.parts[0].attempts[0].candidates[0]
    assert candidate.dense_score is not None and candidate.lexical_score is not None  # every lane's score


def test_the_generator_is_told_which_passage_both_searches_ranked_first(lite_corpus):
    """ContextItem.first_in_both (the consensus the lite reader's agreement reads): set exactly on the context
    items whose candidate the dense and the lexical search each ranked first, and kept in the trace."""
    fake = FakeScriptedGenerator(lambda req: {"claims": [exact_tariff_claim(req)]})
    _, trace = ask(lite_corpus, generator=fake)
    attempt = trace.parts[0].attempts[0]
    ranks = {c.chunk.chunk_id: (c.dense_rank, c.lexical_rank) for c in attempt.candidates}
    items = fake.requests[0].context
    assert [i.first_in_both for i in items] == [ranks[i.chunk_id] == (1, 1) for i in items]
    assert sum(i.first_in_both for i in items) == 1  # one passage leads both searches, and it is read
    again = json.loads(json.dumps(dump_trace(trace)))  # as written to disk
    assert [i["first_in_both"] for i in again["parts"][0]["attempts"][0]["generator_request"]["context"]] == \
        [i.first_in_both for i in items]


def test_fabricating_generator_is_retried_once_then_refused_with_nearest_records(fake_corpus):
    fake = FakeScriptedGenerator(lambda req: {"claims": [{
        "text": "Tarifnya 12% dari jumlah bruto.",
        "citations": [{"chunk_id": req.context[0].chunk_id, "quote": "tarifnya 12% dari jumlah bruto"}]}]})
    result, trace = ask(fake_corpus, generator=fake)
    assert result.outcome == "refusal" and result.retried
    assert len(fake.requests) == 2 and len(trace.parts[0].attempts) == 2
    assert trace.parts[0].attempts[1].query.rewrite  # the second attempt used a rewritten query
    assert [r.retry for r in fake.requests] == [False, True]  # and the generator is told it is the retry
    assert trace.parts[0].attempts[1].generator_request.retry
    assert result.reason_code == "no_supported_claims" and result.missing_categories == ("rate",)
    assert result.nearest and all(n.score > 0 for n in result.nearest)
    (claim,) = result.claims  # the fabricated claim is shown as not supported, never silently dropped
    assert claim.status == "unsupported" and claim.confidence is None
    assert any(r.startswith("quote_not_found") for r in claim.reasons)
    assert any(r.startswith("number_without_basis") for r in claim.reasons)


def test_corrective_retry_can_rescue_an_answer(fake_corpus):
    calls = []

    def script(req):  # first attempt: nothing; the corrective retry: an exact quote
        calls.append(req)
        return {"claims": []} if len(calls) == 1 else {"claims": [exact_tariff_claim(req)]}

    result, trace = ask(fake_corpus, generator=FakeScriptedGenerator(script))
    assert result.outcome == "answer" and result.retried
    assert result.parts[0].attempt_used == 1


def test_citation_to_a_chunk_outside_this_requests_retrieval_is_blocked(fake_corpus):
    outside = next(cid for cid, c in fake_corpus.store.get(fake_corpus.store.ids()).items()
                   if c.doc_id == "note-en-1")
    text = fake_corpus.store.get([outside])[outside].text

    def script(req):
        assert outside not in {i.chunk_id for i in req.context}
        return {"claims": [{"text": text[:60], "citations": [{"chunk_id": outside, "quote": text[:60]}]}]}

    result, _ = ask(fake_corpus, generator=FakeScriptedGenerator(script))
    assert result.outcome == "refusal"
    assert result.claims[0].reasons[0].startswith("citation_not_retrieved")


@pytest.mark.parametrize("output,code", [
    (GenerationOutput(raw='{"claims": [{"text": "10%"', model="fake"), "generator_output_invalid_json"),
    (GenerationOutput(raw='{"claims": []}', model="fake", finish_reason="length"), "generator_output_truncated"),
    (GenerationOutput(raw='{"answer": "10%"}', model="fake"), "generator_output_off_schema"),
])
def test_unusable_generator_output_is_a_refusal_stating_why(fake_corpus, output, code):
    result, _ = ask(fake_corpus, generator=FakeScriptedGenerator([output]))
    assert result.outcome == "refusal" and result.reason_code == code and result.claims == ()


def test_a_crashing_generator_is_a_refusal_not_an_exception(fake_corpus):
    def boom(req):
        raise TimeoutError("model server did not answer")

    result, trace = ask(fake_corpus, generator=FakeScriptedGenerator(boom))
    assert result.outcome == "refusal" and result.reason_code == "generator_failed"
    assert "did not answer" in trace.parts[0].attempts[0].failure_detail


def test_judge_outage_caps_every_claim_below_the_top_band(fake_corpus):
    result, _ = ask(fake_corpus, judge=FakeScriptedJudge(fail=True))
    supported = [c for c in result.claims if c.status == "supported"]
    assert supported
    assert all(c.confidence.band != "TINGGI" and c.confidence.value <= 0.79 for c in supported)
    assert all(c.verdict.label is None for c in supported)


def test_multi_part_question_needs_support_for_every_part(fake_corpus):
    result, trace = ask(fake_corpus, question="Berapa tarif PPh atas persewaan tanah dan berapa harga tiket kereta ke Bandung?")
    assert len(trace.parts) == 2
    assert trace.parts[0].outcome.answered and not trace.parts[1].outcome.answered
    assert result.outcome == "refusal" and "(2)" in result.reason


def test_english_labels_do_not_change_the_decision(fake_corpus):
    r_id, _ = ask(fake_corpus)
    r_en, _ = ask(fake_corpus, lang="en")
    assert r_en.lang == "en" and r_en.outcome == r_id.outcome
    assert [c.text for c in r_en.claims] == [c.text for c in r_id.claims]


def test_trace_validates_against_its_schema_and_reads_back_identically(fake_corpus):
    result, trace = ask(fake_corpus)
    data = json.loads(open(result.trace_path, encoding="utf-8").read())
    jsonschema.validate(data, trace_schema())
    assert load_trace(Path(result.trace_path)) == trace
    assert dump_trace(trace) == data


def test_replay_reproduces_the_decision_and_catches_an_altered_quote(fake_corpus):
    result, trace = ask(fake_corpus)
    analyzer = query_analyzer(fake_corpus.profile)
    same = asyncio.run(replay(trace, analyzer))
    assert same.same and same.replayed.outcome == "answer"

    attempt = trace.parts[0].attempts[0]
    raw = json.loads(attempt.generator_output.raw)
    raw["claims"][0]["citations"][0]["quote"] = raw["claims"][0]["citations"][0]["quote"].replace("10%", "12%")
    tampered_attempt = replace(attempt, generator_output=replace(attempt.generator_output, raw=json.dumps(raw)))
    tampered = replace(trace, parts=(replace(trace.parts[0], attempts=(tampered_attempt,)),))
    report = asyncio.run(replay(tampered, analyzer))
    assert not report.same
    blocked = [c for c in report.result.claims if c.status == "unsupported"]
    assert blocked and any(r.startswith("quote_not_found") for r in blocked[0].reasons)


def _as_version_1(data: dict) -> dict:
    """A trace as version 1 wrote it: the same content under the field names it used then."""
    renames = {"attempt": {"failure": "parse_error", "failure_detail": "parse_detail"},
               "chunk": {"rendition": "source_path", "original": "document_path", "original_span": "origin"},
               "citation": {"rendition": "source", "chunk_span": "span", "original": "origin"}}

    def renamed(d: dict, kind: str) -> dict:
        return {renames[kind].get(k, k): v for k, v in d.items()}

    old = {**data, "version": 1}
    old["parts"] = [{**part, "attempts": [
        {**renamed(a, "attempt"),
         "candidates": [{**c, "chunk": renamed(c["chunk"], "chunk")} for c in a["candidates"]],
         "claims": [{**cl, "citations": [renamed(x, "citation") for x in cl["citations"]]} for cl in a["claims"]]}
        for a in part["attempts"]]} for part in data["parts"]]
    for a in (a for part in old["parts"] for a in part["attempts"]):
        a["reranked"] = a["reranked"] + [i for i in a.pop("referenced") if i not in a["reranked"]]
    return old


def test_a_version_1_trace_reads_as_today_and_replays_to_its_decision(fake_corpus, tmp_path):
    result, trace = ask(fake_corpus)
    data = json.loads(Path(result.trace_path).read_text(encoding="utf-8"))
    old = _as_version_1(data)
    assert "parse_error" in old["parts"][0]["attempts"][0] and "source_path" in json.dumps(old)
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    loaded = load_trace(path)
    assert loaded.version == 1
    assert loaded.parts[0].attempts[0].candidates == trace.parts[0].attempts[0].candidates
    assert loaded.parts[0].attempts[0].claims == trace.parts[0].attempts[0].claims
    report = asyncio.run(replay(loaded, query_analyzer(fake_corpus.profile)))
    assert report.same and report.replayed.outcome == "answer"


def test_a_question_past_its_deadline_is_a_refusal_with_a_trace_that_replays(fake_corpus, tmp_path):
    import asyncio as aio

    from pipeline.analysis import QueryAnalyzer, build_analyzers
    from pipeline.replay import replay
    from pipeline.trace import load_trace

    class SlowGenerator:
        name = "fake-slow"

        async def generate(self, request):
            await aio.sleep(5)
            raise AssertionError("never reached")

    orch = fake_corpus.orchestrator(generator=SlowGenerator(), trace_dir=tmp_path)
    result, trace = aio.run(orch.run_within("Berapa tarif PPh atas persewaan tanah?", None, 0.2))
    assert result.outcome == "refusal" and result.reason_code == "timeout" and result.claims == ()
    assert "time limit" in result.reason or "Batas waktu" in result.reason
    loaded = load_trace(tmp_path / f"{result.trace_id}.json")
    assert loaded.decision.outcome == "refusal" and loaded.parts == ()
    p = fake_corpus.profile
    report = aio.run(replay(loaded, QueryAnalyzer(build_analyzers(p.analysis), p.glossary, p.normalisation)))
    assert report.same


def _changed_gate_live_and_replayed(corpus, change_settings=None, change_code=None):
    """The question answered, then the change, then the question answered live and the first answer's trace
    replayed."""
    from pipeline.trace import decision_of

    _, before = ask(corpus)
    if change_code:
        change_code()
    orch = corpus.orchestrator(write_traces=False)
    if change_settings:
        orch.gates = orch.gates.model_copy(update=change_settings)
        before = replace(before, settings=before.settings.model_copy(update=change_settings))
    live, _ = asyncio.run(orch.run(QUESTION))
    replayed = asyncio.run(replay(before, query_analyzer(corpus.profile)))
    return decision_of(live), replayed


def _alike(replayed, live) -> bool:
    """The same outcome, and the same fate for every claim the replay read: the live path, refused, retries with a
    search twice as deep, and its decision lists the retry's claims (one more passage's here); the recorded trace holds
    only the first attempt."""
    ours, theirs = _fates(replayed), _fates(live)
    return ours[:2] == theirs[:2] and bool(ours[2]) and ours[2] == tuple(c for c in theirs[2] if c in ours[2])


def test_a_changed_gate_setting_changes_replay_and_the_live_path_alike(fake_corpus):
    """Issue 28: one verify step (`pipeline.verification.verify_attempt`) with the trace's typed settings: a stricter
    operating point (confidence.min_supported) demotes the same claims live and in replay."""
    strict = fake_corpus.profile.settings.confidence.model_copy(update={"min_supported": 0.99})
    live, replayed = _changed_gate_live_and_replayed(fake_corpus, {"confidence": strict})
    assert live.outcome == "refusal" and not replayed.same  # the recorded answer no longer stands …
    assert _alike(replayed.replayed, live)  # … and replay reaches the live decision


def _fates(decision) -> tuple:
    """The outcome and each claim's fate with its reasons' codes (a reason's figures are rounded from the scores of
    two different runs: the recorded one, the live one)."""
    return decision.outcome, decision.reason_code, tuple(
        (part, text, status, band, tuple(r.split(":")[0] for r in reasons))
        for part, text, status, band, reasons in decision.claims)


def test_a_changed_gate_changes_replay_and_the_live_path_alike(fake_corpus, monkeypatch):
    """The number check changed in code (every claim now has a figure without basis): live and replay alike."""
    from pipeline import gates
    from pipeline.numbers import extract_figures

    def change():
        monkeypatch.setattr(gates, "figures_without_basis", lambda text, quotes: extract_figures("99.999.999"))

    live, replayed = _changed_gate_live_and_replayed(fake_corpus, change_code=change)
    assert live.outcome == "refusal" and _alike(replayed.replayed, live) and not replayed.same
    assert all(any(r.startswith("number_without_basis") for r in c[4]) for c in live.claims)


def test_the_trace_and_its_audit_entry_are_written_off_the_event_loop_before_the_answer_returns(fake_corpus,
                                                                                                monkeypatch):
    """Issue 28: serialising the trace, the audit log's fsync and trace pruning run in a worker thread (a server's
    event loop keeps serving meanwhile), and the answer comes back only once its audit entry is written."""
    import threading

    from pipeline import orchestrator as orch_module
    from pipeline.audit import AuditLog

    written = []
    real = orch_module.write_trace

    def spied(trace, directory):
        written.append(threading.current_thread())
        return real(trace, directory)

    monkeypatch.setattr(orch_module, "write_trace", spied)

    async def run():
        loop_thread = threading.current_thread()
        result, trace = await fake_corpus.orchestrator().run(QUESTION)
        return loop_thread, result, trace

    loop_thread, result, trace = asyncio.run(run())
    assert written and written[0] is not loop_thread
    entries = [e for e in AuditLog(fake_corpus.data_dir).recent("answer", "local", limit=5)
               if (e.get("data") or {}).get("trace_id") == trace.trace_id]
    assert len(entries) == 1 and result.trace_path
