"""A served question costs few deployment calls, and the same answer as in process.

The served components (serve/handles.py over the deployments' classes, through counting fake
handles, no Ray cluster) answer with the one orchestrator. With every model in its own deployment
(full-cpu and gpu; the question embedded in the Retriever here), an attempt is one call to the
Retriever for the whole context, which calls the Reranker once, then one call each to the
Generator and the Judge. With lite's placement (every model inside its caller) it is one call to
the Retriever and nothing else. Either way the answer is the one the in-process orchestrator gives
over the same corpus.
"""
from __future__ import annotations

import asyncio

import pytest

from pipeline.analysis import query_analyzer
from pipeline.orchestrator import Components, Orchestrator
from pipeline.corpus import DataDir
from pipeline.types import Verdict
from serve.ingress import Ingress
from serve.config import Batch, Placement, RuntimeSettings, load_serve_config
from serve.deployments import GeneratorDeployment, JudgeDeployment, RerankerDeployment, RetrieverDeployment
from serve.handles import HandleContext, HandleGenerator, HandleJudge, TimedJudge

from ..fake_handles import FakeHandle, fake_replica_context

pytestmark = pytest.mark.integration

BATCH = Batch(max_batch_size=8, batch_wait_timeout_s=0.002)


@pytest.fixture
def served(lite_corpus, profile, monkeypatch):
    """The orchestrator over handles to the lite deployments' objects, and the handles."""
    fake_replica_context(monkeypatch)
    reranker = FakeHandle(RerankerDeployment.func_or_class("lite", BATCH))
    generator = FakeHandle(GeneratorDeployment.func_or_class("lite"))
    judge = FakeHandle(JudgeDeployment.func_or_class("lite", BATCH))
    retriever = FakeHandle(RetrieverDeployment.func_or_class(
        "lite", str(lite_corpus.data_dir), RuntimeSettings(placement=Placement(query_embedder="retriever")), None, reranker, BATCH))
    names = {"embedder": lite_corpus.embedder.name, "reranker": reranker.target.model.name}
    components = Components(HandleContext(retriever, names, 30),
                            HandleGenerator(generator, generator.target.model.name, 30),
                            HandleJudge(judge, judge.target.model.name, 10))
    handles = {"Retriever": retriever, "Reranker": reranker, "Generator": generator, "Judge": judge}
    return Orchestrator(profile, components, query_analyzer(profile)), handles


def _calls(handles) -> dict[str, int]:
    return {name: sum(h.calls.values()) - h.calls["info"] for name, h in handles.items()}


def test_an_answered_question_is_four_calls_and_the_in_process_answer(served, lite_corpus):
    orch, handles = served
    question = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
    result, trace = asyncio.run(orch.run(question))
    assert result.outcome == "answer" and len(trace.parts) == 1 and len(trace.parts[0].attempts) == 1
    assert _calls(handles) == {"Retriever": 1, "Reranker": 1, "Generator": 1, "Judge": 1}

    local, local_trace = asyncio.run(lite_corpus.orchestrator(write_traces=False).run(question))
    assert [c.text for c in result.claims] == [c.text for c in local.claims]
    assert [(c.status, c.confidence) for c in result.claims] == [(c.status, c.confidence) for c in local.claims]
    served_attempt, local_attempt = trace.parts[0].attempts[0], local_trace.parts[0].attempts[0]
    assert served_attempt.query == local_attempt.query
    assert [c.chunk.chunk_id for c in served_attempt.candidates] == [c.chunk.chunk_id for c in local_attempt.candidates]
    assert trace.components == local_trace.components


def test_a_refusal_with_its_retry_is_two_rounds_of_calls(served, lite_corpus):
    orch, handles = served
    question = "Berapa tarif bea masuk untuk impor mobil listrik?"
    result, trace = asyncio.run(orch.run(question))
    local = asyncio.run(lite_corpus.orchestrator(write_traces=False).answer(question))
    assert result.outcome == local.outcome == "refusal" and result.reason_code == local.reason_code
    attempts = len(trace.parts[0].attempts)
    assert attempts == 2  # the corrective retry, a rewritten query, wider
    calls = _calls(handles)
    assert calls["Retriever"] == calls["Reranker"] == attempts
    assert calls["Generator"] <= attempts and calls["Judge"] <= attempts  # no claims: nothing to judge


