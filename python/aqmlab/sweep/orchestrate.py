"""The orchestration: ``run_sweep`` opens a sweep dataset under its lock, skips the runs already
stored, schedules the others in batches (``_Schedule``: the costliest first, the repeats of a
run that drew no random value after it), runs them on an executor with a progress bar, keeps the
catalog up to date, and stops cleanly on an interrupt; the per-run table read back."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from aqmlab import _core, parts, store, storelock, traces
from aqmlab.api import Interrupts, recorded
from aqmlab.scenario import ScenarioError, resolve
from aqmlab.store.catalog import _write_rows
from aqmlab.store.read import _parquet_list
from aqmlab.sweep.definition import SweepError, SweepSpec, parse_sweep
from aqmlab.sweep.executors import EXECUTORS, _descendants, _execute, _stop_started
from aqmlab.sweep.identity import _canon, code_version, reproduce_command, run_id_for
from aqmlab.sweep.worker import SUMMARIES, SUMMARY_COLUMNS, Batch, Source, Task, _seed_free

RUN_PROVENANCE = ("reproduce_command", "same_as")
"""Columns of the per-run table (``summaries_table``) that say how a run was made, not what it
measured or which grid point it is."""


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
        sql = (f"SELECT {columns}, filename FROM read_parquet({_parquet_list(files)}, filename = true, "
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


SWEEP_WAIT_S = 10.0
"""How long a sweep waits for another process running the same sweep (``AQMLAB_SWEEP_WAIT_S``)
before it refuses: long enough for the workers of a parent just killed to write their finished
runs and end."""


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
                reproduce_command(spec.base, {**spec.fixed, **p.overrides}, s),
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
                    _write_rows(out, catalog_rows(sweep_dir, pending_rows))
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
        _write_rows(out, rows)


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
