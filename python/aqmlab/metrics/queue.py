"""Queue metrics of one hop: queueing (sojourn) delay, backlog, capacity, transmitted bytes,
utilisation, drops and marks."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from aqmlab.metrics.base import (
    DROP_REASONS,
    ENTERED,
    NS,
    QUEUE_DROP_REASONS,
    TRANSMITTED,
    MissingTableError,
    _col,
    _has,
    _hop,
    _hop_packets,
    _window,
    cdf,
    parse_limit,
    percentiles,
    qdisc_config,
)
from aqmlab.metrics.keys import QUANTILES
from aqmlab.runtables import HopPackets


def sojourn_times_ns(
    tables: dict, meta: dict, hop: str, warmup_s: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """(transmission start, sojourn delay) of each transmitted packet of one hop, in ns, as
    ``sojourn_delays_ns`` selects them (for delay against time)."""
    h = _hop_packets(tables, hop)
    w, _ = _window(meta, warmup_s)
    mask = h.isin(TRANSMITTED) & (h.t_in >= w)
    t_out = h.t_out[mask].astype(np.int64)
    return t_out, t_out - h.t_in[mask]


def sojourn_delays_ns(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0) -> np.ndarray:
    """Queueing (sojourn) delay of each transmitted packet of one hop, in ns.

    Definition (docs/metrics.md; codel2012, docs/study-setups.md 1): time from a packet's enqueue to the start of its
    transmission on the bottleneck, ``t_out_ns - t_enqueue_ns``, for packets with outcome ``sent``
    or ``marked``; dropped packets have none. A packet counts when ``t_enqueue_ns >= W``.
    Needs the ``packets`` table (recording level ``packets``).
    """
    return sojourn_times_ns(tables, meta, hop, warmup_s)[1]


def _sojourn_rows(tables: dict, meta: dict, hop: str, warmup_s: float, name: str) -> pa.Table:
    """Rows of the sojourn histogram table ``name`` (``sojourn`` or ``sojourn_totals``) of one
    hop whose second of enqueue time starts at or after the warm-up W: exactly the packets
    ``sojourn_delays_ns`` counts when W is a whole number of seconds, else from the next whole
    second on."""
    w, _ = _window(meta, warmup_s)
    t = _hop(tables, name, hop)
    return t.filter(pc.greater_equal(t.column("t_s"), -(-w // NS)))


def hist_percentiles(lo: np.ndarray, hi: np.ndarray, count: np.ndarray, qs=QUANTILES) -> dict:
    """``percentiles`` of values known as a histogram (bins [lo, hi) with their counts): each
    order statistic is its bin's midpoint (exact for bins one wide), interpolated linearly
    between ranks as numpy does. A bin of the sojourn histogram is at most 1/64 of its lower
    bound wide, so each value is within 1/128 of the exact one."""
    order = np.argsort(lo, kind="stable")
    lo, hi, count = (np.asarray(a, dtype=np.float64)[order] for a in (lo, hi, count))
    n = count.sum()
    if n == 0:
        return {f"p{q}": None for q in qs}
    mid = np.where(hi - lo <= 1, lo, (lo + hi - 1) / 2)
    ends = np.cumsum(count)

    def value(k: float) -> float:
        return float(mid[np.searchsorted(ends, k, side="right")])

    out = {}
    for q in qs:
        r = q / 100 * (n - 1)
        a, b = value(np.floor(r)), value(np.ceil(r))
        out[f"p{q}"] = a + (b - a) * (r - np.floor(r))
    return out


def queue_delay_stats_ms(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0) -> dict:
    """p50/p75/p95/p99/max/mean of the sojourn delay (``sojourn_delays_ns``) in ms.

    From the ``packets`` table when recorded (exact); else from the sojourn histogram of the
    ``series`` level (``sojourn``: percentiles within 1/128 of the exact ones; ``sojourn_totals``:
    exact mean and max), which counts from the first whole second at or after the warm-up. All
    values are None when neither is recorded or no packet was transmitted.
    """
    if _has(tables, "packets"):
        w, _ = _window(meta, warmup_s)

        def stats() -> dict[str, float | None]:
            return percentiles(sojourn_delays_ns(tables, meta, hop, warmup_s) / 1e6)

        return dict(_hop_packets(tables, hop).memo(("delay stats", w), stats))
    if not _has(tables, "sojourn"):
        return percentiles(np.zeros(0))
    h = _sojourn_rows(tables, meta, hop, warmup_s, "sojourn")
    out = hist_percentiles(*(_col(h, c, np.float64) for c in ("lo_ns", "hi_ns", "count")))
    out = {k: None if v is None else v / 1e6 for k, v in out.items()}
    tot = _sojourn_rows(tables, meta, hop, warmup_s, "sojourn_totals")
    n = int(pc.sum(tot.column("packets")).as_py() or 0)
    out["max"] = int(pc.max(tot.column("max_ns")).as_py()) / 1e6 if n else None
    out["mean"] = int(pc.sum(tot.column("sum_ns")).as_py()) / n / 1e6 if n else None
    return out


def queue_delay_cdf_ms(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0):
    """Empirical CDF (x in ms, F) of the sojourn delay of transmitted packets (transients2014);
    without a ``packets`` table, from the sojourn histogram (x at each bin's end)."""
    if _has(tables, "packets") or not _has(tables, "sojourn"):
        return cdf(sojourn_delays_ns(tables, meta, hop, warmup_s) / 1e6)
    h = _sojourn_rows(tables, meta, hop, warmup_s, "sojourn")
    hi, count = _col(h, "hi_ns", np.float64), _col(h, "count", np.float64)
    order = np.argsort(hi, kind="stable")
    f = np.cumsum(count[order])
    return hi[order] / 1e6, f / f[-1] if f.size else f


def backlog_steps(
    tables: dict, meta: dict, hop: str, unit: str = "bytes", source: str = "auto"
) -> tuple[np.ndarray, np.ndarray, bool]:
    """The queue backlog of one hop as a right-continuous step function.

    Returns ``(t_ns, value, exact)``: the backlog is ``value[i]`` on ``[t_ns[i], t_ns[i+1])``
    and ``value[-1]`` until the end of the run.

    * ``source="packets"`` (exact): every packet that entered the queue (outcome ``sent``,
      ``marked``, ``head``, ``fat_flow``, ``ack_filter``) adds its size (or 1 packet) at ``t_enqueue_ns`` and
      removes it at ``t_out_ns`` (start of transmission or drop from the queue); a null
      ``t_out_ns`` means still queued at the end. ``overlimit`` and ``early`` drops never
      entered. Events at the same instant are applied together, so a packet that is enqueued
      and starts transmission at the same nanosecond never counts, matching the ``queue`` table
      (backlog excludes the packet being transmitted).
    * ``source="queue"`` (approximate): the sampled ``backlog_bytes``/``backlog_pkts`` held
      constant from one sample to the next (sample-and-hold); exact only at the sample times.
    * ``"auto"``: packets when present, else queue.
    """
    _check_unit(unit)
    source = _backlog_source(tables, source)
    if source == "packets":
        return *_packet_backlog(_hop_packets(tables, hop), unit, int(meta["duration_ns"])), True
    if source == "queue":
        q = _hop(tables, "queue", hop)
        t = _col(q, "t_ns", np.int64)
        v = _col(q, f"backlog_{unit}", np.float64)
        order = np.argsort(t, kind="stable")
        return t[order], v[order], False
    raise ValueError(f"source must be 'auto', 'packets' or 'queue', got {source!r}")


def _check_unit(unit: str) -> None:
    if unit not in ("bytes", "pkts"):
        raise ValueError(f"unit must be 'bytes' or 'pkts', got {unit!r}")


def _backlog_source(tables: dict, source: str) -> str:
    """``backlog_steps``'s source with "auto" resolved."""
    if source == "auto":
        return "packets" if _has(tables, "packets") else "queue"
    return source


def _packet_backlog(h: HopPackets, unit: str, end: int) -> tuple[np.ndarray, np.ndarray]:
    """``backlog_steps`` from the ``packets`` rows of a hop."""
    m, order, times, last = h.memo(("changes", end), lambda: _queue_changes(h, end))
    size = h.size[m] if unit == "bytes" else np.ones(m.sum(), dtype=np.int64)
    deltas = np.concatenate([[0], size, -size])
    cum = np.cumsum(deltas[order])
    return times, cum[last].astype(np.float64)


def _queue_changes(h: HopPackets, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What ``backlog_steps`` needs of a hop's packets in either unit: the rows that entered the
    queue, the stable time order of the changes [start, their enqueues, their departures], the
    instants of change, and which change is the last of its instant (the value after all
    changes at an instant is the running sum at its last one)."""
    m = h.isin(ENTERED)
    t_in, t_out_f = h.t_in[m], h.t_out[m]
    t_out = np.where(np.isnan(t_out_f), end + 1, t_out_f).astype(np.int64)
    times = np.concatenate([[0], t_in, t_out])
    order = np.argsort(times, kind="stable")
    times = times[order]
    last = np.r_[times[1:] != times[:-1], True]
    return m, order, times[last], last


def _clip_steps(t: np.ndarray, v: np.ndarray, w: int, end: int) -> tuple[np.ndarray, np.ndarray]:
    """Segment durations (ns) and values of a step function restricted to [w, end]."""
    if t.size == 0 or end <= w:
        return np.zeros(0), np.zeros(0)
    starts = np.maximum(t, w)
    ends = np.minimum(np.r_[t[1:], end], end)
    ends -= starts
    dur = np.maximum(ends, 0, out=ends).astype(np.float64)
    # before the first sample the value is unknown: treated as not covered
    return dur, v


def time_average(t: np.ndarray, v: np.ndarray, w: int, end: int) -> float | None:
    """Time average of a step function over [w, end] (covered part only)."""
    dur, val = _clip_steps(t, v, w, end)
    total = dur.sum()
    return float((dur * val).sum() / total) if total > 0 else None


def mean_backlog(
    tables: dict, meta: dict, hop: str, unit: str = "pkts", warmup_s: float = 0.0, source: str = "auto"
) -> float | None:
    """E[Q]: time-average queue length (bytes or packets) over the measured window.

    Definition (lpcc2013 E[Q]; codel2012 1d "mean queue"): (1 / (T_end - W)) * integral of the
    backlog step function over [W, T_end]; see ``backlog_steps`` for exact vs sampled.
    """
    w, end = _window(meta, warmup_s)
    if _backlog_source(tables, source) == "packets":
        _check_unit(unit)
        h = _hop_packets(tables, hop)
        return h.memo(("mean backlog", unit, w, end), lambda: _held_average(h, unit, w, end))
    t, v, _ = backlog_steps(tables, meta, hop, unit, source)
    return time_average(t, v, w, end)


def _held_average(h: HopPackets, unit: str, w: int, end: int) -> float | None:
    """``mean_backlog`` from a hop's packets without the step function: the integral of the
    backlog over [w, end] is the sum, over the packets that entered the queue, of what each held
    (its size, or 1) times how long it was queued within [w, end] (from its enqueue to its
    departure, or to the end when still queued). Summed in integers and divided once, so the value
    is the exact ratio rounded once to a float."""
    if end <= w:
        return None
    m = h.isin(ENTERED)

    def durations() -> np.ndarray:
        out = h.t_out[m]
        out = np.where(np.isnan(out), end, np.minimum(out, end)).astype(np.int64)
        held = out - np.maximum(h.t_in[m], w)
        return np.maximum(held, 0, out=held)

    held = h.memo(("held", w, end), durations)
    return _exact_dot(held, h.size[m] if unit == "bytes" else None) / (end - w)


def _exact_dot(a: np.ndarray, b: np.ndarray | None) -> int:
    """``sum(a * b)`` (``sum(a)`` without ``b``) of non-negative int64 arrays, exactly: summed in
    int64 over slices short enough that no partial sum can overflow, the slices' sums added as
    Python integers."""
    if a.size == 0:
        return 0
    bound = int(a.max()) * (1 if b is None else int(b.max()))
    if bound >= 2**63:
        pairs = zip(a.tolist(), [1] * a.size if b is None else b.tolist(), strict=True)
        return sum(x * y for x, y in pairs)
    step = (2**63 - 1) // max(bound, 1)
    return sum(
        int(a[i : i + step].sum() if b is None else np.dot(a[i : i + step], b[i : i + step]))
        for i in range(0, a.size, step)
    )


def normalized_mean_backlog(
    tables: dict, meta: dict, hop: str, warmup_s: float = 0.0, source: str = "auto"
) -> float | None:
    """E[Q]/Q_max (lpcc2013 section 3c).

    Q_max is the qdisc limit of the hop in the resolved scenario,
    ``meta['scenario']['topology'][dir]['qdisc']['limit']`` (``"100p"`` or ``"150000B"``);
    E[Q] is taken in the same unit (packets for a packet limit, bytes for a byte limit).
    None when the limit is not given.
    """
    limit = qdisc_config(meta, hop).get("limit")
    if limit is None:
        return None
    qmax, unit = parse_limit(limit)
    eq = mean_backlog(tables, meta, hop, unit, warmup_s, source)
    return None if eq is None or qmax <= 0 else eq / qmax


def _rate_steps(tables: dict, hop: str) -> tuple[np.ndarray, np.ndarray] | None:
    """A hop's rate schedule as (step times ns, rates bps) in time order; None without one."""
    if not _has(tables, "rate_schedule"):
        return None
    rs = _hop(tables, "rate_schedule", hop)
    if not rs.num_rows:
        return None
    t = _col(rs, "t_ns", np.int64)
    order = np.argsort(t, kind="stable")
    return t[order], _col(rs, "rate_bps", np.float64)[order]


def link_rate_bps(tables: dict, meta: dict, hop: str, t_ns: int = 0) -> float:
    """The link's scheduled rate at ``t_ns`` (rate_schedule; links.rate_bps for t = 0)."""
    steps = _rate_steps(tables, hop)
    if steps is not None:
        t, r = steps
        return float(r[max(np.searchsorted(t, t_ns, side="right") - 1, 0)])
    lk = _hop(tables, "links", hop)
    return float(lk.column("rate_bps")[0].as_py())


def capacity_bytes(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0) -> float:
    """Bytes the link could carry over [W, T_end]: the integral of its rate schedule / 8.

    Without a ``rate_schedule`` table and with W = 0, ``links.capacity_bytes``.
    """
    w, end = _window(meta, warmup_s)
    steps = _rate_steps(tables, hop)
    if steps is not None:
        dur, val = _clip_steps(*steps, w, end)
        return float((dur * val).sum() / 8.0 / NS)
    if w == 0 and _has(tables, "links"):
        return float(_hop(tables, "links", hop).column("capacity_bytes")[0].as_py())
    raise MissingTableError("utilisation over a window needs the 'rate_schedule' table")


def _cum_at(t: np.ndarray, v: np.ndarray, at: int) -> float:
    """Value of a cumulative counter sampled at t at time ``at`` (last sample <= at; 0 before)."""
    i = np.searchsorted(t, at, side="right") - 1
    return float(v[i]) if i >= 0 else 0.0


def tx_bytes(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0) -> float:
    """Bytes put on the link in [W, T_end].

    From ``packets`` (sum of sizes of transmitted packets with ``t_out_ns >= W``, exact), else
    ``links.tx_bytes`` minus the cumulative ``queue.tx_bytes`` at the last sample <= W (so from
    that sample on: see ``utilization``).
    """
    return _tx_bytes_window(tables, meta, hop, warmup_s)[0]


def _tx_bytes_window(tables: dict, meta: dict, hop: str, warmup_s: float) -> tuple[float, int]:
    """(bytes put on the link, the window start they are counted from): W itself from
    ``packets``, else the time of the last ``queue`` sample <= W."""
    w, _ = _window(meta, warmup_s)
    if _has(tables, "packets"):
        h = _hop_packets(tables, hop)
        return h.memo(("tx bytes", w), lambda: float(h.size[h.isin(TRANSMITTED) & (h.t_out >= w)].sum())), w
    total = float(_hop(tables, "links", hop).column("tx_bytes")[0].as_py())
    if w == 0:
        return total, 0
    q = _hop(tables, "queue", hop)
    t = _col(q, "t_ns", np.int64)
    order = np.argsort(t, kind="stable")
    t = t[order]
    i = int(np.searchsorted(t, w, side="right")) - 1
    if i < 0:
        return total, 0
    return total - float(_col(q, "tx_bytes", np.float64)[order][i]), int(t[i])


def _bytes_on_wire(tables: dict, h, hop: str, w: int, end: int) -> float:
    """The transmitted bytes whose time on the wire falls in [w, end]: every packet whose
    transmission starts in it, less the part past `end` of the one still on the wire then, plus
    the part after `w` of one that started before `w`. A packet's time on the wire is its size at
    the link's scheduled rate when it starts; only those two edge packets move the count (by less
    than a packet), so that the utilisation never exceeds 1."""
    tx = h.isin(TRANSMITTED)
    t_out, size = h.t_out[tx], h.size[tx].astype(np.float64)
    total = float(size[t_out >= w].sum())
    steps = _rate_steps(tables, hop)
    if steps is None or not t_out.size:
        return total
    t, rate = steps
    if not (rate > 0).any():
        return total
    longest = size.max() * 8 * NS / rate[rate > 0].min()
    edge = ((t_out >= w - longest) & (t_out < w)) | ((t_out > end - longest) & (t_out <= end))
    te, se = t_out[edge], size[edge]
    r = rate[np.maximum(np.searchsorted(t, te, side="right") - 1, 0)]
    ok = r > 0
    te, se, r = te[ok], se[ok], r[ok]
    on_wire = se * 8 * NS / r
    inside = np.clip(np.minimum(te + on_wire, end) - np.maximum(te, w), 0, None)
    counted = np.where(te >= w, se, 0.0)
    return total + float((se * inside / on_wire - counted).sum())


def utilization(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0) -> float | None:
    """Link utilisation = bytes put on the link / capacity bytes over [W, T_end]
    (docs/metrics.md; capacity integrates the rate schedule when the rate varies). With the
    ``packets`` table the bytes are those on the wire within the window (``_bytes_on_wire``: the
    packet on the wire at T_end counts in part, as does one started before W). Without the
    ``packets`` table the transmitted bytes are known only at the ``queue`` samples, so both
    counts start at the last sample <= W (never a byte counted outside the capacity's window)."""
    sent, w = _tx_bytes_window(tables, meta, hop, warmup_s)
    if _has(tables, "packets"):
        h = _hop_packets(tables, hop)
        end = _window(meta, warmup_s)[1]
        sent = h.memo(("bytes on wire", w), lambda: _bytes_on_wire(tables, h, hop, w, end))
    cap = capacity_bytes(tables, meta, hop, w / NS)
    return sent / cap if cap > 0 else None


def drops_by_reason(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0) -> dict[str, int]:
    """Drops of one hop by reason: ``overlimit``, ``early``, ``forced``, ``head``, ``fat_flow``,
    ``ack_filter`` (queue drops) and ``loss`` (random loss on the wire after transmission).

    Queue drops come from ``packets`` (rows with that outcome and ``t_out_ns >= W``) when recorded,
    else from the ``links`` totals (whole run: the warm-up cannot be applied to the split).
    ``loss`` always comes from ``links.drops_loss`` (whole run).
    """
    w, _ = _window(meta, warmup_s)
    out = {r: 0 for r in DROP_REASONS}
    links = _hop(tables, "links", hop) if _has(tables, "links") else None
    if _has(tables, "packets"):
        h = _hop_packets(tables, hop)
        for r in QUEUE_DROP_REASONS:
            out[r] = h.count_from(w, (r,))
    elif links is not None and links.num_rows:
        for r in QUEUE_DROP_REASONS:
            # Runs stored before a reason existed have no column for it: none of those drops.
            if f"drops_{r}" in links.column_names:
                out[r] = int(links.column(f"drops_{r}")[0].as_py())
    if links is not None and links.num_rows:
        out["loss"] = int(links.column("drops_loss")[0].as_py())
    return out


def queue_drops(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0) -> dict[str, int]:
    """``drops_by_reason`` of the reasons a queue decides (every one but ``loss`` on the wire)."""
    by = drops_by_reason(tables, meta, hop, warmup_s)
    return {r: by[r] for r in QUEUE_DROP_REASONS}


def marks(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0) -> int:
    """CE marks applied by the queue: ``packets`` rows with outcome ``marked`` and
    ``t_out_ns >= W``; else ``links.marks`` (W = 0) or the ``queue.marks`` counter difference."""
    w, _ = _window(meta, warmup_s)
    if _has(tables, "packets"):
        return _hop_packets(tables, hop).count_from(w, ("marked",))
    total = int(_hop(tables, "links", hop).column("marks")[0].as_py())
    if w == 0 or not _has(tables, "queue"):
        return total
    q = _hop(tables, "queue", hop)
    t = _col(q, "t_ns", np.int64)
    order = np.argsort(t, kind="stable")
    return int(total - _cum_at(t[order], _col(q, "marks", np.float64)[order], w))


def arrivals(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0) -> int:
    """Packets that reached the queue: ``packets`` rows with ``t_enqueue_ns >= W``, else
    ``links.arrivals`` (whole run)."""
    w, _ = _window(meta, warmup_s)
    if _has(tables, "packets"):
        h = _hop_packets(tables, hop)
        return h.memo(("arrivals", w), lambda: int((h.t_in >= w).sum()))
    return int(_hop(tables, "links", hop).column("arrivals")[0].as_py())


def tx_packets(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0) -> int:
    """Packets put on the link (transmitted, ``t_out_ns >= W``), else ``links.tx_packets``."""
    w, _ = _window(meta, warmup_s)
    if _has(tables, "packets"):
        return _hop_packets(tables, hop).count_from(w, TRANSMITTED)
    return int(_hop(tables, "links", hop).column("tx_packets")[0].as_py())
