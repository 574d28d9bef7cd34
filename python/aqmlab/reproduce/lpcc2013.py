"""lpcc2013 (Gong, Rossi, Testa, Valenti, Täht: AQM meets low-priority congestion control):
every experiment of docs/study-setups.md section 3, as four series.

* 3a: 5 NewReno + 5 LEDBAT through 10 Mb/s with a 500-packet buffer under DropTail and RED:
  each class's throughput over time (``reproduce.metrics.class_throughput_series``) and a table.
* 3b: the Linux 3.2 testbed (``scenarios/lpcc2013/testbed.toml``: HTB, netem 30 ms,
  1000-packet FIFO, RED, 127-packet SFQ, NewReno against libutp-LEDBAT or TCP-LP, N = 2 and 10, 60 s,
  3 runs) at 500 kb/s and 10 Mb/s: TCP% and the queueing delay of a 1 s ping (RTT minus the
  minimum RTT seen, ``metrics.ping_queueing_delay_ms``), against the study's Table I.
* 3c: the campaign of ``scenarios/lpcc2013/sweep.toml`` (every LPCC x DropTail, RED, CHOKe,
  DRR, SFQ, CoDel, 10 runs): eta, E[Q]/Q_max, TCP%, the parallel-coordinates figure.
* 3d: sensitivity around 3c's setting (LEDBAT; DropTail, where it yields, and SFQ, where it
  takes its share) to Q_max, capacity, RTT heterogeneity, N per class and the duty cycle of
  on/off sources: TCP%, fairness F = (F_TCP + F_LPCC)/2, eta, mean queueing delay.

3c runs its sweep file; 3a, 3b and 3d are one sweep of explicit cases (``cases``), always all of
them, of which ``run`` selects the ones asked (so a reduced run's cases and seeds are the full
run's). Per run (``run_metrics``, in the workers) every number is a definition of aqmlab.metrics
or of reproduce/metrics.py.
``--reps`` is 3c's replication count; the other parts run min(reps, ``PART_REPS``). ``--quick``:
3 runs per case (3c's 10 cut to the other parts' 3), 3b at 500 kb/s only (Table I), two values
of each 3d parameter (the shortest and the study's 400-packet buffer among them); every case as
long and set up as in the full run.
"""

from __future__ import annotations

import copy
import tomllib
from importlib import resources
from pathlib import Path

from aqmlab.lazy import lazy
from aqmlab.reproduce import DEFAULT_EXECUTION, Execution
from aqmlab.reproduce.study import TOLERANCE, Claim, Option, Outcome, Published, Quick, Study, Table
from aqmlab.scenario import load

np = lazy("numpy")
pd = lazy("pandas")
pa = lazy("pyarrow")
M = lazy("aqmlab.metrics")
SM = lazy("aqmlab.reproduce.metrics")
sweep = lazy("aqmlab.sweep")

NAME = "lpcc2013"
DESCRIPTION = (
    "Gong et al. 2013/14: NewReno vs LEDBAT / Nice / TCP-LP under AQMs: 3a shares over time, 3b the "
    "Linux testbed matrix (500 kb/s, 10 Mb/s), 3c the 4 Mb/s campaign (6 qdiscs, 10 reps), 3d sensitivity"
)
PARTS = ("3a", "3b", "3c", "3d")
QDISCS = ["droptail", "red", "choke", "drr", "sfq", "codel"]
LPCCS = ["ledbat", "nice", "tcp_lp"]
REPS = 10
"""3c's replications per case, as the study ran."""
METRICS_FN = "aqmlab.reproduce.lpcc2013:run_metrics"
DIR = "down"
CLASSES = ("be", "lp")
"""Flow labels of the best-effort and the low-priority class in every scenario."""
METRICS = [  # 3c: (run metric, title, scale, decimals)
    ("eta", "link utilisation eta: mean (std)", 1.0, 3),
    ("eq_qmax", "E[Q]/Q_max: mean (std)", 1.0, 3),
    ("tcp_pct", "TCP% (best-effort share of delivered bytes): mean (std)", 100.0, 1),
    ("qdelay_mean_ms", "mean queueing delay E[Q] in ms: mean (std)", 1.0, 0),
]
C_KEYS = {"tcp_share_pct": ("tcp_pct", 100.0), "eq_over_qmax": ("eq_qmax", 1.0), "utilization": ("eta", 1.0),
          "mean_queue_ms": ("qdelay_mean_ms", 1.0)}  # fmt: skip
"""3c's JSON keys -> (run metric, scale)."""

# 3a: 10 Mb/s, 500 packets, DropTail vs RED; the rest as 3c's base.
A_QDISCS = ["droptail", "red"]
A_RATE, A_LIMIT = "10Mbps", "500p"
A_STEP_S = 1.0
"""3a's time bins (s): the study's figure plots shares over a 60 s run."""

