//! TCP: a sans-IO sender and receiver over a byte sequence space starting at 0.
//!
//! The simulator (or a test harness) drives them: after every `handle_*` call it drains
//! `poll_transmit` and re-arms the single timer from `poll_timeout`.
//!
//! - [`core`]: [`TcpCore`], the sequence-space core of a sender (scoreboard, recovery, RTO,
//!   RTT, the optional sent log with tags), owning neither controller nor data;
//! - [`sender`]: [`TcpSender`], the core composed with its controller and a bulk source;
//! - [`flow`]: [`TcpFlow`], sender and receiver as one [`crate::transport::Transport`];
//! - [`receiver`]: [`TcpReceiver`], reassembly, SACK generation (RFC 2018), delayed ACKs;
//! - [`sack`]: the sender's SACK scoreboard (RFC 6675 §2–§4) on sorted byte ranges;
//! - [`recovery`]: fast recovery with SACK (RFC 6675) or NewReno (RFC 6582), and go-back-N
//!   after a retransmission timeout (RFC 6298 §5, RFC 5681 §3.1);
//! - [`rack`]: RACK-TLP time-based loss detection and tail loss probes (RFC 8985), when
//!   `rack_tlp` is on;
//! - [`prr`]: Proportional Rate Reduction (RFC 6937), the window during recovery when
//!   `recovery_window` is `prr`;
//! - [`config`]: [`TcpConfig`], the settings, and the named choices among them ([`TcpProfile`],
//!   [`RtoFormula`], ...): plain data that the controllers and the RTT estimator read too;
//! - RTT estimation and the RTO live in [`crate::transport::rtt`].

pub mod config;
pub mod core;
pub mod flow;
pub mod prr;
pub mod rack;
pub mod receiver;
pub mod recovery;
pub mod sack;
pub use crate::packet::tcp as segment;
pub mod sender;

#[cfg(test)]
mod tests;

pub use self::config::{
    DelayedAckStyle, RecoveryWindow, RtoFormula, SsthreshBasis, TcpConfig, TcpProfile,
};
pub use self::core::{CoreEvent, SentSegment, TcpCore};
pub use flow::{StopMode, TcpFlow};
pub use receiver::{TcpReceiver, SACK_BLOCKS_PER_ACK};
pub use recovery::{LossRecovery, RecoveryPhase};
pub use sack::{RangeSet, Scoreboard};
pub use sender::{AckOutcome, TcpSender};

/// Counters a sender keeps (read by the metrics layer at warmup and at the end of a run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Segments retransmitted (by fast retransmit, SACK recovery or RTO).
    pub retransmitted_segments: u64,
    /// Loss-recovery episodes entered by duplicate ACKs / SACK (fast retransmits).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// Segments the sending host's full interface queue refused (not sent; see
    /// [`TcpCore::poll_transmit_gated`]), and the CWR episodes they started.
    pub local_refusals: u64,
    pub local_cwr: u64,
}
