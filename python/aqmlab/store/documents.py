"""The JSON documents of a run (scenario.json, meta.json, summary.json) as the store writes them:
sorted keys, numpy scalars and paths as their values, indented when small, synced to disk."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def _json_default(o: Any):
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON-serialisable: {type(o).__name__}")


INDENT_MAX_BYTES = 1 << 20
"""JSON documents up to this size are written indented for reading; larger ones (the scenario
and meta of a run of thousands of flows) on one line, as json's indenting encoder is Python code
several times slower than the compact one (seconds for 10,000 flows)."""


def _compact(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=_json_default)


def _compact_with(doc: dict, texts: dict[str, str]) -> str:
    """``_compact(doc)`` with the values of the keys in ``texts`` given as their text already
    (the resolved scenario, of megabytes, is encoded once for scenario.json and meta.json)."""
    items = (f"{json.dumps(k)}: {texts[k] if k in texts else _compact(doc[k])}" for k in sorted(doc))
    return "{" + ", ".join(items) + "}"


def _dump(path: Path, obj: Any, text: str | None = None) -> None:
    """Writes ``obj`` as JSON (``text``, if given, is its ``_compact`` form)."""
    text = text if text is not None else _compact(obj)
    if len(text) <= INDENT_MAX_BYTES:
        text = json.dumps(obj, indent=2, sort_keys=True, default=_json_default)
    with open(path, "w") as f:
        f.write(text)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
