"""`aqmlab compare A B`: the scenario keys that differ and every catalog value of both runs. The
values are checked against the catalog as `aqmlab query` reads it (a separate path: DuckDB over
the stored rows), the differences against arithmetic, and a rerun of the same scenario and seed
against determinism (nothing differs). And `plot --metric` over the same runs."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

AQMLAB = str(Path(sys.executable).parent / "aqmlab")


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([AQMLAB, *map(str, args)], check=False, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("cmp")
    ids = {}
    for name, sets in {"codel": ["topology.down.qdisc=codel"], "again": ["topology.down.qdisc=codel"],
                       "target": ["topology.down.qdisc=codel", "topology.down.qdisc.target=10ms"],
                       "pie": ["topology.down.qdisc=pie"]}.items():  # fmt: skip
        r = cli(
            "run",
            "bufferbloat",
            "--set",
            "duration=8s",
            *(a for s in sets for a in ("--set", s)),
            "--out",
            root,
        )
        assert r.returncode == 0, r.stderr
        ids[name] = next(ln.split()[-1] for ln in r.stdout.splitlines() if ln.startswith("run stored in"))
    return root, {k: Path(v).name for k, v in ids.items()}


def compared(root: Path, a: str, b: str) -> dict:
    r = cli("compare", a, b, "--root", root, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_same_scenario_and_seed_differ_in_nothing(runs):
    root, ids = runs
    doc = compared(root, ids["codel"], ids["again"])
    assert doc["scenario"] == []
    results = [c for c in doc["summary"] if c["column"] != "wall_s"]  # the wall clock is no result
    assert results and all(c["a"] == c["b"] for c in results)
    assert all(c["delta"] in (0, None) for c in results)


def test_one_key_changed_is_the_one_difference_and_values_are_the_catalogs(runs):
    root, ids = runs
    doc = compared(root, ids["codel"], ids["target"])
    assert doc["scenario"] == [{"key": "topology.down.qdisc.target", "a": "5ms", "b": "10ms"}]
    q = cli("query", f"SELECT * FROM runs WHERE run_id IN ('{ids['codel']}', '{ids['target']}')", "--root", root,
            "--format", "json")  # fmt: skip
    rows = {r["run_id"]: r for r in json.loads(q.stdout)}
    a, b = rows[ids["codel"]], rows[ids["target"]]
    for c in doc["summary"]:
        assert c["a"] == pytest.approx(a[c["column"]]) and c["b"] == pytest.approx(b[c["column"]]), c
        if isinstance(c["a"], float) and isinstance(c["b"], float):
            assert c["delta"] == pytest.approx(c["b"] - c["a"])
            if c["a"]:
                assert c["relative"] == pytest.approx((c["b"] - c["a"]) / abs(c["a"]))
    p50 = next(c for c in doc["summary"] if c["column"] == "queue_delay_p50_ms")
    assert not math.isclose(p50["a"], p50["b"])  # a target twice as long moves the standing queue


def test_another_discipline_is_one_change_named_by_its_kinds(runs):
    root, ids = runs
    doc = compared(root, ids["codel"], ids["pie"])
    assert doc["scenario"] == [{"key": "topology.down.qdisc", "a": "codel", "b": "pie"}]
    table = cli("compare", ids["codel"], ids["pie"], "--root", root)
    assert table.returncode == 0 and "queue_delay_p95_ms" in table.stdout


def test_an_unknown_run_is_one_line(runs):
    root, ids = runs
    r = cli("compare", ids["codel"], "nosuchrun", "--root", root)
    assert r.returncode == 2 and "nosuchrun" in r.stderr and "Traceback" not in r.stderr


def test_plot_metric_draws_the_chosen_metric_and_names_what_is_allowed(runs, tmp_path):
    root, ids = runs
    a, b = ids["codel"], ids["pie"]
    out = tmp_path / "bar.png"
    r = cli("plot", a, b, "--root", root, "-k", "bar", "--metric", "probe_rtt_p95_ms", "-o", out)
    assert r.returncode == 0 and out.stat().st_size > 0, r.stderr
    r = cli("plot", a, b, "--root", root, "-k", "ellipse", "--metric", "goodput_mbps_total,queue_delay_p95_ms",
            "-o", tmp_path / "e.png")  # fmt: skip
    assert r.returncode == 0, r.stderr
    for args, needle in [(["-k", "bar", "--metric", "nosuch"], "unknown metric 'nosuch'; known: "),
                         (["-k", "delay_ts", "--metric", "drops"], "allowed with: box, bar, ellipse"),
                         (["-k", "ellipse", "--metric", "drops"], "X,Y")]:  # fmt: skip
        r = cli("plot", a, b, "--root", root, *args, "-o", tmp_path / "x.png")
        assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr
