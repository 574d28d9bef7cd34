"""The one output and error path of the ``aqmlab`` command.

Every user mistake goes through ``fail``: one line on stderr naming the key, the value and what is
allowed, and exit status 2; never a traceback.
"""

from __future__ import annotations

import math
import signal
import sys
from typing import NoReturn, Self

import typer
from rich.console import Console

from aqmlab import signals
from aqmlab.lazy import lazy
from aqmlab.richtable import FitTable

__all__ = ["FitTable", "RunProgress", "err", "fail", "interrupted", "lazy", "out", "qdisc_failed"]

# A terminal's width for a terminal; into a pipe or a file no width (COLUMNS, which many a shell
# and CI exports, not read either), so that no table has a cell cut to fit one: a table is as
# wide as its content, a line of text unwrapped
UNBOUNDED = 100_000
out = Console(highlight=False, width=None if sys.stdout.isatty() else UNBOUNDED)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def fail(msg: str) -> NoReturn:
    """Print ``error: msg`` verbatim (no rich markup) and exit with status 2."""
    err.print(f"error: {msg}", markup=False)
    raise typer.Exit(code=2)


def qdisc_failed(e: Exception) -> NoReturn:
    """A discipline written in Python failed during a run (aqmlab.pyqdisc.QdiscError): its
    traceback, then one line with the key, the method and the simulated time; exit status 1."""
    if e.user_traceback:
        err.print(e.user_traceback.rstrip(), markup=False)
    err.print(f"error: {e} (the run was not stored)", markup=False)
    raise typer.Exit(code=1)


def interrupted(msg: str) -> NoReturn:
    """Print ``interrupted: msg`` (what was kept) and exit with ``signals.status()`` (130 after
    SIGINT, 143 after SIGTERM); a later SIGINT or SIGTERM no longer cuts the way out."""
    for sig in signals.STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    err.print(f"interrupted: {msg}", markup=False)
    raise typer.Exit(code=signals.status())


class RunProgress:
    """A run's progress on stderr, when stderr is a terminal and the run has taken
    ``SHOW_AFTER_S`` of wall time: simulated time reached of the duration, speed against real
    time, events per second, time left. Called as ``aqmlab.api.Progress``; a context manager that
    clears the line at its end."""

    SHOW_AFTER_S = 2.0

    def __init__(self, label: str):
        self.label = label
        self.bar = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, now_ns: int, end_ns: int, events: int, wall_s: float) -> None:
        if wall_s < self.SHOW_AFTER_S or not err.is_terminal:
            return
        if self.bar is None:
            from rich.progress import BarColumn, Progress, TextColumn

            self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(bar_width=10),
                                TextColumn("{task.fields[state]}"), console=err, transient=True)  # fmt: skip
            self.task = self.bar.add_task(self.label, total=end_ns, state="")
            self.bar.start()
        speed = now_ns / 1e9 / wall_s
        left = (end_ns - now_ns) / 1e9 / speed if speed > 0 else float("inf")
        # the most useful first: a narrow terminal cuts the end
        state = (f"{now_ns / 1e9:,.0f}/{end_ns / 1e9:,.0f} s simulated, {_clock(left)} left, "
                 f"{speed:,.{0 if speed >= 10 else 2}f}x real time, {events / wall_s / 1e6:.1f} M events/s")  # fmt: skip
        self.bar.update(self.task, completed=now_ns, state=state)


def _clock(s: float) -> str:
    """Seconds as h:mm:ss (``?`` when unknown)."""
    if not math.isfinite(s):
        return "?"
    m, sec = divmod(int(s), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{sec:02d}"
