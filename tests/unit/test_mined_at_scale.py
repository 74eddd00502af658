"""bench/mined_at_scale.py's dataset: questions mined from the validate tenth's laws only, each with its law and the
Pasal of its gold passage as the reference, the laws' files written beside it with a sidecar naming each, a reference
`saksi eval` reads without skipping; bad usage is one line and exit 2."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from pipeline.answer_reader.training import law_part
from pipeline.eval.datasets import load_dataset

from ..conftest import file_module

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]

PP = """PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR {n} TAHUN 2030 TENTANG PENGGUNAAN TENAGA KERJA PERCOBAAN

BAB I
KETENTUAN UMUM

Pasal 1
Dalam Peraturan Pemerintah ini yang dimaksud dengan:
1. Tenaga Kerja Percobaan yang selanjutnya disingkat TKP adalah warga negara pemegang izin kerja percobaan.
2. Pemberi Kerja adalah badan hukum yang mempekerjakan tenaga kerja dengan membayar upah.

Pasal 2
(1) Pemberi Kerja wajib melaporkan penggunaan TKP kepada Menteri setiap tahun.
(2) Laporan sebagaimana dimaksud pada ayat (1) disampaikan paling lama 30 (tiga puluh) hari kerja sejak akhir tahun.

Pasal 3
Izin penggunaan TKP diterbitkan oleh Menteri paling lama 5 (lima) hari kerja sejak permohonan diterima.

Pasal 4
Peraturan Pemerintah ini mulai berlaku pada tanggal diundangkan.
"""


bench = file_module("bench/mined_at_scale.py", "saksi_mined_at_scale")


def _archive(path: Path, numbers: list[int]) -> None:
    with tarfile.open(path, "w:xz") as tar:
        for n in numbers:
            data = PP.format(n=n).encode()
            info = tarfile.TarInfo(f"pp/2030/{n}.md")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_only_the_validate_laws_are_asked_each_at_the_pasal_of_its_gold(tmp_path):
    numbers = list(range(1, 41))
    validate = [n for n in numbers if law_part(f"pp/2030/{n}.md") == "validate"]
    assert validate and len(validate) < len(numbers)  # the fixture holds laws of both kinds
    archive = tmp_path / "pp.tar.xz"
    _archive(archive, numbers)
    laws = bench.mined_laws(archive, min_questions=3)
    assert sorted(int(law.name.split("/")[-1][:-3]) for law, _ in laws) == validate
    assert all(q.pattern != "chapter" for _, qs in laws for q in qs)
    drawn = bench.draw(laws, 2, seed=0)
    assert [law.name for law, _ in drawn] == [law.name for law, _ in bench.draw(laws, 2, seed=0)]  # seeded
    out = tmp_path / "out"
    n = bench.write_dataset(out, drawn, archive, None)
    rows = [json.loads(line) for line in (out / "mined.jsonl").read_text(encoding="utf-8").splitlines()]
    assert n == len(rows) == sum(len(qs) for _, qs in drawn)
    for law, qs in drawn:
        where = {c.chunk_id: c.location for c in law.chunks}
        for q in qs:
            row = next(r for r in rows if r["id"] == q.qid)
            pasal = where[q.chunk_id].split("Pasal ")[1].split()[0]
            assert row["reference"]["law"] == law.cite and row["reference"]["pasal"] == [pasal]
            assert row["corpus"] == "laws" and row["answers"] == [q.answer]
            assert row["gold_location"] == where[q.chunk_id]  # where its standing in the statute book is read
        file = out / "laws" / bench.member_file(law.name)
        assert file.read_text(encoding="utf-8").startswith("PERATURAN PEMERINTAH")
        side = file.with_name(file.name + ".meta.yaml").read_text(encoding="utf-8")
        assert "doc_type: Peraturan Pemerintah" in side and "year: 2030" in side
    assert sorted(p.name for p in (out / "laws").glob("*.md")) == sorted(bench.member_file(law.name)
                                                                           for law, _ in drawn)
    loaded = load_dataset(out / "mined.jsonl")
    assert not loaded.skipped and len(loaded.questions) == n
    assert {q.reference.law for q in loaded.questions} == {law.cite for law, _ in drawn}


def test_a_passage_of_several_ayat_is_referenced_by_its_pasal_alone():
    law = SimpleNamespace(name="pp/2030/7.md", chunks=[SimpleNamespace(chunk_id="c1", location="Pasal 2 › ayat (8–10)"),
                                                    SimpleNamespace(chunk_id="c2", location="Pasal 3 › ayat (2)")])
    assert bench.reference(law, SimpleNamespace(chunk_id="c1")) == {"law": "PP 7/2030", "pasal": ["2"], "ayat": None,
                                                                    "huruf": None}
    assert bench.reference(law, SimpleNamespace(chunk_id="c2"))["ayat"] == "2"
    assert bench.member_file("uu/2003/13.md") == "uu-13-2003.md"
    assert bench.cite_name("pp/2015/105.md") == "PP 105/2015"  # not what a scanned heading may say


ORIGINAL = "Undang-Undang Nomor 1 Tahun 2030 tentang Kearsipan Percobaan"


def _law(cite: str, title: str, published: str, body: str) -> str:
    doc_id = cite.lower().replace(" ", "-").replace("/", "-")
    return (f"---\nid: {doc_id}\ntitle: \"{title}\"\ndoc_type: regulation\ncite_as: {cite}\nauthority: official\n"
            f"published: {published}\neffective: {published}\nlang: id\nillustrative: true\n---\n\n{body}")


def test_a_gold_passage_s_standing_is_read_from_the_statute_book_s_graph(tmp_path, profile):
    """The standing on the answers' date of each question's gold passage, as an answer's own provision is read: a
    Pasal a later law amended is ended from that law's date; the amending law's item restating it is in force; a law
    the collection does not hold, or a question without its gold's location, is "absent"."""
    from pipeline.backends.fakes import FakeHashEmbedder
    from pipeline.corpus import Corpus

    src = tmp_path / "src"
    src.mkdir()
    (src / "uu-1-2030.md").write_text(_law("UU 1/2030", ORIGINAL, "2030-01-02", (
        "Pasal 5\nArsip percobaan disimpan paling lama 5 (lima) tahun.\n\n"
        "Pasal 6\nUndang-Undang ini mulai berlaku pada tanggal diundangkan.\n")), encoding="utf-8")
    (src / "uu-2-2032.md").write_text(_law(
        "UU 2/2032", f"Undang-Undang Nomor 2 Tahun 2032 tentang Perubahan atas {ORIGINAL}", "2032-03-01", (
            f"Pasal I\nBeberapa ketentuan dalam {ORIGINAL} diubah sebagai berikut:\n\n"
            "1. Ketentuan Pasal 5 diubah, sehingga Pasal 5 berbunyi sebagai berikut:\n\n"
            "Pasal 5\nArsip percobaan disimpan paling lama 10 (sepuluh) tahun.\n\n"
            "Pasal II\nUndang-Undang ini mulai berlaku pada tanggal diundangkan.\n")), encoding="utf-8")
    data = tmp_path / "data"
    corpus = Corpus(data, profile, embedder=FakeHashEmbedder())
    try:
        corpus.ingest([src])
        item = next(c.location for c in corpus.store.doc_chunks("uu-2-2032") if c.location.startswith("Pasal I angka"))
    finally:
        corpus.close()
    rows = {q: {"receipt": {"reference": {"law": law}}} for q, law in (
        ("amended", "UU 1/2030"), ("kept", "UU 1/2030"), ("restated", "UU 2/2032"), ("elsewhere", "UU 9/2030"),
        ("unlocated", "UU 1/2030"))}
    locations = {"amended": "Pasal 5", "kept": "Pasal 6", "restated": item, "elsewhere": "Pasal 5"}
    assert bench.gold_standings(rows, locations, data, "2033-01-01") == {
        "amended": "ended", "kept": "in_force", "restated": "in_force", "elsewhere": "absent", "unlocated": "absent"}
    # before the amending law, the original Pasal 5 stands
    assert bench.gold_standings(rows, locations, data, "2031-01-01")["amended"] == "in_force"


