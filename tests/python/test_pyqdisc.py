"""Queue disciplines written in Python (aqmlab.pyqdisc): the worked CoDel reproduces the built-in
`codel` packet for packet; drops and marks are accounted as the core's (conservation, counts the
class keeps itself); the timer fires on its period; user mistakes are named before a run (exit 2)
and failures during one stop it with the user's traceback and the simulated time (exit 1)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import aqmlab
from aqmlab.pyqdisc import QdiscError
from aqmlab.reproduce import Execution
from aqmlab.scenario import ScenarioError

S = importlib.import_module("aqmlab.sweep")
AQMLAB = str(Path(sys.executable).parent / "aqmlab")
PYCODEL = {"kind": "python", "class": "aqmlab.examples.codel:Codel"}


def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([AQMLAB, *args], check=False, capture_output=True, text=True, cwd=cwd)


def both(scenario: str, builtin: dict, python: dict, **keys):
    a = aqmlab.run(scenario, seed=5, topology__down__qdisc=builtin, **keys)
    b = aqmlab.run(scenario, seed=5, topology__down__qdisc=python, **keys)
    return a, b


@pytest.mark.parametrize(
    ("builtin", "python", "flows_ecn"),
    [
        ({"kind": "codel"}, {}, False),
        ({"kind": "codel", "variant": "linux"}, {"variant": "linux"}, False),
        ({"kind": "codel", "variant": "ns2"}, {"variant": "ns2"}, False),
        ({"kind": "codel", "ecn": True}, {"ecn": True}, True),
        ({"kind": "codel", "target": "2ms", "interval": "40ms", "limit": "12p"},
         {"target": "2ms", "interval": "40ms", "limit": "12p"}, False),
    ],
)  # fmt: skip
def test_python_codel_is_the_builtin_packet_for_packet(builtin, python, flows_ecn):
    keys = {"duration": "20s", "flows__0__ecn": True} if flows_ecn else {"duration": "20s"}
    a, b = both("bufferbloat", builtin, {**PYCODEL, **python}, **keys)
    pa, pb = a.tables["packets"], b.tables["packets"]
    assert pa.num_rows > 1000 and pa.equals(pb)
    la, lb = a.df("links"), b.df("links")
    cols = [c for c in la.columns if c != "qdisc"]
    assert la[cols].equals(lb[cols])
    down = la[la["dir"] == "down"].iloc[0]
    # the comparison covers CoDel's control law: head drops (or marks with ECN) happened
    assert (down["marks"] if flows_ecn else down["drops_head"]) > 10
    if builtin.get("limit"):
        assert down["drops_overlimit"] > 0
    assert a.summary["flows"] == b.summary["flows"]


def test_python_codel_both_directions_of_rrul_be():
    a = aqmlab.run(
        "rrul_be", seed=2, duration="8s", topology__down__qdisc="codel", topology__up__qdisc="codel"
    )
    b = aqmlab.run(
        "rrul_be", seed=2, duration="8s", topology__down__qdisc=PYCODEL, topology__up__qdisc=PYCODEL
    )
    assert a.tables["packets"].equals(b.tables["packets"])
    assert a.tables["probes"].equals(b.tables["probes"])


def write(tmp_path: Path, name: str, code: str) -> str:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(code))
    return str(tmp_path)


RANDOM_DROP = """
    import random

    class RandomDrop:
        def __init__(self, link, p=0.1, seed=1):
            self.rng, self.p = random.Random(seed), p
            self.early = self.head = self.marks = 0

        def enqueue(self, now, pkt, queue):
            if queue.packets >= 100:
                return "overlimit"
            if self.rng.random() < self.p:
                self.early += 1
                return "drop"
            return "enqueue"

        def dequeue(self, now, pkt, queue):
            if pkt is None:
                return None
            if pkt.ecn_capable and self.rng.random() < self.p:
                self.marks += 1
                return "mark"
            if self.rng.random() < self.p:
                self.head += 1
                return "drop"
            return "send"

    LAST = []

    class Counted(RandomDrop):
        def __init__(self, link, **kw):
            super().__init__(link, **kw)
            LAST.append(self)
