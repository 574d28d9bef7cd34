"""The one output and error path of the ``aqmlab`` command.

Every user mistake goes through ``fail``: one line on stderr naming the key, the value and what is
allowed, and exit status 2; never a traceback.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console

out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def fail(msg: str) -> NoReturn:
    """Print ``error: msg`` verbatim (no rich markup) and exit with status 2."""
    err.print(f"error: {msg}", markup=False)
    raise typer.Exit(code=2)
