"""The managed corpus over real files: every format end to end, incremental ingest by source
hash, sidecars, delete, atomic replace, near-duplicate versions and cross-references pulled
into the context. Every fixture is written here; the hash embedder keeps it fast, except
where the `saksi corpus` command needs the profile's own embedder.
"""
from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from docx import Document as DocxDocument

from pipeline import catalog
from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.cli import main as saksi
from pipeline.corpus import Corpus
from pipeline.index import Bm25LexicalIndex, ChunkStore
from pipeline.text import embedding_text
from pipeline.ingest.prepare import TEXTS_DIR, DocumentPreparer
from pipeline.responses import result_json

from ..pdfs import pdf_bytes

pytestmark = pytest.mark.integration


def ask(corpus: Corpus, question: str):
    """The result and its trace, with the profile's lite generator and judge."""
    return asyncio.run(corpus.orchestrator().run(question))


def with_retrieval(profile, **changes):
    """The profile with some retrieval settings changed."""
    s = profile.settings
    retrieval = s.retrieval.model_copy(update=changes)
    return profile.model_copy(update={"settings": s.model_copy(update={"retrieval": retrieval})})


def rendition_slice(chunk) -> str:
    return Path(chunk.rendition).read_text(encoding="utf-8")[chunk.start:chunk.end]


def lexical_ids(corpus: Corpus) -> set[str]:
    return set(Bm25LexicalIndex.load(corpus.data_dir / "bm25").ids)


# ------------------------------------------------------------------ 1. formats end to end

PDF_PAGE_1 = ["PERATURAN MENTERI KEUANGAN REPUBLIK INDONESIA", "NOMOR 7 TAHUN 2024", "TENTANG", "TARIF UJI", "",
              "Pasal 1",
              "(1) Setiap laboratorium penguji wajib mendaftarkan peralatan kalibrasi kepada Direktorat.",
              "(2) Tarif uji kalibrasi timbangan ditetapkan sebesar Rp250.000 untuk setiap alat ukur."]
PDF_PAGE_3 = ["Pasal 2", "Peraturan Menteri ini mulai berlaku pada tanggal diundangkan dan wajib dipatuhi oleh "
              "semua laboratorium."]
# words that appear only in the HTML page's site furniture
BOILERPLATE = ("Navlinkzz", "Sidebarzz", "Cookiezz", "Footerzz")
HTML = f"""<!doctype html>
<html lang="id"><head><title>Panduan Arsip Digital</title></head><body>
<header class="site-header"><a href="/">Beranda {BOILERPLATE[0]}</a></header>
<nav><ul><li><a href="/a">Profil {BOILERPLATE[0]}</a></li><li><a href="/b">Kontak</a></li></ul></nav>
<div class="cookie-banner">Situs ini memakai kuki {BOILERPLATE[2]} untuk statistik.</div>
<main>
 <h1>Panduan Arsip Digital</h1>
 <h2>Penyimpanan</h2>
 <p>Setiap arsip digital disimpan pada server terpusat selama sepuluh tahun sejak dibuat.</p>
 <h2>Akses</h2>
 <p>Pegawai mengakses arsip digital melalui portal internal dengan akun masing-masing.</p>
</main>
<aside>Tautan terkait {BOILERPLATE[1]} dan berita lain.</aside>
<footer>Hak cipta {BOILERPLATE[3]} 2024. Seluruh hak dilindungi.</footer>
</body></html>"""


@pytest.fixture(scope="module")
def formats(tmp_path_factory, profile):
    """One folder with a PDF, an HTML page, a DOCX, a Markdown file and two broken PDFs, ingested."""
    root = tmp_path_factory.mktemp("formats")
    src = root / "src"
    src.mkdir()
    good_pdf = pdf_bytes([PDF_PAGE_1, None, PDF_PAGE_3])
    (src / "pmk-7-2024.pdf").write_bytes(good_pdf)
    rng = random.Random(7)
    (src / "rusak.pdf").write_bytes(b"%PDF-1.7\n" + bytes(rng.randrange(256) for _ in range(3000)))
    (src / "terpotong.pdf").write_bytes(good_pdf[:400])
    (src / "panduan.html").write_text(HTML, encoding="utf-8")
    docx = DocxDocument()
    docx.add_heading("Pedoman Perjalanan Dinas", level=1)
    docx.add_paragraph("Pegawai yang melakukan perjalanan dinas wajib menyerahkan laporan dalam tujuh hari kerja.")
    docx.add_heading("Uang Harian", level=2)
    docx.add_paragraph("Uang harian dibayarkan sesuai standar biaya masukan yang berlaku pada tahun anggaran berjalan.")
    docx.save(src / "pedoman.docx")
    (src / "catatan.md").write_text("# Catatan Rapat\n\nRapat koordinasi membahas jadwal pemeliharaan gedung "
                                    "kantor pusat.\n", encoding="utf-8")
    corpus = Corpus(root / "data", profile, embedder=FakeHashEmbedder())
    report = corpus.ingest([src])
    yield corpus, report, src
    corpus.close()


