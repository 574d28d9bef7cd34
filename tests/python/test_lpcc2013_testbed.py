"""lpcc2013's testbed (3b): a tc red line translated as Linux 3.2 and iproute2 read it."""

from __future__ import annotations

import pytest

from aqmlab import api
from aqmlab.reproduce import lpcc2013 as L
from aqmlab.reproduce.lpcc2013 import setup


@pytest.mark.parametrize(
    ("line", "wlog", "plog"),
    [
        # The deBloat line of 3b: a = 5 + 1 - 1500/800 = 4.125; (1 - (1 - W)^5) / W is 3.90 at
        # W = 1/8 and 4.41 at 1/16, so Wlog 4. 0.02 / 3000 B = 6.67e-6 passes 1 after 18
        # doublings (0.874 after 17).
        ({"limit": 16000, "min": 1500, "max": 4500, "avpkt": 800, "burst": 5, "probability": 0.02}, 4, 18),
        # tc-red(8)'s example: a = 55 + 1 - 30 = 26; 15.5 at W = 1/16, 26.4 at 1/32, so Wlog 5.
        # 0.02 / 60000 B = 3.33e-7: 0.699 after 21 doublings, 1.40 after 22.
        (
            {"limit": 400000, "min": 30000, "max": 90000, "avpkt": 1000, "burst": 55, "probability": 0.02},
            5,
            22,
        ),
    ],
)
def test_tc_red_takes_iproute2s_ewma_and_probability_logs(line, wlog, plog):
    q = L.tc_red(line)
    assert q["w_q"] == 2.0**-wlog
    # Linux 3.2 draws qR below 2^Plog and drops once (avg - min) x count reaches it: the
    # probability at max is (max - min) / 2^Plog, not the line's `probability`.
    assert q["max_p"] == (line["max"] - line["min"]) / 2**plog
    assert q["min_th"] * line["avpkt"] == line["min"] and q["max_th"] * line["avpkt"] == line["max"]
    assert (q["bytes"], q["gentle"], q["wait"], q["limit"]) == ("linux", False, False, f"{line['limit']}B")


def test_3b_red_is_the_tc_line_and_runs():
    """3b's RED case runs the tc line's values on the testbed's link (the core's resolved table)."""
    tb = api.load(str(setup._scenarios() / "testbed.toml"))
    sc = setup._testbed_case(tb, L.B_QDISCS["red"], "500kbps", "ledbat", 1)
    sc["duration"] = "2s"
    _, meta = api.simulate(sc, 1)
    down = meta["scenario"]["topology"]["down"]["qdisc"]
    assert (down["bytes"], down["limit"], down["mean_pktsize"]) == ("linux", "16000B", "800B")
    assert (down["w_q"], down["max_p"], down["idle_decay"]) == (1 / 16, 3000 / 2**18, True)
