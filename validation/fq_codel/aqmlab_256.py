"""aqmlab's fq_codel with N CUBIC flows at 100 Mb/s (bench/compare.py's ns-3 run) under ns-3's
TCP settings and 1-packet device queue; statistics after 5 s.

    python validation/fq_codel/aqmlab_256.py FLOWS DURATION_S SEEDS NAME=JSON...
    e.g. ... 256 10 1 'linux={}' 'ns3guard={"guard_scope":"flow","mtu":"1499B"}' 'nodq={"dq":false}'
"""

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import numpy as np
import run as V

import aqmlab


# 256 CUBIC flows, 100 Mb/s, 50 ms, fq_codel default limit (10240p), ns-3's TCP settings and 1p device queue,
# no ping, 10 s, stats after 5 s (bench/compare.py's ns-3 run).
def scen(qd, tcpo, dur, n, dq):
    tcp = {**V.NS3_TCP, **tcpo}
    down = {"rate": "100Mbps", "qdisc": qd}
    if dq:
        down["device_queue"] = "1p"
    return {
        "name": "x",
        "duration": f"{dur}s",
        "topology": {
            "rtt": "50ms",
            "down": down,
            "up": {"rate": "100Mbps", "qdisc": "pfifo", "limit": "1000p"},
        },
        "flows": [dict(tcp, label=f"t{i}") for i in range(n)],
        "record": {"level": "packets", "interval": "1s"},
    }


n = int(sys.argv[1])
dur = float(sys.argv[2])
seeds = [int(s) for s in sys.argv[3].split(",")]
for spec in sys.argv[4:]:
    name, _, js = spec.partition("=")
    o = json.loads(js or "{}")
    tcpo = o.pop("tcp", {})
    dq = o.pop("dq", True)
    qd = {"kind": "fq_codel", "ecn": False}
    qd.update(o)
    rs = []
    for s in seeds:
        r = aqmlab.run(scen(qd, tcpo, dur, n, dq), seed=s)
        pk = r.tables["packets"].to_pandas()
        pk = pk[
            (pk.dir == "down")
            & (pk.t_enqueue_ns >= 5e9)
            & pk.outcome.isin(["sent", "marked", "head", "fat_flow"])
        ]
        soj = (pk.t_out_ns - pk.t_enqueue_ns).to_numpy() / 1e6
        gp = sum(V.metrics.goodput_bps(r.tables, r.meta, f, warmup_s=5.0) for f in range(n)) / 1e6
        d = r.summary["links"]["down"]
        # Packets of each flow in the qdisc, sampled every 5 ms after the warmup: the mean over
        # flows with at least one, and the fraction of all flows with more than one.
        q = pk_all = r.tables["packets"].to_pandas()
        q = pk_all[(pk_all.dir == "down") & (pk_all.t_out_ns >= 5e9)]
        ts = np.arange(5e9, dur * 1e9, 5e6)
        occ = np.zeros((n, len(ts)))
        for f, g in q.groupby("flow"):
            if f < n:
                occ[f] = np.searchsorted(np.sort(g.t_enqueue_ns.to_numpy()), ts, "right") - np.searchsorted(
                    np.sort(g.t_out_ns.to_numpy()), ts, "right"
                )
        # Own-flow packets ahead of each measured packet when it arrived (per-flow FIFO order).
        ahead = np.zeros(len(q), dtype=np.int64)
        for _f, g in q.groupby("flow"):
            g = g.sort_values("t_enqueue_ns")
            outs = np.sort(g.t_out_ns.to_numpy())
            ahead[q.index.get_indexer(g.index)] = np.arange(len(g)) - np.searchsorted(
                outs, g.t_enqueue_ns.to_numpy(), "right"
            )
        q = q.assign(ahead=ahead)
        m0 = q.loc[pk.index].ahead.to_numpy() == 0
        fl = r.tables["flows"].to_pandas()
        fs = r.tables["flow_series"].to_pandas()
        cw = fs[(fs.t_ns > 5e9) & (fs.flow < n)].cwnd_bytes.to_numpy() / 1448
        rs.append(
            {
                "p50": np.percentile(soj, 50),
                "p95": np.percentile(soj, 95),
                "mean": soj.mean(),
                "gp": gp,
                "drops": d["drops"],
                "fat": d["drops_by_reason"].get("fat_flow", 0),
                "rtos": float(fl.rto_count.sum()),
                "backlog": len(soj) / (dur - 5.0) * soj.mean() / 1e3,
                "perq": occ[occ > 0].mean(),
                "gt1": (occ > 1).mean(),
                "cwnd": cw.mean(),
                "cwnd_le2": (cw <= 2).mean(),
                "alone": m0.mean(),
                "p50_alone": np.percentile(soj[m0], 50),
                "p50_behind": np.percentile(soj[~m0], 50),
            }
        )
    m = {k: statistics.mean(float(r[k]) for r in rs) for k in rs[0]}
    print(
        f"{name:<26} p50 {m['p50']:6.2f} p95 {m['p95']:6.2f} mean {m['mean']:6.2f} gp {m['gp']:6.2f} drops {m['drops']:7.0f} fat {m['fat']:6.0f}"
        f" rtos(all) {m['rtos']:5.0f} backlog {m['backlog']:6.1f}p per-queue {m['perq']:4.2f}p >1p {m['gt1']:.2f}"
        f" cwnd {m['cwnd']:5.2f} cwnd<=2 {m['cwnd_le2']:.2f}"
        f" alone {m['alone']:.2f} p50 alone/behind {m['p50_alone']:5.2f}/{m['p50_behind']:5.2f}",
        flush=True,
    )
