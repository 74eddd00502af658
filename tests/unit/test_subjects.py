"""One rule written for many subjects (pipeline/subjects.py): which sentences are one template filled for another
subject, and when a question leaves the subject open. The sentences are written here in the form the regional-formation
and budget laws use; the places and figures are fictional."""
from __future__ import annotations

import pytest

from pipeline.subjects import other_subjects, template
from pipeline.types import Candidate, Chunk, DocumentStatus, StatusEdge

pytestmark = pytest.mark.unit

GOVERNOR = ("(6) Gubernur {province} melakukan pembinaan, pengawasan, evaluasi, dan fasilitasi terhadap kinerja Penjabat "
            "Bupati {regency} dalam penyelenggaraan pemerintahan daerah.")
BUDGET = "(3) Pengeluaran Pembangunan untuk belanja modal direncanakan sebesar Rp{amount},00."


def test_a_template_filled_for_another_subject_gives_the_sentences_own_slot_words():
    one = GOVERNOR.format(province="Tanah Rekaan", regency="Sungai Fiktif")
    other = GOVERNOR.format(province="Laut Contoh", regency="Bukit Karangan Utara")
    assert template(one, other).own == {"tanah", "rekaan", "sungai", "fiktif"}
    assert template(one, other).other_fills == ("Laut Contoh", "Bukit Karangan Utara")
    assert template(BUDGET.format(amount="92.683.000.000.000"), BUDGET.format(amount="114.585.600.000.000")).own == {
        "92.683.000.000.000,00"}
    # one name filled otherwise around a word both write ("Sulawesi Tenggara", "Nusa Tenggara Timur") is one fill, and
    # the word both write sets nothing apart
    east = template(one, GOVERNOR.format(province="Laut Rekaan Timur", regency="Sungai Fiktif"))
    assert east.own_fills == ("Tanah Rekaan",) and east.other_fills == ("Laut Rekaan Timur",)
    assert east.own == {"tanah"}
    # an amount spelt out in words is one slot, however many words each spells it in
    spelt = "g. reklasifikasi kewajiban ke ekuitas sebesar Rp{} ({} rupiah);"
    one = spelt.format("331.244.708.907", "tiga ratus tiga puluh satu miliar dua ratus empat puluh empat juta tujuh "
                                          "ratus delapan ribu sembilan ratus tujuh")
    other = spelt.format("1.397.481.091.442", "satu triliun tiga ratus sembilan puluh tujuh miliar empat ratus "
                                              "delapan puluh satu juta sembilan puluh satu ribu empat ratus empat "
                                              "puluh dua")
    assert "331.244.708.907" in template(one, other).own and template(one, other).other_fills == ("1.397.481.091.442",)


def test_another_rule_a_restatement_or_another_part_of_its_pasal_is_not_another_subject():
    one = GOVERNOR.format(province="Tanah Rekaan", regency="Sungai Fiktif")
    # a verb changed: another rule
    assert template(one, one.replace("melakukan pembinaan", "menetapkan pembinaan")) is None
    # the same words throughout (but the ayat label): a restatement, the same rule
    assert template(one, "(2) " + one[4:]) is None
    # the sentences open differently ("Penerimaan" for "Pengeluaran"): no shared word before the slot
    assert template(BUDGET.format(amount="1"), BUDGET.format(amount="1").replace("Pengeluaran", "Penerimaan")) is None
    # sentences that point at other parts of their own Pasal are other rules, whatever their words
    relative = "Bupati {0} sebagaimana dimaksud pada ayat ({1}) menetapkan rencana tata ruang wilayah kabupaten."
    assert template(relative.format("Sungai Fiktif", 1), relative.format("Bukit Karangan", 3)) is None
    # too few shared words to be one template
    assert template("Gubernur Tanah Rekaan berwenang.", "Gubernur Laut Contoh berwenang.") is None


