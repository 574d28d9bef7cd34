"""ns-3's dumbbell with N CUBIC flows at 100 Mb/s, FqCoDel at its default limit (bench/compare.py).

python validation/fq_codel/ns3_256.py FLOWS DURATION_S SEED 'NAME=[--ns3::Type::Attr=value ...]'...
e.g. ... 256 10 1 'base=' 'pert1=--ns3::FqCoDelQueueDisc::Perturbation=1'
"""

import importlib.util
import sys
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "b", str(Path(__file__).resolve().parents[2] / "bench" / "ns3" / "run.py")
)
b = importlib.util.module_from_spec(spec)
spec.loader.exec_module(b)
n = int(sys.argv[1])
dur = float(sys.argv[2])
seed = int(sys.argv[3])
for spec in sys.argv[4:]:
    name, _, rest = spec.partition("=")
    extra = rest.split()
    r = b.run_ns3(n, "100Mbps", "fq_codel", dur, warmup=5.0, limit=0, seed=seed, extra_args=extra)
    q = r["queue_delay_ms"]
    # Little's law: mean packets in the qdisc = dequeue rate x mean sojourn (after the warmup).
    backlog = q["samples"] / (dur - 5.0) * q["mean"] / 1e3
    print(
        f"{name:<26} p50 {q['p50']:6.2f} p95 {q['p95']:6.2f} mean {q['mean']:6.2f} gp {r['goodput_mbps']:6.2f} drops {r['drops']:7.0f} rtos {r['tcp_rtos']:5d} rtos(all) {r['tcp_rtos_all']:5d} recov {r['tcp_recoveries']:5d} backlog {backlog:6.1f}p wall {r['wall_s']:.0f}s",
        flush=True,
    )
