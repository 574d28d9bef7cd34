"""Probe-stream metrics (ping, VoIP): RTT, induced latency, one-way delay, jitter and loss."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from aqmlab.metrics.base import DIRECTIONS, NS, _col, _nullable_float
from aqmlab.metrics.flows import _flow_row
from aqmlab.runtables import RunTables


def probe_table(tables: dict, flow: int, warmup_s: float = 0.0) -> pa.Table:
    """The probes of stream ``flow`` sent at or after W, in table order: the stream's rows from
    the run's per-flow index of the ``probes`` table (``RunTables.flow_table``), built once per
    stream and window, so that a summary's dozen reads of each of N streams never pass over the
    whole table. MissingTableError without the table."""
    rt = RunTables.of(tables)
    w = round(warmup_s * NS)

    def build() -> pa.Table:
        p = rt.flow_table("probes", int(flow))
        return p.filter(pa.array(_col(p, "t_send_ns", np.int64) >= w))

    return rt.built(("probes sent from", int(flow), w), build)


def probe_rtt_ms(tables: dict, flow: int, warmup_s: float = 0.0, end_s: float | None = None) -> np.ndarray:
    """RTT (ms) of each answered probe sent at or after W (and before ``end_s`` when given; lost
    probes excluded)."""
    p = probe_table(tables, flow, warmup_s)
    r = _nullable_float(p, "rtt_ns")
    keep = ~np.isnan(r)
    if end_s is not None:
        keep &= _col(p, "t_send_ns", np.int64) < round(end_s * NS)
    return r[keep] / 1e6


def induced_latency_ms(
    tables: dict, flow: int, warmup_s: float = 0.0, end_s: float | None = None
) -> np.ndarray:
    """Induced latency (docs/metrics.md; goodbadwifi2015): measured RTT minus the base
    (empty-queue) RTT ``flows.base_rtt_ns`` of the probe flow, in ms, of the probes
    ``probe_rtt_ms`` keeps."""
    base = int(_flow_row(tables, flow)["base_rtt_ns"]) / 1e6
    return probe_rtt_ms(tables, flow, warmup_s, end_s) - base


def ping_queueing_delay_ms(tables: dict, flow: int, warmup_s: float = 0.0) -> np.ndarray:
    """Queueing delay as the lpcc2013 testbed measured it (3b): the RTT of each answered ping
    sent at or after W minus the minimum RTT seen among them, in ms. Unlike
    ``induced_latency_ms`` it needs no knowledge of the path's base RTT."""
    r = probe_rtt_ms(tables, flow, warmup_s)
    return r - r.min() if r.size else r


def probe_owd_ms(tables: dict, flow: int, direction: str, warmup_s: float = 0.0) -> np.ndarray:
    """One-way delay (ms) of answered probes in one direction (``owd_up_ns``/``owd_down_ns``)."""
    v = _probe_owd_ns(tables, flow, direction, warmup_s)[1]
    return v[~np.isnan(v)] / 1e6


def probe_ipdv_ms(tables: dict, flow: int, direction: str, warmup_s: float = 0.0) -> float | None:
    """Mean IPDV in one direction as irtt and Flent's VoIP test report it ("jitter" there): the
    mean absolute instantaneous packet delay variation, |D_i - D_(i-1)| over consecutive probes
    (sequence numbers i - 1 and i) that both arrived (RFC 3393 IPDV with consecutive selection).
    None with fewer than two such probes."""
    p, owd = _probe_owd_ns(tables, flow, direction, warmup_s)
    seq = _col(p, "seq", np.int64)
    order = np.argsort(seq, kind="stable")
    seq, owd = seq[order], owd[order]
    pair = (np.diff(seq) == 1) & ~np.isnan(owd[1:]) & ~np.isnan(owd[:-1])
    if not pair.any():
        return None
    return float(np.abs(np.diff(owd))[pair].mean() / 1e6)


