"""The metric catalogue: every key of a run summary (summary.json, ``aqmlab run --json``) declared
once, with its definition, unit and window, the rule computing its value from the run's tables
and the ``runs`` catalog columns it fills (name, readable name, SQL type). ``summarize``
(``summary.py``) is assembled from these rules; ``aqmlab list metrics``, docs/metrics.md
(``columns.metrics_markdown``), the catalog's columns (``CATALOG_COLUMNS``, ``catalog_values``) and
the printed tables are derived from the same declarations.

A key pattern names the variable parts: HOP (a hop: "down" and "up" for the one-hop shorthand),
DIR ("down" or "up"), REASON (a drop reason), [i] (an item of a list) and {a,b} (each of a, b).
A link metric's column is the ``down`` direction's bottleneck; its ``up_`` twin is the ``up``
direction's.

The rules call the metric functions through modules loaded on first use (``lazy``): the
catalogue is read by commands that compute nothing, and the metric modules do not import it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aqmlab.lazy import lazy
from aqmlab.metrics.keys import DIRECTIONS, SHORT_QUANTILES, SHORT_STATS, STATS

_base = lazy("aqmlab.metrics.base")
_queue = lazy("aqmlab.metrics.queue")
_flows = lazy("aqmlab.metrics.flows")
_probes = lazy("aqmlab.metrics.probes")
_web = lazy("aqmlab.metrics.web")

WINDOW = "[W, T_end]"
"""The measured window: from the warm-up W (``--warmup``) to the run's end."""

CATALOG_STATS = ("p50", "p95", "p99", "max", "mean")
"""The queueing-delay statistics the catalog and the printed link tables carry."""

_STAT_NAMES = {"p50": "median", "p75": "75th percentile", "p95": "95th percentile", "p99": "99th percentile",
               "max": "maximum", "mean": "mean"}  # fmt: skip


def _stats(stats: tuple[str, ...]) -> str:
    return "{" + ",".join(stats) + "}"


def _stat_words(stats: tuple[str, ...]) -> str:
    qs = [_STAT_NAMES[s].removesuffix(" percentile") for s in stats if s.startswith("p")]
    return f"the {', '.join(qs)} percentile (numpy's linear interpolation), maximum or mean"


_SUBQUEUES = "{l,c}"

IN_FLIGHT_RULE = (
    "A probe whose reply did not arrive is *in flight at the end*, neither answered nor lost, when "
    "it was sent less than the path's maximum delay before the run's end; the path's maximum "
    "delay is the longest RTT any probe of the stream had in the run (0 without an answer). "
    "Every other unanswered probe is lost."
)

ABSENT = object()
"""What a rule returns for a key the run does not have (a WiFi station's airtime on any other
hop): the key is left out of its block."""

Rule = Callable[[Any], Any]
"""A key's rule: its value at one place of the summary (``summary.At``: the run's tables, meta
and warm-up, and within a block its hop or its items). In a list block (``flows[i]``,
``probes[i]``) the rule gives the column of values, one per item of ``At.items``."""


@dataclass(frozen=True)
class Column:
    """A ``runs`` catalog column filled from a summary key: ``path`` below the key's concrete
    prefix (a hop's block, ``probes[i]``, ...); ``how`` over a list's items: "" (the first item),
    "mean", "sum" or "count"; ``missing`` when the summary lacks the key."""

    name: str
    label: str
    unit: str
    path: tuple[str, ...] = ()
    sql: str = "DOUBLE"
    how: str = ""
    missing: float | None = None


@dataclass(frozen=True)
class Metric:
    """One summary key pattern: its definition, unit, window, the rule computing its value (None
    only for ``run_dir``, which the command printing a summary adds) and its catalog columns.
    The rule's value goes at the key's fixed part below its block ("queue_delay_ms" of
    ``links.HOP.queue_delay_ms.{p50,...}``: the rule gives the dict of statistics)."""

    key: str
    definition: str
    unit: str = ""
    window: str = "-"
    compute: Rule | None = None
    columns: tuple[Column, ...] = ()


