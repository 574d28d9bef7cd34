"""ns-3's dumbbell on validation n4/n1_ping with extra arguments, mean over seeds.

    python validation/fq_codel/ns3_variants.py FLOWS SEEDS 'NAME=QDISC [--ns3::Type::Attr=value ...]'...
    e.g. ... 4 1,2,3 'base=fq_codel' \
             'classic=fq_codel --ns3::TcpL4Protocol::RecoveryType=ns3::TcpClassicRecovery' \
             'le1500=fq_codel --ns3::CoDelQueueDisc::MinBytes=1501'

Needs bench/ns3/build.sh. Attributes the program does not set itself can be given as ns-3
command-line attribute defaults.
"""

import importlib.util
import statistics
import sys
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "b", str(Path(__file__).resolve().parents[2] / "bench" / "ns3" / "run.py")
)
b = importlib.util.module_from_spec(spec)
spec.loader.exec_module(b)
flows = int(sys.argv[1])
seeds = [int(s) for s in sys.argv[2].split(",")]
for spec in sys.argv[3:]:
    name, _, rest = spec.partition("=")
    q, *extra = rest.split() if rest else ["fq_codel"]
    rs = [
        b.run_ns3(
            flows,
            "10Mbps",
            q,
            60.0,
            cc="cubic",
            rtt="50ms",
            limit=1000,
            ecn=False,
            seed=s,
            ping_interval=0.1,
            warmup=5.0,
            extra_args=extra,
        )
        for s in seeds
    ]

    def g(f, rs=rs):
        return statistics.mean(f(r) for r in rs)

    per = " ".join(f"{r['queue_delay_ms']['p50']:.2f}/{r['queue_delay_ms']['p95']:.2f}" for r in rs)
    print(
        f"{name:<24} p50 {g(lambda r: r['queue_delay_ms']['p50']):6.2f} p95 {g(lambda r: r['queue_delay_ms']['p95']):6.2f} "
        f"mean {g(lambda r: r['queue_delay_ms']['mean']):6.2f} gp {g(lambda r: r['goodput_mbps']):5.2f} drops {g(lambda r: r['drops']):6.0f} | {per}",
        flush=True,
    )
