"""lpcc2013 (aqmlab.reproduce.lpcc2013): the study's headline through the CLI, the quick
reproduction's orderings, its verdicts against the study's Table I and claims, the claim judges
on hand-made outcomes, and --quick's verdicts against a recorded full run's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from aqmlab import store
from aqmlab.reproduce import Execution
from aqmlab.reproduce import lpcc2013 as L
from aqmlab.reproduce import study as S

AQMLAB = str(Path(sys.executable).parent / "aqmlab")
FULL_RUN = Path(__file__).parent / "data" / "lpcc2013_full_verdicts.json"

# The study's Table I (testbed, 500 kb/s, mean of 3 runs), as published:
# row -> (5+5 TCP%, 5+5 E[Q] ms, 1+1 TCP%, 1+1 E[Q] ms).
TABLE_I = {
    "LEDBAT FIFO": (94.9, 6437.3, 99.5, 5304.3),
    "LEDBAT RED": (49.3, 11.3, 1.7, 9.5),
    "LEDBAT SFQ": (76.1, 106.4, 57.7, 15.1),
    "TCP-LP FIFO": (50.8, 7870.6, 65.8, 7471.9),
    "TCP-LP RED": (57.0, 21.0, 97.5, 2.7),
    "TCP-LP SFQ": (49.8, 144.2, 50.0, 25.2),
}


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([AQMLAB, *args], check=False, capture_output=True, text=True)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """--quick with its JSON document (what `--json` prints: Reproduction.to_json as JSON)."""
    out = tmp_path_factory.mktemp("lpcc")
    r = S.reproduce(L.STUDY, ex=Execution(out=out), quick=True)
    return out, json.loads(json.dumps(r.to_json(), default=store._json_default))


def test_lpcc2013_shows_aqm_taking_ledbat_out_of_low_priority(tmp_path):
    # The study's headline (Gong et al.): under DropTail LEDBAT yields to TCP, under an AQM that
    # keeps the queue below LEDBAT's 100 ms target it no longer sees its target and takes about
    # a fair share. One replication of two 3c cases, through the CLI.
    r = cli("reproduce", "lpcc2013", "--series", "3c", "--reps", "1", "--qdisc", "droptail", "--qdisc", "codel",
            "--lpcc", "ledbat", "--out", str(tmp_path), "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert "3c" in res and not {"3a", "3b", "3d"} & set(res)
    tcp = res["3c"]["tcp_share_pct"]["ledbat"]
    assert tcp["droptail"] > 90 and 40 < tcp["codel"] < 60, tcp
    assert res["3c"]["utilization"]["ledbat"]["codel"] > 0.95
    assert res["3c"]["eq_over_qmax"]["ledbat"]["droptail"] > 10 * res["3c"]["eq_over_qmax"]["ledbat"]["codel"]
    assert tcp["red"] is None  # not run
    # the claims of 3c need qdiscs and LPCCs this run left out: not measured, never guessed
    assert [(c["id"], c["holds"]) for c in res["verdicts"]["claims"]] == [
        ("2", None),
        ("3", None),
        ("4", None),
    ]
    assert res["run_counts"]["total"] == 2 and not res["verdicts"]["tables"]
    assert (tmp_path / "reproduce" / "lpcc2013-3c" / "report.html").exists()


def test_lpcc2013_bad_input():
    bad = cli("reproduce", "lpcc2013", "--lpcc", "cubic")
    assert bad.returncode == 2 and "--lpcc 'cubic'" in bad.stderr and "ledbat, nice, tcp_lp" in bad.stderr
    # another study's flag (transients2014's --load) is refused with this study's own options
    bad = cli("reproduce", "lpcc2013", "--load", "4+4")
    assert (
        bad.returncode == 2
        and "--load: not an option of lpcc2013; its options: --qdisc, --lpcc" in bad.stderr
    )


def test_lpcc2013_quick_covers_every_part_with_the_studys_orderings(quick):
    """All four parts: the study's orderings hold and every figure exists."""
    out, res = quick
    assert {"3a", "3b", "3c", "3d"} <= set(res) and res["quick"] is True
    # 3c: DropTail lets LEDBAT yield (TCP% high, the buffer full); per-flow schedulers (SFQ,
    # DRR) give it about a fair share (half of the bytes for five flows of each class).
    c = res["3c"]
    for lp in ("ledbat", "nice", "tcp_lp"):
        assert set(c["tcp_share_pct"][lp]) == {"droptail", "red", "choke", "drr", "sfq", "codel"}
        assert all(v is not None for v in c["tcp_share_pct"][lp].values())
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
    rep = out / "reproduce" / "lpcc2013-quick"
    for name in ("report.html", "shares_3a.png", "parallel.png", "sensitivity_duty.png", "results.json"):
        assert (rep / name).stat().st_size > 1000, name