# 3b: the testbed matrix.
B_RED_TC = {"limit": 16000, "min": 1500, "max": 4500, "avpkt": 800, "burst": 5, "probability": 0.02}
"""3b's RED as a `tc qdisc add .. red` line (bytes): the study calls its RED "state of the art" and
gives no values; this is the RED line a co-author (Täht) published in 2011-12 for a shaped uplink
carrying BitTorrent beside other traffic (the deBloat scripts' `red min 1500 max 4500 probability
0.02 avpkt 800 limit 16000 burst 5`), the setting closest to the study's own question. Its `ecn`
is left out (neither iperf's NewReno nor uTP sends ECT), and so is tc's default `bandwidth` of
10 Mbit/s for the idle-time decay (aqmlab decays at the link's rate)."""


def tc_red(line: dict) -> dict:
    """aqmlab's ``red`` for a tc red line (``B_RED_TC``'s keys, bytes) on Linux 3.2 (iproute2 tc/q_red.c and tc/tc_red.c;
    net/sched/sch_red.c, include/net/red.h): byte thresholds against the backlog in bytes with a
    size-blind drop test (``bytes = "linux"``, thresholds in ``avpkt``-size packets); the EWMA
    weight 2^-Wlog with Wlog the least from 1 up with burst + 1 - min/avpkt <= (1 - (1 - W)^burst)/W
    (tc_red_eval_ewma); the drop probability at max (max - min) / 2^Plog with Plog the number of
    doublings of probability / (max - min) that pass 1 (tc_red_eval_P: 3.2 draws qR below 2^Plog,
    red_random, and drops once (avg - min) x count reaches it); above max every arrival is dropped
    (no gentle region in 3.2), the paper's count rule (no ``wait``)."""
    lo, hi, avpkt, burst = line["min"], line["max"], line["avpkt"], line["burst"]
    a = burst + 1 - lo / avpkt
    wlog = next(w for w in range(1, 32) if a <= (1 - (1 - 2.0**-w) ** burst) / 2.0**-w)
    per_byte = line["probability"] / (hi - lo)
    plog = next(i for i in range(32) if per_byte * 2**i > 1)
    return {"kind": "red", "limit": f"{line['limit']}B", "bytes": "linux", "mean_pktsize": f"{avpkt}B",
            "min_th": lo / avpkt, "max_th": hi / avpkt, "w_q": 2.0**-wlog,
            "max_p": (hi - lo) / 2**plog, "gentle": False, "wait": False}  # fmt: skip


B_QDISCS = {"fifo": "pfifo", "red": tc_red(B_RED_TC), "sfq": "sfq"}
"""HTB's class leaf: pfifo and SFQ at their Linux defaults (1000 packets, txqueuelen; 127), see
testbed.toml; RED as ``B_RED_TC``."""
B_LPCCS = ["ledbat", "tcp_lp"]
B_RATES = ["500kbps", "10Mbps"]
B_LOADS = {"1+1": 1, "5+5": 5}
B_KEYS = {"tcp_share_pct": ("tcp_pct", 100.0), "mean_queue_ms": ("ping_qdelay_ms", 1.0)}
"""3b's JSON keys -> (run metric, scale): the queueing delay is the ping's (the testbed's measure)."""

# 3d: one parameter at a time around 3c's base (4 Mb/s, 400 packets, 50 ms, 5 + 5, LEDBAT).
D_QDISCS = ["droptail", "sfq"]
D_VALUES = {
    "qmax": [100, 200, 300, 400],  # packets
    "capacity": [0.25, 1.0, 4.0, 10.0],  # Mb/s
    "rtt": ["homogeneous", "heterogeneous"],
    "n": [1, 2, 3, 4, 5],  # flows per class
    "duty": [0.1, 0.25, 0.5, 1.0],
}
D_QUICK_VALUES = {"qmax": [100, 400], "capacity": [1.0, 4.0], "rtt": ["homogeneous", "heterogeneous"],
                  "n": [1, 5], "duty": [0.25, 1.0]}  # fmt: skip
"""The 3d values ``--quick`` keeps: the shortest and the full buffer (the shorter-buffer claim)
and two of every other parameter."""
D_RTT_SPREAD = "40ms"
"""Heterogeneous RTTs: uniform in 50 +- 40 ms per flow and seed (mean 50 ms as the study; the
spread, not given, spans 10..90 ms)."""
D_CYCLE_S = 10.0
"""On/off cycle: exponential on and off periods of means duty x 10 s and (1 - duty) x 10 s
(the study gives the duty cycle only); every flow of both classes is an on/off source."""
PART_REPS = 3
"""Runs per case of 3a, 3b and 3d: 3b's 3 runs (the study's); 3a and 3d, where the study does
not say, the same (3a's figure shows the first run)."""
PART_METRICS = {  # 3a's and 3d's JSON key -> (run metric, scale, decimals)
    "tcp_share_pct": ("tcp_pct", 100.0, 1),
    "utilization": ("eta", 1.0, 3),
    "mean_queue_ms": ("qdelay_mean_ms", 1.0, 0),
    "mean_queue_pkts": ("eq_pkts", 1.0, 1),
    "fairness": ("fairness", 1.0, 3),
}


def d_point(param: str, value) -> str:
    """A 3d grid point as ``run``'s ``sensitivity`` names it: "qmax=100"."""
    return f"{param}={value}"


QUICK_3D = tuple(d_point(p, v) for p, vs in D_QUICK_VALUES.items() for v in vs)
"""``--quick``'s 3d points."""


