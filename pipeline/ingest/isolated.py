"""Preparing files in a worker process with a time limit: a parser that cannot hang the service.

`IsolatedPreparation` is a `Preparation` (pipeline/corpus/ingestor.py) like `LocalPreparation`,
but each file is parsed in a separate worker process, started with the "spawn" method (safe
inside a threaded Ray actor: nothing of the parent's threads or locks is forked). A file whose
parsing runs past `timeout_s` seconds is reported as an IngestError and skipped, and the worker
is killed; a worker that dies (killed, out of memory) is an IngestError for the file it held. The
next file gets a fresh worker and the rest of the files still go through.

The worker is started once and reused from file to file: starting one imports the pipeline
(about a second), sending a file and its prepared document back costs milliseconds. Close it with
`close()` or a `with` block; a killed or finished worker is always joined, so none is left behind
as a zombie.
"""
from __future__ import annotations

import logging
import multiprocessing
import signal
import threading
import time
import weakref
from multiprocessing.connection import wait
from pathlib import Path
from typing import Callable, Iterator, Sequence

from ..config import Profile, load_profile
from ..errors import IngestError, SaksiError
from .prepare import DocumentPreparer, PreparedDocument

log = logging.getLogger(__name__)

PrepareFn = Callable[[Profile, Path, Path], PreparedDocument]

START_TIMEOUT_S = 120.0  # for the worker to import the pipeline and build the preparer
STOP_GRACE_S = 5.0       # for a worker asked to stop to exit before it is killed


class WorkerError(SaksiError):
    """The worker process could not be started: no file can be prepared (not one file's fault)."""

    stage = "ingest"


# -- the worker process ------------------------------------------------------------------------

def _limit_memory(extra_mb: int | None) -> None:
    """Cap this process's address space at what it holds once started plus `extra_mb` (RLIMIT_AS): a file that
    would inflate past it (a zip bomb in a DOCX) fails with MemoryError in the worker, which reports it as that
    file's error, instead of taking the machine's memory."""
    if not extra_mb:
        return
    import resource

    try:
        with open("/proc/self/status", encoding="ascii") as f:
            held = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return  # not Linux: the time limit still holds
    limit = held + extra_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _worker_main(conn, profile: Profile, data_dir: Path, prepare: PrepareFn | None,
                 memory_mb: int | None = None) -> None:
    """Runs in the child: prepare each path received until None (or the parent goes away).

    Replies ("ready",) once, then per path ("ok", PreparedDocument) or ("error", path, reason):
    IngestError does not survive pickling (its __init__ takes two arguments), so it travels as
    its parts.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it stops us
    try:
        if prepare is None:
            preparer = DocumentPreparer(profile, data_dir)
            run = preparer.prepare
        else:
            def run(path: Path) -> PreparedDocument:
                return prepare(profile, data_dir, path)
    except BaseException as e:  # reported to the parent, then this process ends
        conn.send(("failed", f"{type(e).__name__}: {e}"))
        conn.close()
        return
    _limit_memory(memory_mb)
    conn.send(("ready",))
    while True:
        try:
            path = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            break
        if path is None:
            break
        try:
            reply = ("ok", run(path))
        except IngestError as e:
            reply = ("error", e.path, e.reason)
        except MemoryError:
            reply = ("error", str(path), f"needs more than the {memory_mb} MB a file may take to be read")
        except Exception as e:
            reply = ("error", str(path), f"could not be read ({type(e).__name__}: {e})")
        try:
            conn.send(reply)
        except (EOFError, OSError):
            break
        except Exception as e:  # the result did not pickle; nothing was written to the pipe
            conn.send(("error", str(path), f"could not be returned from the worker ({type(e).__name__}: {e})"))
    conn.close()


# -- the parent's side -------------------------------------------------------------------------

class _Worker:
    """One started child process and its end of the pipe."""

    def __init__(self, ctx, profile: Profile, data_dir: Path, prepare: PrepareFn | None, start_timeout_s: float,
                 memory_mb: int | None = None):
        parent_end, child_end = ctx.Pipe(duplex=True)
        self.conn = parent_end
        self.process = ctx.Process(target=_worker_main, args=(child_end, profile, data_dir, prepare, memory_mb),
                                   name="saksi-prepare", daemon=True)
        began = time.perf_counter()
        try:
            self.process.start()
        finally:
            child_end.close()  # the child holds its own copy; ours would hide the child's death
        try:
            ready = wait([self.conn, self.process.sentinel], timeout=start_timeout_s)
            reply = self.conn.recv() if self.conn in ready else None
        except (EOFError, OSError):
            reply = None
        if not reply or reply[0] != "ready":
            why = (reply[1] if reply and reply[0] == "failed"
                   else f"it did not start within {start_timeout_s:g} s" if self.process.is_alive()
                   else f"it exited during start-up ({_exit_words(self.process.exitcode)})")
            self.stop(grace_s=0)
            raise WorkerError(f"the worker process that prepares documents could not be started: {why}")
        self.started_in = time.perf_counter() - began
        log.debug("prepare worker %s started in %.2f s", self.process.pid, self.started_in)

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Ask the worker to exit, kill it if it does not, and always join it (no zombie)."""
        _stop_worker(self.process, self.conn, grace_s)