def test_concurrent_questions_meet_in_the_batches(served):
    """Eight questions at once: the Retriever's query-embedding batches and the Reranker's batches
    each hold several questions (fewer model calls than questions)."""
    orch, handles = served
    questions = ["Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?",
                 "What is the penalty for filing the SPT Masa late?"] * 4
    retriever, reranker = handles["Retriever"].target, handles["Reranker"].target
    batches = {"embed": [], "rerank": []}

    async def run():
        model = (await retriever.library.builder("default")).retriever.embedder.model  # the Retriever's own embedder
        embed, rerank = model.embed_queries, reranker.model.rerank

        async def counted_embed(texts):
            batches["embed"].append(len(texts))
            return await embed(texts)

        async def rerank_batch(items):  # the batch form a cross-encoder has, over the heuristic
            batches["rerank"].append(len(items))
            return await asyncio.gather(*(rerank(*it) for it in items))
        model.embed_queries, reranker.model.rerank_batch = counted_embed, rerank_batch
        return await asyncio.gather(*(orch.run(q) for q in questions))

    results = asyncio.run(run())
    assert all(r.outcome == "answer" for r, _ in results)
    assert handles["Reranker"].calls["rerank"] == len(questions)  # one call per question …
    for kind in ("embed", "rerank"):  # … met in batches
        assert sum(batches[kind]) == len(questions) and max(batches[kind]) > 1, batches


@pytest.fixture
def served_lite(lite_corpus, monkeypatch):
    """The Ingress as `saksi serve` builds it with lite's placement (no Reranker, Generator or Judge
    deployment), over a counting handle to the Retriever."""
    fake_replica_context(monkeypatch)
    runtime = load_serve_config("lite").runtime
    assert runtime.placement == Placement(query_embedder="retriever", reranker="retriever", generator="ingress",
                                          judge="ingress")
    data = str(lite_corpus.data_dir)
    retriever = FakeHandle(RetrieverDeployment.func_or_class("lite", data, runtime, None, None, BATCH))
    mine = Ingress.func_or_class.__mro__[1]  # the class as written, under Serve's ASGI wrapper (async __init__)
    ingress = mine.__new__(mine)
    mine.__init__(ingress, "lite", data, runtime, FakeHandle(object()), retriever, None, None, None)
    return ingress, retriever


def test_with_lite_placement_an_attempt_is_one_call_and_the_in_process_answer(served_lite, lite_corpus):
    ingress, retriever = served_lite
    assert set(ingress.service.stages.handles) == {"Embedder", "Retriever"}
    answered = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
    refused = "Berapa tarif bea masuk untuk impor mobil listrik?"

    async def run():
        orch = await ingress.service.orchestrator(DataDir(lite_corpus.data_dir))
        retriever.calls.clear()  # building the orchestrator asked the model names once
        out = []
        for q in (answered, refused):
            out.append(await orch.run(q))
            out.append(dict(retriever.calls))
            retriever.calls.clear()
        return out

    (result, trace), calls, (refusal, refusal_trace), refusal_calls = asyncio.run(run())
    assert result.outcome == "answer" and len(trace.parts[0].attempts) == 1
    assert calls == {"context": 1}  # the whole round: context, rerank, generate and judge
    assert refusal.outcome == "refusal" and len(refusal_trace.parts[0].attempts) == 2
    assert refusal_calls == {"context": 2}  # the corrective retry is one more call

    local, local_trace = asyncio.run(lite_corpus.orchestrator(write_traces=False).run(answered))
    assert [c.text for c in result.claims] == [c.text for c in local.claims]
    assert [(c.status, c.confidence, c.verdict) for c in result.claims] == \
        [(c.status, c.confidence, c.verdict) for c in local.claims]
    assert trace.components == local_trace.components
    assert [c.chunk.chunk_id for c in trace.parts[0].attempts[0].candidates] == \
        [c.chunk.chunk_id for c in local_trace.parts[0].attempts[0].candidates]


def test_a_judge_in_the_ingress_keeps_the_judges_deadline(served_lite, lite_corpus):
    """Placed in the Ingress, the judge has the deadline a judge over a handle has
    (runtime.judge_timeout_s): past it, no verdict, and the claim stays below the top band."""
    ingress, _ = served_lite
    timed = ingress.service.stages.local_judge
    assert isinstance(timed, TimedJudge) and timed.timeout == ingress.service.runtime.judge_timeout_s

    class FakeSlowJudge:
        name = timed.inner.name

        async def judge(self, items):  # sure, but late: past the deadline its yes must not count
            await asyncio.sleep(0.5)
            return [Verdict("entailed", 1.0, self.name) for _ in items]

    timed.inner, timed.timeout = FakeSlowJudge(), 0.05

    async def run():
        orch = await ingress.service.orchestrator(DataDir(lite_corpus.data_dir))
        return await orch.run("Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?")

    result, _ = asyncio.run(run())
    shown = [c for c in result.claims if c.status == "supported"]
    assert shown
    for c in shown:
        assert c.verdict.label is None and "judge unavailable" in c.verdict.detail
        assert c.confidence.band != "TINGGI" and c.confidence.value <= 0.79
