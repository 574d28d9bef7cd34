//! aqmlab's one boundary between Rust and Python (DESIGN.md principle 6): run a scenario given
//! as JSON and get Arrow record batches back (zero-copy through the Arrow C data interface via
//! pyo3-arrow), plus the run's metadata as JSON. Table columns follow docs/tables.md.

use aqmlab_core::packet::Dir;
use aqmlab_core::queue::{registry, DropReason, Qdisc};
use aqmlab_core::record::outcome_names;
use aqmlab_core::scenario::{self, build};
use arrow_array::types::UInt8Type;
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, RecordBatch, StringArray, UInt32Array, UInt64Array, UInt8Array,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::PyRecordBatch;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

mod pyqdisc;

const DIRS: [&str; 2] = ["up", "down"];

fn dict(codes: Vec<u8>, names: &[&str]) -> ArrayRef {
    let values = Arc::new(StringArray::from(names.to_vec()));
    Arc::new(DictionaryArray::<UInt8Type>::try_new(UInt8Array::from(codes), values).expect("codes in range"))
}

fn u64s(v: Vec<u64>) -> ArrayRef {
    Arc::new(UInt64Array::from(v))
}

fn u32s(v: Vec<u32>) -> ArrayRef {
    Arc::new(UInt32Array::from(v))
}

fn strings(v: Vec<String>) -> ArrayRef {
    Arc::new(StringArray::from(v))
}

fn opt_u64s(v: Vec<Option<u64>>) -> ArrayRef {
    Arc::new(UInt64Array::from(v))
}

fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(cols).expect("columns of equal length")
}

fn dir_codes(dirs: impl Iterator<Item = Dir>) -> Vec<u8> {
    dirs.map(|d| d as u8).collect()
}

