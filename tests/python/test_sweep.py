"""Sweeps: grid expansion, seeds, storage, resume after SIGKILL, Dask, bad input."""

from __future__ import annotations

import importlib
import importlib.resources
import itertools
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import aqmlab
from aqmlab import store
from aqmlab.api import run_dict, simulate
from aqmlab.scenario import builtin_path, load, resolve
from aqmlab.sweep.orchestrate import _chunks, _Schedule

S = importlib.import_module("aqmlab.sweep")  # (aqmlab.sweep is the API function)

BASE = str(builtin_path("transients2014/base"))
AQMLAB = str(Path(sys.executable).parent / "aqmlab")


def small_sweep(tmp_path: Path, reps: int = 2, extra: str = "") -> Path:
    """2 qdiscs (grid) x 2 loads (zip) = 4 points."""
    f = tmp_path / "sw.toml"
    f.write_text(
        f"""
base = "{BASE}"
name = "t"
seed = 11
reps = {reps}
{extra}
[set]
duration = "12s"
[grid]
topology.down.qdisc = ["codel", "pfifo"]
[zip]
"flows.0.count" = [1, 2]
"flows.0.bytes" = ["360000B", "180000B"]
"params.load" = ["1+1", "2+1"]
"""
    )
    return f


def cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([AQMLAB, *args], check=False, capture_output=True, text=True, **kw)


# --------------------------------------------------------------------------- grid and seeds


def test_grid_cross_and_zip(tmp_path):
    spec = S.parse_sweep(small_sweep(tmp_path))
    pts = spec.points()
    expected = [
        {"topology.down.qdisc": q, "flows.0.count": c, "flows.0.bytes": b}
        for q, (c, b) in itertools.product(["codel", "pfifo"], [(1, "360000B"), (2, "180000B")])
    ]
    assert [p.overrides for p in pts] == expected
    assert [p.labels["load"] for p in pts] == ["1+1", "2+1", "1+1", "2+1"]
    # the point's scenario is the base with set + overrides applied
    assert pts[3].scenario["flows"][0]["count"] == 2
    assert pts[3].scenario["topology"]["down"]["qdisc"] == "pfifo"
    assert pts[3].scenario["duration"] == "12s"


def test_seeds_deterministic_and_distinct(tmp_path):
    f = small_sweep(tmp_path)
    a, b = S.parse_sweep(f), S.parse_sweep(f)
    sa = [a.seed_for(p, r) for p in a.points() for r in range(3)]
    sb = [b.seed_for(p, r) for p in reversed(b.points()) for r in range(3)]
    assert sorted(sa) == sorted(sb)
    assert len(set(sa)) == len(sa)
    assert all(0 <= s < 2**63 for s in sa)
    # seed_from = ["params.load"]: the same seeds for both qdiscs at a given load
    c = S.parse_sweep(small_sweep(tmp_path, extra='seed_from = ["params.load"]'))
    p = c.points()
    assert c.seed_for(p[0], 1) == c.seed_for(p[2], 1)  # codel 1+1 vs pfifo 1+1
    assert c.seed_for(p[0], 1) != c.seed_for(p[1], 1)
    # the sweep seed enters
    d = S.parse_sweep(small_sweep(tmp_path).read_text().replace("seed = 11", "seed = 12") and f)
    assert d.seed_for(d.points()[0], 0) == a.seed_for(a.points()[0], 0)


def _comparable(df):
    # which run a run repeats depends on how the runs were batched, not its results
    cols = [c for c in df.columns if c not in ("wall_s", "same_as")]
    return df[cols].sort_values("run_id").reset_index(drop=True)


