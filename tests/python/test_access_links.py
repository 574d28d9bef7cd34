"""Access links from Python: trace files read as mm-link reads them (and refused with one line
naming the key), the synthetic generators against their analytic rates, a saturating flow over
a generated trace carrying its capacity, and the starlink scenario's reconfigurations."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from typer.testing import CliRunner

import aqmlab
from aqmlab import api, store, traces
from aqmlab.cli import app
from aqmlab.scenario import load, resolve

runner = CliRunner()

SCENARIO = """name = "tr"
duration = "3s"
[topology]
rtt = "20ms"
down = {{ trace = "{trace}", qdisc = "pfifo", limit = "1000p" }}
up = {{ rate = "10Mbps" }}
[[flows]]
kind = "udp"
rate = "40Mbps"
packet_size = "1500B"
"""


def _scenario(tmp_path: Path, trace: str) -> Path:
    p = tmp_path / "sc" / "s.toml"
    p.parent.mkdir(exist_ok=True)
    p.write_text(SCENARIO.format(trace=trace))
    return p


def test_from_rates_places_one_opportunity_per_packet_of_credit():
    # 12 Mb/s is 12000 bits a ms: one 1500-byte packet every ms, exactly
    assert traces.from_rates([12e6], interval_ms=5) == [1, 2, 3, 4, 5]
    # 6 Mb/s then 0 (an outage) then 24 Mb/s, 4 ms each: every other ms, nothing, two a ms
    assert traces.from_rates([6e6, 0, 24e6], interval_ms=4) == [2, 4, 9, 9, 10, 10, 11, 11, 12, 12]
    ms = traces.from_rates([8e6, 16e6], interval_ms=1000)
    assert traces.mean_rate_bps(ms) == pytest.approx(12e6, rel=1e-3)


def test_gilbert_elliott_mean_is_the_stationary_mix():
    # bad (an outage) a share p_gb / (p_gb + p_bg) = 0.2 of the time: 0.8 x 24 Mb/s on average
    ms = traces.gilbert_elliott(400_000, 24e6, 0.0, 0.01, 0.04, seed=3)
    assert traces.mean_rate_bps(ms) == pytest.approx(19.2e6, rel=0.03)
    assert ms == traces.gilbert_elliott(400_000, 24e6, 0.0, 0.01, 0.04, seed=3)
    assert ms != traces.gilbert_elliott(400_000, 24e6, 0.0, 0.01, 0.04, seed=4)
    # the outages are there: some gaps of at least 25 ms (the bad state's mean sojourn)
    gaps = [b - a for a, b in itertools.pairwise(ms)]
    assert max(gaps) >= 25


def test_a_file_relative_to_the_scenario_runs_and_is_stored_inline(tmp_path: Path):
    ms = traces.from_rates([12e6, 36e6], interval_ms=500)  # 24 Mb/s over a 1 s period
    (tmp_path / "sc").mkdir()
    traces.write(tmp_path / "sc" / "cell.down", ms)
    p = _scenario(tmp_path, "cell.down")
    sc = load(p)
    r = resolve(sc)
    assert r["topology"]["down"]["trace"]["ms"] == ms
    assert r["topology"]["down"]["trace"]["file"] == str(tmp_path / "sc" / "cell.down")
    res = api.run(p)
    down = res.tables["links"].to_pylist()
    down = next(row for row in down if row["hop"] == "down")
    assert down["rate_bps"] == 24_000_000
    # UDP at 40 Mb/s saturates it: 3 periods of 1500 opportunities, less the first 5 ms's 6
    assert down["tx_bytes"] == pytest.approx(3 * len(ms) * 1500, rel=0.01)
    assert res.meta["scenario"]["topology"]["down"]["trace"]["ms"] == ms


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "no such file"),
        ("", "the file is empty"),
        ("1\n5\n3\n", "line 3: 3 ms is before the line above it (5 ms)"),
        ("1\n\n3\n", "line 2: a blank line is not allowed"),
        ("1\n2.5\n", "line 2: '2.5' is not allowed"),
        ("0\n0\n", "lasts 0 ms"),
    ],
)
def test_bad_trace_files_exit_2_naming_the_key(tmp_path: Path, content: str | None, needle: str):
    (tmp_path / "sc").mkdir()
    if content is not None:
        (tmp_path / "sc" / "bad.trace").write_text(content)
    p = _scenario(tmp_path, "bad.trace")
    for args in (["validate", str(p)], ["run", str(p), "--out", str(tmp_path / "out")]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2, res.output
        assert "Traceback" not in res.output
        line = res.output.strip()
        assert line.count("\n") == 0, line
        assert "topology.down.trace" in line and needle in line, line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_starlink_idle_rtt_follows_the_delay_steps():
    # with fq_codel keeping the queues short, the least RTT of each 15 s interval is the
    # terrestrial 20 ms plus the bent pipe's delay both ways (the scenario's steps)
    res = api.run(
        "starlink",
        overrides={"duration": "57s", "topology.down.qdisc": "fq_codel", "topology.up.qdisc": "fq_codel"},
    )
    p = res.tables["probes"].to_pandas()
    p = p[~p["lost"]]
    for lo, hi, one_way_ms in ((0, 12, 10), (12.1, 27, 16), (27.1, 42, 8), (42.1, 57, 20)):
        window = p[(p["t_send_ns"] >= lo * 1e9) & (p["t_send_ns"] < hi * 1e9)]
        least = window["rtt_ns"].min() / 1e6
        assert 20 + 2 * one_way_ms <= least < 20 + 2 * one_way_ms + 1, (lo, least)
    # the outages are in the rate schedule: 20 ms of 0 b/s at 12 s
    rs = res.tables["rate_schedule"].to_pandas()
    down = rs[(rs["dir"] == "down") & (rs["t_ns"] == 12_000_000_000)]
    assert list(down["rate_bps"]) == [0]


def test_a_shaping_cake_is_the_bottleneck_of_the_summary_and_the_catalog_row():
    # a home router's CAKE shaping at 20 Mb/s on its 100 Mb/s port, before a 25 Mb/s modem: the
    # bottleneck is CAKE's queue, and the utilisation is of its 20 Mb/s, not the modem's 25
    sc = {
        "name": "shaped",
        "duration": "10s",
        "topology": {
            "rtt": "40ms",
            "hops": [
                {
                    "name": "router",
                    "direction": "down",
                    "rate": "100Mbps",
                    "qdisc": {"kind": "cake", "bandwidth": "20Mbps"},
                },
                {"name": "modem", "direction": "down", "rate": "25Mbps", "qdisc": "pfifo"},
                {"name": "back", "direction": "up", "rate": "10Mbps"},
            ],
        },
        "flows": [{"kind": "tcp", "count": 2}],
    }
    res = api.run(sc, warmup_s=2.0)
    assert res.summary["bottleneck"]["down"] == "router"
    row = store.flatten_summary(res.summary, res.meta)
    assert row["qdisc"] == "cake"
    assert 0.9 < row["utilization"] <= 1.0


SHAPED_HOME = """name = "shaped_home"
duration = "6s"
[topology]
rtt = "40ms"
[[topology.hops]]
name = "router"
direction = "down"
rate = "100Mbps"
qdisc = { kind = "cake", bandwidth = "20Mbps" }
[[topology.hops]]
name = "modem"
direction = "down"
rate = "25Mbps"
qdisc = "pfifo"
[[topology.hops]]
name = "back"
direction = "up"
rate = "10Mbps"
[[flows]]
kind = "tcp"
count = 2
"""


def test_a_sweep_over_a_shaping_cake_tables_cake_as_the_bottleneck(tmp_path: Path):
    # The same home link swept over CAKE's bandwidth (20 and 10 Mb/s, both below the modem's 25):
    # in the sweep's table and the catalog each run's bottleneck is CAKE's queue (its qdisc is
    # the row's, not the modem's pfifo) and two saturating TCP flows fill CAKE's rate, less
    # their slow start (the catalog counts from 0 s); against the modem's 25 Mb/s the same
    # bytes would read at most 0.8 and 0.4.
    (tmp_path / "home.toml").write_text(SHAPED_HOME)
    f = tmp_path / "sw.toml"
    f.write_text(
        f"""base = "{tmp_path / "home.toml"}"
