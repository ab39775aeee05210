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

pub use crate::packet::tfrc::{TfrcData, TfrcFeedback, TfrcNack};

/// Bytes a feedback packet adds to the header: timestamp echo, delay, X_recv and p, 4 bytes
/// each (RFC 5348 §3.2.2), and j and the cumulative acknowledgement, 4 bytes each.
pub const FEEDBACK_OPTION_BYTES: u32 = 24;

/// The feedback header that carries `report` (RFC 5348 §3.2.2), with the cumulative
/// acknowledgement of a reliable flow.
pub fn feedback(report: &Report, cumulative: u64) -> TfrcFeedback {
    TfrcFeedback::new(
        report.echo_sent_at,
        report.delay,
        report.receive_rate,
        report.loss_event_rate,
        report.packets_per_loss_event,
        cumulative,
    )
}

/// The receiver's report that a feedback header carries.
pub fn report_of(feedback: &TfrcFeedback) -> Report {
    Report {
        echo_sent_at: feedback.echo_sent_at,
        delay: feedback.delay,
        receive_rate: feedback.receive_rate(),
        loss_event_rate: feedback.loss_event_rate(),
        packets_per_loss_event: feedback.packets_per_loss_event(),
    }
}