def test_bad_usage_is_one_line_and_exit_2(tmp_path):
    script = str(ROOT / "bench" / "mined_at_scale.py")
    out = ["--out", str(tmp_path / "o")]
    cases = [(["--statute", f"{tmp_path}:statute-book"], "no collection"),
             (["--statute", f"{tmp_path}:statute-book", "--laws", str(tmp_path / "none")], "no laws directory"),
             (["--statute", f"{tmp_path}:statute-book", "--archive", str(tmp_path / "none.tar.xz")], "no archive"),
             (["--statute", f"{tmp_path}:Not A Name"], "is not a collection name")]
    for k, (args, message) in enumerate(cases):
        if k == 1:
            (tmp_path / "collections" / "statute-book").mkdir(parents=True)
        done = subprocess.run([sys.executable, script, *args, *out], capture_output=True, text=True, cwd=ROOT,
                              timeout=120)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr and "Traceback" not in done.stderr
        assert not (tmp_path / "o").exists()
    # --rescore without an earlier run to score
    (tmp_path / "collections" / "statute-book").mkdir(parents=True, exist_ok=True)
    archive = tmp_path / "pp.tar.xz"
    _archive(archive, [1, 2])
    done = subprocess.run([sys.executable, script, "--statute", f"{tmp_path}:statute-book", "--archive", str(archive),
                           "--min-questions", "1", "--rescore", *out], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 2 and "--rescore needs an earlier run" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "o").exists()
