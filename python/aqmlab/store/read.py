"""Reading runs: a run directory or a run of a sweep dataset as ``RunData`` (tables read
lazily), found by path, id or id prefix (``load_run``, ``resolve_run``); the listing of the
complete runs and of what is skipped, half-written or corrupt (``scan_runs``, ``skipped``)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from aqmlab import parts
from aqmlab.layout import DEFAULT_ROOT, TABLES
from aqmlab.runtables import RunTables


class RunNotFound(LookupError):
    """No (unique) complete run matches the given id or path."""


class CorruptRun(ValueError):
    """A run directory is half-written or unreadable."""


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
    """A stored run: ``tables`` (read lazily, the run's ``RunTables``), ``meta``, ``summary``,
    ``scenario``, ``path``."""

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
        tables=RunTables(LazyTables(path)),
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


def committed_summaries(root: Path, select: str, prefix: str = "") -> list[tuple]:
    """``select`` (columns of the summaries parts, and ``filename``) of the complete sweep runs
    under ``root`` whose id starts with ``prefix``, in run-id order then part order (from the
    committed summaries parts, ``<root>/sweeps/*/summaries/part-*.parquet``)."""
    parts = sweep_parts(root, "summaries")[0]
    if not parts:
        return []
    con = duckdb.connect()
    try:
        return con.execute(
            f"SELECT {select} FROM read_parquet({_parquet_list(parts)}, filename = true) "
            "WHERE status = 'ok' AND starts_with(run_id, ?) ORDER BY run_id, filename",
            [prefix],
        ).fetchall()
    finally:
        con.close()


def sweep_runs(root: Path, prefix: str = "") -> list[Path]:
    """Virtual paths of the complete sweep runs under ``root`` whose id starts with ``prefix``."""
    seen: dict[str, Path] = {}
    for rid, fname in committed_summaries(root, "DISTINCT run_id, filename", prefix):
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

    @property
    def rep(self) -> int | None:
        """Its replication of its grid point (from 0), as the sweep stored it."""
        return self.row.get("rep")


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
                        tables=RunTables(SweepTables(sweep_dir, row["part"], run_id)), sweep_dir=sweep_dir,
                        row=row)  # fmt: skip


@functools.lru_cache(maxsize=64)
def sweep_name(sweep_dir: str) -> str:
    """The name of the sweep stored in ``sweep_dir`` (its file's ``name``; the directory is
    ``<name>-<digest>``, so the answer never changes for a directory)."""
    try:
        return str(_read_json(Path(sweep_dir) / "sweep.json")["name"])
    except (CorruptRun, KeyError, TypeError):
        return Path(sweep_dir).name.rsplit("-", 1)[0]


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"
