"""l4s2020 (aqmlab.reproduce.l4s2020), scenario 1: the cases against the testbed as the study's
scripts set it up (docs/study-setups.md 5, the facts written out here), D_SS on samples whose answer
is known, the pairing of the published rows, and a --quick run at 10 Mbit/s through the CLI that
prints the published values and the verdicts (the 50 Mbit/s half of --quick adds runtime, not
coverage), whose verdicts are the recorded full run's (FULL_RUN: the `study`, `series`, `quick`,
`run_counts` and `verdicts` keys of `aqmlab reproduce l4s2020 --json`, numbers to 3 decimals)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from aqmlab.reproduce import l4s2020 as L
from aqmlab.scenario import resolve

AQMLAB = str(Path(sys.executable).parent / "aqmlab")
FULL_RUN = Path(__file__).parent / "data" / "l4s2020_full_verdicts.json"

# docs/study-setups.md 5, scenario 1: tcp_2up (two uploads) for 180 s; 50 and 10 Mbit/s; pfifo's
# limit 1000 packets at 50 Mbit/s, 200 at 10; the RTT pairs; cubic and prague in both orders.
RATES = {"50": "50Mbps", "10": "10Mbps"}
PFIFO = {"50": "1000p", "10": "200p"}
RTTS = {(10, 10), (20, 10), (20, 20), (80, 80), (80, 20), (160, 10)}
CCS = {("cubic", "cubic"), ("cubic", "prague"), ("prague", "cubic"), ("prague", "prague")}
# The 2020 variants' keys (the table of 2020 behaviours): Prague's, dualpi2's.
PRAGUE = {
    "alpha_mode": 1,
    "rtt_target": "0s",
    "integer_cwnd": "carry",
    "loss_response": "per_ack",
    "pacing_unit": "mtu",
}
DUALPI2_DIVISORS = {127, 64}


def test_cases_are_the_testbeds():
    cs = L.cases(127)
    assert len(cs) == 2 * 3 * 6 * 4  # rates x qdiscs (no cnq_codel_af) x RTT pairs x cc pairs
    seen = set()
    for c in cs:
        p, sc = c["params"], c["scenario"]
        assert sc["duration"] == "180s"
        for d in ("up", "down"):  # HTB over the tested qdisc in both directions
            hop = sc["topology"][d]
            assert hop["rate"] == RATES[p["rate"]] and hop["shaper"] == "htb"
            q = hop["qdisc"]
            if p["qdisc"] == "pfifo":
                assert q == {"kind": "pfifo", "limit": PFIFO[p["rate"]]}
            elif p["qdisc"] == "dualpi2":
                assert q == {"kind": "dualpi2", "min_qlen_step": 2, "pi_divisor": 127}
            else:
                assert q == "fq_codel"  # no arguments: the kernel's defaults
        f1, f2 = sc["flows"]
        assert f1["direction"] == f2["direction"] == "up" and sc["topology"]["rtt"] == "0ms"
        for f in (f1, f2):
            if f["cc"] == "prague":  # AccECN and ECT(1) by default, the 2020 file's parameters
                assert f["cc_params"] == PRAGUE and "ecn" not in f
            else:  # tcp_ecn = 3: ECT(0) with RFC 3168's response
                assert f["ecn"] == "classic" and "cc_params" not in f
        rtts = (int(f1["rtt"][:-2]), int(f2["rtt"][:-2]))
        seen.add((p["rate"], p["qdisc"], rtts, (f1["cc"], f2["cc"])))
    assert seen == {
        (r, q, t, c) for r in RATES for q in ("dualpi2", "pfifo", "fq_codel") for t in RTTS for c in CCS
    }
    r = resolve(next(c for c in cs if c["params"]["cc2"] == "prague")["scenario"])
    assert r["flows"][1]["ecn"] == "accecn" and r["record"]["interval"] == "50ms"  # Flent's 0.05 s step
    assert {v for v in L.SERIES.values()} == DUALPI2_DIVISORS
    assert L.cases(64)[0]["scenario"]["topology"]["up"]["qdisc"]["pi_divisor"] == 64


def test_steady_state_rate_on_known_samples():
    # samples every 50 ms to 180 s: 5 Mbit/s in intervals ending up to 119 s, 100 Mbit/s from 179 s,
    # between them 30 Mbit/s and 0 in turn. The window is (180 - 61, 180 - 1) s, open at both ends,
    # and zero samples are left out: D_SS = 30 (the goodput over the window is 15).
    t = np.arange(0, 3601) * 50_000_000
    end = t[1:] / 1e9
    rate = np.where(
        end <= 119, 5.0, np.where(end >= 179, 100.0, np.where(np.arange(end.size) % 2 == 0, 30.0, 0.0))
    )
    d = np.r_[0.0, np.cumsum(rate * 1e6 / 8 * 0.05)]
    assert L.steady_state_mbit(t, d) == pytest.approx(30.0)
    # the same samples through run_metrics, with flow 2 at a flat 10 Mbit/s and the rows shuffled
    d2 = t / 1e9 * 10e6 / 8
    order = np.random.default_rng(1).permutation(2 * t.size)
    fs = pa.table({"t_ns": np.r_[t, t][order].astype(np.uint64), "flow": np.r_[np.zeros(t.size), np.ones(t.size)][order]
                   .astype(np.uint32), "delivered_bytes": np.r_[d, d2][order].astype(np.uint64)})  # fmt: skip
    flows = pa.table({"flow": pa.array([0, 1], pa.uint32()), "label": ["flow1", "flow2"]})
    out, _ = L.run_metrics({"flows": flows, "flow_series": fs}, {})
    assert out["dss1_mbit"] == pytest.approx(30.0, rel=1e-6) and out["dss2_mbit"] == pytest.approx(
        10.0, rel=1e-6
    )
    assert out["jain"] == pytest.approx(40**2 / (2 * (30**2 + 10**2)), rel=1e-6)


def test_pairs_average_both_orders():
    pf = L.PUBLISHED_PAIRS["S1 pfifo 50 Mbit/s"]
    # the README's table: cubic 20 / prague 20 gave 35.44 / 12.24, prague 20 / cubic 20 5.88 / 41.63
    assert pf["A cubic 20 ms, B prague 20 ms"] == pytest.approx({"D_SS A": (35.44 + 41.63) / 2,
                                                                 "D_SS B": (12.24 + 5.88) / 2})  # fmt: skip
    # unequal RTTs: one run, flow 1 the longer; identical flows: both the mean of the run's two
    assert pf["A cubic 20 ms, B prague 10 ms"] == {"D_SS A": 39.98, "D_SS B": 7.55}
    assert pf["A cubic 10 ms, B cubic 10 ms"] == pytest.approx({"D_SS A": 23.74, "D_SS B": 23.74})
    assert all(len(rows) == 21 for rows in L.PUBLISHED_PAIRS.values()) and len(L.PUBLISHED_PAIRS) == 6
    assert L.winner({"D_SS A": 23.5, "D_SS B": 24.0}, L.WINNER_MARGIN) is None
    assert L.winner({"D_SS A": 23.5, "D_SS B": 24.0}) == "B"


def test_quick_prints_published_values_and_verdicts(tmp_path):
    r = subprocess.run([AQMLAB, "reproduce", "l4s2020", "--quick", "--rate", "10", "--scenario", "1", "--out",
                        str(tmp_path)],
                       check=False, capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert "claims: " in out and "S1 dualpi2 10 Mbit/s" in out and "cnq_codel_af" in out
    res = json.loads((tmp_path / "reproduce" / "l4s2020-quick" / "results.json").read_text())
    assert res["quick"] is True and res["run_counts"] == {**res["run_counts"], "total": 24, "failed": 0}
    # the quick RTT pairs' published rows, each with its measured D_SS
    assert len(res["runs"]) == 24 and all(x["measured"]["dss1_mbit"] > 0 for x in res["runs"])
    assert {(x["rtt1_ms"], x["rtt2_ms"]) for x in res["runs"]} == {(20, 20), (80, 20)}
    t = res["verdicts"]["tables"]["S1 pfifo 10 Mbit/s"]
    assert t["total"] == 42 and t["measured"] == 2 * 7  # 3 pairs at 20/20, 4 at 80/20
    assert [c["holds"] in (True, False) for c in res["verdicts"]["claims"]] == [
        True,
        True,
        False,
    ]  # s2 not run
    assert (tmp_path / "reproduce" / "l4s2020-quick" / "dss_pairs.png").stat().st_size > 1000
    # --quick's cases are the full run's with the same seeds: every cell it measures has the full
    # run's verdict
    full = json.loads(FULL_RUN.read_text())
    assert full["quick"] is False and full["run_counts"] == {**full["run_counts"], "total": 144, "failed": 0}
    for tid, t in res["verdicts"]["tables"].items():
        if tid not in full["verdicts"]["tables"]:  # scenario 2's (test_study_l4s2020_s23.py), not run here
            assert t["measured"] == 0
            continue
        verdict = {(c["row"], c["col"]): c["within_30"] for c in full["verdicts"]["tables"][tid]["cells"]}
        assert all(
            c["within_30"] == verdict[c["row"], c["col"]] for c in t["cells"] if c["measured"] is not None
        )
