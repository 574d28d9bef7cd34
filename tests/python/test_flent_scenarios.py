"""The L4S-era built-in scenarios exported as the Flent tests they correspond to.

The expected series names are written from Flent 2.3's test definitions, not from the export:
tcp_ndown.conf names its streams ``TCP download::<i>`` (i from 1) and takes the per-stream
parameters ``download_streams``, ``cc_algos`` and ``markings`` (testenv.py for_stream_config);
rtt_fair.inc names a stream ``TCP download <label> <host>`` and a host's ping ``Ping (ms) ICMP
<host>``; voip.inc (through voip_mixin.inc and its ``voip_host`` parameter) adds ``VoIP`` and
``VoIP::delay/jitter/loss``; qdisc_stats.inc names a host's queue ``qdisc_stats_<host>`` with
``::dropped`` and ``::ecn_mark``.
"""

import gzip
import json
import tomllib
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pytest
from test_direction import cli
from test_flent import _summary_means, flent_plots, run_flent

import aqmlab
from aqmlab import flent, store


def stored(tmp_path, scenario, run_id: str, **overrides):
    """A short run of ``scenario`` (a built-in name or a dict) and its stored copy."""
    res = aqmlab.run(scenario, **overrides)
    return res, store.load_run(store.write_run(tmp_path / "res", run_id, res.tables, res.meta, res.summary))


def load(path):
    return json.loads(gzip.decompress(path.read_bytes()))


def mean_raw(data, name):
    """The mean of a series' measured values (a TCP series mixes in socket-stats points, which
    hold none)."""
    return float(np.mean([p["val"] for p in data["raw_values"][name] if "val" in p]))


@pytest.mark.parametrize(
    ("scenario", "ccs"), [("bbr_vs_cubic", ["bbr", "cubic"]), ("l4s", ["prague", "cubic"])]
)
def test_two_controller_scenarios_are_tcp_ndown_with_their_ccs(tmp_path, scenario, ccs):
    """Two downloads with their own controllers are Flent's tcp_ndown with download_streams=2 and
    cc_algos naming each stream's controller (netperf -K), which Flent records per stream as
    CONG_CONTROL; each stream's mean throughput is the flow's goodput over the run (netperf's
    demo intervals tile the run, so their mean is delivered bytes over the run's length)."""
    res, r = stored(tmp_path, scenario, "two-1", duration="4s")
    assert flent.guess_test(r) == "tcp_ndown"
    data = flent.build(r)
    md = data["metadata"]
    assert md["TEST_PARAMETERS"]["download_streams"] == "2"
    assert md["TEST_PARAMETERS"]["cc_algos"] == ",".join(ccs)
    assert md["TEST_PARAMETERS"]["markings"] == "CS0,CS0"
    for i, f in enumerate(res.summary["flows"]):
        name = f"TCP download::{i + 1}"
        assert md["SERIES_META"][name]["CONG_CONTROL"] == ccs[i]
        assert mean_raw(data, name) == pytest.approx(f["goodput_mbps"], rel=1e-6)
        grid = [v for v in data["results"][name] if v is not None]
        assert np.mean(grid) == pytest.approx(f["goodput_mbps"], rel=1e-6)
    said = flent.notes(r, data)
    assert any("absent" in n and "Ping (ms) ICMP" in n for n in said), said
    smack = {"bbr_vs_cubic": "cubic_bbr", "l4s": "cubic_dctcp"}[scenario]
    assert any(f"Flent's '{smack}'" in n for n in said), said


def test_l4s_exports_dualpi2s_queues_as_extra_qdisc_stats(tmp_path):
    """DualPI2's L and C queues as two more qdisc_stats hosts beside the link's: at every sample
    their backlogs add up to the link's (the queue is the two queues), their drops add up to the
    link's, and so do their marks."""
    res, r = stored(tmp_path, "l4s", "l4s-1", duration="4s")
    data = flent.build(r, warmup_s=0.0)
    params = data["metadata"]["TEST_PARAMETERS"]
    hosts = params["qdisc_stats_hosts"].split(",")
    assert hosts == ["aqmlab-down", "aqmlab-down-l", "aqmlab-down-c", "aqmlab-up"]
    assert params["qdisc_stats_interfaces"] == "down,down.l,down.c,up"
    raw = {h: data["raw_values"][f"qdisc_stats_{h}"] for h in hosts}
    link, lq, cq = raw["aqmlab-down"], raw["aqmlab-down-l"], raw["aqmlab-down-c"]
    # the sub-queues have no sample at the run's end (its queued packets have no packets row)
    assert len(link) - 1 == len(lq) == len(cq) == 40
    for k in ("backlog_bytes", "backlog_pkts", "dropped", "ecn_mark"):
        assert [a[k] + b[k] for a, b in zip(lq, cq)] == [p[k] for p in link[:-1]], k
    # the L queue holds Prague's ECT(1) packets: marked, short; the C queue CUBIC's: never marked
    queues = res.summary["links"]["down"]["queues"]
    assert sum(p["ecn_mark"] for p in lq) > 0 and queues["l"]["marks"] > 0
    assert sum(p["ecn_mark"] for p in cq) == queues["c"]["marks"] == 0
    delay_l = np.mean([p["delay"] for p in lq if "delay" in p])
    delay_c = np.mean([p["delay"] for p in cq if "delay" in p])
    assert delay_l < delay_c
    said = flent.notes(r, data)
    assert any("aqmlab-down-l, aqmlab-down-c" in n for n in said), said
    assert any("flow 0 accecn" in n for n in said), said
    f = flent.write(data, tmp_path / "l4s.flent.gz")
    res_f = run_flent("-i", str(f), "-f", "summary", cwd=tmp_path)
    assert res_f.returncode == 0, res_f.stderr[-3000:]
    assert "qdisc_stats_aqmlab-down-l::ecn_mark" in res_f.stdout and "TCP download::2" in res_f.stdout
    for plot in ("backlog", "delay", "totals"):
        flent_plots(f, plot, tmp_path)


