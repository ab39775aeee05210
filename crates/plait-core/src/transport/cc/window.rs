//! Window arithmetic shared by the built-in controllers.
//!
//! - [`initial_window_bytes`] and [`reduced_window`]: the window at the start of a connection
//!   and after a loss; [`half_flight_size`], RFC 5681 eq. (4), and [`loss_window`], the
//!   written-once pieces of the RFC 5681 §3.1 timeout rule ([`SlowStart::rfc5681_timeout`], or
//!   [`SlowStart::timeout`] with a controller's own reduced window);
//! - [`penalise`]: MPTCP's receive-buffer penalisation of one subflow's window;
//! - [`PathWindow`]: one path's window as a coupled controller forwards to it per subflow;
//! - [`SlowStart`]: slow start with byte counting, `cwnd += min(N, L·SMSS)` per ACK (RFC 5681
//!   §3.1 eq. (2); RFC 3465 §2.2), together with the timeout bookkeeping it depends on: L = 1 in
//!   the slow start that follows a timeout (RFC 3465 §2.3), and a timeout that repeats before new
//!   data is acknowledged is not a new loss episode (RFC 5681 §3.1). Used by every built-in
//!   controller;
//! - [`ByteCountingWindow`]: a whole integer window in bytes with that slow start and RFC 3465
//!   §2.1 byte counting in congestion avoidance. It decides *when* the window grows (slow start,
//!   whole windows of acknowledged data, nothing in recovery or when the sender is not
//!   cwnd-limited) and leaves *how much* to the controller: [`Reno`](super::Reno) adds one SMSS
//!   per window, [`Aimd`](super::Aimd) α·SMSS. Both being built on it is what makes AIMD(1, 0.5)
//!   take Reno's decisions step for step.

use super::{AckSample, DEFAULT_ABC_LIMIT_SEGMENTS};

/// Initial window in bytes: `segments × MSS`, at least one segment.
pub(crate) fn initial_window_bytes(mss: u64, segments: u32) -> u64 {
    mss.saturating_mul(u64::from(segments.max(1)))
}

/// RFC 5681 eq. (4), `ssthresh = max(FlightSize / 2, 2·SMSS)`, in exact integer arithmetic: the
/// reduced window of Reno (and of the controllers that reduce as Reno) after a loss or a
/// timeout.
#[inline]
pub(crate) fn half_flight_size(bytes_in_flight: u64, mss: u64) -> u64 {
    (bytes_in_flight / 2).max(2 * mss)
}

/// RFC 5681 §3.1: after a retransmission timeout "cwnd MUST be set to no more than the loss
/// window, LW, which equals 1 full-sized segment".
#[inline]
pub(crate) fn loss_window(mss: u64) -> u64 {
    mss
}

/// MPTCP's receive-buffer penalisation of one subflow's window (reference `multipath_cc.md`
/// §3.1.4 step 2, the v0.9x kernel's `mptcp_rcv_buf_optimization`): `cwnd = max(cwnd/2,
/// 1 SMSS)`, and outside slow start (`cwnd ≥ ssthresh`, judged before the cut) also
/// `ssthresh = max(ssthresh/2, 2·SMSS)`, halves rounded down.
pub(crate) fn penalise(cwnd: &mut u64, ssthresh: &mut u64, mss: u64) {
    if *cwnd >= *ssthresh {
        *ssthresh = (*ssthresh / 2).max(2 * mss);
    }
    *cwnd = (*cwnd / 2).max(mss);
}

/// `max(bytes × factor, 2·SMSS)`, rounded down to whole bytes: the reduced window and
/// ssthresh after a loss (RFC 5681 eq. (4) has factor 1/2; RFC 9438 §4.6 has β_cubic).
pub(crate) fn reduced_window(bytes: u64, factor: f64, mss: u64) -> u64 {
    let scaled = (bytes as f64 * factor).floor();
    // `as` saturates for values beyond u64::MAX.
    (scaled as u64).max(2 * mss)
}

