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

from aqmlab.metrics.catalogue import (
    CATALOG_COLUMNS,
    DIRECTIONS,
    IN_FLIGHT_RULE,
    LINK_COLUMNS,
    SUMMARY_METRICS,
    WINDOW,
    catalog_source,
)

DIR_CHOICES = ("up", "down", "both")
"""The values of ``--dir``: one direction, or both."""

_LINK = {
    **{name: (c.label, c.unit) for name, c in LINK_COLUMNS.items()},
    "enorm": ("mean backlog / buffer size", "fraction"),
}

COLUMNS: dict[str, tuple[str, str]] = {
    "seed": ("seed", ""),
    "dir": ("loaded direction(s)", ""),
    "sweep": ("sweep", ""),
    "duration_s": ("simulated duration", "s"),
    **{c: (col.label, col.unit) for c, col in CATALOG_COLUMNS.items() if c.removeprefix("up_") not in _LINK},
    **{k: (f"{name}, down", unit) for k, (name, unit) in _LINK.items()},
    **{f"up_{k}": (f"{name}, up", unit) for k, (name, unit) in _LINK.items()},
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
# The summary keys and catalog columns are declared in aqmlab.metrics.catalogue; `aqmlab list
# metrics` prints them and docs/metrics.md is generated from them here (`metrics_markdown`).

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
        source = catalog_source(c)
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

Generated from `aqmlab.metrics.catalogue` (`aqmlab list metrics` prints the same); a test checks that this file
matches, that every key `aqmlab run --json` prints is declared and that every declared key is in a summary.

Each key is declared once there, with the rule that computes its value from the run's tables;
`aqmlab.metrics.summarize` writes every key by its rule, each block's keys in the order of this
table, so that a metric is added by its one declaration. The `runs` catalog's columns and the
printed tables are read from the summary by the same declarations.

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
