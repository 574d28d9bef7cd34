"""`aqmlab schema`: the JSON Schema of the scenario format, checked with an independent validator
(jsonschema, Draft 2020-12) against the core's own parser: every built-in scenario file and its
resolved form pass, and the mistakes the core rejects by key (unknown keys, keys of another flow
kind, bad units, unknown qdiscs and qdisc parameters) the schema rejects too."""

from __future__ import annotations

import copy
import json
import re
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from aqmlab import _core
from aqmlab.cli import app
from aqmlab.scenario import ScenarioError, load, resolve

runner = CliRunner()
SCHEMA = json.loads(_core.schema())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SCENARIO_FILES = sorted(
    p for p in Path(str(resources.files("aqmlab") / "scenarios")).rglob("*.toml") if "topology" in load(p)
)
BASE = {
    "duration": "2s",
    "topology": {"rtt": "20ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
    "flows": [{"kind": "tcp", "direction": "down"}],
}


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.parent.name + "/" + p.name)
def test_every_built_in_scenario_and_its_resolved_form_pass(path: Path) -> None:
    sc = load(path)
    VALIDATOR.validate(sc)
    VALIDATOR.validate(resolve(sc))


def with_change(path: str, value: object) -> dict:
    sc = copy.deepcopy(BASE)
    *parents, last = path.split(".")
    node: object = sc
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
    node[int(last) if isinstance(node, list) else last] = value
    return sc


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("colour", "red"),  # unknown top-level key
        ("flows.0.colour", "red"),  # unknown flow key
        ("flows.0.interval", "20ms"),  # a ping key on a tcp flow
        ("flows.0", {"kind": "webpage", "page": "medium"}),
        ("flows.0", {"kind": "webpage", "persistent": "yes"}),
        ("flows.0.kind", "quic"),
        ("flows.0.cc", "bbr9"),
        ("flows.0", {"kind": "tcp", "cc": "ledbat", "cc_params": {"targte": "25ms"}}),
        ("flows.0", {"kind": "tcp", "cc": "ledbat", "cc_params": {"slow_start": "yes"}}),
        ("flows.0", {"kind": "tcp", "cc": "cubic", "cc_params": {"law": "bic"}}),
        ("flows.0", {"kind": "tcp", "cc": "bbr", "cc_params": {"gain": 2}}),
        ("flows.0.profile", "windows"),
        ("flows.0.hystart", "maybe"),
        ("flows.0.dscp", 64),
        ("flows.0.tso_segs", 65),
        ("flows.0.start", "soon"),
        ("flows.0.start", {"spread": ["0s"]}),
        ("flows.0.start", {"spread": ["0s", "1s"], "per": "flow"}),
        ("duration", "10 minutes"),
        ("duration", 10),
        ("topology.down.rate", "10Mbit"),
        ("topology.down.limit", "100 packets"),
        ("topology.down.qdisc", "codle"),
        ("topology.down.qdisc", {"kind": "codel", "targt": "5ms"}),
        ("topology.nic_rate", "infinite"),
        ("record.level", "everything"),
        # a qdisc parameter of the wrong type: the schema knows each typed key's value type
        ("topology.down.qdisc", {"kind": "pie", "alpha": "fast"}),
        ("topology.down.qdisc", {"kind": "pie", "target": 15}),
        ("topology.down.qdisc", {"kind": "pie", "ecn": "yes"}),
        ("topology.down.qdisc", {"kind": "pie", "profile": "linux99"}),
        ("topology.down.qdisc", {"kind": "pie", "limit": "100 packets"}),
        ("topology.down.qdisc", {"kind": "fq_pie", "dq_threshold": "10 packets"}),
        ("topology.down.qdisc", {"kind": "fq_pie", "flows": "many"}),
        ("topology.down.qdisc", {"kind": "codel", "ce_threshold": "never"}),
        ("topology.down.qdisc", {"kind": "fq_codel", "guard_scope": "host"}),
        ("topology.down.qdisc", {"kind": "fq_codel", "quantum": 300}),
        ("topology.down.qdisc", {"kind": "red", "gentle": "on"}),
        ("topology.down.qdisc", {"kind": "red", "adapt_form": "ns2"}),
        ("topology.down.qdisc", {"kind": "ared", "adapt_interval": 1}),
        ("topology.down.qdisc", {"kind": "sfq", "perturb": True}),
        ("topology.down.qdisc", {"kind": "drr", "quanta": "1500B"}),
        ("topology.down.qdisc", {"kind": "blue", "increment": "0.1"}),
        ("topology.down.qdisc", {"kind": "pfifo_fast", "priomap": [1, 2]}),
    ],
)
def test_what_the_core_rejects_the_schema_rejects(path: str, value: object) -> None:
    sc = with_change(path, value)
    with pytest.raises(ScenarioError):
        resolve(sc)
    assert not VALIDATOR.is_valid(sc), f"{path} = {value!r} passes the schema"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("topology.down.qdisc", {"kind": "codel", "target": "5ms", "interval": "100ms"}),
        ("topology.down.qdisc", "fq_codel"),
        ("topology.down.qdisc", {"kind": "pie", "profile": "pie2013", "dq_threshold": "10p", "hz": 250}),
        ("topology.down.qdisc", {"kind": "fq_pie", "flows": 64, "alpha": 0.25, "first_update": "1s"}),
        ("topology.down.qdisc", {"kind": "codel", "variant": "ns2", "ce_threshold": "off", "mtu": "300B"}),
        (
            "topology.down.qdisc",
            {"kind": "ared", "adapt_form": "ns2", "w_q": "auto10", "min_th_floor": "1514B"},
        ),
        ("topology.down.qdisc", {"kind": "drr", "quanta": ["1500B", "3000B"], "deficit": "linux"}),
        ("flows.0.dscp", "af41"),
        ("flows.0.hystart", False),
        ("flows.0.delack", "40ms"),
        ("flows.0.start", {"uniform": ["0s", "1s"], "per": "flow"}),
        ("flows.0.start", {"spread": ["0.5s", "1.5s"]}),
        ("topology.down.rate", [["0s", "10Mbps"], ["1s", "2Mbps"]]),
        ("topology.nic_rate", "inf"),
        ("flows.0", {"kind": "webpage", "page": "large", "workers": 4, "interval": "2s"}),
        ("flows.0", {"kind": "webpage", "objects": ["10KB", "20KB"], "timeout": "5s"}),
        ("flows.0", {"kind": "webpage", "page": "small", "persistent": False}),
        ("flows.0", {"kind": "tcp", "rtt_spread": "10ms", "rate_halving": True, "profile": "ns2_linux"}),
        ("flows.0", {"kind": "tcp", "cc": "ledbat", "cc_params": {"target": "25ms"}}),
        (
            "flows.0",
            {"kind": "tcp", "cc": "tcp_lp", "cc_params": {"clock": "exact", "uptime_range": ["1s", "2s"]}},
        ),
        ("flows.0", {"kind": "tcp", "cc": "cubic", "cc_params": {"law": "linux_4"}}),
        ("flows.0", {"kind": "tcp", "cc": "bbr", "cc_params": {}}),
    ],
)
def test_what_the_core_accepts_the_schema_accepts(path: str, value: object) -> None:
    sc = with_change(path, value)
    resolve(sc)
    VALIDATOR.validate(sc)


