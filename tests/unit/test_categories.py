"""Evidence categories (configs/categories.yaml) and the routes that require them (configs/routes.yaml).

The extractive generator keeps only sentences whose own tags include a category the route
requires, so these patterns decide which sentences may answer: a rate question must not be
answered by a sentence that states only a duration, nor a "how long" question by one that
states only a rate.
"""
from __future__ import annotations

import pytest

from pipeline.categories import CategoryTagger
from pipeline.ingest import Chunker, read_source

from ..conftest import require_regulations

# PMK 98/2025 Pasal 3: a duration, and a pointer to the rate table, but no rate
PMK98_PASAL3 = ("Bea Masuk Tindakan Pengamanan sebagaimana dimaksud dalam Pasal 2 dikenakan selama 3 (tiga) "
                "tahun dengan besaran tarif Bea Masuk Tindakan Pengamanan sebagaimana tercantum dalam Lampiran "
                "huruf A yang merupakan bagian tidak terpisahkan dari Peraturan Menteri ini.")
# PMK 98/2025 Pasal 2: HS codes ("pos tarif"), no rate
PMK98_PASAL2 = ("Terhadap impor produk kain tenunan dari kapas yang termasuk dalam pos tarif 5208.21.00, "
                "5208.22.00, 5208.31.90, dikenakan Bea Masuk Tindakan Pengamanan.")


@pytest.fixture(scope="module")
def tagger(profile):
    return CategoryTagger(profile.categories)


def has(tagger, text: str, category: str) -> bool:
    return category in tagger.tag(text)


# --------------------------------------------------------------------------- deadline

@pytest.mark.parametrize("text", [
    "Bea masuk dikenakan selama 3 (tiga) tahun.",
    "Keputusan diterbitkan paling lama 30 (tiga puluh) hari setelah permohonan diterima.",
    "Tahun pertama, dengan periode 1 (satu) tahun terhitung sejak tanggal berlakunya Peraturan Menteri ini.",
    "Periode dihitung sejak tanggal berlakunya peraturan.",
    "Pengumuman dilakukan terhitung sejak tanggal surat pemberitahuan.",
    "Permohonan diajukan dalam jangka waktu yang ditentukan.",
    "memenuhi kepemilikan saham paling singkat selama 365 (tiga ratus enam puluh lima) hari kalender",
    "Persetujuan diberikan paling lama 5 (lima) jam kerja setelah penelitian.",
    "Gaji ketiga belas dibayarkan pada bulan Juli.",
    "Insentif diberikan untuk Masa Pajak Januari 2026 sampai dengan Masa Pajak Desember 2026.",
    "The duty is imposed for three years.",
    "The decision is issued within 30 days of the application.",
    "The return must be filed no later than the end of the month.",
    "The decision is issued within thirty (30) days.",
])
def test_durations_and_time_limits_are_deadline_evidence(tagger, text):
    assert has(tagger, text, "deadline")


@pytest.mark.parametrize("text", [
    "tarif 10%",
    "Pajak dikenakan dengan tarif 10% (sepuluh persen) dari jumlah bruto.",
    "Bea masuk sebesar Rp3.300 per meter.",
    "Terhadap barang tersebut dikenakan tarif sebesar 2,5 persen.",
    "Peraturan Pemerintah Nomor 7 Tahun 2021 tentang Kemudahan.",                     # a regulation number
    "(Lembaran Negara Republik Indonesia Tahun 2004 Nomor 125, Tambahan Lembaran Negara Nomor 4437)",
    "Berita Negara Republik Indonesia Tahun 2024 Nomor 1063",                         # a gazette number
])
def test_a_rate_or_a_reference_number_alone_is_not_deadline_evidence(tagger, text):
    assert not has(tagger, text, "deadline")


# --------------------------------------------------------------------------- rate

@pytest.mark.parametrize("text", [
    "Besarnya pajak adalah 10% dari jumlah bruto.",
    "Besarnya pajak adalah 10 % dari jumlah bruto.",
    "Besarnya pajak adalah sepuluh persen dari jumlah bruto.",
    "Pajak dikenakan sebesar 2,5 persen dari nilai impor.",
    "Bobot 1,5% (satu koma lima persen) dari Anggaran Dana Desa.",
    "a. 2Oo/o (dlula puluh persen) unhrk pengelolaan keuangan desa;",                # OCR: the words still state it
    "The tax is withheld at 15 percent of the gross amount.",
    "Bea masuk tindakan pengamanan tahun pertama sebesar Rp3.300 per meter.",
    "Bea masuk tindakan pengamanan sebesar Rp 3.300/meter.",
    "Biaya pengganti Rp0,00 (nol rupiah) untuk setiap keping pita cukai.",
    "atas dividen dikenakan tarif sebesar 20% (dua puluh persen) berdasarkan ketentuan P3B.",
    "dengan tarif cukai yang diperhitungkan Rp 746,- per batang",
    "Atas penghasilan tersebut berlaku tarif pajak sebesar 5 (lima) persen.",
    "Interest accrues at a rate of 2 per month.",
])
def test_a_stated_rate_is_rate_evidence(tagger, text):
    assert has(tagger, text, "rate")


