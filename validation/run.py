#!/usr/bin/env python3
"""Cross-check of aqmlab's AQMs against ns-3 3.44 (issue: every queue discipline).

Runs aqmlab on the scenarios of validation/ns3 (10 Mb/s, 50 ms, CUBIC, 4 flows or 1 flow, a
100 ms ping, 60 s, statistics after 5 s) with CoDel, PIE (RFC 8033), FQ-CoDel and RED configured
exactly as validation/ns3/README.md documents ns-3's, and prints both side by side with the
relative difference. ns-3's numbers come from validation/ns3/out/ns3.json (run
`python3 validation/ns3/run.py` first, or pass --run-ns3).

    python validation/run.py [--run-ns3] [--seeds 1,2,3]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
from pathlib import Path

import numpy as np

import aqmlab
from aqmlab import metrics

HERE = Path(__file__).resolve().parent
NS3_JSON = HERE / "ns3" / "out" / "ns3.json"
WARMUP_S = 5.0

# The ns-3 settings of validation/ns3/README.md, in aqmlab's terms.
QDISCS = {
    # ns-3 CoDel is a port of Linux codel.h: Newton step, strict first-drop test, 1500 B guard.
    "codel": {"kind": "codel", "variant": "linux", "target": "5ms", "interval": "100ms"},
    # ns-3 PieQueueDisc: RFC 8033, timestamps, cap on, no derandomisation, updates from t = 0.
    "pie": {
        "kind": "pie",
        "profile": "rfc8033",
        "derandomize": False,
        "cap": True,
        "estimator": "timestamp",
        "first_update": "15ms",
    },
    "fq_codel": {"kind": "fq_codel", "ecn": False, "quantum": "1500B", "flows": 1024},
    # The same with ns-3's per-flow MTU guard (compared with ns-3's fq_codel row). ns-3's CoDel
    # exempts a flow while its own bytes are *below* MinBytes (1500): strictly less, where aqmlab's
    # guard is "at most mtu", hence mtu = 1499 B (with 1500 B packets: only an emptied flow is exempt).
    "fq_codel_flowguard": {
        "kind": "fq_codel",
        "ecn": False,
        "quantum": "1500B",
        "flows": 1024,
        "guard_scope": "flow",
        "mtu": "1499B",
    },
    # ns-3 RED: 5/15 packets, w_q 0.002, max_p 1/50, gentle, wait, mean packet size 500 B.
    "red": {
        "kind": "red",
        "min_th": 5.0,
        "max_th": 15.0,
        "w_q": 0.002,
        "max_p": 0.02,
        "gentle": True,
        "wait": True,
        "mean_pktsize": "500B",
    },
}
NS3_NAME = {"fq_codel_flowguard": "fq_codel"}
SCENARIOS = {"n4": 4, "n1_ping": 1}


# ns-3's TCP settings (validation/ns3/README.md); one [[flows]] entry per flow, so each flow
# draws its own start in [0, 1) s, as ns-3's applications do.
NS3_TCP = {
    "kind": "tcp",
    "cc": "cubic",
    "iw": 10,
    "min_rto": "1s",
    "delack": "200ms",
    "sack": True,
    "start": {"uniform": ["0s", "1s"]},
}


def scenario(flows: int, qdisc: dict) -> dict:
    """The dumbbell of validation/ns3: each flow starts at its own uniform time in [0, 1) s."""
    tcp = NS3_TCP
    return {
        "name": "ns3-crosscheck",
        "duration": "60s",
        "topology": {
            "rtt": "50ms",
            # ns-3's bottleneck NetDevice keeps a 1-packet transmit queue below the qdisc.
            "down": {"rate": "10Mbps", "qdisc": qdisc, "limit": "1000p", "device_queue": "1p"},
            "up": {"rate": "10Mbps", "qdisc": "pfifo", "limit": "1000p"},
        },
        "flows": [dict(tcp, label=f"tcp{i}") for i in range(flows)] + [{"kind": "ping", "interval": "100ms"}],
        "record": {"level": "packets", "interval": "1s"},
    }


def one_run(flows: int, qdisc: str, seed: int) -> dict:
    r = aqmlab.run(scenario(flows, QDISCS[qdisc]), seed=seed)
    t, m = r.tables, r.meta
    # ns-3's SojournTime trace fires at every dequeue, also for packets CoDel then drops at the
    # head: measure the same set here (sent, marked and head-dropped packets).
    pk = t["packets"].to_pandas()
    pk = pk[
        (pk.dir == "down") & (pk.t_enqueue_ns >= WARMUP_S * 1e9) & pk.outcome.isin(["sent", "marked", "head"])
    ]
    soj = (pk.t_out_ns - pk.t_enqueue_ns).to_numpy() / 1e6
    q = {"p50": float(np.percentile(soj, 50)), "p95": float(np.percentile(soj, 95))}
    goodput = sum(metrics.goodput_bps(t, m, f, warmup_s=WARMUP_S) for f in range(flows)) / 1e6
    ping = metrics.probe_rtt_ms(t, flows, warmup_s=WARMUP_S)
    return {
        "queue_delay_p50_ms": q["p50"],
        "queue_delay_p95_ms": q["p95"],
        "goodput_mbps": goodput,
        "ping_rtt_p50_ms": float(np.median(ping)) if len(ping) else None,
        "drops": r.summary["links"]["down"]["drops"],
    }


def aqmlab_results(seeds: list[int]) -> dict:
    out: dict = {}
    for name, flows in SCENARIOS.items():
        for q in QDISCS:
            runs = [one_run(flows, q, s) for s in seeds]
            out.setdefault(name, {})[q] = {k: statistics.mean(r[k] for r in runs) for k in runs[0]}
    return out


def ns3_module():
    spec = importlib.util.spec_from_file_location("aqmlab_ns3_validation", HERE / "ns3" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run-ns3", action="store_true", help="run the ns-3 side now (needs bench/ns3/build.sh)")
    ap.add_argument("--seeds", default="1,2,3")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.run_ns3:
        ns3 = ns3_module().ns3_results(seeds=tuple(seeds))
    elif NS3_JSON.exists():
        ns3 = json.loads(NS3_JSON.read_text())
    else:
        print(
            f"no ns-3 results at {NS3_JSON}; run python3 validation/ns3/run.py or pass --run-ns3",
            file=sys.stderr,
        )
        return 2
    ours = aqmlab_results(seeds)
    keys = ["queue_delay_p50_ms", "queue_delay_p95_ms", "goodput_mbps", "ping_rtt_p50_ms"]
    head = f"{'scenario':<9} {'qdisc':<18}" + "".join(f" {k:>28}" for k in keys)
    print(head)
    print("-" * len(head))
    for name in SCENARIOS:
        for q in QDISCS:
            a = ours[name][q]
            b = ns3["scenarios"][name][NS3_NAME.get(q, q)]["summary"]
            cells = []
            for k in keys:
                x, y = a.get(k), b.get(k)
                diff = f"{100 * (x - y) / y:+.0f}%" if x is not None and y else "-"
                cells.append(
                    f" {x:>8.2f} vs {y:>7.2f} ({diff:>5})" if x is not None and y is not None else " " * 29
                )
            print(f"{name:<9} {q:<18}" + "".join(cells))
    print("(aqmlab vs ns-3, mean over seeds " + ",".join(map(str, seeds)) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
