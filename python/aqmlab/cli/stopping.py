"""SIGINT and SIGTERM from the console script's first moment: loaded before anything else of the
``aqmlab`` command, ``stop`` raises ``Stopped`` wherever no command handles the signal itself
(start-up, while modules load; a figure or report being written), which the console script
(main.entry) ends with one line and status 130."""

from __future__ import annotations

import os
import signal
import sys
from typing import NoReturn

INTERRUPTED = 130
"""Exit status after SIGINT or SIGTERM (128 + SIGINT, as shells report an interrupted command)."""


class Stopped(BaseException):
    """SIGINT or SIGTERM outside a command's own handling of them (start-up, a figure or report
    being written): raised past click, which would take a KeyboardInterrupt for "Aborted!"."""


stopped: list[int] = []  # the signal that stopped the command, once one has


def stop(signum: int, frame) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):  # the way out is not cut by a second one
        signal.signal(sig, signal.SIG_IGN)
    stopped.append(signum)
    raise Stopped


MESSAGE = "interrupted: what was stored is kept whole; rerun to complete it"


def interrupted_loading() -> NoReturn:
    """A signal while the command's modules load: the one line, status 130, nothing else run."""
    sys.stderr.write(MESSAGE + "\n")
    sys.stderr.flush()
    os._exit(INTERRUPTED)


def install() -> None:
    """``stop`` for SIGINT and SIGTERM (the console script's; a program importing aqmlab.cli
    keeps its own)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
