"""What each per-run column means, declared once: a readable name and its unit.

The ``runs`` catalog columns (``store.RUN_COLUMNS``, one flattened summary per run) and the
derived metrics of ``plots.metric_value`` are named here for axis labels, legends and tables.
Link metrics are declared once for the ``down`` direction; their ``up_`` twins are derived
(``in_direction``). ``label(column)`` gives "95th percentile queueing delay, down (ms)"; a column
not declared falls back to its own name with a unit read off its suffix, so nothing is ever
unlabelled.

Which direction a table or figure shows is decided once, by ``loaded_dirs``: the direction(s)
where the run's load is (see there); ``shown_dirs`` applies a ``--dir`` choice over many runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

DIRECTIONS = ("down", "up")
DIR_CHOICES = ("up", "down", "both")
"""The values of ``--dir``: one direction, or both."""

_LINK = {
    "qdisc": ("queue discipline", ""),
    "queue_delay_p50_ms": ("median queueing delay", "ms"),
    "queue_delay_p95_ms": ("95th percentile queueing delay", "ms"),
    "queue_delay_p99_ms": ("99th percentile queueing delay", "ms"),
    "queue_delay_max_ms": ("maximum queueing delay", "ms"),
    "queue_delay_mean_ms": ("mean queueing delay", "ms"),
    "utilization": ("bottleneck utilisation", "fraction"),
    "drops": ("drops at the bottleneck", "packets"),
    "marks": ("CE marks at the bottleneck", "packets"),
    "mean_backlog_pkts": ("mean backlog", "packets"),
    "mean_backlog_bytes": ("mean backlog", "bytes"),
    "enorm": ("mean backlog / buffer size", "fraction"),
}

COLUMNS: dict[str, tuple[str, str]] = {
    "seed": ("seed", ""),
    "dir": ("loaded direction(s)", ""),
    "sweep": ("sweep", ""),
    "duration_s": ("simulated duration", "s"),
    "warmup_s": ("warm-up skipped by the metrics", "s"),
    "wall_s": ("wall-clock time", "s"),
    "events": ("events processed", "count"),
    **{k: (f"{name}, down", unit) for k, (name, unit) in _LINK.items()},
    **{f"up_{k}": (f"{name}, up", unit) for k, (name, unit) in _LINK.items()},
    "goodput_mbps_total": ("total goodput", "Mbit/s"),
    "goodput_mbps_down": ("goodput, down", "Mbit/s"),
    "goodput_mbps_up": ("goodput, up", "Mbit/s"),
    "n_flows": ("flows", "count"),
    "retransmits": ("TCP retransmissions", "packets"),
    "probe_rtt_p50_ms": ("median probe RTT", "ms"),
    "probe_rtt_p95_ms": ("95th percentile probe RTT", "ms"),
    "probe_rtt_mean_ms": ("mean probe RTT", "ms"),
    "probe_induced_mean_ms": ("mean induced latency (probe RTT - base RTT)", "ms"),
    "probe_loss": ("probe loss", "fraction"),
    "tcp_share": ("TCP share of delivered bytes", "fraction"),
}
"""column -> (readable name, unit); "" for a unitless label."""


def unit(column: str) -> str:
    """The column's unit ("ms", "Mbit/s", "fraction", ...); "" when it has none."""
    if column in COLUMNS:
        return COLUMNS[column][1]
    if column.endswith("_ms"):
        return "ms"
    if column.endswith("_s"):
        return "s"
    if "mbps" in column:
        return "Mbit/s"
    if column.endswith("_bytes"):
        return "bytes"
    if column.endswith("_pkts"):
        return "packets"
    return ""


def name(column: str) -> str:
    """The column's readable name (the column itself when it is not declared)."""
    return COLUMNS[column][0] if column in COLUMNS else column


def label(column: str) -> str:
    """An axis label: readable name and unit, "95th percentile queueing delay, down (ms)"."""
    u = unit(column)
    return f"{name(column)} ({u})" if u else name(column)


