"""The printed tables name only summary keys the catalogue declares: each table view is rendered
over a run's summary that records every key read from it, and each key read must match a
declared pattern (``columns.summary_metric``), so a view cannot drift from the catalogue."""

from __future__ import annotations

import dataclasses
import io

import pytest
from rich.console import Console

from aqmlab import api, columns, report, store
from aqmlab.cli import results, summary
from aqmlab.metrics import catalogue

SCENARIO = {
    "name": "views",
    "duration": "4s",
    "topology": {"rtt": "40ms", "down": {"rate": "4Mbps", "qdisc": "fq_codel"},
                 "up": {"rate": "1Mbps", "qdisc": "pfifo", "limit": "20p"}},
    "flows": [{"kind": "tcp", "direction": "down", "bytes": "400KB"}, {"kind": "tcp", "direction": "up"},
              {"kind": "voip"}, {"kind": "ping", "interval": "50ms"}],
}  # fmt: skip


class Recorded(dict):
    """A summary block that notes the dotted path of every key read from it in ``seen``."""

    def __init__(self, d: dict, path: str, seen: set[str]):
        super().__init__(d)
        self.path, self.seen = path, seen

    def _wrap(self, key, value):
        path = f"{self.path}.{key}" if self.path else str(key)
        return wrap(value, path, self.seen)

    def __getitem__(self, key):
        return self._wrap(key, super().__getitem__(key))

    def get(self, key, default=None):
        if key not in self:
            self.seen.add(f"{self.path}.{key}" if self.path else str(key))
            return default
        return self[key]

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def values(self):
        return [self[k] for k in self.keys()]


def wrap(value, path: str, seen: set[str]):
    if isinstance(value, dict):
        return Recorded(value, path, seen)
    if isinstance(value, list):
        return [wrap(v, f"{path}[{i}]", seen) for i, v in enumerate(value)]
    seen.add(path)
    return value


@pytest.fixture(scope="module")
def run():
    return api.run_dict(SCENARIO, 1, warmup_s=0.5)


def rendered(run, draw) -> set[str]:
    """The summary keys ``draw(recorded run)`` reads."""
    seen: set[str] = set()
    draw(dataclasses.replace(run, summary=wrap(run.summary, "", seen)))
    return seen


def printing(table_of):
    return lambda r: Console(file=io.StringIO(), width=300).print(table_of(r))


VIEWS = {
    "aqmlab run": lambda r: summary.print_summary(r),
    "comparison": printing(lambda r: summary.compare_table([("a", r), ("b", r)])),
    "aqmlab show (probes)": printing(lambda r: results.probe_table(r.summary["probes"], str)),
    "report": lambda r: report.summary_tables(r),
    "Result.table": lambda r: r.table(),
    "runs catalog": lambda r: store.flatten_summary(r.summary, r.meta),
}


@pytest.mark.parametrize("view", VIEWS)
def test_every_key_a_view_reads_is_in_the_catalogue(run, view, monkeypatch):
    monkeypatch.setattr(summary, "out", Console(file=io.StringIO(), width=300))
    seen = rendered(run, VIEWS[view])
    assert seen, view
    undeclared = sorted(k for k in seen if columns.summary_metric(k) is None)
    assert undeclared == [], f"{view} reads keys the catalogue lacks: {undeclared}"


def test_every_declared_view_column_is_a_catalogue_key(run):
    for block, views in catalogue.VIEWS.items():
        concrete = block.replace("HOP", "down").replace("[i]", "[0]")
        for v in views:
            assert columns.summary_metric(f"{concrete}.{v.key}") is not None, (block, v.key)
    assert {v.header for v in catalogue.LINK_VIEW} <= {v.header for v in catalogue.LINK_DETAIL_VIEW}
    # the first probe stream's columns of `aqmlab run --qdisc`, a {d} column once per direction
    for v in catalogue.COMPARE_PROBE_VIEW:
        for d in catalogue.DIRECTIONS:
            assert columns.summary_metric(f"probes[0].{v.key.format(d=d)}") is not None, v.key


def test_every_column_a_table_of_runs_shows_is_read_from_a_catalogue_key():
    # the table of several runs (report, `aqmlab run --qdisc`) shows catalog columns: each is
    # filled from a declared summary key, in each direction
    for c in catalogue.SIDE_BY_SIDE:
        for d in catalogue.DIRECTIONS:
            name = columns.in_direction(c.format(d=d), d)
            source = catalogue.catalog_source(name)
            assert source is not None and name in store.RUN_COLUMNS, name
            assert columns.summary_metric(source.replace("[i]", "[0]")) is not None, (name, source)


def test_probe_loss_is_a_percentage_in_every_table():
    # the comparison table printed it as a percentage, the probe table (run, show, report) as a
    # fraction: 29.0 beside 0.29 for the same stream
    from aqmlab.metrics import catalogue

    (loss,) = [v for v in catalogue.PROBE_VIEW if v.key == "loss"]
    assert loss.header.endswith("%") and loss.value({"loss": 0.29}) == pytest.approx(29.0)
