"""Markdown and plain text: decode UTF-8 and split off YAML front matter."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from ...errors import IngestError
from . import ParsedText

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def decode_utf8(path: Path, data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise IngestError(str(path), "binary content (NUL bytes); expected UTF-8 text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise IngestError(str(path), f"not UTF-8 text (byte {e.start}: {e.reason})") from None
    return text[1:] if text.startswith("\ufeff") else text


def parse_text(path: Path, data: bytes, fmt: str) -> ParsedText:
    text = decode_utf8(path, data)
    meta: dict = {}
    body_start = 0
    m = _FRONT.match(text)
    if m:
        try:
            raw = yaml.safe_load(m.group(1)) or {}
        except yaml.YAMLError as e:
            raise IngestError(str(path), f"front matter is not valid YAML: {str(e).splitlines()[0]}") from None
        if not isinstance(raw, dict):
            raise IngestError(str(path), "front matter must be a YAML mapping")
        meta, body_start = raw, m.end()
    if not text[body_start:].strip():
        raise IngestError(str(path), "no text after front matter" if m else "empty file")
    return ParsedText(text=text, fmt=fmt, meta=meta, body_start=body_start)
