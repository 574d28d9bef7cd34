//! Queue disciplines written in Python (`qdisc = { kind = "python", class = "module:Class", ... }`),
//! plugged into the core through its `ExternalQdiscs` hook: the core keeps static dispatch for its
//! own disciplines and never sees Python.
//!
//! The packets stay in a Rust FIFO; the Python object decides (python/aqmlab/pyqdisc.py, the
//! contract; docs/python-qdisc.md, the tutorial). `enqueue(now, pkt, queue)` answers "enqueue",
//! "mark" (set CE, then enqueue), "drop" (an early drop) or "overlimit" (the buffer is full);
//! `dequeue(now, pkt, queue)` gets the head packet already taken out and answers "send", "mark"
//! (set CE, then send) or "drop" (a head drop: it is asked again with the next head), and is called
//! with `pkt = None` when the queue is empty. An optional `timer(now, queue)` runs at the time its
//! `next_timer()` returns. Drops and marks go through `QueueCtx`, as a built-in discipline's.
//!
//! An exception in the user's code, or a verdict outside the lists above, ends the run at that
//! simulated instant (`QueueEvent::Stop`); the error is kept with the time and re-raised by
//! `_core.run` as `aqmlab.pyqdisc.QdiscError` with the user's traceback.

use aqmlab_core::packet::{Dir, Ecn, PktId};
use aqmlab_core::queue::registry::ExternalQdiscs;
use aqmlab_core::queue::{DropReason, LinkInfo, Qdisc, QueueCtx, QueueEvent};
use aqmlab_core::units::{Limit, Time};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

/// The `kind` of a Python discipline in a scenario.
pub const KIND: &str = "python";

/// A packet as the Python discipline sees it (read-only).
#[pyclass(frozen, get_all, name = "Packet", module = "aqmlab._core")]
pub struct PyPacket {
    /// The scenario's flow index.
    flow: u32,
    /// "up" or "down".
    dir: &'static str,
    /// IP bytes.
    size: u32,
    dscp: u8,
    /// "not_ect", "ect1", "ect0" or "ce".
    ecn: &'static str,
    /// Whether a "mark" verdict can set CE (ECT or already CE).
    ecn_capable: bool,
    /// When the packet entered this queue (ns).
    enqueued_at: u64,
}

#[pymethods]
impl PyPacket {
    fn __repr__(&self) -> String {
        format!(
            "Packet(flow={}, dir={:?}, size={}, dscp={}, ecn={:?}, enqueued_at={})",
            self.flow, self.dir, self.size, self.dscp, self.ecn, self.enqueued_at
        )
    }
}

/// The queue's backlog as the Python discipline sees it: before the arrival at `enqueue`, after
/// taking the head packet out at `dequeue`.
#[pyclass(frozen, get_all, name = "QueueState", module = "aqmlab._core")]
pub struct QueueState {
    packets: u64,
    bytes: u64,
}

#[pymethods]
impl QueueState {
    fn __repr__(&self) -> String {
        format!("QueueState(packets={}, bytes={})", self.packets, self.bytes)
    }
}

/// Why a Python discipline stopped the run.
pub struct Failure {
    /// The exception the user's code raised, or the message about a wrong return value.
    pub err: PyErr,
    /// The user's code raised `err` (true) or returned something not allowed (false).
    pub raised: bool,
    pub now: Time,
    pub method: &'static str,
    pub class: String,
    pub key: String,
}

/// Builds the Python disciplines of one run and keeps the first failure of any of them.
#[derive(Default)]
pub struct PyQdiscs {
    pub failure: Rc<RefCell<Option<Failure>>>,
}

impl ExternalQdiscs for PyQdiscs {
    fn provides(&self, kind: &str) -> bool {
        kind == KIND
    }

