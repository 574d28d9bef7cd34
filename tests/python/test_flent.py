"""Flent 2.3.0 loads, summarises and plots aqmlab exports."""

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import synth

from aqmlab import flent, metrics
from aqmlab.store import RunData

FLENT = shutil.which("flent") or str(Path(sys.executable).with_name("flent"))


def mk(n_up, n_down, n_probes, name="flentish"):
    t, m = synth.flent_run(n_up, n_down, n_probes, name=name)
    return RunData(path=Path(name), meta=m, summary=metrics.summarize(t, m), scenario=m["scenario"], tables=t)


def run_flent(*args, cwd):
    if not Path(FLENT).exists():
        pytest.skip("flent is not installed in this environment (pip install flent==2.3.0)")
    env = {**os.environ, "MPLBACKEND": "Agg", "HOME": str(cwd)}
    return subprocess.run([FLENT, *args], check=False, capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)  # fmt: skip


def flent_plots(f: Path, plot: str, cwd: Path) -> None:
    """Flent draws ``plot`` from data file ``f`` (a non-trivial PNG)."""
    out = cwd / f"{plot}.png"
    res = run_flent("-i", str(f), "-p", plot, "-o", str(out), cwd=cwd)
    assert res.returncode == 0, res.stderr[-3000:]
    assert out.stat().st_size > 5000


def flent_summary(f: Path, cwd: Path, *series: str) -> str:
    """Flent's summary of data file ``f``, which names every one of ``series``."""
    res = run_flent("-i", str(f), "-f", "summary", cwd=cwd)
    assert res.returncode == 0, res.stderr[-3000:]
    for name in series:
        assert name in res.stdout, f"{name} missing from flent summary:\n{res.stdout}"
    return res.stdout


