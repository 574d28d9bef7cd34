"""The `aqmlab` app (typer + rich): run, validate, list; the post-run commands of results.py and the
sweep commands of sweeps.py are registered on it. User mistakes end with one line naming the key, the value and what is allowed, and
exit status 2; never a traceback.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape as esc
from rich.table import Table

from aqmlab import __version__
from aqmlab.cli import results, sweeps
from aqmlab.cli.console import RunProgress, err, fail, interrupted, lazy, out, qdisc_failed
from aqmlab.scenario import ScenarioError, apply_overrides, builtin_names, builtin_path, load, resolve

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
        out.print(f"aqmlab {__version__}")
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


def _fmt(v, nd: int = 2) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


FLOW_ROWS_SHOWN = 30
"""Flows listed in the printed summary; the rest are counted (the JSON and the store hold all)."""


def _print_summary(res: Result) -> None:
    s = res.summary
    w = s.get("warmup_s") or 0.0
    window = f", counted from {w:g} s" if w else ""
    t = Table(title=f"{res.meta['name']} (seed {res.meta['seed']}) — links{window}")
    for c in [
        "dir",
        "qdisc",
        "util %",
        "qdelay p50 ms",
        "p95",
        "p99",
        "max",
        "mean",
        "drops",
        "marks",
        "arrivals",
    ]:
        t.add_column(c, justify="right" if c not in ("dir", "qdisc") else "left")
    for d, link in s["links"].items():
        q = link["queue_delay_ms"]
        util = link["utilization"]
        t.add_row(
            d,
            link["qdisc"],
            _fmt(None if util is None else 100 * util, 1),
            *(_fmt(q[k]) for k in ["p50", "p95", "p99", "max", "mean"]),
            _fmt(link["drops"]),
            _fmt(link["marks"]),
            _fmt(link["arrivals"]),
        )
    out.print(t)
    if s["flows"]:
        t = Table(title="flows")
        for c in [
            "id",
            "label",
            "kind",
            "dir",
            "cc",
            "goodput Mb/s",
            "delivered B",
            "retx",
            "RTOs",
            "completion s",
        ]:
            t.add_column(c)
        shown = s["flows"]
        for f in shown[:FLOW_ROWS_SHOWN]:
            t.add_row(
                *(
                    _fmt(f.get(k))
                    for k in [
                        "id",
                        "label",
                        "kind",
                        "direction",
                        "cc",
                        "goodput_mbps",
                        "bytes_delivered",
                        "retransmits",
                        "rto_count",
                        "completion_s",
                    ]
                )
            )
        out.print(t)
        if len(shown) > FLOW_ROWS_SHOWN:
            out.print(f"... and {len(shown) - FLOW_ROWS_SHOWN} more flows (all of them: --json, or "
                      "`aqmlab query` on the stored run's flows table)")  # fmt: skip
        g = s.get("goodput_mbps") or {}
        parts = [f"{d} {g[d]:.3f}" for d in ("down", "up") if g.get(d) is not None]
        if parts:
            out.print(f"goodput (payload delivered in the window / its length), Mb/s: {', '.join(parts)}")
    if s["probes"]:
        t = Table(title="latency probes")
        cols = ["id", "RTT p50 ms", "p95", "max", "mean", "induced p50 ms", "OWD up p50", "down p50"]
        for c in cols + ["jitter up ms", "down", "loss %"]:
            t.add_column(c, justify="right")
        for p in s["probes"]:
            r = p["rtt_ms"]
            t.add_row(
                _fmt(p["id"]),
                *(_fmt(r[k]) for k in ["p50", "p95", "max", "mean"]),
                _fmt(p["induced_ms"]["p50"]),
                *(_fmt(p["owd_ms"][d]["p50"]) for d in ("up", "down")),
                *(_fmt(p["jitter_ms"][d]) for d in ("up", "down")),
                _fmt(None if p["loss"] is None else 100 * p["loss"], 1),
            )
        out.print(t)
    em = res.meta.get("emulator")
    if em:
        per_pkt = em["cpu_s"] / em["packets"] * 1e6 if em["packets"] else 0.0
        out.print(
            f"{em['packets']:,} packets forwarded in {em['wall_s']:.3f} s wall, "
            f"{em['cpu_s']:.3f} s CPU ({per_pkt:.1f} us per packet)"
        )
    else:
        out.print(f"{res.meta['events']:,} events in {res.meta['wall_s']:.3f} s wall")


def _compare_table(results: list[tuple[str, Result]]) -> Table:
    t = Table(title=f"{results[0][1].meta['name']}: one path, several queue disciplines")
    cols = [
        "qdisc",
        "goodput down Mb/s",
        "goodput up Mb/s",
        "probe RTT p50 ms",
        "p95",
        "qdelay down p50 ms",
        "p95",
        "qdelay up p95 ms",
        "drops down",
        "drops up",
        "marks down",
        "marks up",
    ]
    for c in cols:
        t.add_column(c, justify="left" if c == "qdisc" else "right")
    for name, r in results:
        s = r.summary
        good = {
            d: sum(f["goodput_mbps"] or 0 for f in s["flows"] if f["direction"] == d) for d in ("down", "up")
        }
        probes = s["probes"]
        rtt = probes[0]["rtt_ms"] if probes else {"p50": None, "p95": None}
        neck = s.get("bottleneck", {})
        down, up = s["links"][neck.get("down", "down")], s["links"][neck.get("up", "up")]
        t.add_row(
            name,
            _fmt(good["down"]),
            _fmt(good["up"]),
            _fmt(rtt["p50"], 1),
            _fmt(rtt["p95"], 1),
            _fmt(down["queue_delay_ms"]["p50"], 1),
            _fmt(down["queue_delay_ms"]["p95"], 1),
            _fmt(up["queue_delay_ms"]["p95"], 1),
            _fmt(down["drops"]),
            _fmt(up["drops"]),
            _fmt(down["marks"]),
            _fmt(up["marks"]),
        )
    return t


@app.command("run")
def run_cmd(
    scenario: Annotated[str, typer.Argument(help="a scenario file or the name of a built-in scenario")],
    sets: SetOpt = None,
    seed: Annotated[int | None, typer.Option(min=0, help="run seed (default: the scenario's)")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="results root")] = results.DEFAULT_ROOT,
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
) -> None:
    """Run a scenario, store it, print its summary (or compare disciplines with --qdisc)."""
    if not math.isfinite(warmup) or warmup < 0:
        fail(f"--warmup: {warmup} is not allowed; allowed: a number of seconds >= 0")
    if out_dir.exists() and not out_dir.is_dir():
        fail(f"--out: {out_dir} is not a directory; allowed: a directory (created if missing)")
    sc = _scenario(scenario, sets)
    names = [q.strip() for q in qdisc.split(",") if q.strip()] if qdisc else []
    if names and sc.get("topology", {}).get("hops"):
        fail(
            f"--qdisc: {qdisc!r} cannot be applied: this scenario describes its path with topology.hops; "
            "set one hop's discipline with --set topology.hops.N.qdisc=NAME"
        )
    if qdisc is not None:
        known = _qdisc_names()
        bad = [n for n in names if n not in known and not pyqdisc.is_class_path(n)]
        if bad or not names:
            fail(f"--qdisc: {qdisc!r} is not allowed; allowed: a comma-separated list of {', '.join(known)} "
                 "or module:Class (a discipline written in Python)")  # fmt: skip
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
    if plot and level == "summary":
        plot = False
        err.print("note: record.level = summary keeps no time series; no figure written", markup=False)
    results: list[tuple[str, Result]] = []
    interrupts = api.Interrupts()
    try:
        with interrupts.catching():
            for (name, v), rs in zip(variants or [(None, sc)], resolved, strict=True):
                with RunProgress(name or rs["name"]) as progress:
                    res = api.run_dict(v, seed=seed, warmup_s=warmup, progress=progress)
                with interrupts.held():
                    res.save(out_dir)
                results.append((name, res))
    except KeyboardInterrupt:
        stored = "".join(f"; run stored in {r.path}" for _, r in results)
        interrupted(f"the run in progress was not stored{stored}" if stored else "nothing stored")
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
    figures = _figures(results, out_dir) if plot else []
    if not as_json:
        if names:
            out.print(_compare_table(results))
        else:
            _print_summary(results[0][1])
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
    out_dir: Annotated[Path, typer.Option("--out", help="results root")] = results.DEFAULT_ROOT,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON summary object on stdout")] = False,
    warmup: Annotated[float, typer.Option(help="seconds skipped by the metrics")] = 0.0,
    realtime: Annotated[
        bool,
        typer.Option(
            help="precise wake-ups: the forwarder in the SCHED_FIFO class, and a zero CPU-latency "
            "request (/dev/cpu_dma_latency) held for the run, so idle CPUs poll instead of sleeping"
        ),
    ] = True,
) -> None:
    """Run a scenario in real time: the kernel's TCP and real tools (iperf3, ping) between two
    network namespaces, through the scenario's path (needs root). `aqmlab emulate SCENARIO --
    COMMAND...` runs COMMAND on the client side instead ($AQMLAB_SERVER is the server's address,
    where iperf3 and irtt servers wait; the recording covers the scenario's duration or the
    command's run time if shorter)."""
    from aqmlab import emulate as emu

    command = list(ctx.args)
    if not math.isfinite(warmup) or warmup < 0:
        fail(f"--warmup: {warmup} is not allowed; allowed: a number of seconds >= 0")
    if out_dir.exists() and not out_dir.is_dir():
        fail(f"--out: {out_dir} is not a directory; allowed: a directory (created if missing)")
    sc = _scenario(scenario, sets)
    try:
        res, status = emu.emulate(sc, seed=seed, command=command or None, warmup_s=warmup, realtime=realtime)
    except (ScenarioError, emu.EmulationError) as e:
        fail(str(e))
    res.save(out_dir)
    if as_json:
        sys.stdout.write(json.dumps({**res.summary, "run_dir": str(res.path)}, indent=1) + "\n")
    else:
        _print_summary(res)
        em = res.meta["emulated"]
        for problem in em["problems"]:
            err.print(f"warning: {problem}", markup=False)
        out.print(f"emulated on {em['kernel']}; run stored in {res.path}")
    if status:
        raise typer.Exit(code=status)


_TIME_UNITS_S = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def _seconds(value) -> float | None:
    """A resolved duration ("30s", "1500ms", 30) in seconds; None when it is not of that form."""
    if isinstance(value, (int, float)):
        return float(value)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(s|ms|us|ns)\s*", str(value))
    try:
        return float(m.group(1)) * _TIME_UNITS_S[m.group(2)] if m else None
    except ValueError:
        return None


def _qdisc_names() -> list[str]:
    from aqmlab import _core

    return [i["name"] for i in json.loads(_core.qdiscs())]


def _figures(results: list[tuple[str | None, Result]], root: Path) -> list[Path]:
    """The standard figures: queueing delay over time for one run; for a comparison, the CDF of
    probe RTT (or of queueing delay when there are no probes) per discipline."""
    runs = [store.load_run(r.path) for _, r in results]
    if len(runs) == 1:
        r = runs[0]
        kind = "delay_ts" if r.has("packets") else "backlog_ts"
        path = r.path / f"{kind}.png"
        plots.save(plots.figure(kind, runs), path)
        return [path]
    kind = "rtt_cdf" if all(r.summary["probes"] for r in runs) else "delay_cdf"
    path = root / f"compare-{runs[0].meta['name']}-{kind}.png"
    plots.save(plots.figure(kind, runs), path)
    return [path]


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


list_app = typer.Typer(help="List qdiscs, built-in scenarios or experiments.", no_args_is_help=True)
app.add_typer(list_app, name="list")


@list_app.command("qdiscs")
def list_qdiscs(
    name: Annotated[str | None, typer.Argument(help="show one discipline in detail")] = None,
) -> None:
    """Queue disciplines with their parameters, defaults and reference."""
    from aqmlab import _core

    infos = json.loads(_core.qdiscs())
    if name:
        info = next((i for i in infos if i["name"] == name), None)
        if info is None:
            fail(f"unknown qdisc {name!r}; allowed: {', '.join(i['name'] for i in infos)}")
        out.print(
            f"[bold]{esc(info['name'])}[/bold] — {esc(info['summary'])}\nreference: {esc(info['reference'])}"
        )
        t = Table(title="parameters (defaults shown for a 10 Mb/s link)")
        t.add_column("name")
        t.add_column("default", overflow="fold")
        t.add_column("meaning", overflow="fold")
        defaults = info["defaults_at_10mbps"]
        for p in info["params"]:
            t.add_row(esc(p["name"]), esc(json.dumps(defaults.get(p["name"]))), esc(p["help"]))
        out.print(t)
        return
    t = Table(title="queue disciplines")
    for c in ["name", "summary", "parameters (defaults at 10 Mb/s)", "reference"]:
        t.add_column(c, overflow="fold")
    for i in infos:
        params = ", ".join(f"{k}={v}" for k, v in i["defaults_at_10mbps"].items())
        t.add_row(esc(i["name"]), esc(i["summary"]), esc(params), esc(i["reference"]))
    out.print(t)


@list_app.command("tcp")
def list_tcp() -> None:
    """TCP profiles (the flow key `profile`) and the flow keys each one fills in."""
    from aqmlab import _core

    t = Table(title="TCP profiles (flows set `profile`; any key below can still be set alone)")
    for c in ["name", "behaviour", "keys it fills in"]:
        t.add_column(c, overflow="fold")
    for p in json.loads(_core.tcp_profiles()):
        t.add_row(p["name"], p["about"], ", ".join(f"{k}={v}" for k, v in p["keys"].items()))
    out.print(t)


@list_app.command("scenarios")
def list_scenarios() -> None:
    """Built-in scenarios."""
    t = Table(title="built-in scenarios")
    t.add_column("name")
    t.add_column("description", overflow="fold")
    for n in builtin_names():
        t.add_row(esc(n), esc(load(builtin_path(n)).get("description", "")))
    out.print(t)


results.register(app)
sweeps.register(app, list_app)


def entry() -> None:
    app()
