"""CoDel (RFC 8289) as a Python discipline: ``qdisc = { kind = "python", class =
"aqmlab.examples.codel:Codel" }``. Copy this file to start your own AQM (docs/python-qdisc.md).

It gives the built-in ``codel``'s results packet for packet (same scenario and seed), in its
``rfc`` variant (the default: RFC 8289 count recall, first drop when now >= first_above_time,
exact interval / sqrt(count)), ``linux`` (now > first_above_time, the Q0.16 Newton step of
Linux codel.h, an empty queue keeps first_above_time) or ``ns2`` (ns-2's codel.cc: count - 1 on
re-entry, the largest packet seen since 256 bytes as the one-MTU guard). The buffer is tail-dropped at ``limit``;
with ``ecn`` an ECN-capable packet is CE-marked instead of dropped. Times are integer ns.
"""

import math

from aqmlab.pyqdisc import limit as parse_limit
from aqmlab.pyqdisc import over_limit, time_ns

ONE_Q16 = 0xFFFF  # 1/sqrt(1) in Q0.16


class Codel:
    def __init__(self, link, target="5ms", interval="100ms", limit=None, ecn=False, variant="rfc"):
        if variant not in ("rfc", "linux", "ns2"):
            raise ValueError(f"variant: {variant!r} is not allowed; allowed: rfc, linux, ns2")
        self.target, self.interval = time_ns(target), time_ns(interval)
        self.limit = link.limit_or("1000p") if limit is None else parse_limit(limit)
        self.mtu, self.ecn = link.mtu, ecn
        self.strict = self.newton = variant == "linux"
        self.empty_reset = variant != "linux"
        self.ns2 = variant == "ns2"
        self.maxpacket = 256  # ns2: the guard is the largest packet dequeued so far
        self.count = self.lastcount = self.drop_next = 0
        self.dropping, self.first_above, self.rec_inv_sqrt = False, None, ONE_Q16
        self.phase = None  # after a "drop" the same dequeue goes on: "loop" (dropping) or "enter"

    def enqueue(self, now, pkt, queue):
        return "overlimit" if over_limit(self.limit, queue.packets + 1, queue.bytes + pkt.size) else "enqueue"

    def dequeue(self, now, pkt, queue):
        phase, self.phase = self.phase, None
        if pkt is None and phase is None and not self.empty_reset:
            self.dropping = False  # Linux: an empty queue keeps first_above_time
            return "send"
        ok = self.should_drop(now, pkt, queue)
        if phase == "enter":  # the packet after the drop that entered the dropping state
            self.enter(now)
            return "send"
        if phase is None and not self.dropping:
            if not ok:
                return "send"
            if self.ecn and pkt.ecn_capable:
                self.enter(now)
                return "mark"
            self.phase = "enter"
            return "drop"
        if not ok:
            self.dropping = False
            return "send"
        if phase == "loop":
            self.drop_next = self.control_law(self.drop_next)
        if now < self.drop_next:
            return "send"
        self.count += 1
        if self.newton:
            self.newton_step()
        if self.ecn and pkt.ecn_capable:
            self.drop_next = self.control_law(self.drop_next)
            return "mark"
        self.phase = "loop"
        return "drop"

    def should_drop(self, now, pkt, queue):
        if pkt is not None and self.ns2:
            self.maxpacket = max(self.maxpacket, pkt.size)
        guard = self.maxpacket if self.ns2 else self.mtu
        if pkt is None or now - pkt.enqueued_at < self.target or queue.bytes <= guard:
            self.first_above = None
            return False
        if self.first_above is None:
            self.first_above = now + self.interval
            return False
        return now > self.first_above if self.strict else now >= self.first_above

    def enter(self, now):
        """Enters the dropping state, recalling the count of the last episode (RFC 8289; ns-2:
        count - 1)."""
        self.dropping = True
        delta = (self.count - self.lastcount) & 0xFFFFFFFF
        if self.ns2:
            delta = self.count - 1
        if delta > 1 and now - self.drop_next < 16 * self.interval:
            self.count = delta
            if self.newton:
                self.newton_step()
        else:
            self.count, self.rec_inv_sqrt = 1, ONE_Q16
        self.lastcount = self.count
        self.drop_next = self.control_law(now)

    def newton_step(self):
        """rec_inv_sqrt' = rec_inv_sqrt (3 - count rec_inv_sqrt^2) / 2, in Q0.32 kept as Q0.16."""
        y = self.rec_inv_sqrt << 16
        v = max((3 << 32) - self.count * ((y * y) >> 32), 0)
        self.rec_inv_sqrt = min(((v * y) >> 33) >> 16, ONE_Q16)

    def control_law(self, t):
        if self.newton:
            return t + ((self.interval * (self.rec_inv_sqrt << 16)) >> 32)
        return t + int(self.interval / math.sqrt(max(self.count, 1)))
