"""What PackMime-HTTP web traffic costs per packet.

    python bench/packmime.py [--reps 3] [--duration 60]

4 CUBIC FTPs down a 100 Mb/s bottleneck (codel2012's setup: 100 ms RTT, 833-packet buffer,
CoDel), alone and with a PackMime-HTTP web flow at 5 and 80 new connections per second, recording
off. Prints bottleneck packets per wall-second (both directions, median of --reps with min-max),
events per packet, and the share of the wall time the web load adds per packet.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_rate, machine, median_spread, run_child, stamp


def scenario(duration: float, web: float) -> dict:
    link = {"rate": "100Mbps", "limit": "833p", "qdisc": {"kind": "codel", "variant": "ns2"}}
    tcp = {"profile": "ns2_sack1", "iw": 4, "mss": 1448, "delack": False, "rwnd": "19MB", "sack": True}
    flows = [{"kind": "tcp", "count": 4, "cc": "cubic", **tcp}]
    if web:
        flows.append({"kind": "web", "conn_rate": web, "cc": "newreno", **tcp})
    return {"name": f"packmime_{web}", "duration": f"{duration}s", "seed": 1,
            "topology": {"rtt": "100ms", "nic_rate": "1Gbps", "down": link, "up": dict(link)},
            "flows": flows, "record": {"level": "summary"}}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=60.0)
    a = ap.parse_args()
    print(f"# packmime {stamp()}  {machine()}")
    base = None
    for web in (0, 5, 80):
        rs = [run_child(scenario(a.duration, web)) for _ in range(a.reps)]
        med, lo, hi = median_spread([r["pkts_per_wall_s"] for r in rs])
        ns = 1e9 / med
        base = base or ns
        epp = rs[0]["events_per_packet"]
        print(f"web {web:>3}/s: {fmt_rate(med)} pkts/wall-s ({fmt_rate(lo)}-{fmt_rate(hi)}), "
              f"{ns:.0f} ns/packet ({100 * (ns / base - 1):+.0f}% vs FTPs alone), {epp:.2f} events/packet")  # fmt: skip


if __name__ == "__main__":
    main()