def test_broken_pdfs_are_reported_and_every_good_format_is_ingested(formats):
    corpus, report, src = formats
    reasons = {Path(e.path).name: e.reason for e in report.errors}
    assert set(reasons) == {"rusak.pdf", "terpotong.pdf"}
    assert all(r.startswith("not a readable PDF") for r in reasons.values()), reasons
    assert sorted(Path(p).name for p in report.ingested) == ["catatan.md", "panduan.html", "pedoman.docx",
                                                              "pmk-7-2024.pdf"]
    fmts = {d.doc_id: d.fmt for d, _ in corpus.store.documents()}
    assert fmts == {"pmk-7-2024": "pdf", "panduan": "html", "pedoman": "docx", "catatan": "markdown"}
    assert {Path(p).name: pages for p, pages in report.needs_ocr.items()} == {"pmk-7-2024.pdf": [2]}
    corpus.check()


def test_a_pdf_regulation_knows_its_pages_name_and_structure(formats):
    corpus, _, src = formats
    entry = next(e for e in corpus.store.manifest() if e.document.doc_id == "pmk-7-2024")
    doc = entry.document
    assert (doc.pages, doc.pages_without_text) == (3, (2,))
    assert (entry.details["pages"], entry.details["pages_without_text"], entry.details["format"]) == (3, [2], "pdf")
    assert (doc.cite_as, doc.number, doc.year, doc.doc_type) == ("PMK 7/2024", "7", 2024, "Peraturan Menteri Keuangan")
    assert doc.title == "TARIF UJI" and doc.original == str((src / "pmk-7-2024.pdf").resolve())
    assert entry.details["pasal"] == 2 and entry.details["metadata_from"]["cite_as"] == "document"
    chunks = {c.location: c for c in corpus.store.doc_chunks("pmk-7-2024")}
    pasal_1, pasal_2 = chunks["Pasal 1"], chunks["Pasal 2"]
    assert [s.label for s in pasal_1.spans] == ["Pasal 1 ayat (1)", "Pasal 1 ayat (2)"]
    ayat_2 = pasal_1.spans[1]
    assert pasal_1.text[ayat_2.start:ayat_2.end].startswith("(2) Tarif uji kalibrasi timbangan")
    assert pasal_1.page == (1, 1) and pasal_2.page == (3, 3)
    assert pasal_1.path == "PMK 7/2024" and pasal_1.original == doc.original
    # the running page numbers were cleaned away, and counted
    assert entry.details["cleaning"]["page_numbers"] >= 2
    assert not any("- 1 -" in c.text or "- 3 -" in c.text for c in chunks.values())


def test_html_boilerplate_stays_out_and_docx_headings_make_sections(formats):
    corpus, _, _ = formats
    everything = [c for d, _ in corpus.store.documents() for c in corpus.store.doc_chunks(d.doc_id)]
    for word in BOILERPLATE:
        assert not any(word in c.text or word in c.heading for c in everything), word
    html = corpus.store.doc_chunks("panduan")
    assert corpus.store.document("panduan").title == "Panduan Arsip Digital"
    assert any("sepuluh tahun" in c.text and c.heading.endswith("Penyimpanan") for c in html)
    assert any("portal internal" in c.text and c.heading.endswith("Akses") for c in html)
    docx = corpus.store.doc_chunks("pedoman")
    assert any("Uang harian dibayarkan" in c.text and c.heading.endswith("Uang Harian") for c in docx)


def test_every_chunk_is_an_exact_slice_of_its_rendition(formats):
    corpus, _, src = formats
    texts = corpus.data_dir.resolve() / TEXTS_DIR
    n = 0
    for doc, count in corpus.store.documents():
        assert Path(doc.rendition).parent == texts and Path(doc.rendition).is_file()
        chunks = corpus.store.doc_chunks(doc.doc_id)
        assert len(chunks) == count > 0
        for c in chunks:
            assert c.rendition == doc.rendition
            assert rendition_slice(c) == c.text
            n += 1
    assert n >= 6
    # a text format also maps back to the original file's own characters
    original = (src / "catatan.md").read_text(encoding="utf-8")
    (note,) = corpus.store.doc_chunks("catatan")
    assert original[note.original_span[0]:note.original_span[1]] == note.text


def test_an_answer_from_the_pdf_cites_the_ayat_and_its_page(formats):
    corpus, _, src = formats
    result, _ = ask(corpus, "Berapa tarif uji kalibrasi timbangan untuk setiap alat ukur?")
    assert result.outcome == "answer", result.reason
    supported = [c for c in result.claims if c.status == "supported"]
    cited = [x for c in supported for x in c.citations if x.doc_id == "pmk-7-2024"]
    assert cited, [c.text for c in result.claims]
    receipt = cited[0]
    assert receipt.ok and "Rp250.000" in receipt.quote
    assert receipt.path == "PMK 7/2024 › Pasal 1 › ayat (2)"
    assert receipt.page == (1, 1)
    assert receipt.original == str((src / "pmk-7-2024.pdf").resolve())
    assert receipt.rendition == corpus.store.document("pmk-7-2024").rendition
    shown = next(x for c in result_json(result)["claims"] for x in c["citations"] if x["doc_id"] == "pmk-7-2024")
    assert (shown["path"], shown["pages"], shown["original"], shown["source"]) == (
        receipt.path, [1, 1], receipt.original, receipt.rendition)
    start, end = shown["source_span"]
    assert receipt.quote in Path(shown["source"]).read_text(encoding="utf-8")[start:end]


