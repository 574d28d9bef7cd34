"""The metric catalogue (aqmlab.metrics.catalogue): every key a real `aqmlab run --json` prints and every
`runs` column has a definition, a unit and a window; `aqmlab list metrics` and docs/metrics.md
come from the same declarations; `show --json`, the catalog and the HTML report carry the VoIP
numbers of the summary; the summary is versioned and CHANGELOG.md records the changes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aqmlab import api, columns, metrics, store
from aqmlab.cli import app
from aqmlab.metrics import catalogue, summary

runner = CliRunner()
REPO = Path(__file__).parents[2]

SCENARIO = """
name = "catalogue"
duration = "6s"
[topology]
rtt = "40ms"
down = { rate = "4Mbps", qdisc = "fq_codel" }
up = { rate = "1Mbps", qdisc = "pfifo", limit = "20p" }
[[flows]]
kind = "tcp"
direction = "down"
bytes = "400KB"
[[flows]]
kind = "tcp"
direction = "up"
[[flows]]
kind = "voip"
[[flows]]
kind = "ping"
interval = "50ms"
[[flows]]
kind = "web"
conn_rate = 2
[[flows]]
kind = "webpage"
page = "small"
interval = "2s"
"""


def keys(d, prefix: str = "") -> list[str]:
    """The leaf keys of a JSON document as dotted paths, list items as [i]."""
    if isinstance(d, dict):
        return [k for name, v in d.items() for k in keys(v, f"{prefix}.{name}" if prefix else name)]
    if isinstance(d, list):
        return [k for i, v in enumerate(d) for k in keys(v, f"{prefix}[{i}]")]
    return [prefix]


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> tuple[dict, Path]:
    tmp = tmp_path_factory.mktemp("cat")
    sc = tmp / "s.toml"
    sc.write_text(SCENARIO)
    res = runner.invoke(
        app, ["run", str(sc), "--json", "--no-plot", "--out", str(tmp / "r"), "--warmup", "1"]
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), tmp / "r"


def test_every_key_run_json_prints_has_a_definition_unit_and_window(printed):
    doc, _ = printed
    found = keys(doc)
    # the scenario exercises every block: links with drops, flows, web, webpage, two probe streams
    for block in ("links.down.drops_by_reason.", "flows[1].", "web.", "webpage.", "probes[1].", "jitter_ms"):
        assert any(block in k for k in found), block
    undeclared = [k for k in found if columns.summary_metric(k) is None]
    assert undeclared == [], f"declare these keys in aqmlab.metrics.catalogue.CATALOGUE: {undeclared}"
    for k in found:
        definition, _unit, window = columns.summary_metric(k)
        assert definition and window in (catalogue.WINDOW, "run", "-"), k


def test_every_catalog_column_has_its_definition():
    for column, (definition, unit, window) in columns.catalog_metrics(store.RUN_COLUMNS).items():
        assert definition and "?" not in (definition, window), column
        assert unit == columns.unit(column) or not columns.unit(column), (column, unit)


def test_list_metrics_prints_every_declaration():
    res = runner.invoke(app, ["list", "metrics"])
    assert res.exit_code == 0, res.output
    text = re.sub(r"\s+", "", res.output)
    for key in [*catalogue.SUMMARY_METRICS, *store.RUN_COLUMNS]:
        assert key.replace(" ", "") in text, key


def test_docs_metrics_md_is_generated_from_the_declarations():
    doc = (REPO / "docs" / "metrics.md").read_text()
    assert doc == columns.metrics_markdown(store.RUN_COLUMNS), (
        "docs/metrics.md is stale: regenerate it with "
        "python -c 'from aqmlab import columns, store; print(columns.metrics_markdown(store.RUN_COLUMNS), end=\"\")'"
    )


def test_show_json_is_the_stored_summary(printed):
    doc, root = printed
    run_dir = Path(doc["run_dir"])
    res = runner.invoke(app, ["show", run_dir.name, "--root", str(root), "--json"])
    assert res.exit_code == 0, res.output
    shown = json.loads(res.stdout)
    assert shown == {**json.loads((run_dir / "summary.json").read_text()), "run_dir": str(run_dir)}
    assert shown == json.loads(json.dumps(doc))  # the same document run --json printed


def test_show_and_the_catalog_carry_the_voip_numbers(printed):
    doc, root = printed
    p0 = doc["probes"][0]
    res = runner.invoke(app, ["show", Path(doc["run_dir"]).name, "--root", str(root)])
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert "jitter" in flat and "in flight" in flat
    for v in (p0["jitter_ms"]["down"], p0["owd_ms"]["up"]["p99"], p0["owd_ms"]["down"]["p95"]):
        assert f"{v:.4g}" in res.output
    row = store.query(root, "SELECT * FROM runs").iloc[0]
    first = [
        (m, c) for m in catalogue.CATALOGUE if m.key.startswith("probes[i].") for c in m.columns if not c.how
    ]
    assert len(first) == 10
    for m, c in first:
        path = (m.key.split(".")[1], *c.path)
        assert row[c.name] == pytest.approx(catalogue.value_at(p0, path)), c.name


def test_the_report_has_the_voip_section(printed, tmp_path):
    doc, root = printed
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", Path(doc["run_dir"]).name, "--root", str(root), "-o", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text()
    assert "Latency probes (VoIP, ping)" in html
    for v in catalogue.PROBE_VIEW:
        assert f"<th>{v.header}</th>" in html
    j = doc["probes"][0]["jitter_ms"]["down"]
    assert f"<td>{j:.4g}</td>" in html


def test_the_summary_is_versioned_and_the_changelog_records_the_renames(printed):
    doc, _ = printed
    assert doc["schema_version"] == metrics.SUMMARY_SCHEMA_VERSION
    log = (REPO / "CHANGELOG.md").read_text()
    assert f"schema_version {metrics.SUMMARY_SCHEMA_VERSION}" in log
    # each renamed or removed key is named with its replacement
    assert "links.HOP.delivered" in log and "links.HOP.transmitted" in log
    assert "probes[i].jitter_ms" in log and "probes[i].ipdv_ms" in log


def test_every_key_has_a_rule_and_only_the_printed_run_dir_is_added_outside_summarize():
    for m in catalogue.CATALOGUE:
        assert callable(m.compute) or m.key == "run_dir", m.key
    assert catalogue.CATALOGUE[[m.key for m in catalogue.CATALOGUE].index("run_dir")].compute is None


@pytest.fixture(scope="module")
def special(tmp_path_factory) -> list[dict]:
    """Summaries of runs with the keys only some hops have: dualpi2's sub-queues (``queues``),
    WiFi stations' airtime, with and without the packets table."""
    runs = [
        api.run("l4s", seed=1, duration="1s", warmup_s=0.5),
        api.run("wifi_anomaly", seed=1, duration="1s"),
    ]
    series = api.run("l4s", seed=1, duration="1s", record__level="series")
    return [r.summary for r in (*runs, series)]


