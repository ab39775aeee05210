//! BALIA, Balanced Linked Adaptation: Peng, Walid, Hwang and Low, "Multipath TCP: analysis,
//! design, and implementation", IEEE/ACM ToN 24(1), 2016, and
//! draft-walid-mptcp-congestion-control-04; the v0.9x Linux implementation is
//! `mptcp_balia.c`. Reference `multipath_cc.md` §2.3.
//!
//! With `x_r = w_r/rtt_r` the rate of path r, `x_max` the largest and `α_r = x_max/x_r ≥ 1`:
//!
//! - in congestion avoidance, each ACK on r adds
//!   `w_r += x_r / (rtt_r·(Σ_k x_k)²) · (1 + α_r)/2 · (4 + α_r)/5` segments,
//!   equivalently one segment per `a_r = 10·w_r·(Σ_k x_k)² / ((x_r + x_max)·(4·x_r + x_max))`
//!   acknowledged segments (the kernel's form, reference §2.3);
//! - a loss on r takes `w_r·min(α_r, 1.5)/2` off the window: between 50 % (the fastest paths)
//!   and 75 % (paths at most two thirds as fast as the fastest, in the paper's real α).
//!
//! How it is computed (the shared arithmetic is in the `window` module):
//! - the increase is paid as one MSS per `a_r` acknowledged bytes (windows in bytes, rates in
//!   bytes per nanosecond of smoothed RTT: the units cancel), per acknowledged byte. The kernel
//!   counts ACKs instead (reference §1.3: half as fast with delayed ACKs) and refreshes `a_r`
//!   only at some events (reference pitfall (b)); here it is recomputed at every
//!   congestion-avoidance ACK, from the current windows and RTTs of all the subflows (the
//!   kernel converts every window to bytes with the *current* subflow's MSS, pitfall (c); here
//!   each subflow's window is in its own bytes);
//! - the decrease, parameter `decrease`:
//!   - `kernel` (the default): as `mptcp_balia.c`, `α_r` is the *integer* quotient
//!     `⌊x_max/x_r⌋` (so the factor is exactly 1/2 unless `x_max ≥ 2·x_r`, then 3/4: reference
//!     pitfall (a)), and the arithmetic is in whole segments:
//!     `md = ⌊⌊W/2⌋·min(α_r, 1.5)⌋`, `W` the flight in whole segments, the new window
//!     `FlightSize − md·MSS`. For the reference's example, 10 segments with `α = 2`:
//!     `md = ⌊5·1.5⌋ = 7`, 3 segments left (the paper's real arithmetic gives 2.5);
//!   - `exact`: the paper's, `⌊FlightSize·(1 − min(α_r, 1.5)/2)⌋` bytes with the real `α_r`;
//!
//!   both from FlightSize (RFC 5681 eq. (4)'s basis, as Reno here; the kernel reduces from
//!   cwnd), both at least 2 MSS (RFC 5681; the kernel's floor is one segment);
//! - a timeout is Reno's on the subflow (cwnd one MSS, `ssthresh = max(FlightSize/2, 2·MSS)`);
//!   the kernel applies BALIA's decrease to ssthresh there too;
//! - the sums run over the subflows that are established and have an RTT sample (reference
//!   §2.0; the kernel's `mptcp_balia_sk_can_send`). A subflow alone in that set, or not in it
//!   itself, increases and decreases as Reno, as the kernel does with one established subflow
//!   (`cnt_established ≤ 1`).
//!
//! With a single subflow, BALIA is Reno byte for byte (tested below).

use super::per_subflow::CoupledAlgorithm;
use super::window::SubflowWindow;
use super::{CoupledKind, MultipathConnection};
use crate::registry::{AlgorithmSpec, Param, Params, Scalar};
use crate::time::SimTime;
use crate::transport::cc::window::reduced_window;
use crate::transport::cc::AckSample;

