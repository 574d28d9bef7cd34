"""The signals that stop a command (SIGINT, SIGTERM) and the exit status a stopped command
ends with: 128 + the number of the first one received, as a shell reports a command that a
signal ended (130 after Ctrl-C, 143 after SIGTERM). Standard library only: the console script
loads it before anything else."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(BaseException):
    """SIGINT or SIGTERM outside a command's own handling of them (start-up, a figure or report
    being written), or taken at start-up and acted on late (``take_early``): raised past click,
    which would take a KeyboardInterrupt for a silent exit status 130."""


received: list[int] = []  # the signals that stopped something in this process, in order


def note(signum: int) -> None:
    """Records ``signum`` as the one that stops what runs now (every handler of STOP_SIGNALS
    calls it for the first signal it takes; it ignores later ones)."""
    received.append(signum)


early: list[int] = []  # taken by the console script's start-up handler, not yet acted on


def take_early() -> bool:
    """Whether a signal reached the console script's start-up handler and no command has acted
    on it yet (its exception, raised in the middle of some library's import, can be swallowed
    there: numpy and pyarrow run code of their own around their imports); acts on it now."""
    taken = bool(early)
    early.clear()
    return taken


def status() -> int:
    """The exit status of a command that a signal stopped: 128 + the last one noted (SIGINT's
    when none was: a KeyboardInterrupt raised otherwise)."""
    return 128 + (received[-1] if received else signal.SIGINT)


def interrupt(signum: int, frame: object) -> None:
    """A handler that stops what runs as Ctrl-C does (KeyboardInterrupt), noting ``signum``:
    SIGTERM given the clean-up of SIGINT."""
    note(signum)
    raise KeyboardInterrupt


def quiet_when_swallowed() -> None:
    """Python drops an exception raised where it cannot propagate (a weakref callback, a
    ``__del__``) and prints it with a traceback: a handler's KeyboardInterrupt or ``Stopped``
    landing there is noted all the same (``received``, ``early``) and heeded at the next step, so
    that print is left out; any other dropped exception is printed as before."""
    shown = sys.unraisablehook

    def hook(unraisable) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt | Stopped):
            shown(unraisable)

    sys.unraisablehook = hook


def deferred(fn: Callable[[], T]) -> T:
    """``fn()`` with STOP_SIGNALS held back until it returns, then the first one taken delivered
    to the handler in place before: for imports that swallow what a handler raises in them
    (matplotlib's `projections` catches any Exception around importing its 3D axes and leaves
    them half-imported, so the next import warns on stderr). Outside the main thread (where
    handlers cannot be set) ``fn`` runs as is."""
    if threading.current_thread() is not threading.main_thread():
        return fn()
    taken: list[int] = []
    previous = {s: signal.signal(s, lambda signum, _frame: taken.append(signum)) for s in STOP_SIGNALS}
    try:
        return fn()
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        if taken:
            signal.raise_signal(taken[0])