# ------------------------------------------------------------------ 2. incremental ingest

def _note(word: str) -> str:
    return f"# Ketentuan {word}\n\nKetentuan tentang {word} pegawai diatur dalam dokumen ini secara rinci.\n"


def test_only_a_changed_file_is_ingested_again(tmp_path, profile):
    src = tmp_path / "src"
    src.mkdir()
    for name, word in (("anggaran", "anggaran"), ("belanja", "belanja"), ("cuti", "cuti")):
        (src / f"{name}.md").write_text(_note(word), encoding="utf-8")
    with Corpus(tmp_path / "data", profile, embedder=FakeHashEmbedder()) as corpus:
        first = corpus.ingest([src])
        assert len(first.ingested) == 3 and not first.errors
        before = {e.document.doc_id: e for e in corpus.store.manifest()}
        assert {d: e.version for d, e in before.items()} == {"anggaran": 1, "belanja": 1, "cuti": 1}
        time.sleep(1.1)  # ingested_at has one-second resolution: a rewrite of an untouched doc would show
        changed = src / "belanja.md"
        changed.write_text(_note("belanja") + "\nBelanja modal dicatat terpisah dari belanja barang.\n",
                           encoding="utf-8")
        second = corpus.ingest([src])
        assert second.ingested == [str(changed.resolve())]
        assert sorted(second.unchanged) == sorted(str((src / f"{n}.md").resolve()) for n in ("anggaran", "cuti"))
        assert second.embedded == 1 and second.removed_from_dense == 1 and not second.errors
        after = {e.document.doc_id: e for e in corpus.store.manifest()}
        assert {d: e.version for d, e in after.items()} == {"anggaran": 1, "belanja": 2, "cuti": 1}
        for untouched in ("anggaran", "cuti"):
            assert after[untouched].ingested_at == before[untouched].ingested_at
            assert after[untouched].source_hash == before[untouched].source_hash
        assert after["belanja"].source_hash != before["belanja"].source_hash
        assert after["belanja"].ingested_at > before["belanja"].ingested_at
        # the new version has its own rendition; the old one, no longer referenced, is gone
        old, new = Path(before["belanja"].document.rendition), Path(after["belanja"].document.rendition)
        assert old != new and new.is_file() and not old.exists()
        assert any("Belanja modal" in c.text for c in corpus.store.doc_chunks("belanja"))
        corpus.check()
        state = corpus.dir.state_file.read_bytes()
        third = corpus.ingest([src])
        assert third.ingested == [] and len(third.unchanged) == 3 and third.embedded == 0
        assert corpus.dir.state_file.read_bytes() == state
        assert [e.version for e in corpus.store.manifest()] == [1, 2, 1]


# ------------------------------------------------------------------ 3. sidecar metadata

SIDECAR = ("title: Pedoman Arsip Elektronik\nauthority: institutional\npublished: 2024-02-01\n"
           "url: https://www.example.go.id/x\n")


