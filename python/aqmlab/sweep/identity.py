"""The identities of a sweep's runs: its grid points, each run's seed, and each run's id, the
content address that decides whether a run is already stored (see the package docstring).

Seeds: the first 63 bits of BLAKE2b("<sweep seed>|<canonical JSON of the point's values of the
seed keys>|<replication>") (``run_seed``). Run id: ``<name>-<16 hex of sha256(resolved scenario
JSON, seed, code version, metric code)>`` (``run_id_for``).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import cache
from typing import Any

PARAM_PREFIX = "params."


@dataclass
class Point:
    """One grid point: its overrides (dotted key -> value) and labels (``params.NAME``)."""

    index: int
    overrides: dict[str, Any]
    labels: dict[str, Any]
    scenario: dict = field(default_factory=dict)  # base + set + overrides (unresolved)
    resolved_digest: str = ""

    @property
    def params(self) -> dict[str, Any]:
        """What is stored as meta['params']: labels by name, overrides by dotted key."""
        return {**self.overrides, **self.labels}


def run_seed(seed: int, seed_from: list[str] | None, point: Point, rep: int) -> int:
    """The seed of replication ``rep`` of ``point`` in a sweep of seed ``seed``, from the point's
    values of the keys ``seed_from`` (all of them when None)."""
    if seed_from is None:
        basis = {"overrides": point.overrides, "labels": point.labels}
    else:
        allv = {**point.overrides, **{PARAM_PREFIX + k: v for k, v in point.labels.items()}}
        basis = {k: allv.get(k) for k in seed_from}
    text = f"{seed}|{_canon(basis)}|{rep}"
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") >> 1


def _canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(name)) or "sweep"


@cache
def code_version() -> str:
    """Package version + digest of the compiled core (a rebuilt core changes run ids)."""
    from aqmlab import _core

    h = hashlib.sha256()
    try:
        with open(_core.__file__, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except (OSError, AttributeError, TypeError):
        h.update(b"?")
    return f"{_core.__version__}+{h.hexdigest()[:12]}"


METRIC_MODULES = (
    *(f"aqmlab.metrics{m}" for m in ("", ".base", ".queue", ".flows", ".probes", ".summary", ".catalogue")),
    "aqmlab.runtables",
)
"""The modules whose code computes the numbers a run's row carries (its summary)."""


@cache
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def metrics_version(metrics_fn: str | None = None) -> str:
    """Digest of the source of METRIC_MODULES and of the module of an experiment's per-run
    metric function ("module:function"): a changed metric changes every run id, so a results
    root reused across the change recomputes instead of keeping the old values."""
    import importlib.util

    h = hashlib.sha256()
    for mod in (*METRIC_MODULES, *([metrics_fn.split(":")[0]] if metrics_fn else [])):
        origin = getattr(importlib.util.find_spec(mod), "origin", None)
        st = os.stat(origin) if origin and os.path.isfile(origin) else None
        h.update((_file_digest(origin, st.st_mtime_ns, st.st_size) if st else mod).encode())
    return h.hexdigest()[:12]


def run_id_for(name: str, resolved_digest: str, seed: int, metrics_fn: str | None = None) -> str:
    """Content address of a run: resolved scenario, seed, code version, the metric code
    (``metrics_version``) and the per-run metric function of an experiment, whose results the
    run's row carries."""
    key = f"{resolved_digest}|{seed}|{code_version()}|{metrics_version(metrics_fn)}" + (
        f"|{metrics_fn}" if metrics_fn else ""
    )
    h = hashlib.sha256(key.encode()).hexdigest()[:16]
    return f"{_safe(name)}-{h}"


def toml_literal(v: Any) -> str:
    """A value as a TOML literal for ``--set`` (parse_value reads it back to the same value)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_literal(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_literal(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def reproduce_command(base: str, sets: dict[str, Any], seed: int) -> str:
    """The `aqmlab run` command line that reruns one run of a sweep alone: its ``base`` scenario
    with the overrides ``sets`` (the sweep's and its point's) and its seed."""
    import shlex

    parts = ["aqmlab", "run", shlex.quote(base)]
    for k, v in sets.items():
        parts += ["--set", shlex.quote(f"{k}={toml_literal(v)}")]
    parts += ["--seed", str(seed)]
    return " ".join(parts)