def test_lpcc2013_quick_judges_every_published_cell_and_claim(quick):
    _, res = quick
    tables = res["verdicts"]["tables"]
    assert set(tables) == {"Table I TCP%", "Table I E[Q]"}
    for tid, first in (("Table I TCP%", 0), ("Table I E[Q]", 1)):
        t = tables[tid]
        assert t["total"] == len(t["cells"]) == 12 and t["measured"] == 12
        published = {(cl["row"], cl["col"]): cl["published"] for cl in t["cells"]}
        assert published == {(row, col): v[first + 2 * k] for row, v in TABLE_I.items()
                             for k, col in enumerate(("5+5", "1+1"))}  # fmt: skip
        assert 0 <= t["within_30"] <= 12
    # the floor: delays "within 30 % or both below 30 ms"; TCP% cells have none
    assert tables["Table I E[Q]"]["floor"] == 30.0 and tables["Table I TCP%"]["floor"] is None
    claims = res["verdicts"]["claims"]
    assert [c["id"] for c in claims] == ["1", "2", "3", "4", "5"]
    assert all(c["holds"] in (True, False) for c in claims), claims  # quick measures every claim
    for c in claims:
        assert set(c) == {"id", "text", "holds", "measured"}


def test_lpcc2013_quick_reaches_the_full_runs_verdicts(quick):
    """--quick (3 runs per case instead of 3c's 10, 3b at 500 kb/s, two values per 3d parameter;
    every case as long and set up as in the full run) reaches the verdicts of the full run,
    whose `aqmlab reproduce lpcc2013 --json` output is FULL_RUN."""
    _, res = quick
    full = json.loads(FULL_RUN.read_text())
    assert full["quick"] is False and full["run_counts"]["failed"] == 0
    assert {c["id"]: c["holds"] for c in res["verdicts"]["claims"]} == {
        c["id"]: c["holds"] for c in full["verdicts"]["claims"]
    }
    for tid, t in res["verdicts"]["tables"].items():
        cells = {(c["row"], c["col"]): c["within_30"] for c in t["cells"]}
        assert cells == {
            (c["row"], c["col"]): c["within_30"] for c in full["verdicts"]["tables"][tid]["cells"]
        }


# --------------------------------------------------------------------------- claim judges


def _outcome(**results) -> S.Outcome:
    return S.Outcome(results, pd.DataFrame(), [], "all")


def _per_qdisc(**v) -> dict:
    return {q: v.get(q) for q in L.QDISCS}


def test_claim_1_motivating_example():
    # "DropTail TCP% about 99 % with about 400 packets queued on average; RED: average queue below
    # 4 packets, utilisation about 3 % lower, and the two classes share about equally"
    a = {"tcp_share_pct": {"droptail": 98.0, "red": 51.0}, "mean_queue_pkts": {"droptail": 390.0, "red": 3.0},
         "utilization": {"droptail": 0.99, "red": 0.96}}  # fmt: skip
    holds, m = L.claim_3a(_outcome(**{"3a": a}))
    assert holds is True and m["red_utilization_lower"] == pytest.approx(1 - 0.96 / 0.99)
    a["mean_queue_pkts"]["red"] = 8.0  # RED's queue not below 4 packets
    assert L.claim_3a(_outcome(**{"3a": a}))[0] is False
    a["mean_queue_pkts"]["red"] = 3.0
    a["tcp_share_pct"]["red"] = 70.0  # the classes do not share about equally
    assert L.claim_3a(_outcome(**{"3a": a}))[0] is False


