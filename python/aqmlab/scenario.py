"""Scenario files: loading TOML (a path or a built-in name), `--set key.path=value` overrides,
and the hand-off to the Rust core, which validates every key (docs/architecture.md, principle 7).
"""

from __future__ import annotations

import datetime
import json
import math
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from aqmlab import _core, traces


class ScenarioError(ValueError):
    """A scenario that cannot be run; the message names the key, the value and what is allowed."""


MAX_DEPTH = 32
"""Deepest nesting of tables and arrays a scenario may have (the schema needs 6)."""

NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,99}")
"""A scenario name must be usable as part of a run directory name on every file system."""


def key_name(key: Any) -> str:
    """A key as error messages print it: an empty key as `""`, so the path stays visible."""
    return str(key) if str(key) else '""'


def check_values(sc: dict) -> None:
    """Rejects what the core's JSON hand-off or the store cannot carry, naming the key path:
    TOML dates and times, non-finite floats, nesting deeper than MAX_DEPTH, and a ``name`` that
    is not a portable directory name. Iterative, so deep nesting cannot exhaust the stack; a
    value's path is spelled out only for the error (each table or list keeps its parent's)."""
    if not isinstance(sc, dict):
        raise ScenarioError(f"scenario: {type(sc).__name__} is not allowed; allowed: a table")
    stack: list[tuple[Any, tuple | None, int]] = [(sc, None, 0)]
    while stack:
        node, where, depth = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            if depth >= MAX_DEPTH:
                raise ScenarioError(
                    f"{_path((k, where))}: nested deeper than {MAX_DEPTH} levels; not allowed"
                )
            if isinstance(v, (dict, list)):
                stack.append((v, (k, where), depth + 1))
            elif isinstance(v, (datetime.date, datetime.time)):
                raise ScenarioError(
                    f"{_path((k, where))}: {v.isoformat()} is a TOML date/time, not allowed; allowed: a "
                    'number or a string with a unit (e.g. "30s", "10Mbps")'
                )
            elif isinstance(v, float) and not math.isfinite(v):
                raise ScenarioError(f"{_path((k, where))}: {v} is not allowed; allowed: a finite number")
    name = sc.get("name")
    if isinstance(name, str) and not NAME_PATTERN.fullmatch(name):
        raise ScenarioError(
            f"name: {name!r} is not allowed; allowed: 1 to 100 of the characters A-Z a-z 0-9 _ . + -, "
            "not starting with '.', '+' or '-' (it names the run directory)"
        )


def _path(where: tuple) -> str:
    """A key path written as (key, parent's path) pairs, dotted from the top: "flows.0.cc"."""
    keys = []
    while where is not None:
        key, where = where
        keys.append(key_name(key))
    return ".".join(reversed(keys))


def builtin_names() -> list[str]:
    """Names of the scenarios shipped in the package (aqmlab/scenarios/*.toml)."""
    d = resources.files("aqmlab") / "scenarios"
    return sorted(p.name[:-5] for p in d.iterdir() if p.name.endswith(".toml"))


def builtin_path(name: str) -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios" / f"{name}.toml"))


def load(source: str | Path | dict) -> dict:
    """A scenario as a dict: from a dict, a TOML file path, or a built-in scenario name."""
    if isinstance(source, dict):
        return copied(source)
    p = Path(source)
    if not p.exists():
        if str(source) in builtin_names():
            p = builtin_path(str(source))
        else:
            raise ScenarioError(
                f"{source}: no such file or built-in scenario; built-in: {', '.join(builtin_names())}"
            )
    try:
        with open(p, "rb") as f:
            sc = tomllib.load(f)
        sc.setdefault("name", p.stem)
        traces.anchor(sc, p.resolve().parent)
        return sc
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{p}: not valid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{p}: not valid TOML: byte {e.start} is not UTF-8") from None
    except RecursionError:
        raise ScenarioError(f"{p}: not valid TOML: nested deeper than {MAX_DEPTH} levels") from None
    except IsADirectoryError:
        raise ScenarioError(f"{p}: is a directory; allowed: a TOML file") from None
    except OSError as e:
        raise ScenarioError(f"{p}: {e.strerror}") from None


def copied(v: Any) -> Any:
    """A copy of a scenario's tables and lists (a deep copy for what TOML and JSON hold: the
    other values cannot change in place), at a fraction of ``copy.deepcopy``'s cost."""
    if isinstance(v, dict):
        return {k: copied(x) for k, x in v.items()}
    if isinstance(v, list):
        return [copied(x) for x in v]
    return v


def parse_value(text: str) -> Any:
    """A `--set` value: a TOML literal (4, 0.5, true, "x", [..], {..}) or else a bare string.
    TOML's inf and nan are read as the words: no key takes a non-finite number, and "inf" is a
    value some keys document (``topology.nic_rate``)."""
    try:
        v = tomllib.loads(f"v = {text}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        return text
    return text if isinstance(v, float) and not math.isfinite(v) else v


def set_key(sc: dict, path: str, value: Any) -> None:
    """Sets `path` (dotted; list items by index, e.g. flows.0.count) in `sc` to `value`."""
    parts = path.split(".")
    node: Any = sc
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        where = ".".join(key_name(p) for p in parts[: i + 1])
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ScenarioError(f"{where}: no item {part!r}; the list has {len(node)} item(s)")
            if last:
                node[int(part)] = value
            else:
                node = node[int(part)]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                if part not in node or not isinstance(node[part], (dict, list)):
                    # a qdisc given as a name becomes a table when a parameter is set
                    if part == "qdisc" and isinstance(node.get(part), str):
                        node[part] = {"kind": node[part]}
                    else:
                        node[part] = {}
                node = node[part]
        else:
            raise ScenarioError(f"{where}: cannot set a key inside the value {node!r}")


def apply_overrides(sc: dict, overrides: list[str] | dict[str, Any] | None) -> dict:
    """Applies `key.path=value` strings or a {path: value} mapping to a copy of `sc`."""
    sc = copied(sc)
    if not overrides:
        return sc
    items = overrides.items() if isinstance(overrides, dict) else []
    if isinstance(overrides, list):
        pairs = []
        for o in overrides:
            if "=" not in o:
                raise ScenarioError(f"--set {o!r}: expected key.path=value")
            k, v = o.split("=", 1)
            pairs.append((k.strip(), parse_value(v.strip())))
        items = pairs
    for k, v in items:
        set_key(sc, k, v)
    return sc


def for_core(sc: dict) -> str:
    """``sc`` as the core takes it: checked (``check_values``), its trace files read into their
    lines (``traces.inline``), as JSON."""
    check_values(sc)
    try:
        return json.dumps(traces.inline(sc))
    except traces.TraceFileError as e:
        raise ScenarioError(str(e)) from None


def resolve(sc: dict, seed: int | None = None) -> dict:
    """Validates `sc` in the core and returns it with every default written out."""
    text = for_core(sc)
    try:
        return json.loads(_core.resolve(text, seed))
    except ValueError as e:
        raise ScenarioError(str(e)) from None
