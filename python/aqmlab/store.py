"""Results on disk: one directory per run (Parquet + JSON) and a DuckDB catalog over them.

Layout under a results root (default ``./aqmlab-results``)::

    <root>/<run_id>/scenario.json      the resolved scenario (meta['scenario'])
    <root>/<run_id>/meta.json          the run's meta dict
    <root>/<run_id>/summary.json       metrics.summarize(...); written LAST-in-content, the whole
                                       directory appears at once by rename
    <root>/<run_id>/<table>.parquet    one file per recorded table
    <root>/catalog.duckdb              table ``runs`` (one row per complete run)

A run is written into ``<root>/.tmp-<run_id>-<pid>/`` and renamed into place (docs/architecture.md,
principle 8), so a crash never leaves a directory that looks complete: listings only accept
directories whose name does not start with ``.`` and that hold a parseable ``summary.json`` and
``meta.json`` and readable Parquet footers.

Catalog and views. ``catalog.duckdb`` holds the ``runs`` table only; it is written only by the
calling process (``catalog_add``, ``catalog_add_many``, ``rebuild_catalog``). ``query`` opens an
in-memory DuckDB, attaches the catalog read-only and defines views ``packets``, ``queue``,
``flow_series``, ``probes``, ``flows``, ``links``, ``rate_schedule`` with ``read_parquet`` over
explicit lists of readable files (never globs: a crash's ``.tmp-*`` directory or a truncated file
is skipped and reported by ``skipped``, never fatal), deriving ``run_id`` from the file name, and
keeping only runs in ``runs``. The lists are ``_view_sources``: ``<run>/<table>.parquet`` of the
complete run directories and the sweep layout of sweep.py (many runs per file, a ``run_id``
column, ``<root>/sweeps/<sweep>/<table>/part-*.parquet``) as a second ``read_parquet`` unioned BY
NAME, with no change to users' SQL. The catalog is a derived cache: ``connect`` rebuilds it when it
is unreadable or lags behind the files (a writer killed between its rename and ``catalog_add``). Sweep runs have
catalog rows like run directories (``sweep_row``), ``resolve_run`` maps their ids to the virtual
path ``<root>/sweeps/<sweep>/runs/<run_id>`` and ``load_run`` reads them from their parts.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from aqmlab import _core, columns, parts, storelock
from aqmlab.metrics import catalogue

# The tables a run returns, as the core declares them (record/tables.rs), in storing order:
# name, what a row is, the lowest recording level that keeps it, and the columns.
LAYOUT: list[dict] = json.loads(_core.table_layout())
TABLES = tuple(t["name"] for t in LAYOUT)
CATALOG = "catalog.duckdb"
DEFAULT_ROOT = Path("aqmlab-results")


class RunNotFound(LookupError):
    """No (unique) complete run matches the given id or path."""


class CorruptRun(ValueError):
    """A run directory is half-written or unreadable."""


# --------------------------------------------------------------------------- writing


def _json_default(o: Any):
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON-serialisable: {type(o).__name__}")


INDENT_MAX_BYTES = 1 << 20
"""JSON documents up to this size are written indented for reading; larger ones (the scenario
and meta of a run of thousands of flows) on one line, as json's indenting encoder is Python code
several times slower than the compact one (seconds for 10,000 flows)."""


def _compact(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=_json_default)


def _compact_with(doc: dict, texts: dict[str, str]) -> str:
    """``_compact(doc)`` with the values of the keys in ``texts`` given as their text already
    (the resolved scenario, of megabytes, is encoded once for scenario.json and meta.json)."""
    items = (f"{json.dumps(k)}: {texts[k] if k in texts else _compact(doc[k])}" for k in sorted(doc))
    return "{" + ", ".join(items) + "}"


def _dump(path: Path, obj: Any, text: str | None = None) -> None:
    """Writes ``obj`` as JSON (``text``, if given, is its ``_compact`` form)."""
    text = text if text is not None else _compact(obj)
    if len(text) <= INDENT_MAX_BYTES:
        text = json.dumps(obj, indent=2, sort_keys=True, default=_json_default)
    with open(path, "w") as f:
        f.write(text)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())


def write_parquet(table: pa.Table, path: Path) -> None:
    """A table as Parquet, zstd-compressed, as every table aqmlab stores is written. Dictionary
    encoding for the text columns only: the numbers (times, sizes, counters) are mostly
    distinct, and building a dictionary for each before giving it up cost more time than it
    saved bytes (the same tables read back; a packets table written 10 % faster and read back
    twice as fast, a little smaller)."""
    text = [f.name for f in table.schema if pa.types.is_string(f.type) or pa.types.is_dictionary(f.type)]
    pq.write_table(table, path, compression="zstd", use_dictionary=text)


def _now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")


def stamped(meta: dict) -> dict:
    """``meta`` as a run stores it: with the time it was written (``created``), unless it has one."""
    return meta if meta.get("created") else {**meta, "created": _now_iso()}


def save_run(root: Path, run_id: str, tables: dict[str, pa.Table], meta: dict, summary: dict) -> Path:
    """``write_run``, then the run's catalog row made from the documents in memory (reading a
    run of many flows back costs more than writing it: megabytes of JSON twice)."""
    with RunWriter(root, run_id, tables) as w:
        return w.finish(meta, summary)


def write_run(root: Path, run_id: str, tables: dict[str, pa.Table], meta: dict, summary: dict) -> Path:
    """Write a run directory ``<root>/<run_id>/`` atomically and return its path (``RunWriter``),
    without cataloguing it."""
    with RunWriter(root, run_id, tables) as w:
        return w.publish(meta, summary)


class RunWriter:
    """Writes one run directory ``<root>/<run_id>/`` atomically: everything goes to
    ``<root>/.tmp-<run_id>-<pid>/`` first, then one ``os.rename`` publishes it. An existing
    complete run with the same id is an error (FileExistsError).

    The tables are written in a thread from the start (pyarrow releases the GIL while it encodes
    and writes), so that the caller can compute the run's summary meanwhile; ``publish`` waits for
    them, raises what writing them raised, writes the JSON documents and renames, ``finish`` also
    adds the catalog row. As a context manager it removes the temporary directory when the block
    ends without the run published (an error, an interrupt), after the thread has stopped."""

    def __init__(self, root: Path, run_id: str, tables: dict[str, pa.Table]) -> None:
        if not run_id or "/" in run_id or run_id.startswith("."):
            raise ValueError(f"bad run id {run_id!r}: must be non-empty, no '/', not starting with '.'")
        unknown = [name for name in tables if name not in TABLES]
        if unknown:
            raise ValueError(f"unknown table {unknown[0]!r}; known: {', '.join(TABLES)}")
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.final = self.root / run_id
        if self.final.exists():
            raise FileExistsError(f"run {run_id!r} already exists in {self.root}")
        self.tmp = self.root / f".tmp-{run_id}-{os.getpid()}"
        if self.tmp.exists():
            shutil.rmtree(self.tmp)
        self.tmp.mkdir()
        self.path: Path | None = None
        self._failed: Exception | None = None
        self._thread = threading.Thread(target=self._write_tables, args=(tables,), name=f"write {run_id}")
        self._thread.start()

    def _write_tables(self, tables: dict[str, pa.Table]) -> None:
        try:
            for name, table in tables.items():
                if table is not None:
                    write_parquet(table, self.tmp / f"{name}.parquet")
        except Exception as e:  # noqa: BLE001 (raised in the caller's thread by publish)
            self._failed = e

    def publish(self, meta: dict, summary: dict) -> Path:
        """The tables written, then the documents; the directory renamed into place."""
        self._thread.join()
        if self._failed is not None:
            raise self._failed
        scenario = meta.get("scenario", {})
        scenario_text = _compact(scenario)
        _dump(self.tmp / "scenario.json", scenario, scenario_text)
        meta = stamped(meta)
        _dump(self.tmp / "meta.json", meta, _compact_with(meta, {"scenario": scenario_text}))
        _dump(self.tmp / "summary.json", summary)
        os.rename(self.tmp, self.final)
        self.path = self.final
        return self.final

    def finish(self, meta: dict, summary: dict) -> Path:
        """``publish``, then the run's catalog row."""
        meta = stamped(meta)
        path = self.publish(meta, summary)
        _write_rows(self.root, [_row(path, meta, summary)])
        return path

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        if self.path is None:
            self._thread.join()
            shutil.rmtree(self.tmp, ignore_errors=True)


