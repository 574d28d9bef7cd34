"""Replay TcpLedbat's delay filters from an `lpcc --ledbat-log=FILE` record and account for the
low-priority flows' window growth.

TcpLedbat's state (noise filter, base history) is private, so it is rebuilt here from the same
timestamps, with the algorithm of ns-3 3.44's tcp-ledbat.cc as read:

* PktsAcked: the sample is TSval - TSecr of the ACK being processed (whole ms, one clock), taken
  on every call (new and duplicate ACKs) once the srtt is non-zero; the "valid OWD" flag is
  cleared when either timestamp is 0.
* AddDelay (noise filter, NoiseFilterLen entries; base history, BaseHistoryLen entries): append;
  once the vector reaches the length the oldest entry is erased, so it keeps length - 1 entries;
  the minimum is tracked by index.
* UpdateBaseDelay: a new base entry only when the integer simulation second minus the last
  rollover exceeds 60, else the last entry keeps the minimum.
* CongestionAvoidance: queue_delay = |current - base| (ms) with offset = TARGET -/+ queue_delay;
  cwnd += offset x GAIN x segmentsAcked x MSS / (TARGET x cwnd) x MSS (added as a double to the
  uint32 window); capped at m_highTxMark - m_lastAckedSeq + segmentsAcked x MSS; floored at
  MinCwnd segments.

Each IncreaseWindow call's predicted window is checked against the recorded one, then the
growth is split by the congestion state in which TcpSocketBase::ProcessAck handed the ACK over:
an ACK in the open state, the ACK that ends fast recovery (the window was just set to ssthresh,
segmentsAcked counts everything the ACK covers), ACKs in and at the end of the RTO's loss state.

    validation/lpcc2013/out/lpcc --lpcc=ledbat --qdisc=codel --ledbat-allowed-increase=1 \\
        --seed=1 --ledbat-log=/tmp/ledbat.csv
    python validation/lpcc2013/ledbat_log.py /tmp/ledbat.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import defaultdict

import numpy as np


class CircBuf:
    """TcpLedbat's OwdCircBuf with AddDelay and MinCircBuf."""

    def __init__(self) -> None:
        self.buf: list[int] = []
        self.min = 0

    def add(self, owd: int, maxlen: int) -> None:
        if not self.buf:
            self.buf.append(owd)
            self.min = 0
            return
        self.buf.append(owd)
        if self.buf[self.min] > owd:
            self.min = len(self.buf) - 1
        if len(self.buf) >= maxlen:
            del self.buf[0]
            self.min = 0
            for i in range(1, maxlen - 1):
                if self.buf[i] < self.buf[self.min]:
                    self.min = i

    def minimum(self) -> int:
        return self.buf[self.min] if self.buf else 0xFFFFFFFF


class Replay:
    def __init__(self, filt: int, hist: int) -> None:
        self.noise = CircBuf()
        self.base = CircBuf()
        self.filt = filt
        self.hist = hist
        self.last_rollover = 0
        self.valid = False

    def pkts_acked(self, t_ns: int, tsval: int, tsecr: int) -> None:
        self.valid = tsval != 0 and tsecr != 0
        owd = (tsval - tsecr) & 0xFFFFFFFF
        self.noise.add(owd, self.filt)
        if not self.base.buf:
            self.base.add(owd, self.hist)
            return
        sec = t_ns // 1_000_000_000
        if sec - self.last_rollover > 60:
            self.last_rollover = sec
            self.base.add(owd, self.hist)
        else:
            last = len(self.base.buf) - 1
            if owd < self.base.buf[last]:
                self.base.buf[last] = owd
                if owd < self.base.buf[self.base.min]:
                    self.base.min = last

    def queue_delay(self) -> tuple[int, int, int]:
        cur, base = self.noise.minimum(), self.base.minimum()
        return cur, base, cur - base