def test_independent_of_jobs_and_reproducible(tmp_path):
    f = small_sweep(tmp_path)
    t1 = aqmlab.sweep(f, jobs=1, out=tmp_path / "a", keep_packets=True)
    t2 = aqmlab.sweep(f, jobs=2, out=tmp_path / "b")
    assert len(t1) == 8 and (t1["status"] == "ok").all()
    assert _comparable(t1).equals(_comparable(t2))
    # one run alone, from its stored seed and overrides: bit for bit (the packet table)
    row = t1.iloc[5]
    run = store.load_run(row["run_id"], tmp_path / "a")
    assert run.meta["seed"] == row["seed"]
    ov = json.loads(run.row["overrides"])
    again = aqmlab.run(BASE, seed=int(row["seed"]), overrides={"duration": "12s", **ov})
    stored = run.tables["packets"]
    assert stored.num_rows > 100
    assert stored.equals(again.tables["packets"].select(stored.column_names))
    # and with the stored command line
    cmd = shlex.split(row["reproduce_command"])
    assert cmd[:2] == ["aqmlab", "run"]
    r = cli(*cmd[1:], "--json", "--no-plot", "--out", str(tmp_path / "single"))
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    for k in ("links", "flows"):
        assert summary[k] == run.summary[k]


def test_dataset_layout_catalog_and_views(tmp_path):
    f = small_sweep(tmp_path, reps=10)
    t = aqmlab.sweep(f, jobs=2, out=tmp_path)
    sweep_dir = Path(t.attrs["sweep_dir"])
    assert not list(tmp_path.glob("t-*"))  # no directory per run
    parts = list(sweep_dir.glob("flows/part-*.parquet"))
    assert parts and len(parts) <= len(t) / 2  # batches of runs per file
    assert {p.stem for p in parts} <= {p.stem for p in sweep_dir.glob("summaries/part-*.parquet")}
    q = store.query(tmp_path, "SELECT count(*) AS n, count(DISTINCT run_id) AS d FROM runs")
    assert q["n"][0] == q["d"][0] == len(t)
    # flows view: 2 + N flows per run (group 1 has N = flows.0.count flows, group 2 one)
    per = store.query(tmp_path, "SELECT run_id, count(*) AS n FROM flows GROUP BY run_id").set_index("run_id")
    for _, r in t.iterrows():
        assert per.loc[r["run_id"], "n"] == r["flows.0.count"] + 1
    # a sweep run id loads like a run directory (prefix too) and the catalog survives a rebuild
    run = store.load_run(t["run_id"][0][:12] if (t["run_id"].str[:12] == t["run_id"][0][:12]).sum() == 1
                         else t["run_id"][0], tmp_path)  # fmt: skip
    assert run.summary["links"]["down"]["qdisc"] in ("codel", "pfifo")
    assert run.tables["links"].num_rows == 2
    store.rebuild_catalog(tmp_path)
    assert store.query(tmp_path, "SELECT count(*) AS n FROM runs")["n"][0] == len(t)
    r = cli("report", t["run_id"][0], "-o", str(tmp_path / "r.html"), "--root", str(tmp_path))
    assert r.returncode == 0, r.stderr


def failing_metrics(tables, meta):
    """A metric function that fails for the 2-flow group-1 runs (to test failure handling)."""
    if tables["flows"].num_rows == 3:
        raise RuntimeError("boom in metrics")
    return {"n_flows_seen": tables["flows"].num_rows}, {}


def test_failed_runs_recorded_sweep_goes_on(tmp_path):
    spec = S.parse_sweep(small_sweep(tmp_path))
    res = S.run_sweep(spec, out=tmp_path, jobs=1, metrics_fn="test_sweep:failing_metrics")
    assert len(res.failed) == 4 and res.total == 8
    assert all("boom in metrics" in f["error"] for f in res.failed)
    ok = res.table[res.table["status"] == "ok"]
    assert (ok["n_flows_seen"] == 2).all()
    # failed runs are retried on the next invocation (and fail again), never duplicated
    res2 = S.run_sweep(spec, out=tmp_path, jobs=1, metrics_fn="test_sweep:failing_metrics")
    assert res2.ran == 4 and res2.skipped == 4 and len(res2.table) == 8


def test_a_batch_run_twice_is_stored_once(tmp_path):
    """A scheduler may run a batch again after its worker died past the commit (Ray retries the
    task of a killed worker): the second run replaces the first one's parts, never adds a copy."""
    sc = resolve(load(BASE))
    sc["duration"] = "2s"
    tasks = [S.Task(run_id=f"r{i}", point=0, rep=i, seed=i + 1, command="") for i in range(2)]
    batch = S.Batch(sweep_dir=str(tmp_path), scenarios={0: sc}, params={0: {}}, overrides={0: {}},
                    tasks=tasks, keep=("flows",), metrics_fn=None)  # fmt: skip
    first = S.run_batch(batch)
    second = S.run_batch(batch)
    assert [r["status"] for r in first + second] == ["ok"] * 4
    for table in ("summaries", "flows"):
        (part,) = (tmp_path / table).glob("part-*.parquet")
        assert sorted(set(pq.read_table(part).column("run_id").to_pylist())) == ["r0", "r1"]


