"""Progress bars for long commands, on stderr and only on a terminal."""
from __future__ import annotations

import sys
import time
from typing import Sequence, TextIO


class ProgressBar:
    """One self-redrawing line on stderr while a long job runs (`saksi eval`, `saksi train`), only
    when stderr is a terminal: stdout carries the report (pure JSON with --json), and a log file
    gets no carriage returns. Not a terminal: nothing is drawn and the caller says milestones."""

    def __init__(self, total: int, unit: str, stream: TextIO | None = None, width: int = 28):
        self.stream = stream if stream is not None else sys.stderr
        self.total, self.unit, self.width = total, unit, width
        isatty = getattr(self.stream, "isatty", None)
        self.on = bool(total) and callable(isatty) and bool(isatty())
        self._start = time.perf_counter()
        self._drawn: float | None = None  # when the line was last drawn
        self._line = ""                   # what it shows
        self._longest = 0

    def update(self, done: int, note: str = "") -> None:
        now = time.perf_counter()
        if not self.on or (self._drawn is not None and now - self._drawn < 0.1 and done < self.total):
            return
        rate = done / max(now - self._start, 1e-9)
        eta = (self.total - done) / rate if rate else 0.0
        self._draw(done / self.total, f"{done}/{self.total} {self.unit}, " + (f"{note}, " if note else "")
                   + f"{rate:.1f}/s, {eta:.0f}s left", now)

    def _draw(self, fraction: float, text: str, now: float) -> None:
        self._drawn = now
        filled = int(self.width * min(max(fraction, 0.0), 1.0) + 1e-9)
        self._line = f"  [{'#' * filled}{'.' * (self.width - filled)}] {text}"
        self._write("\r" + self._line.ljust(self._longest))  # a shorter line covers the longer one before it
        self._longest = max(self._longest, len(self._line))

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def say(self, message: str) -> None:
        """A line of its own (`saksi ingest`'s per-document lines): above the bar on a terminal, and
        exactly the line alone anywhere else."""
        if self.on and self._drawn is not None:
            self._write("\r" + message.ljust(self._longest) + "\n" + self._line)
        else:
            self._write(message + "\n")

    def close(self) -> None:
        if self._drawn is not None:
            self._drawn = None
            self._write("\n")


HEARTBEAT = 5.0  # seconds between plain progress lines of an ingest whose output is not a terminal


class IngestBar(ProgressBar):
    """`saksi ingest`'s bar over the changed documents and the chunks being embedded
    (the Ingestor's `IngestMeter`, pipeline/corpus/ingestor.py).

    How many chunks the changed files hold is known only once each is parsed, so the bar fills by
    the files' bytes (parsed text makes chunks in proportion): a written or skipped file counts
    whole, the one being embedded in the share of its new chunks done. The line counts documents
    and chunks, the chunks' rate, and the time left at the rate the bar has filled so far. Off a
    terminal the same line is written plain, at most every HEARTBEAT seconds while chunks are embedded
    or files finish, so an ingest whose output goes to a pipe or a log is never silent for long."""

    def __init__(self, stream: TextIO | None = None, width: int = 28):
        super().__init__(0, "documents", stream, width)
        self._sizes: list[int] = []
        self._files = 0               # changed files finished (written or skipped)
        self._doc, self._doc_total, self._doc_done = "", 0, 0
        self._chunks = 0              # chunks vectorised so far, from the model or the cache
        self._heard = 0.0             # when the last plain progress line was written (not a terminal)

    def begin(self, sizes: Sequence[int]) -> None:
        """The changed files' sizes in bytes, in the order they will be written; the bar starts."""
        self._sizes = [max(int(s), 1) for s in sizes]
        self.total = len(self._sizes)
        isatty = getattr(self.stream, "isatty", None)
        self.on = bool(self.total) and callable(isatty) and bool(isatty())
        self._start = self._heard = time.perf_counter()
        self._show(force=True)

    def embedding(self, doc_id: str, chunks: int) -> None:
        """A document's `chunks` new chunks are being vectorised."""
        self._doc, self._doc_total, self._doc_done = doc_id, chunks, 0
        self._show(force=True)

    def embedded(self, chunks: int) -> None:
        self._chunks += chunks
        self._doc_done += chunks
        self._show()

    def file_done(self) -> None:
        """A changed file is written, or skipped."""
        self._files += 1
        self._doc, self._doc_total, self._doc_done = "", 0, 0
        self._show(force=True)

    def _fraction(self) -> float:
        if not self._sizes:
            return 0.0
        whole = sum(self._sizes[:self._files])
        if self._doc_total and self._files < len(self._sizes):
            whole += self._sizes[self._files] * min(self._doc_done / self._doc_total, 1.0)
        return whole / sum(self._sizes)

    def _show(self, force: bool = False) -> None:
        now = time.perf_counter()
        if not self.on:
            # not a terminal (`make demo`, a log file): a plain line at most every HEARTBEAT seconds while work goes
            # on, so a long embedding is never silent
            if self.total and now - self._heard >= HEARTBEAT:
                self._heard = now
                self._write(self._status(now).strip() + "\n")
            return
        if not force and self._drawn is not None and now - self._drawn < 0.1:
            return
        self._draw(self._fraction(), self._status(now), now)

    def _status(self, now: float) -> str:
        elapsed = max(now - self._start, 1e-9)
        fraction = self._fraction()
        text = f"{min(self._files, self.total)}/{self.total} {self.unit}, {self._chunks} chunks embedded"
        if self._doc:
            text += f" ({self._doc}: {self._doc_done}/{self._doc_total})"
        text += f", {self._chunks / elapsed:.1f} chunks/s"
        if 0 < fraction < 1:
            text += f", {elapsed * (1 - fraction) / fraction:.0f}s left"
        return text
