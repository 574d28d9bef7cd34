"""The worker side: a batch of runs run (``run_batch``: the runs of a point that drew no random
value repeated, not simulated again) and committed (``_commit``: the table parts, then the
summaries part, the commit record); a local pool worker's signal handling and its watch on its
parent's death (``_PoolWorker``)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from aqmlab import parts, signals, store
from aqmlab.sweep.identity import _canon

SUMMARIES = parts.SUMMARIES
SUMMARY_COLUMNS = ["run_id", "point", "rep", "seed", "status", "error", "params", "overrides", "summary",
                   "meta", "extra", "part", "reproduce_command", "rows"]  # fmt: skip


@dataclass
class Task:
    """One run: what a worker needs (the scenario is per point, shared within a batch)."""

    run_id: str
    point: int
    rep: int
    seed: int
    command: str


@dataclass
class Source:
    """A finished run that drew from no random stream, as stored: what its repeats need."""

    row: dict  # its summaries row (summary, meta and extra as dicts), under the repeating point
    files: dict[str, str]  # table name -> the part holding its rows of that table


@dataclass
class Batch:
    sweep_dir: str
    scenarios: dict[int, dict]  # point index -> scenario dict
    params: dict[int, dict]
    overrides: dict[int, dict]
    tasks: list[Task]
    keep: tuple[str, ...]
    metrics_fn: str | None  # "module:function", called as f(tables, meta) -> (dict, {name: pa.Table})
    sources: dict[int, Source] = field(default_factory=dict)  # point -> the stored run its runs repeat


_WORKER: dict[str, Any] = {"ran": None, "busy": False, "stopping": False}


def _part_name(run_ids: list[str]) -> str:
    """A batch's part name, from the runs it holds: a batch run again (a scheduler retrying the
    task of a worker killed after its commit, or running it twice) replaces its own files
    instead of adding a second copy of its runs."""
    return "part-" + hashlib.sha256("\n".join(sorted(run_ids)).encode()).hexdigest()[:16]


def _import(ref: str) -> Callable:
    import importlib

    mod, fn = ref.split(":")
    return getattr(importlib.import_module(mod), fn)


def _with_run_id(t: pa.Table, run_id: str) -> pa.Table:
    """``t`` with a ``run_id`` column holding ``run_id`` (replaced if it has one)."""
    col = pa.DictionaryArray.from_arrays(pa.array([0] * t.num_rows, pa.int32()), pa.array([run_id]))
    at = t.schema.get_field_index("run_id")
    if at >= 0:
        return t.set_column(at, "run_id", col.cast(pa.string()))
    return t.append_column("run_id", col.cast(pa.string()))


def _seed_free(row: dict) -> bool:
    """Whether a finished run drew from no random stream (the core's ``random_streams``): its results
    are then the same for every seed."""
    return row["status"] == "ok" and row["meta"].get("random_streams") == 0


def _repeat(first: tuple[dict, dict[str, pa.Table]], t: Task) -> tuple[dict, dict[str, pa.Table]]:
    """Run ``t`` of a point whose run ``first`` drew from no random stream: ``first``'s results (the
    core would give them again for any seed) under ``t``'s run id, rep and seed, its meta naming
    the run it repeats under ``same_as``."""
    row, kept = first
    seeded = {"seed": t.seed}
    out = {**row, "run_id": t.run_id, "rep": t.rep, "seed": t.seed, "summary": {**row["summary"], **seeded},
           "meta": {**row["meta"], **seeded, "same_as": row["run_id"]}}  # fmt: skip
    return out, {name: _with_run_id(tab, t.run_id) for name, tab in kept.items()}


def _stored(src: Source) -> tuple[dict, dict[str, pa.Table]]:
    """A stored run's row and its tables, read back from its parts (its rows only)."""
    run_id = src.row["run_id"]
    return src.row, {
        name: pq.read_table(f, filters=[("run_id", "=", run_id)]) for name, f in src.files.items()
    }


def _run_task(batch: Batch, t: Task, fn: Callable | None) -> tuple[dict, dict[str, pa.Table]]:
    """One run of a batch: its summaries row and the tables it keeps (``run_id`` added)."""
    from aqmlab.api import run_dict

    row = {"run_id": t.run_id, "point": t.point, "rep": t.rep, "seed": t.seed, "status": "ok",
           "error": None, "summary": None, "meta": None, "extra": None}  # fmt: skip
    tables: dict[str, pa.Table] = {}
    try:
        res = run_dict(batch.scenarios[t.point], seed=t.seed)
        meta = {k: v for k, v in res.meta.items() if k != "scenario"}
        meta["params"] = batch.params[t.point]
        extra, extra_tables = fn(res.tables, res.meta) if fn else ({}, {})
        for name in batch.keep:
            if name in res.tables and res.tables[name] is not None:
                tables[name] = _with_run_id(res.tables[name], t.run_id)
        for name, tab in extra_tables.items():
            tables[name] = _with_run_id(tab, t.run_id)
        row.update(summary=res.summary, meta=meta, extra=extra)
    except Exception as e:  # noqa: BLE001 - a failed run is recorded, the sweep goes on
        msg = f"{type(e).__name__}: {e}".strip()
        row.update(status="failed", error=msg.splitlines()[0] if msg else type(e).__name__,
                   extra={"traceback": traceback.format_exc(limit=5)})  # fmt: skip
        tables = {}
    return row, tables


