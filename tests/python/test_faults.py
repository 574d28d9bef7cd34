"""Faults injected into real processes: the same sweep twice at once, kill -9 of a sweep's parent,
a clean-up between a batch's parts, damaged parts and run tables, a full disk, a read-only root,
concurrent runs into one root, signals at start-up. After each, nothing is lost: a rerun ends
with every run complete and equal to an undisturbed run's (``digests``), and no command prints
a traceback: a failure is one line naming the path or the key."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from aqmlab import parts, store, storelock
from aqmlab.scenario import builtin_path

S = sys.modules.get("aqmlab.sweep") or __import__("importlib").import_module("aqmlab.sweep")

AQMLAB = str(Path(sys.executable).parent / "aqmlab")
BASE = str(builtin_path("transients2014/base"))
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs or a read-only bind needs root")


def sweep_file(tmp_path: Path, reps: int, duration: int = 2) -> Path:
    """2 disciplines x ``reps``; the flow's start is drawn, so that no run repeats another. A
    duration of 300 s makes each run last some half a second of wall time (the bufferbloat
    scenario, whose flows run to the end), a shorter one a few milliseconds."""
    f = tmp_path / f"sw{reps}-{duration}.toml"
    base = "bufferbloat" if duration >= 300 else BASE
    f.write_text(f'base = "{base}"\nname = "f"\nseed = 3\nreps = {reps}\n[set]\nduration = "{duration}s"\n'
                 '"flows.0.start" = { uniform = ["0s", "10ms"] }\n'
                 '[grid]\ntopology.down.qdisc = ["codel", "pfifo"]\n')  # fmt: skip
    return f


def cli(*args, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([AQMLAB, *map(str, args)], check=False, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})  # fmt: skip


PROGRESS = re.compile(r"\d+/\d+ done .* remaining")  # a sweep's progress bar, drawn or not


def one_line(text: str) -> str:
    """The one line a failing command printed (no traceback; a sweep's progress bar aside)."""
    lines = [line for line in text.splitlines() if line.strip() and not PROGRESS.search(line)]
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


def digests(root: Path) -> dict[str, str]:
    """run id -> a digest of the run's summary (without wall times) and of every table it stored,
    for every complete run under ``root``, read as a user reads them (``store.load_run``)."""
    out = {}
    ids = store.query(root, "SELECT run_id FROM runs")["run_id"]
    for rid in ids:
        run = store.load_run(rid, root)
        h = hashlib.sha256()
        summary = {k: v for k, v in run.summary.items() if k not in ("wall_s",)}
        h.update(json.dumps(summary, sort_keys=True, default=str).encode())
        for name in sorted(run.tables):
            # the values and the schema: not Arrow's buffers, whose chunks and validity bitmaps
            # follow how the runs were batched into parts (one job or two), not what was stored
            t = run.tables[name]
            h.update(name.encode() + str(t.schema.remove_metadata()).encode())
            h.update(pd.util.hash_pandas_object(t.to_pandas(), index=False).to_numpy().tobytes())
        out[rid] = h.hexdigest()
    return out


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory):
    """(reps, duration) -> the digests of the sweep run once, alone."""
    cache: dict[tuple[int, int], dict[str, str]] = {}

    def get(reps: int, duration: int = 2) -> dict[str, str]:
        if (reps, duration) not in cache:
            d = tmp_path_factory.mktemp(f"undisturbed{reps}")
            r = cli("sweep", sweep_file(d, reps, duration), "--out", d / "res", "--jobs", "2")
            assert r.returncode == 0, r.stderr
            cache[reps, duration] = digests(d / "res")
        return cache[reps, duration]

    return get


