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
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import itertools
import json
import os
import signal
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from aqmlab import _core, parts, signals, store, storelock, traces
from aqmlab.api import Interrupts, recorded
from aqmlab.scenario import ScenarioError, apply_overrides, load, resolve

SWEEP_KEYS = ("base", "name", "description", "seed", "reps", "seed_from", "set", "grid", "zip")
PARAM_PREFIX = "params."
SUMMARIES = parts.SUMMARIES
EXECUTORS = ("local", "dask", "ray")
SUMMARY_COLUMNS = ["run_id", "point", "rep", "seed", "status", "error", "params", "overrides", "summary",
                   "meta", "extra", "part", "reproduce_command", "rows"]  # fmt: skip
RUN_PROVENANCE = ("reproduce_command", "same_as")
"""Columns of the per-run table (``summaries_table``) that say how a run was made, not what it
measured or which grid point it is."""


class SweepError(ValueError):
    """A sweep file or option that cannot be run; the message names the key and the value."""


# --------------------------------------------------------------------------- the sweep definition


@dataclass
class Point:
    """One grid point: its overrides (dotted key -> value) and labels (``params.NAME``)."""

    index: int
    overrides: dict[str, Any]
    labels: dict[str, Any]
    scenario: dict = field(default_factory=dict)  # base + set + overrides (unresolved)
    resolved_digest: str = ""

    @property
    def params(self) -> dict[str, Any]:
        """What is stored as meta['params']: labels by name, overrides by dotted key."""
        return {**self.overrides, **self.labels}


@dataclass
class SweepSpec:
    base: str  # path or built-in name, as given (relative paths resolved against the sweep file)
    base_scenario: dict
    name: str
    description: str = ""
    seed: int = 1
    reps: int = 1
    seed_from: list[str] | None = None
    fixed: dict[str, Any] = field(default_factory=dict)
    axes: list[dict[str, list]] = field(default_factory=list)  # each axis: key -> values (zipped)
    # run only the points whose label/override values are in these lists (not part of the id)
    select: dict[str, list] = field(default_factory=dict)

    def points(self) -> list[Point]:
        """The grid points in a fixed order (axes crossed, last axis fastest), after ``select``."""
        return [p for p in self.all_points() if self._selected(p)]

    def _selected(self, p: Point) -> bool:
        vals = {**p.overrides, **{PARAM_PREFIX + k: v for k, v in p.labels.items()}}
        return all(vals.get(k) in allowed for k, allowed in self.select.items())

    def all_points(self) -> list[Point]:
        ranges = [range(len(next(iter(a.values())))) for a in self.axes]
        out = []
        for idx, combo in enumerate(itertools.product(*ranges)):
            ov: dict[str, Any] = {}
            lab: dict[str, Any] = {}
            for axis, i in zip(self.axes, combo, strict=True):
                for k, vals in axis.items():
                    if k.startswith(PARAM_PREFIX):
                        lab[k[len(PARAM_PREFIX) :]] = vals[i]
                    else:
                        ov[k] = vals[i]
            sc = apply_overrides(apply_overrides(self.base_scenario, self.fixed), ov)
            out.append(Point(idx, ov, lab, sc))
        return out

    def seed_for(self, point: Point, rep: int) -> int:
        """The derived run seed (see the module docstring)."""
        if self.seed_from is None:
            basis = {"overrides": point.overrides, "labels": point.labels}
        else:
            allv = {**point.overrides, **{PARAM_PREFIX + k: v for k, v in point.labels.items()}}
            basis = {k: allv.get(k) for k in self.seed_from}
        text = f"{self.seed}|{_canon(basis)}|{rep}"
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") >> 1

    def sweep_id(self) -> str:
        d = _canon({"base": self.base_scenario, "set": self.fixed, "axes": self.axes, "seed": self.seed,
                    "seed_from": self.seed_from})  # fmt: skip
        return f"{_safe(self.name)}-{hashlib.sha256(d.encode()).hexdigest()[:10]}"

    def to_json(self) -> dict:
        return {"base": self.base, "name": self.name, "description": self.description, "seed": self.seed,
                "reps": self.reps, "seed_from": self.seed_from, "set": self.fixed, "axes": self.axes}  # fmt: skip


def _canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(name)) or "sweep"


def _flatten(prefix: str, obj: Any, out: dict[str, Any], where: str) -> None:
    """Dotted key -> list of values; TOML sub-tables (unquoted dotted keys) are walked."""
    if isinstance(obj, dict):
        if not obj:
            raise SweepError(f"{where}.{prefix}: empty table; expected a list of values")
        for k, v in obj.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out, where)
    else:
        if not isinstance(obj, list) or not obj:
            raise SweepError(f"{where}.{prefix}: expected a non-empty list of values, got {_show(obj)}")
        out[prefix] = obj


def _show(v: Any) -> str:
    s = json.dumps(v, default=str) if not isinstance(v, str) else repr(v)
    return s if len(s) <= 80 else s[:77] + "..."


def _check_value(base: dict, key: str, value: Any, where: str) -> None:
    _check_values(base, {key: value}, where)


def _check_values(base: dict, values: dict[str, Any], where: str) -> None:
    """The scenario with ``values`` (key -> value, applied together) must resolve."""
    for key in values:
        if key.startswith(PARAM_PREFIX) and (not key[len(PARAM_PREFIX) :] or "." in key[len(PARAM_PREFIX) :]):
            raise SweepError(f"{where}.{key}: a label key is params.NAME (one name)")
    ov = {k: v for k, v in values.items() if not k.startswith(PARAM_PREFIX)}
    if not ov:
        return
    try:
        resolve(apply_overrides(base, ov))
    except ScenarioError as e:
        shown = ", ".join(f"{where}.{k} = {_show(v)}" for k, v in ov.items())
        raise SweepError(f"{shown}: {e}") from None


