"""`aqmlab reproduce transients2014` (reduced) and `aqmlab list experiments`."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from aqmlab import metrics as M
from aqmlab.reproduce import Execution
from aqmlab.reproduce import transients2014 as T
from aqmlab.scenario import builtin_path, load, resolve

AQMLAB = str(Path(sys.executable).parent / "aqmlab")
METRICS = ["queue_delay_p95_s", "queue_delay_max_median_s", "queue_delay_max_worst_s", "spike60_median_s",
           "spike100_median_s", "response_g1_median_s", "response_g2_median_s", "jain_response_median",
           "early_drops_total"]  # fmt: skip
QDISCS = ["codel", "pie", "pie_thresh", "pie_update", "hred", "hred_aggressive", "sfq_codel"]
LOADS = ["1+1", "2+2", "4+4", "6+6"]


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([AQMLAB, *args], check=False, capture_output=True, text=True)


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    out = tmp_path_factory.mktemp("t14")
    r = cli("reproduce", "transients2014", "--reps", "2", "--load", "4+4", "--json", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out, json.loads(r.stdout)


def test_scenario_follows_the_study():
    sc = resolve(load(builtin_path("transients2014/base")))
    assert sc["topology"]["rtt"] in ("162ms", "162000000ns", "0.162s")
    down = sc["topology"]["down"]
    assert down["rate"] in ("2Mbps", "2000000bps")
    assert down["limit"] == "100p"
    g1, g2 = sc["flows"]
    for g in (g1, g2):
        assert g["sack"] is True and g["iw"] == 3 and g["initial_rto"] in ("3s", "3000ms")
        assert g["delack"] not in (False, None)
    # the study: group 2 starts 0..0.65 s after group 1, all its flows at the same instant
    assert g2["start"] in (
        {"uniform": ["0s", "650ms"], "per": "group"},
        {"uniform": ["0s", "0.65s"], "per": "group"},
    )
    sweep = tomllib.loads(T.sweep_file().read_text())
    zq, zl = sweep["zip"]
    assert zq["params.qdisc"] == QDISCS
    assert zl["params.load"] == LOADS
    # 360 KB per group, split evenly over its N flows
    for n, b in zip(zl["flows.0.count"], zl["flows.0.bytes"], strict=True):
        assert int(b.removesuffix("B")) * n == 360000
    assert zl["flows.0.count"] == zl["flows.1.count"] and zl["flows.0.bytes"] == zl["flows.1.bytes"]
    # the study's CoDel is ns-2's codel.cc (Nichols and Jacobson), not Linux's or RFC 8289's
    codel = zq["topology.down.qdisc"][0]
    assert codel["variant"] == "ns2" and sc["topology"]["down"]["qdisc"]["variant"] == "ns2"
    pie, thresh, update = zq["topology.down.qdisc"][1:4]
    assert (pie["dq_threshold"], pie["t_update"]) == ("10p", "30ms")
    assert (thresh["dq_threshold"], thresh["t_update"]) == ("5p", "30ms")
    assert (update["dq_threshold"], update["t_update"]) == ("10p", "60ms")
    assert all(q["profile"] == "pie2013" for q in (pie, thresh, update))


def test_reduced_json_has_every_key(reduced):
    _, doc = reduced
    for m in METRICS:
        assert set(doc[m]) == set(QDISCS), m
        for q in QDISCS:
            assert set(doc[m][q]) == set(LOADS), (m, q)
    for q in QDISCS:
        assert doc["runs"][q]["4+4"] == 2
        assert doc["runs"][q]["1+1"] == 0 and doc["queue_delay_p95_s"][q]["1+1"] is None
        assert doc["queue_delay_p95_s"][q]["4+4"] > 0
        # the worst case is the max over runs, so at least the median
        assert doc["queue_delay_max_worst_s"][q]["4+4"] >= doc["queue_delay_max_median_s"][q]["4+4"]
        assert 0.5 <= doc["jain_response_median"][q]["4+4"] <= 1.0
    assert doc["spike60_median_s"]["sfq_codel"]["4+4"] is None
    assert doc["spike100_median_s"]["sfq_codel"]["4+4"] is None
    assert doc["spike60_median_s"]["codel"]["4+4"] >= doc["spike100_median_s"]["codel"]["4+4"]


def test_reduced_writes_figures_and_report(reduced):
    out, _ = reduced
    d = out / "reproduce" / "transients2014"
    assert (d / "report.html").stat().st_size > 10_000
    for name in ("delay_cdf_4p4", "queue_delay_max", "spike60", "spike100", "response_g1", "response_g2"):
        assert (d / f"{name}.png").stat().st_size > 1000, name
    html = (d / "report.html").read_text()
    assert "never engaged" in html and "data:image/png;base64," in html
    assert "http://" not in html and "https://" not in html
    # the sweep dataset is queryable like single runs: one catalog row per run
    r = cli("query", "SELECT count(*) AS n FROM runs", "--root", str(out))
    assert r.returncode == 0 and "14" in r.stdout


def test_pie_default_never_engages_and_thresh_does(tmp_path):
    """pie2013 with dq_threshold 10 packets (60 ms of draining at 2 Mb/s) and t_update 30 ms:
    no departure-rate measurement completes, so no early drop; with 5 packets (30 ms) it does."""
    o = T.run(
        reps=3, loads=["1+1", "4+4"], qdiscs=["pie", "pie_thresh"], ex=Execution(out=tmp_path), figures=False
    )
    runs = o.runs[o.runs["status"] == "ok"]
    pie = runs[runs["qdisc"] == "pie"]
    thr = runs[runs["qdisc"] == "pie_thresh"]
    assert len(pie) == len(thr) == 6
    assert (pie["early_drops"] == 0).all()
    assert (pie["pie_rate_cycles_completed"] == 0).all()
    assert (pie["pie_rate_cycles_abandoned"] > 0).all()
    assert (pie["pie_engaged"] == False).all()
    assert (thr["pie_rate_cycles_completed"] > 0).all()
    assert thr["early_drops"].sum() > 0
    assert o.results["early_drops_total"]["pie"]["4+4"] == 0
    assert o.results["early_drops_total"]["pie_thresh"]["4+4"] > 0
    note = next(n for n in o.notes if n.startswith("pie:"))
    assert "never engaged" in note and "0 completed" in note
    assert not any(n.startswith("pie_thresh:") and "never engaged" in n for n in o.notes)


def test_metric_helpers_from_definitions():
    assert M.jain_index([2.0, 2.0]) == 1.0
    assert M.jain_index([1.0, 0.0]) == 0.5
    q = M.quartiles([4.0, 1.0, None, 3.0, 2.0, float("nan")])
    assert (q["q1"], q["median"], q["q3"], q["max"], q["n"]) == (1.75, 2.5, 3.25, 4.0, 4)
    assert M.pooled_percentile([[0.0, 1.0], [2.0, 3.0, 4.0]], 50) == 2.0
    assert not M.spike_duration_defined("sfq_codel") and M.spike_duration_defined("codel")


def test_list_experiments_and_bad_input():
    r = cli("list", "experiments")
    assert r.returncode == 0 and "transients2014" in r.stdout and "Järvinen" in r.stdout
    r = cli("reproduce", "nosuch")
    assert r.returncode == 2 and "nosuch" in r.stderr and "transients2014" in r.stderr
    r = cli("reproduce", "transients2014", "--load", "3+3")
    assert r.returncode == 2 and "3+3" in r.stderr
    r = cli("reproduce", "transients2014", "--series", "50")
    assert r.returncode == 2 and "50" in r.stderr


def test_initial_window_share_at_peak_from_definition():
    import pyarrow as pa

    # iw = 2. Flow 0: three data packets (ranks 0, 1, 2); flow 1: a 60 B handshake packet that
    # never waits, then one data packet (rank 0). At the peak (t = 10) all four data packets are
    # queued; ranks < 2 are initial-window packets: 3 of 4.
    packets = pa.table(
        {
            "dir": ["down"] * 5,
            "flow": pa.array([0, 0, 0, 1, 1], pa.uint32()),
            "size": pa.array([1500, 1500, 1500, 60, 1500], pa.uint32()),
            "t_enqueue_ns": pa.array([0, 0, 10, 0, 5], pa.uint64()),
            "t_out_ns": pa.array([100, 110, 120, 0, 130], pa.uint64()),
            "outcome": ["sent"] * 5,
        }
    )
    flows = pa.table({"flow": pa.array([0, 1], pa.uint32()), "group": pa.array([0, 1], pa.uint32())})
    meta = {"duration_ns": 1000, "scenario": {"flows": [{"iw": 2}, {"iw": 2}]}}
    share = M.initial_window_share_at_peak({"packets": packets, "flows": flows}, meta, "down")
    assert share == 0.75


def test_the_note_counts_the_runs_whose_peak_holds_initial_window_packets():
    import pandas as pd

    runs = pd.DataFrame({"status": ["ok"] * 4, "qdisc": ["codel"] * 4, "early_drops": [3] * 4,
                         "drops_total": [3] * 4, "iw_share_at_peak": [0.0, 0.0, 0.0, 0.5],
                         "response_g1_s": [1.0] * 4, "response_g2_s": [1.0] * 4})  # fmt: skip
    notes = [n for n in T.diagnose(runs, "11") if "initial windows" in n]
    assert notes and notes[0].startswith("share of the peak queue from initial windows: 0 in 3 of 4 runs")
    assert "median 0.50, max 0.50" in notes[0]
    runs["iw_share_at_peak"] = [0.2, 0.3, 0.0, 0.5]  # mostly nonzero: nothing to explain
    assert not [n for n in T.diagnose(runs, "11") if "initial windows" in n]


def test_lpcc2013_shows_aqm_taking_ledbat_out_of_low_priority(tmp_path):
    # The study's headline (Gong et al.): under DropTail LEDBAT yields to TCP, under an AQM that
    # keeps the queue below LEDBAT's 100 ms target it no longer sees its target and takes about
    # a fair share. One replication of two 3c cases, through the CLI.
    r = cli("reproduce", "lpcc2013", "--series", "3c", "--reps", "1", "--qdisc", "droptail", "--qdisc", "codel",
            "--lpcc", "ledbat", "--out", str(tmp_path), "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert set(res) == {"3c"}
    tcp = res["3c"]["tcp_share_pct"]["ledbat"]
    assert tcp["droptail"] > 90 and 40 < tcp["codel"] < 60, tcp
    assert res["3c"]["utilization"]["ledbat"]["codel"] > 0.95
    assert res["3c"]["eq_over_qmax"]["ledbat"]["droptail"] > 10 * res["3c"]["eq_over_qmax"]["ledbat"]["codel"]
    assert tcp["red"] is None  # not run
    assert (tmp_path / "reproduce" / "lpcc2013" / "report.html").exists()
    bad = cli("reproduce", "lpcc2013", "--load", "4+4")
    assert (
        bad.returncode == 2
        and "--load: not an option of lpcc2013; its options: --qdisc, --lpcc" in bad.stderr
    )


def test_lpcc2013_quick_covers_every_part_with_the_studys_orderings(tmp_path):
    """All four parts, one 20 s run per case: the study's orderings hold and every figure exists."""
    t0 = time.monotonic()
    r = cli("reproduce", "lpcc2013", "--quick", "--out", str(tmp_path), "--json")
    wall = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert set(res) == {"3a", "3b", "3c", "3d"}
    # 3c: DropTail lets LEDBAT yield (TCP% high, the buffer full); per-flow schedulers (SFQ,
    # DRR) give it about a fair share (half of the bytes for five flows of each class).
    c = res["3c"]
    for lp in ("ledbat", "nice", "tcp_lp"):
        assert set(c["tcp_share_pct"][lp]) == {"droptail", "red", "choke", "drr", "sfq", "codel"}
    assert c["tcp_share_pct"]["ledbat"]["droptail"] > 80, c["tcp_share_pct"]
    for q in ("sfq", "drr"):
        assert 35 < c["tcp_share_pct"]["ledbat"][q] < 65, c["tcp_share_pct"]
    assert c["eq_over_qmax"]["ledbat"]["droptail"] > c["eq_over_qmax"]["ledbat"]["codel"]
    # 3a: the same contrast at 10 Mb/s with 500 packets: DropTail's TCP% above RED's.
    a = res["3a"]
    assert a["tcp_share_pct"]["droptail"] > a["tcp_share_pct"]["red"], a
    # 3b: the JSON shape the study's table needs, at 500 kb/s; SFQ shares more fairly than FIFO
    # with LEDBAT, and the ping sees less queueing delay under SFQ (its own queue) than FIFO.
    b = res["3b"]
    for k in ("tcp_share_pct", "mean_queue_ms"):
        for lp in ("ledbat", "tcp_lp"):
            for q in ("fifo", "red", "sfq"):
                assert set(b[k][lp][q]) == {"5+5", "1+1"} and all(v is not None for v in b[k][lp][q].values())
    assert b["tcp_share_pct"]["ledbat"]["fifo"]["5+5"] > b["tcp_share_pct"]["ledbat"]["sfq"]["5+5"], b
    assert b["mean_queue_ms"]["ledbat"]["sfq"]["5+5"] < b["mean_queue_ms"]["ledbat"]["fifo"]["5+5"], b
    # 3d: every parameter present; fairness F is in [1/5, 1] (Jain's index over five flows).
    d = res["3d"]
    assert set(d) == {"qmax", "capacity", "rtt", "n", "duty"}
    for per in d.values():
        for v in per["fairness"]["droptail"].values():
            assert v is None or 0.2 <= v <= 1.0
    rep = tmp_path / "reproduce" / "lpcc2013-quick"
    for name in ("report.html", "shares_3a.png", "parallel.png", "sensitivity_duty.png"):
        assert (rep / name).stat().st_size > 1000, name
    assert wall < 120, wall  # the brief: under a minute on an idle machine; 2x for a shared one


