"""`make demo` runs the demo through scripts/foreground.py: on a terminal, Ctrl-C reaches the demo alone (its own
process group holds the terminal), so the demo's goodbye and exit 0 are what make sees, not an interrupt of make."""
from __future__ import annotations

import os
import pty
import select
import sys
import time
from pathlib import Path

import pytest

FOREGROUND = Path(__file__).resolve().parents[2] / "scripts" / "foreground.py"


def _read(fd: int, seconds: float, until: bytes | None = None) -> bytes:
    out, end = b"", time.monotonic() + seconds
    while time.monotonic() < end and not (until and until in out):
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a Linux pseudo-terminal (pty.fork, tcsetpgrp); CI and make demo's machines are Linux")
def test_ctrl_c_on_a_terminal_stops_the_demo_alone_and_its_parent_sees_exit_0(tmp_path) -> None:
    demo = tmp_path / "demo.sh"
    demo.write_text("#!/usr/bin/env bash\ntrap 'echo; echo goodbye; exit 0' INT\necho serving\n"
                    "sleep 60 &\nwait $!\n", encoding="utf-8")
    demo.chmod(0o755)
    # the parent stands for make: it would die of the same Ctrl-C if it were in the foreground group
    parent = f"{sys.executable} {FOREGROUND} {demo}; echo parent-saw=$?"
    pid, fd = pty.fork()
    if pid == 0:  # the child: a shell on the pseudo-terminal, as make runs on the user's
        os.execvp("bash", ["bash", "-c", parent])
    try:
        assert b"serving" in _read(fd, 20, b"serving")
        os.write(fd, b"\x03")  # Ctrl-C
        out = _read(fd, 20, b"parent-saw=")
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert b"goodbye" in out and b"parent-saw=0" in out, out
    assert os.waitstatus_to_exitcode(status) == 0


def test_off_a_terminal_the_command_just_runs_with_its_exit_status(tmp_path) -> None:
    import subprocess

    done = subprocess.run([sys.executable, str(FOREGROUND), "bash", "-c", "echo ran; exit 3"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert done.returncode == 3 and done.stdout == "ran\n"
    assert subprocess.run([sys.executable, str(FOREGROUND)], capture_output=True, timeout=30).returncode == 2
