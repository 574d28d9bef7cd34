//! Accurate ECN feedback (RFC 9768): the handshake that negotiates it, the data receiver's
//! counters and the 3-bit ACE field it puts on every ACK, and the data sender's inference of
//! newly CE-marked packets from that field.
//!
//! * Handshake (RFC 9768 3.1): an AccECN SYN sets AE, CWR and ECE. A receiver that supports
//!   AccECN answers with a SYN-ACK whose (AE, CWR, ECE) encode the IP-ECN field of the SYN it
//!   received (Table 2: Not-ECT 010, ECT(1) 011, ECT(0) 100, CE 110); an RFC 3168 receiver
//!   answers ECE alone (001), and a receiver without ECN none (000). The sender runs AccECN on
//!   any SYN-ACK with AE or CWR set, falls back to RFC 3168 on ECE alone, and to no ECN on none.
//!   The receiver's support is the TCP key `receiver_ecn` ([`ReceiverEcn`]).
//! * Receiver (3.2.1): r.cep counts CE-marked packets from 5, r.ceb, r.e0b, r.e1b count the
//!   payload bytes of CE, ECT(0) and ECT(1) packets from 0, 1 and 1; every ACK carries r.cep
//!   mod 8 in (AE, CWR, ECE) (3.2.2). An ACK leaves at once when a CE packet follows a non-CE
//!   one (the change-triggered ACK of 3.2.2.5.1) or when [`ACE_MAX_DELTA`] CE packets wait
//!   unacknowledged (Linux, so that the 3-bit field cannot wrap unseen between ACKs).
//! * Sender (3.2.2.5): s.cep starts at 5; an ACK that delivers new data (cumulatively or by
//!   SACK) yields d = (ACE - s.cep) mod 8 new CE marks; when it delivers more than 7 packets,
//!   the field may have wrapped and the sender assumes the largest count consistent with it,
//!   D - ((D - d) mod 8) for D packets delivered (3.2.2.5.2; Linux `__tcp_accecn_process`).
//!
//! Not modelled: the AccECN TCP option (3.2.3; the byte counters are kept by the receiver but
//! not sent, and ACKs keep their size), the ACE feedback the data sender would give for the
//! reverse direction (it carries no data here), and ECN on SYNs and pure ACKs (both Not-ECT).

use crate::packet::{flags, Ecn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The initial value of r.cep and s.cep (RFC 9768 3.2.1).
pub const CEP_INIT: u64 = 5;
/// CE packets the receiver lets wait before it ACKs at once (Linux TCP_ACCECN_ACE_MAX_DELTA).
pub const ACE_MAX_DELTA: u64 = 6;
/// The ACE field's range (3 bits).
const ACE_MASK: u64 = 7;

/// The ECN feedback a connection runs after its handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    Off,
    /// RFC 3168: ECE latched until CWR (or DCTCP's per-CE echo).
    Classic,
    /// RFC 9768: the ACE counter.
    Accurate,
}

/// What ECN the receiving end supports (the TCP key `receiver_ecn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReceiverEcn {
    /// AccECN and RFC 3168 (answers each SYN with what it asks for).
    #[default]
    Accecn,
    /// RFC 3168 only: an AccECN SYN is answered as RFC 3168 ECN.
    Classic,
    /// No ECN: every SYN is answered without ECN.
    Off,
}

impl ReceiverEcn {
    pub fn is_default(&self) -> bool {
        *self == ReceiverEcn::default()
    }
}

/// The (AE, CWR, ECE) bits of `v` mod 8, AE the most significant.
pub fn ace_flags(v: u64) -> u16 {
    let v = v & ACE_MASK;
    (if v & 4 != 0 { flags::AE } else { 0 })
        | (if v & 2 != 0 { flags::CWR } else { 0 })
        | (if v & 1 != 0 { flags::ECE } else { 0 })
}

/// The ACE value of a header's flags.
pub fn ace_of(f: u16) -> u64 {
    (f & flags::AE != 0) as u64 * 4 + (f & flags::CWR != 0) as u64 * 2 + (f & flags::ECE != 0) as u64
}

/// The ECN flags of a SYN for a sender in `accurate` (AccECN) or RFC 3168 mode.
pub fn syn_flags(accurate: bool) -> u16 {
    flags::ECE | flags::CWR | if accurate { flags::AE } else { 0 }
}

