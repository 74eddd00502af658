"""PDF: the text layer, page by page, one line per visual line; no OCR.

pypdf's "layout" extraction is used because it keeps what sits on one visual line on one
line ("Menimbang : a. bahwa ...") and marks vertical gaps with blank lines, which the
chunker reads as paragraph breaks; "plain" mode splits separately drawn pieces of one line
apart. Layout mode pads lines with spaces to mimic columns, so every line is stripped and
runs of blank lines fold to one. It drops rotated text, so a page whose text is all
rotated (a landscape table in an appendix) and any page layout mode fails on fall back to
plain mode. Running headers, page numbers and hyphenation stay in: cleaning removes them.
"""
from __future__ import annotations

import io
import logging
import re
import unicodedata
from datetime import datetime
from pathlib import Path

from pypdf import PageObject, PdfReader
from pypdf.errors import DependencyError

from ...errors import IngestError
from . import ParsedText

log = logging.getLogger(__name__)

_BLANK_RUN = re.compile(r"\n{3,}")


def parse_pdf(path: Path, data: bytes) -> ParsedText:
    reader = _open(path, data)
    try:
        pages = list(reader.pages)
    except Exception as e:  # noqa: BLE001 - pypdf raises many types on malformed files
        raise IngestError(str(path), f"not a readable PDF: broken page tree ({_short(e)})") from None
    if not pages:
        raise IngestError(str(path), "not a readable PDF: it has no pages")
    texts = [_page_text(path, page, number) for number, page in enumerate(pages, 1)]
    without = tuple(number for number, text in enumerate(texts, 1) if not text)
    if len(without) == len(pages):
        failed = sum(text is None for text in texts)
        if failed:
            raise IngestError(str(path), f"not a readable PDF: text extraction failed on {failed} "
                                         f"of {len(pages)} pages and the rest have no text")
        raise IngestError(str(path), f"no text layer on any of {len(pages)} pages: "
                                     "scanned PDF; OCR is not supported")
    return ParsedText(text="\f".join(text or "" for text in texts), fmt="pdf", meta=_meta(path, reader),
                      pages=len(pages), pages_without_text=without)


def _open(path: Path, data: bytes) -> PdfReader:
    """A reader that is decrypted if it was encrypted with an empty user password."""
    if b"%PDF-" not in data[:1024]:
        raise IngestError(str(path), "not a readable PDF: no %PDF- header in the first 1024 bytes")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except DependencyError:
                raise IngestError(str(path), "encrypted PDF: decrypting it needs the 'cryptography' "
                                             "package (pip install cryptography)") from None
            if not opened:
                raise IngestError(str(path), "encrypted PDF: it needs a password; "
                                             "save an unprotected copy and ingest that") from None
    except IngestError:
        raise
    except Exception as e:  # noqa: BLE001 - pypdf raises many types on malformed files
        raise IngestError(str(path), f"not a readable PDF: {_short(e)}") from None
    return reader


def _page_text(path: Path, page: PageObject, number: int) -> str | None:
    """The page's text with layout padding removed; "" when the page has no text layer, None
    when pypdf cannot read it (the page is then listed as without text, with a warning)."""
    try:
        text = page.extract_text(extraction_mode="layout")
    except Exception as e:  # noqa: BLE001 - layout mode is experimental; plain mode is the fallback
        log.debug("%s: page %d: layout extraction failed (%s); using plain mode", path, number, _short(e))
        text = ""
    if not text.strip():
        try:
            text = page.extract_text()
        except Exception as e:  # noqa: BLE001 - one unreadable page must not lose the document
            log.warning("%s: page %d: text extraction failed (%s); listed as a page without text",
                        path, number, _short(e))
            return None
    text = unicodedata.normalize("NFC", text.replace("\x00", "").replace("\f", "\n"))
    lines = "\n".join(line.strip() for line in text.splitlines())
    return _BLANK_RUN.sub("\n\n", lines).strip("\n")


def _meta(path: Path, reader: PdfReader) -> dict:
    """Title, author, subject and the file's creation date from the document info.

    The title is `file_title` and the date `file_created`: a PDF's properties are often the
    authoring tool's ("Microsoft Word - draft3.docx"), so they only stand in when the text
    itself names no title, and never as a publication date."""
    try:
        info = reader.metadata
        if info is None:
            return {}
        meta = {"file_title": info.title, "author": info.author, "subject": info.subject}
        try:
            created = info.creation_date
        except ValueError:  # a date string pypdf cannot parse: leave it out
            created = None
    except Exception as e:  # noqa: BLE001 - metadata is optional; a broken info dict must not lose the text
        log.warning("%s: unreadable document info (%s); no metadata taken", path, _short(e))
        return {}
    if isinstance(created, datetime):
        meta["file_created"] = created.date().isoformat()
    return {key: value.strip() for key, value in meta.items() if isinstance(value, str) and value.strip()}


def _short(e: Exception) -> str:
    message = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {message[:120]}" if message else type(e).__name__