def _link(
    key: str, definition: str, unit: str, compute: Rule, label: str = "", sql: str = "DOUBLE"
) -> Metric:
    """A hop metric with one catalog column named as its key (``label``: its readable name)."""
    name = key.rsplit(".", 1)[-1]
    return Metric(f"links.HOP.{key}", definition, unit, WINDOW, compute,
                  (Column(name, label, unit, sql=sql),) if label else ())  # fmt: skip


# --------------------------------------------------------------------------- the per-key rules


def _float(x) -> float | None:
    return _base._float(x)


def _drops(a) -> int:
    """Queue drops (every reason but loss on the wire), summed from the drops by reason."""
    return int(sum(_queue.queue_drops(*a.hop_args).values()))


def _backlog(unit: str) -> Rule:
    """The mean backlog; None without a ``packets`` or ``queue`` table (level ``summary``)."""
    return lambda a: (
        _float(_queue.mean_backlog(a.tables, a.meta, a.hop, unit, a.warmup_s)) if a.queued else None
    )


def _kept(rule: Rule) -> Rule:
    """A sub-queue's count: None without the ``packets`` table (the other levels keep no sub-queue)."""
    return lambda a: rule(a) if "packets" in a.tables else None


def _airtime(diagnostic: str) -> Rule:
    """A WiFi station hop's value copied from the core's diagnostics (``meta['qdisc_diagnostics']``)."""

    def rule(a):
        d = (a.meta.get("qdisc_diagnostics") or {}).get(a.hop) or {}
        return float(d[diagnostic]) if diagnostic in d else ABSENT

    return rule


def _flow_column(column: str) -> Rule:
    """A ``flows`` column as recorded, for the block's flows."""
    return lambda a: _flows.rows_column(a.tables, column, a.items)


def _each(value: Callable[[Any, int], Any]) -> Rule:
    """A probe stream's value, for each stream of the block."""
    return lambda a: [value(a, flow) for flow in a.items]


def _dist(values, qs=SHORT_QUANTILES) -> dict:
    return _base.percentiles(values, qs)


def _induced(a, flow: int) -> dict:
    d = _dist(_probes.induced_latency_ms(a.tables, flow, a.warmup_s), (50,))
    return {"p50": d["p50"], "mean": d["mean"]}


def _per_dir(f: Callable) -> Callable[[Any, int], dict]:
    """``{DIR: f(tables, flow, DIR, warmup_s)}`` of a probe stream."""
    return lambda a, flow: {d: f(a.tables, flow, d, a.warmup_s) for d in DIRECTIONS}


