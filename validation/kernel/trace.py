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
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import matrix

import aqmlab
from aqmlab.emulate.plans import CLIENT_PORT


def case_of(case_id: str) -> matrix.Case:
    for sel in matrix.SELECTIONS:
        for c in matrix.cases(sel):
            if c.id == case_id:
                return c
    raise SystemExit(f"case {case_id!r} is in no selection of matrix.py")


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


SS_LOOP = """
import subprocess, sys, time
while True:
    print(f"@ {time.monotonic_ns()}", flush=True)
    subprocess.run(["ss", "-tinH"], check=False)
    sys.stdout.flush()
    time.sleep(float(sys.argv[1]))
"""


def sample_sockets(out: Path, done: threading.Event, every_s: float = 0.1) -> None:
    """The kernel's own view of its connections while the emulated run goes on: `ss -tin` in
    both namespaces every `every_s` (each sample stamped with CLOCK_MONOTONIC), into
    out/kernel.ss.<side>.txt. Started before `emulate`, it waits for the run's namespaces
    (`aqmlab-<pid>-c`, `-s`: this process's) and ends with them."""
    names = {side: f"aqmlab-{os.getpid()}-{side}" for side in "cs"}
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not done.is_set():
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
        if all(n in listed for n in names.values()):
            break
        time.sleep(0.05)
    procs = []
    for side, ns in names.items():
        with open(out / f"kernel.ss.{side}.txt", "w") as f:
            cmd = ["ip", "netns", "exec", ns, sys.executable, "-c", SS_LOOP, str(every_s)]
            procs.append(subprocess.Popen(cmd, stdout=f, stderr=subprocess.DEVNULL))
    done.wait()
    for p in procs:
        p.kill()
        p.wait()


SS_FIELD = re.compile(r"(\w+):([^\s]+)")


def read_sockets(path: Path, t0_ns: int) -> list[dict]:
    """Each sampled connection of an `ss -tin` log: time (ns after `t0_ns`), local and peer
    ports, and the tcp_info fields that `ss` prints (cwnd in segments, rtt and minrtt in ms,
    pacing and delivery rates in bit/s, and BBR's bw in bit/s, mrtt in ms, pacing and cwnd
    gains)."""
    rows, t, conn = [], None, None
    for line in path.read_text().splitlines():
        if line.startswith("@ "):
            t = int(line[2:]) - t0_ns
        elif line and not line[0].isspace():
            parts = line.split()
            conn = {"local": int(parts[3].rsplit(":", 1)[1]), "peer": int(parts[4].rsplit(":", 1)[1])}
        elif conn is not None and t is not None:
            row = {"t_ns": t, **conn}
            info = dict(SS_FIELD.findall(line))
            row["cwnd"] = int(info.get("cwnd", 0))
            row["rtt_ms"] = float(info["rtt"].split("/")[0]) if "rtt" in info else None
            for key in ("pacing_rate", "delivery_rate"):
                m = re.search(rf"{key} ([0-9.]+)([KMG]?)bps", line)
                row[key] = (
                    float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)] if m else None
                )
            m = re.search(
                r"bbr:\(bw:([0-9.]+)([KMG]?)bps,mrtt:([0-9.]+)(?:,pacing_gain:([0-9.]+))?(?:,cwnd_gain:([0-9.]+))?",
                line,
            )
            if m:
                row["bbr_bw"] = float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]
                row["bbr_mrtt_ms"] = float(m.group(3))
                row["bbr_pacing_gain"] = float(m.group(4)) if m.group(4) else None
                row["bbr_cwnd_gain"] = float(m.group(5)) if m.group(5) else None
            rows.append(row)
            conn = None
    return rows


