"""The tables a run records, as the core declares them (record/tables.rs), in storing order: each
table's name, what a row is, the lowest recording level that keeps it, and its columns; and the
default results root.

A module of its own, importing neither DuckDB nor pandas, so that simulating a run (``api``) and
the command line's defaults know these without loading the store.
"""

from __future__ import annotations

import json
from pathlib import Path

from aqmlab import _core

DEFAULT_ROOT = Path("aqmlab-results")
"""Where runs are stored when no root is given (``--out``/``--root``, ``Result.save``)."""

LAYOUT: list[dict] = json.loads(_core.table_layout())
TABLES = tuple(t["name"] for t in LAYOUT)
