"""The sweep definition: a sweep file (TOML) or dict read and checked (``parse_sweep``), a base
scenario with ``set`` overrides, ``grid`` axes crossed and ``zip`` axes advancing together, each
value checked against the base scenario; ``--qdisc`` as a case axis (``with_qdiscs``)."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aqmlab.scenario import ScenarioError, apply_overrides, load, resolve
from aqmlab.sweep.identity import PARAM_PREFIX, Point, _canon, _safe, run_seed

SWEEP_KEYS = ("base", "name", "description", "seed", "reps", "seed_from", "set", "grid", "zip")


class SweepError(ValueError):
    """A sweep file or option that cannot be run; the message names the key and the value."""


@dataclass
class SweepSpec:
    base: str  # path or built-in name, as given (relative paths resolved against the sweep file)
    base_scenario: dict
    name: str
    description: str = ""
    seed: int = 1
    reps: int = 1
    seed_from: list[str] | None = None
    fixed: dict[str, Any] = field(default_factory=dict)
    axes: list[dict[str, list]] = field(default_factory=list)  # each axis: key -> values (zipped)
    # run only the points whose label/override values are in these lists (not part of the id)
    select: dict[str, list] = field(default_factory=dict)

    def points(self) -> list[Point]:
        """The grid points in a fixed order (axes crossed, last axis fastest), after ``select``."""
        return [p for p in self.all_points() if self._selected(p)]

    def _selected(self, p: Point) -> bool:
        vals = {**p.overrides, **{PARAM_PREFIX + k: v for k, v in p.labels.items()}}
        return all(vals.get(k) in allowed for k, allowed in self.select.items())

    def all_points(self) -> list[Point]:
        ranges = [range(len(next(iter(a.values())))) for a in self.axes]
        out = []
        for idx, combo in enumerate(itertools.product(*ranges)):
            ov: dict[str, Any] = {}
            lab: dict[str, Any] = {}
            for axis, i in zip(self.axes, combo, strict=True):
                for k, vals in axis.items():
                    if k.startswith(PARAM_PREFIX):
                        lab[k[len(PARAM_PREFIX) :]] = vals[i]
                    else:
                        ov[k] = vals[i]
            sc = apply_overrides(apply_overrides(self.base_scenario, self.fixed), ov)
            out.append(Point(idx, ov, lab, sc))
        return out

    def seed_for(self, point: Point, rep: int) -> int:
        """The derived run seed (``run_seed``)."""
        return run_seed(self.seed, self.seed_from, point, rep)

    def sweep_id(self) -> str:
        d = _canon({"base": self.base_scenario, "set": self.fixed, "axes": self.axes, "seed": self.seed,
                    "seed_from": self.seed_from})  # fmt: skip
        return f"{_safe(self.name)}-{hashlib.sha256(d.encode()).hexdigest()[:10]}"

    def to_json(self) -> dict:
        return {"base": self.base, "name": self.name, "description": self.description, "seed": self.seed,
                "reps": self.reps, "seed_from": self.seed_from, "set": self.fixed, "axes": self.axes}  # fmt: skip


def _flatten(prefix: str, obj: Any, out: dict[str, Any], where: str) -> None:
    """Dotted key -> list of values; TOML sub-tables (unquoted dotted keys) are walked."""
    if isinstance(obj, dict):
        if not obj:
            raise SweepError(f"{where}.{prefix}: empty table; expected a list of values")
        for k, v in obj.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out, where)
    else:
        if not isinstance(obj, list) or not obj:
            raise SweepError(f"{where}.{prefix}: expected a non-empty list of values, got {_show(obj)}")
        out[prefix] = obj


def _show(v: Any) -> str:
    s = json.dumps(v, default=str) if not isinstance(v, str) else repr(v)
    return s if len(s) <= 80 else s[:77] + "..."


def _check_value(base: dict, key: str, value: Any, where: str) -> None:
    _check_values(base, {key: value}, where)


def _check_values(base: dict, values: dict[str, Any], where: str) -> None:
    """The scenario with ``values`` (key -> value, applied together) must resolve."""
    for key in values:
        if key.startswith(PARAM_PREFIX) and (not key[len(PARAM_PREFIX) :] or "." in key[len(PARAM_PREFIX) :]):
            raise SweepError(f"{where}.{key}: a label key is params.NAME (one name)")
    ov = {k: v for k, v in values.items() if not k.startswith(PARAM_PREFIX)}
    if not ov:
        return
    try:
        resolve(apply_overrides(base, ov))
    except ScenarioError as e:
        shown = ", ".join(f"{where}.{k} = {_show(v)}" for k, v in ov.items())
        raise SweepError(f"{shown}: {e}") from None


def parse_sweep(source: str | Path | dict, base_dir: Path | None = None) -> SweepSpec:
    """A SweepSpec from a sweep TOML file or dict. Raises SweepError naming the bad key/value."""
    import tomllib

    if isinstance(source, dict):
        doc = copy.deepcopy(source)
        base_dir = base_dir or Path.cwd()
    else:
        p = Path(source)
        try:
            with open(p, "rb") as f:
                doc = tomllib.load(f)
        except FileNotFoundError:
            raise SweepError(f"{p}: no such sweep file") from None
        except tomllib.TOMLDecodeError as e:
            raise SweepError(f"{p}: not valid TOML: {e}") from None
        base_dir = p.resolve().parent
    unknown = [k for k in doc if k not in SWEEP_KEYS]
    if unknown:
        raise SweepError(f"unknown key {unknown[0]!r} in the sweep file; allowed: {', '.join(SWEEP_KEYS)}")
    if "base" not in doc:
        raise SweepError("base: missing; name the base scenario (a path or a built-in name)")
    base = doc["base"]
    if not isinstance(base, str):
        raise SweepError(f"base = {_show(base)}: expected a path or a built-in scenario name")
    cand = base_dir / base
    base_ref = str(cand.resolve()) if cand.exists() else base
    try:
        base_sc = load(base_ref)
    except ScenarioError as e:
        raise SweepError(f"base = {base!r}: {e}") from None
    seed = doc.get("seed", 1)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SweepError(f"seed = {_show(seed)}: expected an integer >= 0")
    reps = doc.get("reps", 1)
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        raise SweepError(f"reps = {_show(reps)}: must be an integer >= 1")
    fixed: dict[str, Any] = {}
    st = doc.get("set", {})
    if not isinstance(st, dict):
        raise SweepError(f"set = {_show(st)}: expected a table of key = value")
    _flatten_fixed("", st, fixed)
    for k, v in fixed.items():
        _check_value(base_sc, k, v, "set")
    base_fixed = apply_overrides(base_sc, fixed)
    axes: list[dict[str, list]] = []
    grid = doc.get("grid", {})
    if not isinstance(grid, dict):
        raise SweepError(f"grid = {_show(grid)}: expected a table of key = [values]")
    flat: dict[str, Any] = {}
    if grid:
        _flatten("", grid, flat, "grid")
    for k, vals in flat.items():
        axes.append({k: vals})
    zips = doc.get("zip", [])
    if isinstance(zips, dict):
        zips = [zips]
    if not isinstance(zips, list) or not all(isinstance(z, dict) for z in zips):
        raise SweepError(f"zip = {_show(zips)}: expected [zip] or [[zip]] tables of key = [values]")
    for i, z in enumerate(zips):
        where = "zip" if len(zips) == 1 else f"zip[{i}]"
        zf: dict[str, Any] = {}
        _flatten("", z, zf, where)
        lens = {k: len(v) for k, v in zf.items()}
        if len(set(lens.values())) > 1:
            (k0, n0), (k1, n1) = next(
                ((a, b) for a, b in itertools.combinations(lens.items(), 2) if a[1] != b[1])
            )
            raise SweepError(f"{where}: lists of different lengths: {k0} has {n0} values, {k1} has {n1}")
        axes.append(zf)
    seen: set[str] = set()
    for a in axes:
        for k in a:
            if k in seen:
                raise SweepError(f"{k}: appears in more than one grid/zip axis")
            seen.add(k)
    for a in axes:
        if len(a) == 1:
            for k, vals in a.items():
                for v in vals:
                    _check_value(base_fixed, k, v, "grid" if k in flat else "zip")
            continue
        # A zip's values at one position are applied together (a flow's cc with its cc_params).
        for i in range(len(next(iter(a.values())))):
            _check_values(base_fixed, {k: vals[i] for k, vals in a.items()}, "zip")
    seed_from = doc.get("seed_from")
    if seed_from is not None:
        if not isinstance(seed_from, list) or not all(isinstance(s, str) for s in seed_from):
            raise SweepError(f"seed_from = {_show(seed_from)}: expected a list of grid keys")
        for s in seed_from:
            if s not in seen:
                raise SweepError(
                    f"seed_from: {s!r} is not a grid or zip key; keys: {', '.join(sorted(seen))}"
                )
    name = doc.get("name", base_sc.get("name", "sweep"))
    return SweepSpec(
        base=base_ref, base_scenario=base_sc, name=str(name), description=str(doc.get("description", "")),
        seed=seed, reps=reps, seed_from=seed_from, fixed=fixed, axes=axes,
    )  # fmt: skip


def _flatten_fixed(prefix: str, obj: dict, out: dict[str, Any]) -> None:
    for k, v in obj.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and not key.endswith("qdisc") and not key.endswith("start"):
            _flatten_fixed(key, v, out)
        else:
            out[key] = v


QDISC_LABEL = PARAM_PREFIX + "qdisc"


def builtin_qdiscs() -> list[str]:
    from aqmlab import _core

    return [i["name"] for i in json.loads(_core.qdiscs())]


def with_qdiscs(spec: SweepSpec, names: list[str]) -> list[str]:
    """``--qdisc``: runs only these disciplines. A name among the sweep's own cases (its
    ``params.qdisc`` axis) selects that case; any other built-in discipline or ``module:Class`` (a
    discipline written in Python) becomes a new case of that axis, with its default parameters on
    the axis's qdisc keys. A sweep without such an axis gets one (both directions, as
    ``aqmlab run --qdisc``). Returns the cases added."""
    from aqmlab import pyqdisc

    axis = next((a for a in spec.axes if QDISC_LABEL in a), None)
    own = list(axis[QDISC_LABEL]) if axis else []
    known = builtin_qdiscs()
    bad = [n for n in names if n not in own and n not in known and not pyqdisc.is_class_path(n)]
    if bad or not names:
        raise SweepError(f"--qdisc: {bad[0] if bad else ''!r} is not allowed; allowed: "
                         f"{', '.join(dict.fromkeys(own + known))} or module:Class")  # fmt: skip
    added = [n for n in names if n not in own]
    table = {n: pyqdisc.qdisc_table(n) if pyqdisc.is_class_path(n) else {"kind": n} for n in added}
    if axis is None:
        spec.axes.append({QDISC_LABEL: added, **{f"topology.{d}.qdisc": [table[n] for n in added]
                                                  for d in ("down", "up")}})  # fmt: skip
    elif added:
        others = [k for k in axis if k != QDISC_LABEL and not k.endswith(".qdisc")]
        if others:
            raise SweepError(f"--qdisc {added[0]!r}: cannot be added as a case: the sweep's qdisc axis "
                             f"also sets {', '.join(others)}")  # fmt: skip
        for k in axis:
            axis[k] = [*axis[k], *(n if k == QDISC_LABEL else table[n] for n in added)]
    spec.select[QDISC_LABEL] = list(names)
    return added