@pytest.mark.parametrize(
    ("defn", "parse"),
    [("Dur", _core.parse_time), ("Limit", _core.parse_limit)],
)
def test_unit_patterns_agree_with_the_parsers(defn: str, parse) -> None:
    pattern = SCHEMA["$defs"][defn]["pattern"]
    spellings = ["5ms", " 1.5s", "0.25 us", ".5s", "10ns ", "+3ms", "5.", "1e3ms", "5", "ms", "-1s", "5 sec"]
    spellings += ["5MS", "1.2.3s", "100p", "1.5p", "150KB", "2 MiB", "1500b", "7kB"]
    spellings += ["1e9s", "2.5E-3 s", "1e+2ms", "1es", "1e", "e3s", "1e3p"]
    for text in spellings:
        try:
            parse(text)
            accepted = True
        except ValueError:
            accepted = False
        if text == "1.5p":  # a fractional packet count: the parser's value check, not the form
            continue
        assert (re.search(pattern, text) is not None) == accepted, text


def test_schema_command_writes_the_schema_and_refuses_a_bad_path(tmp_path: Path) -> None:
    target = tmp_path / "scenario.schema.json"
    r = runner.invoke(app, ["schema", "--output", str(target)])
    assert r.exit_code == 0, r.output
    assert json.loads(target.read_text()) == SCHEMA
    r = runner.invoke(app, ["schema"])
    assert json.loads(r.stdout) == SCHEMA
    r = runner.invoke(app, ["schema", "--output", str(tmp_path / "missing" / "x.json")])
    assert r.exit_code == 2
    assert "--output" in r.output


def test_a_scenario_file_without_a_name_takes_its_file_name(tmp_path: Path) -> None:
    f = tmp_path / "my_path.toml"
    f.write_text(
        'duration = "2s"\n[topology]\nrtt = "20ms"\n'
        'down = { rate = "10Mbps" }\nup = { rate = "10Mbps" }\n[[flows]]\nkind = "tcp"\n'
    )
    assert resolve(load(f))["name"] == "my_path"
    r = runner.invoke(app, ["validate", str(f)])
    assert r.exit_code == 0, r.output
    assert "my_path" in r.output
