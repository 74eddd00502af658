"""Receipts against gold references: the path parser, law names, the scorer on hand-made claims,
the receipt metrics and their curve, and the leave-one-out counts, each checked by hand."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from pipeline.eval import metrics
from pipeline.eval.datasets import Question, Reference
from pipeline.eval.receipts import (Cite, CorpusText, is_reference_only, law_key, law_slug, parse_receipt,
                                    receipt_fields, same_item, same_law, span_hit)
from pipeline.eval.runner import SourceChecker, _receipt, _receipted, score
from pipeline.types import CitationCheck, Confidence, Conflict, Result, VerifiedClaim

pytestmark = pytest.mark.unit


# --------------------------------------------------------------------------- law names and paths


@pytest.mark.parametrize("name", ["PP 34/2021", "PP 34 / 2021", "pp34/2021", " PP  34/2021 ", "PP Nomor 34 Tahun 2021",
                                  "Peraturan Pemerintah Nomor 34 Tahun 2021",
                                  "PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 34 TAHUN 2021"])
def test_law_names_compare_by_kind_number_and_year(name):
    assert law_key(name) == ("PP", "34", "2021")
    assert same_law(name, "PP 34/2021")


def test_other_laws_differ():
    assert law_key("UU 13/2003") == ("UU", "13", "2003")
    assert law_key("PMK 98/2025") == law_key("PMK 98/PMK.03/2025") == ("PMK", "98", "2025")
    assert not same_law("PP 34/2021", "PP 35/2021")
    assert not same_law("PP 34/2021", "PP 34/2020")
    assert not same_law("PP 34/2021", "UU 34/2021")
    assert law_key("idk_mrc p00001") is None and same_law("Buku Panduan", "buku  panduan")
    assert not same_law(None, "PP 34/2021")
    assert law_slug("PP 35 / 2021") == "pp-35-2021"


def test_path_parser_reads_each_level():
    assert parse_receipt("PP 34/2021 › BAB VI PELAPORAN, PEMBINAAN, DAN PENGAWASAN › Pasal 35 › ayat (1) › huruf b") \
        == Cite("PP 34/2021", "35", "1", "b", None)
    assert parse_receipt("PP 94/2021 › BAB I KETENTUAN UMUM › Pasal 1 › angka 10") == Cite("PP 94/2021", "1", angka="10")
    assert parse_receipt("PP 34/2021 › BAB III PENGESAHAN › Pasal 26") == Cite("PP 34/2021", "26")
    assert parse_receipt("PP 34/2021 › BAB III") == Cite("PP 34/2021")
    # a quote across items: the range is kept
    assert parse_receipt("PP 94/2021 › BAB II › Pasal 5 › huruf a–m") == Cite("PP 94/2021", "5", huruf="a–m")
    # an amending article: the amended Pasal, not the amending one's angka
    assert parse_receipt("UU 6/2023 › BAB IV › Pasal I angka 1 › Pasal 14 › ayat (2)") == Cite("UU 6/2023", "14", "2")
    # a heading that mentions "Pasal" among other words is a heading
    assert parse_receipt("PMK 98/2025 › Ketentuan Pasal Peralihan › Pasal 3").pasal == "3"
    # no path: the location and the document stand in
    assert parse_receipt(None, "Pasal 35 ayat (1) huruf b", "PP 34/2021") == Cite("PP 34/2021", "35", "1", "b")
    # a piece of a unit too long for one chunk (ingest/chunker.py) is still that unit
    assert parse_receipt("PP 94/2021 › BAB III › Pasal 10 › ayat (1) (bagian 1/2)") == Cite("PP 94/2021", "10", "1")
    assert parse_receipt(None, "Pasal 1 angka 3 (bagian 2/4)", "PP 35/2021") == Cite("PP 35/2021", "1", angka="3")
    assert parse_receipt(None, "Pasal 5 (part 1/3)", "PP 1/2020") == Cite("PP 1/2020", "5")


def test_items_and_ranges():
    assert same_item("12", "12") and not same_item("12", "1") and not same_item(None, "1")
    assert same_item("a–m", "c") and not same_item("a–m", "n") and same_item("1–5", "3") and not same_item("1–5", "10")
    assert same_item("B", "b")


def test_reference_only_answers():
    for a in ("Pasal 34", "Pasal 32-35", "(PP 34/2021 Pasal 28...Pasal 31)", "Pasal 2 - 6", "(Pasal 36)",
              "Pasal 34 ayat (2)"):
        assert is_reference_only(a), a
    for a in ("Pasal 27\n(1) Setiap TKA wajib memiliki izin tinggal", "rencana penyerapan tenaga kerja", "10%"):
        assert not is_reference_only(a), a


# --------------------------------------------------------------------------- one row, by hand

REF = Reference("PP 34/2021", ("25",), "1", "e")


def claim(paths, quotes, band="SEDANG", confidence=0.7):
    return {"paths": paths, "quotes": quotes, "band": band, "confidence": confidence}


def test_scorer_pasal_hit_through_the_ayat_and_huruf():
    row = receipt_fields(REF, [claim(["PP 34/2021 › BAB III › Pasal 25 › ayat (1) › huruf e"], ["lembaga keagamaan"])],
                         ["lembaga keagamaan"], span_answer=True)
    assert row["top"]["cites"] == [{"law": "PP 34/2021", "pasal": "25", "ayat": "1", "huruf": "e", "angka": None}]
    assert {k: row["top"][k] for k in ("law", "pasal", "ayat", "huruf")} == \
        {"law": True, "pasal": True, "ayat": True, "huruf": True}
    assert row["laws"] == ["PP 34/2021"] and row["span_answer"] and row["span_hit"]
    assert row["reference"] == {"law": "PP 34/2021", "pasal": ["25"], "ayat": "1", "huruf": "e"}


def test_scorer_top_miss_any_hit_and_levels_need_the_ones_above():
    claims = [claim(["PP 35/2021 › BAB II › Pasal 25 › ayat (1) › huruf e"], ["x"]),    # right numbers, wrong law
              claim(["PP 34/2021 › BAB III › Pasal 25 › ayat (2) › huruf e"], ["y"])]   # right Pasal, wrong ayat
    row = receipt_fields(REF, claims, ["lembaga keagamaan"], span_answer=True)
    top = row["top"]
    assert (top["law"], top["pasal"], top["ayat"], top["huruf"]) == (False, False, False, False)
    assert row["any"] == {"law": True, "pasal": True, "ayat": False, "huruf": False}
    assert row["laws"] == ["PP 35/2021", "PP 34/2021"] and not row["span_hit"]


def test_scorer_angka_as_huruf_and_gold_without_ayat():
    ref = Reference("PP 44/2015", ("1",), None, "9")      # Pasal 1 angka 9: a definition
    hit = receipt_fields(ref, [claim(["PP 44/2015 › BAB I › Pasal 1 › angka 9"], ["q"])], ["g"], False)
    assert hit["top"]["pasal"] and hit["top"]["ayat"] is None and hit["top"]["huruf"] is True
    assert hit["any"]["ayat"] is None
    miss = receipt_fields(ref, [claim(["PP 44/2015 › BAB I › Pasal 1 › angka 10"], ["q"])], ["g"], False)
    assert miss["top"]["pasal"] and miss["top"]["huruf"] is False
    letter = receipt_fields(ref, [claim(["PP 44/2015 › BAB I › Pasal 1 › huruf i"], ["q"])], ["g"], False)
    assert letter["top"]["huruf"] is False                 # a digit gold is an angka, never a huruf


def test_scorer_bab_level_pasal_list():
    ref = Reference("PP 94/2021", ("3", "4", "5"), None, None)
    in_bab = receipt_fields(ref, [claim(["PP 94/2021 › BAB II › Pasal 4"], ["q"])], ["g"], False)
    out_bab = receipt_fields(ref, [claim(["PP 94/2021 › BAB III › Pasal 8 › ayat (1)"], ["q"])], ["g"], False)
    assert in_bab["top"]["pasal"] and not out_bab["top"]["pasal"] and out_bab["top"]["law"]
    assert in_bab["top"]["ayat"] is None and in_bab["top"]["huruf"] is None
    # a claim citing two places hits when one of them does
    both = receipt_fields(ref, [claim(["PP 94/2021 › BAB III › Pasal 8", "PP 94/2021 › BAB II › Pasal 5"], ["a", "b"])],
                          ["g"], False)
    assert both["top"]["pasal"]


def test_no_claim_no_top_and_no_hits():
    row = receipt_fields(REF, [], ["lembaga keagamaan"], span_answer=True)
    assert row["top"] is None and row["any"] == {"law": False, "pasal": False, "ayat": False, "huruf": False}
    assert row["span_answer"] and not row["span_hit"] and row["laws"] == []


def test_span_hit_across_a_lead_in_and_an_item_of_one_claim():
    gold = ["Kewajiban membayar DKPTKA tidak berlaku bagi:\ne. lembaga keagamaan, dan"]
    lead, item = "Kewajiban membayar DKPTKA tidak berlaku bagi:", "lembaga keagamaan, dan i. jabatan tertentu."
    assert span_hit([[lead, item]], gold)
    assert not span_hit([[lead], [item]], gold)              # two claims: not one answer
    assert not span_hit([[item, lead]], gold)                # joined in their order only
    assert not span_hit([[lead, "instansi Pemerintah:"]], gold)
    assert span_hit([["sebagai: e. lembaga keagamaan, dan"]], ["e. lembaga keagamaan, dan"])
    assert not span_hit([["Pasal 21 mengatur"]], ["Pasal 21"])   # a reference-only gold is never a span


def test_span_hit_of_a_pasal_whose_ayat_are_quoted_one_quote_each():
    # the gold is a whole Pasal: ayat (1) an enumeration with its letters, ayat (2) a sentence. The claim quotes each
    # ayat without its "(1)"/"(2)" (the label is the citation's), the items keep their letters as the text has them:
    # neither the gold nor its marker-less variant is one string of the joined quotes, but every line is, in order
    gold = ["(1) Perusahaan yang mempekerjakan Pekerja selama Waktu Kerja Lembur berkewajiban:\n"
            "a. membayar Upah Kerja Lembur;\nb. memberi kesempatan untuk istirahat secukupnya.\n"
            "(2) Pemberian makanan dan minuman tidak dapat digantikan dalam bentuk uang."]
    ayat1 = ("Perusahaan yang mempekerjakan Pekerja selama Waktu Kerja Lembur berkewajiban: a. membayar Upah Kerja "
             "Lembur, b. memberi kesempatan untuk istirahat secukupnya.")
    ayat2 = "Pemberian makanan dan minuman tidak dapat digantikan dalam bentuk uang."
    elsewhere = "Dalam hal terjadi Pemutusan Hubungan Kerja, Pengusaha wajib membayar uang pesangon."
    assert not span_hit([[ayat1, ayat2]], [gold[0].replace("\n", " ")])  # one line: only the strings, as before
    assert span_hit([[ayat1, ayat2]], gold)
    assert span_hit([[ayat1, elsewhere, ayat2]], gold)       # another provision quoted between them
    assert not span_hit([[ayat1], [ayat2]], gold)            # two claims: not one answer
    assert not span_hit([[ayat2, ayat1]], gold)              # the lines in the gold's order only
    assert not span_hit([[ayat1]], gold)                     # every line, not most
    assert not span_hit([[ayat1.replace("secukupnya", "sebentar"), ayat2]], gold)  # each line whole


def test_span_hit_of_a_gold_that_opens_with_its_pasal_heading():
    # the gold quotes the Pasal with its heading; the claim quotes its text and cites the Pasal
    gold = ["Pasal 60 Pengawasan ketenagakerjaan dilaksanakan oleh Pengawas Ketenagakerjaan."]
    assert span_hit([["Pengawasan ketenagakerjaan dilaksanakan oleh Pengawas Ketenagakerjaan."]], gold)
    assert span_hit([["Pasal 60\nPengawasan ketenagakerjaan dilaksanakan oleh Pengawas Ketenagakerjaan."]], gold)
    assert not span_hit([["Pengawasan ketenagakerjaan dilaksanakan oleh Menteri."]], gold)
    # the heading and a list marker both go: "Pasal 45 … a. perizinan …" against the item's text
    assert span_hit([["perizinan yang sudah terbit masih berlaku"]], ["Pasal 45 a. perizinan yang sudah terbit masih berlaku"])


def test_corpus_text_decides_span_answers():
    text = CorpusText(["Pasal 25\n(1) Kewajiban membayar DKPTKA tidak berlaku bagi:\na. instansi Pemerintah:\n"
                       "e. lembaga keagamaan, dan\nf. jabatan tertentu.\nPasal 26\nKetentuan lebih lanjut."])
    assert text.holds(["instansi Pemerintah;"])                       # punctuation is not compared
    assert text.holds(["Kewajiban membayar DKPTKA tidak berlaku bagi:\ne. lembaga keagamaan, dan"])  # lead-in + item
    assert not text.holds(["lembaga keagamaan, dan\nKewajiban membayar DKPTKA"])  # out of order
    assert not text.holds(["Pasal 25"]) and not text.holds(["badan internasional"])


# --------------------------------------------------------------------------- the runner's row from a Result


def _claim(path, quote, value, band, ok=True):
    conf = Confidence(judge=1.0, retrieval=1.0, generator=1.0, weights={}, raw=value, cap=None, value=value, band=band)
    cite = CitationCheck(chunk_id="c1", quote=quote, document="d", location="Pasal 1", ok=ok, path=path)
    return VerifiedClaim(text=quote, status="supported", citations=(cite,), confidence=conf)


def test_score_writes_receipt_and_conflicts():
    claims = (_claim("PP 34/2021 › BAB III › Pasal 26", "Ketentuan lebih lanjut diatur.", 0.6, "SEDANG"),
              _claim("PP 34/2021 › BAB III › Pasal 25 › ayat (1) › huruf e", "lembaga keagamaan, dan", 0.9, "TINGGI"),
              _claim("PP 34/2021 › BAB III › Pasal 25 › ayat (1) › huruf f", "jabatan", 0.5, "RENDAH", ok=False))
    conflict = Conflict(kind="figures", detail="10% ≠ 12%", claims=(0, 1), chunk_ids=("a", "b"))
    result = Result("answer", "Apakah lembaga keagamaan wajib membayar DKPTKA?", "id", claims, (), (conflict,))
    q = Question("q1", result.question, ("lembaga keagamaan, dan",), True, reference=REF)
    text = CorpusText(["(1) Kewajiban membayar DKPTKA tidak berlaku bagi: e. lembaga keagamaan, dan"])
    r = score(q, result, SimpleNamespace(parts=[]), 5.0, SourceChecker(), False, None, text)
    rc = r["receipt"]
    assert r["conflicts"] == ["figures"]
    assert rc["top"]["band"] == "SEDANG" and rc["top"]["confidence"] == 0.6 and not rc["top"]["pasal"]
    assert rc["any"]["pasal"] and rc["any"]["huruf"]
    assert rc["span_answer"] and rc["span_hit"]
    # the failed citation is no receipt: the third claim cites nothing
    assert rc["laws"] == ["PP 34/2021"]
    plain = score(Question("q2", "x", ("y",), True), result, SimpleNamespace(parts=[]), 5.0, SourceChecker(), False,
                  None)
    assert "receipt" not in plain and plain["conflicts"] == ["figures"]


# --------------------------------------------------------------------------- metrics over rows


def row(outcome, confidence, band, top, any_, ref=None, laws=("PP 34/2021",), span=(False, False), conflicts=()):
    ref = ref or {"law": "PP 34/2021", "pasal": ["12"], "ayat": "2", "huruf": "h"}
    keys = ("law", "pasal", "ayat", "huruf")
    gold = {"law": True, "pasal": True, "ayat": bool(ref["ayat"]), "huruf": bool(ref["huruf"])}
    top_d = None if top is None else {"band": band, "confidence": confidence, "cites": [],
                                      **{k: (v if gold[k] else None) for k, v in zip(keys, top)}}
    return {"outcome": outcome, "confidence": confidence, "answerable": True, "correct": False,
            "conflicts": list(conflicts),
            "receipt": {"reference": ref, "top": top_d,
                        "any": {k: (v if gold[k] else None) for k, v in zip(keys, any_)},
                        "laws": list(laws), "span_answer": span[0], "span_hit": span[1]}}


NO_AYAT = {"law": "PP 34/2021", "pasal": ["1"], "ayat": None, "huruf": "9"}
ROWS = [
    row("answer", 0.9, "TINGGI", (1, 1, 1, 1), (1, 1, 1, 1), span=(True, True)),
    row("answer", 0.7, "SEDANG", (1, 0, 0, 0), (1, 1, 1, 0), span=(True, False)),
    row("answer", 0.7, "SEDANG", (1, 1, 0, 0), (1, 1, 0, 0), ref=NO_AYAT),
    row("answer", 0.5, "RENDAH", (0, 0, 0, 0), (0, 0, 0, 0), laws=("PP 35/2021",)),
    row("refusal", None, None, None, (0, 0, 0, 0), span=(True, False)),
    {"outcome": "answer", "confidence": 0.95, "answerable": True, "correct": True},   # no reference: not counted
]


def test_receipt_levels_by_hand():
    r = metrics.receipts(ROWS)
    assert (r["questions"], r["answered"], r["answered_rate"]) == (5, 4, 0.8)
    lv = r["levels"]
    assert lv["law"] == {"questions": 5, "answered": 4, "top": {"hits": 3, "precision": 0.75, "recall": 0.6},
                         "any": {"hits": 3, "precision": 0.75, "recall": 0.6}}
    assert lv["pasal"]["top"] == {"hits": 2, "precision": 0.5, "recall": 0.4}
    assert lv["pasal"]["any"] == {"hits": 3, "precision": 0.75, "recall": 0.6}
    # ayat: the gold of row 3 has none, so 4 referenced, 3 answered
    assert (lv["ayat"]["questions"], lv["ayat"]["answered"]) == (4, 3)
    assert lv["ayat"]["top"] == {"hits": 1, "precision": round(1 / 3, 4), "recall": 0.25}
    assert lv["ayat"]["any"]["hits"] == 2
    assert lv["huruf"]["top"] == {"hits": 1, "precision": 0.25, "recall": 0.2}


def test_receipt_bands_span_and_none_without_references():
    r = metrics.receipts(ROWS)
    # beside each band's precision, the confidence its top claims stated: SEDANG said 0.7 and was right half the time
    assert r["pasal_by_band"] == [{"band": "TINGGI", "answered": 1, "pasal_hits": 1, "precision": 1.0,
                                   "mean_confidence": 0.9},
                                  {"band": "SEDANG", "answered": 2, "pasal_hits": 1, "precision": 0.5,
                                   "mean_confidence": 0.7},
                                  {"band": "RENDAH", "answered": 1, "pasal_hits": 0, "precision": 0.0,
                                   "mean_confidence": 0.5}]
    assert r["span"] == {"questions": 3, "answered": 2, "hits": 1, "rate": round(1 / 3, 4), "precision": 0.5}
    assert metrics.receipts([{"outcome": "answer", "confidence": 0.9}]) is None


def test_receipt_curve_by_hand():
    curve = metrics.receipt_curve(ROWS)
    assert [p["threshold"] for p in curve] == [0.9, 0.7, 0.5]          # the 0.7 tie enters together
    assert [p["answered"] for p in curve] == [1, 3, 4]
    assert [p["answered_rate"] for p in curve] == [0.2, 0.6, 0.8]
    assert [p["pasal_hits"] for p in curve] == [1, 2, 2]
    assert [p["pasal_precision"] for p in curve] == [1.0, round(2 / 3, 4), 0.5]
    # the last point is the run as it was
    r = metrics.receipts(ROWS)
    assert curve[-1]["answered_rate"] == r["answered_rate"]
    assert curve[-1]["pasal_precision"] == r["levels"]["pasal"]["top"]["precision"]


def test_leave_out_counts_by_hand():
    gone = {"law": "PP 35/2021", "pasal": ["5"], "ayat": None, "huruf": None}
    rows = [row("answer", 0.6, "SEDANG", (0, 0, 0, 0), (0, 0, 0, 0), ref=gone, laws=("PP 34/2021",)),
            row("answer", 0.6, "SEDANG", (0, 0, 0, 0), (0, 0, 0, 0), ref=gone, laws=("PP 34/2021", "PP 94/2021")),
            row("answer", 0.6, "SEDANG", (0, 0, 0, 0), (0, 0, 0, 0), ref=gone, laws=("PP 44/2015",),
                conflicts=("ambiguous",)),
            row("answer", 0.6, "SEDANG", (1, 0, 0, 0), (1, 0, 0, 0), ref=gone, laws=("PP 35 / 2021",)),
            row("refusal", None, None, None, (0, 0, 0, 0), ref=gone, laws=()),
            row("answer", 0.6, "SEDANG", (1, 1, 1, 1), (1, 1, 1, 1))]      # another law's question: not asked
    lo = metrics.leave_out(rows, "PP 35/2021")
    assert lo["questions"] == 5 and lo["answered"] == 4 and lo["refusals"] == 1 and lo["refusal_rate"] == 0.2
    assert lo["answered_from_another"] == 2 and lo["answered_from_another_rate"] == 0.4
    assert lo["answered_ambiguous"] == 1 and lo["answered_citing_removed"] == 1
    assert lo["laws_cited"] == {"PP 34/2021": 2, "PP 94/2021": 1}


def test_terminal_summary_and_json_view():
    from pipeline.eval.report import JSON_KEYS, json_view, leave_out_text, receipts_text

    r = metrics.receipts(ROWS)
    text = "\n".join(receipts_text(r))
    assert "5 questions with a gold reference, 4 answered (80.0%)" in text
    assert "law 75.0% (75.0%), Pasal 50.0% (75.0%), ayat 33.3% (66.7%) of 3, huruf/angka 25.0% (25.0%) of 4" in text
    assert "TINGGI 100.0% of 1 (stated 0.90), SEDANG 50.0% of 2 (stated 0.70), RENDAH 0.0% of 1 (stated 0.50)" in text
    assert "span answers 3 (gold text in the corpus): 1 answered with it in a quote (33.3%; 50.0% of 2 answered)" in text
    assert receipts_text(None) == [] and leave_out_text(None) == []
    lo = {**metrics.leave_out(ROWS, "PP 34/2021"), "removed_documents": [{"doc_id": "pp-34-2021"}],
          "dataset_questions": 9}
    text = "\n".join(leave_out_text(lo))
    assert "PP 34/2021 removed (pp-34-2021); 5 questions about it asked (of 9)" in text
    assert "answered 4 (80.0%)" in text and "refused 1 (20.0%)" in text and "citing the removed law 3" in text
    view = json_view({k: None for k in JSON_KEYS} | {"receipts": r, "tradeoff": []})
    assert "receipts" in view and "leave_out" in view and "tradeoff" not in view
    assert "curve" not in view["receipts"] and view["receipts"]["levels"] == r["levels"]


def test_an_ayat_quoted_beside_a_claim_holds_the_span_but_is_not_its_receipt():
    """galqa-0735's shape: the claim states ayat (2) (the wrong one); ayat (1), the gold, is quoted beside it because
    ayat (2) names its subject by pointing at it (generator.bound_ayat). The span is on the screen; the receipt is
    ayat (2)'s, so the ayat level is missed. A provision the claim refers to still counts, as before."""
    stated = ("Dalam hal PNS tidak bersedia menandatangani berita acara sebagaimana dimaksud pada ayat (1), berita "
              "acara tetap sah.")
    gold = "Berita acara harus ditandatangani oleh pejabat yang memeriksa."
    cites = (CitationCheck("p28", stated, "PP 94/2021", "Pasal 28 ayat (2)", True,
                           path="PP 94/2021 › Pasal 28 › ayat (2)"),
             CitationCheck("p28", gold, "PP 94/2021", "Pasal 28 ayat (1)", True, path="PP 94/2021 › Pasal 28 › ayat (1)"),
             CitationCheck("p27", "Pemeriksaan dilakukan secara tertutup.", "PP 94/2021", "Pasal 27 ayat (2)", True,
                           path="PP 94/2021 › Pasal 27 › ayat (2)"))
    conf = Confidence(judge=1.0, retrieval=1.0, generator=1.0, weights={}, raw=1.0, cap=None, value=0.9, band="TINGGI")
    claim = VerifiedClaim(text=stated, status="supported", citations=cites, confidence=conf)
    assert [x.path for x in _receipted(claim)] == ["PP 94/2021 › Pasal 28 › ayat (2)", "PP 94/2021 › Pasal 27 › ayat (2)"]
    q = Question(qid="q", question="Siapa yang menandatangani berita acara?", golds=(gold,), answerable=True,
                 reference=Reference("PP 94/2021", ("28",), "1"))
    receipt = _receipt(q, [claim], CorpusText([gold]))
    assert receipt["top"]["pasal"] is True and receipt["top"]["ayat"] is False
    assert receipt["span_hit"] is True
