"""goodbadwifi2015's published Table 2 (average VoIP packet loss) and where its measured
counterpart is."""

from __future__ import annotations

from aqmlab.reproduce.goodbadwifi2015.setup import QDISCS
from aqmlab.reproduce.study import Outcome, Published

TABLE2_CROSS = {"1 TCP stream": "1up", "RRUL": "rrul"}
"""The study's cross-traffic columns -> the VoIP series' cross traffic."""
TABLE2_RATES = ("1", "10", "100")
"""The study's VoIP rates, Mbit/s: the uplink the stream crosses (the 10/1, 10/10 and 100/100 links)."""
TABLE2 = {
    "pfifo_fast": (0.88, 0.10, 0, 8.54, 0.20, 0.032),
    "ARED": (7.95, 0.45, 0.002, 26.33, 0.61, 0.019),
    "PIE": (2.75, 0.04, 0.002, 14.03, 0.44, 0.016),
    "CoDel": (6.46, 0.02, 0.002, 10.60, 0.19, 0.004),
    "SFQ": (0, 0, 0, 0.42, 0, 0),
    "fq_nocodel": (0, 0, 0, 0, 0, 0),
    "fq_codel": (0, 0, 0, 0.04, 0, 0),
}
"""Table 2, average VoIP packet loss (%): per qdisc, 1 TCP stream at 1 / 10 / 100 Mbit/s, then RRUL."""
TABLE2_ROWS = dict(zip(TABLE2, QDISCS, strict=True))
"""The study's row names -> the qdiscs (the same order)."""
TABLE2_FLOOR = 0.1
"""Loss below 0.1 % on both sides agrees (the table's values near zero)."""


def _table2_col(cross: str, rate: str) -> str:
    return f"{cross} @ {rate} Mbit/s"


def table2_measured(o: Outcome) -> dict:
    """The mean over runs of each VoIP case's loss, %, in Table 2's rows and columns."""
    loss = o.results["voip_loss_pct_mean"]
    return {row: {_table2_col(c, r): loss.get(q, {}).get(cross, {}).get(r) for c, cross in TABLE2_CROSS.items()
                  for r in TABLE2_RATES} for row, q in TABLE2_ROWS.items()}  # fmt: skip


PUBLISHED = (
    Published(
        "Table 2",
        "average VoIP packet loss, % (1 / 10 / 100 Mbit/s: the upstream of the 10/1, 10/10, 100/100 links)",
        values={
            row: dict(zip([_table2_col(c, r) for c in TABLE2_CROSS for r in TABLE2_RATES], v))
            for row, v in TABLE2.items()
        },
        measured=table2_measured,
        floor=TABLE2_FLOOR,
        series=("voip",),
    ),
)
