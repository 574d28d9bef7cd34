"""A run's tables (``RunTables``): the Arrow tables the core recorded, or a stored run's read on
first use, together with what is built from them once per run (the string columns' dictionary
codes, each hop's rows, each flow's rows). One object per run, made where the tables come
from (``api.simulate``, ``store.load_run``, ``emulate``) and handed to the metrics, the store,
the figures and the reports; what it built goes with it, so nothing outlives the run's tables
and no two runs share anything."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

Codes = tuple[np.ndarray, np.ndarray]
"""A string column as (codes, values), ``values[codes]`` being the column: one code per row into
its few distinct values, nulls coded as "None", the last value."""


class MissingTableError(LookupError):
    """A metric or figure needs a table (or column) that the run did not record."""


def _col(table: pa.Table, name: str, dtype=None) -> np.ndarray:
    arr = table.column(name).to_numpy(zero_copy_only=False)
    return arr.astype(dtype) if dtype is not None else arr


def _nullable_float(table: pa.Table, name: str) -> np.ndarray:
    """Column as float64 with nulls as NaN."""
    col = table.column(name)
    return np.asarray(col.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)


def encode(table: pa.Table, name: str) -> Codes:
    """The codes of ``table``'s string column ``name`` (dictionary-encoded if it is not)."""
    col = table.column(name)
    if col.num_chunks != 1:
        col = col.combine_chunks() if col.num_chunks else pa.array([], pa.string())
    else:
        col = col.chunk(0)
    return dictionary_codes(col if pa.types.is_dictionary(col.type) else pc.dictionary_encode(col))


def dictionary_codes(col: pa.DictionaryArray) -> Codes:
    """The codes of a dictionary-encoded column (as the core sends its string columns)."""
    values = np.asarray([str(v) for v in col.dictionary.to_pylist()] or [""], dtype=str)
    if not col.null_count:
        return col.indices.to_numpy(zero_copy_only=False), values
    idx = pc.fill_null(col.indices, 0).to_numpy(zero_copy_only=False)
    null = pc.is_null(col).to_numpy(zero_copy_only=False)
    return np.where(null, values.size, idx), np.append(values, "None")


def strings(codes: Codes) -> np.ndarray:
    """The column of ``codes`` as a numpy unicode array (nulls: "None")."""
    idx, values = codes
    return values[idx] if idx.size else np.zeros(0, dtype=str)


def within(codes: Codes, allowed) -> np.ndarray:
    """The rows whose value is one of ``allowed``, tested once per distinct value."""
    idx, values = codes
    return np.isin(values, allowed)[idx]


def hop_column(table: pa.Table) -> str:
    """The column naming a row's hop: ``hop``; ``dir`` in tables stored before hops existed."""
    return "hop" if "hop" in table.column_names else "dir"


def named(table: pa.Table, codes: Codes, hop: str) -> np.ndarray:
    """Which rows are of the hop named ``hop`` (the one-hop shorthand's hops are "down" and
    "up"), ``codes`` being those of ``hop_column(table)``. A null matches no name."""
    idx, values = codes
    hit = values == hop
    if table.column(hop_column(table)).null_count:
        hit[-1] = False
    return hit[idx]


class HopPackets:
    """The rows of one hop of a ``packets`` table as numpy columns: enqueue time and size
    (int64), ``t_out_ns`` (float64, NaN for null) and the outcome's code into ``values``. Taken
    from the whole table's columns by row index, without building a filtered table of every
    column: a hop's summary needs these four. What the metrics compute from them is kept with
    them (``memo``)."""

    def __init__(self, p: pa.Table, rows: np.ndarray, outcome: Codes):
        self.t_in = _col(p, "t_enqueue_ns")[rows].astype(np.int64)
        self.t_out = _nullable_float(p, "t_out_ns")[rows]
        self.size = _col(p, "size")[rows].astype(np.int64)
        codes, self.values = outcome
        self.outcome = codes[rows]
        self._memo: dict[tuple, Any] = {}

    def memo(self, key: tuple, build: Callable[[], Any]) -> Any:
        """``build()``, computed once per hop and ``key``: a run's summary, and a study's metrics
        after it, ask the same of a hop several times."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def isin(self, allowed: tuple[str, ...]) -> np.ndarray:
        """The rows whose outcome is one of ``allowed``."""
        return self.memo(("isin", *allowed), lambda: np.isin(self.values, allowed)[self.outcome])

    def count_from(self, w: int, allowed: tuple[str, ...]) -> int:
        """How many rows with ``t_out >= w`` have an outcome in ``allowed``."""
        counted = self.memo(
            ("out from", w), lambda: np.bincount(self.outcome[self.t_out >= w], minlength=self.values.size)
        )
        return int(counted[np.isin(self.values, allowed)].sum())


def flow_blocks(table: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of ``table`` grouped by its ``flow`` column: the flow ids (ascending), where each
    one's block starts in ``order`` (one more entry: the end), and ``order``, the row numbers
    sorted by flow, each flow's rows in table order."""
    flow = _col(table, "flow", np.int64)
    order = np.argsort(flow, kind="stable")
    ids, starts = np.unique(flow[order], return_index=True)
    return ids, np.append(starts, flow.size), order


