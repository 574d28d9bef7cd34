"""When the kernel's senders hold a lone segment back: Linux's TSO deferral read from its own events.

    sudo .venv/bin/python validation/kernel/deferral.py rrul_be-codel-10m-50ms-cubic

Runs `trace.py CASE` (both sides) with two of the kernel's tracepoints recording: `tcp:tcp_probe`
(each segment a socket receives: its snd_una, snd_nxt, cwnd and SRTT before the ACK is processed)
and `net:net_dev_queue` for data packets of one and two full segments (1500 and 2948 bytes on the
emulator's links, timestamps on). Each data sender's response to a pure ACK is what the same CPU
queued before its next received segment. For every ACK that left room for an odd number of
segments (one or three: cwnd after the ACK less the data still in flight), it prints whether the
lone segment went or waited, by the age of the oldest unacknowledged segment in SRTTs: Linux 6.18's
tcp_tso_should_defer waits only when that segment's ACK is due within min(1 ms, SRTT / 2); Linux
4.20-6.17 waited once half an SRTT had passed (docs/transports.md 1.4). After `--warmup` seconds.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import matrix

TRACING = Path("/sys/kernel/tracing")
ONE, TWO = 1500, 2948
LINE = re.compile(r"\[(\d+)\] \S+ +([\d.]+): (tcp_probe|net_dev_queue): (.*)")


def _write(name: str, value: str) -> None:
    (TRACING / name).write_text(value)


def record(case: str, duration: float, events: dict[str, str], seed: int = 1) -> str:
    """The trace buffer of one `trace.py CASE --seed SEED` run (both sides; the kernel's events
    alone) with `events` recording, each `{"subsystem/event": filter}` (an empty filter keeps
    every one)."""
    if not (TRACING / "events").is_dir():  # tracefs not mounted yet
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACING)], check=True)
    _write("tracing_on", "0")
    _write("trace", "")
    _write("buffer_size_kb", "100000")
    for ev, flt in events.items():
        if flt:
            _write(f"events/{ev}/filter", flt)
        _write(f"events/{ev}/enable", "1")
    _write("tracing_on", "1")
    try:
        here = Path(__file__).resolve().parent
        subprocess.run([sys.executable, str(here / "trace.py"), case, "--duration", str(duration),
                        "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    finally:
        _write("tracing_on", "0")
        for ev in events:
            _write(f"events/{ev}/enable", "0")
            _write(f"events/{ev}/filter", "0")
    text = (TRACING / "trace").read_text()
    _write("trace", "")
    _write("buffer_size_kb", "1408")
    return text


def responses(text: str) -> dict[str, list[dict]]:
    """Per socket, each received segment with what its CPU queued after it: [(time, bytes)]."""
    current: dict[int, dict] = {}
    by_sock: dict[str, list[dict]] = defaultdict(list)
    for m in LINE.finditer(text):
        cpu, ts, name, rest = int(m[1]), float(m[2]), m[3], m[4]
        if name == "tcp_probe":
            f = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
            ev = {"t": ts, "len": int(f["data_len"]), "una": int(f["snd_una"], 16),
                  "nxt": int(f["snd_nxt"], 16), "cwnd": int(f["snd_cwnd"]), "srtt_us": int(f["srtt"]),
                  "sent": []}  # fmt: skip
            current[cpu] = ev
            by_sock[f["skaddr"]].append(ev)
        elif cpu in current:
            current[cpu]["sent"].append((ts, int(re.search(r"len=(\d+)", rest)[1])))
    return by_sock


def decisions(by_sock: dict[str, list[dict]], warmup: float, mss: int) -> dict[tuple[bool, int], list[float]]:
    """(lone segment sent?, room) -> the oldest unacknowledged segment's age in SRTTs, for each
    pure ACK of a data sender that left room for one or three segments."""
    t0 = min(ev["t"] for evs in by_sock.values() for ev in evs)
    out: dict[tuple[bool, int], list[float]] = defaultdict(list)
    for evs in by_sock.values():
        if sum(len(ev["sent"]) for ev in evs) < 500:
            continue  # a receiver, or iperf3's control connection
        starts: list[int] = []
        times: list[float] = []
        for ev, nxt_ev in itertools.pairwise(evs):
            if nxt_ev["nxt"] > ev["nxt"]:  # new data: the packets leave in sequence from snd_nxt
                seq = ev["nxt"]
                for ts, size in ev["sent"]:
                    starts.append(seq)
                    times.append(ts)
                    seq += (2 if size == TWO else 1) * mss
            if ev["len"] or ev["t"] - t0 < warmup:
                continue
            acked = (nxt_ev["una"] - ev["una"]) / mss
            room = round(nxt_ev["cwnd"] - ((ev["nxt"] - ev["una"]) / mss - acked))
            j = bisect.bisect_right(starts, nxt_ev["una"]) - 1
            if acked <= 0 or room not in (1, 3) or j < 0:
                continue
            lone_sent = bool(ev["sent"]) and ev["sent"][-1][1] == ONE
            out[(lone_sent, room)].append((ev["t"] - times[j]) * 1e6 / ev["srtt_us"])
    return out


def case_args(description: str, stored: bool = False, slow_start: bool = False) -> argparse.Namespace:
    """The command line of a tool that records one case's kernel events: the case, the run's
    duration, the warm-up before the counts, the MSS and the seed (and, with `stored`,
    `--stored`: read the last run's records again instead of running the case; with
    `slow_start`, `--slow-start`: report how each sender's slow start ended)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("case")
    ap.add_argument("--duration", type=float, default=matrix.DEFAULT_WINDOW_S[0])
    ap.add_argument("--warmup", type=float, default=matrix.DEFAULT_WINDOW_S[1])
    ap.add_argument("--mss", type=int, default=1448)
    ap.add_argument("--seed", type=int, default=1, help="the run's seed (trace.py's --seed)")
    if stored:
        ap.add_argument("--stored", action="store_true", help="the last run's records, no new run")
    if slow_start:
        ap.add_argument(
            "--slow-start", action="store_true", help="when and at what window each slow start ended"
        )
    return ap.parse_args()


def main() -> None:
    a = case_args(__doc__.splitlines()[0])
    events = {"net/net_dev_queue": f"len == {ONE} || len == {TWO}", "tcp/tcp_probe": ""}
    table = decisions(responses(record(a.case, a.duration, events, a.seed)), a.warmup, a.mss)
    print("room  lone segment  ACKs   oldest unacknowledged segment's age / SRTT: p10 p25 p50 p75 p90")
    for (sent, room), ages in sorted(table.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        ages.sort()
        q = " ".join(f"{ages[int(len(ages) * p)]:.2f}" for p in (0.1, 0.25, 0.5, 0.75, 0.9))
        print(f"{room:4}  {'sent' if sent else 'waited':12}  {len(ages):5}  {q}")


if __name__ == "__main__":
    main()
