"""Run directories, atomic writes, the DuckDB catalog and its views."""

import json
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
import synth

from aqmlab import metrics, store

ROOT = Path(__file__).resolve().parents[2]


def _write(root, run_id, **kw):
    t, m = synth.run(**kw)
    return store.write_run(root, run_id, t, m, metrics.summarize(t, m))


def test_write_and_load_roundtrip(tmp_path):
    d = _write(tmp_path, "r1")
    assert d == tmp_path / "r1"
    for f in ("scenario.json", "meta.json", "summary.json", "packets.parquet", "queue.parquet",
              "flow_series.parquet", "probes.parquet", "flows.parquet", "links.parquet",
              "rate_schedule.parquet"):  # fmt: skip
        assert (d / f).is_file(), f
    assert json.loads((d / "scenario.json").read_text())["topology"]["down"]["qdisc"]["limit"] == "100p"
    run = store.load_run("r1", tmp_path)
    assert run.run_id == "r1" and run.meta["seed"] == 7
    assert run.summary["links"]["down"]["tx_bytes"] == 4000
    assert set(run.tables) == set(store.TABLES)
    assert run.table("packets").num_rows == len(synth.PACKETS)
    t, _ = synth.run()
    assert run.table("probes").equals(t["probes"])
    # prefix match and path
    assert store.load_run("r", tmp_path).run_id == "r1"
    assert store.load_run(str(d)).run_id == "r1"
    with pytest.raises(FileExistsError):
        _write(tmp_path, "r1")


def test_every_stored_table_reads_back_equal_with_pyarrow_and_duckdb(tmp_path):
    import duckdb
    import pyarrow.parquet as pq

    t, m = synth.run()
    d = store.write_run(tmp_path, "r", t, m, metrics.summarize(t, m))
    con = duckdb.connect()
    for name, table in t.items():
        f = d / f"{name}.parquet"
        assert pq.read_table(f).equals(table), name
        back = con.sql(f"SELECT * FROM read_parquet('{f}')").to_arrow_table()
        assert back.to_pylist() == table.to_pylist(), name


def test_series_only_run_has_no_packets(tmp_path):
    _write(tmp_path, "s1", drop=("packets",))
    run = store.load_run("s1", tmp_path)
    assert not run.has("packets") and run.table("packets") is None and run.has("queue")


def test_temp_and_corrupt_dirs_are_not_listed(tmp_path):
    _write(tmp_path, "good")
    # leftover of an interrupted write: a complete-looking temp dir
    tmp = tmp_path / f".tmp-crashed-{os.getpid()}"
    (tmp_path / "good").rename(tmp_path / "good2")
    _write(tmp_path, "good")
    os.rename(tmp_path / "good2", tmp)
    # a directory without summary.json, and one with a broken summary
    half = tmp_path / "half"
    half.mkdir()
    (half / "meta.json").write_text("{}")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "meta.json").write_text("{}")
    (broken / "summary.json").write_text("{not json")
    good, bad = store.scan_runs(tmp_path)
    assert [d.name for d in good] == ["good"]
    reasons = {d.name: r for d, r in bad}
    assert set(reasons) == {tmp.name, "half", "broken"}
    assert "summary.json" in reasons["half"] and "temporary" in reasons[tmp.name]
    skipped = store.rebuild_catalog(tmp_path)
    assert {d.name for d, _ in skipped} == {tmp.name, "half", "broken"}
    assert list(store.list_runs(tmp_path)["run_id"]) == ["good"]
    with pytest.raises(store.RunNotFound, match="no run 'hal'.*runs: good"):
        store.load_run("hal", tmp_path)
    with pytest.raises(store.CorruptRun, match="summary.json"):
        store.load_run(half)


def test_failed_write_leaves_nothing(tmp_path):
    t, m = synth.run()
    t["bogus"] = t["flows"]
    with pytest.raises(ValueError, match="unknown table 'bogus'"):
        store.write_run(tmp_path, "x", t, m, {})
    assert list(tmp_path.iterdir()) == []


