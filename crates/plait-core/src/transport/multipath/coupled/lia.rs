//! LIA, the Linked Increases Algorithm: RFC 6356 §3–§4 (Raiciu, Handley and Wischik),
//! reference `multipath_cc.md` §2.1; the v0.9x Linux implementation is `mptcp_coupled.c`.
//!
//! In congestion avoidance, each ACK on subflow i adds (RFC 6356 §3, windows in bytes)
//!
//! `cwnd_i += min( α·bytes_acked·MSS_i / cwnd_total , bytes_acked·MSS_i / cwnd_i )`,
//!
//! `α = cwnd_total · max_k(cwnd_k / rtt_k²) / (Σ_k cwnd_k / rtt_k)²`, `cwnd_total = Σ_k cwnd_k`.
//!
//! The second term is what Reno would add: LIA never increases a subflow faster than a TCP on
//! its path would. The first couples the subflows so that, with equal RTTs, the connection as a
//! whole grows by at most one segment per round trip. A loss halves the window of its subflow
//! only, as Reno does.
//!
//! How it is computed (the shared arithmetic is in the `window` module):
//! - the increase is paid as one MSS per `T = max(cwnd_total/α, cwnd_i)` acknowledged bytes,
//!   with `cwnd_total/α = (Σ_k cwnd_k/rtt_k)² / max_k(cwnd_k/rtt_k²)`: the packet-counter form of
//!   RFC 6356 §4.2 and of the kernel (`cwnd_cnt ≥ max(w_total/α, w_i)`), counted in bytes, which
//!   is RFC 6356 §3's per-byte rule with the fractions carried. With delayed ACKs this grows
//!   per acknowledged byte, where the kernel grows per ACK (reference §1.3: half as fast);
//! - α is recomputed, in floating point, at every congestion-avoidance ACK, from the current
//!   windows and smoothed RTTs. RFC 6356 §4 suggests integer arithmetic with scaling and
//!   recomputing α only when a window changes; the kernel keeps one α for the connection,
//!   refreshed on slow-start ACKs, after increments, on timeouts and lazily after state
//!   changes, so it is sometimes stale (reference pitfall (c)); here it never is;
//! - the sums run over the subflows that are established and have an RTT sample (reference
//!   §2.0; the kernel's `mptcp_ccc_sk_can_send`). A subflow alone in that set, or not in it
//!   itself (no RTT sample yet), increases as Reno (`T = cwnd_i`), as the kernel does with one
//!   subflow; α is 1 there anyway;
//! - the kernel reads the current window even in fast recovery (reference pitfall (b)); the
//!   senders here count the pipe and never inflate cwnd, so this makes no difference;
//! - slow start is `cwnd < ssthresh` (RFC 5681); the kernel tests `cwnd ≤ ssthresh`;
//! - a congestion event sets `ssthresh = cwnd = max(FlightSize/2, 2·MSS)` on the subflow, a
//!   timeout cwnd to one MSS, both as [`Reno`](crate::transport::cc::Reno).
//!
//! With a single subflow, LIA is Reno byte for byte (tested below).

use super::per_subflow::CoupledAlgorithm;
use super::window::SubflowWindow;
use super::{CoupledKind, MultipathConnection};
use crate::registry::AlgorithmSpec;
use crate::transport::cc::AckSample;

/// The registry declaration of LIA: no parameters.
pub const SPEC: AlgorithmSpec<CoupledKind> = AlgorithmSpec {
    name: "lia",
    summary: "Linked Increases Algorithm, MPTCP's coupled Reno (RFC 6356)",
    params: &[],
    finish: None,
    build: |_, connection| Lia::new(connection).into(),
};

/// LIA over the subflows of one connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Lia {
    subflows: Vec<SubflowWindow>,
}

impl Lia {
    /// LIA for `connection`: every subflow at the initial window, in slow start, not
    /// established.
    ///
    /// # Panics
    /// If the connection has no subflow or its MSS is zero.
    pub fn new(connection: MultipathConnection) -> Self {
        Lia {
            subflows: SubflowWindow::for_connection("lia", connection),
        }
    }

    /// RFC 6356's α over the subflows in the coupled sums (1 when there are none).
    pub fn alpha(&self) -> f64 {
        let coupled = || self.subflows.iter().filter(|w| w.is_coupled());
        let total: f64 = coupled().map(SubflowWindow::window).sum();
        let rates: f64 = coupled().map(SubflowWindow::rate).sum();
        let best = coupled().map(|w| w.rate() / w.rtt()).fold(0.0, f64::max);
        if total == 0.0 {
            1.0
        } else {
            total * best / (rates * rates)
        }
    }

