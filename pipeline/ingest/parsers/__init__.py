"""Turn a file of any supported format into plain text, before cleaning and chunking.

Each parser returns a `ParsedText`. Paged formats (PDF) separate pages with a form feed
("\\f") so cleaning can find running headers and page numbers page by page; a page with no
text layer is listed in `pages_without_text` (OCR is out of scope) and contributes an
empty page. A file that cannot be parsed raises IngestError naming the file and why.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...errors import IngestError


@dataclass(frozen=True)
class ParsedText:
    text: str                  # the extracted text; "\f" between pages for paged formats
    fmt: str                   # pdf | html | docx | markdown | text
    meta: dict = field(default_factory=dict)   # what the file declares: front matter, <title>/<meta>, core properties
    body_start: int = 0        # where content begins (after front matter)
    pages: int | None = None   # page count for paged formats
    pages_without_text: tuple[int, ...] = ()   # 1-based


PARSERS: dict[str, str] = {  # suffix -> format
    ".pdf": "pdf", ".html": "html", ".htm": "html", ".docx": "docx",
    ".md": "markdown", ".markdown": "markdown", ".txt": "text",
}
SUPPORTED_SUFFIXES = tuple(PARSERS)


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise IngestError(str(path), f"cannot read: {e.strerror or e}") from None


def parse_file(path: Path, data: bytes | None = None) -> ParsedText:
    """Parse one file by its suffix (`data`: its bytes, when already read); IngestError with an
    actionable reason otherwise."""
    fmt = PARSERS.get(path.suffix.lower())
    if fmt is None:
        raise IngestError(str(path), f"unsupported file type {path.suffix or '(none)'} "
                                     f"(supported: {', '.join(SUPPORTED_SUFFIXES)})")
    if data is None:
        data = read_bytes(path)
    if fmt == "pdf":
        from .pdf import parse_pdf
        return parse_pdf(path, data)
    if fmt == "html":
        from .html import parse_html
        return parse_html(path, data)
    if fmt == "docx":
        from .docx import parse_docx
        return parse_docx(path, data)
    from .text import parse_text
    return parse_text(path, data, fmt)
