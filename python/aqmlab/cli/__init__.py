"""The ``aqmlab`` command (typer + rich).

- ``main``: the app, ``run``, ``validate`` and ``list``;
- ``results``: post-run commands (runs, show, query, plot, report, export flent);
- ``sweeps``: ``sweep``, ``reproduce`` and ``list experiments``;
- ``console``: the shared output consoles and the one error path (``fail``, exit status 2);
- ``stopping``: SIGINT and SIGTERM before and outside a command's own handling of them.
"""

import sys
from pathlib import Path

from aqmlab import signals
from aqmlab.cli import stopping

if Path(sys.argv[0]).name == "aqmlab":  # the console script: first, to cover the loading of the rest
    stopping.install()
try:
    from aqmlab.cli.main import app, entry
except signals.Stopped:
    stopping.interrupted_loading()

__all__ = ["app", "entry"]