/// The registry declaration of BALIA.
pub const SPEC: AlgorithmSpec<CoupledKind> = AlgorithmSpec {
    name: "balia",
    summary: "Balanced Linked Adaptation (Peng, Walid, Hwang & Low, IEEE/ACM ToN 2016)",
    params: &[Param::choice(
        "decrease",
        BaliaDecrease::NAMES,
        "kernel: alpha rounded down to a whole number, whole segments (mptcp_balia.c); exact: \
         the paper's real arithmetic in bytes",
    )
    .default(Scalar::Name("kernel"))],
    finish: None,
    build: |params, connection| Balia::new(connection, BaliaDecrease::from(params)).into(),
};

/// How BALIA's decrease is rounded (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BaliaDecrease {
    /// `⌊x_max/x_r⌋` and whole segments, as the v0.9x kernel.
    #[default]
    Kernel,
    /// The paper's real α and byte arithmetic.
    Exact,
}

impl BaliaDecrease {
    /// The scenario names, in declaration order.
    pub const NAMES: &'static [&'static str] = &["kernel", "exact"];

    pub fn name(self) -> &'static str {
        match self {
            BaliaDecrease::Kernel => "kernel",
            BaliaDecrease::Exact => "exact",
        }
    }

    pub fn from_name(name: &str) -> Option<BaliaDecrease> {
        match name {
            "kernel" => Some(BaliaDecrease::Kernel),
            "exact" => Some(BaliaDecrease::Exact),
            _ => None,
        }
    }
}

impl From<&Params> for BaliaDecrease {
    fn from(p: &Params) -> Self {
        BaliaDecrease::from_name(p.choice("decrease")).expect("a declared choice")
    }
}

/// BALIA over the subflows of one connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Balia {
    subflows: Vec<SubflowWindow>,
    decrease: BaliaDecrease,
}

/// The rates BALIA couples, for one subflow in the coupled sums: its own, the largest, the sum.
struct Rates {
    own: f64,
    max: f64,
    sum: f64,
}

impl Balia {
    /// BALIA for `connection`: every subflow at the initial window, in slow start, not
    /// established.
    ///
    /// # Panics
    /// If the connection has no subflow or its MSS is zero.
    pub fn new(connection: MultipathConnection, decrease: BaliaDecrease) -> Self {
        Balia {
            subflows: SubflowWindow::for_connection("balia", connection),
            decrease,
        }
    }

    /// `α_r = x_max/x_r` of `subflow` (1 for a subflow out of the coupled sums or alone in
    /// them).
    pub fn alpha(&self, subflow: usize) -> f64 {
        self.rates(subflow).map_or(1.0, |r| r.max / r.own)
    }

    /// Segments of window that one acknowledged segment on `subflow` earns in congestion
    /// avoidance now: `x_r/(rtt_r·(Σ x)²)·(1 + α_r)/2·(4 + α_r)/5` in segments.
    pub fn increase_per_segment(&self, subflow: usize) -> f64 {
        self.subflows[subflow].mss() as f64 / self.threshold(subflow)
    }

    /// The rates of the coupled sums, if `subflow` is in them with at least one other.
    fn rates(&self, subflow: usize) -> Option<Rates> {
        let own = &self.subflows[subflow];
        if !own.is_coupled() {
            return None;
        }
        let mut rates = Rates {
            own: own.rate(),
            max: 0.0,
            sum: 0.0,
        };
        let mut members = 0;
        for w in self.subflows.iter().filter(|w| w.is_coupled()) {
            rates.sum += w.rate();
            rates.max = rates.max.max(w.rate());
            members += 1;
        }
        (members >= 2).then_some(rates)
    }

    /// Bytes to acknowledge on `subflow` for one MSS more:
    /// `10·W_r·(Σ x)²/((x_r + x_max)·(4·x_r + x_max))`.
    fn threshold(&self, subflow: usize) -> f64 {
        let window = self.subflows[subflow].window();
        match self.rates(subflow) {
            None => window,
            Some(Rates { own, max, sum }) => {
                10.0 * window * sum * sum / ((own + max) * (4.0 * own + max))
            }
        }
    }

