"""File-format parsers: PDF text layer, HTML main content, DOCX body. Every fixture is built here."""
from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from pathlib import Path

import pytest
from docx import Document
from pypdf import PageObject, PdfReader, PdfWriter
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from pipeline.errors import IngestError
from pipeline.ingest.parsers import parse_file
from pipeline.ingest.parsers.docx import parse_docx
from pipeline.ingest.parsers.html import parse_html
from pipeline.ingest.parsers.pdf import parse_pdf

pytestmark = pytest.mark.unit

# --------------------------------------------------------------------------- PDF

PAGE_1 = ["Pasal 1", "Dalam Peraturan Menteri ini yang dimaksud dengan:",
          "1. Pajak adalah kontribusi wajib kepada negara.", "2. Wajib Pajak adalah orang pribadi atau badan."]
PAGE_3 = ["Pasal 2", "Peraturan Menteri ini mulai berlaku pada tanggal diundangkan."]


def _pdf(pages: list[list[str] | None], title: str = "PMK Nomor 1 Tahun 2024") -> bytes:
    """A PDF with a text layer on each page given as lines; None is a page with only a drawing,
    like a scanned page. `invariant` fixes the creation date at 2000-01-01."""
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=A4, invariant=1)
    pdf.setTitle(title)
    pdf.setAuthor("Kementerian Keuangan")
    pdf.setSubject("Ketentuan umum perpajakan")
    width, height = A4
    for number, lines in enumerate(pages, 1):
        if lines is None:
            pdf.rect(72, 200, 400, 500, fill=1)
            pdf.line(72, 100, 500, 100)
        else:
            pdf.setFont("Helvetica", 11)
            pdf.drawCentredString(width / 2, height - 40, "PERATURAN MENTERI KEUANGAN")
            y = height - 90
            for line in lines:
                pdf.drawString(72, y, line)
                y -= 16
            if number == 1:  # two separately drawn pieces on one visual line
                pdf.drawString(72, y - 16, "Menimbang")
                pdf.drawString(160, y - 16, ": a. bahwa untuk melaksanakan ketentuan Pasal 5")
            pdf.drawCentredString(width / 2, 40, f"- {number} -")
        pdf.showPage()
    pdf.save()
    return buf.getvalue()


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_pdf_pages_lines_and_meta():
    parsed = parse_pdf(Path("pmk.pdf"), _pdf([PAGE_1, None, PAGE_3]))
    assert parsed.fmt == "pdf"
    assert parsed.pages == 3
    assert parsed.pages_without_text == (2,)
    assert parsed.text.count("\f") == 2
    first, second, third = parsed.text.split("\f")
    assert second == ""
    # running header and page number stay: removing them is the cleaning step's job
    *body, same_line, page_number = _lines(first)
    assert body == ["PERATURAN MENTERI KEUANGAN", *PAGE_1]
    assert page_number == "- 1 -"
    # what sits on one visual line stays on one line (layout extraction), its gap kept as spaces
    assert re.fullmatch(r"Menimbang\s+: a\. bahwa untuk melaksanakan ketentuan Pasal 5", same_line)
    assert _lines(third) == ["PERATURAN MENTERI KEUANGAN", *PAGE_3, "- 3 -"]
    assert parsed.meta == {"file_title": "PMK Nomor 1 Tahun 2024", "author": "Kementerian Keuangan",
                           "subject": "Ketentuan umum perpajakan", "file_created": "2000-01-01"}


def test_pdf_without_any_text_layer_is_refused_naming_ocr():
    with pytest.raises(IngestError, match=r"no text layer on any of 2 pages.*OCR"):
        parse_pdf(Path("scan.pdf"), _pdf([None, None]))


