"""A tamper-evident audit log: an append-only, hash-chained JSONL in the data directory.

Every entry is one line::

    {"seq": 7, "at": "2026-11-30T16:20:00+00:00", "event": "answer", "key": "local",
     "data": {...}, "prev": "<hash of entry 6>", "hash": "<sha256 of this entry without 'hash'>"}

`hash` covers the entry's canonical JSON (sorted keys, no spaces) including `prev`, so
changing any byte of an entry breaks its own hash, and removing, inserting or reordering
entries breaks the `seq`/`prev` chain at the first place it happens. Deleting the *last*
entries leaves a shorter but valid chain; so every append also rewrites `audit.head` (the
last seq and hash), and `verify` reports a log that ends before its head.

Appends take an exclusive `flock`, so concurrent writers (the CLI and a served replica on
the same data directory) never interleave or fork the chain. Events: answer (with the
trace's hash), ingest, delete, key changes — each with the acting key's id ("local" for the
in-process CLI).
"""
from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

LOG = "audit.jsonl"
HEAD = "audit.head"
INDEX = "audit.index.sqlite3"  # answers by trace id (rebuilt from the log whenever it is missing)
GENESIS = "0" * 64
LOCAL_KEY = "local"


def _canonical(entry: dict) -> bytes:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def entry_hash(entry: dict) -> str:
    return hashlib.sha256(_canonical({k: v for k, v in entry.items() if k != "hash"})).hexdigest()


class AuditLog:
    def __init__(self, data_dir: str | Path, collection: str | None = None):
        self.dir = Path(data_dir)
        self.collection = collection  # recorded in every entry's data when given
        self.path = self.dir / LOG
        self.head = self.dir / HEAD

    def append(self, event: str, key: str = LOCAL_KEY, **data: Any) -> dict:
        """Write one entry at the end of the chain and move the head to it."""
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.collection is not None:
            data = {"collection": self.collection, **data}
        with open(self.path, "a+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                seq, prev = _last(f)
                entry = {"seq": seq + 1, "at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                         "event": event, "key": key, "data": data, "prev": prev}
                entry["hash"] = entry_hash(entry)
                f.seek(0, os.SEEK_END)
                f.write(_canonical(entry) + b"\n")
                f.flush()
                os.fsync(f.fileno())
                tmp = self.head.with_name(HEAD + ".tmp")
                tmp.write_text(json.dumps({"seq": entry["seq"], "hash": entry["hash"]}) + "\n", encoding="utf-8")
                os.replace(tmp, self.head)
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
        return entry


    def last(self) -> tuple[int, str]:
        """The last entry's seq and hash (0 and the genesis hash for an empty or absent log): a checkpoint."""
        try:
            with open(self.path, "rb") as f:
                return _last(f)
        except FileNotFoundError:
            return 0, GENESIS

    def entries(self):
        """Every entry, oldest first (a line that cannot be read is passed over: `verify` is what reports it)."""
        try:
            f = open(self.path, "rb")
        except FileNotFoundError:
            return
        with f:
            for line in f:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict):
                    yield entry

    def recent(self, event: str, key: str, limit: int = 10, window: int = 1 << 20) -> list[dict]:
        """The newest entries of one event by one key, newest first, read from the log's last `window` bytes (a
        page's short history, not a search of the whole log); an unreadable line is passed over."""
        try:
            with open(self.path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - window))
                lines = f.read().split(b"\n")
        except FileNotFoundError:
            return []
        if size > window:
            lines = lines[1:]  # the first line read may be cut
        out = []
        for line in reversed(lines):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and entry.get("event") == event and entry.get("key") == key:
                out.append(entry)
                if len(out) == limit:
                    break
        return out


    # -- answers by trace id: what the page checks a trace against --------------------------------------------

    def _index(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.dir / INDEX, timeout=30)
        con.execute("CREATE TABLE IF NOT EXISTS answers (trace_id TEXT PRIMARY KEY, offset INTEGER NOT NULL)")
        con.execute("CREATE TABLE IF NOT EXISTS upto (id INTEGER PRIMARY KEY CHECK (id = 0), offset INTEGER NOT NULL)")
        return con

    def _catch_up(self, con: sqlite3.Connection, restart: bool = False) -> None:
        """Index the answer entries appended since the last lookup (all of them when `restart`, or when the log is
        shorter than what was indexed: it was cut or replaced)."""
        row = con.execute("SELECT offset FROM upto WHERE id = 0").fetchone()
        upto = 0 if restart or row is None else row[0]
        size = self.path.stat().st_size
        if upto > size:
            upto = 0
        if upto == 0:
            con.execute("DELETE FROM answers")
        with open(self.path, "rb") as f:
            f.seek(upto)
            for line in f:
                if not line.endswith(b"\n"):
                    break  # a line being written: the next lookup reads it
                try:
                    entry = json.loads(line)
                except ValueError:
                    entry = None
                trace_id = (entry.get("data") or {}).get("trace_id") if isinstance(entry, dict) else None
                if entry is not None and entry.get("event") == "answer" and isinstance(trace_id, str):
                    con.execute("INSERT OR REPLACE INTO answers VALUES (?, ?)", (trace_id, upto))
                upto += len(line)
        con.execute("INSERT OR REPLACE INTO upto VALUES (0, ?)", (upto,))

    def _look_up(self, trace_id: str, restart: bool) -> tuple[int] | None:
        """The offset of the answer's line, through the index; an index that cannot be read is derived state: it is
        removed and built again from the log."""
        for attempt in (0, 1):
            try:
                with closing(self._index()) as con, con:
                    self._catch_up(con, restart)
                    return con.execute("SELECT offset FROM answers WHERE trace_id = ?", (trace_id,)).fetchone()
            except sqlite3.DatabaseError:
                if attempt:
                    raise OSError(f"{self.dir / INDEX} cannot be rebuilt") from None
                (self.dir / INDEX).unlink(missing_ok=True)
                restart = True
        return None

    def answer_entry(self, trace_id: str) -> dict | None:
        """The audit entry of the answer whose trace is `trace_id`, its own hash checked; None when the log names no
        such answer. Found through an index by trace id (`audit.index.sqlite3`, which each lookup first brings up to
        date with the lines appended since: a lookup reads one line of the log, not the log). An index that points
        at a line that is not that entry (the log was rewritten) is rebuilt once."""
        if not self.path.is_file():
            return None
        for restart in (False, True):
            try:
                row = self._look_up(trace_id, restart)
                if row is None:
                    return None
                with open(self.path, "rb") as f:
                    f.seek(row[0])
                    line = f.readline()
            except OSError:  # the log cannot be read: no entry can be found
                return None
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if (isinstance(entry, dict) and (entry.get("data") or {}).get("trace_id") == trace_id
                    and entry.get("hash") == entry_hash(entry)):
                return entry
        return None