# --------------------------------------------------------------------------- the metric catalogue
#
# Every key of a run summary (summary.json, `aqmlab run --json`) and every column of the `runs`
# catalog, with its definition, unit and window, declared once here: `aqmlab list metrics`
# prints them and docs/metrics.md is generated from them (`metrics_markdown`). A key pattern
# names the variable parts: HOP (a hop: "down" and "up" for the one-hop shorthand), DIR ("down"
# or "up"), REASON (a drop reason), [i] (an item of a list) and {a,b} (each of a, b).

WINDOW = "[W, T_end]"
"""The measured window: from the warm-up W (``--warmup``) to the run's end."""

_STATS = "{p50,p75,p95,p99,max,mean}"
_STATS_3 = "{p50,p95,p99,max,mean}"
_SUBQUEUES = "{l,c}"
_STAT_WORDS = "the median, 75th, 95th, 99th percentile (numpy's linear interpolation), maximum or mean"
_STAT_WORDS_3 = "the median, 95th, 99th percentile (numpy's linear interpolation), maximum or mean"

IN_FLIGHT_RULE = (
    "A probe whose reply did not arrive is *in flight at the end*, neither answered nor lost, when "
    "it was sent less than the path's maximum delay before the run's end; the path's maximum "
    "delay is the longest RTT any probe of the stream had in the run (0 without an answer). "
    "Every other unanswered probe is lost."
)

