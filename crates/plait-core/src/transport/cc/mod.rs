//! Congestion controllers.
//!
//! A controller is sans-IO: the TCP sender calls its hooks with `now` and what it learned, and
//! reads back `cwnd()` (bytes). One algorithm per file; built-ins are dispatched through the
//! [`Controller`] enum on the hot path, and [`Controller::Custom`] takes any
//! `Box<dyn CongestionControl>` (the extension point).
//!
//! Contract with the sender (see `transport::tcp::sender`):
//! - `on_ack` is called for every ACK that acknowledges new data cumulatively or newly SACKs
//!   bytes, with `in_recovery` set while the sender is in loss recovery (controllers must not
//!   grow the window then: RFC 5681 §3.2, RFC 6675 §5);
//! - `on_congestion_event` once when loss recovery starts (at most once per window of data);
//!   the controller sets ssthresh and cwnd (RFC 5681 eq. (4); RFC 6675 §5 step 4.2);
//! - `on_recovery_exit` when the cumulative ACK passes the recovery point;
//! - `on_retransmission_timeout` when the RTO fires (RFC 5681 §3.1 eq. (4), cwnd = loss window).

use crate::time::{Rate, SimTime};

/// What the sender learned from one ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSample {
    pub now: SimTime,
    /// Bytes newly acknowledged by the cumulative ACK.
    pub acked_bytes: u64,
    /// Bytes newly covered by SACK blocks (not yet cumulatively acknowledged).
    pub newly_sacked_bytes: u64,
    /// RTT measured from this ACK, if Karn's rule allows one.
    pub rtt: Option<SimTime>,
    /// Smoothed RTT after this sample (RFC 6298), or zero before the first sample.
    pub srtt: SimTime,
    /// Smallest RTT seen on the connection so far, or zero before the first sample.
    pub min_rtt: SimTime,
    /// Bytes in flight (RFC 6675 "pipe" when SACK is on) after processing the ACK.
    pub bytes_in_flight: u64,
    /// True if the sender was limited by cwnd (not by the application or the receive window)
    /// when this ACK arrived (RFC 7661 §4).
    pub is_cwnd_limited: bool,
    pub in_recovery: bool,
    pub mss: u32,
}

/// A congestion-control algorithm.
pub trait CongestionControl {
    /// Registry name (`reno`, `cubic`, ...).
    fn name(&self) -> &'static str;
    /// Congestion window in bytes.
    fn cwnd(&self) -> u64;
    /// Slow-start threshold in bytes (`u64::MAX` before the first loss).
    fn ssthresh(&self) -> u64;
    fn in_slow_start(&self) -> bool {
        self.cwnd() < self.ssthresh()
    }
    fn on_packet_sent(&mut self, _now: SimTime, _bytes: u32, _bytes_in_flight: u64) {}
    fn on_ack(&mut self, sample: &AckSample);
    /// Loss detected by duplicate ACKs or SACK: reduce the window once.
    fn on_congestion_event(&mut self, now: SimTime, bytes_in_flight: u64);
    fn on_recovery_exit(&mut self, _now: SimTime) {}
    /// The retransmission timer fired.
    fn on_retransmission_timeout(&mut self, now: SimTime, bytes_in_flight: u64);
    /// A pacing rate, for controllers that pace.
    fn pacing_rate(&self) -> Option<Rate> {
        None
    }
}

/// A controller as named in a scenario, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcSpec {
    /// Reno / NewReno window rules (RFC 5681); NewReno/SACK recovery lives in the sender.
    Reno,
    /// CUBIC (RFC 9438): `c` (default 0.4), `beta` (default 0.7), TCP-friendly region on/off.
    Cubic { c: f64, beta: f64, fast_convergence: bool, tcp_friendliness: bool },
    /// Generic AIMD: +alpha MSS per RTT, window multiplied by `beta` on loss.
    Aimd { alpha: f64, beta: f64 },
}