@pytest.mark.parametrize("cut", [b"not a pdf", b"", "first-300-bytes"])
def test_pdf_corrupt_or_truncated_is_an_ingest_error(cut):
    data = _pdf([PAGE_1])[:300] if cut == "first-300-bytes" else cut
    with pytest.raises(IngestError, match="not a readable PDF") as err:
        parse_pdf(Path("bad.pdf"), data)
    assert err.value.path == "bad.pdf"


def test_pdf_page_that_pypdf_cannot_read_is_a_page_without_text(monkeypatch, caplog):
    data = _pdf([PAGE_1, PAGE_3])
    original = PageObject.extract_text

    def fails_on_page_3_text(page, *args, **kwargs):
        text = original(page, *args, **kwargs)
        if "Pasal 2" in text:
            raise KeyError("/Font")
        return text

    monkeypatch.setattr(PageObject, "extract_text", fails_on_page_3_text)
    parsed = parse_pdf(Path("pmk.pdf"), data)
    assert parsed.pages_without_text == (2,)
    assert parsed.text.endswith("\f") and "Pasal 1" in parsed.text
    assert "page 2: text extraction failed (KeyError: '/Font')" in caplog.text
    # when no page at all yields text and some failed, the file is unreadable, not "scanned"
    def always_fails(page, *args, **kwargs):
        raise KeyError("/Font")

    monkeypatch.setattr(PageObject, "extract_text", always_fails)
    with pytest.raises(IngestError, match="not a readable PDF: text extraction failed on 2 of 2 pages"):
        parse_pdf(Path("pmk.pdf"), data)


def _encrypted(user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(_pdf([PAGE_1]))))
    writer.encrypt(user_password=user_password, owner_password="pemilik", algorithm="RC4-128")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def test_pdf_encrypted_with_empty_user_password_opens():
    assert "Pasal 1" in _lines(parse_pdf(Path("enc.pdf"), _encrypted("")).text)


def test_pdf_needing_a_password_is_refused():
    with pytest.raises(IngestError, match="encrypted PDF"):
        parse_pdf(Path("enc.pdf"), _encrypted("rahasia"))


def test_pdf_through_parse_file(tmp_path):
    good, bad = tmp_path / "pmk.PDF", tmp_path / "rusak.pdf"
    good.write_bytes(_pdf([PAGE_1, PAGE_3]))
    bad.write_bytes(b"%PDF-1.7\n garbage")
    parsed = parse_file(good)
    assert (parsed.fmt, parsed.pages, parsed.pages_without_text) == ("pdf", 2, ())
    assert "Pasal 2" in parsed.text.split("\f")[1]
    with pytest.raises(IngestError, match="not a readable PDF") as err:
        parse_file(bad)
    assert err.value.path == str(bad)


# --------------------------------------------------------------------------- HTML

PAGE = """<!doctype html>
<html lang="id-ID"><head><meta charset="utf-8">
<title>PMK 1 Tahun 2024 | JDIH Kemenkeu</title>
<link rel="canonical" href="https://jdih.example.go.id/pmk-1-2024">
<meta property="article:published_time" content="2024-01-31T08:00:00+07:00">
<meta name="author" content="Biro Hukum"><meta name="description" content="Ketentuan umum pajak">
<script>var tracker = "SCRIPTTEXT";</script><style>.x { color: red }</style>
</head><body>
<header><a href="/">LOGO JDIH</a></header>
<nav><ul><li>Beranda NAVTEXT</li><li>Peraturan</li></ul></nav>
<div class="cookie-banner">Situs ini memakai COOKIETEXT.</div>
<aside class="sidebar"><h2>Berita Terkait</h2><p>SIDEBARTEXT</p></aside>
<main>
  <h1>Peraturan Menteri Keuangan Nomor 1 Tahun 2024</h1>
  <h2>Pasal 1</h2>
  <p>Dalam   Peraturan Menteri ini
     yang dimaksud dengan <b>Pajak</b> adalah kontribusi sebesar Rp<b>1.250.000</b>.<br>Baris kedua.</p>
  <ol><li>Wajib Pajak adalah orang pribadi.</li><li><p>Badan adalah sekumpulan orang.</p></li></ol>
  <table><tr><th>a</th><th>b</th></tr><tr><td>PPh</td><td>10%</td></tr></table>
  <div class="share-buttons">Bagikan SHARETEXT</div>
</main>
<footer>Hak cipta FOOTERTEXT</footer>
</body></html>"""


