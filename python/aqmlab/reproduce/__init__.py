"""Built-in experiments (`aqmlab reproduce NAME`): one module per study of
shared/reference/experiments.md. Each module defines ``NAME``, ``DESCRIPTION`` and
``main(...)`` (the CLI entry, see cli.py), and may set ``QUICK = True`` when ``run`` takes
``quick`` (the CLI's ``--quick``: a reduced set of cases); ``EXPERIMENTS`` maps names to module paths and
``experiments()`` lists (name, description) for `aqmlab list experiments`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

EXPERIMENTS = {
    "transients2014": "aqmlab.reproduce.transients2014",
    "lpcc2013": "aqmlab.reproduce.lpcc2013",
    "goodbadwifi2015": "aqmlab.reproduce.goodbadwifi2015",
    "codel2012": "aqmlab.reproduce.codel2012",
}


def get(name: str) -> ModuleType:
    """The module of experiment ``name``; KeyError naming the known ones."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
    return importlib.import_module(EXPERIMENTS[name])


def experiments() -> list[tuple[str, str]]:
    """(name, description) of every built-in experiment."""
    return [(n, get(n).DESCRIPTION) for n in EXPERIMENTS]