def _last(f) -> tuple[int, str]:
    """The last entry's seq and hash (0 and the genesis hash for an empty log)."""
    f.seek(0, os.SEEK_END)
    size = f.tell()
    if size == 0:
        return 0, GENESIS
    back = min(size, 65536)
    while True:
        f.seek(size - back)
        lines = f.read(back).rstrip(b"\n").split(b"\n")
        if len(lines) > 1 or back == size:
            last = json.loads(lines[-1])
            return int(last["seq"]), str(last["hash"])
        back = min(size, back * 4)


@dataclass(frozen=True)
class Verification:
    ok: bool
    entries: int
    line: int | None = None     # the first line that breaks the chain (1-based), None when intact
    problem: str | None = None
    traces: int = 0             # answers whose trace file was checked against its recorded SHA-256
    traces_gone: int = 0        # answers whose trace is no longer kept (trace retention)

    def text(self) -> str:
        if self.ok:
            checked = f"; {self.traces} traces match their record" + (
                f" ({self.traces_gone} no longer kept)" if self.traces_gone else "") if self.traces or \
                self.traces_gone else ""
            return f"audit log intact: {self.entries} entries, hash chain and head agree{checked}"
        return f"audit log broken at line {self.line}: {self.problem}"


def verify(data_dir: str | Path, trace_path: Callable[[str | None, str], Path] | None = None,
           checkpoint: dict | None = None) -> Verification:
    """Walk the chain; report the first entry that was edited, inserted, deleted or moved, or entries removed from
    the end (the head, and a `checkpoint` copied elsewhere: {"seq", "hash"} of an entry the log must still hold).
    With `trace_path(collection, trace_id)`, every answer's trace file still kept is checked against the SHA-256 its
    entry recorded."""
    log = AuditLog(data_dir)
    if not log.path.exists():
        return Verification(True, 0) if not log.head.exists() and checkpoint is None else Verification(
            False, 0, 1, "the log file is missing but its head or checkpoint says entries were written")
    try:
        found = _walk(log, checkpoint)
    except OSError as e:  # a directory, a permission problem: one line, not a traceback
        return Verification(False, 0, 1, f"the log cannot be read ({e.strerror or e})")
    if not found.ok or trace_path is None:
        return found
    checked = gone = 0
    for n, entry in enumerate(log.entries(), 1):
        data = entry.get("data") or {}
        if entry.get("event") != "answer" or not isinstance(data.get("trace_id"), str):
            continue
        path = trace_path(data.get("collection"), data["trace_id"])
        if not path.exists():
            gone += 1
            continue
        if file_hash(path) != data.get("trace_sha256"):
            return Verification(False, found.entries, n, f"the trace of answer {entry.get('seq')} ({data['trace_id']}) "
                                                         "was changed after it was recorded")
        checked += 1
    return Verification(True, found.entries, traces=checked, traces_gone=gone)


