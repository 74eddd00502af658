"""The direct answer line says only what supported claims' quotes say: the figure asked for as a quote writes it,
the band, the date, and for a rule not in force then, the provision that ended it."""
from __future__ import annotations

from dataclasses import replace

from pipeline.direct_answer import direct_answer, value_of
from pipeline.types import CitationCheck, Confidence, Standing, StatusEdge, VerifiedClaim

EDGE = StatusEdge("revokes", "new", "c9", "PMI 7/2025 › Pasal 9 › ayat (1)", "… dicabut …", "PMI 3/2022", "old", None,
                  "2025-04-01", "2025-03-01")


def _claim(text: str, band: str = "TINGGI", standing: Standing | None = None, status: str = "supported",
           part: int = 0) -> VerifiedClaim:
    conf = Confidence(1.0, 0.9, 0.9, {"judge": 0.45, "retrieval": 0.35, "generator": 0.2}, 0.95, None, 0.9, band)
    cite = CitationCheck("c", text, "d", "Pasal 3 ayat (1)", True)
    return VerifiedClaim(text, status, (cite,), confidence=conf if status == "supported" else None,
                         standing=standing, part=part)


NOW = _claim("Besarnya Pajak Penghasilan adalah 10% (sepuluh persen) dari jumlah bruto.",
             standing=Standing("in_force", "2026-01-01", "2025-04-01"))
OLD = _claim("Besarnya Pajak Penghasilan adalah 15% (lima belas persen) dari jumlah bruto.", "SEDANG",
             Standing("ended", "2026-01-01", "2022-07-01", "2025-04-01", EDGE))


def test_the_figure_asked_for_as_the_quote_writes_it_else_the_claim_itself():
    assert value_of(NOW, ["rate"]) == "10%"
    both = _claim("Tarif 10% untuk badan dan 15% untuk orang pribadi.")
    assert value_of(both, ["rate"]) == both.text  # two rates: the claim says which is which, the line cannot
    assert value_of(NOW, ["definition"]) == NOW.text


def test_the_line_leads_with_the_rule_in_force_and_names_what_ended_the_other():
    line = direct_answer([NOW, OLD, _claim("x", status="unsupported")], {0: ["rate"]}, "id", "2026-01-01")
    assert line.text == ("10% [1] — TINGGI, per 2026-01-01. Tidak berlaku per 2026-01-01: 15% [2] — dicabut mulai "
                         "2025-04-01 oleh PMI 7/2025 › Pasal 9 › ayat (1).")
    assert line.claims == (0, 1) and line.band == "TINGGI"
    english = direct_answer([NOW, OLD], {0: ["rate"]}, "en", "2026-01-01")
    assert english.text.startswith("10% [1] — HIGH, as of 2026-01-01. Not in force on 2026-01-01: 15% [2] — revoked")


def test_nothing_supported_is_no_line():
    assert direct_answer([_claim("x", status="unsupported")], {0: ["rate"]}, "id", "2026-01-01") is None


def test_a_rule_whose_standing_is_unknown_is_not_said_to_be_out_of_force():
    """Another claim the collection cannot date is named as unsettled, not as history; history comes after it."""
    doubtful = _claim("Besarnya Pajak Penghasilan adalah 12% (dua belas persen) dari jumlah bruto.", "SEDANG",
                      Standing("unknown", "2026-01-01", "2023-01-01", edge=replace(EDGE, date=None)))
    line = direct_answer([NOW, doubtful, OLD], {0: ["rate"]}, "id", "2026-01-01")
    assert line.text == ("10% [1] — TINGGI, per 2026-01-01. Belum pasti berlaku per 2026-01-01: 12% [2] — status tidak "
                         "diketahui: dicabut oleh PMI 7/2025 › Pasal 9 › ayat (1), tanggal berlakunya tidak diketahui. "
                         "Tidak berlaku per 2026-01-01: 15% [3] — dicabut mulai 2025-04-01 oleh PMI 7/2025 › Pasal 9 › "
                         "ayat (1).")
    assert line.claims == (0, 1, 2)
    english = direct_answer([NOW, doubtful], {0: ["rate"]}, "en", "2026-01-01")
    assert ". Standing not settled on 2026-01-01: 12% [2] — standing unknown: revoked by" in english.text
