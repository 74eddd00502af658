"""DOCX: the body's paragraphs and tables in document order, headings as "#" lines.

Headers, footers, comments and footnotes are not part of the body and are not read.
Automatic list numbering is not rendered: every list item gets "- ". Word computes the
numbers from numbering definitions, restarts and overrides; a number rendered wrongly
("ayat (3)" for ayat (4)) would pass the number check as if the document said it.
Numbers typed into the text are kept as they are.
"""
from __future__ import annotations

import io
import logging
import re
import unicodedata
from datetime import datetime
from pathlib import Path

from docx import Document
from docx.table import Table
from docx.text.paragraph import Paragraph

from ...errors import IngestError
from . import ParsedText

log = logging.getLogger(__name__)

_HEADING = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # legacy .doc (Word 97-2003) container


MAX_INFLATED = 256 * 1024 * 1024  # what a DOCX's parts may inflate to, all together
MAX_PARTS = 10_000


def _check_zip(path: Path, data: bytes) -> None:
    """A DOCX is a zip: its parts' sizes are read from the zip's directory before any is inflated (zipfile then never
    inflates a part past its recorded size), so a zip bomb is refused without being opened."""
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            parts = z.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise IngestError(str(path), f"not a readable DOCX: {type(e).__name__}: {str(e)[:120]}") from None
    inflated = sum(p.file_size for p in parts)
    if len(parts) > MAX_PARTS or inflated > MAX_INFLATED:
        raise IngestError(str(path), f"not a readable DOCX: its {len(parts)} parts would inflate to "
                                     f"{inflated / 1e6:,.0f} MB (at most {MAX_INFLATED / 1e6:,.0f} MB in "
                                     f"{MAX_PARTS:,} parts)")


def parse_docx(path: Path, data: bytes) -> ParsedText:
    if data.startswith(_OLE_MAGIC):
        raise IngestError(str(path), "not a readable DOCX: this is a legacy Word 97-2003 (.doc) file; "
                                     "save it as .docx and ingest that")
    _check_zip(path, data)
    try:
        document = Document(io.BytesIO(data))
        blocks = [block for item in document.iter_inner_content()
                  if (block := _paragraph(item) if isinstance(item, Paragraph) else _table(item))]
    except Exception as e:  # noqa: BLE001 - zipfile, lxml and python-docx raise many types on bad files
        message = str(e).splitlines()[0][:120] if str(e) else ""
        raise IngestError(str(path), f"not a readable DOCX: {type(e).__name__}"
                                     + (f": {message}" if message else "")) from None
    text = unicodedata.normalize("NFC", "\n\n".join(blocks).replace("\x00", ""))
    if not text.strip():
        raise IngestError(str(path), "no text in the document")
    return ParsedText(text=text, fmt="docx", meta=_meta(path, document))


def _paragraph(paragraph: Paragraph) -> str:
    """One block: "#" lines for Title/Heading N, "- " for list items, "" for an empty paragraph."""
    text = paragraph.text.strip()
    if not text:
        return ""
    style = (paragraph.style.name or "") if paragraph.style is not None else ""
    if style.lower() == "title":
        return "# " + text
    heading = _HEADING.match(style)
    if heading:
        return "#" * min(int(heading[1]), 6) + " " + text
    p_pr = paragraph._p.pPr
    if "list" in style.lower() or (p_pr is not None and p_pr.numPr is not None):
        return "- " + text
    return text


def _table(table: Table) -> str:
    """One line per row, cells joined by " | "; a merged cell is written once per row."""
    rows = []
    for row in table.rows:
        cells, previous = [], None
        for cell in row.cells:
            if cell._tc is previous:  # python-docx repeats a horizontally merged cell once per grid column
                continue
            previous = cell._tc
            cells.append(" ".join(cell.text.split()))
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def _meta(path: Path, document) -> dict:
    """Title, author, subject, language (id/en) and the file's created date from core properties.

    The created date is `file_created`, not `published`: it is when the file was made (python-docx's
    own template says 2013), not when the document was issued."""
    try:
        core = document.core_properties
        meta = {"title": core.title, "author": core.author, "subject": core.subject}
        language = (core.language or "").strip().lower()[:2]
        created = core.created
    except Exception as e:  # noqa: BLE001 - metadata is optional; a broken docProps part must not lose the text
        log.warning("%s: unreadable core properties (%s); no metadata taken", path, type(e).__name__)
        return {}
    if language in ("id", "en"):
        meta["language"] = language
    if isinstance(created, datetime):
        meta["file_created"] = created.date().isoformat()
    return {key: value.strip() for key, value in meta.items() if isinstance(value, str) and value.strip()}
