"""Read a source file of any supported format into a document and its text rendition.

parse (format) → clean (layout noise, with a map back to the original) → describe
(metadata the document states, then what the file declares, then a sidecar YAML).

The *rendition* is the cleaned text every chunk is an exact slice of, and what quotes are
checked against. The corpus stores it beside the indexes (texts/), so a receipt opens from
anywhere; `origin`/`page` on each chunk lead back to the original file.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import IngestError
from ..types import Document
from .clean import CleanText, clean_text
from .metadata import DocumentMeta, describe, read_sidecar, sidecar_for
from .parsers import SUPPORTED_SUFFIXES, ParsedText, parse_file, read_bytes


@dataclass(frozen=True)
class SourceFile:
    document: Document
    text: str            # the rendition: the cleaned body every chunk slices
    clean: CleanText     # maps rendition offsets to the parsed text (and its pages)
    body_start: int      # where the rendition's source begins in the parsed text (after front matter)
    meta: DocumentMeta   # the merged metadata and where each field came from
    source_hash: str     # sha256 of the file bytes and its sidecar: what incremental ingest compares

    def origin(self, start: int, end: int) -> tuple[int, int] | None:
        """Offsets in the original file's text (text formats only; a PDF has pages instead)."""
        if self.document.fmt not in ("markdown", "text"):
            return None
        a, b = self.clean.source_span(start, end)
        return a + self.body_start, b + self.body_start

    def pages(self, start: int, end: int) -> tuple[int, int] | None:
        first, last = self.clean.page_of(start), self.clean.page_of(max(start, end - 1))
        if first is None and self.document.pages == 1:  # one page: no break to count from
            return 1, 1
        return (first, last) if first is not None and last is not None else None

    def page_breaks(self, start: int, end: int) -> tuple[int, ...]:
        """Offsets within [start, end), relative to start, where a new page begins."""
        return tuple(p - start for p in self.clean.pages if start < p < end)


def slugify(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-._").lower()
    return s[:100] or "document"


def source_hash(path: Path) -> str:
    """What decides whether a file changed: its bytes and its sidecar's, if any."""
    side = sidecar_for(path)
    return _digest(read_bytes(path), read_bytes(side) if side else None)


def _digest(data: bytes, sidecar: bytes | None) -> str:
    h = hashlib.sha256(data)
    if sidecar is not None:
        h.update(b"\x00sidecar\x00" + sidecar)
    return h.hexdigest()


def read_source(path: Path) -> SourceFile:
    """Parse, clean and describe one file (read once); raise IngestError with a reason a user can act on."""
    data = read_bytes(path)
    side = sidecar_for(path)
    digest = _digest(data, read_bytes(side) if side else None)
    parsed: ParsedText = parse_file(path, data)
    body = parsed.text[parsed.body_start:]
    extracted = True if parsed.fmt == "pdf" else None  # a PDF's text is always extracted layout
    clean = clean_text(body, extracted=extracted)
    if not clean.text.strip():
        raise IngestError(str(path), "no text after cleaning")
    meta = describe(path, clean.text, parsed.meta, read_sidecar(side) if side else None)
    f = meta.fields
    if meta.provenance.get("title") == "filename" and parsed.meta.get("file_title"):
        f["title"] = parsed.meta["file_title"]  # the file's own title property, when the text names none
        meta.provenance["title"] = "declared"
    document = Document(
        doc_id=f.get("id") or slugify(path.stem),
        title=str(f.get("title") or path.stem).strip(),
        original=str(path.resolve()),  # receipts must open from anywhere
        lang=f.get("lang") or "id",
        content_hash=hashlib.sha256(data).hexdigest(),
        doc_type=f.get("doc_type"), issuer=f.get("issuer"), authority=f.get("authority") or "unknown",
        published=f.get("published"), effective=f.get("effective"), illustrative=bool(f.get("illustrative")),
        url=f.get("url"), number=f.get("number"), year=f.get("year"), cite_as=f.get("cite_as"),
        promulgated=f.get("promulgated"), domain=f.get("domain"), fmt=parsed.fmt, pages=parsed.pages,
        pages_without_text=tuple(parsed.pages_without_text),
    )
    return SourceFile(document=document, text=clean.text, clean=clean, body_start=parsed.body_start,
                      meta=meta, source_hash=digest)


def expand_paths(paths: list[Path]) -> tuple[list[Path], list[IngestError]]:
    """Files to ingest under the given paths (directories recursively), and what was not found."""
    files: list[Path] = []
    problems: list[IngestError] = []
    for p in paths:
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SUPPORTED_SUFFIXES
                           and not any(part.startswith(".") for part in f.relative_to(p).parts)
                           and f.name.lower() != "readme.md")
            if not found:
                problems.append(IngestError(str(p), f"no supported files in this directory "
                                                    f"({', '.join(SUPPORTED_SUFFIXES)})"))
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            problems.append(IngestError(str(p), "no such file or directory"))
    return list(dict.fromkeys(files)), problems
