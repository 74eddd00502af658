"""Text primitives: the contract's normalisation, exact-slice sentences, language, locate."""
from __future__ import annotations

import random

import pytest

from pipeline.text import Sentence, contains_normalised, detect_language, locate, normalise, split_sentences

pytestmark = pytest.mark.unit


# --------------------------------------------------------------------------- normalise


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Pajak   Penghasilan", "Pajak Penghasilan"),
        ("Pajak\nPenghasilan", "Pajak Penghasilan"),
        ("Pajak\r\n\t Penghasilan", "Pajak Penghasilan"),
        ("Pajak\u00a0Penghasilan", "Pajak Penghasilan"),            # NBSP
        ("Pajak\u3000Penghasilan", "Pajak Penghasilan"),            # ideographic space
        ("  \n Pajak Penghasilan \t\n", "Pajak Penghasilan"),       # ends stripped
        ("ＰＰｈ　２１", "PPh 21"),                                    # fullwidth letters, digits, space
        ("tarif ﬁnal", "tarif final"),                              # ligature (NFKC)
        ("10\u00a0%", "10 %"),
    ],
)
def test_normalise_folds_unicode_and_whitespace(raw, expected):
    assert normalise(raw) == expected


def test_normalise_does_not_case_fold_or_touch_punctuation():
    assert normalise("PPh Pasal 21") == "PPh Pasal 21"
    assert normalise("PPh Pasal 21") != normalise("pph pasal 21")
    assert normalise("Rp1.250.000,50;") == "Rp1.250.000,50;"


def test_normalise_is_idempotent():
    s = " Tarif\u00a0\u00a0PPh\n\n ＦＩＮＡＬ  10% "
    assert normalise(normalise(s)) == normalise(s)


# --------------------------------------------------------------------------- contains_normalised

HAYSTACK = "Tarif Pajak Penghasilan atas sewa tanah\nadalah 10%\u00a0(sepuluh persen) dari jumlah bruto."


@pytest.mark.parametrize(
    "needle",
    [
        "Tarif Pajak Penghasilan atas sewa tanah adalah 10%",           # line break in the source
        "tanah adalah 10% (sepuluh persen)",                           # line break + NBSP
        "Tarif  Pajak\nPenghasilan",                                   # whitespace variant in the quote
        "Ｔａｒｉｆ Pajak",                                              # fullwidth in the quote
        "  dari jumlah bruto.  ",                                      # surrounding whitespace
        HAYSTACK,
    ],
)
def test_contains_normalised_accepts_whitespace_and_width_variants(needle):
    assert contains_normalised(HAYSTACK, needle)


@pytest.mark.parametrize(
    "needle",
    [
        "tarif pajak penghasilan",                                     # case change
        "TARIF PAJAK",                                                 # case change
        "Tarif Pajak Penghasilan atas sewa tanah adalah sepuluh persen",  # paraphrase
        "Tarif Pajak Penghasilan atas tanah",                          # dropped word
        "adalah 10 % (sepuluh persen)",                                # inserted space is not whitespace folding
        "adalah 10% (sepuluh persen) dari jumlah neto.",               # changed word
        "",
        "   \n ",
    ],
)
def test_contains_normalised_rejects_anything_but_the_exact_words(needle):
    assert not contains_normalised(HAYSTACK, needle)


# --------------------------------------------------------------------------- split_sentences


def _texts(text: str, **kw) -> list[str]:
    return [s.text for s in split_sentences(text, **kw)]


def _assert_exact_slices(text: str, sentences: list[Sentence]) -> None:
    prev_end = 0
    for s in sentences:
        assert s.text == text[s.start:s.end]
        assert s.start >= prev_end, "sentences overlap or go backwards"
        assert s.text and s.text == s.text.strip(), "sentences are trimmed by offsets"
        prev_end = s.end
    # nothing but whitespace is lost between sentences
    assert "".join(text.split()) == "".join("".join(s.text.split()) for s in sentences)