CATALOGUE: tuple[Metric, ...] = (
    Metric("schema_version", "layout version of this summary; CHANGELOG.md lists each change",
           compute=lambda a: _base.SUMMARY_SCHEMA_VERSION),
    Metric("name", "the scenario's name", compute=lambda a: a.meta.get("name")),
    Metric("seed", "the run seed", compute=lambda a: a.meta.get("seed")),
    Metric("wall_s", "wall-clock time the simulation took", "s", "run", lambda a: _float(a.meta.get("wall_s")),
           (Column("wall_s", "wall-clock time", "s"),)),
    Metric("events", "events the simulator processed", "count", "run", lambda a: a.meta.get("events"),
           (Column("events", "events processed", "count", sql="BIGINT"),)),
    Metric("warmup_s", "the warm-up W skipped by every windowed metric", "s", compute=lambda a: float(a.warmup_s),
           columns=(Column("warmup_s", "warm-up skipped by the metrics", "s", missing=0.0),)),
    Metric("run_dir", "the stored run's directory (printed by `aqmlab run --json`, not stored)"),
    Metric("links.HOP.qdisc", "the hop's queue discipline", compute=lambda a: _base.qdisc_name(a.tables, a.meta, a.hop),
           columns=(Column("qdisc", "queue discipline", "", sql="VARCHAR"),)),
    Metric(f"links.HOP.queue_delay_ms.{_stats(STATS)}",
           (f"{_stat_words(STATS)} of the sojourn time (enqueue to start of transmission) of the packets "
            "transmitted by the hop, counted by enqueue time"), "ms", WINDOW,
           lambda a: _queue.queue_delay_stats_ms(*a.hop_args),
           tuple(Column(f"queue_delay_{s}_ms", f"{_STAT_NAMES[s]} queueing delay", "ms", (s,))
                 for s in CATALOG_STATS)),
    _link("utilization",
          ("bytes on the wire within the window / bytes its rate could carry (the lowest of its "
           "line rate and a shaping qdisc's; a trace's opportunities; the packet on the wire at "
           "T_end, or at W, counts for its part inside the window: never above 1)"),
          "fraction", lambda a: _float(_queue.utilization(*a.hop_args)), "bottleneck utilisation"),
    _link("drops", "packets the hop's queue dropped (every reason but loss on the wire)", "packets",
          _drops, "drops at the bottleneck", "BIGINT"),
    _link("drops_by_reason.REASON",
          ("drops by reason: overlimit, early, forced, head, fat_flow, ack_filter (by the queue), loss "
           "(on the wire, whole run)"), "packets", lambda a: _queue.drops_by_reason(*a.hop_args)),
    _link("marks", "packets the queue marked CE", "packets", lambda a: _queue.marks(*a.hop_args),
          "CE marks at the bottleneck", "BIGINT"),
    _link("arrivals", "packets that reached the queue", "packets", lambda a: _queue.arrivals(*a.hop_args)),
    _link("transmitted", "packets put on the link", "packets", lambda a: _queue.tx_packets(*a.hop_args)),
    _link("tx_bytes", "bytes put on the link", "bytes", lambda a: int(_queue.tx_bytes(*a.hop_args))),
    _link("mean_backlog_pkts", "time-average backlog (null without the packets and queue tables)", "packets",
          _backlog("pkts"), "mean backlog"),
    _link("mean_backlog_bytes", "time-average backlog (null without the packets and queue tables)", "bytes",
          _backlog("bytes"), "mean backlog"),
    Metric("links.HOP.backlog_exact", "whether the backlog is exact (packets table) or sampled",
           compute=lambda a: bool(_base._has(a.tables, "packets"))),
    Metric(f"links.HOP.queues.{_SUBQUEUES}.queue_delay_ms.{_stats(STATS)}",
           (f"a hop with sub-queues (dualpi2: l, c) only: {_stat_words(STATS)} of the sojourn time of the "
            "packets the sub-queue transmitted (null without the packets table)"), "ms", WINDOW,
           lambda a: _queue.queue_delay_stats_ms(*a.hop_args)),
    Metric(f"links.HOP.queues.{_SUBQUEUES}.drops", "packets the sub-queue dropped (null without the packets table)",
           "packets", WINDOW, _kept(_drops)),
    Metric(f"links.HOP.queues.{_SUBQUEUES}.drops_by_reason.REASON",
           "the sub-queue's drops by reason: overlimit, early, forced, head, fat_flow, ack_filter", "packets",
           WINDOW, _kept(lambda a: _queue.queue_drops(*a.hop_args))),
    Metric(f"links.HOP.queues.{_SUBQUEUES}.marks", "packets the sub-queue sent marked CE", "packets", WINDOW,
           _kept(lambda a: _queue.marks(*a.hop_args))),
    Metric(f"links.HOP.queues.{_SUBQUEUES}.arrivals", "packets classified into the sub-queue", "packets",
           WINDOW, _kept(lambda a: _queue.arrivals(*a.hop_args))),
    Metric(f"links.HOP.queues.{_SUBQUEUES}.transmitted", "packets the sub-queue put on the link", "packets",
           WINDOW, _kept(lambda a: _queue.tx_packets(*a.hop_args))),
    Metric(f"links.HOP.queues.{_SUBQUEUES}.tx_bytes", "bytes the sub-queue put on the link", "bytes", WINDOW,
           _kept(lambda a: int(_queue.tx_bytes(*a.hop_args)))),
    Metric("links.HOP.station_airtime_s",
           ("a WiFi station's hop only: the airtime the access point charged the station, the PPDU "
            "durations of its transmissions to the station (every attempt) and of the station's "
            "received whole (mac80211's per-station airtime, docs/architecture.md, WiFi)"), "s", "run",
           _airtime("wifi_station_airtime_s")),
    Metric("links.HOP.station_airtime_share",
           ("a WiFi station's hop only: station_airtime_s / the sum over the medium's stations (what "
            "the airtime scheduler equalises)"), "fraction", "run", _airtime("wifi_station_airtime_share")),
    Metric("bottleneck.DIR",
           ("the bottleneck hop of the direction (lowest rate it can carry: a shaping qdisc's, HTB's or a "
            "trace's when below the line rate; first of equals)"), compute=lambda a: _base.bottlenecks(a.tables)),
    Metric("goodput_mbps.{down,up,total}",
           ("payload the direction's flows (probes left out) delivered to their applications / "
            "the window's length"), "Mbit/s", WINDOW,
           lambda a: _flows.goodput_totals_mbps(a.tables, a.meta, a.warmup_s),
           (Column("goodput_mbps_total", "total goodput", "Mbit/s", ("total",)),
            Column("goodput_mbps_down", "goodput, down", "Mbit/s", ("down",)),
            Column("goodput_mbps_up", "goodput, up", "Mbit/s", ("up",)))),
    Metric("flows[i].id", "the flow's id", compute=_flow_column("flow"),
           columns=(Column("n_flows", "flows", "count", sql="BIGINT", how="count"),)),
    Metric("flows[i].kind", "the flow's kind (tcp, udp, web, ...)", compute=_flow_column("kind")),
    Metric("flows[i].direction", "the direction the flow's data goes", compute=_flow_column("direction")),
    Metric("flows[i].label", "the flow's label", compute=_flow_column("label")),
    Metric("flows[i].cc", "the congestion control of a TCP flow", compute=_flow_column("cc")),
    Metric("flows[i].goodput_mbps",
           "payload delivered in order to the application / the flow's active part of the window",
           "Mbit/s", WINDOW, lambda a: _flows.rows_goodput_mbps(a.tables, a.meta, a.items, a.warmup_s)),
    Metric("flows[i].bytes_delivered", "payload delivered to the application", "bytes", WINDOW,
           lambda a: _flows.rows_delivered_bytes(a.tables, a.meta, a.items, a.warmup_s)),
    Metric("flows[i].retransmits", "TCP retransmissions", "packets", "run", _flow_column("retransmits"),
           (Column("retransmits", "TCP retransmissions", "packets", sql="BIGINT", how="sum"),)),
    Metric("flows[i].rto_count", "TCP retransmission timeouts", "count", "run", _flow_column("rto_count")),
    Metric("flows[i].completion_s", "first SYN to completion of a finite transfer (null if unfinished)", "s",
           "run", lambda a: _flows.rows_completion_s(a.tables, a.items)),
    Metric("probes[i].id", "the probe stream's flow id (ping or voip)", compute=lambda a: list(a.items)),
    Metric(f"probes[i].rtt_ms.{_stats(SHORT_STATS)}",
           f"{_stat_words(SHORT_STATS)} of the answered probes' round-trip time", "ms", WINDOW,
           _each(lambda a, f: _dist(_probes.probe_rtt_ms(a.tables, f, a.warmup_s))),
           (Column("probe_rtt_p50_ms", "median probe RTT", "ms", ("p50",)),
            Column("probe_rtt_p95_ms", "95th percentile probe RTT", "ms", ("p95",)),
            Column("probe_rtt_mean_ms", "mean probe RTT", "ms", ("mean",), how="mean"))),
    Metric("probes[i].induced_ms.{p50,mean}", "median or mean RTT minus the path's base (empty-queue) RTT",
           "ms", WINDOW, _each(_induced),
           (Column("probe_induced_mean_ms", "mean induced latency (probe RTT - base RTT)", "ms", ("mean",),
                   how="mean"),)),
    Metric("probes[i].counts.{sent,answered,lost,in_flight}",
           "probes sent, and of those answered, lost and in flight at the end (the in-flight rule)",
           "count", WINDOW, _each(lambda a, f: _probes.probe_counts(a.tables, f, a.warmup_s, a.end_ns))),
    Metric("probes[i].loss",
           "lost / (sent - in flight), by the in-flight rule; null when no probe's fate is known",
           "fraction", WINDOW, _each(lambda a, f: _probes.probe_loss(a.tables, f, a.warmup_s, a.end_ns)),
           (Column("probe_loss", "probe loss", "fraction", how="mean"),)),
    Metric(f"probes[i].owd_ms.DIR.{_stats(SHORT_STATS)}",
           f"{_stat_words(SHORT_STATS)} of the answered probes' one-way delay in the direction", "ms", WINDOW,
           _each(_per_dir(lambda t, f, d, w: _dist(_probes.probe_owd_ms(t, f, d, w)))),
           tuple(Column(f"probe_owd_{d}_{s}_ms", f"one-way delay {s} of the first probe stream, {d}", "ms",
                        (d, s)) for d in DIRECTIONS for s in ("p50", "p95", "p99"))),
    Metric("probes[i].jitter_ms.DIR",
           ("interarrival jitter (RFC 3550 6.4.1): over the probes in order of arrival, D = difference "
            "of consecutive one-way delays, J += (|D| - J) / 16 from 0; the value after the last "
            "arrival"), "ms", WINDOW, _each(_per_dir(lambda t, f, d, w: _probes.probe_jitter_ms(t, f, d, w))),
           tuple(Column(f"probe_jitter_{d}_ms", f"jitter (RFC 3550) of the first probe stream, {d}", "ms", (d,))
                 for d in DIRECTIONS)),
    Metric("probes[i].ipdv_ms.DIR",
           "mean |IPDV| of consecutive probes that both arrived (RFC 3393; what irtt and Flent call jitter)",
           "ms", WINDOW, _each(_per_dir(lambda t, f, d, w: _probes.probe_ipdv_ms(t, f, d, w)))),
    Metric("web.exchanges", "web request/response exchanges requested", "count", WINDOW,
           lambda a: _web.web_exchanges(a.tables, a.warmup_s)),
    Metric("web.completed", "of those, completed in the run", "count", WINDOW,
           lambda a: _web.web_completed(a.tables, a.warmup_s)),
    Metric(f"web.response_ms.{_stats(SHORT_STATS)}",
           (f"{_stat_words(SHORT_STATS)} of the completed exchanges' response time "
            "(request SYN to the last response byte)"), "ms", WINDOW,
           lambda a: _dist(_web.response_times_ms(a.tables, a.warmup_s))),
    Metric("webpage.fetches", "page fetches started", "count", WINDOW,
           lambda a: _web.page_fetches(a.tables, a.warmup_s)),
    Metric("webpage.completed", "of those, completed", "count", WINDOW,
           lambda a: int(_web.fetch_times_s(a.tables, a.warmup_s).size)),
    Metric("webpage.timed_out", "of those, timed out", "count", WINDOW,
           lambda a: _web.page_timeouts(a.tables, a.warmup_s)),
    Metric(f"webpage.fetch_ms.{_stats(SHORT_STATS)}",
           (f"{_stat_words(SHORT_STATS)} of the completed fetches' time (start to "
            "the last object's last byte)"), "ms", WINDOW,
           lambda a: _dist(_web.fetch_times_s(a.tables, a.warmup_s) * 1e3)),
)  # fmt: skip
"""Every summary key pattern, in the order docs/metrics.md lists them and ``summarize`` writes each
block's keys."""

