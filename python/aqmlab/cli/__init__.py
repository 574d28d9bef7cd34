"""The ``aqmlab`` command (typer + rich).

- ``main``: the app, ``run``, ``validate`` and ``list``;
- ``results``: post-run commands (runs, show, query, plot, report, export flent);
- ``sweeps``: ``sweep``, ``reproduce`` and ``list experiments``;
- ``console``: the shared output consoles and the one error path (``fail``, exit status 2).
"""

from aqmlab.cli.main import app, entry

__all__ = ["app", "entry"]
