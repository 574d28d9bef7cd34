"""Built-in experiments (`aqmlab reproduce NAME`): one module per study of
shared/reference/experiments.md. Each module defines ``NAME``, ``DESCRIPTION`` and
``main(...)`` (the CLI entry, see cli.py), and may set ``QUICK = True`` when ``run`` takes
``quick`` (the CLI's ``--quick``: a reduced set of cases); ``EXPERIMENTS`` maps names to module paths and
``experiments()`` lists (name, description) for `aqmlab list experiments`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from aqmlab import store

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


@dataclass(frozen=True)
class Execution:
    """Where and how an experiment's sweeps run: the results root and the executor (the CLI's
    --out, --jobs, --executor, --scheduler, --keep-packets), shared by every module's ``run``."""

    out: str | Path = store.DEFAULT_ROOT
    jobs: int | None = None
    executor: str = "local"
    scheduler: str | None = None
    keep_packets: bool = False
    progress: bool = False

    def sweep(self, spec, metrics_fn: str, keep: tuple[str, ...] = ("flows", "links")):
        """Runs (or resumes) ``spec`` with the study's per-run metrics in the workers."""
        from aqmlab.sweep import run_sweep

        return run_sweep(spec, out=self.out, jobs=self.jobs, executor=self.executor, scheduler=self.scheduler,
                         keep=keep, keep_packets=self.keep_packets, metrics_fn=metrics_fn,
                         progress=self.progress)  # fmt: skip

    def report_dir(self, name: str) -> Path:
        return Path(self.out) / "reproduce" / name


DEFAULT_EXECUTION = Execution()
"""The default: the local process pool, results under the default root."""