def _scenarios() -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios" / "lpcc2013"))


def sweep_file() -> Path:
    return _scenarios() / "sweep.toml"


def lpcc_params(lpcc: str) -> dict:
    """The ``cc_params`` 3c's sweep gives ``lpcc`` (TCP-LP's drawn host clocks), which 3b's
    testbed runs take too."""
    z = next(z for z in tomllib.loads(sweep_file().read_text())["zip"] if "flows.1.cc" in z)
    return copy.deepcopy(z["flows.1.cc_params"][z["flows.1.cc"].index(lpcc)])


def qdisc_specs() -> dict:
    """3c's qdisc name -> topology.down.qdisc, as sweep.toml declares them (shared by 3a, 3d)."""
    z = next(z for z in tomllib.loads(sweep_file().read_text())["zip"] if "params.qdisc" in z)
    return dict(zip(z["params.qdisc"], z["topology.down.qdisc"], strict=True))


def run_metrics(tables: dict, meta: dict) -> tuple[dict, dict]:
    """The study's per-run numbers (computed in the sweep workers) and each class's throughput
    over time (extra table ``shares``, 60 rows a run: 3a's figure)."""
    pings = [int(i) for i, k in zip(M._col(tables["flows"], "flow"), M._strcol(tables["flows"], "kind"),
                                    strict=True) if k == "ping"]  # fmt: skip
    ping_q = np.concatenate([M.ping_queueing_delay_ms(tables, i) for i in pings]) if pings else np.array([])
    out = {
        "eta": M.utilization(tables, meta, DIR),
        "eq_qmax": M.normalized_mean_backlog(tables, meta, DIR),
        "eq_pkts": M.mean_backlog(tables, meta, DIR, "pkts"),
        "tcp_pct": M.class_share(tables, by="label", cls="be", traffic_only=True),
        "qdelay_mean_ms": SM.mean_queue_delay_ms(tables, meta, DIR),
        "fairness": SM.intra_fairness(tables, meta, CLASSES),
        "ping_qdelay_ms": float(ping_q.mean()) if ping_q.size else None,
    }
    t, per = SM.class_throughput_series(tables, meta, "label", A_STEP_S)
    extra = {"shares": pa.table({"t_s": t, **{f"{c}_bps": per.get(c, np.zeros_like(t)) for c in CLASSES}})}
    return out, extra


# --------------------------------------------------------------------------- cases


def _with_qdisc(sc: dict, spec) -> dict:
    sc["topology"]["down"]["qdisc"] = copy.deepcopy(spec)
    return sc


def _lp(sc: dict) -> dict:
    return next(f for f in sc["flows"] if f.get("label") == "lp")


def cases() -> list[dict]:
    """Every case of 3a, 3b and 3d: {"params": labels, "scenario": the scenario}."""
    base, testbed, specs = (
        load(str(_scenarios() / "base.toml")),
        load(str(_scenarios() / "testbed.toml")),
        qdisc_specs(),
    )
    out: list[dict] = []

    def add(sc: dict, **labels) -> None:
        case = "/".join(str(v) for v in labels.values())
        out.append({"params": {"case": case, **labels}, "scenario": sc})

    for q in A_QDISCS:
        sc = _with_qdisc(copy.deepcopy(base), specs[q])
        sc["topology"]["down"].update(rate=A_RATE, limit=A_LIMIT)
        add(sc, part="3a", qdisc=q)
    for rate in B_RATES:
        for lp in B_LPCCS:
            for q, spec in B_QDISCS.items():
                for load_name, n in B_LOADS.items():
                    add(_testbed_case(testbed, spec, rate, lp, n), part="3b", rate=rate, lpcc=lp, qdisc=q,
                        load=load_name)  # fmt: skip
    for param, values in D_VALUES.items():
        for q in D_QDISCS:
            for v in values:
                sc = _with_qdisc(copy.deepcopy(base), specs[q])
                _sensitivity(sc, param, v)
                add(sc, part="3d", param=param, qdisc=q, value=v)
    return out


def _testbed_case(testbed: dict, spec, rate: str, lp: str, n: int) -> dict:
    """One 3b case: the testbed with ``spec`` at ``rate``, ``n`` flows per class, LPCC ``lp``."""
    sc = _with_qdisc(copy.deepcopy(testbed), spec)
    sc["topology"]["down"]["rate"] = rate
    for f in sc["flows"]:
        if f["kind"] == "tcp":
            f["count"] = n
    if lp != "ledbat":
        # the kernel's module on a TCP socket, where LEDBAT is libutp's uTP over UDP
        _lp(sc).pop("udp_socket", None)
        _lp(sc)["cc"] = lp
        _lp(sc)["cc_params"] = lpcc_params(lp)
    return sc


