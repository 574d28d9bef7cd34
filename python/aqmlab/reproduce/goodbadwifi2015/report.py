"""goodbadwifi2015's sweeps run and what it reports: the runs aggregated per case (``aggregate``,
``results``), the tables and the figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aqmlab.lazy import lazy
from aqmlab.reproduce import DEFAULT_EXECUTION, Execution
from aqmlab.reproduce.goodbadwifi2015.metrics import METRICS_FN
from aqmlab.reproduce.goodbadwifi2015.setup import (
    CROSS,
    LINKS,
    PAGES,
    QDISCS,
    REPS,
    SERIES,
    TEST_FILES,
    WEB_CROSS,
    WIFI,
    sweep_doc,
    web_doc,
    wifi_doc,
)
from aqmlab.reproduce.study import Outcome, Table, fmt

np = lazy("numpy")
pd = lazy("pandas")
M = lazy("aqmlab.metrics")
sweep = lazy("aqmlab.sweep")


def run(reps: int = REPS, series: str = "all", ex: Execution = DEFAULT_EXECUTION, qdiscs: list[str] | None = None,
        links: list[str] | None = None) -> Outcome:  # fmt: skip
    """Runs (or resumes) the chosen series on the chosen wired links (the WiFi test has its own)
    and aggregates them."""
    qdiscs, links = list(qdiscs or QDISCS), list(links or LINKS)
    sweeps, frames = [], []
    for test in SERIES[series]:
        doc = {"web": web_doc, "wifi": wifi_doc}.get(test, sweep_doc)
        for f in TEST_FILES[test]:
            res = ex.sweep(sweep.parse_sweep(doc(f, reps, qdiscs, links)), METRICS_FN)
            sweeps.append(res)
            frames.append(res.table.assign(test=f))
    runs = pd.concat(frames, ignore_index=True)
    stats = aggregate(runs)
    transient, owd = _extras(ex.root, runs)
    data = {"stats": stats, "transient": transient, "voip_owd": owd}
    return Outcome(results(stats), runs, sweeps, series, notes=_notes(runs), data=data)


def _notes(runs: pd.DataFrame) -> list[str]:
    """The web runs without a completed fetch in the window, named (their fetch time is missing)."""
    web = runs[(runs["status"] == "ok") & runs["test"].str.startswith("web_")]
    if "web_fetch_s" not in web:
        return []
    none = web[pd.to_numeric(web["web_fetch_s"], errors="coerce").isna()]
    if not len(none):
        return []
    cases = ", ".join(f"{r.test} {r.qdisc} {r.link} {r.page} rep {r.rep}" for r in none.itertuples())
    note = (f"{len(none)} of {len(web)} web runs completed no page fetch started after the warm-up (a fetch "
            f"that never ends holds back the next ones; the fetch timeout is the test length): {cases}")  # fmt: skip
    return [note]


def _read_extra(root: Path, name: str, runs: pd.DataFrame) -> pd.DataFrame:
    """The extra table ``name`` of the successful runs among ``runs``, with their case labels."""
    ok = runs[runs["status"] == "ok"]
    t = sweep.read_extra(root, name, ok["run_id"]) if len(ok) else pd.DataFrame()
    return t.join(ok.set_index("run_id")[["qdisc", "link", "test"]], on="run_id") if len(t) else t


def _extras(root: Path, runs: pd.DataFrame) -> tuple[dict, dict]:
    """{(qdisc, link): (t_s, mean RTT ms)} of the RRUL start and {(qdisc, cross, link): one-way
    delays ms} of the VoIP stream, pooled over the runs."""
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
    """Median, mean, std (None over one run) and count of the values that are numbers."""
    v = pd.to_numeric(pd.Series(values), errors="coerce").dropna().to_numpy()
    if not v.size:
        return None
    return {"median": float(np.median(v)), "mean": float(v.mean()), "std": float(v.std(ddof=1)) if v.size > 1 else None,
            "runs": int(v.size)}  # fmt: skip


GOODPUT_KEYS = ("goodput_down_mbps", "goodput_up_mbps")
RRUL_KEYS = (*GOODPUT_KEYS, "induced_latency_ms")


def aggregate(runs: pd.DataFrame) -> dict:
    """Per metric and case: median, mean, std and count over the successful runs."""
    ok = runs[runs["status"] == "ok"]
    out: dict = {"rrul": {}, "voip": {}, "rtt_fair": {}, "wifi": {}, "web": _web_norm(ok), "web_latency": {}}
    for (test, q, lk), g in ok.groupby(["test", "qdisc", "link"]):
        if test == "web_rrul":
            for page, gp in g.groupby("page"):
                out["web_latency"].setdefault(q, {}).setdefault(lk, {})[page] = _stats(
                    gp["induced_latency_ms"]
                )
        elif test.startswith("web_"):
            continue
        elif test in ("rrul", "wifi_rrul"):
            out["rrul" if test == "rrul" else "wifi"].setdefault(q, {})[lk] = {
                k: _stats(g[k]) for k in RRUL_KEYS
            }
        elif test.startswith("voip"):
            out["voip"].setdefault(q, {}).setdefault(test.removeprefix("voip_"), {})[lk] = {
                "voip_loss_pct": _stats(g.get("voip_loss_pct", [])),
                **{k: _stats(g[k]) for k in GOODPUT_KEYS},
            }
        else:
            out["rtt_fair"].setdefault(q, {})[lk] = {k: _stats(g[k]) for k in _rtt_fair_keys(g.columns)}
    return out


def _rtt_fair_keys(columns) -> list[str]:
    """Jain's index, the uploads' total goodput, and each upload's goodput and timeouts (named by
    its RTT: goodput_10ms_mbps, rto_10ms)."""
    per_flow = (
        c for c in columns if c.startswith(("goodput_", "rto_")) and c.removesuffix("_mbps").endswith("ms")
    )
    return ["jain", "goodput_up_mbps", *sorted(per_flow)]


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


def _link_name(link: str) -> str:
    """A link as the figures name it: the WiFi link, or a wired one by its upstream rate."""
    return "WiFi" if link == WIFI else f"{_rate(link)} Mb/s"


def _link_order(link: str) -> int:
    return [*LINKS, WIFI].index(link)


def _med(s: dict | None) -> float | None:
    return None if s is None else s["median"]


def _mean(s: dict | None) -> float | None:
    return None if s is None else s["mean"]


def results(stats: dict) -> dict:
    """The JSON document, over runs: medians of voip_loss_pct {qdisc: {cross: {rate: v}}} (rate =
    the VoIP's upstream Mb/s; voip_loss_pct_mean: their means, the study's average loss), rrul_*
    {qdisc: {link: v}}, rtt_fair_jain and rtt_fair_goodput_mbps (the four uploads' total)
    {qdisc: {rate: v}} (the uploads' rate), wifi_rrul {qdisc: {metric: v}} (the goodput per
    direction and the induced latency), wifi_voip_loss_pct {qdisc: {cross: v}} (the mean over
    runs, as the study's average loss), wifi_voip_goodput_mbps {qdisc: {cross: {"down" | "up":
    v}}} (the TCP goodput per direction of the same runs),
    web_rrul_induced_latency_ms {qdisc: {page: {link: v}}}; means of rtt_fair_rto {qdisc: {rate:
    {flow: timeouts per run}}} and web_fetch_norm {qdisc: {page: {cross: {link: v}}}}."""
    voip, rrul, fair = stats["voip"], stats["rrul"], stats["rtt_fair"]

    def per_voip(reduce):
        return {q: {c: {_rate(lk): reduce(v["voip_loss_pct"]) for lk, v in per.items() if lk in LINKS}
                    for c, per in cs.items()} for q, cs in voip.items()}  # fmt: skip

    def wifi_voip(cell):
        return {q: {c: cell(per[WIFI]) for c, per in cs.items() if WIFI in per} for q, cs in voip.items()
                if any(WIFI in per for per in cs.values())}  # fmt: skip

    def per_link(key):
        return {q: {lk: _med(v[key]) for lk, v in per.items()} for q, per in rrul.items()}

    def per_rate(key):
        return {q: {_rate(lk): _med(v[key]) for lk, v in per.items()} for q, per in fair.items()}

    return {
        "voip_loss_pct": per_voip(_med),
        "voip_loss_pct_mean": per_voip(_mean),
        **{f"rrul_{k}": per_link(k) for k in ("induced_latency_ms", "goodput_down_mbps", "goodput_up_mbps")},
        "rtt_fair_jain": per_rate("jain"),
        "rtt_fair_goodput_mbps": per_rate("goodput_up_mbps"),
        "rtt_fair_rto": {
            q: {
                _rate(lk): {k.removeprefix("rto_"): _mean(s) for k, s in v.items() if k.startswith("rto_")}
                for lk, v in per.items()
            }
            for q, per in fair.items()
        },
        "wifi_rrul": {q: {k: _med(per[WIFI][k]) for k in RRUL_KEYS} for q, per in stats["wifi"].items()},
        "wifi_voip_loss_pct": wifi_voip(lambda v: _mean(v["voip_loss_pct"])),
        "wifi_voip_goodput_mbps": wifi_voip(
            lambda v: {k.removeprefix("goodput_").removesuffix("_mbps"): _med(v.get(k)) for k in GOODPUT_KEYS}
        ),
        "web_fetch_norm": {
            q: {
                p: {c: {lk: _mean(pages.get(p, {}).get(c)) for lk, pages in per.items()} for c in WEB_CROSS}
                for p in PAGES
            }
            for q, per in stats["web"].items()
        },
        "web_rrul_induced_latency_ms": {
            q: {p: {lk: _med(pages.get(p)) for lk, pages in per.items()} for p in PAGES}
            for q, per in stats["web_latency"].items()
        },
    }


def _cell(s: dict | None, dec: int = 2) -> str:
    """A case's median (std over runs); '-' for a std over one run."""
    return "-" if s is None else f"{fmt(s['median'], dec)} ({fmt(s['std'], dec)})"