SUMMARY_METRICS: dict[str, tuple[str, str, str]] = {
    "schema_version": ("layout version of this summary; CHANGELOG.md lists each change", "", "-"),
    "name": ("the scenario's name", "", "-"),
    "seed": ("the run seed", "", "-"),
    "wall_s": ("wall-clock time the simulation took", "s", "run"),
    "events": ("events the simulator processed", "count", "run"),
    "warmup_s": ("the warm-up W skipped by every windowed metric", "s", "-"),
    "run_dir": ("the stored run's directory (printed by `aqmlab run --json`, not stored)", "", "-"),
    "links.HOP.qdisc": ("the hop's queue discipline", "", "-"),
    "links.HOP.utilization": (
        (
            "bytes on the wire within the window / bytes its rate could carry (the lowest of its "
            "line rate and a shaping qdisc's; a trace's opportunities; the packet on the wire at "
            "T_end, or at W, counts for its part inside the window: never above 1)"
        ),
        "fraction",
        WINDOW,
    ),
    f"links.HOP.queue_delay_ms.{_STATS}": (
        (f"{_STAT_WORDS} of the sojourn time (enqueue to start of transmission) of the packets "
        "transmitted by the hop, counted by enqueue time"), "ms", WINDOW),
    "links.HOP.drops": ("packets the hop's queue dropped (every reason but loss on the wire)", "packets", WINDOW),
    "links.HOP.drops_by_reason.REASON": (
        ("drops by reason: overlimit, early, forced, head, fat_flow, ack_filter (by the queue), loss "
        "(on the wire, whole run)"), "packets", WINDOW),
    "links.HOP.marks": ("packets the queue marked CE", "packets", WINDOW),
    "links.HOP.arrivals": ("packets that reached the queue", "packets", WINDOW),
    "links.HOP.transmitted": ("packets put on the link", "packets", WINDOW),
    "links.HOP.tx_bytes": ("bytes put on the link", "bytes", WINDOW),
    "links.HOP.mean_backlog_pkts": ("time-average backlog", "packets", WINDOW),
    "links.HOP.mean_backlog_bytes": ("time-average backlog", "bytes", WINDOW),
    "links.HOP.backlog_exact": ("whether the backlog is exact (packets table) or sampled", "", "-"),
    f"links.HOP.queues.{_SUBQUEUES}.queue_delay_ms.{_STATS}": (
        (f"a hop with sub-queues (dualpi2: l, c) only: {_STAT_WORDS} of the sojourn time of the "
        "packets the sub-queue transmitted (null without the packets table)"), "ms", WINDOW),
    f"links.HOP.queues.{_SUBQUEUES}.drops": ("packets the sub-queue dropped (null without the packets table)",
                                            "packets", WINDOW),
    f"links.HOP.queues.{_SUBQUEUES}.drops_by_reason.REASON": (
        "the sub-queue's drops by reason: overlimit, early, forced, head, fat_flow, ack_filter", "packets",
        WINDOW),
    f"links.HOP.queues.{_SUBQUEUES}.marks": ("packets the sub-queue sent marked CE", "packets", WINDOW),
    f"links.HOP.queues.{_SUBQUEUES}.arrivals": ("packets classified into the sub-queue", "packets", WINDOW),
    f"links.HOP.queues.{_SUBQUEUES}.transmitted": ("packets the sub-queue put on the link", "packets", WINDOW),
    f"links.HOP.queues.{_SUBQUEUES}.tx_bytes": ("bytes the sub-queue put on the link", "bytes", WINDOW),
    "bottleneck.DIR": (
        ("the bottleneck hop of the direction (lowest rate it can carry: a shaping qdisc's, HTB's or a "
        "trace's when below the line rate; first of equals)"), "", "-"),
    "goodput_mbps.{down,up,total}": (
        ("payload the direction's flows (probes left out) delivered to their applications / "
        "the window's length"), "Mbit/s", WINDOW),
    "flows[i].id": ("the flow's id", "", "-"),
    "flows[i].kind": ("the flow's kind (tcp, udp, web, ...)", "", "-"),
    "flows[i].direction": ("the direction the flow's data goes", "", "-"),
    "flows[i].label": ("the flow's label", "", "-"),
    "flows[i].cc": ("the congestion control of a TCP flow", "", "-"),
    "flows[i].goodput_mbps": (("payload delivered in order to the application / the flow's active "
                              "part of the window"), "Mbit/s", WINDOW),
    "flows[i].bytes_delivered": ("payload delivered to the application", "bytes", WINDOW),
    "flows[i].retransmits": ("TCP retransmissions", "packets", "run"),
    "flows[i].rto_count": ("TCP retransmission timeouts", "count", "run"),
    "flows[i].completion_s": ("first SYN to completion of a finite transfer (null if unfinished)", "s", "run"),
    "web.exchanges": ("web request/response exchanges requested", "count", WINDOW),
    "web.completed": ("of those, completed in the run", "count", WINDOW),
    f"web.response_ms.{_STATS_3}": ((f"{_STAT_WORDS_3} of the completed exchanges' response time "
                                    "(request SYN to the last response byte)"), "ms", WINDOW),
    "webpage.fetches": ("page fetches started", "count", WINDOW),
    "webpage.completed": ("of those, completed", "count", WINDOW),
    "webpage.timed_out": ("of those, timed out", "count", WINDOW),
    f"webpage.fetch_ms.{_STATS_3}": ((f"{_STAT_WORDS_3} of the completed fetches' time (start to "
                                     "the last object's last byte)"), "ms", WINDOW),
    "probes[i].id": ("the probe stream's flow id (ping or voip)", "", "-"),
    f"probes[i].rtt_ms.{_STATS_3}": (f"{_STAT_WORDS_3} of the answered probes' round-trip time",
                                     "ms", WINDOW),
    "probes[i].induced_ms.{p50,mean}": ("median or mean RTT minus the path's base (empty-queue) RTT",
                                        "ms", WINDOW),
    "probes[i].counts.{sent,answered,lost,in_flight}": (
        "probes sent, and of those answered, lost and in flight at the end (the in-flight rule)",
        "count", WINDOW),
    "probes[i].loss": (("lost / (sent - in flight), by the in-flight rule; null when no probe's fate "
                       "is known"), "fraction", WINDOW),
    f"probes[i].owd_ms.DIR.{_STATS_3}": (
        f"{_STAT_WORDS_3} of the answered probes' one-way delay in the direction", "ms", WINDOW),
    "probes[i].jitter_ms.DIR": (
        ("interarrival jitter (RFC 3550 6.4.1): over the probes in order of arrival, D = difference "
        "of consecutive one-way delays, J += (|D| - J) / 16 from 0; the value after the last "
        "arrival"), "ms", WINDOW),
    "probes[i].ipdv_ms.DIR": (("mean |IPDV| of consecutive probes that both arrived (RFC 3393; what "
                              "irtt and Flent call jitter)"), "ms", WINDOW),
}  # fmt: skip
"""summary key pattern -> (definition, unit, window)."""