def test_codel2012_cases_follow_the_script():
    from aqmlab.reproduce import codel2012 as C

    # codel.tcl: psize 1500 B (500 B below 1 Mb/s), bdp = round(bw * 100 ms / (8 psize)),
    # access links 10 x bw, FTP k's client 1 + k ms further away (RTT + 2 (k + 1) ms).
    assert (C.psize(0.512), C.psize(1.5)) == (500, 1500)
    assert C.bdp_packets(100.0, 1500) == 833 and C.bdp_packets(10.0, 1500) == 83
    assert C.bdp_packets(0.128, 500) == 3
    base = load(str(C.base_file()))
    sc = C.case_scenario(base, bw=10.0, qdisc="codel", ftps=3, web=5, cbrs=2)
    assert sc["topology"]["down"]["limit"] == "83p" and sc["topology"]["nic_rate"] == "100000kbps"
    assert [f["rtt"] for f in sc["flows"][:3]] == ["102ms", "104ms", "106ms"]
    assert sc["flows"][3]["kind"] == "web" and sc["flows"][3]["conn_rate"] == 5
    cbr = sc["flows"][4]
    assert (cbr["rate"], cbr["packet_size"]) == ("64kbps", "100B")
    dyn = C.case_scenario(base, bw=100.0, qdisc="red", ftps=4, web=5, cbrs=0, limit=830, duration=300,
                          schedule=C.DYN_STEPS)  # fmt: skip
    # the script's bw_changes at k * stopTime / 6: 100 -> 10 -> 1 -> 50 -> 1 -> 100 Mb/s
    assert dyn["topology"]["down"]["rate"] == [["0ms", "100000kbps"], ["50000ms", "10000kbps"],
                                              ["100000ms", "1000kbps"], ["150000ms", "50000kbps"],
                                              ["200000ms", "1000kbps"], ["250000ms", "100000kbps"]]  # fmt: skip
    assert dyn["topology"]["down"]["limit"] == "830p"
    resolve(sc)
    resolve(dyn)
    # RED as ns-2.35 sets itself up (ns-default.tcl, red.cc initialize_params) in byte mode with
    # mean_pktsize_ 500: C = bw / (8 x 500); min_th = max(5, 5 ms x C / 2), max_th = 3 min_th
    # (in 500-byte units); q_weight_ -1: w_q = 1 - exp(-1 / (10 RTT C)), RTT = max(0.1 s,
    # 3 (10 ms + 1 / C)); the buffer is queue-limit x mean_pktsize bytes (red.cc enque qlim).
    for bw, size in ((100.0, 1500), (0.128, 500)):
        red_case = C.case_scenario(base, bw=bw, qdisc="red", ftps=1, web=0, cbrs=0)
        red = resolve(red_case)["topology"]["down"]["qdisc"]
        c = bw * 1e6 / (8 * 500)
        rtt = max(0.1, 3 * (0.010 + 1 / c))
        assert red["min_th"] == pytest.approx(max(5.0, 0.005 * c / 2))
        assert red["max_th"] == pytest.approx(3 * red["min_th"])
        assert red["w_q"] == pytest.approx(1 - math.exp(-1 / (10 * rtt * c)))
        assert all(red[k] for k in ("bytes", "count_bytes", "ns2_quirks", "gentle", "wait"))
        assert red["limit"] == f"{C.bdp_packets(bw, size) * 500}B"
    edge = C.edge_scenario(base, bw=0.512, qdisc="codel", duration=60)
    up = [f for f in edge["flows"] if f.get("direction") == "up"]
    assert {f["label"] for f in up} == {"cbr_up", "upload"}
    assert next(f for f in up if f["label"] == "upload")["repeat"] == {"idle": ["5s", "15s"]}
    resolve(edge)