name = "shaped"
reps = 1
[grid]
"topology.hops.0.qdisc.bandwidth" = ["20Mbps", "10Mbps"]
"""
    )
    t = aqmlab.sweep(f, jobs=1, out=tmp_path / "o")
    assert len(t) == 2 and set(t["qdisc"]) == {"cake"}
    assert all(0.82 < u <= 1.0 for u in t["utilization"]), list(t["utilization"])
    q = store.query(tmp_path / "o", "SELECT qdisc, utilization FROM runs")
    assert set(q["qdisc"]) == {"cake"} and all(0.82 < u <= 1.0 for u in q["utilization"])


def test_inlining_traces_leaves_the_scenario_it_was_given_unchanged(tmp_path: Path):
    import copy

    f = tmp_path / "t.trace"
    f.write_text("1\n2\n")
    sc = {"topology": {"rtt": "10ms", "down": {"trace": str(f)}, "up": {"rate": "1Mbps"},
                       "hops": [{"name": "a", "trace": str(f)}, {"name": "b"}]}, "flows": [{"kind": "tcp"}]}  # fmt: skip
    before = copy.deepcopy(sc)
    out = traces.inline(sc)
    assert sc == before
    assert out["topology"]["down"]["trace"] == {"file": str(f), "ms": [1, 2]}
    assert out["topology"]["hops"][0]["trace"]["ms"] == [1, 2] and out["topology"]["hops"][1] == {"name": "b"}
    assert out["flows"] == sc["flows"]
