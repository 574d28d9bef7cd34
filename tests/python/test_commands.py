"""The post-run CLI commands, through typer's CliRunner on a tiny app that calls register()."""

import gzip
import json

import pytest
import synth
import typer
from typer.testing import CliRunner

from aqmlab import metrics, store
from aqmlab.cli import results

runner = CliRunner()


@pytest.fixture
def app():
    a = typer.Typer()

    @a.callback()
    def main():
        """aqmlab (test app)"""

    results.register(a)
    return a


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "results"
    for rid, seed, drop in (("tiny-a", 1, ()), ("tiny-b", 2, ()), ("series-c", 3, ("packets",))):
        t, m = synth.run(seed=seed, drop=drop)
        store.write_run(r, rid, t, m, metrics.summarize(t, m))
    t, m = synth.flent_run(4, 4, 4)
    store.write_run(r, "rrul-d", t, m, metrics.summarize(t, m))
    (r / "half").mkdir()
    (r / "half" / "meta.json").write_text("{}")
    return r


def inv(app, *args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "300"})


def test_runs_lists_and_skips_corrupt(app, root):
    res = inv(app, "runs", "--root", root)
    assert res.exit_code == 0, res.output
    for rid in ("tiny-a", "tiny-b", "series-c", "rrul-d"):
        assert rid in res.output
    assert "skipped half" in res.output
    res = inv(app, "runs", "--root", root, "--where", "seed = 2")
    assert "tiny-b" in res.output and "tiny-a" not in res.output


def test_out_and_root_name_the_same_results_root(app, root):
    # run, sweep and reproduce write with --out, the others read with --root: each takes both
    by_out, by_root = inv(app, "runs", "--out", root), inv(app, "runs", "--root", root)
    assert by_out.exit_code == 0 and by_out.output == by_root.output
    from aqmlab.cli import app as full

    for cmd in ("run", "sweep", "reproduce", "runs", "show", "plot", "report", "query"):
        text = runner.invoke(full, [cmd, "--help"], env={"COLUMNS": "300"}).output
        assert "--out" in text and "--root" in text, cmd


def test_runs_bad_where(app, root):
    res = inv(app, "runs", "--root", root, "--where", "nosuchcol = 1")
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "nosuchcol" in res.output


def test_show(app, root):
    res = inv(app, "show", "tiny-a", "--root", root)
    assert res.exit_code == 0, res.output
    assert "codel" in res.output and "bulk" in res.output and "probes" in res.output


def test_unknown_run(app, root):
    res = inv(app, "show", "nope", "--root", root)
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and "no run 'nope'" in res.output and "tiny-a" in res.output
    res = inv(app, "show", "tiny", "--root", root)  # ambiguous prefix
    assert res.exit_code == 2 and "ambiguous" in res.output


def test_query(app, root):
    res = inv(app, "query", "SELECT run_id, count(*) AS n FROM packets GROUP BY run_id ORDER BY run_id",
              "--root", root)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "tiny-a" in res.output and "series-c" not in res.output
    res = inv(app, "query", "SELEC nonsense", "--root", root)
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_plot(app, root, tmp_path):
    out = tmp_path / "cdf.svg"
    res = inv(app, "plot", "tiny-a", "tiny-b", "--kind", "delay_cdf", "-o", out, "--root", root)
    assert res.exit_code == 0, res.output
    assert out.stat().st_size > 1000
    res = inv(app, "plot", "tiny-a", "--kind", "pie_chart", "--root", root)
    assert res.exit_code == 2 and "unknown plot kind 'pie_chart'; kinds: delay_ts" in res.output
    res = inv(app, "plot", "series-c", "--kind", "delay_ts", "-o", tmp_path / "x.png", "--root", root)
    assert res.exit_code == 2
    assert "run 'series-c' has no 'packets' table" in res.output and res.output.count("\n") == 1


def test_report(app, root, tmp_path):
    out = tmp_path / "r.html"
    res = inv(app, "report", "tiny-a", str(root / "series-c"), "-o", out, "--root", root)
    assert res.exit_code == 0, res.output
    assert out.read_text().count("<img") >= 5
    out2 = tmp_path / "all.html"
    res = inv(app, "report", root, "-o", out2)
    assert res.exit_code == 0, res.output
    assert "skipped half" in res.output and "rrul-d" in out2.read_text()


