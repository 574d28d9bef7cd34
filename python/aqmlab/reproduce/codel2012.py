"""codel2012 (K. Nichols, V. Jacobson, "Controlling Queue Delay", ACM Queue 2012), experiments.md
section 1, set up as the authors' ns-2 script "Codel test script v120513" (see
``scenarios/codel2012/base.toml`` for every value and its source). Each case is built from the
base scenario by the script's formulas (``case_scenario``): bottleneck buffer = bdp =
round(bw x 100 ms / (8 psize)) packets, access links 10 x bw, psize 500 B below 1 Mb/s, the FTP
k's client 1 + k ms further away, CBR k starting uniform(0, 2) s after CBR k-1.

Parts (``--quick`` runs each on fewer cases, shorter):

* 1a static rates: large (3, 10, 45, 100 Mb/s) and small (128, 256, 512 kb/s, 1.5 Mb/s, also with
  500-byte packets) bandwidths under the load mixes ``LOADS`` (FTPs, PackMime connections/s,
  CBRs); per run the median sojourn delay of the packets sent on the bottleneck (dropped ones
  excluded) and the utilisation; box plots by bandwidth, CoDel vs RED vs tail drop.
* 1b the dynamic link: 100 Mb/s nominal, 4 FTPs + web at 5/s, the rate stepping every 50 s to
  10, 1, 50, 1, 100 Mb/s (the script's `bw_changes` 0.1, 0.01, 0.5, 0.01, 1.0 at k 300/6 s),
  830- and 10-packet buffers; delay against time and cumulative kB delivered; median, 75th and
  95th percentile.
* 1c RTT range: RTTs 10..500 ms at 10 Mb/s under the 1a loads; median delay, utilisation and
  Jain's index of the per-FTP drop share (drops / packets sent).
* 1d consumer edge: symmetric 512 kb/s and 1.5 Mb/s, two-way 64 kb/s CBR, one bulk download,
  web at 2/s and an upload; per direction drop rate, mean queue and data delivered; CoDel vs tail
  drop.
* "Manage the right queue": a router queue (the qdisc) in front of a 2 Mb/s modem FIFO of 256
  packets, upstream: with the router at line rate the queue builds in the modem whatever the
  router runs; shaped to 95% of the modem rate the router's qdisc holds it.

Deviations, each named in the scenario comments: runs of the static and RTT parts last
``STATIC_S`` (the script runs 300 s); FTPs are bulk transfers (the script's repeated 10 MB files
come from a local ns-2 change); each of 1d's uploads is a fresh connection (``repeat``); the FTPs
run the ``ns2_linux`` profile (ns-2's TCP/Linux with its CUBIC module) and the web flows
``ns2_fulltcp`` (ns-2's Full-TCP/Sack), but the web flow carries each exchange on its own pair of
one-way transfers (app/web.rs).
"""

from __future__ import annotations

import base64
import copy
import html
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from aqmlab import metrics as M
from aqmlab.reproduce import DEFAULT_EXECUTION, Execution
from aqmlab.scenario import load
from aqmlab.sweep import SweepResult, parse_sweep