def _sensitivity(sc: dict, param: str, v) -> None:
    """Sets one 3d parameter on a copy of 3c's base scenario."""
    if param == "qmax":
        sc["topology"]["down"]["limit"] = f"{v}p"
    elif param == "capacity":
        sc["topology"]["down"]["rate"] = sc["topology"]["up"]["rate"] = f"{v}Mbps"
    elif param == "rtt" and v == "heterogeneous":
        for f in sc["flows"]:
            f["rtt_spread"] = D_RTT_SPREAD
    elif param == "n":
        for f in sc["flows"]:
            f["count"] = v
    elif param == "duty" and v < 1.0:
        for f in sc["flows"]:
            f["on_off"] = {"on": f"{v * D_CYCLE_S:g}s", "off": f"{(1 - v) * D_CYCLE_S:g}s"}


PART_LABELS = ["part", "case", "qdisc", "lpcc", "rate", "load", "param", "value"]


def _wanted(p: dict, parts, rates, sensitivity) -> bool:
    """Whether a case of ``cases`` is asked: its part, 3b's rate, 3d's point (None: all)."""
    if p["part"] not in parts:
        return False
    if p["part"] == "3b":
        return not rates or p["rate"] in rates
    if p["part"] == "3d":
        return not sensitivity or d_point(p["param"], p["value"]) in sensitivity
    return True


def parts_spec(reps: int, parts, rates=None, sensitivity=None):
    """One sweep of every 3a, 3b and 3d case, selecting the asked ones; None when none is."""
    cs = cases()
    chosen = [c["params"]["case"] for c in cs if _wanted(c["params"], parts, rates, sensitivity)]
    if not chosen:
        return None
    z: dict[str, list] = {"topology": [], "flows": [], "duration": []}
    z.update({f"params.{k}": [] for k in PART_LABELS})
    for c in cs:
        for k in ("topology", "flows", "duration"):
            z[k].append(c["scenario"][k])
        for k in PART_LABELS:
            z[f"params.{k}"].append(str(c["params"].get(k, "")))
    doc = {"base": str(_scenarios() / "base.toml"), "name": f"{NAME}-parts", "seed": 2013,
           "reps": min(reps, PART_REPS), "seed_from": ["params.case"], "zip": [z]}  # fmt: skip
    spec = sweep.parse_sweep(doc, base_dir=_scenarios())
    spec.select["params.case"] = chosen
    return spec


def spec_for(reps: int, qdiscs=None, lpccs=None):
    """3c's sweep (sweep.toml), filtered."""
    spec = sweep.parse_sweep(sweep_file())
    spec.reps = reps
    if qdiscs:
        spec.select["params.qdisc"] = list(qdiscs)
    if lpccs:
        spec.select["params.lpcc"] = list(lpccs)
    return spec


# --------------------------------------------------------------------------- the run


def run(reps: int = REPS, series: str = "all", ex: Execution = DEFAULT_EXECUTION, qdiscs: list[str] | None = None,
        lpccs: list[str] | None = None, rates: list[str] | None = None,
        sensitivity: list[str] | None = None) -> Outcome:  # fmt: skip
    """Runs (or resumes) the parts asked (``series``: all, 3a, 3b, 3c or 3d) and aggregates them.
    ``qdiscs``/``lpccs`` filter 3c, ``rates`` 3b, ``sensitivity`` 3d's points ("qmax=100")."""
    parts = PARTS if series == "all" else (series,)
    sweeps, frames, shares = [], [], pd.DataFrame()
    if "3c" in parts:
        res = ex.sweep(spec_for(reps, qdiscs, lpccs), METRICS_FN)
        sweeps.append(res)
        frames.append(res.table.assign(part="3c"))
    spec = parts_spec(reps, parts, rates, sensitivity)
    if spec is not None:
        res = ex.sweep(spec, METRICS_FN)
        sweeps.append(res)
        frames.append(res.table)
        shares = sweep.read_extra(ex.root, "shares", _ok(res.table)["run_id"])
    runs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return Outcome(results(runs), runs, sweeps, series, data=shares)


def _ok(runs: pd.DataFrame, **match) -> pd.DataFrame:
    if not len(runs):
        return runs
    m = runs["status"] == "ok"
    for k, v in match.items():
        m &= runs[k].astype(str) == str(v)
    return runs[m]


def _values(df: pd.DataFrame, key: str) -> np.ndarray:
    return pd.to_numeric(df[key], errors="coerce").dropna().to_numpy() if key in df else np.array([])


def _mean(df: pd.DataFrame, key: str, scale: float = 1.0) -> float | None:
    v = _values(df, key)
    return float(v.mean() * scale) if v.size else None


def _std(df: pd.DataFrame, key: str, scale: float = 1.0) -> float | None:
    """The sample std over the runs; None for fewer than two."""
    v = _values(df, key)
    return float(v.std(ddof=1) * scale) if v.size > 1 else None


def part_3a(runs: pd.DataFrame) -> dict:
    """{metric: {qdisc: mean}}."""
    return {k: {q: _mean(_ok(runs, part="3a", qdisc=q), m, s) for q in A_QDISCS}
            for k, (m, s, _) in PART_METRICS.items()}  # fmt: skip


def part_3b(runs: pd.DataFrame) -> dict:
    """{rate: {"tcp_share_pct" | "mean_queue_ms": {lpcc: {qdisc: {load: mean}}}}}."""
    return {rate: {k: {lp: {q: {ld: _mean(_ok(runs, part="3b", rate=rate, lpcc=lp, qdisc=q, load=ld), m, s)
                                for ld in B_LOADS} for q in B_QDISCS} for lp in B_LPCCS}
                   for k, (m, s) in B_KEYS.items()} for rate in B_RATES}  # fmt: skip


