"""The HTML report is self-contained and every embedded image decodes in headless Chromium."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import synth

from aqmlab import metrics, report
from aqmlab.store import RunData

CHECK_JS = """
<script>
window.addEventListener('load', function () {
  var imgs = Array.from(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  var d = document.createElement('div');
  d.id = 'imgcheck';
  d.textContent = 'IMAGES ' + ok + '/' + imgs.length;
  document.body.appendChild(d);
});
</script>
"""


def _chromium() -> str | None:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        return exe
    try:
        subprocess.run(
            ["apt-get", "install", "-y", "chromium"], capture_output=True, timeout=600, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return shutil.which("chromium")


def mk(name, drop=()):
    t, m = synth.run(name)
    for d in drop:
        t.pop(d)
    return RunData(path=Path(name), meta=m, summary=metrics.summarize(t, m), scenario=m["scenario"], tables=t)


@pytest.fixture
def html_file(tmp_path):
    return report.write_report([mk("r1"), mk("r2", drop=("packets",))], tmp_path / "report.html")


def test_report_is_self_contained(html_file):
    text = html_file.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)=['"]?(https?:|//)""", text)
    assert "<link" not in text and "<script" not in text
    imgs = re.findall(r"<img [^>]*src='data:image/png;base64,", text)
    assert len(imgs) == 7  # delay CDF + delay ts (r1 only), backlog, rtt cdf, rtt ts, goodput, cc state
    assert "runs without &#x27;packets&#x27;: r2" in text
    assert "&quot;limit&quot;: &quot;100p&quot;" in text  # resolved scenario, pretty-printed
    assert "codel" in text and "Latency probes" in text


def test_report_renders_in_chromium(html_file, tmp_path):
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium not installed and 'apt-get install -y chromium' failed")
    page = tmp_path / "check.html"
    page.write_text(html_file.read_text().replace("</body>", CHECK_JS + "</body>"))
    profile = tmp_path / "profile"
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", page.as_uri()]  # fmt: skip
    res = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    m = re.search(r"IMAGES (\d+)/(\d+)", res.stdout)
    assert m, "the check script did not run: " + res.stdout[-500:]
    assert m.group(1) == m.group(2) == "7"


def test_a_report_of_several_runs_has_them_side_by_side_and_no_exponents(tmp_path):
    runs = [mk("r1"), mk("r2")]
    text = report.write_report(runs, tmp_path / "two.html").read_text()
    start = text.index("<h2>Runs side by side</h2>")
    table = text[start : text.index("</table>", start)]
    rows = re.findall(r"<tr><td class=l>(.*?)</td>(.*?)</tr>", table)
    assert len(rows) == 2
    # the cells are the catalog's values (the runs catalog flattens the same summary)
    from aqmlab.store import flatten_summary

    for (_, cells), run in zip(rows, runs):
        p95 = flatten_summary(run.summary, run.meta)["queue_delay_p95_ms"]
        assert f"<td>{p95:.4g}</td>" in cells
    # numbers are written out in the tables and the run facts (never 1.348e+05, duration_ns)
    visible = re.sub(r"data:image/png;base64,[^'\"]+", "", text)
    assert not re.search(r"\d\.?\d*e[+-]\d+", visible)
    assert "duration_ns" not in visible and "duration: " in visible


def test_the_controllers_state_is_drawn_only_when_recorded(tmp_path):
    # a run's flow_series whose cc_* columns are all null (controllers that keep no such state)
    import pyarrow as pa

    run = mk("r1")
    fs = run.tables["flow_series"]
    for c in [c for c in fs.column_names if c.startswith("cc_")]:
        fs = fs.set_column(fs.schema.get_field_index(c), c, pa.nulls(fs.num_rows, fs.schema.field(c).type))
    run.tables["flow_series"] = fs
    text = report.write_report([run], tmp_path / "nocc.html").read_text()
    assert "Congestion-controller state: skipped, no run has it" in text
    assert len(re.findall(r"<img ", text)) == 6
    text = report.write_report([run, mk("r2")], tmp_path / "some.html").read_text()
    assert "runs left out, its flow_series holds no controller state (cc_* columns): r1" in text
