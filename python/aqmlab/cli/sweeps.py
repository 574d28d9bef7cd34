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

from aqmlab import columns
from aqmlab.cli.console import FitTable, err, fail, interrupted, lazy, out
from aqmlab.cli.results import DEFAULT_ROOT, DirOpt, OutOpt, check_dir, check_out

store = lazy("aqmlab.store")


def disk_failed(out_dir: Path, e: OSError) -> None:
    """A write under --out failed (a full or read-only disk): one line, exit status 2."""
    where = f" ({e.filename})" if e.filename else ""
    fail(f"--out: {out_dir}: {e.strerror or e}{where}; the runs stored are kept whole, rerun to resume")


ExecOpt = Annotated[str, typer.Option("--executor", help="local (process pool), dask or ray")]
JobsOpt = Annotated[int | None, typer.Option("--jobs", "-j", help="worker processes (default: cores)")]
SchedOpt = Annotated[
    str | None, typer.Option("--scheduler", help="Dask scheduler / Ray address (default: a local cluster)")
]
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
    direction: DirOpt = None,
) -> None:
    """Run a sweep (base scenario x grid x replications); rerunning resumes it."""
    from aqmlab.sweep import SweepError, SweepInterrupted, parse_sweep, run_sweep, with_qdiscs

    check_dir(direction)
    check_out(out_dir)
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
    except OSError as e:
        disk_failed(out_dir, e)
    except SweepInterrupted as e:
        interrupted(str(e))
    for note in res.notes:
        err.print(note, markup=False)
    if as_json:
        sys.stdout.write(res.table.to_json(orient="records", lines=True) + "\n")
        return
    _print_sweep(res, direction)


SWEEP_METRICS = ("queue_delay_p95_ms", "queue_delay_max_ms", "utilization", "drops")
"""The link metrics of the printed sweep summary, for each shown direction (with total goodput)."""


def _print_sweep(res, direction: str | None = None) -> None:
    t = res.table
    ok = t[t["status"] == "ok"]
    labels = [c for c in t.columns if c not in ("run_id", "point", "rep", "seed", "status", "error")
              and c in _param_cols(t)]  # fmt: skip
    if labels and len(ok):
        dirs = columns.shown_dirs(direction, ok.to_dict("records"))
        link = [columns.in_direction(c, d) for d in dirs for c in SWEEP_METRICS]
        cols = [c for c in (*link, "goodput_mbps_total") if c in ok]
        # a grid value may be a table (a qdisc with parameters): group by its JSON text
        ok = ok.assign(**{c: ok[c].map(_hashable) for c in labels})
        g = ok.groupby(labels, sort=False, dropna=False)[cols].median(numeric_only=True).reset_index()
        tab = FitTable(title=f"median over replications ({len(ok)} runs), {' and '.join(dirs)} bottleneck")
        for c in g.columns:
            tab.add_column(str(c))
        for row in g.itertuples(index=False):
            tab.add_row(*(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row))
        out.print(tab)
    out.print(
        f"sweep {res.sweep_dir.name}: {res.total} runs ({res.ran} run now, {res.skipped} already complete), "
        f"{len(res.failed)} failed, {res.wall_s:.1f} s wall; dataset {res.sweep_dir}"
    )
    repeats = int(res.table["same_as"].notna().sum()) if "same_as" in res.table else 0
    if repeats:
        out.print(f"{repeats} runs repeat the first run of their grid point, which drew no random value: "
                  "every seed gives its results, so these replications add no information")  # fmt: skip
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
    from aqmlab.sweep import RUN_PROVENANCE

    skip = set(RUN_COLUMNS) | set(RUN_PROVENANCE) | {"traceback"}
    return [c for c in t.columns if c not in skip and not str(c).startswith(("pie_", "queue_", "spike"))]


