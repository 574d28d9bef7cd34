"""l4s2020 (aqmlab.reproduce.l4s2020), scenarios 2 and 3: the cases against the study's batch file
(l4s.batch, Batch::l4s-s2-codel-rate-step and Batch::l4s-s3-codel-variable-rate, the facts written
out here), the spike and utilisation numbers on samples whose answer is known, the built-in files
as cases of the study, and a --quick run of scenario 2 through the CLI whose verdicts are the
recorded full run's (FULL_RUN: `aqmlab reproduce l4s2020 --scenario 2 --scenario 3`, its `study`,
`series`, `quick`, `run_counts`, the scenario-2 verdicts and each run's numbers, to 3 decimals)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_study_l4s2020 import PRAGUE  # the table of 2020 behaviours, one declaration

from aqmlab.reproduce.l4s2020 import metrics_s23 as MS
from aqmlab.reproduce.l4s2020 import published_s23 as P
from aqmlab.reproduce.l4s2020 import setup_s23 as S
from aqmlab.scenario import load

AQMLAB = str(Path(sys.executable).parent / "aqmlab")
FULL_RUN = Path(__file__).parent / "data" / "l4s2020_s23_full_verdicts.json"

# l4s.batch: scenario 2 at 50Mbit, `after 30` to 25mbit, 10mbit, 5mbit, 1mbit; scenario 3 at 100Mbit,
# then 50Mbit at 25, 10Mbit at 30, 90Mbit at 35, 5Mbit at 50; rtt 20ms / 80ms (netem delay 10ms /
# 40ms each way); prague, cubic; fq_codel, dualpi2; bursty runs add `netem delay 200us slot 800us
# 5ms packets 16 limit 10000` (scenario 3: packets 32); length 60, Flent's DELAY 5 s before it.
S2_STEPS = {r: [["0s", "50Mbps"], ["30s", f"{r}Mbps"]] for r in ("25", "10", "5", "1")}
S3_STEPS = [["0s", "100Mbps"], ["25s", "50Mbps"], ["30s", "10Mbps"], ["35s", "90Mbps"], ["50s", "5Mbps"]]
SLOT_PACKETS = {"2": 16, "3": 32}


def test_cases_cover_the_batch_matrix_once():
    cs = S.cases(127)
    seen = set()
    for c in cs:
        p, sc = c["params"], c["scenario"]
        assert sc["duration"] == "65s"
        (f,) = sc["flows"]
        assert (f["start"], f["stop"], f["direction"], f["rtt"]) == ("5s", "65s", "up", f"{p['rtt']}ms")
        assert (f.get("cc_params"), f.get("ecn")) == (
            (PRAGUE, None) if p["cc"] == "prague" else (None, "classic")
        )
        hops = sc["topology"]["hops"]
        bursty = p["burst"] == "bursty"
        assert [h["name"] for h in hops] == (
            ["burst_up", "up", "burst_down", "down"] if bursty else ["up", "down"]
        )
        for h in hops:
            if h["name"].startswith("burst_"):  # the netem stage in front of the bottleneck
                assert h["slot"] == {"min": "800us", "max": "5ms", "packets": SLOT_PACKETS[p["scenario"]]}
                assert (h["delay"], h["qdisc"]) == ("200us", {"kind": "pfifo", "limit": "10000p"})
                continue
            assert h["rate"] == (S2_STEPS[p["rate1"]] if p["scenario"] == "2" else S3_STEPS)
            assert h["shaper"] == "htb"  # `qdisc bidir htb RATE`, changed by `tc class change`
            q = h["qdisc"]
            if p["qdisc"] == "dualpi2":
                assert q == {"kind": "dualpi2", "min_qlen_step": 2, "pi_divisor": 127}
            elif p["scenario"] == "3":  # fq_codel ecn for prague, noecn for cubic
                assert q == {"kind": "fq_codel", "ecn": p["cc"] == "prague"}
            else:
                assert q == "fq_codel"
        seen.add((p["scenario"], p["burst"], p["rate1"], p["rtt"], p["qdisc"], p["cc"]))
    s2 = {("2", b, r, t, q, c) for b in ("clean", "bursty") for r in S2_STEPS for t in ("20", "80")
          for q in ("fq_codel", "dualpi2") for c in ("prague", "cubic")}  # fmt: skip
    s3 = {("3", b, "-", t, q, c) for b in ("not_bursty", "bursty") for t in ("20", "80")
          for q in ("fq_codel", "dualpi2") for c in ("prague", "cubic")}  # fmt: skip
    assert len(cs) == len(seen) == 64 + 16 and seen == s2 | s3
    assert set(P.JUDGED) <= {c["params"]["case"] for c in cs}


def test_built_in_files_are_cases_of_the_study():
    for sc, case in (("2", "s2/clean/1/80/fq_codel/prague"), ("3", "s3/not_bursty/80/fq_codel/prague")):
        (c,) = S.cases(127, (sc,), [case])
        base = load(str(S.base_file(sc)))
        assert {k: base[k] for k in ("duration", "topology", "flows")} == {
            k: c["scenario"][k] for k in ("duration", "topology", "flows")
        }


def test_spike_numbers_on_known_samples():
    # srtt every 50 ms: 0.1 s before a step at 30 s, then a triangle up to 2.1 s at 40 s and back
    # to 0.1 s at 50 s (0.2 s per s). Peak 2.1 s; above 1 s while 34.5 < t < 45.5, so the last such
    # sample (45.45 s) is 15.45 s after the step; the induced peak (base 0.1 s) 2 s, above its half
    # (srtt above 1.1 s) while t < 45, last at 44.95 s
    t = np.round(np.arange(0, 65.001, 0.05), 6)
    r = np.where(t < 30, 0.1, np.where(t <= 40, 0.1 + 0.2 * (t - 30), np.maximum(0.1, 2.1 - 0.2 * (t - 40))))
    out = MS.after_step(t, r, 30.0, 0.1)
    assert out["peak_rtt_ms"] == pytest.approx(2100) and out["induced_peak_ms"] == pytest.approx(2000)
    assert out["above_1s_s"] == pytest.approx(15.45) and out["spike_s"] == pytest.approx(14.95)
    assert MS.after_step(t, np.full(t.size, 0.05), 30.0, 0.02)["above_1s_s"] == 0.0
    # a schedule's capacity: 25 s at 50 Mbit/s and 35 s at 1 Mbit/s over [5, 65)
    assert MS.capacity_bits([(0, 50), (30, 1)], 5, 65) == pytest.approx((25 * 50 + 35 * 1) * 1e6)


def test_quick_scenario_2_prints_published_values_and_the_full_runs_verdicts(tmp_path):
    r = subprocess.run([AQMLAB, "reproduce", "l4s2020", "--quick", "--scenario", "2", "--out", str(tmp_path)],
                       check=False, capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert "S2 RTT spike" in out and "4346" in out and "S2 bursty link" in out and "claims: " in out
    res = json.loads((tmp_path / "reproduce" / "l4s2020-quick" / "results.json").read_text())
    assert res["run_counts"] == {**res["run_counts"], "total": len(P.JUDGED), "failed": 0}
    assert {x["case"] for x in res["s23"]} == set(P.JUDGED) and res["runs"] == []
    full = json.loads(FULL_RUN.read_text())
    assert full["quick"] is False and full["run_counts"] == {**full["run_counts"], "total": 80, "failed": 0}
    # --quick's cases are the full run's with the same seeds: the same numbers, the same verdicts
    measured = {x["case"]: x["measured"] for x in full["s23"]}
    for x in res["s23"]:
        assert x["measured"] == pytest.approx(measured[x["case"]], abs=1e-3)
    for tid, t in full["verdicts"]["tables"].items():
        assert [c["within_30"] for c in res["verdicts"]["tables"][tid]["cells"]] == [
            c["within_30"] for c in t["cells"]
        ]
    holds = {c["id"]: c["holds"] for c in res["verdicts"]["claims"]}
    assert all(holds[c["id"]] == c["holds"] for c in full["verdicts"]["claims"])
