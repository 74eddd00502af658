"""Claims verified while the generator writes, and released only once nothing can withhold them (issue 29).

The streamed path (`verification.generate_and_verify`, `release.Release`) must reach exactly the answer the whole
output reaches: on the sample corpus with the lite generator, and across the adversarial catalogue (fabricated,
foreign, paraphrased quotes, changed numbers, planted instructions), where a streamed answer must never carry a claim
that the answer given at once demotes. `Streamed` and `Whole` are test doubles around real generators: one hands the
output over a few characters at a time, the other does not stream at all."""
from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.corpus import Corpus
from pipeline.errors import GenerationError
from pipeline.eval.adversarial import MODES, NotExercised, ScriptedAdversaryGenerator
from pipeline.eval.fictional_corpus import CORPUS
from pipeline.replay import replay
from pipeline.responses import result_json
from pipeline.types import GenerationOutput

pytestmark = pytest.mark.integration

QUESTIONS = ["Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?",
             "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan pada tahun 2024?",
             "What is the penalty for filing the SPT Masa late?",
             "Berapa tarif bea masuk untuk impor mobil listrik?"]


class Whole:
    """A test double: the generator's output given at once (no `stream`), the path of a generator that cannot."""

    def __init__(self, inner):
        self.inner, self.name = inner, inner.name

    async def generate(self, request):
        return await self.inner.generate(request)


class Streamed(Whole):
    """A test double: the generator's output handed over `size` characters at a time; `written` counts what it has
    handed over, `cut_at` ends it there with finish_reason "length", `fail_at` raises there (a connection lost)."""

    def __init__(self, inner, size: int = 13, cut_at: int | None = None, fail_at: int | None = None):
        super().__init__(inner)
        self.size, self.cut_at, self.fail_at = size, cut_at, fail_at
        self.written = self.total = 0

    async def stream(self, request):
        out = await self.inner.generate(request)
        raw = out.raw if self.cut_at is None else out.raw[:self.cut_at]
        self.total, self.written = len(raw), 0
        for i in range(0, len(raw), self.size):
            if self.fail_at is not None and i >= self.fail_at:
                raise GenerationError("the connection to the model was lost")
            self.written = min(len(raw), i + self.size)
            yield raw[i:i + self.size]
            await asyncio.sleep(0)
        yield GenerationOutput(raw=raw, model=out.model, scores=out.scores,
                               finish_reason="length" if self.cut_at is not None else out.finish_reason)


def same(a, b) -> bool:
    drop = ("trace_id", "trace_path")
    ja, jb = ({k: v for k, v in result_json(r).items() if k not in drop} for r in (a, b))
    return ja == jb


def listen(gen: Streamed | None = None):
    heard = []

    def emit(kind, data):
        heard.append((kind, data, gen.written if gen else None))
    return heard, emit


def released(heard):
    return [d["claim"] for k, d, _ in heard if k == "claim"]


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_streamed_answer_is_the_answer_given_at_once(lite_corpus, question):
    from pipeline.backends import make_generator
    from pipeline.analysis import query_analyzer

    lite = make_generator(lite_corpus.profile, query_analyzer(lite_corpus.profile), lite_corpus.embedder)
    whole, _ = asyncio.run(lite_corpus.orchestrator(generator=Whole(lite), write_traces=False).run(question))
    gen = Streamed(lite)
    heard, emit = listen(gen)
    streamed, trace = asyncio.run(lite_corpus.orchestrator(generator=gen, write_traces=False).run(question, emit=emit))
    assert same(whole, streamed)
    shown = released(heard)
    supported = [c for c in streamed.claims if c.status == "supported"]
    assert shown == (supported if streamed.outcome == "answer" else [])  # in place, in final form, nothing else
    assert [d for k, d, _ in heard if k == "decided"] == [{"withdrawn": []}]
    assert asyncio.run(replay(trace, lite_corpus.orchestrator(write_traces=False).analyzer)).same


def test_history_is_released_after_the_rule_in_force_even_when_the_generator_writes_it_first(lite_corpus):
    """Asked for 2024, the 2025 rate (10%) is not yet in force: the generator writes it first, the answer shows it
    after the 15% in force then, and so does the stream."""
    from pipeline.backends import make_generator
    from pipeline.analysis import query_analyzer

    lite = make_generator(lite_corpus.profile, query_analyzer(lite_corpus.profile), lite_corpus.embedder)
    gen = Streamed(lite)
    heard, emit = listen(gen)
    result, trace = asyncio.run(lite_corpus.orchestrator(generator=gen, write_traces=False).run(QUESTIONS[1],
                                                                                                emit=emit))
    written = [c["text"] for c in json.loads(trace.parts[0].attempts[0].generator_output.raw)["claims"]]
    shown = [c.text for c in released(heard)]
    assert shown == [c.text for c in result.claims if c.status == "supported"]
    assert shown[0] != written[0] and "15%" in shown[0]  # the order the answer shows, not the order written
    assert released(heard)[-1].standing.state != "in_force"