def parse_sweep(source: str | Path | dict, base_dir: Path | None = None) -> SweepSpec:
    """A SweepSpec from a sweep TOML file or dict. Raises SweepError naming the bad key/value."""
    import tomllib

    if isinstance(source, dict):
        doc = copy.deepcopy(source)
        base_dir = base_dir or Path.cwd()
    else:
        p = Path(source)
        try:
            with open(p, "rb") as f:
                doc = tomllib.load(f)
        except FileNotFoundError:
            raise SweepError(f"{p}: no such sweep file") from None
        except tomllib.TOMLDecodeError as e:
            raise SweepError(f"{p}: not valid TOML: {e}") from None
        base_dir = p.resolve().parent
    unknown = [k for k in doc if k not in SWEEP_KEYS]
    if unknown:
        raise SweepError(f"unknown key {unknown[0]!r} in the sweep file; allowed: {', '.join(SWEEP_KEYS)}")
    if "base" not in doc:
        raise SweepError("base: missing; name the base scenario (a path or a built-in name)")
    base = doc["base"]
    if not isinstance(base, str):
        raise SweepError(f"base = {_show(base)}: expected a path or a built-in scenario name")
    cand = base_dir / base
    base_ref = str(cand.resolve()) if cand.exists() else base
    try:
        base_sc = load(base_ref)
    except ScenarioError as e:
        raise SweepError(f"base = {base!r}: {e}") from None
    seed = doc.get("seed", 1)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SweepError(f"seed = {_show(seed)}: expected an integer >= 0")
    reps = doc.get("reps", 1)
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        raise SweepError(f"reps = {_show(reps)}: must be an integer >= 1")
    fixed: dict[str, Any] = {}
    st = doc.get("set", {})
    if not isinstance(st, dict):
        raise SweepError(f"set = {_show(st)}: expected a table of key = value")
    _flatten_fixed("", st, fixed)
    for k, v in fixed.items():
        _check_value(base_sc, k, v, "set")
    base_fixed = apply_overrides(base_sc, fixed)
    axes: list[dict[str, list]] = []
    grid = doc.get("grid", {})
    if not isinstance(grid, dict):
        raise SweepError(f"grid = {_show(grid)}: expected a table of key = [values]")
    flat: dict[str, Any] = {}
    if grid:
        _flatten("", grid, flat, "grid")
    for k, vals in flat.items():
        axes.append({k: vals})
    zips = doc.get("zip", [])
    if isinstance(zips, dict):
        zips = [zips]
    if not isinstance(zips, list) or not all(isinstance(z, dict) for z in zips):
        raise SweepError(f"zip = {_show(zips)}: expected [zip] or [[zip]] tables of key = [values]")
    for i, z in enumerate(zips):
        where = "zip" if len(zips) == 1 else f"zip[{i}]"
        zf: dict[str, Any] = {}
        _flatten("", z, zf, where)
        lens = {k: len(v) for k, v in zf.items()}
        if len(set(lens.values())) > 1:
            (k0, n0), (k1, n1) = next(
                ((a, b) for a, b in itertools.combinations(lens.items(), 2) if a[1] != b[1])
            )
            raise SweepError(f"{where}: lists of different lengths: {k0} has {n0} values, {k1} has {n1}")
        axes.append(zf)
    seen: set[str] = set()
    for a in axes:
        for k in a:
            if k in seen:
                raise SweepError(f"{k}: appears in more than one grid/zip axis")
            seen.add(k)
    for a in axes:
        if len(a) == 1:
            for k, vals in a.items():
                for v in vals:
                    _check_value(base_fixed, k, v, "grid" if k in flat else "zip")
            continue
        # A zip's values at one position are applied together (a flow's cc with its cc_params).
        for i in range(len(next(iter(a.values())))):
            _check_values(base_fixed, {k: vals[i] for k, vals in a.items()}, "zip")
    seed_from = doc.get("seed_from")
    if seed_from is not None:
        if not isinstance(seed_from, list) or not all(isinstance(s, str) for s in seed_from):
            raise SweepError(f"seed_from = {_show(seed_from)}: expected a list of grid keys")
        for s in seed_from:
            if s not in seen:
                raise SweepError(
                    f"seed_from: {s!r} is not a grid or zip key; keys: {', '.join(sorted(seen))}"
                )
    name = doc.get("name", base_sc.get("name", "sweep"))
    return SweepSpec(
        base=base_ref, base_scenario=base_sc, name=str(name), description=str(doc.get("description", "")),
        seed=seed, reps=reps, seed_from=seed_from, fixed=fixed, axes=axes,
    )  # fmt: skip


def _flatten_fixed(prefix: str, obj: dict, out: dict[str, Any]) -> None:
    for k, v in obj.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and not key.endswith("qdisc") and not key.endswith("start"):
            _flatten_fixed(key, v, out)
        else:
            out[key] = v


# --------------------------------------------------------------------------- identities