def test_a_sidecar_sets_metadata_its_edits_reingest_and_a_bad_one_is_reported(tmp_path, profile):
    src = tmp_path / "src"
    src.mkdir()
    (src / "x.md").write_text("Pedoman pengelolaan arsip elektronik bagi seluruh unit kerja kementerian.\n",
                              encoding="utf-8")
    (src / "x.md.meta.yaml").write_text(SIDECAR, encoding="utf-8")
    (src / "y.md").write_text("Tata naskah dinas elektronik dipakai oleh seluruh unit kerja.\n", encoding="utf-8")
    (src / "y.md.meta.yaml").write_text("title: Tata Naskah\npublished: 2024\n", encoding="utf-8")
    (src / "z.md").write_text("Rapat pimpinan diadakan setiap hari Senin pagi di ruang utama.\n", encoding="utf-8")
    with Corpus(tmp_path / "data", profile, embedder=FakeHashEmbedder()) as corpus:
        report = corpus.ingest([src])
        (error,) = report.errors
        assert Path(error.path).name == "y.md.meta.yaml"
        assert "sidecar field 'published'" in error.reason
        assert sorted(Path(p).name for p in report.ingested) == ["x.md", "z.md"]
        assert corpus.store.document("y") is None
        doc = corpus.store.document("x")
        assert (doc.title, doc.authority, doc.published, doc.url, doc.domain) == (
            "Pedoman Arsip Elektronik", "institutional", "2024-02-01", "https://www.example.go.id/x",
            "www.example.go.id")
        (chunk,) = corpus.store.doc_chunks("x")
        assert (chunk.authority, chunk.published, chunk.title) == ("institutional", "2024-02-01",
                                                                   "Pedoman Arsip Elektronik")
        entry = next(e for e in corpus.store.manifest() if e.document.doc_id == "x")
        provenance = entry.details["metadata_from"]
        for field in ("title", "authority", "published", "url", "domain"):
            assert provenance[field] == "sidecar", field
        assert entry.version == 1
        # only the sidecar changes: the document is ingested again (its source hash covers the sidecar)
        (src / "x.md.meta.yaml").write_text(SIDECAR.replace("authority: institutional", "authority: official"),
                                            encoding="utf-8")
        again = corpus.ingest([src])
        assert again.ingested == [str((src / "x.md").resolve())]
        assert again.unchanged == [str((src / "z.md").resolve())]
        assert [Path(e.path).name for e in again.errors] == ["y.md.meta.yaml"]
        entry = next(e for e in corpus.store.manifest() if e.document.doc_id == "x")
        assert entry.document.authority == "official" and entry.version == 2
        (chunk,) = corpus.store.doc_chunks("x")
        assert chunk.authority == "official"
        assert again.embedded == 0  # same title and text: the vectors stand
        # a new title is part of what the dense lane embeds (embedding_text): the vectors are redone
        (src / "x.md.meta.yaml").write_text(SIDECAR.replace("authority: institutional", "authority: official")
                                            .replace("title: ", "title: Pedoman Baru "), encoding="utf-8")
        retitled = corpus.ingest([src])
        (chunk,) = corpus.store.doc_chunks("x")
        assert retitled.embedded == 1 and chunk.title.startswith("Pedoman Baru")
        stored = corpus.dense._client.get(corpus.dense.collection, ids=[chunk.chunk_id], output_fields=["vector"])
        expected = asyncio.run(FakeHashEmbedder().embed_passages([embedding_text(chunk)]))[0]
        assert np.allclose(stored[0]["vector"], expected, atol=1e-5)
        corpus.check()


# ------------------------------------------------------------------ 4. delete

PP = """PERATURAN PEMERINTAH REPUBLIK INDONESIA
NOMOR 34 TAHUN 2011
TENTANG
PENGELOLAAN GUDANG NEGARA

Pasal 1
Gudang negara dikelola oleh unit pengelola yang ditunjuk oleh menteri yang membidangi keuangan negara.

Pasal 2
{provision}

Pasal 3
Pelanggaran atas kewajiban sebagaimana dimaksud dalam Pasal 2 dikenai sanksi administratif berupa teguran tertulis.
"""
SHARED = ("Setiap unit pengelola gudang negara wajib mencatat barang yang masuk dan keluar dalam buku persediaan "
          "harian, melakukan pemeriksaan fisik paling sedikit sekali dalam setiap semester, dan melaporkan selisih "
          "persediaan kepada pejabat pengawas internal dalam waktu tujuh hari kerja sejak selisih ditemukan.")
REFERRER = """PERATURAN MENTERI KEUANGAN REPUBLIK INDONESIA
NOMOR 12 TAHUN 2020
TENTANG
PENYIMPANAN BARANG SITAAN

Pasal 1
Penyimpanan barang sitaan mengikuti ketentuan Pasal 2 Peraturan Pemerintah Nomor 34 Tahun 2011 tentang Pengelolaan Gudang Negara.

Pasal 2
Barang sitaan yang mudah rusak dapat dilelang lebih awal atas izin kepala kantor wilayah.
"""
COPY = f"""---
id: salinan
title: Himpunan Ketentuan Gudang
---

Pasal 5
{SHARED}
"""


def write_delete_sources(src: Path) -> None:
    src.mkdir()
    (src / "pp-34-2011.md").write_text(PP.format(provision=SHARED), encoding="utf-8")
    (src / "pmk-12-2020.md").write_text(REFERRER, encoding="utf-8")
    (src / "salinan.md").write_text(COPY, encoding="utf-8")


