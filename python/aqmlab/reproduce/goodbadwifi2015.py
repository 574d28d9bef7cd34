"""goodbadwifi2015 (Høiland-Jørgensen, Hurtig, Brunstrom: "The Good, the Bad and the WiFi:
Modern AQMs in a residential setting", Computer Networks 89, 2015): Flent's tests through seven
queue disciplines on residential links.

Links 100/100, 10/10 and 10/1 Mb/s (down/up), 50 ms base RTT, Linux 3.14's TCP CUBIC; each
direction's qdisc configured for that direction's rate as the study lists it (``qdisc_for``).
Series (scenario files in ``scenarios/goodbadwifi2015/``):

* ``rrul``: mean TCP goodput per direction and mean induced latency (the four probe streams'
  mean RTT minus the base RTT, Flent's "Ping (ms) avg" less the empty-path RTT), per run over
  the window [10 s, 145 s]; the study plots medians over the runs with 1-sigma ellipses (here:
  the figure ``rrul.png``); and the transient, the ICMP ping's RTT over the first 25 s (the load
  starts at 5 s), point-wise mean over the runs (``transient.png``).
* ``voip``: D-ITG's VoIP stream upstream beside one TCP upload (``1up``) or RRUL (``rrul``):
  the stream's one-way loss (packets that never reached the receiver, in %: D-ITG's, not round
  trips) and its one-way delay upstream averaged over each 200 ms (Flent's step, as ITGDec
  reports it), pooled over the runs for the CDFs (``voip_cdf.png``). The stream crosses
  the uplink, so the study's 1, 10 and 100 Mbit/s VoIP rates are the uplinks of the 10/1, 10/10
  and 100/100 links (the JSON keys the VoIP results by that upstream rate).
* ``rtt_fair``: four CUBIC uploads at 10, 50, 200 and 500 ms for 600 s: Jain's index over their
  goodputs, each one's mean goodput, their total and each one's retransmission timeouts.
* ``wifi``: every test the study ran over WiFi (RRUL, VoIP beside one upload and beside RRUL,
  web unloaded and beside either) over an 802.11n link behind 100/100 Mb/s (``wifi_rrul.toml``:
  the ath9k AP with Minstrel HT, the iwlwifi 5100 client, DCF contention), the tested qdisc on
  both WiFi interfaces; each test's flows are those of its wired file, its runs on link "wifi".
* ``web``: Flent's http-getter fetching a page every second (``webpage`` flow: a name lookup,
  the main document, the objects over 4 workers), the small (56 kB in 3 requests) or large page
  (3 MB in 110 requests), unloaded, beside one TCP upload (``1up``) or beside RRUL (``rrul``):
  each run's mean fetch time over the fetches started in the window, normalised by the mean of
  the unloaded runs of the same qdisc, link and page; mean and standard deviation over the runs;
  the RRUL-loaded runs' induced latency beside it. The cases reuse voip_1up.toml (its upload) and
  rrul.toml (its flows), the page flow put first.

Compared with the study's Table 2 (average VoIP loss, the mean over runs) and judged against
five claims of its text (``CLAIMS``), each at every link it was run on. ``--quick`` runs one
replication of every case (the study ran 30), each as long and set up as in the full run: every
published cell and claim needs all seven qdiscs and the claims hold for every link.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from aqmlab.lazy import lazy
from aqmlab.reproduce import DEFAULT_EXECUTION, Execution
from aqmlab.reproduce.study import Claim, Option, Outcome, Published, Quick, Study, Table, agrees, fmt

np = lazy("numpy")
pd = lazy("pandas")
pa = lazy("pyarrow")
M = lazy("aqmlab.metrics")
sweep = lazy("aqmlab.sweep")

NAME = "goodbadwifi2015"
DESCRIPTION = (
    "Høiland-Jørgensen et al. 2015: RRUL, VoIP, RTT fairness, web and WiFi through pfifo_fast, ARED, PIE, "
    "CoDel, SFQ, fq_nocodel and fq_codel on 100/100, 10/10 and 10/1 Mb/s links, 50 ms, CUBIC (Linux 3.14)"
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
WARMUP_S = 10.0
STEP_NS = 200_000_000
"""Flent's step: ITGDec's interval for the VoIP stream's delay averages."""
"""The window starts 5 s after the load (Flent's DELAY and its cutoff of DELAY)."""
TRANSIENT_S = 25.0
METRICS_FN = "aqmlab.reproduce.goodbadwifi2015:run_metrics"
TEST_FILES = {
    "rrul": ["rrul"],
    "voip": ["voip_1up", "voip_rrul"],
    "rtt_fair": ["rtt_fair"],
    "wifi": ["wifi_rrul", "voip_1up", "voip_rrul", "web_none", "web_1up", "web_rrul"],
    "web": ["web_none", "web_1up", "web_rrul"],
}
PAGES = ["small", "large"]
WEB_CROSS = ["1up", "rrul"]
PAGE_FLOW = {"kind": "webpage", "label": "page", "profile": "linux_3_14", "interval": "1s", "start": "5s"}
"""http-getter as Flent's http tests run it: a fetch every second, 4 workers (the default)."""
WEB_BASE = {"web_none": ("voip_1up", 0), "web_1up": ("voip_1up", 1), "web_rrul": ("rrul", 0)}
"""Per web case: the scenario file lending its cross traffic, and its first flow kept (the VoIP
file's upload without its VoIP stream; all of RRUL)."""
WIFI = "wifi"
"""The link name of the WiFi runs (beside the wired LINKS)."""
WIFI_FILE = "wifi_rrul"
"""The WiFi setup; the other WiFi tests take their flows from their wired files."""
WIFI_HOPS = (0, 3)
"""The hops of wifi_rrul.toml that run the tested qdisc: the client's WiFi interface, the AP's."""


