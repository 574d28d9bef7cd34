"""SQL over the results: an in-memory DuckDB with ``runs`` (a copy of the catalog) and one view
per recorded table over the complete runs' files (``connect``); ``query`` confined to reading the
results root; the catalog's rows listed and filtered by ``KEY OP VALUE`` conditions."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from aqmlab.layout import TABLES
from aqmlab.store.catalog import (
    CATALOG,
    RUN_COLUMNS,
    _columns,
    _ddl,
    _file_rows,
    _insert,
    catalog_lock,
    grid_column,
    rebuild_catalog,
)
from aqmlab.store.read import (
    DEFAULT_ROOT,
    _parquet_list,
    _sql_str,
    scan_runs,
    sweep_parts,
    sweep_runs,
)


def _view_sources(root: Path, table: str, run_dirs: list[Path]) -> list[str]:
    """SELECTs (each with a ``run_id`` column) whose UNION BY NAME forms view ``table``.

    Per-run files: ``<run_dir>/<table>.parquet`` of the complete run directories ``run_dirs``
    (run_id = directory name). The sweep layout ``<root>/sweeps/*/<table>/part-*.parquet``
    carries ``run_id``. Both are explicit lists of readable files, never globs, so a crash's
    ``.tmp-*`` directory or a truncated file cannot make every query fail.
    """
    root = Path(root).resolve()
    out = []
    files = [d.resolve() / f"{table}.parquet" for d in run_dirs if (d / f"{table}.parquet").exists()]
    if files:
        pat = _parquet_list(files)
        out.append(
            f"SELECT * EXCLUDE (filename), regexp_extract(filename, '([^/\\\\]+)[/\\\\]{table}\\.parquet$', 1)"
            f" AS run_id FROM read_parquet({pat}, filename = true, union_by_name = true)"
        )
    parts = sweep_parts(root, table)[0]
    if parts:
        out.append(f"SELECT * FROM read_parquet({_parquet_list(parts)}, union_by_name = true)")
    return out


def connect(root: Path = DEFAULT_ROOT) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with ``runs`` (a copy of the catalog) and one view per table.

    The catalog is read under its shared lock and copied, so that a writer never waits for a
    query. It is a derived cache: when it is missing, unreadable, written by an older version or
    lags behind the files (a writer killed between its rename and ``catalog_add``) it is rebuilt,
    or, where the root cannot be written (a read-only or full disk), made in memory. Views only
    include complete runs; unreadable files are skipped (``skipped`` lists them).
    """
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"results root {root} is not a directory" if root.exists()
                                 else f"results root {root} does not exist")  # fmt: skip
    good, _ = scan_runs(root)
    con = duckdb.connect()
    if not _copy_catalog(con, root, good):
        try:
            rebuild_catalog(root)
            copied = _copy_catalog(con, root, good)
        except (OSError, duckdb.IOException):
            copied = False
        if not copied:
            con.execute("DROP TABLE IF EXISTS runs")
            con.execute(_ddl())
            _insert(con, _file_rows(root)[0], _columns(con))
    for t in TABLES:
        src = _view_sources(root, t, good)
        if src:
            union = " UNION ALL BY NAME ".join(f"({s})" for s in src)
            con.execute(
                f"CREATE TEMP VIEW {t} AS SELECT * FROM ({union}) WHERE run_id IN (SELECT run_id FROM runs)"
            )
    return con


def _copy_catalog(con: duckdb.DuckDBPyConnection, root: Path, good: list[Path]) -> bool:
    """Copies the catalog's ``runs`` into ``con``, under the catalog's shared lock; False (and
    nothing copied) when it is missing, unreadable, of an older version or lags behind the
    complete runs ``good`` and the sweep runs."""
    cat = root / CATALOG
    with catalog_lock(root, shared=True):
        if not cat.is_file():
            return False
        try:
            con.execute(f"ATTACH {_sql_str(str(cat.resolve()))} AS cat (READ_ONLY)")
        except duckdb.Error:
            return False
        try:
            known = {r[0] for r in con.execute("SELECT run_id FROM cat.runs").fetchall()}
            current = set(RUN_COLUMNS) <= set(_columns(con, "cat.runs"))
            if (
                not current
                or any(d.name not in known for d in good)
                or any(p.name not in known for p in sweep_runs(root))
            ):
                return False
            con.execute("CREATE TABLE runs AS SELECT * FROM cat.runs")
            return True
        except duckdb.Error:
            return False
        finally:
            con.execute("DETACH cat")


QUERY_STATEMENTS = ("SELECT", "EXPLAIN")
"""The statements ``query`` runs without ``allow_files``: reading only (SELECT covers WITH,
FROM-first, VALUES, DESCRIBE, SHOW and SUMMARIZE)."""


class QueryRefused(ValueError):
    """A statement ``query`` does not run without ``allow_files``."""


def confine(con: duckdb.DuckDBPyConnection, root: Path, sql: str) -> None:
    """Confines ``con`` to reading the results root ``root`` before it runs ``sql``: only the
    QUERY_STATEMENTS, no file read or written outside ``root`` (DuckDB's
    ``enable_external_access`` off, ``root`` its one allowed directory), no extension installed or
    loaded, the configuration locked."""
    for st in duckdb.extract_statements(sql):
        kind = st.type.name
        if kind not in QUERY_STATEMENTS:
            raise QueryRefused(f"a {kind} statement is not allowed; allowed: {' and '.join(QUERY_STATEMENTS)} "
                               "statements (--allow-files lifts this)")  # fmt: skip
    con.execute("SET allowed_directories = ?", [[str(Path(root).resolve()) + os.sep]])
    for setting in ("enable_external_access", "autoinstall_known_extensions", "autoload_known_extensions"):
        con.execute(f"SET {setting} = false")
    con.execute("SET lock_configuration = true")


def query(root: Path, sql: str, allow_files: bool = False) -> pd.DataFrame:
    """Run SQL over ``runs`` and the table views; returns a pandas DataFrame. Without
    ``allow_files`` only reading statements over the results root run (``confine``)."""
    con = connect(root)
    try:
        if not allow_files:
            confine(con, root, sql)
        return con.execute(sql).df()
    finally:
        con.close()


def list_runs(
    root: Path = DEFAULT_ROOT, scenario: str | None = None, where: str | None = None, sweep: str | None = None
) -> pd.DataFrame:
    """Catalog rows (newest first), optionally for one scenario name, one sweep name and/or
    comparisons of columns with values (``where_sql``; ValueError names a bad one)."""
    conds, params = [], []
    if scenario is not None:
        conds.append("(scenario = ? OR name = ?)")
        params += [scenario, scenario]
    if sweep is not None:
        conds.append("sweep = ?")
        params.append(sweep)
    con = connect(root)
    try:
        if where:
            cond, args = where_sql(where, _columns(con))
            conds.append(cond)
            params += args
        sql = "SELECT * FROM runs" + (" WHERE " + " AND ".join(conds) if conds else "")
        return con.execute(sql + " ORDER BY created DESC, run_id", params).df()
    finally:
        con.close()


_SWEEP_OF_PATH = "regexp_extract(path, 'sweeps[/\\\\]([^/\\\\]+)[/\\\\]runs[/\\\\][^/\\\\]+$', 1)"


def sweep_run_paths(root: Path, sweep: str) -> list[Path]:
    """The (virtual) paths of the complete runs of the sweep named ``sweep`` (its ``name``, or
    its dataset directory ``<name>-<digest>``) under ``root``, in grid order; [] when no sweep
    has that name."""
    if not (Path(root) / "sweeps").is_dir():
        return []
    con = connect(root)
    try:
        rows = con.execute(
            f"SELECT path FROM runs WHERE sweep = ? OR {_SWEEP_OF_PATH} = ? ORDER BY params, seed, run_id",
            [sweep, sweep],
        ).fetchall()
    finally:
        con.close()
    return [Path(r[0]) for r in rows]


def filter_run_ids(root: Path, run_ids: list[str], where: Iterable[str]) -> list[str]:
    """The runs among ``run_ids`` whose ``runs`` row matches every ``KEY=VALUE`` of ``where``.

    KEY is a grid key as the sweep file writes it (``topology.up.rate``, ``params.load``), as
    ``meta['params']`` stores it (``load``, ``qdisc`` for the label ``params.qdisc``), else any
    ``runs`` column, else the last part of one grid key (``rate``); VALUE is read as the
    column's type (a number for a number column). ValueError names a bad condition."""
    where = list(where)
    if not where:
        return list(run_ids)
    con = connect(root)
    try:
        cols = _columns(con)
        conds, args = [], []
        for w in where:
            col, op, value = _condition(w, cols)
            conds.append(f'"{col}" {op} ?')
            args.append(value)
        con.register("wanted", pd.DataFrame({"run_id": list(run_ids)}, dtype="object"))
        keep = {r[0] for r in con.execute(
            f"SELECT run_id FROM runs WHERE run_id IN (SELECT run_id FROM wanted) AND {' AND '.join(conds)}", args
        ).fetchall()}  # fmt: skip
    finally:
        con.close()
    return [r for r in run_ids if r in keep]


_NUMERIC = ("BIGINT", "DOUBLE", "INTEGER", "HUGEINT", "UBIGINT", "FLOAT")


_OP = re.compile(r"<=|>=|!=|<>|=|<|>")
_NULL = re.compile(r"(\S+)\s+is\s+(not\s+)?null", re.IGNORECASE)
_JOIN = re.compile(r"""('(?:[^']|'')*'|"[^"]*")|\s+(and|or)\s+""", re.IGNORECASE)


def where_sql(text: str, cols: dict[str, str]) -> tuple[str, list]:
    """The SQL condition and its arguments of ``runs --where``: comparisons ``KEY OP VALUE``
    (``_condition``) joined by ``and`` / ``or`` (and binding first, as in SQL); never SQL text
    of the user's."""
    pieces, joins, at = [], [], 0
    for m in _JOIN.finditer(text):
        if m.group(2):
            pieces.append(text[at : m.start()])
            joins.append(m.group(2).upper())
            at = m.end()
    pieces.append(text[at:])
    sql, args = [], []
    for i, piece in enumerate(pieces):
        sql += [joins[i - 1]] if i else []
        null = _NULL.fullmatch(piece.strip())
        if null:
            col = _typed(null.group(1), "", dict.fromkeys(cols, "VARCHAR"), [])[0]  # the column only
            sql.append(f'"{col}" IS {"NOT " if null.group(2) else ""}NULL')
            continue
        col, op, value = _condition(piece, cols)
        sql.append(f'"{col}" {op} ?')
        args.append(value)
    return "(" + " ".join(sql) + ")", args


def _condition(text: str, cols: dict[str, str]) -> tuple[str, str, Any]:
    """(column, operator, typed value) of one ``KEY OP VALUE`` condition, OP one of ``=``, ``!=``
    (``<>``), ``<``, ``<=``, ``>``, ``>=`` (see ``filter_run_ids``)."""
    m = _OP.search(text)
    key = text[: m.start()].strip() if m else ""
    value = text[m.end() :].strip() if m else ""
    grid = [c for c in cols if c not in RUN_COLUMNS]
    if value[:1] in ("'", '"'):
        q = value[0]
        if len(value) < 2 or value[-1] != q or q in value[1:-1].replace(q * 2, ""):
            raise ValueError(f"--where {text.strip()!r}: a quoted value must end with its quote ({q}) and "
                             f"double any {q} inside")  # fmt: skip
        value = value[1:-1].replace(q * 2, q)
    if not m or not key:
        raise ValueError(f"--where {text.strip()!r}: expected KEY OP VALUE (OP one of = != < <= > >=), "
                         f"e.g. {grid[0] if grid else 'seed'}=...")  # fmt: skip
    col, value = _typed(key, value, cols, grid)
    return col, m.group(), value


def _typed(key: str, value: str, cols: dict[str, str], grid: list[str]) -> tuple[str, Any]:
    """The column ``key`` names and ``value`` read as its type."""
    named = [c for c in (grid_column(key), grid_column(key.removeprefix("params.")), key) if c in cols]
    tail = [c for c in grid if c.endswith("_" + grid_column(key))]  # a short key: 'rate'
    col = named[0] if named else tail[0] if len(tail) == 1 else None
    if col is None:
        raise ValueError(f"--where {key!r}: no such key; allowed: the grid keys "
                         f"({', '.join(grid) or 'none'}) or a runs column (aqmlab query 'DESCRIBE runs')")  # fmt: skip
    if cols[col] in _NUMERIC:
        try:
            return col, float(value)
        except ValueError:
            raise ValueError(f"--where {key}={value}: {col} holds numbers; allowed: a number") from None
    if cols[col] == "BOOLEAN":
        if value.lower() not in ("true", "false"):
            raise ValueError(f"--where {key}={value}: {col} holds true/false; allowed: true, false")
        return col, value.lower() == "true"
    return col, value
