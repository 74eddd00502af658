"""Tiering: rules route and decompose every question; the generator's model rewrites the
query for the corrective retry only when the profile says so, and rules take over when it
cannot. The generator here is a scripted fake that always fails the gates."""
from __future__ import annotations

import asyncio

import pytest

from pipeline.backends.fakes import FakeScriptedGenerator
from pipeline.orchestrator import Orchestrator
from pipeline.prompts import build_rewrite_messages, parse_rewrite

pytestmark = pytest.mark.integration

UNSUPPORTED = {"claims": [{"text": "Tarif 99 persen.", "citations": [{"chunk_id": "nope", "quote": "tidak ada"}]}]}


class FakeRewritingGenerator(FakeScriptedGenerator):
    """A scripted generator that can also rewrite queries (as the LLM backends do)."""

    name = "fake-rewriting"

    def __init__(self, rewrite: str | None | Exception):
        super().__init__([UNSUPPORTED])
        self._rewrite = rewrite
        self.rewrites: list[tuple[str, str]] = []

    async def rewrite_query(self, question: str, lang: str) -> str | None:
        self.rewrites.append((question, lang))
        if isinstance(self._rewrite, Exception):
            raise self._rewrite
        return self._rewrite


def _run(corpus, generator, rewrite: str):
    orch = corpus.orchestrator(generator=generator, write_traces=False)
    settings = orch.settings.model_copy(update={"generator": orch.settings.generator.model_copy(
        update={"rewrite": rewrite})})
    profile = orch.profile.model_copy(update={"settings": settings})
    tiered = Orchestrator(profile, orch.components, orch.analyzer)
    return asyncio.run(tiered.run("Berapa tarif PPh final atas sewa tanah dan bangunan?"))


def test_the_model_rewrites_the_corrective_query_when_asked(fake_corpus):
    gen = FakeRewritingGenerator("tarif pajak penghasilan final persewaan tanah bangunan")
    result, trace = _run(fake_corpus, gen, "generator")
    assert gen.rewrites == [("Berapa tarif PPh final atas sewa tanah dan bangunan?", "id")]
    retry = trace.parts[0].attempts[1].query
    assert retry.rewrite.startswith("rewritten by fake-rewriting: tarif pajak penghasilan final persewaan")
    assert retry.dense_text == "tarif pajak penghasilan final persewaan tanah bangunan"
    assert "persewaan" in retry.lexical_tokens or any("sewa" in t for t in retry.lexical_tokens)
    assert retry.terms == trace.parts[0].attempts[0].query.terms  # what an answer must cover is unchanged
    # routing and decomposition never reach the model: it generated once per attempt, nothing more
    assert len(gen.requests) == 2 and result.outcome == "refusal"


@pytest.mark.parametrize("rewrite", [None, RuntimeError("model down")])
def test_rules_take_over_when_the_model_cannot_rewrite(fake_corpus, rewrite):
    gen = FakeRewritingGenerator(rewrite)
    _, trace = _run(fake_corpus, gen, "generator")
    assert gen.rewrites and trace.parts[0].attempts[1].query.rewrite.startswith("keywords and glossary")


def test_with_rules_the_model_is_not_asked(fake_corpus):
    gen = FakeRewritingGenerator("anything")
    _, trace = _run(fake_corpus, gen, "rules")
    assert gen.rewrites == [] and trace.parts[0].attempts[1].query.rewrite.startswith("keywords and glossary")


@pytest.mark.parametrize("text, expected", [
    ("tarif PPh final sewa tanah", "tarif PPh final sewa tanah"),
    ("Query: tarif PPh final\nBecause the user asks…", "tarif PPh final"),
    ('"tarif pajak sewa"', "tarif pajak sewa"),
    ("", None), (None, None), ("   \n  ", None),
    ("Berapa tarif PPh final atas sewa tanah dan bangunan?", None),  # unchanged is no rewrite
    ("x" * 401, None),
])
def test_parse_rewrite_keeps_one_usable_line(text, expected):
    assert parse_rewrite(text, "Berapa tarif PPh final atas sewa tanah dan bangunan?") == expected


def test_rewrite_prompt_is_in_the_question_language():
    assert "Tulis ulang" in build_rewrite_messages("Apa itu PPN?", "id")[0]["content"]
    assert "Rewrite" in build_rewrite_messages("What is VAT?", "en")[0]["content"]
