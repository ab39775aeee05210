//! OLIA, the Opportunistic Linked Increases Algorithm: Khalili, Gast, Popovic and Le Boudec,
//! "MPTCP is not Pareto-optimal: performance issues and a possible solution", IEEE/ACM ToN
//! 21(5), 2013 (CoNEXT 2012), and draft-khalili-mptcp-congestion-control; the v0.9x Linux
//! implementation is `mptcp_olia.c`. Reference `multipath_cc.md` §2.2, whose source is the
//! kernel (the paper's text was not available to it, nor here: what follows is the kernel's
//! algorithm, which the reference checked against the paper's throughput argument).
//!
//! In congestion avoidance, each ACK on path r adds, windows in segments,
//!
//! `w_r += (w_r / rtt_r²) / (Σ_p w_p / rtt_p)²  +  α_r / w_r`.
//!
//! The first term is LIA-like coupling (with one path it is `1/w`, Reno); the second moves
//! window from the paths with the largest windows to the *best* paths that do not have them:
//! - `ℓ_r` is the number of bytes acknowledged on r between its last two losses, or since its
//!   last loss if that is more (`ℓ_r = max(ℓ1_r, ℓ2_r)`); a TCP on r would get a rate
//!   proportional to `√ℓ_r / rtt_r`, so the best paths, B, maximise `ℓ_r / rtt_r²`;
//! - M is the set of paths with the largest window;
//! - if B \ M is not empty, `α_r = 1/(n·|B \ M|)` for r in B \ M, `−1/(n·|M|)` for r in M, and 0
//!   otherwise; if it is empty, every `α_r = 0`. n is the number of paths.
//!
//! The window of a path in M can therefore *shrink* in congestion avoidance. A loss halves the
//! window of its path as Reno does.
//!
//! How it is computed (the shared arithmetic is in the `window` module):
//! - per acknowledged byte: one MSS per `T_r = 1 / ((W_r/rtt_r²)/(Σ_p W_p/rtt_p)² + α_r/W_r)`
//!   acknowledged bytes, windows `W` in bytes (the same increase, per byte instead of per
//!   segment); a negative `T_r` takes one MSS off per `|T_r|` bytes. The kernel adds its
//!   increment once per ACK to a counter scaled by 2¹⁰ and steps at ±1 segment, resetting the
//!   counter (losing the remainder); here the remainder is kept, and growth is per byte, not per
//!   ACK (reference §1.3: with delayed ACKs the kernel grows half as fast);
//! - a decrease leaves at least one MSS (the kernel's floor) and takes ssthresh down with the
//!   window. In the kernel, a window pushed below ssthresh is back in slow start at the next ACK
//!   (its `cwnd ≤ ssthresh` test), which undoes the decrease within a round trip; keeping the
//!   path in congestion avoidance is what the paper's model does;
//! - loss intervals are in bytes acknowledged on the path (its `snd_una`): `loss3` is the
//!   cumulative count at every ACK; at each congestion event or timeout, if `loss3 ≠ loss2`,
//!   `loss1 ← loss2, loss2 ← loss3`; `ℓ1 = loss3 − loss2`, `ℓ2 = loss2 − loss1`. The kernel also
//!   requires that no timeout retransmission be outstanding (`icsk_retransmits == 0`), which is
//!   not modelled; it refreshes `loss3` only on ACKs outside recovery, here on every ACK;
//! - B and M use exact comparisons, as the kernel: windows compared in bytes, `ℓ_r/rtt_r²`
//!   compared by cross-multiplication in integers (`ℓ_r·rtt_b² = ℓ_b·rtt_r²`), RTTs being the
//!   smoothed RTTs in nanoseconds;
//! - the sets, the sums and n cover the subflows that are established and have an RTT sample
//!   (reference §2.0). The kernel's n counts every established subflow, even one without an RTT
//!   sample (reference pitfall); here such a subflow is left out of n as well. A subflow alone
//!   in the set, or not in it itself, increases as Reno;
//! - the kernel uses ssthresh for a path in fast recovery instead of its inflated window; the
//!   senders here count the pipe and never inflate cwnd, so the window is used as it is;
//! - a congestion event sets `ssthresh = cwnd = max(FlightSize/2, 2·MSS)` on the path, a
//!   timeout cwnd to one MSS, both as [`Reno`](crate::transport::cc::Reno).
//!
//! With a single subflow, OLIA is Reno byte for byte (tested below).

