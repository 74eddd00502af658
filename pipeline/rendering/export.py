"""An answer as a working paper carries it: Markdown or DOCX, with its question, its date, the direct answer, every
claim with its band, standing and receipts (document title and status, citation path, the exact quote), the
conflicts, or the refusal with what is missing; and the trace id with the SHA-256 of the trace file the audit log
holds, so a reviewer can replay it (`saksi replay TRACE_ID`) and check it was not altered.

Only what the answer showed goes in: the same claims, in the same order, with the same receipts (contract 13).
"""
from __future__ import annotations

import io
from pathlib import Path

from .. import status
from ..types import CitedDocument, Result
from .answer_text import LABELS

WORDS = {
    "id": {"title": "Jawaban saksi", "question": "Pertanyaan", "direct": "Jawaban langsung", "claims": "Klaim",
           "receipts": "Bukti", "conflicts": "Sumber yang bertentangan", "refusal": "Tidak dapat dijawab",
           "missing": "Kategori bukti yang tidak ditemukan", "nearest": "Sumber terdekat",
           "trace": "Jejak", "sha": "SHA-256 berkas jejak (dicatat di log audit)",
           "replay": "Periksa ulang: saksi replay {id}", "document": "Dokumen", "confidence": "keyakinan",
           "unsupported": "Klaim tidak didukung (bukan jawaban)"},
    "en": {"title": "saksi answer", "question": "Question", "direct": "Direct answer", "claims": "Claims",
           "receipts": "Receipts", "conflicts": "Records that disagree", "refusal": "No answer",
           "missing": "Evidence categories not found", "nearest": "Nearest records",
           "trace": "Trace", "sha": "SHA-256 of the trace file (recorded in the audit log)",
           "replay": "Check again: saksi replay {id}", "document": "Document", "confidence": "confidence",
           "unsupported": "Claims not supported (not an answer)"},
}


def _doc_line(d: CitedDocument | None, lang: str) -> str:
    if d is None:
        return ""
    bits = [d.title or d.cite_as or d.doc_id]
    if d.published:
        bits.append(("terbit " if lang == "id" else "published ") + d.published)
    if d.effective:
        bits.append(("berlaku " if lang == "id" else "in force from ") + d.effective)
    if d.standing is not None:
        bits.append(status.standing_words(d.standing, lang))
    return " · ".join(bits)


def _sections(r: Result, trace_sha256: str | None, lang: str) -> list[tuple[str, list[str]]]:
    """The export's content as (heading, paragraphs), shared by both formats."""
    W, L = WORDS[lang], LABELS[lang]
    docs = {d.doc_id: d for d in r.documents}
    out: list[tuple[str, list[str]]] = [("", [f"{W['question']}: {r.question}"])]
    if r.as_of is not None:
        out[0][1].append(status.as_of_words(r.as_of, lang))
    if r.direct is not None:
        out.append((W["direct"], [r.direct.text]))
    supported = [c for c in r.claims if c.status == "supported"]
    if r.outcome == "refusal":
        lines = [r.reason or ""]
        if r.missing_categories:
            lines.append(f"{W['missing']}: {', '.join(r.missing_categories)}")
        lines += [f"{W['nearest']}: {n.path or n.document} ({n.score:.3f})" for n in r.nearest]
        out.append((W["refusal"], lines))
    for n, c in enumerate(supported, 1):
        conf = c.confidence
        head = f"[{n}] {L['band'][conf.band]} {conf.value:.2f} — {c.text}" if conf else f"[{n}] {c.text}"
        lines = [head]
        if c.standing is not None:
            lines.append(status.standing_words(c.standing, lang))
        seen: set[str] = set()
        for x in c.citations:
            lines.append(f"{x.path or x.document} [{x.chunk_id[:12]}]: “{x.quote}”")
            doc = _doc_line(docs.get(x.doc_id or ""), lang)
            if doc and x.doc_id not in seen:  # once per document and claim
                lines.append(f"{W['document']}: {doc}")
                seen.add(x.doc_id or "")
        out.append((f"{W['claims']} [{n}]", lines))
    if r.conflicts:
        out.append((W["conflicts"], [k.detail for k in r.conflicts]))
    demoted = [c for c in r.claims if c.status != "supported"]
    if demoted:
        out.append((W["unsupported"], [f"{c.text} ({'; '.join(c.reasons)})" for c in demoted]))
    trace = [f"{W['trace']}: {r.trace_id}"]
    if trace_sha256:
        trace.append(f"{W['sha']}: {trace_sha256}")
    trace.append(W["replay"].format(id=r.trace_id))
    out.append((W["trace"], trace))
    return out


def markdown(r: Result, trace_sha256: str | None, lang: str | None = None) -> str:
    lang = lang or r.lang
    parts = [f"# {WORDS[lang]['title']}", ""]
    for heading, lines in _sections(r, trace_sha256, lang):
        if heading:
            parts += [f"## {heading}", ""]
        for line in lines:
            parts += [_md(line), ""]
    return "\n".join(parts).rstrip() + "\n"


def _md(text: str) -> str:
    """A paragraph of Markdown that shows `text` as written (no emphasis, list or heading read into it)."""
    escaped = "".join("\\" + ch if ch in "\\`*_{}[]<>#|" else ch for ch in " ".join(text.split()))
    return escaped


def docx(r: Result, trace_sha256: str | None, lang: str | None = None) -> bytes:
    from docx import Document as Docx  # python-docx, a dependency

    lang = lang or r.lang
    doc = Docx()
    doc.add_heading(WORDS[lang]["title"], level=1)
    for heading, lines in _sections(r, trace_sha256, lang):
        if heading:
            doc.add_heading(heading, level=2)
        for line in lines:
            doc.add_paragraph(line)
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


FORMATS = {".md": "markdown", ".docx": "docx"}


def write(r: Result, path: Path, trace_sha256: str | None, lang: str | None = None) -> None:
    """The export in the format its file name says (.md or .docx)."""
    kind = FORMATS.get(path.suffix.lower())
    if kind == "docx":
        path.write_bytes(docx(r, trace_sha256, lang))
    elif kind == "markdown":
        path.write_text(markdown(r, trace_sha256, lang), encoding="utf-8")
    else:
        raise ValueError(f"{path.name}: an export is .md or .docx")