def test_two_laws_template_pointing_at_the_same_parts_of_their_own_pasal_is_one_template():
    """Regional-formation laws write "Personel sebagaimana dimaksud pada ayat (1) dan ayat (2) meliputi … Kabupaten
    Tambrauw" and "… Kabupaten Manokwari Selatan" (UU 14/2013, UU 23/2012): the template's same place, another
    subject (on the mined questions of issue 30 such answers were shown as several regulations, 4 of 5 wrong)."""
    staff = ("(4) Personel sebagaimana dimaksud pada ayat (1) dan ayat (2) meliputi pegawai negeri sipil yang karena "
             "tugas dan kemampuannya diperlukan oleh Kabupaten {0}.")
    found = template(staff.format("Sungai Fiktif"), staff.format("Bukit Karangan Utara"))
    assert found is not None and found.own == {"sungai", "fiktif"} and found.other_fills == ("Bukit Karangan Utara",)
    # the same words pointing at ayat (1) alone are another rule
    assert template(staff.format("Sungai Fiktif"), staff.format("Bukit Karangan").replace(" dan ayat (2)", "")) is None


def _law(doc_id: str, province: str, regency: str) -> Candidate:
    text = "Pasal 7\n" + GOVERNOR.format(province=province, regency=regency)
    return Candidate(Chunk(chunk_id=f"{doc_id}-7", doc_id=doc_id, title=f"PEMBENTUKAN KABUPATEN {regency.upper()} DI "
                           f"PROVINSI {province.upper()}", location="Pasal 7", text=text, lang="id", unit=f"{doc_id}#7",
                           ordinal=7, start=0, end=len(text), path=doc_id.upper()))


def test_other_subjects_are_the_documents_the_question_does_not_set_apart_from_the_answers():
    lead = _law("uu-1", "Tanah Rekaan", "Sungai Fiktif")
    others = [_law("uu-2", "Laut Contoh", "Bukit Karangan"), _law("uu-3", "Laut Contoh", "Lembah Umpama"), lead]
    quote = GOVERNOR.format(province="Tanah Rekaan", regency="Sungai Fiktif")
    title = lead.chunk.title

    def found(question: str, statuses=None) -> list[str]:
        return [o.candidate.chunk.doc_id for o in other_subjects(quote, "uu-1", title, question, others, statuses or {})]
    assert found("Siapa yang membina kinerja Penjabat Bupati?") == ["uu-2", "uu-3"]
    hit = other_subjects(quote, "uu-1", title, "Siapa yang membina kinerja Penjabat Bupati?", others)[0]
    assert hit.fills == ("Laut Contoh", "Bukit Karangan")
    assert hit.candidate.chunk.text[hit.where[0]:hit.where[1]].startswith("(6) Gubernur Laut Contoh")
    # the question names the answer's own regency (a slot word) or its province (a word of its title)
    assert found("Siapa yang membina kinerja Penjabat Bupati Sungai Fiktif?") == []
    assert found("Di provinsi Tanah Rekaan, siapa yang membina kinerja penjabat bupati?") == []
    # a word both share sets nothing apart
    assert found("Siapa gubernur yang membina kinerja Penjabat Bupati di provinsi?") == ["uu-2", "uu-3"]
    # a document that amends the answer's is another version of it, not another subject
    edge = StatusEdge(kind="amends", source_doc="uu-2", source_chunk="uu-2-7", source_path="UU-2 › Pasal 7",
                      quote="diubah", target_label="UU-1", target_doc="uu-1", target_pasal="7", date=None, issued=None)
    assert found("Siapa yang membina kinerja Penjabat Bupati?", {"uu-1": DocumentStatus("uu-1", None, (edge,))}) == [
        "uu-3"]


COORDINATE = ("(5) Gubernur {province} {verbs} pemindahan personel, penyerahan aset, dan dokumen kepada Kabupaten "
              "{regency}.")


def test_a_template_reworded_in_another_law_is_still_another_subjects_but_other_words_alone_are_another_rule():
    """One regional-formation law writes "Gubernur Sulawesi Tenggara mengoordinasikan dan memfasilitasi pemindahan
    personel …" and the next "Gubernur Nusa Tenggara Timur mengkoordinasikan dan memfasilitasi …" (UU 14/2014, UU
    3/2013): the template's same sentence with a spelling changed, for another province and regency."""
    one = COORDINATE.format(province="Tanah Rekaan", verbs="mengoordinasikan dan memfasilitasi", regency="Sungai Fiktif")
    reworded = COORDINATE.format(province="Laut Contoh", verbs="mengkoordinasikan dan memfasilitasi",
                                 regency="Bukit Karangan")
    found = template(one, reworded)
    assert found is not None and found.own == {"tanah", "rekaan", "sungai", "fiktif"}
    assert found.other_fills == ("Laut Contoh", "Bukit Karangan")
    # the same rewording with the same names: another rule of the same subject, not another subject
    assert template(one, one.replace("mengoordinasikan", "mengkoordinasikan")) is None
    # names changed but many other words too: another rule
    rewritten = reworded.replace("mengkoordinasikan dan memfasilitasi pemindahan personel, penyerahan aset",
                                 "menetapkan jadwal serah terima pegawai, barang bergerak")
    assert template(one, rewritten) is None