@cache
def code_version() -> str:
    """Package version + digest of the compiled core (a rebuilt core changes run ids)."""
    from aqmlab import _core

    h = hashlib.sha256()
    try:
        with open(_core.__file__, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except (OSError, AttributeError, TypeError):
        h.update(b"?")
    return f"{_core.__version__}+{h.hexdigest()[:12]}"


METRIC_MODULES = tuple(
    f"aqmlab.metrics{m}" for m in ("", ".base", ".queue", ".flows", ".probes", ".summary", ".catalogue")
)
"""The modules whose code computes the numbers a run's row carries (its summary)."""


@cache
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def metrics_version(metrics_fn: str | None = None) -> str:
    """Digest of the source of METRIC_MODULES and of the module of an experiment's per-run
    metric function ("module:function"): a changed metric changes every run id, so a results
    root reused across the change recomputes instead of keeping the old values."""
    import importlib.util

    h = hashlib.sha256()
    for mod in (*METRIC_MODULES, *([metrics_fn.split(":")[0]] if metrics_fn else [])):
        origin = getattr(importlib.util.find_spec(mod), "origin", None)
        st = os.stat(origin) if origin and os.path.isfile(origin) else None
        h.update((_file_digest(origin, st.st_mtime_ns, st.st_size) if st else mod).encode())
    return h.hexdigest()[:12]


def run_id_for(name: str, resolved_digest: str, seed: int, metrics_fn: str | None = None) -> str:
    """Content address of a run: resolved scenario, seed, code version, the metric code
    (``metrics_version``) and the per-run metric function of an experiment, whose results the
    run's row carries."""
    key = f"{resolved_digest}|{seed}|{code_version()}|{metrics_version(metrics_fn)}" + (
        f"|{metrics_fn}" if metrics_fn else ""
    )
    h = hashlib.sha256(key.encode()).hexdigest()[:16]
    return f"{_safe(name)}-{h}"


def toml_literal(v: Any) -> str:
    """A value as a TOML literal for ``--set`` (parse_value reads it back to the same value)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_literal(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_literal(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def reproduce_command(spec: SweepSpec, point: Point, seed: int) -> str:
    """The `aqmlab run` command line that reruns one run of the sweep alone."""
    import shlex

    sets = {**spec.fixed, **point.overrides}
    parts = ["aqmlab", "run", shlex.quote(spec.base)]
    for k, v in sets.items():
        parts += ["--set", shlex.quote(f"{k}={toml_literal(v)}")]
    parts += ["--seed", str(seed)]
    return " ".join(parts)


# --------------------------------------------------------------------------- the worker side


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


# --------------------------------------------------------------------------- the parent side


def _sweep_dirs(where: Path) -> list[Path]:
    """``where`` if it is a sweep directory, else every sweep directory under the results root
    ``where``."""
    where = Path(where).resolve()
    return [where] if (where / SUMMARIES).is_dir() else sorted(where.glob("sweeps/*"))


def read_summaries(where: Path, run_ids: Iterable[str] | None = None, columns: str = "*") -> pd.DataFrame:
    """Committed summaries rows of whole batches (``parts.committed``), one per run id (an ok row
    wins over failed ones).

    ``where`` is a sweep directory, or a results root (then every sweep under it: a run
    completed by any sweep is not recomputed by another one)."""
    files = parts.committed(_sweep_dirs(where))[0]
    if not files:
        return pd.DataFrame(columns=[*SUMMARY_COLUMNS, "filename"])
    import duckdb

    con = duckdb.connect()
    try:
        sql = (f"SELECT {columns}, filename FROM read_parquet({store._parquet_list(files)}, filename = true, "
               "union_by_name = true)")  # fmt: skip
        if run_ids is not None:
            con.register("wanted", pd.DataFrame({"run_id": list(run_ids)}, dtype="object"))
            sql += " WHERE run_id IN (SELECT run_id FROM wanted)"
        df = con.execute(sql + " ORDER BY (status = 'ok'), filename").df()
    finally:
        con.close()
    return df.drop_duplicates("run_id", keep="last").reset_index(drop=True)


def read_extra(root: Path, name: str, run_ids: Iterable[str]) -> pd.DataFrame:
    """The extra table ``name`` (one a metrics function returned beside its row) of ``run_ids``,
    read from every sweep under the results root ``root``: a run that one sweep reused from
    another keeps its tables where it was computed. A run stored by two sweeps counts once (the
    rows of the first file, in file order, that holds it); rows within a run are all kept, equal
    ones included."""
    import pyarrow.compute as pc

    want = set(run_ids)
    files = sorted(Path(root).resolve().glob(f"sweeps/*/{name}/part-*.parquet"))
    parts, seen = [], set()
    for f in files:
        t = pq.read_table(f)
        ids = set(t.column("run_id").unique().to_pylist()) & want - seen
        if ids:
            parts.append(t.filter(pc.is_in(t.column("run_id"), value_set=pa.array(sorted(ids), pa.string()))))
            seen |= ids
    return pa.concat_tables(parts).to_pandas() if parts else pd.DataFrame()


def catalog_rows(sweep_dir: Path, rows: Iterable[dict]) -> list[dict]:
    """``runs`` rows for the completed runs among ``rows`` (see store.sweep_row)."""
    created = pd.Timestamp.now(tz="UTC").tz_localize(None)
    return [store.sweep_row(r, sweep_dir, created) for r in rows if r["status"] == "ok"]


@dataclass
class SweepResult:
    """The outcome of ``run_sweep``: the per-run table, the dataset directory and counts."""

    table: pd.DataFrame
    sweep_dir: Path
    total: int
    ran: int
    skipped: int
    failed: list[dict]
    wall_s: float
    notes: list[str] = field(default_factory=list)  # damaged batches removed or skipped


def _rates(node: Any, under_rate: bool = False) -> Iterator[int]:
    """The rates (bit/s) written under the keys ``rate`` of a scenario's part (a schedule's
    times are skipped: they are no rates), and the mean rates of its resolved traces."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "trace" and isinstance(v, dict) and v.get("ms"):
                yield int(traces.mean_rate_bps(v["ms"]))
                continue
            yield from _rates(v, k == "rate")
    elif isinstance(node, list):
        for v in node:
            yield from _rates(v, under_rate)
    elif under_rate and isinstance(node, str):
        try:
            yield _core.parse_rate(node)
        except ValueError:
            pass