    /// Segments of window that one acknowledged segment on `subflow` earns in congestion
    /// avoidance now: `min(α/cwnd_total, 1/cwnd_i)` in segments.
    pub fn increase_per_segment(&self, subflow: usize) -> f64 {
        self.subflows[subflow].mss() as f64 / self.threshold(subflow)
    }

    /// Bytes to acknowledge on `subflow` for one MSS more: `max(cwnd_total/α, cwnd_i)`.
    fn threshold(&self, subflow: usize) -> f64 {
        let own = &self.subflows[subflow];
        if !own.is_coupled() {
            return own.window();
        }
        let mut rates = 0.0;
        let mut best = 0.0f64;
        let mut members = 0;
        for w in self.subflows.iter().filter(|w| w.is_coupled()) {
            let rate = w.rate();
            rates += rate;
            // `best.max(rate / rtt)`: neither is NaN (a window over an RTT of at least 1 ns,
            // over that RTT again, is finite and not negative), so the plain comparison
            // takes the same one.
            let r = rate / w.rtt();
            if r > best {
                best = r;
            }
            members += 1;
        }
        if members < 2 {
            return own.window();
        }
        (rates * rates / best).max(own.window())
    }
}

impl CoupledAlgorithm for Lia {
    const NAME: &'static str = "lia";
    type Subflow = SubflowWindow;

    fn subflow_states(&self) -> &[SubflowWindow] {
        &self.subflows
    }

    fn subflow_states_mut(&mut self) -> &mut [SubflowWindow] {
        &mut self.subflows
    }

