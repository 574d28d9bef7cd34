"""Accuracy and cost of the emulator (`aqmlab emulate`) on this machine. Needs root, iperf3, ping.

  python bench/emulate.py [--quick]

Prints one table per question (figures recorded in bench/LOG.md, "Emulator"):
  rate   - UDP offered at 1.1x the link rate: the rate the bottleneck achieved, from the
           forwarder's own count (queue table) and from the receiving iperf3 (IP bytes), against
           the configured rate, after a 1 s warm-up.
  ping   - an unloaded 50 ms path, 84-byte pings every 20 ms: the RTT minus the configured
           propagation and serialisation (the delay the emulator adds), p50 / p99 / max.
  aqm    - 4 CUBIC flows through codel and fq_codel: sojourn percentiles against CoDel's 5 ms
           target, and the utilisation.
  cost   - CPU time of the forwarding thread per forwarded packet, and the highest UDP rate
           the forwarder carries without losing more than 1 % of what is offered.
"""

from __future__ import annotations

import argparse
import os
import statistics

import numpy as np

from aqmlab import metrics
from aqmlab.emulate import emulate

RTT_MS = 50.0


def scenario(rate_mbps: float, qdisc, flows: list[dict], duration_s: float, name: str) -> dict:
    link = {"rate": f"{rate_mbps:g}Mbps", "qdisc": qdisc, "limit": "1000p"}
    return {
        "name": name,
        "duration": f"{duration_s:g}s",
        "topology": {"rtt": f"{RTT_MS:g}ms", "down": link, "up": dict(link)},
        "flows": flows,
    }


def udp(rate_bps: float) -> dict:
    """A CBR UDP flow whose IP rate is `rate_bps` (iperf3's -b counts the 1472-byte payload)."""
    return {
        "kind": "udp",
        "direction": "down",
        "rate": f"{rate_bps * 1472 / 1500:.0f}bps",
        "packet_size": "1500B",
    }


def rate_case(rate_mbps: float, duration: float) -> dict:
    res, _ = emulate(
        scenario(rate_mbps, "pfifo", [udp(1.1 * rate_mbps * 1e6)], duration, "bench_rate"), warmup_s=1
    )
    q = res.df("queue")
    q = q[q["dir"] == "down"]
    w = q[q["t_ns"] >= 1e9]
    fwd = (
        (w["tx_bytes"].iloc[-1] - w["tx_bytes"].iloc[0])
        * 8
        / ((w["t_ns"].iloc[-1] - w["t_ns"].iloc[0]) / 1e9)
    )
    fs = res.df("flow_series")
    fs = fs[fs["t_ns"] >= 1e9]
    rcv = (fs["delivered_bytes"].iloc[-1] - fs["delivered_bytes"].iloc[0]) * 8 * 1500 / 1472
    rcv /= (fs["t_ns"].iloc[-1] - fs["t_ns"].iloc[0]) / 1e9
    return {"res": res, "fwd": fwd, "rcv": rcv}


def ping_case(rate_mbps: float, duration: float) -> dict:
    flows = [{"kind": "ping", "interval": "20ms"}]
    res, _ = emulate(scenario(rate_mbps, "pfifo", flows, duration, "bench_ping"))
    p = res.df("probes")
    floor = RTT_MS + 2 * 84 * 8 / (rate_mbps * 1e6) * 1e3
    added = p["rtt_ns"].dropna().to_numpy() / 1e6 - floor
    return {"res": res, "added": added, "lost": int(p["lost"].sum()), "n": len(p)}


def aqm_case(rate_mbps: float, qdisc: str, duration: float) -> dict:
    flows = [{"kind": "tcp", "direction": "down", "cc": "cubic", "count": 4}]
    res, _ = emulate(scenario(rate_mbps, qdisc, flows, duration, "bench_aqm"), warmup_s=2)
    d = metrics.sojourn_delays_ns(res.tables, res.meta, "down", warmup_s=2) / 1e6
    return {"res": res, "sojourn": d, "util": res.summary["links"]["down"]["utilization"]}


def cpu_us(res) -> float:
    e = res.meta["emulator"]
    return e["cpu_s"] / e["packets"] * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter runs")
    a = ap.parse_args()
    dur = 3.0 if a.quick else 6.0
    print(f"kernel {os.uname().release}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    cpu = []
    print("\nrate: configured / forwarder-counted / receiver-counted (IP bytes), error %")
    for r in (10, 100):
        c = rate_case(r, dur)
        cpu.append(cpu_us(c["res"]))
        print(
            f"  {r:>4} Mb/s  fwd {c['fwd'] / 1e6:8.3f} ({100 * (c['fwd'] / (r * 1e6) - 1):+.2f} %)"
            f"  rcv {c['rcv'] / 1e6:8.3f} ({100 * (c['rcv'] / (r * 1e6) - 1):+.2f} %)"
        )
    print("\nping on an unloaded 50 ms path: added delay (RTT - propagation - serialisation), ms")
    for r in (10, 100):
        c = ping_case(r, dur)
        x = c["added"]
        e = c["res"].meta["emulator"]
        print(
            f"  {r:>4} Mb/s  n {c['n']}  lost {c['lost']}  p50 {np.percentile(x, 50):.3f}  "
            f"p99 {np.percentile(x, 99):.3f}  max {x.max():.3f}  min {x.min():.3f}  "
            f"(forwarder wake-up lateness p99 {e['late_us_p99']} us, SCHED_FIFO {e['realtime']})"
        )
    print("\naqm: 4 CUBIC flows, sojourn ms after 2 s (CoDel target 5 ms), utilisation")
    for r in (10, 100):
        for q in ("codel", "fq_codel"):
            c = aqm_case(r, q, dur + 2)
            cpu.append(cpu_us(c["res"]))
            s = c["sojourn"]
            print(
                f"  {r:>4} Mb/s {q:<9} p50 {np.percentile(s, 50):6.2f}  p95 {np.percentile(s, 95):6.2f}  "
                f"p99 {np.percentile(s, 99):6.2f}  util {100 * c['util']:.1f} %"
            )
    print("\ncost: CPU per forwarded packet (us), runs above:", " ".join(f"{x:.1f}" for x in cpu))
    print(f"  median {statistics.median(cpu):.1f} us")
    print("highest rate: UDP offered at 0.95x the link rate; delivered / offered")
    for r in (200, 400, 800):
        res, _ = emulate(scenario(r, "pfifo", [udp(0.95 * r * 1e6)], 3.0, "bench_max"))
        f = res.summary["flows"][0]
        row = res.tables["flows"].to_pylist()[0]
        ratio = row["bytes_delivered"] / max(1, row["bytes_sent"])
        print(
            f"  {r:>4} Mb/s  delivered/offered {ratio:.4f}  goodput {f['goodput_mbps']:.1f} Mb/s  "
            f"CPU {cpu_us(res):.1f} us/packet, {res.meta['emulator']['cpu_s'] / res.meta['emulator']['wall_s']:.2f} of a core"
        )


if __name__ == "__main__":
    main()