def _mean_cell(s: dict | None) -> str:
    return "-" if s is None else f"{fmt(s['mean'], 2)} ({fmt(s['std'], 2)})"


def _links(per_qdisc: dict, links=tuple(LINKS)) -> list[str]:
    """The ``links`` (default: the wired ones) measured in a {qdisc: {link: ...}} table, in order."""
    return [lk for lk in links if any(lk in per for per in per_qdisc.values())]


ALL_LINKS = (*LINKS, WIFI)
"""The wired links, then the WiFi one (the web tables and figures show both)."""


def _web_title(link: str) -> str:
    return "WiFi" if link == WIFI else f"{link} Mb/s"


def _voip_links(voip: dict) -> list[str]:
    """The links measured in the VoIP table {qdisc: {cross: {link: ...}}}."""
    return _links({(q, c): per for q, cs in voip.items() for c, per in cs.items()})


def _qdisc_table(title: str, per_qdisc: dict, columns: list[tuple[str, Any]], cell) -> Table:
    """One row per qdisc run; ``columns``: (head, key), each cell ``cell(per_qdisc[q], key)``."""
    rows = [(q, *(cell(per_qdisc[q], k) for _, k in columns)) for q in QDISCS if q in per_qdisc]
    return Table(title, ("qdisc", *(h for h, _ in columns)), rows)


