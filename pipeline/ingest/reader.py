"""Read a source file: decode it, split off front matter, describe the document.

Offsets everywhere refer to the decoded file text exactly as read (line endings kept), so
every chunk and every quote is a slice of the file a reviewer can open.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ..errors import IngestError
from ..text import detect_language
from ..types import Document

SUPPORTED_SUFFIXES = (".md", ".markdown", ".txt")
_FRONT = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


class FrontMatter(BaseModel):
    """Document metadata a file may declare; unknown keys are kept out, not guessed at."""

    model_config = ConfigDict(extra="ignore")
    id: str | None = None
    title: str | None = None
    doc_type: str | None = None
    issuer: str | None = None
    authority: Literal["official", "primary", "institutional", "academic", "media", "unknown"] = "unknown"
    published: dt.date | None = None
    effective: dt.date | None = None
    lang: Literal["id", "en"] | None = None
    illustrative: bool = False
    url: str | None = None

    @field_validator("published", "effective", mode="before")
    @classmethod
    def _full_date(cls, v: object) -> object:
        if isinstance(v, int):
            raise ValueError("give a full date, YYYY-MM-DD (a bare year is ambiguous)")
        return v

    @field_validator("id")
    @classmethod
    def _slug(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", v):
            raise ValueError("id must be letters, digits, '.', '_' or '-' (at most 100)")
        return v


@dataclass(frozen=True)
class SourceFile:
    document: Document
    text: str        # the whole decoded file
    body_start: int  # where the content after front matter begins


def slugify(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-._").lower()
    return s[:100] or "document"


def read_source(path: Path) -> SourceFile:
    """Decode and describe one file; raise IngestError with a reason a user can act on."""
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise IngestError(str(path), f"unsupported file type {path.suffix or '(none)'} "
                                     f"(supported: {', '.join(SUPPORTED_SUFFIXES)})")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise IngestError(str(path), f"cannot read: {e.strerror or e}") from None
    if b"\x00" in data[:8192]:
        raise IngestError(str(path), "binary content (NUL bytes); expected UTF-8 text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise IngestError(str(path), f"not UTF-8 text (byte {e.start}: {e.reason})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    meta = FrontMatter()
    body_start = 0
    m = _FRONT.match(text)
    if m:
        try:
            raw = yaml.safe_load(m.group(1)) or {}
        except yaml.YAMLError as e:
            raise IngestError(str(path), f"front matter is not valid YAML: {str(e).splitlines()[0]}") from None
        if not isinstance(raw, dict):
            raise IngestError(str(path), "front matter must be a YAML mapping")
        try:
            meta = FrontMatter.model_validate(raw)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise IngestError(str(path), f"front matter field {where!r}: {first['msg']}") from None
        body_start = m.end()
    body = text[body_start:]
    if not body.strip():
        raise IngestError(str(path), "no text after front matter")
    title = meta.title
    if not title:
        h1 = _H1.search(body)
        title = h1.group(1) if h1 else path.stem
    document = Document(
        doc_id=meta.id or slugify(path.stem),
        title=title.strip(),
        path=str(path.resolve()),  # receipts must open from anywhere
        lang=meta.lang or detect_language(body),
        content_hash=hashlib.sha256(data).hexdigest(),
        doc_type=meta.doc_type,
        issuer=meta.issuer,
        authority=meta.authority,
        published=meta.published.isoformat() if meta.published else None,
        effective=meta.effective.isoformat() if meta.effective else None,
        illustrative=meta.illustrative,
        url=meta.url,
    )
    return SourceFile(document=document, text=text, body_start=body_start)


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
                problems.append(IngestError(str(p), "no .md, .markdown or .txt files in this directory"))
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            problems.append(IngestError(str(p), "no such file or directory"))
    return list(dict.fromkeys(files)), problems