NAME = "codel2012"
DESCRIPTION = (
    "Nichols & Jacobson 2012 (ns-2 script v120513): static rates 3..100 Mb/s and 128 kb/s..1.5 Mb/s, "
    "the degrading-Wi-Fi link (830/10-packet buffers), RTT range with drop-share fairness, the consumer "
    "edge, and managing the right queue; CoDel vs RED vs tail drop"
)
QDISCS = ["taildrop", "red", "codel"]
QDISC_SPECS = {
    "taildrop": "pfifo",
    # RED: the script sets no RED parameter (its bottleneck is `duplex-link ... CoDel`; a RED run
    # names RED there instead), so RED is ns-2.35's Queue/RED with ns-default.tcl's values:
    # self-configuring (q_weight_ -1: w_q = 1 - exp(-1 / (10 RTT C)), RTT = max(0.1 s,
    # 3 (link delay + 1/C)); thresh_ 0: min_th = max(5, targetdelay_ 5 ms x C / 2); maxthresh_ 0:
    # max_th = 3 min_th; gentle_, wait_ true; linterm_ 10: max_p 0.1) in byte mode (bytes_ and
    # queue_in_bytes_ true since 2004) with mean_pktsize_ 500: C counts 500-byte packets, queue
    # and thresholds are bytes / 500, a packet's drop probability is scaled by size / 500 and the
    # uniformising count is bytes since the last drop / 500 (red.cc modify_p, count_bytes);
    # red.cc enque's `qlen > 1` rule and min_th crossing (ns2_quirks); the link delay is the
    # script's bdelay, 10 ms. The buffer (`limit`, set by case_scenario) is the script's
    # queue-limit times mean_pktsize, in bytes, which red.cc enque compares with the backlog
    # before an arrival (`qlen >= qlim` drops: limit_before_arrival), so it holds one packet
    # more than a limit refusing an arrival that would pass it (4 vs 3 full-size packets in
    # 1b's 10-packet case). Why RED's utilisation stays below CoDel's at 45 and 100 Mb/s:
    # docs/sweeps.md.
    "red": {
        "kind": "red",
        "bytes": True,
        "count_bytes": True,
        "mean_pktsize": "500B",
        "ns2_quirks": True,
        "limit_before_arrival": True,
        "link_delay": "10ms",
    },
    "codel": {"kind": "codel", "variant": "ns2", "target": "5ms", "interval": "100ms"},
}
SERIES = {"all": None}
REPS = 10
"""Replications per case."""
FILTERS = {"--qdisc": ("qdiscs", QDISCS)}
"""The CLI's case filters: option -> (run() keyword, allowed values)."""
QUICK = True
"""`--quick` is an option of this experiment."""
METRICS_FN = "aqmlab.reproduce.codel2012:run_metrics"

LARGE = [3.0, 10.0, 45.0, 100.0]
SMALL = [0.128, 0.256, 0.512, 1.5]
LOADS = {  # name: (FTPs, PackMime connections per second, CBRs)
    "1ftp": (1, 0, 0),
    "4ftp": (4, 0, 0),
    "16ftp": (16, 0, 0),
    "50ftp": (50, 0, 0),
    "4ftp+web5+cbr": (4, 5, 1),
    "16ftp+web20+2cbr": (16, 20, 2),
    "1ftp+web80": (1, 80, 0),
}
SMALL_LOADS = ["1ftp", "4ftp", "4ftp+web5+cbr"]
RTTS = [10, 30, 50, 100, 200, 500]
RTT_LOADS = ["4ftp", "16ftp", "4ftp+web5+cbr"]
STATIC_S = 60
DYN_STEPS = [1.0, 0.1, 0.01, 0.5, 0.01, 1.0]  # the script's bw_changes, every stopTime / 6
BUFFERS = [830, 10]
EDGE_RATES = [0.512, 1.5]


def base_file() -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios" / "codel2012" / "base.toml"))


def psize(bw_mbps: float) -> int:
    """The script's packet size: 1500 B, 500 B below 1 Mb/s."""
    return 500 if bw_mbps < 1.0 else 1500


def bdp_packets(bw_mbps: float, size: int) -> int:
    """round(bw x nominal_rtt / (8 psize)) with nominal_rtt = 100 ms (the script's `bdp`)."""
    return max(1, round(bw_mbps * 1e6 * 0.1 / (8 * size)))


def rate(mbps: float) -> str:
    return f"{round(mbps * 1000)}kbps"


def _tcp(base: dict, label: str, size: int, bdp: int) -> dict:
    f = copy.deepcopy(next(f for f in base["flows"] if f.get("label") == label))
    f["mss"] = size - 52  # segsize_ = psize - 40, the 12-byte timestamp option inside the header
    f["rwnd"] = f"{16 * bdp * (size - 52)}B"  # window_ = 16 bdp
    return f


