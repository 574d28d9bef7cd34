#!/usr/bin/env python3
"""ns-3 side of the aqmlab speed benchmark (stdlib only).

Runs bench/ns3/out/dumbbell (built by build.sh) over the benchmark scenarios
and prints a table; each run is appended as one JSON line to
bench/ns3/out/results.jsonl.

Importable: ``run_ns3(flows, rate, qdisc, duration, ...) -> dict`` runs one
simulation and returns the program's JSON object (see README.md).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "out"
BINARY = OUT_DIR / "dumbbell"
BUILD_SH = HERE / "build.sh"
RESULTS = OUT_DIR / "results.jsonl"

# (flows, bottleneck rate) of the speed benchmark; each with every qdisc below.
SCENARIOS: list[tuple[int, str]] = [
    (8, "100Mbps"),
    (64, "100Mbps"),
    (256, "100Mbps"),
    (8, "1Gbps"),
]
QDISCS = ["fq_codel", "pfifo"]


def ensure_built(force: bool = False) -> Path:
    """Build the ns-3 program if it is missing or stale; return its path."""
    libdir_file = OUT_DIR / ".libdir"
    stale = (
        not BINARY.exists()
        or not libdir_file.exists()
        or not Path(libdir_file.read_text().strip()).is_dir()
        or BINARY.stat().st_mtime < (HERE / "dumbbell.cc").stat().st_mtime
    )
    if force or stale:
        env = dict(os.environ)
        if force:
            env["AQMLAB_NS3_FORCE"] = "1"
        proc = subprocess.run(["bash", str(BUILD_SH)], env=env, check=False)
        if proc.returncode != 0 or not BINARY.exists():
            raise RuntimeError(f"ns-3 build failed (bash {BUILD_SH} exited {proc.returncode})")
    return BINARY


def _rate_arg(rate: str | float) -> str:
    """Accept '100Mbps'-style strings or a number of bits per second."""
    if isinstance(rate, (int, float)):
        return f"{int(rate)}bps"
    return str(rate)


def run_ns3(
    flows: int,
    rate: str | float,
    qdisc: str,
    duration: float,
    *,
    cc: str = "cubic",
    rtt: str = "50ms",
    limit: int = 0,
    ecn: bool = False,
    seed: int = 1,
    run: int = 1,
    ping_interval: float = 0.0,
    warmup: float = 5.0,
    dump_config: bool = False,
    extra_args: tuple[str, ...] | list[str] = (),
    timeout: float | None = None,
) -> dict:
    """Run one ns-3 dumbbell simulation and return its JSON result as a dict.

    ``rate`` is an ns-3 DataRate string ("100Mbps", "1Gbps") or bits/s.
    ``limit`` is the queue-disc limit in packets (0: qdisc default; pfifo 1000).
    Raises RuntimeError if the program fails.
    """
    binary = ensure_built()
    args = [
        str(binary),
        f"--flows={int(flows)}",
        f"--rate={_rate_arg(rate)}",
        f"--qdisc={qdisc}",
        f"--duration={float(duration)}",
        f"--warmup={float(warmup)}",
        f"--cc={cc}",
        f"--rtt={rtt}",
        f"--limit={int(limit)}",
        f"--ecn={1 if ecn else 0}",
        f"--seed={int(seed)}",
        f"--run={int(run)}",
        f"--ping-interval={float(ping_interval)}",
        f"--dump-config={1 if dump_config else 0}",
        *extra_args,
    ]
    env = {k: v for k, v in os.environ.items() if k != "NS_LOG"}
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise RuntimeError(f"no JSON from {' '.join(args)}: {proc.stdout[-2000:]}")
    result = json.loads(lines[-1])
    result["args"] = args[1:]
    return result


def _fmt_row(r: dict) -> str:
    qd = r["queue_delay_ms"]
    return (
        f"{r['flows']:>5} {r['rate_bps'] / 1e6:>7.0f} {r['qdisc']:>8} {r['sim_s']:>6.0f} "
        f"{r['wall_s']:>8.2f} {r['cpu_s']:>8.2f} {r['bottleneck_packets']:>10} {r['pkts_per_wall_s']:>10.0f} "
        f"{r['pkts_per_cpu_s']:>9.0f} "
        f"{r['events_per_packet']:>7.2f} {r['peak_rss_mb']:>7.1f} {r['goodput_mbps']:>8.2f} "
        f"{qd['p50']:>7.2f} {qd['p95']:>7.2f} {r['drops']:>7}"
    )


HEADER = (
    f"{'flows':>5} {'Mbps':>7} {'qdisc':>8} {'sim_s':>6} {'wall_s':>8} {'cpu_s':>8} {'bn_pkts':>10} "
    f"{'pkts/wall':>10} {'pkts/cpu':>9} {'ev/pkt':>7} {'rss_MB':>7} {'goodput':>8} {'qd_p50':>7} {'qd_p95':>7} "
    f"{'drops':>7}"
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--duration",
        type=float,
        default=60.0,
        help="simulated seconds per run (default 60)",
    )
    ap.add_argument(
        "--scenarios",
        default="all",
        help="comma list of FLOWSxRATE, e.g. '8x100Mbps,8x1Gbps' (default: all four)",
    )
    ap.add_argument("--qdiscs", default=",".join(QDISCS), help="comma list (default fq_codel,pfifo)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per scenario (table shows each)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rebuild", action="store_true", help="force a rebuild of the ns-3 program")
    ap.add_argument("--out", type=Path, default=RESULTS, help="JSON-lines file to append to")
    ns = ap.parse_args(argv)

    if ns.scenarios == "all":
        scenarios = SCENARIOS
    else:
        scenarios = []
        for item in ns.scenarios.split(","):
            n, _, rate = item.partition("x")
            scenarios.append((int(n), rate))
    qdiscs = [q for q in ns.qdiscs.split(",") if q]

    ensure_built(force=ns.rebuild)
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    print(HEADER, flush=True)
    with ns.out.open("a") as fh:
        for flows, rate in scenarios:
            for qdisc in qdiscs:
                for rep in range(ns.repeat):
                    r = run_ns3(flows, rate, qdisc, ns.duration, seed=ns.seed, run=1 + rep)
                    r.update(
                        date=stamp,
                        host_cpus=os.cpu_count(),
                        host=platform.node(),
                        repeat=rep,
                    )
                    fh.write(json.dumps(r) + "\n")
                    fh.flush()
                    print(_fmt_row(r), flush=True)
    print(f"results appended to {ns.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