@pytest.mark.parametrize("text", [
    PMK98_PASAL3,                                              # the word "tarif", a duration, no rate
    PMK98_PASAL2,                                              # "pos tarif 5208.21.00" is an HS code
    "Bea masuk dikenakan selama 3 (tiga) tahun.",
    "Keputusan diterbitkan paling lama 30 (tiga puluh) hari setelah permohonan diterima.",
    "kesalahan dalam penerapan tarif dan/atau harga",
    "Alokasi Dasar dihitung berdasarkan persentase tertentu dari anggaran Dana Desa.",
    "Nilai tersebut dinyatakan dalam persen.",
    "The tariff applies to cotton woven fabric.",
    "Pajak dipotong dari jumlah bruto.",
])
def test_a_duration_or_the_bare_word_tarif_is_not_rate_evidence(tagger, text):
    assert not has(tagger, text, "rate")


@pytest.mark.parametrize("text, rate, deadline", [
    (PMK98_PASAL3, False, True),                                               # duration only
    ("Bea masuk tindakan pengamanan dikenakan dengan tarif 10%.", True, False),  # rate only
    ("Bea masuk dikenakan dengan tarif 10% selama 3 (tiga) tahun.", True, True),  # both
    ("Bea masuk sebesar Rp3.300 per meter untuk tahun pertama dengan periode 1 (satu) tahun.", True, True),
])
def test_rate_and_duration_are_told_apart_in_both_directions(tagger, text, rate, deadline):
    assert has(tagger, text, "rate") is rate
    assert has(tagger, text, "deadline") is deadline


# --------------------------------------------------------------------------- definition


@pytest.mark.parametrize("text", [
    "Rencana Penggunaan Tenaga Kerja Asing yang selanjutnya disingkat RPTKA adalah rencana penggunaan TKA.",
    "menjustir ialah mencocokkan atau melakukan perbaikan ringan.",
    # a term said by its members: PP 94/2021 Pasal 8 ayat (2)
    "Jenis Hukuman Disiplin ringan sebagaimana dimaksud pada ayat (1) huruf a terdiri atas:\na. teguran lisan,",
    "The board consists of five members.",
])
def test_a_meaning_or_the_members_of_a_term_are_definition_evidence(tagger, text):
    assert has(tagger, text, "definition")


@pytest.mark.parametrize("text", [
    "Pengesahan RPTKA diberikan oleh Menteri.",
    "Bea masuk dikenakan selama 3 (tiga) tahun.",
])
def test_a_rule_that_states_no_meaning_is_not_definition_evidence(tagger, text):
    assert not has(tagger, text, "definition")


def test_a_meaning_question_may_be_answered_by_a_list_of_what_the_term_consists_of(profile, tagger):
    # "Apa yang dimaksud dengan Jenis Hukuman Disiplin ringan?" routes to `definition`, which keeps only candidates
    # that state one: the list of its members is one, a rule about it is not
    from pipeline.answer_reader import answer_candidates

    from .regulation_chunks import chunks_of, context_item

    route = profile.routes.route("Apa yang dimaksud dengan Jenis Hukuman Disiplin ringan?")
    assert route.required == ("definition",)
    chunk = chunks_of("Pasal 8\n(1) Jenis Hukuman Disiplin ringan terdiri atas:\na. teguran lisan;\nb. teguran "
                      "tertulis.\n(2) Hukuman Disiplin ringan dijatuhkan oleh Pejabat yang Berwenang Menghukum.\n")["Pasal 8"]
    kept = answer_candidates([context_item(chunk)], 30, 700, tagger, route.required, 1200)
    quotes = [c.quotes for c in kept]
    assert any(c.kind == "enumeration" and "teguran tertulis" in c.quotes[-1] for c in kept), quotes
    assert not any("dijatuhkan oleh" in q and "terdiri" not in q for c in kept for q in c.quotes), quotes


# --------------------------------------------------------------------------- routes

@pytest.mark.parametrize("question, route", [
    ("Berapa lama bea masuk tindakan pengamanan atas impor kain tenunan dari kapas dikenakan?", "deadline"),
    ("Berapa lama tarif bea masuk tindakan pengamanan dikenakan?", "deadline"),  # "tarif", but asks how long
    ("How long is the safeguard duty on cotton woven fabric imposed?", "deadline"),
    ("How long does the safeguard tariff apply?", "deadline"),
    ("Kapan tarif baru mulai berlaku?", "deadline"),
    ("Berapa tarif bea masuk tindakan pengamanan atas kain tenunan dari kapas?", "rate"),
    ("Berapa persen Dana BOK Puskesmas disalurkan pada tahap I?", "rate"),
    ("What is the rate of income tax on rent?", "rate"),
    ("Berapa denda dan tarif keterlambatan?", "sanction"),   # sanction is listed before rate
])
def test_route_for_how_long_and_rate_questions(profile, question, route):
    assert profile.routes.route(question).name == route


def test_the_rate_route_requires_rate_and_the_deadline_route_deadline(profile):
    assert profile.routes.route("Berapa tarif PPh?").required == ("rate",)
    assert profile.routes.route("Berapa lama PPh ditanggung?").required == ("deadline",)


# --------------------------------------------------------------------------- real data

def test_pmk_98_2025_chunks_tell_the_duration_from_the_hs_codes(tagger):
    path = require_regulations() / "pmk-098-2025.md"
    src = read_source(path)
    tags = {c.location: tagger.tag(c.text, c.heading, c.location)
            for c in Chunker(1500).chunks(src.document, src.text, source=src)}
    assert "deadline" in tags["Pasal 3"] and "rate" not in tags["Pasal 3"]   # 3 years; the rates are in the Lampiran
    assert "rate" not in tags["Pasal 2"]                                     # pos tarif (HS codes) only
    assert "deadline" in tags["Pasal 9"]                                     # in force 10 days after promulgation