LINUX_RED = {"gentle": False, "wait": False, "max_p": 0.02}
"""Linux 3.14's sch_red where it departs from ARED's paper defaults: no gentle ramp (red.h
red_cmp_thresh and red_action: every arrival with qavg >= qth_max is a hard mark, dropped); drop
gaps uniform on [1, 1/p_b] (red_action draws qR once after each drop and marks when
p_b x qcount reaches it: the paper's uniformisation, ns-2's wait off); max_p starting at tc's
default probability 0.02 (iproute2 q_red.c), from where the 500 ms adaptation moves it."""


def qdisc_for(name: str, mbps: int) -> dict:
    """The study's configuration of ``name`` for a direction of ``mbps`` (docs/study-setups.md 4):
    FIFO and SFQ limits 127 packets at 1 and 10 Mb/s, 1000 at 100 (Linux txqueuelen); ARED's
    target delay 20 ms with min_th half of it at the link rate, at least one MTU (1514 B), and
    max_th 3 x min_th (2 MTU at 1 Mb/s), on the backlog in bytes with a drop probability that
    does not depend on the packet's size (Linux's sch_red: ``bytes = "linux"``) and Linux's drop
    rules (``LINUX_RED``); PIE as Linux 3.14 with target 20 ms, t_update 30 ms;
    CoDel and fq_codel targets 13 ms at 1 Mb/s (a packet's transmission time), else 5 ms."""
    fifo = "127p" if mbps <= 10 else "1000p"
    target = "13ms" if mbps <= 1 else "5ms"
    if name == "pfifo_fast":
        return {"kind": "pfifo_fast", "limit": fifo}
    if name == "ared":
        q = {
            "kind": "ared",
            "limit": fifo,
            "target_delay": "20ms",
            "min_th_floor": "1514B",
            "bytes": "linux",
            **LINUX_RED,
        }
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


def _flows(test: str) -> list[dict]:
    """The flows of a scenario file."""
    return tomllib.loads(scenario_file(test).read_text())["flows"]


def web_cross(test: str) -> list[dict]:
    """A web case's cross traffic: none, the VoIP file's upload, or RRUL's flows."""
    base, first = WEB_BASE[test]
    if test == "web_none":
        return []
    cross = _flows(base)[first:]
    return cross[:1] if test == "web_1up" else cross