def controllers(sim, kernel_rows: list[dict], warmup_s: float) -> list[str]:
    """Per TCP flow after the warm-up, the sender's window (segments), and for BBR its bandwidth
    estimate (Mbit/s), min RTT (ms) and the share of samples at each pacing gain: the model's
    `flow_series` beside the kernel's sockets (the data connection is the one on the flow's
    client-side port, `plans.CLIENT_PORT` + flow, seen from the sender's namespace)."""
    fs = sim.tables["flow_series"].to_pandas()
    fs = fs[fs.t_ns >= warmup_s * 1e9]
    flows = sim.tables["flows"].to_pandas()
    out = [
        f"{'flow':>4} {'side':>6} {'cwnd':>6} {'bw Mb/s':>8} {'min RTT':>8}  pacing gains (share of samples)"
    ]
    for f in flows[flows.kind == "tcp"].itertuples():
        x = fs[fs.flow == f.flow]
        gains = x.cc_pacing_gain.dropna().round(2).value_counts(normalize=True).sort_index()
        out.append(
            f"{f.flow:>4} {'sim':>6} {x.cwnd_bytes.mean() / 1448:6.1f} {x.cc_bw_bps.mean() / 1e6:8.2f} "
            f"{x.cc_min_rtt_ns.mean() / 1e6:8.1f}  " + " ".join(f"{g:g}:{v:.2f}" for g, v in gains.items())
        )
        port = CLIENT_PORT + f.flow
        k = [r for r in kernel_rows if port in (r["local"], r["peer"]) and r["t_ns"] >= warmup_s * 1e9]
        if not k:
            continue
        bw = [r["bbr_bw"] for r in k if r.get("bbr_bw") is not None]
        mrtt = [r["bbr_mrtt_ms"] for r in k if r.get("bbr_mrtt_ms") is not None]
        g = [round(r["bbr_pacing_gain"], 2) for r in k if r.get("bbr_pacing_gain") is not None]
        shares = {v: g.count(v) / len(g) for v in sorted(set(g))}
        out.append(
            f"{'':>4} {'kernel':>6} {np.mean([r['cwnd'] for r in k]):6.1f} "
            f"{(np.mean(bw) / 1e6 if bw else float('nan')):8.2f} {(np.mean(mrtt) if mrtt else float('nan')):8.1f}  "
            + " ".join(f"{v:g}:{s:.2f}" for v, s in shares.items())
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case")
    ap.add_argument("--duration", type=float, default=matrix.DEFAULT_WINDOW_S[0])
    ap.add_argument(
        "--warmup", type=float, default=matrix.DEFAULT_WINDOW_S[1], help="seconds before the drop counts"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE on every simulated TCP flow")
    ap.add_argument("--sim-only", action="store_true", help="print the simulated side alone")
    ap.add_argument(
        "--no-sockets",
        action="store_true",
        help="no `ss` sampling of the kernel's sockets (the kernel run as the matrix makes it)",
    )
    matrix.harness_args(ap)
    a = ap.parse_args()
    case = case_of(a.case)
    sc = matrix.scenario(case, a.duration, a.profile)
    out = HERE / "out" / "trace" / case.id
    out.mkdir(parents=True, exist_ok=True)
    sides = {}
    sockets: list[dict] = []
    if not a.sim_only:
        from aqmlab.emulate import emulate
        from aqmlab.emulate.reports import _T0

        done = threading.Event()
        sampler = None
        if not a.no_sockets:
            sampler = threading.Thread(target=sample_sockets, args=(out, done), daemon=True)
            sampler.start()
        try:
            sides["kernel"] = emulate(sc)[0]
        finally:
            done.set()
            if sampler is not None:
                sampler.join()
        # the run's start on CLOCK_MONOTONIC, the clock of the kernel's own event records
        (out / "kernel.t0_ns").write_text(f"{_T0['ns']}\n")
        sender = {"down": "s", "up": "c"}
        for side in "" if a.no_sockets else "cs":
            for r in read_sockets(out / f"kernel.ss.{side}.txt", _T0["ns"]):
                r["side"] = side
                sockets.append(r)
        by_flow = {f["flow"]: f for f in sides["kernel"].tables["flows"].to_pylist()}
        sockets = [r for r in sockets if _sender_row(r, by_flow, sender)]
    # the simulated flows' groups begin their data, and connect, as the kernel's did
    # (matrix.cli_scenario)
    kernel = sides.get("kernel")
    emus = [{"first_data_s": matrix.first_data_s(kernel), "syn_s": matrix.syn_s(kernel)}] if kernel else []
    sim_sc = matrix.set_tcp(matrix.cli_scenario(case, a, emus, a.seed), a.set)
    sides = {"sim": aqmlab.run(sim_sc, seed=a.seed), **sides}
    lines = {}
    for name, res in sides.items():
        for t in ("packets", "flow_series"):
            res.tables[t].to_pandas().to_parquet(out / f"{name}.{t}.parquet")
        lines[name] = matrix.timeline(res)
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
    if sockets:
        print("\n".join(controllers(sides["sim"], sockets, a.warmup)))


def _sender_row(r: dict, by_flow: dict, sender: dict) -> bool:
    """Whether socket sample `r` is a flow's data connection seen from its sending side."""
    f = by_flow.get(r["peer"] - CLIENT_PORT if r["side"] == "s" else r["local"] - CLIENT_PORT)
    return f is not None and f["kind"] == "tcp" and sender[f["direction"]] == r["side"]


if __name__ == "__main__":
    main()
