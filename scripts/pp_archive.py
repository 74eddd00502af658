"""Build the Government Regulations (PP) archive the reader is also trained on.

    .venv/bin/python scripts/pp_archive.py GIT_DIR [--commit c87e616] [--out training-data/pp.tar.xz]

GIT_DIR is a clone (or bare mirror) of github mblonyox/data-peraturan, the repository
`../shared/data/peraturan/uu.tar.xz` was taken from (commit c87e616). The archive holds
`pp/YYYY/N.md` for the PPs of `--from` (2010) to 2023, byte for byte as in that commit, in
name order, with fixed tar metadata (the same commit gives the same file), and a SOURCE
file naming the commit and what was left out:

- the PPs behind the held-out legal-QA questions (shared/data/README.md) and the four of
  the dev split: removed by their path, before any file is read;
- every PP whose title says it amends one of those ("PERUBAHAN [KEDUA] ATAS PERATURAN
  PEMERINTAH NOMOR 44 TAHUN 2015 …"): an amendment restates the amended Pasal.

`saksi train reader --regulations training-data/pp.tar.xz` mines it beside the laws (how the committed
reader weights were built: pipeline/answer_reader/weights/README.md).
"""
from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tarfile
from pathlib import Path

# shared/data/README.md: the held-out legal-QA regulations, then the dev split's
HELD_OUT = ("4/2015", "45/2015", "46/2015", "88/2019", "10/2020", "49/2020", "60/2020", "36/2021", "37/2021",
            "59/2021", "22/2022")
DEV = ("34/2021", "35/2021", "44/2015", "94/2021")
EXCLUDED = frozenset(HELD_OUT + DEV)

_PATH = re.compile(r"^pp/(\d{4})/(\w+)\.md$")
_AMENDS = re.compile(r"PERUBAHAN\s+(?:\w+\s+)?ATAS\s+PERATURAN\s+PEMERINTAH\s+(?:REPUBLIK\s+INDONESIA\s+)?"
                     r"NOMOR\s+([\dOoIl]+)\s+TAHUN\s+([\dOoIl]{4})", re.I)
_DIGIT = str.maketrans("OoIl", "0011")


def number_of(path: str) -> str | None:
    """"pp/2015/44.md" -> "44/2015"."""
    m = _PATH.match(path)
    return f"{m.group(2)}/{m.group(1)}" if m else None


def amended(text: str) -> set[str]:
    """The PPs a text's title says it amends ("44/2015"), OCR's O and l read as digits."""
    found = ((n.translate(_DIGIT), y.translate(_DIGIT)) for n, y in _AMENDS.findall(text[:800]))
    return {f"{int(n)}/{y}" for n, y in found if n.isdigit() and y.isdigit()}


def _git(git_dir: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], input=data, capture_output=True,
                          check=True).stdout


def build(git_dir: Path, commit: str, out: Path, first_year: int, last_year: int = 2023) -> dict:
    listing = _git(git_dir, "ls-tree", "-r", commit, "pp/").decode()
    paths = {}  # path -> blob, for the PPs of the years asked that are neither held out nor dev (never read)
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        number = number_of(path)
        if number and first_year <= int(number.split("/")[1]) <= last_year and number not in EXCLUDED:
            paths[path] = meta.split()[2]
    chosen = sorted(paths)
    blobs = _git(git_dir, "cat-file", "--batch", data="".join(paths[p] + "\n" for p in chosen).encode())
    texts, at = {}, 0
    for p in chosen:
        header_end = blobs.index(b"\n", at)
        size = int(blobs[at:header_end].split()[2])
        texts[p] = blobs[header_end + 1:header_end + 1 + size]
        at = header_end + 1 + size + 1
    amendments = sorted(p for p in chosen if amended(texts[p].decode("utf-8", "replace")) & EXCLUDED)
    kept = [p for p in chosen if p not in amendments]
    source = (f"github mblonyox/data-peraturan, commit {commit}: pp/{first_year}..{last_year}, {len(kept)} files.\n"
              f"Left out by path (held-out and dev legal-QA regulations): {', '.join(sorted(EXCLUDED))}.\n"
              f"Left out as amendments of those: {', '.join(amendments) or 'none'}.\n"
              "Statutes are not subject to copyright in Indonesia (UU 28/2014, Art. 42); the repository states no "
              "licence.\n").encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w:xz", format=tarfile.PAX_FORMAT) as tar:
        for name, data in [("SOURCE", source)] + [(p, texts[p]) for p in kept]:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode, info.uid, info.gid = len(data), 0, 0o644, 0, 0
            tar.addfile(info, io.BytesIO(data))
    return {"files": len(kept), "amendments_left_out": amendments}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("git_dir", type=Path, help="a clone or bare mirror of mblonyox/data-peraturan")
    p.add_argument("--commit", default="c87e616")
    p.add_argument("--from", dest="first", type=int, default=2010, help="first year (default 2010)")
    p.add_argument("--out", type=Path, default=Path("training-data/pp.tar.xz"))
    a = p.parse_args(argv)
    git_dir = a.git_dir / ".git" if (a.git_dir / ".git").is_dir() else a.git_dir
    try:
        got = build(git_dir, a.commit, a.out, a.first)
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        detail = e.stderr.decode(errors="replace").strip() if isinstance(e, subprocess.CalledProcessError) else str(e)
        print(f"pp_archive: cannot read commit {a.commit} of {a.git_dir} with git: {detail}", file=sys.stderr)
        return 2
    print(f"{a.out}: {got['files']} PPs; amendments left out: {', '.join(got['amendments_left_out']) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
