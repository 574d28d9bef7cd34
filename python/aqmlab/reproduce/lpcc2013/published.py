"""lpcc2013's published Table I (the testbed at 500 kb/s: TCP% and E[Q]) and where its measured
counterparts are."""

from __future__ import annotations

from aqmlab.reproduce.lpcc2013.setup import B_RATES
from aqmlab.reproduce.study import Outcome, Published

TABLE_I = {  # (LPCC, qdisc) -> load -> (TCP%, E[Q] ms): the testbed at 500 kb/s, mean of 3 runs
    ("ledbat", "fifo"): {"5+5": (94.9, 6437.3), "1+1": (99.5, 5304.3)},
    ("ledbat", "red"): {"5+5": (49.3, 11.3), "1+1": (1.7, 9.5)},
    ("ledbat", "sfq"): {"5+5": (76.1, 106.4), "1+1": (57.7, 15.1)},
    ("tcp_lp", "fifo"): {"5+5": (50.8, 7870.6), "1+1": (65.8, 7471.9)},
    ("tcp_lp", "red"): {"5+5": (57.0, 21.0), "1+1": (97.5, 2.7)},
    ("tcp_lp", "sfq"): {"5+5": (49.8, 144.2), "1+1": (50.0, 25.2)},
}
"""The study's Table I as published."""
TABLE_I_RATE = B_RATES[0]
TABLE_I_DELAY_FLOOR_MS = 30.0
"""Table I's delays agree when within 30 % or both below 30 ms (a few packet times at 500 kb/s,
24 ms each); its TCP% cells have no floor. The contract gives one floor per table, so Table I is
two published tables: TCP% and E[Q]."""
B_NAMES = {"ledbat": "LEDBAT", "tcp_lp": "TCP-LP"}


def _row(lp: str, q: str) -> str:
    return f"{B_NAMES[lp]} {q.upper()}"


def _table_i(col: int) -> dict:
    return {_row(lp, q): {ld: v[col] for ld, v in loads.items()} for (lp, q), loads in TABLE_I.items()}


def _measured_table_i(key: str):
    def measured(o: Outcome) -> dict:
        b = o.results.get("3b")
        if b is None:
            return {}
        return {_row(lp, q): {ld: b[key][lp][q][ld] for ld in loads} for (lp, q), loads in TABLE_I.items()}

    return measured


PUBLISHED = (
    Published("Table I TCP%", "testbed at 500 kb/s: TCP% (best-effort share of delivered bytes)", _table_i(0),
              _measured_table_i("tcp_share_pct"), series=("3b",)),
    Published("Table I E[Q]", "testbed at 500 kb/s: E[Q], the ping's queueing delay (ms)", _table_i(1),
              _measured_table_i("mean_queue_ms"), floor=TABLE_I_DELAY_FLOOR_MS, series=("3b",)),
)  # fmt: skip
