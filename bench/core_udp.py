"""Core speed of aqmlab: UDP overload through one bottleneck.

    python bench/core_udp.py [--quick] [--reps 3] [--duration 125] [--qdiscs pfifo,codel,...]

Part 1: 4 CBR UDP flows of 300 Mb/s each (1.2x overload) of 1500-byte packets into a 1 Gb/s link
with a 1000-packet pfifo, long enough for >= 10 M bottleneck packets (125 s = 10.4 M), once
with recording level ``summary`` (off) and once with ``packets`` (one row per packet). Prints
bottleneck packets per wall-second, events per packet and the child process's peak RSS
(median of --reps runs, with min-max). Target: >= 3 M packets per wall-second with recording off.

Part 2: the same overload (--qdisc-duration, default 30 s) through each discipline with
recording off, so the cost of the disciplines themselves shows.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_rate, machine, median_spread, run_child, stamp

QDISCS = (
    "pfifo,bfifo,pfifo_head_drop,codel,pie,red,ared,blue,choke,fq_codel,fq_nocodel,fq_pie,sfq,drr,sfq_codel"
)


def udp_overload(duration: float, qdisc: str, level: str, flows: int = 4) -> dict:
    down = {"rate": "1Gbps", "qdisc": qdisc}
    if qdisc in ("pfifo", "pfifo_head_drop"):
        down["limit"] = "1000p"
    per_flow = 1200 // flows
    return {
        "name": f"udp_overload_{qdisc}",
        "duration": f"{duration}s",
        "seed": 1,
        "topology": {
            "rtt": "50ms",
            "down": down,
            "up": {"rate": "1Gbps", "qdisc": "pfifo", "limit": "1000p"},
        },
        "flows": [
            {"kind": "udp", "direction": "down", "rate": f"{per_flow}Mbps", "packet_size": "1500B"}
            for _ in range(flows)
        ],
        "record": {"level": level, "max_rows": 10**9},  # large on purpose: a benchmark
    }


def measure(sc: dict, reps: int) -> dict:
    runs = [run_child(sc) for _ in range(reps)]
    pps = [r["pkts_per_wall_s"] for r in runs]
    rss = [r["peak_rss_mb"] for r in runs]
    return {"pps": median_spread(pps), "rss": median_spread(rss), "r": runs[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="12 s runs (1 M packets), 1 repetition")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=125.0)
    ap.add_argument("--qdisc-duration", type=float, default=30.0)
    ap.add_argument("--qdiscs", default=QDISCS)
    ap.add_argument("--skip-qdiscs", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.duration, a.qdisc_duration, a.reps = 12.0, 6.0, 1
    print(f"# core_udp  {stamp()}  {machine()}  reps={a.reps}")
    print(f"## 4 x 300 Mb/s CBR UDP -> 1 Gb/s pfifo 1000p, {a.duration:g} s")
    print("| recording | bottleneck pkts | pkts/wall-s (median, min-max) | events/pkt | peak RSS MB |")
    print("|---|---:|---:|---:|---:|")
    for level in ("summary", "packets"):
        m = measure(udp_overload(a.duration, "pfifo", level), a.reps)
        (p, plo, phi), (rss, _, _), r = m["pps"], m["rss"], m["r"]
        print(
            f"| {level} | {r['tx_packets']:,} | {fmt_rate(p)} ({fmt_rate(plo)}-{fmt_rate(phi)}) "
            f"| {r['events_per_packet']:.2f} | {rss:.0f} |",
            flush=True,
        )
    if a.skip_qdiscs:
        return
    print(f"\n## disciplines: same overload, {a.qdisc_duration:g} s, recording off")
    print("| qdisc | bottleneck pkts | pkts/wall-s (median, min-max) | events/pkt | utilization | drops |")
    print("|---|---:|---:|---:|---:|---:|")
    for q in a.qdiscs.split(","):
        m = measure(udp_overload(a.qdisc_duration, q, "summary"), a.reps)
        (p, plo, phi), r = m["pps"], m["r"]
        print(
            f"| {q} | {r['tx_packets']:,} | {fmt_rate(p)} ({fmt_rate(plo)}-{fmt_rate(phi)}) "
            f"| {r['events_per_packet']:.2f} | {r['utilization']:.3f} | {r['drops']:,} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
