"""goodbadwifi2015 (Høiland-Jørgensen, Hurtig, Brunstrom: "The Good, the Bad and the WiFi:
Modern AQMs in a residential setting", Computer Networks 89, 2015), section 4 of
experiments.md: Flent's tests through seven queue disciplines on residential links.

Links 100/100, 10/10 and 10/1 Mb/s (down/up), 50 ms base RTT, Linux 3.14's TCP CUBIC; each
direction's qdisc configured for that direction's rate as the study lists it (``qdisc_for``).
Series (scenario files in ``scenarios/goodbadwifi2015/``):

* ``rrul``: mean TCP goodput per direction and mean induced latency (the four probe streams'
  mean RTT minus the base RTT, Flent's "Ping (ms) avg" less the empty-path RTT), per run over
  the window [10 s, 145 s]; the study plots medians over the runs with 1-sigma ellipses (here:
  the figure ``rrul.png``); and the transient, the ICMP ping's RTT over the first 25 s (the load
  starts at 5 s), point-wise mean over the runs (``transient.png``).
* ``voip``: an irtt stream upstream beside one TCP upload (``1up``) or RRUL (``rrul``): the
  stream's loss (round trips without a reply, in %) and its one-way delay upstream sampled every
  200 ms (Flent's step), pooled over the runs for the CDFs (``voip_cdf.png``).
* ``rtt_fair``: four CUBIC uploads at 10, 50, 200 and 500 ms for 600 s: Jain's index over their
  goodputs and each one's mean goodput.

* ``wifi``: RRUL over an 802.11n link (a 2x2 station at MCS 15 and its AP, ath9k's driver
  queues) behind 100/100 Mb/s, the tested qdisc on both WiFi interfaces.

* ``web``: Flent's http-getter fetching a page every second (``webpage`` flow: a name lookup,
  the main document, the objects over 4 workers), the small (56 kB in 3 requests) or large page
  (3 MB in 110 requests), unloaded, beside one TCP upload (``1up``) or beside RRUL (``rrul``):
  each run's mean fetch time over the fetches started in the window, normalised by the mean of
  the unloaded runs of the same qdisc, link and page; mean and standard deviation over the runs.
  The cases reuse voip_1up.toml (its upload) and rrul.toml (its flows), the page flow put first.

``--quick`` runs shorter tests (rrul, voip and wifi 40 s with the window [10 s, 40 s], rtt_fair
120 s, web 40 s on the 10/10 link only: a large page under RRUL can take 14 s, and only a
fetch started after the 10 s warm-up counts) with two replications, on the 10/10 and 10/1 links.
"""

from __future__ import annotations

import base64
import html
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from aqmlab import metrics as M
from aqmlab.reproduce import DEFAULT_EXECUTION, Execution
from aqmlab.sweep import SweepResult, parse_sweep

NAME = "goodbadwifi2015"
DESCRIPTION = (
    "Høiland-Jørgensen et al. 2015, section 4: RRUL, VoIP and RTT fairness through pfifo_fast, ARED, PIE, CoDel, "
    "SFQ, fq_nocodel and fq_codel on 100/100, 10/10 and 10/1 Mb/s links, 50 ms, CUBIC (Linux 3.14)"
)
QDISCS = ["pfifo_fast", "ared", "pie", "codel", "sfq", "fq_nocodel", "fq_codel"]
LINKS = {"100/100": (100, 100), "10/10": (10, 10), "10/1": (10, 1)}
CROSS = ["1up", "rrul"]
SERIES = {
    "all": ["rrul", "voip", "rtt_fair", "wifi", "web"],
    "rrul": ["rrul"],
    "voip": ["voip"],
    "rtt_fair": ["rtt_fair"],
    "wifi": ["wifi"],
    "web": ["web"],
}
REPS = 30
"""Replications per case, as the study ran."""
FILTERS = {"--qdisc": ("qdiscs", QDISCS)}
WARMUP_S = 10.0
"""The window starts 5 s after the load (Flent's DELAY and its cutoff of DELAY)."""
TRANSIENT_S = 25.0
QUICK = {
    "reps": 2,
    "links": ["10/10", "10/1"],
    "duration": {"rrul": "40s", "voip": "40s", "rtt_fair": "120s", "wifi": "40s", "web": "40s"},
    "web_links": ["10/10"],
}
METRICS_FN = "aqmlab.reproduce.goodbadwifi2015:run_metrics"
TEST_FILES = {
    "rrul": ["rrul"],
    "voip": ["voip_1up", "voip_rrul"],
    "rtt_fair": ["rtt_fair"],
    "wifi": ["wifi_rrul"],
    "web": ["web_none", "web_1up", "web_rrul"],
}
PAGES = ["small", "large"]
WEB_CROSS = ["1up", "rrul"]
PAGE_FLOW = {"kind": "webpage", "label": "page", "profile": "linux_3_14", "interval": "1s", "start": "5s"}
"""http-getter as Flent's http tests run it: a fetch every second, 4 workers (the default)."""
WEB_BASE = {"web_none": ("voip_1up", 0), "web_1up": ("voip_1up", 1), "web_rrul": ("rrul", 0)}
"""Per web case: the scenario file lending its cross traffic, and its first flow kept (the VoIP
file's upload without its VoIP stream; all of RRUL)."""
WIFI_HOPS = (0, 3)
"""The hops of wifi_rrul.toml that run the tested qdisc: the client's WiFi interface, the AP's."""