def run_cost(resolved: dict) -> float:
    """A run's expected cost, to start the longest runs first: its duration (s) times the highest
    link rate of its topology (bit/s; 1 where none is written, as on a WiFi medium), i.e. the
    packets its path can carry. Only an order: the cost of a packet differs between runs."""
    return _core.parse_time(str(resolved["duration"])) / 1e9 * max(_rates(resolved["topology"]), default=1)


MAX_BATCH = 100
"""Most runs in one batch (one part file per kept table)."""


def _budget(tasks: list[Task], jobs: int, cost: dict[int, float]) -> float:
    """A batch's expected cost: about eight batches per worker."""
    return sum(cost[t.point] for t in tasks) / (jobs * 8)


def _chunks(
    tasks: list[Task], jobs: int, cost: dict[int, float], budget: float | None = None
) -> list[list[Task]]:
    """The tasks in batches of about equal expected cost (``cost`` of their points; ``budget``
    each, by default ``_budget``), the costliest runs first: the pool starts the longest runs
    while there is still other work to run beside them, instead of ending the sweep waiting on
    one. A point's runs share a batch unless together they cost more than one or outnumber
    MAX_BATCH (so that runs repeating a run that drew no random value are found: ``run_batch``)."""
    budget = _budget(tasks, jobs, cost) if budget is None else budget
    runs_of = Counter(t.point for t in tasks)
    out: list[list[Task]] = []
    spent = 0.0
    for t in sorted(tasks, key=lambda t: -cost[t.point]):  # stable: a point's runs stay together
        c = cost[t.point]
        first = not out or out[-1][-1].point != t.point
        # a point's first run asks room for them all
        need, room = (c * runs_of[t.point], runs_of[t.point]) if first else (c, 1)
        if not out or spent + need > budget or len(out[-1]) + room > MAX_BATCH:
            out.append([])
            spent = 0.0
        out[-1].append(t)
        spent += c
    return out


def _make_batches(point_list, chunks, sweep_dir, keep, metrics_fn, sources) -> list[Batch]:
    """A Batch for each chunk of tasks; ``sources``: point -> the stored run its runs repeat."""
    points = {p.index: p for p in point_list}
    out = []
    for chunk in chunks:
        used = sorted({t.point for t in chunk})
        out.append(
            Batch(
                sweep_dir=str(sweep_dir),
                scenarios={i: points[i].scenario for i in used},
                params={i: points[i].params for i in used},
                overrides={i: points[i].overrides for i in used},
                tasks=chunk,
                keep=keep,
                metrics_fn=metrics_fn,
                sources={i: sources[i] for i in used if i in sources},
            )
        )
    return out


Known = dict[int, Source | None]
"""The grid points with a finished run: the Source their runs repeat, or None when their runs are
simulated (it drew from a random stream, or its draws are not known)."""


class _Schedule:
    """A sweep's pending runs in batches (``_chunks``, one budget throughout) such that every run
    repeating another is found whatever the batching. The runs of a point with no known finished
    run (``known``) whose runs do not share one batch wait, past its first batch, for that batch;
    once it is done (``release``) they follow, as repeats of its run that drew from no random
    stream or simulated. A point with a source costs nothing: its runs repeat that run.
    ``make(chunks, sources)`` makes the batches; ``learn(rows)`` tells what finished runs showed."""

    def __init__(self, todo: list[Task], known: Known, cost: dict[int, float], jobs: int,
                 make: Callable[[list[list[Task]], dict[int, Source]], list[Batch]],
                 learn: Callable[[list[dict]], Known]):  # fmt: skip
        self.cost, self.jobs, self.make, self.learn = cost, jobs, make, learn
        sources = _sources(known)
        price = _priced(cost, sources)
        self.budget = _budget(todo, jobs, price)
        chunks = _chunks(todo, jobs, price, self.budget)
        first: dict[int, int] = {}  # point -> its first batch
        now: list[list[Task]] = []
        self.waiting: dict[int, list[Task]] = {}  # point -> its runs waiting for its first batch
        for i, c in enumerate(chunks):
            now.append([])
            for t in c:
                if t.point in known or first.setdefault(t.point, i) == i:
                    now[-1].append(t)
                else:
                    self.waiting.setdefault(t.point, []).append(t)
        self.first = make([c for c in now if c], sources)

    def release(self, rows: list[dict]) -> list[Batch]:
        """The batches of the runs that waited for the batch that finished with ``rows``."""
        points = {r["point"] for r in rows} & self.waiting.keys()
        if not points:
            return []
        sources = _sources(self.learn(rows))
        ready = [t for p in sorted(points) for t in self.waiting.pop(p)]
        return self.make(_chunks(ready, self.jobs, _priced(self.cost, sources), self.budget), sources)


def _sources(known: Known) -> dict[int, Source]:
    return {p: s for p, s in known.items() if s is not None}


def _priced(cost: dict[int, float], sources: dict[int, Source]) -> dict[int, float]:
    """``cost`` with the points that have a source at none: their runs repeat it."""
    return {**cost, **dict.fromkeys(sources, 0.0)}


def _known(
    rows: Iterable[dict], point_of: dict[str, int], keep: tuple[str, ...], level: dict[int, str]
) -> Known:
    """What finished runs (summaries rows with ``sweep_dir``; summary, meta and extra as dicts) tell
    of their grid points (``point_of``: run id -> point): a point whose run drew from no random
    stream gets a source when that run's parts hold every table kept now (``keep``, as far as its
    record ``level`` records them), preferably a run that repeats no other."""
    out: Known = {}
    ok = (r for r in rows if r["run_id"] in point_of and r["status"] == "ok")
    for r in sorted(ok, key=lambda r: "same_as" in r["meta"]):
        p = point_of[r["run_id"]]
        if not _seed_free(r):
            out.setdefault(p, None)
        elif out.get(p) is None:
            src = _source(r, p, keep, level[p])
            if src is not None:
                out[p] = src
    return out


