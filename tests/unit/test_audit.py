"""The audit log: a hash chain that names the first line someone edited, inserted, deleted or moved."""
from __future__ import annotations

import json
import threading

import pytest

from pipeline.audit import AuditLog, entry_hash, verify

pytestmark = pytest.mark.unit


@pytest.fixture
def log(tmp_path):
    audit = AuditLog(tmp_path)
    for i in range(5):
        audit.append("answer", key="k1", trace=f"t{i}", trace_sha256="ab" * 32)
    return audit


def _lines(audit):
    return audit.path.read_text(encoding="utf-8").splitlines()


def _write(audit, lines):
    audit.path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_an_untouched_log_verifies(log):
    report = verify(log.dir)
    assert report.ok and report.entries == 5 and "intact" in report.text()
    entries = [json.loads(x) for x in _lines(log)]
    assert [e["seq"] for e in entries] == [1, 2, 3, 4, 5]
    assert all(e["prev"] == p["hash"] for p, e in zip(entries, entries[1:]))
    assert all(entry_hash(e) == e["hash"] and e["key"] == "k1" for e in entries)


def test_an_edited_line_is_named(log):
    lines = _lines(log)
    lines[2] = lines[2].replace('"t2"', '"t9"')
    _write(log, lines)
    report = verify(log.dir)
    assert not report.ok and report.line == 3 and "edited" in report.problem


def test_an_edit_that_recomputes_its_own_hash_breaks_the_next_link(log):
    lines = _lines(log)
    entry = json.loads(lines[1])
    entry["data"]["trace"] = "forged"
    entry["hash"] = entry_hash(entry)
    lines[1] = json.dumps(entry)
    _write(log, lines)
    report = verify(log.dir)
    assert not report.ok and report.line == 3


@pytest.mark.parametrize("change,line", [
    (lambda ls: ls[:2] + ls[3:], 3),                       # entry 3 deleted
    (lambda ls: ls[:2] + [ls[1]] + ls[2:], 3),             # entry 2 inserted again
    (lambda ls: [ls[0], ls[2], ls[1], *ls[3:]], 2),        # entries 2 and 3 swapped
    (lambda ls: ls[:4], 5),                                # the last entry removed: the head disagrees
    (lambda ls: ls[:2] + ["{not json"] + ls[2:], 3),       # garbage inserted
])
def test_deleted_inserted_reordered_and_truncated_lines_are_named(log, change, line):
    _write(log, change(_lines(log)))
    report = verify(log.dir)
    assert not report.ok and report.line == line, report.text()


def test_concurrent_writers_keep_one_chain(tmp_path):
    audit = AuditLog(tmp_path)
    threads = [threading.Thread(target=lambda i=i: [AuditLog(tmp_path).append("ingest", key=f"k{i}", n=j)
                                                   for j in range(20)]) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report = verify(audit.dir)
    assert report.ok and report.entries == 80


def test_no_log_is_an_empty_intact_log(tmp_path):
    assert verify(tmp_path).ok and verify(tmp_path).entries == 0


def test_an_unreadable_log_is_a_finding_not_a_traceback(tmp_path):
    (tmp_path / "audit.jsonl").mkdir()
    report = verify(tmp_path)
    assert not report.ok and report.line == 1 and "cannot be read" in report.problem