def test_html_main_content_structure_and_meta():
    parsed = parse_html(Path("pmk.html"), PAGE.encode())
    text = parsed.text
    for noise in ("LOGO JDIH", "NAVTEXT", "COOKIETEXT", "SIDEBARTEXT", "Berita Terkait", "SCRIPTTEXT",
                  "color: red", "SHARETEXT", "FOOTERTEXT"):
        assert noise not in text
    assert text.split("\n\n") == [
        "# Peraturan Menteri Keuangan Nomor 1 Tahun 2024",
        "## Pasal 1",
        "Dalam Peraturan Menteri ini yang dimaksud dengan Pajak adalah kontribusi sebesar Rp1.250.000.\n"
        "Baris kedua.",
        "1. Wajib Pajak adalah orang pribadi.",
        "2. Badan adalah sekumpulan orang.",
        "a | b\nPPh | 10%",
    ]
    assert (parsed.fmt, parsed.pages) == ("html", None)
    assert parsed.meta == {"title": "PMK 1 Tahun 2024 | JDIH Kemenkeu", "lang": "id",
                           "url": "https://jdih.example.go.id/pmk-1-2024", "published": "2024-01-31",
                           "author": "Biro Hukum", "description": "Ketentuan umum pajak"}


def test_html_without_main_falls_back_to_body_minus_boilerplate():
    page = """<html lang="en"><head><meta name="date" content="2023/07/05"></head><body>
    <header class="site-header">SITEHEADER</header>
    <div id="main-menu"><a>MENUTEXT</a></div><div class="breadcrumb">Home &gt; BREADTEXT</div>
    <div class="content"><h3>Section 5</h3><p>The tax rate is 11 percent.</p>
      <ul start="3"><li>first item</li><li>second item</li></ul></div>
    <div class="social-links">SOCIALTEXT</div><form><input name="q"><button>SEARCHTEXT</button></form>
    <div id="footer">FOOTERTEXT</div></body></html>"""
    parsed = parse_html(Path("page.htm"), page.encode())
    assert parsed.text == "### Section 5\n\nThe tax rate is 11 percent.\n\n- first item\n\n- second item"
    assert parsed.meta == {"lang": "en", "published": "2023-07-05"}  # no <title>, no <h1>


def test_html_article_header_is_content_but_the_site_header_is_not():
    page = """<html><body><header><h1>SITE NAME</h1></header>
    <article><header class="entry-header"><h1>Judul Artikel</h1></header><p>Isi artikel.</p>
    <footer>Ditulis oleh redaksi.</footer></article></body></html>"""
    parsed = parse_html(Path("a.html"), page.encode())
    assert parsed.text == "# Judul Artikel\n\nIsi artikel.\n\nDitulis oleh redaksi."
    assert parsed.meta == {"title": "Judul Artikel"}


def test_html_ordered_list_start_and_declared_charset():
    page = ('<html><head><meta charset="windows-1252"></head><body><main><p>Caf\xe9 \x93kutipan\x94</p>'
            '<ol start="4"><li>empat</li><li>lima</li></ol></main></body></html>').encode("latin-1")
    assert parse_html(Path("old.html"), page).text == "Caf\u00e9 \u201ckutipan\u201d\n\n4. empat\n\n5. lima"


@pytest.mark.parametrize("page", [
    b"",
    b"<html><head><title>Kosong</title></head><body>  </body></html>",
    b"<html><body><nav>Beranda</nav><script>x()</script><footer>Hak cipta</footer></body></html>",
])
def test_html_without_main_content_is_refused(page):
    with pytest.raises(IngestError, match="no main content found in the HTML page"):
        parse_html(Path("empty.html"), page)