def test_deleting_a_document_removes_it_everywhere_and_unresolves_references_to_it(tmp_path, profile):
    src = tmp_path / "src"
    write_delete_sources(src)
    with Corpus(tmp_path / "data", profile, embedder=FakeHashEmbedder()) as corpus:
        report = corpus.ingest([src])
        assert len(report.ingested) == 3 and not report.errors
        pp = corpus.store.document("pp-34-2011")
        assert pp.cite_as == "PP 34/2011"
        gone = {c.chunk_id for c in corpus.store.doc_chunks("pp-34-2011")}
        pasal_2 = next(c for c in corpus.store.doc_chunks("pp-34-2011") if c.location == "Pasal 2")
        # before: the other regulation's reference resolves into it, its own reference resolves,
        # it shares a provision with the compilation, and every lane holds its chunks
        (incoming,) = corpus.store.references("pmk-12-2020")
        assert (incoming.status, incoming.target_doc, incoming.target_chunk) == (
            "resolved", "pp-34-2011", pasal_2.chunk_id)
        assert [r.status for r in corpus.store.references("pp-34-2011")] == ["resolved"]
        (pair,) = corpus.store.near_duplicates()
        assert {pair[2], pair[3]} == {"pp-34-2011", "salinan"} and pair[4] >= 0.8
        assert corpus.dense.present(sorted(gone)) == gone and gone <= lexical_ids(corpus)
        rendition = Path(pp.rendition)
        others = [Path(d.rendition) for d, _ in corpus.store.documents() if d.doc_id != "pp-34-2011"]

        assert corpus.delete("pp-34-2011") is True
        assert corpus.store.document("pp-34-2011") is None
        assert not corpus.store.get(gone) and corpus.store.doc_chunks("pp-34-2011") == []
        assert corpus.dense.present(sorted(gone)) == set() and corpus.dense.count() == corpus.store.count()
        assert not gone & lexical_ids(corpus)
        assert corpus.store.references("pp-34-2011") == []
        with sqlite3.connect(corpus.store.path) as db:
            assert db.execute("SELECT COUNT(*) FROM xrefs WHERE doc_id = ? OR chunk_id IN (%s)"
                              % ",".join("?" * len(gone)), ("pp-34-2011", *gone)).fetchone()[0] == 0
        assert corpus.store.near_duplicates() == [] and corpus.store.near_duplicates("salinan") == []
        assert not rendition.exists() and all(p.is_file() for p in others)
        assert sorted(p.name for p in (corpus.data_dir / TEXTS_DIR).iterdir()) == sorted(p.name for p in others)
        (incoming,) = corpus.store.references("pmk-12-2020")
        assert incoming.status == "unresolved" and incoming.target_chunk is None
        assert incoming.reason == "document not in the corpus: PP 34/2011"
        corpus.check()
        assert corpus.delete("pp-34-2011") is False  # already gone: nothing to do
        corpus.check()


def test_saksi_corpus_ls_show_xrefs_rm(tmp_path, profile, capsys):
    """The command line over a corpus embedded with the profile's own (lite) embedder."""
    src = tmp_path / "src"
    write_delete_sources(src)
    data = tmp_path / "data"
    with Corpus(data, profile) as corpus:
        assert len(corpus.ingest([src]).ingested) == 3
    capsys.readouterr()

    def run(*args: str) -> tuple[int, str, str]:
        code = saksi(["corpus", *args, "--data-dir", str(data)])
        out = capsys.readouterr()
        return code, out.out, out.err

    code, out, _ = run("ls")
    assert code == 0 and out.startswith(f"{data}: 3 documents")
    assert "pp-34-2011" in out and "PP 34/2011" in out and "PENGELOLAAN GUDANG NEGARA" in out
    code, out, _ = run("ls", "--json")
    rows = {r["doc_id"]: r for r in json.loads(out)}
    assert rows["pp-34-2011"]["version"] == 1 and rows["pp-34-2011"]["pasal"] == 3
    code, out, _ = run("show", "pp 34/2011")  # by citation name, any case
    assert code == 0 and out.startswith("PP 34/2011 — PENGELOLAAN GUDANG NEGARA")
    assert "cited by 1 passages elsewhere" in out and "near-duplicate passages shared with salinan: 1" in out
    code, out, _ = run("xrefs")
    assert code == 0
    line = next(ln for ln in out.splitlines() if "Peraturan Pemerintah Nomor 34 Tahun 2011" in ln)
    assert line.split()[0] == "resolved" and "PMK 12/2020 › Pasal 1" in line and "→ PP 34/2011 › Pasal 2 [" in line
    code, out, _ = run("xrefs", "PMK 12/2020", "--json")
    (row,) = json.loads(out)
    assert (row["status"], row["target_doc"], row["target"]) == ("resolved", "pp-34-2011", "PP 34/2011 › Pasal 2")

    code, out, err = run("rm", "PP 34/2011")
    assert code == 0, err
    assert out.startswith("removed PP 34/2011 (pp-34-2011)")
    code, out, _ = run("ls")
    assert code == 0 and out.startswith(f"{data}: 2 documents") and "pp-34-2011" not in out
    assert "1 unresolved references" in out
    code, out, _ = run("xrefs", "--status", "unresolved")
    assert "(document not in the corpus: PP 34/2011)" in out
    code, _, err = run("show", "pp-34-2011")
    assert code == 2 and "no document 'pp-34-2011'" in err
    with Corpus(data, profile) as corpus:
        corpus.check()  # reading needs no model: the state names the embedder and its dimension
        assert corpus.store.near_duplicates() == []


