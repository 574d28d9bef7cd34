"""``aqmlab export pcap``: the capture read back by an independent pcap reader (dpkt).

What is checked comes from outside the exporter: the record count and the CE marks from the
hop's own counters (``links.tx_packets``, ``links.marks``, counted by the link, not from the
packets table), the link type and file layout from tcpdump.org's pcap format, the header
checksums by RFC 1071 (computed here), the codepoints and DSCPs from the scenarios' keys (RFC
3168, RFC 9331, RFC 2474), and TCP's sequence numbers against the flows' retransmission counts.
"""

import struct
from collections import defaultdict
from decimal import Decimal

import dpkt
import pytest
from test_direction import cli
from test_flent_scenarios import stored

LINKTYPE_RAW = 101  # tcpdump.org link-layer header types: raw IPv4/IPv6
T0 = 1767225600  # 2026-01-01 00:00 UTC, the export's epoch


def ones_sum_ok(data: bytes) -> bool:
    """RFC 1071 section 1: the one's complement sum of the 16-bit words of data that carries its
    own checksum is all ones."""
    if len(data) % 2:
        data += b"\0"
    s = 0
    for (w,) in struct.iter_unpack("!H", data):
        s += w
        s = (s & 0xFFFF) + (s >> 16)
    return s == 0xFFFF


def records(path):
    """[(ts, caplen bytes, wire length)] read with dpkt, and the file's link type."""
    out = []
    raw = path.read_bytes()
    # dpkt's iterator gives a record's time and bytes; its length on the wire is read from the
    # record header (pcap's layout: 24-byte file header, 16-byte record headers)
    pos = 24
    with open(path, "rb") as f:
        r = dpkt.pcap.Reader(f)
        link, snaplen = r.datalink(), r.snaplen
        for ts, buf in r:
            _, _, incl, orig = struct.unpack("<IIII", raw[pos : pos + 16])
            assert incl == len(buf)
            out.append((ts, buf, orig))
            pos += 16 + incl
    assert pos == len(raw)
    return out, link, snaplen, struct.unpack("<I", raw[:4])[0]


@pytest.fixture(scope="module")
def l4s(tmp_path_factory):
    d = tmp_path_factory.mktemp("pcap")
    return d, stored(d, "l4s", "l4s-1", duration="3s")[1]


def in_flight_at_end(r, recs, link) -> int:
    """1 if the last record's transmission (its length at the link's rate) had not ended when the
    run did, else 0."""
    t_last, _, wire = recs[-1]  # dpkt gives a nanosecond file's times as Decimal, exactly
    end = T0 + Decimal(r.meta["duration_ns"]) / 10**9
    return int(t_last + Decimal(wire * 8) / link["rate_bps"] > end)


def hop_row(r, hop):
    return next(x for x in r.tables["links"].to_pylist() if x["hop"] == hop)


def test_capture_of_the_bottleneck_reads_back(l4s):
    from aqmlab import pcap

    d, r = l4s
    hop = pcap.default_hop(r)
    link = hop_row(r, hop)
    assert link["dir"] == "down" and link["bottleneck"]
    path, n = pcap.export_pcap(r, d / "l4s.pcap", hop)
    recs, linktype, snaplen, magic = records(path)
    assert magic == 0xA1B23C4D  # nanosecond-resolution pcap
    assert linktype == LINKTYPE_RAW and snaplen == 128
    # one record per packet the link put on the wire (the link counts a packet when its
    # transmission ends: a last one still being serialised at the end is captured, not counted)
    ips = [dpkt.ip.IP(buf) for _, buf, _ in recs]
    on_wire = in_flight_at_end(r, recs, link)
    assert len(recs) == n == link["tx_packets"] + on_wire > 1000
    assert sum(ip.tos & 3 == 3 for ip in ips) == link["marks"] > 0
    ts = [t for t, _, _ in recs]
    assert ts == sorted(ts) and T0 <= ts[0] < ts[-1] <= T0 + 3
    flows = {f["label"]: f for f in r.tables["flows"].to_pylist()}
    by_port = {49152 + f["flow"]: f for f in flows.values()}
    tx_bytes = not_ect = 0
    segs = defaultdict(list)
    for (_, buf, wire), ip in zip(recs, ips):
        assert ones_sum_ok(buf[:20]), "IPv4 header checksum"
        assert ip.v == 4 and ip.len == wire and len(buf) == min(wire, 128)
        assert ip.p == dpkt.ip.IP_PROTO_TCP
        tx_bytes += wire
        tcp = ip.data
        f = by_port[tcp.dport]  # the down bottleneck carries server -> client
        assert tcp.sport == 5201
        ecn = ip.tos & 3
        hl = tcp.off * 4
        payload = ip.len - 20 - hl
        if f["label"] == "prague" and payload > 0:
            # ECT(1), CE where DualPI2 marked it (RFC 9331), or Not-ECT: a retransmission
            # (RFC 3168 6.1.5)
            not_ect += ecn == 0
            assert ecn in (0, 1, 3)
        elif payload == 0:
            assert ecn == 0  # SYNs and pure ACKs (the handshake's) are Not-ECT (RFC 3168 6.1.1)
        if f["label"] == "cubic":
            assert ecn == 0  # its ecn key is off: Not-ECT, never marked (RFC 3168 6.1.1.1)
        if payload > 0:
            segs[f["label"]].append((tcp.seq, payload))
    assert tx_bytes - (recs[-1][2] if on_wire else 0) == link["tx_bytes"]
    assert not_ect <= flows["prague"]["retransmits"]
    for label, s in segs.items():
        # the data's sequence numbers rise but where a segment is sent again (below the highest
        # byte seen): at most the flow's retransmissions
        top, again = 0, 0
        for seq, length in s:
            if seq + length <= top:
                again += 1
            top = max(top, seq + length)
        assert again <= flows[label]["retransmits"], label
        assert top > 100_000