/// The window of one path as a coupled controller keeps it for each of its subflows
/// ([`VegasWindow`](super::vegas::VegasWindow), [`FastWindow`](super::fast::FastWindow) and the
/// loss-based controllers' window): what the per-subflow forwarding of
/// `multipath::coupled::per_subflow` reads and changes, and the losses as standard TCP takes
/// them on each subflow (RFC 6356 §3: "slow start, fast retransmit, and fast recovery
/// algorithms, as well as the [retransmission timeout] ... are the same as in standard TCP").
pub(crate) trait PathWindow {
    /// Congestion window in bytes.
    fn cwnd(&self) -> u64;
    /// Slow-start threshold in bytes (`u64::MAX` before the first loss).
    fn ssthresh(&self) -> u64;
    /// A data segment of `bytes` left.
    fn on_packet_sent(&mut self, _bytes: u32) {}
    /// Loss detected by duplicate ACKs or SACK, reduced as Reno: `ssthresh = cwnd =
    /// max(FlightSize/2, 2·SMSS)` (RFC 5681 eq. (4), RFC 6675 §5 step 4.2).
    fn on_congestion_event(&mut self, bytes_in_flight: u64);
    /// Loss recovery ended.
    fn on_recovery_exit(&mut self) {}
    /// The retransmission timer fired (RFC 5681 §3.1).
    fn on_retransmission_timeout(&mut self, bytes_in_flight: u64);
    /// The receive-buffer penalisation of MPTCP (reference `multipath_cc.md` §3.1.4).
    fn penalise(&mut self);
}

/// Slow-start byte counting (RFC 5681 §3.1 eq. (2), RFC 3465 §2.2–§2.3) and the timeout state
/// it depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlowStart {
    /// The byte-counting limit L in segments (1 or 2).
    abc_limit_segments: u32,
    /// In the slow start that follows a timeout (RFC 3465 §2.3: L = 1 there).
    after_timeout: bool,
    /// A timeout fired and no new data has been acknowledged since.
    timeout_pending: bool,
}

impl Default for SlowStart {
    fn default() -> Self {
        SlowStart {
            abc_limit_segments: DEFAULT_ABC_LIMIT_SEGMENTS,
            after_timeout: false,
            timeout_pending: false,
        }
    }
}

impl SlowStart {
    /// Sets the byte-counting limit L in segments: 1 is the plain RFC 5681 rule, 2 the largest
    /// RFC 3465 allows.
    ///
    /// # Panics
    /// If `segments` is not 1 or 2.
    pub(crate) fn set_abc_limit(&mut self, segments: u32) {
        assert!(
            (1..=2).contains(&segments),
            "ABC limit must be 1 or 2 segments (RFC 3465 §2.2), got {segments}"
        );
        self.abc_limit_segments = segments;
    }

    /// To be called with every ACK: one that acknowledges new data ends the timeout episode.
    #[inline]
    pub(crate) fn on_ack(&mut self, acked_bytes: u64) {
        if acked_bytes > 0 {
            self.timeout_pending = false;
        }
    }

    /// Slow-start increase for one ACK of `acked_bytes` newly acknowledged bytes:
    /// `min(N, L·SMSS)`, with L = 1 in the slow start that follows a timeout.
    #[inline]
    pub(crate) fn increase(&self, acked_bytes: u64, mss: u64) -> u64 {
        let limit = if self.after_timeout {
            1
        } else {
            self.abc_limit_segments
        };
        acked_bytes.min(mss.saturating_mul(u64::from(limit)))
    }

    /// Slow start is over (congestion avoidance reached, or a loss reduced the window): the
    /// limit goes back to the configured L.
    #[inline]
    pub(crate) fn exit(&mut self) {
        self.after_timeout = false;
    }

    /// The retransmission timer fired. Returns `true` if this starts a new loss episode, i.e.
    /// ssthresh is to be recomputed: not when the previous timeout has not been followed by any
    /// new acknowledged data (RFC 5681 §3.1 applies eq. (4) only to a segment "not yet resent by
    /// way of the retransmission timer").
    pub(crate) fn on_timeout(&mut self) -> bool {
        let new_episode = !self.timeout_pending;
        self.after_timeout = true;
        self.timeout_pending = true;
        new_episode
    }

