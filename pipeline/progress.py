"""A progress bar for long commands, on stderr and only on a terminal."""
from __future__ import annotations

import sys
import time
from typing import TextIO


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
        self._longest = 0

    def update(self, done: int, note: str = "") -> None:
        now = time.perf_counter()
        if not self.on or (self._drawn is not None and now - self._drawn < 0.1 and done < self.total):
            return
        self._drawn = now
        filled = self.width * done // self.total
        rate = done / max(now - self._start, 1e-9)
        eta = (self.total - done) / rate if rate else 0.0
        line = (f"  [{'#' * filled}{'.' * (self.width - filled)}] {done}/{self.total} {self.unit}, "
                + (f"{note}, " if note else "") + f"{rate:.1f}/s, {eta:.0f}s left")
        self.stream.write("\r" + line.ljust(self._longest))  # a shorter line covers the longer one before it
        self._longest = max(self._longest, len(line))
        self.stream.flush()

    def close(self) -> None:
        if self._drawn is not None:
            self.stream.write("\n")
            self.stream.flush()