def _source(row: dict, point: int, keep: tuple[str, ...], level: str) -> Source | None:
    """A stored run as the source of ``point``'s repeats: its row and its parts of the kept tables
    and of the tables its metric function returned; None when a kept table is not stored."""
    sdir, part = Path(row["sweep_dir"]), row["part"]
    files = {
        d.name: str(f)
        for d in sdir.iterdir()
        if d.name != SUMMARIES and (f := d / f"{part}.parquet").is_file()
    }
    files = {n: f for n, f in files.items() if n in keep or n not in store.TABLES}
    if not recorded(dict.fromkeys(n for n in keep if n in store.TABLES), level).keys() <= files.keys():
        return None
    fields = ("run_id", "status", "error", "summary", "meta", "extra")
    return Source(row={**{k: row[k] for k in fields}, "point": point}, files=files)


def _stored_rows(df: pd.DataFrame) -> list[dict]:
    """Rows of ``read_summaries`` (with summary, meta, extra and part) as ``_known`` reads them."""
    return [{**r, "sweep_dir": str(Path(r["filename"]).parent.parent), "summary": _loads(r["summary"]),
             "meta": _loads(r["meta"]), "extra": _loads(r["extra"])} for r in df.to_dict("records")]  # fmt: skip


def _loads(text: Any) -> Any:
    """A JSON column's value; None where it has none (pandas reads a null as NaN)."""
    return json.loads(text) if isinstance(text, str) else None


class _Progress:
    def __init__(self, total: int, done0: int, enabled: bool, title: str):
        self.total, self.done, self.done0, self.failed = total, done0, done0, 0
        self.enabled = enabled
        self.p = None
        if enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.p = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("done {task.fields[ok]}  failed {task.fields[failed]}  remaining {task.fields[left]}"),
                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                console=Console(stderr=True), transient=False,
            )  # fmt: skip
            self.p.start()
            self.task = self.p.add_task(title, total=total, completed=done0, ok=done0, failed=0,
                                        left=total - done0)  # fmt: skip

    def update(self, rows: list[dict]) -> None:
        self.done += len(rows)
        self.failed += sum(r["status"] != "ok" for r in rows)
        if self.p is not None:
            self.p.update(self.task, completed=self.done, ok=self.done - self.failed, failed=self.failed,
                          left=self.total - self.done)  # fmt: skip

    def ran(self, n: int) -> None:
        """``n`` runs of this invocation finished, their batches not necessarily (the bar moves
        with each run; the counts with each batch)."""
        if self.p is not None:
            self.p.update(self.task, completed=max(self.done, self.done0 + n))

    def close(self) -> None:
        if self.p is not None:
            self.p.stop()


QDISC_LABEL = PARAM_PREFIX + "qdisc"


def builtin_qdiscs() -> list[str]:
    from aqmlab import _core

    return [i["name"] for i in json.loads(_core.qdiscs())]


def with_qdiscs(spec: SweepSpec, names: list[str]) -> list[str]:
    """``--qdisc``: runs only these disciplines. A name among the sweep's own cases (its
    ``params.qdisc`` axis) selects that case; any other built-in discipline or ``module:Class`` (a
    discipline written in Python) becomes a new case of that axis, with its default parameters on
    the axis's qdisc keys. A sweep without such an axis gets one (both directions, as
    ``aqmlab run --qdisc``). Returns the cases added."""
    from aqmlab import pyqdisc

    axis = next((a for a in spec.axes if QDISC_LABEL in a), None)
    own = list(axis[QDISC_LABEL]) if axis else []
    known = builtin_qdiscs()
    bad = [n for n in names if n not in own and n not in known and not pyqdisc.is_class_path(n)]
    if bad or not names:
        raise SweepError(f"--qdisc: {bad[0] if bad else ''!r} is not allowed; allowed: "
                         f"{', '.join(dict.fromkeys(own + known))} or module:Class")  # fmt: skip
    added = [n for n in names if n not in own]
    table = {n: pyqdisc.qdisc_table(n) if pyqdisc.is_class_path(n) else {"kind": n} for n in added}
    if axis is None:
        spec.axes.append({QDISC_LABEL: added, **{f"topology.{d}.qdisc": [table[n] for n in added]
                                                  for d in ("down", "up")}})  # fmt: skip
    elif added:
        others = [k for k in axis if k != QDISC_LABEL and not k.endswith(".qdisc")]
        if others:
            raise SweepError(f"--qdisc {added[0]!r}: cannot be added as a case: the sweep's qdisc axis "
                             f"also sets {', '.join(others)}")  # fmt: skip
        for k in axis:
            axis[k] = [*axis[k], *(n if k == QDISC_LABEL else table[n] for n in added)]
    spec.select[QDISC_LABEL] = list(names)
    return added


POLL_S = 0.25
"""Wall time between two looks of the parent at its workers (finished runs, the progress bar)."""
SWEEP_WAIT_S = 10.0
"""How long a sweep waits for another process running the same sweep (``AQMLAB_SWEEP_WAIT_S``)
before it refuses: long enough for the workers of a parent just killed to write their finished
runs and end."""
STOP_GRACE_S = 1.5
"""On an interrupt, the wall time workers get to write their finished runs and exit."""