def qdisc_for(name: str, mbps: int) -> dict:
    """The study's configuration of ``name`` for a direction of ``mbps`` (experiments.md 4):
    FIFO and SFQ limits 127 packets at 1 and 10 Mb/s, 1000 at 100 (Linux txqueuelen); ARED's
    target delay 20 ms with min_th half of it at the link rate, at least one MTU (1514 B), and
    max_th 3 x min_th (2 MTU at 1 Mb/s); PIE as Linux 3.14 with target 20 ms, t_update 30 ms;
    CoDel and fq_codel targets 13 ms at 1 Mb/s (a packet's transmission time), else 5 ms."""
    fifo = "127p" if mbps <= 10 else "1000p"
    target = "13ms" if mbps <= 1 else "5ms"
    if name == "pfifo_fast":
        return {"kind": "pfifo_fast", "limit": fifo}
    if name == "ared":
        q = {"kind": "ared", "limit": fifo, "target_delay": "20ms", "min_th_floor": "1514B"}
        if mbps <= 1:
            # One and two 1514-byte frames, in packets of the link's 1500-byte mean size.
            q.update(min_th=1514 / 1500, max_th=3028 / 1500)
        return q
    if name == "pie":
        return {
            "kind": "pie",
            "profile": "linux_3_14",
            "target": "20ms",
            "t_update": "30ms",
            "limit": "1000p",
        }
    if name == "codel":
        return {"kind": "codel", "variant": "linux", "target": target, "interval": "100ms", "limit": "1000p"}
    if name == "sfq":
        return {"kind": "sfq", "limit": fifo}
    if name == "fq_codel":
        return {"kind": "fq_codel", "target": target, "interval": "100ms", "limit": "10240p"}
    if name == "fq_nocodel":
        return {"kind": "fq_nocodel", "limit": fifo}
    raise KeyError(f"unknown qdisc {name!r}; allowed: {', '.join(QDISCS)}")


def scenario_file(test: str) -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios" / NAME / f"{test}.toml"))


def web_doc(test: str, reps: int, qdiscs, links, duration: str | None) -> dict:
    """The sweep of a web case: the page flow and the cross traffic of its base file, per
    (link, qdisc, page)."""
    base, first = WEB_BASE[test]
    cross = tomllib.loads(scenario_file(base).read_text())["flows"][first:] if test != "web_none" else []
    if test == "web_1up":
        cross = cross[:1]
    cases = [(lk, q, p) for lk in links for q in qdiscs for p in PAGES]
    doc = sweep_doc(base, reps, qdiscs, links, duration)
    doc["name"] = f"{NAME}-{test}"
    doc["seed_from"] = ["params.link", "params.page"]
    doc["zip"] = {
        "params.link": [lk for lk, _, _ in cases],
        "params.qdisc": [q for _, q, _ in cases],
        "params.page": [p for _, _, p in cases],
        "topology.down.rate": [f"{LINKS[lk][0]}Mbps" for lk, _, _ in cases],
        "topology.up.rate": [f"{LINKS[lk][1]}Mbps" for lk, _, _ in cases],
        "topology.down.qdisc": [qdisc_for(q, LINKS[lk][0]) for lk, q, _ in cases],
        "topology.up.qdisc": [qdisc_for(q, LINKS[lk][1]) for lk, q, _ in cases],
        "flows": [[{**PAGE_FLOW, "page": p}, *cross] for _, _, p in cases],
    }
    return doc