    fn build(
        &self,
        _kind: &str,
        params: &Value,
        link: &LinkInfo,
        key: &str,
    ) -> Result<(Box<dyn Qdisc>, Value), String> {
        Python::attach(|py| {
            let limit = link.limit.map(|l| match l {
                Limit::Packets(n) => format!("{n}p"),
                Limit::Bytes(n) => format!("{n}B"),
            });
            let built = py.import("aqmlab.pyqdisc").and_then(|m| {
                m.getattr("build")?
                    .call1((params.to_string(), link.rate_bps, link.mtu, limit, key))
            });
            // ScenarioError (a ValueError) carries a message naming the key; anything else is a
            // defect of aqmlab.pyqdisc and keeps its traceback text
            let built = built.map_err(|e| match e.is_instance_of::<PyValueError>(py) {
                true => e.value(py).to_string(),
                false => format!("{key}: {e}"),
            })?;
            let (obj, resolved, class): (Bound<PyAny>, String, String) =
                built.extract().map_err(|e| format!("{key}: {e}"))?;
            let method = |name: &str| -> Option<Py<PyAny>> {
                obj.getattr(name)
                    .ok()
                    .filter(|m| m.is_callable())
                    .map(Bound::unbind)
            };
            let timer = method("timer").zip(method("next_timer"));
            let mut q = PyQdisc {
                enqueue: method("enqueue").expect("checked by aqmlab.pyqdisc.build"),
                dequeue: method("dequeue").expect("checked by aqmlab.pyqdisc.build"),
                timer,
                queue: VecDeque::new(),
                bytes: 0,
                deadline: None,
                class,
                key: key.to_string(),
                failure: self.failure.clone(),
                stopped: false,
            };
            q.refresh_deadline(py, 0);
            if q.stopped {
                let f = self.failure.borrow_mut().take().expect("a stop has a failure");
                return Err(format!("{key}: {}.next_timer() failed: {}", q.class, f.err));
            }
            let resolved: Value = serde_json::from_str(&resolved).map_err(|e| format!("{key}: {e}"))?;
            Ok((Box::new(q) as Box<dyn Qdisc>, resolved))
        })
    }
}

struct PyQdisc {
    enqueue: Py<PyAny>,
    dequeue: Py<PyAny>,
    /// `timer` and `next_timer`, when the class has both.
    timer: Option<(Py<PyAny>, Py<PyAny>)>,
    queue: VecDeque<PktId>,
    bytes: u64,
    deadline: Option<Time>,
    class: String,
    key: String,
    failure: Rc<RefCell<Option<Failure>>>,
    /// The run was stopped by this discipline's failure: it only drops arrivals from now on.
    stopped: bool,
}

fn packet(ctx: &QueueCtx, id: PktId) -> PyPacket {
    let p = ctx.pool.get(id);
    PyPacket {
        flow: p.flow,
        dir: match p.dir {
            Dir::Up => "up",
            Dir::Down => "down",
        },
        size: p.size,
        dscp: p.dscp,
        ecn: match p.ecn {
            Ecn::NotEct => "not_ect",
            Ecn::Ect1 => "ect1",
            Ecn::Ect0 => "ect0",
            Ecn::Ce => "ce",
        },
        ecn_capable: p.ecn.capable(),
        enqueued_at: p.enqueued_at,
    }
}

impl PyQdisc {
    fn state(&self) -> QueueState {
        QueueState {
            packets: self.queue.len() as u64,
            bytes: self.bytes,
        }
    }

    /// Records the first failure and asks the world to stop.
    fn fail(
        &mut self,
        ctx: Option<&mut QueueCtx>,
        err: PyErr,
        raised: bool,
        method: &'static str,
        now: Time,
    ) {
        let mut slot = self.failure.borrow_mut();
        if slot.is_none() {
            *slot = Some(Failure {
                err,
                raised,
                now,
                method,
                class: self.class.clone(),
                key: self.key.clone(),
            });
        }
        self.stopped = true;
        self.deadline = None;
        if let Some(ctx) = ctx {
            ctx.events.push(QueueEvent::Stop);
        }
    }