def rerun_is_whole(tmp_path: Path, out: Path, undisturbed, reps: int, duration: int = 2) -> None:
    r = cli("sweep", sweep_file(tmp_path, reps, duration), "--out", out, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    assert digests(out) == undisturbed(reps, duration)


def session(pid: int) -> list[int]:
    """The live processes of the session ``pid`` leads (a sweep started with start_new_session)."""
    left = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if fields[0] != "Z" and int(fields[3]) == pid:
                left.append(int(d.name))
    return left


def committed(out: Path) -> int:
    return len(list(out.glob("sweeps/*/summaries/part-*.parquet")))


def start_sweep(f: Path, out: Path, jobs: int = 2) -> subprocess.Popen:
    return subprocess.Popen([AQMLAB, "sweep", str(f), "--out", str(out), "--jobs", str(jobs)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip


def wait_for(cond, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# --------------------------------------------------------------------------- the writer protocol


def test_the_same_sweep_twice_at_once_the_second_refuses_naming_the_first(tmp_path, undisturbed):
    # the first is stopped (SIGSTOP to its process group) once it has committed a run, so that it
    # holds its sweep however long the second takes to start on a loaded machine (a busy CI
    # worker once saw the first finish before), and continued once the second has answered
    out, f = tmp_path / "res", sweep_file(tmp_path, 6, 900)
    first = start_sweep(f, out, jobs=1)
    wait_for(lambda: committed(out) >= 1)
    os.killpg(first.pid, signal.SIGSTOP)
    try:
        second = cli("sweep", f, "--out", out, "--jobs", "1", env={"AQMLAB_SWEEP_WAIT_S": "0.2"})
    finally:
        os.killpg(first.pid, signal.SIGCONT)
    assert first.wait(240) == 0, first.stderr.read()
    assert second.returncode == 2
    assert f"in use by process {first.pid}" in one_line(second.stderr)
    rerun_is_whole(tmp_path, out, undisturbed, 6, 900)


@pytest.mark.parametrize("parts_first", [0, 2])
def test_kill_9_of_a_sweeps_parent_leaves_no_worker_and_loses_nothing(tmp_path, undisturbed, parts_first):
    """The parent killed before its first batch, and after one or four: its workers end with it
    (none lives on to write into the rerun), and the rerun completes every run."""
    out, f = tmp_path / "res", sweep_file(tmp_path, 6, 300)
    p = start_sweep(f, out)
    if parts_first:
        wait_for(lambda: committed(out) >= parts_first)
    else:
        time.sleep(1.0)
    p.send_signal(signal.SIGKILL)
    p.wait()
    wait_for(lambda: not session(p.pid), timeout=10)
    rerun_is_whole(tmp_path, out, undisturbed, 6, 300)


def test_a_writer_killed_and_not_yet_reaped_counts_as_dead():
    """A killed process whose parent has not reaped it (a zombie: a sweep's worker orphaned
    under an init that does not reap) writes nothing more: what it left may be cleaned up."""
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        start = stat[stat.rindex(")") + 2 :].split()[19]
        owner = storelock.Owner.parse(f"{socket.gethostname()}:{pid}:{start}")
        assert owner is not None and owner.alive()
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] == "Z")
        assert not owner.alive()
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def test_a_clean_up_between_a_batchs_parts_leaves_the_live_writers_parts(tmp_path, monkeypatch, undisturbed):
    """Another process opening the sweep (its clean-up) right after a batch's first part is
    renamed: the part, whose writer lives, is kept; every run is stored whole."""
    out, f = tmp_path / "res", sweep_file(tmp_path, 2)
    write = parts.write
    cleaned = []

    def write_then_clean(table, path, how):
        write(table, path, how)
        if path.parent.name != parts.SUMMARIES:
            cleaned.append(parts.clean(path.parent.parent))

    monkeypatch.setattr(parts, "write", write_then_clean)
    S.run_sweep(S.parse_sweep(f), out=out, jobs=1)
    assert cleaned and not any(cleaned)
    assert digests(out) == undisturbed(2)


def test_a_batch_missing_a_part_is_not_complete_and_the_rerun_redoes_it(tmp_path, undisturbed):
    out, f = tmp_path / "res", sweep_file(tmp_path, 2)
    assert cli("sweep", f, "--out", out, "--jobs", "1").returncode == 0
    gone = min(out.glob("sweeps/*/flows/part-*.parquet"))
    gone.unlink()
    r = cli("runs", "--root", out)
    assert r.returncode == 0 and str(gone) in r.stderr, r.stderr
    r = cli("sweep", f, "--out", out, "--jobs", "1")
    assert r.returncode == 0 and str(gone) in r.stderr, r.stderr
    assert "1 run now" in " ".join(r.stdout.split()) or "run now" in r.stdout
    assert digests(out) == undisturbed(2)


def _truncate(f: Path) -> None:
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])


