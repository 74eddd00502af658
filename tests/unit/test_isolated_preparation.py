"""IsolatedPreparation: files prepared in a worker process, with a per-file time limit.

The fakes below are top-level functions so that the spawned worker can import them (it gets
this process's sys.path, and tests/ is a package); each one misbehaves on files whose name says
so and otherwise prepares the file for real, recording the worker's pid in the manifest.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from pipeline.config import load_profile
from pipeline.corpus.ingestor import LocalPreparation
from pipeline.errors import IngestError
from pipeline.ingest.isolated import IsolatedPreparation
from pipeline.ingest.prepare import DocumentPreparer, PreparedDocument

pytestmark = pytest.mark.unit

LIMIT_S = 2.0  # the fresh worker builds its preparer (~0.3 s) inside the limit: room on a busy machine

REGULATION = """---
title: Peraturan Ilustratif Nomor {n} Tahun 2024 tentang Contoh
---
# Peraturan Ilustratif Nomor {n} Tahun 2024

## Pasal 1

Dalam peraturan ini yang dimaksud dengan penghasilan adalah setiap tambahan kemampuan ekonomis
yang diterima atau diperoleh wajib pajak nomor {n}.

## Pasal 2

(1) Atas penghasilan dari persewaan tanah dan/atau bangunan dipotong pajak sebesar 10%.