def sweep_doc(test: str, reps: int, qdiscs, links, duration: str | None) -> dict:
    """The sweep of one scenario file: every (link, qdisc) case, common seeds across qdiscs
    (the WiFi file: every qdisc on its two WiFi interfaces, configured for 100 Mb/s)."""
    if test == "wifi_rrul":
        zip_ = {"params.link": ["wifi"] * len(qdiscs), "params.qdisc": list(qdiscs)}
        zip_.update({f"topology.hops.{h}.qdisc": [qdisc_for(q, 100) for q in qdiscs] for h in WIFI_HOPS})
        doc = {
            "base": str(scenario_file(test)),
            "name": f"{NAME}-{test}",
            "seed": 2015,
            "reps": reps,
            "zip": zip_,
        }
        if duration:
            doc["set"] = {"duration": duration}
        return doc
    cases = [(lk, q) for lk in links for q in qdiscs]
    doc: dict[str, Any] = {
        "base": str(scenario_file(test)),
        "name": f"{NAME}-{test}",
        "seed": 2015,
        "reps": reps,
        "seed_from": ["params.link"],
        "zip": {
            "params.link": [lk for lk, _ in cases],
            "params.qdisc": [q for _, q in cases],
            "topology.down.rate": [f"{LINKS[lk][0]}Mbps" for lk, _ in cases],
            "topology.up.rate": [f"{LINKS[lk][1]}Mbps" for lk, _ in cases],
            "topology.down.qdisc": [qdisc_for(q, LINKS[lk][0]) for lk, q in cases],
            "topology.up.qdisc": [qdisc_for(q, LINKS[lk][1]) for lk, q in cases],
        },
    }
    if duration:
        doc["set"] = {"duration": duration}
    return doc


def run_metrics(tables: dict, meta: dict) -> tuple[dict, dict[str, pa.Table]]:
    """Per run (in the sweep workers): goodput per direction, induced latency, the VoIP stream's
    loss, Jain's index; and two small tables: the ICMP ping's RTT over the first 25 s
    (``transient``) and the VoIP one-way delays sampled every 200 ms (``voip_owd``)."""
    labels = {int(r["flow"]): str(r["label"]) for r in tables["flows"].select(["flow", "label"]).to_pylist()}
    kinds = {int(r["flow"]): str(r["kind"]) for r in tables["flows"].select(["flow", "kind"]).to_pylist()}
    good = M.goodput_totals_mbps(tables, meta, WARMUP_S)
    probes = M.probe_flows(tables)
    pings = [f for f in probes if kinds[f] == "ping"]
    voip = [f for f in probes if kinds[f] == "voip"]
    induced = [M.induced_latency_ms(tables, f, WARMUP_S) for f in pings]
    induced = [float(v.mean()) for v in induced if v.size]
    tcp = [f for f, k in kinds.items() if k == "tcp"]
    rates = [M.goodput_bps(tables, meta, f, WARMUP_S) or 0.0 for f in tcp]
    out: dict[str, Any] = {
        "goodput_down_mbps": good["down"],
        "goodput_up_mbps": good["up"],
        "induced_latency_ms": float(np.mean(induced)) if induced else None,
        "jain": M.jain_index(rates) if rates else None,
        **{f"goodput_{labels[f]}_mbps": r / 1e6 for f, r in zip(tcp, rates) if labels[f].endswith("ms")},
    }
    extra: dict[str, pa.Table] = {}
    icmp = [f for f in pings if labels[f] == "ICMP"]
    if icmp:
        p = M.probe_table(tables, icmp[0])
        t = p.column("t_send_ns").to_numpy().astype(np.int64)
        rtt = M._nullable_float(p, "rtt_ns")
        keep = t < TRANSIENT_S * M.NS
        extra["transient"] = pa.table({"t_ns": pa.array(t[keep]), "rtt_ms": pa.array(rtt[keep] / 1e6)})
    if voip:
        loss = M.probe_loss(tables, voip[0], WARMUP_S, int(meta["duration_ns"]))
        out["voip_loss_pct"] = None if loss is None else 100 * loss
        p = M.probe_table(tables, voip[0], WARMUP_S)
        owd = M._nullable_float(p, "owd_up_ns") / 1e6
        extra["voip_owd"] = pa.table({"owd_ms": pa.array(owd[::10])})  # one per 200 ms (irtt every 20 ms)
    if "webpage" in tables and tables["webpage"].num_rows:
        ft = M.fetch_times_s(tables, WARMUP_S)
        out["web_fetch_s"] = float(ft.mean()) if ft.size else None
    return out, extra