"""


def test_drops_and_marks_are_counted_as_the_class_decided(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(write(tmp_path, "rdrop", RANDOM_DROP))
    import rdrop

    q = {"kind": "python", "class": "rdrop:Counted", "p": 0.05}
    r = aqmlab.run("bufferbloat", seed=1, duration="10s", flows__0__ecn=True, topology__down__qdisc=q)
    obj = rdrop.LAST[-1]  # the instance of the run (the first one served `resolve`)
    down = r.df("links").set_index("dir").loc["down"]
    assert (down["drops_early"], down["drops_head"], down["marks"]) == (obj.early, obj.head, obj.marks)
    assert obj.early > 0 and obj.head > 0 and obj.marks > 0
    # conservation, counted from the tables: every arrival is sent, dropped or still queued
    pk = r.df("packets")
    pk = pk[(pk["dir"] == "down") & (pk["hop"] == "down")]
    assert len(pk) + down["backlog_pkts"] == down["arrivals"]
    assert (pk["outcome"] == "marked").sum() == obj.marks


TIMED = """
    class Timed:
        def __init__(self, link, period="7ms"):
            from aqmlab.pyqdisc import time_ns
            self.period, self.next, self.calls = time_ns(period), 0, []

        def enqueue(self, now, pkt, queue):
            return "enqueue"

        def dequeue(self, now, pkt, queue):
            return "send"

        def next_timer(self):
            return self.next

        def timer(self, now, queue):
            self.calls.append(now)
            self.next = now + self.period

    LAST = []

    class Kept(Timed):
        def __init__(self, link, **kw):
            super().__init__(link, **kw)
            LAST.append(self)
"""


def test_timer_fires_on_its_period(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(write(tmp_path, "timed", TIMED))
    import timed

    aqmlab.run("bufferbloat", duration="1s", topology__down__qdisc={"kind": "python", "class": "timed:Kept"})
    calls = timed.LAST[-1].calls
    # at 0, 7 ms, ..., up to the end (events at exactly the end still run): floor(1 s / 7 ms) + 1
    assert calls == [k * 7_000_000 for k in range(1_000_000_000 // 7_000_000 + 1)]


BROKEN = """
    class Raises:
        def __init__(self, link):
            self.n = 0

        def enqueue(self, now, pkt, queue):
            self.n += 1
            if self.n == 50:
                raise KeyError("boom in user code")
            return "enqueue"

        def dequeue(self, now, pkt, queue):
            return "send"

    class BadVerdict(Raises):
        def dequeue(self, now, pkt, queue):
            return "sendd" if pkt is not None else None

    class MarksNotEct(Raises):
        def enqueue(self, now, pkt, queue):
            return "mark"

    class NoDequeue:
        def __init__(self, link):
            pass

        def enqueue(self, now, pkt, queue):
            return "enqueue"

    class Picky(Raises):
        def __init__(self, link, target="5ms"):
            raise ValueError(f"target: {target!r} is too small")
