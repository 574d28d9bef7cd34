"""What importing the package's modules costs: simulating a run (``aqmlab.api``) loads neither
DuckDB nor pandas, which only storing and reading results need (``aqmlab.store``)."""

from __future__ import annotations

import subprocess
import sys

SIMULATE = """
import sys

class Absent:  # pandas and DuckDB cannot be imported: pyarrow then converts without pandas
    def find_spec(self, name, path=None, target=None):
        if {block} and name.partition(".")[0] in ("pandas", "duckdb"):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)

sys.meta_path.insert(0, Absent())
from aqmlab import api

res = api.run("bufferbloat", seed=1, duration="1s")
assert res.summary["links"], res.summary
print(" ".join(sorted(m for m in ("duckdb", "pandas") if m in sys.modules)))
"""


def _simulate(block: bool) -> str:
    code = SIMULATE.format(block=block)
    r = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_simulating_a_run_loads_no_duckdb_and_needs_no_pandas():
    # the store (DuckDB, pandas) is loaded only to store; pyarrow imports pandas by itself when
    # there is one, to convert to numpy, so pandas is kept out by making it unimportable
    assert "duckdb" not in _simulate(block=False).split()
    assert _simulate(block=True) == ""
