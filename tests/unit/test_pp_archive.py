"""The Government Regulations archive the reader also mines (scripts/pp_archive.py): the held-out
and dev legal-QA regulations and their amendments are left out, the rest is kept byte for byte,
the same commit gives the same file, and the mining reads its members as PPs."""
from __future__ import annotations

import subprocess
import tarfile

import pytest

from pipeline.ingest.chunker import Chunker
from pipeline.answer_reader.mining import read_laws

from ..conftest import file_module

pytestmark = pytest.mark.unit

pp_archive = file_module("scripts/pp_archive.py", "saksi_pp_archive")

KEPT = """PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 2 TAHUN 2016 TENTANG PENGELOLAAN ARSIP PERCOBAAN
Pasal 1
Dalam Peraturan Pemerintah ini yang dimaksud dengan Arsip Percobaan adalah rekaman kegiatan dalam berbagai bentuk.
Pasal 2
(1) Arsip Percobaan wajib disimpan paling lama 10 (sepuluh) tahun oleh lembaga negara.
(2) Penyimpanan sebagaimana dimaksud pada ayat (1) dilaksanakan oleh unit kearsipan.
"""
DEV = "PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 44 TAHUN 2015 TENTANG JAMINAN KECELAKAAN KERJA\nPasal 1\n..."
AMENDMENT = ("PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 1 TAHUN 2016 TENTANG PERUBAHAN ATAS PERATURAN "
             "PEMERINTAH NOMOR 44 TAHUN 2Ol5 TENTANG JAMINAN KECELAKAAN KERJA\nPasal I\n...")
OLD = "PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 5 TAHUN 2009 TENTANG LAMA\nPasal 1\n..."


@pytest.fixture()
def repo(tmp_path):
    work = tmp_path / "data-peraturan"
    for path, text in {"pp/2016/2.md": KEPT, "pp/2015/44.md": DEV, "pp/2016/1.md": AMENDMENT,
                       "pp/2009/5.md": OLD, "uu/2016/3.md": KEPT}.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text, encoding="utf-8")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "pp"], check=True)
    commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    return work / ".git", commit


def test_the_archive_leaves_out_held_out_and_dev_regulations_and_their_amendments(repo, tmp_path):
    git_dir, commit = repo
    out = tmp_path / "pp.tar.xz"
    got = pp_archive.build(git_dir, commit, out, first_year=2010)
    with tarfile.open(out) as tar:
        names = tar.getnames()
        kept = tar.extractfile("pp/2016/2.md").read().decode()
        source = tar.extractfile("SOURCE").read().decode()
    assert names == ["SOURCE", "pp/2016/2.md"]          # not the dev PP, its amendment, a PP before 2010, a UU
    assert kept == KEPT and got == {"files": 1, "amendments_left_out": ["pp/2016/1.md"]}
    assert commit in source and "44/2015" in source and "pp/2016/1.md" in source
    again = tmp_path / "again.tar.xz"
    pp_archive.build(git_dir, commit, again, first_year=2010)
    assert again.read_bytes() == out.read_bytes()


def test_an_amendment_is_known_by_its_title_through_ocr_noise():
    assert pp_archive.amended(AMENDMENT) == {"44/2015"}
    assert pp_archive.amended("… TENTANG PERUBAHAN KEDUA ATAS PERATURAN PEMERINTAH NOMOR 46 TAHUN 2015 …") == {"46/2015"}
    assert pp_archive.amended(KEPT) == set()
    assert pp_archive.number_of("pp/2021/35.md") == "35/2021" and pp_archive.number_of("uu/2021/35.md") is None


def test_the_mining_reads_a_pp_member_as_a_government_regulation(repo, tmp_path):
    git_dir, commit = repo
    out = tmp_path / "pp.tar.xz"
    pp_archive.build(git_dir, commit, out, first_year=2010)
    laws = list(read_laws(out, Chunker(1500)))
    assert [(law.name, law.cite) for law in laws] == [("pp/2016/2.md", "PP 2/2016")]
    assert any("Pasal 2" in c.location for c in laws[0].chunks)


def test_a_folder_that_is_not_the_repository_is_a_clear_error(tmp_path, capsys):
    assert pp_archive.main([str(tmp_path / "nowhere"), "--out", str(tmp_path / "pp.tar.xz")]) == 2
    assert "cannot read commit c87e616" in capsys.readouterr().err and not (tmp_path / "pp.tar.xz").exists()
