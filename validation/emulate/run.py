#!/usr/bin/env python3
"""Cross-check of aqmlab's TCP model against the Linux kernel on the same path and qdisc.

Each case runs twice: simulated with the `linux` TCP profile (`aqmlab.run`) and emulated with the
kernel's controller of the same name (`aqmlab emulate`: iperf3 between two namespaces through the
same qdisc code). Cases per controller (`--cc`): CUBIC with 1 and 4 bulk flows (down) through
pfifo / codel / pie / fq_codel; BBR with 1 flow through pfifo / fq_codel; 10 and 50 Mb/s, 50 ms
base RTT, 1000-packet limit, a 100 ms ping. Statistics after the warm-up. Writes
out/results.json (out/results_bbr.json for BBR) and prints the table of
validation/emulate/README.md. Needs root, iperf3 and ping.

    python validation/emulate/run.py [--cc cubic] [--duration 12] [--warmup 4] [--rates 10,50]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

import aqmlab
from aqmlab import metrics
from aqmlab.emulate import emulate

HERE = Path(__file__).resolve().parent
# Per controller: the flow counts and the qdiscs of its cases, and where its results go.
CASES = {
    "cubic": ([1, 4], ["pfifo", "codel", "pie", "fq_codel"], "results.json"),
    "bbr": ([1], ["pfifo", "fq_codel"], "results_bbr.json"),
}


def scenario(rate: int, qdisc: str, n: int, duration: float, cc: str = "cubic") -> dict:
    link = {"rate": f"{rate}Mbps", "qdisc": qdisc, "limit": "1000p"}
    return {
        "name": f"xcheck_{cc}_{qdisc}_{rate}m_{n}f",
        "duration": f"{duration:g}s",
        "topology": {"rtt": "50ms", "down": link, "up": dict(link)},
        "flows": [
            {"kind": "tcp", "direction": "down", "cc": cc, "count": n, "profile": "linux"},
            {"kind": "ping", "interval": "100ms"},
        ],
    }


def figures(res, warmup: float) -> dict:
    s = res.summary
    t, m = res.tables, res.meta
    d = metrics.sojourn_delays_ns(t, m, "down", warmup_s=warmup) / 1e6
    tcp = [f for f in s["flows"] if f["kind"] == "tcp"]
    probes = s["probes"][0]["rtt_ms"] if s["probes"] else {}
    pct = [float(x) for x in np.percentile(d, [50, 95, 99])] if len(d) else [None] * 3
    return {
        "goodput": sum(f["goodput_mbps"] or 0 for f in tcp),
        "q50": pct[0],
        "q95": pct[1],
        "q99": pct[2],
        # over the whole run, like the retransmissions the kernel and the model count
        "drops": sum(v for k, v in t["links"].to_pylist()[down_row(t)].items() if k.startswith("drops_")),
        "retx": sum(f["retransmits"] or 0 for f in tcp),
        "rtt50": probes.get("p50"),
    }


def down_row(tables) -> int:
    return [r["dir"] for r in tables["links"].to_pylist()].index("down")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=12.0)
    ap.add_argument("--warmup", type=float, default=4.0)
    ap.add_argument("--rates", default="10,50")
    ap.add_argument("--cc", choices=list(CASES), default="cubic")
    a = ap.parse_args()
    flows, qdiscs, out_name = CASES[a.cc]
    rows = []
    for rate in [int(r) for r in a.rates.split(",")]:
        for n in flows:
            for q in qdiscs:
                sc = scenario(rate, q, n, a.duration, a.cc)
                sim = figures(aqmlab.run(sc, warmup_s=a.warmup), a.warmup)
                res, _ = emulate(sc, warmup_s=a.warmup)
                emu = figures(res, a.warmup)
                emu["problems"] = res.meta["emulated"]["problems"]
                rows.append({"rate": rate, "flows": n, "qdisc": q, "sim": sim, "emu": emu})
                print(json.dumps(rows[-1]), flush=True)
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / out_name).write_text(json.dumps(rows, indent=1))
    print(table(rows))


def table(rows: list[dict]) -> str:
    cols = [("goodput", "goodput Mb/s", 2), ("q50", "qdelay p50 ms", 1), ("q95", "p95", 1), ("q99", "p99", 1),
            ("rtt50", "ping p50 ms", 1), ("drops", "drops", 0), ("retx", "retx", 0)]  # fmt: skip
    head = "| rate | flows | qdisc | " + " | ".join(f"{c[1]} sim / emu" for c in cols) + " |"
    lines = [head, "|" + "---|" * (3 + len(cols))]
    for r in rows:
        cells = []
        for key, _, nd in cols:
            a, b = r["sim"][key], r["emu"][key]
            cells.append(f"{_f(a, nd)} / {_f(b, nd)}")
        lines.append(f"| {r['rate']} | {r['flows']} | {r['qdisc']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _f(v, nd: int) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


if __name__ == "__main__":
    main()
