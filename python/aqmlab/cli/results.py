"""Post-run commands of the ``aqmlab`` CLI: runs, show, compare, query, plot, report, export flent
and export pcap.

``register(app)`` adds them to the main Typer app. RUN is a run id (a directory under
``--root``, a unique prefix is enough) or a path to a run directory; ``plot`` and ``report`` also
take a sweep's name for all its runs, narrowed by ``--where KEY=VALUE``. Tables and figures show
the direction(s) where the load is (``columns.loaded_dirs``), or those ``--dir`` names. Bad input
(unknown run, unknown plot kind, data a figure needs but the run did not record, unknown Flent
test, bad SQL) prints ONE line naming the bad value and what exists, and exits with code 2 (no
traceback).
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from aqmlab import columns
from aqmlab.cli.console import FitTable, err, fail, lazy, out
from aqmlab.layout import DEFAULT_ROOT
from aqmlab.metrics import catalogue

store = lazy("aqmlab.store")

# The results root: --out where a command writes into it, --root where it reads; each takes the
# other name too
OutOpt = Annotated[Path, typer.Option("--out", "--root", help="results root (--root: the same)")]
RootOpt = Annotated[Path, typer.Option("--root", "--out", help="results root directory (--out: the same)")]
DirOpt = Annotated[
    str | None,
    typer.Option(
        "--dir",
        help="the direction(s) shown: up, down or both (default: where the load is, the direction(s) "
        "whose bottleneck carried at least half the busiest one's utilisation)",
    ),
]
WhereOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--where",
        help="KEY=VALUE: only the runs whose grid key (as the sweep file writes it, e.g. "
        "topology.up.rate=2Mbps) or runs column has that value (repeatable)",
    ),
]


def check_dir(choice: str | None) -> None:
    """``--dir`` must be one of columns.DIR_CHOICES (or absent)."""
    if choice is not None and choice not in columns.DIR_CHOICES:
        fail(f"--dir: {choice!r} is not allowed; allowed: {', '.join(columns.DIR_CHOICES)}")


def shown_dirs(choice: str | None, rows) -> list[str]:
    """``--dir`` over the ``runs`` rows (dicts) a table shows (``columns.shown_dirs``)."""
    check_dir(choice)
    return columns.shown_dirs(choice, rows)


def shown_links(summary: dict, tables, dirs: list[str]) -> list[tuple[str, dict]]:
    """The summary's links (hops) in the directions ``dirs``, in order."""
    ld = store.link_dirs(tables)
    return [(name, lk) for name, lk in (summary.get("links") or {}).items() if ld.get(name, name) in dirs]


def hidden_note(summary: dict, tables, dirs: list[str]) -> str | None:
    """A line naming the links left out of a table and their utilisation, or None."""
    shown = {name for name, _ in shown_links(summary, tables, dirs)}
    hidden = [(n, lk.get("utilization")) for n, lk in (summary.get("links") or {}).items() if n not in shown]
    if not hidden:
        return None
    parts = ", ".join(f"{n} (utilisation {'-' if u is None else f'{100 * u:.1f} %'})" for n, u in hidden)
    return f"not shown: {parts}; --dir both shows every direction"


def check_out(out_dir: Path) -> None:
    """--out, before anything runs: a directory, or a path one can be created at, on a file
    system that can be written to. One line naming the path otherwise, exit 2."""
    if out_dir.exists() and not out_dir.is_dir():
        fail(f"--out: {out_dir} is not a directory; allowed: a directory (created if missing)")
    parent = next(p for p in (out_dir.absolute(), *out_dir.absolute().parents) if p.exists())
    if not parent.is_dir():
        fail(f"--out: {out_dir} cannot be created: {parent} is not a directory; allowed: a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        why = "read-only file system" if os.statvfs(parent).f_flag & os.ST_RDONLY else "permission denied"
        fail(f"--out: {out_dir} cannot be written ({parent}: {why}); allowed: a writable directory")


def check_root(root: Path) -> None:
    """--root: an existing directory; one line naming it otherwise, exit 2."""
    if not root.is_dir():
        fail(
            f"--root: {root} is not a directory" if root.exists() else f"results root '{root}' does not exist"
        )


def _load(run: str, root: Path) -> store.RunData:
    try:
        return store.load_run(run, root)
    except (store.RunNotFound, store.CorruptRun) as e:
        fail(str(e))
        raise  # unreachable


def _report_skipped(root: Path) -> None:
    for _, reason in store.skipped(root):
        err.print(f"skipped {reason}", markup=False)


def _df_table(df, title: str | None = None) -> FitTable:
    t = FitTable(title=title)
    for c in df.columns:
        t.add_column(str(c), overflow="fold")
    for row in df.itertuples(index=False):
        t.add_row(*("" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v) for v in row))
    return t


