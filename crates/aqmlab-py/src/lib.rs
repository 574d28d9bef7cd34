//! aqmlab's one boundary between Rust and Python (docs/architecture.md, principle 6): run a scenario given
//! as JSON and get Arrow record batches back (zero-copy through the Arrow C data interface via
//! pyo3-arrow), plus the run's metadata as JSON. Table columns follow docs/tables.md.

use aqmlab_core::queue::registry;
use aqmlab_core::queue::{DropReason, Qdisc};
use aqmlab_core::record::tables::{tables_markdown, Data, Recorded};
use aqmlab_core::record::Nullable;
use aqmlab_core::scenario::{self, build};
use aqmlab_core::sim::World;
use aqmlab_core::transport::cc::registry as cc_registry;
use aqmlab_core::transport::cc::{CcContext, Hystart};
use arrow_array::types::{ArrowPrimitiveType, Float64Type, UInt64Type, UInt8Type};
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, PrimitiveArray, RecordBatch, StringArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::PyRecordBatch;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Every Rust allocation of the extension (the simulator's state, the Arrow buffers it hands to
/// Python) comes from mimalloc. Its segments are 2 MiB-aligned and advised as transparent huge
/// pages, where glibc's heap gets 4 KiB pages unless the process opts in: at 10,000 flows a
/// packet's step touches state spread over 100 MB, and the page walks of its TLB misses were
/// about a tenth of the run (bench/LOG.md, "Huge pages for large runs"). Results do not
/// depend on the allocator (no address is ever hashed or compared).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod pyqdisc;

/// One column's values as an Arrow array.
fn array(data: Data) -> ArrayRef {
    match data {
        Data::U16(v) => Arc::new(UInt16Array::from(v)),
        Data::U32(v) => Arc::new(UInt32Array::from(v)),
        Data::U64(v) => Arc::new(UInt64Array::from(v)),
        Data::OptU64(v) => Arc::new(nullable::<UInt64Type>(v)),
        Data::OptF64(v) => Arc::new(nullable::<Float64Type>(v)),
        Data::Bool(v) => Arc::new(BooleanArray::from(v)),
        Data::Str(v) => Arc::new(StringArray::from(v)),
        Data::Dict(codes, names) => dictionary(UInt8Array::from(codes), names),
        Data::OptDict(codes, names) => dictionary(nullable::<UInt8Type>(codes), names),
    }
}

/// A nullable column as an Arrow array: its values and their validity.
fn nullable<T: ArrowPrimitiveType>(n: Nullable<T::Native>) -> PrimitiveArray<T> {
    let (values, valid) = n.into_rows();
    PrimitiveArray::new(ScalarBuffer::from(values), Some(NullBuffer::from(valid)))
}

/// Strings as codes (null codes for nulls) into `names`.
fn dictionary(codes: UInt8Array, names: Vec<String>) -> ArrayRef {
    Arc::new(
        DictionaryArray::<UInt8Type>::try_new(codes, Arc::new(StringArray::from(names)))
            .expect("codes in range"),
    )
}

/// The run's tables as Arrow record batches (every table the core declares, generically) and
/// its metadata, with the resolved scenario under `scenario` if `with_scenario`.
fn tables(
    mut r: build::RunResult,
    with_scenario: bool,
) -> (Vec<(&'static str, RecordBatch)>, serde_json::Value) {
    let l = &r.links;
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
    let mut meta = json!({
        "name": r.resolved.name,
        "seed": r.seed,
        "duration_ns": r.duration,
        "events": r.events,
        "version": env!("CARGO_PKG_VERSION"),
        "record": r.resolved.record,
        "qdisc_diagnostics": diagnostics,
        "peak_packets": r.peak_packets,
        "random_streams": r.random_streams,
    });
    if with_scenario {
        meta["scenario"] = json!(r.resolved);
    }
    // the hops whose discipline has sub-queues, with their names (no key without any)
    let subqueues: serde_json::Map<String, serde_json::Value> = l
        .iter()
        .filter(|x| !x.subqueues.is_empty())
        .map(|x| (x.hop.clone(), json!(x.subqueues)))
        .collect();
    if !subqueues.is_empty() {
        meta["subqueues"] = json!(subqueues);
    }
    let out = r
        .take_recorded()
        .tables()
        .into_iter()
        .map(|t| {
            let cols = t.columns.into_iter().map(|c| (c.name, array(c.data)));
            (
                t.name,
                RecordBatch::try_from_iter(cols).expect("columns of equal length"),
            )
        })
        .collect();
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

/// The failure of a Python discipline as `aqmlab.pyqdisc.QdiscError` (with the user's traceback);
/// an interrupt that arrived while the discipline's code ran (KeyboardInterrupt, SystemExit: not an
/// `Exception`) as itself.
fn qdisc_error(py: Python, f: pyqdisc::Failure) -> PyErr {
    if !f.err.is_instance_of::<PyException>(py) {
        return f.err;
    }
    let made = py.import("aqmlab.pyqdisc").and_then(|m| {
        m.getattr("failure")?
            .call1((f.err.into_value(py), f.raised, f.now, f.method, f.class, f.key))
    });
    match made {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// Wall time between two looks at the signals Python has pending during a run.
const SIGNALS_EVERY: Duration = Duration::from_millis(50);
/// Wall time between two progress reports of a run.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// How many times `interrupt_runs` was called in this process.
static INTERRUPTS: AtomicU64 = AtomicU64::new(0);

/// Stops every run in progress in this process, whichever thread runs it: each raises
/// KeyboardInterrupt within some milliseconds. Runs started afterwards are not affected. (For
/// workers whose runs are not on the main thread, where signals cannot reach them.)
#[pyfunction]
fn interrupt_runs() {
    INTERRUPTS.fetch_add(1, Ordering::Relaxed);
}

/// Watches a run from its event loop (`build::run_watched`): it stops the run when
/// `interrupt_runs` was called since the run started; every `SIGNALS_EVERY` of wall time it lets
/// Python run the handlers of pending signals (Ctrl-C raises KeyboardInterrupt there), and every
/// `PROGRESS_EVERY` it calls `progress(now_ns, duration_ns, events, wall_s)`. An exception from
/// either stops the run and is kept in `raised`.
struct Watch {
    progress: Option<Py<PyAny>>,
    started: Instant,
    interrupts: u64,
    next_signals: Duration,
    next_progress: Duration,
    raised: Option<PyErr>,
}

impl Watch {
    fn new(progress: Option<Py<PyAny>>, started: Instant) -> Watch {
        Watch {
            progress,
            started,
            interrupts: INTERRUPTS.load(Ordering::Relaxed),
            next_signals: SIGNALS_EVERY,
            next_progress: PROGRESS_EVERY,
            raised: None,
        }
    }

    fn keep_going(&mut self, w: &World) -> bool {
        if INTERRUPTS.load(Ordering::Relaxed) != self.interrupts {
            self.raised = Some(PyKeyboardInterrupt::new_err("interrupt_runs"));
            return false;
        }
        let wall = self.started.elapsed();
        if wall < self.next_signals {
            return true;
        }
        self.next_signals = wall + SIGNALS_EVERY;
        let looked = Python::attach(|py| {
            py.check_signals()?;
            match &self.progress {
                Some(f) if wall >= self.next_progress => {
                    self.next_progress = wall + PROGRESS_EVERY;
                    f.call1(py, (w.now, w.end, w.events, wall.as_secs_f64()))
                        .map(drop)
                }
                _ => Ok(()),
            }
        });
        looked.map_err(|e| self.raised = Some(e)).is_ok()
    }
}

/// Runs a scenario (JSON text) with `seed` (default: the scenario's). Returns
/// (dict of pyarrow.RecordBatch, metadata JSON text). Raises ValueError for invalid scenarios and
/// aqmlab.pyqdisc.QdiscError when a discipline written in Python fails. A signal whose Python
/// handler raises (Ctrl-C: KeyboardInterrupt) stops the run within some 50 ms of wall time and
/// the exception propagates; `progress`, if given, is called as `Watch` describes. With
/// `with_scenario` false the metadata leaves out the resolved scenario (the caller has it from
/// `resolve`: the same scenario and seed resolve to the same document).
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, progress=None, with_scenario=true))]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: Option<u64>,
    progress: Option<Py<PyAny>>,
    with_scenario: bool,
) -> PyResult<(Bound<'py, PyDict>, String)> {
    let sc = parse(scenario_json)?;
    let seed = seed.unwrap_or(sc.seed);
    let t0 = Instant::now();
    let mut watch = Watch::new(progress, t0);
    let outcome = if has_python_qdisc(&sc) {
        // the Python disciplines are called with the GIL held throughout
        let ext = pyqdisc::PyQdiscs::default();
        let r = build::run_watched(&sc, seed, Some(&ext), &mut |w| watch.keep_going(w));
        if let Some(f) = ext.failure.borrow_mut().take() {
            return Err(qdisc_error(py, f));
        }
        r
    } else {
        py.detach(|| build::run_watched(&sc, seed, None, &mut |w| watch.keep_going(w)))
    }
    .map_err(PyValueError::new_err)?;
    let Some(result) = outcome else {
        return Err(watch
            .raised
            .take()
            .expect("a run stops early only on an exception"));
    };
    // Enforced in every build: a run that loses or invents a packet is a defect, never a result.
    if let Err(e) = &result.conservation {
        return Err(PyRuntimeError::new_err(format!(
            "packet conservation violated (a defect of aqmlab; please report it with the scenario and seed): {e}"
        )));
    }
    let (d, meta) = to_python(py, result, t0.elapsed().as_secs_f64(), with_scenario)?;
    Ok((d, meta.to_string()))
}

/// The batches and metadata of a run as Python objects.
fn to_python<'py>(
    py: Python<'py>,
    result: build::RunResult,
    wall: f64,
    with_scenario: bool,
) -> PyResult<(Bound<'py, PyDict>, serde_json::Value)> {
    let (batches, mut meta) = tables(result, with_scenario);
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
/// `[protocol, client port, server port (0: any), flow]`. Returns the tables and metadata like `run`, the
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
    let rows: Vec<(u8, u16, u16, u32)> =
        serde_json::from_str(classes_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let classes: Vec<aqmlab_emu::Class> = rows
        .into_iter()
        .map(|(proto, client_port, server_port, flow)| aqmlab_emu::Class {
            proto,
            client_port,
            server_port,
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
    let (d, mut meta) = to_python(py, result, wall, true)?;
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
        "cpu_latency_qos": stats.cpu_latency_qos,
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

/// A rate ("10Mbps", "1.5Gbps") in bit/s, as scenario files write them.
#[pyfunction]
fn parse_rate(text: &str) -> PyResult<u64> {
    aqmlab_core::units::parse_rate(text).map_err(PyValueError::new_err)
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
        wifi: false,
    };
    let list: Vec<serde_json::Value> = registry::all()
        .iter()
        .map(|i| {
            let built = i.build(&json!({}), &link, aqmlab_core::rng::Rng::from_seed(0));
            let flow_queues = built.as_ref().is_ok_and(|(q, _)| q.flow_queues());
            let defaults = built.map(|(_, v)| v).unwrap_or_else(|e| json!({ "error": e }));
            json!({"name": i.name, "summary": i.summary, "reference": i.reference, "params": i.docs(),
                   "defaults_at_10mbps": defaults, "flow_queues": flow_queues})
        })
        .collect();
    serde_json::to_string(&list).expect("serialisable")
}

/// The registered congestion controllers with their `cc_params` keys and defaults, as JSON.
#[pyfunction]
fn ccs() -> String {
    let ctx = CcContext {
        mss: 1448,
        hystart: Hystart::Off,
    };
    let list: Vec<serde_json::Value> = cc_registry::all()
        .iter()
        .map(|c| {
            let defaults =
                cc_registry::cc_params(c.name, &json!({}), &ctx).unwrap_or_else(|e| json!({ "error": e }));
            json!({"name": c.name, "summary": c.summary, "reference": c.reference, "params": c.docs(),
                   "defaults": defaults})
        })
        .collect();
    serde_json::to_string(&list).expect("serialisable")
}

/// The drop reasons, in outcome-code order, with what each says about the packet, as JSON.
#[pyfunction]
fn drop_reasons() -> String {
    let list: Vec<serde_json::Value> = DropReason::ALL
        .iter()
        .map(|r| json!({"name": r.name(), "by_queue": r.by_queue(), "entered": r.entered(), "by_aqm": r.by_aqm()}))
        .collect();
    serde_json::to_string(&list).expect("serialisable")
}

/// The tables a run returns, as the core declares them: name, what a row is, the lowest
/// recording level that keeps it, and each column's name, type and meaning; as JSON.
#[pyfunction]
fn table_layout() -> String {
    let list: Vec<serde_json::Value> = Recorded::default()
        .tables()
        .iter()
        .map(|t| {
            let columns: Vec<serde_json::Value> = t
                .columns
                .iter()
                .map(|c| json!({"name": c.name, "type": c.data.type_name(), "meaning": c.meaning}))
                .collect();
            json!({"name": t.name, "row": t.row, "level": t.level, "columns": columns})
        })
        .collect();
    serde_json::to_string(&list).expect("serialisable")
}

/// docs/tables.md's column tables, written from the core's declarations.
#[pyfunction]
fn tables_doc() -> String {
    tables_markdown()
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
                            "flows": [{"kind": "tcp", "profile": p.name()}]});
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
            json!({"name": p.name(), "about": p.about, "keys": keys})
        })
        .collect();
    serde_json::to_string(&list).expect("serialisable")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(interrupt_runs, m)?)?;
    m.add_function(wrap_pyfunction!(emulate, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(qdiscs, m)?)?;
    m.add_function(wrap_pyfunction!(ccs, m)?)?;
    m.add_function(wrap_pyfunction!(drop_reasons, m)?)?;
    m.add_function(wrap_pyfunction!(table_layout, m)?)?;
    m.add_function(wrap_pyfunction!(tables_doc, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(parse_time, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate, m)?)?;
    m.add_function(wrap_pyfunction!(parse_limit, m)?)?;
    m.add_class::<pyqdisc::PyPacket>()?;
    m.add_class::<pyqdisc::QueueState>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // How the extension was optimised: "pgo" from scripts/pgo.sh (profile-guided), else "plain".
    m.add("BUILD", option_env!("AQMLAB_BUILD").unwrap_or("plain"))?;
    Ok(())
}
