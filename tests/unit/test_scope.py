"""A question's scope: which named documents it asks within, and what of the question only names them."""
from __future__ import annotations

import asyncio

import pytest

from pipeline.references import documents_named
from pipeline.scope import asked_within, question_scope
from pipeline.types import Document

pytestmark = pytest.mark.unit


def _doc(doc_id: str, number: str, year: int) -> Document:
    return Document(doc_id=doc_id, title="T", original="/x", lang="id", content_hash=doc_id,
                    doc_type="Peraturan Menteri Keuangan", number=number, year=year, cite_as=f"PMK {number}/{year}")


class _FakeDocuments:
    """A test double of the corpus side of scope: only the documents it holds."""

    def __init__(self, *docs: Document):
        self.docs = list(docs)

    async def documents(self):
        return self.docs


HELD = _FakeDocuments(_doc("pmk-099-2025", "99", 2025), _doc("pmk-007-2025", "7", 2025),
                      _doc("pmk-003-2022", "3", 2022))


def scope(question: str, lang: str = "id"):
    return asyncio.run(question_scope(question, lang, HELD))


def within(question: str, lang: str = "id") -> list[bool]:
    return asked_within(question, documents_named(question, lang))


@pytest.mark.parametrize("question, lang", [
    ("Kapan PMK 99/2025 mulai berlaku?", "id"),
    ("When does PMK 99/2025 take effect?", "en"),
    ("When does PMK 99/2025 come into force?", "en"),
    ("Sejak kapan PMK 99/2025 berlaku?", "id"),
    ("Menurut PMK 99/2025, berapa lama jangka waktunya?", "id"),
    ("Apa yang dimaksud dengan Bencana Alam dalam PMK 99/2025?", "id"),
    ("What does hibah mean in PMK 99/2025?", "en"),
])
def test_a_question_about_when_the_document_takes_effect_or_asked_inside_it_is_scoped_to_it(question, lang):
    s = scope(question, lang)
    assert s.restrict == ("pmk-099-2025",) and s.named == (("PMK 99/2025", "pmk-099-2025"),)
    assert "99/2025" not in s.without_names(question)  # the name scopes the search; it is not content to cover


@pytest.mark.parametrize("question, lang", [
    ("Kapan PMK 3/2022 dicabut?", "id"),                     # the revoking document answers
    ("Apakah PMK 3/2022 masih berlaku?", "id"),
    ("Which rule in PMK 3/2022 was replaced?", "en"),        # "in" does not scope a question about a relation
    ("Is PMK 3/2022 still in force?", "en"),
    ("Apa yang terjadi pada PMK 3/2022 pada saat Peraturan Menteri ini mulai berlaku?", "id"),
    ("Berapa tarif pajak sewa tanah, dan apa kaitannya dengan PMK 3/2022?", "id"),  # mentioned only
    # the date it was made is in its signature block: cut down to "Kapan diundangkan?", the question was read into
    # "… mulai berlaku setelah 10 hari terhitung sejak tanggal diundangkan"
    ("Kapan PMK 3/2022 diundangkan?", "id"),
    ("When was PMK 3/2022 enacted?", "en"),
])
def test_a_question_about_a_relation_between_documents_or_a_mere_mention_is_not_restricted(question, lang):
    s = scope(question, lang)
    assert s.restrict is None and s.named == (("PMK 3/2022", "pmk-003-2022"),)
    assert s.without_names(question) == question


def test_an_explicit_according_to_scopes_even_a_question_about_revocation():
    s = scope("Menurut PMK 7/2025, peraturan apa yang dicabut?")
    assert s.restrict == ("pmk-007-2025",)


def test_documents_named_together_after_a_scope_word_are_all_scoped():
    assert within("Berapa tarif dalam PMK 3/2022 dan PMK 7/2025?") == [True, True]
    assert within("Menurut PMK 7/2025, apakah tarifnya sama dengan PMK 3/2022?") == [True, False]


def test_the_title_given_with_a_name_is_left_out_of_what_an_answer_must_cover():
    question = ("When does PMK 99/2025 on customs duty and excise exemption for imported gifts and grants "
                "take effect?")
    assert scope(question, "en").without_names(question) == "When does take effect?"
    question = "Apa yang dimaksud dengan hibah menurut PMK 99/2025 tentang pembebasan bea masuk, dan siapa penerimanya?"
    assert scope(question).without_names(question) == "Apa yang dimaksud dengan hibah menurut , dan siapa penerimanya?"


def test_a_question_about_when_a_document_the_corpus_lacks_takes_effect_has_nothing_to_answer_from():
    s = scope("Kapan Peraturan Menteri Keuangan Nomor 124 Tahun 2024 tentang Organisasi dan Tata Kerja "
              "Kementerian Keuangan mulai berlaku?")
    assert s.named == (("PMK 124/2024", None),) and s.restrict == ()


def _regional(doc_id: str, doc_type: str, issuer: str) -> Document:
    return Document(doc_id=doc_id, title="T", original="/x", lang="id", content_hash=doc_id, doc_type=doc_type,
                    issuer=issuer)


PLACES = _FakeDocuments(_regional("kotabaru-a", "Peraturan Bupati", "Bupati Kotabaru"),
                        _regional("kotabaru-b", "Peraturan Bupati", "Bupati Kotabaru"),
                        _regional("tapin", "Peraturan Bupati", "Bupati Tapin"),
                        _regional("bone", "Peraturan Daerah", "Pemerintah Kabupaten Bone Bolango"),
                        _regional("batu", "Peraturan Walikota", "Walikota Batu"),
                        _doc("pmk-099-2025", "99", 2025))


