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
complete run directories and the sweep layout of the sweep package (many runs per file, a ``run_id``
column, ``<root>/sweeps/<sweep>/<table>/part-*.parquet``) as a second ``read_parquet`` unioned BY
NAME, with no change to users' SQL. The catalog is a derived cache: ``connect`` rebuilds it when it
is unreadable or lags behind the files (a writer killed between its rename and ``catalog_add``). Sweep runs have
catalog rows like run directories (``sweep_row``), ``resolve_run`` maps their ids to the virtual
path ``<root>/sweeps/<sweep>/runs/<run_id>`` and ``load_run`` reads them from their parts.

Modules: ``write`` (a run written and published), ``read`` (a run found and loaded), ``catalog``
(the ``runs`` rows, their updates and rebuild under the lock), ``sql`` (the views, SQL confined
to reading, the listings), ``documents`` (the JSON documents); the tables' names and columns are
``aqmlab.layout``'s, which loads neither DuckDB nor pandas; ``_duckdb`` loads DuckDB first, with
SIGINT and SIGTERM held.
"""

from aqmlab.layout import LAYOUT, TABLES
from aqmlab.store import _duckdb  # noqa: F401  (first: DuckDB loaded with the signals held)
from aqmlab.store.catalog import (
    CATALOG,
    CATALOG_WAIT_S,
    RUN_COLUMNS,
    catalog_add,
    catalog_add_many,
    catalog_ids,
    catalog_lock,
    catalog_row,
    flatten_summary,
    grid_column,
    rebuild_catalog,
    sweep_catalog_rows,
    sweep_row,
)
from aqmlab.store.documents import (
    INDENT_MAX_BYTES,
    _dump,
    _json_default,
)
from aqmlab.store.read import (
    DEFAULT_ROOT,
    CorruptRun,
    LazyTables,
    RunData,
    RunNotFound,
    SweepRunData,
    SweepTables,
    check_run_dir,
    link_dirs,
    load_run,
    resolve_run,
    scan_runs,
    skipped,
    sweep_name,
    sweep_parts,
    sweep_runs,
)
from aqmlab.store.sql import (
    QUERY_STATEMENTS,
    QueryRefused,
    confine,
    connect,
    filter_run_ids,
    list_runs,
    query,
    sweep_run_paths,
    where_sql,
)
from aqmlab.store.write import (
    RunWriter,
    new_run_id,
    save_run,
    stamped,
    write_parquet,
    write_run,
)

__all__ = [
    "CATALOG",
    "CATALOG_WAIT_S",
    "DEFAULT_ROOT",
    "INDENT_MAX_BYTES",
    "LAYOUT",
    "QUERY_STATEMENTS",
    "RUN_COLUMNS",
    "TABLES",
    "CorruptRun",
    "LazyTables",
    "QueryRefused",
    "RunData",
    "RunNotFound",
    "RunWriter",
    "SweepRunData",
    "SweepTables",
    "_dump",
    "_json_default",
    "catalog_add",
    "catalog_add_many",
    "catalog_ids",
    "catalog_lock",
    "catalog_row",
    "check_run_dir",
    "confine",
    "connect",
    "filter_run_ids",
    "flatten_summary",
    "grid_column",
    "link_dirs",
    "list_runs",
    "load_run",
    "new_run_id",
    "query",
    "rebuild_catalog",
    "resolve_run",
    "save_run",
    "scan_runs",
    "skipped",
    "stamped",
    "sweep_catalog_rows",
    "sweep_name",
    "sweep_parts",
    "sweep_row",
    "sweep_run_paths",
    "sweep_runs",
    "where_sql",
    "write_parquet",
    "write_run",
]