SAMPLES = [
    "Jumlahnya Rp1.250.000,50 per bulan. Tarif berlaku sejak 2024.",
    "Lihat paragraf 5.5.1 untuk rincian. Selanjutnya berlaku.",
    "Biaya Rp. 100 dikenakan. Lain hal.",
    "Pasal 3\n(1) Wajib Pajak wajib menyetor.\n(2) Penyetoran dilakukan paling lambat tanggal 10.",
    "Ketentuan sebagai berikut:\na. barang impor;\nb. jasa luar negeri.",
    "  \n\nPendapatan diakui. Biaya dicatat! Apakah benar? Ya; tentu.\r\n\r\nParagraf kedua.  \n",
    "The amount is 1,250,000.50 in total. It is due on 10 May 2024.",
    "",
    "   \n\t ",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_split_sentences_returns_exact_slices(text):
    _assert_exact_slices(text, split_sentences(text))


def test_split_sentences_exact_slices_on_random_text():
    rng = random.Random(1234)
    atoms = ["Pajak", "Rp", "Rp.", "1.250.000,50", "5.5.1", "10%", "(1)", "(2)", "a.", "b.", "dll.", "No.",
             "adalah", "wajib", "disetor.", "berlaku!", "kapan?", "ayat", "Pasal", "12.", "B1.", ";", ":",
             "ＰＰｈ", "\u00a0", "Tarif", "huruf", "c."]
    seps = [" ", " ", " ", "\n", "\n\n", "\r\n", "\t", "  "]
    for _ in range(300):
        n = rng.randint(0, 40)
        text = "".join(rng.choice(atoms) + rng.choice(seps) for _ in range(n))
        for min_chars in (1, 20):
            _assert_exact_slices(text, split_sentences(text, min_chars=min_chars))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Jumlahnya Rp1.250.000,50 per bulan. Tarif berlaku sejak 2024.",
         ["Jumlahnya Rp1.250.000,50 per bulan.", "Tarif berlaku sejak 2024."]),
        ("Lihat paragraf 5.5.1 untuk rincian. Selanjutnya berlaku.",
         ["Lihat paragraf 5.5.1 untuk rincian.", "Selanjutnya berlaku."]),
        ("Biaya Rp. 100 dikenakan. Lain hal.",
         ["Biaya Rp. 100 dikenakan.", "Lain hal."]),
        ("Pendapatan diakui. Biaya dicatat! Apakah benar? Ya.",
         ["Pendapatan diakui.", "Biaya dicatat!", "Apakah benar?", "Ya."]),
    ],
)
def test_split_sentences_numbers_and_abbreviations_do_not_end_sentences(text, expected):
    assert _texts(text) == expected


def test_split_sentences_ayat_lines_start_new_sentences():
    text = ("Pasal 3\n(1) Pajak yang dipotong wajib disetor paling lambat tanggal 10 bulan berikutnya\n"
            "(2) Pemotong wajib melaporkan pemotongan dalam SPT Masa\n(3) Ketentuan lebih lanjut diatur.")
    out = _texts(text)
    assert out[-3:] == [
        "(1) Pajak yang dipotong wajib disetor paling lambat tanggal 10 bulan berikutnya",
        "(2) Pemotong wajib melaporkan pemotongan dalam SPT Masa",
        "(3) Ketentuan lebih lanjut diatur.",
    ]


def test_split_sentences_list_items_start_new_sentences():
    text = "Objek pajak meliputi:\na. sewa tanah;\nb. sewa bangunan; dan\nc. jasa konstruksi."
    assert _texts(text) == ["Objek pajak meliputi:", "a. sewa tanah;", "b. sewa bangunan; dan", "c. jasa konstruksi."]


def test_split_sentences_list_items_without_colon_or_punctuation():
    text = "Ketentuan berikut\na. barang impor\nb. jasa luar negeri"
    assert _texts(text) == ["Ketentuan berikut", "a. barang impor", "b. jasa luar negeri"]


def test_split_sentences_blank_line_ends_a_sentence():
    text = "Judul tanpa titik\n\nIsi paragraf pertama."
    assert _texts(text) == ["Judul tanpa titik", "Isi paragraf pertama."]


def test_split_sentences_ayat_after_lettered_reference_starts_new_sentence():
    text = ("(1) Tarif sebagaimana dimaksud pada Pasal 2 huruf a.\n"
            "(2) Penyetoran dilakukan paling lambat tanggal 10.")
    assert _texts(text) == ["(1) Tarif sebagaimana dimaksud pada Pasal 2 huruf a.",
                            "(2) Penyetoran dilakukan paling lambat tanggal 10."]


def test_split_sentences_paragraph_break_after_abbreviation_still_splits():
    text = "Barang, jasa, dll.\n\nParagraf baru dimulai di sini."
    assert _texts(text) == ["Barang, jasa, dll.", "Paragraf baru dimulai di sini."]


def test_split_sentences_min_chars_merges_short_piece_into_next():
    text = "Ok. Ini kalimat lain yang cukup panjang."
    assert _texts(text) == ["Ok.", "Ini kalimat lain yang cukup panjang."]
    merged = split_sentences(text, min_chars=10)
    assert [s.text for s in merged] == [text]
    _assert_exact_slices(text, merged)