def _db_error(e: Exception) -> None:
    fail(str(e).splitlines()[0] if str(e) else type(e).__name__)


def runs_cmd(
    root: RootOpt = DEFAULT_ROOT,
    scenario: Annotated[str | None, typer.Option(help="only runs of this scenario name")] = None,
    sweep: Annotated[
        str | None, typer.Option(help="only the runs of this sweep (its name), with its grid values")
    ] = None,
    where: Annotated[
        str | None,
        typer.Option(
            help="comparisons of runs columns (or grid keys) with values, joined by and/or, "
            "e.g. \"seed > 3 and qdisc = 'codel'\"; OP one of = != < <= > >="
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="show only the newest N runs")] = None,
    direction: DirOpt = None,
) -> None:
    """List the complete runs in the catalog (brought up to date with the files)."""
    check_root(root)
    _report_skipped(root)
    import duckdb

    try:
        df = store.list_runs(root, scenario=scenario, where=where, sweep=sweep)
    except (duckdb.Error, ValueError) as e:
        _db_error(e)
    dirs = shown_dirs(direction, df.to_dict("records"))
    link = [columns.in_direction(c, d) for d in dirs for c in ("qdisc", "queue_delay_p95_ms", "utilization")]
    grid = [c for c in df.columns if c not in store.RUN_COLUMNS and df[c].notna().any()] if sweep else []
    sweeps = ["sweep"] if "sweep" in df.columns and df["sweep"].notna().any() else []
    cols = [c for c in ("run_id", "scenario", *sweeps, *grid, "seed", "dir", *link, "goodput_mbps_total",
                        "probe_rtt_p50_ms", "created") if c in df.columns]  # fmt: skip
    shown = df[cols] if limit is None else df[cols].head(limit)
    title = f"{len(df)} runs in {root}" + (f" (newest {len(shown)} shown)" if len(shown) < len(df) else "")
    out.print(_df_table(shown, title=title))


def show_cmd(
    run: Annotated[str, typer.Argument(help="run id, prefix or path")],
    root: RootOpt = DEFAULT_ROOT,
    as_json: Annotated[
        bool, typer.Option("--json", help="print the stored summary as one JSON object (as run --json)")
    ] = False,
    direction: DirOpt = None,
) -> None:
    """Print a run's summary."""
    r = _load(run, root)
    s = r.summary
    if as_json:
        sys.stdout.write(json.dumps({**s, "run_dir": str(r.path)}, indent=1) + "\n")
        return
    dirs = shown_dirs(direction, [store.flatten_summary(s, r.meta)])
    out.print(f"[bold]{r.run_id}[/bold]  name={s.get('name')} seed={s.get('seed')} events={s.get('events')} "
              f"wall_s={s.get('wall_s')}")  # fmt: skip
    t = FitTable(title="bottleneck links")
    for k in ["dir", *(v.header for v in catalogue.LINK_DETAIL_VIEW)]:
        t.add_column(k)
    fmt = lambda v: "–" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)
    for d, lk in shown_links(s, r.tables, dirs):
        t.add_row(d, *(fmt(v.value(lk)) for v in catalogue.LINK_DETAIL_VIEW))
    out.print(t)
    if note := hidden_note(s, r.tables, dirs):
        out.print(note)
    if s.get("flows"):
        t = FitTable(title="flows")
        for v in catalogue.FLOW_VIEW:
            t.add_column(v.header)
        for f in s["flows"]:
            t.add_row(*(fmt(v.value(f)) for v in catalogue.FLOW_VIEW))
        out.print(t)
    if s.get("probes"):
        out.print(probe_table(s["probes"], fmt))