use std::cmp::Ordering;

use super::per_subflow::CoupledAlgorithm;
use super::window::SubflowWindow;
use super::{CoupledKind, MultipathConnection};
use crate::registry::AlgorithmSpec;
use crate::time::SimTime;
use crate::transport::cc::window::PathWindow;
use crate::transport::cc::AckSample;

/// The registry declaration of OLIA: no parameters.
pub const SPEC: AlgorithmSpec<CoupledKind> = AlgorithmSpec {
    name: "olia",
    summary: "Opportunistic Linked Increases Algorithm (Khalili et al., IEEE/ACM ToN 2013)",
    params: &[],
    finish: None,
    build: |_, connection| Olia::new(connection).into(),
};

/// The acknowledged-byte counts at the last two losses of a path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct LossMarks {
    loss1: u64,
    loss2: u64,
}

/// OLIA over the subflows of one connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Olia {
    subflows: Vec<SubflowWindow>,
    marks: Vec<LossMarks>,
}

impl Olia {
    /// OLIA for `connection`: every subflow at the initial window, in slow start, not
    /// established.
    ///
    /// # Panics
    /// If the connection has no subflow or its MSS is zero.
    pub fn new(connection: MultipathConnection) -> Self {
        let subflows = SubflowWindow::for_connection("olia", connection);
        let marks = vec![LossMarks::default(); subflows.len()];
        Olia { subflows, marks }
    }

    /// `ℓ_r`: bytes acknowledged on `subflow` since its last loss, or between its last two
    /// losses if that is more.
    pub fn loss_interval(&self, subflow: usize) -> u64 {
        let LossMarks { loss1, loss2 } = self.marks[subflow];
        let loss3 = self.subflows[subflow].acked();
        loss3.saturating_sub(loss2).max(loss2 - loss1)
    }

    /// `α_r` of `subflow` (0 for a subflow out of the coupled sums).
    pub fn alpha(&self, subflow: usize) -> f64 {
        if !self.subflows[subflow].is_coupled() {
            return 0.0;
        }
        let members: Vec<usize> = (0..self.subflows.len())
            .filter(|&k| self.subflows[k].is_coupled())
            .collect();
        let largest = members
            .iter()
            .map(|&k| self.subflows[k].cwnd())
            .max()
            .unwrap_or(0);
        let best = members
            .iter()
            .copied()
            .reduce(|b, k| {
                if self.compare_paths(k, b) == Ordering::Less {
                    b
                } else {
                    k
                }
            })
            .expect("the subflow itself is a member");
        let in_m = |k: usize| self.subflows[k].cwnd() == largest;
        let in_b = |k: usize| self.compare_paths(k, best) == Ordering::Equal;
        let m = members.iter().filter(|&&k| in_m(k)).count();
        let collected = members.iter().filter(|&&k| in_b(k) && !in_m(k)).count();
        let n = members.len() as f64;
        if collected == 0 {
            0.0
        } else if in_b(subflow) && !in_m(subflow) {
            1.0 / (n * collected as f64)
        } else if in_m(subflow) {
            -1.0 / (n * m as f64)
        } else {
            0.0
        }
    }

    /// Segments of window that one acknowledged segment on `subflow` earns (or, if negative,
    /// costs) in congestion avoidance now: `(w_r/rtt_r²)/(Σ_p w_p/rtt_p)² + α_r/w_r`.
    pub fn increase_per_segment(&self, subflow: usize) -> f64 {
        self.subflows[subflow].mss() as f64 / self.threshold(subflow)
    }

    /// `ℓ_a/rtt_a²` against `ℓ_b/rtt_b²`, exactly (by cross-multiplication).
    fn compare_paths(&self, a: usize, b: usize) -> Ordering {
        let quality = |k: usize| {
            let rtt = u128::from(self.subflows[k].srtt().as_nanos());
            (u128::from(self.loss_interval(k)), rtt * rtt)
        };
        let (la, ra) = quality(a);
        let (lb, rb) = quality(b);
        match (la.checked_mul(rb), lb.checked_mul(ra)) {
            (Some(x), Some(y)) => x.cmp(&y),
            // Beyond 2¹²⁸ (petabytes over minutes of RTT): compare approximately.
            _ => (la as f64 / ra as f64)
                .partial_cmp(&(lb as f64 / rb as f64))
                .unwrap_or(Ordering::Equal),
        }
    }

