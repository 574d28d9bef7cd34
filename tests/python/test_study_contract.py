"""The Study contract (aqmlab.reproduce.study): every built-in study declares it completely, and the
shared part judges, counts, prints and reports any study alike (checked on a synthetic study whose
answers are known by construction)."""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass

import pandas as pd
import pytest

from aqmlab import reproduce
from aqmlab.reproduce import Execution
from aqmlab.reproduce import study as S

# What each study published (the papers' tables and the claims of their text): cells, claims.
PUBLISHED_COUNTS = {
    "transients2014": (24, 7),  # Table II: 6 qdiscs x 4 loads; 7 claims
    "lpcc2013": (24, 5),  # Table I: 6 (LPCC, qdisc) rows x 4 columns; 5 simulation claims
    "goodbadwifi2015": (42, 10),  # Table 2: 7 qdiscs x 2 cross traffics x 3 rates; 5 claims, 5 over WiFi
    "codel2012": (0, 10),  # no table; 10 claims (6 dynamic link, 4 static rates)
    "l4s2020": (
        257,
        3,
    ),  # scenario 1: 6 (qdisc, rate) tables x 21 pairs x 2 flows, 2 claims; scenario 2: 5, 1
}


@pytest.mark.parametrize("name", list(reproduce.EXPERIMENTS))
def test_every_study_declares_the_contract(name):
    st = reproduce.get(name)
    assert st.name == name and st.description and st.reps >= 1 and st.series
    flags = [o.flag for o in st.options]
    assert len(flags) == len(set(flags)) and all(f.startswith("--") for f in flags)
    params = inspect.signature(st.run).parameters
    for kw in ["reps", "series", "ex", *(o.keyword for o in st.options), *st.quick.grid]:
        assert kw in params, f"{name}.run does not take {kw!r}"
    assert 1 <= st.quick.reps <= st.reps
    cells = sum(len(cols) for p in st.published for cols in p.values.values())
    assert (cells, len(st.claims)) == PUBLISHED_COUNTS[name]
    assert len({c.id for c in st.claims}) == len(st.claims)
    assert len({p.id for p in st.published}) == len(st.published)


def test_agreement_rule():
    # within 30 % of the published value, either side; a floor where both sit near zero
    assert S.agrees(0.100, 0.130, None) and S.agrees(0.100, 0.070, None)
    assert not S.agrees(0.100, 0.131, None) and not S.agrees(0.100, 0.069, None)
    assert S.agrees(0.04, 0.09, 0.1) and not S.agrees(0.04, 0.11, 0.1)
    assert not S.agrees(0.0, 0.05, None) and S.agrees(0.0, 0.0, None)
    assert S.agrees(1.0, None, None) is None


@dataclass
class FakeSweep:
    total: int
    ran: int
    skipped: int
    failed: list
    wall_s: float


def _synthetic(measured: dict) -> S.Study:
    """A study of two cells and three claims whose verdicts are fixed by ``measured``."""

    def run(reps, series, ex, cases=None):
        runs = pd.DataFrame({"case": ["a", "b"] * reps, "status": "ok"})
        sweeps = [FakeSweep(4, 3, 1, [], 1.0), FakeSweep(6, 6, 0, [{"run_id": "x"}], 2.0)]
        return S.Outcome({"cells": measured, "reps": reps, "cases": cases}, runs, sweeps, series)

    table = S.Published("T1", "a table", {"a": {"x": 10.0}, "b": {"x": 0.05}},
                        lambda o: o.results["cells"], floor=0.1)  # fmt: skip
    claims = (
        S.Claim("1", "a is above 5", lambda o: (o.results["cells"]["a"]["x"] > 5, {"a": o.results["cells"]["a"]["x"]})),
        S.Claim("2", "b is above 5", lambda o: (o.results["cells"]["b"]["x"] > 5, {})),
        S.Claim("3", "needs a part not run", lambda o: o.results["missing"]),
        S.Claim("4", "only in series s2", lambda o: (True, {}), series=("s2",)),
    )  # fmt: skip
    return S.Study("synthetic", "a study made for the test", 5, ("s1", "s2"),
                   (S.Option("--case", "cases", ("a", "b"), "only these cases"),), S.Quick(2, {"cases": ("a",)}),
                   run, lambda o: [S.Table("t", ("c",), [("1",)])], lambda o: {}, (table,), claims)  # fmt: skip