    /// Slow start as Reno; in congestion avoidance one MSS per `max(cwnd_total/α, cwnd_i)`
    /// acknowledged bytes (RFC 6356 §3). Losses and timeouts are Reno's on the subflow alone.
    fn on_subflow_ack(&mut self, subflow: usize, sample: &AckSample) {
        if let Some(acked) = self.subflows[subflow].on_ack(sample) {
            let threshold = self.threshold(subflow);
            self.subflows[subflow].avoid(acked, threshold);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::window::testing::{
        acked, check_against_reno, check_invariants, connection, events, events_with_penalties,
        set_window,
    };
    use super::super::MultipathCongestionControl;
    use super::super::{Coupled, CoupledSpec, SubflowController};
    use super::*;
    use crate::time::SimTime;
    use crate::transport::cc::testing::{ack, run_round};
    use crate::transport::cc::{CongestionControl, Reno};
    use proptest::prelude::*;

    const M: u64 = 1000;
    /// RTTs that are powers of two in nanoseconds, so that the hand-computed values are exact
    /// in floating point.
    const RTT_A: SimTime = SimTime::from_nanos(1 << 20);
    const RTT_B: SimTime = SimTime::from_nanos(1 << 21);

    /// LIA with one subflow per `(cwnd, rtt)`, all established, in congestion avoidance.
    fn lia(subflows: &[(u64, SimTime)]) -> Lia {
        let mut cc = Lia::new(connection(subflows.len()));
        for (i, &(cwnd, rtt)) in subflows.iter().enumerate() {
            cc.set_established(i, true);
            set_window(&mut cc, i, cwnd, rtt);
        }
        cc
    }

    #[test]
    fn declaration_builds_with_the_initial_window() {
        let spec = CoupledSpec::new("lia", &[]).unwrap();
        let cc = spec.build(connection(3));
        assert_eq!((cc.name(), cc.subflows()), ("lia", 3));
        for i in 0..3 {
            assert_eq!((cc.cwnd(i), cc.ssthresh(i)), (10 * M, u64::MAX));
        }
    }

    #[test]
    fn worked_example_of_the_reference() {
        // Windows (10, 20) segments, RTTs (1, 2) units: cwnd/rtt² = (10, 5), Σ cwnd/rtt = 20,
        // cwnd_total = 30, so α = 30·10/20² = 0.75 and both subflows earn
        // min(0.75/30, 1/10) = min(0.75/30, 1/20) = 0.025 segment per acknowledged segment.
        let cc = lia(&[(10 * M, RTT_A), (20 * M, RTT_B)]);
        assert_eq!(cc.alpha(), 0.75);
        assert_eq!(cc.increase_per_segment(0), 0.025);
        assert_eq!(cc.increase_per_segment(1), 0.025);
        // So one segment per 40 acknowledged: the 40th ACK of subflow 0 steps its window.
        let mut cc = cc;
        for _ in 0..39 {
            cc.on_ack(0, &acked(M, RTT_A));
        }
        assert_eq!(cc.cwnd(0), 10 * M);
        cc.on_ack(0, &acked(M, RTT_A));
        assert_eq!((cc.cwnd(0), cc.cwnd(1)), (11 * M, 20 * M));
        // Delayed ACKs: an ACK for two segments counts two.
        let mut cc = lia(&[(10 * M, RTT_A), (20 * M, RTT_B)]);
        for _ in 0..20 {
            cc.on_ack(0, &acked(2 * M, RTT_A));
        }
        assert_eq!(cc.cwnd(0), 11 * M);
    }

    #[test]
    fn the_increase_is_capped_by_reno_on_a_subflow_with_a_small_window() {
        // Windows (2, 40) segments at equal RTTs: α = 42·40/42² = 40/42, so α/cwnd_total =
        // 40/1764 = 0.0227, below Reno's 1/2 on subflow 0 and 1/40 = 0.025 on subflow 1.
        let cc = lia(&[(2 * M, RTT_A), (40 * M, RTT_A)]);
        assert!((cc.increase_per_segment(0) - 40.0 / 1764.0).abs() < 1e-15);
        assert!((cc.increase_per_segment(1) - 40.0 / 1764.0).abs() < 1e-15);
        // RTTs (1, 8): cwnd/rtt² = (2, 0.625), Σ cwnd/rtt = 2 + 5 = 7, α = 42·2/49 = 1.714;
        // α/cwnd_total = 2/49 = 0.0408 ≥ 1/40: subflow 1 is capped at Reno's 1/40.
        let cc = lia(&[(2 * M, RTT_A), (40 * M, SimTime::from_nanos(1 << 23))]);
        assert_eq!(cc.increase_per_segment(1), 1.0 / 40.0);
        assert!((cc.increase_per_segment(0) - 2.0 / 49.0).abs() < 1e-15);
    }

    #[test]
    fn subflows_out_of_the_sums_are_left_out() {
        let pair = lia(&[(10 * M, RTT_A), (20 * M, RTT_B)]);
        // A third subflow not established, or established without an RTT sample, changes
        // nothing; established with a sample it joins the sums.
        let mut cc = Lia::new(connection(3));
        for (i, (cwnd, rtt)) in [(10 * M, RTT_A), (20 * M, RTT_B), (30 * M, RTT_A)]
            .into_iter()
            .enumerate()
        {
            set_window(&mut cc, i, cwnd, rtt);
        }
        cc.set_established(0, true);
        cc.set_established(1, true);
        assert_eq!(cc.increase_per_segment(0), pair.increase_per_segment(0));
        assert_eq!(cc.alpha(), pair.alpha());
        cc.set_established(2, true);
        assert!(cc.increase_per_segment(0) < pair.increase_per_segment(0));
        cc.set_established(2, false);
        assert_eq!(cc.increase_per_segment(0), pair.increase_per_segment(0));
        let mut fresh = Lia::new(connection(3));
        for (i, (cwnd, rtt)) in [(10 * M, RTT_A), (20 * M, RTT_B)].into_iter().enumerate() {
            fresh.set_established(i, true);
            set_window(&mut fresh, i, cwnd, rtt);
        }
        fresh.set_established(2, true);
        assert_eq!(fresh.increase_per_segment(0), pair.increase_per_segment(0));
        // A subflow without an RTT sample of its own increases as Reno.
        assert_eq!(fresh.increase_per_segment(2), 0.1);
    }

    #[test]
    fn one_subflow_is_reno_round_by_round() {
        let mut cc: Coupled = Lia::new(connection(1)).into();
        cc.set_established(0, true);
        let mut reno = Reno::new(1000, 10);
        let rtt = SimTime::from_millis(50);
        let mut now = SimTime::ZERO;
        for round in 0..40 {
            if round == 5 {
                cc.on_congestion_event(0, now, 2 * cc.cwnd(0) / 3);
                reno.on_congestion_event(now, 2 * reno.cwnd() / 3);
            }
            run_round(
                &mut SubflowController {
                    cc: &mut cc,
                    subflow: 0,
                },
                now,
                rtt,
                1000,
            );
            now = run_round(&mut reno, now, rtt, 1000);
            assert_eq!((cc.cwnd(0), cc.ssthresh(0)), (reno.cwnd(), reno.ssthresh()));
        }
        // Delayed ACKs of two segments and odd byte counts.
        for bytes in [2 * M, 2 * M, 2 * M + 1, 999, 3 * M, 7] {
            for _ in 0..30 {
                let sample = ack(now, bytes, rtt, 1000);
                cc.on_ack(0, &sample);
                reno.on_ack(&sample);
            }
            assert_eq!(cc.cwnd(0), reno.cwnd());
        }
    }

    proptest! {
        /// The threshold, with its comparisons and conversions written for speed, is the
        /// formula as first written (`f64::max`, `as f64`), bit for bit.
        #[test]
        fn the_threshold_is_the_formula_bit_for_bit(
            subflows in prop::collection::vec((2000u64..1 << 40, 1u64..1 << 34), 1..5),
        ) {
            let windows: Vec<(u64, SimTime)> = subflows
                .iter()
                .map(|&(cwnd, rtt)| (cwnd, SimTime::from_nanos(rtt)))
                .collect();
            let cc = lia(&windows);
            for i in 0..windows.len() {
                let own = windows[i].0 as f64;
                let (mut rates, mut best) = (0.0, 0.0f64);
                for &(cwnd, rtt) in &windows {
                    let rate = cwnd as f64 / rtt.as_nanos() as f64;
                    rates += rate;
                    best = best.max(rate / rtt.as_nanos() as f64);
                }
                let expected = if windows.len() < 2 {
                    own
                } else {
                    (rates * rates / best).max(own)
                };
                prop_assert_eq!(cc.threshold(i).to_bits(), expected.to_bits());
            }
        }

        #[test]
        fn one_subflow_is_reno_for_any_event_sequence(events in events()) {
            let mut cc: Coupled = Lia::new(connection(1)).into();
            check_against_reno(&mut cc, 1000, 10, &events)?;
        }

        #[test]
        fn window_invariants_hold(subflows in 1usize..4, events in events_with_penalties()) {
            let mut cc: Coupled = Lia::new(connection(subflows)).into();
            check_invariants(&mut cc, &events)?;
        }

        /// RFC 6356's cap: never more than Reno's `1/cwnd_i` on any subflow, and exactly that
        /// for a subflow alone in the sums.
        #[test]
        fn the_increase_never_exceeds_reno(
            subflows in proptest::collection::vec(
                (2u64..2000, 1u64..2_000_000, any::<bool>()),
                1..5,
            ),
        ) {
            let mut cc = Lia::new(connection(subflows.len()));
            for (i, &(segments, rtt_us, established)) in subflows.iter().enumerate() {
                set_window(&mut cc, i, segments * M, SimTime::from_micros(rtt_us));
                cc.set_established(i, established);
            }
            let coupled = subflows.iter().filter(|s| s.2).count();
            for (i, &(segments, _, established)) in subflows.iter().enumerate() {
                let reno = 1.0 / segments as f64;
                let increase = cc.increase_per_segment(i);
                prop_assert!(increase > 0.0);
                prop_assert!(increase <= reno * (1.0 + 1e-12), "{} > {}", increase, reno);
                if coupled <= 1 || !established {
                    prop_assert_eq!(increase, reno);
                }
            }
        }

        /// With equal RTTs the connection grows by at most one segment per round trip over all
        /// its subflows (reference L3): `Σ_i cwnd_i · increase_i ≤ 1`.
        #[test]
        fn equal_rtts_grow_at_most_one_segment_per_round_trip(
            windows in proptest::collection::vec(2u64..2000, 1..6),
            rtt_us in 1u64..2_000_000,
        ) {
            let rtt = SimTime::from_micros(rtt_us);
            let pairs: Vec<(u64, SimTime)> = windows.iter().map(|w| (w * M, rtt)).collect();
            let cc = lia(&pairs);
            let total: f64 = windows
                .iter()
                .enumerate()
                .map(|(i, w)| *w as f64 * cc.increase_per_segment(i))
                .sum();
            prop_assert!(total <= 1.0 + 1e-9, "{}", total);
        }
    }

    #[test]
    fn losses_and_timeouts_are_per_subflow() {
        let mut cc = lia(&[(10 * M, RTT_A), (20 * M, RTT_B)]);
        cc.on_congestion_event(0, SimTime::ZERO, 10 * M);
        assert_eq!((cc.cwnd(0), cc.ssthresh(0)), (5 * M, 5 * M));
        assert_eq!((cc.cwnd(1), cc.ssthresh(1)), (20 * M, 20 * M));
        cc.on_retransmission_timeout(1, SimTime::ZERO, 20 * M);
        assert_eq!((cc.cwnd(1), cc.ssthresh(1)), (M, 10 * M));
        // Slow start on subflow 1 is Reno's, whatever the coupling.
        cc.on_ack(1, &acked(M, RTT_B));
        assert_eq!(cc.cwnd(1), 2 * M);
        // Penalisation outside slow start halves both (at least 1 and 2 MSS).
        cc.penalise(0);
        assert_eq!((cc.cwnd(0), cc.ssthresh(0)), (2500, 2500));
        cc.penalise(0);
        assert_eq!((cc.cwnd(0), cc.ssthresh(0)), (1250, 2 * M));
    }
}