@dataclass
class Outcome:
    results: dict  # see to_json
    runs: pd.DataFrame
    transient: dict  # {(qdisc, link): (t_s, mean rtt ms)}
    voip_owd: dict  # {(qdisc, cross, link): owd ms samples}
    sweep: SweepResult  # the last sweep run (its counts are summed in `counts`)
    counts: dict
    report_dir: Path
    quick: bool


def run(
    reps: int = REPS,
    series: str = "all",
    ex: Execution = DEFAULT_EXECUTION,
    qdiscs: list[str] | None = None,
    figures: bool = True,
    quick: bool = False,
) -> Outcome:
    """Runs (or resumes) the chosen series, aggregates them, writes figures and the report."""
    qdiscs = list(qdiscs or QDISCS)
    links = QUICK["links"] if quick else list(LINKS)
    reps = min(reps, QUICK["reps"]) if quick else reps
    frames, counts, res = [], {"total": 0, "ran": 0, "skipped": 0, "failed": 0, "wall_s": 0.0}, None
    for test in SERIES[series]:
        duration = QUICK["duration"][test] if quick else None
        cases = ["wifi"] if test == "wifi" else QUICK["web_links"] if quick and test == "web" else links
        for f in TEST_FILES[test]:
            doc = web_doc if test == "web" else sweep_doc
            spec = parse_sweep(doc(f, reps, qdiscs, cases, duration))
            res = ex.sweep(spec, METRICS_FN)
            t = res.table.copy()
            t["test"] = f
            frames.append(t)
            for k in ("total", "ran", "skipped", "wall_s"):
                counts[k] += getattr(res, k)
            counts["failed"] += len(res.failed)
    runs = pd.concat(frames, ignore_index=True)
    transient, owd = _extras(Path(ex.out), runs)
    report_dir = ex.report_dir(NAME + ("-quick" if quick else ""))
    o = Outcome(aggregate(runs), runs, transient, owd, res, counts, report_dir, quick)
    if figures:
        write_outputs(o)
    return o


def _read_extra(root: Path, name: str, runs: pd.DataFrame) -> pd.DataFrame:
    import pyarrow.compute as pc

    ok = runs[runs["status"] == "ok"]
    files = sorted(Path(root).resolve().glob(f"sweeps/*/{name}/part-*.parquet"))
    want = pa.array(sorted(set(ok["run_id"])), pa.string())
    parts = [t for t in (pq.read_table(f) for f in files) if t.num_rows]
    parts = [t.filter(pc.is_in(t.column("run_id"), value_set=want)) for t in parts]
    parts = [t for t in parts if t.num_rows]
    if not parts:
        return pd.DataFrame()
    t = pa.concat_tables(parts).to_pandas()
    return t.join(ok.set_index("run_id")[["qdisc", "link", "test"]], on="run_id")


def _extras(root: Path, runs: pd.DataFrame) -> tuple[dict, dict]:
    tr = _read_extra(root, "transient", runs[runs["test"] == "rrul"])
    transient = {}
    if len(tr):
        for (q, lk), g in tr.groupby(["qdisc", "link"]):
            m = g.groupby("t_ns")["rtt_ms"].mean()
            transient[(q, lk)] = (m.index.to_numpy() / M.NS, m.to_numpy())
    vo = _read_extra(root, "voip_owd", runs[runs["test"].str.startswith("voip")])
    owd = {}
    if len(vo):
        for (q, test, lk), g in vo.groupby(["qdisc", "test", "link"]):
            owd[(q, test.removeprefix("voip_"), lk)] = g["owd_ms"].dropna().to_numpy()
    return transient, owd


def _stats(values) -> dict | None:
    v = pd.to_numeric(pd.Series(values), errors="coerce").dropna().to_numpy()
    if not v.size:
        return None
    return {"median": float(np.median(v)), "mean": float(v.mean()), "std": float(v.std(ddof=1)) if v.size > 1 else 0.0,
            "runs": int(v.size)}  # fmt: skip


