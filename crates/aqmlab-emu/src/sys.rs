//! The few Linux calls the forwarder makes (epoll(7), timerfd_create(2), clock_gettime(2),
//! read/write on non-blocking descriptors, the PM QoS CPU-latency request), wrapped so the rest
//! of the crate is safe code.

use std::io::{Error, Result};
use std::os::fd::RawFd;

fn check(r: libc::c_int) -> Result<libc::c_int> {
    if r < 0 {
        Err(Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Nanoseconds of `clock` (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID).
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out pointer; the clocks used here always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// An owned descriptor, closed on drop.
pub struct Fd(pub RawFd);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: the descriptor is owned by this value and closed once.
        unsafe { libc::close(self.0) };
    }
}

/// An epoll instance with level-triggered read interest; each descriptor's token is its index.
pub struct Epoll(Fd);

impl Epoll {
    pub fn new(fds: &[RawFd]) -> Result<Epoll> {
        // SAFETY: plain syscall.
        let ep = Epoll(Fd(check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?));
        for (k, &fd) in fds.iter().enumerate() {
            let mut ev = libc::epoll_event {
                events: libc::EPOLLIN as u32,
                u64: k as u64,
            };
            // SAFETY: `ev` is valid for the call.
            check(unsafe { libc::epoll_ctl(ep.0 .0, libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        }
        Ok(ep)
    }

    /// Waits (no timeout: the timerfd wakes us) and returns the ready tokens as a bit set.
    pub fn wait(&self) -> Result<u64> {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 8];
        loop {
            // SAFETY: `evs` has room for the 8 events asked for.
            let n = unsafe { libc::epoll_wait(self.0 .0, evs.as_mut_ptr(), 8, -1) };
            if n < 0 {
                let e = Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            return Ok(evs[..n as usize].iter().fold(0, |m, e| m | 1 << e.u64));
        }
    }
}

/// A CLOCK_MONOTONIC timerfd armed at absolute deadlines.
pub struct Timer(pub Fd);

impl Timer {
    pub fn new() -> Result<Timer> {
        // SAFETY: plain syscall.
        let fd = check(unsafe {
            libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC)
        })?;
        Ok(Timer(Fd(fd)))
    }

    /// Fires at monotonic time `at_ns` (at once if it has passed); `None` disarms.
    pub fn set(&self, at_ns: Option<u64>) -> Result<()> {
        // An all-zero it_value disarms, so a deadline of 0 becomes 1 ns.
        let at = at_ns.map_or(0, |t| t.max(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (at / 1_000_000_000) as libc::time_t,
                tv_nsec: (at % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: `spec` is valid; the old value is not asked for.
        check(unsafe {
            libc::timerfd_settime(self.0 .0, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut())
        })?;
        Ok(())
    }

    pub fn clear(&self) {
        let mut b = [0u8; 8];
        read(self.0 .0, &mut b);
    }
}

/// Non-blocking read; `None` when nothing is there (or on error).
pub fn read(fd: RawFd, buf: &mut [u8]) -> Option<usize> {
    // SAFETY: `buf` is valid for `buf.len()` bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    (n >= 0).then_some(n as usize)
}

/// Writes one datagram; whether the kernel took it whole.
pub fn write(fd: RawFd, buf: &[u8]) -> bool {
    // SAFETY: `buf` is valid for `buf.len()` bytes.
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    n == buf.len() as isize
}

/// Asks for precise wake-ups: timer slack of 1 ns (prctl(2) PR_SET_TIMERSLACK) and, when
/// `realtime`, the SCHED_FIFO class (sched(7)) so that other processes' work does not delay
/// the forwarder. Returns whether SCHED_FIFO was granted.
pub fn precise_wakeups(realtime: bool) -> bool {
    // SAFETY: plain syscalls on the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        if !realtime {
            return false;
        }
        let p = libc::sched_param { sched_priority: 10 };
        libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0
    }
}

/// A PM QoS CPU-latency request of 0 us, held while this lives (the kernel drops it when the
/// file closes; Documentation/admin-guide/pm/cpuidle.rst, "/dev/cpu_dma_latency"): idle CPUs
/// poll instead of entering a sleep state (in a VM, instead of halting the vCPU, whose wake-up
/// by the host takes 100 us and more), so the forwarder's wake-ups and the namespaces' packet
/// handling start at once. The cost is idle CPU time spent polling, not time taken from
/// runnable work. cyclictest(8) holds the same request.
pub struct CpuLatency {
    _request: std::fs::File,
}

/// Asks for [`CpuLatency`]; None when the device is missing or not writable (not root).
pub fn hold_cpu_latency() -> Option<CpuLatency> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .ok()?;
    f.write_all(&0i32.to_ne_bytes()).ok()?;
    Some(CpuLatency { _request: f })
}

/// Returns the calling thread to the normal (SCHED_OTHER) class.
pub fn normal_scheduling() {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain syscall on the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &p) };
}
