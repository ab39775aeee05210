//! MPFAST, multipath FAST TCP: Trần, Lê, Trần and Huỳnh, "Một thiết kế Multipath TCP dựa trên
//! độ trễ" (a delay-based Multipath TCP design), §III.B, eq. (5) and (10) (the paper in
//! `papers/mpfast-multipath-fast-tcp-vi.txt`); reference `multipath_cc.md` §2.6.
//!
//! Each subflow r of source s runs FAST (see [`crate::transport::cc::fast`], whose window
//! machinery it shares), aiming at its rate share of the source's α:
//!
//! `w_{s,r} ← γ·( d_{s,r}·w_{s,r}/(d_{s,r} + q_{s,r}) + θ_{s,r}·α_s ) + (1 − γ)·w_{s,r}`,
//!
//! `θ_{s,r} = x_{s,r}/y_s`, `x_{s,r} = w_{s,r}/RTT_{s,r}`, `y_s = Σ_r x_{s,r}` (eq. (10)),
//!
//! `d` being the subflow's baseRTT and `d + q` its smoothed RTT. At the fixed point every path
//! that carries traffic sees the same queueing delay `α_s/y_s` and the source keeps `α_s`
//! segments queued in all, as one FAST flow with that α (reference §2.6); a path whose queueing
//! delay stays higher is driven to the floor. The paper gives no implementation; what is not
//! in it is chosen here and said below.
//!
//! Choices:
//! - everything FAST does, per subflow, as [`crate::transport::cc::fast`] documents it: the
//!   update once per round trip of the subflow (or every `update_period`), `RTT` the smoothed RTT
//!   ([`AckSample::srtt`], the paper's EWMA `New = a·Old + (1 − a)·Newest` with `a = 7/8`),
//!   baseRTT the smallest sample, FAST's `min(2w, ·)` cap (the paper's eq. (5) has none; the
//!   reference suggests keeping it) and a floor of 2 MSS so that an unused path keeps probing,
//!   the fraction of a byte carried between updates, slow start until the subflow's backlog
//!   reaches its share `θ_r·α_s`, Reno's reductions on the subflow;
//! - θ uses, at the instant of the update, every subflow's current `cwnd/srtt`, over the
//!   subflows that are established and have an RTT sample (reference §2.0), the updating
//!   subflow always included: the θ of the subflows in the sums add up to one at every instant
//!   (reference MF5). A subflow without an RTT sample cannot update (it has no queueing delay)
//!   and is in nobody's sum;
//! - the paper's `α_i(w, q) = α_i·w` when `q = 0` (its eq. (2), multiplicative increase while
//!   nothing queues) as FAST has it, with `θ_r·α_s` for α_i: off by default (slow start, then
//!   the rule); with `mi_threshold` set, an update of a subflow whose queueing delay is below it
//!   takes `θ_r·α_s·w_r` (α in segments), which doubles the window while `γ·θ_r·α_s ≥ 1`.
//!
//! With one subflow, `θ = 1` and MPFAST is FAST (tested below).

use super::per_subflow::{CoupledAlgorithm, SubflowState};
use super::{CoupledKind, MultipathConnection};
use crate::registry::{AlgorithmSpec, Params};
use crate::time::SimTime;
use crate::transport::cc::fast::{
    alpha_param, FastWindow, GAMMA_PARAM, MI_THRESHOLD_PARAM, UPDATE_PERIOD_PARAM,
};
use crate::transport::cc::window::PathWindow;
use crate::transport::cc::AckSample;

/// The registry declaration of MPFAST; the defaults are FAST's.
pub const SPEC: AlgorithmSpec<CoupledKind> = AlgorithmSpec {
    name: "mpfast",
    summary: "multipath FAST: each subflow keeps its rate share of alpha queued (MPFAST paper)",
    params: &[
        alpha_param("segments the connection aims to keep queued, shared among its subflows"),
        GAMMA_PARAM,
        UPDATE_PERIOD_PARAM,
        MI_THRESHOLD_PARAM,
    ],
    finish: None,
    build: |params, connection| Mpfast::new(connection, MpfastParams::from(params)).into(),
};

