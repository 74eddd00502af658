"""scripts/statute_book.py: the statute book laid out as files whose names are the laws' ids."""
from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.unit

SCRIPT = ROOT / "scripts" / "statute_book.py"


def _archive(path: Path, members: dict[str, str]) -> Path:
    with tarfile.open(path, "w:xz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_laws_with_the_same_number_in_different_years_keep_apart(tmp_path):
    archive = _archive(tmp_path / "uu.tar.xz", {
        "uu/1953/23.md": "UNDANG-UNDANG NOMOR 23 TAHUN 1953\n", "uu/1951/23.md": "UNDANG-UNDANG NOMOR 23 TAHUN 1951\n",
        "uu/2003/13.md": "UNDANG-UNDANG NOMOR 13 TAHUN 2003\n", "uu/1951/4.md": "UNDANG-UNDANG NOMOR 4 TAHUN 1951\n",
        "uu/README.txt": "not a law"})
    out = tmp_path / "laws"
    done = _run(str(out), "--archive", str(archive))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.glob("*.md")) == ["uu-13-2003.md", "uu-23-1951.md", "uu-23-1953.md", "uu-4-1951.md"]
    assert (out / "uu-23-1951.md").read_text() == "UNDANG-UNDANG NOMOR 23 TAHUN 1951\n"  # the archive's bytes
    # the order bulk-ingest is given: the laws named first (UU 13/2003 here), then by year and number
    assert (out / "order.txt").read_text().split() == [str(out / n) for n in
                                                       ("uu-13-2003.md", "uu-4-1951.md", "uu-23-1951.md", "uu-23-1953.md")]
    # a second run leaves the files as they are (bulk-ingest sees nothing changed)
    before = {p.name: p.stat().st_mtime_ns for p in out.glob("*.md")}
    assert _run(str(out), "--archive", str(archive)).returncode == 0
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.md")} == before


def test_each_law_is_named_by_its_place_in_the_archive_when_its_heading_is_illegible(tmp_path):
    from pipeline.ingest.source import read_source

    archive = _archive(tmp_path / "uu.tar.xz", {
        "uu/2020/11.md": "Menimbang UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 11 TAHUN 2O2O TENTANG CIPTA KERJA\n\n"
                         "Pasal 1\nDalam Undang-Undang ini yang dimaksud dengan: 1. Cipta Kerja adalah upaya.\n",
        "uu/2003/13.md": "UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 13 TAHUN 2003 TENTANG KETENAGAKERJAAN\n\n"
                         "Pasal 1\nDalam undang-undang ini yang dimaksud dengan: 1. Ketenagakerjaan adalah hal.\n"})
    out = tmp_path / "laws"
    assert _run(str(out), "--archive", str(archive)).returncode == 0
    assert (out / "uu-11-2020.md.meta.yaml").is_file()
    illegible = read_source(out / "uu-11-2020.md")
    assert (illegible.document.cite_as, illegible.document.doc_type, illegible.document.year) == \
        ("UU 11/2020", "Undang-Undang", 2020)
    assert illegible.document.authority == "official" and illegible.meta.provenance["number"] == "sidecar"
    legible = read_source(out / "uu-13-2003.md")
    assert legible.document.cite_as == "UU 13/2003" and legible.document.doc_id == "uu-13-2003"
    # a heading saksi does not find (after "Menimbang") still names the law: its title as the heading writes it
    assert illegible.document.title == "CIPTA KERJA" and illegible.meta.provenance["title"] == "sidecar"
    assert legible.document.title == "KETENAGAKERJAAN" and legible.meta.provenance["title"] == "document"


def test_a_law_without_a_readable_heading_is_titled_by_its_identity_and_nothing_more(tmp_path):
    from pipeline.ingest.source import read_source

    archive = _archive(tmp_path / "uu.tar.xz", {
        # a converter's header before the heading, and a heading naming another law first
        "uu/1983/1.md": "_UU No 1 th 1983_ Compiled by: Yayasan. Mengingat Undang-Undang Nomor 4 Tahun 1960 tentang "
                        "Perairan; UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 1 TAHUN 1983 TENTANG PENGESAHAN PERJANJIAN "
                        "ANTARA REPUBLIK INDONESIA DAN MALAYSIA\nDENGAN RAHMAT TUHAN YANG MAHA ESA\n\nPasal 1\nIsi.\n",
        "uu/1949/1.md": "a. bahwa hingga sekarang pendapatan dikecualikan dari pajak;\n\nPasal 1\nIsi.\n"})
    out = tmp_path / "laws"
    assert _run(str(out), "--archive", str(archive)).returncode == 0
    assert read_source(out / "uu-1-1983.md").document.title == \
        "PENGESAHAN PERJANJIAN ANTARA REPUBLIK INDONESIA DAN MALAYSIA"
    assert read_source(out / "uu-1-1949.md").document.title == "Undang-Undang Nomor 1 Tahun 1949"
    # looked at once: a second run rewrites nothing
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("*.yaml")}
    assert _run(str(out), "--archive", str(archive)).returncode == 0
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("*.yaml")} == before


def test_limit_and_a_missing_archive(tmp_path):
    archive = _archive(tmp_path / "uu.tar.xz", {f"uu/1950/{n}.md": f"law {n}\n" for n in (1, 2, 10)})
    assert _run(str(tmp_path / "two"), "--archive", str(archive), "--limit", "2").returncode == 0
    assert sorted(p.name for p in (tmp_path / "two").glob("*.md")) == ["uu-1-1950.md", "uu-2-1950.md"]
    assert sorted(p.name for p in (tmp_path / "two").glob("*.meta.yaml")) == ["uu-1-1950.md.meta.yaml",
                                                                             "uu-2-1950.md.meta.yaml"]
    missing = _run(str(tmp_path / "none"), "--archive", str(tmp_path / "absent.tar.xz"))
    assert missing.returncode == 2 and "no archive" in missing.stderr
