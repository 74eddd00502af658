"""pipeline/chapters.py: when a question asks about a chapter of a passage as a whole."""
from __future__ import annotations

import pytest

from pipeline import chapters
from pipeline.analysis import QueryAnalyzer, build_analyzers


@pytest.fixture(scope="module")
def qa(profile):
    return QueryAnalyzer(build_analyzers(profile.analysis), profile.glossary, profile.normalisation)


def _match(qa, question, title, document="PENYELENGGARAAN PROGRAM JAMINAN KECELAKAAN KERJA DAN JAMINAN KEMATIAN"):
    terms = qa.term_groups(qa.normalise(question), qa.language(question))
    return chapters.match(question, terms, title, document, qa.all_tokens)


@pytest.mark.parametrize("heading, title", [
    ("BAB II KEPESERTAAN DAN TATA CARA PENDAFTARAN", "kepesertaan dan tata cara pendaftaran"),
    ("BAB III PENGESAHAN RENCANA PENGGUNAAN TENAGA KERJA ASING › Bagian Kesatu Umum",
     "pengesahan rencana penggunaan tenaga kerja asing"),
    ("BAB I KETENTUAN UMUM", None),        # no one asks about the general provisions as a topic
    ("BAB X KETENTUAN PERALIHAN", None),
    ("BAB XI KETENTUAN PENUTUP", None),
    ("BAB I", None),                       # a chapter without a title
    ("Pasal 3", None),
    (None, None),
])
def test_chapter_title(heading, title):
    assert chapters.chapter_title(heading) == title


def test_mined_chapter_questions_read_chapters_as_the_generator_does():
    """The reader's mined chapter questions take their chapters from the same module (training and run time agree)."""
    from pipeline.answer_reader.mining import _chapter_title

    for heading in ("BAB II KEPESERTAAN DAN TATA CARA PENDAFTARAN", "BAB I KETENTUAN UMUM", "BAB I", "Pasal 3"):
        assert (_chapter_title(heading) is None) == (chapters.chapter_title(heading) is None)


@pytest.mark.parametrize("question, whole", [
    ("Bagaimana ketentuan terkait Pemutusan Hubungan Kerja?", True),
    ("Apa saja yang diatur mengenai Waktu Kerja dan Waktu Istirahat?", True),
    ("Apa ketentuan dasar yang terkait dengan PKWT?", True),
    ("Jelaskan ketentuan tentang penyelesaian sengketa!", True),
    ("What are the rules on dispute settlement?", True),
    ("How is dispute settlement regulated?", True),
    ("Apakah perusahaan alih daya wajib berbentuk badan hukum?", False),   # yes/no: one provision
    ("Siapa yang berwenang menjatuhkan Hukuman Disiplin?", False),          # who: one provision
    ("Berapa lama waktu istirahat mingguan?", False),
    ("Apa yang dimaksud dengan Perusahaan Alih Daya?", False),              # a definition
])
def test_asks_whole(question, whole):
    assert chapters.asks_whole(question) is whole


def test_a_question_naming_the_chapter_and_its_regulation_matches(qa):
    m = _match(qa, "Bagaimana penyelesaian sengketa dalam penyelenggaraan program JKK dan JKM?", "penyelesaian sengketa")
    assert m.said and m.share >= 0.7  # JKK and JKM are spelt by the document's title


def test_an_abbreviation_says_the_words_it_spells(qa):
    m = _match(qa, "Bagaimana aturan-aturan terkait pengesahan rencana penggunaan TKA?",
               "pengesahan rencana penggunaan tenaga kerja asing",
               "PENGGUNAAN TENAGA KERJA ASING")
    assert m.said and m.share == pytest.approx(1.0)
    # an abbreviation whose letters do not spell the words says nothing of them
    assert not _match(qa, "Bagaimana ketentuan pengesahan rencana penggunaan TKI?",
                      "pengesahan rencana penggunaan tenaga kerja asing", "PENGGUNAAN TENAGA KERJA ASING").said


def test_a_chapter_only_partly_named_or_a_question_asking_more_does_not_match(qa):
    # a title word the question does not say: not this chapter
    assert not _match(qa, "Bagaimana ketentuan tata cara pendaftaran?", "kepesertaan dan tata cara pendaftaran").said
    # the question says the title, and much more that the titles do not state: a provision of the chapter, not all of it
    m = _match(qa, "Bagaimana ketentuan dari uang pesangon Pemutusan Hubungan Kerja karena alasan pengambilalihan "
                   "Perusahaan?", "pemutusan hubungan kerja", "PERJANJIAN KERJA WAKTU TERTENTU, ALIH DAYA, WAKTU KERJA")
    assert m.said and m.share < 0.7


def test_words_that_only_say_the_provisions_on_do_not_count_against_a_chapter(qa):
    bare = _match(qa, "Pemutusan Hubungan Kerja?", "pemutusan hubungan kerja", "KETENAGAKERJAAN")
    framed = _match(qa, "Bagaimana ketentuan-ketentuan dan aturan terkait Pemutusan Hubungan Kerja?",
                    "pemutusan hubungan kerja", "KETENAGAKERJAAN")
    assert framed.share == pytest.approx(bare.share) == pytest.approx(1.0)


def test_an_english_question_names_an_indonesian_chapter_through_the_glossary(qa):
    m = _match(qa, "What are the rules on dispute settlement?", "penyelesaian sengketa")
    assert m.said and m.share == pytest.approx(1.0)
    assert not _match(qa, "What are the rules on complaints?", "penyelesaian sengketa").said


def test_the_share_counts_the_questions_terms_not_the_collections_weights(qa):
    """"PKWT" weighs 2.8 among four regulations and 8.3 in the statute book (the collection's idf): the question
    asks about what a PKWT must contain all the same, not about the PKWT chapter as a whole."""
    from dataclasses import replace

    question = "Apa saja yang perlu dimuat dalam PKWT?"
    terms = qa.term_groups(qa.normalise(question), qa.language(question))
    shares = []
    for pkwt, dimuat in ((2.8, 3.2), (8.3, 3.3)):
        weighed = [replace(t, weight=pkwt if t.term == "pkwt" else dimuat) for t in terms]
        m = chapters.match(question, weighed, "perjanjian kerja waktu tertentu", "PERJANJIAN KERJA WAKTU TERTENTU",
                           qa.all_tokens)
        assert m.said
        shares.append(m.share)
    assert shares[0] == shares[1] == pytest.approx(0.5)
