//! Reno window rules: RFC 5681 §3.1–§3.2, with byte counting from RFC 3465.
//!
//! - Slow start (`cwnd < ssthresh`): each ACK adds `min(N, L·SMSS)` bytes, N being the newly
//!   acknowledged bytes (RFC 5681 §3.1 eq. (2); RFC 3465 §2.2). L is
//!   [`super::DEFAULT_ABC_LIMIT_SEGMENTS`] = 1 unless [`Reno::with_abc_limit`] sets 2, and is
//!   1 in the slow start that follows a timeout in any case (RFC 3465 §2.3).
//! - Congestion avoidance: RFC 3465 §2.1 byte counting. Acknowledged bytes accumulate in
//!   `bytes_acked`; when `bytes_acked ≥ cwnd`, cwnd is subtracted from it and cwnd grows by one
//!   SMSS. This is exact integer arithmetic and yields one SMSS per window of acknowledged data
//!   (RFC 5681 eq. (3) is the per-ACK approximation of the same rule). When one ACK covers more
//!   than a window (e.g. the cumulative ACK that closes a SACK recovery), every whole window
//!   counts: `n = ⌊bytes_acked / cwnd⌋` segments are added at once, as Linux does, instead of
//!   carrying the surplus over to the following ACKs.
//! - Loss detected by duplicate ACKs or SACK: `ssthresh = max(FlightSize / 2, 2·SMSS)`
//!   (RFC 5681 eq. (4)), `cwnd = ssthresh` (RFC 6675 §5 step 4.2; the window inflation of
//!   RFC 5681 §3.2 is unnecessary because the sender counts the pipe).
//! - Retransmission timeout: ssthresh as above, `cwnd = 1 SMSS` (the loss window, RFC 5681
//!   §3.1). A timeout that repeats before new data is acknowledged keeps ssthresh: RFC 5681
//!   §3.1 applies eq. (4) only to a segment not yet resent by the retransmission timer.
//! - No growth while in recovery or when the sender is not cwnd-limited (RFC 7661 §4).

use super::window::{half_flight_size, ByteCountingWindow};
use super::{AckSample, CongestionControl, ControllerKind};
use crate::registry::AlgorithmSpec;
use crate::time::SimTime;

/// The registry declaration of Reno: no parameters.
pub const SPEC: AlgorithmSpec<ControllerKind> = AlgorithmSpec {
    name: "reno",
    summary: "Reno/NewReno window rules (RFC 5681); the recovery itself is the sender's",
    params: &[],
    finish: None,
    build: |_, connection| Reno::new(connection.mss, connection.initial_window).into(),
};

/// Reno (RFC 5681) congestion window; loss recovery itself (NewReno, SACK) lives in the sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reno {
    window: ByteCountingWindow,
}

impl Reno {
    /// A Reno window for segments of `mss` bytes, starting at `initial_window_segments × mss`
    /// (at least one segment) with an unbounded ssthresh.
    ///
    /// # Panics
    /// If `mss` is zero.
    pub fn new(mss: u32, initial_window_segments: u32) -> Self {
        Reno {
            window: ByteCountingWindow::new("reno", mss, initial_window_segments),
        }
    }

    /// Sets the slow-start byte-counting limit L in segments: 1 is the plain RFC 5681 rule,
    /// 2 the largest RFC 3465 allows.
    ///
    /// # Panics
    /// If `segments` is not 1 or 2.
    pub fn with_abc_limit(mut self, segments: u32) -> Self {
        self.window.set_abc_limit(segments);
        self
    }

    /// Segment size in bytes.
    pub fn mss(&self) -> u64 {
        self.window.mss()
    }

