"""docs/compare.ipynb runs top to bottom in a Jupyter kernel (nbclient): no cell fails (one
asserts that the Python CoDel's row equals the built-in's), a run and the sweep display as HTML
tables, and the figure is drawn."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "compare.ipynb"


def test_compare_notebook_executes(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert len(html) == 3 and all("<table" in h for h in html)
    assert "rrul_be" in html[0] and "fq_codel" in html[0]
    assert any("image/png" in o.get("data", {}) for o in outputs)
    assert (tmp_path / "aqmlab-results").is_dir()