SUMMARY_METRICS: dict[str, tuple[str, str, str]] = {
    m.key: (m.definition, m.unit, m.window) for m in CATALOGUE
}
"""summary key pattern -> (definition, unit, window)."""


def _columns(scope: str) -> list[tuple[Metric, Column]]:
    return [(m, c) for m in CATALOGUE for c in m.columns if m.key.split(".")[0].split("[")[0] == scope]


def _twin(column: str, direction: str) -> str:
    return column if direction == "down" else f"up_{column}"


LINK_COLUMNS: dict[str, Column] = {c.name: c for m, c in _columns("links")}
"""The hop columns of the catalog, the ``down`` direction's names (``up_`` twins: ``_twin``)."""

CATALOG_COLUMNS: dict[str, Column] = {
    **{c.name: c for scope in ("schema_version", "wall_s", "events", "warmup_s") for _, c in _columns(scope)},
    **{_twin(name, d): c for d in DIRECTIONS for name, c in LINK_COLUMNS.items()},
    **{c.name: c for scope in ("goodput_mbps", "flows", "probes") for _, c in _columns(scope)},
}
"""Every catalog column filled from the summary, in the catalog's order."""


def value_at(d: object, path: tuple[str, ...]):
    """The value at ``path`` in nested dicts; None where a key is missing (older summaries)."""
    for part in path:
        d = d.get(part) if isinstance(d, dict) else None
    return d


