"""A store that no single crash can block: the reader skips and reports what it cannot read
(half-written ``.tmp-*`` directories, truncated Parquet files of runs and of sweep parts), a
corrupt or empty catalog is rebuilt from the files (it is a derived cache), and a run killed
with SIGKILL while it writes leaves the store readable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
import synth
from typer.testing import CliRunner

from aqmlab import metrics, store
from aqmlab.cli import app

runner = CliRunner()
AQMLAB = [sys.executable, "-c", "import sys; from aqmlab.cli import entry; sys.argv[0] = 'aqmlab'; entry()"]


def _write(root: Path, run_id: str, **kw) -> Path:
    t, m = synth.run(**kw)
    d = store.write_run(root, run_id, t, m, metrics.summarize(t, m))
    store.catalog_add(root, d)
    return d


def _truncate(f: Path) -> None:
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])


def _runs_and_query_work(root: Path, expect: set[str]) -> str:
    res = runner.invoke(app, ["runs", "--root", str(root)])
    assert res.exit_code == 0, res.output
    table = "packets" if expect else "runs"  # a view exists once some run recorded the table
    res = runner.invoke(
        app,
        ["query", f"SELECT DISTINCT run_id FROM {table} ORDER BY 1", "--root", str(root), "--format", "json"],
    )
    assert res.exit_code == 0, res.output
    assert {r["run_id"] for r in json.loads(res.stdout)} == expect
    return res.output


def test_tmp_dir_with_truncated_parquet_is_skipped_and_reported(tmp_path: Path):
    _write(tmp_path, "good")
    tmp = tmp_path / ".tmp-half-1234"
    tmp.mkdir()
    (tmp / "packets.parquet").write_bytes((tmp_path / "good" / "packets.parquet").read_bytes()[:100])
    out = _runs_and_query_work(tmp_path, {"good"})
    assert ".tmp-half-1234" in out and "skipped" in out


def test_truncated_parquet_of_a_finished_run_is_skipped(tmp_path: Path):
    _write(tmp_path, "good")
    bad = _write(tmp_path, "bad")
    _truncate(bad / "packets.parquet")
    out = _runs_and_query_work(tmp_path, {"good"})
    assert "bad" in out and "packets.parquet" in out


def test_truncated_sweep_part_is_skipped(tmp_path: Path):
    _write(tmp_path, "good")
    sweep = tmp_path / "sweeps" / "sw-1"
    (sweep / "packets").mkdir(parents=True)
    (sweep / "packets" / "part-0001.parquet").write_bytes(b"PAR1 truncated")
    # its batch's commit record, which says what the part holds
    (sweep / "summaries").mkdir()
    row = {"run_id": ["x"], "status": ["ok"], "rows": [json.dumps({"packets": 3})]}
    store.write_parquet(pa.table(row), sweep / "summaries" / "part-0001.parquet")
    out = _runs_and_query_work(tmp_path, {"good"})
    assert "packets/part-0001.parquet" in out


@pytest.mark.parametrize("content", [b"", b"this is not a duckdb file" * 100])
def test_corrupt_or_empty_catalog_is_rebuilt(tmp_path: Path, content: bytes):
    _write(tmp_path, "good")
    (tmp_path / store.CATALOG).write_bytes(content)
    _runs_and_query_work(tmp_path, {"good"})
    (tmp_path / store.CATALOG).write_bytes(content)
    _write(tmp_path, "second")  # catalog_add on a corrupt catalog rebuilds it too
    assert set(store.list_runs(tmp_path)["run_id"]) == {"good", "second"}


def test_query_formats_and_runs_limit(tmp_path: Path):
    for i in range(3):
        _write(tmp_path, f"r{i}", seed=i + 1)
    sql = "SELECT run_id, seed FROM runs ORDER BY run_id"
    res = runner.invoke(app, ["query", sql, "--root", str(tmp_path), "--format", "csv"])
    assert res.exit_code == 0 and res.stdout.splitlines() == ["run_id,seed", "r0,1", "r1,2", "r2,3"], (
        res.output
    )
    res = runner.invoke(app, ["query", sql, "--root", str(tmp_path), "--format", "json"])
    assert json.loads(res.stdout) == [{"run_id": f"r{i}", "seed": i + 1} for i in range(3)]
    res = runner.invoke(app, ["query", sql, "--root", str(tmp_path), "--format", "xml"])
    assert res.exit_code == 2 and "--format" in res.output and "csv" in res.output
    res = runner.invoke(app, ["runs", "--root", str(tmp_path), "--limit", "2"])
    assert res.exit_code == 0 and "3 runs" in res.output and "newest 2 shown" in res.output
    assert sum(f"r{i}" in res.output for i in range(3)) == 2
    res = runner.invoke(app, ["runs", "--root", str(tmp_path), "--limit", "0"])
    assert res.exit_code == 2


SLOW_WRITE = """
name = "kill"
duration = "20s"
seed = 1
[topology]
rtt = "20ms"
down = { rate = "50Mbps", qdisc = "pfifo" }
up = { rate = "50Mbps" }
[[flows]]
kind = "udp"
direction = "down"
rate = "45Mbps"
"""


def test_sigkill_during_write_leaves_the_store_readable(tmp_path: Path):
    """SIGKILL a single run at the moment its temporary directory appears (mid-write), several
    times: every later `runs` and `query` succeeds and sees exactly the runs that completed."""
    sc = tmp_path / "kill.toml"
    sc.write_text(SLOW_WRITE)
    root = tmp_path / "R"
    root.mkdir()
    killed = 0
    for _ in range(3):
        p = subprocess.Popen([*AQMLAB, "run", str(sc), "--out", str(root), "--no-plot", "--json"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy())  # fmt: skip
        deadline = time.time() + 120
        while p.poll() is None and time.time() < deadline and not any(root.glob(".tmp-*/*.parquet")):
            time.sleep(0.001)
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
            killed += 1
        p.wait()
        complete = {d.name for d in store.scan_runs(root)[0]}
        _runs_and_query_work(root, complete)
    assert killed >= 1  # the kill landed mid-write at least once