LINK_TABLES = (
    ("rrul", "RRUL: median induced latency, ms (std over runs)", "induced_latency_ms", 2),
    ("rrul", "RRUL: median goodput down, Mb/s (std)", "goodput_down_mbps", 2),
    ("rrul", "RRUL: median goodput up, Mb/s (std)", "goodput_up_mbps", 2),
    ("rtt_fair", "RTT fairness: median Jain's index over the four uploads (std)", "jain", 3),
    ("rtt_fair", "RTT fairness: median total goodput of the four uploads, Mb/s (std)", "goodput_up_mbps", 3),
)
"""(series, title, metric, decimals) of the tables with one column per link."""


def tables(o: Outcome) -> list[Table]:
    st = o.data["stats"]
    out = []
    for series, title, key, dec in LINK_TABLES:
        if st[series]:
            cols = [(lk, lk) for lk in _links(st[series])]
            out.append(_qdisc_table(title, st[series], cols,
                                    lambda per, lk, key=key, dec=dec: _cell(per.get(lk, {}).get(key), dec)))  # fmt: skip
    if st["rtt_fair"]:
        flows = sorted(
            {k for per in o.results["rtt_fair_rto"].values() for r in per.values() for k in r}, key=_ms
        )
        cols = [(f"{f} @ {_rate(lk)} Mb/s", (lk, f)) for lk in _links(st["rtt_fair"]) for f in flows]
        out.append(_qdisc_table("RTT fairness: retransmission timeouts per run of each upload, mean", st["rtt_fair"],
                                cols, lambda per, k: fmt(_mean(per.get(k[0], {}).get(f"rto_{k[1]}")), 2)))  # fmt: skip
    if st["wifi"]:
        cols = [("induced latency ms", "induced_latency_ms"), ("down Mb/s", "goodput_down_mbps"),
                ("up Mb/s", "goodput_up_mbps")]  # fmt: skip
        out.append(_qdisc_table("WiFi (802.11n: ath9k AP, iwlwifi client, behind 100/100 Mb/s) RRUL: medians (std)",
                                st["wifi"], cols, lambda per, k: _cell(per[WIFI].get(k))))  # fmt: skip
    if st["web"]:
        cols = [
            (f"{p} {c} {lk}", (p, c, lk))
            for p in PAGES
            for c in WEB_CROSS
            for lk in _links(st["web"], ALL_LINKS)
        ]
        out.append(_qdisc_table("Web: mean fetch time normalised to the unloaded fetch (std over runs)", st["web"],
                                cols, lambda per, k: _mean_cell(per.get(k[2], {}).get(k[0], {}).get(k[1]))))  # fmt: skip
        cols = [(f"{p} {lk}", (p, lk)) for p in PAGES for lk in _links(st["web_latency"], ALL_LINKS)]
        out.append(_qdisc_table("Web beside RRUL: median induced latency, ms (std)", st["web_latency"], cols,
                                lambda per, k: _cell(per.get(k[1], {}).get(k[0]))))  # fmt: skip
    if _voip_links(st["voip"]):
        cols = [(f"{c} @ {_rate(lk)} Mb/s", (c, lk)) for c in CROSS for lk in _voip_links(st["voip"])]
        out.append(_qdisc_table("VoIP: median loss of the upstream stream, % (std)", st["voip"], cols,
                                lambda per, k: _cell(per.get(k[0], {}).get(k[1], {}).get("voip_loss_pct"))))  # fmt: skip
    if o.results["wifi_voip_loss_pct"]:
        cols = [(c, c) for c in CROSS]
        out.append(_qdisc_table("WiFi VoIP: mean loss of the upstream stream, % (std)", st["voip"], cols,
                                lambda per, c: _mean_cell(per.get(c, {}).get(WIFI, {}).get("voip_loss_pct"))))  # fmt: skip
    return out


