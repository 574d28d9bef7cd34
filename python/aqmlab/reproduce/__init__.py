"""Built-in experiments (`aqmlab reproduce NAME`): one module or package per study
(docs/studies.md), each declaring one ``STUDY`` (study.Study: its cases, options, ``--quick``
reduction, published tables and claims). ``EXPERIMENTS`` maps names to module paths; ``get(name)``
is the declared study; ``study.reproduce`` runs any of them. Adding a study = one module (or
package) and one line here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aqmlab.lazy import lazy

store = lazy("aqmlab.store")

if TYPE_CHECKING:
    from aqmlab.reproduce.study import Study

EXPERIMENTS = {
    "transients2014": "aqmlab.reproduce.transients2014",
    "lpcc2013": "aqmlab.reproduce.lpcc2013",
    "goodbadwifi2015": "aqmlab.reproduce.goodbadwifi2015",
    "codel2012": "aqmlab.reproduce.codel2012",
    "l4s2020": "aqmlab.reproduce.l4s2020",
}


def get(name: str) -> Study:
    """The declared study ``name``; KeyError naming the known ones."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
    return importlib.import_module(EXPERIMENTS[name]).STUDY


@dataclass(frozen=True)
class Execution:
    """Where and how an experiment's sweeps run: the results root and the executor (the CLI's
    --out, --jobs, --executor, --scheduler, --keep-packets), shared by every module's ``run``."""

    out: str | Path | None = None
    """The results root (None: store.DEFAULT_ROOT)."""
    jobs: int | None = None
    executor: str = "local"
    scheduler: str | None = None
    keep_packets: bool = False
    progress: bool = False

    def sweep(self, spec, metrics_fn: str, keep: tuple[str, ...] = ("flows", "links")):
        """Runs (or resumes) ``spec`` with the study's per-run metrics in the workers."""
        from aqmlab.sweep import run_sweep

        return run_sweep(spec, out=self.root, jobs=self.jobs, executor=self.executor, scheduler=self.scheduler,
                         keep=keep, keep_packets=self.keep_packets, metrics_fn=metrics_fn,
                         progress=self.progress)  # fmt: skip

    @property
    def root(self) -> Path:
        return Path(self.out) if self.out is not None else store.DEFAULT_ROOT

    def report_dir(self, name: str) -> Path:
        return self.root / "reproduce" / name


DEFAULT_EXECUTION = Execution()
"""The default: the local process pool, results under the default root."""