/// The receiver's answer to a SYN with flags `syn` and IP-ECN `ecn`: the feedback the
/// connection runs and the SYN-ACK's ECN flags.
pub fn answer_syn(support: ReceiverEcn, syn: u16, ecn: Ecn) -> (Feedback, u16) {
    let classic = syn & (flags::ECE | flags::CWR) == flags::ECE | flags::CWR;
    match support {
        ReceiverEcn::Accecn if classic && syn & flags::AE != 0 => {
            let code = match ecn {
                Ecn::NotEct => 0b010,
                Ecn::Ect1 => 0b011,
                Ecn::Ect0 => 0b100,
                Ecn::Ce => 0b110,
            };
            (Feedback::Accurate, ace_flags(code))
        }
        ReceiverEcn::Accecn | ReceiverEcn::Classic if classic => (Feedback::Classic, flags::ECE),
        _ => (Feedback::Off, 0),
    }
}

/// The sender's reading of the SYN-ACK's flags after a SYN that asked for `asked`.
pub fn negotiated(asked: Feedback, synack: u16) -> Feedback {
    match asked {
        Feedback::Accurate if synack & (flags::AE | flags::CWR) != 0 => Feedback::Accurate,
        Feedback::Accurate | Feedback::Classic if synack & flags::ECE != 0 => Feedback::Classic,
        _ => Feedback::Off,
    }
}

/// The data receiver's counters (RFC 9768 3.2.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RxCounters {
    pub cep: u64,
    pub ceb: u64,
    pub e0b: u64,
    pub e1b: u64,
    /// CE packets since the last ACK, and whether the last packet was CE.
    ce_pending: u64,
    last_ce: bool,
}

impl Default for RxCounters {
    fn default() -> RxCounters {
        RxCounters {
            cep: CEP_INIT,
            ceb: 0,
            e0b: 1,
            e1b: 1,
            ce_pending: 0,
            last_ce: false,
        }
    }
}

impl RxCounters {
    /// A data packet of `payload` bytes arrived with `ecn`; true when it must be ACKed at once.
    pub fn on_data(&mut self, ecn: Ecn, payload: u64) -> bool {
        let ce = ecn == Ecn::Ce;
        match ecn {
            Ecn::Ce => {
                self.cep += 1;
                self.ceb += payload;
                self.ce_pending += 1;
            }
            Ecn::Ect0 => self.e0b += payload,
            Ecn::Ect1 => self.e1b += payload,
            Ecn::NotEct => {}
        }
        let change = ce && !self.last_ce;
        self.last_ce = ce;
        change || self.ce_pending >= ACE_MAX_DELTA
    }

    /// The ACE flags of an ACK sent now.
    pub fn ack_flags(&mut self) -> u16 {
        self.ce_pending = 0;
        ace_flags(self.cep)
    }
}

/// The data sender's CE counter s.cep (RFC 9768 3.2.2.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxCounter {
    pub cep: u64,
}

impl Default for TxCounter {
    fn default() -> TxCounter {
        TxCounter { cep: CEP_INIT }
    }
}

