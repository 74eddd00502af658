"""A chat's follow-up made standalone (pipeline/followup.py): by rules, and by a generator that can, checked."""
from __future__ import annotations

import asyncio

import pytest

from pipeline.followup import is_followup, standalone

RENT = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
LATE = "What is the penalty for filing the SPT Masa late?"


@pytest.mark.parametrize("previous, followup, expected", [
    (RENT, "dan kalau untuk tahun 2024?", "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan untuk "
                                          "tahun 2024?"),
    ("Berapa tarif PPh persewaan pada tahun 2023?", "dan kalau untuk tahun 2024?",
     "Berapa tarif PPh persewaan untuk tahun 2024?"),  # the date asked about replaced, not added
    (LATE, "what about for Singapore?", "What is the penalty for filing the SPT Masa late for Singapore?"),
    ("What is the rate in 2023?", "and in 2025?", "What is the rate in 2025?"),
    (RENT, "bagaimana dengan PPN?", "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan PPN?"),
])
def test_a_followup_is_put_into_the_question_it_leans_on(previous, followup, expected):
    got = asyncio.run(standalone([previous, followup], "id"))
    assert (got.question, got.rewritten, got.by, got.follows) == (expected, True, "rules", previous)


@pytest.mark.parametrize("text", ["Berapa lama masa kerja?", "And what is the rate?", "Pada tanggal berapa SPT "
                                  "disampaikan?", "Di mana letak kantor pajak?", "Apa itu pekerja?"])
def test_a_question_of_its_own_is_asked_as_written(text):
    assert not is_followup(text)
    got = asyncio.run(standalone([RENT, text], "id"))
    assert (got.question, got.rewritten) == (text, False)


def test_a_followup_of_a_followup_leans_on_what_the_previous_one_became():
    got = asyncio.run(standalone(["What is the rate in 2023?", "and in 2024?", "and in 2025?"], "en"))
    assert got.question == "What is the rate in 2025?" and got.follows == "What is the rate in 2024?"


class FakeRewriter:
    """A test double of a generator whose model writes the standalone question."""

    name = "fake-llm"

    def __init__(self, text):
        self.text = text

    async def rewrite_followup(self, previous: str, followup: str, lang: str) -> str | None:
        return self.text


def test_a_generators_rewrite_is_used_when_it_keeps_what_was_asked_and_the_rules_otherwise():
    good = FakeRewriter("Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan pada tahun 2024?")
    got = asyncio.run(standalone([RENT, "dan kalau untuk tahun 2024?"], "id", good))
    assert (got.question, got.by) == (good.text, "fake-llm")
    drifted = FakeRewriter("Berapa tarif bea masuk mobil listrik?")  # drops what both turns asked
    got = asyncio.run(standalone([RENT, "dan kalau untuk tahun 2024?"], "id", drifted))
    assert got.by == "rules" and "2024" in got.question and "persewaan" in got.question
