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
except ImportError:
    # A signal that cut a library's import leaves it half-loaded: numpy 2's C core then refuses
    # to load again ("cannot load module more than once per process"). That is the signal's
    # doing, and the command stops with its one line; an ImportError without one is a fault.
    if not signals.early:
        raise
    stopping.interrupted_loading()

__all__ = ["app", "entry"]