def part_3c(runs: pd.DataFrame) -> dict:
    """{"tcp_share_pct" | "eq_over_qmax" | "utilization" | "mean_queue_ms": {lpcc: {qdisc: mean}}}."""
    return {k: {lp: {q: _mean(_ok(runs, part="3c", lpcc=lp, qdisc=q), m, s) for q in QDISCS} for lp in LPCCS}
            for k, (m, s) in C_KEYS.items()}  # fmt: skip


def part_3d(runs: pd.DataFrame) -> dict:
    """{param: {metric: {qdisc: {value: mean}}}} for the values run."""
    out: dict = {}
    for param, values in D_VALUES.items():
        d = _ok(runs, part="3d", param=param)
        if not len(d):
            continue
        vals = [str(v) for v in values if len(_ok(d, value=v))]
        out[param] = {k: {q: {v: _mean(_ok(d, qdisc=q, value=v), m, s) for v in vals} for q in D_QDISCS}
                      for k, (m, s, _) in PART_METRICS.items()}  # fmt: skip
    return out


def results(runs: pd.DataFrame) -> dict:
    """{"3a": ..., "3b": {"tcp_share_pct" | "mean_queue_ms": {lpcc: {qdisc: {load: v}}}, "10Mbps": the
    same}, "3c": {"tcp_share_pct" | "eq_over_qmax" | "utilization" | "mean_queue_ms": {lpcc: {qdisc:
    v}}}, "3d": ...}: means over the runs, TCP% in percent; parts not run are left out."""
    out: dict = {}
    if len(_ok(runs, part="3a")):
        out["3a"] = part_3a(runs)
    if len(_ok(runs, part="3b")):
        b = part_3b(runs)
        out["3b"] = {**b[B_RATES[0]], B_RATES[1]: b[B_RATES[1]]}
    if len(_ok(runs, part="3c")):
        out["3c"] = part_3c(runs)
    if len(_ok(runs, part="3d")):
        out["3d"] = part_3d(runs)
    return out


# --------------------------------------------------------------------------- tables, figures


def _fixed(v: float | None, dec: int) -> str:
    """A table number with ``dec`` decimals; '-' when missing."""
    return "-" if v is None else f"{v:.{dec}f}"


def _mean_std(df: pd.DataFrame, key: str, scale: float, dec: int) -> str:
    """'mean (std)'; the std of one run is '-'."""
    m = _mean(df, key, scale)
    return "-" if m is None else f"{m:.{dec}f} ({_fixed(_std(df, key, scale), dec)})"


def tables(o: Outcome) -> list[Table]:
    """What the study prints: 3a, 3b per rate, 3c per metric, 3d per parameter."""
    j, out = o.results, []
    if "3a" in j:
        out.append(Table("3a: 5 NewReno + 5 LEDBAT, 10 Mb/s, 500 packets (mean over runs)", ("qdisc", *PART_METRICS),
                         [(q, *(_fixed(j["3a"][k][q], d) for k, (_, _, d) in PART_METRICS.items()))
                          for q in A_QDISCS]))  # fmt: skip
    if "3b" in j:
        out += _tables_3b(part_3b(o.runs))
    if "3c" in j:
        for key, title, scale, d in METRICS:
            rows = [(lp, *(_mean_std(_ok(o.runs, part="3c", lpcc=lp, qdisc=q), key, scale, d) for q in QDISCS))
                    for lp in LPCCS if len(_ok(o.runs, part="3c", lpcc=lp))]  # fmt: skip
            out.append(Table(f"3c: {title}", ("LPCC", *QDISCS), rows))
    for param, per in j.get("3d", {}).items():
        vals = list(per["tcp_share_pct"][D_QDISCS[0]])
        rows = [(q, v, *(_fixed(per[k][q][v], d) for k, (_, _, d) in PART_METRICS.items()))
                for q in D_QDISCS for v in vals]  # fmt: skip
        out.append(Table(f"3d: sensitivity to {param} (LEDBAT; mean over runs)", ("qdisc", param, *PART_METRICS),
                         rows))  # fmt: skip
    return out


def _tables_3b(b: dict) -> list[Table]:
    out = []
    for rate, per in b.items():
        if all(v is None for lp in per["tcp_share_pct"].values() for q in lp.values() for v in q.values()):
            continue
        head = (
            "LPCC",
            "qdisc",
            *(f"TCP% {ld}" for ld in B_LOADS),
            *(f"ping qdelay ms {ld}" for ld in B_LOADS),
        )
        rows = [(lp, q, *(_fixed(per["tcp_share_pct"][lp][q][ld], 1) for ld in B_LOADS),
                 *(_fixed(per["mean_queue_ms"][lp][q][ld], 0) for ld in B_LOADS))
                for lp in B_LPCCS for q in B_QDISCS]  # fmt: skip
        out.append(Table(f"3b: testbed at {rate}, 30 ms (mean over runs)", head, rows))
    return out


