"""How `saksi corpus` and `saksi ingest` show what a corpus holds, as readable text (their JSON:
the catalog's rows and pipeline/responses.py). The answer's text view is render.py."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..responses import DocumentRow


def _pages(pages: Sequence[int] | None, sep: str = ", ") -> str:
    if not pages:
        return ""
    return f"{sep}p. {pages[0]}" if pages[0] == pages[1] else f"{sep}pp. {pages[0]}–{pages[1]}"


def ingest_text(data_dir: Path, report) -> tuple[str, list[str]]:
    """The summary line (stdout) and the problems (stderr) of an IngestReport."""
    summary = (f"{data_dir}: {len(report.ingested)} ingested, {len(report.unchanged)} unchanged, "
               f"{len(report.errors)} skipped; corpus has {report.total_documents} documents, "
               f"{report.total_chunks} chunks ({report.embedded} newly embedded"
               + (f", {report.from_cache} of them known from the embedding cache" if report.from_cache else "") + ")")
    problems = [f"  skipped {e.path}: {e.reason}" for e in report.errors]
    problems += [f"  {path}: page(s) {', '.join(map(str, pages))} have no text layer (need OCR, not read)"
                 for path, pages in report.needs_ocr.items()]
    return summary, problems


def listing_text(data_dir: Path, rows: Sequence[DocumentRow]) -> str:
    """`saksi corpus ls`: one document per two lines."""
    lines = [f"{data_dir}: {len(rows)} documents, {sum(r.chunks for r in rows)} chunks"]
    for r in rows:
        extra = [f"v{r.version}", f"{r.chunks} chunks"]
        if r.pasal:
            extra.append(f"{r.pasal} Pasal")
        if r.pages_without_text:
            extra.append(f"pages needing OCR: {', '.join(map(str, r.pages_without_text))}")
        if r.unresolved_references:
            extra.append(f"{r.unresolved_references} unresolved references")
        if r.near_duplicates_with:
            extra.append(f"passages also in {', '.join(r.near_duplicates_with)}")
        lines.append(f"  {r.doc_id:<22} {r.cite_as or '—':<26} no. {r.number or '—':<6} {r.year or '—':<5} "
                     f"{r.title[:70]}\n  {'':<22} {r.doc_type or 'document'}, {r.authority}, {', '.join(extra)}")
    return "\n".join(lines)


_SHOWN_FIELDS = ("doc_id", "doc_type", "issuer", "number", "year", "authority", "published", "promulgated",
                 "effective", "lang", "url", "fmt", "pages", "original", "rendition")


def document_text(report: dict) -> str:
    """`saksi corpus show DOC`: metadata with where each field came from, manifest, outline, references."""
    d, m = report["document"], report["manifest"]
    lines = [f"{d['cite_as'] or d['doc_id']} — {d['title']}"]
    for k in _SHOWN_FIELDS:
        if d.get(k) not in (None, "", []):
            source = m.get("metadata_from", {}).get(k)
            lines.append(f"  {k:<12} {d[k]}{f'  ({source})' if source else ''}")
    lines.append(f"  version {m['version']}, {m['chunks']} chunks, {m.get('pasal', 0)} Pasal, "
                 f"ingested {m['ingested_at']}")
    if d["pages_without_text"]:
        lines.append(f"  pages without a text layer (need OCR, not read): {d['pages_without_text']}")
    lines.append("outline:")
    for o in report["outline"]:
        spans = f"  ({len(o['spans'])} ayat/huruf/angka)" if o["spans"] else ""
        lines.append(f"  {o['path']}{_pages(o['pages'], '  ')}{spans}")
    refs = report["references"]
    lines.append(f"references: {refs['resolved']} resolved, {refs['unresolved']} unresolved; "
                 f"cited by {len(refs['in'])} passages elsewhere")
    lines += [f"near-duplicate passages shared with {nd['doc_id']}: {nd['passages']}" for nd in report["near_duplicates"]]
    st = report["status"]
    lines.append(f"legal status on {st['standing']['on']}: {standing_text(st['standing'])}")
    lines += [f"  {edge_text(e)}" for e in st["ended_by"]]
    if st["ends"]:
        lines.append("it ends:")
        lines += [f"  {edge_text(e)}" for e in st["ends"]]
    return "\n".join(lines)


_ACTS = {"revokes": "revokes", "revokes_part": "revokes part of", "amends": "amends"}


def standing_text(s: dict) -> str:
    """"in force since 2025-04-01", "ended on 2025-04-01 by PMI 7/2025 › … › Pasal 9 › ayat (1)", …"""
    by = f" by {s['edge']['source_path']}" if s.get("edge") else ""
    if s["state"] == "in_force":
        since = f" since {s['since']}" if s["since"] else ""
        return f"in force{since} (no provision in this collection ends it)"
    if s["state"] == "not_yet":
        return f"not yet in force (from {s['until']})"
    if s["state"] == "ended":
        return f"ended on {s['until']}{by}"
    return f"unknown{by}: the collection cannot settle when or whether it ends"


def edge_text(e: dict) -> str:
    """One status edge with its receipt: who ends what, from when, and the words that say it."""
    when = f"from {e['date']}" if e["date"] else "date unknown (the source's effective date is not known)"
    where = "" if e["target_doc"] else " [not in this collection]"
    quote = " ".join(e["quote"].split())
    return f"{e['source_path']} {_ACTS[e['kind']]} {e['target_label']}{where}, {when}: \"{quote}\""


def status_text(rows: Sequence[dict]) -> str:
    """`saksi corpus status`: each revocation or amendment with its receipt and the standing of what it ends."""
    lines = [edge_text(r) + (f"\n    → {r['target_label']}: {standing_text(r['target_standing'])}"
                             if r["target_standing"] else "") for r in rows]
    lines.append(f"{len(rows)} status statements, {sum(1 for r in rows if r['target_doc'])} about documents in this "
                 "collection")
    return "\n".join(lines)


def xrefs_text(rows: Sequence[dict]) -> str:
    """`saksi corpus xrefs`: one reference per line, resolved to its target or with the reason it is not."""
    lines = []
    for r in rows:
        where = r["target_chunk"][:12] if r["target_chunk"] else (r["target_doc"] or "")
        tail = f"→ {r['target']} [{where}]" if r["status"] == "resolved" else f"({r['reason']})"
        lines.append(f"  {r['status']:<10} {r['from']}: \"{r['text']}\" {tail}")
    lines.append(f"{len(rows)} references, {sum(r['status'] == 'resolved' for r in rows)} resolved")
    return "\n".join(lines)
