"""Run a command as the terminal's foreground process group, so Ctrl-C reaches it alone (`make demo`).

Ctrl-C signals every process of the terminal's foreground group. Under make that is make too, which then reports
"make: *** [demo] Interrupt" and exits non-zero, whatever the demo did with the signal. Run through this, the demo
gets its own process group and the terminal for as long as it runs: Ctrl-C reaches the demo only, the demo says
goodbye and exits 0, and make with it. Off a terminal (CI, a log) the command just runs. Exit status: the command's.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: foreground.py COMMAND [ARG...]", file=sys.stderr)
        return 2
    try:
        tty = os.open("/dev/tty", os.O_RDWR) if os.isatty(0) else None
    except OSError:
        tty = None
    if tty is None:
        return subprocess.call(argv)
    # this process never acts on Ctrl-C (the command decides), and may hand the terminal over and take it back
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    ours = os.getpgrp()

    def take_terminal() -> None:  # in the child, before the command runs: no Ctrl-C can fall between
        os.setpgid(0, 0)
        os.tcsetpgrp(tty, os.getpgrp())
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)

    child = subprocess.Popen(argv, preexec_fn=take_terminal)
    try:
        return child.wait()
    finally:
        try:
            os.tcsetpgrp(tty, ours)
        except OSError:
            pass
        os.close(tty)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