    /// The window after a loss on `subflow` with `bytes_in_flight` outstanding.
    fn reduced(&self, subflow: usize, bytes_in_flight: u64) -> u64 {
        let w = &self.subflows[subflow];
        let mss = w.mss();
        let Some(Rates { own, max, .. }) = self.rates(subflow) else {
            return w.halved(bytes_in_flight);
        };
        let alpha = max / own;
        match self.decrease {
            BaliaDecrease::Kernel => {
                // md = ⌊⌊W/2⌋·min(⌊α⌋, 1.5)⌋ segments.
                let half = (bytes_in_flight / mss / 2) as f64;
                let decrease = (half * alpha.floor().min(1.5)).floor() as u64;
                bytes_in_flight
                    .saturating_sub(decrease.saturating_mul(mss))
                    .max(2 * mss)
            }
            BaliaDecrease::Exact => {
                reduced_window(bytes_in_flight, 1.0 - alpha.min(1.5) / 2.0, mss)
            }
        }
    }
}

impl CoupledAlgorithm for Balia {
    const NAME: &'static str = "balia";
    type Subflow = SubflowWindow;

    fn subflow_states(&self) -> &[SubflowWindow] {
        &self.subflows
    }

    fn subflow_states_mut(&mut self) -> &mut [SubflowWindow] {
        &mut self.subflows
    }

    /// Slow start as Reno; in congestion avoidance one MSS per
    /// `10·W_r·(Σ x)²/((x_r + x_max)·(4·x_r + x_max))` acknowledged bytes.
    fn on_subflow_ack(&mut self, subflow: usize, sample: &AckSample) {
        if let Some(acked) = self.subflows[subflow].on_ack(sample) {
            let threshold = self.threshold(subflow);
            self.subflows[subflow].avoid(acked, threshold);
        }
    }

