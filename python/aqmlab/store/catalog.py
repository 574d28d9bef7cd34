"""The catalog: ``<root>/catalog.duckdb``, table ``runs``, one row per complete run (a run
directory's or a sweep run's), written only under the catalog's lock (``storelock``), in one
transaction per update; a derived cache, rebuilt from the files (``rebuild_catalog``)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from aqmlab import columns, storelock
from aqmlab.metrics import catalogue
from aqmlab.store.documents import _json_default
from aqmlab.store.read import CorruptRun, _open_dir, committed_summaries, scan_runs, sweep_name

CATALOG = "catalog.duckdb"


RUN_COLUMNS = [
    "run_id", "name", "scenario", "sweep", "seed", "created", "version", "path", "params",
    "qdisc", "up_qdisc", "dir", "duration_s", "warmup_s", "wall_s", "events",
]  # fmt: skip
RUN_COLUMNS += [c for c in catalogue.CATALOG_COLUMNS if c not in RUN_COLUMNS]


def _num(x) -> float | None:
    return None if x is None else float(x)


def _created(meta: dict, run_dir: Path) -> pd.Timestamp:
    if meta.get("created"):
        return pd.Timestamp(meta["created"]).tz_localize(None)
    return pd.Timestamp((run_dir / "summary.json").stat().st_mtime, unit="s")


def catalog_row(run_dir: Path) -> dict:
    """The ``runs`` row of a complete run directory (see ``flatten_summary``)."""
    run = _open_dir(Path(run_dir))
    return _row(run.path, run.meta, run.summary, run.scenario)


def _row(run_dir: Path, meta: dict, summary: dict, scenario: dict | None = None) -> dict:
    """The ``runs`` row of the run stored in ``run_dir`` with these documents."""
    row = flatten_summary(summary, meta, scenario)
    row.update(run_id=run_dir.name, created=_created(meta, run_dir), path=str(run_dir.resolve()))
    return row


def flatten_summary(s: dict, meta: dict, scenario: dict | None = None) -> dict:
    """Flatten a run summary into the ``runs`` columns, plus one column per grid value of a
    sweep run (``grid_column``).

    Unprefixed link metrics are the ``down`` direction's bottleneck (``summary['bottleneck']``),
    ``up_*`` the ``up`` direction's; ``dir`` names the loaded direction(s) (``columns.loaded_dirs``);
    ``probe_rtt_p50/p95_ms`` are the first probe stream's, means are over probe streams.
    """
    row: dict[str, Any] = {c: None for c in RUN_COLUMNS}
    row.update(
        name=meta.get("name"),
        scenario=(scenario or meta.get("scenario") or {}).get("name", meta.get("name")),
        seed=meta.get("seed"),
        version=meta.get("version"),
        params=json.dumps(meta.get("params", {}), sort_keys=True, default=_json_default),
        duration_s=_num(meta.get("duration_ns")) / 1e9 if meta.get("duration_ns") is not None else None,
    )
    row.update(catalogue.catalog_values(s))
    row["dir"] = columns.dir_name(columns.loaded_dirs(row))
    row.update({grid_column(k): v for k, v in (meta.get("params") or {}).items()})
    return row


def grid_column(key: str) -> str:
    """The ``runs`` column of a sweep's grid value (its ``meta['params']`` key): the key with
    every character other than a letter, digit or ``_`` replaced by ``_``, lower case
    (``topology.up.rate`` -> ``topology_up_rate``, the label ``params.load`` -> ``load``);
    ``params_`` in front when that would be a summary column or not start with a letter (the
    label ``params.qdisc`` -> ``params_qdisc``, beside the ``qdisc`` of the down link)."""
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in str(key).lower())
    return name if name[:1].isalpha() and name not in RUN_COLUMNS else f"params_{name}"


_RUNS_DDL = """CREATE TABLE IF NOT EXISTS runs (
  run_id VARCHAR PRIMARY KEY, name VARCHAR, scenario VARCHAR, sweep VARCHAR, seed BIGINT, created TIMESTAMP,
  version VARCHAR, path VARCHAR, params JSON, qdisc VARCHAR, up_qdisc VARCHAR, dir VARCHAR, duration_s DOUBLE,
  warmup_s DOUBLE, wall_s DOUBLE, events BIGINT, {metrics})"""


def _ddl() -> str:
    fixed = RUN_COLUMNS.index("events") + 1
    cols = [f"{c} {catalogue.CATALOG_COLUMNS[c].sql}" for c in RUN_COLUMNS[fixed:]]
    return _RUNS_DDL.format(metrics=", ".join(cols))


# The SQL type of a grid value, and the type two of them widen to in one column.
_PY_SQL = ((bool, "BOOLEAN"), (int, "BIGINT"), (float, "DOUBLE"))
_PANDAS = {"BOOLEAN": "boolean", "BIGINT": "Int64", "DOUBLE": "Float64", "VARCHAR": "string"}


def _sql_type(v: Any) -> str | None:
    if v is None:
        return None
    return next((t for py, t in _PY_SQL if isinstance(v, py)), "VARCHAR")


def _wider(a: str | None, b: str | None) -> str | None:
    if a is None or b is None or a == b:
        return a or b
    return "DOUBLE" if {a, b} == {"BIGINT", "DOUBLE"} else "VARCHAR"


def _grid_types(rows: list[dict], have: dict[str, str]) -> dict[str, str]:
    """The grid columns of ``rows`` (keys beyond RUN_COLUMNS) with their SQL types, widened
    with the types ``have`` already in the catalog: numbers stay numbers, a column mixing kinds
    holds text; a table or list value is its JSON text."""
    types: dict[str, str | None] = {}
    for r in rows:
        for k, v in r.items():
            if k not in RUN_COLUMNS:
                types[k] = _wider(types.get(k, have.get(k)), _sql_type(v))
    return {k: t or "VARCHAR" for k, t in types.items()}


def _grid_series(values: list, sql: str) -> pd.Series:
    if sql == "VARCHAR":
        values = [v if v is None or isinstance(v, str) else json.dumps(v, sort_keys=True, separators=(",", ":"))
                  for v in values]  # fmt: skip
    return pd.Series(values, dtype=_PANDAS[sql])


def _columns(con: duckdb.DuckDBPyConnection, table: str = "runs") -> dict[str, str]:
    return {r[0]: r[1] for r in con.execute(f"DESCRIBE {table}").fetchall()}


CATALOG_WAIT_S = 60.0
"""How long a command waits for the catalog another one is updating (``AQMLAB_CATALOG_WAIT_S``):
updates take milliseconds, so every concurrent command's lands."""