def _execute(batches: list[Batch], executor: str, jobs: int, scheduler: str | None, on_done, on_ran) -> None:
    """Runs the batches on ``executor``, handing each one's rows to ``on_done``, which returns the
    batches to run next (the runs that waited for it: ``_Schedule``), and the count of runs
    finished so far (where the executor tells) to ``on_ran``. On an interrupt it cancels what it
    can within STOP_GRACE_S; ``run_sweep`` stops the processes left."""
    if not batches:
        return
    run = {"local": _execute_local, "dask": _execute_dask, "ray": _execute_ray}.get(executor)
    if run is None:
        raise SweepError(f"--executor {executor!r}: unknown; allowed: {', '.join(EXECUTORS)}")
    run(batches, jobs, scheduler, on_done, on_ran)


def _execute_local(batches: list[Batch], jobs: int, scheduler: str | None, on_done, on_ran) -> None:
    """With one job, or one batch to run and no pool started, a batch runs in this process."""
    import multiprocessing as mp

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    counter = ctx.Value("q", 0)
    count = _counting(counter)

    def ran_here() -> None:
        count()
        on_ran(counter.value)

    queue, pending, pool = list(batches), set(), None
    _WORKER["ran"] = ran_here
    try:
        while queue or pending:
            if pool is None and (jobs <= 1 or len(queue) == 1):
                queue += on_done(run_batch(queue.pop(0)))
                continue
            pool = pool or ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_PoolWorker.init,
                                               initargs=(counter, os.getpid()))  # fmt: skip
            pending |= {pool.submit(_PoolWorker.run, b) for b in queue}
            queue = []
            done, pending = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            on_ran(counter.value)
            for f in done:
                queue += on_done(f.result())
    except BaseException:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        _WORKER["ran"] = None
    if pool is not None:
        pool.shutdown()


def _execute_dask(batches: list[Batch], jobs: int, scheduler: str | None, on_done, on_ran) -> None:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise SweepError(
            "--executor dask: dask.distributed is not installed (pip install 'aqmlab[dask]')"
        ) from None
    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)

    def close() -> None:
        try:
            client.close()
        finally:
            if cluster is not None:
                cluster.close()

    def stop() -> None:
        # The workers run batches off their main thread, out of reach of signals; a Ctrl-C
        # reached them too, so that a step may fail on a worker that is gone. The cluster is
        # closed whatever failed before: its nannies, in this process, would otherwise start a
        # new worker for each one ``_stop_started`` ends, which runs a batch after the count of
        # the runs kept was taken.
        try:
            with contextlib.suppress(Exception):
                client.run(_interrupt_runs)
            with contextlib.suppress(Exception):
                client.cancel(futs, force=True)
        finally:
            close()

    futs = []
    try:
        futs = client.map(_dask_batch, batches, pure=False)
        running = as_completed(futs)
        for f in running:
            more = client.map(_dask_batch, on_done(f.result()), pure=False)
            futs += more
            running.update(more)
    except BaseException:
        _within(STOP_GRACE_S, stop)
        raise
    close()


def _interrupt_runs() -> None:
    from aqmlab import _core

    _core.interrupt_runs()


class BatchInterrupted(Exception):
    """A batch whose run in progress was stopped (its finished runs are written)."""


def _dask_batch(batch: Batch) -> list[dict]:
    """``run_batch`` as a Dask task: an interrupt is an ordinary error there (a KeyboardInterrupt
    would take the worker down)."""
    try:
        return run_batch(batch)
    except KeyboardInterrupt:
        raise BatchInterrupted from None


def _execute_ray(batches: list[Batch], jobs: int, scheduler: str | None, on_done, on_ran) -> None:
    try:
        import ray
    except ImportError:
        raise SweepError(
            "--executor ray: ray is not installed (pip install 'aqmlab[ray]' or pip install ray)"
        ) from None
    # workers start elsewhere: the driver's directory stays importable (aqmlab.pyqdisc)
    env = {"env_vars": {"AQMLAB_PYTHONPATH": os.pathsep.join(
        filter(None, [os.getcwd(), os.environ.get("AQMLAB_PYTHONPATH")]))}}  # fmt: skip
    ours = not ray.is_initialized()
    ray.init(address=scheduler, ignore_reinit_error=True, runtime_env=env) if scheduler else ray.init(
        num_cpus=jobs, ignore_reinit_error=True, runtime_env=env
    )
    remote = ray.remote(run_batch)
    refs = [remote.remote(b) for b in batches]

    def stop() -> None:
        # a cancelled task gets KeyboardInterrupt: its run stops, its finished runs are written
        for r in refs:
            ray.cancel(r)
        ray.wait(refs, num_returns=len(refs), timeout=STOP_GRACE_S)
        if ours:
            ray.shutdown()

    try:
        while refs:
            ready, refs = ray.wait(refs, num_returns=1, timeout=POLL_S)
            for r in ready:
                refs += [remote.remote(b) for b in on_done(ray.get(r))]
    except BaseException:
        _within(2 * STOP_GRACE_S, stop)
        raise


def _within(seconds: float, fn: Callable[[], Any]) -> None:
    """Calls ``fn`` (an executor's cleanup after an interrupt), waiting for it ``seconds`` at most;
    its errors are dropped (what it leaves running is stopped by ``_stop_started``)."""

    def call() -> None:
        try:
            fn()
        except BaseException:  # noqa: BLE001, S110 - best effort, the processes are killed next
            pass

    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(seconds)


