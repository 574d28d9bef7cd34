"""A sweep dataset's parts on disk: written whole, committed, verified, cleaned up.

A batch of runs is stored as one part per table, ``<sweep>/<table>/<part>.parquet``, then its
summaries part, ``<sweep>/summaries/<part>.parquet``, the batch's commit record, whose column
``rows`` holds (as JSON, the same on every row) the row count of each table part the batch
wrote. Each file is written to ``.<part>.parquet.<owner>.tmp`` and renamed into place, and
carries its writer's ``storelock.Owner`` token in its Parquet metadata (``aqmlab.writer``).

A batch is *whole* when its summaries part and every table part it names read, hold the rows
recorded, and, checked ``deep``, decompress in full (every row group: a file damaged in its
middle keeps a readable footer). Only whole batches count: a run is complete iff a whole batch
commits it. ``clean`` removes what a dead writer left: temporary files and table parts that no
summaries part commits, never a live writer's (it may be about to commit them).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from aqmlab.storelock import Owner

SUMMARIES = "summaries"
WRITER = b"aqmlab.writer"
TMP = ".tmp"

Damaged = list[tuple[Path, str]]


def write(table: pa.Table, path: Path, write_parquet: Callable[[pa.Table, Path], None]) -> None:
    """``table`` stored whole at ``path`` or not at all, marked with this process as its writer."""
    path.parent.mkdir(parents=True, exist_ok=True)
    me = Owner.me().token
    tmp = path.parent / f".{path.name}.{me}{TMP}"
    write_parquet(table.replace_schema_metadata({**(table.schema.metadata or {}), WRITER: me.encode()}), tmp)
    os.replace(tmp, path)


def rows_of(path: Path) -> dict[str, int] | None:
    """The row counts a summaries part records ({table: rows}); None for a part stored before
    they were recorded."""
    if "rows" not in pq.read_schema(path).names:
        return None
    col = pq.read_table(path, columns=["rows"]).column("rows")
    if not len(col) or col[0].as_py() is None:
        return None
    return json.loads(col[0].as_py())


def _problem(path: Path, rows: int | None, deep: bool) -> str | None:
    """Why ``path`` is not a whole part (holding ``rows`` rows, when known), or None."""
    try:
        f = pq.ParquetFile(path)
        if rows is not None and f.metadata.num_rows != rows:
            return f"{path}: {f.metadata.num_rows} rows, {rows} committed"
        if deep:
            for i in range(f.num_row_groups):
                f.read_row_group(i)
    except FileNotFoundError:
        return f"{path}: missing (committed with {rows} rows)"
    except Exception as e:  # noqa: BLE001 - pyarrow's errors (ZSTD, Thrift, IO) all mean damage
        return f"{path}: unreadable Parquet ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
    return None


_verdicts: dict[tuple, str | None] = {}  # (file, size, mtime, deep) -> problem; a file changes by rename


def problem(summaries: Path, deep: bool = False) -> str | None:
    """Why the batch committed by the summaries part ``summaries`` is not whole, or None."""
    try:
        st = summaries.stat()
    except OSError:
        return f"{summaries}: missing"
    key = (str(summaries), st.st_size, st.st_mtime_ns, st.st_ino, deep)
    if key not in _verdicts:
        _verdicts[key] = _batch_problem(summaries, deep)
    return _verdicts[key]


def _batch_problem(summaries: Path, deep: bool) -> str | None:
    bad = _problem(summaries, None, True)  # small, and read whole by every reader
    if bad is not None:
        return bad
    try:
        rows = rows_of(summaries)
    except (OSError, ValueError, pa.ArrowException) as e:
        return f"{summaries}: unreadable ({e})"
    sweep_dir = summaries.parent.parent
    for table, n in (rows or {}).items():
        bad = _problem(sweep_dir / table / summaries.name, n, deep)
        if bad is not None:
            return bad
    return None


def committed(sweep_dirs: Iterable[Path], deep: bool = False) -> tuple[list[Path], Damaged]:
    """(the summaries parts of whole batches in ``sweep_dirs``, [(summaries part, why not)])."""
    good: list[Path] = []
    bad: Damaged = []
    for d in sweep_dirs:
        for f in sorted(Path(d).glob(f"{SUMMARIES}/part-*.parquet")):
            why = problem(f, deep)
            if why is None:
                good.append(f)
            else:
                bad.append((f, why))
    return good, bad


def table_parts(summaries: Iterable[Path], table: str) -> list[Path]:
    """The parts of ``table`` of the batches the summaries parts ``summaries`` commit."""
    files = (f.parent.parent / table / f.name for f in summaries)
    return [f for f in files if f.is_file()]


def remove(summaries: Path) -> None:
    """Removes a batch that is not whole (its runs are redone): the commit record first, so that
    no moment shows it committed with fewer files."""
    summaries.unlink(missing_ok=True)
    for d in summaries.parent.parent.iterdir():
        if d.is_dir() and d.name != SUMMARIES:
            (d / summaries.name).unlink(missing_ok=True)


def _writer(path: Path) -> Owner | None:
    """The owner a file names: a temporary file in its name, a part in its metadata."""
    if path.name.endswith(TMP):
        return Owner.parse(path.name[: -len(TMP)].rpartition(".parquet.")[2])
    try:
        token = (pq.read_metadata(path).metadata or {}).get(WRITER)
    except Exception:  # noqa: BLE001 - a part cut short by its writer's death names no one
        return None
    return Owner.parse(token.decode()) if token else None


def clean(sweep_dir: Path) -> int:
    """Removes the temporary files and uncommitted table parts of ``sweep_dir`` whose writer is
    dead (or unknown: a file of a version that did not name it); returns the count."""
    sweep_dir = Path(sweep_dir)
    if not sweep_dir.is_dir():
        return 0
    commits = {p.name for p in sweep_dir.glob(f"{SUMMARIES}/part-*.parquet")}
    n = 0
    for d in sweep_dir.iterdir():
        if not d.is_dir():
            continue
        for f in d.iterdir():
            left = f.name.startswith(".") and f.name.endswith(TMP)
            left |= f.name.startswith("part-") and f.suffix == ".parquet" and f.name not in commits
            if left:
                owner = _writer(f)
                if owner is None or not owner.alive():
                    f.unlink(missing_ok=True)
                    n += 1
    return n