    /// A retransmission timeout on a window of `cwnd` and `ssthresh` bytes (RFC 5681 §3.1):
    /// ssthresh becomes `loss_ssthresh` unless the previous timeout has not been followed by new
    /// acknowledged data ([`SlowStart::on_timeout`]), and cwnd the loss window of one SMSS
    /// ([`loss_window`]); the slow start that follows uses L = 1. `loss_ssthresh` is the
    /// controller's reduced window: RFC 5681 eq. (4) for the RFC's own rule
    /// ([`SlowStart::rfc5681_timeout`]), β·FlightSize for AIMD, MulTCP's own.
    #[inline]
    pub(crate) fn timeout(
        &mut self,
        cwnd: &mut u64,
        ssthresh: &mut u64,
        mss: u64,
        loss_ssthresh: u64,
    ) {
        if self.on_timeout() {
            *ssthresh = loss_ssthresh;
        }
        *cwnd = loss_window(mss);
    }

    /// RFC 5681 §3.1 as written: on a timeout, `ssthresh = max(FlightSize/2, 2·SMSS)` (eq. (4),
    /// kept by a repeated timeout) and `cwnd = LW = 1 SMSS`.
    #[inline]
    pub(crate) fn rfc5681_timeout(
        &mut self,
        cwnd: &mut u64,
        ssthresh: &mut u64,
        mss: u64,
        bytes_in_flight: u64,
    ) {
        self.timeout(cwnd, ssthresh, mss, half_flight_size(bytes_in_flight, mss));
    }
}

/// An integer window in bytes with slow start and RFC 3465 §2.1 byte counting: acknowledged
/// bytes accumulate in `bytes_acked` in congestion avoidance, and each time a whole window has
/// been acknowledged cwnd is subtracted from the counter. [`ByteCountingWindow::on_ack`] returns
/// how many whole windows an ACK completed; the controller decides how much the window grows
/// per window ([`ByteCountingWindow::grow`]).
///
/// When one ACK covers more than a window (e.g. the cumulative ACK that closes a SACK recovery),
/// every whole window counts at once, as Linux does, instead of carrying the surplus over to the
/// following ACKs. Nothing is counted while in recovery, when the sender is not cwnd-limited
/// (RFC 7661 §4) or for an ACK that acknowledges no new data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ByteCountingWindow {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// RFC 3465 `bytes_acked`: bytes acknowledged in congestion avoidance since cwnd last grew.
    bytes_acked: u64,
    slow_start: SlowStart,
}

impl ByteCountingWindow {
    /// A window for segments of `mss` bytes, starting at `initial_window_segments × mss` (at
    /// least one segment) with an unbounded ssthresh.
    ///
    /// # Panics
    /// If `mss` is zero; the message names `controller`.
    pub(crate) fn new(controller: &str, mss: u32, initial_window_segments: u32) -> Self {
        assert!(mss > 0, "{controller}: MSS must be positive");
        let mss = u64::from(mss);
        ByteCountingWindow {
            mss,
            cwnd: initial_window_bytes(mss, initial_window_segments),
            ssthresh: u64::MAX,
            bytes_acked: 0,
            slow_start: SlowStart::default(),
        }
    }

    /// Sets the slow-start byte-counting limit L ([`SlowStart::set_abc_limit`]).
    pub(crate) fn set_abc_limit(&mut self, segments: u32) {
        self.slow_start.set_abc_limit(segments);
    }

    #[inline]
    pub(crate) fn mss(&self) -> u64 {
        self.mss
    }

    #[inline]
    pub(crate) fn cwnd(&self) -> u64 {
        self.cwnd
    }

    #[inline]
    pub(crate) fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// Bytes counted towards the next congestion-avoidance increase (RFC 3465 `bytes_acked`).
    #[inline]
    pub(crate) fn bytes_acked(&self) -> u64 {
        self.bytes_acked
    }

    /// Applies one ACK: grows the window in slow start, counts the acknowledged bytes in
    /// congestion avoidance. Returns the number of whole windows this ACK completed in
    /// congestion avoidance (usually 0 or 1), by which the caller grows the window.
    #[inline]
    pub(crate) fn on_ack(&mut self, sample: &AckSample) -> u64 {
        self.slow_start.on_ack(sample.acked_bytes);
        if sample.in_recovery || !sample.is_cwnd_limited || sample.acked_bytes == 0 {
            return 0;
        }
        if self.cwnd < self.ssthresh {
            let increase = self.slow_start.increase(sample.acked_bytes, self.mss);
            self.cwnd = self.cwnd.saturating_add(increase);
            return 0;
        }
        self.slow_start.exit();
        self.bytes_acked = self.bytes_acked.saturating_add(sample.acked_bytes);
        if self.bytes_acked < self.cwnd {
            return 0;
        }
        let windows = self.bytes_acked / self.cwnd;
        self.bytes_acked -= windows * self.cwnd;
        windows
    }

