"""Legal status read from the documents (pipeline/status.py): edges with receipts, standing on a date, the date a
question asks about, and what an answer does with a provision that is not in force."""
from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from pipeline import status
from pipeline.config import ConfidenceSettings
from pipeline.index.store import ReferenceRow
from pipeline.references import extract_references, held_by
from pipeline.types import (CitationCheck, Chunk, Confidence, Conflict, Document, DocumentStatus, Span, StatusEdge,
                            VerifiedClaim)


def _doc(doc_id: str, title: str, effective: str | None = None, published: str | None = None,
         cite_as: str | None = None) -> Document:
    return Document(doc_id=doc_id, title=title, original=f"/x/{doc_id}.md", lang="id", content_hash="h",
                    doc_type="regulation", effective=effective, published=published, cite_as=cite_as)


def _chunk(doc_id: str, location: str, text: str, spans: tuple[Span, ...] = (), path: str | None = None) -> Chunk:
    return Chunk(chunk_id=f"{doc_id}:{location}", doc_id=doc_id, title=doc_id, location=location, text=text, lang="id",
                 unit=f"{doc_id}#{location}", ordinal=0, start=0, end=len(text), spans=spans,
                 path=path or doc_id.upper())


def _refs(chunk: Chunk, documents: list[Document]) -> list[ReferenceRow]:
    """The store's reference rows for a chunk: each external reference with the document it resolves to."""
    rows = []
    for k, ref in enumerate(extract_references(chunk.text)):
        target = held_by(ref, documents) if ref.scope == "external" else None
        rows.append(ReferenceRow(chunk.chunk_id, chunk.doc_id, k, ref.__dict__,
                                 "resolved" if target else "unresolved", target, None,
                                 next((d.cite_as for d in documents if d.doc_id == target), None)))
    return rows


OLD = _doc("px-1-2020", "Peraturan Menteri Contoh Nomor 1 Tahun 2020 tentang Tarif", "2020-07-01", "2020-06-01",
           "PX 1/2020")
OTHER = _doc("px-5-2019", "Peraturan Menteri Contoh Nomor 5 Tahun 2019 tentang Bea", "2019-03-01", "2019-02-01",
             "PX 5/2019")
NEW = _doc("px-3-2024", "Peraturan Menteri Contoh Nomor 3 Tahun 2024 tentang Tarif", "2024-04-01", "2024-03-01",
           "PX 3/2024")
AMENDING = _doc("px-2-2022", "Perubahan atas Peraturan Menteri Contoh Nomor 1 Tahun 2020 tentang Tarif",
                "2022-01-01", "2021-12-01", "PX 2/2022")
DOCS = [OLD, OTHER, NEW, AMENDING]


def _edges(doc: Document, *chunks: Chunk) -> list[StatusEdge]:
    refs = [r for c in chunks for r in _refs(c, DOCS)]
    return status.edges_of(list(chunks), refs, {d.doc_id: d for d in DOCS})


def test_a_revocation_of_two_listed_instruments_ends_both_with_the_ayat_as_its_receipt():
    text = ("Pasal 9\n(1) Pada saat Peraturan Menteri ini mulai berlaku:\na. Peraturan Menteri Contoh Nomor 1 Tahun "
            "2020 tentang Tarif; dan\nb. Peraturan Menteri Contoh Nomor 5 Tahun 2019 tentang Bea,\ndicabut dan "
            "dinyatakan tidak berlaku.\n(2) Peraturan Menteri ini mulai berlaku pada tanggal 1 April 2024.")
    end1 = text.index("(2)") - 1
    spans = (Span("Pasal 9 ayat (1)", 8, end1), Span("Pasal 9 ayat (1) huruf a", text.index("a. "), text.index("b. ")),
             Span("Pasal 9 ayat (1) huruf b", text.index("b. "), end1), Span("Pasal 9 ayat (2)", end1 + 1, len(text)))
    chunk = _chunk("px-3-2024", "Pasal 9", text, spans, "PX 3/2024 › BAB IV")
    edges = _edges(NEW, chunk)
    assert [(e.kind, e.target_doc, e.target_pasal, e.date) for e in edges] == [
        ("revokes", "px-1-2020", None, "2024-04-01"), ("revokes", "px-5-2019", None, "2024-04-01")]
    e = edges[0]
    assert e.source_path == "PX 3/2024 › BAB IV › Pasal 9 › ayat (1)"
    assert e.quote in chunk.text and e.quote.startswith("(1) Pada saat") and e.quote.endswith("tidak berlaku")


def test_a_revocation_list_too_long_for_one_chunk_ends_every_law_it_names_and_not_the_pasal_before():
    # UU 13/2003 Pasal 192 in two chunks: items 1-10, then 11-15 and the formula; laws before ~2004 write
    # "Undang-undang"; Pasal 191 (another unit) names a law it does not revoke
    docs = [LABOUR, _doc("uu-3-1958", "Undang-Undang Nomor 3 Tahun 1958 tentang Penempatan Tenaga Asing"),
            _doc("uu-25-1997", "Undang-Undang Nomor 25 Tahun 1997 tentang Ketenagakerjaan"),
            _doc("uu-21-2000", "Undang-Undang Nomor 21 Tahun 2000 tentang Serikat Pekerja")]
    before = _chunk("uu-13-2003", "Pasal 191", "Pasal 191\nSemua peraturan pelaksanaan Undang-undang Nomor 21 Tahun "
                    "2000 tetap berlaku.")
    first = _chunk("uu-13-2003", "Pasal 192 angka 1–10", "Pasal 192\nPada saat mulai berlakunya Undang undang ini, "
                   "maka :\n1. Ordonansi tentang Pengerahan Orang Indonesia;\n9. Undang-undang Nomor 3 Tahun 1958 "
                   "tentang Penempatan Tenaga Asing;\n10. Undang-undang Nomor 8 Tahun 1961 tentang Wajib Kerja Sarjana;")
    second = _chunk("uu-13-2003", "Pasal 192 angka 11–15", "13. Undang-undang Nomor 25 Tahun 1997 tentang "
                    "Ketenagakerjaan;\n15. Undang-undang Nomor 28 Tahun 2000 tentang Penetapan, dinyatakan tidak "
                    "berlaku lagi.")
    first, second = (replace(c, unit="uu-13-2003#Pasal 192") for c in (first, second))
    before = replace(before, unit="uu-13-2003#Pasal 191")
    chunks = [before, first, second]
    refs = [r for c in chunks for r in _refs(c, docs)]
    edges = status.edges_of(chunks, refs, {d.doc_id: d for d in docs})
    assert [(e.kind, e.target_doc, e.target_label, e.source_chunk) for e in edges] == [
        ("revokes", "uu-3-1958", "UU 3/1958", second.chunk_id),
        ("revokes", None, "UU 8/1961", second.chunk_id),
        ("revokes", "uu-25-1997", "UU 25/1997", second.chunk_id),
        ("revokes", None, "UU 28/2000", second.chunk_id)]
    assert edges[0].quote in second.text and edges[0].quote.endswith("dinyatakan tidak berlaku")