def figures(o: Outcome) -> dict:
    """3a's shares over time, 3c's parallel coordinates, one figure per 3d parameter."""
    figs = {}
    if len(_ok(o.runs, part="3a")):
        figs["shares_3a.png"] = figure_3a(o)
    if "3c" in o.results:
        figs["parallel.png"] = figure_3c(o.results["3c"])
    for param, per in o.results.get("3d", {}).items():
        figs[f"sensitivity_{param}.png"] = figure_3d(param, per)
    return figs


def figure_3c(c: dict):
    """The study's parallel-coordinates view: per (LPCC, qdisc) a line from E[Q]/Q_max (left
    axis) to TCP% (right axis), both on [0, 1]."""
    import matplotlib.pyplot as plt

    from aqmlab.plots import style

    fig, ax = plt.subplots(figsize=(7, 5))
    i = 0
    for lp in LPCCS:
        for q in QDISCS:
            a, b = c["eq_over_qmax"][lp][q], c["tcp_share_pct"][lp][q]
            if a is None or b is None:
                continue
            st = style(i)
            ax.plot([0, 1], [a, b / 100.0], color=st["color"], linestyle=st["linestyle"], marker="o",
                    label=f"{lp} / {q}")  # fmt: skip
            i += 1
    ax.set_xticks([0, 1], ["E[Q]/Q_max", "TCP%"])
    ax.set_ylim(0, 1.02)
    ax.set_title("lpcc2013 3c: queue occupancy vs best-effort share (mean over runs)")
    ax.legend(fontsize=7, ncol=2, loc="center", bbox_to_anchor=(0.5, -0.25))
    fig.tight_layout()
    return fig


def figure_3a(o: Outcome):
    """Each class's throughput over time in the first run of DropTail and of RED."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(A_QDISCS), figsize=(11, 4), sharey=True)
    for ax, q in zip(axes, A_QDISCS, strict=True):
        runs = _ok(o.runs, part="3a", qdisc=q).sort_values("rep")
        if len(runs) and len(o.data):
            s = o.data[o.data["run_id"] == runs["run_id"].iloc[0]]
            for c, name in zip(CLASSES, ("NewReno (best effort)", "LEDBAT (low priority)"), strict=True):
                ax.plot(s["t_s"], s[f"{c}_bps"] / 1e6, label=name)
        ax.set_title(f"3a: {q}, 10 Mb/s, 500 packets")
        ax.set_xlabel("time (s)")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("class throughput (Mb/s)")
    fig.tight_layout()
    return fig


def figure_3d(param: str, per: dict):
    """TCP% and fairness F against one 3d parameter, one line per qdisc."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, k in zip(axes, ("tcp_share_pct", "fairness"), strict=True):
        for q in D_QDISCS:
            xs = list(per[k][q])
            ax.plot(range(len(xs)), [np.nan if per[k][q][v] is None else per[k][q][v] for v in xs],
                    marker="o", label=q)  # fmt: skip
            ax.set_xticks(range(len(xs)), xs)
        ax.set_xlabel(param)
        ax.set_ylabel(k)
        ax.legend(fontsize=8)
    fig.suptitle(f"lpcc2013 3d: sensitivity to {param} (5+5 LEDBAT around 3c's setting)")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- published (Table I)

TABLE_I = {  # (LPCC, qdisc) -> load -> (TCP%, E[Q] ms): the testbed at 500 kb/s, mean of 3 runs
    ("ledbat", "fifo"): {"5+5": (94.9, 6437.3), "1+1": (99.5, 5304.3)},
    ("ledbat", "red"): {"5+5": (49.3, 11.3), "1+1": (1.7, 9.5)},
    ("ledbat", "sfq"): {"5+5": (76.1, 106.4), "1+1": (57.7, 15.1)},
    ("tcp_lp", "fifo"): {"5+5": (50.8, 7870.6), "1+1": (65.8, 7471.9)},
    ("tcp_lp", "red"): {"5+5": (57.0, 21.0), "1+1": (97.5, 2.7)},
    ("tcp_lp", "sfq"): {"5+5": (49.8, 144.2), "1+1": (50.0, 25.2)},
}
"""The study's Table I as published."""
TABLE_I_RATE = B_RATES[0]
TABLE_I_DELAY_FLOOR_MS = 30.0
"""Table I's delays agree when within 30 % or both below 30 ms (a few packet times at 500 kb/s,
24 ms each); its TCP% cells have no floor. The contract gives one floor per table, so Table I is
two published tables: TCP% and E[Q]."""
B_NAMES = {"ledbat": "LEDBAT", "tcp_lp": "TCP-LP"}


def _row(lp: str, q: str) -> str:
    return f"{B_NAMES[lp]} {q.upper()}"


def _table_i(col: int) -> dict:
    return {_row(lp, q): {ld: v[col] for ld, v in loads.items()} for (lp, q), loads in TABLE_I.items()}


def _measured_table_i(key: str):
    def measured(o: Outcome) -> dict:
        b = o.results.get("3b")
        if b is None:
            return {}
        return {_row(lp, q): {ld: b[key][lp][q][ld] for ld in loads} for (lp, q), loads in TABLE_I.items()}

    return measured