(2) Ketentuan sebagaimana dimaksud pada ayat (1) berlaku sejak tanggal diundangkan.
"""


# -- fakes run in the worker ---------------------------------------------------------------------

_preparers: dict[str, DocumentPreparer] = {}


def _real(profile, data_dir, path) -> PreparedDocument:
    key = str(data_dir)
    if key not in _preparers:
        _preparers[key] = DocumentPreparer(profile, data_dir)
    prepared = _preparers[key].prepare(path)
    prepared.manifest["worker_pid"] = os.getpid()
    return prepared


def fake_slow_prepare(profile, data_dir, path) -> PreparedDocument:
    """A parser that hangs on files named *slow*."""
    if "slow" in Path(path).name:
        time.sleep(120)
    return _real(profile, data_dir, path)


def fake_crashing_prepare(profile, data_dir, path) -> PreparedDocument:
    """A parser whose process dies on files named *crash* (as a segfault or the OOM killer would)."""
    if "crash" in Path(path).name:
        os._exit(3)
    return _real(profile, data_dir, path)


def fake_refusing_prepare(profile, data_dir, path) -> PreparedDocument:
    """A parser that raises IngestError on *refuse* files and a plain exception on *broken* ones."""
    name = Path(path).name
    if "refuse" in name:
        raise IngestError(str(path), "a fake parser refuses this file (encrypted)")
    if "broken" in name:
        raise ValueError("fake parser bug")
    return _real(profile, data_dir, path)


def fake_hungry_prepare(profile, data_dir, path) -> PreparedDocument:
    """A parser that asks for 4 GB on files named *hungry* (as an inflating zip bomb would)."""
    if "hungry" in Path(path).name:
        bytearray(4 * 1024 ** 3)
    return _real(profile, data_dir, path)


# -- helpers -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lite():
    return load_profile()


def write_docs(folder: Path, *names: str) -> list[Path]:
    paths = []
    for k, name in enumerate(names, start=1):
        path = folder / f"{name}.md"
        path.write_text(REGULATION.format(n=k), encoding="utf-8")
        paths.append(path)
    return paths


def assert_reaped(*pids: int | None) -> None:
    """No such process any more: neither running nor left as a zombie."""
    if not Path("/proc/self").exists():
        return
    for pid in pids:
        assert pid is not None
        status = Path(f"/proc/{pid}/status")
        assert not status.exists(), f"worker {pid} is still there: {status.read_text().splitlines()[:3]}"


# -- tests ---------------------------------------------------------------------------------------

def test_same_documents_as_in_process(tmp_path, lite):
    files = write_docs(tmp_path, "satu", "dua", "tiga")
    empty = tmp_path / "kosong.md"
    empty.write_text("", encoding="utf-8")
    files.insert(2, empty)
    data_dir = tmp_path / "data"
    local = list(LocalPreparation(DocumentPreparer(lite, data_dir)).prepared(files))
    with IsolatedPreparation(lite, data_dir, timeout_s=30) as iso:
        isolated = list(iso.prepared(files))
        pid = iso.worker_pid
        assert list(iso.prepared(files[:1]))[0] == local[0]  # a second call: the same worker
        assert iso.worker_pid == pid and iso.started == 1
    assert_reaped(pid)
    assert len(isolated) == len(local) == 4
    for mine, theirs in zip(isolated, local):
        if isinstance(theirs, IngestError):  # the empty file: the real preparer's own refusal
            assert isinstance(mine, IngestError)
            assert (mine.path, mine.reason) == (theirs.path, theirs.reason)
            assert mine.path == str(empty)
            continue
        assert mine[1] is None
        assert [c.chunk_id for c in mine[0].chunks] == [c.chunk_id for c in theirs[0].chunks]
        assert mine[0].document.doc_id == theirs[0].document.doc_id
        assert any("Pasal 1" in c.location for c in mine[0].chunks)
        assert mine[0] == theirs[0]


def test_a_file_past_the_limit_is_skipped_and_the_rest_go_through(tmp_path, lite):
    files = write_docs(tmp_path, "a", "b-slow", "c")
    with IsolatedPreparation(lite, tmp_path / "data", timeout_s=LIMIT_S, prepare=fake_slow_prepare) as iso:
        iso.start()
        began = time.perf_counter()
        out = list(iso.prepared(files))
        took = time.perf_counter() - began
        assert iso.started == 2  # the hung worker was killed; file 3 got a fresh one
        last = iso.worker_pid
    assert_reaped(last)
    first, slow, third = out
    assert isinstance(slow, IngestError)
    assert slow.path == str(files[1])
    assert slow.reason == "parsing took longer than 2 s; skipped"
    assert first[0].document.original == str(files[0].resolve())
    assert third[0].document.original == str(files[2].resolve())
    assert first[0].manifest["worker_pid"] != third[0].manifest["worker_pid"]
    assert_reaped(first[0].manifest["worker_pid"])  # the killed worker is gone, not a zombie
    assert took < LIMIT_S + 20  # the limit plus one worker start, nowhere near the fake's 120 s


def test_a_crashed_worker_is_an_error_for_that_file_only(tmp_path, lite):
    files = write_docs(tmp_path, "a", "b-crash", "c")
    with IsolatedPreparation(lite, tmp_path / "data", timeout_s=60, prepare=fake_crashing_prepare) as iso:
        began = time.perf_counter()
        first, crashed, third = iso.prepared(files)
        took = time.perf_counter() - began
        assert iso.started == 2
    assert isinstance(crashed, IngestError)
    assert crashed.path == str(files[1])
    assert "worker process died" in crashed.reason and "exit code 3" in crashed.reason
    assert first[0].chunks and third[0].chunks
    assert_reaped(first[0].manifest["worker_pid"], third[0].manifest["worker_pid"])
    assert took < 30  # the death is seen at once, not after the 60 s limit


def test_an_ingest_error_in_the_worker_arrives_as_that_error(tmp_path, lite):
    files = write_docs(tmp_path, "a", "b-refuse", "c-broken", "d")
    with IsolatedPreparation("lite", tmp_path / "data", timeout_s=30, prepare=fake_refusing_prepare) as iso:
        first, refused, broken, last = iso.prepared(files)
        assert iso.started == 1  # a file the parser refuses does not cost the worker
    assert isinstance(refused, IngestError)
    assert (refused.path, refused.reason) == (str(files[1]), "a fake parser refuses this file (encrypted)")
    assert isinstance(broken, IngestError)
    assert (broken.path, broken.reason) == (str(files[2]), "could not be read (ValueError: fake parser bug)")
    assert first[0].chunks and last[0].chunks
    assert first[0].manifest["worker_pid"] == last[0].manifest["worker_pid"]


def test_a_file_that_needs_more_memory_than_allowed_is_skipped_and_the_worker_goes_on(tmp_path, lite):
    files = write_docs(tmp_path, "a", "b-hungry", "c")
    with IsolatedPreparation("lite", tmp_path / "data", timeout_s=60, prepare=fake_hungry_prepare,
                             memory_mb=256) as iso:
        first, hungry, last = iso.prepared(files)
        assert iso.started == 1  # refused inside the worker: it goes on with the next file
    assert isinstance(hungry, IngestError) and "more than the 256 MB" in hungry.reason
    assert first[0].chunks and last[0].chunks


def test_a_worker_killed_between_files_is_replaced(tmp_path, lite):
    files = write_docs(tmp_path, "a", "b")
    iso = IsolatedPreparation(lite, tmp_path / "data", timeout_s=30)
    try:
        assert not isinstance(list(iso.prepared(files[:1]))[0], IngestError)
        gone = iso.worker_pid
        os.kill(gone, signal.SIGKILL)
        time.sleep(0.2)
        (item,) = iso.prepared(files[1:])
        assert not isinstance(item, IngestError) and item[0].chunks
        assert iso.worker_pid != gone and iso.started == 2
        kept = iso.worker_pid
    finally:
        iso.close()
    assert iso.worker_pid is None
    assert_reaped(gone, kept)


def test_threads_share_one_worker(tmp_path, lite):
    files = write_docs(tmp_path, "a", "b", "c", "d")
    expected = [DocumentPreparer(lite, tmp_path / "data").prepare(f) for f in files]
    results: dict[int, list] = {}
    with IsolatedPreparation(lite, tmp_path / "data", timeout_s=30) as iso:
        def run(k: int) -> None:
            results[k] = [item[0] for item in iso.prepared(files)]
        threads = [threading.Thread(target=run, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert iso.started == 1
    assert all(results[k] == expected for k in range(3))


def test_timeout_must_be_positive(tmp_path, lite):
    with pytest.raises(ValueError, match="timeout_s"):
        IsolatedPreparation(lite, tmp_path, timeout_s=0)


def test_a_docx_zip_bomb_is_refused_from_its_directory_without_inflating(tmp_path):
    import io
    import zipfile

    from pipeline.ingest.parsers.docx import MAX_INFLATED, parse_docx

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        with z.open("word/document.xml", "w", force_zip64=True) as part:
            zeros = b"\0" * (16 * 1024 * 1024)
            for _ in range(MAX_INFLATED // len(zeros) + 2):
                part.write(zeros)
    data = buffer.getvalue()
    assert len(data) < 2_000_000  # a small file
    with pytest.raises(IngestError) as e:
        parse_docx(tmp_path / "bom.docx", data)
    assert "would inflate to" in e.value.reason