def test_a_revocation_that_names_no_instrument_is_no_edge():
    text = ("Pasal 4\nApabila ketentuan tidak dipenuhi, maka pemberian pembebasan bea masuk ini dicabut dan "
            "dinyatakan tidak berlaku lagi.")
    assert _edges(NEW, _chunk("px-3-2024", "Pasal 4", text)) == []


@pytest.mark.parametrize("which", ["ketentuan mengenai tarif", "ketentuan yang mengatur mengenai tarif"])
def test_a_revocation_of_part_of_a_document_makes_it_unknown_not_ended(which):
    text = (f"Pasal 12\nPada saat Peraturan Menteri ini mulai berlaku, {which} dalam Peraturan "
            "Menteri Contoh Nomor 1 Tahun 2020 tentang Tarif dicabut dan dinyatakan tidak berlaku.")
    edges = _edges(NEW, _chunk("px-3-2024", "Pasal 12", text))
    assert [(e.kind, e.target_doc) for e in edges] == [("revokes_part", "px-1-2020")]
    old = DocumentStatus.of(OLD, edges)
    assert status.standing(old, "2023-01-01").state == "in_force"
    assert status.standing(old, "2024-05-01").state == "unknown"


def test_a_document_is_in_force_from_its_effective_date_else_signature_else_promulgation():
    def since(**dates):
        return DocumentStatus.of(Document(doc_id="px-9-2020", title="t", original="/x.md", lang="id", content_hash="h",
                                          **dates), []).since
    assert since(effective="2020-03-01", published="2020-01-01", promulgated="2020-01-02") == "2020-03-01"
    assert since(published="2020-01-01", promulgated="2020-01-02") == "2020-01-01"
    assert since(promulgated="2020-01-02") == "2020-01-02"
    assert status.standing(DocumentStatus.of(Document(doc_id="px-9-2020", title="t", original="/x.md", lang="id",
                                                      content_hash="h", promulgated="2020-01-02"), []),
                           "2019-12-31").state == "not_yet"
    assert since() is None


def test_an_amending_regulation_ends_the_pasal_it_changes_and_nothing_else():
    opening = _chunk("px-2-2022", "Pasal I", "Pasal I\nBeberapa ketentuan dalam Peraturan Menteri Contoh Nomor 1 "
                     "Tahun 2020 tentang Tarif diubah sebagai berikut:", path="PX 2/2022")
    change = _chunk("px-2-2022", "Pasal I angka 1", "1. Ketentuan ayat (1) Pasal 5 diubah, sehingga Pasal 5 "
                    "berbunyi sebagai berikut:", path="PX 2/2022")
    insert = _chunk("px-2-2022", "Pasal I angka 2", "2. Di antara Pasal 6 dan Pasal 7 disisipkan 1 (satu) pasal, "
                    "yakni Pasal 6A", path="PX 2/2022")
    edges = _edges(AMENDING, opening, change, insert)
    assert [(e.kind, e.target_doc, e.target_pasal, e.date, e.quote) for e in edges] == [
        ("amends", "px-1-2020", "5", "2022-01-01", "Ketentuan ayat (1) Pasal 5 diubah")]
    old = DocumentStatus.of(OLD, edges)
    assert status.standing(old, "2023-01-01", pasal="5").state == "ended"
    assert status.standing(old, "2023-01-01", pasal="4").state == "in_force"  # the Pasal it did not change
    assert status.standing(old, "2023-01-01").state == "in_force"             # nor the document as a whole


@pytest.mark.parametrize("instruction, kind, quote", [
    # the amended ayat named after the Pasal (statute book: 341 such amendments of the PPh, KUP, customs and excise
    # laws, among others, were not read, so the amended Pasal stood as in force)
    ("1. Ketentuan Pasal 5 ayat (1) dan ayat (3) diubah, sehingga Pasal 5 berbunyi sebagai berikut:", "amends",
     "Ketentuan Pasal 5 ayat (1) dan ayat (3) diubah"),
    ("1. Ketentuan Pasal 5 ayat (1) huruf a, huruf e, dan huruf g diubah sehingga berbunyi:", "amends",
     "Ketentuan Pasal 5 ayat (1) huruf a, huruf e, dan huruf g diubah"),
    ("1. Ketentuan Pasal 5 ditambah 1 (satu) ayat, yakni ayat (3), sehingga Pasal 5 berbunyi sebagai berikut:",
     "amends", "Ketentuan Pasal 5 ditambah"),
    # a deleted ayat leaves the rest of the Pasal: what stands is unknown, not ended
    ("1. Ketentuan Pasal 5 ayat (2) dihapus.", "revokes_part", "Ketentuan Pasal 5 ayat (2) dihapus"),
    ("1. Ketentuan ayat (2) Pasal 5 dihapus.", "revokes_part", "Ketentuan ayat (2) Pasal 5 dihapus"),
    ("1. Pasal 5 dihapus.", "amends", "Pasal 5 dihapus"),
])
def test_an_instruction_naming_the_ayat_it_changes_after_the_pasal_ends_that_pasal(instruction, kind, quote):
    opening = _chunk("px-2-2022", "Pasal I", "Pasal I\nBeberapa ketentuan dalam Peraturan Menteri Contoh Nomor 1 "
                     "Tahun 2020 tentang Tarif diubah sebagai berikut:", path="PX 2/2022")
    edges = _edges(AMENDING, opening, _chunk("px-2-2022", "Pasal I angka 1", instruction, path="PX 2/2022"))
    assert [(e.kind, e.target_doc, e.target_pasal, e.quote) for e in edges] == [(kind, "px-1-2020", "5", quote)]
    old = DocumentStatus.of(OLD, edges)
    assert status.standing(old, "2023-01-01", pasal="5").state == ("ended" if kind == "amends" else "unknown")
    assert status.standing(old, "2023-01-01", pasal="4").state == "in_force"
    # text that only mentions a Pasal beside the verb is no instruction
    mention = _chunk("px-2-2022", "Pasal I angka 2", "2. Ketentuan sebagaimana dimaksud dalam Pasal 5 ayat (1) yang "
                     "diubah tetap berlaku.", path="PX 2/2022")
    assert _edges(AMENDING, opening, mention) == []


