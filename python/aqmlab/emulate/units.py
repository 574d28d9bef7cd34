"""The resolved scenario's quantities as the tools take them: times in ns, sizes in bytes, rates
in bit/s."""

from __future__ import annotations

import re

from aqmlab.scenario import ScenarioError

_UNIT_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _ns(value) -> int:
    """A resolved time ("50ms", 30, "1.5s") in ns."""
    if isinstance(value, (int, float)):
        return round(value * 1e9)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(ns|us|ms|s)\s*", str(value))
    if not m:
        raise ScenarioError(f"{value!r} is not a time")
    return round(float(m.group(1)) * _UNIT_NS[m.group(2)])


def _bytes(v) -> int:
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMG]?)i?B?\s*", str(v))
    return round(float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]) if m else int(v)


def _rate(v) -> int:
    m = re.fullmatch(r"\s*([0-9.]+)\s*([kKMG]?)bps\s*", str(v))
    return (
        round(float(m.group(1)) * {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)])
        if m
        else int(v)
    )
