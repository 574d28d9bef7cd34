"""Sweeps: a base scenario x a grid of overrides x replications, run in parallel, stored as ONE
dataset (partitioned Parquet + one catalog row per run).

Sweep file (TOML)::

    base = "base.toml"          # path relative to the sweep file, or a built-in scenario name
    name = "mysweep"            # default: the base scenario's name
    description = "..."         # optional
    seed = 1                    # sweep seed (default 1)
    reps = 10                   # replications per grid point (default 1)
    seed_from = ["params.load"] # optional: the grid keys that enter the run seed (default: all)
    [set]                       # optional: overrides applied to every run (a table value
    duration = "20s"            #   is walked as dotted keys, except under qdisc and start)
    [grid]                      # each key is one axis (cross product); dotted keys, lists of values
    "topology.down.rate" = ["2Mbps", "10Mbps"]
    [[zip]]                     # one axis whose lists advance together (equal lengths)
    "flows.0.count" = [1, 2]
    "flows.0.bytes" = ["180KB", "90KB"]

Keys ``params.NAME`` are labels, not overrides: stored in the run's ``meta['params']`` (with the
overrides) and used to group results. Unquoted dotted keys (``topology.down.rate = [...]``) are
TOML sub-tables and are read back as the dotted path.

Seeds: run seed = first 63 bits of BLAKE2b("<sweep seed>|<canonical JSON of the point's values
of the seed keys>|<replication>"), independent of order, ``--jobs`` and executor. Each run stores
its seed and overrides; ``aqmlab run BASE --set K=V ... --seed S`` reproduces it bit for bit
(``reproduce_command`` in its summaries row).

Run id (content address): ``<name>-<16 hex of sha256(resolved scenario JSON, seed, code
version, metric code)>``; the code version is the package version plus a digest of the compiled
core, the metric code a digest of the source of aqmlab.metrics and of an experiment's metric
function's module (``metrics_version``).
Rerunning a sweep skips the runs whose id is already complete and redoes the others.

Layout under ``<out>/sweeps/<sweep-id>/`` (sweep-id = name + digest of base, set, grid, seed)::

    sweep.json                          the sweep definition and its resolved points
    <table>/part-<hash>.parquet         the recorded tables of a batch of runs (``run_id`` column)
    summaries/part-<hash>.parquet       one row per run of that batch: run_id, point, rep, seed,
                                        params, status (ok/failed), error, summary, meta, extra

Workers run batches of runs and write each batch's parts themselves, each file to a temporary
name then renamed; the summaries part is renamed LAST and is the commit record of the batch: a
run is complete iff it has a row with status ok in the summaries part of a whole batch
(``parts``). Table parts without their summaries part (a worker killed between the two) are
deleted when the sweep is next opened, if their writer is dead; batches that are not whole are
removed then and their runs redone. The
parent alone updates the DuckDB catalog, in one transaction per flush (every 10 s and at the
end). Runs still in a worker's in-memory batch when the process is killed are redone on the next
invocation; SIGINT or SIGTERM (``SweepInterrupted``) stops the workers instead, each writing the
runs of its batch that finished before it exits. One process at a time runs a sweep directory
(its lock, ``storelock``; a second one waits SWEEP_WAIT_S, then refuses). The stored tables (``keep``, ``--keep-packets``) apply to the runs
computed by the invocation: a run already complete is not recomputed to add its packet table.

Modules, one concern each: ``definition`` (the sweep file read and checked: base, set, grid,
zip), ``identity`` (grid points, run seeds, run ids), ``worker`` (a batch run and committed, the
pool worker's signals and its parent's death), ``executors`` (the local pool, Dask, Ray, and the
supervisor stopping the processes a sweep started), ``orchestrate`` (``run_sweep``: the
schedule, the progress bar, the catalog, the interrupt).
"""

# isort: off
# orchestrate first: its pandas loads numpy before the worker's pyarrow does. numpy loaded from
# within pyarrow's compiled module swallows a signal at start-up and is then imported a second
# time (NumPy's warning on stderr beside the command's one line).
from aqmlab.sweep.orchestrate import (
    MAX_BATCH,
    RUN_PROVENANCE,
    SWEEP_WAIT_S,
    SweepInterrupted,
    SweepResult,
    catalog_rows,
    read_extra,
    read_summaries,
    run_cost,
    run_sweep,
    summaries_table,
    sweep,
)

# isort: on
from aqmlab.sweep.definition import (
    QDISC_LABEL,
    SWEEP_KEYS,
    SweepError,
    SweepSpec,
    builtin_qdiscs,
    parse_sweep,
    with_qdiscs,
)
from aqmlab.sweep.executors import EXECUTORS, BatchInterrupted
from aqmlab.sweep.identity import (
    METRIC_MODULES,
    PARAM_PREFIX,
    Point,
    code_version,
    metrics_version,
    reproduce_command,
    run_id_for,
    run_seed,
    toml_literal,
)
from aqmlab.sweep.worker import SUMMARIES, SUMMARY_COLUMNS, Batch, Source, Task, run_batch

__all__ = [
    "EXECUTORS",
    "MAX_BATCH",
    "METRIC_MODULES",
    "PARAM_PREFIX",
    "QDISC_LABEL",
    "RUN_PROVENANCE",
    "SUMMARIES",
    "SUMMARY_COLUMNS",
    "SWEEP_KEYS",
    "SWEEP_WAIT_S",
    "Batch",
    "BatchInterrupted",
    "Point",
    "Source",
    "SweepError",
    "SweepInterrupted",
    "SweepResult",
    "SweepSpec",
    "Task",
    "builtin_qdiscs",
    "catalog_rows",
    "code_version",
    "metrics_version",
    "parse_sweep",
    "read_extra",
    "read_summaries",
    "reproduce_command",
    "run_batch",
    "run_cost",
    "run_id_for",
    "run_seed",
    "run_sweep",
    "summaries_table",
    "sweep",
    "toml_literal",
    "with_qdiscs",
]