# --------------------------------------------------------------------------- reading


class LazyTables(Mapping):
    """Read-only mapping table name -> pyarrow.Table, each Parquet file read on first access."""

    def __init__(self, path: Path):
        self._path = Path(path)
        self._cache: dict[str, pa.Table] = {}

    def _file(self, name: str) -> Path:
        return self._path / f"{name}.parquet"

    def __getitem__(self, name: str) -> pa.Table:
        if name not in self._cache:
            if name not in TABLES or not self._file(name).exists():
                raise KeyError(name)
            self._cache[name] = self._read(name)
        return self._cache[name]

    def _read(self, name: str, **kw) -> pa.Table:
        """The table ``name``; CorruptRun naming its file when that does not read in full."""
        try:
            return pq.read_table(self._file(name), **kw)
        except (OSError, pa.ArrowException) as e:
            raise CorruptRun(f"{self._file(name)}: unreadable Parquet ({str(e).splitlines()[0]})") from None

    def __iter__(self) -> Iterator[str]:
        return (n for n in TABLES if self._file(n).exists())

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default


@dataclass
class RunData:
    """A stored run: ``tables`` (lazy), ``meta``, ``summary``, ``scenario``, ``path``."""

    path: Path
    meta: dict
    summary: dict
    scenario: dict = field(default_factory=dict)
    tables: Mapping = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        return self.path.name

    def table(self, name: str) -> pa.Table | None:
        return self.tables.get(name)

    def has(self, name: str) -> bool:
        return name in self.tables


