"""Which Flent test a run is: the tests aqmlab exports, the run's flows as those tests see them
(TCP uploads and downloads, probe streams, voip and webpage flows, the scenario entry and host
each flow names) and ``guess``, the test a run's flow set reproduces."""

from __future__ import annotations

from aqmlab import metrics as M

SUPPORTED = (
    "rrul", "rrul_be", "tcp_nup", "tcp_ndown", "tcp_1up", "ping", "rtt_fair4be", "rtt_fair_var_up",
    "rtt_fair_var_down", "voip", "voip-1up", "voip-rrul", "http", "http-1down", "http-1up", "http-rrul",
    "qdisc-stats",
)  # fmt: skip
# Flent's one-direction tests with one TCP stream per host (rtt_fair_var_up.conf, _down.conf), by
# the direction of their flows
RTT_FAIR_VAR = {"up": "rtt_fair_var_up", "down": "rtt_fair_var_down"}
# Flent's tests of N streams one way (tcp_nup.conf, tcp_ndown.conf), by direction: the test and
# the word of its series and stream-count parameter
STREAM_TESTS = {"up": ("tcp_nup", "upload"), "down": ("tcp_ndown", "download")}
# Flent's HTTP tests by the TCP flows beside the fetches: (uploads, downloads) -> test
HTTP_TESTS = {(0, 0): "http", (0, 1): "http-1down", (1, 0): "http-1up", (4, 4): "http-rrul"}
# Flent's VoIP tests by the TCP flows beside the stream: (uploads, downloads) -> test
VOIP_TESTS = {(0, 0): "voip", (1, 0): "voip-1up", (4, 4): "voip-rrul"}


def _classify(run) -> tuple[list[dict], list[dict], list[int]]:
    """(upload TCP flows, download TCP flows, ping probe flow ids), each ordered by flow id; a
    voip stream is its own series, not a ping."""
    flows = run.tables.get("flows")
    if flows is None:
        raise M.MissingTableError(f"run '{run.run_id}' has no 'flows' table")
    voip = set(_voip_flows(run))
    probes = [p for p in M.probe_flows(run.tables) if p not in voip]
    rows = sorted(flows.to_pylist(), key=lambda r: r["flow"])
    tcp = [r for r in rows if r["kind"] == "tcp" and r["flow"] not in probes]
    return [r for r in tcp if r["direction"] == "up"], [r for r in tcp if r["direction"] == "down"], probes


def guess_test(run) -> str:
    """The Flent test whose flow set the run reproduces (ValueError when none fits)."""
    return guess(run)[0]


def guess(run) -> tuple[str, str]:
    """(the Flent test whose flow set the run reproduces, the flows that decide it); ValueError
    when none fits."""
    up, down, probes = _classify(run)
    nu, nd = len(up), len(down)
    tcp = f"{nu} upload and {nd} download TCP flows"
    if _voip_flows(run) and (nu, nd) in VOIP_TESTS:
        return VOIP_TESTS[(nu, nd)], f"a voip flow beside {tcp}"
    if _kind_flows(run, "webpage") and (nu, nd) in HTTP_TESTS:
        return HTTP_TESTS[(nu, nd)], f"a webpage flow beside {tcp}"
    if nu == 0 and nd == 0:
        if probes:
            return "ping", f"{len(probes)} probe stream(s) and no TCP flow"
        if run.tables.get("queue") is not None:
            return "qdisc-stats", "no TCP flow and no probe stream: the queue's statistics"
    elif nu == 4 and nd == 4 and len({r["base_rtt_ns"] for r in up}) == 1:
        marked = {str(_entry(run, int(r["flow"])).get("dscp") or "CS0") for r in up + down} - {"CS0"}
        if marked:  # rrul.conf marks its streams BE, BK (CS1), CS5 and EF; rrul_be.conf all BE
            return "rrul", f"{tcp}, all at one base RTT, marked {', '.join(sorted(marked))}"
        return "rrul_be", f"{tcp}, all at one base RTT, all best effort"
    elif nu == 1 and nd == 0:
        return "tcp_1up", tcp
    elif nu == 0 or nd == 0:
        d = "up" if nd == 0 else "down"
        hosts = _hosts(run, up or down)
        if None not in hosts and len(set(hosts)) > 1:
            return RTT_FAIR_VAR[d], f"{tcp} from {len(set(hosts))} hosts"
        return STREAM_TESTS[d][0], tcp
    elif nu == nd and nu <= 4:
        return "rtt_fair4be", f"{tcp}, at most 4 each way"
    raise ValueError(
        f"no Flent test matches {nu} upload and {nd} download TCP flows with {len(probes)} probe streams; "
        f"choose one with --test ({', '.join(SUPPORTED)}); 'qdisc-stats' exports any run's queue"
    )


def _entry(run, flow: int) -> dict:
    """The resolved scenario entry (``flows[i]``) that made flow ``flow``."""
    group = next(r["group"] for r in run.tables["flows"].to_pylist() if r["flow"] == flow)
    entries = (run.meta.get("scenario") or {}).get("flows") or []
    return entries[group] if group < len(entries) else {}


def _hosts(run, rows: list[dict]) -> list[str | None]:
    """The ``host`` each flow of ``rows`` names (None where it names none)."""
    return [_entry(run, int(r["flow"])).get("host") for r in rows]


def _kind_flows(run, kind: str) -> list[int]:
    """The flows of ``kind``, by id."""
    rows = run.tables["flows"].select(["flow", "kind"]).to_pylist()
    return [int(r["flow"]) for r in rows if r["kind"] == kind]


def _voip_flows(run) -> list[int]:
    """The flows of kind ``voip`` (irtt streams), by id."""
    return _kind_flows(run, "voip")
