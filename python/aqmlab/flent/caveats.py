"""How an export differs from a run of its Flent test (``notes``): the flows left out, the absent
ping series, a host listed more than once, the sub-queues, the flows' ECN modes, the smackdown
test of the same pair of controllers."""

from __future__ import annotations

from aqmlab.flent.match import RTT_FAIR_VAR, STREAM_TESTS, VOIP_TESTS, _classify

# Flent's "smackdown" tests of CUBIC against another controller (cubic_bbr.conf, cubic_dctcp.conf,
# cubic_reno.conf), by the other controller; Prague is DCTCP's L4S successor
SMACKDOWN = {"bbr": "cubic_bbr", "dctcp": "cubic_dctcp", "prague": "cubic_dctcp", "reno": "cubic_reno"}


def notes(run, data: dict) -> list[str]:
    """How an export of ``run`` (``data``, from ``build``) differs from a run of its Flent test:
    the flows no series carries, the series the test has that the run cannot fill, and what the
    file records beyond or apart from the test's own series."""
    return [
        n for f in (_left_out, _absent, _stream_hosts, _subqueues, _ecn, _smackdown) for n in f(run, data)
    ]


def _left_out(run, data: dict) -> list[str]:
    """The flows no series carries and, for a voip flow left out, the VoIP tests that would carry
    it."""
    test = data["metadata"]["NAME"]
    carried = {m.get("AQMLAB_FLOW") for m in data["metadata"]["SERIES_META"].values()}
    rows = sorted(run.tables["flows"].select(["flow", "kind"]).to_pylist(), key=lambda r: r["flow"])
    left = [r for r in rows if r["flow"] not in carried]
    if not left:
        return []
    out = [
        f"left out (no series of '{test}' carries them): "
        + ", ".join(f"{r['kind']} flow {r['flow']}" for r in left)
    ]
    if any(r["kind"] == "voip" for r in left):
        up, down, _ = _classify(run)
        fits = {"voip": "the stream alone"}
        fits |= {t: f"with {nu} upload and {nd} download TCP flows" for (nu, nd), t in VOIP_TESTS.items()
                 if (nu, nd) == (len(up), len(down)) and t != "voip"}  # fmt: skip
        out.append(
            "Flent's VoIP tests carry a voip flow: " + "; ".join(f"--test {t} ({w})" for t, w in fits.items())
        )
    return out


def _absent(run, data: dict) -> list[str]:
    """The ping series the test runs that no probe stream of the run fills."""
    absent = data["metadata"]["AQMLAB"]["absent_series"]
    if not absent:
        return []
    return [
        f"absent (the run has no probe stream for them; Flent's '{data['metadata']['NAME']}' runs them and "
        + f"draws its plots without them): {', '.join(absent)}"
    ]


def _stream_hosts(run, data: dict) -> list[str]:
    """rtt_fair.inc runs one stream per host: a host with several flows is in HOSTS once per flow."""
    md = data["metadata"]
    hosts = md["HOSTS"]
    if md["NAME"] not in RTT_FAIR_VAR.values() or len(set(hosts)) == len(hosts):
        return []
    return [
        f"'{md['NAME']}' runs one stream per host: a host with several flows is listed once per flow in "
        + f"HOSTS ({', '.join(hosts)}) with the labels {md['TEST_PARAMETERS']['labels']}; Flent's fairness "
        + "index is over the streams, not the hosts"
    ]


def _subqueues(run, data: dict) -> list[str]:
    """The sub-queues exported as extra qdisc_stats hosts, or why they are not."""
    params = data["metadata"]["TEST_PARAMETERS"]
    pairs = zip(
        params.get("qdisc_stats_hosts", "").split(","), params.get("qdisc_stats_interfaces", "").split(",")
    )
    sub = [h for h, i in pairs if "." in i]
    if sub:
        return [
            f"sub-queues as extra qdisc_stats hosts: {', '.join(sub)} (their 'delay' is the mean sojourn of "
            + "the packets that left the sub-queue since the previous sample; the queue's is its backlog's "
            + "drain time at the link rate)"
        ]
    if (run.meta.get("subqueues") or {}) and "qdisc_stats_hosts" in params:
        return [
            "the sub-queues need the run's packets (record level 'packets'): only the whole queue is exported"
        ]
    return []


def _ecn(run, data: dict) -> list[str]:
    """The flows' ECN modes, which Flent does not record (the host's net.ipv4.tcp_ecn sets it)."""
    modes = [(m["AQMLAB_FLOW"], m["AQMLAB_ECN"]) for m in data["metadata"]["SERIES_META"].values()
             if m.get("AQMLAB_ECN", "off") != "off"]  # fmt: skip
    if not modes:
        return []
    return [
        "ECN, which Flent does not record, is in SERIES_META AQMLAB_ECN: "
        + ", ".join(f"flow {f} {m}" for f, m in modes)
    ]


def _smackdown(run, data: dict) -> list[str]:
    """For a pair of controllers Flent has a 'smackdown' test for: why the run is not that test."""
    md = data["metadata"]
    if md["NAME"] not in [t for t, _ in STREAM_TESTS.values()]:
        return []
    ccs = set(md["TEST_PARAMETERS"]["cc_algos"].split(","))
    tests = sorted(
        {SMACKDOWN[c] for c in ccs if c in SMACKDOWN} if "cubic" in ccs and len(ccs) == 2 else set()
    )
    return [
        f"Flent's '{t}' runs its pair of controllers 4 ways (BE and CS1 each way, with 4 pings); this run's "
        f"streams are '{md['NAME']}' with cc_algos {md['TEST_PARAMETERS']['cc_algos']}"
        for t in tests
    ]
