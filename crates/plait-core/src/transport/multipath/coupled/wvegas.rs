//! wVegas, weighted Vegas: Cao, Xu and Fu, "Delay-based congestion control for multipath TCP",
//! IEEE ICNP 2012; the v0.9x Linux implementation is `mptcp_wvegas.c`. Reference
//! `multipath_cc.md` §2.4.
//!
//! Each subflow runs Vegas (see [`crate::transport::cc::vegas`], whose window machinery it
//! shares) with its own target backlog `α_r`, and the connection shares a total backlog
//! `total_alpha` among its subflows in proportion to their rates:
//!
//! - at the end of each round of subflow r (once per round trip, with at least three RTT samples;
//!   fewer: Reno for that ACK), `RTT_r` is the **mean** of the round's samples (Vegas uses the
//!   smallest), `Diff_r = cwnd_r·(RTT_r − baseRTT_r)/RTT_r` in segments;
//! - slow start ends as Vegas's, when `Diff_r > γ`;
//! - in congestion avoidance: if `Diff_r ≥ α_r`, the weight is refreshed,
//!   `weight_r = x_r / Σ_k x_k` with `x = cwnd/RTT`, and `α_r = max(2, weight_r·total_alpha)`;
//!   then one segment less if `Diff_r > α_r`, one more if `Diff_r < α_r` (a single threshold: no
//!   dead band as Vegas's [α, β]);
//! - **queue drain**: with `q = RTT_r − baseRTT_r` and `q_min` the smallest queueing delay since
//!   the last drain **of the rounds in which the subflow kept its target backlog** (`Diff_r ≥ α_r`,
//!   α as just refreshed), if such a round has `q ≥ 2·q_min` the window is cut to
//!   `cwnd·baseRTT/(2·RTT)` and `q_min` forgotten (see the first choice below).
//!
//! At the equilibrium each subflow keeps about `α_r` segments queued, and the connection about
//! `total_alpha` (reference W1, for at most five subflows since each `α_r ≥ 2`). At a bottleneck
//! shared with a single-path wVegas flow (α = total_alpha) every flow sees the same queueing
//! delay `q` and sends at `x = Diff/q`, so the connection gets `Σ α_r / q = total_alpha / q`,
//! the single flow's rate: the paper's fairness claim (reference §6 T2, tested in
//! `tests/wvegas.rs`).
//!
//! Choices:
//! - **which rounds set `q_min`.** The kernel takes `q_min` over every congestion-avoidance round
//!   since the last drain. A queue that builds up from empty then drains the window as soon as its
//!   delay doubles from its first, smallest value: in a simulator without jitter that value is a
//!   fraction of one packet's transmission time (about 0.6 ms at 20 Mb/s), so the drain fired when
//!   about two packets were queued, no subflow ever reached its α (so α was never refreshed from
//!   the weights), and every subflow behaved as a separate flow: a two-subflow connection took
//!   **2.02 times** a single wVegas flow's goodput at a shared 20 Mb/s bottleneck (10 seeds,
//!   1.95-2.12), and a wVegas flow alone kept 0.86 packets queued and used 77 % of the link.
//!   Here `q_min` is the queueing delay at the subflow's target, so the drain answers a queue
//!   that doubles beyond the equilibrium (for instance when flows join later, whose baseRTT
//!   includes the others' backlog), not the approach to it (our reading; the reference gives the
//!   rule, not its purpose). Measured (same scenario, 10 seeds of 120 s): ratio 0.990 ± 0.037,
//!   and a flow alone keeps 10.07 packets queued and uses 100 % of the link; a single flow that
//!   joins 20 s after the connection gets its share (ratio 1.01-1.03 over 3 seeds) where,
//!   without any drain, it takes 1.4 to 1.9 times the connection's goodput;
//! - **the drain in a jitter-free network** (reference §2.4 pitfall (a)): the kernel keeps
//!   `q_min = 0` as "unset" and tests `q ≥ 2·q_min`, so a round whose mean RTT equals baseRTT
//!   exactly (`q = 0`: a path that queues nothing, which a simulator produces and a kernel rarely
//!   sees) *halves the window every round trip*. Here a round with `q = 0` neither drains nor
//!   sets `q_min`: with no queue there is nothing to drain, and the subflow, seeing
//!   `Diff = 0 < α_r`, grows by one segment per round trip as Vegas would;
//! - the weights use every subflow's current `cwnd/srtt` ([`AckSample::srtt`]) over the subflows
//!   that are established and have an RTT sample (reference §2.0), the subflow itself always
//!   included, so they sum to one. The kernel uses each subflow's rate as of its own last refresh
//!   (`cwnd` over its round's mean RTT), counting only subflows with samples in their round in
//!   progress, so that its weights can sum above one (reference pitfall (b));
//! - `α_r` is the real `max(2, weight_r·total_alpha)` and `Diff_r` is not truncated: the kernel
//!   floors both to whole segments (its reference W2 gives α = (7, 2) for rates 3:1 where the
//!   real values are (7.5, 2.5)); its truncated `Diff` against a whole α also leaves a dead band
//!   of one segment that the real comparison has not;
//! - RTT samples are taken as they come (the kernel adds 1 µs to each);
//! - `α_r` starts at `initial_alpha` and the weight at 1; both, and `q_min`, are reset at every
//!   loss event and when recovery ends (the kernel re-initialises them whenever a subflow returns
//!   to the Open state). Losses are Reno's on the subflow, as is the timeout;
//! - the drain leaves ssthresh alone: as in the kernel, a window cut below ssthresh slow-starts
//!   back until `Diff > γ` again; a one-segment decrease takes ssthresh down with the window.
//!
//! With one subflow, `weight = 1` and `α = total_alpha`: wVegas is Vegas with
//! `α = β = total_alpha` over rounds whose samples are equal (tested below), apart from the
//! drain.

