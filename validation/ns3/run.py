#!/usr/bin/env python3
"""ns-3 side of the aqmlab AQM cross-check (stdlib only).

Runs the ns-3 dumbbell (bench/ns3/dumbbell.cc) for the validation scenarios
and prints, per queue disc, the bottleneck queue delay p50/p95, the goodput
and the ping RTT; writes everything to validation/ns3/out/ns3.json.

Scenarios (see README.md for every ns-3 setting):
  n4      10 Mb/s bottleneck, 50 ms base RTT, 4 CUBIC flows, 60 s, ping 100 ms
  n1_ping 10 Mb/s bottleneck, 50 ms base RTT, 1 CUBIC flow,  60 s, ping 100 ms
each with CoDel, PIE, FQ-CoDel and RED, a 1000-packet limit on every qdisc,
seeds 1..3 (the seed moves the flow start times, drawn uniform in [0, 1) s).

Importable: ``ns3_results(...) -> dict`` returns the same structure that is
written to ns3.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
OUT_JSON = HERE / "out" / "ns3.json"

QDISCS = ["codel", "pie", "fq_codel", "red"]
# name -> (flows, ping interval in s)
SCENARIOS: dict[str, tuple[int, float]] = {"n4": (4, 0.1), "n1_ping": (1, 0.1)}
SETTINGS = {
    "rate": "10Mbps",
    "rtt": "50ms",
    "access_rate": "1Gbps",
    "access_delay_ms": 1.0,
    "bottleneck_delay_ms": 23.0,
    "duration_s": 60.0,
    "warmup_s": 5.0,
    "cc": "cubic",
    "limit_pkts": 1000,
    "ecn": False,
    "mtu_bytes": 1500,
    "mss_bytes": 1448,
}


def _bench_module():
    """Load bench/ns3/run.py (a sibling 'run' module) under a unique name."""
    path = REPO / "bench" / "ns3" / "run.py"
    spec = importlib.util.spec_from_file_location("aqmlab_bench_ns3_run", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _summary(runs: list[dict]) -> dict:
    """Mean over seeds of the metrics the cross-check compares."""

    def mean(get) -> float:
        return statistics.fmean(get(r) for r in runs)

    out = {
        "queue_delay_p50_ms": mean(lambda r: r["queue_delay_ms"]["p50"]),
        "queue_delay_p95_ms": mean(lambda r: r["queue_delay_ms"]["p95"]),
        "queue_delay_mean_ms": mean(lambda r: r["queue_delay_ms"]["mean"]),
        "goodput_mbps": mean(lambda r: r["goodput_mbps"]),
        "drops": mean(lambda r: r["drops"]),
        "marks": mean(lambda r: r["marks"]),
        "seeds": [r["seed"] for r in runs],
    }
    if all("ping_rtt_ms" in r for r in runs):
        out["ping_rtt_p50_ms"] = mean(lambda r: r["ping_rtt_ms"]["p50"])
        out["ping_rtt_p95_ms"] = mean(lambda r: r["ping_rtt_ms"]["p95"])
    return out


def ns3_results(
    scenarios: list[str] | None = None,
    qdiscs: list[str] | None = None,
    seeds: tuple[int, ...] = (1, 2, 3),
    duration: float = SETTINGS["duration_s"],
) -> dict:
    """Run ns-3 for the cross-check scenarios.

    Returns {"settings": ..., "scenarios": {name: {qdisc: {"summary": ...,
    "runs": [full JSON of each run], "qdisc_attributes": {...}}}}}.
    """
    bench = _bench_module()
    result: dict = {
        "simulator": "ns-3.44 (PyPI ns3==3.44.post0)",
        "settings": dict(SETTINGS),
    }
    result["settings"]["duration_s"] = duration
    result["scenarios"] = {}
    for name in scenarios or list(SCENARIOS):
        flows, ping = SCENARIOS[name]
        per_q: dict = {}
        for q in qdiscs or QDISCS:
            runs = [
                bench.run_ns3(
                    flows,
                    SETTINGS["rate"],
                    q,
                    duration,
                    cc=SETTINGS["cc"],
                    rtt=SETTINGS["rtt"],
                    limit=SETTINGS["limit_pkts"],
                    ecn=SETTINGS["ecn"],
                    seed=seed,
                    ping_interval=ping,
                    warmup=SETTINGS["warmup_s"],
                    dump_config=True,
                )
                for seed in seeds
            ]
            attrs = runs[0].get("qdisc_attributes", {})
            for r in runs:
                r.pop("qdisc_attributes", None)
            per_q[q] = {
                "flows": flows,
                "ping_interval_s": ping,
                "summary": _summary(runs),
                "qdisc_type": runs[0].get("qdisc_type"),
                "qdisc_attributes": attrs,
                "runs": runs,
            }
        result["scenarios"][name] = per_q
    return result


def _table(res: dict) -> str:
    lines = []
    hdr = (
        f"{'scenario':<9} {'qdisc':<9} {'qdelay_p50':>10} {'qdelay_p95':>10} {'goodput':>8} "
        f"{'ping_p50':>8} {'ping_p95':>8} {'drops':>7}"
    )
    lines.append(hdr)
    for name, per_q in res["scenarios"].items():
        for q, d in per_q.items():
            s = d["summary"]
            lines.append(
                f"{name:<9} {q:<9} {s['queue_delay_p50_ms']:>10.2f} {s['queue_delay_p95_ms']:>10.2f} "
                f"{s['goodput_mbps']:>8.3f} {s.get('ping_rtt_p50_ms', float('nan')):>8.2f} "
                f"{s.get('ping_rtt_p95_ms', float('nan')):>8.2f} {s['drops']:>7.0f}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--duration",
        type=float,
        default=SETTINGS["duration_s"],
        help="simulated seconds (60)",
    )
    ap.add_argument("--seeds", default="1,2,3", help="comma list of seeds (default 1,2,3)")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma list: n4,n1_ping")
    ap.add_argument("--qdiscs", default=",".join(QDISCS), help="comma list: codel,pie,fq_codel,red")
    ap.add_argument("--out", type=Path, default=OUT_JSON)
    ns = ap.parse_args(argv)

    res = ns3_results(
        scenarios=[s for s in ns.scenarios.split(",") if s],
        qdiscs=[q for q in ns.qdiscs.split(",") if q],
        seeds=tuple(int(s) for s in ns.seeds.split(",") if s),
        duration=ns.duration,
    )
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    ns.out.write_text(json.dumps(res, indent=1) + "\n")
    print(_table(res))
    summary = {n: {q: d["summary"] for q, d in pq.items()} for n, pq in res["scenarios"].items()}
    print(json.dumps(summary))
    print(f"written {ns.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