PROBE_COLUMNS: dict[str, tuple[str, ...]] = {
    **{f"probe_owd_{d}_{q}_ms": ("owd_ms", d, q) for d in ("down", "up") for q in ("p50", "p95", "p99")},
    **{f"probe_jitter_{d}_ms": ("jitter_ms", d) for d in ("down", "up")},
}
"""Catalog columns of the first probe stream: column -> its path in the summary's ``probes[0]``."""

_PROBE_COLUMN_NAMES = {"owd_ms": "one-way delay {2}", "jitter_ms": "jitter (RFC 3550)"}
COLUMNS.update(
    {
        c: (f"{_PROBE_COLUMN_NAMES[p[0]].format(*p)} of the first probe stream, {p[1]}", "ms")
        for c, p in PROBE_COLUMNS.items()
    }
)


def value_at(d: object, path: tuple[str, ...]):
    """The value at ``path`` in nested dicts; None where a key is missing (older summaries)."""
    for part in path:
        d = d.get(part) if isinstance(d, dict) else None
    return d


def probe_columns(probe: dict) -> dict[str, float | None]:
    """The PROBE_COLUMNS values of one probe stream's summary block (None when absent)."""
    values = {column: value_at(probe, path) for column, path in PROBE_COLUMNS.items()}
    return {column: None if v is None else float(v) for column, v in values.items()}


PROBE_TABLE = [
    ("id", ("id",)), ("RTT p50 ms", ("rtt_ms", "p50")), ("p95", ("rtt_ms", "p95")), ("p99", ("rtt_ms", "p99")),
    *((f"OWD {d} p50", ("owd_ms", d, "p50")) for d in ("up", "down")),
    *((f"OWD {d} {q}", ("owd_ms", d, q)) for d in ("up", "down") for q in ("p95", "p99")),
    *((f"jitter {d} ms", ("jitter_ms", d)) for d in ("up", "down")),
    ("lost", ("counts", "lost")), ("in flight", ("counts", "in_flight")), ("loss", ("loss",)),
]  # fmt: skip
"""The VoIP / probe columns of the printed summaries (`run`, `show`, the report): header, path
in a ``probes[i]`` block."""


_META_COLUMNS = {
    "run_id": ("the run's id: its directory name, or a sweep run's content address", "", "-"),
    "name": ("the scenario's name", "", "-"),
    "scenario": ("the scenario's name as its resolved form gives it", "", "-"),
    "seed": ("the run seed", "", "-"),
    "created": ("when the run was stored (UTC)", "", "-"),
    "version": ("the aqmlab version that ran it", "", "-"),
    "path": ("where the run is stored", "", "-"),
    "params": ("a sweep's labels and overrides of the run (JSON)", "", "-"),
    "sweep": ("the name of the sweep the run belongs to (empty for a single run)", "", "-"),
    "dir": ("the loaded direction(s) of the run: down, up or both (columns.loaded_dirs)", "", "-"),
    "duration_s": ("simulated duration T_end", "s", "-"),
    "n_flows": ("flows, probe streams left out", "count", "-"),
    "retransmits": ("TCP retransmissions, summed over the flows", "packets", "run"),
}