def test_the_first_claim_is_released_while_the_generator_is_still_writing(lite_corpus):
    from pipeline.backends import make_generator
    from pipeline.analysis import query_analyzer

    lite = make_generator(lite_corpus.profile, query_analyzer(lite_corpus.profile), lite_corpus.embedder)
    gen = Streamed(lite, size=5)
    heard, emit = listen(gen)
    asyncio.run(lite_corpus.orchestrator(generator=gen, write_traces=False).run(QUESTIONS[0], emit=emit))
    first = next(w for k, _, w in heard if k == "claim")
    assert first < gen.total  # shown before the output was finished: it was gated as soon as it closed


def test_an_output_cut_off_after_complete_claims_keeps_them_live_and_in_replay(lite_corpus):
    from pipeline.backends import make_generator
    from pipeline.analysis import query_analyzer

    lite = make_generator(lite_corpus.profile, query_analyzer(lite_corpus.profile), lite_corpus.embedder)
    full = asyncio.run(lite_corpus.orchestrator(generator=Whole(lite), write_traces=False).run(QUESTIONS[0]))[1]
    raw = full.parts[0].attempts[0].generator_output.raw
    claims = json.loads(raw)["claims"]
    assert len(claims) >= 2
    cut_at = len('{"claims": [' + json.dumps(claims[0], ensure_ascii=False)) + 20  # inside the second claim
    for gen in (Streamed(lite, cut_at=cut_at), Streamed(lite, fail_at=cut_at)):
        result, trace = asyncio.run(lite_corpus.orchestrator(generator=gen, write_traces=False).run(QUESTIONS[0]))
        attempt = trace.parts[0].attempts[0]
        assert [c.text for c in attempt.claims] == [claims[0]["text"]]
        assert attempt.failure is None and attempt.output_cut.split(":")[0] in ("generator_output_truncated",
                                                                                 "generator_failed")
        assert result.outcome == "answer" and result.claims[0].status == "supported"
        assert asyncio.run(replay(trace, lite_corpus.orchestrator(write_traces=False).analyzer)).same
    # failing before a claim is complete: a refusal saying the generator failed, as ever
    result, _ = asyncio.run(lite_corpus.orchestrator(generator=Streamed(lite, fail_at=13), write_traces=False).run(
        QUESTIONS[0]))
    assert result.outcome == "refusal" and result.parts[0].reason == "generator_failed"


@pytest.fixture(scope="module")
def fictional(profile):
    with tempfile.TemporaryDirectory(prefix="saksi-stream-adv-") as tmp:
        src = Path(tmp) / "corpus"
        src.mkdir()
        for name, text in CORPUS.items():
            (src / name).write_text(text, encoding="utf-8")
        with Corpus(Path(tmp) / "data", profile, embedder=FakeHashEmbedder()) as corpus:
            corpus.ingest([src])
            yield corpus


def _said(c):
    """A claim as its reader meets it: its words and what it quotes where (the same words may come twice, honest and
    misattributed)."""
    return c.text, tuple((x.chunk_id, x.quote) for x in c.citations)


def _with_faithful(script, faithful):
    """The adversary's claim between two honest ones: what is released around a demoted claim is in play too."""
    def both(req, ids):
        try:
            honest = faithful(req, ids)
        except NotExercised:
            honest = []
        return [*honest, *script(req, ids), *honest[:1]]
    return both


def test_across_the_adversarial_catalogue_a_stream_never_shows_what_the_whole_answer_demotes(fictional):
    ids = fictional.store.ids()
    faithful = next(m for m in MODES if m.name == "faithful")
    ran = caught = 0
    for mode in MODES:
        for t in mode.targets:
            for script in (mode.build(t), _with_faithful(mode.build(t), faithful.build(t))):
                whole_gen = ScriptedAdversaryGenerator(mode.name, script, ids)
                whole, _ = asyncio.run(fictional.orchestrator(generator=whole_gen, write_traces=False).run(t.question))
                gen = Streamed(ScriptedAdversaryGenerator(mode.name, script, ids), size=7)
                heard, emit = listen(gen)
                streamed, _ = asyncio.run(fictional.orchestrator(generator=gen, write_traces=False).run(
                    t.question, emit=emit))
                assert same(whole, streamed), (mode.name, t.question)
                shown = [_said(c) for c in released(heard)]
                demoted = {_said(c) for c in whole.claims if c.status != "supported"}
                assert not demoted & set(shown), (mode.name, shown, demoted)
                supported = [_said(c) for c in whole.claims if c.status == "supported"]
                assert shown == (supported if whole.outcome == "answer" else []), mode.name
                ran += bool(whole_gen.exercised)
                caught += bool(demoted)
    assert ran > 30 and caught > 20  # the catalogue really ran, and its failures really were demoted