def _c3(tcp: dict, eq: dict, ms: dict) -> dict:
    return {"tcp_share_pct": tcp, "eq_over_qmax": eq, "mean_queue_ms": ms}


def _aqm_campaign(tcp_aqm: float = 45.0) -> dict:
    """Every LPCC: DropTail's buffer full and TCP% by priority; every AQM 14-77x smaller, SFQ
    the worst delay below 85 ms, TCP% ``tcp_aqm``."""
    eq = _per_qdisc(droptail=1.0, red=1 / 77, choke=1 / 40, drr=1 / 30, sfq=1 / 14.5, codel=1 / 50)
    ms = _per_qdisc(droptail=1200.0, red=15.0, choke=30.0, drr=40.0, sfq=80.0, codel=24.0)
    dt = {"ledbat": 99.0, "nice": 90.0, "tcp_lp": 70.0}
    tcp = {
        lp: _per_qdisc(**{q: (dt[lp] if q == "droptail" else tcp_aqm) for q in L.QDISCS}) for lp in L.LPCCS
    }
    return _c3(tcp, {lp: dict(eq) for lp in L.LPCCS}, {lp: dict(ms) for lp in L.LPCCS})


def test_claim_2_queue_shrink_and_delay():
    c = _aqm_campaign()
    assert L.claim_queue_shrink(_outcome(**{"3c": c}))[0] is True
    c["eq_over_qmax"]["nice"]["sfq"] = 0.5  # SFQ's queue only 2x below DropTail's
    assert L.claim_queue_shrink(_outcome(**{"3c": c}))[0] is False
    c = _aqm_campaign()
    c["mean_queue_ms"]["ledbat"]["codel"] = 90.0  # above 85 ms, and worse than SFQ
    assert L.claim_queue_shrink(_outcome(**{"3c": c}))[0] is False


def test_claim_3_ledbat_share_under_aqms():
    # "TCP's share falls to 35 % (CoDel) to 46 % (CHOKe) with LEDBAT"
    assert L.claim_ledbat_share(_outcome(**{"3c": _aqm_campaign(40.0)}))[0] is True
    assert L.claim_ledbat_share(_outcome(**{"3c": _aqm_campaign(65.0)}))[0] is False


def test_claim_4_priority_order_and_pairs_together():
    assert L.claim_priority_order(_outcome(**{"3c": _aqm_campaign(48.0)}))[0] is True
    c = _aqm_campaign(48.0)
    c["tcp_share_pct"]["nice"].update({q: 99.0 for q in L.AQMS})  # Nice keeps yielding under the AQMs
    assert L.claim_priority_order(_outcome(**{"3c": c}))[0] is False
    c = _aqm_campaign(48.0)
    c["tcp_share_pct"]["nice"]["droptail"] = 99.5  # Nice below LEDBAT under DropTail
    assert L.claim_priority_order(_outcome(**{"3c": c}))[0] is False


def test_claim_5_shorter_droptail_buffer():
    def d(queue_ms: dict, tcp: dict) -> dict:
        return {"qmax": {"mean_queue_ms": {"droptail": queue_ms}, "tcp_share_pct": {"droptail": tcp}}}

    o = _outcome(**{"3d": d({"100": 100.0, "400": 480.0}, {"100": 55.0, "400": 95.0})})
    assert L.claim_short_buffer(o)[0] is True
    o = _outcome(**{"3d": d({"100": 100.0, "400": 480.0}, {"100": 87.0, "400": 95.0})})  # priorities kept
    assert L.claim_short_buffer(o)[0] is False


def test_claims_of_parts_not_run_are_not_measured():
    judged = [S.judge_claim(c, _outcome()) for c in L.CLAIMS]
    assert [j["holds"] for j in judged] == [None] * 5 and all("not measured" in j["measured"] for j in judged)