def case_scenario(base: dict, *, bw: float, qdisc: str, ftps: int, web: float, cbrs: int, rtt_ms: int = 100,
                  size: int | None = None, limit: int | None = None, duration: int = STATIC_S,
                  schedule: list[float] | None = None) -> dict:  # fmt: skip
    """The base scenario set up for one case by the script's formulas."""
    size = size or psize(bw)
    bdp = bdp_packets(bw, size)
    sc = copy.deepcopy(base)
    link = {"rate": rate(bw), "limit": f"{limit or bdp}p", "qdisc": copy.deepcopy(QDISC_SPECS[qdisc])}
    if qdisc == "red":
        mean = int(QDISC_SPECS["red"]["mean_pktsize"].removesuffix("B"))
        link["qdisc"]["limit"] = f"{(limit or bdp) * mean}B"  # queue-limit x mean_pktsize_ (qib_)
    if schedule:
        step = duration / len(schedule)
        link["rate"] = [[f"{round(k * step * 1000)}ms", rate(bw * f)] for k, f in enumerate(schedule)]
    sc["topology"] = {"rtt": f"{rtt_ms}ms", "mtu": f"{size}B", "nic_rate": rate(10 * bw),
                      "down": link, "up": copy.deepcopy(link)}  # fmt: skip
    sc["duration"] = f"{duration}s"
    flows = []
    for k in range(ftps):
        f = _tcp(base, "ftp", size, bdp)
        f["count"] = 1
        f["rtt"] = f"{rtt_ms + 2 * (k + 1)}ms"  # the FTP k's client 1 + k ms further away
        flows.append(f)
    if web:
        w = _tcp(base, "web", size, bdp)
        w["conn_rate"] = web
        flows.append(w)
    cbr = next(f for f in base["flows"] if f.get("label") == "cbr")
    for k in range(cbrs):
        c = copy.deepcopy(cbr)
        if k:
            c["start"] = {"uniform": ["0s", f"{2 * k}s"], "per": "group"}
        flows.append(c)
    sc["flows"] = flows
    return sc


def edge_scenario(base: dict, *, bw: float, qdisc: str, duration: int) -> dict:
    """1d: symmetric bw; two-way CBR, one bulk download, web at 2/s, and uploads of 1 MB files
    separated by idle periods uniform in 5..15 s."""
    sc = case_scenario(base, bw=bw, qdisc=qdisc, ftps=1, web=2, cbrs=1, duration=duration)
    up_cbr = copy.deepcopy(sc["flows"][-1])
    up_cbr["direction"] = "up"
    up_cbr["label"] = "cbr_up"
    upload = copy.deepcopy(sc["flows"][0])
    upload.update(
        direction="up", label="upload", rtt="100ms", bytes="1000000B", repeat={"idle": ["5s", "15s"]}
    )
    sc["flows"] += [up_cbr, upload]
    return sc


def right_queue_scenario(base: dict, *, qdisc: str, shaped: bool, duration: int) -> dict:
    """A router (the qdisc) in front of a 2 Mb/s modem FIFO of 256 packets, upstream; the router at
    100 Mb/s line rate or shaped to 1.9 Mb/s (95% of the modem)."""
    sc = case_scenario(base, bw=2.0, qdisc=qdisc, ftps=2, web=0, cbrs=0, duration=duration)
    for f in sc["flows"]:
        f["direction"] = "up"
    sc["topology"] = {
        "rtt": "100ms", "mtu": "1500B", "nic_rate": "1Gbps",
        "hops": [
            {"name": "router", "direction": "up", "rate": "1.9Mbps" if shaped else "100Mbps",
             "qdisc": copy.deepcopy(QDISC_SPECS[qdisc]), "limit": "1000p"},
            {"name": "modem", "direction": "up", "rate": "2Mbps", "qdisc": "pfifo", "limit": "256p"},
            {"name": "cmts", "direction": "down", "rate": "20Mbps", "qdisc": "pfifo", "limit": "1000p"},
        ],
    }  # fmt: skip
    return sc