def catalog_lock(root: Path, shared: bool = False):
    """The catalog's lock (``storelock.locked``): exclusive to update it, shared to read it."""
    return storelock.locked(Path(root) / ".catalog.lock", f"the catalog of {root}",
                            storelock.wait_s("AQMLAB_CATALOG_WAIT_S", CATALOG_WAIT_S), shared)  # fmt: skip


def _write_rows(root: Path, rows: list[dict]) -> None:
    """Adds (or replaces) ``rows`` in the catalog, under its lock; a catalog that is unreadable
    or of an older version is rebuilt from the files instead (it is a derived cache)."""
    with catalog_lock(root):
        try:
            con = duckdb.connect(str(Path(root) / CATALOG))
        except duckdb.Error:
            rebuild_catalog(root)
            return
        try:
            con.execute(_ddl())
            have = _columns(con)
            current = set(RUN_COLUMNS) <= set(have)
            if current and rows:
                _insert(con, rows, have)
        finally:
            con.close()
        if not current:
            rebuild_catalog(root)


def _insert(con: duckdb.DuckDBPyConnection, rows: list[dict], have: dict[str, str]) -> None:
    """Replace ``rows`` in ``runs`` in one transaction, adding or widening grid columns first."""
    grid = _grid_types(rows, have)
    df = pd.DataFrame(rows, columns=RUN_COLUMNS)
    for col, sql in grid.items():
        df[col] = _grid_series([r.get(col) for r in rows], sql)
    con.register("new_rows", df)
    con.execute("BEGIN")
    for col, sql in grid.items():
        if col not in have:
            con.execute(f'ALTER TABLE runs ADD COLUMN "{col}" {sql}')
        elif have[col] != sql:
            con.execute(f'ALTER TABLE runs ALTER "{col}" SET DATA TYPE {sql}')
    con.execute("DELETE FROM runs WHERE run_id IN (SELECT run_id FROM new_rows)")
    con.execute("INSERT INTO runs BY NAME SELECT * FROM new_rows")
    con.execute("COMMIT")
    con.unregister("new_rows")