def test_the_same_instruction_in_a_document_that_amends_nothing_is_no_edge():
    text = ("Pasal 3\nDalam hal ketentuan dalam Peraturan Menteri Contoh Nomor 1 Tahun 2020 diubah, Pasal 5 diubah "
            "pula.")
    assert _edges(NEW, _chunk("px-3-2024", "Pasal 3", text)) == []


# An omnibus law: its title amends nothing, its chapters amend one law after another (as UU 11/2020 Pasal 81 amends
# UU 13/2003 and Pasal 82 the next law), each opening with "Beberapa ketentuan dalam <law> … diubah sebagai berikut:";
# its scan writes years with letters ("Tahun 2OO3") and glues the verb to a number ("Nomor 4279diubah").
OMNIBUS = _doc("uu-11-2020", "Undang-Undang Nomor 11 Tahun 2020 tentang Cipta Kerja", "2020-11-02", "2020-11-02",
               "UU 11/2020")
LABOUR = _doc("uu-13-2003", "Undang-Undang Nomor 13 Tahun 2003 tentang Ketenagakerjaan", None, "2003-03-25",
              "UU 13/2003")
SECURITY = _doc("uu-40-2004", "Undang-Undang Nomor 40 Tahun 2004 tentang Sistem Jaminan Sosial Nasional", None,
                "2004-10-19", "UU 40/2004")


def test_an_omnibus_law_ends_the_pasal_it_changes_or_deletes_in_each_law_it_amends():
    docs = [OMNIBUS, LABOUR, SECURITY]
    chunks = [
        _chunk("uu-11-2020", "Pasal 81", "Pasal 81\nBeberapa ketentuan dalam Undang-Undang Nomor 13 Tahun 2OO3 tentang "
               "Ketenagakerjaan (Lembaran Negara Republik Indonesia Tahun 2OO3 Nomor 39, Tambahan Lembaran Negara "
               "Republik Indonesia Nomor 4279diubah sebagai berikut:\n1. Ketentuan Pasal 13 diubah sehingga berbunyi "
               "sebagai berikut: Pasal 13 (1) Pelatihan kerja diselenggarakan oleh lembaga pelatihan kerja."),
        _chunk("uu-11-2020", "Pasal 81 angka 52", "52. Pasal 161 dihapus. Pasal 162 dihapus. Ketentuan Pasal 185 "
               "diubah sehingga berbunyi sebagai berikut: Pasal 185 (1) Barang siapa melanggar ketentuan sebagaimana "
               "dimaksud dalam Pasal 42 ayat (2) dikenai sanksi pidana. Bagian Ketiga Pasal 82 Beberapa ketentuan "
               "dalam Undang-Undang Nomor 40 Tahun 2OO4 tentang Sistem Jaminan Sosial Nasional diubah sebagai "
               "berikut: 1. Ketentuan Pasal 18 diubah sehingga berbunyi sebagai berikut:"),
        # a law whose name the scan garbled: its instructions are attributed to no law, not to the one before it,
        # nor to the law that amended it before ("sebagaimana telah diubah dengan …")
        _chunk("uu-11-2020", "Pasal 176", "Pasal 176 Beberapa ketentuan dalam Undang Nomor 40 Tahun 2004 tentang "
               "Sistem Jaminan Sosial Nasional sebagaimana telah diubah dengan Undang-Undang Nomor 13 Tahun 2003, "
               "diubah sebagai berikut: 1. Ketentuan Pasal 250 diubah sehingga berbunyi:"),
        _chunk("uu-11-2020", "Pasal 83", "Pasal 83 Beberapa ketentuan dalam Undang-Undang Norrnor duapuluh tentang "
               "Badan Penyelenggara diubah sebagai berikut: 1. Ketentuan Pasal 9 diubah sehingga berbunyi:"),
    ]
    refs = [r for c in chunks for r in _refs(c, docs)]
    edges = status.edges_of(chunks, refs, {d.doc_id: d for d in docs})
    assert [(e.kind, e.target_doc, e.target_pasal, e.date, e.quote) for e in edges] == [
        ("amends", "uu-13-2003", "13", "2020-11-02", "Ketentuan Pasal 13 diubah"),
        ("amends", "uu-13-2003", "161", "2020-11-02", "Pasal 161 dihapus"),
        ("amends", "uu-13-2003", "162", "2020-11-02", "Pasal 162 dihapus"),
        ("amends", "uu-13-2003", "185", "2020-11-02", "Ketentuan Pasal 185 diubah"),
        ("amends", "uu-40-2004", "18", "2020-11-02", "Ketentuan Pasal 18 diubah")]
    labour = DocumentStatus.of(LABOUR, edges)
    assert status.standing(labour, "2024-01-01", pasal="162").state == "ended"
    assert status.standing(labour, "2019-01-01", pasal="162").state == "in_force"  # before the omnibus law
    assert status.standing(labour, "2024-01-01", pasal="156").state == "in_force"  # a Pasal it did not touch
    assert status.standing(labour, "2024-01-01").state == "in_force"               # nor the law as a whole


AMENDMENT = _doc("uu-2-2015", "Undang-Undang Nomor 2 Tahun 2015 tentang Perubahan atas Undang-Undang Nomor 40 Tahun "
                 "2004", "2015-01-02", "2015-01-02", "UU 2/2015")
