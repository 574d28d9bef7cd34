"""goodbadwifi2015's numbers of one run, computed in the sweep workers (``run_metrics``): goodput,
induced latency, the VoIP stream's loss and delays, RTT fairness, web fetch times, and the RRUL
start's transient."""

from __future__ import annotations

from typing import Any

from aqmlab.lazy import lazy

np = lazy("numpy")
pa = lazy("pyarrow")
M = lazy("aqmlab.metrics")
FS = lazy("aqmlab.flent.summary")

METRICS_FN = "aqmlab.reproduce.goodbadwifi2015.metrics:run_metrics"
"""``run_metrics`` as the sweep workers import it; this module's source enters the run ids."""

WARMUP_S = 10.0
"""The window starts 5 s after the load (Flent's DELAY and its cutoff of DELAY)."""
LOAD_END_S = 145.0
"""The window ends with the load, Flent's DELAY + LENGTH (5 + 140 s); the run goes on to
TOTAL_LENGTH (LENGTH + 2 DELAY, 150 s) as Flent's probes did (the scenario files' `stop`)."""
STEP_NS = 200_000_000
"""Flent's step: ITGDec's interval for the VoIP stream's delay averages."""
TRANSIENT_S = 25.0
LATENCY_CUTOFF_S = None
"""What the induced latency leaves out of each end of the run: nothing, as the study's figures
(Flent's ``ellipsis_combine``: medians and 1-sigma ellipses over runs) take it; Flent's
``box_combine`` would cut its DELAY, (5.0, 5.0) s."""


def _step_means_ms(tables: dict, flow: int) -> np.ndarray:
    """The stream's one-way delay up (ms) averaged over each STEP_NS of send time from W, the
    steps without a delivered packet left out (ITGDec's per-interval mean, as Flent reads it)."""
    p = M.probe_table(tables, flow, WARMUP_S)
    owd = M._nullable_float(p, "owd_up_ns") / 1e6
    send = p.column("t_send_ns").to_numpy().astype(np.int64)
    step = send // STEP_NS
    ok = ~np.isnan(owd) & (send < LOAD_END_S * M.NS)
    steps, inverse = np.unique(step[ok], return_inverse=True)
    return np.bincount(inverse, weights=owd[ok]) / np.bincount(inverse) if steps.size else np.array([])


def _flent_induced_ms(
    tables: dict, end_ns: int, pings: list[int], patterns: dict[int, str | None]
) -> float | None:
    """The run's mean induced latency as the study's Flent summed it up (``aqmlab.flent.summary``,
    LATENCY_CUTOFF_S): ping's points for the ICMP probe, netperf UDP_RR's interim results for
    the request/response ones (``pattern = "rr"``, which end with the run at ``end_ns``), over
    the whole run."""
    series = []
    for f in pings:
        p = M.probe_table(tables, f)
        send = p.column("t_send_ns").to_numpy().astype(np.int64)
        rtt = M._nullable_float(p, "rtt_ns")
        series.append(FS.probe_points(send, rtt, patterns.get(f), end_ns))
    return FS.mean_induced_latency_ms(series, LATENCY_CUTOFF_S)


def run_metrics(tables: dict, meta: dict) -> tuple[dict, dict[str, pa.Table]]:
    """Per run (in the sweep workers): goodput per direction, induced latency, the VoIP stream's
    one-way loss, Jain's index, each RTT-fairness upload's goodput and retransmission timeouts (its
    label names its RTT); and two small tables: the ICMP ping's RTT over the first 25 s
    (``transient``) and the VoIP one-way delay averaged over each 200 ms (``voip_owd``)."""
    flows = tables["flows"].select(["flow", "label", "kind", "rto_count", "group"]).to_pylist()
    labels = {int(r["flow"]): str(r["label"]) for r in flows}
    kinds = {int(r["flow"]): str(r["kind"]) for r in flows}
    rtos = {int(r["flow"]): int(r["rto_count"]) for r in flows}
    good = M.goodput_totals_mbps(tables, meta, WARMUP_S, LOAD_END_S)
    probes = M.probe_flows(tables)
    pings = [f for f in probes if kinds[f] == "ping"]
    voip = [f for f in probes if kinds[f] == "voip"]
    entries = (meta.get("scenario") or {}).get("flows") or []
    patterns = {
        int(r["flow"]): entries[r["group"]].get("pattern") for r in flows if r["group"] < len(entries)
    }
    induced = [M.induced_latency_ms(tables, f, WARMUP_S, LOAD_END_S) for f in pings]
    induced = [float(v.mean()) for v in induced if v.size]
    tcp = [f for f, k in kinds.items() if k == "tcp"]
    rates = [M.goodput_bps(tables, meta, f, WARMUP_S, LOAD_END_S) or 0.0 for f in tcp]
    out: dict[str, Any] = {
        "goodput_down_mbps": good["down"],
        "goodput_up_mbps": good["up"],
        "induced_latency_ms": _flent_induced_ms(tables, int(meta["duration_ns"]), pings, patterns),
        "probe_latency_ms": float(np.mean(induced)) if induced else None,
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
        end = round(LOAD_END_S * M.NS)
        loss = M.probe_loss(tables, voip[0], WARMUP_S, int(meta["duration_ns"]), True, end)
        out["voip_loss_pct"] = None if loss is None else 100 * loss
        extra["voip_owd"] = pa.table({"owd_ms": pa.array(_step_means_ms(tables, voip[0]))})
    if "webpage" in tables and tables["webpage"].num_rows:
        ft = M.fetch_times_s(tables, WARMUP_S, end_s=LOAD_END_S)
        out["web_fetch_s"] = float(ft.mean()) if ft.size else None
    return out, extra