def _descendants() -> set[int]:
    """The processes below this one (children, theirs, ...), from /proc; where there is no
    /proc, the children started by multiprocessing."""
    import multiprocessing as mp

    proc = Path("/proc")
    if not proc.is_dir():
        return {p.pid for p in mp.active_children()}
    parent: dict[int, int] = {}
    for d in proc.iterdir():
        stat = _stat(d.name)
        if stat is not None and stat[0] != "Z":
            parent[int(d.name)] = stat[1]
    below, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - below
        below |= frontier
    return below


def _stat(pid: str) -> tuple[str, int] | None:
    """(state, parent pid) of a process from /proc/PID/stat; None if it is gone or not a pid."""
    if not pid.isdigit():
        return None
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, ppid = text[text.rindex(")") + 2 :].split()[:2]  # the name may hold spaces or ')'
    return state, int(ppid)


def _stop_started(before: set[int]) -> None:
    """Stops every process started below this one since ``before`` was taken (the workers and
    what they started): SIGTERM, on which a local worker writes its finished runs and exits, then
    SIGKILL to any left after STOP_GRACE_S; at once to one that ignores SIGTERM (a helper such as
    multiprocessing's resource tracker)."""
    deadline = time.monotonic() + STOP_GRACE_S
    signalled: set[int] = set()
    while (left := _descendants() - before) and time.monotonic() < deadline:
        for pid in left - signalled:
            _kill(pid, signal.SIGKILL if _ignores(pid, signal.SIGTERM) else signal.SIGTERM)
        signalled |= left
        time.sleep(0.05)
    for pid in left:
        _kill(pid, signal.SIGKILL)


def _ignores(pid: int, sig: int) -> bool:
    """Whether process ``pid`` ignores signal ``sig`` (its SigIgn mask in /proc/PID/status)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return False
    mask = next((int(line.split()[1], 16) for line in lines if line.startswith("SigIgn:")), 0)
    return bool(mask >> (sig - 1) & 1)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


class SweepInterrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM stopped a sweep: its workers are stopped, the ``done`` runs of its
    ``total`` complete (those of earlier invocations too) are kept; rerunning it resumes."""

    def __init__(self, done: int, total: int):
        super().__init__(f"{done} of {total} done; rerun to resume")
        self.done, self.total = done, total


def run_sweep(
    spec: SweepSpec,
    out: str | Path = store.DEFAULT_ROOT,
    jobs: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    keep: Iterable[str] | None = None,
    keep_packets: bool = False,
    metrics_fn: str | None = None,
    progress: bool = False,
) -> SweepResult:
    """Runs (or resumes) a sweep; returns its SweepResult (the table has every run of the sweep,
    including the ones completed by earlier invocations)."""
    t0 = time.perf_counter()
    if executor not in EXECUTORS:
        raise SweepError(f"--executor {executor!r}: unknown; allowed: {', '.join(EXECUTORS)}")
    jobs = jobs or os.cpu_count() or 1
    if jobs < 1:
        raise SweepError(f"--jobs {jobs}: must be >= 1")
    keep_t = tuple(keep) if keep is not None else tuple(t for t in store.TABLES if t != "packets")
    if keep_packets and "packets" not in keep_t:
        keep_t = (*keep_t, "packets")
    out = Path(out)
    all_points = spec.all_points()
    points = [p for p in all_points if spec._selected(p)]
    resolved_by_point: dict[int, dict] = {}
    for p in all_points:
        try:
            rs = resolve(p.scenario)
        except ScenarioError as e:
            raise SweepError(f"grid point {p.params}: {e}") from None
        resolved_by_point[p.index] = rs
        p.resolved_digest = hashlib.sha256(_canon(rs).encode()).hexdigest()
    sweep_dir = out / "sweeps" / spec.sweep_id()
    sweep_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(storelock.locked(sweep_dir / ".lock", f"sweep {sweep_dir}",
                                                storelock.wait_s("AQMLAB_SWEEP_WAIT_S", SWEEP_WAIT_S)))  # fmt: skip
        except storelock.Busy as e:
            raise SweepError(f"{e}; wait for it to end, or stop it") from None
        notes = _open(out, sweep_dir)
        store._dump(sweep_dir / ".sweep.json.tmp", {
            **spec.to_json(), "code_version": code_version(),
            "points": [{"index": p.index, "params": p.params, "overrides": p.overrides,
                        "scenario": resolved_by_point[p.index]} for p in all_points],
        })  # fmt: skip
        os.replace(sweep_dir / ".sweep.json.tmp", sweep_dir / "sweep.json")
        tasks = [
            Task(
                run_id_for(spec.name, p.resolved_digest, s, metrics_fn),
                p.index,
                r,
                s,
                reproduce_command(spec, p, s),
            )
            for p in points
            for r in range(spec.reps)
            for s in [spec.seed_for(p, r)]
        ]
        wanted = {t.run_id for t in tasks}
        prev = read_summaries(out, wanted, "run_id, status, error, summary, meta, extra, part")
        done_ids = set(prev.loc[prev["status"] == "ok", "run_id"]) if len(prev) else set()
        todo = [t for t in tasks if t.run_id not in done_ids]
        # runs completed earlier but missing from the catalog (e.g. killed before a flush)
        _sync_catalog(out, prev)
        cost = {i: run_cost(rs) for i, rs in resolved_by_point.items()}
        point_of = {t.run_id: t.point for t in tasks}
        level = {i: rs["record"]["level"] for i, rs in resolved_by_point.items()}

        def make(chunks: list[list[Task]], sources: dict[int, Source]) -> list[Batch]:
            return _make_batches(points, chunks, sweep_dir, keep_t, metrics_fn, sources)

        def learn(rows: list[dict]) -> Known:
            return _known([{**r, "sweep_dir": str(sweep_dir)} for r in rows], point_of, keep_t, level)

        plan = _Schedule(todo, _known(_stored_rows(prev), point_of, keep_t, level), cost, jobs, make, learn)
        prog = _Progress(len(tasks), len(tasks) - len(todo), progress, spec.name)
        pending_rows: list[dict] = []
        last_flush = [time.monotonic()]

        interrupts = Interrupts()

        def flush() -> None:
            with interrupts.held():  # not inside DuckDB, which turns a KeyboardInterrupt into its Error
                if pending_rows:
                    store._write_rows(out, catalog_rows(sweep_dir, pending_rows))
                    pending_rows.clear()
                last_flush[0] = time.monotonic()

        def on_done(rows: list[dict]) -> list[Batch]:
            prog.update(rows)
            pending_rows.extend(rows)
            if time.monotonic() - last_flush[0] > 10:
                flush()
            return plan.release(rows)

        before, interrupted = _descendants(), False
        with interrupts.catching():  # up to the count of the runs kept: a second signal is ignored
            try:
                _execute(plan.first, executor, jobs, scheduler, on_done, prog.ran)
            except KeyboardInterrupt:
                _stop_started(before)
                interrupted = True
            finally:
                prog.close()
                flush()
            if interrupted:
                if scheduler is None:  # every worker was this sweep's own process and is gone now:
                    parts.clean(sweep_dir)  # a part one was writing when it was stopped is not left behind
                kept = read_summaries(out, wanted, "run_id, status, summary, meta")
                _sync_catalog(out, kept)  # the runs that workers wrote as they stopped
                raise SweepInterrupted(int((kept["status"] == "ok").sum()), len(tasks))
        table = summaries_table(out, wanted)
        cols = ["run_id", "point", "rep", "seed", "error"]
        failed = table[table["status"] != "ok"][cols].to_dict("records")
        return SweepResult(table, sweep_dir, len(tasks), len(todo), len(tasks) - len(todo), failed,
                           time.perf_counter() - t0, notes)  # fmt: skip


