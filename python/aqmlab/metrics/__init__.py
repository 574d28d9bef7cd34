"""Metric definitions over the tables a run returns (docs/tables.md).

This package is the ONE place where aqmlab defines its metrics (docs/architecture.md, principle 6). Every
function takes the run's tables (``dict[str, pyarrow.Table]``) and its ``meta`` dict, works on
numpy arrays (vectorised), and documents the definition it implements and where it comes from.

Conventions
-----------
* Times in the tables are integer nanoseconds since the start of the run; the run ends at
  ``meta["duration_ns"]``.
* ``warmup_s``: every metric skips the first ``warmup_s`` seconds. The measured window is
  ``[W, T_end]`` with ``W = warmup_s * 1e9`` ns. How a row is assigned to the window is stated per
  metric (a packet's delay counts when it was *enqueued* in the window; a drop or transmission
  counts when ``t_out_ns`` is in the window; step functions are clipped to the window).
* Percentiles are numpy's default ("linear" interpolation between order statistics, i.e. type 7
  of Hyndman & Fan): the p50 of [0, 1, 2, 4] is 1.5.
* A *transmitted* packet is one whose outcome is ``sent`` or ``marked``. Packets that *entered*
  the queue are the transmitted ones plus the ones dropped from inside it (``head``,
  ``fat_flow`` and ``ack_filter`` drops); ``overlimit`` and ``early`` drops were refused at enqueue and never
  occupied the buffer.

Modules: ``catalogue`` (every summary key declared once: definition, unit, window, the rule
computing its value, its catalog columns), ``keys`` (the directions and statistics the keys are
made of), ``base`` (the tables as numpy columns), ``queue``, ``flows``, ``probes``, ``web`` and
``summary`` (``summarize``, assembled from the catalogue's rules). The package's names are its modules' public
functions, imported on first use: the catalogue alone is read by commands that compute nothing.
The metrics only the studies use are in ``aqmlab.reproduce.metrics``.

Sources: docs/metrics.md (every summary key and catalog column), docs/study-setups.md section 2 (transients2014:
spike duration, group response time), section 3 (lpcc2013: TCP%, E[Q]/Q_max), section 4
(goodbadwifi2015: induced latency, goodput at the application).
"""

from __future__ import annotations

from aqmlab.lazy import lazy

# The modules whose names are the package's, in the order a name is looked up; each runs on first
# use (``lazy``), so that the catalogue alone loads neither numpy nor pyarrow.
MODULES = {
    "base": lazy("aqmlab.metrics.base"),
    "queue": lazy("aqmlab.metrics.queue"),
    "flows": lazy("aqmlab.metrics.flows"),
    "probes": lazy("aqmlab.metrics.probes"),
    "web": lazy("aqmlab.metrics.web"),
    "summary": lazy("aqmlab.metrics.summary"),
    "catalogue": lazy("aqmlab.metrics.catalogue"),
    "keys": lazy("aqmlab.metrics.keys"),
}


def __getattr__(name: str):
    """``aqmlab.metrics.<name>``: a module of MODULES, else the name as the first of them that
    defines it has it."""
    if name in MODULES:
        return MODULES[name]
    for module in MODULES.values():
        if name in vars(module):
            return vars(module)[name]
    raise AttributeError(f"module 'aqmlab.metrics' has no attribute {name!r}")