FISCAL = _doc("uu-1-2022", "Undang-Undang Nomor 1 Tahun 2022 tentang Hubungan Keuangan", "2022-01-05", "2022-01-05",
              "UU 1/2022")


def test_a_law_named_only_as_another_s_amendment_history_ends_with_it_only_when_it_is_nothing_but_that_amendment():
    """Statute book: UU 1/2022 Pasal 189 (1) revokes "UU 28/2009 … sebagaimana telah beberapa kali diubah, terakhir
    dengan UU 11/2020" and was read as ending the whole of UU 11/2020, an omnibus law that amends some seventy."""
    docs = [OMNIBUS, LABOUR, SECURITY, AMENDMENT, FISCAL]
    text = ("Pasal 189\n(1) Pada saat Undang-Undang ini mulai berlaku:\na. Undang-Undang Nomor 13 Tahun 2003 tentang "
            "Ketenagakerjaan sebagaimana telah beberapa kali diubah, terakhir dengan Undang-Undang Nomor 11 Tahun 2020 "
            "tentang Cipta Kerja; dan\nb. Undang-Undang Nomor 40 Tahun 2004 tentang Sistem Jaminan Sosial Nasional "
            "sebagaimana telah diubah dengan Undang-Undang Nomor 2 Tahun 2015,\ndicabut dan dinyatakan tidak berlaku.")
    chunks = {
        "uu-1-2022": [_chunk("uu-1-2022", "Pasal 189", text, (Span("Pasal 189 ayat (1)", 10, len(text)),))],
        "uu-11-2020": [_chunk("uu-11-2020", "Pasal 81", "Pasal 81\nBeberapa ketentuan dalam Undang-Undang Nomor 13 "
                              "Tahun 2003 tentang Ketenagakerjaan diubah sebagai berikut:\n1. Ketentuan Pasal 13 "
                              "diubah. Pasal 82 Beberapa ketentuan dalam Undang-Undang Nomor 40 Tahun 2004 tentang "
                              "Sistem Jaminan Sosial Nasional diubah sebagai berikut: 1. Ketentuan Pasal 18 diubah")],
        "uu-2-2015": [_chunk("uu-2-2015", "Pasal I", "Pasal I\nBeberapa ketentuan dalam Undang-Undang Nomor 40 Tahun "
                             "2004 tentang Sistem Jaminan Sosial Nasional diubah sebagai berikut:\n1. Ketentuan Pasal 5 "
                             "diubah")]}
    edges = status.graph(docs, lambda d: chunks.get(d, []), lambda d: [r for c in chunks.get(d, [])
                                                                          for r in _refs(c, docs)])
    revoked = sorted(e.target_doc for e in edges if e.kind == "revokes" and e.target_pasal is None)
    assert revoked == ["uu-13-2003", "uu-2-2015", "uu-40-2004"]  # the omnibus law is not revoked
    assert status.standing(DocumentStatus.of(OMNIBUS, edges), "2024-01-01").state == "in_force"
    assert status.standing(DocumentStatus.of(AMENDMENT, edges), "2024-01-01").state == "ended"
    alone = status.edges_of(chunks["uu-1-2022"], _refs(chunks["uu-1-2022"][0], docs), {d.doc_id: d for d in docs})
    assert "uu-11-2020" in {e.target_doc for e in alone}  # edges_of reads it; the graph decides with every document


@pytest.mark.parametrize("instruction, pasal", [
    # a range of ayat, and the elucidation changed beside the text (UU 36/2008 Pasal I angka 13, the income tax rates;
    # angka 2, the tax subjects: neither was read, so the Pasal they changed stood as in force)
    ("13. Ketentuan Pasal 17 ayat (1) sampai dengan ayat (3) dan Penjelasan ayat (5) sampai dengan ayat (7) diubah "
     "serta di antara ayat (2) dan ayat (3) disisipkan 4 (empat) ayat, yakni ayat (2a) sampai dengan ayat (2d)", "17"),
    ("2. Ketentuan Pasal 2 ayat (1) sampai dengan ayat (5) diubah sehingga Pasal 2 berbunyi sebagai berikut:", "2"),
    # the elucidation alone changed: the Pasal's text stands
    ("1. Ketentuan Pasal 1 substansi tetap dan Penjelasannya diubah sehingga berbunyi sebagai berikut:", None),
    ("4. Penjelasan Pasal 5 diubah sehingga menjadi sebagaimana tercantum dalam Penjelasan.", None),
])
def test_an_instruction_over_a_range_amends_its_pasal_and_one_for_the_elucidation_alone_amends_none(instruction, pasal):
    opening = _chunk("px-2-2022", "Pasal I", "Pasal I\nBeberapa ketentuan dalam Peraturan Menteri Contoh Nomor 1 "
                     "Tahun 2020 tentang Tarif diubah sebagai berikut:", path="PX 2/2022")
    edges = _edges(AMENDING, opening, _chunk("px-2-2022", "Pasal I angka 1", instruction, path="PX 2/2022"))
    assert [e.target_pasal for e in edges] == ([pasal] if pasal else [])


@pytest.mark.parametrize("opening", [
    # older amending laws name the law in Pasal I without "ketentuan dalam" (UU 7/1991, UU 17/2000 for UU 7/1983)
    "Pasal I\nMengubah beberapa ketentuan Peraturan Menteri Contoh Nomor 1 Tahun 2020 tentang Tarif, sebagai berikut:",
    "Pasal I\nPeraturan Menteri Contoh Nomor 1 Tahun 2020 tentang Tarif yang telah diubah dengan Peraturan Menteri "
    "Contoh Nomor 5 Tahun 2019, diubah sebagai berikut:",
])
def test_an_amending_law_s_first_article_names_the_law_it_amends_without_ketentuan_dalam(opening):
    first = _chunk("px-2-2022", "Pasal I", opening + "\n1. Ketentuan Pasal 5 diubah sehingga berbunyi:",
                   path="PX 2/2022")
    assert [(e.target_doc, e.target_pasal) for e in _edges(AMENDING, first)] == [("px-1-2020", "5")]
    # the same words in an article that is not the first amend nothing
    assert _edges(AMENDING, replace(first, location="Pasal II")) == []