def link_dirs(tables: Mapping) -> dict[str, str]:
    """Each link (hop) of a run -> its direction, from its ``links`` table; {} for a run stored
    before hops existed, whose links are named after their direction."""
    links = tables.get("links")
    if links is None or "hop" not in links.column_names:
        return {}
    return {r["hop"]: r["dir"] for r in links.select(["dir", "hop"]).to_pylist()}


def _read_json(path: Path) -> Any:
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise CorruptRun(f"{path.parent.name}: missing {path.name}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CorruptRun(
            f"{path.parent.name}: {path.name} is not valid JSON ({e.msg if hasattr(e, 'msg') else e})"
        )


def check_run_dir(path: Path) -> None:
    """Raise CorruptRun unless ``path`` is a complete run directory."""
    _checked_docs(Path(path))


def _checked_docs(path: Path) -> dict[str, dict]:
    """summary.json and meta.json of ``path`` (each read once: a run of many flows has megabytes
    of them); CorruptRun unless ``path`` is a complete run directory."""
    if path.name.startswith("."):
        raise CorruptRun(f"{path.name}: temporary (half-written) directory")
    docs = {}
    for name in ("summary.json", "meta.json"):
        docs[name] = _read_json(path / name)
        if not isinstance(docs[name], dict):
            raise CorruptRun(f"{path.name}: {name} is not a JSON object")
    for name in TABLES:
        f = path / f"{name}.parquet"
        if f.exists():
            try:
                pq.read_metadata(f)
            except Exception as e:  # noqa: BLE001 - any unreadable footer is corruption
                raise CorruptRun(f"{path.name}: {f.name} unreadable ({e})") from None
    return docs


def _open_dir(path: Path) -> RunData:
    docs = _checked_docs(path)
    scen = path / "scenario.json"
    return RunData(
        path=path,
        meta=docs["meta.json"],
        summary=docs["summary.json"],
        scenario=_read_json(scen) if scen.exists() else {},
        tables=LazyTables(path),
    )