"""


def test_runtime_errors_stop_the_run_with_the_users_traceback_and_time(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(write(tmp_path, "broken", BROKEN))
    q = {"kind": "python", "class": "broken:Raises"}
    with pytest.raises(QdiscError) as e:
        aqmlab.run("bufferbloat", duration="5s", topology__down__qdisc=q)
    assert e.value.time_ns > 0
    assert "topology.down.qdisc (broken:Raises.enqueue) at simulated time" in str(e.value)
    assert "KeyError: 'boom in user code'" in str(e.value)
    assert "broken.py" in e.value.user_traceback and "raise KeyError" in e.value.user_traceback
    with pytest.raises(QdiscError, match=r"dequeue returned 'sendd'; allowed: \"send\", \"mark\", \"drop\""):
        aqmlab.run("bufferbloat", duration="5s", topology__down__qdisc={**q, "class": "broken:BadVerdict"})
    with pytest.raises(QdiscError, match="not ECN-capable"):
        aqmlab.run("bufferbloat", duration="5s", topology__down__qdisc={**q, "class": "broken:MarksNotEct"})


@pytest.mark.parametrize(
    ("qdisc", "needle"),
    [
        ({"class": "nosuchmod:X"}, "topology.down.qdisc.class: 'nosuchmod:X': no module named 'nosuchmod'"),
        ({"class": "broken"}, "topology.down.qdisc.class: 'broken' is not allowed; allowed: a class path"),
        ({"class": "broken:Nope"}, "module 'broken' has no class 'Nope'"),
        ({"class": "broken:NoDequeue"}, "'broken:NoDequeue' has no method dequeue"),
        ({"class": "aqmlab.examples.codel:Codel", "targte": "1ms"},
         "topology.down.qdisc.targte: unknown parameter of aqmlab.examples.codel:Codel (did you mean `target`?)"),
        ({"class": "aqmlab.examples.codel:Codel", "variant": "bsd"},
         "variant: 'bsd' is not allowed; allowed: rfc, linux, ns2"),
        ({"class": "broken:Picky"}, "broken:Picky rejected its parameters"),
        ({}, "topology.down.qdisc.class: missing"),
    ],
)  # fmt: skip
def test_mistakes_are_named_before_the_run(tmp_path, monkeypatch, qdisc, needle):
    monkeypatch.syspath_prepend(write(tmp_path, "broken", BROKEN))
    with pytest.raises(ScenarioError) as e:
        aqmlab.run("bufferbloat", duration="1s", topology__down__qdisc={"kind": "python", **qdisc})
    assert needle in str(e.value)


def test_cli_run_compares_a_python_class_with_builtins(tmp_path):
    r = cli("run", "bufferbloat", "--set", "duration=6s", "--qdisc", "codel,aqmlab.examples.codel:Codel",
            "--json", "--no-plot", "--out", str(tmp_path))  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    a, b = d["codel"], d["aqmlab.examples.codel:Codel"]
    assert a["links"]["down"]["queue_delay_ms"] == b["links"]["down"]["queue_delay_ms"]
    assert a["links"]["down"]["drops"] == b["links"]["down"]["drops"] > 0


def test_cli_errors(tmp_path):
    write(tmp_path, "broken", BROKEN)
    # the current directory is importable, as with python -m
    r = cli("run", "bufferbloat", "--qdisc", "broken:NoDequeue", "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "has no method dequeue" in r.stderr
    r = cli("run", "bufferbloat", "--qdisc", "broken:Raises", "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "Traceback" in r.stderr and "raise KeyError" in r.stderr and "panic" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: topology.down.qdisc (broken:Raises.enqueue)")


def test_sweep_workers_import_the_users_module(tmp_path):
    write(tmp_path, "rdrop", RANDOM_DROP)
    f = tmp_path / "sw.toml"
    f.write_text(textwrap.dedent("""
        base = "bufferbloat"
        name = "py"
        reps = 2
        [set]
        duration = "3s"
        [grid]
        topology.down.qdisc = [{ kind = "python", class = "rdrop:RandomDrop", p = 0.01 },
                               { kind = "python", class = "aqmlab.examples.codel:Codel" }, "codel"]
    """))  # fmt: skip
    r = cli("sweep", str(f), "--jobs", "2", "--out", str(tmp_path / "o"), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    assert len(rows) == 6 and all(x["status"] == "ok" for x in rows)
    by = {}
    for x in rows:
        by.setdefault(json.dumps(x["topology.down.qdisc"], sort_keys=True), []).append(
            x["queue_delay_p95_ms"]
        )
    py, builtin = by[json.dumps(PYCODEL, sort_keys=True)], by['"codel"']
    assert sorted(py) == sorted(builtin)


def test_reproduce_puts_a_python_class_next_to_the_studys_cases(tmp_path):
    from aqmlab.reproduce import transients2014 as T

    cls = PYCODEL["class"]
    o = T.run(reps=1, loads=["1+1"], qdiscs=["codel", cls, "fq_codel"], ex=Execution(out=tmp_path, jobs=2))
    assert o.sweeps[0].failed == []
    res = o.results
    assert res["runs"][cls]["1+1"] == res["runs"]["fq_codel"]["1+1"] == 1
    assert res["early_drops_total"]["codel"]["1+1"] > 0
    # The class with the study's CoDel (ns-2's codel.cc) gives the study's codel cell exactly.
    spec = T.spec_for(1, "11", ["1+1"], ["codel", cls])
    axis = next(a for a in spec.axes if "params.qdisc" in a)
    i = axis["params.qdisc"].index(cls)
    axis["topology.down.qdisc"][i] = {**axis["topology.down.qdisc"][i], "variant": "ns2"}
    ex = Execution(out=tmp_path / "ns2", jobs=2)
    runs = ex.sweep(spec, T.METRICS_FN, keep=("flows", "links", "rate_schedule")).table
    same = T.aggregate(runs, T._delays(tmp_path / "ns2", runs), ["1+1"], ["codel", cls])
    for metric in ("queue_delay_p95_s", "queue_delay_max_median_s", "early_drops_total"):
        assert same[metric][cls]["1+1"] == same[metric]["codel"]["1+1"] == res[metric]["codel"]["1+1"], metric


def test_sweep_qdisc_option(tmp_path):
    f = tmp_path / "sw.toml"
    f.write_text('base = "bufferbloat"\nname = "q"\n[set]\nduration = "2s"\n')
    r = cli(
        "sweep",
        str(f),
        "--qdisc",
        "pfifo,aqmlab.examples.codel:Codel",
        "--json",
        "--out",
        str(tmp_path / "o"),
    )
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    assert sorted(x["qdisc"] for x in rows) == ["aqmlab.examples.codel:Codel", "pfifo"]
    r = cli("sweep", str(f), "--qdisc", "nosuch", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "--qdisc: 'nosuch' is not allowed" in r.stderr


def test_the_doc_states_the_per_flow_queue_limitation_and_names_every_built_in_alternative():
    # the alternatives named are the disciplines the core declares as keeping one queue per flow
    import re

    from aqmlab.reproduce.metrics import flow_queue_qdiscs

    doc = (Path(__file__).parents[2] / "docs" / "python-qdisc.md").read_text()
    section = doc.split("### Limitation: one queue, no per-flow queues", 1)[1].split("\n## ", 1)[0]
    assert "cannot keep packets in separate per-flow queues" in " ".join(section.split())
    assert flow_queue_qdiscs() <= set(re.findall(r"`(\w+)`", section)), section