class RunTables(Mapping):
    """The tables of one run, name -> ``pyarrow.Table`` (read from ``source`` on first use), and
    what is built from them, once: a summary reads a hop's outcomes a dozen times, and per-flow
    metrics over N flows (or N probe streams) cost O(rows + N), not O(rows x N), through an index
    built once.
    ``codes`` are string columns' codes already known, by (table, column): those of the
    dictionary columns the core sends (``decoded``), so that they are not encoded again."""

    def __init__(self, source: Mapping[str, pa.Table], codes: Mapping[tuple[str, str], Codes] | None = None):
        self._source = source
        self._built: dict[tuple, Any] = {("codes", *k): v for k, v in (codes or {}).items()}

    @classmethod
    def decoded(cls, batches: Mapping[str, pa.RecordBatch]) -> RunTables:
        """The core's record batches as tables, dictionary columns decoded to plain strings and
        their codes kept."""
        tables, codes = {}, {}
        for name, batch in batches.items():
            cols = []
            for column, col in zip(batch.schema.names, batch.columns, strict=True):
                if pa.types.is_dictionary(col.type):
                    codes[name, column] = dictionary_codes(col)
                    col = col.dictionary_decode()
                cols.append(col)
            tables[name] = pa.Table.from_arrays(cols, names=batch.schema.names)
        return cls(tables, codes)

    @staticmethod
    def of(tables: Mapping[str, pa.Table]) -> RunTables:
        """``tables`` itself when it is a ``RunTables``; else a new one over it (which keeps what
        it builds only as long as the caller keeps it)."""
        return tables if isinstance(tables, RunTables) else RunTables(tables)

    def __getitem__(self, name: str) -> pa.Table:
        return self._source[name]

    def __contains__(self, name: object) -> bool:
        return name in self._source

    def __iter__(self) -> Iterator[str]:
        return iter(self._source)

    def __len__(self) -> int:
        return len(self._source)

    def __repr__(self) -> str:
        return f"RunTables({sorted(self)})"

    def need(self, name: str) -> pa.Table:
        """Table ``name``; MissingTableError when the run did not record it."""
        t = self.get(name)
        if t is None:
            raise MissingTableError(f"table '{name}' was not recorded in this run")
        return t

    def built(self, key: tuple, build: Callable[[], Any]) -> Any:
        """``build()``, computed once for this run under ``key``."""
        if key not in self._built:
            self._built[key] = build()
        return self._built[key]

    def codes(self, name: str, column: str) -> Codes:
        """The codes of the string column ``column`` of table ``name``."""
        return self.built(("codes", name, column), lambda: encode(self[name], column))

    def strings(self, name: str, column: str) -> np.ndarray:
        """The string column ``column`` of table ``name`` as a numpy unicode array."""
        return strings(self.codes(name, column))

    def isin(self, name: str, column: str, allowed) -> np.ndarray:
        """The rows of table ``name`` whose string column ``column`` is one of ``allowed``."""
        return within(self.codes(name, column), allowed)

    def hop_rows(self, name: str, hop: str) -> np.ndarray:
        """Which rows of table ``name`` are of one hop (``named``)."""
        t = self[name]
        return named(t, self.codes(name, hop_column(t)), hop)

    def hop(self, name: str, hop: str) -> pa.Table:
        """The rows of one hop of table ``name`` (MissingTableError without the table)."""
        t = self.need(name)
        return self.built(("hop", name, hop), lambda: t.filter(pa.array(self.hop_rows(name, hop))))

    def hop_packets(self, hop: str) -> HopPackets:
        """``HopPackets`` of one hop of the ``packets`` table."""

        def build() -> HopPackets:
            p = self.need("packets")
            return HopPackets(
                p, np.flatnonzero(self.hop_rows("packets", hop)), self.codes("packets", "outcome")
            )

        return self.built(("hop packets", hop), build)

    def flow_ids(self, name: str) -> np.ndarray:
        """The flow ids present in table ``name`` (its ``flow`` column), ascending."""
        return self.built(("flow rows", name), lambda: flow_blocks(self.need(name)))[0]

    def flow_rows(self, name: str, flow: int) -> np.ndarray:
        """The row numbers of flow ``flow`` in table ``name``, ascending, from an index of every
        flow's rows built once per table: reading each of N streams costs its own rows, not a
        pass over the whole table."""
        ids, starts, order = self.built(("flow rows", name), lambda: flow_blocks(self.need(name)))
        k = int(np.searchsorted(ids, flow))
        if k == ids.size or ids[k] != flow:
            return order[:0]
        return order[starts[k] : starts[k + 1]]

    def flow_table(self, name: str, flow: int) -> pa.Table:
        """The rows of flow ``flow`` of table ``name`` (``flow_rows``), built once per flow."""
        return self.built(("flow", name, flow), lambda: self.need(name).take(self.flow_rows(name, flow)))