    /// Adds `bytes` to the window (saturating).
    #[inline]
    pub(crate) fn grow(&mut self, bytes: u64) {
        self.cwnd = self.cwnd.saturating_add(bytes);
    }

    /// A congestion event: `cwnd = ssthresh = reduced` (RFC 6675 §5 step 4.2); the byte counter
    /// starts again from zero.
    pub(crate) fn on_congestion_event(&mut self, reduced: u64) {
        self.ssthresh = reduced;
        self.cwnd = reduced;
        self.bytes_acked = 0;
        self.slow_start.exit();
    }

    /// A retransmission timeout: ssthresh becomes `ssthresh` unless the previous timeout has not
    /// been followed by new acknowledged data, and cwnd the loss window of one SMSS (RFC 5681
    /// §3.1); the slow start that follows uses L = 1.
    pub(crate) fn on_retransmission_timeout(&mut self, ssthresh: u64) {
        self.slow_start
            .timeout(&mut self.cwnd, &mut self.ssthresh, self.mss, ssthresh);
        self.bytes_acked = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;
    use crate::transport::cc::testing::ack;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;

    fn acked(bytes: u64) -> AckSample {
        ack(SimTime::ZERO, bytes, SimTime::from_millis(10), MSS)
    }

    /// A window in congestion avoidance at `segments` segments.
    fn in_avoidance(segments: u64) -> ByteCountingWindow {
        let mut w = ByteCountingWindow::new("test", MSS, 10);
        w.on_congestion_event(segments * M);
        w
    }

    #[test]
    fn initial_window_is_at_least_one_segment() {
        assert_eq!(initial_window_bytes(M, 10), 10 * M);
        assert_eq!(initial_window_bytes(M, 0), M);
        assert_eq!(initial_window_bytes(u64::MAX, 2), u64::MAX);
    }

    #[test]
    fn half_flight_size_is_eq_4_in_integers() {
        // max(FlightSize/2, 2·SMSS), FlightSize/2 rounded down.
        assert_eq!(half_flight_size(30 * M, M), 15 * M);
        assert_eq!(half_flight_size(10_001, M), 5_000);
        assert_eq!(half_flight_size(4 * M + 1, M), 2 * M);
        assert_eq!(half_flight_size(3 * M, M), 2 * M);
        assert_eq!(half_flight_size(0, 1460), 2920);
        assert_eq!(half_flight_size(u64::MAX, 1460), u64::MAX / 2);
        assert_eq!(loss_window(1460), 1460);
    }

    #[test]
    fn rfc5681_timeout_sets_eq_4_then_keeps_it_until_new_data_is_acknowledged() {
        let mut ss = SlowStart::default();
        let (mut cwnd, mut ssthresh) = (20 * M, u64::MAX);
        // A first timeout with 30 001 bytes in flight: ssthresh = ⌊30 001/2⌋ = 15 000, cwnd = LW.
        ss.rfc5681_timeout(&mut cwnd, &mut ssthresh, M, 30_001);
        assert_eq!((cwnd, ssthresh), (M, 15_000));
        // The slow start that follows counts at most one SMSS per ACK (RFC 3465 §2.3).
        assert_eq!(ss.increase(5 * M, M), M);
        // The timer fires again before any new data is acknowledged: ssthresh is kept.
        cwnd = 3 * M;
        ss.rfc5681_timeout(&mut cwnd, &mut ssthresh, M, 2 * M);
        assert_eq!((cwnd, ssthresh), (M, 15_000));
        // An ACK of new data ends the episode: the next timeout is a new loss, floored at 2·SMSS.
        ss.on_ack(1);
        ss.rfc5681_timeout(&mut cwnd, &mut ssthresh, M, 3 * M);
        assert_eq!((cwnd, ssthresh), (M, 2 * M));
        // A controller's own reduced window, with the same episode rule.
        ss.on_ack(1);
        ss.timeout(&mut cwnd, &mut ssthresh, M, 7_777);
        assert_eq!((cwnd, ssthresh), (M, 7_777));
        ss.timeout(&mut cwnd, &mut ssthresh, M, 1);
        assert_eq!((cwnd, ssthresh), (M, 7_777));
    }

    #[test]
    fn penalise_halves_the_window_and_outside_slow_start_ssthresh() {
        let halve = |cwnd: u64, ssthresh: u64| {
            let (mut c, mut s) = (cwnd, ssthresh);
            penalise(&mut c, &mut s, M);
            (c, s)
        };
        // Congestion avoidance (cwnd ≥ ssthresh): both halve, rounded down.
        assert_eq!(halve(10_001, 10_001), (5_000, 5_000));
        assert_eq!(halve(20 * M, 15 * M), (10 * M, 7_500));
        // Floors: 1 SMSS for cwnd, 2 SMSS for ssthresh.
        assert_eq!(halve(3 * M, 3 * M), (1_500, 2 * M));
        assert_eq!(halve(1_500, 1_500), (M, 2 * M));
        // Slow start (cwnd < ssthresh, before the cut): ssthresh is left alone.
        assert_eq!(halve(8 * M, u64::MAX), (4 * M, u64::MAX));
        assert_eq!(halve(8 * M, 8 * M + 1), (4 * M, 8 * M + 1));
        assert_eq!(halve(M, 10 * M), (M, 10 * M));
    }

    #[test]
    fn reduced_window_rounds_down_with_a_two_segment_floor() {
        assert_eq!(reduced_window(100 * M, 0.5, M), 50 * M);
        assert_eq!(reduced_window(10_001, 0.5, M), 5_000);
        assert_eq!(reduced_window(100 * M, 0.7, M), 70 * M);
        assert_eq!(reduced_window(3 * M, 0.5, M), 2 * M);
        assert_eq!(reduced_window(0, 0.5, M), 2 * M);
        assert_eq!(
            reduced_window(u64::MAX, 0.99, M),
            (u64::MAX as f64 * 0.99) as u64
        );
    }

    #[test]
    fn slow_start_adds_at_most_l_segments_per_ack() {
        let mut ss = SlowStart::default();
        assert_eq!(ss.increase(2 * M, M), M);
        assert_eq!(ss.increase(500, M), 500);
        ss.set_abc_limit(2);
        assert_eq!(ss.increase(3 * M, M), 2 * M);
        assert_eq!(ss.increase(2 * M - 1, M), 2 * M - 1);
        assert_eq!(ss.increase(u64::MAX, u64::MAX), u64::MAX);
    }

    #[test]
    fn slow_start_after_a_timeout_uses_one_segment_until_it_exits() {
        let mut ss = SlowStart::default();
        ss.set_abc_limit(2);
        assert!(ss.on_timeout());
        assert_eq!(ss.increase(2 * M, M), M);
        ss.on_ack(M);
        assert_eq!(ss.increase(2 * M, M), M, "new data alone does not end it");
        ss.exit();
        assert_eq!(ss.increase(2 * M, M), 2 * M);
    }

    #[test]
    fn a_repeated_timeout_is_not_a_new_episode() {
        let mut ss = SlowStart::default();
        assert!(ss.on_timeout());
        assert!(!ss.on_timeout());
        ss.on_ack(0);
        assert!(
            !ss.on_timeout(),
            "an ACK without new data does not end the episode"
        );
        ss.on_ack(1);
        assert!(ss.on_timeout());
    }

    #[test]
    #[should_panic(expected = "ABC limit must be 1 or 2 segments")]
    fn abc_limit_of_zero_is_rejected() {
        SlowStart::default().set_abc_limit(0);
    }

    #[test]
    #[should_panic(expected = "ctl: MSS must be positive")]
    fn zero_mss_is_rejected_with_the_controller_name() {
        let _ = ByteCountingWindow::new("ctl", 0, 10);
    }

    #[test]
    fn new_window() {
        let w = ByteCountingWindow::new("test", MSS, 4);
        assert_eq!(
            (w.mss(), w.cwnd(), w.ssthresh(), w.bytes_acked()),
            (M, 4 * M, u64::MAX, 0)
        );
    }

    #[test]
    fn slow_start_grows_the_window_and_completes_no_windows() {
        let mut w = ByteCountingWindow::new("test", MSS, 10);
        assert_eq!(w.on_ack(&acked(2 * M)), 0);
        assert_eq!((w.cwnd(), w.bytes_acked()), (11 * M, 0));
        w.set_abc_limit(2);
        assert_eq!(w.on_ack(&acked(3 * M)), 0);
        assert_eq!((w.cwnd(), w.bytes_acked()), (13 * M, 0));
    }

    #[test]
    fn congestion_avoidance_counts_whole_windows_exactly() {
        let mut w = in_avoidance(10);
        for _ in 0..9 {
            assert_eq!(w.on_ack(&acked(M)), 0);
        }
        assert_eq!((w.cwnd(), w.bytes_acked()), (10 * M, 9 * M));
        assert_eq!(w.on_ack(&acked(M + 7)), 1);
        assert_eq!(
            (w.cwnd(), w.bytes_acked()),
            (10 * M, 7),
            "the caller grows the window"
        );
        w.grow(M);
        // Odd byte counts carry exactly into the next window.
        assert_eq!(w.on_ack(&acked(11 * M - 8)), 0);
        assert_eq!(w.bytes_acked(), 11 * M - 1);
        assert_eq!(w.on_ack(&acked(1)), 1);
        assert_eq!(w.bytes_acked(), 0);
    }

    #[test]
    fn one_ack_may_complete_several_windows() {
        let mut w = in_avoidance(10);
        assert_eq!(w.on_ack(&acked(25 * M)), 2);
        assert_eq!((w.cwnd(), w.bytes_acked()), (10 * M, 5 * M));
    }

    #[test]
    fn ineligible_acks_count_nothing() {
        for mut w in [ByteCountingWindow::new("test", MSS, 10), in_avoidance(10)] {
            let before = w;
            let mut s = acked(M);
            s.in_recovery = true;
            assert_eq!(w.on_ack(&s), 0);
            let mut s = acked(M);
            s.is_cwnd_limited = false;
            assert_eq!(w.on_ack(&s), 0);
            let mut s = acked(0);
            s.newly_sacked_bytes = 5 * M;
            assert_eq!(w.on_ack(&s), 0);
            assert_eq!(w, before);
        }
    }

    #[test]
    fn congestion_event_sets_both_windows_and_clears_the_counter() {
        let mut w = in_avoidance(10);
        w.on_ack(&acked(7 * M));
        w.on_congestion_event(4 * M);
        assert_eq!((w.cwnd(), w.ssthresh(), w.bytes_acked()), (4 * M, 4 * M, 0));
    }

    #[test]
    fn timeout_sets_the_loss_window_and_keeps_ssthresh_when_repeated() {
        let mut w = in_avoidance(30);
        w.set_abc_limit(2);
        w.on_ack(&acked(5 * M));
        w.on_retransmission_timeout(15 * M);
        assert_eq!((w.cwnd(), w.ssthresh(), w.bytes_acked()), (M, 15 * M, 0));
        w.on_retransmission_timeout(2 * M);
        assert_eq!((w.cwnd(), w.ssthresh()), (M, 15 * M));
        // L = 1 in the slow start that follows, until congestion avoidance is reached.
        assert_eq!(w.on_ack(&acked(2 * M)), 0);
        assert_eq!(w.cwnd(), 2 * M);
        w.on_retransmission_timeout(4 * M);
        assert_eq!((w.cwnd(), w.ssthresh()), (M, 4 * M));
        for _ in 0..3 {
            w.on_ack(&acked(2 * M));
        }
        assert_eq!(w.cwnd(), 4 * M);
        // Still L = 1 while in slow start...
        let mut still_slow = w;
        still_slow.ssthresh = u64::MAX;
        still_slow.on_ack(&acked(2 * M));
        assert_eq!(still_slow.cwnd(), 5 * M);
        // ...but the first ACK in congestion avoidance brings back the configured L = 2.
        assert_eq!(w.on_ack(&acked(M)), 0);
        assert_eq!(w.bytes_acked(), M);
        w.ssthresh = u64::MAX;
        w.on_ack(&acked(2 * M));
        assert_eq!(w.cwnd(), 6 * M);
    }
}