def cases(quick: bool, qdiscs: list[str] | None = None) -> list[dict]:
    """Every case: {"params": labels, "scenario": the scenario}."""
    base = load(str(base_file()))
    qs = [q for q in QDISCS if not qdiscs or q in qdiscs]
    static_s, dyn_s = (20, 60) if quick else (STATIC_S, 300)
    large_loads = ["4ftp+web5+cbr"] if quick else list(LOADS)
    small_loads = ["4ftp"] if quick else SMALL_LOADS
    rtts = [10, 100, 500] if quick else RTTS
    rtt_loads = ["4ftp"] if quick else RTT_LOADS
    out = []

    def add(part: str, case: str, q: str, sc: dict, **labels) -> None:
        out.append({"params": {"part": part, "case": case, "qdisc": q, **labels}, "scenario": sc})

    for q in qs:
        for bw in LARGE:
            for ld in large_loads:
                f, w, c = LOADS[ld]
                sc = case_scenario(base, bw=bw, qdisc=q, ftps=f, web=w, cbrs=c, duration=static_s)
                add("1a", f"1a/{bw}/{ld}", q, sc, rate_mbps=bw, load=ld, size=1500)
        for bw in SMALL:
            for size in sorted({psize(bw), 500}):
                for ld in small_loads:
                    f, w, c = LOADS[ld]
                    sc = case_scenario(
                        base, bw=bw, qdisc=q, ftps=f, web=w, cbrs=c, size=size, duration=static_s
                    )
                    add("1a", f"1a/{bw}/{ld}/{size}", q, sc, rate_mbps=bw, load=ld, size=size)
        for buf in BUFFERS:
            sc = case_scenario(base, bw=100.0, qdisc=q, ftps=4, web=5, cbrs=0, limit=buf, duration=dyn_s,
                               schedule=DYN_STEPS)  # fmt: skip
            add("1b", f"1b/{buf}", q, sc, buffer=buf)
        for r in rtts:
            for ld in rtt_loads:
                f, w, c = LOADS[ld]
                sc = case_scenario(base, bw=10.0, qdisc=q, ftps=f, web=w, cbrs=c, rtt_ms=r, duration=static_s)
                add("1c", f"1c/{r}/{ld}", q, sc, rtt_ms=r, load=ld)
        if q != "red":
            for bw in EDGE_RATES:
                add("1d", f"1d/{bw}", q, edge_scenario(base, bw=bw, qdisc=q, duration=static_s), rate_mbps=bw)
        for shaped in (False, True):
            sc = right_queue_scenario(base, qdisc=q, shaped=shaped, duration=static_s)
            add("right_queue", f"rq/{shaped}", q, sc, shaped=shaped)
    return out


def spec_for(reps: int, quick: bool, qdiscs=None):
    cs = cases(quick, qdiscs)
    labels = ["part", "case", "qdisc", "rate_mbps", "load", "size", "buffer", "rtt_ms", "shaped"]
    z: dict[str, list] = {"topology": [], "flows": [], "duration": []}
    z.update({f"params.{k}": [] for k in labels})
    for c in cs:
        for k in ("topology", "flows", "duration"):
            z[k].append(c["scenario"][k])
        for k in labels:
            z[f"params.{k}"].append(c["params"].get(k, ""))
    doc = {"base": str(base_file()), "name": NAME + ("-quick" if quick else ""), "seed": 2012, "reps": reps,
           "seed_from": ["params.case"], "zip": [z]}  # fmt: skip
    return parse_sweep(doc, base_dir=base_file().parent)


def run_metrics(tables: dict, meta: dict) -> tuple[dict, dict]:
    """Per run and hop (``down``/``up``; the right-queue path's ``router``/``modem``/``cmts``): the
    sojourn percentiles of the packets it sent, utilisation, drop rate, mean queue and kB sent;
    the FTPs' drop-share fairness; for the dynamic link a 1-second timeline of delay and
    cumulative kB (extra table ``timeline``)."""
    out: dict = {}
    for d in M._strcol(tables["links"], "hop"):
        st = M.queue_delay_stats_ms(tables, meta, d)
        out[f"{d}_median_ms"], out[f"{d}_p75_ms"], out[f"{d}_p95_ms"] = st["p50"], st["p75"], st["p95"]
        out[f"{d}_max_ms"] = st["max"]
        out[f"{d}_utilization"] = M.utilization(tables, meta, d)
        arr = M.arrivals(tables, meta, d)
        drops = sum(M.drops_by_reason(tables, meta, d).values())
        out[f"{d}_drop_rate"] = drops / arr if arr else None
        out[f"{d}_mean_queue_pkts"] = M.mean_backlog(tables, meta, d, "pkts")
        out[f"{d}_kbytes"] = M.tx_bytes(tables, meta, d) / 1e3
    out["drop_share_jain"] = M.drop_share_jain(tables, "label", "ftp")
    extra = {}
    rate = meta.get("scenario", {}).get("topology", {}).get("down", {}).get("rate")
    if isinstance(rate, list) and len(rate) > 1:
        extra["timeline"] = timeline(tables, meta)
    return out, extra


