"""Two runs side by side, for "what did my change do": the keys of the resolved scenarios that
differ (dotted as ``--set`` writes them, list items by index), and every catalog value of the two summaries with the
difference (``catalogue.CATALOG_COLUMNS``: the metrics are declared there, once)."""

from __future__ import annotations

from dataclasses import dataclass

from aqmlab.metrics import catalogue


def scenario_changes(a, b, prefix: str = "") -> list[tuple[str, object, object]]:
    """The keys whose values differ between two resolved scenarios, in order (None: absent). A
    table of another ``kind`` (a discipline, a congestion controller's block) is one change,
    named by its kinds: its keys are that kind's own."""
    if isinstance(a, dict) and isinstance(b, dict) and a.get("kind") == b.get("kind"):
        keys = list(a) + [k for k in b if k not in a]
        return [
            c for k in keys for c in scenario_changes(a.get(k), b.get(k), f"{prefix}.{k}" if prefix else k)
        ]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [c for i, (x, y) in enumerate(zip(a, b)) for c in scenario_changes(x, y, f"{prefix}.{i}")]
    if a == b:
        return []
    kind = lambda v: v.get("kind") if isinstance(v, dict) else v
    return [(prefix, kind(a), kind(b))]


@dataclass(frozen=True)
class Change:
    """One catalog value of two runs: ``b - a`` and, where ``a`` is not 0, ``(b - a) / |a|``."""

    column: str
    label: str
    unit: str
    a: object
    b: object

    @property
    def delta(self) -> float | None:
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (self.a, self.b))
        return float(self.b) - float(self.a) if numeric else None

    @property
    def relative(self) -> float | None:
        d = self.delta
        return None if d is None or not self.a else d / abs(float(self.a))


def summary_changes(a: dict, b: dict) -> list[Change]:
    """Every catalog value either summary has, the pair side by side (catalog order)."""
    va, vb = catalogue.catalog_values(a), catalogue.catalog_values(b)
    return [Change(name, c.label, c.unit, va.get(name), vb.get(name))
            for name, c in catalogue.CATALOG_COLUMNS.items()
            if va.get(name) is not None or vb.get(name) is not None]  # fmt: skip