def _reproduce(
    experiment: Annotated[str, typer.Argument(help="experiment name (aqmlab list experiments)")],
    reps: Annotated[int | None, typer.Option("--reps", help="replications per case (default: the study's)")] = None,
    series: Annotated[str | None, typer.Option("--series", help="the study's series (default: its first)")] = None,
    jobs: JobsOpt = None,
    executor: ExecOpt = "local",
    scheduler: SchedOpt = None,
    out_dir: OutOpt = DEFAULT_ROOT,
    keep_packets: KeepOpt = False,
    quick: Annotated[bool, typer.Option("--quick", help="fewer replications and grid points, every case as long and set up as in the full run")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the results and verdicts as JSON on stdout")] = False,
    **filters: list[str] | None,
) -> None:  # fmt: skip
    """Rerun a classic study: prints its tables beside the published ones with verdicts, writes its
    figures and HTML report."""
    from aqmlab import reproduce
    from aqmlab.reproduce import study as S
    from aqmlab.sweep import SweepError, SweepInterrupted

    try:
        st = reproduce.get(experiment)
    except KeyError as e:
        fail(str(e).strip("'\""))
    if reps is not None and reps < 1:
        fail(f"--reps {reps}: must be >= 1")
    check_out(out_dir)
    if series is not None and series not in st.series:
        fail(f"--series {series!r}: allowed for {experiment}: {', '.join(st.series)}")
    chosen = {}
    for param, vals in filters.items():
        if not vals:
            continue
        flag = "--" + param.replace("_", "-")
        opt = st.option(flag)
        if opt is None:
            own = ", ".join(o.flag for o in st.options) or "none"
            fail(f"{flag}: not an option of {experiment}; its options: {own}")
        for v in vals:
            if v not in opt.allowed and not opt.extensible:
                fail(f"{flag} {v!r}: allowed: {', '.join(opt.allowed)}")
        chosen[opt.keyword] = vals
    try:
        ex = reproduce.Execution(out=out_dir, jobs=jobs, executor=executor, scheduler=scheduler,
                                 keep_packets=keep_packets, progress=True)  # fmt: skip
        r = S.reproduce(st, ex=ex, reps=reps, series=series, quick=quick, filters=chosen)
    except SweepError as e:
        fail(str(e))
        raise
    except OSError as e:
        disk_failed(out_dir, e)
    except SweepInterrupted as e:
        interrupted(str(e))
    if as_json:
        sys.stdout.write(json.dumps(r.to_json(), indent=1, default=store._json_default) + "\n")
        return
    S.print_reproduction(r, out)


def reproduce_cmd():
    """The ``reproduce`` command with one repeatable option per case filter that any study
    declares (reproduce.study.Option); its help names the studies that take it."""
    import inspect

    from aqmlab import reproduce

    by_flag: dict[str, list] = {}
    for name in reproduce.EXPERIMENTS:
        for o in reproduce.get(name).options:
            by_flag.setdefault(o.flag, []).append((name, o))
    studies = {n: reproduce.get(n) for n in reproduce.EXPERIMENTS}
    sig = inspect.signature(_reproduce, eval_str=True)
    series_help = "the study's series (default: its first): " + "; ".join(
        f"{n}: {', '.join(st.series)}" + (f" ({st.series_help})" if st.series_help else "")
        for n, st in studies.items() if len(st.series) > 1
    )  # fmt: skip
    params = [p.replace(annotation=Annotated[str | None, typer.Option("--series", help=series_help)])
              if p.name == "series" else p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]  # fmt: skip
    for flag, owners in by_flag.items():
        text = "; ".join(f"{n}: {o.help}" for n, o in owners) + " (repeatable)"
        ann = Annotated[list[str] | None, typer.Option(flag, help=text)]
        params.append(inspect.Parameter(flag.lstrip("-").replace("-", "_"), inspect.Parameter.KEYWORD_ONLY,
                                        default=None, annotation=ann))  # fmt: skip

    def cmd(**kw):
        return _reproduce(**kw)

    cmd.__signature__ = sig.replace(parameters=params)
    cmd.__doc__ = _reproduce.__doc__
    return cmd


def list_experiments() -> None:
    """Built-in experiments (aqmlab reproduce NAME)."""
    from aqmlab import reproduce

    t = FitTable(title="experiments")
    for c in ("name", "description", "series", "options", "--quick"):
        t.add_column(c, overflow="fold")
    for n in reproduce.EXPERIMENTS:
        st = reproduce.get(n)
        opts = ", ".join(o.flag for o in st.options)
        t.add_row(n, st.description, ", ".join(st.series), opts,
                  f"{st.quick.reps} rep(s)" + (f"; {st.quick.note}" if st.quick.note else ""))  # fmt: skip
    out.print(t)


def register(app: typer.Typer, list_app: typer.Typer) -> None:
    app.command("sweep")(sweep_cmd)
    app.command("reproduce")(reproduce_cmd())
    list_app.command("experiments")(list_experiments)