impl TxCounter {
    /// An ACK with flags `f` that delivered `delivered` packets (acknowledged or SACKed, 0 for
    /// one that delivers nothing new and is ignored): the packets newly known CE-marked.
    pub fn on_ack(&mut self, f: u16, delivered: u64) -> u64 {
        if delivered == 0 {
            return 0;
        }
        let d = ace_of(f).wrapping_sub(self.cep) & ACE_MASK;
        let n = if delivered <= ACE_MASK {
            d
        } else {
            delivered - (delivered.wrapping_sub(d) & ACE_MASK)
        };
        self.cep += n;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ace_field_is_the_counter_mod_8_with_ae_most_significant() {
        // RFC 9768 Figure 3: the ACE field is AE, CWR, ECE from the most significant bit;
        // r.cep starts at 5 = 0b101: AE and ECE set on an ACK before any CE mark
        let mut r = RxCounters::default();
        assert_eq!(r.ack_flags(), flags::AE | flags::ECE);
        for (ce, want) in [(1, 6), (2, 7), (3, 0), (4, 1)] {
            let mut r = RxCounters::default();
            for _ in 0..ce {
                r.on_data(Ecn::Ce, 1000);
            }
            assert_eq!(ace_of(r.ack_flags()), want, "{ce} CE marks");
        }
        assert_eq!(ace_flags(0b010), flags::CWR);
    }

    #[test]
    fn receiver_counts_bytes_per_codepoint_from_the_rfc_initial_values() {
        // RFC 9768 3.2.1: r.ceb from 0, r.e0b and r.e1b from 1
        let mut r = RxCounters::default();
        assert!(!r.on_data(Ecn::Ect1, 1000));
        assert!(!r.on_data(Ecn::Ect0, 500));
        assert!(r.on_data(Ecn::Ce, 1448), "CE after non-CE: change-triggered ACK");
        assert!(!r.on_data(Ecn::Ce, 1448), "a second CE in a row waits");
        r.on_data(Ecn::NotEct, 100);
        assert_eq!((r.cep, r.ceb, r.e0b, r.e1b), (7, 2896, 501, 1001));
    }

    #[test]
    fn receiver_acks_before_six_ce_marks_wait() {
        // a run of CE packets: the first triggers an ACK (a change), then the sixth pending
        let mut r = RxCounters::default();
        assert!(r.on_data(Ecn::Ce, 1));
        r.ack_flags();
        let now: Vec<bool> = (0..6).map(|_| r.on_data(Ecn::Ce, 1)).collect();
        assert_eq!(now, [false, false, false, false, false, true]);
    }

    #[test]
    fn sender_infers_ce_marks_and_the_wrap() {
        // by hand: s.cep = 5. ACE 7 after 3 packets: 2 marks. ACE 7 again after 3 more: 0.
        let mut s = TxCounter::default();
        assert_eq!(s.on_ack(ace_flags(7), 3), 2);
        assert_eq!(s.on_ack(ace_flags(7), 3), 0);
        // ACE 1 after 2 packets: (1 - 7) mod 8 = 2 marks (the field wrapped past 0)
        assert_eq!(s.on_ack(ace_flags(1), 2), 2);
        assert_eq!(s.cep, 9);
        // 20 packets delivered at once with ACE 4 = s.cep + 3 (mod 8): 3, 11 or 19 marks fit;
        // RFC 9768 3.2.2.5.2 / Linux: assume the most, 20 - ((20 - 3) mod 8) = 19
        assert_eq!(s.on_ack(ace_flags(4), 20), 19);
        assert_eq!(s.cep, 28);
        // 16 packets with an unchanged field: 0, 8 or 16 marks; the safe count is 16
        assert_eq!(s.on_ack(ace_flags(28), 16), 16);
        // 7 packets cannot wrap the field: d as read (here 0); an ACK delivering nothing
        // (a duplicate) is ignored whatever it carries
        assert_eq!(s.on_ack(ace_flags(44), 7), 0);
        assert_eq!(s.on_ack(ace_flags(47), 0), 0);
        assert_eq!(s.cep, 44);
    }

    #[test]
    fn negotiation_and_fallbacks_follow_rfc_9768_tables_2_and_3() {
        let acc = syn_flags(true);
        assert_eq!(acc, flags::AE | flags::CWR | flags::ECE);
        // an AccECN server encodes the SYN's IP-ECN field (Not-ECT here): 010
        let (fb, f) = answer_syn(ReceiverEcn::Accecn, acc, Ecn::NotEct);
        assert_eq!((fb, f), (Feedback::Accurate, flags::CWR));
        assert_eq!(negotiated(Feedback::Accurate, f), Feedback::Accurate);
        assert_eq!(answer_syn(ReceiverEcn::Accecn, acc, Ecn::Ect0).1, flags::AE);
        assert_eq!(
            answer_syn(ReceiverEcn::Accecn, acc, Ecn::Ce).1,
            flags::AE | flags::CWR
        );
        // an RFC 3168 server answers ECE alone: the client falls back to classic ECN
        let (fb, f) = answer_syn(ReceiverEcn::Classic, acc, Ecn::NotEct);
        assert_eq!((fb, f), (Feedback::Classic, flags::ECE));
        assert_eq!(negotiated(Feedback::Accurate, f), Feedback::Classic);
        // no ECN at the server: none
        let (fb, f) = answer_syn(ReceiverEcn::Off, acc, Ecn::NotEct);
        assert_eq!((fb, f), (Feedback::Off, 0));
        assert_eq!(negotiated(Feedback::Accurate, f), Feedback::Off);
        // an RFC 3168 SYN gets RFC 3168 ECN from an AccECN server
        let classic = syn_flags(false);
        assert_eq!(
            answer_syn(ReceiverEcn::Accecn, classic, Ecn::NotEct),
            (Feedback::Classic, flags::ECE)
        );
        assert_eq!(negotiated(Feedback::Classic, flags::ECE), Feedback::Classic);
        // a SYN without ECN gets none
        assert_eq!(answer_syn(ReceiverEcn::Accecn, 0, Ecn::NotEct).0, Feedback::Off);
    }
}
