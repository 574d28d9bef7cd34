"""transients2014 (aqmlab.reproduce.transients2014): the scenario against the study's setup, a
reduced run through the CLI, PIE's default parameters, the metric helpers, the quick
reproduction's verdicts against the published Table II, and the claim judges on hand-made
outcomes whose answers follow from the claims' words."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from aqmlab import metrics as M
from aqmlab.reproduce import Execution
from aqmlab.reproduce import metrics as SM
from aqmlab.reproduce import study as S
from aqmlab.reproduce import transients2014 as T
from aqmlab.scenario import builtin_path, load, resolve

AQMLAB = str(Path(sys.executable).parent / "aqmlab")
METRICS = ["queue_delay_p95_s", "queue_delay_max_median_s", "queue_delay_max_worst_s", "spike60_median_s",
           "spike100_median_s", "response_g1_median_s", "response_g2_median_s", "jain_response_median",
           "early_drops_total"]  # fmt: skip
QDISCS = ["codel", "pie", "pie_thresh", "pie_update", "hred", "hred_aggressive", "sfq_codel"]
LOADS = ["1+1", "2+2", "4+4", "6+6"]
# The study's Table II (95th percentile of queueing delay, s, 11 ms series), as printed; rows
# CoDel, PIEupdate, PIEthresh, HRED, HRED aggressive, SFQ-CoDel.
TABLE_II = {
    "codel": [0.090, 0.126, 0.170, 0.246],
    "pie_update": [0.234, 0.252, 0.294, 0.332],
    "pie_thresh": [0.198, 0.216, 0.246, 0.270],
    "hred": [0.120, 0.126, 0.132, 0.132],
    "hred_aggressive": [0.096, 0.096, 0.108, 0.109],
    "sfq_codel": [0.060, 0.057, 0.054, 0.066],
}
AQMS = list(TABLE_II)
FULL_RUN = Path(__file__).parent / "data" / "transients2014_full_verdicts.json"
"""The verdicts of the full run (100 replications), as `aqmlab reproduce transients2014 --json`
wrote them (its keys study, series, quick, run_counts and verdicts)."""


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
    # the study's 10 and 5 packets as ns-2's PIE counts them: bytes, in packets of its
    # mean_pktsize_ of 1000 B
    assert (pie["dq_threshold"], pie["t_update"]) == (f"{10 * 1000}B", "30ms")
    assert (thresh["dq_threshold"], thresh["t_update"]) == (f"{5 * 1000}B", "30ms")
    assert (update["dq_threshold"], update["t_update"]) == (f"{10 * 1000}B", "60ms")
    assert all(q["profile"] == "pie2013" for q in (pie, thresh, update))
    # the study cites ns-2's 2012 sfqcodel: its dodeque has no empty-bin term, a bin keeps its
    # CoDel state off the schedule, and bins take turns on sfqcodel.cc's circle
    sfq = zq["topology.down.qdisc"][-1]
    assert (sfq["empty_bin"], sfq["off_schedule"], sfq["schedule"]) == ("judged", "keep", "circle")
    # the study ran ns-2 without setting packetSize_: ns-default.tcl's Agent/TCP packetSize_ 1000
    assert g1["mss"] == g2["mss"] == 1000


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
        # the pooled median of the same packets is at most their 95th percentile
        assert 0 <= doc["queue_delay_median_s"][q]["4+4"] <= doc["queue_delay_p95_s"][q]["4+4"]
        # the worst case is the max over runs, so at least the median
        assert doc["queue_delay_max_worst_s"][q]["4+4"] >= doc["queue_delay_max_median_s"][q]["4+4"]
        assert 0.5 <= doc["jain_response_median"][q]["4+4"] <= 1.0
    assert doc["spike60_median_s"]["sfq_codel"]["4+4"] is None
    assert doc["spike100_median_s"]["sfq_codel"]["4+4"] is None
    assert doc["spike60_median_s"]["codel"]["4+4"] >= doc["spike100_median_s"]["codel"]["4+4"]
    # only PIE has rate measurements to count
    assert doc["pie_rate_cycles_completed_total"]["codel"]["4+4"] is None
    assert doc["pie_rate_cycles_completed_total"]["pie_thresh"]["4+4"] > 0
    # one load of four: the 4+4 column of Table II is measured; every claim is about every load
    t = doc["verdicts"]["tables"]["Table II"]
    assert (t["measured"], t["total"]) == (6, 24)
    assert [c["holds"] for c in doc["verdicts"]["claims"]] == [None] * 7
    assert doc["run_counts"]["total"] == 14 and doc["quick"] is False and doc["series"] == "11"


def test_reduced_writes_figures_and_report(reduced):
    out, _ = reduced
    d = out / "reproduce" / "transients2014"
    assert (d / "report.html").stat().st_size > 10_000
    for name in ("delay_cdf_4p4", "queue_delay_max", "spike60", "spike100", "response_g1", "response_g2"):
        assert (d / f"{name}.png").stat().st_size > 1000, name
    html = (d / "report.html").read_text()
    assert "never engaged" in html and "data:image/png;base64," in html
    assert "PIE diagnostics per case" in html
    assert "http://" not in html and "https://" not in html
    # the sweep dataset is queryable like single runs: one catalog row per run
    r = cli("query", "SELECT count(*) AS n FROM runs", "--root", str(out))
    assert r.returncode == 0 and "14" in r.stdout


def test_pie_default_never_engages_and_thresh_does(tmp_path):
    """pie2013 with dq_threshold 10 packets (60 ms of draining at 2 Mb/s) and t_update 30 ms:
    no departure-rate measurement completes, so no early drop; with 5 packets (30 ms) it does."""
    o = T.run(reps=3, loads=["1+1", "4+4"], qdiscs=["pie", "pie_thresh"], ex=Execution(out=tmp_path))
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
    assert o.results["pie_rate_cycles_completed_total"]["pie"]["4+4"] == 0
    note = next(n for n in o.notes if n.startswith("pie:"))
    assert "never engaged" in note and "0 completed" in note
    assert not any(n.startswith("pie_thresh:") and "never engaged" in n for n in o.notes)


def test_metric_helpers_from_definitions():
    assert M.jain_index([2.0, 2.0]) == 1.0
    assert M.jain_index([1.0, 0.0]) == 0.5
    q = SM.quartiles([4.0, 1.0, None, 3.0, 2.0, float("nan")])
    assert (q["q1"], q["median"], q["q3"], q["max"], q["n"]) == (1.75, 2.5, 3.25, 4.0, 4)
    assert SM.pooled_percentile([[0.0, 1.0], [2.0, 3.0, 4.0]], 50) == 2.0
    assert not SM.spike_duration_defined("sfq_codel") and SM.spike_duration_defined("codel")


def test_list_experiments_and_bad_input():
    r = cli("list", "experiments")
    assert r.returncode == 0 and "transients2014" in r.stdout and "Järvinen" in r.stdout
    r = cli("reproduce", "nosuch")
    assert r.returncode == 2 and "nosuch" in r.stderr and "transients2014" in r.stderr
    r = cli("reproduce", "transients2014", "--load", "3+3")
    assert r.returncode == 2 and "3+3" in r.stderr and "4+4" in r.stderr
    r = cli("reproduce", "transients2014", "--series", "50")
    assert r.returncode == 2 and "50" in r.stderr and "101" in r.stderr
    r = cli("reproduce", "transients2014", "--qdisc", "nosuch")
    assert r.returncode == 2 and "nosuch" in r.stderr and "Traceback" not in r.stderr


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
    share = SM.initial_window_share_at_peak({"packets": packets, "flows": flows}, meta, "down")
    assert share == 0.75


def test_the_note_counts_the_runs_whose_peak_holds_initial_window_packets():
    runs = pd.DataFrame({"status": ["ok"] * 4, "qdisc": ["codel"] * 4, "early_drops": [3] * 4,
                         "drops_total": [3] * 4, "iw_share_at_peak": [0.0, 0.0, 0.0, 0.5],
                         "response_g1_s": [1.0] * 4, "response_g2_s": [1.0] * 4})  # fmt: skip
    notes = [n for n in T.diagnose(runs, "11") if "initial windows" in n]
    assert notes and notes[0].startswith("share of the peak queue from initial windows: 0 in 3 of 4 runs")
    assert "median 0.50, max 0.50" in notes[0]
    runs["iw_share_at_peak"] = [0.2, 0.3, 0.0, 0.5]  # mostly nonzero: nothing to explain
    assert not [n for n in T.diagnose(runs, "11") if "initial windows" in n]


# --------------------------------------------------------------------------- --quick and verdicts


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("t14q")
    r = cli("reproduce", "transients2014", "--quick", "--json", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out, json.loads(r.stdout)


def test_quick_runs_every_case_with_fewer_replications(quick):
    out, doc = quick
    assert doc["quick"] is True and doc["study"] == "transients2014" and doc["series"] == "11"
    assert doc["run_counts"]["total"] == len(QDISCS) * len(LOADS) * T.STUDY.quick.reps
    assert doc["run_counts"]["failed"] == 0
    assert all(doc["runs"][q][ld] == T.STUDY.quick.reps for q in QDISCS for ld in LOADS)
    assert (out / "reproduce" / "transients2014-quick" / "report.html").stat().st_size > 10_000


def test_quick_verdicts_cover_every_published_cell_and_claim(quick):
    _, doc = quick
    v = doc["verdicts"]
    assert list(v["tables"]) == ["Table II"]
    t = v["tables"]["Table II"]
    assert t["total"] == t["measured"] == len(t["cells"]) == 24
    assert t["within_30"] == sum(1 for c in t["cells"] if c["within_30"])
    published = {(c["row"], c["col"]): c["published"] for c in t["cells"]}
    assert published == {(q, ld): x for q, row in TABLE_II.items() for ld, x in zip(LOADS, row, strict=True)}
    for c in t["cells"]:
        # measured: the pooled 95th percentile of the results, in seconds as published
        assert c["measured"] == doc["queue_delay_p95_s"][c["row"]][c["col"]]
        assert c["within_30"] == (abs(c["measured"] - c["published"]) <= 0.30 * c["published"])
    claims = v["claims"]
    assert [c["id"] for c in claims] == [str(k) for k in range(1, 8)]
    assert all(c["holds"] in (True, False) for c in claims)  # every claim measured at every load
    # claim 5 is what the study reports and test_pie_default_never_engages checks run by run
    assert claims[4]["holds"] is True


def test_quick_reaches_the_full_runs_verdicts(quick):
    """--quick (20 of the 100 replications of every case) flags the same Table II cells and
    reaches the same claim verdicts as the full run."""
    _, doc = quick
    full = json.loads(FULL_RUN.read_text())
    assert (
        full["quick"] is False and full["run_counts"]["failed"] == 0 and full["run_counts"]["total"] == 2800
    )

    def cells(v):
        return {(c["row"], c["col"]): c["within_30"] for c in v["tables"]["Table II"]["cells"]}

    assert cells(doc["verdicts"]) == cells(full["verdicts"])
    quick_claims = {c["id"]: c["holds"] for c in doc["verdicts"]["claims"]}
    full_claims = {c["id"]: c["holds"] for c in full["verdicts"]["claims"]}
    assert quick_claims == full_claims


def test_the_101_ms_series_judges_no_published_cell_or_claim(tmp_path):
    r = S.reproduce(T.STUDY, ex=Execution(out=tmp_path, jobs=1), series="101", reps=1,
                    filters={"loads": ["1+1"], "qdiscs": ["codel"]}, outputs=False)  # fmt: skip
    assert r.verdicts == {"tables": {}, "claims": []}
    assert r.report_dir.name == "transients2014-101"
    assert r.outcome.results["runs"]["codel"]["1+1"] == 1


# --------------------------------------------------------------------------- claim judges


def _grid(value) -> dict:
    """{qdisc: {load: value}} for every qdisc of the study."""
    return {q: dict.fromkeys(LOADS, value) for q in QDISCS}


def _outcome(**results) -> S.Outcome:
    """An outcome of the 11 ms series with these results ({metric: {qdisc: {load: value}}})."""
    return S.Outcome(results, pd.DataFrame(), [], "11")


def _table_ii() -> dict:
    return {q: dict(zip(LOADS, row, strict=True)) for q, row in TABLE_II.items()}


def _holds(judge, **results):
    return judge(_outcome(**results))[0]


def test_the_published_table_satisfies_the_claims_about_it():
    # Claims 2, 3, 4 and 6 describe Table II: judged on the published values they hold.
    p95 = _table_ii()
    for judge in (T.claim_codel_doubles, T.claim_hred_level, T.claim_pie_highest, T.claim_sfq_codel_lowest):
        assert _holds(judge, queue_delay_p95_s=p95) is True, judge.__name__


def test_claim_judges_on_hand_made_outcomes():
    # claim 1: medians of 20 ms at every load are "at or below about 24 ms"; 40 ms is not
    med = _grid(0.020)
    assert _holds(T.claim_median_bound, queue_delay_median_s=med) is True
    med["hred"]["6+6"] = 0.040
    assert _holds(T.claim_median_bound, queue_delay_median_s=med) is False
    # claim 2: CoDel from 90 to 150 ms is less than double
    p95 = _table_ii()
    p95["codel"]["6+6"] = 0.150
    assert _holds(T.claim_codel_doubles, queue_delay_p95_s=p95) is False
    # claim 3: HRED doubling from 1+1 to 6+6 is not level; aggressive above HRED is not lower
    p95 = _table_ii()
    p95["hred"]["6+6"] = 0.240
    assert _holds(T.claim_hred_level, queue_delay_p95_s=p95) is False
    p95 = _table_ii()
    p95["hred_aggressive"]["2+2"] = 0.130
    assert _holds(T.claim_hred_level, queue_delay_p95_s=p95) is False
    # claim 4: CoDel above PIEthresh at 6+6 breaks "highest at every load"; a flat CoDel breaks
    # "grow less with load than CoDel"
    p95 = _table_ii()
    p95["codel"]["6+6"] = 0.300
    assert _holds(T.claim_pie_highest, queue_delay_p95_s=p95) is False
    p95 = _table_ii()
    p95["codel"] = dict.fromkeys(LOADS, 0.150)
    assert _holds(T.claim_pie_highest, queue_delay_p95_s=p95) is False
    # claim 6: SFQ-CoDel above HRED aggressive at one load is not the lowest
    p95 = _table_ii()
    p95["sfq_codel"]["4+4"] = 0.120
    assert _holds(T.claim_sfq_codel_lowest, queue_delay_p95_s=p95) is False


def test_claim_pie_default_is_a_fifo():
    never = {"pie_rate_cycles_completed_total": _grid(0), "early_drops_total": _grid(0)}
    assert _holds(T.claim_pie_default_fifo, **never) is True
    drops = {**never, "early_drops_total": {**_grid(0), "pie": {**dict.fromkeys(LOADS, 0), "6+6": 3}}}
    assert _holds(T.claim_pie_default_fifo, **drops) is False
    measured = {**never, "pie_rate_cycles_completed_total": {**_grid(0), "pie": dict.fromkeys(LOADS, 5)}}
    assert _holds(T.claim_pie_default_fifo, **measured) is False


def test_claim_response_times():
    def outcome(g1=3.0, g2=3.2, jain=0.99):
        return {"response_g1_median_s": _grid(g1), "response_g2_median_s": _grid(g2),
                "jain_response_median": _grid(jain)}  # fmt: skip

    # equal across AQMs, group 2 slower by 7 %, index 0.99: holds
    assert _holds(T.claim_response_times, **outcome()) is True
    # one AQM's group 1 takes 5 s where the others take 3 s: not nearly equal
    r = outcome()
    r["response_g1_median_s"]["hred"]["2+2"] = 5.0
    assert _holds(T.claim_response_times, **r) is False
    # group 2 faster than group 1
    assert _holds(T.claim_response_times, **outcome(g1=3.2, g2=3.0)) is False
    # an index of 0.8 (one group about twice as slow as the other) is not high
    holds, measured = T.claim_response_times(_outcome(**outcome(jain=0.8)))
    assert holds is False and measured["lowest_jain"] == 0.8


def test_a_claim_about_every_load_is_not_measured_when_a_load_was_not_run():
    p95 = _table_ii()
    p95["codel"]["1+1"] = None
    v = S.judge_claim(next(c for c in T.STUDY.claims if c.id == "2"), _outcome(queue_delay_p95_s=p95))
    assert v["holds"] is None and "not measured" in v["measured"]


def test_a_spread_over_one_replication_prints_a_dash():
    r = {"runs": {"codel": {"1+1": 1, "2+2": 3}},
         "queue_delay_max_median_s": {"codel": {"1+1": 0.2, "2+2": 0.2}},
         "queue_delay_max_q1_s": {"codel": {"1+1": 0.2, "2+2": 0.1}},
         "queue_delay_max_q3_s": {"codel": {"1+1": 0.2, "2+2": 0.3}}}  # fmt: skip
    assert T.cell(r, "queue_delay_max", "codel", "1+1", 1e3) == "200 [-]"
    assert T.cell(r, "queue_delay_max", "codel", "2+2", 1e3) == "200 [100, 300]"