def run_batch(batch: Batch) -> list[dict]:
    """Runs a batch, writes its parts (tables first, summaries last) and returns one small dict
    per run: run_id, status, error, summary, meta (without the scenario), extra. The runs of a
    point with a stored source (``batch.sources``) repeat that run, and a point's later runs
    repeat its first one here that drew from no random stream, instead of simulating it again
    (``_repeat``). An interrupt (KeyboardInterrupt) stops the run in progress; the runs
    finished before it are written, then it propagates."""
    fn = _import(batch.metrics_fn) if batch.metrics_fn else None
    results: list[dict] = []
    tables: dict[str, list[pa.Table]] = {}
    try:
        # point -> its run that drew nothing
        seed_free = {p: _stored(src) for p, src in batch.sources.items()}
        for t in batch.tasks:
            if t.point in seed_free:
                row, kept = _repeat(seed_free[t.point], t)
            else:
                row, kept = _run_task(batch, t, fn)
                if _seed_free(row):
                    seed_free[t.point] = (row, kept)
            results.append(row)
            for name, tab in kept.items():
                tables.setdefault(name, []).append(tab)
            if _WORKER["ran"] is not None:
                _WORKER["ran"]()
    except KeyboardInterrupt:
        if results:
            _commit(batch, results, tables)
        raise
    return _commit(batch, results, tables)


def _commit(batch: Batch, results: list[dict], tables: dict[str, list[pa.Table]]) -> list[dict]:
    """Writes the parts of a batch's finished runs: the tables first, the summaries last."""
    sweep_dir = Path(batch.sweep_dir)
    part = _part_name([r["run_id"] for r in results])
    rows = {}
    for name, ts in tables.items():
        table = pa.concat_tables(ts, promote_options="default")
        parts.write(table, sweep_dir / name / f"{part}.parquet", store.write_parquet)
        rows[name] = table.num_rows
    cmds = {t.run_id: t.command for t in batch.tasks}
    summ = pa.table(
        {
            "run_id": [r["run_id"] for r in results],
            "point": pa.array([r["point"] for r in results], pa.int64()),
            "rep": pa.array([r["rep"] for r in results], pa.int64()),
            "seed": pa.array([r["seed"] for r in results], pa.uint64()),
            "status": [r["status"] for r in results],
            "error": pa.array([r["error"] for r in results], pa.string()),
            "params": [_canon(batch.params[r["point"]]) for r in results],
            "overrides": [_canon(batch.overrides[r["point"]]) for r in results],
            # typed: a batch of failed runs only has no summary or meta, and its part must still
            # read as the others do (a reader takes the columns' types from the first part)
            "summary": pa.array([_dumps(r["summary"]) for r in results], pa.string()),
            "meta": pa.array([_dumps(r["meta"]) for r in results], pa.string()),
            "extra": pa.array([_dumps(r["extra"]) for r in results], pa.string()),
            "part": [part] * len(results),
            "reproduce_command": [cmds[r["run_id"]] for r in results],
            "rows": [_canon(rows)] * len(results),
        }
    )
    parts.write(summ, sweep_dir / SUMMARIES / f"{part}.parquet", store.write_parquet)  # the commit record
    for r in results:
        r["part"] = part
    return results


class _PoolWorker:
    """A local pool worker (``ProcessPoolExecutor`` initializer and task): counts finished runs
    in a shared counter (the parent's progress bar), and on SIGINT or SIGTERM stops the run in
    progress, writes the batch's finished runs and exits; an idle worker exits at once. It gets
    SIGTERM when its parent ends, however that ends (kill -9 included): no worker outlives its
    sweep, and none holds the sweep's lock (inherited) after that."""

    @staticmethod
    def init(counter, parent: int) -> None:
        _WORKER.update(ran=_counting(counter), busy=False, stopping=False)
        for sig in signals.STOP_SIGNALS:
            signal.signal(sig, _PoolWorker.on_signal)
        _die_with(parent)

    @staticmethod
    def on_signal(signum: int, frame: Any) -> None:
        if not _WORKER["busy"]:
            os._exit(1)
        if not _WORKER["stopping"]:  # later signals leave the finished runs being written alone
            _WORKER["stopping"] = True
            raise KeyboardInterrupt

    @staticmethod
    def run(batch: Batch) -> list[dict]:
        _WORKER["busy"] = True
        try:
            return run_batch(batch)
        except KeyboardInterrupt:
            os._exit(1)
        finally:
            _WORKER["busy"] = False


PR_SET_PDEATHSIG = 1
"""prctl(2): the signal a process gets when the thread that forked it ends."""


def _die_with(parent: int) -> None:
    """Asks Linux for SIGTERM when ``parent`` (the process that forked this one, from its main
    thread) ends; if it has ended already, sends it now. Elsewhere nothing is done."""
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def _counting(counter) -> Callable[[], None]:
    """A function adding one to the shared ``counter`` (a run finished)."""

    def ran() -> None:
        with counter.get_lock():
            counter.value += 1

    return ran


def _dumps(o: Any) -> str | None:
    return None if o is None else json.dumps(o, default=store._json_default, separators=(",", ":"))