def test_split_sentences_min_chars_merges_short_last_piece_into_previous():
    text = "Ini kalimat yang cukup panjang. Ya."
    assert _texts(text, min_chars=10) == [text]
    text2 = "Kalimat pertama cukup panjang. Ok. Kalimat ketiga juga panjang."
    assert _texts(text2, min_chars=10) == ["Kalimat pertama cukup panjang.", "Ok. Kalimat ketiga juga panjang."]


def test_split_sentences_min_chars_every_piece_long_enough_unless_single():
    text = "A. B. C. Sebuah kalimat panjang di sini. D. E. Kalimat panjang lain berikutnya. F."
    out = split_sentences(text, min_chars=15)
    _assert_exact_slices(text, out)
    assert len(out) >= 1
    if len(out) > 1:
        assert all(s.end - s.start >= 15 for s in out)


def test_split_sentences_empty_and_whitespace():
    assert split_sentences("") == []
    assert split_sentences(" \n\t ") == []


# --------------------------------------------------------------------------- detect_language


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("The entity shall recognise revenue when it satisfies a performance obligation.", "en"),
        ("An entity must disclose the amount of revenue that is recognised in the period.", "en"),
        ("Wajib Pajak yang menerima penghasilan dari sewa tanah dan bangunan wajib menyetor pajak.", "id"),
        ("Pendapatan diakui pada saat entitas memenuhi kewajiban pelaksanaan dengan mengalihkan barang.", "id"),
        ("", "id"),                  # undecided -> Indonesian
        ("PPh 21 NPWP 2024", "id"),  # no function words at all -> Indonesian
        # a short English question whose only English words are a modal and question words
        ("Can a private individual, rather than a company, hire a foreign worker?", "en"),
        ("Who appoints regional employees?", "en"),
        ("Siapa yang dimaksud dengan Jeet Kune Do?", "id"),  # "do" is not an English marker
    ],
)
def test_detect_language(text, lang):
    assert detect_language(text) == lang


# --------------------------------------------------------------------------- locate


def test_locate_plain_substring_gives_raw_offsets():
    hay = "Pasal 2\n(1) Tarif adalah 10%."
    assert locate(hay, "Tarif adalah 10%") == (12, 28)
    assert hay[12:28] == "Tarif adalah 10%"


def test_locate_across_line_breaks_returns_raw_offsets():
    hay = "x\r\n  Pajak\r\n\tpenghasilan dipotong"
    span = locate(hay, "Pajak penghasilan")
    assert span is not None
    a, b = span
    assert hay[a:b] == "Pajak\r\n\tpenghasilan"
    assert normalise(hay[a:b]) == "Pajak penghasilan"


def test_locate_across_nbsp_and_fullwidth():
    hay = "Besarnya tarif\u00a010%\u00a0dari jumlah bruto ＰＰｈ 21."
    a, b = locate(hay, "tarif 10% dari")
    assert hay[a:b] == "tarif\u00a010%\u00a0dari"
    a, b = locate(hay, "PPh 21")
    assert hay[a:b] == "ＰＰｈ 21"


def test_locate_quote_with_extra_whitespace():
    hay = "Penyetoran dilakukan paling lambat tanggal 10."
    a, b = locate(hay, "  paling\n lambat  ")
    assert hay[a:b] == "paling lambat"


@pytest.mark.parametrize("needle", ["tidak ada di sini", "pajak penghasilan", "Pajak  Bumi", ""])
def test_locate_absent_returns_none(needle):
    assert locate("Pajak\nPenghasilan atas sewa", needle) is None


def test_locate_agrees_with_contains_normalised_on_random_whitespace():
    rng = random.Random(99)
    words = ["Pajak", "Penghasilan", "atas", "sewa", "tanah", "10%", "Rp1.000", "ＰＰｈ", "wajib"]
    seps = [" ", "\n", "\u00a0", "\r\n", "  \t", "\u3000"]
    for _ in range(200):
        ws = [rng.choice(words) for _ in range(rng.randint(3, 10))]
        hay = "".join(w + rng.choice(seps) for w in ws)
        i = rng.randrange(len(ws))
        j = rng.randrange(i, len(ws))
        needle = " ".join(ws[i:j + 1])
        assert contains_normalised(hay, needle)
        span = locate(hay, needle)
        assert span is not None
        a, b = span
        assert normalise(hay[a:b]) == normalise(needle)


def test_locate_handles_combining_characters_like_the_quote_gate():
    hay = "Biaya kafe\u0301 di sini dikenakan pajak."
    needle = "kafé di sini"
    assert contains_normalised(hay, needle)
    assert locate(hay, needle) is not None
