"""The answer's text view says what was checked: a verbatim match is not called entailment, each confidence term is
explained, and a claim's legal standing is shown with the provision that decides it."""
from __future__ import annotations

from pipeline.rendering.answer_text import render_text
from pipeline.types import (AsOf, CitationCheck, Confidence, PartOutcome, Result, Standing, StatusEdge, Verdict,
                            VerifiedClaim)

EDGE = StatusEdge("revokes", "pmi-7-2025", "c9", "PMI 7/2025 › Pasal 9 › ayat (1)",
                  "Peraturan Menteri Ilustratif Nomor 3 Tahun 2022 … dicabut dan dinyatakan tidak berlaku",
                  "PMI 3/2022", "pmi-3-2022", None, "2025-04-01", "2025-03-01")


def _result(judge: str, standing: Standing | None = None) -> Result:
    cite = CitationCheck("c2", "Tarif adalah 15%.", "PMI 3/2022", "Pasal 2 ayat (1)", True, doc_id="pmi-3-2022",
                         path="PMI 3/2022 › Pasal 2 › ayat (1)")
    conf = Confidence(1.0, 0.8, 0.7, {"judge": 0.45, "retrieval": 0.35, "generator": 0.2}, 0.87, 0.7, 0.7, "SEDANG",
                      "answerability")
    claim = VerifiedClaim("Tarif adalah 15%.", "supported", (cite,), verdict=Verdict("entailed", 1.0, judge),
                          confidence=conf, standing=standing)
    return Result("answer", "Berapa tarif?", "id", (claim,), (PartOutcome(0, "Berapa tarif?", "rate", True, 0, None),),
                  trace_id="t" * 32, as_of=AsOf("2026-01-01", "today"))


def test_a_verbatim_match_is_said_as_such_not_as_entailment():
    for lang, words in (("id", "kutipan cocok kata demi kata"), ("en", "matches the source text word for word")):
        text = render_text(_result("verbatim"), lang)
        assert words in text and "(verbatim)" not in text and "entail" not in text.casefold()
    nli = render_text(_result("mdeberta-xnli"), "en")
    assert "entailed 1.00 (mdeberta-xnli)" in nli


def test_history_is_shown_with_the_revoking_provision_and_the_answer_s_date():
    text = render_text(_result("verbatim", Standing("ended", "2026-01-01", "2022-07-01", "2025-04-01", EDGE)), "id")
    assert "Per tanggal 2026-01-01 (hari ini)" in text
    assert "⚠ riwayat: dicabut mulai 2025-04-01 oleh PMI 7/2025 › Pasal 9 › ayat (1)" in text
    english = render_text(_result("verbatim", Standing("ended", "2026-01-01", "2022-07-01", "2025-04-01", EDGE)), "en")
    assert "history: revoked from 2025-04-01 by PMI 7/2025 › Pasal 9 › ayat (1)" in english