def _ms(label: str) -> float:
    return float(label.removesuffix("ms"))


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
    transient's mean latency, the VoIP one-way delay CDFs, the normalised web fetch times."""
    from matplotlib.patches import Ellipse

    from aqmlab.plots import style

    st, trans, owd = o.data["stats"], o.data["transient"], o.data["voip_owd"]

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
            if (q, lk) in trans:
                _curve(ax, i, *trans[(q, lk)], q)
        ax.set(title=f"RRUL start, {lk} Mb/s: ICMP RTT, mean over runs", xlabel="time (s)", ylabel="RTT (ms)")

    def voip(ax, key):
        c, lk = key
        for i, q in enumerate(QDISCS):
            v = owd.get((q, c, lk))
            if v is not None and v.size:
                _curve(ax, i, *M.cdf(v), q)
        ax.set(title=f"VoIP one-way delay, {c} @ {_link_name(lk)}", xlabel="one-way delay (ms)", ylabel="CDF",
               xscale="log")  # fmt: skip

    def web(ax, key):
        page, lk = key
        width = 0.8 / len(WEB_CROSS)
        for k, c in enumerate(WEB_CROSS):
            cells = [st["web"].get(q, {}).get(lk, {}).get(page, {}).get(c) for q in QDISCS]
            y = [np.nan if s is None else s["mean"] for s in cells]
            err = [0.0 if s is None or s["std"] is None else s["std"] for s in cells]
            ax.bar(np.arange(len(QDISCS)) + (k - 0.5) * width, y, width, yerr=err, label=c,
                   color=style(k)["color"])  # fmt: skip
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xticks(np.arange(len(QDISCS)), QDISCS, rotation=45, fontsize=7)
        ax.set(title=f"{page} page, {_web_title(lk)}", ylabel="mean fetch time / unloaded")

    figs = {}
    web_keys = [(p, lk) for p in PAGES for lk in _links(st["web"], ALL_LINKS)]
    if web_keys:
        figs["web.png"] = _panels(web_keys, (4.5, 4), web)
    panels = [("rrul", lk) for lk in _links(st["rrul"])] + ([("wifi_rrul", "wifi")] if st["wifi"] else [])
    if panels:
        figs["rrul.png"] = _panels(panels, (5, 4.5), rrul)
    if trans:
        figs["transient.png"] = _panels(
            sorted({lk for _, lk in trans}, key=list(LINKS).index), (5, 4), transient
        )
    if owd:
        keys = sorted({(c, lk) for _, c, lk in owd}, key=lambda k: (CROSS.index(k[0]), _link_order(k[1])))
        figs["voip_cdf.png"] = _panels(keys, (4.5, 4), voip)
    return figs
