#!/usr/bin/env python3
"""One case of the matrix, simulated and emulated, second by second: what each side's queue,
drops and windows did over time (the first step of tracing a difference to its mechanism).

After the timeline: per side, the drops after the warm-up by kind (data or ACK), and how long
the senders take to answer an ACK (`turnaround`: the kernel's hosts' timing against the model's).

Both runs' `packets` and `flow_series` tables are kept as Parquet in out/trace/<case>/ for a
closer look (sim.packets.parquet, kernel.packets.parquet, ...). Keys after the case id change
the simulated side only (`--set rack=false`: one TCP key on every TCP flow), which is how a run
that changes one thing is made. Needs root, iperf3 and ping (or `--sim-only`).

    sudo .venv/bin/python validation/kernel/trace.py rrul_be-pie-10m-50ms-cubic
    .venv/bin/python validation/kernel/trace.py rrul_be-pie-10m-50ms-cubic --sim-only --set hystart=off
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import matrix

import aqmlab


def case_of(case_id: str) -> matrix.Case:
    for sel in matrix.SELECTIONS:
        for c in matrix.cases(sel):
            if c.id == case_id:
                return c
    raise SystemExit(f"case {case_id!r} is in no selection of matrix.py")


def timeline(res, step_s: float = 1.0) -> list[dict]:
    """Per direction and step: packets in, drops, sojourn p50 / p95 of what was sent (ms), and
    the summed congestion windows of the TCP flows whose data goes that way (segments)."""
    pk = res.tables["packets"].to_pandas()
    fs = res.tables["flow_series"].to_pandas()
    flows = res.tables["flows"].to_pandas()
    end = res.meta["duration_ns"] / 1e9
    rows = []
    for d in ("down", "up"):
        p = pk[pk.dir == d]
        tcp = flows[(flows.kind == "tcp") & (flows.direction == d)].flow
        for t0 in np.arange(0, end, step_s):
            x = p[(p.t_enqueue_ns >= t0 * 1e9) & (p.t_enqueue_ns < (t0 + step_s) * 1e9)]
            sent = x[x.outcome.isin(["sent", "marked"])]
            soj = (sent.t_out_ns - sent.t_enqueue_ns) / 1e6
            w = fs[(fs.flow.isin(tcp)) & (fs.t_ns >= t0 * 1e9) & (fs.t_ns < (t0 + step_s) * 1e9)]
            # each flow's mean window over the step, summed: the two sides sample at different
            # instants (the kernel's flows at their own iperf3 intervals), so no instant has them all
            cwnd = w.groupby("flow").cwnd_bytes.mean().sum() / 1448 if len(w) else 0.0
            rows.append(
                {
                    "dir": d,
                    "t": float(t0),
                    "in": len(x),
                    "drops": int(len(x) - len(sent)),
                    "q50": float(np.median(soj)) if len(soj) else 0.0,
                    "q95": float(np.percentile(soj, 95)) if len(soj) else 0.0,
                    "cwnd": float(cwnd),
                }
            )
    return rows


ACK_MAX = 200
"""A packet of at most this many bytes is a pure ACK (52 bytes with timestamps, SACK blocks 12
more each); every data segment of the matrix is a full 1500-byte packet."""


def drops_by_kind(res, warmup_s: float) -> list[str]:
    """Per direction after the warm-up: data segments and pure ACKs at the bottleneck, and how
    many of each its discipline dropped (a head drop removes whatever the queue held first, so
    which of the two it finds decides how many congestion signals the flows get)."""
    pk = res.tables["packets"].to_pandas()
    pk = pk[pk.t_enqueue_ns >= warmup_s * 1e9]
    out = []
    for d in ("down", "up"):
        x = pk[pk.dir == d]
        kept = x.outcome.isin(["sent", "marked"])
        ack = x["size"] <= ACK_MAX
        out.append(f"{d}: data {int((~ack).sum())} dropped {int((~ack & ~kept).sum())}, "
                   f"ACKs {int(ack.sum())} dropped {int((ack & ~kept).sum())}")  # fmt: skip
    return out


def _between_hops_ns(res) -> int:
    """The path from the up bottleneck through the server to the down bottleneck, from the ping
    (a request leaving the up hop, its echo reply arriving at the down hop: the first ping packet
    there after it: the probes are 100 ms apart, though a queue that lets two requests through
    within the path's time pairs one with an earlier reply), the median such lag of the run."""
    pk = res.tables["packets"].to_pandas()
    data = pk.groupby("flow").payload.max()
    ping = pk[pk.flow.isin(data.index[data == 0]) & (pk["size"] <= ACK_MAX)]
    req = ping[(ping.dir == "up") & ping.outcome.isin(["sent", "marked"])].t_out_ns.to_numpy()
    rep = np.sort(ping[ping.dir == "down"].t_enqueue_ns.to_numpy())
    i = np.searchsorted(rep, req)
    ok = i < len(rep)
    return int(np.median(rep[i[ok]] - req[ok]))


EARLY_NS = 100_000
"""A data segment may reach the down hop this much before the ping's path would bring it: an ACK
is shorter than the ping's 84 bytes on the bottleneck (52 bytes: 26 us less at 10 Mbit/s) and
a data segment longer on the server's NIC (12 us more at 1 Gbit/s)."""


def ack_to_data_us(res, warmup_s: float, path_ns: int) -> np.ndarray:
    """How long the server takes to answer an ACK of a download, as seen from the bottlenecks:
    for every pure ACK of a download leaving the up hop after the warm-up, the time (us) from
    `path_ns` after it (the path through the server, `_between_hops_ns`) to the next data segment
    of its flow arriving at the down hop (from `EARLY_NS` before that on: a lag may be negative). The host's turnaround, the emulator's lateness on the
    way, and longer when the ACK released nothing (a window-limited sender answers a later one)."""
    pk = res.tables["packets"].to_pandas()
    pk = pk[pk.t_enqueue_ns >= warmup_s * 1e9]
    lags = []
    for _, x in pk[pk.payload > 0].groupby("flow"):
        if (x.dir != "down").any():
            continue
        acks = pk[(pk.flow == x.flow.iloc[0]) & (pk.dir == "up") & (pk.payload == 0)]
        t_ack = acks[acks.outcome.isin(["sent", "marked"])].t_out_ns.to_numpy() + path_ns
        t_in = np.sort(x.t_enqueue_ns.to_numpy())
        i = np.searchsorted(t_in, t_ack - EARLY_NS)
        ok = i < len(t_in)
        lags.append((t_in[i[ok]].astype(np.int64) - t_ack[ok].astype(np.int64)) / 1e3)
    return np.concatenate(lags) if lags else np.array([])


def turnaround(sides: dict, warmup_s: float, span_us: float = 1000.0) -> list[str]:
    """Each side's `ack_to_data_us` below `span_us`, as percentiles (us), the path taken from the
    model's ping (its hosts answer at once; the kernel's share the path). The model's lags are
    0 for an ACK that released data at once, the NIC's 12 us per earlier packet of a burst."""
    path = _between_hops_ns(sides["sim"])
    out = [
        f"ACK to data at the server, us after the path through it ({path / 1e3:.1f} us), below {span_us:g} us:"
    ]
    for n, r in sides.items():
        x = ack_to_data_us(r, warmup_s, path)
        near = x[(x > -EARLY_NS / 1e3) & (x < span_us)]
        pct = np.percentile(near, [5, 25, 50, 75, 90, 95, 99]) if len(near) else []
        out.append(
            f"{n:>6}: {len(near)} of {len(x)} ACKs; p5/25/50/75/90/95/99 " + " ".join(f"{v:.1f}" for v in pct)
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case")
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--warmup", type=float, default=10.0, help="seconds before the drop counts")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE on every simulated TCP flow")
    ap.add_argument("--sim-only", action="store_true", help="print the simulated side alone")
    a = ap.parse_args()
    case = case_of(a.case)
    sc = matrix.scenario(case, a.duration, a.profile)
    sim_sc = matrix.set_tcp(matrix.sim_scenario(case, a.duration, a.profile), a.set)
    out = HERE / "out" / "trace" / case.id
    out.mkdir(parents=True, exist_ok=True)
    sides = {"sim": aqmlab.run(sim_sc, seed=a.seed)}
    if not a.sim_only:
        from aqmlab.emulate import emulate

        sides["kernel"] = emulate(sc)[0]
    lines = {}
    for name, res in sides.items():
        for t in ("packets", "flow_series"):
            res.tables[t].to_pandas().to_parquet(out / f"{name}.{t}.parquet")
        lines[name] = timeline(res)
    print("dir   t  | " + " | ".join(f"{n:>6}: in drops q50 q95 cwnd" for n in sides))
    for k in range(len(lines["sim"])):
        r0 = lines["sim"][k]
        cells = [
            f"{r['in']:5d} {r['drops']:4d} {r['q50']:6.1f} {r['q95']:6.1f} {r['cwnd']:5.1f}"
            for r in (lines[n][k] for n in sides)
        ]
        print(f"{r0['dir']:4} {r0['t']:4.0f} | " + " | ".join(cells))
    for name, res in sides.items():
        print(f"{name:>6} after {a.warmup:g} s: " + "; ".join(drops_by_kind(res, a.warmup)))
    print("\n".join(turnaround(sides, a.warmup)))


if __name__ == "__main__":
    main()
