"""The one output and error path of the ``aqmlab`` command.

Every user mistake goes through ``fail``: one line on stderr naming the key, the value and what is
allowed, and exit status 2; never a traceback.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console

from aqmlab.lazy import lazy

__all__ = ["err", "fail", "lazy", "out", "qdisc_failed"]

out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
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
