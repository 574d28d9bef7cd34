"""l4s2020's claims: the reproduction's two readings of the scenario-1 table, judged on the pairs
(published.py: each flow's D_SS the mean of both orders where the batch ran two)."""

from __future__ import annotations

from aqmlab.reproduce.l4s2020.published import COLUMNS, PUBLISHED_PAIRS
from aqmlab.reproduce.study import Claim, Outcome, agrees

PAIR_SHARE = 0.80
"""Claim 1: at least 80 % of the pairs measured have both flows' D_SS within the contract's 30 %."""
WINNER_MARGIN = 0.05
"""Claim 2: a published pair has a winner when its two D_SS differ by more than 5 % of their mean;
closer pairs (fq_codel's nearly all, and every pair of two identical flows) share evenly and name
no winner to agree with."""


def _measured_pairs(o: Outcome) -> list[tuple[str, str, dict, dict]]:
    """(table, row, published cells, measured cells) of every pair measured; KeyError without one."""
    out = [(tid, row, PUBLISHED_PAIRS[tid][row], cells)
           for tid, rows in o.results.get("pairs", {}).items() for row, cells in rows.items()
           if all(cells.get(c) is not None for c in COLUMNS)]  # fmt: skip
    if not out:
        raise KeyError("no pair measured")
    return out


def claim_pairs(o: Outcome):
    within = {f"{tid}: {row}": all(agrees(pub[c], meas[c], None) for c in COLUMNS)
              for tid, row, pub, meas in _measured_pairs(o)}  # fmt: skip
    share = sum(within.values()) / len(within)
    return share >= PAIR_SHARE, {"pairs": len(within), "within_30": sum(within.values()), "share": share,
                                 "outside": [k for k, ok in within.items() if not ok]}  # fmt: skip


def winner(cells: dict, margin: float = 0.0) -> str | None:
    """The pair's winner, "A" or "B": the flow with the larger D_SS by more than ``margin`` of the pair's mean; None
    when closer."""
    a, b = (cells[c] for c in COLUMNS)
    if abs(a - b) <= margin * (a + b) / 2:
        return None
    return "A" if a > b else "B"


def claim_winners(o: Outcome):
    judged = {f"{tid}: {row}": (winner(pub, WINNER_MARGIN), winner(meas))
              for tid, row, pub, meas in _measured_pairs(o) if winner(pub, WINNER_MARGIN)}  # fmt: skip
    if not judged:
        raise KeyError("no pair with a published winner measured")
    other = [k for k, (p, m) in judged.items() if p != m]
    return not other, {"pairs_with_a_winner": len(judged), "same_winner": len(judged) - len(other),
                       "other_winner": other}  # fmt: skip


CLAIMS = (
    Claim("1", "Scenario 1's fairness table (dualpi2, pfifo and fq_codel at 50 and 10 Mbit/s): at least 80 % of the "
          "pairs have both flows' D_SS within 30 % of the published, each flow's D_SS the mean of both orders "
          "where the batch ran two.", claim_pairs),
    Claim("2", "The flow that takes more of the link in each pair is the published one (pairs whose published "
          "D_SS are within 5 % of each other name no winner).", claim_winners),
)  # fmt: skip