use super::per_subflow::{CoupledAlgorithm, SubflowState};
use super::{CoupledKind, MultipathConnection};
use crate::registry::{AlgorithmSpec, Param, Params, Scalar};
use crate::time::SimTime;
use crate::transport::cc::vegas::VegasWindow;
use crate::transport::cc::window::PathWindow;
use crate::transport::cc::AckSample;

/// The smallest α of a subflow, in segments (the kernel's constant).
pub const MIN_ALPHA: f64 = 2.0;

/// The registry declaration of wVegas; the defaults are the kernel's module parameters.
pub const SPEC: AlgorithmSpec<CoupledKind> = AlgorithmSpec {
    name: "wvegas",
    summary:
        "weighted Vegas: total_alpha segments queued, shared by rate (Cao, Xu & Fu, ICNP 2012)",
    params: &[
        Param::number(
            "total_alpha",
            "segments the connection keeps queued, shared among its subflows by rate",
        )
        .unit("segments")
        .default(Scalar::Number(10.0))
        .greater_than(0.0),
        Param::number(
            "initial_alpha",
            "target backlog of a subflow before its first weight refresh",
        )
        .unit("segments")
        .default(Scalar::Number(2.0))
        .at_least(0.0),
        Param::number(
            "gamma",
            "slow start ends once more segments than this are queued",
        )
        .unit("segments")
        .default(Scalar::Number(1.0))
        .at_least(0.0),
    ],
    finish: None,
    build: |params, connection| WVegas::new(connection, WVegasParams::from(params)).into(),
};

/// wVegas parameters, in segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WVegasParams {
    pub total_alpha: f64,
    pub initial_alpha: f64,
    pub gamma: f64,
}

impl Default for WVegasParams {
    /// The kernel's: 10, 2, 1.
    fn default() -> Self {
        WVegasParams {
            total_alpha: 10.0,
            initial_alpha: 2.0,
            gamma: 1.0,
        }
    }
}

impl From<&Params> for WVegasParams {
    fn from(p: &Params) -> Self {
        WVegasParams {
            total_alpha: p.number("total_alpha"),
            initial_alpha: p.number("initial_alpha"),
            gamma: p.number("gamma"),
        }
    }
}

/// One wVegas subflow.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Subflow {
    window: VegasWindow,
    established: bool,
    srtt: SimTime,
    /// Target backlog α_r in segments.
    alpha: f64,
    weight: f64,
    /// The smallest positive queueing delay of the rounds at the target backlog since the last
    /// drain, in nanoseconds.
    min_queueing_ns: Option<f64>,
}

