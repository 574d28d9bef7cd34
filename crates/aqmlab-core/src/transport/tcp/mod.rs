//! TCP endpoints (sans-I/O): the data sender and the receiver of one connection, per
//! docs/transports.md section 1 (RFC 5681 / 6298 / 6582 / 6675 / 3168, with RFC 3042 limited
//! transmit, RFC 3465 byte counting, RFC 2018 SACK blocks and RFC 7323 timestamps).
//!
//! Files: `config.rs` ([`TcpConfig`], the flow's TCP keys, and their types), `profiles.rs`
//! ([`PROFILES`]: named sets of defaults for the keys), `read.rs` (a flow's keys read over its
//! profile), `connection.rs` (a connection's two ends), `sender/` (handshake, windows, loss
//! recovery, ECN sender; one module per concern), `receiver.rs`, `scoreboard.rs` (SACK
//! scoreboard), `rto.rs` (RFC 6298 or ns-2 estimator), `timer_wheel.rs` (when a kernel timer
//! armed in jiffies runs). Congestion controllers are in
//! `transport/cc`. This file only declares the modules and re-exports what the rest of the
//! crate uses: no file here names it, so the re-exports make no circle.
//!
//! Wire model (IP bytes): every segment carries IP (20) + TCP (20) + the timestamp option
//! (10 + 2 NOP = 12) = [`HEADER`] = 52 bytes. Data segment = payload + 52 (1500 for MSS 1448).
//! SYN and SYN-ACK = [`SYN_SIZE`] = 60 bytes (options: MSS 4, SACK-permitted 2, timestamps 10,
//! window scale 3, NOP 1; 20 in all). A pure ACK = 52 bytes, plus a SACK option of 2 NOPs, 2
//! bytes of kind/length and 8 per block when it carries blocks (64 / 72 / 80 bytes with 1 / 2 /
//! 3 blocks).
//!
//! Sequence space: the SYN is sequence number 0, data starts at 1; the FIN flag rides on the
//! last data segment and takes no sequence number.

pub mod accecn;
pub mod config;
pub mod connection;
pub mod delivery;
pub mod profiles;
pub mod ranges;
pub mod rcvbuf;
pub mod read;
pub mod receiver;
pub mod rto;
pub mod scoreboard;
pub mod sender;
pub mod timer_wheel;

#[cfg(test)]
mod harness;

pub use config::{DataEcn, DelAck, Name, RcvWindow, Rwnd, TcpConfig, TsoSegs};
pub use connection::{new_connection, try_new_connection};
pub use profiles::{profile, TcpProfile, PROFILES};
pub use read::read_config;
pub use receiver::TcpReceiver;
pub use sender::TcpSender;