def compare_cmd(
    run_a: Annotated[str, typer.Argument(help="the first run: id, prefix or path")],
    run_b: Annotated[str, typer.Argument(help="the second run")],
    root: RootOpt = DEFAULT_ROOT,
    as_json: Annotated[
        bool, typer.Option("--json", help="print the two lists below as one JSON object")
    ] = False,
) -> None:
    """Two runs side by side: the scenario keys that differ, then every summary value of both
    with the difference (B - A, and relative to A)."""
    from aqmlab.metrics import compare

    a, b = _load(run_a, root), _load(run_b, root)
    changed = compare.scenario_changes(a.meta["scenario"], b.meta["scenario"])
    rows = compare.summary_changes(a.summary, b.summary)
    if as_json:
        doc = {"a": a.run_id, "b": b.run_id,
               "scenario": [{"key": k, "a": x, "b": y} for k, x, y in changed],
               "summary": [{"column": c.column, "label": c.label, "unit": c.unit, "a": c.a, "b": c.b,
                            "delta": c.delta, "relative": c.relative} for c in rows]}  # fmt: skip
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
        return
    out.print(f"A = {a.run_id}\nB = {b.run_id}", markup=False)
    if a.meta.get("seed") != b.meta.get("seed"):
        changed.insert(0, ("seed", a.meta.get("seed"), b.meta.get("seed")))
    t = FitTable(title="scenario keys that differ" if changed else "the scenarios are the same")
    for c in ("key", "A", "B"):
        t.add_column(c)
    for k, x, y in changed:
        t.add_row(k, *("–" if v is None else json.dumps(v) if not isinstance(v, str) else v for v in (x, y)))
    out.print(t)
    t = FitTable(title="summary (catalog columns: docs/metrics.md)")
    for c, j in (("value", "left"), ("unit", "left"), ("A", "right"), ("B", "right"), ("B - A", "right"),
                 ("change", "right")):  # fmt: skip
        t.add_column(c, justify=j)
    for c in rows:
        rel = "–" if c.relative is None else f"{100 * c.relative:+.1f} %"
        delta = "–" if c.delta is None else "0" if c.delta == 0 else catalogue.shown(c.delta, "+")
        t.add_row(c.column, c.unit, catalogue.shown(c.a), catalogue.shown(c.b), delta, rel)
    out.print(t)


def probe_table(probes: list[dict], fmt) -> FitTable:
    """Per probe stream: RTT, one-way delay and RFC 3550 jitter per direction, lost and in-flight
    probes and the loss (docs/metrics.md). A key a summary stored before it existed prints as
    missing."""
    t = FitTable(title="latency probes (VoIP, ping)")
    for v in catalogue.PROBE_VIEW:
        t.add_column(v.header, justify="right")
    for p in probes:
        t.add_row(*(fmt(v.value(p)) for v in catalogue.PROBE_VIEW))
    return t


QUERY_FORMATS = ("table", "csv", "json")


def query_cmd(sql: Annotated[str, typer.Argument(help="SQL over runs, packets, queue, flows...")],
              root: RootOpt = DEFAULT_ROOT,
              fmt: Annotated[str, typer.Option("--format", help="table, csv or json (one array of row objects)")]
              = "table",
              allow_files: Annotated[bool, typer.Option("--allow-files", help="let the SQL read and write files "
                                     "anywhere, load extensions and run any statement (COPY ... TO, ATTACH)")]
              = False) -> None:  # fmt: skip
    """Run SQL over the catalog and the Parquet views; print the result. Only reading statements
    over the results root run, unless --allow-files."""
    import duckdb

    if fmt not in QUERY_FORMATS:
        fail(f"--format: {fmt!r} is not allowed; allowed: {', '.join(QUERY_FORMATS)}")
    check_root(root)
    _report_skipped(root)
    try:
        df = store.query(root, sql, allow_files=allow_files)
    except duckdb.PermissionException as e:
        fail(f"{str(e).splitlines()[0]}: a query reads the results root only (--allow-files lifts this)")
    except (duckdb.Error, store.QueryRefused) as e:
        _db_error(e)
    if fmt == "csv":
        sys.stdout.write(df.to_csv(index=False))
    elif fmt == "json":
        sys.stdout.write(df.to_json(orient="records", date_format="iso", double_precision=15) + "\n")
    else:
        out.print(_df_table(df))


def _check_warmup(warmup: float, run) -> None:
    """--warmup: a finite number of seconds in [0, the run's duration)."""
    duration_s = int(run.meta["duration_ns"]) / 1e9
    if not math.isfinite(warmup) or not 0 <= warmup < duration_s:
        fail(f"--warmup: {warmup:g} is not allowed; allowed: a number of seconds from 0 up to but excluding "
             f"the duration of run '{run.run_id}' ({duration_s:g} s)")  # fmt: skip