def test_html_binary_garbage_is_refused():
    garbage = b"<html><body><p>" + bytes(range(1, 32)) * 40 + b"</p></body></html>"
    with pytest.raises(IngestError, match="does not decode to text"):
        parse_html(Path("blob.html"), garbage)


# --------------------------------------------------------------------------- DOCX


def _docx() -> bytes:
    doc = Document()
    doc.add_heading("Peraturan Menteri Keuangan", level=0)
    doc.add_heading("BAB I KETENTUAN UMUM", level=1)
    doc.add_heading("Pasal 1", level=2)
    doc.add_paragraph("Dalam Peraturan Menteri ini yang dimaksud dengan:")
    doc.add_paragraph("")
    doc.add_paragraph("Pajak adalah kontribusi wajib.", style="List Number")
    doc.add_paragraph("Wajib Pajak adalah orang pribadi.", style="List Bullet")
    table = doc.add_table(rows=3, cols=3)
    for r, row in enumerate([("Jenis", "Tarif", "Dasar"), ("PPh", "10%", "bruto")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(2, 0).merge(table.cell(2, 2)).text = "Catatan gabungan"
    doc.add_paragraph("Peraturan ini berlaku sejak diundangkan.")
    props = doc.core_properties
    props.title, props.author, props.subject = "PMK 1/2024", "Kemenkeu", "Pajak"
    props.created = dt.datetime(2024, 1, 31, 9, 30)
    props.language = "id-ID"
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def test_docx_body_in_document_order_with_headings_lists_and_table():
    parsed = parse_docx(Path("pmk.docx"), _docx())
    assert parsed.text.split("\n\n") == [
        "# Peraturan Menteri Keuangan",
        "# BAB I KETENTUAN UMUM",
        "## Pasal 1",
        "Dalam Peraturan Menteri ini yang dimaksud dengan:",
        "- Pajak adalah kontribusi wajib.",
        "- Wajib Pajak adalah orang pribadi.",
        "Jenis | Tarif | Dasar\nPPh | 10% | bruto\nCatatan gabungan",
        "Peraturan ini berlaku sejak diundangkan.",
    ]
    assert (parsed.fmt, parsed.pages) == ("docx", None)
    assert parsed.meta == {"title": "PMK 1/2024", "author": "Kemenkeu", "subject": "Pajak",
                           "language": "id", "file_created": "2024-01-31"}


def test_docx_through_parse_file(tmp_path):
    path = tmp_path / "pmk.docx"
    path.write_bytes(_docx())
    assert parse_file(path).text.startswith("# Peraturan Menteri Keuangan\n\n# BAB I")


def _zip_without_document() -> bytes:
    source = zipfile.ZipFile(io.BytesIO(_docx()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:
        for item in source.infolist():
            if item.filename != "word/document.xml":
                out.writestr(item.filename, source.read(item))
    return buf.getvalue()


@pytest.mark.parametrize(("make", "reason"), [
    (lambda: b"PK\x03\x04 but not really a zip" * 20, "not a readable DOCX"),
    (lambda: bytes(range(256)) * 4, "not a readable DOCX"),
    (_zip_without_document, "not a readable DOCX.*word/document.xml"),
    (lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500), r"legacy Word 97-2003 \(\.doc\)"),
])
def test_docx_unreadable_is_an_ingest_error(make, reason):
    with pytest.raises(IngestError, match=reason):
        parse_docx(Path("bad.docx"), make())


def test_docx_without_text_is_refused():
    doc = Document()
    doc.add_paragraph("   ")
    doc.add_table(rows=1, cols=2)
    buf = io.BytesIO()
    doc.save(buf)
    with pytest.raises(IngestError, match="no text in the document"):
        parse_docx(Path("kosong.docx"), buf.getvalue())