fn tables(r: build::RunResult) -> (Vec<(&'static str, RecordBatch)>, serde_json::Value) {
    let mut out = Vec::new();
    let hops: Vec<&str> = r.links.iter().map(|l| l.hop.as_str()).collect();
    let p = r.packets;
    out.push((
        "packets",
        batch(vec![
            ("dir", dict(p.dir, &DIRS)),
            ("hop", dict(p.hop, &hops)),
            ("flow", u32s(p.flow)),
            ("size", u32s(p.size)),
            ("t_enqueue_ns", u64s(p.t_enqueue)),
            ("t_out_ns", u64s(p.t_out)),
            ("outcome", dict(p.outcome, &outcome_names())),
        ]),
    ));
    let q = r.queue;
    out.push((
        "queue",
        batch(vec![
            ("t_ns", u64s(q.t)),
            ("dir", dict(q.dir, &DIRS)),
            ("hop", dict(q.hop, &hops)),
            ("backlog_bytes", u64s(q.backlog_bytes)),
            ("backlog_pkts", u64s(q.backlog_pkts)),
            ("tx_bytes", u64s(q.tx_bytes)),
            ("drops", u64s(q.drops)),
            ("marks", u64s(q.marks)),
            ("rate_bps", u64s(q.rate_bps)),
        ]),
    ));
    let s = r.flow_series;
    out.push((
        "flow_series",
        batch(vec![
            ("t_ns", u64s(s.t)),
            ("flow", u32s(s.flow)),
            ("delivered_bytes", u64s(s.delivered_bytes)),
            ("sent_bytes", u64s(s.sent_bytes)),
            ("cwnd_bytes", u64s(s.cwnd_bytes)),
            ("srtt_ns", u64s(s.srtt)),
        ]),
    ));
    let w = &r.web;
    out.push((
        "web",
        batch(vec![
            ("flow", u32s(w.iter().map(|x| x.flow).collect())),
            ("connection", u32s(w.iter().map(|x| x.rec.connection).collect())),
            ("exchange", u32s(w.iter().map(|x| x.rec.index).collect())),
            ("req_bytes", u64s(w.iter().map(|x| x.rec.req_bytes).collect())),
            ("rsp_bytes", u64s(w.iter().map(|x| x.rec.rsp_bytes).collect())),
            (
                "t_request_ns",
                opt_u64s(w.iter().map(|x| x.rec.requested).collect()),
            ),
            (
                "response_time_ns",
                opt_u64s(
                    w.iter()
                        .map(|x| x.rec.requested.zip(x.rec.completed).map(|(a, b)| b - a))
                        .collect(),
                ),
            ),
        ]),
    ));
    let wp = &r.webpage;
    out.push((
        "webpage",
        batch(vec![
            ("flow", u32s(wp.iter().map(|x| x.flow).collect())),
            ("fetch", u32s(wp.iter().map(|x| x.rec.index).collect())),
            ("t_start_ns", u64s(wp.iter().map(|x| x.rec.start).collect())),
            (
                "fetch_time_ns",
                opt_u64s(
                    wp.iter()
                        .map(|x| x.rec.completed.map(|t| t - x.rec.start))
                        .collect(),
                ),
            ),
            (
                "timed_out",
                u32s(wp.iter().map(|x| u32::from(x.rec.timed_out)).collect()),
            ),
            (
                "objects_done",
                u32s(wp.iter().map(|x| x.rec.objects_done).collect()),
            ),
        ]),
    ));
    let pr = &r.probes;
    out.push((
        "probes",
        batch(vec![
            ("flow", u32s(pr.iter().map(|x| x.flow).collect())),
            ("seq", u64s(pr.iter().map(|x| x.seq).collect())),
            ("t_send_ns", u64s(pr.iter().map(|x| x.sent).collect())),
            (
                "rtt_ns",
                opt_u64s(pr.iter().map(|x| x.reply.map(|r| r.0)).collect()),
            ),
            (
                "owd_up_ns",
                opt_u64s(pr.iter().map(|x| x.reply.map(|r| r.1)).collect()),
            ),
            (
                "owd_down_ns",
                opt_u64s(pr.iter().map(|x| x.reply.map(|r| r.2)).collect()),
            ),
            (
                "lost",
                Arc::new(BooleanArray::from(
                    pr.iter().map(|x| x.reply.is_none()).collect::<Vec<_>>(),
                )),
            ),
        ]),
    ));
    let f = &r.flows;
    let col = |g: &dyn Fn(&build::FlowRow) -> u64| u64s(f.iter().map(g).collect());
    out.push((
        "flows",
        batch(vec![
            ("flow", u32s((0..f.len() as u32).collect())),
            ("kind", strings(f.iter().map(|x| x.kind.clone()).collect())),
            ("direction", dict(dir_codes(f.iter().map(|x| x.direction)), &DIRS)),
            ("group", u32s(f.iter().map(|x| x.group).collect())),
            ("label", strings(f.iter().map(|x| x.label.clone()).collect())),
            ("cc", strings(f.iter().map(|x| x.cc.clone()).collect())),
            ("start_ns", col(&|x| x.start)),
            ("base_rtt_ns", col(&|x| x.base_rtt)),
            ("bytes_target", col(&|x| x.bytes_target)),
            ("packets_sent", col(&|x| x.report.packets_sent)),
            ("bytes_sent", col(&|x| x.report.bytes_sent)),
            ("packets_received", col(&|x| x.report.packets_received)),
            ("bytes_delivered", col(&|x| x.report.bytes_delivered)),
            ("retransmits", col(&|x| x.report.retransmits)),
            ("rto_count", col(&|x| x.report.rto_count)),
            ("tlp_probes", col(&|x| x.report.tlp_probes)),
            ("spurious_rtos", col(&|x| x.report.spurious_rtos)),
            ("ecn_reductions", col(&|x| x.report.ecn_reductions)),
            (
                "first_syn_ns",
                opt_u64s(f.iter().map(|x| x.report.first_syn).collect()),
            ),
            (
                "completed_ns",
                opt_u64s(f.iter().map(|x| x.report.completed).collect()),
            ),
            ("drops", col(&|x| x.drops)),
            ("marks", col(&|x| x.marks)),
        ]),
    ));
    let l = &r.links;
    let lcol = |g: &dyn Fn(&build::LinkRow) -> u64| u64s(l.iter().map(g).collect());
    let mut link_cols = vec![
        ("dir", dict(dir_codes(l.iter().map(|x| x.dir)), &DIRS)),
        ("hop", strings(l.iter().map(|x| x.hop.clone()).collect())),
        (
            "bottleneck",
            Arc::new(BooleanArray::from(
                l.iter().map(|x| x.bottleneck).collect::<Vec<_>>(),
            )),
        ),
        ("delay_ns", lcol(&|x| x.delay)),
        ("qdisc", strings(l.iter().map(|x| x.qdisc.clone()).collect())),
        ("rate_bps", lcol(&|x| x.rate_bps)),
        ("capacity_bytes", lcol(&|x| x.capacity_bytes)),
        ("arrivals", lcol(&|x| x.stats.arrivals)),
        ("tx_packets", lcol(&|x| x.stats.tx_packets)),
        ("tx_bytes", lcol(&|x| x.stats.tx_bytes)),
    ];
    let drop_cols: Vec<String> = DropReason::ALL
        .iter()
        .map(|r| format!("drops_{}", r.name()))
        .collect();
    for (reason, name) in DropReason::ALL.iter().zip(&drop_cols) {
        link_cols.push((
            name,
            u64s(l.iter().map(|x| x.stats.drops[*reason as usize]).collect()),
        ));
    }
    link_cols.push(("marks", lcol(&|x| x.stats.marks)));
    link_cols.push(("backlog_bytes", lcol(&|x| x.backlog_bytes)));
    link_cols.push(("backlog_pkts", lcol(&|x| x.backlog_pkts)));
    out.push(("links", batch(link_cols)));
    let steps: Vec<(Dir, u8, u64, u64)> = l
        .iter()
        .enumerate()
        .flat_map(|(k, x)| x.schedule.iter().map(move |&(t, rate)| (x.dir, k as u8, t, rate)))
        .collect();
    out.push((
        "rate_schedule",
        batch(vec![
            ("dir", dict(dir_codes(steps.iter().map(|s| s.0)), &DIRS)),
            ("hop", dict(steps.iter().map(|s| s.1).collect(), &hops)),
            ("t_ns", u64s(steps.iter().map(|s| s.2).collect())),
            ("rate_bps", u64s(steps.iter().map(|s| s.3).collect())),
        ]),
    ));
    let diagnostics: serde_json::Map<String, serde_json::Value> = l
        .iter()
        .map(|x| {
            (
                x.hop.clone(),
                json!(x
                    .diagnostics
                    .iter()
                    .map(|&(k, v)| (k.to_string(), json!(v)))
                    .collect::<serde_json::Map<_, _>>()),
            )
        })
        .collect();
    let meta = json!({
        "name": r.resolved.name,
        "seed": r.seed,
        "duration_ns": r.duration,
        "events": r.events,
        "version": env!("CARGO_PKG_VERSION"),
        "record": r.resolved.record,
        "scenario": r.resolved,
        "qdisc_diagnostics": diagnostics,
        "peak_packets": r.peak_packets,
    });
    (out, meta)
}

fn parse(scenario_json: &str) -> PyResult<scenario::Scenario> {
    scenario::parse(scenario_json).map_err(PyValueError::new_err)
}

/// Whether some hop of the scenario runs a discipline written in Python.
fn has_python_qdisc(sc: &scenario::Scenario) -> bool {
    sc.topology
        .hops()
        .iter()
        .any(|h| h.spec.qdisc.kind == pyqdisc::KIND)
}

/// The failure of a Python discipline as `aqmlab.pyqdisc.QdiscError` (with the user's traceback).
fn qdisc_error(py: Python, f: pyqdisc::Failure) -> PyErr {
    let made = py.import("aqmlab.pyqdisc").and_then(|m| {
        m.getattr("failure")?
            .call1((f.err.into_value(py), f.raised, f.now, f.method, f.class, f.key))
    });
    match made {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// Runs a scenario (JSON text) with `seed` (default: the scenario's). Returns
/// (dict of pyarrow.RecordBatch, metadata JSON text). Raises ValueError for invalid scenarios and
/// aqmlab.pyqdisc.QdiscError when a discipline written in Python fails.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None))]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: Option<u64>,
) -> PyResult<(Bound<'py, PyDict>, String)> {
    let sc = parse(scenario_json)?;
    let seed = seed.unwrap_or(sc.seed);
    let t0 = Instant::now();
    let result = if has_python_qdisc(&sc) {
        // the Python disciplines are called with the GIL held throughout
        let ext = pyqdisc::PyQdiscs::default();
        let r = build::run_with(&sc, seed, Some(&ext));
        if let Some(f) = ext.failure.borrow_mut().take() {
            return Err(qdisc_error(py, f));
        }
        r
    } else {
        py.detach(|| build::run(&sc, seed))
    }
    .map_err(PyValueError::new_err)?;
    // Enforced in every build: a run that loses or invents a packet is a defect, never a result.
    if let Err(e) = &result.conservation {
        return Err(PyRuntimeError::new_err(format!(
            "packet conservation violated (a defect of aqmlab; please report it with the scenario and seed): {e}"
        )));
    }
    let (d, meta) = to_python(py, result, t0.elapsed().as_secs_f64())?;
    Ok((d, meta.to_string()))
}

/// The batches and metadata of a run as Python objects.
fn to_python<'py>(
    py: Python<'py>,
    result: build::RunResult,
    wall: f64,
) -> PyResult<(Bound<'py, PyDict>, serde_json::Value)> {
    let (batches, mut meta) = tables(result);
    meta["wall_s"] = json!(wall);
    let d = PyDict::new(py);
    for (name, b) in batches {
        d.set_item(name, PyRecordBatch::new(b).into_pyarrow(py)?)?;
    }
    Ok((d, meta))
}

/// Forwards real packets between two TUN devices (descriptors `client_fd`, `server_fd`)
/// through the scenario's path until `stop_fd` becomes readable (crates/aqmlab-emu). `t0_ns`
/// is the CLOCK_MONOTONIC time of the run's start; `classes_json` lists
/// `[protocol, client port, flow]` triples. Returns the tables and metadata like `run`, the
/// metadata with the forwarder's own figures under `emulator`.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed, client_fd, server_fd, stop_fd, t0_ns, classes_json, realtime=true))]
#[allow(clippy::too_many_arguments)]
fn emulate<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: Option<u64>,
    client_fd: i32,
    server_fd: i32,
    stop_fd: i32,
    t0_ns: u64,
    classes_json: &str,
    realtime: bool,
) -> PyResult<(Bound<'py, PyDict>, String)> {
    let sc = parse(scenario_json)?;
    let seed = seed.unwrap_or(sc.seed);
    let triples: Vec<(u8, u16, u32)> =
        serde_json::from_str(classes_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let classes: Vec<aqmlab_emu::Class> = triples
        .into_iter()
        .map(|(proto, client_port, flow)| aqmlab_emu::Class {
            proto,
            client_port,
            flow,
        })
        .collect();
    let io = aqmlab_emu::Io {
        client: client_fd,
        server: server_fd,
        stop: stop_fd,
        t0: t0_ns,
        realtime,
    };
    let t0 = Instant::now();
    let (result, stats) = py
        .detach(|| aqmlab_emu::forward(&sc, seed, &io, &classes))
        .map_err(PyRuntimeError::new_err)?;
    let wall = t0.elapsed().as_secs_f64();
    let (d, mut meta) = to_python(py, result, wall)?;
    let late = &stats.late_us;
    let total: u64 = late.iter().sum();
    let pct = |q: f64| -> Option<usize> {
        let want = (q * total as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        late.iter().position(|&n| {
            acc += n;
            acc >= want
        })
    };
    meta["emulator"] = json!({
        "packets": stats.packets,
        "malformed": stats.malformed,
        "write_errors": stats.write_errors,
        "cpu_s": stats.cpu_ns as f64 / 1e9,
        "wall_s": stats.wall_ns as f64 / 1e9,
        "wakeups": stats.wakeups,
        "realtime": stats.realtime,
        "late_us_p50": (total > 0).then(|| pct(0.5)),
        "late_us_p99": (total > 0).then(|| pct(0.99)),
        "late_us_max": late.iter().rposition(|&n| n > 0),
        "late_us_histogram_top": late.len() - 1,
    });
    Ok((d, meta.to_string()))
}

/// Validates a scenario (JSON text) and returns it resolved (every default written out) as JSON.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None))]
fn resolve(py: Python, scenario_json: &str, seed: Option<u64>) -> PyResult<String> {
    let sc = parse(scenario_json)?;
    let ext = pyqdisc::PyQdiscs::default();
    let r = build::resolve_with(&sc, seed.unwrap_or(sc.seed), Some(&ext));
    if let Some(f) = ext.failure.borrow_mut().take() {
        return Err(qdisc_error(py, f));
    }
    let r = r.map_err(PyValueError::new_err)?;
    Ok(serde_json::to_string(&r).expect("scenarios serialise"))
}

/// A duration ("5ms", "1.5s") in ns, as scenario files write them.
#[pyfunction]
fn parse_time(text: &str) -> PyResult<u64> {
    aqmlab_core::units::parse_time(text).map_err(PyValueError::new_err)
}

/// A buffer limit ("1000p", "64kB") as ("p", packets) or ("B", bytes).
#[pyfunction]
fn parse_limit(text: &str) -> PyResult<(&'static str, u64)> {
    match aqmlab_core::units::parse_limit(text).map_err(PyValueError::new_err)? {
        aqmlab_core::units::Limit::Packets(n) => Ok(("p", n)),
        aqmlab_core::units::Limit::Bytes(n) => Ok(("B", n)),
    }
}

/// The registered queue disciplines with their parameters and defaults, as JSON.
#[pyfunction]
fn qdiscs() -> String {
    let link = aqmlab_core::queue::LinkInfo {
        rate_bps: 10_000_000,
        mtu: 1500,
        limit: None,
    };
    let list: Vec<serde_json::Value> = registry()
        .iter()
        .map(|i| {
            let built = (i.build)(&json!({}), &link, aqmlab_core::rng::Rng::from_seed(0));
            let flow_queues = built.as_ref().is_ok_and(|(q, _)| q.flow_queues());
            let defaults = built.map(|(_, v)| v).unwrap_or_else(|e| json!({ "error": e }));
            json!({"name": i.name, "summary": i.summary, "reference": i.reference, "params": i.docs(),
                   "defaults_at_10mbps": defaults, "flow_queues": flow_queues})
        })
        .collect();
    serde_json::to_string(&list).expect("serialisable")
}

/// The JSON Schema of the scenario format, as JSON.
#[pyfunction]
fn schema() -> String {
    serde_json::to_string_pretty(&scenario::schema::scenario_schema()).expect("serialisable")
}

/// The TCP profiles, each with the flow keys it resolves to (MSS-dependent window for its MSS), as JSON.
#[pyfunction]
fn tcp_profiles() -> String {
    let list: Vec<serde_json::Value> = aqmlab_core::transport::tcp::PROFILES
        .iter()
        .map(|p| {
            let sc = json!({"name": "profile", "duration": "1s",
                            "topology": {"rtt": "10ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
                            "flows": [{"kind": "tcp", "profile": p.name}]});
            let keys = scenario::parse(&sc.to_string())
                .and_then(|sc| build::resolve(&sc, 0))
                .map(|r| {
                    let mut f = serde_json::to_value(&r.flows[0]).expect("flow specs serialise");
                    let m = f.as_object_mut().expect("object");
                    for k in ["kind", "profile", "count", "start", "direction"] {
                        m.remove(k);
                    }
                    f
                })
                .unwrap_or_else(|e| json!({ "error": e }));
            json!({"name": p.name, "about": p.about, "keys": keys})
        })
        .collect();
    serde_json::to_string(&list).expect("serialisable")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(emulate, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(qdiscs, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(parse_time, m)?)?;
    m.add_function(wrap_pyfunction!(parse_limit, m)?)?;
    m.add_class::<pyqdisc::PyPacket>()?;
    m.add_class::<pyqdisc::QueueState>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
