//! Per-subflow window arithmetic shared by the loss-based coupled controllers (LIA, OLIA,
//! BALIA).
//!
//! These controllers keep standard TCP on every subflow (RFC 6356 §3: slow start, fast
//! retransmit, fast recovery and the timeout are unchanged) and replace only the
//! congestion-avoidance increase. Each expresses its increase as a **threshold** `T`: the bytes
//! to acknowledge on the subflow to move its window by one MSS. Reno's `T` is the window itself
//! (RFC 3465 §2.1: one MSS per window of acknowledged data), LIA's `max(cwnd_total/α, cwnd_i)`,
//! and so on (see each controller). A negative `T` moves the window down (OLIA can), an
//! infinite one not at all.
//!
//! **Per acknowledged byte.** The v0.9x kernels advance their counter once per ACK, whatever
//! the ACK covers, so with delayed ACKs (one ACK per two segments) their LIA, OLIA and BALIA
//! grow about half as fast as a Linux Reno, which counts packets (reference `multipath_cc.md`
//! §1.3). Here every controller counts acknowledged bytes, as RFC 6356 §3 writes the increase
//! (`bytes_acked·MSS_i/…` per ACK): an ACK for two segments counts twice, and a subflow alone is
//! exactly [`Reno`](crate::transport::cc::Reno), byte for byte.
//!
//! **The counter.** Acknowledged bytes accumulate in a counter measured against the threshold in
//! force; when it reaches `|T|` the window moves by one MSS (by several if one ACK covers several
//! thresholds) and `|T|` is taken off the counter, the remainder carried exactly. A coupled
//! threshold changes between two ACKs of a subflow as the other subflows' windows and RTTs
//! change; the counter is then rescaled by `T_new/T_old`, so that the fraction of a step already
//! earned is kept and each ACK's bytes are paid at the rate in force when it arrives: the window
//! follows the integral of the per-byte increase, with nothing rounded away. After the subflow's
//! own step the remainder is carried as it is (not rescaled to the new threshold), which is what
//! RFC 3465 byte counting does, so that a lone subflow (`T = cwnd`) takes Reno's decisions.
//!
//! Slow start, the reductions and penalisation are per subflow: slow start is RFC 5681's with
//! byte counting (L = 1); a congestion event sets `ssthresh = cwnd = reduced` (Reno's
//! `max(FlightSize/2, 2·MSS)`, or the controller's); a timeout sets cwnd to one MSS and ssthresh
//! by Reno's rule (kept on a repeated timeout, RFC 5681 §3.1); nothing grows in recovery or when
//! the sender is not cwnd-limited (RFC 7661 §4), and only the cumulatively acknowledged bytes
//! count.
//!
//! A subflow takes part in the coupled sums when it is established and has an RTT sample (its
//! smoothed RTT, [`AckSample::srtt`], or the first [`AckSample::rtt`] before that).

use super::per_subflow::SubflowState;
use super::MultipathConnection;
use crate::time::SimTime;
use crate::transport::cc::window::{
    half_flight_size, initial_window_bytes, penalise, PathWindow, SlowStart,
};
use crate::transport::cc::AckSample;

/// `v as f64`, the same value rounded the same way, by the signed conversion below 2^63 (one
/// instruction on x86-64, where the unsigned one takes several).
#[inline(always)]
fn exact_f64(v: u64) -> f64 {
    if v < 1 << 63 {
        v as i64 as f64
    } else {
        v as f64
    }
}

/// The window of one subflow (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SubflowWindow {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    slow_start: SlowStart,
    /// Acknowledged bytes counted towards the next step, measured against `counted_against`.
    counter: f64,
    /// The threshold `counter` is measured against; `None` after a step or a reset, when the
    /// next threshold is taken as it is.
    counted_against: Option<f64>,
    established: bool,
    srtt: SimTime,
    /// Bytes cumulatively acknowledged on the subflow so far (its `snd_una`, from 0).
    acked: u64,
    /// `cwnd` and `srtt` (in ns) as f64 ([`exact_f64`]), converted when they change rather
    /// than at every read: the coupled sums read every subflow's at every ACK.
    cwnd_f64: f64,
    srtt_f64: f64,
}

