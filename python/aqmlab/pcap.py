"""Export of one hop's packets as a pcap capture file (``aqmlab export pcap``), so that a run opens
in Wireshark or tshark like a capture on a device.

The capture point is the hop's link: one record per packet at the start of its transmission
(``t_out_ns`` of a ``sent`` or ``marked`` row of the ``packets`` table), where Linux's taps see an
outgoing packet (net/core/dev.c, dev_hard_start_xmit -> xmit_one -> dev_queue_xmit_nit: after the
qdisc, so a packet the qdisc drops is never captured) and where ns-3's PointToPointNetDevice fires
its sniffer traces (as it takes a packet off its queue, just before TransmitStart). ``drops=True``
adds the dropped packets at their drop time.

Each record is a raw IPv4 packet (LINKTYPE_RAW) whose headers are written from the row:

* IPv4 (RFC 791): total length = the packet's IP size, TOS = DSCP << 2 | ECN (the flow's ``dscp``,
  the row's ``ecn`` as the packet left the hop), DF, TTL 64, a valid header checksum. The client
  of a flow is 10.1.x.y, numbered by its ``host`` in order of first use; the server 10.2.x.y by
  its ``server``; ``up`` rows go client -> server.
* TCP (RFC 9293) for every row with TCP flags (every modelled segment has SYN or ACK set): the
  row's sequence and acknowledgement numbers (mod 2^32; the model's SYN is sequence number 0),
  its flags (the AE bit of RFC 9768 in the header's bit 8), window 65535 with window scale 7 (the
  model has no receive window), and the options the model's sizes count (transport/wire.rs):
  a SYN's MSS, SACK-permitted, timestamps and window scale; every other segment's timestamps. The
  timestamp values and the SACK blocks are not recorded: the timestamp option carries zeros and
  the bytes of an ACK's SACK option are NOPs (a SACK option would show made-up blocks).
* UDP (RFC 768) for udp and voip flows and a webpage's name lookup; ICMP echo request and reply
  (RFC 792) for ping flows, with the flow as identifier and the probe number as sequence.
* Ports: the client's is 49152 + flow id (mod 16384), the server's 5201.
* The payload is zeros (the model carries no bytes), so every checksum is right for the bytes
  the packet would have; a record keeps at most ``snaplen`` bytes of it, as ``tcpdump -s``.

The file is classic pcap with nanosecond timestamps (magic 0xa1b23c4d) on the synthetic epoch
of the Flent export, t = 0 at 2026-01-01 00:00 UTC.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from aqmlab import files
from aqmlab.flent.series import T0

LINKTYPE_RAW = 101
MAGIC_NS = 0xA1B23C4D
SNAPLEN = 128
MAX_SNAPLEN = 262144
SERVER_PORT = 5201
CLIENT_PORT_BASE = 49152
WSCALE = 7
PROTO = {"tcp": 6, "udp": 17, "icmp": 1}
ECN_CODES = {"not_ect": 0, "ect1": 1, "ect0": 2, "ce": 3}
# TCP option kinds (RFC 9293 3.2, RFC 2018, RFC 7323)
NOP, MSS_OPT, WS_OPT, SACK_OK, TS_OPT = 1, 2, 3, 4, 8
EPOCH_NS = int(T0) * 1_000_000_000


def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071): the one's complement of the one's complement sum of the
    16-bit words of ``data`` (padded with a zero byte to even length)."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def tcp_options(flags: int, length: int, mss: int) -> bytes:
    """``length`` bytes of options for a segment with ``flags``: a SYN's MSS, SACK-permitted,
    timestamps, NOP and window scale (Linux's order, tcp_options_write), else NOP, NOP and
    timestamps; the rest (an ACK's SACK option, whose blocks are not recorded) NOPs."""
    ts = bytes((TS_OPT, 10)) + bytes(8)
    if flags & 0x02:
        opts = (
            struct.pack("!BBH", MSS_OPT, 4, mss) + bytes((SACK_OK, 2)) + ts + bytes((NOP, WS_OPT, 3, WSCALE))
        )
    else:
        opts = bytes((NOP, NOP)) + ts
    if len(opts) > length:
        opts = bytes((NOP,)) * length
    return opts + bytes((NOP,)) * (length - len(opts))


class _Hosts:
    """The addresses and ports of each flow (see the module's docstring)."""

    def __init__(self, run):
        flows = sorted(run.tables["flows"].to_pylist(), key=lambda r: r["flow"])
        entries = (run.meta.get("scenario") or {}).get("flows") or []
        clients: dict = {}
        servers: dict = {}
        self.kind, self.mss, self.dscp, self.addr = {}, {}, {}, {}
        for r in flows:
            e = entries[r["group"]] if r["group"] < len(entries) else {}
            c = clients.setdefault(e.get("host"), len(clients) + 1)
            s = servers.setdefault(e.get("server"), len(servers) + 1)
            f = r["flow"]
            self.kind[f] = r["kind"]
            self.mss[f] = int(e.get("mss") or 1448) + 12  # the option counts the timestamps' 12 bytes
            self.dscp[f] = int(r.get("dscp") or 0)
            self.addr[f] = (_ip(1, c), _ip(2, s))


def _ip(net: int, n: int) -> bytes:
    return bytes((10, net, (n >> 8) & 0xFF, n & 0xFF))


def packet(h: _Hosts, flow: int, up: bool, size: int, ecn: int, seq: int, ack: int, payload: int,
           flags: int) -> bytes:  # fmt: skip
    """The headers of one packet of ``flow`` (``up``: client -> server) and its zero payload,
    ``size`` bytes in all."""
    client, server = h.addr[flow]
    src, dst = (client, server) if up else (server, client)
    cport = CLIENT_PORT_BASE + flow % 16384
    sport, dport = (cport, SERVER_PORT) if up else (SERVER_PORT, cport)
    if flags:
        proto = PROTO["tcp"]
        optlen = size - 40 - payload
        doff = (20 + optlen) // 4
        hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                          doff << 4 | (flags >> 8) & 1, flags & 0xFF, 0xFFFF, 0, 0)  # fmt: skip
        l4 = hdr + tcp_options(flags, optlen, h.mss[flow])
        csum_at = 16
    elif h.kind[flow] == "ping":
        proto = PROTO["icmp"]
        l4 = struct.pack("!BBHHH", 8 if up else 0, 0, 0, flow & 0xFFFF, seq & 0xFFFF)
        csum_at = 2
    else:
        proto = PROTO["udp"]
        l4 = struct.pack("!HHHH", sport, dport, size - 20, 0)
        csum_at = 6
    body = l4 + bytes(size - 20 - len(l4))
    pseudo = b"" if proto == PROTO["icmp"] else src + dst + struct.pack("!BBH", 0, proto, len(body))
    c = checksum(pseudo + l4)  # the zero payload adds nothing to the sum
    if proto == PROTO["udp"] and c == 0:
        c = 0xFFFF  # RFC 768: a computed zero is sent as all ones
    body = body[:csum_at] + struct.pack("!H", c) + body[csum_at + 2 :]
    tos = h.dscp[flow] << 2 | ecn
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, size, 0, 0x4000, 64, proto, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return ip + body


def default_hop(run) -> str:
    """The bottleneck hop that put the most bytes on its link."""
    links = run.tables["links"].to_pylist()
    rows = [r for r in links if r.get("bottleneck")] or links
    return max(rows, key=lambda r: r["tx_bytes"])["hop"]


def export_pcap(run, out_path: str | Path, hop: str | None = None, snaplen: int = SNAPLEN,
                drops: bool = False) -> tuple[Path, int]:  # fmt: skip
    """Write hop ``hop``'s packets of ``run`` (default ``default_hop``) to ``out_path``; returns the
    path and the number of records. ``ValueError`` for an unknown hop or a run without the
    packets table's header columns."""
    pk = run.tables.get("packets")
    need = ("hop", "flow", "dir", "size", "t_out_ns", "outcome", "ecn", "seq", "ack", "payload", "tcp_flags")
    if pk is None:
        raise ValueError(f"run '{run.run_id}' has no 'packets' table; record it with level 'packets'")
    missing = [c for c in need if c not in pk.column_names]
    if missing:
        raise ValueError(
            f"run '{run.run_id}' has no packets column(s) {', '.join(missing)} (recorded by an older aqmlab)"
        )
    hops = [r["hop"] for r in run.tables["links"].to_pylist()]
    hop = hop or default_hop(run)
    if hop not in hops:
        raise ValueError(f"--hop: no hop '{hop}' in run '{run.run_id}'; hops: {', '.join(hops)}")
    if not 1 <= snaplen <= MAX_SNAPLEN:
        raise ValueError(
            f"--snaplen: {snaplen} is not allowed; allowed: 1 to {MAX_SNAPLEN} (tcpdump's largest)"
        )
    cols = {c: pk.column(c).to_pylist() if c in ("hop", "dir", "outcome", "ecn") else pk.column(c).to_numpy()
            for c in need}  # fmt: skip
    keep = [i for i, (hp, o) in enumerate(zip(cols["hop"], cols["outcome"]))
            if hp == hop and (o in ("sent", "marked") or drops)]  # fmt: skip
    keep = np.array(keep, dtype=np.int64)
    order = keep[np.argsort(cols["t_out_ns"][keep], kind="stable")]
    h = _Hosts(run)
    out_path = Path(out_path)
    with files.whole(out_path) as tmp, open(tmp, "wb") as f:
        f.write(struct.pack("<IHHiIII", MAGIC_NS, 2, 4, 0, 0, snaplen, LINKTYPE_RAW))
        for i in order:
            size = int(cols["size"][i])
            data = packet(h, int(cols["flow"][i]), cols["dir"][i] == "up", size, ECN_CODES[cols["ecn"][i]],
                          int(cols["seq"][i]), int(cols["ack"][i]), int(cols["payload"][i]),
                          int(cols["tcp_flags"][i]))  # fmt: skip
            t = EPOCH_NS + int(cols["t_out_ns"][i])
            cap = data[:snaplen]
            f.write(struct.pack("<IIII", t // 1_000_000_000, t % 1_000_000_000, len(cap), size))
            f.write(cap)
    return out_path, int(order.size)
