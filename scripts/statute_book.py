"""Lay out the statute book (../shared/data/peraturan/uu.tar.xz) as files `saksi bulk-ingest` can take.

The archive holds each law as `uu/<year>/<number>.md`, with no front matter. saksi names a document
without a declared id after its file's stem, so `uu/1951/23.md` and `uu/1953/23.md` would both be
`23` (the second is reported and skipped as a duplicate id). This writes each law flat as
`uu-<number>-<year>.md` (the id the project uses for a regulation: `pp-35-2021`, `pmk-098-2025`),
and nothing else of the text changes: what is cited is the archive's own text.

Beside each law goes a sidecar (`uu-11-2020.md.meta.yaml`) with the identity the archive's path
states: an Undang-Undang, its number and year, enacted by the DPR and the President, official. A
scanned heading is often illegible ("NOMOR 11 TAHUN 2O2O"), and a law saksi cannot name ("UU
11/2020") can neither be cited by name nor be found as the law that amends or revokes another.
Where saksi reads no title from the text (160 of the 1,535: a converter's header or a repeated preamble before
the heading), the sidecar gives the one the law's heading states ("CIPTA KERJA", found with the archive's number and
year), else "Undang-Undang Nomor N Tahun Y": never a subject the text does not state.

    python scripts/statute_book.py data/statute-book            # all 1,535 laws
    python scripts/statute_book.py data/statute-book --limit 50 # the first 50, by year then number

`order.txt` lists the files in the order to ingest them (`saksi bulk-ingest @data/statute-book/order.txt`),
the laws in FIRST first, so an interrupted run already holds them: the labour, social-security and civil-service laws the legal_qa
questions' regulations implement come first by default.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pipeline.text import SCANNED_YEAR, scanned_digits  # noqa: E402

SHARED_DATA = Path(os.environ.get("SAKSI_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
ARCHIVE = SHARED_DATA / "peraturan" / "uu.tar.xz"
# the parents and siblings of the legal_qa dev regulations (PP 34/2021, PP 35/2021, PP 44/2015,
# PP 94/2021): Manpower, Job Creation, industrial disputes, trade unions, migrant workers, SJSN,
# BPJS, civil service; then the tax and customs laws saksi's users ask about most
FIRST = ("uu-13-2003", "uu-11-2020", "uu-2-2004", "uu-21-2000", "uu-18-2017", "uu-39-2004", "uu-40-2004",
         "uu-24-2011", "uu-5-2014", "uu-43-1999", "uu-8-1974", "uu-28-2007", "uu-36-2008", "uu-42-2009",
         "uu-17-2006", "uu-39-2007", "uu-7-2021")
_MEMBER = re.compile(r"^uu/(\d{4})/(\d+[a-z]?)\.md$", re.IGNORECASE)


def law_id(member: str) -> str | None:
    """`uu/2007/28.md` → `uu-28-2007`; None for anything else in the archive."""
    m = _MEMBER.match(member)
    return f"uu-{m[2].lower()}-{m[1]}" if m else None


def lay_out(archive: Path, out: Path, limit: int | None = None, first: tuple[str, ...] = FIRST) -> list[Path]:
    """Write the laws under `out` (unchanged files are left as they are, so a re-run does not make
    bulk-ingest see new files); return them in ingest order, also written to out/order.txt."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tarfile.open(archive, "r:xz") as tar:
        members = [(law_id(m.name), m) for m in tar.getmembers() if m.isfile()]
        members = sorted(((i, m) for i, m in members if i), key=lambda im: (int(im[1].name.split("/")[1]),
                                                                           _number(im[0])))
        for doc_id, member in members[:limit] if limit else members:
            data = tar.extractfile(member).read()
            path = out / f"{doc_id}.md"
            _write_if_changed(path, data)
            meta = path.with_name(path.name + ".meta.yaml")
            identity = sidecar(member.name)
            had = meta.read_text(encoding="utf-8") if meta.exists() else ""
            if not had.startswith(identity) or had == identity:  # new, changed, or its title not yet looked at
                meta.write_text(identity, encoding="utf-8")
                # saksi reads no title: the one the heading states, else the law's number and year
                title = heading_title(data.decode("utf-8", "replace"), member.name) if _unnamed(path) else None
                meta.write_text(sidecar(member.name, title) if title else identity + _TITLE_READ, encoding="utf-8")
            written.append(path)
    rank = {name: k for k, name in enumerate(first)}
    ordered = sorted(written, key=lambda p: (rank.get(p.stem, len(rank)),))  # stable: the rest by year, number
    (out / "order.txt").write_text("".join(f"{p}\n" for p in ordered), encoding="utf-8")
    return ordered


