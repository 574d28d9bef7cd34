"""BBR's own state in the kernel, ACK by ACK, beside the model's.

    sudo .venv/bin/python validation/kernel/bbrstate.py bulk1-codel-10m-50ms-bbr --duration 40 --warmup 10

Runs `trace.py CASE` (both sides) with a BPF program on the `tcp:tcp_probe` tracepoint (bpftrace,
`apt-get install bpftrace`): on each pure ACK a socket receives, before it acts, it reads the
socket's `struct tcp_sock` (the window, packets out, the latest delivery-rate sample
`rate_delivered` / `rate_interval_us` that tcp_rate.c `tcp_rate_gen` keeps for tcp_info) and
tcp_bbr.c's `struct bbr` in `icsk_ca_priv` (the bandwidth filter's maximum, the minimum RTT, the
mode, the gain cycle's phase and pacing gain, ACK aggregation's `extra_acked`), through the
kernel's BTF: no kprobe needed. Its clock is CLOCK_MONOTONIC, the emulated run's, so each record
sits on the run's packets' clock (`kernel.t0_ns`, written by trace.py). Per data sender after
`--warmup`: the delivery-rate samples' distribution (Mbit/s of payload), the bandwidth filter's,
the minimum RTT's, the time in each mode and phase, `extra_acked`, and the window; beside it the
model's bandwidth filter, minimum RTT, pacing gains and window from its `flow_series`.
Records are kept in out/trace/CASE/kernel.bbr.txt.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import deferral
import events

BW_SCALE, BBR_UNIT = 24, 256
"""tcp_bbr.c: bandwidth in packets per microsecond << 24; gains in 1/256."""
MODES = {0: "startup", 1: "drain", 2: "probe_bw", 3: "probe_rtt"}
COLUMNS = ["t_ns", "sport", "dport", "rate_delivered", "rate_interval_us", "bw", "min_rtt_us", "mode",
           "cycle_idx", "pacing_gain", "extra0", "extra1", "cwnd", "packets_out", "ca_state",
           "pacing_rate"]  # fmt: skip
PROGRAM = """
tracepoint:tcp:tcp_probe /args->data_len == 0/ {
  $tp = (struct tcp_sock *)args->skaddr;
  $icsk = (struct inet_connection_sock *)args->skaddr;
  $b = (struct bbr *)$icsk->icsk_ca_priv;
  printf("%llu %u %u %u %u %u %u %u %u %u %u %u %u %u %u %lu\\n", nsecs, args->sport, args->dport,
    $tp->rate_delivered, $tp->rate_interval_us, $b->bw.s[0].v, $b->min_rtt_us, $b->mode,
    $b->cycle_idx, $b->pacing_gain, $b->extra_acked[0], $b->extra_acked[1], $tp->snd_cwnd,
    $tp->packets_out, $icsk->icsk_ca_state, ((struct sock *)args->skaddr)->sk_pacing_rate);
}
"""


def record(case: str, duration: float, out: Path, stored: bool = False) -> pd.DataFrame:
    """The kernel's records of one `trace.py CASE` run (the last one's with `stored`), its times
    in seconds from the run's start."""
    path = out / "kernel.bbr.txt"
    if not stored:
        _run(case, duration, path)
    rows = [ln.split() for ln in path.read_text().splitlines() if ln[:1].isdigit()]
    df = pd.DataFrame(np.array(rows, dtype=np.int64), columns=COLUMNS)
    t0 = int((out / "kernel.t0_ns").read_text())
    return df.assign(t=(df.t_ns - t0) / 1e9)


def _run(case: str, duration: float, path: Path) -> None:
    if shutil.which("bpftrace") is None:
        raise SystemExit("bbrstate.py needs bpftrace (apt-get install bpftrace)")
    with open(path, "w") as f:
        bt = subprocess.Popen(["bpftrace", "-e", PROGRAM], stdout=f, stderr=subprocess.DEVNULL)
        try:
            time.sleep(3)  # bpftrace compiles and attaches
            subprocess.run([sys.executable, str(HERE / "trace.py"), case, "--duration", str(duration)],
                           check=True, stdout=subprocess.DEVNULL)  # fmt: skip
        finally:
            bt.terminate()
            bt.wait()