@pytest.mark.parametrize("question, lang, place, said", [
    ("Kapan THR bagi PNS di Kabupaten Kotabaru dibayarkan?", "id", "Kotabaru", "Kabupaten Kotabaru"),
    ("When is the thirteenth salary paid in Kotabaru Regency?", "en", "Kotabaru", "Kotabaru Regency"),
    ("berapa aset pemerintah kabupaten bone bolango?", "id", "Bone Bolango", "pemerintah kabupaten bone bolango"),
    ("Berapa harga beras di Kota Batu?", "id", "Batu", "Kota Batu"),
])
def test_a_question_naming_the_place_of_regional_instruments_is_not_answered_from_another_places(
        question, lang, place, said):
    s = asyncio.run(question_scope(question, lang, PLACES))
    assert s.places == (place,) and s.strip == (said,)
    others = {"kotabaru-a", "kotabaru-b", "tapin", "bone", "batu"} - {
        "Kotabaru": {"kotabaru-a", "kotabaru-b"}, "Bone Bolango": {"bone"}, "Batu": {"batu"}}[place]
    assert "pmk-099-2025" in s.restrict and not others & set(s.restrict)  # national ones may still answer
    assert said not in s.without_names(question)


def test_a_common_word_that_is_also_a_place_names_no_place_unless_written_as_one():
    for question in ("Apakah batu bara dikenai bea keluar?", "What is the bone density rule?",
                     "Berapa tarif pajak penghasilan atas sewa tanah?"):
        s = asyncio.run(question_scope(question, "id", PLACES))
        assert s.places == () and s.restrict is None and s.strip == ()


def test_when_a_document_the_corpus_lacks_was_made_has_nothing_to_answer_from_and_one_it_holds_is_unscoped():
    s = scope("Kapan Peraturan Menteri Keuangan Nomor 124 Tahun 2024 tentang Organisasi dan Tata Kerja "
              "Kementerian Keuangan ditetapkan?")
    assert s.named == (("PMK 124/2024", None),) and s.restrict == ()
    s = scope("Kapan PMK 99/2025 diundangkan?")
    assert s.named == (("PMK 99/2025", "pmk-099-2025"),) and s.restrict is None


def _titled(doc_id: str, title: str, doc_type: str = "Peraturan Menteri Keuangan", issuer: str = "Menteri Keuangan"):
    return Document(doc_id=doc_id, title=title, original="/x", lang="id", content_hash=doc_id, doc_type=doc_type,
                    issuer=issuer)


TITLED = _FakeDocuments(
    _titled("mateng", "SISTEM DAN PROSEDUR AKUNTANSI PEMERINTAH DAERAH", "Peraturan Bupati", "Bupati Mamuju Tengah"),
    _titled("magelang", "PERUBAHAN ANGGARAN PENDAPATAN DAN BELANJA DAERAH KABUPATEN MAGELANG", "Peraturan Daerah",
            "Pemerintah Kabupaten Magelang"),
    _titled("pmk-099-2025", "PEMBERIAN PEMBEBASAN BEA MASUK DAN CUKAI ATAS IMPOR BARANG KIRIMAN HADIAH/HIBAH"),
    _titled("pmk-105-2025", "PAJAK PENGHASILAN PASAL 21 ATAS PENGHASILAN TERTENTU YANG DITANGGUNG PEMERINTAH"))


@pytest.fixture(scope="module")
def analyzer():
    from pipeline.analysis import query_analyzer
    from pipeline.config import load_profile
    return query_analyzer(load_profile("lite"))


@pytest.mark.parametrize("question, lang, doc_id, phrase", [
    ("What does Basis Kas mean in the Mamuju Tengah regional government accounting regulation?", "en", "mateng",
     "the Mamuju Tengah regional government accounting regulation"),
    ("How long is the exemption under the regulation on imported gifts and grants?", "en", "pmk-099-2025",
     "the regulation on imported gifts and grants"),
    ("Menurut peraturan tentang pajak penghasilan yang ditanggung pemerintah, berapa lama insentif diberikan?", "id",
     "pmk-105-2025", "peraturan tentang pajak penghasilan yang ditanggung pemerintah"),
    ("Berapa lama kendaraan harus dipakai menurut PMK tentang pembebasan bea masuk barang kiriman hadiah?", "id",
     "pmk-099-2025", "PMK tentang pembebasan bea masuk barang kiriman hadiah"),
])
def test_a_document_named_by_what_it_is_about_is_asked_within(analyzer, question, lang, doc_id, phrase):
    s = asyncio.run(question_scope(question, lang, TITLED, analyzer))
    assert s.restrict == (doc_id,) and s.strip == (phrase,)
    assert phrase not in s.without_names(question)


@pytest.mark.parametrize("question", [
    "What is the rate in the regulation?",                       # says nothing of what it is about
    "What is the rate under the tax regulation?",                # one term: too little to tell documents apart
    "Which duty applies under the regulation on coal exports and mining royalties?",  # no title states it
])
def test_a_description_no_document_answers_to_scopes_nothing(analyzer, question):
    s = asyncio.run(question_scope(question, "en", TITLED, analyzer))
    assert s.restrict is None and s.strip == ()