def _stop_worker(process, conn, grace_s: float) -> None:
    if grace_s > 0 and process.is_alive():
        try:
            conn.send(None)
        except (OSError, ValueError):
            pass
        process.join(grace_s)
    if process.is_alive():
        process.kill()
    process.join()
    conn.close()
    try:
        process.close()
    except ValueError:
        pass


def _exit_words(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class IsolatedPreparation:
    """Each file prepared in one reused worker process, with a wall-clock limit per file.

    `profile` is a Profile or a profile name (loaded here, from `config_dir` when given);
    `prepare`, when given, is a picklable top-level callable `(profile, data_dir, path) ->
    PreparedDocument` used instead of DocumentPreparer (tests inject a slow or crashing parser).
    Safe to share between threads: one file is in the worker at a time.
    """

    def __init__(self, profile: Profile | str, data_dir: Path | str, timeout_s: float,
                 prepare: PrepareFn | None = None, *, config_dir: Path | str | None = None,
                 start_timeout_s: float = START_TIMEOUT_S, memory_mb: int | None = None):
        if not timeout_s or timeout_s <= 0:
            raise ValueError(f"timeout_s must be a positive number of seconds, not {timeout_s!r}")
        self.profile = load_profile(profile, config_dir) if isinstance(profile, str) else profile
        self.data_dir = Path(data_dir)
        self.timeout_s = float(timeout_s)
        self.prepare = prepare
        self.start_timeout_s = start_timeout_s
        self.memory_mb = memory_mb  # the most one file's reading may add to the worker (RLIMIT_AS); None: no cap
        self.started = 0          # workers started so far (1 + one per file killed or crashed)
        self._ctx = multiprocessing.get_context("spawn")
        self._worker: _Worker | None = None
        self._finalizer: weakref.finalize | None = None
        self._lock = threading.Lock()
        self._closed = False

    # -- the Preparation protocol --

    def prepared(self, files: Sequence[Path]) -> Iterator[tuple[PreparedDocument, None] | IngestError]:
        for path in files:
            with self._lock:
                item = self._one(Path(path))
            yield item

    # -- lifetime --

    def start(self) -> float:
        """Start the worker now rather than at the first file; the seconds that took (0: running)."""
        with self._lock:
            if self._worker is not None:
                return 0.0
            return self._start().started_in

    @property
    def worker_pid(self) -> int | None:
        return self._worker.pid if self._worker is not None else None

    def close(self) -> None:
        """Stop the worker (asked, then killed after a few seconds) and reap it."""
        with self._lock:
            self._closed = True
            self._drop(grace_s=STOP_GRACE_S)

    def __enter__(self) -> "IsolatedPreparation":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- inside --

    def _start(self) -> _Worker:
        if self._closed:
            raise WorkerError("this IsolatedPreparation is closed")
        worker = _Worker(self._ctx, self.profile, self.data_dir, self.prepare, self.start_timeout_s, self.memory_mb)
        self._worker = worker
        self.started += 1
        # if this object is dropped without close(), the worker still goes (and is reaped)
        self._finalizer = weakref.finalize(self, _stop_worker, worker.process, worker.conn, 0)
        return worker

    def _drop(self, grace_s: float) -> None:
        worker, self._worker = self._worker, None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if worker is not None:
            worker.stop(grace_s)

    def _one(self, path: Path) -> tuple[PreparedDocument, None] | IngestError:
        worker = self._worker
        if worker is not None and not worker.process.is_alive():  # it went away between files
            self._drop(grace_s=0)
            worker = None
        worker = worker or self._start()
        try:
            worker.conn.send(path)
        except (OSError, ValueError):  # it went away just now: one more try, fresh
            self._drop(grace_s=0)
            worker = self._start()
            worker.conn.send(path)
        ready = wait([worker.conn, worker.process.sentinel], timeout=self.timeout_s)
        if not ready:  # past the limit: kill it, the next file gets a fresh one
            self._drop(grace_s=0)
            log.warning("preparing %s took longer than %g s; the worker was stopped", path, self.timeout_s)
            return IngestError(str(path), f"parsing took longer than {self.timeout_s:g} s; skipped")
        try:
            reply = worker.conn.recv() if worker.conn in ready else None
        except (EOFError, OSError):  # its end of the pipe closed: it is exiting
            reply = None
        if reply is not None:
            if reply[0] == "ok":
                return reply[1], None
            return IngestError(reply[1], reply[2])
        worker.process.join(STOP_GRACE_S)  # its pipe closes a moment before its exit status is there
        how = _exit_words(worker.process.exitcode)
        self._drop(grace_s=0)
        log.warning("the worker preparing %s died (%s)", path, how)
        return IngestError(str(path), f"the parser's worker process died while reading this file ({how}); skipped")