def test_saksi_corpus_rm_never_leaves_the_store_and_indexes_apart(tmp_path, profile, capsys):
    """`corpus rm` on a corpus embedded with another model than the profile's (here the hash
    embedder; in practice a corpus built with --profile gpu and removed from with the default
    lite profile): it may remove the document or refuse, but the store and the indexes must
    still agree afterwards, and the exit code must say which happened."""
    src = tmp_path / "src"
    write_delete_sources(src)
    data = tmp_path / "data"
    with Corpus(data, profile, embedder=FakeHashEmbedder()) as corpus:
        corpus.ingest([src])
    code = saksi(["corpus", "rm", "pp-34-2011", "--data-dir", str(data)])
    err = capsys.readouterr().err
    with Corpus(data, profile, embedder=FakeHashEmbedder()) as corpus:
        still_there = corpus.store.document("pp-34-2011") is not None
        assert still_there == (code != 0), err
        corpus.check()


# ------------------------------------------------------------------ 5. atomic replace

class PausingConnection:
    """A sqlite3 connection that stops inside `replace_document`'s transaction, after the old
    chunks were deleted and before the new ones are inserted, until told to go on."""

    def __init__(self, db: sqlite3.Connection):
        self._db = db
        self.paused = threading.Event()
        self.resume = threading.Event()

    def __getattr__(self, name):
        return getattr(self._db, name)

    def __enter__(self):
        return self._db.__enter__()

    def __exit__(self, *exc):
        return self._db.__exit__(*exc)

    def executemany(self, sql: str, rows):
        if sql.lstrip().upper().startswith("INSERT INTO CHUNKS"):
            self.paused.set()
            if not self.resume.wait(20):
                raise TimeoutError("the reader never let the writer go on")
        return self._db.executemany(sql, rows)


def test_a_reader_sees_the_old_version_or_the_new_one_never_half(tmp_path, profile):
    src = tmp_path / "src"
    src.mkdir()
    path = src / "tarif.md"
    old_text = ("Pasal 1\nKetentuan umum tarif layanan uji mutu barang.\n\n"
                "Pasal 2\nTarif uji mutu barang ditetapkan per sampel yang diuji.\n\n"
                "Pasal 3\nTarif dibayar sebelum sampel diuji di laboratorium.\n")
    path.write_text(old_text, encoding="utf-8")
    data = tmp_path / "data"
    preparer = DocumentPreparer(profile, data)
    store = ChunkStore(data)
    try:
        old = preparer.prepare(path)
        store.replace_document(old.document, old.chunks, old.tokens, "rules", old.source_hash, old.manifest,
                               old.references)
        old_ids = {c.chunk_id for c in old.chunks}
        path.write_text(old_text + "\nPasal 4\nTarif dapat ditinjau kembali setiap tahun anggaran.\n\n"
                                   "Pasal 5\nPeninjauan tarif diumumkan kepada publik melalui laman resmi.\n",
                        encoding="utf-8")
        new = preparer.prepare(path)
        new_ids = {c.chunk_id for c in new.chunks}
        assert len(old_ids) == 3 and len(new_ids) == 5 and old_ids < new_ids

        pausing = PausingConnection(store._db)
        store._db = pausing
        failure: list[BaseException] = []

        def write() -> None:
            try:
                store.replace_document(new.document, new.chunks, new.tokens, "rules", new.source_hash,
                                       new.manifest, new.references)
            except BaseException as e:  # noqa: BLE001 - reported by the test below
                failure.append(e)

        writer = threading.Thread(target=write, daemon=True)
        reader = sqlite3.connect(store.path, timeout=20)
        try:
            writer.start()
            assert pausing.paused.wait(20), f"the writer never reached the insert: {failure}"
            # mid-transaction: the old chunks are deleted in the writer's view, not in anyone else's
            during = {r[0] for r in reader.execute("SELECT chunk_id FROM chunks WHERE doc_id = ?",
                                                    (old.document.doc_id,)).fetchall()}
            version, n = reader.execute("SELECT version, n_chunks FROM documents WHERE doc_id = ?",
                                        (old.document.doc_id,)).fetchall()[0]
            assert during == old_ids and (version, n) == (1, 3)
        finally:
            pausing.resume.set()
            writer.join(20)
        assert not writer.is_alive() and not failure, failure
        after = {r[0] for r in reader.execute("SELECT chunk_id FROM chunks WHERE doc_id = ?",
                                               (old.document.doc_id,)).fetchall()}
        version, n = reader.execute("SELECT version, n_chunks FROM documents WHERE doc_id = ?",
                                    (old.document.doc_id,)).fetchall()[0]
        assert after == new_ids and (version, n) == (2, 5)
        reader.close()
    finally:
        store._db = getattr(store._db, "_db", store._db)
        store.close()


# ------------------------------------------------------------------ 6. near-duplicate versions

PROVISION = ("Setiap penyelenggara pelatihan vokasi wajib menyimpan daftar hadir peserta, materi ajar, dan hasil "
             "evaluasi pelatihan paling singkat 5 (lima) tahun sejak pelatihan selesai dilaksanakan, serta "
             "menyerahkan salinannya kepada dinas ketenagakerjaan setempat apabila diminta secara tertulis.")


def _version(doc_id: str, published: str, opening: str) -> str:
    return (f"---\nid: {doc_id}\nauthority: official\npublished: {published}\n---\n\n"
            f"Pasal 1\n{opening}\n\nPasal 2\n{PROVISION}\n")