# --------------------------------------------------------------------------- resume after kill -9


def test_resume_after_sigkill(tmp_path):
    f = tmp_path / "big.toml"
    f.write_text(
        f"""
base = "{BASE}"
name = "k"
reps = 150
[grid]
"flows.0.count" = [1, 2, 4, 6]
"""
    )
    out = tmp_path / "res"
    total = 600
    proc = subprocess.Popen([AQMLAB, "sweep", str(f), "--jobs", "2", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    deadline = time.time() + 120
    while time.time() < deadline and len(list(out.glob("sweeps/*/summaries/part-*.parquet"))) < 3:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its pool workers, mid-sweep
    proc.wait()
    sdir = next(out.glob("sweeps/*"))
    done_before = sum(pq.read_metadata(p).num_rows for p in sdir.glob("summaries/part-*.parquet"))
    assert 0 < done_before < total, "the kill must land mid-sweep"
    r = cli("sweep", str(f), "--jobs", "2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert f"{total - done_before} run now, {done_before} already complete" in " ".join(r.stdout.split())
    ids = [
        i
        for p in sdir.glob("summaries/part-*.parquet")
        for i in pq.read_table(p).column("run_id").to_pylist()
    ]
    assert len(ids) == len(set(ids)) == total
    # no orphan or duplicated table rows: every run's flows appear exactly once
    n = store.query(out, "SELECT count(*) AS n, count(DISTINCT run_id) AS d FROM runs")
    assert n["n"][0] == n["d"][0] == total
    fl = store.query(
        out, "SELECT run_id, count(*) AS n, count(DISTINCT flow) AS d FROM flows GROUP BY run_id"
    )
    assert len(fl) == total and (fl["n"] == fl["d"]).all()
    assert not list(sdir.glob("*/.*.tmp"))


# --------------------------------------------------------------------------- Dask


def test_dask_local_cluster_matches_local(tmp_path):
    pytest.importorskip("dask.distributed")
    f = small_sweep(tmp_path, reps=1)
    t_local = aqmlab.sweep(f, jobs=2, out=tmp_path / "l")
    t_dask = aqmlab.sweep(f, jobs=2, executor="dask", out=tmp_path / "d")
    assert _comparable(t_local).equals(_comparable(t_dask))
    # an existing cluster, by scheduler address
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        t_addr = aqmlab.sweep(f, executor="dask", scheduler=c.scheduler_address, out=tmp_path / "e")
    assert _comparable(t_local).equals(_comparable(t_addr))


def test_ray_local_cluster_matches_local_and_dask(tmp_path):
    ray = pytest.importorskip("ray")
    pytest.importorskip("dask.distributed")
    f = small_sweep(tmp_path, reps=1)
    t_local = aqmlab.sweep(f, jobs=2, out=tmp_path / "l")
    t_dask = aqmlab.sweep(f, jobs=2, executor="dask", out=tmp_path / "d")
    try:
        t_ray = aqmlab.sweep(f, jobs=2, executor="ray", out=tmp_path / "r")
    finally:
        ray.shutdown()
    assert len(t_local) == 4 and (t_local["status"] == "ok").all()
    assert _comparable(t_local).equals(_comparable(t_ray))
    assert _comparable(t_dask).equals(_comparable(t_ray))


def _ray_task_pids() -> list[int]:
    """Processes of Ray workers running a sweep batch (Ray names them after the task)."""
    pids = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and b"ray::run_batch" in (d / "cmdline").read_bytes():
                pids.append(int(d.name))
        except OSError:
            continue
    return pids


def test_ray_worker_killed_mid_sweep_loses_no_finished_run(tmp_path):
    pytest.importorskip("ray")
    f = small_sweep(tmp_path, reps=3)
    out = tmp_path / "res"
    proc = subprocess.Popen([AQMLAB, "sweep", str(f), "--executor", "ray", "--jobs", "2", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.time() + 180
    killed = None
    while time.time() < deadline and killed is None and proc.poll() is None:
        done = list(out.glob("sweeps/*/summaries/part-*.parquet"))
        pids = _ray_task_pids()
        if done and pids:  # some runs finished, a worker is busy with more
            os.kill(pids[0], signal.SIGKILL)
            killed = pids[0]
        time.sleep(0.02)
    stdout, stderr = proc.communicate(timeout=300)
    assert killed is not None, "the kill must land mid-sweep"
    assert proc.returncode == 0, stderr
    # Ray re-ran the killed worker's batch: the sweep completed every run, none failed
    assert "12 runs (12 run now, 0 already complete), 0 failed" in " ".join(stdout.split()), stdout
    r = cli("sweep", str(f), "--jobs", "1", "--out", str(out))
    assert "(0 run now, 12 already complete)" in " ".join(r.stdout.split()), r.stdout
    t_ray = aqmlab.sweep(f, jobs=1, out=out)
    t_local = aqmlab.sweep(f, jobs=2, out=tmp_path / "l")
    assert len(t_ray) == 12 and (t_ray["status"] == "ok").all()
    assert _comparable(t_ray).equals(_comparable(t_local))
    sdir = next(out.glob("sweeps/*"))
    ids = [
        i
        for p in sdir.glob("summaries/part-*.parquet")
        for i in pq.read_table(p).column("run_id").to_pylist()
    ]
    assert len(ids) == len(set(ids)) == 12


def test_ray_missing_is_a_clear_error(tmp_path):
    try:
        import ray  # noqa: F401

        pytest.skip("ray is installed")
    except ImportError:
        pass
    r = cli("sweep", str(small_sweep(tmp_path)), "--executor", "ray", "--out", str(tmp_path))
    assert r.returncode == 2 and "ray is not installed" in r.stderr


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "text, needles",
    [
        ('colour = "red"', ["colour"]),
        ('[grid]\n"topology.down.ratee" = ["2Mbps"]', ["topology.down.ratee", "2Mbps"]),
        ('[grid]\n"topology.down.rate" = ["fast"]', ["topology.down.rate", "fast"]),
        ('[grid]\n"topology.down.rate" = "2Mbps"', ["topology.down.rate", "2Mbps"]),
        (
            '[zip]\n"flows.0.count" = [1, 2]\n"flows.0.bytes" = ["1B"]',
            ["flows.0.count", "flows.0.bytes", "2", "1"],
        ),
        ("reps = 0", ["reps", "0"]),
        (
            '[zip]\n"flows.0.cc" = ["ledbat", "tcp_lp"]\n"flows.0.cc_params" = [{ target = "25ms" }, { target = "25ms" }]',
            ["flows.0.cc = 'tcp_lp'", "flows.0.cc_params", "target", "unknown parameter of tcp_lp"],
        ),
    ],
)
def test_bad_sweep_files_exit_2(tmp_path, text, needles):
    f = tmp_path / "bad.toml"
    f.write_text(f'base = "{BASE}"\n{text}\n')
    r = cli("sweep", str(f), "--out", str(tmp_path))
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    for n in needles:
        assert n in lines[0]
    assert "Traceback" not in r.stderr


def test_a_zip_applies_each_positions_values_together(tmp_path):
    # A controller's parameters are valid only with that controller: zipped, each position's
    # cc and cc_params are checked (and run) together, as one point.
    f = tmp_path / "sw.toml"
    f.write_text(
        f'base = "{BASE}"\n[zip]\n"flows.0.cc" = ["ledbat", "tcp_lp"]\n'
        '"flows.0.cc_params" = [{ target = "25ms" }, { hz = 100 }]\n'
    )
    spec = S.parse_sweep(f)
    ccs = [(p.scenario["flows"][0]["cc"], p.scenario["flows"][0]["cc_params"]) for p in spec.points()]
    assert ccs == [("ledbat", {"target": "25ms"}), ("tcp_lp", {"hz": 100})]


def test_bad_reps_option_exit_2(tmp_path):
    r = cli("sweep", str(small_sweep(tmp_path)), "--reps", "0", "--out", str(tmp_path))
    assert r.returncode == 2 and "--reps 0" in r.stderr


def test_the_sweep_summary_groups_qdisc_tables(tmp_path):
    # A grid value that is a table (a qdisc with parameters, as in the shipped lpcc2013 and
    # transients2014 sweeps) used to crash the printed summary (pandas cannot group by a dict).
    f = tmp_path / "sw.toml"
    f.write_text(
        f"""
base = "{BASE}"
name = "t"
reps = 1
[set]
duration = "5s"
[grid]
topology.down.qdisc = ["pfifo", {{ kind = "codel", target = "5ms" }}]
"""
    )
    r = cli("sweep", str(f), "--out", str(tmp_path / "o"), "--jobs", "1")
    assert r.returncode == 0, r.stderr
    assert '{"kind":"codel","target":"5ms"}' in r.stdout and "Traceback" not in r.stderr
    assert "2 runs" in r.stdout


def test_a_changed_metric_recomputes_the_runs(tmp_path, monkeypatch):
    # the run id covers the metric code: the same sweep after an edit of the metric function's
    # module runs again and carries the new values, instead of keeping the stale ones
    mod = tmp_path / "mod"
    mod.mkdir()
    monkeypatch.syspath_prepend(str(mod))
    src = mod / "edited_metric.py"

    def write(value: int) -> None:
        src.write_text(f"def m(tables, meta):\n    return {{'answer': {value}}}, {{}}\n")
        sys.modules.pop("edited_metric", None)

    spec = S.parse_sweep(small_sweep(tmp_path, reps=1))
    write(1)
    res = S.run_sweep(spec, out=tmp_path / "o", jobs=1, metrics_fn="edited_metric:m")
    assert res.ran == 4 and (res.table["answer"] == 1).all()
    again = S.run_sweep(spec, out=tmp_path / "o", jobs=1, metrics_fn="edited_metric:m")
    assert again.ran == 0 and again.skipped == 4
    write(2)
    os.utime(src, ns=(time.time_ns() + 10**9,) * 2)  # a new mtime even on a coarse clock
    changed = S.run_sweep(spec, out=tmp_path / "o", jobs=1, metrics_fn="edited_metric:m")
    assert changed.ran == 4 and (changed.table["answer"] == 2).all()


def test_the_run_id_covers_the_summary_metrics_source(tmp_path, monkeypatch):
    import importlib.machinery
    import importlib.util

    from aqmlab import metrics

    copy = tmp_path / "metrics.py"
    copy.write_bytes(Path(metrics.__file__).read_bytes())
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: (
        importlib.machinery.ModuleSpec(name, None, origin=str(copy)) if name == "aqmlab.metrics"
        else real(name, *a)))  # fmt: skip
    same = S.run_id_for("x", "d", 1)
    copy.write_text(copy.read_text() + "\n# a changed metric\n")
    assert S.run_id_for("x", "d", 1) != same


def test_run_cost_is_duration_times_the_highest_link_rate():
    sc = {"duration": "10s", "topology": {"nic_rate": "10Gbps", "down": {"rate": "100Mbps"},
          "up": {"rate": [["0ms", "2Mbps"], ["5s", "20Mbps"]]}}}  # fmt: skip
    assert S.run_cost(sc) == 10 * 100e6
    sc["topology"]["down"]["rate"] = "1Mbps"
    assert S.run_cost(sc) == 10 * 20e6  # the schedule's highest step; its times are no rates
    assert S.run_cost({"duration": "1500ms", "topology": {"wifi": {"stations": []}}}) == 1.5
    # a trace's mean: 3 opportunities of 1500 B every 2 ms is 18 Mb/s
    sc["topology"]["down"] = {"trace": {"ms": [1, 1, 2]}}
    assert S.run_cost(sc) == 10 * 20e6
    sc["topology"]["up"] = {"rate": "1Mbps"}
    assert S.run_cost(sc) == 10 * 18e6


def test_batches_hold_every_run_once_costliest_first_at_about_equal_cost():
    cost = {p: float(c) for p, c in enumerate([1, 300, 5, 5, 60, 1, 1, 60])}
    tasks = [S.Task(f"r{p}-{k}", p, k, 0, "") for p in cost for k in range(10)]
    jobs = 2
    batches = _chunks(tasks, jobs, cost)
    assert sorted(t.run_id for b in batches for t in b) == sorted(t.run_id for t in tasks)
    most = [max(cost[t.point] for t in b) for b in batches]
    assert most == sorted(most, reverse=True) and batches[0][0].point == 1
    budget = sum(cost[t.point] for t in tasks) / (jobs * 8)
    for b in batches:
        assert len(b) == 1 or sum(cost[t.point] for t in b) <= budget
        assert len(b) <= S.MAX_BATCH
    assert len(batches) <= 2 * jobs * 8 + 1
    # a point whose runs together fit in a batch's budget has them all in one batch
    for p, c in cost.items():
        if 10 * c <= budget:
            assert sum(any(t.point == p for t in b) for b in batches) == 1


def test_the_schedule_holds_back_only_the_runs_past_a_cut_points_first_batch():
    cost = {p: float(c) for p, c in enumerate([1, 300, 5, 5, 60, 1, 1, 60])}
    tasks = [S.Task(f"r{p}-{k}", p, k, 0, "") for p in cost for k in range(10)]
    plan = _Schedule(tasks, {}, cost, 2, lambda chunks, sources: chunks, lambda rows: {})
    budget = sum(cost[t.point] for t in tasks) / (2 * 8)
    scheduled = [t for b in plan.first for t in b]
    waiting = [t for ts in plan.waiting.values() for t in ts]
    assert sorted(t.run_id for t in scheduled + waiting) == sorted(t.run_id for t in tasks)
    assert set(plan.waiting) == {p for p, c in cost.items() if 10 * c > budget}  # those cut into batches
    for p, ts in list(plan.waiting.items()):
        (first,) = [b for b in plan.first if any(t.point == p for t in b)]  # one batch of it at the start
        assert sum(t.point == p for t in first) + len(ts) == 10
        released = plan.release([{"point": p}])
        assert sorted(t.run_id for b in released for t in b) == sorted(t.run_id for t in ts)
        assert p not in plan.waiting
    # a point with a finished run known runs at once, whatever its cost
    known = _Schedule(tasks, dict.fromkeys(cost), cost, 2, lambda chunks, sources: chunks, lambda rows: {})
    assert not known.waiting and len([t for b in known.first for t in b]) == len(tasks)


# --------------------------------------------------------------------------- runs that draw nothing


SCENARIO_FILES = sorted(
    p
    for p in Path(str(importlib.resources.files("aqmlab") / "scenarios")).rglob("*.toml")
    if "topology" in load(p)
)


def test_a_run_that_draws_no_random_value_is_the_same_for_every_seed():
    """Every random choice of the core comes from its seeded streams, which count what they draw
    (``random_streams``): over every built-in scenario file, shortened, a run that drew nothing
    records the same tables under another seed. Both kinds must occur, or the check says nothing."""
    drew = []
    for f in SCENARIO_FILES:
        sc = load(f)
        sc["duration"] = "2s"
        (a, meta), (b, _) = simulate(sc, 1), simulate(sc, 2)
        assert isinstance(meta["random_streams"], int), f
        drew.append(meta["random_streams"] > 0)
        if not drew[-1]:
            assert a.keys() == b.keys() and all(a[k].equals(b[k]) for k in a), f
    assert 3 <= sum(drew) <= len(drew) - 3


def test_a_python_discipline_leaves_the_draws_unknown():
    sc = load("rrul_be")
    sc["duration"] = "1s"
    sc["topology"]["down"]["qdisc"] = {"kind": "python", "class": "aqmlab.examples.codel:Codel"}
    assert simulate(sc, 1)[1]["random_streams"] is None


def _batch(tmp_path: Path, qdisc: str, reps: int) -> S.Batch:
    sc = resolve(load("rrul_be"))
    sc["duration"] = "3s"
    sc["topology"]["down"]["qdisc"] = qdisc
    tasks = [S.Task(run_id=f"{qdisc}{i}", point=0, rep=i, seed=100 + i, command="") for i in range(reps)]
    return S.Batch(sweep_dir=str(tmp_path), scenarios={0: sc}, params={0: {}}, overrides={0: {}}, tasks=tasks,
                   keep=("flows", "links", "packets"), metrics_fn=None)  # fmt: skip


def test_replications_of_a_run_that_draws_nothing_repeat_it(tmp_path):
    """A point whose first run drew no random value: its other runs are that run's results under
    their own run id and seed, and are what the core gives for their seeds."""
    batch = _batch(tmp_path, "pfifo", 3)
    rows = S.run_batch(batch)
    assert [r["status"] for r in rows] == ["ok"] * 3
    assert rows[0]["meta"]["random_streams"] == 0 and "same_as" not in rows[0]["meta"]
    for r, t in zip(rows[1:], batch.tasks[1:]):
        assert r["meta"]["same_as"] == "pfifo0"
        assert (r["run_id"], r["rep"], r["seed"], r["meta"]["seed"], r["summary"]["seed"]) == (t.run_id, t.rep,
                                                                                              t.seed, t.seed, t.seed)  # fmt: skip
        again = run_dict(batch.scenarios[0], seed=t.seed)
        for k in ("links", "flows", "goodput_mbps"):
            assert r["summary"][k] == again.summary[k]
        for name in batch.keep:
            (part,) = (tmp_path / name).glob("part-*.parquet")
            stored = pq.read_table(part).to_pandas()
            mine = stored[stored["run_id"] == t.run_id].drop(columns="run_id").reset_index(drop=True)
            assert mine.equals(again.tables[name].to_pandas()), name
    # a discipline drawing at random (RED's drop decisions) runs every seed
    rows = S.run_batch(_batch(tmp_path / "red", "red", 2))
    assert all(r["meta"]["random_streams"] > 0 and "same_as" not in r["meta"] for r in rows)


def test_the_sweep_says_how_many_runs_repeated_another(tmp_path):
    f = tmp_path / "sw.toml"
    f.write_text("""
base = "rrul_be"
name = "seedfree"
reps = 3
[set]
duration = "2s"
"topology.down.qdisc" = "pfifo"
[grid]
"topology.down.limit" = ["20p", "30p", "40p", "50p", "60p", "70p", "80p", "90p"]
""")
    r = cli("sweep", str(f), "--jobs", "1", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    # eight points of three runs at equal cost, each point a batch of its own: two repeats each
    said = " ".join(r.stdout.split())
    assert "runs repeat the first run of their grid point" in said, said[-300:]
    assert "16 runs repeat" in said, said[-300:]


def seed_free_sweep(tmp_path: Path, qdiscs: list[str], reps: int) -> Path:
    """rrul_be (fixed flow starts, no random value drawn through a FIFO) at each of ``qdiscs``."""
    f = tmp_path / "sw.toml"
    f.write_text(f"""
base = "rrul_be"
name = "phases"
reps = {reps}
[set]
duration = "3s"
[grid]
"topology.down.qdisc" = {json.dumps(qdiscs)}
""")
    return f


def _counting_runs(monkeypatch) -> list[int]:
    """Counts the simulations run in this process (the core's calls)."""
    from aqmlab import api

    calls, real = [], api.run_dict
    monkeypatch.setattr(api, "run_dict", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    return calls


def _as_fresh_runs(table, out: Path, keep_packets: bool) -> None:
    """Every row's stored summary and tables are what a fresh run with its seed gives."""
    for row in table.to_dict("records"):
        stored = store.load_run(row["run_id"], out)
        fresh = aqmlab.run("rrul_be", seed=int(row["seed"]), overrides={"duration": "3s", **json.loads(
            stored.row["overrides"])})  # fmt: skip
        for k in ("links", "flows", "goodput_mbps"):
            assert stored.summary[k] == fresh.summary[k], (row["rep"], k)
        for name in ("flows", "links", *(["packets"] if keep_packets else [])):
            mine = stored.tables[name]
            assert mine.num_rows > 0 and mine.equals(fresh.tables[name].select(mine.column_names)), name


@pytest.mark.parametrize("executor", ["local", "dask", "ray"])
def test_a_point_cut_into_many_batches_simulates_its_first_run_only(tmp_path, monkeypatch, executor):
    """One point, 8 replications: with 2 jobs each run is a batch of its own (8 batches per
    worker), yet the first run, which draws nothing, is the only one simulated; with one job, in
    this process, the core is called once."""
    if executor != "local":
        pytest.importorskip({"dask": "dask.distributed", "ray": "ray"}[executor])
    f = seed_free_sweep(tmp_path, ["pfifo"], reps=8)
    try:
        t = aqmlab.sweep(f, jobs=2, executor=executor, out=tmp_path / "o2", keep_packets=True)
    finally:
        if executor == "ray":
            sys.modules["ray"].shutdown()
    assert len(t) == 8 and (t["status"] == "ok").all()
    first = t.loc[t["rep"] == 0, "run_id"].item()
    assert t["same_as"].isna().sum() == 1 and (t.loc[t["rep"] > 0, "same_as"] == first).all()
    _as_fresh_runs(t, tmp_path / "o2", keep_packets=True)
    calls = _counting_runs(monkeypatch)
    t1 = aqmlab.sweep(f, jobs=1, out=tmp_path / "o1")
    assert len(calls) == 1 and t1["same_as"].notna().sum() == 7
    assert _comparable(t1).equals(_comparable(t))


def test_a_point_that_draws_is_simulated_for_every_seed(tmp_path):
    """RED draws its drop decisions: none of its runs repeats another, while the FIFO point of
    the same sweep repeats its first run."""
    t = aqmlab.sweep(seed_free_sweep(tmp_path, ["red", "pfifo"], reps=6), jobs=2, out=tmp_path / "o")
    red = t[t["topology.down.qdisc"] == "red"]
    fifo = t[t["topology.down.qdisc"] == "pfifo"]
    assert len(red) == len(fifo) == 6 and (t["status"] == "ok").all()
    assert red["same_as"].isna().all() and red["queue_delay_p95_ms"].nunique() > 1
    assert fifo["same_as"].notna().sum() == 5
    _as_fresh_runs(red, tmp_path / "o", keep_packets=False)


@pytest.mark.parametrize("packets_before", [True, False])
def test_a_rerun_repeats_the_stored_run(tmp_path, monkeypatch, packets_before):
    """A sweep stored with its first replication only, rerun with 8: the other 7 repeat the stored
    run, tables included, and nothing is simulated; unless the stored run lacks a table kept now
    (its packets), then the first new run is simulated and the others repeat it."""
    f = seed_free_sweep(tmp_path, ["pfifo"], reps=8)
    spec = S.parse_sweep(f)
    spec.reps = 1
    S.run_sweep(spec, out=tmp_path / "o", jobs=1, keep_packets=packets_before)
    calls = _counting_runs(monkeypatch)
    res = S.run_sweep(S.parse_sweep(f), out=tmp_path / "o", jobs=1, keep_packets=True)
    assert (res.ran, res.skipped) == (7, 1)
    t = res.table
    source = t.loc[t["rep"] == (0 if packets_before else 1), "run_id"].item()
    assert len(calls) == (0 if packets_before else 1)
    assert (t.loc[t["rep"] > 0, "same_as"].dropna() == source).all()
    assert t["same_as"].notna().sum() == (7 if packets_before else 6)
    _as_fresh_runs(t[t["rep"] > 0], tmp_path / "o", keep_packets=True)


def test_a_sweep_runs_created_is_kept_by_a_rebuilt_catalog(tmp_path):
    # `aqmlab runs` rebuilds the catalog: a sweep run's `created` came out as the rebuild's time,
    # so that "the newest runs" were whichever sweep was listed last
    out = tmp_path / "res"
    aqmlab.sweep(small_sweep(tmp_path, reps=1), jobs=1, out=out)
    first = store.query(out, "SELECT run_id, created FROM runs ORDER BY run_id")
    time.sleep(1.1)
    store.rebuild_catalog(out)
    again = store.query(out, "SELECT run_id, created FROM runs ORDER BY run_id")
    moved = (again["created"] - first["created"]).abs().max()
    assert moved.total_seconds() < 1, moved
