"""An answer exported for a working paper (pipeline/rendering/export.py) carries exactly what the answer showed: its date, the
direct answer, each claim with its band, standing and receipts, and the trace id with its file's SHA-256."""
from __future__ import annotations

import io

import pytest
from docx import Document as Docx

from pipeline.rendering import export
from pipeline.types import (AsOf, CitationCheck, CitedDocument, Confidence, DirectAnswer, PartOutcome, Result,
                            Standing, StatusEdge, Verdict, VerifiedClaim)

EDGE = StatusEdge("revokes", "pmi-7-2025", "c9", "PMI 7/2025 › Pasal 9 › ayat (1)", "… dicabut …", "PMI 3/2022",
                  "pmi-3-2022", None, "2025-04-01", "2025-03-01")
ENDED = Standing("ended", "2026-01-01", "2022-07-01", "2025-04-01", EDGE)
QUOTE = "Besarnya Pajak Penghasilan adalah 15% (lima belas persen) dari jumlah bruto nilai persewaan."
SHA = "ab" * 32


def _result() -> Result:
    cite = CitationCheck("b5fa17eea978aaaa", QUOTE, "Peraturan Menteri Ilustratif Nomor 3 Tahun 2022",
                         "Pasal 2 ayat (1)", True, doc_id="pmi-3-2022", path="PMI 3/2022 › Pasal 2 › ayat (1)")
    conf = Confidence(1.0, 0.8, 0.55, {"judge": 0.45, "retrieval": 0.35, "generator": 0.2}, 0.84, 0.55, 0.55,
                      "RENDAH", "answerability")
    claim = VerifiedClaim(QUOTE, "supported", (cite,), verdict=Verdict("entailed", 1.0, "verbatim"), confidence=conf,
                          standing=ENDED)
    doc = CitedDocument("pmi-3-2022", "PMI 3/2022", "Peraturan Menteri Ilustratif Nomor 3 Tahun 2022 tentang Sewa",
                        "regulation", "3", 2022, "2022-06-01", "2022-07-01", ENDED)
    return Result("answer", "Berapa tarif?", "id", (claim,), (PartOutcome(0, "Berapa tarif?", "rate", True, 0, None),),
                  trace_id="0" * 31 + "1", as_of=AsOf("2026-01-01", "today"),
                  direct=DirectAnswer("15% [1] — RENDAH (dicabut mulai 2025-04-01 oleh PMI 7/2025 › Pasal 9 › ayat (1))",
                                      "RENDAH", (0,), "2026-01-01"),
                  documents=(doc,))


def test_markdown_carries_the_receipts_the_standing_and_the_trace_to_replay():
    md = export.markdown(_result(), SHA)
    for must in ("Berapa tarif?", "Per tanggal 2026-01-01", "15% \\[1\\] — RENDAH", QUOTE,
                 "PMI 3/2022 › Pasal 2 › ayat (1)", "riwayat: dicabut mulai 2025-04-01 oleh PMI 7/2025",
                 "Peraturan Menteri Ilustratif Nomor 3 Tahun 2022 tentang Sewa · terbit 2022-06-01",
                 "0" * 31 + "1", SHA, "saksi replay " + "0" * 31 + "1"):
        assert must in md, must


def test_docx_reads_back_with_the_same_content():
    parsed = Docx(io.BytesIO(export.docx(_result(), SHA, "en")))
    text = "\n".join(p.text for p in parsed.paragraphs)
    assert "saksi answer" in text and "As of 2026-01-01 (today)" in text
    assert f"“{QUOTE}”" in text and "history: revoked from 2025-04-01" in text and SHA in text


def test_an_unknown_format_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"\.md or \.docx"):
        export.write(_result(), tmp_path / "a.pdf", SHA)