    /// Bytes to acknowledge on `subflow` for one MSS more (negative: one MSS less).
    fn threshold(&self, subflow: usize) -> f64 {
        let own = &self.subflows[subflow];
        if !own.is_coupled() {
            return own.window();
        }
        let mut rates = 0.0;
        let mut members = 0;
        for w in self.subflows.iter().filter(|w| w.is_coupled()) {
            rates += w.rate();
            members += 1;
        }
        if members < 2 {
            return own.window();
        }
        let coupling = own.rate() / own.rtt() / (rates * rates);
        1.0 / (coupling + self.alpha(subflow) / own.window())
    }

    /// A loss on `subflow`: its loss intervals shift, unless nothing has been acknowledged since
    /// the previous one.
    fn record_loss(&mut self, subflow: usize) {
        let loss3 = self.subflows[subflow].acked();
        let marks = &mut self.marks[subflow];
        if loss3 != marks.loss2 {
            marks.loss1 = marks.loss2;
            marks.loss2 = loss3;
        }
    }
}

impl CoupledAlgorithm for Olia {
    const NAME: &'static str = "olia";
    type Subflow = SubflowWindow;

    fn subflow_states(&self) -> &[SubflowWindow] {
        &self.subflows
    }

    fn subflow_states_mut(&mut self) -> &mut [SubflowWindow] {
        &mut self.subflows
    }

    /// Slow start as Reno; in congestion avoidance
    /// `(w_r/rtt_r²)/(Σ_p w_p/rtt_p)² + α_r/w_r` segments per acknowledged segment.
    fn on_subflow_ack(&mut self, subflow: usize, sample: &AckSample) {
        if let Some(acked) = self.subflows[subflow].on_ack(sample) {
            let threshold = self.threshold(subflow);
            self.subflows[subflow].avoid(acked, threshold);
        }
    }

    /// A loss shifts the path's loss intervals `ℓ_r`, then Reno's reduction.
    fn on_subflow_loss(&mut self, subflow: usize, _now: SimTime, bytes_in_flight: u64) {
        self.record_loss(subflow);
        self.subflows[subflow].on_congestion_event(bytes_in_flight);
    }

    /// A timeout is a loss for `ℓ_r` too, then RFC 5681 §3.1.
    fn on_subflow_timeout(&mut self, subflow: usize, _now: SimTime, bytes_in_flight: u64) {
        self.record_loss(subflow);
        self.subflows[subflow].on_retransmission_timeout(bytes_in_flight);
    }
}

#[cfg(test)]
mod tests {
    use super::super::window::testing::{
        acked, check_against_reno, check_invariants, connection, events, events_with_penalties,
        set_window,
    };
    use super::super::MultipathCongestionControl;
    use super::super::{Coupled, CoupledSpec};
    use super::*;
    use proptest::prelude::*;

    const M: u64 = 1000;
    /// A power of two in nanoseconds, so that the hand-computed values are exact.
    const RTT: SimTime = SimTime::from_nanos(1 << 20);

    /// Acknowledges `bytes` on `subflow` without growing it (the sender not cwnd-limited),
    /// which lengthens its loss interval; its RTT stays what it was ([`RTT`] if none yet).
    fn acknowledge(cc: &mut Olia, subflow: usize, bytes: u64) {
        let rtt = match cc.subflows[subflow].srtt() {
            SimTime::ZERO => RTT,
            rtt => rtt,
        };
        let mut sample = acked(bytes, rtt);
        sample.is_cwnd_limited = false;
        cc.on_ack(subflow, &sample);
    }

