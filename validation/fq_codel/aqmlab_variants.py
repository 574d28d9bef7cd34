"""aqmlab's fq_codel (or codel) on validation n4/n1_ping with overrides, mean over seeds.

    python validation/fq_codel/aqmlab_variants.py FLOWS SEEDS NAME=JSON...
    e.g. ... 4 1,2,3 'base={}' 'ns3guard={"guard_scope":"flow","mtu":"1499B"}' \
             'prr={"tcp":{"prr":true}}' 'codel={"base":"codel"}'

JSON keys go into the qdisc table of validation/run.py's QDISCS[base] (base: fq_codel by
default); "tcp" is merged into every TCP flow, "topology" into the topology table, "down"
into the bottleneck's link table (e.g. {"down":{"rate":"9986684bps"}}), "ping": false drops
the ping. Prints p50/p95/mean queue delay (ms), goodput, drops, and each seed's p50/p95.
"""

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import numpy as np
import run as V

import aqmlab


def one(flows, qd, seed, warm=5.0):
    r = aqmlab.run(V.scenario(flows, qd), seed=seed)
    t = r.tables
    pk = t["packets"].to_pandas()
    pk = pk[
        (pk.dir == "down") & (pk.t_enqueue_ns >= warm * 1e9) & pk.outcome.isin(["sent", "marked", "head"])
    ]
    soj = (pk.t_out_ns - pk.t_enqueue_ns).to_numpy() / 1e6
    gp = sum(V.metrics.goodput_bps(t, r.meta, f, warmup_s=warm) for f in range(flows)) / 1e6
    return {
        "p50": float(np.percentile(soj, 50)),
        "p95": float(np.percentile(soj, 95)),
        "mean": float(soj.mean()),
        "gp": gp,
        "drops": r.summary["links"]["down"]["drops"],
    }


def main():
    flows = int(sys.argv[1])
    seeds = [int(s) for s in sys.argv[2].split(",")]
    for spec in sys.argv[3:]:
        name, _, js = spec.partition("=")
        o = json.loads(js or "{}")
        tcpo = o.pop("tcp", {})
        topo = o.pop("topology", {})
        down = o.pop("down", {})
        ping = o.pop("ping", True)
        base = o.pop("base", "fq_codel")
        qd = dict(V.QDISCS[base])
        qd.update(o)
        orig = V.scenario

        def sc(fl, q, orig=orig, tcpo=tcpo, topo=topo, down=down, ping=ping):
            d = orig(fl, q)
            for f in d["flows"]:
                if f["kind"] == "tcp":
                    f.update(tcpo)
            if not ping:
                d["flows"] = [f for f in d["flows"] if f["kind"] != "ping"]
            d["topology"].update(topo)
            d["topology"]["down"].update(down)
            return d

        V.scenario = sc
        rs = [one(flows, qd, s) for s in seeds]
        V.scenario = orig
        m = {k: statistics.mean(r[k] for r in rs) for k in rs[0]}
        per = " ".join(f"{r['p50']:.2f}/{r['p95']:.2f}" for r in rs)
        print(
            f"{name:<28} p50 {m['p50']:6.2f} p95 {m['p95']:6.2f} mean {m['mean']:6.2f} gp {m['gp']:5.2f} drops {m['drops']:6.0f} | {per}",
            flush=True,
        )


main()