def _open(out: Path, sweep_dir: Path) -> list[str]:
    """Opens a sweep dataset under its lock: removes what dead writers left (``parts.clean``) and
    the batches that are not whole, checked in full, so that their runs are redone (their
    catalog rows go with them); returns a line for each, and for each batch of another sweep of
    the root that is not whole (skipped: its runs are redone here if this sweep has them)."""
    parts.clean(sweep_dir)
    bad = parts.committed([sweep_dir], deep=True)[1]
    for f, _ in bad:
        parts.remove(f)
    if bad:
        store.rebuild_catalog(out)
    others = [d for d in _sweep_dirs(out) if d != sweep_dir.resolve()]
    return [f"{why}; its runs are redone" for _, why in bad] + [
        f"skipped {why}" for _, why in parts.committed(others)[1]
    ]


def _sync_catalog(out: Path, prev: pd.DataFrame) -> None:
    ok = prev[prev["status"] == "ok"] if len(prev) else prev
    if not len(ok):
        return
    missing = ok[~ok["run_id"].isin(store.catalog_ids(out))]
    if len(missing):
        rows = [store.sweep_row(r, Path(r["filename"]).parent.parent) for r in missing.to_dict("records")]
        store._write_rows(out, rows)


def summaries_table(where: Path, run_ids: set[str] | None = None) -> pd.DataFrame:
    """The per-run table of a sweep: run_id, point, rep, seed, status, error, the params as
    columns, the flattened summary (store.RUN_COLUMNS metrics), the ``extra`` metrics and
    ``same_as`` (the run a run repeats, see ``run_batch``).
    ``where``: a sweep directory, or a results root with ``run_ids`` (see read_summaries)."""
    df = read_summaries(where, run_ids)
    rows = []
    for r in df.to_dict("records"):
        row = {k: r[k] for k in ("run_id", "point", "rep", "seed", "status", "error")}
        row["seed"] = int(row["seed"])
        if r["status"] == "ok":
            summary, meta = json.loads(r["summary"]), json.loads(r["meta"])
            flat = store.flatten_summary(summary, meta)
            row.update({k: flat[k] for k in store.RUN_COLUMNS[store.RUN_COLUMNS.index("qdisc") :]})
            row.update(json.loads(r["extra"]) or {})
            row["same_as"] = meta.get("same_as")  # the run it repeats (``_repeat``), if any
        row.update(json.loads(r["params"]))  # the grid values and labels win over summary columns
        row["reproduce_command"] = r["reproduce_command"]
        rows.append(row)
    return pd.DataFrame(rows).sort_values(["point", "rep"], kind="stable").reset_index(drop=True) if rows else (
        pd.DataFrame(columns=["run_id", "point", "rep", "seed", "status", "error"]))  # fmt: skip


# --------------------------------------------------------------------------- the Python API


def sweep(
    sweep_file: str | Path | dict,
    reps: int | None = None,
    jobs: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    out: str | Path = store.DEFAULT_ROOT,
    keep_packets: bool = False,
    progress: bool = False,
) -> pd.DataFrame:
    """Runs (or resumes) a sweep file and returns a pandas table of per-run summaries (one row
    per run: run_id, point, rep, seed, status, error, the grid values, the summary metrics).
    ``table.attrs['sweep_dir']`` is the dataset directory."""
    spec = parse_sweep(sweep_file)
    if reps is not None:
        if reps < 1:
            raise SweepError(f"--reps {reps}: must be >= 1")
        spec.reps = reps
    res = run_sweep(spec, out=out, jobs=jobs, executor=executor, scheduler=scheduler,
                    keep_packets=keep_packets, progress=progress)  # fmt: skip
    res.table.attrs.update(sweep_dir=str(res.sweep_dir), wall_s=res.wall_s, ran=res.ran, skipped=res.skipped)
    return res.table