PUBLISHED = (
    Published("Table I TCP%", "testbed at 500 kb/s: TCP% (best-effort share of delivered bytes)", _table_i(0),
              _measured_table_i("tcp_share_pct"), series=("3b",)),
    Published("Table I E[Q]", "testbed at 500 kb/s: E[Q], the ping's queueing delay (ms)", _table_i(1),
              _measured_table_i("mean_queue_ms"), floor=TABLE_I_DELAY_FLOOR_MS, series=("3b",)),
)  # fmt: skip


# --------------------------------------------------------------------------- claims
# Each threshold is stated once, beside the words of the claim it comes from.

SHARE_POINTS = 5.0
"""'about' for a TCP% (claims 1 and 3): within 5 percentage points."""
FAIR_PCT = 50.0
"""Equal shares: TCP% = 50 (five flows of each class; one of each in 3b)."""
A_DROPTAIL_TCP_PCT = 99.0
"""Claim 1, "DropTail TCP% about 99 %": within SHARE_POINTS."""
A_DROPTAIL_QUEUE_PKTS = 400.0
"""... "with about 400 packets queued on average": within the study's 30 % (study.TOLERANCE)."""
A_RED_QUEUE_BELOW_PKTS = 4.0
"""... "RED: average queue below 4 packets" ..."""
A_RED_UTIL_LOWER = 0.03
"""... "utilisation about 3 % lower": 1 - eta_RED / eta_DropTail within 30 % of 3 % ..."""
# ... "and the two classes share about equally": RED's TCP% within SHARE_POINTS of FAIR_PCT.

AQMS = [q for q in QDISCS if q != "droptail"]
"""The claims' "AQMs": every 3c discipline but DropTail (the schedulers DRR and SFQ included, as
the claims name SFQ among them)."""
QUEUE_SHRINK_MIN = 14.0
"""Claim 2, "the AQMs make the queue 14 (SFQ) to 77 (RED) times smaller": every AQM's E[Q] at
least 14 times below DropTail's with the same LPCC (77, RED's, tops the range: not a bound)."""
AQM_DELAY_BELOW_MS = 85.0
"""... "the queueing delay under every AQM stays below 85 ms (SFQ is the worst case)": every
(LPCC, AQM) pair's mean queueing delay below 85 ms, SFQ's the largest of the AQMs per LPCC."""
AQM_TCP_PCT = (35.0, 46.0)
"""Claim 3, "TCP's share falls to 35 % (CoDel) to 46 % (CHOKe) with LEDBAT": every AQM's TCP%
with LEDBAT within 35..46 % widened by SHARE_POINTS each side (the names mark the range's ends;
which AQM sits where is reported, not judged)."""
CLOSE_POINTS = 20.0
"""Claim 4, "all (LPCC, AQM) pairs end close together: short queue, priorities gone": the TCP%
of every pair within 20 points of every other's and of FAIR_PCT (claim 5's "priorities lost"
too) ..."""
SHORT_QUEUE = 0.1
"""... and every pair's E[Q]/Q_max below a tenth of the buffer."""


def _need(v, what: str) -> float:
    if v is None:
        raise KeyError(f"{what} not run")
    return float(v)


def _within(measured: float, published: float, tol: float = TOLERANCE) -> bool:
    return abs(measured - published) <= tol * abs(published)


def claim_3a(o: Outcome):
    a = o.results["3a"]
    tcp = {q: _need(a["tcp_share_pct"][q], f"3a {q}") for q in A_QDISCS}
    queue = {q: _need(a["mean_queue_pkts"][q], f"3a {q}") for q in A_QDISCS}
    eta = {q: _need(a["utilization"][q], f"3a {q}") for q in A_QDISCS}
    lower = 1 - eta["red"] / eta["droptail"]
    parts = {
        "droptail TCP% about 99": abs(tcp["droptail"] - A_DROPTAIL_TCP_PCT) <= SHARE_POINTS,
        "droptail queue about 400": _within(queue["droptail"], A_DROPTAIL_QUEUE_PKTS),
        "red queue below 4": queue["red"] < A_RED_QUEUE_BELOW_PKTS,
        "red utilisation about 3 % lower": _within(lower, A_RED_UTIL_LOWER),
        "red shares about equally": abs(tcp["red"] - FAIR_PCT) <= SHARE_POINTS,
    }
    return all(parts.values()), {"tcp_pct": tcp, "mean_queue_pkts": queue, "utilization": eta,
                                 "red_utilization_lower": lower, "parts": parts}  # fmt: skip


def _c(o: Outcome, key: str, lp: str, q: str) -> float:
    return _need(o.results["3c"][key][lp][q], f"3c {lp}/{q}")


def claim_queue_shrink(o: Outcome):
    shrink = {lp: {q: _c(o, "eq_over_qmax", lp, "droptail") / _c(o, "eq_over_qmax", lp, q) for q in AQMS}
              for lp in LPCCS}  # fmt: skip
    delay = {lp: {q: _c(o, "mean_queue_ms", lp, q) for q in AQMS} for lp in LPCCS}
    parts = {
        "every AQM 14x smaller": all(v >= QUEUE_SHRINK_MIN for s in shrink.values() for v in s.values()),
        "every AQM below 85 ms": all(v < AQM_DELAY_BELOW_MS for d in delay.values() for v in d.values()),
        "SFQ the worst": all(max(d, key=d.get) == "sfq" for d in delay.values()),
    }
    return all(parts.values()), {"droptail_over_aqm_queue": shrink, "aqm_delay_ms": delay, "parts": parts}