def test_an_omnibus_list_whose_law_the_scan_garbled_is_the_law_its_history_s_last_amendment_amends():
    """UU 7/2021 Pasal 3: "Beberapa ketentuan dalam Undang-Undang Nomor T Tahun 1983 tentang Pajak Penghasilan …
    sebagaimana telah beberapa kali diubah terakhir dengan Undang-Undang Nomor 36 Tahun 2008 tentang Perubahan Keempat
    atas Undang-Undang Nomor 7 Tahun 1983 …, diubah sebagai berikut" (a scan's "T" for 7)."""
    docs = [OMNIBUS, LABOUR, SECURITY, AMENDMENT]
    chunk = _chunk("uu-11-2020", "Pasal 84", "Pasal 84 Beberapa ketentuan dalam Undang-Undang Nomor 4O Tahun 2OO4 "
                   "tentang Sistem Jaminan Sosial Nasional sebagaimana telah diubah terakhir dengan Undang-Undang Nomor "
                   "2 Tahun 2015 tentang Perubahan atas Undang-Undang Nomor 40 Tahun 2004 tentang Sistem Jaminan "
                   "Sosial Nasional, diubah sebagai berikut: 1. Ketentuan Pasal 18 diubah sehingga berbunyi:")
    edges = status.edges_of([chunk], _refs(chunk, docs), {d.doc_id: d for d in docs})
    assert [(e.target_doc, e.target_pasal) for e in edges] == [("uu-40-2004", "18")]


GAZETTE = ("(Lembaran Negara Republik Indonesia Tahun 2OO4 Nomor 150, Tambahan Lembaran Negara Republik Indonesia "
           "Nomor 5069)")


@pytest.mark.parametrize("opening", [
    f"{GAZETTE}, sebagai berikut:",                                # "diubah" lost (UU 7/2021, its VAT chapter)
    f"{GAZETTE} diubah, sehingga berbunyi sebagai berikut:",       # its excise chapter
    f"{GAZETTE[:-1]}1 diubah sebagai .berikut:",                   # its KUP chapter: a stray stop, ")" read as "1"
    f"{GAZETTE} diubah:",                                          # UU 11/2020's telecommunications list
    f"{GAZETTE[:-1]}lrdiubah sebagai berikut:",                    # its broadcasting list: ")" read as "lr", glued
    f"{GAZETTE} sebagaimana telah beberapa kali diubah terakhir dengan Undang-Undang Nomor 16 Tahun 2OO9 tentang "
    "Penetapan Peraturan Pemerintah Pengganti Undang-Undang Nomor 5 Tahun 2008 tentang Perubahan Keempat atas "
    "Undang-Undang Nomor 40 Tahun 2004 tentang Sistem Jaminan Sosial Nasional Menjadi Undang-Undang (Lembaran Negara "
    "Republik Indonesia Tahun 2OO9 Nomor 62, Tambahan Lembaran Negara Republik Indonesia Tahun 2OO9 Nomor 4999) diubah "
    "sebagai berikut:",  # a history naming a long title: over 600 characters from the law's name to "diubah"
])
def test_an_omnibus_list_opening_the_scan_garbled_still_opens_its_law_s_list(opening):
    """UU 7/2021's KUP, VAT and excise chapters open their lists in forms the scan garbled; before, their instructions
    went to the law the list before named (the VAT rate's "Pasal 7 diubah" read as the income tax law's Pasal 7)."""
    docs = [OMNIBUS, LABOUR, SECURITY]
    chunks = [_chunk("uu-11-2020", "Pasal 81", "Pasal 81\nBeberapa ketentuan dalam Undang-Undang Nomor 13 Tahun 2003 "
                     "tentang Ketenagakerjaan diubah sebagai berikut:\n1. Ketentuan Pasal 13 diubah sehingga "
                     "berbunyi:"),
              _chunk("uu-11-2020", "Pasal 82", "Pasal 82\nBeberapa ketentuan dalam Undang-Undang Nomor 40 Tahun 2004 "
                     f"tentang Sistem Jaminan Sosial Nasional {opening}\n1. Ketentuan Pasal 7 diubah sehingga "
                     "berbunyi sebagai berikut:")]
    refs = [r for c in chunks for r in _refs(c, docs)]
    edges = status.edges_of(chunks, refs, {d.doc_id: d for d in docs})
    assert [(e.target_doc, e.target_pasal) for e in edges] == [("uu-13-2003", "13"), ("uu-40-2004", "7")]


def test_an_instruction_s_own_words_open_no_list():
    """"Ketentuan dalam Undang-Undang ini berlaku …" followed by an instruction's "Ketentuan Pasal 12 diubah sehingga
    berbunyi sebagai berikut" is no list of another law: the list open before goes on (UU 11/2020's investment law)."""
    docs = [OMNIBUS, LABOUR, SECURITY]
    chunks = [_chunk("uu-11-2020", "Pasal 81", "Pasal 81\nBeberapa ketentuan dalam Undang-Undang Nomor 13 Tahun 2003 "
                     "tentang Ketenagakerjaan diubah sebagai berikut:\n1. Ketentuan Pasal 2 diubah sehingga berbunyi "
                     "sebagai berikut: Pasal 2 (1) Ketentuan dalam Undang-Undang ini berlaku dan menjadi acuan utama "
                     "bagi penanaman modal.\n2. Ketentuan Pasal 12 diubah sehingga berbunyi sebagai berikut: Pasal 12 "
                     "Semua bidang usaha terbuka.\n3. Ketentuan Pasal 13 diubah sehingga berbunyi:")]
    refs = [r for c in chunks for r in _refs(c, docs)]
    edges = status.edges_of(chunks, refs, {d.doc_id: d for d in docs})
    assert [(e.target_doc, e.target_pasal) for e in edges] == [("uu-13-2003", "2"), ("uu-13-2003", "12"),
                                                               ("uu-13-2003", "13")]