/// MPFAST parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MpfastParams {
    /// Segments the connection aims to keep queued (α_s).
    pub alpha: f64,
    /// Gain of each update, in (0, 1].
    pub gamma: f64,
    /// Time between updates of a subflow; `None` for once per round trip of that subflow.
    pub update_period: Option<SimTime>,
    /// Queueing delay below which a subflow's update increases multiplicatively; `None`: never.
    pub mi_threshold: Option<SimTime>,
}

impl Default for MpfastParams {
    /// FAST's: α = 10 segments, γ = 0.5, once per round trip.
    fn default() -> Self {
        MpfastParams {
            alpha: 10.0,
            gamma: 0.5,
            update_period: None,
            mi_threshold: None,
        }
    }
}

impl From<&Params> for MpfastParams {
    fn from(p: &Params) -> Self {
        MpfastParams {
            alpha: p.number("alpha"),
            gamma: p.number("gamma"),
            update_period: p.opt_duration("update_period"),
            mi_threshold: p.opt_duration("mi_threshold"),
        }
    }
}

/// One MPFAST subflow.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Subflow {
    window: FastWindow,
    established: bool,
}

impl Subflow {
    fn is_coupled(&self) -> bool {
        self.established && self.window.srtt() > SimTime::ZERO
    }

    fn rate(&self) -> f64 {
        self.window.cwnd() as f64 / self.window.srtt().as_nanos() as f64
    }
}

impl SubflowState for Subflow {
    type Window = FastWindow;

    fn window(&self) -> &FastWindow {
        &self.window
    }

    fn window_mut(&mut self) -> &mut FastWindow {
        &mut self.window
    }

    fn set_established(&mut self, established: bool) {
        self.established = established;
    }
}

/// MPFAST over the subflows of one connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Mpfast {
    alpha: f64,
    subflows: Vec<Subflow>,
}

impl Mpfast {
    /// MPFAST for `connection`: every subflow at the initial window, in slow start, not
    /// established.
    ///
    /// # Panics
    /// If the connection has no subflow, its MSS is zero, `alpha` is not positive and finite,
    /// `gamma` is not in (0, 1] or the update period is zero.
    pub fn new(connection: MultipathConnection, params: MpfastParams) -> Self {
        assert!(
            params.alpha.is_finite() && params.alpha > 0.0,
            "mpfast: alpha must be positive, got {}",
            params.alpha
        );
        assert!(
            connection.subflows > 0,
            "mpfast: a connection needs at least one subflow"
        );
        let subflow = Subflow {
            window: FastWindow::new(
                "mpfast",
                connection.mss,
                connection.initial_window,
                params.gamma,
                params.update_period,
            )
            .with_mi_threshold(params.mi_threshold),
            established: false,
        };
        Mpfast {
            alpha: params.alpha,
            subflows: vec![subflow; connection.subflows],
        }
    }

    /// `θ_r`: `subflow`'s share of the connection's rate now, over the subflows in the coupled
    /// sums and itself (1 before its first RTT sample).
    pub fn share(&self, subflow: usize) -> f64 {
        let own = &self.subflows[subflow];
        if own.window.srtt() == SimTime::ZERO {
            return 1.0;
        }
        let others: f64 = self
            .subflows
            .iter()
            .enumerate()
            .filter(|&(k, s)| k != subflow && s.is_coupled())
            .map(|(_, s)| s.rate())
            .sum();
        own.rate() / (own.rate() + others)
    }

    /// The window of `subflow` in bytes with the fraction of a byte the last update left.
    pub fn exact_cwnd(&self, subflow: usize) -> f64 {
        self.subflows[subflow].window.exact_cwnd()
    }
}

impl CoupledAlgorithm for Mpfast {
    const NAME: &'static str = "mpfast";
    type Subflow = Subflow;

