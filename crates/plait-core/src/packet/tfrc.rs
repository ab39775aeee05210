//! The headers of the TFRC family (RFC 5348 §3.2): data packets, feedback packets, and the
//! NACKs of reliable flows (`transport::tfrc`).

use crate::time::SimTime;

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
    /// A feedback header: X_recv, p and MulTFRC's j are kept as their IEEE bit patterns.
    pub fn new(
        echo_sent_at: SimTime,
        delay: SimTime,
        receive_rate: f64,
        loss_event_rate: f64,
        packets_per_loss_event: f64,
        cumulative: u64,
    ) -> Self {
        TfrcFeedback {
            echo_sent_at,
            delay,
            receive_rate: receive_rate.to_bits(),
            loss_event_rate: loss_event_rate.to_bits(),
            packets_per_loss_event: packets_per_loss_event.to_bits(),
            cumulative,
        }
    }

    /// X_recv, the receive rate since the last report, payload bytes/s.
    pub fn receive_rate(&self) -> f64 {
        f64::from_bits(self.receive_rate)
    }

    /// p, the loss event rate (0 before any loss).
    pub fn loss_event_rate(&self) -> f64 {
        f64::from_bits(self.loss_event_rate)
    }

    /// MulTFRC's j, packets lost per loss event (1 before any loss).
    pub fn packets_per_loss_event(&self) -> f64 {
        f64::from_bits(self.packets_per_loss_event)
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
