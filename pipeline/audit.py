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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOG = "audit.jsonl"
HEAD = "audit.head"
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

    def text(self) -> str:
        if self.ok:
            return f"audit log intact: {self.entries} entries, hash chain and head agree"
        return f"audit log broken at line {self.line}: {self.problem}"


def verify(data_dir: str | Path) -> Verification:
    """Walk the chain; report the first entry that was edited, inserted, deleted or moved."""
    log = AuditLog(data_dir)
    if not log.path.exists():
        return Verification(True, 0) if not log.head.exists() else Verification(
            False, 0, 1, "the log file is missing but its head says entries were written")
    try:
        return _walk(log)
    except OSError as e:  # a directory, a permission problem: one line, not a traceback
        return Verification(False, 0, 1, f"the log cannot be read ({e.strerror or e})")


def _walk(log: AuditLog) -> Verification:
    seq, prev, n = 0, GENESIS, 0
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
    head = _head(log.head)
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