# The income tax law's rates, amended three times (UU 7/1983 Pasal 17; UU 17/2000 and UU 36/2008 restate it, UU 7/2021
# amends it again), fictional here: each amending law's restated Pasal stands until the next amends it.
BASE = _doc("px-1-2020", "Peraturan Menteri Contoh Nomor 1 Tahun 2020 tentang Tarif", "2020-07-01", "2020-06-01",
            "PX 1/2020")
SECOND = _doc("px-4-2023", "Perubahan Kedua atas Peraturan Menteri Contoh Nomor 1 Tahun 2020 tentang Tarif",
              "2023-01-01", "2022-12-01", "PX 4/2023")


def test_an_amending_law_s_restated_pasal_ends_when_a_later_law_amends_that_pasal_again():
    docs = [BASE, AMENDING, SECOND]
    chunks = {d: [_chunk(d, "Pasal I", "Pasal I\nBeberapa ketentuan dalam Peraturan Menteri Contoh Nomor 1 Tahun 2020 "
                         "tentang Tarif diubah sebagai berikut:", path=cite),
                  _chunk(d, "Pasal I angka 1", "1. Ketentuan Pasal 5 diubah sehingga berbunyi sebagai berikut:",
                         path=cite),
                  _chunk(d, "Pasal I angka 1 › Pasal 5", f"Pasal 5\nTarif adalah {rate}%.", path=cite)]
              for d, cite, rate in (("px-2-2022", "PX 2/2022", 12), ("px-4-2023", "PX 4/2023", 11))}
    chunks["px-2-2022"].append(_chunk("px-2-2022", "Pasal I angka 2", "2. Ketentuan Pasal 6 diubah sehingga berbunyi:",
                                      path="PX 2/2022"))
    edges = status.graph(docs, lambda d: chunks.get(d, []), lambda d: [r for c in chunks.get(d, [])
                                                                          for r in _refs(c, docs)])
    first, second = (DocumentStatus.of(d, edges) for d in (AMENDING, SECOND))
    # every passage of the item: the instruction, the restated Pasal, one the chunker did not mark as that Pasal
    items = {status.item_of(x) for x in ("Pasal I angka 1", "Pasal I angka 1 › Pasal 5 ayat (2)", "Pasal I angka 1 "
                                         "huruf a–ayat (2)")}
    assert items == {"I angka 1"} and status.item_of("Pasal 5 ayat (1)") is None
    assert status.item_of("Pasal 81 angka 52") == "81 angka 52" and status.item_of("Pasal I") == "I"
    assert status.standing(first, "2022-06-01", item="I angka 1").state == "in_force"  # before the second amendment
    ended = status.standing(first, "2024-01-01", item="I angka 1")
    assert ended.state == "ended" and ended.until == "2023-01-01" and ended.edge.source_doc == "px-4-2023"
    assert ended.edge.target_label == "PX 2/2022 › Pasal I › angka 1 (Pasal 5)"
    assert status.standing(second, "2024-01-01", item="I angka 1").state == "in_force"  # the latest text
    assert status.standing(first, "2024-01-01", item="I angka 2").state == "in_force"   # a Pasal amended once
    assert status.standing(first, "2024-01-01").state == "in_force"                     # the amending law as a whole
    # a claim quoting the first amendment's text is history, one quoting the second's is the answer
    claim, chunk = _claim("px-2-2022", "Pasal I angka 1 › Pasal 5")
    dated = status.dated(claim, claim.citations[0], chunk, {"px-2-2022": first}, "2024-01-01", ConfidenceSettings())
    assert dated.standing.state == "ended" and dated.confidence.capped_by == status.NOT_IN_FORCE


@pytest.mark.parametrize("location", ["Pasal I angka 1–2", "Pasal I angka 1 (bagian 1/2)"])
def test_an_instruction_in_a_chunk_of_several_items_or_part_of_one_ends_the_item_its_passages_are(location):
    """The item an instruction's receipt is in is read as its passages' (`item_of`): a chunk of items 1–2, or the
    first part of item 1, is item "I angka 1" (UU 4/2000's "Pasal I angka 1–ayat (3b)", UU 5/1975's "Pasal I angka
    1–6"), not the amending law's opening article "I"."""
    docs = [BASE, AMENDING, SECOND]
    chunks = {"px-2-2022": [_chunk("px-2-2022", "Pasal I", "Pasal I\nBeberapa ketentuan dalam Peraturan Menteri Contoh "
                                   "Nomor 1 Tahun 2020 tentang Tarif diubah sebagai berikut:", path="PX 2/2022"),
                            _chunk("px-2-2022", location, "1. Ketentuan Pasal 5 diubah sehingga berbunyi sebagai "
                                   "berikut: Pasal 5 Tarif adalah 12%. 2. Ketentuan Pasal 6 dihapus.",
                                   path="PX 2/2022")],
              "px-4-2023": [_chunk("px-4-2023", "Pasal I", "Pasal I\nBeberapa ketentuan dalam Peraturan Menteri Contoh "
                                   "Nomor 1 Tahun 2020 tentang Tarif diubah sebagai berikut: 1. Ketentuan Pasal 5 "
                                   "diubah sehingga berbunyi sebagai berikut:", path="PX 4/2023")]}
    edges = status.graph(docs, lambda d: chunks.get(d, []), lambda d: [r for c in chunks.get(d, [])
                                                                          for r in _refs(c, docs)])
    first = DocumentStatus.of(AMENDING, edges)
    assert status.item_of(location) == "I angka 1"
    ended = status.standing(first, "2024-01-01", item="I angka 1")
    assert ended.state == "ended" and ended.edge.source_doc == "px-4-2023"
    assert status.standing(first, "2024-01-01", item="I").state == "in_force"  # the opening article is no item's text