def _pcts(x: np.ndarray, qs=(1, 10, 50, 90, 99)) -> str:
    return " ".join(f"p{q} {v:.3f}" for q, v in zip(qs, np.percentile(x, qs))) if x.size else "none"


def kernel_report(x: pd.DataFrame, mss: int) -> list[str]:
    bw = x.bw.to_numpy() * mss * 8 * 1e6 / 2**BW_SCALE / 1e6
    ok = x.rate_interval_us > 0
    rate = (x.rate_delivered[ok] * mss * 8 / x.rate_interval_us[ok]).to_numpy()
    dt = np.diff(x.t.to_numpy(), append=x.t.iloc[-1])
    mode = x["mode"]
    gain = (x.pacing_gain / BBR_UNIT).round(2).astype(str)
    phase = mode.map(MODES) + np.where(mode == 2, "/" + gain, "")
    shares = pd.Series(dt).groupby(phase.to_numpy()).sum() / dt.sum()
    extra = np.maximum(x.extra0, x.extra1).to_numpy()
    open_ = x.ca_state.to_numpy() == 0
    return [
        f"  rate samples Mbit/s: {_pcts(rate)}",
        f"  bandwidth filter Mbit/s: {_pcts(bw)}; mean {bw.mean():.3f}",
        f"  min RTT ms: {_pcts(x.min_rtt_us.to_numpy() / 1e3)}",
        "  time by mode/gain: " + " ".join(f"{k}:{v:.3f}" for k, v in shares.items()),
        f"  extra_acked (segments): {_pcts(extra)}; mean {extra.mean():.2f}",
        f"  window mean {np.average(x.cwnd, weights=dt):.2f}, in Open {np.average(x.cwnd[open_], weights=dt[open_]):.2f}",
        f"  packets out / window in Open: {_pcts((x.packets_out / x.cwnd).to_numpy()[open_], (10, 50, 90))}",
    ]  # fmt: skip


def model_report(fs: pd.DataFrame, flow: int, warmup: float, mss: int) -> list[str]:
    x = fs[(fs.flow == flow) & (fs.t_ns >= warmup * 1e9) & fs.cc_bw_bps.notna()]
    if x.empty:
        return ["  model: no samples"]
    gains = x.cc_pacing_gain.round(2).value_counts(normalize=True).sort_index()
    return [
        f"  model bandwidth filter Mbit/s: {_pcts(x.cc_bw_bps.to_numpy() / 1e6)}; mean {x.cc_bw_bps.mean() / 1e6:.3f}",
        f"  model min RTT ms: {_pcts(x.cc_min_rtt_ns.to_numpy() / 1e6)}",
        "  model pacing gains (samples): " + " ".join(f"{g:g}:{v:.3f}" for g, v in gains.items()),
        f"  model window mean {(x.cwnd_bytes / mss).mean():.2f}",
    ]  # fmt: skip


def main() -> None:
    a = deferral.case_args(__doc__.splitlines()[0], stored=True)
    out = HERE / "out" / "trace" / a.case
    out.mkdir(parents=True, exist_ok=True)
    df = record(a.case, a.duration, out, a.stored)
    fs = pd.read_parquet(out / "sim.flow_series.parquet")
    df = df[df.t >= a.warmup]
    for (sport, dport), x in df.groupby(["sport", "dport"]):
        flow = events._flow(int(sport), int(dport))
        if flow is None or len(x) < 500 or x.bw.max() == 0:
            continue  # a receiver, iperf3's control connection or not BBR
        print(f"flow {flow} (ports {sport} -> {dport}), {len(x)} ACKs after {a.warmup:g} s")
        print("\n".join(kernel_report(x.sort_values("t"), a.mss) + model_report(fs, flow, a.warmup, a.mss)))


if __name__ == "__main__":
    main()