def _catalog_source(column: str) -> str | None:
    """The summary key a catalog column is read from (concrete hop and statistic)."""
    if column in ("qdisc", "up_qdisc"):
        return f"links.{column[:-6] or 'down'}.qdisc"
    hop, base = ("up", column[3:]) if column.startswith("up_") else ("down", column)
    if base.startswith("queue_delay_") and base.endswith("_ms"):
        return f"links.{hop}.queue_delay_ms.{base[len('queue_delay_') : -3]}"
    if base in ("utilization", "drops", "marks", "mean_backlog_pkts", "mean_backlog_bytes"):
        return f"links.{hop}.{base}"
    if column.startswith("goodput_mbps_"):
        return f"goodput_mbps.{column[len('goodput_mbps_') :]}"
    if column in ("warmup_s", "wall_s", "events"):
        return column
    if column in PROBE_COLUMNS:
        return "probes[0]." + ".".join(PROBE_COLUMNS[column])
    probe = {"probe_rtt_p50_ms": "[0].rtt_ms.p50", "probe_rtt_p95_ms": "[0].rtt_ms.p95",
             "probe_rtt_mean_ms": "[i].rtt_ms.mean", "probe_induced_mean_ms": "[i].induced_ms.mean",
             "probe_loss": "[i].loss"}.get(column)  # fmt: skip
    return f"probes{probe}" if probe else None


def summary_metric(key: str) -> tuple[str, str, str] | None:
    """(definition, unit, window) of a concrete summary key ("links.down.queue_delay_ms.p95",
    "probes[0].owd_ms.up.p99"); None when no declared pattern matches it."""
    for pattern, spec in SUMMARY_METRICS.items():
        if _pattern_re(pattern).fullmatch(key):
            return spec
    return None


def _pattern_re(pattern: str):
    import re

    parts = re.split(r"(\{[^}]*\}|\[i\]|\bHOP\b|\bDIR\b|\bREASON\b)", pattern)
    subs = {"[i]": r"\[\d+\]", "HOP": r"[^.\[\]]+", "DIR": "(?:down|up)", "REASON": r"[a-z_]+"}
    return re.compile("".join(
        subs[p] if p in subs else "(?:" + "|".join(map(re.escape, p[1:-1].split(","))) + ")"
        if p.startswith("{") else re.escape(p) for p in parts))  # fmt: skip


def catalog_metrics(columns: list[str]) -> dict[str, tuple[str, str, str]]:
    """column -> (definition, unit, window) for the ``runs`` catalog's columns: a metadata
    column's own line, else its readable name and the summary key it is read from (the first
    probe stream's value, or the mean over the streams for ``probes[i]``), with that key's unit
    and window."""
    out = {}
    for c in columns:
        source = _catalog_source(c)
        if c in _META_COLUMNS:
            out[c] = _META_COLUMNS[c]
        elif source is not None:
            _definition, unit_, window = summary_metric(source.replace("[i]", "[0]")) or ("?", "", "")
            how = "mean over the probe streams of" if "[i]" in source else "from"
            out[c] = (f"{name(c)}: {how} `{source}`", unit_, window)
        else:
            out[c] = (name(c), unit(c), "?")
    return out


def metrics_markdown(catalog_columns: list[str]) -> str:
    """docs/metrics.md: every summary key and catalog column with definition, unit and window."""

    def table(rows: dict[str, tuple[str, str, str]]) -> str:
        lines = ["| key | definition | unit | window |", "|---|---|---|---|"]
        lines += [f"| `{k}` | {d} | {u or '-'} | {w} |" for k, (d, u, w) in rows.items()]
        return "\n".join(lines)

    return f"""# Metrics

Generated from `aqmlab.columns` (`aqmlab list metrics` prints the same); a test checks that this file
matches and that every key `aqmlab run --json` prints is declared.

Windows: `{WINDOW}` is the measured window, from the warm-up W (`--warmup`) to the run's end
T_end; `run` is the whole run (a total the warm-up cannot be applied to); `-` is not a
measurement. Key patterns: HOP is a hop ("down" and "up" for the one-hop topology), DIR is
"down" or "up", REASON a drop reason, `[i]` an item of a list, `{{a,b}}` each of a and b.

Probe loss and the in-flight rule: {IN_FLIGHT_RULE}

## Run summary (`summary.json`, `aqmlab run --json`, `aqmlab show --json`)

{table(SUMMARY_METRICS)}

## The `runs` catalog (`aqmlab runs`, `aqmlab query`)

{table(catalog_metrics(catalog_columns))}
"""


