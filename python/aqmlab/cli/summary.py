"""What `aqmlab run` prints of its runs: a run's summary (its links, flows and probes) and, with
--qdisc, the disciplines side by side."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from aqmlab import columns
from aqmlab.cli import results
from aqmlab.cli.console import FitTable, lazy, out
from aqmlab.metrics import catalogue

if TYPE_CHECKING:
    from aqmlab.api import Result

store = lazy("aqmlab.store")


def fmt(v, nd: int = 2) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


FLOW_ROWS_SHOWN = 30
"""Flows listed in the printed summary; the rest are counted (the JSON and the store hold all)."""


def print_summary(res: Result, direction: str | None = None) -> None:
    s = res.summary
    w = s.get("warmup_s") or 0.0
    window = f", counted from {w:g} s" if w else ""
    dirs = results.shown_dirs(direction, [store.flatten_summary(s, res.meta)])
    t = FitTable(title=f"{res.meta['name']} (seed {res.meta['seed']}) — links{window}")
    for c in ["dir", *(v.header for v in catalogue.LINK_VIEW)]:
        t.add_column(c, justify="right" if c not in ("dir", "qdisc") else "left")
    for d, link in results.shown_links(s, res.tables, dirs):
        t.add_row(d, *(fmt(v.value(link), 1 if v.scale != 1.0 else 2) for v in catalogue.LINK_VIEW))
    out.print(t)
    if note := results.hidden_note(s, res.tables, dirs):
        out.print(note)
    if s["flows"]:
        t = FitTable(title="flows")
        for v in catalogue.FLOW_VIEW:
            t.add_column(v.header)
        shown = s["flows"]
        for f in shown[:FLOW_ROWS_SHOWN]:
            t.add_row(*(fmt(v.value(f)) for v in catalogue.FLOW_VIEW))
        out.print(t)
        if len(shown) > FLOW_ROWS_SHOWN:
            out.print(f"... and {len(shown) - FLOW_ROWS_SHOWN} more flows (all of them: --json, or "
                      "`aqmlab query` on the stored run's flows table)")  # fmt: skip
        g = s.get("goodput_mbps") or {}
        parts = [f"{d} {g[d]:.3f}" for d in ("down", "up") if g.get(d) is not None]
        if parts:
            out.print(f"goodput (payload delivered in the window / its length), Mb/s: {', '.join(parts)}")
    if s["probes"]:
        out.print(results.probe_table(s["probes"], fmt))
    em = res.meta.get("emulator")
    if em:
        per_pkt = em["cpu_s"] / em["packets"] * 1e6 if em["packets"] else 0.0
        out.print(
            f"{em['packets']:,} packets forwarded in {em['wall_s']:.3f} s wall, "
            f"{em['cpu_s']:.3f} s CPU ({per_pkt:.1f} us per packet)"
        )
    else:
        seed_free = " (drew from no random stream: every --seed gives these results)"
        out.print(f"{res.meta['events']:,} events in {res.meta['wall_s']:.3f} s wall"
                  f"{seed_free if res.meta.get('random_streams') == 0 else ''}")  # fmt: skip


def compare_table(runs: list[tuple[str, Result]], direction: str | None = None) -> FitTable:
    """One row per discipline: goodput and the bottleneck's queueing delay, drops and marks in the
    shown direction(s) (``--dir``; by default where the load is), and, when the runs have a probe
    stream, the first one's RTT, jitter and loss."""
    rows = [(name, r.summary, store.flatten_summary(r.summary, r.meta)) for name, r in runs]
    dirs = results.shown_dirs(direction, [row for _, _, row in rows])
    t = FitTable(
        title=f"{runs[0][1].meta['name']}: one path, several queue disciplines ({' and '.join(dirs)})"
    )
    link = [("queue_delay_p50_ms", "qdelay {d} p50 ms", 1), ("queue_delay_p95_ms", "p95", 1),
            ("drops", "drops {d}", 2), ("marks", "marks {d}", 2)]  # fmt: skip
    probed = any(s["probes"] for _, s, _ in rows)
    probe_views = [
        dataclasses.replace(v, header=v.header.format(d=d), key=v.key.format(d=d))
        for v in catalogue.COMPARE_PROBE_VIEW
        for d in (dirs if "{d}" in v.key else [""])
    ]
    cols = ["qdisc", *(f"goodput {d} Mb/s" for d in dirs), *(v.header for v in probe_views if probed)]
    cols += [head.format(d=d) for d in dirs for _, head, _ in link]
    for c in cols:
        t.add_column(c, justify="left" if c == "qdisc" else "right")
    for name, s, row in rows:
        p0 = s["probes"][0] if s["probes"] else {}
        t.add_row(
            name,
            *(fmt(row[f"goodput_mbps_{d}"]) for d in dirs),
            *(fmt(v.value(p0), v.digits) for v in probe_views if probed),
            *(fmt(row[columns.in_direction(c, d)], nd) for d in dirs for c, _, nd in link),
        )
    return t