def test_catalog_and_views(tmp_path):
    d1 = _write(tmp_path, "a-1", seed=1)
    d2 = _write(tmp_path, "a-2", seed=2)
    store.catalog_add(tmp_path, d1)
    store.catalog_add_many(tmp_path, [d2])
    store.catalog_add(tmp_path, d1)  # idempotent
    df = store.list_runs(tmp_path)
    assert sorted(df["run_id"]) == ["a-1", "a-2"]
    row = df.set_index("run_id").loc["a-1"]
    assert row["seed"] == 1 and row["qdisc"] == "codel" and row["up_qdisc"] == "pfifo"
    assert row["utilization"] == pytest.approx(4000 / 15000)
    assert row["queue_delay_p95_ms"] == pytest.approx(2 + 0.85 * 2)  # rank 2.85 of [0,1,2,4]
    assert row["up_queue_delay_max_ms"] == pytest.approx(0.8)
    assert row["drops"] == 2 and row["probe_rtt_p50_ms"] == pytest.approx(11.0)
    # aggregate goodput: payload delivered in [0, 20 ms] (flow_series at its last sample, 19 ms:
    # 150 x 19 + 1000 + 500 B) over the 20 ms window, all down; no up flow
    assert row["goodput_mbps_total"] == pytest.approx((150 * 19 + 1000 + 500) * 8 / 0.020 / 1e6)
    assert row["goodput_mbps_down"] == row["goodput_mbps_total"] and pd.isna(row["goodput_mbps_up"])
    assert list(store.list_runs(tmp_path, where="seed = 2")["run_id"]) == ["a-2"]
    assert len(store.list_runs(tmp_path, scenario="tiny")) == 2
    assert len(store.list_runs(tmp_path, scenario="other")) == 0
    q = store.query(tmp_path, "SELECT run_id, count(*) AS n FROM packets GROUP BY run_id ORDER BY run_id")
    assert list(q["run_id"]) == ["a-1", "a-2"] and list(q["n"]) == [len(synth.PACKETS)] * 2
    q = store.query(
        tmp_path,
        "SELECT r.seed, sum(p.size) AS b FROM packets p JOIN runs r USING (run_id) "
        "WHERE p.dir = 'down' AND p.outcome IN ('sent','marked') GROUP BY r.seed ORDER BY r.seed",
    )
    assert list(q["b"]) == [4000, 4000]
    # a complete run directory missing from the catalog (its writer was killed between the
    # rename and catalog_add) is caught up on the next connect: the catalog is a derived cache
    _write(tmp_path, "a-3")
    assert len(store.query(tmp_path, "SELECT DISTINCT run_id FROM flows")) == 3
    assert "a-3" in set(store.list_runs(tmp_path)["run_id"])


def test_query_builds_missing_catalog(tmp_path):
    _write(tmp_path, "only")
    assert not (tmp_path / store.CATALOG).exists()
    assert list(store.query(tmp_path, "SELECT run_id FROM runs")["run_id"]) == ["only"]