def test_export_flent(app, root, tmp_path):
    out = tmp_path / "x.flent.gz"
    res = inv(app, "export", "flent", "rrul-d", "-o", out, "--root", root)
    assert res.exit_code == 0, res.output
    assert json.loads(gzip.decompress(out.read_bytes()))["metadata"]["NAME"] == "rrul_be"  # no flow marked
    res = inv(app, "export", "flent", "rrul-d", "-o", out, "--test", "bogus", "--root", root)
    assert res.exit_code == 2 and "unknown Flent test 'bogus'; supported: rrul" in res.output
    res = inv(app, "export", "flent", "rrul-d", "-o", out, "--test", "tcp_1up", "--root", root)
    assert res.exit_code == 2 and "'tcp_1up' needs 1 upload TCP flows, the run has 4" in res.output


def test_flent_export_and_figures_skip_the_runs_warmup(app, tmp_path):
    # A run summarised with a 2 s warm-up: the Flent file and the delay figure default to the same
    # window as the run's table, so their medians agree with it (they did not: Flent and the
    # figure used the whole run).
    import numpy as np

    from aqmlab import api, flent, plots

    sc = {"name": "w", "duration": "5s",
          "topology": {"rtt": "20ms", "down": {"rate": "10Mbps", "limit": "1000p"}, "up": {"rate": "10Mbps"}},
          "flows": [{"kind": "udp", "rate": "12Mbps"}, {"kind": "ping", "interval": "50ms"}],
          "record": {"level": "packets", "interval": "100ms"}}  # fmt: skip
    res = api.run_dict(sc, seed=1, warmup_s=2.0)
    d = store.write_run(tmp_path / "r", "w-1", res.tables, res.meta, res.summary)
    run = store.load_run(d)
    assert store.list_runs(tmp_path / "r").set_index("run_id").loc["w-1", "warmup_s"] == 2.0
    table_p50 = run.summary["probes"][0]["rtt_ms"]["p50"]
    data = flent.build(run, "ping")
    vals = [p["val"] for p in data["raw_values"]["Ping (ms) ICMP"]]
    assert np.median(vals) == pytest.approx(table_p50)
    assert all(p["t"] - flent.T0 >= 2.0 for p in data["raw_values"]["Ping (ms) ICMP"])
    grid = data["results"]["Ping (ms) ICMP"]
    assert all(v is None for x, v in zip(data["x_values"], grid) if x < 2.0)
    whole = [p["val"] for p in flent.build(run, "ping", warmup_s=0.0)["raw_values"]["Ping (ms) ICMP"]]
    assert np.median(whole) < 0.9 * table_p50  # the queue grows all run long: the window matters
    # the delay CDF's median is the table's p50
    line = plots.figure("delay_cdf", [run]).axes[0].lines[0]
    x, f = line.get_xdata(), line.get_ydata()
    assert x[np.searchsorted(f, 0.5)] == pytest.approx(
        run.summary["links"]["down"]["queue_delay_ms"]["p50"], rel=0.02
    )
    # the CLI: --warmup names the kinds that take it and the allowed range
    res = inv(
        app,
        "plot",
        "w-1",
        "--kind",
        "box",
        "--warmup",
        "1",
        "--root",
        tmp_path / "r",
        "-o",
        tmp_path / "b.png",
    )
    assert res.exit_code == 2 and "--warmup" in res.output and "delay_cdf" in res.output
    res = inv(
        app,
        "export",
        "flent",
        "w-1",
        "--warmup",
        "7",
        "-o",
        tmp_path / "x.flent.gz",
        "--root",
        tmp_path / "r",
    )
    assert res.exit_code == 2 and "--warmup: 7" in res.output and "5 s" in res.output
    res = inv(app, "plot", "w-1", "--kind", "delay_cdf", "--warmup", "0", "--root", tmp_path / "r",
              "-o", tmp_path / "c.png")  # fmt: skip
    assert res.exit_code == 0, res.output
