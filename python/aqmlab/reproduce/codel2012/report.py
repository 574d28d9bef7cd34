"""codel2012's sweep run and what it reports: the runs aggregated per case (``results``), the
tables and the figures."""

from __future__ import annotations

from aqmlab.lazy import lazy
from aqmlab.reproduce import DEFAULT_EXECUTION, Execution
from aqmlab.reproduce.codel2012.metrics import METRICS_FN, TIMELINE_STEP_S
from aqmlab.reproduce.codel2012.setup import (
    BUFFERS,
    EDGE_RATES,
    LARGE,
    QDISCS,
    REPS,
    RTTS,
    SMALL,
    WEB_ONLY,
    spec_for,
)
from aqmlab.reproduce.study import Outcome, Table, fmt

pd = lazy("pandas")
sweep = lazy("aqmlab.sweep")


def run(reps: int = REPS, series: str = "all", ex: Execution = DEFAULT_EXECUTION, qdiscs: list[str] | None = None,
        loads: list[str] | None = None, rtts: list[str] | None = None) -> Outcome:  # fmt: skip
    """Runs (or resumes) the selected cases and aggregates them."""
    spec = spec_for(reps, qdiscs, loads, rtts)
    res = ex.sweep(spec, METRICS_FN)
    ok = res.table[res.table["status"] == "ok"]
    timelines = sweep.read_extra(ex.root, "timeline", ok["run_id"]) if len(ok) else pd.DataFrame()
    return Outcome(results(res.table), res.table, [res], series, data=timelines)


def _ok(runs: pd.DataFrame, part: str) -> pd.DataFrame:
    ok = runs[(runs["status"] == "ok") & (runs["part"] == part)] if len(runs) else runs
    return ok


def _med(v) -> float | None:
    v = pd.to_numeric(pd.Series(v), errors="coerce").dropna()
    return float(v.median()) if len(v) else None


def results(runs: pd.DataFrame) -> dict:
    """{"dynamic": {qdisc: {buffer: {median_ms, p75_ms, p95_ms, max_ms, kbytes}}}, "static": {qdisc:
    {rate_mbps: {median_delay_ms, utilization, runs}}}, "static_by_load": {qdisc: {rate_mbps:
    {load: {median_delay_ms, utilization}}}}, "web_only": {qdisc: {rate_mbps: {load: {drop_rate,
    utilization}}}}, "rtt": ..., "edge": ..., "right_queue": ...}; each value the median over that
    case's runs (static: over every run at that bandwidth)."""
    qs = QDISCS
    dyn, sta, by_load, web, rtt, edge, rq = {}, {}, {}, {}, {}, {}, {}
    d1b, d1a, dweb, d1c, d1d, drq = (_ok(runs, p) for p in ("1b", "1a", "web", "1c", "1d", "right_queue"))
    for q in qs:
        dyn[q] = {}
        for b in BUFFERS:
            c = d1b[(d1b["qdisc"] == q) & (d1b["buffer"] == b)] if len(d1b) else d1b
            dyn[q][str(b)] = {
                k: _med(c.get(f"down_{k}", [])) for k in ("median_ms", "p75_ms", "p95_ms", "max_ms")
            }
            dyn[q][str(b)]["kbytes"] = _med(c.get("down_kbytes", []))
        sta[q], by_load[q] = {}, {}
        for bw in LARGE + SMALL:
            c = d1a[(d1a["qdisc"] == q) & (d1a["rate_mbps"] == bw)] if len(d1a) else d1a
            sta[q][f"{bw:g}"] = {"median_delay_ms": _med(c.get("down_median_ms", [])),
                                 "utilization": _med(c.get("down_utilization", [])), "runs": len(c)}  # fmt: skip
            by_load[q][f"{bw:g}"] = {
                ld: {"median_delay_ms": _med(g.get("down_median_ms", [])),
                     "utilization": _med(g.get("down_utilization", []))}
                for ld, g in (c.groupby("load", sort=False) if len(c) else [])
            }  # fmt: skip
        web[q] = {}
        for bw in SMALL:
            c = dweb[(dweb["qdisc"] == q) & (dweb["rate_mbps"] == bw)] if len(dweb) else dweb
            web[q][f"{bw:g}"] = {
                ld: {k: _med(g.get(f"down_{k}", [])) for k in ("drop_rate", "utilization")}
                for ld, g in (c.groupby("load", sort=False) if len(c) else [])
            }
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
    return {"dynamic": dyn, "static": sta, "static_by_load": by_load, "web_only": web, "rtt": rtt,
            "edge": edge, "right_queue": rq}  # fmt: skip


