"""bench/mined_neighbours.py: which laws neighbour the mined bench's laws (a sentence nearly word for word as a gold
answer, names and figures aside; or naming one of them by number and year), and bad usage is one line and exit 2.
The sentences are written in the regional-formation laws' form; the places are fictional."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import file_module

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
nb = file_module("bench/mined_neighbours.py", "saksi_mined_neighbours")

GOVERNOR = ("Gubernur {} melakukan pembinaan, pengawasan, evaluasi, dan fasilitasi terhadap kinerja Penjabat Bupati {} "
            "dalam penyelenggaraan pemerintahan daerah.")


def test_a_law_writing_a_gold_answer_for_another_subject_neighbours_it_and_another_rule_does_not():
    answers = {"q1": "uu-1-2031.md\t" + GOVERNOR.format("Tanah Rekaan", "Sungai Fiktif")}
    sentences = [("uu-1-2031.md", GOVERNOR.format("Tanah Rekaan", "Sungai Fiktif")),  # the gold's own law
                 ("uu-2-2031.md", GOVERNOR.format("Laut Contoh", "Bukit Karangan")),
                 ("uu-3-2031.md", GOVERNOR.format("Laut Contoh", "Lembah Umpama")),
                 ("uu-4-2031.md", "Gubernur Laut Contoh menetapkan rencana tata ruang wilayah provinsi sesuai dengan "
                                  "ketentuan peraturan perundang-undangan."),
                 ("uu-5-2031.md", "Pembinaan dilakukan.")]
    assert nb.near_copies(answers, sentences, 0.85, 8) == {"uu-2-2031.md": {"q1"}, "uu-3-2031.md": {"q1"}}
    # only the closest sentences per question are kept (ties by citation, descending)
    assert nb.near_copies(answers, sentences, 0.85, 1) == {"uu-3-2031.md": {"q1"}}
    # a word the gold does not write, in place of one it does, lowers the ratio under a strict threshold
    changed = [("uu-2-2031.md", GOVERNOR.format("Laut Contoh", "Bukit Karangan").replace("kinerja", "kegiatan"))]
    assert nb.near_copies(answers, changed, 0.85, 8) == {"uu-2-2031.md": {"q1"}}
    assert nb.near_copies(answers, changed, 0.99, 8) == {}


def test_a_law_naming_one_of_the_laws_by_number_and_year_neighbours_it():
    texts = {"uu-7-2032.md": "Undang-Undang Nomor 1 Tahun 2031 tentang Pembentukan Kabupaten Sungai Fiktif diubah.",
             "uu-8-2032.md": "Undang-undang Republik Indonesia Nomor 2 Tahun 2031 dicabut.",
             "uu-9-2032.md": "Undang-Undang Nomor 11 Tahun 2031 dan Undang-Undang Nomor 1 Tahun 20315."}
    assert nb.citing(texts, ["UU 1/2031", "UU 2/2031"]) == {"uu-7-2032.md": ["UU 1/2031"],
                                                           "uu-8-2032.md": ["UU 2/2031"]}
    assert nb.cite_of("uu-13-2003.md") == "UU 13/2003"


def test_bad_usage_is_one_line_and_exit_2(tmp_path):
    script = str(ROOT / "bench" / "mined_neighbours.py")
    (tmp_path / "laws").mkdir()
    (tmp_path / "laws" / "order.txt").write_text("")
    for args, message in ((["--laws", str(tmp_path / "none")], "no laws directory"),
                          (["--laws", str(tmp_path / "laws"), "--archive", str(tmp_path / "none.tar.xz")],
                           "no archive"),
                          (["--laws", str(tmp_path / "laws"), "--embeddings-from", str(tmp_path / "none.sqlite3")],
                           "no embedding cache")):
        done = subprocess.run([sys.executable, script, *args, "--out", str(tmp_path / "o")], capture_output=True,
                              text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert not (tmp_path / "o").exists()
