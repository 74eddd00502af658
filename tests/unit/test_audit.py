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


# --- the traces the log names, the head cut away, a checkpoint kept elsewhere (issue 27) ---------------------------


def _answered(tmp_path, n: int = 3):
    from pipeline.audit import file_hash

    audit = AuditLog(tmp_path, collection="default")
    traces = tmp_path / "traces"
    traces.mkdir(exist_ok=True)
    ids = []
    for i in range(n):
        trace_id = f"{i:032x}"
        path = traces / f"{trace_id}.json"
        path.write_text(json.dumps({"trace_id": trace_id, "claims": ["Rp1.000.000"]}), encoding="utf-8")
        audit.append("answer", trace_id=trace_id, trace_sha256=file_hash(path))
        ids.append(trace_id)
    return audit, traces, ids


def test_a_trace_changed_after_its_answer_is_named_and_one_pruned_is_counted(tmp_path):
    audit, traces, ids = _answered(tmp_path)
    where = lambda collection, trace_id: traces / f"{trace_id}.json"  # noqa: E731
    report = verify(tmp_path, where)
    assert report.ok and report.traces == 3 and "3 traces match their record" in report.text()
    (traces / f"{ids[0]}.json").unlink()  # trace retention
    assert verify(tmp_path, where).traces_gone == 1
    forged = traces / f"{ids[1]}.json"
    forged.write_text(forged.read_text().replace("Rp1.000.000", "Rp1.000"), encoding="utf-8")
    report = verify(tmp_path, where)
    assert not report.ok and "was changed after it was recorded" in report.problem and ids[1] in report.problem


def test_a_page_finds_a_traces_entry_through_the_index_and_tells_altered_from_unrecorded(tmp_path):
    from pipeline.audit import INDEX, check_trace

    audit, traces, ids = _answered(tmp_path)
    assert check_trace(tmp_path, traces / f"{ids[2]}.json", ids[2]).state == "verified"
    assert check_trace(tmp_path, traces / f"{ids[2]}.json", ids[2]).seq == 3
    assert (tmp_path / INDEX).exists()
    path = traces / f"{ids[1]}.json"
    path.write_text(path.read_text().replace("Rp1.000.000", "Rp1.000"), encoding="utf-8")
    assert check_trace(tmp_path, path, ids[1]).state == "altered"
    assert check_trace(tmp_path, path, "f" * 32).state == "unrecorded"  # the log names no such answer
    (tmp_path / INDEX).unlink()  # the index is rebuilt from the log
    assert check_trace(tmp_path, traces / f"{ids[0]}.json", ids[0]).state == "verified"


def test_the_head_removed_and_the_tail_cut_is_found_and_a_checkpoint_catches_a_cut(log):
    checkpoint = {"seq": log.last()[0], "hash": log.last()[1]}
    assert verify(log.dir, checkpoint=checkpoint).ok
    log.head.unlink()
    _write(log, _lines(log)[:3])
    report = verify(log.dir)
    assert not report.ok and "audit.head is missing" in report.problem
    report = verify(log.dir, checkpoint=checkpoint)
    assert not report.ok and "before the checkpoint's entry 5" in report.problem


def test_a_damaged_index_is_rebuilt_and_an_unreadable_log_finds_no_entry(tmp_path):
    from pipeline.audit import INDEX, check_trace

    audit, traces, ids = _answered(tmp_path)
    (tmp_path / INDEX).write_bytes(b"not a database at all" * 100)  # derived state, damaged
    assert check_trace(tmp_path, traces / f"{ids[0]}.json", ids[0]).state == "verified"
    audit.path.unlink()
    audit.path.mkdir()  # a directory where the log should be: nothing can be verified, nothing raises
    assert check_trace(tmp_path, traces / f"{ids[0]}.json", ids[0]).state == "unrecorded"