def scan_runs(root: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """(complete run dirs, [(skipped dir, reason)]) under ``root``; temp dirs are skipped."""
    root = Path(root)
    good: list[Path] = []
    bad: list[tuple[Path, str]] = []
    if not root.is_dir():
        return good, bad
    for d in sorted(root.iterdir()):
        if not d.is_dir() or d.name in ("sweeps", "reproduce"):  # sweep datasets, experiment reports
            continue
        if d.name.startswith("."):
            if d.name.startswith(".tmp-"):
                bad.append((d, f"{d.name}: temporary (half-written) directory"))
            continue
        try:
            check_run_dir(d)
            good.append(d)
        except CorruptRun as e:
            bad.append((d, str(e)))
    return good, bad


def sweep_parts(root: Path, table: str) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The parts of ``table`` of the whole batches of every sweep dataset under ``root``
    (``parts.committed``), and the summaries parts of the others, each with the reason."""
    good, bad = parts.committed(sorted(Path(root).resolve().glob("sweeps/*")))
    return (good if table == parts.SUMMARIES else parts.table_parts(good, table)), bad


def skipped(root: Path) -> list[tuple[Path, str]]:
    """Everything under ``root`` the reader skips: half-written or corrupt run directories and
    unreadable sweep parts, each with the reason."""
    return list(scan_runs(root)[1]) + sweep_parts(root, parts.SUMMARIES)[1]


def _parquet_list(files: list[Path]) -> str:
    return "[" + ", ".join(_sql_str(str(f)) for f in files) + "]"


def _is_sweep_ref(p: Path) -> bool:
    """A sweep run's (virtual) path: ``<root>/sweeps/<sweep-id>/runs/<run_id>``."""
    return p.parent.name == "runs" and p.parent.parent.parent.name == "sweeps"


def sweep_runs(root: Path, prefix: str = "") -> list[Path]:
    """Virtual paths of the complete sweep runs under ``root`` whose id starts with ``prefix``
    (from the committed summaries parts, ``<root>/sweeps/*/summaries/part-*.parquet``)."""
    parts = sweep_parts(root, "summaries")[0]
    if not parts:
        return []
    pat = _parquet_list(parts)
    con = duckdb.connect()
    try:
        rows = con.execute(
            f"SELECT DISTINCT run_id, filename FROM read_parquet({pat}, filename = true) "
            "WHERE status = 'ok' AND starts_with(run_id, ?) ORDER BY run_id",
            [prefix],
        ).fetchall()
    finally:
        con.close()
    seen: dict[str, Path] = {}
    for rid, fname in rows:
        seen.setdefault(rid, Path(fname).parent.parent / "runs" / rid)
    return list(seen.values())


def resolve_run(path_or_id: str | Path, root: Path = DEFAULT_ROOT) -> Path:
    """A run directory from a path, an exact run id, or a unique prefix of one under ``root``.

    Sweep runs (stored many per Parquet part) resolve to the virtual path
    ``<root>/sweeps/<sweep-id>/runs/<run_id>``, which ``load_run`` understands.
    """
    p = Path(path_or_id)
    if p.is_dir() and (p / "meta.json").exists():
        return p
    if _is_sweep_ref(p) and (p.parent.parent / "summaries").is_dir():
        return p
    root = Path(root)
    s = str(path_or_id)
    if (root / s).is_dir() and not s.startswith(".") and s != "sweeps":
        return root / s
    good, _ = scan_runs(root)
    in_sweeps = sweep_runs(root, s)
    exact = [d for d in in_sweeps if d.name == s]
    if exact:
        return exact[0]
    matches = [d for d in good if d.name.startswith(s)] + in_sweeps
    if len(matches) == 1:
        return matches[0]
    if not matches:
        names = [d.name for d in good] + [d.name for d in sweep_runs(root)]
        known = ", ".join(names[:10]) or "none"
        more = f" (and {len(names) - 10} more)" if len(names) > 10 else ""
        raise RunNotFound(f"no run '{s}' in {root}; runs: {known}{more}")
    shown = ", ".join(d.name for d in matches[:10]) + (
        f" (and {len(matches) - 10} more)" if len(matches) > 10 else ""
    )
    sweeps = sorted({sweep_name(str(d.parent.parent)) for d in matches if _is_sweep_ref(d)})
    hint = (f"; {'they are runs of sweep' if len(sweeps) == 1 else 'sweeps among them:'} "
            f"{', '.join(repr(w) for w in sweeps)} (plot and report take a sweep name for all its runs, "
            "--where KEY=VALUE to choose some)") if sweeps else ""  # fmt: skip
    raise RunNotFound(f"run id prefix '{s}' is ambiguous: {len(matches)} runs match: {shown}{hint}")


def load_run(path_or_id: str | Path, root: Path = DEFAULT_ROOT) -> RunData:
    """Load a complete run (tables are read lazily). Raises RunNotFound or CorruptRun.

    Works the same for a run directory and for a run of a sweep dataset."""
    p = resolve_run(path_or_id, root)
    return _open_sweep_run(p) if _is_sweep_ref(p) else _open_dir(p)


class SweepTables(LazyTables):
    """The tables of one sweep run: its rows of ``<sweep>/<table>/<part>.parquet``."""

    def __init__(self, sweep_dir: Path, part: str, run_id: str):
        super().__init__(sweep_dir)
        self._part, self._run_id = part, run_id

    def _file(self, name: str) -> Path:
        return self._path / name / f"{self._part}.parquet"

    def _read(self, name: str, **kw) -> pa.Table:
        return super()._read(name, filters=[("run_id", "=", self._run_id)]).drop_columns(["run_id"])


@dataclass
class SweepRunData(RunData):
    """A run stored in a sweep dataset; ``path`` is ``<sweep>/runs/<run_id>`` (virtual)."""

    sweep_dir: Path | None = None
    row: dict = field(default_factory=dict)


def _open_sweep_run(ref: Path) -> SweepRunData:
    sweep_dir, run_id = ref.parent.parent, ref.name
    files = sorted(parts.committed([sweep_dir])[0], key=lambda f: f.stat().st_mtime_ns)
    row = None
    for f in files:
        t = pq.read_table(f, filters=[("run_id", "=", run_id), ("status", "=", "ok")])
        if t.num_rows:
            row = t.to_pylist()[-1]
    if row is None:
        raise RunNotFound(f"no complete run '{run_id}' in {sweep_dir}")
    try:
        meta = json.loads(row["meta"])
        summary = json.loads(row["summary"])
        sweep = _read_json(sweep_dir / "sweep.json")
    except (TypeError, json.JSONDecodeError) as e:
        raise CorruptRun(f"{run_id}: unreadable summaries row ({e})") from None
    scen = next((p.get("scenario", {}) for p in sweep.get("points", []) if p["index"] == row["point"]), {})
    scen = {**scen, "seed": meta.get("seed", scen.get("seed"))} if scen else scen
    meta = {**meta, "scenario": scen, "sweep": sweep_dir.name, "reproduce_command": row["reproduce_command"]}
    return SweepRunData(path=ref, meta=meta, summary=summary, scenario=scen,
                        tables=SweepTables(sweep_dir, row["part"], run_id), sweep_dir=sweep_dir,
                        row=row)  # fmt: skip


# --------------------------------------------------------------------------- catalog


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


@functools.lru_cache(maxsize=64)
def sweep_name(sweep_dir: str) -> str:
    """The name of the sweep stored in ``sweep_dir`` (its file's ``name``; the directory is
    ``<name>-<digest>``, so the answer never changes for a directory)."""
    try:
        return str(_read_json(Path(sweep_dir) / "sweep.json")["name"])
    except (CorruptRun, KeyError, TypeError):
        return Path(sweep_dir).name.rsplit("-", 1)[0]


def sweep_catalog_rows(root: Path) -> list[dict]:
    """``runs`` rows of every completed run of every sweep dataset under ``root``."""
    parts = sweep_parts(root, "summaries")[0]
    if not parts:
        return []
    pat = _parquet_list(parts)
    con = duckdb.connect()
    try:
        df = con.execute(
            f"SELECT run_id, summary, meta, filename FROM read_parquet({pat}, filename = true) "
            "WHERE status = 'ok'"
        ).df()
    finally:
        con.close()
    df = df.drop_duplicates("run_id", keep="last")
    return [sweep_row(r, Path(r["filename"]).parent.parent) for r in df.to_dict("records")]


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


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


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


def sweep_names(root: Path) -> list[str]:
    """The names of the sweeps with complete runs under ``root``."""
    return sorted({sweep_name(str(p.parent.parent)) for p in sweep_runs(root)})


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


def new_run_id(name: str, seed: int) -> str:
    """A sortable, unique run id: ``<name>-s<seed>-<UTC yyyymmddThhmmss.ffffff>-<pid>``."""
    ns = time.time_ns()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(ns // 1_000_000_000))
    return f"{name}-s{seed}-{stamp}.{ns // 1000 % 1_000_000:06d}-{os.getpid()}"