def probe_jitter_ms(tables: dict, flow: int, direction: str, warmup_s: float = 0.0) -> float | None:
    """Interarrival jitter in one direction (RFC 3550 6.4.1, the RTP receiver's estimator), in
    ms: the probes that arrived, in order of arrival at the receiving end (the server for
    ``up``: send time + one-way delay up; the client for ``down``: send time + RTT), with
    D = the difference of the one-way delays (transit times) of each and the one received
    before it, and J updated at each arrival by J += (|D| - J) / 16 from J = 0. The value
    after the last arrival; None with fewer than two arrivals. In closed form
    J_N = sum_k |D_k| (1/16) (15/16)^(N-k)."""
    p, owd = _probe_owd_ns(tables, flow, direction, warmup_s)
    back = _nullable_float(p, "rtt_ns") if direction == "down" else owd
    arrival = _col(p, "t_send_ns", np.float64) + back
    got = ~np.isnan(owd) & ~np.isnan(arrival)
    order = np.argsort(arrival[got], kind="stable")
    d = np.abs(np.diff(owd[got][order]))
    if d.size == 0:
        return None
    weights = (15 / 16) ** np.arange(d.size - 1, -1, -1, dtype=np.float64) / 16
    return float((d * weights).sum() / 1e6)


def _probe_owd_ns(tables: dict, flow: int, direction: str, warmup_s: float) -> tuple[pa.Table, np.ndarray]:
    """The probes of a stream sent at or after W and their one-way delay in ``direction`` (ns,
    NaN when lost)."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'up' or 'down', got {direction!r}")
    p = probe_table(tables, flow, warmup_s)
    return p, _nullable_float(p, f"owd_{direction}_ns")


def probe_counts(
    tables: dict,
    flow: int,
    warmup_s: float = 0.0,
    end_ns: int | None = None,
    up_only: bool = False,
    sent_before_ns: int | None = None,
) -> dict[str, int]:
    """The probes of a stream sent at or after W by fate: ``sent``, ``answered``, ``lost`` and
    ``in_flight``. THE in-flight rule (docs/metrics.md): a probe whose reply did not arrive is
    in flight at the end, neither answered nor lost, when it was sent less than the path's
    maximum delay before the run's end ``end_ns``; the path's maximum delay is the longest RTT
    any probe of the stream had in the run (0 without an answer). irtt likewise waits after its
    last send for late replies. Without ``end_ns`` every unanswered probe is lost. ``up_only``:
    only the probes that never reached the echo server count as lost (``lost_up``: a one-way
    stream's loss, as D-ITG measures it); those lost on the way back count as answered.
    ``sent_before_ns``: only the probes sent before it count (a window that ends before the
    stream does; their fates are still observed to ``end_ns``)."""
    p = probe_table(tables, flow, warmup_s)
    rtt = _nullable_float(p, "rtt_ns")
    send = _col(p, "t_send_ns", np.float64)
    answered = ~np.isnan(rtt)
    unanswered = ~answered
    if end_ns is not None:
        longest = float(np.nanmax(rtt)) if answered.any() else 0.0
        in_flight = unanswered & (send + longest > end_ns)
    else:
        in_flight = np.zeros(p.num_rows, dtype=bool)
    lost = unanswered & ~in_flight
    if up_only:
        lost &= _col(p, "lost_up", bool)
    counted = send < sent_before_ns if sent_before_ns is not None else np.ones(p.num_rows, dtype=bool)
    sent, lost, in_flight = int(counted.sum()), int((lost & counted).sum()), int((in_flight & counted).sum())
    return {"sent": sent, "answered": sent - lost - in_flight, "lost": lost, "in_flight": in_flight}


def probe_loss(
    tables: dict,
    flow: int,
    warmup_s: float = 0.0,
    end_ns: int | None = None,
    up_only: bool = False,
    sent_before_ns: int | None = None,
) -> float | None:
    """Probe loss rate: lost / (sent - in flight) over the probes sent at or after W, with the
    in-flight rule, ``up_only`` and ``sent_before_ns`` of ``probe_counts`` (None when no probe's
    fate is known)."""
    c = probe_counts(tables, flow, warmup_s, end_ns, up_only, sent_before_ns)
    known = c["sent"] - c["in_flight"]
    return c["lost"] / known if known else None