def aggregate(runs: pd.DataFrame) -> dict:
    """Per metric and case: median, mean, std and count over the successful runs."""
    ok = runs[runs["status"] == "ok"]
    out: dict = {"rrul": {}, "voip": {}, "rtt_fair": {}, "wifi": {}, "web": _web_norm(ok)}
    for (test, q, lk), g in ok.groupby(["test", "qdisc", "link"]):
        if test.startswith("web_"):
            continue
        if test in ("rrul", "wifi_rrul"):
            out["rrul" if test == "rrul" else "wifi"].setdefault(q, {})[lk] = {
                k: _stats(g[k]) for k in ("goodput_down_mbps", "goodput_up_mbps", "induced_latency_ms")
            }
        elif test.startswith("voip"):
            out["voip"].setdefault(q, {}).setdefault(test.removeprefix("voip_"), {})[lk] = {
                "voip_loss_pct": _stats(g.get("voip_loss_pct", []))
            }
        else:
            flows = [c for c in g.columns if c.startswith("goodput_") and c.endswith("ms_mbps")]
            out["rtt_fair"].setdefault(q, {})[lk] = {k: _stats(g[k]) for k in ["jain", *sorted(flows)]}
    return out


def _web_norm(ok: pd.DataFrame) -> dict:
    """{qdisc: {link: {page: {cross: stats}}}}: each loaded run's mean fetch time over the mean
    of the unloaded runs of its qdisc, link and page (the study's normalisation)."""
    web = ok[ok["test"].str.startswith("web_")]
    out: dict = {}
    if not len(web) or "web_fetch_s" not in web:
        return out
    for (q, lk, page), g in web.groupby(["qdisc", "link", "page"]):
        idle = pd.to_numeric(g[g["test"] == "web_none"]["web_fetch_s"], errors="coerce").mean()
        for c in WEB_CROSS:
            v = pd.to_numeric(g[g["test"] == f"web_{c}"]["web_fetch_s"], errors="coerce") / idle
            out.setdefault(q, {}).setdefault(lk, {}).setdefault(page, {})[c] = _stats(v)
    return out


def _rate(link: str, direction: str = "up") -> str:
    return str(LINKS[link][0 if direction == "down" else 1])


def to_json(o: Outcome) -> dict:
    """The medians over runs: voip_loss_pct {qdisc: {cross: {rate: v}}} (rate = the VoIP's
    upstream Mb/s), rrul_* {qdisc: {link: v}}, rtt_fair_jain {qdisc: {rate: v}} (the uploads' rate);
    and the mean over runs of web_fetch_norm {qdisc: {page: {cross: {link: v}}}}."""

    def med(s):
        return None if s is None else s["median"]

    r = o.results
    return {
        "voip_loss_pct": {
            q: {c: {_rate(lk): med(v["voip_loss_pct"]) for lk, v in per.items()} for c, per in cs.items()}
            for q, cs in r["voip"].items()
        },
        "rrul_induced_latency_ms": {
            q: {lk: med(v["induced_latency_ms"]) for lk, v in per.items()} for q, per in r["rrul"].items()
        },
        "rrul_goodput_down_mbps": {
            q: {lk: med(v["goodput_down_mbps"]) for lk, v in per.items()} for q, per in r["rrul"].items()
        },
        "rrul_goodput_up_mbps": {
            q: {lk: med(v["goodput_up_mbps"]) for lk, v in per.items()} for q, per in r["rrul"].items()
        },
        "rtt_fair_jain": {
            q: {_rate(lk): med(v["jain"]) for lk, v in per.items()} for q, per in r["rtt_fair"].items()
        },
        "wifi_rrul": {
            q: {
                k: med(per["wifi"][k]) for k in ("induced_latency_ms", "goodput_down_mbps", "goodput_up_mbps")
            }
            for q, per in r["wifi"].items()
        },
        "web_fetch_norm": {
            q: {
                p: {
                    c: {
                        lk: None if s is None else s["mean"]
                        for lk, pages in per.items()
                        for s in [pages.get(p, {}).get(c)]
                    }
                    for c in WEB_CROSS
                }
                for p in PAGES
            }
            for q, per in r["web"].items()
        },
        "quick": o.quick,
    }


def _cell(s: dict | None, dec: int = 2) -> str:
    return "-" if s is None else f"{s['median']:.{dec}f} ({s['std']:.{dec}f})"


