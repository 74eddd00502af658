"""Items of one enumeration the reader cannot tell apart are quoted together (generator.close_items).

"Berapa uang pesangon untuk masa kerja kurang dari 1 tahun?" is answered by huruf a of "… diberikan dengan ketentuan
sebagai berikut:"; huruf b ("1 tahun atau lebih tetapi kurang dari 2 tahun") shares nearly every word with the question.
When the reader reads the two close to each other, one item shown alone at TINGGI is a coin toss presented as a
receipt; the claim quotes the lead-in and both items (reader/answers.siblings, with_items), each cited to its huruf,
and the real gates check it as they check one item.
"""
from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from pipeline.analysis import QueryAnalyzer, build_analyzers
from pipeline.backends.lite import ExtractiveGenerator, VerbatimJudge
from pipeline.claims import MAX_CITATIONS
from pipeline.config import ConfidenceSettings, JudgeSettings
from pipeline.gates import verify
from pipeline.answer_reader import answer_candidates
from pipeline.answer_reader.answers import siblings, with_items
from pipeline.answer_reader.features import FEATURES
from pipeline.types import GenerationRequest, JudgeInput

from .regulation_chunks import chunks_of, context_item

pytestmark = pytest.mark.unit

REGULATION = """PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 34 TAHUN 2021

Pasal 1
Dalam Peraturan Pemerintah ini yang dimaksud dengan:
1. Pengusaha adalah orang perseorangan yang menjalankan suatu perusahaan milik sendiri.
2. Pekerja/Buruh adalah setiap orang yang bekerja dengan menerima upah atau imbalan dalam bentuk lain.

Pasal 40
Uang pesangon diberikan dengan ketentuan sebagai berikut:
a. masa kerja kurang dari 1 (satu) tahun, 1 (satu) bulan Upah;
b. masa kerja 1 (satu) tahun atau lebih tetapi kurang dari 2 (dua) tahun, 2 (dua) bulan Upah;
c. masa kerja 2 (dua) tahun atau lebih tetapi kurang dari 3 (tiga) tahun, 3 (tiga) bulan Upah.
"""
QUESTION = "Berapa uang pesangon untuk masa kerja kurang dari 1 tahun?"


@pytest.fixture(scope="module")
def chunks():
    return chunks_of(REGULATION)


def _items(chunk):
    return {c.position: c for c in answer_candidates([context_item(chunk)], 30, 700) if c.kind == "item"}


def test_the_siblings_of_an_item_are_the_other_items_of_its_list(chunks):
    items = _items(chunks["Pasal 40"])
    assert sorted(items) == [1, 2, 3]
    assert [o.position for o in siblings(items[1], list(items.values()))] == [2, 3]
    # a definitions entry answers its own term: another entry read close to it is another term's meaning
    entries = _items(chunks["Pasal 1"])
    assert len(entries) == 2 and siblings(entries[1], list(entries.values())) == []


def test_items_quoted_together_are_exact_slices_in_the_list_order_and_the_judge_accepts_them(chunks):
    pasal = chunks["Pasal 40"]
    items = _items(pasal)
    both = with_items(items[3], [items[1]])  # asked in any order, quoted in the enumeration's
    assert both.quotes[0] == "Uang pesangon diberikan dengan ketentuan sebagai berikut:"
    assert both.quotes[1].startswith("a. masa kerja kurang dari 1") and both.quotes[2].startswith("c. masa kerja 2")
    assert all(pasal.text[a:b] == q for (a, b), q in zip(both.segments, both.quotes))
    # b is left out between a and c: a whole item of the same list, as for one item
    (verdict,) = asyncio.run(VerbatimJudge().judge([JudgeInput(both.quote, pasal.text)]))
    assert verdict.label == "entailed"
    assert with_items(items[2], []) == items[2]


class FakeListReader:
    """A test double for the trained reader: reads an enumeration's items by their place in it (the first 0.9, the
    second `second`, the rest 0.05) and everything else 0.02. Not a model: it stands in for one whose two best
    readings are close or far apart."""

    name = "fake-list-reader"

    def __init__(self, second: float):
        self.second = second

    def probability(self, x: np.ndarray, groups=None, docs=None, english=None) -> np.ndarray:
        item = x[:, FEATURES.index("k_item")] > 0.5
        place = np.rint(x[:, FEATURES.index("list_position")] * (np.exp(x[:, FEATURES.index("list_items")]) - 1))
        return np.where(item & (place == 1), 0.9, np.where(item & (place == 2), self.second,
                                                           np.where(item, 0.05, 0.02)))


@pytest.fixture(scope="module")
def qa(profile):
    return QueryAnalyzer(build_analyzers(profile.analysis), profile.glossary, profile.normalisation)


def _claims(qa, profile, chunk, second: float, **update):
    settings = profile.settings.generator.model_copy(update={
        "min_coverage": 0.3, "agreement": None, "cross_lingual": None, "chapter": None, "answer_at": None,
        "threshold": 0.5, "regulation_threshold": 0.5, **update})
    req = GenerationRequest(QUESTION, "id", (context_item(chunk),), tuple(qa.term_groups(qa.normalise(QUESTION), "id")))
    out = asyncio.run(ExtractiveGenerator(settings, qa, reader=FakeListReader(second)).generate(req))
    verified = asyncio.run(verify(out, {chunk.chunk_id: chunk}, {chunk.chunk_id: chunk.text}, {chunk.chunk_id: 0.8},
                                  VerbatimJudge(), JudgeSettings(backend="verbatim"), ConfidenceSettings()))
    return json.loads(out.raw)["claims"], [c for c in verified.claims if c.status == "supported"]


def test_items_read_close_are_claimed_together_and_pass_the_gates(qa, profile, chunks):
    raw, (claim,) = _claims(qa, profile, chunks["Pasal 40"], second=0.6, close_items=0.3)
    assert [x.path for x in claim.citations] == ["PP 34/2021 › Pasal 40", "PP 34/2021 › Pasal 40 › huruf a",
                                                 "PP 34/2021 › Pasal 40 › huruf b"]
    assert all(x.ok for x in claim.citations) and claim.verdict.label == "entailed"
    assert "huruf c" not in " ".join(x.path for x in claim.citations)  # read at 0.05: not close to 0.9
    assert all(len(c["citations"]) <= MAX_CITATIONS for c in raw)


def test_an_item_read_far_ahead_is_claimed_alone_and_the_share_can_be_turned_off(qa, profile, chunks):
    _, (alone,) = _claims(qa, profile, chunks["Pasal 40"], second=0.2, close_items=0.3)  # 0.2 < 0.3 x 0.9
    assert [x.path for x in alone.citations] == ["PP 34/2021 › Pasal 40", "PP 34/2021 › Pasal 40 › huruf a"]
    _, (off,) = _claims(qa, profile, chunks["Pasal 40"], second=0.6, close_items=None)
    assert [x.path for x in off.citations] == ["PP 34/2021 › Pasal 40", "PP 34/2021 › Pasal 40 › huruf a"]


def test_every_item_within_the_share_fits_the_schemas_citation_limit(qa, profile, chunks):
    raw, (claim,) = _claims(qa, profile, chunks["Pasal 40"], second=0.6, close_items=0.05)
    assert len(claim.citations) <= MAX_CITATIONS and all(x.ok for x in claim.citations)
    assert [x.path.rsplit(" › ", 1)[-1] for x in claim.citations] == ["Pasal 40", "huruf a", "huruf b", "huruf c"]