    /// BALIA's decrease, `W_r/2·min(α_r, 1.5)` (`Balia::reduced`); the timeout is Reno's.
    fn on_subflow_loss(&mut self, subflow: usize, _now: SimTime, bytes_in_flight: u64) {
        let reduced = self.reduced(subflow, bytes_in_flight);
        self.subflows[subflow].reduce_to(reduced);
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
    use crate::registry::Value;
    use proptest::prelude::*;

    const M: u64 = 1000;
    /// A power of two in nanoseconds, so that the hand-computed values are exact.
    const RTT: SimTime = SimTime::from_nanos(1 << 20);

    /// BALIA with one subflow per window (in segments) at the same RTT, all established, in
    /// congestion avoidance.
    fn balia(windows: &[u64], decrease: BaliaDecrease) -> Balia {
        let mut cc = Balia::new(connection(windows.len()), decrease);
        for (i, &segments) in windows.iter().enumerate() {
            set_window(&mut cc, i, segments * M, RTT);
        }
        for i in 0..windows.len() {
            cc.set_established(i, true);
        }
        cc
    }

    #[test]
    fn declaration() {
        let cc = CoupledSpec::new("balia", &[]).unwrap().build(connection(2));
        assert_eq!((cc.name(), cc.cwnd(1)), ("balia", 10 * M));
        let spec = CoupledSpec::new("balia", &[("decrease", Value::Choice("exact"))]).unwrap();
        assert_eq!(BaliaDecrease::from(spec.params()), BaliaDecrease::Exact);
        assert_eq!(
            BaliaDecrease::NAMES
                .iter()
                .map(|n| BaliaDecrease::from_name(n).unwrap().name())
                .collect::<Vec<_>>(),
            BaliaDecrease::NAMES
        );
    }

    #[test]
    fn worked_example_increase() {
        // Windows (10, 20) segments at equal RTTs: x = (10, 20)/rtt, Σx = 30/rtt.
        // Subflow 0, α = 2: x/(rtt·Σx²)·(3/2)·(6/5) = (10/900)·1.8 = 0.02 segment per segment,
        // a_0 = 10·10·900/(30·60) = 50 segments;
        // subflow 1, α = 1: (20/900)·1·1 = 0.0222, a_1 = 10·20·900/(40·100) = 45 segments.
        let mut cc = balia(&[10, 20], BaliaDecrease::Kernel);
        assert_eq!((cc.alpha(0), cc.alpha(1)), (2.0, 1.0));
        assert_eq!(cc.increase_per_segment(0), 0.02);
        assert!((cc.increase_per_segment(1) - 1.0 / 45.0).abs() < 1e-15);
        for _ in 0..49 {
            cc.on_ack(0, &acked(M, RTT));
        }
        assert_eq!(cc.cwnd(0), 10 * M);
        cc.on_ack(0, &acked(M, RTT));
        assert_eq!(cc.cwnd(0), 11 * M);
        let mut cc = balia(&[10, 20], BaliaDecrease::Kernel);
        for _ in 0..44 {
            cc.on_ack(1, &acked(M, RTT));
        }
        assert_eq!(cc.cwnd(1), 20 * M);
        cc.on_ack(1, &acked(M, RTT));
        assert_eq!(cc.cwnd(1), 21 * M);
    }

    #[test]
    fn identical_subflows_share_one_reno_increase() {
        // n identical paths: α = 1, increase x/(rtt·(n·x)²) = 1/(n²·w) per segment (BA2).
        let cc = balia(&[10, 10, 10], BaliaDecrease::Kernel);
        for i in 0..3 {
            assert!((cc.increase_per_segment(i) - 1.0 / 90.0).abs() < 1e-15);
        }
    }

    #[test]
    fn worked_example_decrease() {
        // Windows (10, 20), equal RTTs: α = (2, 1).
        let mut cc = balia(&[10, 20], BaliaDecrease::Kernel);
        // Subflow 0: md = ⌊⌊10/2⌋·min(2, 1.5)⌋ = ⌊7.5⌋ = 7 segments: 10 → 3.
        cc.on_congestion_event(0, SimTime::ZERO, 10 * M);
        assert_eq!((cc.cwnd(0), cc.ssthresh(0)), (3 * M, 3 * M));
        // Subflow 1 is the fastest (α = 1): halved, 20 → 10.
        cc.on_congestion_event(1, SimTime::ZERO, 20 * M);
        assert_eq!((cc.cwnd(1), cc.ssthresh(1)), (10 * M, 10 * M));

        // The paper's arithmetic: 10 − 5·1.5 = 2.5 segments.
        let mut cc = balia(&[10, 20], BaliaDecrease::Exact);
        cc.on_congestion_event(0, SimTime::ZERO, 10 * M);
        assert_eq!(cc.cwnd(0), 2_500);
        cc.on_congestion_event(1, SimTime::ZERO, 20 * M);
        assert_eq!(cc.cwnd(1), 10 * M);
    }

    #[test]
    fn kernel_rounding_of_the_decrease() {
        // Windows (10, 12): α_0 = 1.2. Kernel: ⌊1.2⌋ = 1, halved: 10 → 5. Paper: 1 − 1.2/2 =
        // 0.4 of the window kept: 4000 bytes.
        let mut kernel = balia(&[10, 12], BaliaDecrease::Kernel);
        let mut exact = balia(&[10, 12], BaliaDecrease::Exact);
        assert!((kernel.alpha(0) - 1.2).abs() < 1e-15);
        kernel.on_congestion_event(0, SimTime::ZERO, 10 * M);
        exact.on_congestion_event(0, SimTime::ZERO, 10 * M);
        assert_eq!((kernel.cwnd(0), exact.cwnd(0)), (5 * M, 4 * M));
        // An odd window with α = 1: the kernel keeps W − ⌊W/2⌋ = 6 of 11 segments (Reno 5.5).
        let mut kernel = balia(&[10, 10], BaliaDecrease::Kernel);
        kernel.on_congestion_event(0, SimTime::ZERO, 11 * M);
        assert_eq!(kernel.cwnd(0), 6 * M);
        // α ≥ 3 is still capped at 1.5: windows (4, 40), α_0 = 10, 4 segments in flight lose
        // ⌊2·1.5⌋ = 3, and the 2-segment floor applies.
        let mut kernel = balia(&[4, 40], BaliaDecrease::Kernel);
        kernel.on_congestion_event(0, SimTime::ZERO, 4 * M);
        assert_eq!(kernel.cwnd(0), 2 * M);
        let mut kernel = balia(&[8, 40], BaliaDecrease::Kernel);
        kernel.on_congestion_event(0, SimTime::ZERO, 8 * M);
        assert_eq!(kernel.cwnd(0), 2 * M);
        let mut kernel = balia(&[20, 80], BaliaDecrease::Kernel);
        kernel.on_congestion_event(0, SimTime::ZERO, 20 * M + 999);
        // ⌊20/2⌋·1.5 = 15 segments off 20 999 bytes.
        assert_eq!(kernel.cwnd(0), 5 * M + 999);
    }

    #[test]
    fn subflows_out_of_the_sums_are_left_out() {
        let pair = balia(&[10, 20], BaliaDecrease::Kernel);
        let mut cc = Balia::new(connection(3), BaliaDecrease::Kernel);
        for (i, segments) in [10, 20, 80].into_iter().enumerate() {
            set_window(&mut cc, i, segments * M, RTT);
        }
        cc.set_established(0, true);
        cc.set_established(1, true);
        assert_eq!(cc.increase_per_segment(0), pair.increase_per_segment(0));
        assert_eq!(cc.alpha(0), 2.0);
        // Alone in the sums, a subflow is Reno: 1/10, and a loss halves it.
        cc.set_established(1, false);
        assert_eq!((cc.alpha(0), cc.increase_per_segment(0)), (1.0, 0.1));
        cc.on_congestion_event(0, SimTime::ZERO, 11 * M);
        assert_eq!(cc.cwnd(0), 5_500);
    }

    proptest! {
        #[test]
        fn one_subflow_is_reno_for_any_event_sequence(events in events(), exact: bool) {
            let decrease = if exact { BaliaDecrease::Exact } else { BaliaDecrease::Kernel };
            let mut cc: Coupled = Balia::new(connection(1), decrease).into();
            check_against_reno(&mut cc, 1000, 10, &events)?;
        }

        #[test]
        fn window_invariants_hold(
            subflows in 1usize..4,
            exact: bool,
            events in events_with_penalties(),
        ) {
            let decrease = if exact { BaliaDecrease::Exact } else { BaliaDecrease::Kernel };
            let mut cc: Coupled = Balia::new(connection(subflows), decrease).into();
            check_invariants(&mut cc, &events)?;
        }

        /// A loss keeps between a quarter and a half of the flight (at least 2 MSS; the kernel
        /// rounds half a segment up), and the fastest subflow keeps half.
        #[test]
        fn the_decrease_is_between_half_and_three_quarters(
            windows in proptest::collection::vec(2u64..500, 2..5),
            exact: bool,
        ) {
            let decrease = if exact { BaliaDecrease::Exact } else { BaliaDecrease::Kernel };
            let fastest = windows.iter().copied().max().unwrap();
            for (i, &w) in windows.iter().enumerate() {
                let mut cc = balia(&windows, decrease);
                let flight = w * M;
                cc.on_congestion_event(i, SimTime::ZERO, flight);
                let kept = cc.cwnd(i);
                prop_assert!(kept >= (flight / 4).max(2 * M));
                prop_assert!(kept <= (flight - w / 2 * M).max(2 * M));
                if w == fastest {
                    prop_assert!(kept.abs_diff(flight / 2) <= M / 2 || kept == 2 * M);
                }
            }
        }
    }
}