def timeline(tables: dict, meta: dict, step_s: float = 1.0) -> pa.Table:
    """Per second of the run: median and 95th percentile of the down bottleneck's sojourn delay of
    the packets sent in it, and the cumulative kB the bottleneck sent by its end."""
    t_out, delay = M.sojourn_times_ns(tables, meta, "down")
    end = int(meta["duration_ns"])
    edges = np.arange(0, end + 1, int(step_s * 1e9))
    idx = np.searchsorted(edges, t_out, side="right") - 1
    rows = {"t_s": [], "median_ms": [], "p95_ms": [], "kbytes": []}
    q = M._filter_dir(tables["queue"], "down")
    qt, qb = M._col(q, "t_ns"), M._col(q, "tx_bytes", np.float64)
    for k in range(len(edges) - 1):
        d = delay[idx == k] / 1e6
        rows["t_s"].append(edges[k + 1] / 1e9)
        rows["median_ms"].append(float(np.median(d)) if d.size else None)
        rows["p95_ms"].append(float(np.percentile(d, 95)) if d.size else None)
        rows["kbytes"].append(M._cum_at(qt, qb, int(edges[k + 1])) / 1e3)
    return pa.table(rows)


@dataclass
class Outcome:
    runs: pd.DataFrame
    timelines: pd.DataFrame
    sweep: SweepResult
    report_dir: Path


def run(
    reps: int = REPS,
    series: str = "all",
    ex: Execution = DEFAULT_EXECUTION,
    qdiscs: list[str] | None = None,
    quick: bool = False,
    figures: bool = True,
) -> Outcome:
    """Runs (or resumes) the experiment, writes the figures and the HTML report."""
    del series  # one series
    spec = spec_for(1 if quick else reps, quick, qdiscs)
    res = ex.sweep(spec, METRICS_FN)
    tl_dir = res.sweep_dir / "timeline"
    timelines = pq.read_table(tl_dir).to_pandas() if tl_dir.exists() else pd.DataFrame()
    o = Outcome(res.table, timelines, res, ex.report_dir(spec.name))
    if figures:
        write_outputs(o)
    return o


def _ok(runs: pd.DataFrame, part: str) -> pd.DataFrame:
    ok = runs[(runs["status"] == "ok") & (runs["part"] == part)] if len(runs) else runs
    return ok


def _med(v) -> float | None:
    v = pd.to_numeric(pd.Series(v), errors="coerce").dropna()
    return float(v.median()) if len(v) else None


def to_json(o: Outcome) -> dict:
    """{"dynamic": {qdisc: {buffer: {median_ms, p75_ms, p95_ms, max_ms, kbytes}}}, "static": {qdisc:
    {rate_mbps: {median_delay_ms, utilization}}}, "rtt": ..., "edge": ..., "right_queue": ...};
    each value the median over that case's runs (static: over every run at that bandwidth)."""
    runs = o.runs
    qs = QDISCS
    dyn, sta, rtt, edge, rq = {}, {}, {}, {}, {}
    d1b, d1a, d1c, d1d, drq = (_ok(runs, p) for p in ("1b", "1a", "1c", "1d", "right_queue"))
    for q in qs:
        dyn[q] = {}
        for b in BUFFERS:
            c = d1b[(d1b["qdisc"] == q) & (d1b["buffer"] == b)] if len(d1b) else d1b
            dyn[q][str(b)] = {
                k: _med(c.get(f"down_{k}", [])) for k in ("median_ms", "p75_ms", "p95_ms", "max_ms")
            }
            dyn[q][str(b)]["kbytes"] = _med(c.get("down_kbytes", []))
        sta[q] = {}
        for bw in LARGE + SMALL:
            c = d1a[(d1a["qdisc"] == q) & (d1a["rate_mbps"] == bw)] if len(d1a) else d1a
            sta[q][f"{bw:g}"] = {"median_delay_ms": _med(c.get("down_median_ms", [])),
                                 "utilization": _med(c.get("down_utilization", [])), "runs": len(c)}  # fmt: skip
        rtt[q] = {}
        for r in RTTS:
            c = d1c[(d1c["qdisc"] == q) & (d1c["rtt_ms"] == r)] if len(d1c) else d1c
            rtt[q][str(r)] = {"median_delay_ms": _med(c.get("down_median_ms", [])),
                              "utilization": _med(c.get("down_utilization", [])),
                              "drop_share_jain": _med(c.get("drop_share_jain", []))}  # fmt: skip
        edge[q] = {}
        for bw in EDGE_RATES:
            c = d1d[(d1d["qdisc"] == q) & (d1d["rate_mbps"] == bw)] if len(d1d) else d1d
            edge[q][f"{bw:g}"] = {d: {"drop_rate": _med(c.get(f"{d}_drop_rate", [])),
                                      "mean_queue_pkts": _med(c.get(f"{d}_mean_queue_pkts", [])),
                                      "kbytes": _med(c.get(f"{d}_kbytes", []))} for d in ("down", "up")}  # fmt: skip
        rq[q] = {}
        for shaped in (False, True):
            c = drq[(drq["qdisc"] == q) & (drq["shaped"] == shaped)] if len(drq) else drq
            rq[q]["shaped" if shaped else "line_rate"] = {
                f"{hop}_{k}": _med(c.get(f"{hop}_{k}", []))
                for hop in ("router", "modem")
                for k in ("median_ms", "p95_ms")
            }
    return {"dynamic": dyn, "static": sta, "rtt": rtt, "edge": edge, "right_queue": rq}