def test_metric_drop_share_jain_from_definition():
    import pyarrow as pa

    # x = drops / sent: 10/100 and 10/100 -> equal shares, index 1; 0/100 and 20/100 -> 1/2.
    f = pa.table({"label": ["ftp", "ftp", "web"], "packets_sent": pa.array([100, 100, 50], pa.uint64()),
                  "drops": pa.array([10, 10, 40], pa.uint64())})  # fmt: skip
    assert M.drop_share_jain({"flows": f}, "label", "ftp") == 1.0
    f2 = f.set_column(2, "drops", pa.array([0, 20, 0], pa.uint64()))
    assert M.drop_share_jain({"flows": f2}, "label", "ftp") == 0.5


def test_web_summary_from_definition():
    import pyarrow as pa

    # three exchanges: one before the warm-up, one completed in 250 ms, one never completed.
    w = pa.table({"t_request_ns": pa.array([0, 2 * 10**9, 3 * 10**9], pa.uint64()),
                  "response_time_ns": pa.array([10**8, 25 * 10**7, None], pa.uint64())})  # fmt: skip
    s = M.web_summary({"web": w}, warmup_s=1.0)
    assert (s["exchanges"], s["completed"], s["response_ms"]["p50"]) == (2, 1, 250.0)


@pytest.fixture(scope="module")
def codel_quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("c12")
    r = cli("reproduce", "codel2012", "--quick", "--json", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out, json.loads(r.stdout)


def test_codel2012_quick_json_and_headline(codel_quick):
    out, doc = codel_quick
    for q in ("taildrop", "red", "codel"):
        for b in ("830", "10"):
            assert set(doc["dynamic"][q][b]) == {"median_ms", "p75_ms", "p95_ms", "max_ms", "kbytes"}
            assert doc["dynamic"][q][b]["median_ms"] is not None
        for bw in ("3", "10", "45", "100"):
            assert set(doc["static"][q][bw]) >= {"median_delay_ms", "utilization"}
            assert 0 < doc["static"][q][bw]["utilization"] <= 1.0
    dyn = doc["dynamic"]
    # The study's point: with a BDP-sized (830-packet) buffer on the degrading link tail drop keeps
    # a standing queue (up to 830 x 1500 B = 10 s at 1 Mb/s); CoDel holds the median sojourn
    # below its 5 ms target and cuts the tail.
    assert dyn["codel"]["830"]["median_ms"] < 5.0, dyn
    assert dyn["taildrop"]["830"]["median_ms"] > 5 * dyn["codel"]["830"]["median_ms"], dyn
    assert dyn["taildrop"]["830"]["p95_ms"] > 2 * dyn["codel"]["830"]["p95_ms"], dyn
    assert dyn["taildrop"]["830"]["max_ms"] <= 830 * 12.0 + 12.0
    # A 10-packet buffer cannot hold much: at most 10 x 1500 B ahead at the lowest rate, 120 ms
    # at 1 Mb/s.
    assert dyn["taildrop"]["10"]["max_ms"] <= 10 * 12.0 + 1.0
    # Manage the right queue: at line rate the router's queue is empty and the modem FIFO holds
    # the queue; shaped below the modem rate, the router's CoDel holds it and the modem's is empty.
    rq = doc["right_queue"]["codel"]
    assert rq["line_rate"]["modem_median_ms"] > 10 * max(rq["line_rate"]["router_median_ms"], 0.1)
    assert rq["shaped"]["modem_median_ms"] < 1.0 and rq["shaped"]["router_p95_ms"] < 100
    d = out / "reproduce" / "codel2012-quick"
    assert (d / "report.html").stat().st_size > 10_000
    for name in ("static_down_median_ms.png", "static_down_utilization.png", "dynamic.png"):
        assert (d / name).stat().st_size > 1000, name


def test_codel2012_bad_input():
    r = cli("reproduce", "codel2012", "--qdisc", "pie")
    assert r.returncode == 2 and "pie" in r.stderr and "codel" in r.stderr
    r = cli("reproduce", "lpcc2013", "--series", "3e")
    assert r.returncode == 2 and "3e" in r.stderr and "3d" in r.stderr