def _corrupt_middle(f: Path) -> None:
    """Overwrites bytes in the middle of the column data; the footer still reads."""
    data = bytearray(f.read_bytes())
    meta = pq.read_metadata(f)
    start = meta.row_group(0).column(0).data_page_offset
    for i in range(start + 8, min(start + 400, len(data) - 200)):
        data[i] ^= 0x5A
    f.write_bytes(bytes(data))
    pq.read_metadata(f)  # the damage is past what a footer check sees


@pytest.mark.parametrize("damage", [_truncate, _corrupt_middle])
@pytest.mark.parametrize("table", ["summaries", "queue"])
def test_a_damaged_part_is_named_skipped_and_redone(tmp_path, undisturbed, damage, table):
    out, f = tmp_path / "res", sweep_file(tmp_path, 2)
    assert cli("sweep", f, "--out", out, "--jobs", "1").returncode == 0
    hit = min(out.glob(f"sweeps/*/{table}/part-*.parquet"))
    damage(hit)
    # other sweeps of the root still run, and the readers name the file
    other = tmp_path / "other.toml"
    other.write_text(sweep_file(tmp_path, 1).read_text().replace('name = "f"', 'name = "g"'))
    r = cli("sweep", other, "--out", out, "--jobs", "1")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    for args in (["runs", "--root", out], ["query", "SELECT count(*) FROM queue", "--root", out]):
        r = cli(*args)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    r = cli("sweep", f, "--out", out, "--jobs", "1")
    assert r.returncode == 0 and str(hit) in r.stderr, r.stderr
    assert {k: v for k, v in digests(out).items() if k in undisturbed(2)} == undisturbed(2)


def test_a_run_table_damaged_in_its_middle_is_named_in_one_line(tmp_path):
    out = tmp_path / "res"
    r = cli("run", BASE, "--set", "duration=2s", "--out", out, "--no-plot")
    assert r.returncode == 0, r.stderr
    run_dir = next(d for d in out.iterdir() if d.is_dir())
    _corrupt_middle(run_dir / "queue.parquet")
    r = cli("plot", run_dir.name, "--root", out, "--kind", "backlog_ts", "-o", tmp_path / "b.png")
    assert r.returncode == 2 and "queue.parquet" in one_line(r.stderr)
    assert not (tmp_path / "b.png").exists()