    /// Calls `method` and returns its verdict as text, or records the failure.
    fn verdict<'py>(
        &mut self,
        py: Python<'py>,
        ctx: &mut QueueCtx,
        name: &'static str,
        args: (Time, Option<PyPacket>, QueueState),
        allowed: &[&str],
        now: Time,
    ) -> Option<Bound<'py, PyString>> {
        let f = if name == "enqueue" {
            &self.enqueue
        } else {
            &self.dequeue
        };
        match f.call1(py, args) {
            Err(e) => {
                self.fail(Some(ctx), e, true, name, now);
                None
            }
            Ok(v) => {
                let v = v.into_bound(py);
                match v.cast_into::<PyString>() {
                    Ok(s) if s.to_str().is_ok_and(|t| allowed.contains(&t)) => Some(s),
                    Ok(s) => {
                        let msg = bad_verdict(name, &s.repr().map_or("?".into(), |r| r.to_string()), allowed);
                        self.fail(Some(ctx), PyValueError::new_err(msg), false, name, now);
                        None
                    }
                    Err(e) => {
                        let shown = e.into_inner().repr().map_or("?".into(), |r| r.to_string());
                        let msg = bad_verdict(name, &shown, allowed);
                        self.fail(Some(ctx), PyValueError::new_err(msg), false, name, now);
                        None
                    }
                }
            }
        }
    }

    /// Sets CE on `id`; a "mark" for a packet that cannot carry it is the user's mistake.
    fn mark(&mut self, ctx: &mut QueueCtx, id: PktId, method: &'static str, now: Time) -> bool {
        if ctx.mark(id) {
            return true;
        }
        let msg = format!(
            "{method} returned \"mark\" for a packet that is not ECN-capable (pkt.ecn_capable is False); \
             allowed for it: \"drop\" or let it pass"
        );
        self.fail(Some(ctx), PyValueError::new_err(msg), false, method, now);
        false
    }

    fn refresh_deadline(&mut self, py: Python, now: Time) {
        let Some((_, next)) = &self.timer else {
            return;
        };
        match next.call0(py).and_then(|v| v.extract::<Option<Time>>(py)) {
            Ok(t) => self.deadline = t,
            Err(e) => {
                let raised = !e.is_instance_of::<pyo3::exceptions::PyTypeError>(py)
                    && !e.is_instance_of::<pyo3::exceptions::PyOverflowError>(py);
                let e = match raised {
                    true => e,
                    false => PyValueError::new_err(format!(
                        "next_timer returned a value that is not allowed ({e}); allowed: None or an \
                         integer time in ns >= 0"
                    )),
                };
                self.fail(None, e, raised, "next_timer", now);
            }
        }
    }
}

fn bad_verdict(method: &str, shown: &str, allowed: &[&str]) -> String {
    let list: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
    format!("{method} returned {shown}; allowed: {}", list.join(", "))
}

const ENQUEUE: &[&str] = &["enqueue", "mark", "drop", "overlimit"];
const DEQUEUE: &[&str] = &["send", "mark", "drop"];

impl Qdisc for PyQdisc {
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, now: Time) {
        if self.stopped {
            ctx.drop_packet(id, DropReason::Overlimit);
            return;
        }
        Python::attach(|py| {
            let args = (now, Some(packet(ctx, id)), self.state());
            let verdict = self.verdict(py, ctx, "enqueue", args, ENQUEUE, now);
            let accept = match verdict.as_ref().map(|v| v.to_str().unwrap_or_default()) {
                Some("enqueue") => true,
                Some("mark") => self.mark(ctx, id, "enqueue", now),
                Some("drop") => {
                    ctx.drop_packet(id, DropReason::Early);
                    false
                }
                Some(_) => {
                    ctx.drop_packet(id, DropReason::Overlimit);
                    false
                }
                None => false,
            };
            if accept {
                self.bytes += ctx.size(id) as u64;
                self.queue.push_back(id);
            } else if self.stopped {
                ctx.drop_packet(id, DropReason::Overlimit);
            }
            self.refresh_deadline(py, now);
        })
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        if self.stopped {
            return None;
        }
        Python::attach(|py| {
            let out = loop {
                let Some(id) = self.queue.pop_front() else {
                    // an empty queue is reported (CoDel leaves its dropping state); no verdict
                    if let Err(e) = self.dequeue.call1(py, (now, None::<PyPacket>, self.state())) {
                        self.fail(Some(ctx), e, true, "dequeue", now);
                    }
                    break None;
                };
                self.bytes -= ctx.size(id) as u64;
                let args = (now, Some(packet(ctx, id)), self.state());
                let verdict = self.verdict(py, ctx, "dequeue", args, DEQUEUE, now);
                match verdict.as_ref().map(|v| v.to_str().unwrap_or_default()) {
                    Some("send") => break Some(id),
                    Some("mark") if self.mark(ctx, id, "dequeue", now) => break Some(id),
                    Some("drop") => ctx.drop_packet(id, DropReason::Head),
                    _ => {
                        // stopped: the packet goes back to the head of the queue, untouched
                        self.bytes += ctx.size(id) as u64;
                        self.queue.push_front(id);
                        break None;
                    }
                }
            };
            self.refresh_deadline(py, now);
            out
        })
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    fn backlog_packets(&self) -> u64 {
        self.queue.len() as u64
    }

    fn next_timer(&self) -> Option<Time> {
        self.deadline
    }

    fn on_timer(&mut self, ctx: &mut QueueCtx, now: Time) {
        Python::attach(|py| {
            let Some((timer, _)) = &self.timer else {
                return;
            };
            if let Err(e) = timer.call1(py, (now, self.state())) {
                self.fail(Some(ctx), e, true, "timer", now);
                return;
            }
            self.refresh_deadline(py, now);
            if self.stopped {
                ctx.events.push(QueueEvent::Stop);
            }
        })
    }
}