def _typed(c: Column, v):
    return None if v is None else float(v) if c.sql == "DOUBLE" else v


def _over_items(c: Column, items: list[dict], key: str):
    """A column of a list block (``flows[i]``, ``probes[i]``) by its rule ``how``."""
    values = [value_at(i, (key, *c.path)) for i in items]
    if c.how == "count":
        return len(items)
    if c.how == "sum":
        return sum(int(v or 0) for v in values)
    if not items:
        return None
    if c.how == "mean":
        known = [v for v in values if v is not None]
        return sum(known) / len(known) if known else None
    return _typed(c, values[0])


def _field(m: Metric) -> tuple[str, str]:
    """The block a key pattern's columns are read from ("links", "probes[i]", ...) and the field
    in each of its items (a hop's, a probe stream's)."""
    parts = m.key.split(".")
    k = 2 if parts[0] == "links" else 1
    return parts[0], parts[k] if len(parts) > k and not parts[k].startswith("{") else ""


def catalog_source(column: str) -> str | None:
    """The summary key a catalog column is read from (concrete hop and statistic; ``probes[i]``
    for a value over every probe stream); None for a column no summary key fills."""
    for m in CATALOGUE:
        head, field = _field(m)
        for c in m.columns:
            if head == "links":
                hops = {_twin(c.name, d): d for d in DIRECTIONS}
                if column in hops:
                    return ".".join(("links", hops[column], field, *c.path))
            elif c.name == column:
                item = f"{head[:-3]}[{'i' if c.how else 0}]" if head.endswith("[i]") else head
                return ".".join(p for p in (item, field, *c.path) if p)
    return None