def claim_ledbat_share(o: Outcome):
    tcp = {q: _c(o, "tcp_share_pct", "ledbat", q) for q in AQMS}
    lo, hi = AQM_TCP_PCT
    holds = all(lo - SHARE_POINTS <= v <= hi + SHARE_POINTS for v in tcp.values())
    return holds, {"ledbat_tcp_pct": tcp, "lowest": min(tcp, key=tcp.get), "highest": max(tcp, key=tcp.get)}


def _priorities_gone(tcp: list[float]) -> bool:
    """CLOSE_POINTS' reading: the shares within 20 points of each other and of the fair share."""
    return max(tcp) - min(tcp) <= CLOSE_POINTS and all(abs(v - FAIR_PCT) <= CLOSE_POINTS for v in tcp)


def claim_priority_order(o: Outcome):
    dt = {lp: _c(o, "tcp_share_pct", lp, "droptail") for lp in LPCCS}
    tcp = {f"{lp}/{q}": _c(o, "tcp_share_pct", lp, q) for lp in LPCCS for q in AQMS}
    eq = {f"{lp}/{q}": _c(o, "eq_over_qmax", lp, q) for lp in LPCCS for q in AQMS}
    parts = {
        "droptail: ledbat lowest, then nice, then tcp_lp": dt["ledbat"] > dt["nice"] > dt["tcp_lp"],
        "AQMs: short queue": all(v < SHORT_QUEUE for v in eq.values()),
        "AQMs: priorities gone": _priorities_gone(list(tcp.values())),
    }
    return all(parts.values()), {"droptail_tcp_pct": dt, "aqm_tcp_pct": tcp, "aqm_eq_over_qmax": eq,
                                 "parts": parts}  # fmt: skip


D_SHORT, D_FULL = str(min(D_VALUES["qmax"])), str(max(D_VALUES["qmax"]))
"""Claim 5, "a shorter DropTail buffer": 3d's shortest (100 packets) against the study's 400, both
3d cases (LEDBAT, DropTail)."""


def claim_short_buffer(o: Outcome):
    d = o.results["3d"]["qmax"]
    q = {b: _need(d["mean_queue_ms"]["droptail"][b], f"3d qmax {b}") for b in (D_SHORT, D_FULL)}
    tcp = {b: _need(d["tcp_share_pct"]["droptail"][b], f"3d qmax {b}") for b in (D_SHORT, D_FULL)}
    parts = {"less queue": q[D_SHORT] < q[D_FULL], "priorities lost": _priorities_gone([tcp[D_SHORT]])}
    return all(parts.values()), {"droptail_mean_queue_ms": q, "droptail_tcp_pct": tcp, "parts": parts}


CLAIMS = (
    Claim("1", "10 Mbit/s, 500 packets, 5 NewReno + 5 LEDBAT: DropTail TCP% about 99 % with about 400 packets "
          "queued on average; RED: average queue below 4 packets, utilisation about 3 % lower, and the two "
          "classes share about equally.", claim_3a, ("3a",)),
    Claim("2", "Against a full DropTail buffer, the AQMs make the queue 14 (SFQ) to 77 (RED) times smaller; the "
          "queueing delay under every AQM stays below 85 ms (SFQ is the worst case).", claim_queue_shrink,
          ("3c",)),
    Claim("3", "Under the AQMs, TCP's share falls to 35 % (CoDel) to 46 % (CHOKe) with LEDBAT.",
          claim_ledbat_share, ("3c",)),
    Claim("4", "Under DropTail the priority order is LEDBAT lowest, then NICE, then TCP-LP; under every AQM all "
          "(LPCC, AQM) pairs end close together: short queue, priorities gone.", claim_priority_order, ("3c",)),
    Claim("5", "A shorter DropTail buffer behaves like an AQM: less queue, priorities lost.", claim_short_buffer,
          ("3d",)),
)  # fmt: skip

STUDY = Study(
    name=NAME,
    description=DESCRIPTION,
    reps=REPS,
    series=("all", *PARTS),
    options=(
        Option("--qdisc", "qdiscs", tuple(QDISCS), "only these 3c qdiscs"),
        Option("--lpcc", "lpccs", tuple(LPCCS), "only these 3c low-priority controllers"),
    ),
    quick=Quick(
        reps=PART_REPS,
        grid={"rates": (TABLE_I_RATE,), "sensitivity": QUICK_3D},
        note="3 runs per case (3c's 10 cut to 3a/3b/3d's 3), 3b at 500 kb/s (Table I), two values of each "
        "3d parameter; 3a and 3c whole",
    ),
    run=run,
    tables=tables,
    figures=figures,
    published=PUBLISHED,
    claims=CLAIMS,
    series_help="3a shares over time, 3b the testbed (Table I), 3c the campaign, 3d sensitivity",
)