def test_every_declared_key_is_in_a_summary(printed, special):
    # the other way round from test_every_key_run_json_prints_has_a_definition_unit_and_window:
    # no declaration is left that summarize never writes
    found = {k for doc in (printed[0], *special) for k in keys(doc)}
    for pattern in catalogue.SUMMARY_METRICS:
        matches = [k for k in found if columns._pattern_re(pattern).fullmatch(k)]
        assert matches, f"{pattern} is declared but no summary has it"
    sub = special[2]["links"]["down"]["queues"]["l"]  # no packets table: the sub-queue keeps no counts
    assert sub["drops"] is None and sub["queue_delay_ms"]["p50"] is None


def test_a_summary_s_blocks_hold_their_keys_in_catalogue_order(printed):
    doc, _ = printed
    order = [m.key for m in catalogue.CATALOGUE]

    def first(prefix: str, name: str) -> int:
        return next(i for i, k in enumerate(order) if k.startswith(f"{prefix}{name}"))

    for prefix, block in (("", doc), ("links.HOP.", doc["links"]["down"]), ("flows[i].", doc["flows"][0]),
                          ("probes[i].", doc["probes"][0]), ("webpage.", doc["webpage"])):  # fmt: skip
        names = [n for n in block if n != "run_dir"]
        assert names == sorted(names, key=lambda n: first(prefix, n)), prefix


def test_a_key_declared_twice_in_a_block_is_refused():
    twice = (*catalogue.CATALOGUE, catalogue.Metric("links.HOP.drops.{a,b}", "again", compute=lambda a: 0))
    with pytest.raises(ValueError, match="declared twice"):
        summary._layout(twice)
    with pytest.raises(ValueError, match="fixed name"):
        summary._layout((catalogue.Metric("links.HOP.{a,b}", "no name", compute=lambda a: 0),))


def test_the_catalog_columns_are_the_catalogue_s_columns():
    declared = {c.name for m in catalogue.CATALOGUE for c in m.columns}
    for column in catalogue.CATALOG_COLUMNS:
        assert column.removeprefix("up_") in declared, column
        assert column in store.RUN_COLUMNS and catalogue.catalog_source(column), column
