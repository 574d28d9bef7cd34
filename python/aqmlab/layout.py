"""The tables a run records, as the core declares them (record/tables.rs), in storing order: each
table's name, what a row is, the lowest recording level that keeps it, and its columns.

A module of its own, importing neither DuckDB nor pandas, so that simulating a run (``api``)
knows the tables without loading the store.
"""

from __future__ import annotations

import json

from aqmlab import _core

LAYOUT: list[dict] = json.loads(_core.table_layout())
TABLES = tuple(t["name"] for t in LAYOUT)
