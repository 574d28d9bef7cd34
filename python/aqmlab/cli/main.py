"""The `aqmlab` app (typer + rich): run, emulate, validate, schema; `list` (listing.py), the
post-run commands (results.py) and the sweep commands (sweeps.py) are registered on it, and
summary.py prints what a run gives. User mistakes end with one line naming the key, the value and
what is allowed, and exit status 2; never a traceback.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from aqmlab import BUILD, __version__, signals
from aqmlab.cli import listing, results, stopping, summary, sweeps
from aqmlab.cli.console import RunProgress, err, fail, interrupted, lazy, out, qdisc_failed
from aqmlab.cli.results import DirOpt, OutOpt, check_dir, check_out
from aqmlab.scenario import ScenarioError, apply_overrides, load, resolve

if TYPE_CHECKING:
    from aqmlab.api import Result

api = lazy("aqmlab.api")
plots = lazy("aqmlab.plots")
pyqdisc = lazy("aqmlab.pyqdisc")
store = lazy("aqmlab.store")

app = typer.Typer(
    help="aqmlab: a laboratory for bottleneck queue management (AQM).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        how = " (profile-guided build)" if BUILD == "pgo" else ""
        out.print(f"aqmlab {__version__}{how}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    """aqmlab: a laboratory for bottleneck queue management (AQM)."""


SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="override a key by dotted path, e.g. topology.down.rate=2Mbps (repeatable)"),
]


def _scenario(source: str, sets: list[str] | None) -> dict:
    try:
        return apply_overrides(load(source), sets or [])
    except ScenarioError as e:
        fail(str(e))
        raise


@app.command("run")
def run_cmd(
    scenario: Annotated[str, typer.Argument(help="a scenario file or the name of a built-in scenario")],
    sets: SetOpt = None,
    seed: Annotated[int | None, typer.Option(min=0, help="run seed (default: the scenario's)")] = None,
    out_dir: OutOpt = results.DEFAULT_ROOT,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON summary object on stdout")] = False,
    qdisc: Annotated[
        str | None,
        typer.Option(
            help="comma-separated disciplines to compare side by side on both directions, "
            "e.g. pfifo,codel,pie,fq_codel"
        ),
    ] = None,
    warmup: Annotated[float, typer.Option(help="seconds skipped by the metrics")] = 0.0,
    plot: Annotated[bool, typer.Option(help="write the standard figure(s) next to the results")] = True,
    direction: DirOpt = None,
) -> None:
    """Run a scenario, store it, print its summary (or compare disciplines with --qdisc)."""
    check_dir(direction)
    if not math.isfinite(warmup) or warmup < 0:
        fail(f"--warmup: {warmup} is not allowed; allowed: a number of seconds >= 0")
    check_out(out_dir)
    sc = _scenario(scenario, sets)
    names = [q.strip() for q in qdisc.split(",") if q.strip()] if qdisc else []
    if names and sc.get("topology", {}).get("hops"):
        fail(
            f"--qdisc: {qdisc!r} cannot be applied: this scenario describes its path with topology.hops; "
            "set one hop's discipline with --set topology.hops.N.qdisc=NAME"
        )
    if qdisc is not None:
        _check_qdisc_names(qdisc, names)
    variants = []
    for n in names:
        q = pyqdisc.qdisc_table(n) if pyqdisc.is_class_path(n) else n
        variants.append((n, apply_overrides(sc, {"topology.down.qdisc": q, "topology.up.qdisc": q})))
    # every variant is validated before the first one runs
    resolved = []
    for name, v in variants or [(None, sc)]:
        try:
            resolved.append(resolve(v, seed))
        except ScenarioError as e:
            fail(f"with --qdisc {name}: {e}" if name else str(e))
    duration_s = _seconds(resolved[0]["duration"])
    if duration_s is not None and warmup >= duration_s:
        fail(
            f"--warmup: {warmup:g} is not allowed; allowed: less than the duration ({resolved[0]['duration']})"
        )
    level = resolved[0]["record"]["level"]
    if level != "packets" and "level" not in (sc.get("record") or {}):
        err.print(f"note: record.level = {level}: one row per packet would exceed record.max_rows at these rates "
                  "and this duration (set record.level = \"packets\" and raise max_rows to keep them)",
                  markup=False)  # fmt: skip
    if plot and level == "summary":
        plot = False
        err.print("note: record.level = summary keeps no time series; no figure written", markup=False)
    results: list[tuple[str, Result]] = []
    interrupts = api.Interrupts()
    drawer = _RunFigure(direction) if plot and len(variants) <= 1 else None
    try:
        with interrupts.catching():
            for (name, v), rs in zip(variants or [(None, sc)], resolved, strict=True):
                api.run_and_store(
                    v,
                    rs,
                    out_dir,
                    interrupts,
                    seed,
                    warmup,
                    progress=lambda label=name or rs["name"]: RunProgress(label),
                    stored=lambda r, n=name: results.append((n, r)),
                    draw=drawer.draw if drawer else None,
                    preload=[plots] if plot else [],
                )
    except KeyboardInterrupt:
        interrupted(_kept(results, len(resolved)))
    except api.StoreFailed as e:
        _store_failed(out_dir, e.error, e.path)
    except ScenarioError as e:
        fail(str(e))
    except api.SimulationError as e:
        err.print(f"error: {e} (a simulator bug; the run was not stored)", markup=False)
        raise typer.Exit(code=1) from None
    except pyqdisc.QdiscError as e:
        qdisc_failed(e)
    if as_json:
        docs = [{**r.summary, "run_dir": str(r.path)} for _, r in results]
        if names:
            sys.stdout.write(
                json.dumps({n: d for (n, _), d in zip(results, docs, strict=True)}, indent=1) + "\n"
            )
        else:
            sys.stdout.write(json.dumps(docs[0], indent=1) + "\n")
    try:
        with interrupts.catching():
            figures = (
                drawer.written() if drawer else [_compare_figure(results, out_dir, direction)] if plot else []
            )
    except KeyboardInterrupt:
        interrupted(f"{_kept(results, len(resolved))}; the comparison's figure was not drawn")
    if not as_json:
        if names:
            out.print(summary.compare_table(results, direction))
        else:
            summary.print_summary(results[0][1], direction)
        for _, r in results:
            out.print(f"run stored in {r.path}")
        for f in figures:
            out.print(f"figure: {f}")


@app.command(
    "emulate",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": False},
)
def emulate_cmd(
    ctx: typer.Context,
    scenario: Annotated[str, typer.Argument(help="a scenario file or the name of a built-in scenario")],
    sets: SetOpt = None,
    seed: Annotated[int | None, typer.Option(min=0, help="run seed (default: the scenario's)")] = None,
    out_dir: OutOpt = results.DEFAULT_ROOT,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON summary object on stdout")] = False,
    warmup: Annotated[float, typer.Option(help="seconds skipped by the metrics")] = 0.0,
    realtime: Annotated[
        bool,
        typer.Option(
            help="precise wake-ups: the forwarder in the SCHED_FIFO class, and a zero CPU-latency "
            "request (/dev/cpu_dma_latency) held for the run, so idle CPUs poll instead of sleeping"
        ),
    ] = True,
    direction: DirOpt = None,
    sysctl: Annotated[
        list[str] | None,
        typer.Option(
            help="NAME=VALUE: a kernel setting under net.ipv4 changed in both hosts' namespaces "
            "(repeatable), e.g. net.ipv4.tcp_comp_sack_nr=0 to run the kernel's TCP without SACK compression"
        ),
    ] = None,
) -> None:
    """Run a scenario in real time: the kernel's TCP and real tools (iperf3, ping) between two
    network namespaces, through the scenario's path (needs root). `aqmlab emulate SCENARIO --
    COMMAND...` runs COMMAND on the client side instead ($AQMLAB_SERVER is the server's address,
    where iperf3 and irtt servers wait; the recording covers the scenario's duration or the
    command's run time if shorter)."""
    from aqmlab import emulate as emu

    command = list(ctx.args)
    check_dir(direction)
    sysctls = {}
    for item in sysctl or []:
        name, eq, value = item.partition("=")
        if not eq:
            fail(f"--sysctl: {item!r} is not allowed; allowed: NAME=VALUE, e.g. net.ipv4.tcp_comp_sack_nr=0")
        sysctls[name.strip()] = value.strip()
    try:
        emu.check_sysctls(sysctls)
    except emu.EmulationError as e:
        fail(str(e))
    if not math.isfinite(warmup) or warmup < 0:
        fail(f"--warmup: {warmup} is not allowed; allowed: a number of seconds >= 0")
    check_out(out_dir)
    sc = _scenario(scenario, sets)
    interrupts = api.Interrupts()
    res = None
    try:
        with interrupts.catching():
            res, status = emu.emulate(
                sc, seed=seed, command=command or None, warmup_s=warmup, realtime=realtime, sysctls=sysctls
            )
            with interrupts.held():
                _save(res, out_dir)
    except KeyboardInterrupt:
        interrupted(f"run stored in {res.path}" if res is not None and res.path else "nothing stored")
    except (ScenarioError, emu.EmulationError) as e:
        fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps({**res.summary, "run_dir": str(res.path)}, indent=1) + "\n")
    else:
        summary.print_summary(res, direction)
        em = res.meta["emulated"]
        for problem in em["problems"]:
            err.print(f"warning: {problem}", markup=False)
        out.print(f"emulated on {em['kernel']}; run stored in {res.path}")
    if status:
        raise typer.Exit(code=status)


def _seconds(value) -> float | None:
    """A resolved duration ("30s", "1500ms", 30) in seconds, read by the core's own parser; None
    when it is not of that form."""
    from aqmlab import _core

    if isinstance(value, (int, float)):
        return float(value)
    try:
        return _core.parse_time(str(value)) / 1e9
    except ValueError:
        return None


def _save(res: Result, out_dir: Path) -> None:
    """Stores a run under --out; a full or failing disk is one line naming the path, exit 2."""
    import duckdb  # loaded by the store anyway

    try:
        res.save(out_dir)
    except (OSError, duckdb.Error) as e:
        _store_failed(out_dir, e, res.path)


def _kept(results: list[tuple[str | None, Result]], planned: int) -> str:
    """What an interrupt of ``aqmlab run`` left: the runs stored so far, and whether a run was
    still to be stored."""
    stored = "; ".join(f"run stored in {r.path}" for _, r in results)
    if not results:
        return "nothing stored"
    return f"the run in progress was not stored; {stored}" if len(results) < planned else stored


def _store_failed(out_dir: Path, e: Exception, path: Path | None) -> NoReturn:
    where = f"stored in {path}, the catalog not updated" if path else "not stored"
    fail(f"--out: {out_dir}: {getattr(e, 'strerror', None) or e} (the run was {where})")


def _check_qdisc_names(text: str, names: list[str]) -> None:
    """--qdisc: every item a built-in discipline or module:Class; the first bad item is named,
    with the closest built-in name."""
    known = _qdisc_names()
    allowed = f"{', '.join(known)} or module:Class (a discipline written in Python)"
    if not names:
        fail(f"--qdisc: {text!r} is not allowed; allowed: a comma-separated list of {allowed}")
    for n in names:
        if n not in known and not pyqdisc.is_class_path(n):
            close = difflib.get_close_matches(n, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            fail(f"--qdisc: {n!r} is not a queue discipline{hint}; allowed: {allowed}")


def _qdisc_names() -> list[str]:
    from aqmlab import _core

    return [i["name"] for i in json.loads(_core.qdiscs())]


def _stored(res: Result, path: Path | None = None) -> store.RunData:
    """A run stored (at ``res.path``, or about to be at ``path``) as ``store.load_run`` would read
    it back, from what is still in memory (reading a large run back costs more than drawing it)."""
    return store.RunData(
        path=path or res.path,
        meta=res.meta,
        summary=res.summary,
        scenario=res.meta["scenario"],
        tables=res.tables,
    )


class _RunFigure:
    """The standard figure of a single run, queueing delay over time (or the backlog without the
    ``packets`` table) in the direction(s) ``direction`` (by default where the load is). Drawn
    before the run is published, while its tables are still being written on the other CPU, into
    the directory that is then renamed into place. What drawing raised is raised by ``written``,
    once the run is stored."""

    def __init__(self, direction: str | None) -> None:
        self.direction = direction
        self.path: Path | None = None
        self.error: Exception | None = None

    def draw(self, res: Result, writer: store.RunWriter) -> None:
        run = _stored(res, writer.final)
        kind = "delay_ts" if run.has("packets") else "backlog_ts"
        self.path = writer.final / f"{kind}.png"
        drawn = writer.tmp / self.path.name
        try:
            plots.save(plots.figure(kind, [run], direction=self.direction), drawn)
        except Exception as e:  # noqa: BLE001 (raised by ``written`` once the run is stored)
            self.error = e
            with contextlib.suppress(OSError):
                drawn.unlink(missing_ok=True)

    def written(self) -> list[Path]:
        if isinstance(self.error, OSError):
            _figure_failed(self.path, self.error)
        if self.error is not None:
            raise self.error
        return [self.path]


def _figure_failed(path: Path, e: OSError) -> NoReturn:
    fail(f"--out: {path}: {e.strerror or e} (the figure was not written; the run is stored)")


def _compare_figure(
    results: list[tuple[str | None, Result]], root: Path, direction: str | None = None
) -> Path:
    """The standard figure of a comparison: the CDF of probe RTT (or of queueing delay when there
    are no probes) per discipline, in the direction(s) ``direction`` (by default where the load
    is). A single run's figure is ``_RunFigure``'s."""
    runs = [_stored(r) for _, r in results]
    kind = "rtt_cdf" if all(r.summary["probes"] for r in runs) else "delay_cdf"
    path = root / f"compare-{runs[0].meta['name']}-{kind}.png"
    try:
        plots.save(plots.figure(kind, runs, direction=direction), path)
    except OSError as e:
        _figure_failed(path, e)
    return path


@app.command("validate")
def validate_cmd(
    scenario: Annotated[str, typer.Argument(help="a scenario file or built-in name")],
    sets: SetOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the resolved scenario as JSON")] = False,
) -> None:
    """Check a scenario and print it resolved (every default written out)."""
    sc = _scenario(scenario, sets)
    try:
        resolved = resolve(sc)
    except ScenarioError as e:
        fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps(resolved, indent=1) + "\n")
    else:
        out.print(f"ok: {resolved['name']} ({len(resolved['flows'])} flow entries)")


@app.command("schema")
def schema_cmd(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="write it to this file instead of stdout")
    ] = None,
) -> None:
    """Print the JSON Schema of the scenario format (for editors and other tools)."""
    from aqmlab import _core

    text = _core.schema() + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text)
    except OSError as e:
        fail(f"--output: {output}: {e.strerror}")
    out.print(f"wrote {output}")


results.register(app)
sweeps.register(app, listing.register(app))


FAULTS = (OSError, "aqmlab.store:CorruptRun", "aqmlab.storelock:Busy", "duckdb:IOException")
"""What ends a command with one line naming the path, exit status 2, wherever it is raised: a
full or read-only disk, a file where a directory is needed, a damaged file, a store held by
another process (the modules named are the ones loaded: what is not loaded was not raised)."""


def _fault(e: BaseException) -> bool:
    for f in FAULTS:
        if isinstance(f, str):
            mod, _, name = f.partition(":")
            f = getattr(sys.modules.get(mod), name, None)
        if f is not None and isinstance(e, f):
            return True
    return False


def entry() -> None:
    """The console script: the app, then the end of the process (``_exit``). SIGINT or SIGTERM
    where no command handles it (``stopping``), and the faults of FAULTS, end it with one line (exit status
    128 + the signal's number, resp. 2); files are written whole (``aqmlab.files``), so none is left cut short."""
    stopping.install()
    try:
        _run()
    except signals.Stopped:
        # a signal as the command ended (in the handlers below or in ``_exit``): the first one
        # stops there, and ``stopping.stop`` ignores any later one
        _interrupted()


def _run() -> None:
    """``app()`` and the end of the process by its outcome (``entry``)."""
    try:
        app()
    except SystemExit as e:  # typer's way to end every command, with its status
        if _said_nothing(e) or (not e.code and signals.take_early()):
            _interrupted()  # (a signal that a callback of some library swallowed: it ran to its end)
        _exit(e.code)
    except (signals.Stopped, KeyboardInterrupt):
        _interrupted()
    except Exception as e:
        if signals.received:  # what the signal cut, re-raised as another error (an ImportError,
            _interrupted()  # DuckDB's Error)
        if not _fault(e):
            raise
        what = (
            f"{e.filename}: {e.strerror}" if isinstance(e, OSError) and e.filename else str(e).splitlines()[0]
        )
        err.print(f"error: {what}", markup=False)
        _exit(2)
    _exit(0)


def _said_nothing(e: SystemExit) -> bool:
    """Whether ``e`` is typer's silent exit for a KeyboardInterrupt that no command handled (a
    signal in a command's last steps, after its own handling ended): typer raises its Exit
    *from* the interrupt; a command that said "interrupted: ..." raises it while handling one."""
    x = e.__context__
    while x is not None:
        if isinstance(x.__cause__, KeyboardInterrupt):
            return True
        x = x.__context__
    return False


def _interrupted() -> NoReturn:
    err.print(stopping.MESSAGE, markup=False)
    _exit(signals.status())


def _exit(code: object) -> NoReturn:
    """Ends the process with SystemExit's ``code``. When the command has left no other thread
    and no child process, the atexit handlers run, the standard streams are flushed, and the
    process ends there (``os._exit``), without the interpreter finalising every module: after a
    command that loaded pandas, matplotlib, pyarrow and DuckDB that takes some 0.15 s, a tenth
    of what a 10,000-flow run spends outside the simulator (bench/LOG.md, "The end of the
    process"). Otherwise, or with a message for a code, or if a stream cannot be flushed (a
    closed pipe), the interpreter exits as usual."""
    import atexit
    import threading

    mp = sys.modules.get("multiprocessing")
    alone = threading.active_count() == 1 and not (mp is not None and mp.active_children())
    if not alone or not (code is None or isinstance(code, int)):
        raise SystemExit(code)
    # The handlers a normal exit runs (the emulator's removal of its work directory, say);
    # CPython's own entry point to them, as documented nowhere else.
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None
    os._exit(code or 0)