    fn subflow_states(&self) -> &[Subflow] {
        &self.subflows
    }

    fn subflow_states_mut(&mut self) -> &mut [Subflow] {
        &mut self.subflows
    }

    /// FAST's update with `θ_{s,r}·α_s` for α (the paper's eq. (5) and (10)); losses and
    /// timeouts are Reno's on the subflow alone.
    fn on_subflow_ack(&mut self, subflow: usize, sample: &AckSample) {
        if self.subflows[subflow].window.on_ack(sample) {
            let window = &self.subflows[subflow].window;
            let alpha_bytes = self.share(subflow) * self.alpha * window.mss() as f64;
            self.subflows[subflow]
                .window
                .update(sample.now, alpha_bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::window::testing::{
        acked, check_invariants, connection, events_with_penalties, set_window,
    };
    use super::super::MultipathCongestionControl;
    use super::super::{Coupled, CoupledSpec, SubflowController};
    use super::*;
    use crate::transport::cc::vegas::testing::Clocked;
    use crate::transport::cc::{CongestionControl, Fast, FastParams};
    use proptest::prelude::*;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;
    const BASE: SimTime = SimTime::from_millis(100);
    const RTT_110: SimTime = SimTime::from_millis(110);
    const RTT_120: SimTime = SimTime::from_millis(120);

    fn mpfast(cc: &Coupled) -> &Mpfast {
        match cc {
            Coupled::Mpfast(m) => m,
            _ => unreachable!(),
        }
    }

    /// Learns `rtt` on `subflow` by an ACK that does not count (the sender not cwnd-limited).
    fn learn(cc: &mut impl MultipathCongestionControl, subflow: usize, rtt: SimTime) {
        let mut sample = acked(M, rtt);
        sample.is_cwnd_limited = false;
        cc.on_ack(subflow, &sample);
    }

    #[test]
    fn declaration() {
        let cc = CoupledSpec::new("mpfast", &[])
            .unwrap()
            .build(connection(2));
        assert_eq!((cc.name(), cc.cwnd(1)), ("mpfast", 10 * M));
        let spec = CoupledSpec::new("mpfast", &[]).unwrap();
        assert_eq!(MpfastParams::from(spec.params()), MpfastParams::default());
    }

    #[test]
    fn one_subflow_is_fast() {
        one_subflow_is_fast_with(None);
    }

    #[test]
    fn one_subflow_is_fast_with_multiplicative_increase() {
        one_subflow_is_fast_with(Some(SimTime::from_millis(1)));
    }

    /// MPFAST with one subflow and FAST, with `mi_threshold`, through slow start, the rule,
    /// a loss, a timeout and (rounds 100 to 103) an empty queue.
    fn one_subflow_is_fast_with(mi_threshold: Option<SimTime>) {
        let params = MpfastParams {
            mi_threshold,
            ..MpfastParams::default()
        };
        let mut cc: Coupled = Mpfast::new(connection(1), params).into();
        cc.set_established(0, true);
        let fast_params = FastParams {
            mi_threshold,
            ..FastParams::default()
        };
        let mut fast = Fast::new(MSS, 10, fast_params);
        let mut ours = Clocked::new(MSS);
        let mut theirs = Clocked::new(MSS);
        let mut doubled = false;
        for round in 0..250 {
            let rtt = match round {
                0 | 100..=103 => BASE,
                1..=59 => RTT_110,
                _ => RTT_120,
            };
            let before = fast.cwnd();
            if round == 40 {
                let flight = ours.snd_nxt - ours.snd_una;
                cc.on_congestion_event(0, ours.now, flight);
                fast.on_congestion_event(theirs.now, flight);
            }
            if round == 80 {
                let flight = ours.snd_nxt - ours.snd_una;
                cc.on_retransmission_timeout(0, ours.now, flight);
                fast.on_retransmission_timeout(theirs.now, flight);
                ours.snd_nxt = ours.snd_una;
                theirs.snd_nxt = theirs.snd_una;
            }
            ours.round(
                &mut SubflowController {
                    cc: &mut cc,
                    subflow: 0,
                },
                rtt,
            );
            theirs.round(&mut fast, rtt);
            assert_eq!(
                (cc.cwnd(0), cc.ssthresh(0)),
                (fast.cwnd(), fast.ssthresh()),
                "round {round}"
            );
            assert_eq!(mpfast(&cc).exact_cwnd(0), fast.exact_cwnd());
            doubled |= (100..=103).contains(&round) && fast.cwnd() >= 2 * before;
        }
        // The empty queue doubles the window exactly when multiplicative increase is on.
        assert_eq!(doubled, mi_threshold.is_some());
        if mi_threshold.is_none() {
            // Converged to α·RTT/q = 10·120/20 = 60 segments.
            assert!(cc.cwnd(0).abs_diff(60_000) <= 1, "{}", cc.cwnd(0));
        }
    }

    /// Two subflows in congestion avoidance at 20 and 60 segments, baseRTT 100 ms, smoothed
    /// RTT 110 ms.
    fn pair(subflows: usize) -> Mpfast {
        let mut cc = Mpfast::new(connection(subflows), MpfastParams::default());
        for (i, segments) in [20, 60].into_iter().enumerate() {
            cc.set_established(i, true);
            learn(&mut cc, i, BASE);
            cc.on_congestion_event(i, SimTime::ZERO, 2 * segments * M);
            learn(&mut cc, i, RTT_110);
            assert_eq!(cc.cwnd(i), segments * M);
        }
        cc
    }

    #[test]
    fn each_subflow_aims_at_its_rate_share_of_alpha() {
        let mut cc = pair(2);
        // θ = (20/110)/(20/110 + 60/110) = 1/4 and 3/4.
        assert!((cc.share(0) - 0.25).abs() < 1e-15);
        assert!((cc.share(1) - 0.75).abs() < 1e-15);
        // An update on subflow 0 (the first ACK of a round): aim at θ·α = 2.5 segments,
        // w = 0.5·20 000 + 0.5·(20 000·100/110 + 2500) = 10 000 + 10 340.909 = 20 340.909.
        cc.on_ack(0, &acked(M, RTT_110));
        assert_eq!(cc.cwnd(0), 20_340);
        assert!((cc.exact_cwnd(0) - 20_340.909_090_909).abs() < 1e-6);
        assert_eq!(cc.cwnd(1), 60 * M);
    }

    #[test]
    fn subflows_out_of_the_sums_are_left_out() {
        let mut two = pair(2);
        let mut three = pair(3);
        // A third subflow with an RTT sample but not established, at a large window.
        learn(&mut three, 2, RTT_110);
        three.on_congestion_event(2, SimTime::ZERO, 200 * M);
        assert_eq!(three.share(0), two.share(0));
        two.on_ack(0, &acked(M, RTT_110));
        three.on_ack(0, &acked(M, RTT_110));
        assert_eq!(three.exact_cwnd(0), two.exact_cwnd(0));
        three.set_established(2, true);
        assert!(three.share(0) < two.share(0));
        // A subflow without an RTT sample counts for nobody and aims at all of α.
        let fresh = Mpfast::new(connection(2), MpfastParams::default());
        assert_eq!(fresh.share(0), 1.0);
    }

    #[test]
    fn the_connection_keeps_alpha_queued_when_both_paths_see_the_same_delay() {
        // Both paths: baseRTT 100 ms, RTT 110 ms. Any split with Σ w·q/RTT = α is a fixed
        // point: the windows add up to α·RTT/q = 110 segments.
        let mut cc: Coupled = Mpfast::new(connection(2), MpfastParams::default()).into();
        let mut senders = [Clocked::new(MSS), Clocked::new(MSS)];
        for i in 0..2 {
            cc.set_established(i, true);
        }
        for round in 0..600 {
            let rtt = if round == 0 { BASE } else { RTT_110 };
            for (i, sender) in senders.iter_mut().enumerate() {
                sender.round(
                    &mut SubflowController {
                        cc: &mut cc,
                        subflow: i,
                    },
                    rtt,
                );
            }
        }
        let total = mpfast(&cc).exact_cwnd(0) + mpfast(&cc).exact_cwnd(1);
        assert!((total - 110_000.0).abs() < 5.0, "{total}");
        assert!(cc.cwnd(0) > 2 * M && cc.cwnd(1) > 2 * M);
    }

    #[test]
    fn a_path_with_more_queueing_is_driven_to_the_floor() {
        // Path 0: q = 10 ms (RTT 110), path 1: q = 20 ms (RTT 120). Path 1 cannot reach the
        // common queueing delay and falls to 2 segments; path 0 then keeps θ_0·α queued:
        // w_0·10/110 = 10 000·x_0/(x_0 + x_1), x_1 = 2000/120 bytes/ms, so
        // w_0/110 + 2000/120 = 1000 and w_0 = 110·(1000 − 16.667) = 108 166.7 bytes.
        let mut cc: Coupled = Mpfast::new(connection(2), MpfastParams::default()).into();
        let mut senders = [Clocked::new(MSS), Clocked::new(MSS)];
        for i in 0..2 {
            cc.set_established(i, true);
        }
        for round in 0..1500 {
            for (i, sender) in senders.iter_mut().enumerate() {
                let rtt = match (round, i) {
                    (0, _) => BASE,
                    (_, 0) => RTT_110,
                    _ => RTT_120,
                };
                sender.round(
                    &mut SubflowController {
                        cc: &mut cc,
                        subflow: i,
                    },
                    rtt,
                );
            }
        }
        assert_eq!(cc.cwnd(1), 2 * M);
        let w0 = mpfast(&cc).exact_cwnd(0);
        assert!((w0 - 108_166.67).abs() < 2.0, "{w0}");
    }

    proptest! {
        /// The shares of the subflows in the sums add up to one (reference MF5).
        #[test]
        fn shares_sum_to_one(
            subflows in proptest::collection::vec(
                (2u64..1000, 1u64..1_000_000, any::<bool>()),
                1..6,
            ),
        ) {
            let mut cc = Mpfast::new(connection(subflows.len()), MpfastParams::default());
            for (i, &(segments, rtt_us, established)) in subflows.iter().enumerate() {
                set_window(&mut cc, i, segments * M, SimTime::from_micros(rtt_us));
                cc.set_established(i, established);
            }
            let shares: Vec<f64> = (0..subflows.len())
                .filter(|&i| subflows[i].2)
                .map(|i| cc.share(i))
                .collect();
            if !shares.is_empty() {
                prop_assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            }
            prop_assert!((0..subflows.len()).all(|i| cc.share(i) > 0.0 && cc.share(i) <= 1.0));
        }

        #[test]
        fn window_invariants_hold(subflows in 1usize..4, events in events_with_penalties()) {
            let mut cc: Coupled = Mpfast::new(connection(subflows), MpfastParams::default()).into();
            check_invariants(&mut cc, &events)?;
        }
    }

    #[test]
    fn losses_are_reno_on_the_subflow() {
        let mut cc = pair(2);
        cc.on_congestion_event(1, SimTime::ZERO, 30 * M);
        assert_eq!((cc.cwnd(1), cc.ssthresh(1)), (15 * M, 15 * M));
        cc.on_retransmission_timeout(1, SimTime::ZERO, 30 * M);
        assert_eq!((cc.cwnd(1), cc.ssthresh(1)), (M, 15 * M));
        assert_eq!(cc.cwnd(0), 20 * M);
        cc.penalise(0);
        assert_eq!((cc.cwnd(0), cc.ssthresh(0)), (10 * M, 10 * M));
        cc.on_recovery_exit(1, SimTime::ZERO);
        assert_eq!(cc.cwnd(1), M);
    }
}