impl SubflowWindow {
    /// A window for segments of `mss` bytes, starting at `initial_window_segments × mss` (at
    /// least one segment) with an unbounded ssthresh, not established.
    ///
    /// # Panics
    /// If `mss` is zero; the message names `controller`.
    pub(crate) fn new(controller: &str, mss: u32, initial_window_segments: u32) -> Self {
        assert!(mss > 0, "{controller}: MSS must be positive");
        let mss = u64::from(mss);
        let cwnd = initial_window_bytes(mss, initial_window_segments);
        SubflowWindow {
            mss,
            cwnd,
            ssthresh: u64::MAX,
            slow_start: SlowStart::default(),
            counter: 0.0,
            counted_against: None,
            established: false,
            srtt: SimTime::ZERO,
            acked: 0,
            cwnd_f64: exact_f64(cwnd),
            srtt_f64: 0.0,
        }
    }

    /// After every change of `cwnd`.
    #[inline(always)]
    fn cwnd_changed(&mut self) {
        self.cwnd_f64 = exact_f64(self.cwnd);
    }

    /// After every change of `srtt`.
    #[inline(always)]
    fn srtt_changed(&mut self) {
        self.srtt_f64 = exact_f64(self.srtt.as_nanos());
    }

    /// One window per subflow of `connection`.
    ///
    /// # Panics
    /// If the connection has no subflow or its MSS is zero.
    pub(crate) fn for_connection(controller: &str, connection: MultipathConnection) -> Vec<Self> {
        assert!(
            connection.subflows > 0,
            "{controller}: a connection needs at least one subflow"
        );
        (0..connection.subflows)
            .map(|_| SubflowWindow::new(controller, connection.mss, connection.initial_window))
            .collect()
    }

    pub(crate) fn mss(&self) -> u64 {
        self.mss
    }

    pub(crate) fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    pub(crate) fn srtt(&self) -> SimTime {
        self.srtt
    }

    /// Bytes cumulatively acknowledged so far.
    pub(crate) fn acked(&self) -> u64 {
        self.acked
    }

    /// Whether the subflow takes part in the coupled sums: established, with an RTT sample.
    pub(crate) fn is_coupled(&self) -> bool {
        self.established && self.srtt > SimTime::ZERO
    }

    /// The window as a number of bytes.
    #[inline]
    pub(crate) fn window(&self) -> f64 {
        debug_assert_eq!(self.cwnd_f64.to_bits(), exact_f64(self.cwnd).to_bits());
        self.cwnd_f64
    }

    /// The smoothed RTT in nanoseconds.
    #[inline]
    pub(crate) fn rtt(&self) -> f64 {
        debug_assert_eq!(
            self.srtt_f64.to_bits(),
            exact_f64(self.srtt.as_nanos()).to_bits()
        );
        self.srtt_f64
    }

    /// `cwnd/srtt` in bytes per nanosecond (the unit cancels in every coupled formula).
    pub(crate) fn rate(&self) -> f64 {
        self.window() / self.rtt()
    }

    /// Records what an ACK says (its RTT, the bytes it acknowledges) and applies slow start.
    /// Returns the acknowledged bytes that congestion avoidance is to count
    /// ([`SubflowWindow::avoid`]), if any.
    pub(crate) fn on_ack(&mut self, sample: &AckSample) -> Option<u64> {
        self.slow_start.on_ack(sample.acked_bytes);
        self.acked = self.acked.saturating_add(sample.acked_bytes);
        if sample.srtt > SimTime::ZERO {
            self.srtt = sample.srtt;
            self.srtt_changed();
        } else if let Some(rtt) = sample.rtt.filter(|r| *r > SimTime::ZERO) {
            if self.srtt == SimTime::ZERO {
                self.srtt = rtt;
                self.srtt_changed();
            }
        }
        if sample.in_recovery || !sample.is_cwnd_limited || sample.acked_bytes == 0 {
            return None;
        }
        if self.in_slow_start() {
            let increase = self.slow_start.increase(sample.acked_bytes, self.mss);
            self.cwnd = self.cwnd.saturating_add(increase);
            self.cwnd_changed();
            return None;
        }
        self.slow_start.exit();
        Some(sample.acked_bytes)
    }

