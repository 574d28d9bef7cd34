"""Direction-aware tables and figures, and sweeps you can find again (issue 38 items 1 and 4).

The study: a 20/2 Mbit/s cable-like path, four TCP uploads and a VoIP stream, disciplines on the
uplink, then a sweep of the uplink rate. The facts asserted: the uplink is the only loaded link
(its utilisation is near 1, the downlink carries only ACKs and the VoIP stream's return half, a
few per cent at most), so every default table and figure must describe the uplink.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from aqmlab import columns, flent, plots, store
from aqmlab.cli import app

runner = CliRunner()

UPLOADS = """
name = "uploads"
duration = "5s"
[topology]
rtt = "20ms"
down = { rate = "20Mbps", qdisc = "pfifo" }
up = { rate = "2Mbps", qdisc = "codel" }
[[flows]]
kind = "tcp"
direction = "up"
count = 4
[[flows]]
kind = "voip"
"""

SWEEP = """
base = "uploads.toml"
name = "uprate"
reps = 1
[set]
duration = "4s"
[grid]
"topology.up.qdisc" = ["pfifo", "fq_codel"]
"topology.up.rate" = ["1Mbps", "2Mbps"]
"flows.0.count" = [2, 4]
"""


def cli(*args) -> tuple[int, str]:
    res = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "400"})
    return res.exit_code, res.output


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """One run of the scenario and the uplink sweep (8 runs), under one results root."""
    d = tmp_path_factory.mktemp("study")
    (d / "uploads.toml").write_text(UPLOADS)
    (d / "sweep.toml").write_text(SWEEP)
    code, out = cli("run", d / "uploads.toml", "--out", d / "res", "--no-plot")
    assert code == 0, out
    code, out = cli("sweep", d / "sweep.toml", "--out", d / "res", "--jobs", "1")
    assert code == 0, out
    (d / "sweep.out").write_text(out)
    return d


def _single(root: Path) -> str:
    """The run id of the one run of the scenario that is not part of the sweep."""
    df = store.list_runs(root, scenario="uploads", where="sweep IS NULL")
    assert len(df) == 1
    return df.iloc[0]["run_id"]


def _table_rows(out: str, first: str) -> list[list[str]]:
    """The cells of the printed table rows whose first cell is ``first``."""
    rows = []
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│┃").split("│")]
        if cells and cells[0] == first:
            rows.append(cells)
    return rows


def _header(out: str, word: str) -> list[str]:
    """The header cells of the first printed table whose header holds ``word`` (a header cell
    that wraps over several lines is joined back)."""
    lines = out.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("┏") and word in "".join(lines[i : i + 4]))
    parts = []
    for line in lines[start + 1 :]:
        if not line.startswith("┃"):
            break
        parts.append([c.strip() for c in line.strip("┃").split("┃")])
    return ["".join(cells) for cells in zip(*parts, strict=True)]


# --------------------------------------------------------------------------- the rule


def test_the_rule_picks_where_the_load_is():
    assert columns.loaded_dirs({"utilization": 0.007, "up_utilization": 0.998}) == ["up"]
    assert columns.loaded_dirs({"utilization": 0.99, "up_utilization": 0.11}) == ["down"]
    assert columns.loaded_dirs({"utilization": 0.97, "up_utilization": 0.95}) == ["down", "up"]
    # an idle path hides nothing; nor does a run that reports no utilisation
    assert columns.loaded_dirs({"utilization": 0.01, "up_utilization": 0.002}) == ["down", "up"]
    assert columns.loaded_dirs({"utilization": None, "up_utilization": float("nan")}) == ["down", "up"]
    # over many runs: every direction loaded in one of them; --dir overrides
    rows = [{"utilization": 0.9, "up_utilization": 0.0}, {"utilization": 0.0, "up_utilization": 0.9}]
    assert columns.shown_dirs(None, rows) == ["down", "up"]
    assert columns.shown_dirs("up", rows) == ["up"] and columns.shown_dirs("both", []) == ["down", "up"]
    assert columns.in_direction("queue_delay_p95_ms", "up") == "up_queue_delay_p95_ms"
    assert columns.in_direction("up_qdisc", "down") == "qdisc"
    assert columns.in_direction("goodput_mbps_total", "up") == "goodput_mbps_total"


# --------------------------------------------------------------------------- tables


def test_run_summary_shows_the_uplink(study):
    code, out = cli("run", study / "uploads.toml", "--out", study / "again", "--no-plot")
    assert code == 0, out
    assert not _table_rows(out, "down") and len(_table_rows(out, "up")) == 1
    head, up = _header(out, "util %"), _table_rows(out, "up")[0]
    assert up[head.index("qdisc")] == "codel"
    assert float(up[head.index("util %")]) > 90
    assert float(up[head.index("p95")]) > 1.0  # four uploads keep a standing queue
    assert "not shown: down" in out and "--dir both" in out
    code, out = cli("run", study / "uploads.toml", "--out", study / "again", "--no-plot", "--dir", "both")
    assert code == 0 and _table_rows(out, "down") and _table_rows(out, "up")
    code, out = cli("run", study / "uploads.toml", "--out", study / "again", "--dir", "sideways")
    assert code == 2 and "--dir: 'sideways' is not allowed; allowed: up, down, both" in out


def test_compare_table_shows_the_uplink(study):
    code, out = cli(
        "run", study / "uploads.toml", "--out", study / "cmp", "--no-plot", "--qdisc", "pfifo,codel"
    )
    assert code == 0, out
    head = _header(out, "qdelay")
    assert "qdelay up p50 ms" in head and "drops up" in head and not any("down" in h for h in head)
    fifo = _table_rows(out, "pfifo")[0]
    # a FIFO on 2 Mbit/s under four uploads: a standing queue of hundreds of ms, no drops (1000 p)
    assert float(fifo[head.index("qdelay up p50 ms")]) > 100


def test_show_and_runs_default_to_the_uplink(study):
    root = study / "res"
    row = store.list_runs(root, where=f"run_id = '{_single(root)}'").iloc[0]
    assert row["dir"] == "up" and row["sweep"] is None
    assert row["up_utilization"] > 0.9 and row["utilization"] < 0.05
    assert row["up_queue_delay_p95_ms"] > 1.0 and row["up_qdisc"] == "codel"
    code, out = cli("show", row["run_id"], "--root", root)
    assert code == 0 and _table_rows(out, "up") and not _table_rows(out, "down")
    code, out = cli("show", row["run_id"], "--root", root, "--dir", "down")
    assert code == 0 and _table_rows(out, "down") and not _table_rows(out, "up")
    code, out = cli("runs", "--root", root)
    head = _header(out, "run_id")
    assert {"up_qdisc", "up_queue_delay_p95_ms", "up_utilization", "dir", "sweep"} <= set(head)
    assert "utilization" not in head and "qdisc" not in head
    code, out = cli("runs", "--root", root, "--dir", "both")
    assert {"qdisc", "utilization", "up_utilization"} <= set(_header(out, "run_id"))


def test_sweep_summary_shows_the_uplink(study):
    out = (study / "sweep.out").read_text()
    head = _header(out, "topology.up.rate")
    assert {"up_queue_delay_p95_ms", "up_utilization", "up_drops"} <= set(head)
    assert "utilization" not in head and "queue_delay_p95_ms" not in head
    rows = _table_rows(out, "2") + _table_rows(out, "4")  # the first column: flows.0.count
    assert len(rows) == 8 and {r[head.index("topology.up.qdisc")] for r in rows} == {"pfifo", "fq_codel"}
    for r in rows:
        assert float(r[head.index("up_utilization")]) > 0.9
        assert float(r[head.index("up_queue_delay_p95_ms")]) > 0


# --------------------------------------------------------------------------- sweeps in the catalog


def test_sweep_runs_carry_the_sweep_name_and_typed_grid_columns(study):
    root = study / "res"
    df = store.list_runs(root, sweep="uprate")
    assert len(df) == 8 and set(df["dir"]) == {"up"}
    assert sorted(df["topology_up_rate"].unique()) == ["1Mbps", "2Mbps"]
    assert sorted(df["topology_up_qdisc"].unique()) == ["fq_codel", "pfifo"]
    # each row's grid columns are its own run's values (meta['params'] holds them too)
    for _, r in df.iterrows():
        params = json.loads(r["params"])
        assert r["topology_up_rate"] == params["topology.up.rate"]
        assert r["flows_0_count"] == params["flows.0.count"]
        assert r["up_qdisc"] == r["topology_up_qdisc"]
    con = duckdb.connect(str(root / store.CATALOG), read_only=True)
    types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE runs)").fetchall())
    con.close()
    assert types["flows_0_count"] == "BIGINT" and types["topology_up_rate"] == "VARCHAR"
    q = store.query(root, "SELECT count(*) AS n FROM runs WHERE sweep = 'uprate' AND flows_0_count = 4")
    assert q["n"][0] == 4


def test_grid_column_names():
    assert store.grid_column("topology.up.rate") == "topology_up_rate"
    assert store.grid_column("load") == "load"  # the label params.load
    assert store.grid_column("qdisc") == "params_qdisc"  # not the down link's qdisc column
    assert store.grid_column("flows.0.cc_params") == "flows_0_cc_params"


def test_an_old_catalog_is_rebuilt_with_the_new_columns(study, tmp_path):
    import shutil

    root = tmp_path / "res"
    shutil.copytree(study / "res", root)
    con = duckdb.connect(str(root / store.CATALOG))
    con.execute("ALTER TABLE runs DROP COLUMN dir")
    con.execute("ALTER TABLE runs DROP COLUMN topology_up_rate")
    con.close()
    df = store.list_runs(root, sweep="uprate")
    assert set(df["dir"]) == {"up"} and df["topology_up_rate"].notna().all()


# --------------------------------------------------------------------------- plots and report


def test_plot_and_report_take_a_sweep_name(study, tmp_path):
    root = study / "res"
    code, out = cli("plot", "uprate", "--kind", "box", "--root", root, "-o", tmp_path / "box.png")
    assert code == 0, out
    code, out = cli("plot", "uprate", "--kind", "rtt_cdf", "--root", root, "-o", tmp_path / "c.png",
                    "--where", "topology.up.rate=1Mbps", "--where", "flows.0.count=4")  # fmt: skip
    assert code == 0, out
    paths = store.sweep_run_paths(root, "uprate")
    assert len(paths) == 8
    ids = [p.name for p in paths]
    assert len(store.filter_run_ids(root, ids, ["topology.up.rate=1Mbps"])) == 4
    assert len(store.filter_run_ids(root, ids, ["rate=1Mbps", "count=2"])) == 2  # short keys
    code, out = cli("report", "uprate", "--root", root, "-o", tmp_path / "r.html", "--where", "count=2")
    assert code == 0, out
    html = (tmp_path / "r.html").read_text()
    assert html.count("<h2>Run ") == 4 and "Queue backlog (up)" in html
    assert "Queueing delay CDF (up): skipped" in html and "--keep-packets" in html


def test_box_plot_groups_by_the_uplinks_discipline(study):
    runs = [store.load_run(p) for p in store.sweep_run_paths(study / "res", "uprate")]
    ax = plots.figure("box", runs).axes[0]
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    # 2 disciplines x 2 rates x 2 flow counts, one run each: never pooled, never named after the
    # down link's pfifo alone
    assert len(ticks) == 8
    assert (
        sum(t.startswith("fq_codel") for t in ticks) == 4 and sum(t.startswith("pfifo") for t in ticks) == 4
    )
    assert "up" in ax.get_ylabel() and "qdisc" in ax.get_xlabel()
    # the medians drawn are the uplink's p95 (pfifo's standing queue is far above fq_codel's)
    groups = plots.grouped(runs, direction="up")[1]
    fq = [r.summary["links"]["up"]["queue_delay_ms"]["p95"] for g, rs in groups.items() if g[0] == "fq_codel"
          for r in rs]  # fmt: skip
    fifo = [r.summary["links"]["up"]["queue_delay_ms"]["p95"] for g, rs in groups.items() if g[0] == "pfifo"
            for r in rs]  # fmt: skip
    assert len(fq) == len(fifo) == 4 and max(fq) < min(fifo)
    # --dir down: the downlink's metric and discipline (pfifo everywhere, so the up discipline,
    # which differs, still tells the runs apart)
    ax = plots.figure("box", runs, direction="down").axes[0]
    assert "down" in ax.get_ylabel() and len(ax.get_xticklabels()) == 8
    labels = plots.run_labels(runs, ["up"])
    assert len(set(labels)) == 8 and all(not lab.startswith("down=") for lab in labels)


def test_delay_cdf_of_an_uplink_run_draws_the_uplink(study):
    run = store.load_run(_single(study / "res"), study / "res")
    ax = plots.figure("delay_cdf", [run]).axes[0]
    assert len(ax.lines) == 1 and "(up link)" in ax.get_title()
    x, f = ax.lines[0].get_xdata(), ax.lines[0].get_ydata()
    p50 = x[next(i for i, v in enumerate(f) if v >= 0.5)]
    assert p50 == pytest.approx(run.summary["links"]["up"]["queue_delay_ms"]["p50"], rel=0.05)
    ax = plots.figure("delay_cdf", [run], direction="both").axes[0]
    assert len(ax.lines) == 2


# --------------------------------------------------------------------------- error messages


def test_errors_name_the_way_out(study, tmp_path):
    root = study / "res"
    code, out = cli("plot", "uprate-", "--kind", "box", "--root", root)
    assert code == 2 and "ambiguous" in out and "8 runs match" in out and "sweep 'uprate'" in out
    code, out = cli("plot", "uprate", "--kind", "delay_cdf", "--root", root, "-o", tmp_path / "x.png")
    assert code == 2 and out.count("\n") == 1
    assert "has no 'packets' table" in out and "--keep-packets" in out and "sweep 'uprate'" in out
    code, out = cli("plot", "uprate", "--kind", "box", "--root", root, "--where", "colour=red")
    assert code == 2 and "--where 'colour': no such key" in out and "topology_up_rate" in out
    code, out = cli("plot", "uprate", "--kind", "box", "--root", root, "--where", "flows.0.count=many")
    assert code == 2 and "flows_0_count holds numbers" in out
    code, out = cli("plot", "uprate", "--kind", "box", "--root", root, "--where", "rate=9Mbps")
    assert code == 2 and "no complete runs in uprate with rate=9Mbps" in out


# --------------------------------------------------------------------------- Flent


def test_export_flent_says_which_test_and_carries_voip(study, tmp_path):
    """tcp_nup.conf includes voip_mixin.inc: its voip_host parameter carries the VoIP stream beside
    the uploads; --test voip exports the stream alone."""
    root = study / "res"
    rid = _single(root)
    code, out = cli("export", "flent", rid, "--root", root, "-o", tmp_path / "a.flent.gz")
    assert code == 0, out
    assert "Flent test 'tcp_nup' (4 upload and 0 download TCP flows)" in out and "left out" not in out
    data = json.loads(gzip.decompress((tmp_path / "a.flent.gz").read_bytes()))
    assert data["metadata"]["TEST_PARAMETERS"]["voip_host"] == data["metadata"]["HOST"]
    assert data["metadata"]["SERIES_META"]["VoIP"]["AQMLAB_FLOW"] == 4
    code, out = cli("export", "flent", rid, "--root", root, "-o", tmp_path / "v.flent.gz", "--test", "voip")
    assert code == 0, out
    assert "Flent test 'voip' (chosen with --test)" in out and "tcp flow 0" in out
    data = json.loads(gzip.decompress((tmp_path / "v.flent.gz").read_bytes()))
    assert data["metadata"]["SERIES_META"]["VoIP"]["AQMLAB_FLOW"] == 4
    assert not any(k.startswith("TCP") for k in data["results"])
    # irtt's stream: one packet every 20 ms over the 5 s run
    assert len(data["raw_values"]["VoIP"]) == pytest.approx(5 / 0.02, abs=2)
    run = store.load_run(rid, root)
    assert flent.guess(run) == ("tcp_nup", "4 upload and 0 download TCP flows")


def test_a_path_of_hops_fills_the_link_columns_from_each_directions_bottleneck():
    import aqmlab

    res = aqmlab.run("cable_modem", overrides={"duration": "2s"})
    row = store.flatten_summary(res.summary, res.meta)
    for d in columns.DIRECTIONS:
        hop = res.summary["bottleneck"][d]
        assert hop not in ("down", "up")  # the hops have their own names
        link = res.summary["links"][hop]
        assert row[columns.in_direction("utilization", d)] == link["utilization"] is not None
        assert row[columns.in_direction("qdisc", d)] == link["qdisc"]
    assert row["dir"] == columns.dir_name(columns.loaded_dirs(row))