def test_a_scans_split_word_is_the_same_word_and_a_quote_of_a_list_is_read_against_a_list():
    state = "Pemerintah dalam menangani kekayaan negara yang dipisahkan dan dikelola oleh Badan Usaha Milik Negara."
    # "Badan U saha" is a scan's spacing of "Badan Usaha": the same sentence, a restatement
    assert template(state, state.replace("Usaha", "U saha")) is None
    assets = ("(7) Aset dan dokumen sebagaimana dimaksud pada ayat (1) dan ayat (3) meliputi:\n"
              "a. barang milik/dikuasai yang bergerak dan tidak bergerak dan/atau dimanfaatkan oleh Pemerintah "
              "Kabupaten {0} yang berada dalam wilayah Kabupaten {1};\n"
              "b. utang piutang Kabupaten {0} yang kegunaannya untuk Kabupaten {1} menjadi tanggung jawab Kabupaten "
              "{1}; dan\nc. dokumen dan arsip yang karena sifatnya diperlukan oleh Kabupaten {1}.")

    def law(doc_id: str, parent: str, regency: str) -> Candidate:
        text = "Pasal 14\n" + assets.format(parent, regency)
        return Candidate(Chunk(chunk_id=f"{doc_id}-14", doc_id=doc_id, title=f"PEMBENTUKAN KABUPATEN {regency.upper()}",
                               location="Pasal 14", text=text, lang="id", unit=f"{doc_id}#14", ordinal=14, start=0,
                               end=len(text), path=doc_id.upper()))
    lead, other = law("uu-1", "Sungai Fiktif", "Sungai Fiktif Utara"), law("uu-2", "Bukit Karangan", "Lembah Umpama")
    quote = assets.format("Sungai Fiktif", "Sungai Fiktif Utara")[4:]  # the claim quotes the whole list
    hits = other_subjects(quote, "uu-1", lead.chunk.title, "Sebutkan aset dan dokumen!", [lead, other])
    assert [h.candidate.chunk.doc_id for h in hits] == ["uu-2"]
    where = other.chunk.text[hits[0].where[0]:hits[0].where[1]]
    assert where.startswith("(7) Aset dan dokumen") and where.endswith("Kabupaten Lembah Umpama.")
    # a quote that carries a scan's stray line after its sentence is still read against the other's one sentence
    lead, other = _law("uu-1", "Tanah Rekaan", "Sungai Fiktif"), _law("uu-2", "Laut Contoh", "Bukit Karangan")
    stray = GOVERNOR.format(province="Tanah Rekaan", regency="Sungai Fiktif") + "\nDISTRIBUSI II"
    hits = other_subjects(stray, "uu-1", lead.chunk.title, "Siapa yang membina kinerja Penjabat Bupati?", [other])
    assert [h.candidate.chunk.doc_id for h in hits] == ["uu-2"]



def test_what_fills_a_slot_is_shown_as_written_a_list_of_names_with_its_commas():
    """A refusal names what fills the sentence in each law; a list of regencies is shown as the law writes it, not as
    its capitalised words run together."""
    office = ("e. perlengkapan kantor, arsip, dokumen, dan perpustakaan yang karena sifatnya diperlukan oleh Kabupaten "
              "{}.")
    found = template(office.format("Sungai Fiktif, Kabupaten Bukit Karangan, dan Kota Lembah"),
                     office.format("Laut Contoh dan Kabupaten Tanjung Umpama"))
    assert found.own_fills == ("Sungai Fiktif, Kabupaten Bukit Karangan, dan Kota Lembah",)
    assert found.other_fills == ("Laut Contoh dan Kabupaten Tanjung Umpama",)
    assert found.own == {"sungai", "fiktif", "bukit", "karangan", "kota", "lembah"}
