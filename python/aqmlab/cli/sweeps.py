"""The ``aqmlab sweep``, ``aqmlab reproduce`` and ``aqmlab list experiments`` commands.

``register(app, list_app)`` adds them to the main Typer app (main.py). Bad input prints one line
naming the key and the value and exits with status 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from aqmlab.cli.console import fail, interrupted, lazy, out
from aqmlab.cli.results import DEFAULT_ROOT

store = lazy("aqmlab.store")

ExecOpt = Annotated[str, typer.Option("--executor", help="local (process pool), dask or ray")]
JobsOpt = Annotated[int | None, typer.Option("--jobs", "-j", help="worker processes (default: cores)")]
SchedOpt = Annotated[
    str | None, typer.Option("--scheduler", help="Dask scheduler / Ray address (default: a local cluster)")
]
OutOpt = Annotated[Path, typer.Option("--out", help="results root")]
KeepOpt = Annotated[bool, typer.Option("--keep-packets", help="also store every run's packet table")]


def sweep_cmd(
    sweep_file: Annotated[Path, typer.Argument(help="the sweep file (TOML)")],
    reps: Annotated[int | None, typer.Option("--reps", help="replications (default: the file's)")] = None,
    jobs: JobsOpt = None,
    executor: ExecOpt = "local",
    scheduler: SchedOpt = None,
    out_dir: OutOpt = DEFAULT_ROOT,
    keep_packets: KeepOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the per-run table as JSON lines")] = False,
    qdisc: Annotated[
        str | None,
        typer.Option(
            help="comma-separated disciplines (built-in names or module:Class): the sweep's own cases "
            "or new ones"
        ),
    ] = None,
) -> None:
    """Run a sweep (base scenario x grid x replications); rerunning resumes it."""
    from aqmlab.sweep import SweepError, SweepInterrupted, parse_sweep, run_sweep, with_qdiscs

    try:
        if reps is not None and reps < 1:
            raise SweepError(f"--reps {reps}: must be >= 1")
        if jobs is not None and jobs < 1:
            raise SweepError(f"--jobs {jobs}: must be >= 1")
        spec = parse_sweep(sweep_file)
        if reps is not None:
            spec.reps = reps
        if qdisc is not None:
            with_qdiscs(spec, [q.strip() for q in qdisc.split(",") if q.strip()])
        res = run_sweep(spec, out=out_dir, jobs=jobs, executor=executor, scheduler=scheduler,
                        keep_packets=keep_packets, progress=True)  # fmt: skip
    except SweepError as e:
        fail(str(e))
        raise
    except SweepInterrupted as e:
        interrupted(str(e))
    if as_json:
        sys.stdout.write(res.table.to_json(orient="records", lines=True) + "\n")
        return
    _print_sweep(res)


def _print_sweep(res) -> None:
    t = res.table
    ok = t[t["status"] == "ok"]
    labels = [c for c in t.columns if c not in ("run_id", "point", "rep", "seed", "status", "error")
              and c in _param_cols(t)]  # fmt: skip
    if labels and len(ok):
        cols = [c for c in ("queue_delay_p95_ms", "queue_delay_max_ms", "utilization", "goodput_mbps_total",
                            "drops") if c in ok]  # fmt: skip
        # a grid value may be a table (a qdisc with parameters): group by its JSON text
        ok = ok.assign(**{c: ok[c].map(_hashable) for c in labels})
        g = ok.groupby(labels, sort=False, dropna=False)[cols].median(numeric_only=True).reset_index()
        tab = Table(title=f"median over replications ({len(ok)} runs)")
        for c in g.columns:
            tab.add_column(str(c))
        for row in g.itertuples(index=False):
            tab.add_row(*(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row))
        out.print(tab)
    out.print(
        f"sweep {res.sweep_dir.name}: {res.total} runs ({res.ran} run now, {res.skipped} already complete), "
        f"{len(res.failed)} failed, {res.wall_s:.1f} s wall; dataset {res.sweep_dir}"
    )
    for f in res.failed[:20]:
        out.print(f"failed: {f['run_id']} (point {f['point']}, rep {f['rep']}, seed {f['seed']}): {f['error']}",
                  markup=False)  # fmt: skip
    if len(res.failed) > 20:
        out.print(f"... and {len(res.failed) - 20} more failures")


def _hashable(v):
    """A grid value as a groupby key: tables and lists as compact JSON text."""
    import json

    return json.dumps(v, sort_keys=True, separators=(",", ":")) if isinstance(v, dict | list) else v


def _param_cols(t) -> list[str]:
    from aqmlab.store import RUN_COLUMNS

    skip = set(RUN_COLUMNS) | {"reproduce_command", "traceback"}
    return [c for c in t.columns if c not in skip and not str(c).startswith(("pie_", "queue_", "spike"))]


def reproduce_cmd(
    experiment: Annotated[str, typer.Argument(help="experiment name (aqmlab list experiments)")],
    reps: Annotated[int | None, typer.Option("--reps", help="replications per case (default: the study's)")] = None,
    series: Annotated[str | None, typer.Option("--series", help="the study's series: transients2014 11 or 101 (ms of rest-of-path delay); goodbadwifi2015 all, rrul, voip, rtt_fair, wifi or web; lpcc2013 all, 3a, 3b, 3c or 3d")] = None,
    load: Annotated[list[str] | None, typer.Option("--load", help="transients2014: only these loads, e.g. 4+4 (repeatable)")] = None,
    lpcc: Annotated[list[str] | None, typer.Option("--lpcc", help="lpcc2013: only these low-priority controllers in 3c (repeatable)")] = None,
    qdisc: Annotated[list[str] | None, typer.Option("--qdisc", help="only these qdisc variants (repeatable)")] = None,
    jobs: JobsOpt = None,
    executor: ExecOpt = "local",
    scheduler: SchedOpt = None,
    out_dir: OutOpt = DEFAULT_ROOT,
    keep_packets: KeepOpt = False,
    quick: Annotated[bool, typer.Option("--quick", help="codel2012, goodbadwifi2015, lpcc2013: fewer, shorter cases and replications (a demonstration)")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the results as JSON on stdout")] = False,
) -> None:  # fmt: skip
    """Rerun a classic study: prints its tables, writes its figures and HTML report."""
    from aqmlab import reproduce
    from aqmlab.sweep import SweepError, SweepInterrupted

    try:
        mod = reproduce.get(experiment)
    except KeyError as e:
        fail(str(e).strip("'\""))
    reps = mod.REPS if reps is None else reps
    if reps < 1:
        fail(f"--reps {reps}: must be >= 1")
    series = series or next(iter(mod.SERIES))
    if series not in mod.SERIES:
        fail(f"--series {series!r}: allowed: {', '.join(mod.SERIES)}")
    filters = {}
    for name, vals in (("--load", load), ("--lpcc", lpcc), ("--qdisc", qdisc)):
        if not vals:
            continue
        if name not in mod.FILTERS:
            fail(f"{name}: not an option of {experiment}; its options: {', '.join(mod.FILTERS)}")
        keyword, allowed = mod.FILTERS[name]
        extensible = name in getattr(mod, "EXTENSIBLE", ())
        for v in vals:
            if v not in allowed and not extensible:
                fail(f"{name} {v!r}: allowed: {', '.join(allowed)}")
        filters[keyword] = vals
    if quick:
        if not getattr(mod, "QUICK", False):
            fail(f"--quick: not an option of {experiment}")
        filters["quick"] = True
    try:
        ex = reproduce.Execution(out=out_dir, jobs=jobs, executor=executor, scheduler=scheduler,
                                 keep_packets=keep_packets, progress=True)  # fmt: skip
        o = mod.run(reps=reps, series=series, ex=ex, **filters)
    except SweepError as e:
        fail(str(e))
        raise
    except SweepInterrupted as e:
        interrupted(str(e))
    if as_json:
        sys.stdout.write(json.dumps(mod.to_json(o), indent=1, default=store._json_default) + "\n")
        return
    mod.print_tables(o, out)
    s = o.sweep
    out.print(
        f"{s.total} runs ({s.ran} run now, {s.skipped} reused), {len(s.failed)} failed, {s.wall_s:.1f} s wall"
    )
    out.print(
        f"report: {o.report_dir / 'report.html'}  figures: {o.report_dir}/*.png  dataset: {s.sweep_dir}"
    )


def list_experiments() -> None:
    """Built-in experiments (aqmlab reproduce NAME)."""
    from aqmlab import reproduce

    t = Table(title="experiments")
    t.add_column("name")
    t.add_column("description", overflow="fold")
    for n, d in reproduce.experiments():
        t.add_row(n, d)
    out.print(t)


def register(app: typer.Typer, list_app: typer.Typer) -> None:
    app.command("sweep")(sweep_cmd)
    app.command("reproduce")(reproduce_cmd)
    list_app.command("experiments")(list_experiments)
