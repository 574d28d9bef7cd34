"""A run's tables and what is built from them (aqmlab.runtables.RunTables): the codes kept from the
core's dictionary columns are those of the strings, and what a run's RunTables built lives and
dies with it, shared with no other run (issue 54: no cache keyed by the tables' identity)."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest

from aqmlab import api, metrics
from aqmlab.runtables import MissingTableError, RunTables


@pytest.fixture(scope="module")
def run():
    return api.run("bufferbloat", seed=1, duration="2s", record__level="packets")


def test_the_kept_codes_spell_the_decoded_strings(run):
    # the codes taken from the core's dictionary columns, read through their values, give the
    # column pyarrow decoded (and that a fresh encoding of the same strings gives)
    for name, column in (("packets", "outcome"), ("packets", "hop"), ("flows", "kind"), ("links", "hop")):
        plain = run.tables[name].column(column).to_pylist()
        assert pa.types.is_string(run.tables[name].schema.field(column).type)
        assert run.tables.strings(name, column).tolist() == [str(v) for v in plain]
        fresh = RunTables(dict(run.tables))
        assert fresh.strings(name, column).tolist() == [str(v) for v in plain]


def test_a_hop_holds_the_rows_of_its_name_only(run):
    hop = run.tables["links"].column("hop")[0].as_py()
    p = run.tables.hop("packets", hop)
    assert p.num_rows == sum(h == hop for h in run.tables["packets"].column("hop").to_pylist())
    assert set(p.column("hop").to_pylist()) == {hop}
    h = run.tables.hop_packets(hop)
    np.testing.assert_array_equal(h.t_in, p.column("t_enqueue_ns").to_numpy())
    assert h.values[h.outcome].tolist() == p.column("outcome").to_pylist()


def test_two_runs_tables_share_nothing_built(run):
    # two RunTables over the very same table objects build their own indexes: one keyed by the
    # tables' identity would hand the second the first's
    other = RunTables(dict(run.tables))
    hop = run.tables["links"].column("hop")[0].as_py()
    assert other.hop_packets(hop) is not run.tables.hop_packets(hop)
    # and a run whose packets differ (its first half) gets its own hop's rows
    half = RunTables(
        {**run.tables, "packets": run.tables["packets"].slice(0, run.tables["packets"].num_rows // 2)}
    )
    assert half.hop_packets(hop).t_in.size < run.tables.hop_packets(hop).t_in.size


def test_what_a_run_built_goes_with_its_run_tables(run):
    # the tables themselves stay alive (held here): only what the RunTables built must go
    held = dict(run.tables)
    rt = RunTables(held)
    metrics.summarize(rt, run.meta)
    hop = held["links"].column("hop")[0].as_py()
    built = weakref.ref(rt.hop_packets(hop))
    del rt
    gc.collect()
    assert built() is None


def test_a_missing_table_is_named():
    with pytest.raises(MissingTableError, match="'packets'"):
        RunTables({}).hop_packets("down")