def test_the_same_provision_in_two_versions_stays_citable_newest_first(tmp_path, profile):
    src = tmp_path / "src"
    src.mkdir()
    assert len(PROVISION.split()) >= 30
    (src / "reg-2025.md").write_text(_version("reg-2025", "2025-01-01", "Ketentuan ini menggantikan "
                                              "ketentuan pelatihan sebelumnya secara menyeluruh."), encoding="utf-8")
    (src / "reg-2019.md").write_text(_version("reg-2019", "2019-01-01", "Ketentuan ini mengatur pelatihan "
                                              "vokasi pada lembaga milik pemerintah."), encoding="utf-8")
    (src / "kendaraan.md").write_text("# Kendaraan Dinas\n\nPemeliharaan kendaraan dinas dilakukan setiap enam "
                                      "bulan oleh bengkel resmi.\n", encoding="utf-8")
    with Corpus(tmp_path / "data", profile, embedder=FakeHashEmbedder()) as corpus:
        corpus.ingest([src])
        new = next(c for c in corpus.store.doc_chunks("reg-2025") if c.location == "Pasal 2")
        old = next(c for c in corpus.store.doc_chunks("reg-2019") if c.location == "Pasal 2")
        (pair,) = corpus.store.near_duplicates()
        assert set(pair[:2]) == {new.chunk_id, old.chunk_id} and set(pair[2:4]) == {"reg-2025", "reg-2019"}
        assert pair[4] >= 0.8
        assert catalog.show(corpus, "reg-2019")["near_duplicates"] == [{"doc_id": "reg-2025", "passages": 1}]
        assert catalog.show(corpus, "reg-2025")["near_duplicates"] == [{"doc_id": "reg-2019", "passages": 1}]
        assert catalog.show(corpus, "kendaraan")["near_duplicates"] == []

        result, trace = ask(corpus, "Berapa lama penyelenggara pelatihan vokasi wajib menyimpan daftar hadir "
                                    "peserta?")
        attempt = trace.parts[0].attempts[0]
        context = list(attempt.context)
        assert new.chunk_id in context and old.chunk_id in context
        assert context.index(new.chunk_id) < context.index(old.chunk_id)
        assert attempt.reranked.index(new.chunk_id) < attempt.reranked.index(old.chunk_id)
        assert {i.chunk_id for i in attempt.generator_request.context} >= {new.chunk_id, old.chunk_id}
        versions = [c for c in attempt.candidates if c.chunk.chunk_id in (new.chunk_id, old.chunk_id)]
        assert len(versions) == 2 and all(c.dropped is None for c in versions)
        marked = [c for c in versions if c.near_duplicate_of]
        assert len(marked) == 1
        assert {marked[0].chunk.chunk_id, marked[0].near_duplicate_of} == {new.chunk_id, old.chunk_id}
        # either version may be cited; the answer stands on the passage
        assert result.outcome == "answer", result.reason
        receipts = [x for c in result.claims if c.status == "supported" for x in c.citations]
        assert receipts and all(x.ok for x in receipts)
        assert {x.chunk_id for x in receipts} <= {new.chunk_id, old.chunk_id}
        assert receipts[0].chunk_id == new.chunk_id


# ------------------------------------------------------------------ 7. cross-references into context

KEBUN = """---
id: kebun-benih
authority: official
published: 2023-05-01
---

PERATURAN MENTERI PERTANIAN
NOMOR 4 TAHUN 2023
TENTANG
KEBUN BENIH

Pasal 1
(1) Peraturan ini mengatur kebun benih di seluruh wilayah provinsi.
(2) Kebun benih sumber adalah lahan bersertifikat tempat pohon induk unggul dipelihara untuk menghasilkan biji bermutu.

Pasal 2
Pendaftaran lahan dilakukan melalui sistem daring kementerian sesuai Peraturan Pemerintah Nomor 34 Tahun 2011.

Pasal 3
Pemilik kebun benih sumber sebagaimana dimaksud dalam Pasal 1 ayat (2) wajib memasang papan nama berwarna hijau di gerbang utama.
"""
KEBUN_QUESTION = "Apa yang wajib dipasang pemilik kebun benih sumber di gerbang utama?"


@pytest.fixture(scope="module")
def kebun(tmp_path_factory, profile):
    root = tmp_path_factory.mktemp("xrefs")
    (root / "src").mkdir()
    (root / "src" / "kebun-benih.md").write_text(KEBUN, encoding="utf-8")
    with Corpus(root / "data", profile, embedder=FakeHashEmbedder()) as corpus:
        assert len(corpus.ingest([root / "src"]).ingested) == 1
        chunks = {c.location: c for c in corpus.store.doc_chunks("kebun-benih")}
    return root / "data", chunks