def test_cake_home_is_rtt_fair_var_down_with_voip(tmp_path):
    """Two hosts, one with a download and a call, one with four downloads: Flent's
    rtt_fair_var_down (one stream per entry of HOSTS, each to its host) with the call through
    voip_mixin.inc's voip_host. A ping of host b fills that host's ping series with the probe's
    own RTTs; host a's stays absent."""
    sc = tomllib.loads((Path(aqmlab.__file__).parent / "scenarios" / "cake_home.toml").read_text())
    sc["flows"].append({"kind": "ping", "host": "b", "interval": "200ms"})
    res, r = stored(tmp_path, sc, "home-1", duration="4s")
    assert flent.guess(r) == ("rtt_fair_var_down", "0 upload and 5 download TCP flows from 2 hosts")
    data = flent.build(r)
    md = data["metadata"]
    assert md["HOSTS"] == ["aqmlab-a"] + ["aqmlab-b"] * 4
    assert md["TEST_PARAMETERS"]["labels"] == "BE,BE,BE2,BE3,BE4"
    assert md["TEST_PARAMETERS"]["voip_host"] == "aqmlab-a"
    want = ["TCP download BE aqmlab-a", "TCP download BE aqmlab-b", "TCP download BE2 aqmlab-b",
            "TCP download BE3 aqmlab-b", "TCP download BE4 aqmlab-b"]  # fmt: skip
    assert [k for k in data["results"] if k.startswith("TCP")] == want
    goodputs = [f["goodput_mbps"] for f in res.summary["flows"] if f["kind"] == "tcp"]
    for name, g in zip(want, goodputs):
        assert mean_raw(data, name) == pytest.approx(g, rel=1e-6)
    assert {"VoIP", "VoIP::delay", "VoIP::jitter", "VoIP::loss"} <= set(data["results"])
    ping = next(f["flow"] for f in res.tables["flows"].to_pylist() if f["kind"] == "ping")
    p = res.tables["probes"].filter(pc.equal(res.tables["probes"].column("flow"), ping)).to_pylist()
    rtts = [x["rtt_ns"] / 1e6 for x in sorted(p, key=lambda x: x["t_send_ns"]) if x["rtt_ns"] is not None]
    assert [x["val"] for x in data["raw_values"]["Ping (ms) ICMP aqmlab-b"]] == pytest.approx(rtts)
    assert "Ping (ms) ICMP aqmlab-a" not in data["results"]
    said = flent.notes(r, data)
    assert any("absent" in n and "Ping (ms) ICMP aqmlab-a" in n for n in said), said
    assert any("one stream per host" in n for n in said), said
    f = flent.write(data, tmp_path / "home.flent.gz")
    res_f = run_flent("-i", str(f), "-f", "summary", cwd=tmp_path)
    assert res_f.returncode == 0, res_f.stderr[-3000:]
    means = _summary_means(res_f.stdout)
    for name, g in zip(want, goodputs):
        assert means[name] == pytest.approx(g, abs=0.006)  # Flent prints 2 decimals
    assert "VoIP::delay" in means
    for plot in ("all_scaled", "voip_delay", "backlog"):
        flent_plots(f, plot, tmp_path)


def test_a_test_the_run_does_not_fit_is_refused_naming_what_is_missing(tmp_path):
    """Exit 2 with the missing piece named: rtt_fair_var_down needs each flow's host, tcp_nup
    uploads, voip a voip flow."""
    stored(tmp_path, "bbr_vs_cubic", "bvc-1", duration="2s")
    root = tmp_path / "res"
    out = tmp_path / "x.flent.gz"
    code, said = cli("export", "flent", "bvc-1", "--root", root, "-o", out, "--test", "rtt_fair_var_down")
    assert code == 2 and "every TCP flow needs the flow key 'host'; flows [0, 1] name none" in said
    code, said = cli("export", "flent", "bvc-1", "--root", root, "-o", out, "--test", "tcp_nup")
    assert code == 2 and "'tcp_nup' needs only upload TCP flows; the run has 0 up and 2 down" in said
    code, said = cli("export", "flent", "bvc-1", "--root", root, "-o", out, "--test", "voip")
    assert code == 2 and "'voip' needs a voip flow" in said
    assert not out.exists()
