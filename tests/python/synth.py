"""Small synthetic runs that follow docs/tables.md exactly, with hand-computable values.

Run "tiny" (duration 20 ms, record interval 1 ms):

down link: 8 Mb/s (1000 B per ms) until 10 ms, then 4 Mb/s (500 B per ms);
capacity = 10 ms * 1000 B/ms + 10 ms * 500 B/ms = 15000 B. Qdisc codel, limit "100p".

    pkt flow size  t_enq   t_out  outcome     sojourn
    p0  0    1000  0       0      sent        0 ms
    p1  0    1000  0       1 ms   sent        1 ms
    p2  0    1000  0       2 ms   marked      2 ms
    p3  0    1000  0.5 ms  0.5 ms overlimit   (never entered)
    p4  1    500   1 ms    3 ms   head        (left the queue at 3 ms)
    p5  1    1000  10 ms   14 ms  sent        4 ms

backlog (bytes): [0,1) 2000 (p1,p2); [1,2) 1500 (p2,p4); [2,3) 500 (p4); [3,10) 0;
[10,14) 1000 (p5); [14,20) 0.  Integral = 2000+1500+500+4*1000 = 8000 B*ms -> E[Q] = 400 B.
backlog (pkts):  [0,1) 2; [1,2) 2; [2,3) 1; [10,14) 1 -> integral 2+2+1+4 = 9 pkt*ms -> 0.45 pkts.
tx bytes = 1000*3 + 1000 = 4000 -> utilisation 4000/15000.

up link: 1 Mb/s (125 B per ms) constant, capacity 2500 B, qdisc pfifo, limit "150000B".
    q0  2  100  0  0       sent   0 ms
    q1  2  100  0  0.8 ms  sent   0.8 ms
backlog bytes [0, 0.8 ms) 100 -> E[Q] = 100*0.8/20 = 4 B; utilisation 200/2500 = 0.08.

flows: 0 tcp down cubic (group 0, unlimited, delivered 150 B per ms sample -> 1.2 Mb/s),
1 tcp down ledbat (group 1, 1000 B, syn 1 ms, completed 16 ms),
3 tcp down ledbat (group 1, 500 B, syn 2 ms, completed 18 ms), 2 ping up (probes).
probes of flow 2 (base RTT 10 ms): rtt 10, 12, lost, 14, 10 ms.
"""

from __future__ import annotations

import copy

import pyarrow as pa

from aqmlab import store

MS = 1_000_000
DURATION = 20 * MS

