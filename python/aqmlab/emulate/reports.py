"""The tools' reports into the run's tables: iperf3's JSON into ``flows`` and ``flow_series``,
ping's lines into ``probes``."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pyarrow as pa

from aqmlab.emulate.plans import FlowPlan
from aqmlab.emulate.tools import Tools
from aqmlab.emulate.units import _ns


def _iperf_report(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def apply_reports(tables: dict, plans: list[FlowPlan], tools: Tools, duration_ns: int) -> list[str]:
    """Fills the `flows`, `flow_series` and `probes` tables from the tools' reports; returns
    problems (a tool that failed) as lines for the run's metadata."""
    problems: list[str] = []
    rows = tables["flows"].to_pylist()
    series: list[dict] = []
    probes: list[dict] = []
    for p in plans:
        _, launched_s = tools.clients[p.flow]
        row = rows[p.flow]
        row["start_ns"] = round(launched_s * 1e9)
        if p.kind == "ping":
            probes += _ping_probes(p, (tools.workdir / f"flow{p.flow}.txt").read_text(), launched_s)
            continue
        rep = _iperf_report(tools.workdir / f"flow{p.flow}.json")
        if rep is None or "error" in rep:
            problems.append(f"flow {p.flow}: iperf3 failed: {rep.get('error') if rep else 'no report'}")
            continue
        client_side = rep
        server_side = rep.get("server_output_json") or {}
        # the receiver is iperf3's server unless its client receives (-R)
        sender, receiver = (server_side, client_side) if p.receiving_client else (client_side, server_side)
        problems += _fill_row(row, p, rep.get("end", {}))
        series += _series(p, sender, receiver, launched_s, duration_ns)
    tables["flows"] = pa.Table.from_pylist(rows, schema=tables["flows"].schema)
    tables["flow_series"] = pa.Table.from_pylist(series, schema=tables["flow_series"].schema)
    tables["probes"] = pa.Table.from_pylist(probes, schema=tables["probes"].schema)
    return problems


def _fill_row(row: dict, p: FlowPlan, end: dict) -> list[str]:
    """The flow's totals from the client's report, which holds both ends' (iperf3 exchanges
    them): the sender's bytes and retransmissions (tcp_info.tcpi_total_retrans), the
    receiver's bytes. iperf3's receiver may stop counting a finite transfer (`-n`) before its
    last bytes arrive (`FlowPlan.swapped` says when): the transfer is delivered whole when the
    forwarder saw every data byte of the connection acknowledged (the row's bytes as the
    forwarder filled them), and is a problem of the run otherwise."""
    if p.kind != "tcp":
        s = end.get("sum", {})
        row["packets_sent"] = int(s.get("packets", 0))
        row["bytes_sent"] = int(s.get("bytes", 0))
        row["packets_received"] = max(0, int(s.get("packets", 0)) - int(s.get("lost_packets", 0)))
        row["bytes_delivered"] = round(int(s.get("bytes", 0)) * (1 - float(s.get("lost_percent", 0)) / 100))
        return []
    stream, acked = row["bytes_sent"], row["bytes_delivered"]
    sent, got = end.get("sum_sent", {}), end.get("sum_received", {})
    row["bytes_sent"] = int(sent.get("bytes", 0))
    row["retransmits"] = int(sent.get("retransmits", 0) or 0)
    row["bytes_delivered"] = int(got.get("bytes", 0))
    if p.entry.get("bytes") is None:
        return []
    if 0 < stream <= acked:
        row["bytes_delivered"] = row["bytes_sent"]
        return []
    why = f"{acked} of {stream} bytes of the connection acknowledged"
    return [f"flow {p.flow}: iperf3 ended the {p.direction}load before it was delivered ({why})"]


def _series(p: FlowPlan, sender: dict, receiver: dict, launched_s: float, duration_ns: int) -> list[dict]:
    """flow_series rows from the tools' 0.1 s intervals: delivered bytes from the receiver,
    cwnd and RTT from the sender (Linux tcp_info via iperf3)."""
    out = []
    delivered = sent = 0
    s_iv = sender.get("intervals", [])
    for k, iv in enumerate(receiver.get("intervals", [])):
        st = iv["streams"][0]
        delivered += int(st["bytes"])
        t_ns = round((launched_s + st["end"]) * 1e9)
        if t_ns > duration_ns:
            break
        snd = s_iv[k]["streams"][0] if k < len(s_iv) else {}
        sent += int(snd.get("bytes", 0))
        out.append(
            {
                "t_ns": t_ns,
                "flow": p.flow,
                "delivered_bytes": delivered,
                "sent_bytes": sent,
                "cwnd_bytes": int(snd.get("snd_cwnd", 0)),
                "srtt_ns": int(snd.get("rtt", 0)) * 1000,
            }
        )
    return out


PING_LINE = re.compile(r"^\[(\d+\.\d+)\] .*icmp_seq=(\d+) .*time=([0-9.]+) ms")


def _ping_probes(p: FlowPlan, text: str, launched_s: float) -> list[dict]:
    """One probe per echo request ping sent: the reply's RTT from ping's own report; send
    times from the reply's timestamp (-D) minus the RTT, on the run's clock."""
    offset = time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)
    m_tx = re.search(r"(\d+) packets transmitted", text)
    sent = int(m_tx.group(1)) if m_tx else 0
    interval = _ns(p.entry["interval"])
    replies = {}
    for line in text.splitlines():
        m = PING_LINE.match(line)
        if m:
            seq, rtt_ns = int(m.group(2)), round(float(m.group(3)) * 1e6)
            replies[seq] = (round((float(m.group(1)) - offset) * 1e9) - rtt_ns, rtt_ns)
    rows = []
    for seq in range(1, sent + 1):
        t_send, rtt = replies.get(seq, (round(launched_s * 1e9) + (seq - 1) * interval, None))
        rows.append(
            {
                "flow": p.flow,
                "seq": seq - 1,
                "t_send_ns": max(0, t_send - _T0["ns"]),
                "rtt_ns": rtt,
                "owd_up_ns": None,
                "owd_down_ns": None,
                "lost": rtt is None,
                "lost_up": None,  # ping does not tell which way a probe was lost
            }
        )
    return rows


# The run's time 0 on CLOCK_MONOTONIC, for converting tool timestamps.
_T0 = {"ns": 0}
