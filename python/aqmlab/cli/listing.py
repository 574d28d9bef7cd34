"""`aqmlab list`: the disciplines, congestion controllers, TCP profiles, metrics and built-in scenarios, each a table
read from the core's or the catalogue's declarations (``register`` adds the group to the app; the
experiments are listed by sweeps.py)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape as esc

from aqmlab import columns
from aqmlab.cli.console import FitTable, fail, lazy, out
from aqmlab.metrics import catalogue
from aqmlab.scenario import builtin_names, builtin_path, load

store = lazy("aqmlab.store")


def _registry(
    infos: list[dict], name: str | None, *, what: str, titles: tuple[str, str, str], defaults: str, value=str
) -> None:
    """A registry of the core's (queue disciplines, congestion controllers) as one table, or one
    entry's parameters with their defaults and meanings. ``titles``: the list's title, its
    parameters column and the one entry's table; ``defaults``: the entries' key holding the
    defaults; ``value``: how the list shows a default."""
    if name:
        info = next((i for i in infos if i["name"] == name), None)
        if info is None:
            fail(f"unknown {what} {name!r}; allowed: {', '.join(i['name'] for i in infos)}")
        out.print(
            f"[bold]{esc(info['name'])}[/bold] — {esc(info['summary'])}\nreference: {esc(info['reference'])}"
        )
        if not info["params"]:
            out.print(f"no {titles[2]}")
            return
        t = FitTable(title=titles[2])
        for c in ("name", "default", "meaning"):
            t.add_column(c, overflow="fold")
        for p in info["params"]:
            t.add_row(esc(p["name"]), esc(json.dumps(info[defaults].get(p["name"]))), esc(p["help"]))
        out.print(t)
        return
    t = FitTable(title=titles[0])
    for c in ["name", "summary", titles[1], "reference"]:
        t.add_column(c, overflow="fold")
    for i in infos:
        params = ", ".join(f"{k}={value(v)}" for k, v in i[defaults].items()) or "-"
        t.add_row(esc(i["name"]), esc(i["summary"]), esc(params), esc(i["reference"]))
    out.print(t)


def list_qdiscs(
    name: Annotated[str | None, typer.Argument(help="show one discipline in detail")] = None,
) -> None:
    """Queue disciplines with their parameters, defaults and reference."""
    from aqmlab import _core

    titles = (
        "queue disciplines",
        "parameters (defaults at 10 Mb/s)",
        "parameters (defaults shown for a 10 Mb/s link)",
    )
    _registry(json.loads(_core.qdiscs()), name, what="qdisc", titles=titles, defaults="defaults_at_10mbps")


def list_ccs(
    name: Annotated[str | None, typer.Argument(help="show one controller's `cc_params` in detail")] = None,
) -> None:
    """Congestion controllers (the flow key `cc`) with their `cc_params`, defaults and reference."""
    from aqmlab import _core

    titles = (
        "congestion controllers (the flow key `cc`, docs/transports.md 3)",
        "cc_params (defaults)",
        "cc_params",
    )
    _registry(
        json.loads(_core.ccs()),
        name,
        what="congestion controller",
        titles=titles,
        defaults="defaults",
        value=json.dumps,
    )


def list_tcp() -> None:
    """TCP profiles (the flow key `profile`) and the flow keys each one fills in."""
    from aqmlab import _core

    t = FitTable(title="TCP profiles (flows set `profile`; any key below can still be set alone)")
    for c in ["name", "behaviour", "keys it fills in"]:
        t.add_column(c, overflow="fold")
    for p in json.loads(_core.tcp_profiles()):
        t.add_row(p["name"], p["about"], ", ".join(f"{k}={v}" for k, v in p["keys"].items()))
    cc = [c["name"] for c in json.loads(_core.ccs())]
    t.caption = f"congestion controllers (the flow key `cc`, `aqmlab list ccs`): {', '.join(cc)}"
    out.print(t)


def list_metrics() -> None:
    """Every key of a run summary (`aqmlab run --json`) and every column of the runs catalog,
    with its definition, unit and window."""
    for title, rows in (
        ("run summary keys (aqmlab run --json, show --json)", catalogue.SUMMARY_METRICS),
        ("runs catalog columns (aqmlab runs, query)", columns.catalog_metrics(store.RUN_COLUMNS)),
    ):
        t = FitTable(title=title)
        for c in ("key", "definition", "unit", "window"):
            t.add_column(c, overflow="fold")
        for k, (definition, unit, window) in rows.items():
            t.add_row(esc(k), esc(definition), esc(unit), esc(window))
        out.print(t)
    out.print(f"probe loss: {catalogue.IN_FLIGHT_RULE}", markup=False)


def list_scenarios() -> None:
    """Built-in scenarios."""
    t = FitTable(title="built-in scenarios")
    t.add_column("name")
    t.add_column("description", overflow="fold")
    for n in builtin_names():
        t.add_row(esc(n), esc(load(builtin_path(n)).get("description", "")))
    out.print(t)


def register(app: typer.Typer) -> typer.Typer:
    """Adds `aqmlab list` and its commands to ``app``; returns the group (others add to it)."""
    list_app = typer.Typer(help="List qdiscs, built-in scenarios or experiments.", no_args_is_help=True)
    app.add_typer(list_app, name="list")
    list_app.command("qdiscs")(list_qdiscs)
    list_app.command("ccs")(list_ccs)
    list_app.command("tcp")(list_tcp)
    list_app.command("metrics")(list_metrics)
    list_app.command("scenarios")(list_scenarios)
    return list_app