PACKETS = [
    # dir, flow, size, t_enq, t_out, outcome
    ("down", 0, 1000, 0, 0, "sent"),
    ("down", 0, 1000, 0, 1 * MS, "sent"),
    ("down", 0, 1000, 0, 2 * MS, "marked"),
    ("down", 0, 1000, MS // 2, MS // 2, "overlimit"),
    ("down", 1, 500, 1 * MS, 3 * MS, "head"),
    ("down", 1, 1000, 10 * MS, 14 * MS, "sent"),
    ("up", 2, 100, 0, 0, "sent"),
    ("up", 2, 100, 0, 800_000, "sent"),
]


def _backlog_at(direction: str, t: int) -> tuple[int, int]:
    """Right-continuous backlog from PACKETS (used to make the queue table consistent)."""
    b = n = 0
    for d, _f, size, t_in, t_out, outcome in PACKETS:
        if d == direction and outcome in ("sent", "marked", "head", "fat_flow") and t_in <= t < t_out:
            b += size
            n += 1
    return b, n


def _cum(direction: str, t: int, what: str) -> int:
    c = 0
    for d, _f, size, _t_in, t_out, outcome in PACKETS:
        if d != direction or t_out > t:
            continue
        if what == "tx_bytes" and outcome in ("sent", "marked"):
            c += size
        else:
            wanted = ("overlimit", "early", "head", "fat_flow") if what == "drops" else ("marked",)
            c += int(outcome in wanted and what in ("drops", "marks"))
    return c


def _rate(direction: str, t: int) -> int:
    if direction == "up":
        return 1_000_000
    return 8_000_000 if t < 10 * MS else 4_000_000


def tables() -> dict[str, pa.Table]:
    packets = pa.table(
        {
            "dir": pa.array([p[0] for p in PACKETS], pa.string()),
            "flow": pa.array([p[1] for p in PACKETS], pa.uint32()),
            "size": pa.array([p[2] for p in PACKETS], pa.uint32()),
            "t_enqueue_ns": pa.array([p[3] for p in PACKETS], pa.uint64()),
            "t_out_ns": pa.array([p[4] for p in PACKETS], pa.uint64()),
            "outcome": pa.array([p[5] for p in PACKETS], pa.string()),
        }
    )
    qrows = []
    for d in ("down", "up"):
        for k in range(20):
            t = k * MS
            b, n = _backlog_at(d, t)
            qrows.append(
                (d, t, b, n, _cum(d, t, "tx_bytes"), _cum(d, t, "drops"), _cum(d, t, "marks"), _rate(d, t))
            )
    queue = pa.table(
        {
            "t_ns": pa.array([r[1] for r in qrows], pa.uint64()),
            "dir": pa.array([r[0] for r in qrows], pa.string()),
            "backlog_bytes": pa.array([r[2] for r in qrows], pa.uint64()),
            "backlog_pkts": pa.array([r[3] for r in qrows], pa.uint64()),
            "tx_bytes": pa.array([r[4] for r in qrows], pa.uint64()),
            "drops": pa.array([r[5] for r in qrows], pa.uint64()),
            "marks": pa.array([r[6] for r in qrows], pa.uint64()),
            "rate_bps": pa.array([r[7] for r in qrows], pa.uint64()),
        }
    )
    # flow_series: flow 0 delivers 150 B per 1 ms sample; flow 1 reaches 1000 B at 16 ms;
    # flow 3 reaches 500 B at 18 ms; cwnd 10000 B + 100 B per ms for flow 0, srtt 10 ms; flow 0
    # (CUBIC) has a delay_min of 9 ms and, from 10 ms on, ssthresh 7000 B and W_max 10000 B
    fs = []
    for k in range(20):
        t = k * MS
        after = k >= 10
        fs.append(
            (
                t,
                0,
                150 * k,
                160 * k,
                10000 + 100 * k,
                10 * MS,
                9 * MS,
                *((7000, 10000) if after else (None,) * 2),
            )
        )
        fs.append(
            (
                t,
                1,
                0 if k < 1 else min(1000, 70 * (k - 1)) if k < 16 else 1000,
                0,
                4000,
                12 * MS,
                None,
                None,
                None,
            )
        )
        fs.append((t, 3, 0 if k < 18 else 500, 0, 4000, 12 * MS, None, None, None))
    nulls = pa.nulls(len(fs))
    flow_series = pa.table(
        {
            "t_ns": pa.array([r[0] for r in fs], pa.uint64()),
            "flow": pa.array([r[1] for r in fs], pa.uint32()),
            "delivered_bytes": pa.array([r[2] for r in fs], pa.uint64()),
            "sent_bytes": pa.array([r[3] for r in fs], pa.uint64()),
            "cwnd_bytes": pa.array([r[4] for r in fs], pa.uint64()),
            "srtt_ns": pa.array([r[5] for r in fs], pa.uint64()),
            "ssthresh_bytes": pa.array([r[7] for r in fs], pa.uint64()),
            "cc_alpha": nulls.cast(pa.float64()),
            "cc_bw_bps": nulls.cast(pa.uint64()),
            "cc_min_rtt_ns": pa.array([r[6] for r in fs], pa.uint64()),
            "cc_pacing_gain": nulls.cast(pa.float64()),
            "cc_state": nulls.cast(pa.string()),
            "cc_w_max_bytes": pa.array([r[8] for r in fs], pa.uint64()),
        }
    )
    probes = pa.table(
        {
            "flow": pa.array([2] * 5, pa.uint32()),
            "seq": pa.array(range(5), pa.uint64()),
            "t_send_ns": pa.array([0, 4 * MS, 8 * MS, 12 * MS, 16 * MS], pa.uint64()),
            "rtt_ns": pa.array([10 * MS, 12 * MS, None, 14 * MS, 10 * MS], pa.uint64()),
            "owd_up_ns": pa.array([5 * MS, 5 * MS, None, 6 * MS, 5 * MS], pa.uint64()),
            "owd_down_ns": pa.array([5 * MS, 7 * MS, None, 8 * MS, 5 * MS], pa.uint64()),
            "lost": pa.array([False, False, True, False, False], pa.bool_()),
            # probe 2 reached the echo server; its reply was lost on the way down
            "lost_up": pa.array([False] * 5, pa.bool_()),
        }
    )
    # no web flow: the core's empty table (docs/tables.md)
    web = pa.table(
        {
            "flow": pa.array([], pa.uint32()),
            "connection": pa.array([], pa.uint32()),
            "exchange": pa.array([], pa.uint32()),
            "req_bytes": pa.array([], pa.uint64()),
            "rsp_bytes": pa.array([], pa.uint64()),
            "t_request_ns": pa.array([], pa.uint64()),
            "response_time_ns": pa.array([], pa.uint64()),
        }
    )
    # no webpage flow: the core's empty table (docs/tables.md)
    webpage = pa.table(
        {
            "flow": pa.array([], pa.uint32()),
            "fetch": pa.array([], pa.uint32()),
            "t_start_ns": pa.array([], pa.uint64()),
            "fetch_time_ns": pa.array([], pa.uint64()),
            "timed_out": pa.array([], pa.uint32()),
            "objects_done": pa.array([], pa.uint32()),
        }
    )
    flows_rows = [
        # flow kind dir group label cc start base target psent bsent precv bdeliv retx rto ecn syn done drops marks
        (0, "tcp", "down", 0, "bulk", "cubic", 0, 10 * MS, 0, 3, 3000, 3, 2850, 1, 0, 1, 0, None, 1, 1),
        (
            1,
            "tcp",
            "down",
            1,
            "short",
            "ledbat",
            1 * MS,
            10 * MS,
            1000,
            2,
            1500,
            1,
            1000,
            1,
            1,
            0,
            1 * MS,
            16 * MS,
            1,
            0,
        ),
        (2, "ping", "up", 2, "ping2", "", 0, 10 * MS, 0, 5, 500, 4, 400, 0, 0, 0, None, None, 0, 0),
        (
            3,
            "tcp",
            "down",
            1,
            "short",
            "ledbat",
            2 * MS,
            10 * MS,
            500,
            1,
            500,
            1,
            500,
            0,
            0,
            0,
            2 * MS,
            18 * MS,
            0,
            0,
        ),
    ]
    names = [
        ("flow", pa.uint32()), ("kind", pa.string()), ("direction", pa.string()), ("group", pa.uint32()),
        ("label", pa.string()), ("cc", pa.string()), ("start_ns", pa.uint64()), ("base_rtt_ns", pa.uint64()),
        ("bytes_target", pa.uint64()), ("packets_sent", pa.uint64()), ("bytes_sent", pa.uint64()),
        ("packets_received", pa.uint64()), ("bytes_delivered", pa.uint64()), ("retransmits", pa.uint64()),
        ("rto_count", pa.uint64()), ("ecn_reductions", pa.uint64()), ("first_syn_ns", pa.uint64()),
        ("completed_ns", pa.uint64()), ("drops", pa.uint64()), ("marks", pa.uint64()),
    ]  # fmt: skip
    flows = pa.table({n: pa.array([r[i] for r in flows_rows], t) for i, (n, t) in enumerate(names)})
    links = pa.table(
        {
            "dir": pa.array(["down", "up"], pa.string()),
            "qdisc": pa.array(["codel", "pfifo"], pa.string()),
            "rate_bps": pa.array([8_000_000, 1_000_000], pa.uint64()),
            "capacity_bytes": pa.array([15000, 2500], pa.uint64()),
            "arrivals": pa.array([6, 2], pa.uint64()),
            "tx_packets": pa.array([4, 2], pa.uint64()),
            "tx_bytes": pa.array([4000, 200], pa.uint64()),
            "drops_overlimit": pa.array([1, 0], pa.uint64()),
            "drops_early": pa.array([0, 0], pa.uint64()),
            "drops_head": pa.array([1, 0], pa.uint64()),
            "drops_fat_flow": pa.array([0, 0], pa.uint64()),
            "drops_loss": pa.array([2, 0], pa.uint64()),
            "marks": pa.array([1, 0], pa.uint64()),
            "backlog_bytes": pa.array([0, 0], pa.uint64()),
            "backlog_pkts": pa.array([0, 0], pa.uint64()),
        }
    )
    rate_schedule = pa.table(
        {
            "dir": pa.array(["down", "down", "up"], pa.string()),
            "t_ns": pa.array([0, 10 * MS, 0], pa.uint64()),
            "rate_bps": pa.array([8_000_000, 4_000_000, 1_000_000], pa.uint64()),
        }
    )
    return {
        "packets": packets,
        "queue": queue,
        "flow_series": flow_series,
        "probes": probes,
        "web": web,
        "webpage": webpage,
        "flows": flows,
        "links": links,
        "rate_schedule": rate_schedule,
        **empty_tables("sojourn", "sojourn_totals"),
    }


ARROW = {
    "uint16": pa.uint16(),
    "uint32": pa.uint32(),
    "uint64": pa.uint64(),
    "uint64, nullable": pa.uint64(),
    "bool": pa.bool_(),
}


def empty_tables(*names: str) -> dict[str, pa.Table]:
    """Tables the synthetic runs leave empty, with the columns the core declares."""
    out = {}
    for t in store.LAYOUT:
        if t["name"] in names:
            cols = {c["name"]: pa.array([], ARROW.get(c["type"], pa.string())) for c in t["columns"]}
            out[t["name"]] = pa.table(cols)
    return out


def meta(name: str = "tiny", seed: int = 7, down_qdisc: str = "codel", up_qdisc: str = "pfifo") -> dict:
    return {
        "name": name,
        "seed": seed,
        "duration_ns": DURATION,
        "events": 1234,
        "wall_s": 0.01,
        "version": "0.1.0",
        "record": {"level": "packets", "interval": "1ms"},
        "scenario": {
            "name": name,
            "duration": "20ms",
            "topology": {
                "down": {"rate": "8Mbps", "delay": "5ms", "qdisc": {"name": down_qdisc, "limit": "100p"}},
                "up": {"rate": "1Mbps", "delay": "5ms", "qdisc": {"name": up_qdisc, "limit": "150000B"}},
            },
            "flows": [
                {"kind": "tcp", "direction": "down", "cc": "cubic", "label": "bulk"},
                {"kind": "tcp", "direction": "down", "cc": "ledbat", "count": 2, "size": "1000B"},
                {"kind": "ping", "interval": "4ms"},
            ],
        },
        "qdisc_diagnostics": {"down": {"drop_count": 1}, "up": {}},
        "conservation": True,
    }


def run(name: str = "tiny", seed: int = 7, drop: tuple[str, ...] = (), **kw) -> tuple[dict, dict]:
    """(tables, meta); ``drop`` lists tables left out (e.g. ("packets",) for a series-level run)."""
    t = tables()
    for d in drop:
        t.pop(d, None)
    m = meta(name, seed, **kw)
    if "packets" in drop:
        m["record"] = {"level": "series", "interval": "1ms"}
    return t, copy.deepcopy(m)


def scaled_run(name: str, seed: int, qdisc: str, delay_scale: float, goodput_scale: float):
    """A variant of tiny with scaled delays / goodputs, to give plots across runs some spread."""
    t, m = run(name, seed, down_qdisc=qdisc)
    p = t["packets"]
    t_out = [
        int(a + (b - a) * delay_scale)
        for a, b in zip(p["t_enqueue_ns"].to_pylist(), p["t_out_ns"].to_pylist())
    ]
    t["packets"] = p.set_column(
        p.schema.get_field_index("t_out_ns"), "t_out_ns", pa.array(t_out, pa.uint64())
    )
    fs = t["flow_series"]
    d = [int(x * goodput_scale) for x in fs["delivered_bytes"].to_pylist()]
    t["flow_series"] = fs.set_column(
        fs.schema.get_field_index("delivered_bytes"), "delivered_bytes", pa.array(d, pa.uint64())
    )
    pr = t["probes"]
    rtt = [
        None if x is None else int(10 * MS + (x - 10 * MS) * delay_scale) for x in pr["rtt_ns"].to_pylist()
    ]
    t["probes"] = pr.set_column(pr.schema.get_field_index("rtt_ns"), "rtt_ns", pa.array(rtt, pa.uint64()))
    m["params"] = {"qdisc": qdisc, "delay_scale": delay_scale}
    return t, m


def flent_run(n_up: int, n_down: int, n_probes: int, duration_s: int = 10, name: str = "flentish"):
    """A run of n_up + n_down TCP flows and n_probes probe streams, sampled every 100 ms.

    TCP flow k (k = 0.. in flow-id order) delivers at a constant (k + 1) Mbit/s, i.e.
    delivered_bytes(t) = (k + 1) * 125000 * t. Probe stream j answers every 200 ms with
    RTT = 20 + 10 j ms, except every 10th probe (seq 9, 19, ...) which is lost.
    The down queue holds 3000 B / 2 pkts at every sample, drops 1 packet every 100 ms.
    """
    step = 100 * MS
    n = duration_s * 10 + 1
    kinds = [("tcp", "up")] * n_up + [("tcp", "down")] * n_down + [("ping", "up")] * n_probes
    fs = {k: [] for k in ("t_ns", "flow", "delivered_bytes", "sent_bytes", "cwnd_bytes", "srtt_ns")}
    for fid, (kind, _d) in enumerate(kinds):
        if kind != "tcp":
            continue
        for i in range(n):
            fs["t_ns"].append(i * step)
            fs["flow"].append(fid)
            fs["delivered_bytes"].append((fid + 1) * 12500 * i)
            fs["sent_bytes"].append((fid + 1) * 13000 * i)
            fs["cwnd_bytes"].append(14480)
            fs["srtt_ns"].append(40 * MS)
    types = {"t_ns": pa.uint64(), "flow": pa.uint32()}
    flow_series = pa.table({k: pa.array(v, types.get(k, pa.uint64())) for k, v in fs.items()})
    pr = {
        k: [] for k in ("flow", "seq", "t_send_ns", "rtt_ns", "owd_up_ns", "owd_down_ns", "lost", "lost_up")
    }
    for j in range(n_probes):
        fid = n_up + n_down + j
        for s in range(duration_s * 5):
            lost = s % 10 == 9
            rtt = (20 + 10 * j) * MS
            pr["flow"].append(fid)
            pr["seq"].append(s)
            pr["t_send_ns"].append(s * 2 * step)
            pr["rtt_ns"].append(None if lost else rtt)
            pr["owd_up_ns"].append(None if lost else rtt // 2)
            pr["owd_down_ns"].append(None if lost else rtt // 2)
            pr["lost"].append(lost)
            pr["lost_up"].append(lost)
    probes = pa.table(
        {
            "flow": pa.array(pr["flow"], pa.uint32()),
            "seq": pa.array(pr["seq"], pa.uint64()),
            "t_send_ns": pa.array(pr["t_send_ns"], pa.uint64()),
            "rtt_ns": pa.array(pr["rtt_ns"], pa.uint64()),
            "owd_up_ns": pa.array(pr["owd_up_ns"], pa.uint64()),
            "owd_down_ns": pa.array(pr["owd_down_ns"], pa.uint64()),
            "lost": pa.array(pr["lost"], pa.bool_()),
            "lost_up": pa.array(pr["lost_up"], pa.bool_()),
        }
    )
    dur_ns = duration_s * 1_000_000_000
    rows = []
    for fid, (kind, d) in enumerate(kinds):
        deliv = (fid + 1) * 125000 * duration_s if kind == "tcp" else 0
        rows.append((fid, kind, d, fid, f"{kind}{fid}", "cubic" if kind == "tcp" else "", 0, 20 * MS, 0,
                     10, deliv, 10, deliv, 0, 0, 0, 0 if kind == "tcp" else None, None, 0, 0))  # fmt: skip
    names = [
        ("flow", pa.uint32()), ("kind", pa.string()), ("direction", pa.string()), ("group", pa.uint32()),
        ("label", pa.string()), ("cc", pa.string()), ("start_ns", pa.uint64()), ("base_rtt_ns", pa.uint64()),
        ("bytes_target", pa.uint64()), ("packets_sent", pa.uint64()), ("bytes_sent", pa.uint64()),
        ("packets_received", pa.uint64()), ("bytes_delivered", pa.uint64()), ("retransmits", pa.uint64()),
        ("rto_count", pa.uint64()), ("ecn_reductions", pa.uint64()), ("first_syn_ns", pa.uint64()),
        ("completed_ns", pa.uint64()), ("drops", pa.uint64()), ("marks", pa.uint64()),
    ]  # fmt: skip
    flows = pa.table({nm: pa.array([r[i] for r in rows], t) for i, (nm, t) in enumerate(names)})
    qn = n
    queue = pa.table(
        {
            "t_ns": pa.array([i * step for i in range(qn)] * 2, pa.uint64()),
            "dir": pa.array(["down"] * qn + ["up"] * qn, pa.string()),
            "backlog_bytes": pa.array([3000] * qn + [0] * qn, pa.uint64()),
            "backlog_pkts": pa.array([2] * qn + [0] * qn, pa.uint64()),
            "tx_bytes": pa.array([i * 125000 for i in range(qn)] * 2, pa.uint64()),
            "drops": pa.array(list(range(qn)) + [0] * qn, pa.uint64()),
            "marks": pa.array([0] * (2 * qn), pa.uint64()),
            "rate_bps": pa.array([10_000_000] * (2 * qn), pa.uint64()),
        }
    )
    u64 = pa.uint64()
    links = pa.table(
        {
            "dir": ["down", "up"], "qdisc": ["fq_codel", "fq_codel"],
            "rate_bps": pa.array([10_000_000] * 2, u64),
            "capacity_bytes": pa.array([1_250_000 * duration_s] * 2, u64),
            "arrivals": pa.array([100, 100], u64), "tx_packets": pa.array([90, 100], u64),
            "tx_bytes": pa.array([125000 * (qn - 1)] * 2, u64),
            "drops_overlimit": pa.array([qn - 1, 0], u64), "drops_early": pa.array([0, 0], u64),
            "drops_head": pa.array([0, 0], u64), "drops_fat_flow": pa.array([0, 0], u64),
            "drops_loss": pa.array([0, 0], u64), "marks": pa.array([0, 0], u64),
            "backlog_bytes": pa.array([3000, 0], u64), "backlog_pkts": pa.array([2, 0], u64),
        }
    )  # fmt: skip
    rs = pa.table(
        {"dir": ["down", "up"], "t_ns": pa.array([0, 0], u64), "rate_bps": pa.array([10_000_000] * 2, u64)}
    )
    m = meta(name, 1, down_qdisc="fq_codel", up_qdisc="fq_codel")
    m["duration_ns"] = dur_ns
    m["record"] = {"level": "series", "interval": "100ms"}
    tables_ = {"queue": queue, "flow_series": flow_series, "probes": probes, "flows": flows, "links": links,
               "rate_schedule": rs}  # fmt: skip
    return tables_, m