@pytest.mark.parametrize("location, text, ended", [
    # considerations and elucidation describe; they do not revoke
    ("Menimbang", "Menimbang: a. bahwa Peraturan Menteri Contoh Nomor 1 Tahun 2020 tentang Tarif perlu dicabut dan "
     "dinyatakan tidak berlaku;", False),
    ("Penjelasan Pasal 9", "Pasal 9 Cukup jelas. Peraturan Menteri Contoh Nomor 1 Tahun 2020 tentang Tarif dinyatakan "
     "tidak berlaku.", False),
    # a drafting guide's paragraph after the signature: the laws it names are examples, the formula is described
    ("penutup alinea 6 (bagian 12/14)", "Contoh: Peraturan Menteri Contoh Nomor 1 Tahun 2020 tentang Tarif. Pasal yang "
     "mencabut peraturan dirumuskan dengan menyebutkan peraturan yang dicabut dan digunakan frasa dicabut dan "
     "dinyatakan tidak berlaku.", False),
    # a scan that ran the closing Pasal into a paragraph: the Pasal's own sentence revokes, across a stray period
    ("paragraf 1 (bagian 7/15)", "Peraturan Menteri Contoh Nomor 5 Tahun 2019 tentang Bea mengatur bea. BAB VIII "
     "KETENTUAN PENUTUP Pasal 20 Dengan berlakunya Peraturan ini, Peraturan Menteri Contoh Nomor 1 Tahun 2020 tentang "
     "Tarif Jakarta Raya. Tetap Berlaku Sebagian, dinyatakan tidak berlaku lagi.", True),
])
def test_a_revocation_outside_any_pasal_is_read_only_from_the_sentence_or_run_in_pasal_that_states_it(location, text,
                                                                                                    ended):
    edges = _edges(NEW, _chunk("px-3-2024", location, text))
    assert sorted(e.target_doc for e in edges) == (["px-1-2020"] if ended else [])  # px-5-2019 never


def _edge(kind="revokes", date="2025-04-01", issued="2025-03-01", pasal=None) -> StatusEdge:
    return StatusEdge(kind, "new", "new:9", "NEW › Pasal 9", "… dicabut dan dinyatakan tidak berlaku", "OLD", "old",
                      pasal, date, issued)


@pytest.mark.parametrize("on,state", [("2022-01-01", "not_yet"), ("2024-06-01", "in_force"),
                                      ("2025-03-31", "in_force"), ("2025-04-01", "ended"), ("2030-01-01", "ended")])
def test_standing_on_a_date(on, state):
    old = DocumentStatus("old", "2022-07-01", (_edge(),))
    got = status.standing(old, on)
    assert got.state == state
    if state == "ended":
        assert got.until == "2025-04-01" and got.edge.source_path == "NEW › Pasal 9"


def test_an_edge_without_a_date_is_unknown_from_its_source_s_issue_date_never_guessed():
    old = DocumentStatus("old", "2022-07-01", (_edge(date=None, issued="2025-03-01"),))
    assert status.standing(old, "2025-02-28").state == "in_force"
    assert status.standing(old, "2025-03-01").state == "unknown"


@pytest.mark.parametrize("question,day,words", [
    ("Berapa tarif PPh sewa pada tahun 2024?", "2024-12-31", "pada tahun 2024"),
    ("Berapa tarif sebelum April 2025?", "2025-03-31", "sebelum April 2025"),
    ("Berapa tarif per 1 Maret 2025?", "2025-03-01", "per 1 Maret 2025"),
    ("What was the rate as of 2024?", "2024-12-31", "as of 2024"),
    ("What was the rate before 2025?", "2024-12-31", "before 2025"),
    ("Berapa tarif sewa tahun pajak 2023?", "2023-12-31", "tahun pajak 2023"),
])
def test_the_date_a_question_names(question, day, words):
    got = status.asked_date(question)
    assert got is not None and got[0] == dt.date.fromisoformat(day) and got[1] == words


@pytest.mark.parametrize("question", [
    "Berapa tarif menurut Peraturan Menteri Ilustratif Nomor 3 Tahun 2022?", "Berapa tarif dalam PMK 98/2025?",
    "Kapan PMK 99/2025 mulai berlaku?", "Berapa tarif pajak penghasilan atas persewaan tanah?"])
def test_a_regulation_s_name_is_not_a_date_asked_about(question):
    assert status.asked_date(question) is None


def _claim(doc_id: str, location: str, band: str = "TINGGI", value: float = 0.95) -> tuple[VerifiedClaim, Chunk]:
    chunk = _chunk(doc_id, location, "Pasal 2\n(1) Tarif adalah 15%.", (Span(f"{location} ayat (1)", 8, 29),))
    cite = CitationCheck(chunk.chunk_id, "Tarif adalah 15%.", doc_id, f"{location} ayat (1)", True, doc_id=doc_id,
                         path=f"{doc_id.upper()} › {location} › ayat (1)")
    conf = Confidence(1.0, 0.9, value, {"judge": 0.45, "retrieval": 0.35, "generator": 0.2}, 0.96, value, value, band,
                      "answerability")
    return VerifiedClaim("Tarif adalah 15%.", "supported", (cite,), confidence=conf), chunk


def test_a_claim_from_a_revoked_regulation_is_history_and_never_tinggi():
    claim, chunk = _claim("old", "Pasal 2")
    statuses = {"old": DocumentStatus("old", "2022-07-01", (_edge(),))}
    settings = ConfidenceSettings()
    now = status.dated(claim, claim.citations[0], chunk, statuses, "2026-01-01", settings)
    assert now.standing.state == "ended" and now.standing.edge.source_path == "NEW › Pasal 9"
    assert now.confidence.band != "TINGGI" and now.confidence.capped_by == status.NOT_IN_FORCE
    assert now.confidence.value < settings.top(True)
    then = status.dated(claim, claim.citations[0], chunk, statuses, "2024-01-01", settings)
    assert then.standing.state == "in_force" and then.confidence == claim.confidence  # in force: untouched
    assert "riwayat: dicabut mulai 2025-04-01 oleh NEW › Pasal 9" == status.standing_words(now.standing, "id")


def test_a_conflict_between_a_rule_in_force_and_a_revoked_one_says_which_applies_and_why():
    old, chunk = _claim("old", "Pasal 2")
    new, _ = _claim("new", "Pasal 3")
    statuses = {"old": DocumentStatus("old", "2022-07-01", (_edge(),)), "new": DocumentStatus("new", "2025-04-01")}
    settings = ConfidenceSettings()
    claims = status.in_force_first([status.dated(c, c.citations[0], chunk, statuses, "2026-01-01", settings)
                                    for c in (old, new)])
    assert [c.citations[0].doc_id for c in claims] == ["new", "old"]
    decided = status.decide(Conflict("figures", "15% ≠ 10%", (0, 1), ()), claims, "en")
    assert decided.applies == 0 and decided.decided_by == _edge()
    assert "In force on 2026-01-01: NEW › Pasal 3 › ayat (1)" in decided.detail
    unrelated = status.decide(Conflict("figures", "x", (0, 1), ()), [replace(c, standing=None) for c in claims], "en")
    assert unrelated.applies is None and unrelated.detail == "x"


