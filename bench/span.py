"""The cost of scenarios a span of commits left unchanged: instructions (callgrind) of the working
tree's core against an older commit's, both built and run in one sitting.

    python bench/span.py 7dbd728 [--bound 1.03] [--only tcp_rfc,udp_pfifo]

Builds ``examples/run_json`` at COMMIT (a detached worktree of this repository, built into
``target/span/``, kept there for the next sitting) and in the working tree, runs every scenario
below under ``valgrind --tool=callgrind`` with each binary (the two at once, one per core), and
prints per scenario the instructions of the whole process at both ends and their ratio. A
scenario is **unchanged** when both runs handled the same events by kind and sent the same
packets on every link; only those are held to ``--bound`` (the ratio the change may cost; the
speed work's 3 %), a changed one says so and is left out (its cost moved with the model). The
exit status is 1 when an unchanged scenario is above the bound.

The scenarios: the ns-3 anchor dumbbell (``_common.dumbbell``: 8 CUBIC downloads at 100 Mbit/s,
50 ms, 5 s, recording ``summary``) with every flow on the ``rfc`` profile, through fq_codel,
pfifo and CoDel; the same through fq_codel with ns-2's Sack1 agent and NewReno (``ns2_sack1``);
and four UDP flows of 300 Mbit/s overloading 1 Gbit/s through a 1000-packet pfifo and CoDel (10
ms, 3 s): the packet path without TCP. The TCP profiles are named, not the default, so that a
change of the default does not change the scenario.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, dumbbell, machine, stamp
from events import run


def tcp(qdisc: str, profile: str, cc: str = "cubic") -> dict:
    sc = dumbbell(8, "100Mbps", qdisc, 5, "summary")
    for f in sc["flows"]:
        f.update(profile=profile, cc=cc)
    return sc


def udp(qdisc: str) -> dict:
    link = {"rate": "1Gbps", "qdisc": qdisc, "limit": "1000p"}
    flow = {"kind": "udp", "direction": "down", "rate": "300Mbps", "packet_size": "1500B"}
    return {
        "name": f"udp_overload_{qdisc}",
        "duration": "3s",
        "seed": 1,
        "topology": {"rtt": "10ms", "down": link, "up": dict(link)},
        "flows": [dict(flow) for _ in range(4)],
        "record": {"level": "summary", "max_rows": 10**9},
    }


SCENARIOS = {
    "tcp_rfc": lambda: tcp("fq_codel", "rfc"),
    "tcp_rfc_pfifo": lambda: tcp("pfifo", "rfc"),
    "tcp_rfc_codel": lambda: tcp("codel", "rfc"),
    "tcp_ns2_sack1": lambda: tcp("fq_codel", "ns2_sack1", "newreno"),
    "udp_pfifo": lambda: udp("pfifo"),
    "udp_codel": lambda: udp("codel"),
}

# What a run did, compared between the two ends: the same means the scenario is unchanged.
SAME = ("events", "event_kinds", "tx_packets", "down_tx_packets")


def build(tree: Path, target: Path) -> Path:
    """run_json built from the sources at `tree` into `target` (cargo's release profile)."""
    cmd = ["cargo", "build", "-q", "--release", "-p", "aqmlab-core", "--example", "run_json"]
    subprocess.run(cmd, cwd=tree, env={**os.environ, "CARGO_TARGET_DIR": str(target)}, check=True)
    return target / "release" / "examples" / "run_json"


def old_binary(commit: str) -> Path:
    """run_json at `commit`, built in a worktree removed afterwards (the build is kept)."""
    target = REPO / "target" / "span" / commit
    binary = target / "release" / "examples" / "run_json"
    if binary.exists():
        return binary
    with tempfile.TemporaryDirectory() as d:
        tree = Path(d) / "tree"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), commit], cwd=REPO, check=True)
        try:
            return build(tree, target)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=True)


def resolve(commit: str) -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        sys.stderr.write(f"error: commit {commit!r} is not a commit of this repository\n")
        sys.exit(2)
    return out.stdout.strip()[:12]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("commit", help="the older end of the span (any name git resolves)")
    ap.add_argument("--bound", type=float, default=1.03, help="the largest ratio allowed (default 1.03)")
    ap.add_argument("--only", default=",".join(SCENARIOS), help="scenarios to run (default all)")
    a = ap.parse_args()
    names = a.only.split(",")
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        ap.error(f"--only: unknown scenario {unknown[0]!r}; allowed: {', '.join(SCENARIOS)}")
    if a.bound <= 0:
        ap.error(f"--bound: {a.bound} is not a positive ratio")
    commit = resolve(a.commit)
    old = old_binary(commit)
    new = build(REPO, Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")))
    print(f"# span  {stamp()}  {machine()}  {commit} -> working tree, bound {a.bound}")
    print("| scenario | events | Ir at " + commit + " | Ir now | ratio | |")
    print("|---|---:|---:|---:|---:|---|")
    over = False
    with ThreadPoolExecutor(2) as pool:
        for name in names:
            sc = SCENARIOS[name]()
            (r0, ir0), (r1, ir1) = pool.map(run, (old, new), (sc, sc), ("callgrind", "callgrind"))
            ratio = ir1["total"] / ir0["total"]
            if any(r0[k] != r1[k] for k in SAME):
                verdict = "changed: not held to the bound"
            elif ratio <= a.bound:
                verdict = "within"
            else:
                verdict, over = "**above the bound**", True
            cells = [name, f"{r1['events']:,}", f"{ir0['total'] / 1e6:.2f} M", f"{ir1['total'] / 1e6:.2f} M"]
            print("| " + " | ".join([*cells, f"{ratio:.3f}", verdict]) + " |", flush=True)
    sys.exit(1 if over else 0)


if __name__ == "__main__":
    main()
