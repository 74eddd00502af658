"""A refusal says what is missing in words, points at one nearest record per document with why it is near, and
names what the question asks about that no record mentions."""
from __future__ import annotations

from pipeline.decision import (UNMENTIONED, category_words, named_unmentioned, nearest_records, reason_text,
                               unmentioned_text)
from pipeline.types import Candidate, Chunk, Term


def _cand(doc: str, loc: str, text: str, score: float) -> Candidate:
    c = Chunk(chunk_id=f"{doc}:{loc}", doc_id=doc, title=doc, location=loc, text=text, lang="id", unit=f"{doc}#{loc}",
              ordinal=0, start=0, end=len(text), path=doc.upper())
    return Candidate(chunk=c, rerank_score=score)


def test_missing_categories_are_said_in_words_in_the_page_s_language():
    assert reason_text("missing_evidence", "id", ["rate", "deadline"]) == (
        "Bukti yang diperlukan tidak ditemukan: tarif atau persentase, tanggal atau batas waktu.")
    assert category_words("sanction", "en") == "a sanction or fine"
    assert reason_text("document_not_in_corpus", "en", ["PP 34/2011"]).startswith("The corpus does not hold PP 34/2011")


def test_nearest_records_are_one_per_document_unless_asked_with_the_terms_they_state():
    tokens = lambda text: frozenset(text.casefold().split())  # noqa: E731
    terms = [Term("tarif", (("tarif",),), 1.0), Term("sewa", (("sewa",),), 1.0)]
    found = [_cand("a", "Pasal 1", "tarif sewa", 0.9), _cand("a", "Pasal 2", "tarif lain", 0.8),
             _cand("b", "Pasal 4", "denda", 0.7)]
    near = nearest_records(found, 5, terms=terms, tokens=tokens)
    assert [(n.chunk_id, n.why) for n in near] == [("a:Pasal 1", ("tarif", "sewa")), ("b:Pasal 4", ())]
    asked = nearest_records(found, 5, terms=terms, tokens=tokens, asked=frozenset({"a"}))
    assert [n.chunk_id for n in asked] == ["a:Pasal 1", "a:Pasal 2", "b:Pasal 4"]


def test_a_name_no_record_mentions_is_said_and_told_from_a_typo():
    question = "Berapa tarif dividen menurut perjanjian dengan Singapura dan konstituesi?"
    assert named_unmentioned(question, ["Singapura", "konstituesi"]) == ("Singapura",)
    assert unmentioned_text(["Singapura"], "id") == "Tidak ada dokumen dalam koleksi ini yang menyebut «Singapura»."
    typo = "Apa hukuman menurut Peraturan Pemerintah ini bagi yang melanggar Peraturan Pemerinah Nomor 10 Tahun 1983?"
    assert named_unmentioned(typo, ["Pemerinah"]) == ()  # a letter from "Pemerintah": a typo, not a name
    assert UNMENTIONED == "unmentioned"