def test_eight_concurrent_runs_into_one_root_all_land(tmp_path):
    out = tmp_path / "res"
    procs = [subprocess.Popen([AQMLAB, "run", BASE, "--set", "duration=1s", "--seed", str(i), "--out", str(out),
                               "--no-plot"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(8)]  # fmt: skip
    results = [(p.wait(120), *p.communicate()) for p in procs]
    assert all(rc == 0 and "run stored in" in so for rc, so, _ in results), results
    listed = store.query(out, "SELECT seed FROM runs")["seed"]
    assert sorted(listed) == list(range(8))


# --------------------------------------------------------------------------- disks and paths


@pytest.fixture
def tmpfs(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    d = tmp_path / "small"
    d.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=100k", "tmpfs", str(d)], check=True)
    yield d
    subprocess.run(["umount", "-l", str(d)], check=False)


def test_a_full_disk_is_one_line_and_the_resume_is_whole(tmp_path, tmpfs, undisturbed):
    out, f = tmpfs / "res", sweep_file(tmp_path, 2)
    r = cli("sweep", f, "--out", out, "--jobs", "1")
    line = one_line(r.stderr)
    assert r.returncode == 2 and "No space left on device" in line and str(out) in line, r.stderr
    r = cli("runs", "--root", out)
    assert r.returncode in (0, 2) and "Traceback" not in r.stderr, r.stderr
    subprocess.run(["mount", "-o", "remount,size=64m", str(tmpfs)], check=True)
    rerun_is_whole(tmp_path, out, undisturbed, 2)


@ROOT_ONLY
def test_a_read_only_root_is_read_and_refuses_writing_in_one_line(tmp_path):
    out, f = tmp_path / "res", sweep_file(tmp_path, 1)
    assert cli("sweep", f, "--out", out, "--jobs", "1").returncode == 0
    (out / store.CATALOG).unlink()  # a reader must then make it in memory
    ro = tmp_path / "ro"
    ro.mkdir()
    subprocess.run(["mount", "--bind", str(out), str(ro)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], check=True)
        r = cli("runs", "--root", ro)
        assert r.returncode == 0 and "2 runs" in r.stdout, r.stdout + r.stderr
        r = cli("query", "SELECT count(*) AS n FROM flows", "--root", ro, "--format", "json")
        assert r.returncode == 0 and json.loads(r.stdout)[0]["n"] > 0, r.stderr
        r = cli("sweep", f, "--out", ro, "--jobs", "1")
        assert r.returncode == 2 and str(ro) in one_line(r.stderr)
    finally:
        subprocess.run(["umount", str(ro)], check=False)


@pytest.mark.parametrize("command", [["sweep", "SWEEP", "--out"], ["run", BASE, "--out"], ["query", "SELECT 1", "--root"],
                                     ["runs", "--root"], ["report", "x", "--root"]])  # fmt: skip
def test_a_file_where_a_directory_is_needed_is_one_line(tmp_path, command):
    afile = tmp_path / "afile"
    afile.write_text("x")
    args = [str(sweep_file(tmp_path, 1)) if a == "SWEEP" else a for a in command]
    r = cli(*args, afile)
    assert r.returncode == 2 and str(afile) in one_line(r.stderr) and "not a directory" in r.stderr


# --------------------------------------------------------------------------- bounds before allocation


@pytest.mark.parametrize("sets", [["flows.0.rate=1000000000000000bps"],
                                  ["topology.nic_rate=inf", "flows.0.rate=1000000000000000bps"],
                                  ["flows.0.count=100000", "record.level=series", "record.interval=1ms", "duration=86400s"]])  # fmt: skip
def test_a_run_too_large_for_memory_is_refused_before_it_starts(tmp_path, sets):
    """A UDP flow above its NIC's rate, or one that would keep billions of packets on their way,
    or series of a hundred thousand flows every millisecond for a day: refused in one line
    naming the key, before anything is allocated (the rate once aborted at 4.2 GB)."""
    sc = tmp_path / "flood.toml"
    sc.write_text('name = "flood"\nduration = "10s"\n[topology]\nrtt = "50ms"\n'
                  'down = { rate = "10Mbps", qdisc = "codel" }\nup = { rate = "10Mbps", qdisc = "codel" }\n'
                  '[[flows]]\nkind = "udp"\nrate = "5Mbps"\n')  # fmt: skip
    args = [a for kv in sets for a in ("--set", kv)]
    t0 = time.monotonic()
    r = cli("run", sc, *args, "--out", tmp_path / "out", timeout=60)
    line = one_line(r.stderr)
    assert r.returncode == 2 and time.monotonic() - t0 < 30, r.stderr
    key = "record.interval" if "record.interval=1ms" in sets else "flows[0].rate"
    assert line.startswith(f"error: {key}: ") and "allowed" in line, line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.parquet"))


# --------------------------------------------------------------------------- query confined


@pytest.fixture(scope="module")
def small_root(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("small")
    assert cli("sweep", sweep_file(d, 1), "--out", d / "res", "--jobs", "1").returncode == 0
    return d / "res"


@pytest.mark.parametrize(
    "sql",
    ["SELECT * FROM read_csv('/etc/passwd')", "SELECT * FROM glob('/root/*')", "COPY (SELECT 1) TO 'x.csv'",
     "INSTALL httpfs", "ATTACH 'y.duckdb' AS y", "SET enable_external_access = true",
     "SELECT 1; COPY (SELECT * FROM runs) TO 'z.parquet'"],
)  # fmt: skip
def test_query_reads_the_root_only(small_root, tmp_path, sql):
    r = subprocess.run([AQMLAB, "query", sql, "--root", str(small_root)], check=False, capture_output=True, text=True,
                       cwd=tmp_path)  # fmt: skip
    assert r.returncode == 2 and "--allow-files" in one_line(r.stderr), r.stderr
    assert not list(tmp_path.iterdir())


def test_query_with_allow_files_writes_files(small_root, tmp_path):
    r = subprocess.run([AQMLAB, "query", "COPY (SELECT run_id FROM runs) TO 'x.csv'", "--root", str(small_root),
                        "--allow-files"], check=False, capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert len((tmp_path / "x.csv").read_text().splitlines()) == 3  # a header and the 2 runs


@pytest.mark.parametrize(
    ("where", "n"),
    [("qdisc = 'codel'", 1), ("qdisc = 'codel' or qdisc = 'pfifo'", 2), ("seed > 0 and qdisc != 'codel'", 1),
     ("topology.down.qdisc = pfifo", 1)],
)  # fmt: skip
def test_runs_where_compares_columns(small_root, where, n):
    r = cli("runs", "--root", small_root, "--where", where)
    assert r.returncode == 0, r.stderr
    assert f"{n} runs in" in r.stdout


@pytest.mark.parametrize("where", ["1=1; DROP TABLE runs", "qdisc = 'codel' union select 1", "nosuch = 1",
                                   "seed", "seed > 'x'"])  # fmt: skip
def test_runs_where_is_no_sql(small_root, where):
    r = cli("runs", "--root", small_root, "--where", where)
    assert r.returncode == 2 and "--where" in one_line(r.stderr), r.stderr


# --------------------------------------------------------------------------- signals


@pytest.mark.parametrize("delay", [0.15, 0.3, 0.45, 0.6, 1.0])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_at_start_up_is_one_line_and_status_128_plus_its_number(tmp_path, delay, sig):
    """From the first moment on, as the modules load (numpy and pyarrow swallowed a signal in
    their imports, which then went unheeded) and as the sweep opens its dataset. Sixteen runs of
    some 0.3 s each: on a quiet machine four were done within the last delay, before its signal."""
    out = tmp_path / "res"
    p = subprocess.Popen([AQMLAB, "sweep", str(sweep_file(tmp_path, 8, 300)), "--out", str(out), "--jobs", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    time.sleep(delay)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 128 + sig and one_line(err).startswith("interrupted"), (p.returncode, err)
    wait_for(lambda: not session(p.pid), timeout=10)


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory) -> Path:
    """A root holding every run of transients2014's quick form: a rerun goes straight to its
    tables, figures and report (some 2.5 s)."""
    out = tmp_path_factory.mktemp("reproduced") / "res"
    assert cli("reproduce", "transients2014", "--quick", "--out", out, timeout=300).returncode == 0
    return out


@pytest.mark.parametrize("delay", [0.4, 0.9, 1.4, 1.9])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_in_reproduces_report_phase_is_one_line_and_leaves_no_part_file(reproduced, delay, sig):
    """Every run stored: the signal lands in the tables, figures or report (a Ctrl-C there was
    ignored, a SIGTERM killed it silently, figures were left empty). A command that was over
    before the signal came is the only one allowed its status 0."""
    p = subprocess.Popen([AQMLAB, "reproduce", "transients2014", "--quick", "--out", str(reproduced)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    time.sleep(delay)
    ended = p.poll() is not None
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    if not ended:
        assert p.returncode == 128 + sig and one_line(err).startswith("interrupted"), (p.returncode, err)
    files = [f for f in (reproduced / "reproduce").rglob("*") if f.is_file()]
    assert not [f for f in files if f.stat().st_size == 0 or f.name.endswith(".tmp")]


def test_two_reproduces_into_one_root_at_once_both_end_whole(tmp_path):
    """The second waits for the first's sweep and takes its runs (one died on the catalog's lock
    with a traceback): both print the same verdicts, and every run is stored once."""
    out = tmp_path / "res"
    cmd = [AQMLAB, "reproduce", "transients2014", "--quick", "--out", str(out)]
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    # the second waits for the first's sweep as long as a loaded 2-core machine needs to finish
    # it (the default 10 s, SWEEP_WAIT_S, ran out there and the second refused, as it should)
    second = cli(*cmd[1:], env={"AQMLAB_SWEEP_WAIT_S": "240"}, timeout=300)
    said_first, err_first = first.communicate(timeout=300)
    assert first.returncode == 0 and second.returncode == 0, (err_first, second.stderr)
    assert "Traceback" not in err_first + second.stderr
    claims = [
        next(line for line in s.splitlines() if line.startswith("claims:"))
        for s in (said_first, second.stdout)
    ]
    assert claims[0] == claims[1], claims
    n = store.query(out, "SELECT count(*) AS n, count(DISTINCT run_id) AS d FROM runs")
    assert n["n"][0] == n["d"][0] == 560