    /// Counts `acked` bytes of congestion avoidance against `threshold` (bytes per one-MSS
    /// step; negative for a decrease, infinite for none): see the module documentation. A
    /// decrease leaves at least one MSS (the kernel's OLIA floor) and takes ssthresh down with
    /// the window, so that the subflow stays in congestion avoidance.
    pub(crate) fn avoid(&mut self, acked: u64, threshold: f64) {
        if !threshold.is_finite() || threshold == 0.0 {
            // No movement at this rate: what was earned so far is kept.
            return;
        }
        if let Some(previous) = self.counted_against {
            if previous != threshold {
                self.counter *= threshold / previous;
            }
        }
        self.counted_against = Some(threshold);
        self.counter += acked as f64;
        let step = threshold.abs();
        if self.counter < step {
            return;
        }
        // Whole steps, exactly: the quotient corrected for rounding.
        let mut steps = (self.counter / step).floor();
        while steps * step > self.counter {
            steps -= 1.0;
        }
        while (steps + 1.0) * step <= self.counter {
            steps += 1.0;
        }
        self.counter -= steps * step;
        self.counted_against = None;
        let bytes = (steps as u64).saturating_mul(self.mss);
        if threshold > 0.0 {
            self.cwnd = self.cwnd.saturating_add(bytes);
        } else {
            self.cwnd = self.cwnd.saturating_sub(bytes).max(self.mss);
            self.ssthresh = self.ssthresh.min(self.cwnd);
        }
        self.cwnd_changed();
    }

    /// A congestion event: `cwnd = ssthresh = reduced` (RFC 6675 §5 step 4.2), `reduced` being
    /// Reno's ([`PathWindow::on_congestion_event`]) or the controller's; the counter starts again
    /// from zero.
    pub(crate) fn reduce_to(&mut self, reduced: u64) {
        self.cwnd = reduced;
        self.cwnd_changed();
        self.ssthresh = reduced;
        self.reset_counter();
        self.slow_start.exit();
    }

    /// Reno's reduction, `max(FlightSize/2, 2·MSS)` (RFC 5681 eq. (4)).
    pub(crate) fn halved(&self, bytes_in_flight: u64) -> u64 {
        half_flight_size(bytes_in_flight, self.mss)
    }

    fn reset_counter(&mut self) {
        self.counter = 0.0;
        self.counted_against = None;
    }
}

impl PathWindow for SubflowWindow {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// Reno's reduction, `cwnd = ssthresh = max(FlightSize/2, 2·MSS)`.
    fn on_congestion_event(&mut self, bytes_in_flight: u64) {
        self.reduce_to(self.halved(bytes_in_flight));
    }

    /// A timeout: RFC 5681 §3.1, ssthresh by eq. (4) unless the previous timeout has not been
    /// followed by new acknowledged data, cwnd = 1 MSS; the slow start that follows uses L = 1.
    fn on_retransmission_timeout(&mut self, bytes_in_flight: u64) {
        self.slow_start.rfc5681_timeout(
            &mut self.cwnd,
            &mut self.ssthresh,
            self.mss,
            bytes_in_flight,
        );
        self.cwnd_changed();
        self.reset_counter();
    }

    /// MPTCP's receive-buffer penalisation ([`penalise`], reference §3.1.4). The counter keeps
    /// its progress.
    fn penalise(&mut self) {
        penalise(&mut self.cwnd, &mut self.ssthresh, self.mss);
        self.cwnd_changed();
    }
}

impl SubflowState for SubflowWindow {
    type Window = SubflowWindow;

    fn window(&self) -> &SubflowWindow {
        self
    }

    fn window_mut(&mut self) -> &mut SubflowWindow {
        self
    }