    /// OLIA with one subflow per `(cwnd, ℓ)` at the same RTT, all established, in congestion
    /// avoidance.
    fn olia(subflows: &[(u64, u64)]) -> Olia {
        let mut cc = Olia::new(connection(subflows.len()));
        for (i, &(cwnd, interval)) in subflows.iter().enumerate() {
            cc.set_established(i, true);
            set_window(&mut cc, i, cwnd, RTT);
            acknowledge(&mut cc, i, interval);
            assert_eq!(cc.loss_interval(i), interval);
        }
        cc
    }

    #[test]
    fn declaration_builds_with_the_initial_window() {
        let cc = CoupledSpec::new("olia", &[]).unwrap().build(connection(2));
        assert_eq!(
            (cc.name(), cc.cwnd(0), cc.cwnd(1)),
            ("olia", 10 * M, 10 * M)
        );
    }

    #[test]
    fn worked_example_moves_window_to_the_best_path() {
        // Windows (10, 20) segments, equal RTTs, ℓ = (50 000, 20 000) bytes: B = {0} (the
        // larger ℓ/rtt²), M = {1} (the larger window), B \ M = {0}, n = 2, so α = (+1/2, −1/2).
        let cc = olia(&[(10 * M, 50_000), (20 * M, 20_000)]);
        assert_eq!((cc.alpha(0), cc.alpha(1)), (0.5, -0.5));
        // Per acknowledged segment, with Σ w/rtt = 30/rtt:
        // subflow 0: (10/rtt²)/(30/rtt)² + 0.5/10 = 1/90 + 1/20 = 11/180 = 0.0611;
        // subflow 1: (20/rtt²)/(30/rtt)² − 0.5/20 = 1/45 − 1/40 = −1/360.
        assert!((cc.increase_per_segment(0) - 11.0 / 180.0).abs() < 1e-15);
        assert!((cc.increase_per_segment(1) + 1.0 / 360.0).abs() < 1e-15);
        // Subflow 0 steps after 180 000/11 = 16 363.6 acknowledged bytes: the 17th ACK.
        let mut cc = cc;
        for _ in 0..16 {
            cc.on_ack(0, &acked(M, RTT));
        }
        assert_eq!(cc.cwnd(0), 10 * M);
        cc.on_ack(0, &acked(M, RTT));
        assert_eq!(cc.cwnd(0), 11 * M);
    }

    #[test]
    fn the_largest_window_shrinks_when_it_is_not_the_best_path() {
        // As above, with ℓ_0 large enough that subflow 0 stays the best path while subflow 1
        // acknowledges: subflow 1 loses one segment per 360 acknowledged.
        let mut cc = olia(&[(10 * M, 10_000_000), (20 * M, 20_000)]);
        for _ in 0..359 {
            cc.on_ack(1, &acked(M, RTT));
        }
        assert_eq!(cc.cwnd(1), 20 * M);
        cc.on_ack(1, &acked(M, RTT));
        cc.on_ack(1, &acked(M, RTT));
        // Down one segment, ssthresh following: still in congestion avoidance.
        assert_eq!((cc.cwnd(1), cc.ssthresh(1)), (19 * M, 19 * M));
    }

    #[test]
    fn identical_paths_share_one_segment_per_round_trip() {
        // Same windows, same ℓ: B = M = both, α = 0; each earns (10/rtt²)/(20/rtt)² = 1/40 per
        // segment, 1/(n²·w): over a round trip (10 ACKs each) the pair grows by 1/2 segment.
        let cc = olia(&[(10 * M, 30_000), (10 * M, 30_000)]);
        assert_eq!((cc.alpha(0), cc.alpha(1)), (0.0, 0.0));
        assert!((cc.increase_per_segment(0) - 0.025).abs() < 1e-15);
        assert!((cc.increase_per_segment(1) - 0.025).abs() < 1e-15);
        // The best path having the largest window: B \ M is empty, α = 0.
        let cc = olia(&[(20 * M, 30_000), (10 * M, 10_000)]);
        assert_eq!((cc.alpha(0), cc.alpha(1)), (0.0, 0.0));
        // Three paths: B = {1, 2} (tied), M = {0}: α = (−1/3, 1/6, 1/6).
        let cc = olia(&[(20 * M, 10_000), (10 * M, 40_000), (5 * M, 40_000)]);
        let alphas: Vec<f64> = (0..3).map(|i| cc.alpha(i)).collect();
        assert_eq!(alphas, [-1.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0]);
    }