def predict(
    cwnd: int, segs: int, flight: int, qd: int, mss: int, target: int, gain: float, min_cwnd: int
) -> int:
    offset = float(target - qd) if qd > 0 else float(target + (-qd))
    offset *= gain
    cnt = int(offset * segs * mss)  # static_cast<int32_t>
    inc = cnt / (target * cwnd)
    new = int(cwnd + inc * mss) % 2**32  # the double sum assigned to the uint32 window
    new = min(new, flight + segs * mss)
    return max(new, min_cwnd * mss)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log")
    ap.add_argument("--mss", type=int, default=1000)
    ap.add_argument("--target-ms", type=int, default=100)
    ap.add_argument("--gain", type=float, default=1.0)
    ap.add_argument("--filter", type=int, default=4)
    ap.add_argument("--history", type=int, default=10)
    ap.add_argument("--min-cwnd", type=int, default=2)
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    a = ap.parse_args()

    with open(a.log) as fh:
        rows = list(csv.DictReader(fh))
    rep: dict[int, Replay] = defaultdict(lambda: Replay(a.filter, a.history))
    last_p: dict[int, dict] = {}
    # per flow: IncreaseWindow calls in CA with the replayed estimate
    calls: dict[int, list[dict]] = defaultdict(list)
    mismatches = 0
    checked = 0
    cw_changes: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for r in rows:
        f = int(r["flow"])
        t = int(r["t_ns"])
        if r["call"] == "P":
            rep[f].pkts_acked(t, int(r["tsval"]), int(r["tsecr"]))
            last_p[f] = r
        elif r["call"] == "I":
            st = rep[f]
            cur, base, qd = st.queue_delay()
            cw0, cw1 = int(r["cwnd_before"]), int(r["cwnd_after"])
            segs, flight = int(r["segs"]), int(r["flight"])
            p = last_p.get(f)
            ctx = p["state"] if p is not None and int(p["t_ns"]) == t else "?"
            rec = {
                "t": t / 1e9,
                "ctx": ctx,
                "state": r["state"],
                "segs": segs,
                "cwnd0": cw0,
                "cwnd1": cw1,
                "cur": cur,
                "base": base,
                "qd": qd,
                "sample": (int(r["tsval"]) - int(r["tsecr"])),
                "flight": flight,
                "valid": st.valid,
            }
            if st.valid:
                pred = predict(cw0, segs, flight, qd, a.mss, a.target_ms, a.gain, a.min_cwnd)
                rec["pred"] = pred
                rec["law"] = cw0 + (a.target_ms - qd) / a.target_ms * a.gain * segs * a.mss * a.mss / cw0
                checked += 1
                if pred != cw1:
                    mismatches += 1
            calls[f].append(rec)
        elif r["call"] == "W":
            cw_changes[f].append((t, int(r["cwnd_after"]) - int(r["cwnd_before"]), r["state"]))

    out: dict = {"increase_window_calls_checked": checked, "mismatches": mismatches, "flows": {}}
    for f, cs in sorted(calls.items()):
        by: dict[str, dict] = {}
        for key, sel in [
            ("open", lambda c: c["ctx"] == "CA_OPEN" and c["state"] == "CA_OPEN"),
            ("recovery_exit", lambda c: c["ctx"] == "CA_RECOVERY"),
            ("loss", lambda c: c["ctx"] == "CA_LOSS" and c["state"] == "CA_LOSS"),
            ("loss_exit", lambda c: c["ctx"] == "CA_LOSS" and c["state"] == "CA_OPEN"),
            ("other", lambda c: c["ctx"] not in ("CA_OPEN", "CA_RECOVERY", "CA_LOSS")),
        ]:
            s = [c for c in cs if sel(c)]
            if not s:
                continue
            growth = sum(c["cwnd1"] - c["cwnd0"] for c in s) / a.mss
            # window's worth of ACKs: sum of acked / cwnd, i.e. the number of RTTs' ACKs seen
            rtts = sum(c["segs"] * a.mss / c["cwnd0"] for c in s)
            by[key] = {
                "calls": len(s),
                "segs_acked": sum(c["segs"] for c in s),
                "growth_segs": growth,
                "rtts_of_acks": rtts,
                "growth_per_rtt_of_acks": growth / rtts if rtts else None,
                "mean_qd_ms": float(np.mean([c["qd"] for c in s])),
                "mean_sample_ms": float(np.mean([c["sample"] for c in s])),
                "mean_segs": float(np.mean([c["segs"] for c in s])),
                "mean_cwnd0_segs": float(np.mean([c["cwnd0"] for c in s])) / a.mss,
                "capped": sum(1 for c in s if "pred" in c and c["cwnd1"] < c["law"] - 1),
                "invalid_owd": sum(1 for c in s if not c["valid"]),
            }
        qd = [c["qd"] for c in cs]
        cur = [c["cur"] for c in cs]
        samp = [c["sample"] for c in cs]
        base = [c["base"] for c in cs]
        ups = sum(d for _, d, _ in cw_changes[f] if d > 0) / a.mss
        downs = sum(d for _, d, _ in cw_changes[f] if d < 0) / a.mss
        out["flows"][f] = {
            "mean_sample_ms": float(np.mean(samp)),
            "mean_current_ms": float(np.mean(cur)),
            "base_ms": [int(min(base)), int(max(base))],
            "mean_queue_delay_ms": float(np.mean(qd)),
            "cwnd_trace_up_segs": ups,
            "cwnd_trace_down_segs": downs,
            "by_context": by,
        }
    if a.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"IncreaseWindow calls replayed: {checked}, predicted window != recorded: {mismatches}")
    for f, d in out["flows"].items():
        print(
            f"flow {f}: sample {d['mean_sample_ms']:.1f} ms, current (filtered) {d['mean_current_ms']:.1f} ms,"
            f" base {d['base_ms']}, queue_delay {d['mean_queue_delay_ms']:.1f} ms;"
            f" cwnd trace +{d['cwnd_trace_up_segs']:.0f} / {d['cwnd_trace_down_segs']:.0f} segs"
        )
        for k, b in d["by_context"].items():
            print(
                f"   {k:14s} calls {b['calls']:5d} segs/call {b['mean_segs']:5.2f} cwnd {b['mean_cwnd0_segs']:5.2f}"
                f" qd {b['mean_qd_ms']:5.1f} ms growth {b['growth_segs']:7.1f} segs"
                f" over {b['rtts_of_acks']:6.1f} RTTs of ACKs ="
                f" {b['growth_per_rtt_of_acks'] if b['growth_per_rtt_of_acks'] is not None else float('nan'):5.2f}/RTT"
                f" capped {b['capped']} invalid {b['invalid_owd']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