def _mean_cell(s: dict | None) -> str:
    return "-" if s is None else f"{s['mean']:.2f} ({s['std']:.2f})"


def _tables() -> list[tuple[str, str, str]]:
    """(series, title, metric) of the printed tables, one column per link."""
    return [
        ("rrul", "RRUL: median induced latency, ms (std over runs)", "induced_latency_ms"),
        ("rrul", "RRUL: median goodput down, Mb/s (std)", "goodput_down_mbps"),
        ("rrul", "RRUL: median goodput up, Mb/s (std)", "goodput_up_mbps"),
        ("rtt_fair", "RTT fairness: median Jain's index over the four uploads (std)", "jain"),
    ]


def print_tables(o: Outcome, console) -> None:
    from rich.table import Table

    links = [lk for lk in LINKS if any(lk in per for s in o.results.values() for per in s.values())]
    for series, title, key in _tables():
        if not o.results[series]:
            continue
        t = Table(title=title)
        t.add_column("qdisc")
        for lk in links:
            t.add_column(lk, justify="right")
        for q in QDISCS:
            per = o.results[series].get(q, {})
            t.add_row(q, *(_cell(per.get(lk, {}).get(key), 3 if key == "jain" else 2) for lk in links))
        console.print(t)
    if o.results["wifi"]:
        t = Table(title="WiFi (802.11n MCS 15 behind 100/100 Mb/s) RRUL: medians (std)")
        t.add_column("qdisc")
        keys = [("induced_latency_ms", "induced latency ms"), ("goodput_down_mbps", "down Mb/s"),
                ("goodput_up_mbps", "up Mb/s")]  # fmt: skip
        for _, title in keys:
            t.add_column(title, justify="right")
        for q in QDISCS:
            per = o.results["wifi"].get(q, {}).get("wifi", {})
            t.add_row(q, *(_cell(per.get(k)) for k, _ in keys))
        console.print(t)
    if o.results["web"]:
        t = Table(title="Web: mean fetch time normalised to the unloaded fetch (std over runs)")
        t.add_column("qdisc")
        web_links = [lk for lk in links if any(lk in per for per in o.results["web"].values())]
        cols = [(p, c, lk) for p in PAGES for c in WEB_CROSS for lk in web_links]
        for p, c, lk in cols:
            t.add_column(f"{p} {c} {lk}", justify="right")
        for q in QDISCS:
            per = o.results["web"].get(q, {})
            t.add_row(q, *(_mean_cell(per.get(lk, {}).get(p, {}).get(c)) for p, c, lk in cols))
        console.print(t)
    if o.results["voip"]:
        t = Table(title="VoIP: median loss of the upstream stream, % (std)")
        t.add_column("qdisc")
        cols = [(c, lk) for c in CROSS for lk in links]
        for c, lk in cols:
            t.add_column(f"{c} @ {_rate(lk)} Mb/s", justify="right")
        for q in QDISCS:
            per = o.results["voip"].get(q, {})
            t.add_row(q, *(_cell(per.get(c, {}).get(lk, {}).get("voip_loss_pct")) for c, lk in cols))
        console.print(t)