def tables(o: Outcome) -> list[Table]:
    doc = o.results
    out = []
    rows = []
    for bw in LARGE + SMALL:
        row = [doc["static"][q][f"{bw:g}"] for q in QDISCS]
        rows.append(
            (f"{bw:g}", *(f"{fmt(r['median_delay_ms'], 1)} / {fmt(r['utilization'], 3)}" for r in row))
        )
    out.append(Table("1a static rates: median over runs of the per-run median delay (ms) / utilisation",
                     ("Mb/s", *QDISCS), rows))  # fmt: skip
    rows = []
    for bw in SMALL:
        for ld in WEB_ONLY:
            cells = [doc["web_only"][q][f"{bw:g}"].get(ld, {}) for q in QDISCS]
            rows.append((f"{bw:g} {ld}", *(f"{fmt(c.get('drop_rate'), 3)} / {fmt(c.get('utilization'), 3)}"
                                           for c in cells)))  # fmt: skip
    out.append(Table("web-only loads at the small rates: drop rate / utilisation (median over runs)",
                     ("Mb/s, load", *QDISCS), rows))  # fmt: skip
    rows = []
    for q in QDISCS:
        cells = []
        for b in BUFFERS:
            r = doc["dynamic"][q][str(b)]
            cells.append(f"{fmt(r['median_ms'], 1)} / {fmt(r['p75_ms'], 1)} / {fmt(r['p95_ms'], 1)}, "
                         f"{fmt(r['kbytes'], 0)}")  # fmt: skip
        rows.append((q, *cells))
    out.append(Table("1b dynamic link: sojourn delay median / p75 / p95 (ms), kB delivered",
                     ("qdisc", *(f"{b} packets" for b in BUFFERS)), rows))  # fmt: skip
    rows = []
    for r in RTTS:
        row = [doc["rtt"][q][str(r)] for q in QDISCS]
        if all(x["utilization"] is None for x in row):
            continue
        rows.append((str(r), *(f"{fmt(x['median_delay_ms'], 1)} / {fmt(x['utilization'], 3)} / "
                               f"{fmt(x['drop_share_jain'], 3)}" for x in row)))  # fmt: skip
    out.append(Table("1c RTT range at 10 Mb/s: median delay (ms) / utilisation / Jain drop share",
                     ("RTT ms", *QDISCS), rows))  # fmt: skip
    rows = []
    for bw in EDGE_RATES:
        for d in ("down", "up"):
            cells = [doc["edge"][q][f"{bw:g}"][d] for q in ("taildrop", "codel")]
            rows.append((f"{bw:g} {d}", *(f"{fmt(c['drop_rate'], 4)} / {fmt(c['mean_queue_pkts'], 1)} / "
                                          f"{fmt(c['kbytes'], 0)}" for c in cells)))  # fmt: skip
    out.append(Table("1d consumer edge: drop rate / mean queue (packets) / kB delivered, per direction",
                     ("Mb/s, dir", "taildrop", "codel"), rows))  # fmt: skip
    rows = []
    for k in ("line_rate", "shaped"):
        cells = []
        for q in QDISCS:
            r = doc["right_queue"][q][k]
            cells.append(f"router {fmt(r['router_median_ms'], 1)} / {fmt(r['router_p95_ms'], 1)}, "
                         f"modem {fmt(r['modem_median_ms'], 1)} / {fmt(r['modem_p95_ms'], 1)}")  # fmt: skip
        rows.append((k, *cells))
    out.append(Table("manage the right queue: upstream sojourn delay, router queue + modem FIFO (median / p95 ms)",
                     ("router", *QDISCS), rows))  # fmt: skip
    return out


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
    tl = o.data
    d1b = _ok(o.runs, "1b")
    if len(tl) and len(d1b):
        fig, axes = plt.subplots(2, len(BUFFERS), figsize=(12, 6), squeeze=False)
        for j, b in enumerate(BUFFERS):
            for i, q in enumerate(QDISCS):
                one = _first_timeline(o, q, b)
                if one is None:
                    continue
                st = style(i)
                axes[0][j].plot(one["t_s"], one["median_ms"], color=st["color"], label=q, lw=0.8)
                axes[1][j].plot(one["t_s"], one["kbytes"], color=st["color"], label=q)
            axes[0][j].set_title(f"1b dynamic link, {b}-packet buffer")
            axes[0][j].set_ylabel(f"median sojourn per {TIMELINE_STEP_S * 1e3:g} ms (ms)")
            axes[0][j].set_yscale("symlog")
            axes[1][j].set_ylabel("cumulative kB sent")
            axes[1][j].set_xlabel("time (s)")
            axes[0][j].legend(fontsize=7)
        fig.tight_layout()
        figs["dynamic.png"] = fig
    return figs


def _first_timeline(o: Outcome, qdisc: str, buffer: int) -> pd.DataFrame | None:
    """The timeline of the first replication of a 1b case (None when it was not run)."""
    d1b = _ok(o.runs, "1b")
    ids = d1b[(d1b["qdisc"] == qdisc) & (d1b["buffer"] == buffer)].sort_values("rep")["run_id"]
    if not len(ids) or not len(o.data):
        return None
    one = o.data[o.data["run_id"] == ids.iloc[0]].sort_values("t_s")
    return one if len(one) else None