def quantity(column: str) -> str:
    """What the column measures, without the direction of a link metric: "95th percentile
    queueing delay" for ``up_queue_delay_p95_ms``; ``name`` for any other column."""
    base = column.removeprefix("up_")
    return _LINK[base][0] if base in _LINK else name(column)


def label_dirs(column: str, dirs: Iterable[str]) -> str:
    """The axis label of a link metric drawn for several directions: "95th percentile queueing
    delay, down and up (ms)"; ``label`` for any other column."""
    if not is_link(column):
        return label(column)
    u = unit(column)
    text = f"{quantity(column)}, {' and '.join(dirs)}"
    return f"{text} ({u})" if u else text


def in_direction(column: str, direction: str) -> str:
    """The column of a link metric for ``direction``: ``queue_delay_p95_ms`` is the down link's,
    ``up_queue_delay_p95_ms`` its up twin; a column that is not a link metric is returned as is."""
    base = column.removeprefix("up_")
    if base not in _LINK:
        return column
    return base if direction == "down" else f"up_{base}"


def is_link(column: str) -> bool:
    """Whether ``column`` is a link metric (one column per direction)."""
    return column.removeprefix("up_") in _LINK


LOAD_SHARE = 0.5
"""A direction is loaded when its bottleneck's utilisation is at least this share of the busiest
direction's (``loaded_dirs``)."""

IDLE_UTILISATION = 0.05
"""Below this utilisation on every direction a run is idle and every direction is shown."""


def loaded_dirs(row: Mapping) -> list[str]:
    """The direction(s) where a run's load is, from its bottleneck utilisations (a ``runs`` row or
    ``store.flatten_summary``: ``utilization`` down, ``up_utilization`` up). The rule: a direction
    is loaded when its utilisation is at least ``LOAD_SHARE`` of the busiest direction's; when no
    direction reaches ``IDLE_UTILISATION`` (an idle path) or none reports one, every direction.
    Four uploads on a 20/2 Mbit/s path (up 1.0, down 0.007: the ACKs) give ["up"]; rrul's four
    flows each way give both."""
    util = {}
    for d in DIRECTIONS:
        u = row.get(in_direction("utilization", d))
        if u is not None and not math.isnan(u):  # NaN: a missing value in a pandas row
            util[d] = float(u)
    top = max(util.values(), default=0.0)
    if top < IDLE_UTILISATION:
        return list(DIRECTIONS)
    return [d for d in DIRECTIONS if util.get(d, 0.0) >= LOAD_SHARE * top]


def dir_name(dirs: Iterable[str]) -> str:
    """'down', 'up' or 'both' for a list of directions."""
    dirs = [d for d in DIRECTIONS if d in set(dirs)]
    return dirs[0] if len(dirs) == 1 else "both"


def shown_dirs(choice: str | None, rows: Iterable[Mapping]) -> list[str]:
    """The directions a table or figure over ``rows`` shows: ``choice`` ('up', 'down', 'both'),
    or, when None, every direction loaded in at least one of the rows (``loaded_dirs``)."""
    if choice is not None:
        if choice not in DIR_CHOICES:
            raise ValueError(f"--dir: {choice!r} is not allowed; allowed: {', '.join(DIR_CHOICES)}")
        return list(DIRECTIONS) if choice == "both" else [choice]
    found = {d for r in rows for d in loaded_dirs(r)}
    return [d for d in DIRECTIONS if d in found] or list(DIRECTIONS)