def web_doc(test: str, reps: int, qdiscs, links) -> dict:
    """The sweep of a web case: the page flow and the cross traffic of its base file, per
    (link, qdisc, page)."""
    base, cross = WEB_BASE[test][0], web_cross(test)
    cases = [(lk, q, p) for lk in links for q in qdiscs for p in PAGES]
    doc = sweep_doc(base, reps, qdiscs, links)
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


def wifi_doc(test: str, reps: int, qdiscs, links=None) -> dict:
    """The sweep of a test over WiFi: wifi_rrul.toml with the test's flows (a web test: per
    page), every qdisc on its two WiFi interfaces configured for 100 Mb/s."""
    pages = PAGES if test.startswith("web_") else [None]
    cases = [(q, p) for q in qdiscs for p in pages]
    zip_: dict[str, list] = {"params.link": [WIFI] * len(cases), "params.qdisc": [q for q, _ in cases]}
    zip_.update({f"topology.hops.{h}.qdisc": [qdisc_for(q, 100) for q, _ in cases] for h in WIFI_HOPS})
    if test.startswith("web_"):
        zip_["params.page"] = [p for _, p in cases]
        zip_["flows"] = [[{**PAGE_FLOW, "page": p}, *web_cross(test)] for _, p in cases]
    elif test != WIFI_FILE:
        zip_["flows"] = [_flows(test)] * len(cases)
    name = f"{NAME}-{test}" if test == WIFI_FILE else f"{NAME}-{WIFI}-{test}"
    doc = {"base": str(scenario_file(WIFI_FILE)), "name": name, "seed": 2015, "reps": reps, "zip": zip_}
    if test.startswith("web_"):
        doc["seed_from"] = ["params.page"]
    return doc