def _summary_means(stdout: str) -> dict[str, float]:
    out = {}
    for line in stdout.splitlines():
        m = re.match(r"\s*(.+?)\s*:\s+([0-9.]+)\s", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def test_file_format(tmp_path):
    p = flent.export_flent(mk(4, 4, 4), "rrul", tmp_path / "a.flent.gz")
    data = json.loads(gzip.decompress(p.read_bytes()))
    assert set(data) == {"version", "metadata", "x_values", "results", "raw_values"}
    assert data["version"] == 4
    md = data["metadata"]
    for k in ("NAME", "TITLE", "TIME", "HOST", "HOSTS", "LOCAL_HOST", "LENGTH", "TOTAL_LENGTH", "STEP_SIZE",
              "T0", "TEST_PARAMETERS", "SERIES_META", "FLENT_VERSION", "IP_VERSION"):  # fmt: skip
        assert k in md, k
    assert md["NAME"] == "rrul" and md["T0"] == "2026-01-01T00:00:00.000000Z" and md["STEP_SIZE"] == 0.2
    assert len(data["x_values"]) == 51 and data["x_values"][1] == 0.2  # 10 s on a 0.2 s grid
    for name, vals in data["results"].items():
        assert len(vals) == 51, name
    assert set(data["results"]) >= {"TCP upload BE", "TCP upload BK", "TCP upload CS5", "TCP upload EF",
                                     "TCP download EF", "Ping (ms) ICMP", "Ping (ms) UDP EF"}  # fmt: skip
    # flow 0 delivers 1 Mbit/s, flow 7 (4th download) 8 Mbit/s
    assert data["results"]["TCP upload BE"][5] == pytest.approx(1.0)
    assert data["results"]["TCP download EF"][5] == pytest.approx(8.0)
    raw = data["raw_values"]["TCP upload BE"][0]
    assert raw["t"] == pytest.approx(1767225600.0 + 0.1) and raw["dur"] == pytest.approx(0.1)
    ping = data["raw_values"]["Ping (ms) ICMP"]
    # 50 sent, 5 lost; each point at its reply's arrival (ping -D), 20 ms after its send
    assert len(ping) == 45 and ping[0] == {"t": pytest.approx(1767225600.02), "val": 20.0, "seq": 0}
    assert md["SERIES_META"]["Ping (ms) ICMP"]["PACKET_LOSS_RATE"] == pytest.approx(0.1)
    q = data["raw_values"]["qdisc_stats_aqmlab-down"]
    assert q[3]["dropped"] == 1 and q[3]["backlog_bytes"] == 3000
    assert q[3]["delay"] == pytest.approx(3000 * 8 / 10e6 * 1e3)  # 2.4 ms at 10 Mbit/s
    assert md["TEST_PARAMETERS"]["qdisc_stats_hosts"] == "aqmlab-down,aqmlab-up"
    # deterministic: same run -> same bytes
    p2 = flent.export_flent(mk(4, 4, 4), "rrul", tmp_path / "a.flent.gz")
    assert p2.read_bytes() == p.read_bytes()


def test_guess_and_errors():
    assert flent.guess_test(mk(4, 4, 4)) == "rrul_be"  # no flow marked: rrul_be.conf's set
    assert flent.guess_test(mk(3, 0, 1)) == "tcp_nup"
    assert flent.guess_test(mk(0, 2, 1)) == "tcp_ndown"
    assert flent.guess_test(mk(1, 0, 1)) == "tcp_1up"
    assert flent.guess_test(mk(0, 0, 2)) == "ping"
    assert flent.guess_test(mk(2, 2, 2)) == "rtt_fair4be"
    with pytest.raises(ValueError, match="unsupported Flent test 'voipx'; supported: rrul, rrul_be"):
        flent.build(mk(4, 4, 4), "voipx")
    with pytest.raises(ValueError, match="'rrul' needs 4 upload TCP flows, the run has 3"):
        flent.build(mk(3, 4, 1), "rrul")


@pytest.mark.parametrize(
    ("shape", "test", "expect"),
    [
        (
            (4, 4, 4),
            "rrul",
            {
                "TCP upload BE": 1.0,
                "TCP upload EF": 4.0,
                "TCP download BE": 5.0,
                "Ping (ms) ICMP": 20.0,
                "Ping (ms) UDP EF": 50.0,
            },
        ),
        ((4, 4, 4), "rrul_be", {"TCP upload BE4": 4.0, "Ping (ms) UDP BE3": 50.0}),
        (
            (3, 0, 1),
            "tcp_nup",
            {"TCP upload::1": 1.0, "TCP upload::3": 3.0, "TCP upload sum": 6.0, "Ping (ms) ICMP": 20.0},
        ),
        ((0, 2, 1), "tcp_ndown", {"TCP download::2": 2.0}),
        ((1, 0, 1), "tcp_1up", {"TCP upload": 1.0}),
        ((0, 0, 2), "ping", {"Ping (ms) ICMP": 20.0, "Ping (ms) UDP": 30.0}),
        (
            (2, 2, 2),
            "rtt_fair4be",
            {"TCP upload BE1 aqmlab-host1": 1.0, "TCP download BE2 aqmlab-host2": 4.0},
        ),
        ((4, 4, 4), "qdisc-stats", {"qdisc-stats::backlog_bytes": 3000.0, "qdisc-stats::backlog_pkts": 2.0}),
    ],
)
def test_flent_summary_loads(tmp_path, shape, test, expect):
    f = flent.export_flent(mk(*shape), test, tmp_path / f"{test}.flent.gz")
    res = run_flent("-i", str(f), "-f", "summary", cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    means = _summary_means(res.stdout)
    for series, mean in expect.items():
        assert series in means, f"{series} missing from flent summary:\n{res.stdout}"
        assert means[series] == pytest.approx(mean, rel=1e-3), series


@pytest.mark.parametrize(("shape", "test", "plot"), [((4, 4, 4), "rrul", "ping_cdf"),
                                                    ((4, 4, 4), "rrul", "all_scaled"),
                                                    ((3, 0, 1), "tcp_nup", "totals"),
                                                    ((4, 4, 4), "rrul", "backlog"),
                                                    ((4, 4, 4), "qdisc-stats", "backlog")])  # fmt: skip
def test_flent_plots(tmp_path, shape, test, plot):
    flent_plots(flent.export_flent(mk(*shape), test, tmp_path / f"{test}.flent.gz"), plot, tmp_path)


def test_builtin_rrul_exports_flents_marked_series(tmp_path):
    """The built-in rrul scenario: Flent's four marks per direction and its four ping series, in
    Flent's names; under pfifo_fast all marks share the middle band (Linux's ip_tos2prio reads
    the old TOS bits), so the EF probe waits as long as the BE probe."""
    import aqmlab
    from aqmlab import store

    res = aqmlab.run("rrul", duration="12s")
    r = store.load_run(store.write_run(tmp_path, "rrul-1", res.tables, res.meta, res.summary))
    assert flent.guess_test(r) == "rrul"
    p = flent.export_flent(r, None, tmp_path / "rrul.flent.gz")
    data = json.loads(gzip.decompress(p.read_bytes()))
    for c in ("BE", "BK", "CS5", "EF"):
        assert f"TCP upload {c}" in data["results"] and f"TCP download {c}" in data["results"]
    labels = {f["flow"]: f["label"] for f in res.tables["flows"].to_pylist()}
    probes = {labels[p["id"]]: p for p in res.summary["probes"]}
    assert list(probes) == ["ICMP", "UDP BE", "UDP BK", "UDP EF"]
    be, ef = probes["UDP BE"]["rtt_ms"]["p50"], probes["UDP EF"]["rtt_ms"]["p50"]
    assert abs(ef / be - 1) < 0.1, (be, ef)


def test_builtin_rtt_fair_shows_fifo_rtt_unfairness_and_exports_rtt_fair4be(tmp_path):
    """Loss-based TCP behind a FIFO shares by RTT (a flow's window grows once per RTT, and all
    see the same drops): the 10 ms host gets the most and more than twice the 500 ms host's, which
    gets the least, in both directions, and Jain's index is well below 1 (the 50 and 200 ms hosts
    may come close: CUBIC's cubic region grows the window by time, not by RTT, RFC 9438 4.2). The
    run exports as Flent's rtt_fair4be."""
    import aqmlab
    from aqmlab import store

    res = aqmlab.run("rtt_fair", duration="120s", warmup_s=10)
    for d in ("up", "down"):
        g = [f["goodput_mbps"] for f in res.summary["flows"] if f["direction"] == d]
        assert g[0] == max(g) and g[-1] == min(g) and g[0] > 2 * g[-1], (d, g)
        assert metrics.jain_index(g) < 0.9
    r = store.load_run(store.write_run(tmp_path, "rtt-1", res.tables, res.meta, res.summary))
    assert flent.guess_test(r) == "rtt_fair4be"
    data = json.loads(gzip.decompress(flent.export_flent(r, None, tmp_path / "f.flent.gz").read_bytes()))
    assert sum(k.startswith("Ping (ms)") for k in data["results"]) >= 4


def test_voip_with_an_upload_exports_flents_voip_1up(tmp_path):
    """A VoIP stream beside one TCP upload on a 1 Mb/s uplink exports as Flent's voip-1up: the
    irtt records and the sampled children that Flent 2.3 plots and summarises; the sampled delay
    is the stream's one-way delay up (the summary's mean within a few percent)."""
    import aqmlab
    from aqmlab import store

    sc = {
        "name": "voip1up",
        "duration": "30s",
        "topology": {
            "rtt": "40ms",
            "down": {"rate": "10Mbps", "qdisc": "pfifo_fast", "limit": "127p"},
            "up": {"rate": "1Mbps", "qdisc": "pfifo_fast", "limit": "127p"},
        },
        "flows": [{"kind": "voip"}, {"kind": "tcp", "direction": "up", "start": "5s"}],
    }
    res = aqmlab.run(sc)
    r = store.load_run(store.write_run(tmp_path, "voip-1", res.tables, res.meta, res.summary))
    assert flent.guess_test(r) == "voip-1up"
    f = flent.export_flent(r, None, tmp_path / "v.flent.gz")
    data = json.loads(gzip.decompress(f.read_bytes()))
    raw = data["raw_values"]["VoIP"]
    assert len(raw) == 1500 and {"owd_up", "owd_down", "val", "seq"} <= set(raw[1])
    delay = [v for v in data["results"]["VoIP::delay"] if v is not None]
    owd_mean = res.summary["probes"][0]["owd_ms"]["up"]["mean"]
    assert abs(sum(delay) / len(delay) / owd_mean - 1) < 0.05
    flent_summary(f, tmp_path, "VoIP::delay", "TCP upload")
    flent_plots(f, "totals_loss", tmp_path)


# Flent 2.3's HTTP tests (tests/http.inc, http-1down.conf, http-1up.conf, http-rrul.conf): the
# http-getter series is "HTTP latency" in "ms"; each test's DEFAULTS['PLOT'].
HTTP_DEFAULT_PLOT = {
    "http": "http_delay",
    "http-1down": "totals",
    "http-1up": "totals",
    "http-rrul": "totals_delay",
}
# synthetic page fetches: fetch k starts at k s and takes 100 + 50 k ms; fetch 3 times out
FETCH_MS = [100.0, 150.0, 200.0, None, 300.0, 350.0, 400.0, 450.0]


def mk_http(n_up, n_down, n_probes, workers=3):
    """The synthetic run of ``mk`` plus one webpage flow (last id) with the fetches FETCH_MS."""
    import pyarrow as pa

    t, m = synth.flent_run(n_up, n_down, n_probes, name="httpish")
    rows = t["flows"].to_pylist()
    entries = m["scenario"]["flows"]
    blank = {f.name: (None if pa.types.is_string(f.type) else 0) for f in t["flows"].schema}
    rows.append({**blank, "flow": len(rows), "kind": "webpage", "direction": "down", "group": len(entries),
                 "label": "page", "cc": "cubic", "first_syn_ns": None, "completed_ns": None})  # fmt: skip
    entries.append({"kind": "webpage", "page": "small", "workers": workers})
    t["flows"] = pa.Table.from_pylist(rows, schema=t["flows"].schema)
    ms = 1_000_000
    t["webpage"] = pa.table(
        {
            "flow": pa.array([len(rows) - 1] * len(FETCH_MS), pa.uint32()),
            "fetch": pa.array(range(len(FETCH_MS)), pa.uint32()),
            "t_start_ns": pa.array([k * 1000 * ms for k in range(len(FETCH_MS))], pa.uint64()),
            "fetch_time_ns": pa.array([None if v is None else int(v * ms) for v in FETCH_MS], pa.uint64()),
            "timed_out": pa.array([int(v is None) for v in FETCH_MS], pa.uint32()),
            "objects_done": pa.array([3] * len(FETCH_MS), pa.uint32()),
        }
    )
    return RunData(
        path=Path("httpish"), meta=m, summary=metrics.summarize(t, m), scenario=m["scenario"], tables=t
    )


def test_http_export_is_http_getters_series(tmp_path):
    """One raw point per completed fetch as HttpGetterRunner parses http-getter's line: t = the
    cycle's end (start + fetch time), val = the fetch time in ms; none for the timed-out fetch;
    the workers as HTTP_GETTER_WORKERS; Flent's HTTP test by the TCP flows beside the page."""
    r = mk_http(0, 0, 0)
    assert flent.guess_test(r) == "http"
    assert flent.guess_test(mk_http(0, 1, 1)) == "http-1down"
    assert flent.guess_test(mk_http(1, 0, 1)) == "http-1up"
    assert flent.guess_test(mk_http(4, 4, 4)) == "http-rrul"
    data = flent.build(r)
    raw = data["raw_values"]["HTTP latency"]
    want = [(k + v / 1e3, v) for k, v in enumerate(FETCH_MS) if v is not None]
    assert [(p["t"] - flent.T0, p["val"]) for p in raw] == [pytest.approx(w) for w in want]
    sm = data["metadata"]["SERIES_META"]["HTTP latency"]
    assert sm["UNITS"] == "ms" and sm["RUNNER"] == "HttpGetterRunner" and sm["AQMLAB_NOT_COMPLETED"] == 1
    assert sm["MIN_VALUE"] == 100.0 and sm["MAX_VALUE"] == 450.0
    assert data["metadata"]["HTTP_GETTER_WORKERS"] == 3
    # the grid as Flent's TimeseriesAggregator fills it: a step takes the line to the first fetch
    # end after it, if that is at most 1 s away (2.2 and 2.4 s: the next end, 4.3 s, is not;
    # 3.6 s: 2/3 of the way from 200 to 300 ms; 2.0 s: a third of the way from 150 to 200 ms)
    res = data["results"]["HTTP latency"]
    assert res[11] is None and res[12] is None
    assert res[18] == pytest.approx(200 + 100 * (3.6 - 2.2) / (4.3 - 2.2))
    assert res[10] == pytest.approx(150 + 50 * (2.0 - 1.15) / (2.2 - 1.15))
    assert res[49] is None  # more than 1 s after the last fetch's end (7.45 s)
    with pytest.raises(ValueError, match="'http-1up' needs 1 upload TCP flows, the run has 0"):
        flent.build(r, "http-1up")
    with pytest.raises(ValueError, match="'http' needs a webpage flow; run '.*' has none"):
        flent.build(mk(0, 0, 1), "http")


@pytest.mark.parametrize(
    ("shape", "test", "expect"),
    [
        ((0, 0, 0), "http", {}),
        ((0, 1, 1), "http-1down", {"TCP download": 1.0}),
        ((1, 0, 1), "http-1up", {"TCP upload": 1.0}),
        ((4, 4, 4), "http-rrul", {"TCP upload BE4": 4.0, "Ping (ms) UDP BE3": 50.0}),
    ],
)
def test_flent_loads_and_plots_http_tests(tmp_path, shape, test, expect):
    """Flent 2.3 summarises the HTTP series from the raw points (mean of the completed fetch
    times) and draws each HTTP test's default plot."""
    f = flent.export_flent(mk_http(*shape), test, tmp_path / f"{test}.flent.gz")
    res = run_flent("-i", str(f), "-f", "summary", cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    means = _summary_means(res.stdout)
    done = [v for v in FETCH_MS if v is not None]
    for series, mean in {"HTTP latency": sum(done) / len(done), **expect}.items():
        assert series in means, f"{series} missing from flent summary:\n{res.stdout}"
        assert means[series] == pytest.approx(mean, rel=1e-3), series
    for plot in (HTTP_DEFAULT_PLOT[test], "http_delay_cdf"):
        flent_plots(f, plot, tmp_path)


def rrul_with(tmp_path: Path, flows: list[dict], run_id: str):
    """The built-in rrul scenario for 12 s with ``flows`` in front of its own: the run's result and
    its stored copy."""
    import tomllib

    import aqmlab
    from aqmlab import store

    sc = tomllib.loads((Path(aqmlab.__file__).parent / "scenarios" / "rrul.toml").read_text())
    sc["flows"] = [*flows, *sc["flows"]]
    sc["duration"] = "12s"
    res = aqmlab.run(sc)
    return res, store.load_run(store.write_run(tmp_path, run_id, res.tables, res.meta, res.summary))


def test_webpage_beside_rrul_exports_flents_http_rrul(tmp_path):
    """The built-in rrul scenario with a small-page fetcher in front exports as Flent's
    http-rrul: one "HTTP latency" point per completed fetch, at its end, and Flent draws the
    test's default plot (total bandwidth, average ping and HTTP delay)."""
    res, r = rrul_with(tmp_path, [{"kind": "webpage", "page": "small", "interval": "1s"}], "http-rrul-1")
    assert flent.guess_test(r) == "http-rrul"
    f = flent.export_flent(r, None, tmp_path / "h.flent.gz")
    data = json.loads(gzip.decompress(f.read_bytes()))
    w = res.tables["webpage"].to_pylist()
    done = sorted(
        (x for x in w if x["fetch_time_ns"] is not None), key=lambda x: x["t_start_ns"] + x["fetch_time_ns"]
    )
    assert len(done) == res.summary["webpage"]["completed"] >= 5
    raw = data["raw_values"]["HTTP latency"]
    assert [(p["t"] - flent.T0, p["val"]) for p in raw] == [
        pytest.approx(((x["t_start_ns"] + x["fetch_time_ns"]) / 1e9, x["fetch_time_ns"] / 1e6)) for x in done
    ]
    assert "TCP download BE4" in data["results"] and "Ping (ms) UDP BE3" in data["results"]
    flent_plots(f, "totals_delay", tmp_path)


def test_voip_beside_rrul_exports_flents_voip_rrul_and_a_chosen_page_flow(tmp_path):
    """The built-in rrul scenario with a VoIP stream (goodbadwifi2015's VoIP-with-RRUL case)
    exports as Flent's voip-rrul (voip-rrul.conf: rrul_be's flows and pings plus irtt's VoIP
    series): the VoIP stream is not taken for one of the four pings, and Flent summarises it and
    draws the test's default plot. With two page fetchers as well, an HTTP test needs the flow
    named: each exports its own fetches."""
    res, r = rrul_with(tmp_path, [{"kind": "voip"}], "voip-rrul-1")
    assert flent.guess_test(r) == "voip-rrul"
    f = flent.export_flent(r, None, tmp_path / "vr.flent.gz")
    data = json.loads(gzip.decompress(f.read_bytes()))
    voip = data["metadata"]["SERIES_META"]["VoIP"]["AQMLAB_FLOW"]
    pings = [
        m["AQMLAB_FLOW"] for k, m in data["metadata"]["SERIES_META"].items() if k.startswith("Ping (ms)")
    ]
    assert len(pings) == 4 and voip not in pings
    assert "TCP download BE4" in data["results"] and "TCP upload BE" in data["results"]
    flent_summary(f, tmp_path, "VoIP::delay", "Ping (ms) UDP BE3")
    flent_plots(f, "totals_loss", tmp_path)

    pages = [{"kind": "webpage", "page": p, "interval": "1s"} for p in ("small", "large")]
    res, r = rrul_with(tmp_path, pages, "http-rrul-2")
    with pytest.raises(ValueError, match=r"has one webpage flow; the run has 2 \(\[0, 1\]\): choose one"):
        flent.build(r, "http-rrul")
    with pytest.raises(ValueError, match="flow=5: not a webpage flow"):
        flent.build(r, "http-rrul", flow=5)
    w = res.tables["webpage"].to_pylist()
    for page in (0, 1):
        data = flent.build(r, "http-rrul", flow=page)
        done = [x for x in w if x["flow"] == page and x["fetch_time_ns"] is not None]
        assert len(data["raw_values"]["HTTP latency"]) == len(done) > 0
        assert data["metadata"]["SERIES_META"]["HTTP latency"]["AQMLAB_FLOW"] == page


def test_the_builtin_rrul_be_is_flents_rrul_be(tmp_path):
    """rrul_be.conf runs rrul's eight streams unmarked: a run whose flows carry no DSCP is that
    test (it was exported as rrul, its streams labelled BE, BK, CS5 and EF)."""
    import aqmlab
    from aqmlab import store

    res = aqmlab.run("rrul_be", duration="2s")
    r = store.load_run(store.write_run(tmp_path, "rrul_be-1", res.tables, res.meta, res.summary))
    assert flent.guess_test(r) == "rrul_be"
    data = json.loads(gzip.decompress(flent.export_flent(r, None, tmp_path / "r.flent.gz").read_bytes()))
    assert data["metadata"]["NAME"] == "rrul_be"
    assert not [k for k in data["results"] if k.endswith((" BK", " CS5", " EF"))], list(data["results"])


@pytest.mark.parametrize("plot", ["tcp_cwnd", "tcp_rtt"])
def test_flent_draws_the_tcp_window_and_rtt(tmp_path, monkeypatch, plot):
    """Flent's tcp_cwnd and tcp_rtt plots read its ss poller's points (``tcp_cwnd``,
    ``tcp_rtt``) among a TCP series' raw values: drawn from ``flow_series``, the figure holds
    the lines that an export without them lacks (it was empty)."""
    import aqmlab
    from aqmlab import store

    res = aqmlab.run("rrul_be", duration="6s")
    r = store.load_run(store.write_run(tmp_path, "r", res.tables, res.meta, res.summary))
    data = json.loads(gzip.decompress(flent.export_flent(r, None, tmp_path / "r.flent.gz").read_bytes()))
    ss = [p for p in data["raw_values"]["TCP upload BE"] if "tcp_cwnd" in p]
    assert ss and all(p["tcp_rtt"] >= 50 for p in ss)  # the path's base RTT is 50 ms
    assert max(p["tcp_cwnd"] for p in ss) > 10  # segments: it grew from the initial window of 10
    flent_plots(tmp_path / "r.flent.gz", plot, tmp_path)
    drawn = (tmp_path / f"{plot}.png").stat().st_size
    monkeypatch.setattr(flent.series, "_socket_stats", lambda *a: [])
    bare = tmp_path / "bare"
    bare.mkdir()
    flent_plots(flent.export_flent(r, None, bare / "r.flent.gz"), plot, bare)
    assert drawn > 1.5 * (bare / f"{plot}.png").stat().st_size


def test_a_long_title_fits_flents_plot_title():
    """Flent puts the file's TITLE under the plot's name in the figure's title (plotters.py,
    _annotate_plot: suptitle at 14 points; FIG_WIDTH 6.4 and FIG_HEIGHT 4.8 inches by default):
    every line of an exported title fits that width, where the title on one line did not."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = flent.build(mk(4, 4, 4, name="goodbadwifi2015_rrul_be_station_far"), "rrul")
    title = data["metadata"]["TITLE"]
    assert "goodbadwifi2015_rrul_be_station_far" in title and "seed" in title

    def right_edge(text: str) -> tuple[float, float]:
        fig = plt.figure(figsize=(6.4, 4.8))
        art = fig.suptitle("Realtime Response Under Load - Best Effort\n" + text, fontsize=14)
        fig.canvas.draw()
        box = art.get_window_extent(fig.canvas.get_renderer())
        return box.x0, box.x1 - fig.bbox.width

    left, over = right_edge(title)
    assert left >= 0 and over <= 0
    assert right_edge(title.replace("\n", " "))[1] > 0