def test_saksi_corpus_xrefs_lists_resolved_and_unresolved_references(kebun, capsys):
    data, chunks = kebun
    capsys.readouterr()
    assert saksi(["corpus", "xrefs", "--data-dir", str(data)]) == 0
    lines = capsys.readouterr().out.splitlines()
    internal = next(ln for ln in lines if '"Pasal 1 ayat (2)"' in ln)
    assert internal.split()[0] == "resolved" and "→ Pasal 1 ayat (2)" in internal
    assert f"[{chunks['Pasal 1'].chunk_id[:12]}]" in internal and "Pasal 3" in internal
    external = next(ln for ln in lines if "Peraturan Pemerintah Nomor 34 Tahun 2011" in ln)
    assert external.split()[0] == "unresolved" and "(document not in the corpus: PP 34/2011)" in external
    assert lines[-1] == "2 references, 1 resolved"
    assert saksi(["corpus", "xrefs", "--json", "--status", "resolved", "--data-dir", str(data)]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["target_chunk"], row["target"]) == (chunks["Pasal 1"].chunk_id, "Pasal 1 ayat (2)")


def _attempt_from_trace_file(result) -> dict:
    trace = json.loads(Path(result.trace_path).read_text(encoding="utf-8"))
    return trace["parts"][0]["attempts"][0]


def test_a_passage_the_context_refers_to_is_pulled_into_it(kebun, profile):
    """One context slot: the definition in Pasal 1 ayat (2) can only reach the generator because
    Pasal 3, which the question retrieves, refers to it."""
    data, chunks = kebun
    p1, p3 = chunks["Pasal 1"].chunk_id, chunks["Pasal 3"].chunk_id
    with Corpus(data, with_retrieval(profile, context_size=1), embedder=FakeHashEmbedder()) as corpus:
        result, _ = ask(corpus, KEBUN_QUESTION)
    attempt = _attempt_from_trace_file(result)
    assert attempt["context"] == [p3, p1]
    referenced = [c for c in attempt["candidates"] if c["referenced_from"]]
    assert [(c["chunk"]["chunk_id"], c["referenced_from"]) for c in referenced] == [(p1, p3)]
    # retrieval found Pasal 1 too, below the one-slot cut: it keeps its own lane and rerank scores
    assert referenced[0]["dense_score"] is not None and referenced[0]["lexical_score"] is not None
    assert [i["chunk_id"] for i in attempt["generator_request"]["context"]] == [p3, p1]
    assert p1 in attempt["paragraphs"]
    assert result.outcome == "answer", result.reason

    with Corpus(data, with_retrieval(profile, context_size=1, follow_references=0),
                embedder=FakeHashEmbedder()) as corpus:
        result, _ = ask(corpus, KEBUN_QUESTION)
    attempt = _attempt_from_trace_file(result)
    assert attempt["context"] == [p3]
    assert not any(c["referenced_from"] for c in attempt["candidates"])
    assert [i["chunk_id"] for i in attempt["generator_request"]["context"]] == [p3]


def test_the_trace_says_what_was_reranked_and_what_references_added(kebun, profile):
    """Retrieval finds Pasal 3 alone (one hit per lane); Pasal 1 reaches the context only through
    Pasal 3's reference. The trace lists it as referenced, never as reranked, with half its
    referrer's score and no lane scores."""
    data, chunks = kebun
    p1, p3 = chunks["Pasal 1"].chunk_id, chunks["Pasal 3"].chunk_id
    narrow = with_retrieval(profile, context_size=1, dense_k=1, lexical_k=1, top_k=1)
    with Corpus(data, narrow, embedder=FakeHashEmbedder()) as corpus:
        _, trace = ask(corpus, KEBUN_QUESTION)
    attempt = trace.parts[0].attempts[0]
    assert attempt.reranked == (p3,) and attempt.referenced == (p1,) and attempt.context == (p3, p1)
    by_id = {c.chunk.chunk_id: c for c in attempt.candidates}
    assert by_id[p1].referenced_from == p3 and by_id[p1].dense_score is None and by_id[p1].lexical_score is None
    assert by_id[p1].rerank_score == round(0.5 * by_id[p3].rerank_score, 6)


def test_a_passage_both_retrieved_and_referenced_is_one_candidate_in_the_trace(kebun, profile):
    """Pasal 1 is retrieved (ranked below the one-slot context) and then pulled in by Pasal 3's
    reference: the trace lists each chunk once, keeping the lane scores retrieval gave it."""
    data, chunks = kebun
    p1 = chunks["Pasal 1"].chunk_id
    with Corpus(data, with_retrieval(profile, context_size=1), embedder=FakeHashEmbedder()) as corpus:
        _, trace = ask(corpus, KEBUN_QUESTION)
    attempt = trace.parts[0].attempts[0]
    ids = [c.chunk.chunk_id for c in attempt.candidates]
    assert len(ids) == len(set(ids)), f"chunk listed {ids.count(p1)} times among the candidates"
    (entry,) = [c for c in attempt.candidates if c.chunk.chunk_id == p1]
    assert entry.referenced_from == chunks["Pasal 3"].chunk_id
    assert entry.dense_score is not None and entry.lexical_score is not None