def _walk(log: AuditLog, checkpoint: dict | None = None) -> Verification:
    seq, prev, n = 0, GENESIS, 0
    anchor = (int(checkpoint["seq"]), str(checkpoint["hash"])) if checkpoint else None
    anchored = anchor is None or anchor[0] == 0
    with open(log.path, "rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                entry = json.loads(raw)
                claimed = entry["hash"]
                at_seq, at_prev = int(entry["seq"]), entry["prev"]
            except (ValueError, KeyError, TypeError):
                return Verification(False, n - 1, n, "not an audit entry (unreadable JSON or missing fields)")
            if entry_hash(entry) != claimed:
                return Verification(False, n - 1, n, f"entry {at_seq} was edited (its hash does not match its content)")
            if at_seq != seq + 1 or at_prev != prev:
                what = ("an entry before it was deleted" if at_seq > seq + 1 else
                        "it was inserted or moved" if at_seq <= seq else "it does not follow the entry before it")
                return Verification(False, n - 1, n, f"entry {at_seq} breaks the chain after entry {seq}: {what}")
            seq, prev = at_seq, claimed
            if anchor is not None and at_seq == anchor[0]:
                if claimed != anchor[1]:
                    return Verification(False, n - 1, n, f"entry {at_seq} is not the one the checkpoint recorded")
                anchored = True
    if not anchored:
        return Verification(False, n, n + 1, f"the log ends at entry {seq}, before the checkpoint's entry {anchor[0]}: "
                                             "entries were removed from the end")
    head = _head(log.head)
    if head is None and n:
        return Verification(False, n, n + 1, f"{HEAD} is missing or unreadable: whether entries were removed from the "
                                             "end cannot be told (verify --checkpoint against a copy)")
    if head is not None and (head["seq"], head["hash"]) != (seq, prev):
        return Verification(False, n, n + 1, f"the log ends at entry {seq} but its head records entry {head['seq']}: "
                                             "entries were removed from the end")
    return Verification(True, n)


def _head(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def file_hash(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class TraceCheck:
    """A trace file against the audit entry of its answer: `verified` (the file's SHA-256 is the one recorded),
    `altered` (it is not: the file changed after the answer was given), `unrecorded` (the log names no such
    answer, or its entry was edited)."""

    state: str
    seq: int | None = None
    at: str | None = None


def check_trace(data_dir: str | Path, trace_path: str | Path, trace_id: str) -> TraceCheck:
    entry = AuditLog(data_dir).answer_entry(trace_id)
    if entry is None:
        return TraceCheck("unrecorded")
    try:
        same = file_hash(trace_path) == (entry.get("data") or {}).get("trace_sha256")
    except OSError:
        same = False
    return TraceCheck("verified" if same else "altered", entry.get("seq"), entry.get("at"))
