//! TCP-Friendly Rate Control and the protocols built on it: TFRC (RFC 5348), MulTFRC (a TFRC
//! whose equation is that of n TCP flows, Damjanovic and Welzl, CCR 2009) and CP (n times
//! TFRC's rate over the loss event rate of one flow share, Ott, Sparks and Mayer-Patel,
//! INFOCOM 2004).
//!
//! The pieces, one per file: the receiver's [`loss_detector`] (§5.1) and [`loss_history`]
//! (§5.2–§5.5, with MulTFRC's j), the [`receiver`] (§6), the sender's rate control
//! [`sender`] (§4), the [`equation`] each variant follows, and the [`flow`] that makes them a
//! [`Transport`](crate::transport::Transport).

pub mod equation;
pub mod flow;
pub mod loss_detector;
pub mod loss_history;
pub mod receiver;
pub mod sender;

pub use equation::RateEquation;
pub use flow::{FlowConfig, TfrcFlow};
pub use receiver::{Report, ShareFilter, TfrcReceiver};
pub use sender::{SenderConfig, TfrcSender};

use crate::time::SimTime;

/// Bytes a feedback packet adds to the header: timestamp echo, delay, X_recv and p, 4 bytes
/// each (RFC 5348 §3.2.2), and j and the cumulative acknowledgement, 4 bytes each.
pub const FEEDBACK_OPTION_BYTES: u32 = 24;

/// A data packet's header (RFC 5348 §3.2.1): its sequence number, the sender's timestamp and
/// RTT estimate, and the data segment it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TfrcData {
    /// Transmission sequence number (every packet, retransmissions included).
    pub seq: u64,
    pub sent_at: SimTime,
    /// The sender's RTT estimate R (zero before it has one).
    pub rtt: SimTime,
    /// Data segment number (a retransmission repeats it).
    pub data: u64,
    /// Payload bytes.
    pub len: u32,
}

/// A feedback packet's header (RFC 5348 §3.2.2), with MulTFRC's j and a cumulative
/// acknowledgement. Rates are kept as IEEE bit patterns so the header stays `Eq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TfrcFeedback {
    pub echo_sent_at: SimTime,
    pub delay: SimTime,
    receive_rate: u64,
    loss_event_rate: u64,
    packets_per_loss_event: u64,
    /// Next data segment the receiver expects (reliable flows).
    pub cumulative: u64,
}

impl TfrcFeedback {
    pub fn new(report: &Report, cumulative: u64) -> Self {
        TfrcFeedback {
            echo_sent_at: report.echo_sent_at,
            delay: report.delay,
            receive_rate: report.receive_rate.to_bits(),
            loss_event_rate: report.loss_event_rate.to_bits(),
            packets_per_loss_event: report.packets_per_loss_event.to_bits(),
            cumulative,
        }
    }

    pub fn report(&self) -> Report {
        Report {
            echo_sent_at: self.echo_sent_at,
            delay: self.delay,
            receive_rate: f64::from_bits(self.receive_rate),
            loss_event_rate: f64::from_bits(self.loss_event_rate),
            packets_per_loss_event: f64::from_bits(self.packets_per_loss_event),
        }
    }
}

/// A negative acknowledgement of a reliable flow: the receiver declared transmission `seq`
/// lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TfrcNack {
    pub seq: u64,
    /// Next data segment the receiver expects.
    pub cumulative: u64,
}