    fn set_established(&mut self, established: bool) {
        self.established = established;
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Checks shared by the tests of the loss-based coupled controllers.

    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    use super::super::{Coupled, MultipathCongestionControl, MultipathConnection};
    use crate::time::SimTime;
    use crate::transport::cc::{AckSample, CongestionControl, Reno};
    use crate::transport::tcp::config::TcpProfile;

    /// A connection of `subflows` subflows with 1000-byte segments and an initial window of 10.
    pub(crate) fn connection(subflows: usize) -> MultipathConnection {
        MultipathConnection {
            subflows,
            mss: 1000,
            initial_window: 10,
            profile: TcpProfile::Rfc,
        }
    }

    /// An ACK of `acked_bytes` carrying the RTT sample `rtt` (also the SRTT).
    pub(crate) fn acked(acked_bytes: u64, rtt: SimTime) -> AckSample {
        crate::transport::cc::testing::ack(SimTime::ZERO, acked_bytes, rtt, 1000)
    }

    /// Puts `subflow` in congestion avoidance at `cwnd` bytes (a congestion event with twice
    /// that in flight, so before the subflow joins the coupled sums, where a controller may
    /// reduce otherwise than Reno), with smoothed RTT `rtt` (an ACK that does not count: the
    /// sender not cwnd-limited).
    pub(crate) fn set_window(
        cc: &mut impl MultipathCongestionControl,
        subflow: usize,
        cwnd: u64,
        rtt: SimTime,
    ) {
        let mut sample = acked(0, rtt);
        sample.is_cwnd_limited = false;
        cc.on_ack(subflow, &sample);
        cc.on_congestion_event(subflow, SimTime::ZERO, 2 * cwnd);
        assert_eq!(cc.cwnd(subflow), cwnd);
    }

    /// One input to a controller.
    #[derive(Clone, Debug)]
    pub(crate) enum Event {
        Ack {
            acked_bytes: u64,
            srtt_us: u64,
            with_sample: bool,
            cwnd_limited: bool,
            in_recovery: bool,
        },
        Loss {
            flight_permille: u64,
        },
        RecoveryExit,
        Timeout {
            flight_permille: u64,
        },
        Penalise,
    }

    /// One random event, mostly ACKs, no penalisation.
    pub(crate) fn event() -> impl Strategy<Value = Event> {
        prop_oneof![
            12 => (0u64..5_000, 1u64..300_000, any::<bool>(), 0u8..10, 0u8..10).prop_map(
                |(acked_bytes, srtt_us, with_sample, limited, recovering)| Event::Ack {
                    acked_bytes,
                    srtt_us,
                    with_sample,
                    cwnd_limited: limited > 0,
                    in_recovery: recovering == 0,
                }
            ),
            1 => (0u64..3000).prop_map(|p| Event::Loss { flight_permille: p }),
            1 => Just(Event::RecoveryExit),
            1 => (0u64..3000).prop_map(|p| Event::Timeout { flight_permille: p }),
        ]
    }

    /// Random event sequences without penalisation.
    pub(crate) fn events() -> impl Strategy<Value = Vec<Event>> {
        proptest::collection::vec(event(), 1..400)
    }

    /// Applies `events` to subflow 0 of `cc` (one subflow, established) and to a
    /// [`Reno`] with the same MSS and initial window, checking that both windows and
    /// ssthresholds are equal after every event.
    pub(crate) fn check_against_reno(
        cc: &mut Coupled,
        mss: u32,
        initial_window: u32,
        events: &[Event],
    ) -> Result<(), TestCaseError> {
        let mut reno = Reno::new(mss, initial_window);
        cc.set_established(0, true);
        let mut now = SimTime::ZERO;
        for (i, event) in events.iter().enumerate() {
            let before = reno.cwnd();
            match *event {
                Event::Ack {
                    acked_bytes,
                    srtt_us,
                    with_sample,
                    cwnd_limited,
                    in_recovery,
                } => {
                    now = now.saturating_add(SimTime::from_micros(srtt_us / 10));
                    let srtt = SimTime::from_micros(srtt_us);
                    let mut sample =
                        crate::transport::cc::testing::ack(now, acked_bytes, srtt, mss);
                    sample.rtt = with_sample.then_some(srtt);
                    sample.is_cwnd_limited = cwnd_limited;
                    sample.in_recovery = in_recovery;
                    sample.bytes_in_flight = before;
                    cc.on_ack(0, &sample);
                    reno.on_ack(&sample);
                }
                Event::Loss { flight_permille } => {
                    cc.on_congestion_event(0, now, before * flight_permille / 1000);
                    reno.on_congestion_event(now, before * flight_permille / 1000);
                }
                Event::RecoveryExit => {
                    cc.on_recovery_exit(0, now);
                    reno.on_recovery_exit(now);
                }
                Event::Timeout { flight_permille } => {
                    cc.on_retransmission_timeout(0, now, before * flight_permille / 1000);
                    reno.on_retransmission_timeout(now, before * flight_permille / 1000);
                }
                Event::Penalise => unreachable!("Reno has no penalisation"),
            }
            prop_assert_eq!(
                (cc.cwnd(0), cc.ssthresh(0)),
                (reno.cwnd(), reno.ssthresh()),
                "after event {} ({:?})",
                i,
                event
            );
        }
        Ok(())
    }

    /// Applies `events` to every subflow of `cc` in turn (subflow `i % n`) and checks the
    /// invariants every loss-based coupled controller keeps: windows at least one MSS, no
    /// growth on ineligible ACKs, at least 2 MSS after a loss, one MSS after a timeout,
    /// penalisation as documented.
    pub(crate) fn check_invariants(
        cc: &mut Coupled,
        events: &[Event],
    ) -> Result<(), TestCaseError> {
        let n = cc.subflows();
        let mss = 1000u64;
        let mut now = SimTime::ZERO;
        for (i, event) in events.iter().enumerate() {
            let s = i % n;
            if i % 7 == 3 {
                cc.set_established(s, i % 3 != 0);
            }
            let before = (cc.cwnd(s), cc.ssthresh(s));
            match *event {
                Event::Ack {
                    acked_bytes,
                    srtt_us,
                    with_sample,
                    cwnd_limited,
                    in_recovery,
                } => {
                    now = now.saturating_add(SimTime::from_micros(srtt_us / 10));
                    let srtt = SimTime::from_micros(srtt_us);
                    let mut sample =
                        crate::transport::cc::testing::ack(now, acked_bytes, srtt, 1000);
                    sample.rtt = with_sample.then_some(srtt);
                    sample.is_cwnd_limited = cwnd_limited;
                    sample.in_recovery = in_recovery;
                    cc.on_ack(s, &sample);
                    if in_recovery || !cwnd_limited || acked_bytes == 0 {
                        prop_assert_eq!((cc.cwnd(s), cc.ssthresh(s)), before);
                    }
                }
                Event::Loss { flight_permille } => {
                    cc.on_congestion_event(s, now, before.0 * flight_permille / 1000);
                    prop_assert!(cc.cwnd(s) >= 2 * mss && cc.ssthresh(s) >= 2 * mss);
                }
                Event::RecoveryExit => {
                    cc.on_recovery_exit(s, now);
                    prop_assert_eq!((cc.cwnd(s), cc.ssthresh(s)), before);
                }
                Event::Timeout { flight_permille } => {
                    cc.on_retransmission_timeout(s, now, before.0 * flight_permille / 1000);
                    prop_assert_eq!(cc.cwnd(s), mss);
                    prop_assert!(cc.ssthresh(s) >= 2 * mss);
                }
                Event::Penalise => {
                    cc.penalise(s);
                    prop_assert_eq!(cc.cwnd(s), (before.0 / 2).max(mss));
                    if before.0 < before.1 {
                        prop_assert_eq!(cc.ssthresh(s), before.1);
                    } else {
                        prop_assert_eq!(cc.ssthresh(s), (before.1 / 2).max(2 * mss));
                    }
                }
            }
            for k in 0..n {
                prop_assert!(cc.cwnd(k) >= mss);
            }
        }
        Ok(())
    }

    /// Random event sequences with penalisations, for [`check_invariants`].
    pub(crate) fn events_with_penalties() -> impl Strategy<Value = Vec<Event>> {
        proptest::collection::vec(
            prop_oneof![
                20 => event(),
                1 => Just(Event::Penalise),
            ],
            1..400,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::testing::ack;

    const M: u64 = 1000;
    const RTT: SimTime = SimTime::from_millis(10);

    #[test]
    fn the_signed_conversion_gives_the_unsigned_one() {
        let edges = [
            0,
            1,
            (1 << 53) - 1,
            1 << 53,
            (1 << 53) + 1,
            (1 << 63) - 1,
            1 << 63,
        ];
        for v in edges
            .into_iter()
            .chain([u64::MAX, u64::MAX - 1024, 0x8000_0000_0000_0401])
        {
            assert_eq!(exact_f64(v).to_bits(), (v as f64).to_bits(), "{v}");
        }
        let mut v = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            v = v.rotate_left(7).wrapping_mul(0x2545_f491_4f6c_dd1d);
            for x in [v, v >> 1, v >> 11, v >> 40] {
                assert_eq!(exact_f64(x).to_bits(), (x as f64).to_bits(), "{x}");
            }
        }
    }

    fn in_avoidance(cwnd: u64) -> SubflowWindow {
        let mut w = SubflowWindow::new("test", 1000, 10);
        w.reduce_to(cwnd);
        w
    }

    #[test]
    fn a_subflow_takes_part_once_established_with_an_rtt_sample() {
        let mut w = SubflowWindow::new("test", 1000, 4);
        assert_eq!((w.cwnd(), w.ssthresh()), (4 * M, u64::MAX));
        assert!(!w.is_coupled());
        w.set_established(true);
        assert!(!w.is_coupled());
        let mut sample = ack(SimTime::ZERO, M, RTT, 1000);
        sample.srtt = SimTime::ZERO;
        w.on_ack(&sample);
        assert!(w.is_coupled());
        assert_eq!((w.srtt(), w.acked()), (RTT, M));
        w.set_established(false);
        assert!(!w.is_coupled());
    }

    #[test]
    fn the_counter_steps_by_whole_thresholds_and_carries_the_rest() {
        let mut w = in_avoidance(10 * M);
        w.avoid(7_000, 40_000.0);
        w.avoid(33_000, 40_000.0);
        assert_eq!(w.cwnd(), 11 * M);
        // One ACK covering three thresholds and a bit.
        w.avoid(120_500, 40_000.0);
        assert_eq!(w.cwnd(), 14 * M);
        assert_eq!(w.counter, 500.0);
        // A negative threshold steps down; ssthresh (10 000) stays at or below the window.
        w.avoid(79_500, -40_000.0);
        assert_eq!((w.cwnd(), w.ssthresh()), (12 * M, 10 * M));
        w.avoid(160_000, -40_000.0);
        assert_eq!((w.cwnd(), w.ssthresh()), (8 * M, 8 * M));
        // Never below one MSS.
        w.avoid(10_000_000, -1_000.0);
        assert_eq!(w.cwnd(), M);
    }

    #[test]
    fn a_changed_threshold_keeps_the_fraction_earned() {
        let mut w = in_avoidance(10 * M);
        // A quarter of a step at T = 40 000 ...
        w.avoid(10_000, 40_000.0);
        // ... is a quarter of a step at T = 20 000 (5000 bytes): 15 000 more complete it.
        w.avoid(14_999, 20_000.0);
        assert_eq!(w.cwnd(), 10 * M);
        w.avoid(1, 20_000.0);
        assert_eq!(w.cwnd(), 11 * M);
        // No rate: nothing moves and nothing is lost.
        w.avoid(3_000, f64::INFINITY);
        w.avoid(3_000, 6_000.0);
        assert_eq!(w.cwnd(), 11 * M);
        w.avoid(3_000, 6_000.0);
        assert_eq!(w.cwnd(), 12 * M);
    }

    #[test]
    fn after_its_own_step_the_remainder_is_not_rescaled() {
        // As RFC 3465 byte counting: 11 000 acknowledged at cwnd = 10 000 leave 1000 towards
        // the next step at 11 000.
        let mut w = in_avoidance(10 * M);
        w.avoid(11_000, 10_000.0);
        assert_eq!(w.cwnd(), 11 * M);
        w.avoid(9_999, 11_000.0);
        assert_eq!(w.cwnd(), 11 * M);
        w.avoid(1, 11_000.0);
        assert_eq!(w.cwnd(), 12 * M);
    }

    #[test]
    fn losses_and_penalties() {
        let mut w = in_avoidance(20 * M);
        w.avoid(5_000, 20_000.0);
        w.on_congestion_event(30 * M);
        assert_eq!((w.cwnd(), w.ssthresh(), w.counter), (15 * M, 15 * M, 0.0));
        w.on_retransmission_timeout(30 * M);
        assert_eq!((w.cwnd(), w.ssthresh()), (M, 15 * M));
        w.on_retransmission_timeout(4 * M);
        assert_eq!((w.cwnd(), w.ssthresh()), (M, 15 * M));
        // In slow start, penalisation halves the window only.
        let mut w = SubflowWindow::new("test", 1000, 10);
        w.penalise();
        assert_eq!((w.cwnd(), w.ssthresh()), (5 * M, u64::MAX));
        let mut w = in_avoidance(3 * M);
        w.penalise();
        assert_eq!((w.cwnd(), w.ssthresh()), (1500, 2 * M));
        w.penalise();
        assert_eq!((w.cwnd(), w.ssthresh()), (M, 2 * M));
    }
}