def catalog_values(s: dict) -> dict:
    """The CATALOG_COLUMNS of a run summary: link columns from each direction's bottleneck hop
    (``summary['bottleneck']``), ``probes[i]`` columns from the first stream or the mean over the
    streams, ``flows[i]`` columns counted or summed over the flows."""
    row: dict = {}
    links, neck = s.get("links") or {}, s.get("bottleneck") or {}
    for m in CATALOGUE:
        head, field = _field(m)
        for c in m.columns:
            if head == "links":
                for d in DIRECTIONS:
                    lk = links.get(neck.get(d, d))
                    row[_twin(c.name, d)] = _typed(c, value_at(lk, (field, *c.path))) if lk else None
            elif head.endswith("[i]"):
                row[c.name] = _over_items(c, s.get(head[:-3]) or [], field)
            else:
                v = value_at(s, (head, *c.path))
                row[c.name] = _typed(c, c.missing if v is None and head not in s else v)
    if s.get("goodput_mbps") is None:  # stored before the aggregate existed: the old sum of flow rates
        gp = [(f.get("direction"), f.get("goodput_mbps")) for f in s.get("flows") or []
              if f.get("goodput_mbps") is not None]  # fmt: skip
        for k in ("total", "down", "up"):
            row[f"goodput_mbps_{k}"] = float(sum(g for d, g in gp if k in ("total", d))) if gp else None
    return row


# --------------------------------------------------------------------------- table views