    #[test]
    fn longer_rtts_weigh_against_a_path() {
        // ℓ/rtt²: subflow 1 has 4 times the interval but twice the RTT: a tie, B = {0, 1}.
        let mut cc = olia(&[(10 * M, 10_000), (20 * M, 0)]);
        set_window(&mut cc, 1, 20 * M, SimTime::from_nanos(1 << 21));
        acknowledge(&mut cc, 1, 40_000);
        // B = {0, 1}, M = {1}: B \ M = {0}.
        assert_eq!((cc.alpha(0), cc.alpha(1)), (0.5, -0.5));
        acknowledge(&mut cc, 1, 1);
        // Now subflow 1 alone is best, and has the largest window: α = 0.
        assert_eq!((cc.alpha(0), cc.alpha(1)), (0.0, 0.0));
    }

    #[test]
    fn loss_intervals() {
        let mut cc = Olia::new(connection(1));
        cc.set_established(0, true);
        acknowledge(&mut cc, 0, 30_000);
        assert_eq!(cc.loss_interval(0), 30_000);
        cc.on_congestion_event(0, SimTime::ZERO, 20 * M);
        acknowledge(&mut cc, 0, 5_000);
        // max(5000 since the loss, 30 000 before it).
        assert_eq!(cc.loss_interval(0), 30_000);
        cc.on_congestion_event(0, SimTime::ZERO, 20 * M);
        // A second loss with nothing acknowledged in between is the same loss.
        cc.on_retransmission_timeout(0, SimTime::ZERO, 20 * M);
        acknowledge(&mut cc, 0, 8_000);
        assert_eq!(cc.loss_interval(0), 8_000);
        cc.on_retransmission_timeout(0, SimTime::ZERO, 20 * M);
        assert_eq!(cc.loss_interval(0), 8_000);
    }

    #[test]
    fn subflows_out_of_the_sums_are_left_out() {
        let pair = olia(&[(10 * M, 50_000), (20 * M, 20_000)]);
        let mut cc = Olia::new(connection(3));
        for (i, (cwnd, interval)) in [(10 * M, 50_000), (20 * M, 20_000), (40 * M, 90_000)]
            .into_iter()
            .enumerate()
        {
            set_window(&mut cc, i, cwnd, RTT);
            acknowledge(&mut cc, i, interval);
        }
        cc.set_established(0, true);
        cc.set_established(1, true);
        for i in 0..2 {
            assert_eq!(cc.alpha(i), pair.alpha(i));
            assert_eq!(cc.increase_per_segment(i), pair.increase_per_segment(i));
        }
        assert_eq!(cc.alpha(2), 0.0);
        cc.set_established(2, true);
        // Subflow 2 is now both the best path and the largest window: α = 0 for all.
        assert_eq!((cc.alpha(0), cc.alpha(1), cc.alpha(2)), (0.0, 0.0, 0.0));
    }

    proptest! {
        #[test]
        fn one_subflow_is_reno_for_any_event_sequence(events in events()) {
            let mut cc: Coupled = Olia::new(connection(1)).into();
            check_against_reno(&mut cc, 1000, 10, &events)?;
        }

        #[test]
        fn window_invariants_hold(subflows in 1usize..4, events in events_with_penalties()) {
            let mut cc: Coupled = Olia::new(connection(subflows)).into();
            check_invariants(&mut cc, &events)?;
        }

        /// The α of the paths in the sums add up to zero: OLIA only moves window between them.
        #[test]
        fn alphas_sum_to_zero(
            subflows in proptest::collection::vec((2u64..100, 0u64..100, 1u64..4), 1..6),
        ) {
            let mut cc = Olia::new(connection(subflows.len()));
            for (i, &(segments, interval, rtt)) in subflows.iter().enumerate() {
                cc.set_established(i, true);
                set_window(&mut cc, i, segments * M, SimTime::from_nanos(rtt << 20));
                acknowledge(&mut cc, i, interval * M);
            }
            let sum: f64 = (0..subflows.len()).map(|i| cc.alpha(i)).sum();
            prop_assert!(sum.abs() < 1e-12, "{}", sum);
        }
    }
}