def _runs_of(ref: str, root: Path) -> tuple[Path, list[Path]]:
    """(the results root, the run paths) ``ref`` names: a run directory, a results root (all its
    runs), a sweep's name (all its runs) or a run id or unique prefix under ``root``."""
    p = Path(ref)
    if p.is_dir() and (p / "meta.json").exists():
        return p.parent, [p]
    if p.is_dir():
        good, bad = store.scan_runs(p)
        for _, reason in bad:
            err.print(f"skipped {reason}", markup=False)
        return p, good + store.sweep_runs(p)
    members = store.sweep_run_paths(root, ref) if root.is_dir() else []
    if members:
        return root, members
    try:
        return root, [store.resolve_run(ref, root)]
    except store.RunNotFound as e:
        fail(str(e))
        raise  # unreachable


def _in_grid_order(runs: list) -> list:
    """The runs of sweeps in the order their sweep declares them: grid point, then replication;
    other runs as given (first)."""
    key = lambda r: (str(r.sweep_dir), r.row.get("point", 0), r.rep or 0)
    alone = [r for r in runs if not isinstance(r, store.SweepRunData)]
    return alone + sorted((r for r in runs if isinstance(r, store.SweepRunData)), key=key)


def _select(refs: list[str], root: Path, where: list[str] | None) -> list:
    """The runs ``refs`` name (``_runs_of``), those matching every ``--where KEY=VALUE``."""
    if root.exists() and not root.is_dir():
        fail(f"--root: {root} is not a directory")
    loaded = []
    for ref in refs:
        where_root, paths = _runs_of(ref, root)
        if where:
            try:
                keep = set(store.filter_run_ids(where_root, [q.name for q in paths], where))
            except ValueError as e:
                fail(str(e))
            paths = [q for q in paths if q.name in keep]
        loaded += _in_grid_order([_load(str(q), where_root) for q in paths])
    if not loaded:
        fail(f"no complete runs in {', '.join(refs)}" + (f" with {' and '.join(where)}" if where else ""))
    return loaded


def plot_cmd(
    runs: Annotated[list[str], typer.Argument(help="run ids, prefixes, paths or sweep names")],
    kind: Annotated[str, typer.Option("--kind", "-k", help="plot kind")],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="file (.png/.svg/.pdf)")] = None,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            help="box/bar/ellipse: group runs by these keys (comma-separated: qdisc, seed, a grid key "
            "such as rate or topology.down.rate); default: the qdisc and every grid value that differs",
        ),
    ] = None,
    warmup: Annotated[
        float | None,
        typer.Option(
            "--warmup",
            help="delay_ts/delay_cdf/rtt_cdf: seconds skipped; default: each run's own warm-up (as its table)",
        ),
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            help="box/bar: the per-run metric drawn (a runs column such as queue_delay_p99_ms, "
            "goodput_mbps_total, probe_rtt_p95_ms; or enorm, tcp_share); ellipse: X,Y",
        ),
    ] = None,
    root: RootOpt = DEFAULT_ROOT,
    where: WhereOpt = None,
    direction: DirOpt = None,
) -> None:
    """Draw one figure over one or more runs (a sweep's name: all its runs)."""
    from aqmlab import metrics, plots

    if kind not in plots.KINDS:
        fail(f"unknown plot kind '{kind}'; kinds: {', '.join(plots.KINDS)}")
    check_dir(direction)
    loaded = _select(runs, root, where)
    output = output or Path(f"{kind}.png")
    try:
        if by is not None and kind not in plots.GROUPED:
            fail(f"--by: not allowed with --kind {kind}; allowed with: {', '.join(plots.GROUPED)}")
        opts: dict = {"direction": direction} if by is None else {"by": by, "direction": direction}
        if metric is not None:
            names = plots.METRIC_OPTIONS.get(kind)
            if names is None:
                fail(
                    f"--metric: not allowed with --kind {kind}; allowed with: {', '.join(plots.METRIC_OPTIONS)}"
                )
            values = metric.split(",")
            if len(values) != len(names):
                fail(f"--metric: {metric!r} is not allowed with --kind {kind}; allowed: "
                     f"{' and '.join(['one metric'] if len(names) == 1 else ['X,Y: two metrics'])}")  # fmt: skip
            for r in loaded[:1]:
                for v in values:
                    plots.metric_value(r, v)  # an unknown name: KeyError naming the known ones
            opts.update(zip(names, values))
        if warmup is not None:
            if kind not in plots.WINDOWED:
                fail(f"--warmup: not allowed with --kind {kind}; allowed with: {', '.join(plots.WINDOWED)}")
            for r in loaded:
                _check_warmup(warmup, r)
            opts["warmup_s"] = warmup
        fig = plots.figure(kind, loaded, **opts)
        plots.save(fig, output)
    except (metrics.MissingTableError, ValueError, KeyError) as e:
        fail(str(e).strip("'\""))
    out.print(f"wrote {output}")