def sidecar(member: str, title: str | None = None) -> str:
    """The identity of the law at `uu/<year>/<number>.md`, as saksi's sidecar YAML (pipeline/ingest/metadata.py);
    `title` where saksi cannot read one from the text."""
    m = _MEMBER.match(member)
    return (f"# from the archive's path ({member} in mblonyox/data-peraturan): the scanned heading may be illegible\n"
            f"doc_type: Undang-Undang\nissuer: Dewan Perwakilan Rakyat dan Presiden Republik Indonesia\n"
            f"number: \"{m[2].lower()}\"\nyear: {int(m[1])}\nauthority: official\n"
            + (f"title: {json.dumps(title, ensure_ascii=False)}\n" if title else ""))


_TITLE_READ = "# title: as saksi reads it from the heading\n"
# "UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 1 TAHUN 2009 TENTANG PENERBANGAN DENGAN RAHMAT …", wherever a converter's
# header or a repeated preamble put it before the heading
_HEADING = re.compile(r"UNDANG[-\s]*UNDANG(?:\s+REPUBLIK\s+INDONESIA)?\s+NOMOR\s+(?P<num>[0-9OoIl]+)\s+TAHUN\s+"
                      rf"(?P<year>{SCANNED_YEAR})\s+TENTANG\s+(?P<title>[^a-z]{{3,600}}?)\s*(?=DENGAN\s+RAHMAT|PRESIDEN\s+"
                      r"REPUBLIK|Menimbang|MENIMBANG|\n|$)")


def heading_title(text: str, member: str) -> str:
    """The title the law's own heading states (its number and year must be the archive's), as written; else
    "Undang-Undang Nomor N Tahun Y", its identity and nothing more."""
    m = _MEMBER.match(member)
    for h in _HEADING.finditer(text[:6000]):
        if scanned_digits(h["num"]) == m[2] and scanned_digits(h["year"]) == m[1]:
            return " ".join(h["title"].split()).rstrip(" ,.;:")
    return f"Undang-Undang Nomor {m[2].lower()} Tahun {int(m[1])}"


def _unnamed(path: Path) -> bool:
    """Whether saksi names the law after its file (it reads no title from the text)."""
    from pipeline.ingest.source import read_source  # the ingest's own reading, loaded only when a sidecar is written

    return read_source(path).meta.provenance.get("title") == "filename"


def _write_if_changed(path: Path, data: bytes) -> None:
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def _number(doc_id: str) -> tuple[int, str]:
    n = doc_id.split("-")[1]
    digits = re.match(r"\d+", n)
    return (int(digits[0]) if digits else 0, n)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path, help="directory for uu-<number>-<year>.md files and order.txt")
    p.add_argument("--archive", type=Path, default=ARCHIVE)
    p.add_argument("--limit", type=int, help="only the first N laws (by year, then number)")
    args = p.parse_args(argv)
    if not args.archive.exists():
        print(f"statute_book: no archive at {args.archive}", file=sys.stderr)
        return 2
    laws = lay_out(args.archive, args.out, args.limit)
    print(f"{len(laws)} laws in {args.out} (ingest order: {args.out / 'order.txt'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