impl Subflow {
    fn is_coupled(&self) -> bool {
        self.established && self.srtt > SimTime::ZERO
    }

    fn rate(&self) -> f64 {
        self.window.cwnd() as f64 / self.srtt.as_nanos() as f64
    }

    /// Back to the initial α and weight, no `q_min` (the kernel's `wvegas_enable`).
    fn reset(&mut self, initial_alpha: f64) {
        self.alpha = initial_alpha;
        self.weight = 1.0;
        self.min_queueing_ns = None;
    }
}

impl SubflowState for Subflow {
    type Window = VegasWindow;

    fn window(&self) -> &VegasWindow {
        &self.window
    }

    fn window_mut(&mut self) -> &mut VegasWindow {
        &mut self.window
    }

    fn set_established(&mut self, established: bool) {
        self.established = established;
    }
}

/// wVegas over the subflows of one connection.
#[derive(Clone, Debug, PartialEq)]
pub struct WVegas {
    params: WVegasParams,
    subflows: Vec<Subflow>,
}

impl WVegas {
    /// wVegas for `connection`: every subflow at the initial window, in slow start, not
    /// established.
    ///
    /// # Panics
    /// If the connection has no subflow, its MSS is zero, or a parameter is negative or not
    /// finite (`total_alpha` must be positive).
    pub fn new(connection: MultipathConnection, params: WVegasParams) -> Self {
        let WVegasParams {
            total_alpha,
            initial_alpha,
            gamma,
        } = params;
        assert!(
            total_alpha.is_finite()
                && total_alpha > 0.0
                && initial_alpha.is_finite()
                && initial_alpha >= 0.0
                && gamma.is_finite()
                && gamma >= 0.0,
            "wvegas: invalid parameters {params:?}"
        );
        assert!(
            connection.subflows > 0,
            "wvegas: a connection needs at least one subflow"
        );
        let subflow = Subflow {
            window: VegasWindow::new("wvegas", connection.mss, connection.initial_window),
            established: false,
            srtt: SimTime::ZERO,
            alpha: initial_alpha,
            weight: 1.0,
            min_queueing_ns: None,
        };
        WVegas {
            params,
            subflows: vec![subflow; connection.subflows],
        }
    }

    /// The target backlog `α_r` of `subflow`, in segments.
    pub fn alpha(&self, subflow: usize) -> f64 {
        self.subflows[subflow].alpha
    }

    /// The weight of `subflow` as of its last refresh.
    pub fn weight(&self, subflow: usize) -> f64 {
        self.subflows[subflow].weight
    }