def _panels(keys: list, size: tuple[float, float], draw):
    """One figure, a panel per key side by side; ``draw(ax, key)`` fills a panel."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(keys), figsize=(size[0] * len(keys), size[1]), squeeze=False)
    for ax, key in zip(axes[0], keys):
        draw(ax, key)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _curve(ax, i: int, x, y, label: str) -> None:
    from aqmlab.plots import style

    ax.plot(x, y, label=label, **{k: v for k, v in style(i).items() if k in ("color", "linestyle")})


def figures(o: Outcome) -> dict:
    """The study's views: RRUL medians with 1-sigma ellipses (latency axis inverted), the
    transient's mean latency, the VoIP one-way delay CDFs."""
    from matplotlib.patches import Ellipse

    from aqmlab.plots import style

    def rrul(ax, panel):
        test, lk = panel
        ok = o.runs[(o.runs["status"] == "ok") & (o.runs["test"] == test) & (o.runs["link"] == lk)]
        for i, q in enumerate(QDISCS):
            g = ok[ok["qdisc"] == q]
            if not len(g):
                continue
            x = (g["goodput_down_mbps"] + g["goodput_up_mbps"]).to_numpy(float)
            y = g["induced_latency_ms"].to_numpy(float)
            color = style(i)["color"]
            ax.plot(np.median(x), np.median(y), marker="o", color=color, linestyle="", label=q)
            if x.size > 1:
                ax.add_patch(Ellipse((x.mean(), y.mean()), 2 * x.std(ddof=1), 2 * y.std(ddof=1), fill=False,
                                     color=color))  # fmt: skip
        ax.invert_yaxis()
        ax.set(title="RRUL over 802.11n" if lk == "wifi" else f"RRUL {lk} Mb/s",
               xlabel="mean TCP goodput, down + up (Mb/s)", ylabel="mean induced latency (ms)")  # fmt: skip

    def transient(ax, lk):
        for i, q in enumerate(QDISCS):
            if (q, lk) in o.transient:
                _curve(ax, i, *o.transient[(q, lk)], q)
        ax.set(title=f"RRUL start, {lk} Mb/s: ICMP RTT, mean over runs", xlabel="time (s)", ylabel="RTT (ms)")

    def voip(ax, key):
        c, lk = key
        for i, q in enumerate(QDISCS):
            v = o.voip_owd.get((q, c, lk))
            if v is not None and v.size:
                _curve(ax, i, *M.cdf(v), q)
        ax.set(title=f"VoIP one-way delay, {c} @ {_rate(lk)} Mb/s", xlabel="one-way delay (ms)", ylabel="CDF",
               xscale="log")  # fmt: skip

    def web(ax, key):
        page, lk = key
        width = 0.8 / len(WEB_CROSS)
        for k, c in enumerate(WEB_CROSS):
            cells = [o.results["web"].get(q, {}).get(lk, {}).get(page, {}).get(c) for q in QDISCS]
            y = [np.nan if s is None else s["mean"] for s in cells]
            err = [0.0 if s is None else s["std"] for s in cells]
            ax.bar(np.arange(len(QDISCS)) + (k - 0.5) * width, y, width, yerr=err, label=c,
                   color=style(k)["color"])  # fmt: skip
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xticks(np.arange(len(QDISCS)), QDISCS, rotation=45, fontsize=7)
        ax.set(title=f"{page} page, {lk} Mb/s", ylabel="mean fetch time / unloaded")

    figs = {}
    web_keys = [(p, lk) for p in PAGES for lk in LINKS if any(lk in per for per in o.results["web"].values())]
    if web_keys:
        figs["web"] = _panels(web_keys, (4.5, 4), web)
    panels = [("rrul", lk) for lk in LINKS if any(lk in per for per in o.results["rrul"].values())]
    panels += [("wifi_rrul", "wifi")] if o.results["wifi"] else []
    if panels:
        figs["rrul"] = _panels(panels, (5, 4.5), rrul)
    if o.transient:
        figs["transient"] = _panels(
            sorted({lk for _, lk in o.transient}, key=list(LINKS).index), (5, 4), transient
        )
    if o.voip_owd:
        order = {c: i for i, c in enumerate(CROSS)}
        keys = sorted(
            {(c, lk) for _, c, lk in o.voip_owd}, key=lambda k: (order[k[0]], list(LINKS).index(k[1]))
        )
        figs["voip_cdf"] = _panels(keys, (4.5, 4), voip)
    return figs


def write_outputs(o: Outcome) -> list[Path]:
    import io

    from rich.console import Console

    from aqmlab import plots

    o.report_dir.mkdir(parents=True, exist_ok=True)
    paths = [plots.save(fig, o.report_dir / f"{name}.png") for name, fig in figures(o).items()]
    buf = Console(record=True, width=160, file=io.StringIO())
    print_tables(o, buf)
    c = o.counts
    done = f"{c['total']} runs ({c['ran']} run now, {c['skipped']} reused), {c['failed']} failed."
    parts = ["<!doctype html><html><head><meta charset=utf-8><title>goodbadwifi2015</title></head><body>",
             f"<h1>{html.escape(DESCRIPTION)}</h1>", f"<p>{done}{' Quick mode.' if o.quick else ''}</p>",
             f"<pre>{html.escape(buf.export_text())}</pre>"]  # fmt: skip
    for p in paths:
        parts.append(
            f"<figure><img src='data:image/png;base64,{base64.b64encode(p.read_bytes()).decode()}'></figure>"
        )
    parts.append("</body></html>")
    (o.report_dir / "report.html").write_text("\n".join(parts))
    return [*paths, o.report_dir / "report.html"]