@dataclass(frozen=True)
class View:
    """A column of a printed table: its header and the summary key under the table's block (a
    hop's ``links.HOP``, a flow's ``flows[i]``, a probe stream's ``probes[i]``), times ``scale``,
    printed with ``digits`` decimals where a table fixes them."""

    header: str
    key: str
    scale: float = 1.0
    digits: int = 2

    def value(self, block: dict):
        """The column's value in one block (None where the key is missing)."""
        v = value_at(block, tuple(self.key.split(".")))
        return v if v is None or self.scale == 1.0 else self.scale * v


LINK_VIEW = (
    View("qdisc", "qdisc"), View("util %", "utilization", 100.0),
    *(View("qdelay p50 ms" if s == "p50" else s, f"queue_delay_ms.{s}") for s in CATALOG_STATS),
    View("drops", "drops"), View("marks", "marks"), View("arrivals", "arrivals"),
)  # fmt: skip
"""The hop table of `aqmlab run` and ``Result.table``."""

LINK_DETAIL_VIEW = (
    *LINK_VIEW, View("transmitted", "transmitted"), View("tx bytes", "tx_bytes"),
    View("backlog pkts", "mean_backlog_pkts"), View("backlog bytes", "mean_backlog_bytes"),
)  # fmt: skip
"""The hop table of `aqmlab show` and the report: LINK_VIEW and the transmitted packets and
bytes and the mean backlog."""

FLOW_VIEW = (
    View("id", "id"), View("label", "label"), View("kind", "kind"), View("dir", "direction"), View("cc", "cc"),
    View("goodput Mb/s", "goodput_mbps"), View("delivered B", "bytes_delivered"), View("retx", "retransmits"),
    View("RTOs", "rto_count"), View("completion s", "completion_s"),
)  # fmt: skip
"""The flow table of `aqmlab run`, `aqmlab show` and the report."""

PROBE_VIEW = (
    View("id", "id"), View("RTT p50 ms", "rtt_ms.p50"), View("p95", "rtt_ms.p95"), View("p99", "rtt_ms.p99"),
    *(View(f"OWD {d} p50", f"owd_ms.{d}.p50") for d in ("up", "down")),
    *(View(f"OWD {d} {q}", f"owd_ms.{d}.{q}") for d in ("up", "down") for q in ("p95", "p99")),
    *(View(f"jitter {d} ms", f"jitter_ms.{d}") for d in ("up", "down")),
    View("lost", "counts.lost"), View("in flight", "counts.in_flight"), View("loss %", "loss", 100.0),
)  # fmt: skip
"""The VoIP / probe table of `aqmlab show` and the report."""

COMPARE_PROBE_VIEW = (
    View("probe RTT p50 ms", "rtt_ms.p50", digits=1), View("p95", "rtt_ms.p95", digits=1),
    View("jitter {d} ms", "jitter_ms.{d}"), View("probe loss %", "loss", 100.0, digits=1),
)  # fmt: skip
"""The first probe stream's columns in the table of `aqmlab run --qdisc` (a ``{d}`` column once
per shown direction)."""

SIDE_BY_SIDE = (
    "goodput_mbps_{d}", "queue_delay_p50_ms", "queue_delay_p95_ms", "drops", "marks",
    "probe_rtt_p50_ms", "probe_rtt_p95_ms", "probe_loss",
)  # fmt: skip
"""The catalog columns a table of several runs shows, one row per run (a link column and
``{d}`` for each shown direction)."""


def shown(v, sign: str = "") -> str:
    """A value as a table shows it: four significant digits, whole numbers from 10,000 up (never
    an exponent), "–" for none; ``sign`` "+" for a difference."""
    if v is None:
        return "–"
    if not isinstance(v, float):
        return str(v)
    return f"{v:{sign}.0f}" if abs(v) >= 1e4 else f"{v:{sign}.4g}"


VIEWS = {"links.HOP": LINK_DETAIL_VIEW, "flows[i]": FLOW_VIEW, "probes[i]": PROBE_VIEW}
"""The widest view of each summary block, by the block its rows are."""