def test_a_provision_known_to_have_ended_never_leads_one_whose_standing_is_unknown():
    """Statute book: UU 27/2007 Pasal 14 (5), amended by UU 1/2014 in 2014, led the answer over UU 1/2014's own
    Pasal 14 (5), whose standing a later law's (misread) revocation left unknown; history is not the answer."""
    old, chunk = _claim("old", "Pasal 2")
    unsure, _ = _claim("unsure", "Pasal 3")
    new, _ = _claim("new", "Pasal 4")
    statuses = {"old": DocumentStatus("old", "2022-07-01", (_edge(),)),
                "unsure": DocumentStatus("unsure", "2022-07-01", (replace(_edge(), target_doc="unsure", date=None),)),
                "new": DocumentStatus("new", "2025-04-01")}
    dated = [status.dated(c, c.citations[0], chunk, statuses, "2026-01-01", ConfidenceSettings())
             for c in (old, unsure, new)]
    assert [c.standing.state for c in dated] == ["ended", "unknown", "in_force"]
    demoted = replace(new, status="unsupported")
    ordered = status.in_force_first([demoted, *dated])
    assert [(c.citations[0].doc_id, c.status) for c in ordered] == [
        ("new", "supported"), ("unsure", "supported"), ("old", "supported"), ("new", "unsupported")]


_RULE = "Data calon TKA dan dokumen dilakukan verifikasi oleh Menteri paling lama 2 (dua) hari kerja."


def _twice(doc_id: str = "old", other_doc: str = "old") -> tuple[VerifiedClaim, Chunk]:
    """A claim quoting one sentence its regulation states in Pasal 2 and again in Pasal 5."""
    chunk = _chunk(doc_id, "Pasal 2", f"Pasal 2\n(1) {_RULE}", (Span("Pasal 2 ayat (1)", 8, 12 + len(_RULE)),))
    own = CitationCheck(chunk.chunk_id, _RULE, doc_id, "Pasal 2 ayat (1)", True, doc_id=doc_id)
    again = CitationCheck("elsewhere", _RULE, other_doc, "Pasal 5 ayat (4)", True, doc_id=other_doc)
    conf = Confidence(1.0, 0.9, 0.95, {"judge": 0.45, "retrieval": 0.35, "generator": 0.2}, 0.96, 0.95, 0.95, "TINGGI",
                      "answerability")
    return VerifiedClaim(_RULE, "supported", (own, again), confidence=conf), chunk


@pytest.mark.parametrize("edges, other_doc, kept", [
    ((), "old", True),                                                  # both stand alike: both places quoted
    ((_edge(kind="amends", pasal="5"),), "old", False),                 # Pasal 5 was changed, Pasal 2 was not
    ((_edge(kind="amends", pasal="2"),), "old", False),                 # and the other way round
    ((_edge(),), "old", True),                                          # the whole regulation revoked: both ended
    ((), "another", False),                                             # another regulation's words are its own rule
])
def test_another_place_stating_the_claim_s_sentence_is_quoted_only_where_it_stands_as_the_claim_does(edges, other_doc,
                                                                                                       kept):
    claim, chunk = _twice(other_doc=other_doc)
    statuses = {"old": DocumentStatus("old", "2022-07-01", edges), "another": DocumentStatus("another", "2022-07-01")}
    now = status.dated(claim, claim.citations[0], chunk, statuses, "2026-01-01", ConfidenceSettings())
    assert [c.location for c in now.citations] == (["Pasal 2 ayat (1)", "Pasal 5 ayat (4)"] if kept
                                                   else ["Pasal 2 ayat (1)"])
    # the claim's standing is its own provision's, whichever place is kept
    assert now.standing == status.standing(statuses["old"], "2026-01-01", "2")
    assert status.dated(claim, claim.citations[0], chunk, {}, "2026-01-01", None).citations == (
        claim.citations if other_doc == "old" else claim.citations[:1])  # undated: the document still decides


_DEFINITION = ("Pemberi Kerja adalah orang perseorangan, pengusaha, badan hukum, atau badan lainnya yang mempekerjakan "
               "tenaga kerja dengan membayar gaji, upah, atau imbalan dalam bentuk lainnya.")


@pytest.mark.parametrize("claim_edges, other_edges, kept", [
    ((), (), True),           # a law and its implementing regulation define the term alike, both in force
    ((), (_edge(),), False),  # the other regulation was revoked: its definition is history
    ((_edge(),), (), False),  # the claim's own regulation was revoked: the claim is history, alone
])
def test_another_regulation_s_definition_in_the_same_words_is_quoted_only_where_both_are_in_force(claim_edges,
                                                                                                  other_edges, kept):
    chunk = _chunk("old", "Pasal 1", f"Pasal 1\n9. {_DEFINITION}", (Span("Pasal 1 angka 9", 8, 11 + len(_DEFINITION)),))
    own = CitationCheck(chunk.chunk_id, f"9. {_DEFINITION}", "old", "Pasal 1 angka 9", True, doc_id="old")
    again = CitationCheck("elsewhere", f"3. {_DEFINITION}", "another", "Pasal 1 angka 3", True, doc_id="another")
    claim = VerifiedClaim(_DEFINITION, "supported", (own, again))
    statuses = {"old": DocumentStatus("old", "2022-07-01", claim_edges),
                "another": DocumentStatus("another", "2022-07-01", other_edges)}
    now = status.dated(claim, own, chunk, statuses, "2026-01-01", None)
    assert [c.doc_id for c in now.citations] == (["old", "another"] if kept else ["old"])
    # without the other regulation's standing it is not quoted
    alone = status.dated(claim, own, chunk, {"old": statuses["old"]}, "2026-01-01", None)
    assert [c.doc_id for c in alone.citations] == ["old"]