def sweep_doc(test: str, reps: int, qdiscs, links) -> dict:
    """The sweep of one scenario file: every (link, qdisc) case, common seeds across qdiscs."""
    cases = [(lk, q) for lk in links for q in qdiscs]
    return {
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


def _step_means_ms(tables: dict, flow: int) -> np.ndarray:
    """The stream's one-way delay up (ms) averaged over each STEP_NS of send time from W, the
    steps without a delivered packet left out (ITGDec's per-interval mean, as Flent reads it)."""
    p = M.probe_table(tables, flow, WARMUP_S)
    owd = M._nullable_float(p, "owd_up_ns") / 1e6
    step = p.column("t_send_ns").to_numpy().astype(np.int64) // STEP_NS
    ok = ~np.isnan(owd)
    steps, inverse = np.unique(step[ok], return_inverse=True)
    return np.bincount(inverse, weights=owd[ok]) / np.bincount(inverse) if steps.size else np.array([])


def run_metrics(tables: dict, meta: dict) -> tuple[dict, dict[str, pa.Table]]:
    """Per run (in the sweep workers): goodput per direction, induced latency, the VoIP stream's
    one-way loss, Jain's index, each RTT-fairness upload's goodput and retransmission timeouts (its
    label names its RTT); and two small tables: the ICMP ping's RTT over the first 25 s
    (``transient``) and the VoIP one-way delay averaged over each 200 ms (``voip_owd``)."""
    flows = tables["flows"].select(["flow", "label", "kind", "rto_count"]).to_pylist()
    labels = {int(r["flow"]): str(r["label"]) for r in flows}
    kinds = {int(r["flow"]): str(r["kind"]) for r in flows}
    rtos = {int(r["flow"]): int(r["rto_count"]) for r in flows}
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
        **{f"rto_{labels[f]}": rtos[f] for f in tcp if labels[f].endswith("ms")},
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
        loss = M.probe_loss(tables, voip[0], WARMUP_S, int(meta["duration_ns"]), up_only=True)
        out["voip_loss_pct"] = None if loss is None else 100 * loss
        extra["voip_owd"] = pa.table({"owd_ms": pa.array(_step_means_ms(tables, voip[0]))})
    if "webpage" in tables and tables["webpage"].num_rows:
        ft = M.fetch_times_s(tables, WARMUP_S)
        out["web_fetch_s"] = float(ft.mean()) if ft.size else None
    return out, extra


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


RRUL_KEYS = ("goodput_down_mbps", "goodput_up_mbps", "induced_latency_ms")


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
                "voip_loss_pct": _stats(g.get("voip_loss_pct", []))
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
    {qdisc: {rate: v}} (the uploads' rate), wifi_rrul {qdisc: {metric: v}}, wifi_voip_loss_pct
    {qdisc: {cross: v}} (the mean over runs, as the study's average loss),
    web_rrul_induced_latency_ms {qdisc: {page: {link: v}}}; means of rtt_fair_rto {qdisc: {rate:
    {flow: timeouts per run}}} and web_fetch_norm {qdisc: {page: {cross: {link: v}}}}."""
    voip, rrul, fair = stats["voip"], stats["rrul"], stats["rtt_fair"]

    def per_voip(reduce):
        return {q: {c: {_rate(lk): reduce(v["voip_loss_pct"]) for lk, v in per.items() if lk in LINKS}
                    for c, per in cs.items()} for q, cs in voip.items()}  # fmt: skip

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
        "wifi_voip_loss_pct": {
            q: {c: _mean(per[WIFI]["voip_loss_pct"]) for c, per in cs.items() if WIFI in per}
            for q, cs in voip.items()
            if any(WIFI in per for per in cs.values())
        },
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


# --------------------------------------------------------------------------- published (Table 2)

TABLE2_CROSS = {"1 TCP stream": "1up", "RRUL": "rrul"}
"""The study's cross-traffic columns -> the VoIP series' cross traffic."""
TABLE2_RATES = ("1", "10", "100")
"""The study's VoIP rates, Mbit/s: the uplink the stream crosses (the 10/1, 10/10 and 100/100 links)."""
TABLE2 = {
    "pfifo_fast": (0.88, 0.10, 0, 8.54, 0.20, 0.032),
    "ARED": (7.95, 0.45, 0.002, 26.33, 0.61, 0.019),
    "PIE": (2.75, 0.04, 0.002, 14.03, 0.44, 0.016),
    "CoDel": (6.46, 0.02, 0.002, 10.60, 0.19, 0.004),
    "SFQ": (0, 0, 0, 0.42, 0, 0),
    "fq_nocodel": (0, 0, 0, 0, 0, 0),
    "fq_codel": (0, 0, 0, 0.04, 0, 0),
}
"""Table 2, average VoIP packet loss (%): per qdisc, 1 TCP stream at 1 / 10 / 100 Mbit/s, then RRUL."""
TABLE2_ROWS = dict(zip(TABLE2, QDISCS, strict=True))
"""The study's row names -> the qdiscs (the same order)."""
TABLE2_FLOOR = 0.1
"""Loss below 0.1 % on both sides agrees (the table's values near zero)."""


def _table2_col(cross: str, rate: str) -> str:
    return f"{cross} @ {rate} Mbit/s"


def table2_measured(o: Outcome) -> dict:
    """The mean over runs of each VoIP case's loss, %, in Table 2's rows and columns."""
    loss = o.results["voip_loss_pct_mean"]
    return {row: {_table2_col(c, r): loss.get(q, {}).get(cross, {}).get(r) for c, cross in TABLE2_CROSS.items()
                  for r in TABLE2_RATES} for row, q in TABLE2_ROWS.items()}  # fmt: skip


PUBLISHED = (
    Published(
        "Table 2",
        "average VoIP packet loss, % (1 / 10 / 100 Mbit/s: the upstream of the 10/1, 10/10, 100/100 links)",
        values={
            row: dict(zip([_table2_col(c, r) for c in TABLE2_CROSS for r in TABLE2_RATES], v))
            for row, v in TABLE2.items()
        },
        measured=table2_measured,
        floor=TABLE2_FLOOR,
        series=("voip",),
    ),
)


# --------------------------------------------------------------------------- claims
# Each threshold is stated once, beside the words of the claim it comes from.

FIFO = "pfifo_fast"
SINGLE_QUEUE_AQMS = ("ared", "pie", "codel")
"""Claim 3, "the single-queue AQMs (ARED, PIE, CoDel)"."""
FQ_SCHEMES = ("sfq", "fq_nocodel", "fq_codel")
"""Claims 1 and 5, "the FQ schemes (SFQ, fq_nocodel, fq_codel)"."""


def _complete(table: dict, qdiscs=QDISCS) -> dict:
    """{case: {qdisc: value}} from a results table {qdisc: {case: value}}, over the cases (links,
    rates) measured for every one of ``qdiscs``."""
    cases = [c for c in table.get(qdiscs[0], {}) if all(table.get(q, {}).get(c) is not None for q in qdiscs)]
    return {c: {q: table[q][c] for q in qdiscs} for c in cases}


def _by_case(table: dict, qdiscs=QDISCS) -> dict:
    """``_complete``; ValueError when no case was measured for every one of ``qdiscs``."""
    out = _complete(table, qdiscs)
    if not out:
        raise ValueError(f"no case measured for all of {', '.join(qdiscs)}")
    return out


def _others(values: dict, group) -> list[float]:
    return [v for q, v in values.items() if q not in group]


def claim_fq_best_rrul(o: Outcome):
    """Claim 1 at every link: each FQ scheme's median induced latency below every other qdisc's,
    and its median goodput (down + up) at least every other qdisc's."""
    lat = _by_case(o.results["rrul_induced_latency_ms"])
    down, up = _by_case(o.results["rrul_goodput_down_mbps"]), _by_case(o.results["rrul_goodput_up_mbps"])
    good = {lk: {q: down[lk][q] + up[lk][q] for q in QDISCS} for lk in lat}
    lowest = all(max(v[q] for q in FQ_SCHEMES) < min(_others(v, FQ_SCHEMES)) for v in lat.values())
    best = all(min(v[q] for q in FQ_SCHEMES) >= max(_others(v, FQ_SCHEMES)) for v in good.values())
    return lowest and best, {"induced_latency_ms": lat, "goodput_mbps": good}


BY_FAR = 2.0
"""Claim 2, "pfifo_fast has by far the highest induced latency": at least twice the next highest."""


def claim_fifo_highest(o: Outcome):
    lat = _by_case(o.results["rrul_induced_latency_ms"])
    ratio = {lk: v[FIFO] / max(_others(v, (FIFO,))) for lk, v in lat.items()}
    return all(r >= BY_FAR for r in ratio.values()), {
        "fifo_over_next_highest": ratio,
        "induced_latency_ms": lat,
    }


def claim_aqm_fairness(o: Outcome):
    """Claim 3 at every rate: each single-queue AQM's median Jain's index below the FIFO's."""
    jain = _by_case(o.results["rtt_fair_jain"], (FIFO, *SINGLE_QUEUE_AQMS))
    return all(v[q] < v[FIFO] for v in jain.values() for q in SINGLE_QUEUE_AQMS), {"jain": jain}


FQ_CODEL_LOSS = 0.05
"""Claim 4, "fq_codel at 1 Mbit/s loses about 5 % of throughput in the RTT-fairness test": the
four uploads' total goodput under fq_codel that much below the median of the other qdiscs'
totals at 1 Mbit/s; "about": within the agreement rule's 30 %."""
LOSS_RATE = "1"
"""... "at 1 Mbit/s": the uploads' rate (the 10/1 link)."""
SUFFERS_RTOS = 1.0
"""... "(the 10 ms flow suffers retransmission timeouts)": at least one per run, on average."""


def claim_fq_codel_loss(o: Outcome):
    total = _by_case(o.results["rtt_fair_goodput_mbps"])[LOSS_RATE]
    loss = 1 - total["fq_codel"] / float(np.median(_others(total, ("fq_codel",))))
    rtos = o.results["rtt_fair_rto"]["fq_codel"][LOSS_RATE]["10ms"]
    holds = agrees(FQ_CODEL_LOSS, loss, None) and rtos >= SUFFERS_RTOS
    return holds, {"throughput_loss": loss, "total_goodput_mbps": total, "fq_codel_10ms_rtos_per_run": rtos}


FOLLOW_TAU = 0.5
"""Claim 5, "web page fetch times follow latency": across the qdiscs, the lower latency goes with
the faster fetch in at least three of four pairs (Kendall's tau >= 0.5), RRUL-loaded fetches
against the latency RRUL's probes measure in the same runs."""


def kendall_tau(x: list[float], y: list[float]) -> float:
    """Kendall's tau-a: (concordant - discordant pairs) / all pairs."""
    pairs = [(i, j) for i in range(len(x)) for j in range(i + 1, len(x))]
    s = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i, j in pairs)
    return float(s / len(pairs))


def claim_web_follows_latency(o: Outcome):
    """Claim 5 at every link and page: tau(fetch time under RRUL, latency) >= FOLLOW_TAU, and
    "the FQ schemes fetch fastest under load": under either load each FQ scheme's normalised
    fetch time below every other qdisc's. Judged on the cases where every qdisc completed a
    fetch in the window; the others are listed."""
    fetch, lat = o.results["web_fetch_norm"], o.results["web_rrul_induced_latency_ms"]
    tau, fastest, left_out = {}, {}, []
    for p in PAGES:
        latency = _complete({q: lat.get(q, {}).get(p, {}) for q in QDISCS})
        for c in WEB_CROSS:
            table = {q: fetch.get(q, {}).get(p, {}).get(c, {}) for q in QDISCS}
            done = _complete(table)
            left_out += [f"{p} {c} {lk}" for lk in _links(table) if lk not in done]
            for lk, v in done.items():
                fastest[f"{p} {c} {lk}"] = max(v[q] for q in FQ_SCHEMES) < min(_others(v, FQ_SCHEMES))
                if c == "rrul" and lk in latency:
                    tau[f"{p} {lk}"] = kendall_tau([v[q] for q in QDISCS], [latency[lk][q] for q in QDISCS])
    if not tau or not fastest:
        raise ValueError("no web case with a completed fetch for every qdisc")
    holds = all(t >= FOLLOW_TAU for t in tau.values()) and all(fastest.values())
    return holds, {
        "kendall_tau": tau,
        "fq_fastest": fastest,
        "left out (a qdisc with no completed fetch)": ", ".join(left_out) or "none",
    }


CLAIMS = (
    Claim("1", "The FQ schemes (SFQ, fq_nocodel, fq_codel) give the lowest latency and the best goodput in RRUL.",
          claim_fq_best_rrul, ("rrul",)),
    Claim("2", "pfifo_fast has by far the highest induced latency.", claim_fifo_highest, ("rrul",)),
    Claim("3", "The single-queue AQMs (ARED, PIE, CoDel) make RTT fairness worse than the FIFO.",
          claim_aqm_fairness, ("rtt_fair",)),
    Claim("4", "fq_codel at 1 Mbit/s loses about 5 % of throughput in the RTT-fairness test (the 10 ms flow "
          "suffers retransmission timeouts).", claim_fq_codel_loss, ("rtt_fair",)),
    Claim("5", "Web page fetch times follow latency: the FQ schemes fetch fastest under load.",
          claim_web_follows_latency, ("web",)),
)  # fmt: skip

STUDY = Study(
    name=NAME,
    description=DESCRIPTION,
    reps=REPS,
    series=tuple(SERIES),
    options=(
        Option("--qdisc", "qdiscs", tuple(QDISCS), "only these qdiscs"),
        Option(
            "--link",
            "links",
            tuple(LINKS),
            "only these wired links, down/up Mb/s (the WiFi test has its own)",
        ),
    ),
    quick=Quick(reps=1, note="every case, as long as in the full run"),
    run=run,
    tables=tables,
    figures=figures,
    published=PUBLISHED,
    claims=CLAIMS,
    series_help="all: every test; the others: that test alone",
)