    /// Bytes counted towards the next congestion-avoidance increase (RFC 3465 `bytes_acked`).
    pub fn bytes_acked(&self) -> u64 {
        self.window.bytes_acked()
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn cwnd(&self) -> u64 {
        self.window.cwnd()
    }

    fn ssthresh(&self) -> u64 {
        self.window.ssthresh()
    }

    fn on_ack(&mut self, sample: &AckSample) {
        // RFC 3465 §2.1: cwnd += SMSS for each full window acknowledged.
        let windows = self.window.on_ack(sample);
        if windows > 0 {
            self.window.grow(windows.saturating_mul(self.window.mss()));
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, bytes_in_flight: u64) {
        // RFC 5681 eq. (4): ssthresh = max(FlightSize / 2, 2*SMSS); RFC 6675 §5: cwnd = ssthresh.
        self.window
            .on_congestion_event(half_flight_size(bytes_in_flight, self.window.mss()));
    }

    fn on_retransmission_timeout(&mut self, _now: SimTime, bytes_in_flight: u64) {
        // RFC 5681 eq. (4) for ssthresh, and §3.1: "cwnd MUST be set to no more than the loss
        // window, LW, which equals 1 full-sized segment".
        self.window
            .on_retransmission_timeout(half_flight_size(bytes_in_flight, self.window.mss()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::testing::{ack, run_round};

    const MSS: u32 = 1460;
    const M: u64 = MSS as u64;
    const RTT: SimTime = SimTime::from_millis(100);

    fn not_limited(mut s: AckSample) -> AckSample {
        s.is_cwnd_limited = false;
        s
    }

    fn recovering(mut s: AckSample) -> AckSample {
        s.in_recovery = true;
        s
    }

    /// A Reno window in congestion avoidance at `segments` segments.
    fn in_avoidance(segments: u64) -> Reno {
        let mut cc = Reno::new(MSS, 10);
        cc.on_congestion_event(SimTime::ZERO, 2 * segments * M);
        assert_eq!(cc.cwnd(), segments * M);
        assert!(!cc.in_slow_start());
        cc
    }

    #[test]
    fn initial_state() {
        let cc = Reno::new(MSS, 10);
        assert_eq!(cc.cwnd(), 10 * M);
        assert_eq!(cc.ssthresh(), u64::MAX);
        assert!(cc.in_slow_start());
        assert_eq!(cc.name(), "reno");
        assert_eq!(Reno::new(MSS, 4).cwnd(), 4 * M);
    }

    #[test]
    fn slow_start_doubles_per_round_trip() {
        let mut cc = Reno::new(MSS, 10);
        let mut now = SimTime::ZERO;
        for expected in [20, 40, 80, 160] {
            now = run_round(&mut cc, now, RTT, MSS);
            assert_eq!(cc.cwnd(), expected * M);
        }
    }

    #[test]
    fn slow_start_byte_counting_limit() {
        // Default L = 1, the RFC 5681 rule: an ACK for two segments adds one; a partial
        // segment adds what it covers.
        let mut cc = Reno::new(MSS, 10);
        cc.on_ack(&ack(SimTime::ZERO, 2 * M, RTT, MSS));
        assert_eq!(cc.cwnd(), 11 * M);
        cc.on_ack(&ack(SimTime::ZERO, 500, RTT, MSS));
        assert_eq!(cc.cwnd(), 11 * M + 500);
        // L = 2 (RFC 3465): an ACK for three segments adds two.
        let mut cc = Reno::new(MSS, 10).with_abc_limit(2);
        cc.on_ack(&ack(SimTime::ZERO, 3 * M, RTT, MSS));
        assert_eq!(cc.cwnd(), 12 * M);
        cc.on_ack(&ack(SimTime::ZERO, 2 * M, RTT, MSS));
        assert_eq!(cc.cwnd(), 14 * M);
    }

    #[test]
    #[should_panic(expected = "ABC limit")]
    fn abc_limit_above_two_segments_is_rejected() {
        let _ = Reno::new(MSS, 10).with_abc_limit(3);
    }

    #[test]
    fn congestion_avoidance_adds_exactly_one_mss_per_round_trip() {
        let mut cc = in_avoidance(20);
        let mut now = SimTime::ZERO;
        for round in 1..=30 {
            now = run_round(&mut cc, now, RTT, MSS);
            assert_eq!(cc.cwnd(), (20 + round) * M, "round {round}");
            assert_eq!(cc.bytes_acked(), 0);
        }
    }

    #[test]
    fn congestion_avoidance_counts_bytes_not_acks() {
        // Delayed ACKs (two segments per ACK) grow the window at the same rate per byte.
        let mut cc = in_avoidance(10);
        for _ in 0..4 {
            cc.on_ack(&ack(SimTime::ZERO, 2 * M, RTT, MSS));
        }
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (10 * M, 8 * M));
        cc.on_ack(&ack(SimTime::ZERO, 2 * M, RTT, MSS));
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (11 * M, 0));
        // Odd byte counts carry exactly.
        cc.on_ack(&ack(SimTime::ZERO, 11 * M - 1, RTT, MSS));
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (11 * M, 11 * M - 1));
        cc.on_ack(&ack(SimTime::ZERO, 1, RTT, MSS));
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (12 * M, 0));
    }

    #[test]
    fn an_ack_covering_several_windows_counts_each() {
        let mut cc = in_avoidance(10);
        cc.on_ack(&ack(SimTime::ZERO, 25 * M, RTT, MSS));
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (12 * M, 5 * M));
    }

