"""One self-contained HTML report over stored runs.

The file embeds every figure as a base64 PNG ``data:`` URI and carries its own CSS; it loads
nothing from the network (no external CSS, JS, fonts or CDN). Content: per run, the resolved
scenario (pretty JSON) and a summary table; then the standard figures for what was recorded:
queueing-delay CDF and time series (needs ``packets``), backlog (``queue``), probe RTT CDF and
time series (``probes``), goodput time series (``flow_series``), the congestion controllers' state
(``flow_series``, when it holds any: ``plots.has_cc_state``). A figure a run cannot provide
is listed as skipped with the reason, never silently dropped. The link figures and tables show
the direction(s) where the runs' load is, or those ``direction`` names (``plots.shown_dirs``).
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from pathlib import Path

from aqmlab import columns, files, plots, store
from aqmlab import metrics as M
from aqmlab.metrics import catalogue

CSS = """
body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0;font-size:.85em}
td,th{border:1px solid #bbb;padding:2px 8px;text-align:right}th{background:#eee}
td.l,th.l{text-align:left}pre{background:#f6f6f6;padding:.6em;font-size:.8em;overflow:auto;max-height:30em}
figure{margin:1em 0}img{max-width:100%;border:1px solid #ddd}.skip{color:#a60}
"""

STANDARD = [
    ("delay_cdf", "Queueing delay CDF", "packets", True),
    ("delay_ts", "Per-packet queueing delay", "packets", True),
    ("backlog_ts", "Queue backlog", "queue", True),
    ("rtt_cdf", "Probe RTT CDF", "probes", False),
    ("rtt_ts", "Probe RTT over time", "probes", False),
    ("goodput_ts", "Per-flow goodput", "flow_series", False),
    ("cc_ts", "Congestion-controller state", "flow_series", False),
]
"""(kind, caption, the table it needs, whether it shows links: its caption names their direction)"""

RECORDED = {"cc_ts": (plots.has_cc_state, "its flow_series holds no controller state (cc_* columns)")}
"""The figures that need more than their table: kind -> (whether a run has it, why not)."""


def _fmt(v) -> str:
    return html.escape(catalogue.shown(v))


def side_by_side(runs: Sequence, dirs: Sequence[str]) -> str:
    """An HTML table of several runs, one row each (``plots.run_labels``), with the catalog
    columns of ``catalogue.SIDE_BY_SIDE`` in the directions ``dirs``."""
    names = []
    for c in catalogue.SIDE_BY_SIDE:
        if "{d}" in c:
            names += [c.format(d=d) for d in dirs]
        elif columns.is_link(c):
            names += [columns.in_direction(c, d) for d in dirs]
        else:
            names.append(c)
    rows = [
        (label, store.flatten_summary(r.summary or {}, r.meta))
        for label, r in zip(plots.run_labels(runs, dirs), runs)
    ]
    head = "<th class=l>run</th>" + "".join(f"<th>{html.escape(columns.label(n))}</th>" for n in names)
    body = "".join(f"<tr><td class=l>{html.escape(label)}</td>" + "".join(f"<td>{_fmt(row.get(n))}</td>" for n in names)
                   + "</tr>" for label, row in rows)  # fmt: skip
    return f"<h2>Runs side by side</h2><table><tr>{head}</tr>{body}</table>"


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plots.plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def summary_tables(run, dirs: Sequence[str] | None = None) -> str:
    """HTML tables of a run's summary: links (those of the directions ``dirs``; all when None),
    flows, probes."""
    s = run.summary or {}
    out = []
    ld = store.link_dirs(run.tables)
    links = {n: lk for n, lk in (s.get("links") or {}).items() if dirs is None or ld.get(n, n) in dirs}
    if links:
        head = "".join(
            f"<th>{html.escape(h)}</th>" for h in ["dir", *(v.header for v in catalogue.LINK_DETAIL_VIEW)]
        )
        rows = []
        for d, lk in links.items():
            cells = [f"<td class=l>{_fmt(d)}</td>"] + [
                f"<td>{_fmt(v.value(lk))}</td>" for v in catalogue.LINK_DETAIL_VIEW
            ]
            rows.append("<tr>" + "".join(cells) + "</tr>")
        out.append(f"<h3>Bottleneck links</h3><table><tr>{head}</tr>{''.join(rows)}</table>")
    flows = s.get("flows") or []
    if flows:
        head = "".join(f"<th>{html.escape(v.header)}</th>" for v in catalogue.FLOW_VIEW)
        rows = "".join(
            "<tr>" + "".join(f"<td>{_fmt(v.value(f))}</td>" for v in catalogue.FLOW_VIEW) + "</tr>"
            for f in flows
        )
        out.append(f"<h3>Flows</h3><table><tr>{head}</tr>{rows}</table>")
    probes = s.get("probes") or []
    if probes:
        head = "".join(f"<th>{html.escape(v.header)}</th>" for v in catalogue.PROBE_VIEW)
        rows = ""
        for p in probes:
            vals = [v.value(p) for v in catalogue.PROBE_VIEW]
            rows += "<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in vals) + "</tr>"
        out.append(f"<h3>Latency probes (VoIP, ping)</h3><table><tr>{head}</tr>{rows}</table>"
                   "<p>One-way delay (OWD) and RFC 3550 jitter per direction; loss leaves out the "
                   "probes still in flight at the end (docs/metrics.md).</p>")  # fmt: skip
    return "\n".join(out)


def write_report(
    runs: Sequence, out_path: str | Path, title: str | None = None, direction: str | None = None
) -> Path:
    """Write ONE self-contained HTML file for ``runs`` (store.RunData) and return its path;
    ``direction`` ('up', 'down', 'both'; default: where the load is) for the link figures and
    tables."""
    runs = list(runs)
    if not runs:
        raise ValueError("no runs to report on")
    dirs = plots.shown_dirs(runs, direction)
    out_path = Path(out_path)
    title = title or f"aqmlab report — {', '.join(r.run_id for r in runs[:5])}{' …' if len(runs) > 5 else ''}"
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    if len(runs) > 1:
        parts.append(side_by_side(runs, dirs))
    parts.append("<h2>Figures</h2>")
    for kind, caption, table, links in STANDARD:
        caption += f" ({' and '.join(dirs)})" if links else ""
        missing = [r.run_id for r in runs if r.tables.get(table) is None]
        if len(missing) == len(runs):
            why = plots.missing_reason(runs[0], table)
            parts.append(
                f"<p class=skip>{html.escape(caption)}: skipped, no run has '{table}' ({html.escape(why)}).</p>"
            )
            continue
        has, why_not = RECORDED.get(kind, (lambda r: True, ""))
        have = [r for r in runs if r.tables.get(table) is not None and has(r)]
        lacking = [r.run_id for r in runs if r.tables.get(table) is not None and not has(r)]
        if not have:
            parts.append(
                f"<p class=skip>{html.escape(caption)}: skipped, no run has it ({html.escape(why_not)}).</p>"
            )
            continue
        try:
            fig = plots.figure(kind, have, direction=columns.dir_name(dirs))
        except (M.MissingTableError, ValueError, KeyError) as e:
            parts.append(f"<p class=skip>{html.escape(caption)}: skipped ({html.escape(str(e))}).</p>")
            continue
        note = f" (runs without '{table}': {', '.join(missing)})" if missing else ""
        note += f" (runs left out, {why_not}: {', '.join(lacking)})" if lacking else ""
        parts.append(
            f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,{_png(fig)}'>"
            f"<figcaption>{html.escape(caption + note)}</figcaption></figure>"
        )
    for run in runs:
        parts.append(f"<h2>Run {html.escape(run.run_id)} — {html.escape(plots.qdisc_label(run))}</h2>")
        m = run.meta
        duration = m.get("duration_ns")
        facts = {"name": m.get("name"), "seed": m.get("seed"), "version": m.get("version"),
                 "duration": None if duration is None else f"{duration / 1e9:g} s",
                 "events": m.get("events"), "wall time": None if m.get("wall_s") is None else f"{m['wall_s']:.3g} s"}  # fmt: skip
        parts.append("<p>" + ", ".join(f"{k}: {_fmt(v)}" for k, v in facts.items()) + "</p>")
        parts.append(summary_tables(run, dirs))
        scen = run.scenario or m.get("scenario") or {}
        parts.append(
            "<details open><summary>Resolved scenario</summary><pre>"
            + html.escape(json.dumps(scen, indent=2, sort_keys=True))
            + "</pre></details>"
        )
    parts.append("</body></html>\n")
    with files.whole(out_path) as tmp:
        tmp.write_text("\n".join(parts), encoding="utf-8")
    return out_path