def test_full_packets_carry_valid_transport_checksums(l4s, tmp_path):
    from aqmlab import pcap

    _, r = l4s
    path, n = pcap.export_pcap(r, tmp_path / "full.pcap", snaplen=65535, drops=True)
    recs, _, snaplen, _ = records(path)
    assert snaplen == 65535 and len(recs) == n
    link = hop_row(r, pcap.default_hop(r))
    drops = sum(v for k, v in link.items() if k.startswith("drops_"))
    sent = [rec for rec in recs if rec[2]]
    assert n == link["tx_packets"] + in_flight_at_end(r, sent, link) + drops
    for _, buf, wire in recs[:3000]:
        assert len(buf) == wire
        ip = dpkt.ip.IP(buf)
        # RFC 9293 3.1: the checksum covers a pseudo-header of the addresses, protocol and length
        pseudo = ip.src + ip.dst + struct.pack("!BBH", 0, ip.p, len(buf) - 20)
        assert ones_sum_ok(pseudo + buf[20:]), "TCP checksum"


MIX = {
    "name": "mix",
    "duration": "2s",
    "topology": {"rtt": "20ms", "down": {"rate": "10Mbps", "qdisc": "fq_codel"},
                 "up": {"rate": "10Mbps", "qdisc": "pfifo", "limit": "100p"}},
    "flows": [{"kind": "tcp", "direction": "down", "dscp": "EF"},
              {"kind": "udp", "direction": "down", "rate": "1Mbps", "dscp": "CS1"},
              {"kind": "ping", "interval": "100ms"}, {"kind": "voip"}],
    "record": {"level": "packets"},
}  # fmt: skip
# RFC 2474 / RFC 3246: the class selectors are their number << 3, EF is 46
DSCP = {"tcp": 46, "udp": 8, "ping": 0, "voip": 0}


def test_probes_and_datagrams(tmp_path):
    """A ping flow is ICMP echo (RFC 792: request type 8 up, reply type 0 down, its flow id and
    probe number as identifier and sequence), udp and voip flows UDP, each with its DSCP."""
    from aqmlab import pcap

    _, r = stored(tmp_path, MIX, "mix-1")
    flows = {f["flow"]: f for f in r.tables["flows"].to_pylist()}
    seen = set()
    for x in r.tables["links"].to_pylist():
        path, n = pcap.export_pcap(r, tmp_path / f"{x['hop']}.pcap", x["hop"])
        recs, _, _, _ = records(path)
        assert len(recs) == n == x["tx_packets"] + in_flight_at_end(r, recs, x) > 0
        up = x["dir"] == "up"
        icmp_seq = []
        for _, buf, _ in recs:
            ip = dpkt.ip.IP(buf)
            assert ones_sum_ok(buf[:20])
            if ip.p == dpkt.ip.IP_PROTO_ICMP:
                assert ip.data.type == (8 if up else 0)
                f = flows[ip.data.data.id]
                icmp_seq.append(ip.data.data.seq)
            else:
                f = flows[(ip.data.sport if up else ip.data.dport) - 49152]
                assert ip.p == (dpkt.ip.IP_PROTO_TCP if f["kind"] == "tcp" else dpkt.ip.IP_PROTO_UDP)
            seen.add((f["kind"], ip.p))
            assert ip.tos >> 2 == DSCP[f["kind"]]
        # one probe every 100 ms, numbered in order
        assert icmp_seq == sorted(icmp_seq) and len(icmp_seq) >= 15
    assert {k for k, _ in seen} == {"tcp", "udp", "ping", "voip"}


def test_cli_writes_and_refuses_bad_input(tmp_path):
    stored(tmp_path, "l4s", "l4s-2", duration="1s")
    root = tmp_path / "res"
    code, out = cli("export", "pcap", "l4s-2", "--root", root, "-o", tmp_path / "x.pcap")
    assert code == 0 and "wrote" in out and (tmp_path / "x.pcap").exists()
    code, out = cli("export", "pcap", "l4s-2", "--root", root, "--hop", "nosuch")
    assert code == 2 and "nosuch" in out and "Traceback" not in out
    for bad in ("0", "262145"):  # pcap's snaplen: at least 1 byte, at most tcpdump's 262144
        code, out = cli("export", "pcap", "l4s-2", "--root", root, "--snaplen", bad)
        assert code == 2 and "--snaplen" in out and bad in out
    stored(tmp_path, "l4s", "l4s-3", duration="1s", record__level="summary")
    code, out = cli("export", "pcap", "l4s-3", "--root", root)
    assert code == 2 and "packets" in out
