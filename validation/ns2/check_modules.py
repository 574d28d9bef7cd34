"""Checks the CoDel and sfqCoDel modules of build.sh's ns against CoDel's control law.

Under a constant overload (tcl/overload.tcl: CBR at twice the link rate into a 2 Mb/s link, one
flow) the queue's delay stays above target, so CoDel (K. Nichols, V. Jacobson, "Controlling
Queue Delay", 2012) drops once at the first dequeue an interval after the delay went above
target, then schedules the k-th drop at drop_next = t_1 + sum_{i<k} interval / sqrt(i) and
drops at the first dequeue at or after it: each drop lies within one packet time after its
scheduled instant. The check fails if any of the first DROPS drops does not.

    python validation/ns2/check_modules.py [--ns /work/ns2-build/bin/ns]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from math import sqrt
from pathlib import Path

HERE = Path(__file__).resolve().parent
INTERVAL_S = 0.100
PACKET_S = 1500 * 8 / 2e6  # one packet time at the 2 Mb/s link
DROPS = 12


def drop_times(ns: str, queue: str) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "q.tr"
        subprocess.run([ns, str(HERE / "tcl" / "overload.tcl"), queue, str(trace), "2"], check=True, cwd=tmp)
        return [float(ln.split()[1]) for ln in trace.read_text().splitlines() if ln.startswith("d ")]


def check(ns: str, queue: str) -> bool:
    drops = drop_times(ns, queue)[:DROPS]
    scheduled = drops[0]
    ok = len(drops) == DROPS
    for k, t in enumerate(drops[1:], start=2):
        scheduled += INTERVAL_S / sqrt(k - 1)
        late = t - scheduled
        good = -1e-9 <= late < PACKET_S + 1e-9
        ok &= good
        print(f"{queue} drop {k}: at {t:.6f} s, scheduled {scheduled:.6f} s, {'ok' if good else 'WRONG'}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", default="/work/ns2-build/bin/ns")
    a = ap.parse_args()
    results = [check(a.ns, q) for q in ("CoDel", "sfqCoDel")]
    print("all drops on schedule" if all(results) else "a drop off schedule")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