    /// `subflow`'s share of the connection's rate now, `x_r / Σ_k x_k` over the subflows in the
    /// coupled sums and itself (its last weight if it has no RTT sample yet).
    pub fn rate_share(&self, subflow: usize) -> f64 {
        let own = &self.subflows[subflow];
        if own.srtt == SimTime::ZERO {
            return own.weight;
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

    /// Refreshes the weight and α of `subflow` from the current rates.
    fn refresh_alpha(&mut self, subflow: usize) {
        let weight = self.rate_share(subflow);
        let s = &mut self.subflows[subflow];
        s.weight = weight;
        s.alpha = MIN_ALPHA.max(weight * self.params.total_alpha);
    }
}

impl CoupledAlgorithm for WVegas {
    const NAME: &'static str = "wvegas";
    type Subflow = Subflow;

    fn subflow_states(&self) -> &[Subflow] {
        &self.subflows
    }

    fn subflow_states_mut(&mut self) -> &mut [Subflow] {
        &mut self.subflows
    }

    /// At the end of each round: `Diff_r = cwnd_r·(RTT_r − baseRTT_r)/RTT_r` against α_r,
    /// refreshed to `max(2, weight_r·total_alpha)` when `Diff_r ≥ α_r`; then the queue drain
    /// (Cao, Xu & Fu, ICNP 2012; see the module documentation).
    fn on_subflow_ack(&mut self, subflow: usize, sample: &AckSample) {
        let s = &mut self.subflows[subflow];
        if sample.srtt > SimTime::ZERO {
            s.srtt = sample.srtt;
        } else if let Some(rtt) = sample.rtt.filter(|r| *r > SimTime::ZERO) {
            if s.srtt == SimTime::ZERO {
                s.srtt = rtt;
            }
        }
        let Some(round) = s.window.on_ack(sample) else {
            return;
        };
        // The kernel: the mean of the round's samples.
        let rtt_ns = round.stats.mean_rtt_ns;
        let base_ns = round.base_rtt.as_nanos() as f64;
        let queued = s.window.queued_segments(rtt_ns, round.base_rtt);
        if s.window.in_slow_start() {
            if queued > self.params.gamma {
                s.window.leave_slow_start(rtt_ns, round.base_rtt);
            } else {
                s.window.slow_start_ack(round.acked_bytes);
            }
            s.window.end_decision();
            return;
        }
        if queued >= s.alpha {
            self.refresh_alpha(subflow);
        }
        let s = &mut self.subflows[subflow];
        // Whether the subflow keeps its target backlog, with α as just refreshed.
        let at_target = queued >= s.alpha;
        if queued > s.alpha {
            s.window.remove_segment();
        } else if queued < s.alpha {
            s.window.add_segment();
        }
        // Queue drain, judged against the queueing delay at the target and only when there is
        // a queue (see the module documentation).
        let queueing = rtt_ns - base_ns;
        if at_target && queueing > 0.0 {
            let min = s.min_queueing_ns.map_or(queueing, |m| m.min(queueing));
            s.min_queueing_ns = Some(min);
            if queueing >= 2.0 * min {
                s.window.scale(base_ns / (2.0 * rtt_ns));
                s.min_queueing_ns = None;
            }
        }
        s.window.end_decision();
    }

    /// Reno's reduction; α_r, the weight and `q_min` start again.
    fn on_subflow_loss(&mut self, subflow: usize, _now: SimTime, bytes_in_flight: u64) {
        let s = &mut self.subflows[subflow];
        s.window.on_congestion_event(bytes_in_flight);
        s.reset(self.params.initial_alpha);
    }

    fn on_subflow_recovery_exit(&mut self, subflow: usize, _now: SimTime) {
        let s = &mut self.subflows[subflow];
        s.window.on_recovery_exit();
        s.reset(self.params.initial_alpha);
    }

    fn on_subflow_timeout(&mut self, subflow: usize, _now: SimTime, bytes_in_flight: u64) {
        let s = &mut self.subflows[subflow];
        s.window.on_retransmission_timeout(bytes_in_flight);
        s.reset(self.params.initial_alpha);
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
    use crate::transport::cc::{CongestionControl, Vegas, VegasParams};
    use proptest::prelude::*;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;
    const BASE: SimTime = SimTime::from_millis(100);
    const RTT_110: SimTime = SimTime::from_millis(110);
    const RTT_120: SimTime = SimTime::from_millis(120);
    const RTT_125: SimTime = SimTime::from_millis(125);
    /// A power of two in nanoseconds, so that rate shares are exact.
    const RTT_P: SimTime = SimTime::from_nanos(1 << 27);

    fn one_subflow() -> Coupled {
        let mut cc: Coupled = WVegas::new(connection(1), WVegasParams::default()).into();
        cc.set_established(0, true);
        cc
    }

    fn wvegas(cc: &Coupled) -> &WVegas {
        match cc {
            Coupled::WVegas(w) => w,
            _ => unreachable!(),
        }
    }

    #[test]
    fn declaration() {
        let cc = CoupledSpec::new("wvegas", &[])
            .unwrap()
            .build(connection(2));
        assert_eq!(
            (cc.name(), cc.cwnd(0), cc.ssthresh(1)),
            ("wvegas", 10 * M, u64::MAX)
        );
        let spec = CoupledSpec::new("wvegas", &[]).unwrap();
        assert_eq!(WVegasParams::from(spec.params()), WVegasParams::default());
    }

    #[test]
    fn one_subflow_is_vegas_with_alpha_equal_to_beta_equal_to_total_alpha() {
        let mut cc = one_subflow();
        let mut vegas = Vegas::new(
            MSS,
            10,
            VegasParams {
                alpha: 10.0,
                beta: 10.0,
                gamma: 1.0,
            },
        );
        let mut ours = Clocked::new(MSS);
        let mut theirs = Clocked::new(MSS);
        let mut windows = Vec::new();
        for round in 0..100 {
            let rtt = if round == 0 { BASE } else { RTT_110 };
            ours.round(
                &mut SubflowController {
                    cc: &mut cc,
                    subflow: 0,
                },
                rtt,
            );
            theirs.round(&mut vegas, rtt);
            assert_eq!(
                (cc.cwnd(0), cc.ssthresh(0)),
                (vegas.cwnd(), vegas.ssthresh()),
                "round {round}"
            );
            windows.push(cc.cwnd(0));
        }
        // Slow start ends in round 2 at ⌊40 000·100/110⌋ + 1000 = 37 363 (Diff = 3.6 > γ); then
        // α = 10 (weight 1) and Diff = cwnd·10/110 < 10 adds a segment per round up to
        // 37 363 + 73 000 = 110 363 (Diff = 10.03 > α), after which the window alternates
        // between 109 363 and 110 363 around the 110 000 that keeps exactly α queued.
        assert_eq!(windows[2], 37_363);
        assert_eq!(windows[3], 38_363);
        assert_eq!(windows[2 + 73], 110_363);
        assert_eq!(windows[2 + 74], 109_363);
        assert_eq!(windows[2 + 75], 110_363);
        assert_eq!(wvegas(&cc).alpha(0), 10.0);
        assert_eq!(wvegas(&cc).weight(0), 1.0);
    }

    #[test]
    fn no_drain_without_a_queue() {
        // RTT = baseRTT exactly: the kernel's drain test (q ≥ 2·q_min with q = q_min = 0) would
        // halve the window every round; here Diff = 0 < α adds one segment per round.
        let mut cc: Coupled = WVegas::new(connection(1), WVegasParams::default()).into();
        cc.set_established(0, true);
        set_window(&mut cc, 0, 20 * M, BASE);
        let mut sender = Clocked::new(MSS);
        let mut windows = Vec::new();
        for _ in 0..6 {
            sender.round(
                &mut SubflowController {
                    cc: &mut cc,
                    subflow: 0,
                },
                BASE,
            );
            windows.push(cc.cwnd(0));
        }
        // The first round ends the round set_window began (one sample: Reno's byte counting).
        assert_eq!(windows, [20 * M, 21 * M, 22 * M, 23 * M, 24 * M, 25 * M]);
    }

    /// One round trip of `subflow` of `cc` through `sender`, every ACK carrying `rtt`.
    fn round(cc: &mut Coupled, subflow: usize, sender: &mut Clocked, rtt: SimTime) {
        sender.round(&mut SubflowController { cc, subflow }, rtt);
    }

    #[test]
    fn no_drain_while_the_queue_builds_up_to_the_target() {
        let mut cc = one_subflow();
        let mut sender = Clocked::new(MSS);
        round(&mut cc, 0, &mut sender, BASE);
        for _ in 0..5 {
            round(&mut cc, 0, &mut sender, RTT_110);
        }
        // In congestion avoidance since round 2 (37 363), one segment per round; the first
        // decision there (Diff = 37 363·10/110 = 3.4 ≥ α = 2) refreshed α to 10 (weight 1).
        assert_eq!(cc.cwnd(0), 40_363);
        assert_eq!(wvegas(&cc).alpha(0), 10.0);
        // A round whose mean mixes 110 ms samples with one of 120 ms, then rounds of 120 ms:
        // the queueing delay doubles (10 ms to 20 ms) but the subflow is still below its target
        // (Diff = 41 363·20/120 = 6.9, then 7.1 and 7.2 < α = 10): no drain, one segment more
        // per round. (The kernel's rule, with q_min = 10 ms from the rounds of 110 ms, cut the
        // window to ⌊42 363·100/240⌋ = 17 651 at the second round of 120 ms.)
        let mut windows = Vec::new();
        for _ in 0..4 {
            round(&mut cc, 0, &mut sender, RTT_120);
            windows.push(cc.cwnd(0));
        }
        assert_eq!(windows, [41_363, 42_363, 43_363, 44_363]);
    }

    #[test]
    fn the_queue_drains_when_queueing_delay_doubles_at_the_target() {
        let mut cc = one_subflow();
        let mut sender = Clocked::new(MSS);
        round(&mut cc, 0, &mut sender, BASE);
        for _ in 0..75 {
            round(&mut cc, 0, &mut sender, RTT_110);
        }
        // At the equilibrium (see one_subflow_is_vegas_...): 110 363 (Diff = 10.03 ≥ α, at the
        // target: q_min = 10 ms) and 109 363 alternate.
        assert_eq!(cc.cwnd(0), 110_363);
        // The queueing delay goes from 10 ms to 25 ms (reference §2.4 W4). The first round's
        // mean mixes 110 ms samples with one of 125 ms (q just above 10 ms): Diff = 10.03 > α,
        // one segment less, no drain.
        round(&mut cc, 0, &mut sender, RTT_125);
        assert_eq!(cc.cwnd(0), 109_363);
        // The first ACK of the next round ends a round of 125 ms samples: Diff = 109 363·25/125
        // = 21.9 > α, one segment less (108 363), and q = 25 ms ≥ 2·q_min: the window is cut to
        // ⌊108 363·100/250⌋ = 43 345. ssthresh stays where slow start ended (37 363), below it:
        // congestion avoidance goes on.
        round(&mut cc, 0, &mut sender, RTT_125);
        assert_eq!((cc.cwnd(0), cc.ssthresh(0)), (43_345, 37_363));
        // q_min was forgotten and the subflow is below its target again (Diff = 43 345·25/125
        // = 8.7 < α): one segment more, no second drain although q is still 25 ms.
        round(&mut cc, 0, &mut sender, RTT_125);
        assert_eq!(cc.cwnd(0), 44_345);
    }

    #[test]
    fn diff_is_the_backlog_at_the_mean_rtt_of_the_round() {
        // Reference §2.4 step 2: Diff = cwnd·(RTT − baseRTT)/RTT with RTT the *mean* of the
        // round's samples (Vegas takes the smallest).
        let mut cc = one_subflow();
        set_window(&mut cc, 0, 66 * M, BASE);
        // 66 segments sent: the first ACK ends the round set_window began (one sample: Reno's
        // byte counting, no change) and starts one that ends beyond them. The next 65 ACKs and
        // that of one more segment carry 140 ms and 100 ms alternately: mean 120 ms,
        // Diff = 66 000·(120 − 100)/120 = 11 segments.
        for _ in 0..66 {
            cc.on_packet_sent(0, SimTime::ZERO, MSS, 0);
        }
        for i in 0..67u64 {
            if i == 66 {
                cc.on_packet_sent(0, SimTime::ZERO, MSS, 0);
            }
            let rtt = if i % 2 == 0 {
                BASE
            } else {
                SimTime::from_millis(140)
            };
            cc.on_ack(0, &acked(M, rtt));
        }
        // Diff = 11 ≥ α = 2 refreshes α to 10 (weight 1), and 11 > 10 takes one segment off.
        // With the round's smallest sample (100 ms) Diff would be 0 and the window would grow.
        assert_eq!(cc.cwnd(0), 65 * M);
        assert_eq!((wvegas(&cc).weight(0), wvegas(&cc).alpha(0)), (1.0, 10.0));
    }

    #[test]
    fn the_alphas_of_a_connection_add_up_to_total_alpha() {
        // Reference §2.4 W1 and the shared-bottleneck claim: α_r = weight_r·total_alpha with
        // the weights summing to one, so a connection keeps total_alpha queued in all, what one
        // single-path wVegas flow (weight 1) keeps.
        let mut cc = WVegas::new(connection(2), WVegasParams::default());
        for i in 0..2 {
            set_window(&mut cc, i, 40 * M, RTT_P);
            cc.set_established(i, true);
        }
        cc.refresh_alpha(0);
        cc.refresh_alpha(1);
        assert_eq!((cc.weight(0), cc.weight(1)), (0.5, 0.5));
        assert_eq!((cc.alpha(0), cc.alpha(1)), (5.0, 5.0));
        // Rates 1:1:2 from different windows and RTTs (20 segments over RTT_P, 10 over RTT_P/2,
        // 80 over 2·RTT_P): α = 2.5, 2.5 and 5.
        let mut cc = WVegas::new(connection(3), WVegasParams::default());
        let half = SimTime::from_nanos(1 << 26);
        let double = SimTime::from_nanos(1 << 28);
        for (i, (segments, rtt)) in [(20, RTT_P), (10, half), (80, double)]
            .into_iter()
            .enumerate()
        {
            set_window(&mut cc, i, segments * M, rtt);
            cc.set_established(i, true);
        }
        for i in 0..3 {
            cc.refresh_alpha(i);
        }
        assert_eq!(
            [cc.weight(0), cc.weight(1), cc.weight(2)],
            [0.25, 0.25, 0.5]
        );
        assert_eq!([cc.alpha(0), cc.alpha(1), cc.alpha(2)], [2.5, 2.5, 5.0]);
        // Six equal subflows: 10/6 < 2, so each α is the floor 2 and they add up to 12 (W1
        // holds for at most five subflows).
        let mut cc = WVegas::new(connection(6), WVegasParams::default());
        for i in 0..6 {
            set_window(&mut cc, i, 10 * M, RTT_P);
            cc.set_established(i, true);
        }
        for i in 0..6 {
            cc.refresh_alpha(i);
        }
        assert!((0..6).all(|i| cc.alpha(i) == MIN_ALPHA));
    }

    #[test]
    fn weights_follow_the_rates() {
        // Rates 3:1 (windows 30 and 10 segments, equal RTTs): weights 0.75 and 0.25, α 7.5 and
        // 2.5 (the kernel would say 7 and 2).
        let mut cc = WVegas::new(connection(3), WVegasParams::default());
        for (i, segments) in [30, 10, 50].into_iter().enumerate() {
            set_window(&mut cc, i, segments * M, RTT_P);
        }
        cc.set_established(0, true);
        cc.set_established(1, true);
        // Subflow 2 has an RTT sample but is not established: left out.
        assert_eq!((cc.rate_share(0), cc.rate_share(1)), (0.75, 0.25));
        cc.refresh_alpha(0);
        cc.refresh_alpha(1);
        assert_eq!((cc.alpha(0), cc.alpha(1)), (7.5, 2.5));
        assert_eq!((cc.weight(0), cc.weight(1)), (0.75, 0.25));
        // 45:5: α_1 = max(2, 1) = 2.
        set_window(&mut cc, 0, 45 * M, RTT_P);
        set_window(&mut cc, 1, 5 * M, RTT_P);
        cc.refresh_alpha(1);
        assert_eq!((cc.weight(1), cc.alpha(1)), (0.1, MIN_ALPHA));
        // A loss resets α and the weight.
        cc.on_congestion_event(1, SimTime::ZERO, 10 * M);
        assert_eq!((cc.weight(1), cc.alpha(1)), (1.0, 2.0));
        // Different RTTs: x = (45, 50/(1/2)) per RTT_P with subflow 2 in: 45/(45 + 100).
        cc.set_established(1, false);
        set_window(&mut cc, 2, 50 * M, SimTime::from_nanos(1 << 26));
        cc.set_established(2, true);
        assert!((cc.rate_share(0) - 45.0 / 145.0).abs() < 1e-15);
    }

    #[test]
    fn losses_are_reno_on_the_subflow() {
        let mut cc = WVegas::new(connection(2), WVegasParams::default());
        set_window(&mut cc, 0, 20 * M, BASE);
        assert_eq!((cc.cwnd(0), cc.ssthresh(0)), (20 * M, 20 * M));
        cc.on_retransmission_timeout(0, SimTime::ZERO, 20 * M);
        assert_eq!((cc.cwnd(0), cc.ssthresh(0)), (M, 10 * M));
        assert_eq!(cc.cwnd(1), 10 * M);
        cc.penalise(1);
        assert_eq!((cc.cwnd(1), cc.ssthresh(1)), (5 * M, u64::MAX));
    }

    proptest! {
        #[test]
        fn window_invariants_hold(subflows in 1usize..4, events in events_with_penalties()) {
            let mut cc: Coupled = WVegas::new(connection(subflows), WVegasParams::default()).into();
            check_invariants(&mut cc, &events)?;
        }
    }
}