def catalog_ids(root: Path) -> set[str]:
    """The run ids in the catalog of ``root`` (none when it is missing or unreadable)."""
    cat = Path(root) / CATALOG
    with catalog_lock(root, shared=True):
        if not cat.is_file():
            return set()
        try:
            con = duckdb.connect(str(cat), read_only=True)
        except duckdb.Error:
            return set()
        try:
            return {r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()}
        except duckdb.Error:
            return set()
        finally:
            con.close()


def catalog_add(root: Path, run_dir: Path) -> None:
    """Add (or replace) one complete run in ``<root>/catalog.duckdb``. CorruptRun if it isn't."""
    catalog_add_many(root, [run_dir])


def catalog_add_many(root: Path, run_dirs: Iterable[Path]) -> None:
    """Add many runs in one transaction (for sweeps). Every directory must be complete."""
    _write_rows(Path(root), [catalog_row(Path(d)) for d in run_dirs])


def sweep_row(r: dict, sweep_dir: Path, created=None) -> dict:
    """The ``runs`` row of a completed sweep run (a summaries-part row as a dict);
    ``path`` is the run's virtual path ``<sweep_dir>/runs/<run_id>``."""
    summary = r["summary"] if isinstance(r["summary"], dict) else json.loads(r["summary"])
    meta = r["meta"] if isinstance(r["meta"], dict) else json.loads(r["meta"])
    row = flatten_summary(summary, meta)
    row.update(
        run_id=r["run_id"],
        sweep=sweep_name(str(Path(sweep_dir).resolve())),
        created=created if created is not None else pd.Timestamp.now(tz="UTC").tz_localize(None),
        path=str(Path(sweep_dir).resolve() / "runs" / r["run_id"]),
    )
    return row


def sweep_catalog_rows(root: Path) -> list[dict]:
    """``runs`` rows of every completed run of every sweep dataset under ``root`` (a run in two
    parts, both holding the same run, from the last by name)."""
    latest = {rid: (summary, meta, f) for rid, summary, meta, f in
              committed_summaries(root, "run_id, summary, meta, filename")}  # fmt: skip
    # a run was created when its batch was committed: its summaries part's time, which a rebuild
    # keeps (it was the time of the rebuild, renewed by every `aqmlab runs`)
    made = {f: _committed_at(Path(f)) for _, _, f in latest.values()}
    return [sweep_row({"run_id": rid, "summary": summary, "meta": meta}, Path(f).parent.parent, made[f])
            for rid, (summary, meta, f) in latest.items()]  # fmt: skip


def _committed_at(part: Path) -> pd.Timestamp:
    """When a summaries part was committed (renamed into place): its modification time, UTC."""
    return pd.Timestamp(part.stat().st_mtime, unit="s")


def _file_rows(root: Path) -> tuple[list[dict], list[tuple[Path, str]]]:
    """The ``runs`` rows of every complete run under ``root`` read from the files, and the
    skipped [(dir, reason)]."""
    good, bad = scan_runs(Path(root))
    rows = []
    for d in good:
        try:
            rows.append(catalog_row(d))
        except CorruptRun as e:
            bad.append((d, str(e)))
    return rows + sweep_catalog_rows(Path(root)), bad


def rebuild_catalog(root: Path) -> list[tuple[Path, str]]:
    """Rebuild ``runs`` from the run directories and the sweep datasets, under the catalog's
    lock, into a new file renamed over the old one (a reader still holding the old one reads
    it whole); returns the skipped [(dir, reason)]."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    with catalog_lock(root):
        rows, bad = _file_rows(root)
        tmp = root / f".{CATALOG}.{storelock.Owner.me().token}.tmp"
        try:
            con = duckdb.connect(str(tmp))
            try:
                con.execute(_ddl())
                _insert(con, rows, _columns(con))
            finally:
                con.close()
            Path(f"{root / CATALOG}.wal").unlink(missing_ok=True)  # the old file's, not the new one's
            os.replace(tmp, root / CATALOG)
        finally:
            tmp.unlink(missing_ok=True)
            Path(f"{tmp}.wal").unlink(missing_ok=True)
    return bad