def test_tables_are_the_cores_declarations():
    """A run returns exactly the tables and columns the core declares (store.LAYOUT), each with
    the declared type, and docs/tables.md shows those declarations (scripts/tables_doc.py)."""
    import importlib.util

    from aqmlab.api import simulate

    arrow = {
        "uint16": pa.uint16(),
        "uint32": pa.uint32(),
        "uint64": pa.uint64(),
        "uint64, nullable": pa.uint64(),
        "float64, nullable": pa.float64(),
        "bool": pa.bool_(),
    }
    sc = {
        "name": "layout",
        "duration": "1s",
        "topology": {"rtt": "20ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "tcp"}, {"kind": "ping"}],
    }
    tables, _ = simulate(sc)
    assert tuple(tables) == store.TABLES
    for t in store.LAYOUT:
        schema = tables[t["name"]].schema
        assert schema.names == [c["name"] for c in t["columns"]]
        for c in t["columns"]:
            want = arrow.get(c["type"], pa.string())  # dictionary columns decode to strings
            assert schema.field(c["name"]).type == want, (t["name"], c["name"])
    spec = importlib.util.spec_from_file_location("tables_doc", ROOT / "scripts" / "tables_doc.py")
    doc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(doc)
    text = doc.DOC.read_text()
    assert doc.current(text) == text, "docs/tables.md is out of date: run python scripts/tables_doc.py"


def test_large_json_documents_are_written_on_one_line_and_read_back_equal(tmp_path):
    small = {"b": [1, 2], "a": {"x": "y"}}
    large = {"flows": [{"id": i, "kind": "tcp"} for i in range(store.INDENT_MAX_BYTES // 20)]}
    for name, doc in (("small.json", small), ("large.json", large)):
        store._dump(tmp_path / name, doc)
        assert json.loads((tmp_path / name).read_text()) == doc
    assert (tmp_path / "small.json").read_text().count("\n") > 2
    assert (tmp_path / "large.json").read_text().count("\n") == 1


def test_a_saved_runs_catalog_row_is_the_one_its_files_give(tmp_path):
    # saving catalogs the run from the documents in memory; rebuilding reads the files back
    from aqmlab import api

    res = api.run("rrul_be", overrides=["duration=2s"], warmup_s=0.5)
    res.save(tmp_path)
    saved = store.query(tmp_path, "SELECT * FROM runs")
    assert store.rebuild_catalog(tmp_path) == []
    rebuilt = store.query(tmp_path, "SELECT * FROM runs")
    assert len(saved) == 1 and saved["n_flows"][0] > 0
    pd.testing.assert_frame_equal(saved, rebuilt)


def test_a_large_meta_is_the_json_modules_text_of_it(tmp_path):
    # meta.json takes the scenario's text from scenario.json's: the same bytes json.dumps writes
    t, m = synth.run()
    flows = [{"kind": "tcp", "start": f"{i}ms", "cc": "cubic", "note": "é\\n"} for i in range(30000)]
    m = {**m, "scenario": {**m["scenario"], "flows": flows}, "zz": [1.5, None]}
    d = store.write_run(tmp_path, "big", t, m, {})
    meta = json.loads((d / "meta.json").read_text())
    assert len(json.dumps(meta)) > store.INDENT_MAX_BYTES
    assert (d / "meta.json").read_text() == json.dumps(meta, sort_keys=True) + "\n"
    assert (d / "scenario.json").read_text() == json.dumps(m["scenario"], sort_keys=True) + "\n"


def test_a_run_writer_stopped_before_publishing_leaves_nothing(tmp_path):
    # the tables are being written in a thread when the caller's block ends with an interrupt:
    # the thread is waited for and the temporary directory removed; nothing is listed
    t, _ = synth.run()
    with pytest.raises(KeyboardInterrupt), store.RunWriter(tmp_path, "r1", t) as w:
        raise KeyboardInterrupt
    assert not w._thread.is_alive()
    assert list(tmp_path.iterdir()) == []


def test_a_table_that_fails_to_write_fails_the_publishing_and_leaves_nothing(tmp_path, monkeypatch):
    t, m = synth.run()

    def full(table, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store.write, "write_parquet", full)  # where RunWriter finds it
    with pytest.raises(OSError, match="No space left"), store.RunWriter(tmp_path, "r1", t) as w:
        w.finish(m, metrics.summarize(t, m))
    assert w.path is None and list(tmp_path.iterdir()) == []


def test_run_exits_2_naming_out_when_writing_a_table_fails(tmp_path, monkeypatch):
    # `aqmlab run` writes the tables while it summarises: an error there is still one line
    # naming --out, exit 2, nothing stored
    from typer.testing import CliRunner

    from aqmlab.cli import app

    def full(table, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store.write, "write_parquet", full)  # where RunWriter finds it
    out = tmp_path / "res"
    res = CliRunner().invoke(
        app, ["run", "bufferbloat", "--set", "duration=1s", "--out", str(out), "--no-plot"]
    )
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert f"--out: {out}: No space left on device (the run was not stored)" in res.output
    assert [p.name for p in out.iterdir() if not p.name.startswith("catalog")] == []