def report_cmd(
    runs: Annotated[
        list[str], typer.Argument(help="run ids, prefixes, run dirs, sweep names, or a results root")
    ],
    output: Annotated[Path, typer.Option("-o", "--output", help="HTML file")] = Path("report.html"),
    root: RootOpt = DEFAULT_ROOT,
    where: WhereOpt = None,
    direction: DirOpt = None,
) -> None:
    """Write one self-contained HTML report. A results root directory means all its runs, a
    sweep's name all the sweep's runs."""
    from aqmlab import report

    check_dir(direction)
    report.write_report(_select(runs, root, where), output, direction=direction)
    out.print(f"wrote {output}")


def export_flent_cmd(
    run: Annotated[str, typer.Argument(help="run id, prefix or path")],
    output: Annotated[Path, typer.Option("-o", "--output", help="FILE.flent.gz")],
    test: Annotated[
        str | None,
        typer.Option(
            "--test",
            help="Flent test name (default: the one the run's flows reproduce; "
            "the choice, the reason and what it leaves out are printed)",
        ),
    ] = None,
    warmup: Annotated[
        float | None,
        typer.Option("--warmup", help="seconds left out of every series; default: the run's own warm-up"),
    ] = None,
    flow: Annotated[
        int | None,
        typer.Option(
            "--flow", help="the voip or webpage flow a VoIP or HTTP test exports (default: the only one)"
        ),
    ] = None,
    root: RootOpt = DEFAULT_ROOT,
) -> None:
    """Export a run as a Flent data file."""
    from aqmlab import flent, metrics

    r = _load(run, root)
    if test is not None and test not in flent.SUPPORTED:
        fail(f"unknown Flent test '{test}'; supported: {', '.join(flent.SUPPORTED)}")
    if warmup is not None:
        _check_warmup(warmup, r)
    try:
        test, why = (test, "chosen with --test") if test else flent.guess(r)
        data = flent.build(r, test, warmup, flow)
    except (ValueError, metrics.MissingTableError) as e:
        fail(str(e).strip("'\""))
    path = flent.write(data, output)
    out.print(f"Flent test '{test}' ({why})", markup=False)
    for note in flent.notes(r, data):
        out.print(note, markup=False)
    out.print(f"wrote {path}")


def export_pcap_cmd(
    run: Annotated[str, typer.Argument(help="run id, prefix or path")],
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="FILE.pcap (default: RUN-HOP.pcap)")
    ] = None,
    hop: Annotated[
        str | None,
        typer.Option("--hop", help="the hop captured (default: the bottleneck that carried most bytes)"),
    ] = None,
    snaplen: Annotated[int, typer.Option("--snaplen", help="bytes kept of each packet, as tcpdump -s")] = 128,
    drops: Annotated[
        bool, typer.Option("--drops", help="also the packets the hop dropped, at their drop time")
    ] = False,
    root: RootOpt = DEFAULT_ROOT,
) -> None:
    """Write one hop's packets as a pcap file for Wireshark or tshark (needs recording level
    packets)."""
    from aqmlab import pcap

    r = _load(run, root)
    try:
        hop = hop or pcap.default_hop(r)
        path, n = pcap.export_pcap(r, output or Path(f"{r.run_id}-{hop}.pcap"), hop, snaplen, drops)
    except ValueError as e:
        fail(str(e))
    out.print(f"wrote {path}: {n} packets of hop {hop}", markup=False)


def register(app: typer.Typer) -> None:
    """Add the post-run commands to the main ``aqmlab`` app."""
    app.command("runs")(runs_cmd)
    app.command("show")(show_cmd)
    app.command("compare")(compare_cmd)
    app.command("query")(query_cmd)
    app.command("plot")(plot_cmd)
    app.command("report")(report_cmd)
    export = typer.Typer(help="Export runs to other tools' formats.", no_args_is_help=True)
    export.command("flent")(export_flent_cmd)
    export.command("pcap")(export_pcap_cmd)
    app.add_typer(export, name="export")