def _fmt(v, dec=1) -> str:
    return "-" if v is None else f"{v:.{dec}f}"


def print_tables(o: Outcome, console) -> None:
    from rich.table import Table

    doc = to_json(o)
    t = Table(title="1a static rates: median over runs of the per-run median delay (ms) / utilisation")
    t.add_column("Mb/s")
    for q in QDISCS:
        t.add_column(q, justify="right")
    for bw in LARGE + SMALL:
        row = [doc["static"][q][f"{bw:g}"] for q in QDISCS]
        t.add_row(f"{bw:g}", *(f"{_fmt(r['median_delay_ms'])} / {_fmt(r['utilization'], 3)}" for r in row))
    console.print(t)
    t = Table(title="1b dynamic link: sojourn delay median / p75 / p95 (ms), kB delivered")
    t.add_column("qdisc")
    for b in BUFFERS:
        t.add_column(f"{b} packets", justify="right")
    for q in QDISCS:
        cells = []
        for b in BUFFERS:
            r = doc["dynamic"][q][str(b)]
            cells.append(
                f"{_fmt(r['median_ms'])} / {_fmt(r['p75_ms'])} / {_fmt(r['p95_ms'])}, {_fmt(r['kbytes'], 0)}"
            )
        t.add_row(q, *cells)
    console.print(t)
    t = Table(title="1c RTT range at 10 Mb/s: median delay (ms) / utilisation / Jain drop share")
    t.add_column("RTT ms")
    for q in QDISCS:
        t.add_column(q, justify="right")
    for r in RTTS:
        row = [doc["rtt"][q][str(r)] for q in QDISCS]
        if all(x["utilization"] is None for x in row):
            continue
        t.add_row(str(r), *(f"{_fmt(x['median_delay_ms'])} / {_fmt(x['utilization'], 3)} / "
                            f"{_fmt(x['drop_share_jain'], 3)}" for x in row))  # fmt: skip
    console.print(t)
    t = Table(title="1d consumer edge: drop rate / mean queue (packets) / kB delivered, per direction")
    t.add_column("Mb/s, dir")
    for q in ("taildrop", "codel"):
        t.add_column(q, justify="right")
    for bw in EDGE_RATES:
        for d in ("down", "up"):
            cells = [doc["edge"][q][f"{bw:g}"][d] for q in ("taildrop", "codel")]
            t.add_row(f"{bw:g} {d}", *(f"{_fmt(c['drop_rate'], 4)} / {_fmt(c['mean_queue_pkts'])} / "
                                       f"{_fmt(c['kbytes'], 0)}" for c in cells))  # fmt: skip
    console.print(t)
    t = Table(
        title="manage the right queue: upstream sojourn delay, router queue + modem FIFO (median / p95 ms)"
    )
    t.add_column("router")
    for q in QDISCS:
        t.add_column(q, justify="right")
    for k in ("line_rate", "shaped"):
        cells = []
        for q in QDISCS:
            r = doc["right_queue"][q][k]
            cells.append(f"router {_fmt(r['router_median_ms'])} / {_fmt(r['router_p95_ms'])}, "
                         f"modem {_fmt(r['modem_median_ms'])} / {_fmt(r['modem_p95_ms'])}")  # fmt: skip
        t.add_row(k, *cells)
    console.print(t)