def test_verdicts_counts_and_outputs(tmp_path):
    st = _synthetic({"a": {"x": 12.5}, "b": {"x": 0.02}})
    r = S.reproduce(st, ex=Execution(out=tmp_path), series="s1")
    v = r.to_json()["verdicts"]
    t = v["tables"]["T1"]
    # 12.5 against 10: +25 % agrees; 0.02 against 0.05: both below the 0.1 floor
    assert [c["within_30"] for c in t["cells"]] == [True, True]
    assert (t["within_30"], t["total"]) == (2, 2) and t["cells"][0]["ratio"] == 1.25
    # claim 3 raises KeyError (its part did not run): not measured; claim 4 is not of series s1
    assert [(c["id"], c["holds"]) for c in v["claims"]] == [("1", True), ("2", False), ("3", None)]
    # runs counted over every sub-sweep
    assert r.counts() == {"total": 10, "ran": 9, "skipped": 1, "failed": 1, "wall_s": 3.0}
    assert S.score_lines(v) == ["T1 (a table): 2 of 2 cells within 30 %",
                                "claims: 1 hold, 1 fail, 1 not measured (of 3)"]  # fmt: skip
    d = tmp_path / "reproduce" / "synthetic"
    doc = json.loads((d / "results.json").read_text())
    assert doc["verdicts"] == json.loads(json.dumps(v)) and doc["study"] == "synthetic"
    page = (d / "report.html").read_text()
    assert page.count("class='l yes'") + page.count("class='yes'") >= 3  # two cells and claim 1
    assert "class='no'" in page and "2 of 2 cells within 30 %" in page


def test_quick_cuts_reps_and_grid_only(tmp_path):
    st = _synthetic({"a": {"x": 30.0}, "b": {"x": 0.5}})
    r = S.reproduce(st, ex=Execution(out=tmp_path), quick=True, outputs=False)
    assert r.outcome.results["reps"] == 2 and r.outcome.results["cases"] == ["a"]
    # a user's filter is intersected with the quick grid, a user's --reps capped by quick's
    r = S.reproduce(st, ex=Execution(out=tmp_path), quick=True, reps=1, filters={"cases": ["a", "b"]},
                    outputs=False)  # fmt: skip
    assert r.outcome.results["reps"] == 1 and r.outcome.results["cases"] == ["a"]
    v = r.verdicts["tables"]["T1"]
    assert [c["within_30"] for c in v["cells"]] == [False, False]  # 30 vs 10; 0.5 above the floor
    assert r.report_dir.name == "synthetic-quick"
    full = S.reproduce(st, ex=Execution(out=tmp_path), series="s2", outputs=False)
    assert full.report_dir.name == "synthetic-s2" and [c["id"] for c in full.verdicts["claims"]][-1] == "4"


def test_extra_tables_are_read_across_sweeps_whole(tmp_path):
    """A study's extra table (its pooled per-packet delays, timelines) must hold every row of
    every wanted run: equal values within a run are separate packets and all count; a run reused
    by one sweep from another is found where it was computed; a run stored twice counts once."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from aqmlab.sweep import read_extra

    def part(sweep, name, run_ids, values):
        d = tmp_path / "sweeps" / sweep / "qdelay"
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"run_id": run_ids, "delay_ns": values}), d / f"{name}.parquet")

    part("a-1", "part-1", ["r1", "r1", "r1", "r2"], [0, 0, 6, 5])  # r1 has two packets of delay 0
    part("b-2", "part-1", ["r3", "r3"], [7, 7])
    part("b-2", "part-2", ["r1", "r1", "r1"], [0, 0, 6])  # r1 again (stored twice)
    t = read_extra(tmp_path, "qdelay", ["r1", "r3"])
    assert sorted(t[t["run_id"] == "r1"]["delay_ns"]) == [0, 0, 6]
    assert sorted(t[t["run_id"] == "r3"]["delay_ns"]) == [7, 7]
    assert set(t["run_id"]) == {"r1", "r3"} and len(t) == 5
    assert len(read_extra(tmp_path, "timeline", ["r1"])) == 0
