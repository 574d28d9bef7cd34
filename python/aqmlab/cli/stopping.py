"""SIGINT and SIGTERM from the console script's first moment: loaded before anything else of the
``aqmlab`` command, ``stop`` raises ``signals.Stopped`` wherever no command handles the signal itself
(start-up, while modules load; a figure or report being written), which the console script
(main.entry) ends with one line and status 128 + the signal's number (``signals.status``). Once a
command has taken a signal, later ones are ignored: it is on its way out."""

from __future__ import annotations

import os
import signal
import sys
import warnings
from typing import NoReturn

from aqmlab import signals


def stop(signum: int, frame) -> None:
    for sig in signals.STOP_SIGNALS:  # the way out is not cut by a second one
        signal.signal(sig, signal.SIG_IGN)
    if signals.received:
        # a command's own handler took a signal before this one and handed the signals back
        # on its way out (a sweep that stopped its workers, about to say which runs it kept):
        # this one would cut that short
        return
    signals.note(signum)
    signals.early.append(signum)
    raise signals.Stopped


MESSAGE = "interrupted: what was stored is kept whole; rerun to complete it"


def interrupted_loading() -> NoReturn:
    """A signal while the command's modules load: the one line, ``signals.status()``, nothing
    else run."""
    sys.stderr.write(MESSAGE + "\n")
    sys.stderr.flush()
    os._exit(signals.status())


def install() -> None:
    """``stop`` for SIGINT and SIGTERM (the console script's; a program importing aqmlab.cli
    keeps its own). A signal that cut numpy's first import makes the next one warn that numpy
    was loaded twice (numpy 1) or fail (numpy 2: aqmlab.cli takes that ImportError for the
    signal's): the command is stopping by then, and says so in its one line instead."""
    for sig in signals.STOP_SIGNALS:
        signal.signal(sig, stop)
    signals.quiet_when_swallowed()
    warnings.filterwarnings("ignore", message="The NumPy module was reloaded")