    #[test]
    fn congestion_event_halves_flight_with_two_segment_floor() {
        let mut cc = Reno::new(MSS, 10);
        cc.on_congestion_event(SimTime::ZERO, 40 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (20 * M, 20 * M));
        // Rounded down: half of 41·1460 + 1 = 59 861 bytes is 29 930.
        cc.on_congestion_event(SimTime::ZERO, 59_861);
        assert_eq!(cc.cwnd(), 29_930);
        cc.on_congestion_event(SimTime::ZERO, 3 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (2 * M, 2 * M));
        cc.on_congestion_event(SimTime::ZERO, 0);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (2 * M, 2 * M));
    }

    #[test]
    fn congestion_event_clears_the_byte_counter() {
        let mut cc = in_avoidance(10);
        cc.on_ack(&ack(SimTime::ZERO, 7 * M, RTT, MSS));
        cc.on_congestion_event(SimTime::ZERO, 20 * M);
        assert_eq!(cc.bytes_acked(), 0);
    }

    #[test]
    fn timeout_sets_loss_window_and_slow_starts_with_limit_one() {
        let mut cc = in_avoidance(30).with_abc_limit(2);
        cc.on_retransmission_timeout(SimTime::ZERO, 30 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 15 * M));
        assert!(cc.in_slow_start());
        // RFC 3465 §2.3: L = 1 after a timeout, whatever the configured limit.
        cc.on_ack(&ack(SimTime::ZERO, 2 * M, RTT, MSS));
        assert_eq!(cc.cwnd(), 2 * M);
        let mut now = SimTime::ZERO;
        while cc.in_slow_start() {
            now = run_round(&mut cc, now, RTT, MSS);
        }
        // 2, 4, 8 segments, then the seventh ACK of the 8-segment round reaches ssthresh and
        // the eighth is counted by congestion avoidance.
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (15 * M, M));
        cc.on_ack(&ack(now, M, RTT, MSS));
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (15 * M, 2 * M));
    }

    #[test]
    fn repeated_timeout_keeps_ssthresh() {
        let mut cc = in_avoidance(30);
        cc.on_retransmission_timeout(SimTime::ZERO, 30 * M);
        // The sender may report everything outstanding, or nothing: either way ssthresh holds.
        cc.on_retransmission_timeout(SimTime::ZERO, 2 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 15 * M));
        // New data acknowledged: the next timeout is a new loss episode.
        cc.on_ack(&ack(SimTime::ZERO, M, RTT, MSS));
        cc.on_retransmission_timeout(SimTime::ZERO, 8 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 4 * M));
    }

    #[test]
    fn no_growth_in_recovery() {
        let mut cc = Reno::new(MSS, 10);
        cc.on_ack(&recovering(ack(SimTime::ZERO, M, RTT, MSS)));
        assert_eq!(cc.cwnd(), 10 * M);
        let mut cc = in_avoidance(10);
        for _ in 0..50 {
            cc.on_ack(&recovering(ack(SimTime::ZERO, M, RTT, MSS)));
        }
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (10 * M, 0));
        cc.on_recovery_exit(SimTime::ZERO);
        assert_eq!(cc.cwnd(), 10 * M);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut cc = Reno::new(MSS, 10);
        cc.on_ack(&not_limited(ack(SimTime::ZERO, M, RTT, MSS)));
        assert_eq!(cc.cwnd(), 10 * M);
        let mut cc = in_avoidance(10);
        for _ in 0..50 {
            cc.on_ack(&not_limited(ack(SimTime::ZERO, M, RTT, MSS)));
        }
        // The idle bytes do not count towards a later increase either.
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (10 * M, 0));
    }

    #[test]
    fn sack_only_acks_do_not_grow_the_window() {
        let mut cc = Reno::new(MSS, 10);
        let mut sample = ack(SimTime::ZERO, 0, RTT, MSS);
        sample.newly_sacked_bytes = 5 * M;
        cc.on_ack(&sample);
        assert_eq!(cc.cwnd(), 10 * M);
    }
}