def figures(o: Outcome) -> dict:
    """The 1a box plots and the 1b timelines, as {file name: figure}."""
    import matplotlib.pyplot as plt

    from aqmlab.plots import style

    figs = {}
    d1a = _ok(o.runs, "1a")
    for key, label in (("down_median_ms", "median queue delay (ms)"), ("down_utilization", "utilisation")):
        fig, ax = plt.subplots(figsize=(10, 4))
        data, names = [], []
        for bw in LARGE + SMALL:
            for q in QDISCS:
                c = d1a[(d1a["qdisc"] == q) & (d1a["rate_mbps"] == bw)] if len(d1a) else d1a
                v = pd.to_numeric(c.get(key, pd.Series(dtype=float)), errors="coerce").dropna().to_numpy()
                if v.size:
                    data.append(v)
                    names.append(f"{bw:g}\n{q}")
        if data:
            ax.boxplot(data)
            ax.set_xticks(range(1, len(names) + 1), names, fontsize=6)
        ax.set_xlabel("bandwidth (Mb/s) and qdisc")
        ax.set_ylabel(label)
        ax.set_title(f"codel2012 1a: per-run {label} by bandwidth")
        fig.tight_layout()
        figs[f"static_{key}.png"] = fig
    tl = o.timelines
    d1b = _ok(o.runs, "1b")
    if len(tl) and len(d1b):
        fig, axes = plt.subplots(2, len(BUFFERS), figsize=(12, 6), squeeze=False)
        for j, b in enumerate(BUFFERS):
            for i, q in enumerate(QDISCS):
                ids = d1b[(d1b["qdisc"] == q) & (d1b["buffer"] == b)]["run_id"]
                if not len(ids):
                    continue
                one = tl[tl["run_id"] == ids.iloc[0]].sort_values("t_s")
                st = style(i)
                axes[0][j].plot(one["t_s"], one["median_ms"], color=st["color"], label=q)
                axes[1][j].plot(one["t_s"], one["kbytes"], color=st["color"], label=q)
            axes[0][j].set_title(f"1b dynamic link, {b}-packet buffer")
            axes[0][j].set_ylabel("median sojourn per second (ms)")
            axes[0][j].set_yscale("symlog")
            axes[1][j].set_ylabel("cumulative kB sent")
            axes[1][j].set_xlabel("time (s)")
            axes[0][j].legend(fontsize=7)
        fig.tight_layout()
        figs["dynamic.png"] = fig
    return figs


def write_outputs(o: Outcome) -> list[Path]:
    from aqmlab import plots

    o.report_dir.mkdir(parents=True, exist_ok=True)
    paths = [plots.save(fig, o.report_dir / name) for name, fig in figures(o).items()]
    doc = to_json(o)
    s = o.sweep
    parts = ["<!doctype html><html><head><meta charset=utf-8><title>codel2012</title>",
             "<style>body{font-family:sans-serif;max-width:1100px}pre{font-size:11px}</style></head><body>",
             f"<h1>{html.escape(DESCRIPTION)}</h1>",
             (f"<p>{s.total} runs ({s.ran} run now, {s.skipped} reused), {len(s.failed)} failed; dataset "
              f"{html.escape(str(s.sweep_dir))}.</p>"),
             "<p>Deviations from the study's setup are listed in the module and scenario comments.</p>"]  # fmt: skip
    parts.append(f"<h2>Results (medians over runs)</h2><pre>{html.escape(json.dumps(doc, indent=1))}</pre>")
    for p in paths:
        b64 = base64.b64encode(p.read_bytes()).decode("ascii")
        parts.append(
            f"<figure><img src='data:image/png;base64,{b64}'><figcaption>{p.name}</figcaption></figure>"
        )
    parts.append("</body></html>")
    (o.report_dir / "report.html").write_text("\n".join(parts))
    o.runs.to_csv(o.report_dir / "runs.csv", index=False)
    return [*paths, o.report_dir / "report.html"]
