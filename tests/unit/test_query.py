"""Decomposition: a multi-part question becomes parts that must each find support."""
from __future__ import annotations

import pytest

from pipeline.query import Part, decompose

pytestmark = pytest.mark.unit


def test_indonesian_conjoined_question_splits_and_carries_topic():
    parts = decompose("Berapa tarif PPh sewa dan kapan harus disetor?")
    assert len(parts) == 2
    assert parts[0].text == "Berapa tarif PPh sewa"
    assert parts[0].topic == ""
    assert parts[1].text == "kapan harus disetor?"
    assert parts[1].topic
    assert "PPh" in parts[1].topic and "sewa" in parts[1].topic
    assert "Berapa" not in parts[1].topic  # the question word is not the topic


def test_two_questions_with_question_marks_split():
    parts = decompose("Apa itu PPh final? Berapa tarifnya?")
    assert [p.text for p in parts] == ["Apa itu PPh final?", "Berapa tarifnya?"]
    assert parts[1].topic and "PPh" in parts[1].topic


def test_three_questions_all_carry_the_first_topic():
    parts = decompose("Berapa tarif PPh sewa?  Kapan disetor?\nBagaimana cara melaporkannya?")
    assert [p.text for p in parts] == ["Berapa tarif PPh sewa?", "Kapan disetor?", "Bagaimana cara melaporkannya?"]
    assert parts[1].topic == parts[2].topic and "tarif PPh sewa" in parts[1].topic


@pytest.mark.parametrize(
    "question",
    [
        "Berapa tarif PPh atas sewa tanah?",
        "Berapa tarif PPh sewa tanah dan bangunan?",   # "dan" joining nouns is not a second question
        "What are the rules for income and expense?",
        "pajak dan denda",
    ],
)
def test_single_question_stays_one_part(question):
    assert decompose(question) == [Part(question)]


def test_surrounding_whitespace_is_stripped_for_single_part():
    assert decompose("  Berapa tarif PPh?  ") == [Part("Berapa tarif PPh?")]


def test_english_conjoined_question_splits():
    parts = decompose("What is the rate and when must it be paid?")
    assert len(parts) == 2
    assert parts[0].text == "What is the rate"
    assert parts[1].text == "when must it be paid?"
    assert "rate" in parts[1].topic


def test_comma_before_conjunction_is_not_kept():
    parts = decompose("Siapa yang memotong PPh, dan bagaimana cara melaporkannya?")
    assert [p.text for p in parts] == ["Siapa yang memotong PPh", "bagaimana cara melaporkannya?"]
