"""One language per page (issue 26, part 8), where the words are made: every table of words has both languages with
the same keys, and every refusal kind, standing, date, trace note and replay difference said in one language holds no
word of the other (the served pages: tests/serve/test_one_language.py)."""
from __future__ import annotations

import pytest

from pipeline import decision, replay, reviews, status
from pipeline.rendering import export
from pipeline.rendering.answer_text import LABELS
from pipeline.trace import Decision
from pipeline.types import AsOf, NearestRecord, Standing, StatusEdge
from serve.web import labels as web
from tests.languages import FOREIGN, foreign_words

LANGS = ("id", "en")


def _keys(table: dict, at: str = "") -> set[str]:
    out = set()
    for k, v in table.items():
        out.add(f"{at}{k}")
        if isinstance(v, dict):
            out |= _keys(v, f"{at}{k}.")
    return out


@pytest.mark.parametrize("table", [web.WEB, LABELS, status._WORDS, export.WORDS, replay._DIFF_WORDS],
                         ids=["page", "answer", "standing", "export", "replay"])
def test_every_table_of_words_has_both_languages_with_the_same_keys(table) -> None:
    assert _keys(table["id"]) == _keys(table["en"])


@pytest.mark.parametrize("table", [decision._REASONS, decision.CATEGORY_WORDS, reviews.REJECT_REASONS],
                         ids=["reasons", "categories", "review reasons"])
def test_every_code_is_said_in_both_languages(table) -> None:
    assert all(set(words) == set(LANGS) for words in table.values())


def test_the_check_knows_words_of_both_languages() -> None:
    # the check below can fail: it knows the other language's words
    assert {"tidak", "ditemukan", "sumber"} <= FOREIGN["en"] and {"the", "found", "record"} <= FOREIGN["id"]
    assert foreign_words("Tidak ada klaim yang didukung", "en") and foreign_words("No record found", "id")


@pytest.mark.parametrize("lang", LANGS)
def test_every_refusal_kind_is_said_in_one_language(lang) -> None:
    said = [decision.reason_text(code, lang, ["rate", "deadline"] if code not in (decision.DOCUMENT_NOT_IN_CORPUS,
                                                                                    decision.SEVERAL_SUBJECTS)
                                 else ["PMK 999/2030"]) for code in decision._REASONS]
    near = [NearestRecord(chunk_id="c", document="PMI 7/2025", location="Pasal 3", text="…", score=0.5,
                          path="PMI 7/2025 › Pasal 3")]
    said += [decision.unmentioned_text(["Singapura"], lang), decision.nearest_text(near, lang)]
    said += [decision.category_words(code, lang) for code in decision.CATEGORY_WORDS]
    for text in said:
        assert not foreign_words(text, lang), (lang, text)


@pytest.mark.parametrize("lang", LANGS)
def test_standings_dates_notes_and_replay_differences_are_said_in_one_language(lang) -> None:
    edge = StatusEdge(kind="revokes", source_doc="b", source_chunk="b:9", source_path="PMI 7/2025 › Pasal 9",
                      quote="…", target_label="PMI 3/2022", target_doc="a", target_pasal=None, date="2025-04-01",
                      issued="2025-03-01")
    said = [status.standing_words(Standing(state, "2026-12-05", "2022-06-01", "2025-04-01", edge), lang, brief)
            for state in ("in_force", "not_yet", "ended", "unknown") for brief in (False, True)]
    said += [status.as_of_words(AsOf("2024-12-31", source, "pada tahun 2024"), lang)
             for source in ("request", "question", "profile", "today")]
    said = [s.replace("«pada tahun 2024»", "") for s in said]  # the question's own words, quoted
    said += [web.note_words(note, lang) for note in (
        "per-source cap (8) for pmi-7-2025", "near-duplicate of x:1", "outside the document(s) the question names",
        "keywords and glossary expansions, wider retrieval", "claim appears verbatim in the cited paragraph",
        "not verbatim; the lite judge has no model to decide", "document not in the corpus: PMK 1/2020")]
    recorded = Decision("answer", None, ((0, "a", "supported", "TINGGI", ()),))
    replayed = Decision("refusal", "no_supported_claims", ())
    said += replay.ReplayReport(recorded, replayed, None).differences(lang)  # type: ignore[arg-type]
    for text in said:
        assert not foreign_words(text.replace("no_supported_claims", ""), lang), (lang, text)
    assert web.note_words("per-source cap (8) for pmi-7-2025", "id") == "batas per sumber (8) untuk pmi-7-2025"
    assert web.note_words("something new", "id") == "something new"  # a note no pattern knows: as it is
