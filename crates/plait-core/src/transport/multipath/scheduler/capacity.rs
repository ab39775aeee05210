//! The capacity-estimating scheduler of Yang, Amer and Ekiz, "A Scheduler for Multipath TCP",
//! ICCCN 2013, §III, Figures 2 and 3 (reference `multipath_cc.md` §3.7; no public
//! implementation exists).
//!
//! Each subflow has an estimate of its available path capacity in packets, kept between
//! `Min` and `Max` by a binary search in the manner of BI-TCP. Every time the scheduler runs it
//! first updates the estimate of **every** subflow (Figure 2), in this order:
//! 1. a loss has been detected since the last run, so that `ssthresh` has been updated:
//!    `Max = 2·ssthresh`, `Min = ssthresh`, estimate `= ⌊(Max + Min)/2⌋` (1.5·ssthresh);
//! 2. else if `outstanding ≥ estimate` and `outstanding < Max`: `Min = outstanding`, estimate
//!    `= ⌊(Max + Min)/2⌋`;
//! 3. else if `outstanding ≥ Max`: `Max = cwnd`, `Min = outstanding`, estimate
//!    `= ⌊(Max + Min)/2⌋`.
//!
//! **Whole packets.** Figure 2 counts everything in packets (`Num_of_outstanding`, `Cwnd`,
//! `ss_threshold`, §III: "the number of outstanding packets reaches the estimated available
//! path capacity"), so `Max`, `Min` and the estimate are whole numbers of packets here. The
//! paper writes the midpoint as `½·(Max + Min)` and states no rounding; the scheduler was
//! implemented in the Linux kernel (§IV), whose integer arithmetic truncates, so the midpoint
//! is rounded **down**. This also matches §III's "keeps the available path capacity … longer
//! at the saturation point": with δ = 1 the search after a loss closes in on `Max − 1` and
//! stays there until the next loss. A fractional estimate would freeze the search: with
//! δ = 1 the scheduler lets `outstanding` reach at most `⌊estimate⌋`, so an estimate of
//! x.5 is never reached and the second branch never fires.
//!
//! Then it chooses (Figure 3), with `Occupied_i = (outstanding_i + 1)/estimate_i`: a subflow is
//! skipped if the segment is an MPTCP-level retransmission (reinjection) that it has already
//! carried (never the original's subflow, even if that means waiting), if
//! `outstanding ≥ cwnd` (no window space), or if `Occupied > δ`; the others are *available*,
//! and *uncongested* when `Occupied ≤ γ`. If some are uncongested, the one with the smallest
//! SRTT ([`Reason::Uncongested`]); else, if some are available, the one with the smallest
//! `Occupied` ([`Reason::LeastOccupied`]); else wait ([`Reason::AllCongested`]). Comparisons
//! are strict, so ties go to the lower index.
//!
//! How the figures meet the [`SubflowView`]:
//! - "a loss has been detected since last run" = [`SubflowView::loss_events`] differs from the
//!   count this scheduler saw at its previous run (0 before the first); `ssthresh` in packets
//!   is `⌊ssthresh_bytes / mss⌋`;
//! - outstanding packets = [`SubflowView::in_flight_segments`] (the pipe, rounded up); cwnd
//!   in packets = [`SubflowView::cwnd_segments`];
//! - the initial estimate, "a default maximum (a large constant)", is 10⁹ packets, and `Max`
//!   and `Min` start there too (`Min` is never read before it is set), so rules 2 and 3 do not
//!   fire before the first loss unless a window reaches 10⁹ packets;
//! - Figure 3's `Min_srtt = 0xFFFFFFFF` and `Min_occupied = 0xFFFFFFFF` are taken as +∞;
//! - only usable subflows are candidates; besides the figure's `outstanding ≥ cwnd` test, a
//!   candidate must pass [`SubflowView::has_window_space`] for the segment (the two agree for
//!   segments of at most one MSS);
//! - new data follows the rule of [`SubflowView::backup`]: the backup subflows are the
//!   candidates only when no non-backup subflow is usable (then a pick is reported as
//!   [`Reason::Backup`]); a reinjection may go to any usable subflow. The paper has no backup
//!   subflows.
//!
//! Defaults: `γ = 0.5`, `δ = 1.0` (the paper's §V.C), with `γ < δ` required.

use super::{
    backups_only, ConnectionView, PacketScheduler, Pick, Reason, SchedulerKind, SegmentView,
    SubflowView,
};
use crate::registry::{AlgorithmSpec, Param, ParamIssue, Params, Scalar};
use crate::units::format_number;

/// The registry declaration of the capacity scheduler.
pub const SPEC: AlgorithmSpec<SchedulerKind> = AlgorithmSpec {
    name: "capacity",
    summary: "lowest RTT among subflows below their estimated path capacity \
              (Yang, Amer & Ekiz, ICCCN 2013)",
    params: &[
        Param::number(
            "gamma",
            "Occupied at or below which one more packet does not congest the path",
        )
        .default(Scalar::Number(0.5))
        .greater_than(0.0),
        Param::number(
            "delta",
            "Occupied above which one more packet would cause a loss (the subflow is skipped)",
        )
        .default(Scalar::Number(1.0))
        .greater_than(0.0),
    ],
    finish: Some(finish),
    build: |params, context| {
        Capacity::new(
            params.number("gamma"),
            params.number("delta"),
            context.subflows,
        )
        .into()
    },
};

/// `γ < δ` (the paper's two thresholds, §II.B).
fn finish(params: &mut Params) -> Result<(), ParamIssue> {
    let (gamma, delta) = (params.number("gamma"), params.number("delta"));
    if gamma >= delta {
        let key = if params.is_given("delta") && !params.is_given("gamma") {
            "delta"
        } else {
            "gamma"
        };
        return Err(ParamIssue::at(
            key,
            format!(
                "gamma ({}) must be less than delta ({})",
                format_number(gamma),
                format_number(delta)
            ),
        ));
    }
    Ok(())
}

/// The initial estimate of a path's capacity, in packets ("a large constant").
pub const INITIAL_ESTIMATE: u64 = 1_000_000_000;

/// Figure 2's state for one subflow, in whole packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimator {
    pub max: u64,
    pub min: u64,
    /// `Estimated_path_capacity`, packets.
    pub estimate: u64,
    /// [`SubflowView::loss_events`] at the previous run.
    loss_events_seen: u64,
}

impl Default for Estimator {
    fn default() -> Self {
        Estimator {
            max: INITIAL_ESTIMATE,
            min: INITIAL_ESTIMATE,
            estimate: INITIAL_ESTIMATE,
            loss_events_seen: 0,
        }
    }
}

impl Estimator {
    /// Figure 2, once.
    pub fn update(&mut self, s: &SubflowView) {
        let outstanding = s.in_flight_segments();
        if s.loss_events != self.loss_events_seen {
            self.loss_events_seen = s.loss_events;
            let ssthresh = s.ssthresh_bytes / u64::from(s.mss.max(1));
            self.max = ssthresh.saturating_mul(2);
            self.min = ssthresh;
        } else if outstanding >= self.estimate && outstanding < self.max {
            self.min = outstanding;
        } else if outstanding >= self.max {
            self.max = s.cwnd_segments();
            self.min = outstanding;
        } else {
            return;
        }
        self.estimate = midpoint(self.max, self.min);
    }
}

/// Figure 2's `½·(Max + Min)` in whole packets, rounded down (the module's "Whole packets").
fn midpoint(max: u64, min: u64) -> u64 {
    ((u128::from(max) + u128::from(min)) / 2) as u64
}

/// The capacity scheduler.
#[derive(Clone, Debug, PartialEq)]
pub struct Capacity {
    gamma: f64,
    delta: f64,
    estimators: Vec<Estimator>,
}

impl Default for Capacity {
    fn default() -> Self {
        Capacity::new(0.5, 1.0, 0)
    }
}

impl Capacity {
    pub fn new(gamma: f64, delta: f64, subflows: usize) -> Capacity {
        Capacity {
            gamma,
            delta,
            estimators: vec![Estimator::default(); subflows],
        }
    }

    /// Figure 2's state of `subflow`.
    pub fn estimator(&self, subflow: usize) -> Option<&Estimator> {
        self.estimators.get(subflow)
    }

    /// Figure 3.
    fn choose(&self, segment: &SegmentView, subflows: &[SubflowView]) -> Pick {
        let backups = !segment.is_reinjection && backups_only(subflows);
        let mut uncongested: Option<&SubflowView> = None;
        let mut least_occupied: Option<(&SubflowView, f64)> = None;
        for s in subflows.iter().filter(|s| s.usable) {
            if !segment.is_reinjection && s.backup != backups {
                continue;
            }
            if segment.is_reinjection && s.carried {
                continue;
            }
            let outstanding = s.in_flight_segments();
            if outstanding >= s.cwnd_segments() || !s.has_window_space(segment.len) {
                continue;
            }
            // Figure 3: Occupied = (Num_of_outstanding + 1)/Estimated_path_capacity.
            let occupied = (outstanding + 1) as f64 / self.estimators[s.id].estimate as f64;
            if occupied > self.delta {
                continue;
            }
            if occupied <= self.gamma && uncongested.is_none_or(|u| s.srtt < u.srtt) {
                uncongested = Some(s);
            }
            if least_occupied.is_none_or(|(_, o)| occupied < o) {
                least_occupied = Some((s, occupied));
            }
        }
        let backup_or = |reason| if backups { Reason::Backup } else { reason };
        match (uncongested, least_occupied) {
            (Some(s), _) => Pick::one(s.id, backup_or(Reason::Uncongested)),
            (None, Some((s, _))) => Pick::one(s.id, backup_or(Reason::LeastOccupied)),
            (None, None) => Pick::wait(Reason::AllCongested),
        }
    }
}

impl PacketScheduler for Capacity {
    fn name(&self) -> &'static str {
        "capacity"
    }

    fn schedule(
        &mut self,
        _: &ConnectionView,
        segment: &SegmentView,
        subflows: &[SubflowView],
    ) -> Pick {
        if let Some(largest) = subflows.iter().map(|s| s.id + 1).max() {
            if self.estimators.len() < largest {
                self.estimators.resize(largest, Estimator::default());
            }
        }
        for s in subflows {
            self.estimators[s.id].update(s);
        }
        self.choose(segment, subflows)
    }

    fn subflow_estimate(&self, subflow: usize) -> Option<f64> {
        self.estimators.get(subflow).map(|e| e.estimate as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Value;
    use crate::transport::multipath::scheduler::tests::{new_data, reinjection, view};

    fn conn() -> ConnectionView {
        ConnectionView::default()
    }

    /// A scheduler whose estimates are set by hand: `Max = x + 1`, `Min = x`, estimate `x`, a
    /// converged search (no run of Figure 2 changes them while the views keep `loss_events`
    /// at 0 and at most `x` packets outstanding: the second branch gives ⌊(2x + 1)/2⌋ = x).
    fn with_estimates(estimates: &[u64]) -> Capacity {
        let mut c = Capacity::new(0.5, 1.0, estimates.len());
        for (e, &x) in c.estimators.iter_mut().zip(estimates) {
            *e = Estimator {
                max: x + 1,
                min: x,
                estimate: x,
                loss_events_seen: 0,
            };
        }
        c
    }

    /// One subflow with a loss (`ssthresh` segments of 1000 bytes) and a window of `cwnd`,
    /// fed by a sender that always has data and gets no ACK: every run of the scheduler that
    /// picks the subflow puts one more packet in flight. Returns the estimates in the order
    /// they were taken, each once, and the packets outstanding when the scheduler first waits.
    fn drive(delta: f64, ssthresh: u64, cwnd: u64) -> (Vec<f64>, u64) {
        let mut s = view(0, 10, cwnd, 0);
        s.ssthresh_bytes = ssthresh * 1000;
        s.loss_events = 1;
        let mut c = Capacity::new(0.5, delta, 1);
        let mut estimates: Vec<f64> = Vec::new();
        for _ in 0..10_000 {
            let pick = c.schedule(&conn(), &new_data(), &[s]);
            let e = c.subflow_estimate(0).unwrap();
            if estimates.last() != Some(&e) {
                estimates.push(e);
            }
            if pick == Pick::wait(Reason::AllCongested) {
                return (estimates, s.in_flight_bytes / 1000);
            }
            s.in_flight_bytes += 1000;
        }
        panic!("the scheduler never waited: {estimates:?}");
    }

    #[test]
    fn before_any_loss_every_subflow_is_uncongested_and_the_lowest_srtt_wins() {
        let subflows = [view(0, 30, 10, 5), view(1, 10, 10, 9), view(2, 20, 10, 0)];
        let mut c = Capacity::new(0.5, 1.0, 3);
        assert_eq!(
            c.schedule(&conn(), &new_data(), &subflows),
            Pick::one(1, Reason::Uncongested)
        );
        assert_eq!(c.subflow_estimate(1), Some(INITIAL_ESTIMATE as f64));
    }

    #[test]
    fn uncongested_subflows_by_srtt_with_ties_to_the_lower_index() {
        // Estimates 20: Occupied = (out + 1)/20. Subflow 0: 10/20 = 0.5 ≤ γ (uncongested,
        // 30 ms); 1: 11/20 > γ (10 ms, only available); 2: 1/20 (30 ms, ties with 0).
        let subflows = [view(0, 30, 20, 9), view(1, 10, 20, 10), view(2, 30, 20, 0)];
        let mut c = with_estimates(&[20, 20, 20]);
        assert_eq!(
            c.schedule(&conn(), &new_data(), &subflows),
            Pick::one(0, Reason::Uncongested)
        );
    }

    #[test]
    fn all_congested_the_least_occupied_wins() {
        // Occupied: 0: 8/10 = 0.8; 1: 7/10 = 0.7 (the smallest, although the slowest);
        // 2: 11/10 > δ, skipped (10 outstanding reach its estimate, but Figure 2's second
        // branch gives ⌊(11 + 10)/2⌋ = 10 again).
        let subflows = [view(0, 10, 20, 7), view(1, 50, 20, 6), view(2, 5, 20, 10)];
        let mut c = with_estimates(&[10, 10, 10]);
        assert_eq!(
            c.schedule(&conn(), &new_data(), &subflows),
            Pick::one(1, Reason::LeastOccupied)
        );
        // Equal Occupied: the lower index.
        let subflows = [view(0, 10, 20, 7), view(1, 50, 20, 7)];
        let mut c = with_estimates(&[10, 10]);
        assert_eq!(
            c.schedule(&conn(), &new_data(), &subflows),
            Pick::one(0, Reason::LeastOccupied)
        );
        // Occupied exactly δ is still available.
        let subflows = [view(0, 10, 20, 9)];
        let mut c = with_estimates(&[10]);
        assert_eq!(
            c.schedule(&conn(), &new_data(), &subflows),
            Pick::one(0, Reason::LeastOccupied)
        );
    }

    #[test]
    fn everything_above_delta_or_full_waits() {
        // 0: 11/10 > δ; 1: full window (5 of 5), although its Occupied would be small.
        let subflows = [view(0, 10, 20, 10), view(1, 10, 5, 5)];
        let mut c = with_estimates(&[10, 100]);
        assert_eq!(
            c.schedule(&conn(), &new_data(), &subflows),
            Pick::wait(Reason::AllCongested)
        );
    }

    #[test]
    fn a_reinjection_never_goes_back_to_a_subflow_that_carried_it() {
        let mut subflows = [view(0, 10, 20, 0), view(1, 50, 20, 0)];
        subflows[0].carried = true;
        let mut c = Capacity::new(0.5, 1.0, 2);
        assert_eq!(
            c.schedule(&conn(), &reinjection(), &subflows),
            Pick::one(1, Reason::Uncongested)
        );
        // The other subflow is full: wait, rather than resend on the original's subflow.
        subflows[1].in_flight_bytes = 20_000;
        assert_eq!(
            c.schedule(&conn(), &reinjection(), &subflows),
            Pick::wait(Reason::AllCongested)
        );
        // Both carried it: wait as well.
        subflows[1].in_flight_bytes = 0;
        subflows[1].carried = true;
        assert_eq!(
            c.schedule(&conn(), &reinjection(), &subflows),
            Pick::wait(Reason::AllCongested)
        );
        // New data ignores `carried`.
        assert_eq!(
            c.schedule(&conn(), &new_data(), &subflows),
            Pick::one(0, Reason::Uncongested)
        );
    }

    #[test]
    fn unusable_subflows_and_backups() {
        let mut subflows = [view(0, 10, 20, 0), view(1, 20, 20, 0), view(2, 5, 20, 0)];
        subflows[0].usable = false;
        subflows[2].backup = true;
        let mut c = Capacity::new(0.5, 1.0, 3);
        assert_eq!(
            c.schedule(&conn(), &new_data(), &subflows),
            Pick::one(1, Reason::Uncongested)
        );
        // A reinjection may use the backup.
        assert_eq!(
            c.schedule(&conn(), &reinjection(), &subflows),
            Pick::one(2, Reason::Uncongested)
        );
        subflows[1].usable = false;
        assert_eq!(
            c.schedule(&conn(), &new_data(), &subflows),
            Pick::one(2, Reason::Backup)
        );
    }

    #[test]
    fn a_loss_sets_the_estimate_to_one_and_a_half_ssthresh() {
        // ssthresh 8 segments: Max 16, Min 8, estimate 12.
        let mut s = view(0, 10, 8, 3);
        s.ssthresh_bytes = 8000;
        s.loss_events = 1;
        let mut c = Capacity::new(0.5, 1.0, 1);
        c.schedule(&conn(), &new_data(), &[s]);
        let e = *c.estimator(0).unwrap();
        assert_eq!((e.max, e.min, e.estimate), (16, 8, 12));
        assert_eq!(c.subflow_estimate(0), Some(12.0));
        // The same count next time is not a new loss: nothing changes (3 < 12).
        c.schedule(&conn(), &new_data(), &[s]);
        assert_eq!(c.subflow_estimate(0), Some(12.0));
        // A second loss with ssthresh 5 (a fractional one rounds down): 10, 5, and the
        // midpoint 7.5 in whole packets rounded down, 7.
        s.loss_events = 2;
        s.ssthresh_bytes = 5999;
        c.schedule(&conn(), &new_data(), &[s]);
        let e = *c.estimator(0).unwrap();
        assert_eq!((e.max, e.min, e.estimate), (10, 5, 7));
        assert_eq!(c.subflow_estimate(0), Some(7.0));
        // The traced case of subflow 1 (ssthresh 703): 1406, 703, ⌊1054.5⌋ = 1054.
        s.loss_events = 3;
        s.ssthresh_bytes = 703_000;
        c.schedule(&conn(), &new_data(), &[s]);
        let e = *c.estimator(0).unwrap();
        assert_eq!((e.max, e.min, e.estimate), (1406, 703, 1054));
    }

    #[test]
    fn outstanding_reaching_the_estimate_raises_min() {
        // After a loss: Max 16, Min 8, estimate 12. Outstanding 12 (≥ 12, < 16): Min 12,
        // estimate 14; then 13 (< 14): unchanged; then 15: Min 15, estimate ⌊15.5⌋ = 15;
        // then 15 again (≥ 15, < 16): Min 15, estimate 15, the search has converged.
        let mut s = view(0, 10, 20, 3);
        s.ssthresh_bytes = 8000;
        s.loss_events = 1;
        let mut c = Capacity::new(0.5, 1.0, 1);
        c.schedule(&conn(), &new_data(), &[s]);
        s.in_flight_bytes = 12_000;
        c.schedule(&conn(), &new_data(), &[s]);
        let e = *c.estimator(0).unwrap();
        assert_eq!((e.max, e.min, e.estimate), (16, 12, 14));
        s.in_flight_bytes = 13_000;
        c.schedule(&conn(), &new_data(), &[s]);
        assert_eq!(c.subflow_estimate(0), Some(14.0));
        s.in_flight_bytes = 15_000;
        c.schedule(&conn(), &new_data(), &[s]);
        let e = *c.estimator(0).unwrap();
        assert_eq!((e.max, e.min, e.estimate), (16, 15, 15));
        c.schedule(&conn(), &new_data(), &[s]);
        assert_eq!(*c.estimator(0).unwrap(), e);
        // Outstanding rounds up: 15.2 segments count as 16 = Max, the third rule.
        s.in_flight_bytes = 15_200;
        c.schedule(&conn(), &new_data(), &[s]);
        let e = *c.estimator(0).unwrap();
        assert_eq!((e.max, e.min, e.estimate), (20, 16, 18));
    }

    #[test]
    fn outstanding_reaching_max_sets_max_to_cwnd() {
        // After a loss: Max 16, Min 8. Outstanding 17 ≥ Max with cwnd 22: Max 22, Min 17,
        // estimate ⌊19.5⌋ = 19.
        let mut s = view(0, 10, 22, 3);
        s.ssthresh_bytes = 8000;
        s.loss_events = 1;
        let mut c = Capacity::new(0.5, 1.0, 1);
        c.schedule(&conn(), &new_data(), &[s]);
        s.in_flight_bytes = 17_000;
        c.schedule(&conn(), &new_data(), &[s]);
        let e = *c.estimator(0).unwrap();
        assert_eq!((e.max, e.min, e.estimate), (22, 17, 19));
        // A loss takes precedence over the outstanding count.
        s.loss_events = 2;
        s.ssthresh_bytes = 11_000;
        s.in_flight_bytes = 30_000;
        c.schedule(&conn(), &new_data(), &[s]);
        let e = *c.estimator(0).unwrap();
        assert_eq!((e.max, e.min, e.estimate), (22, 11, 16));
    }

    #[test]
    fn with_delta_one_the_search_does_not_freeze_at_half_a_packet() {
        // The traced freeze: ssthresh 703 gives Max 1406, Min 703 and a midpoint of 1054.5.
        // With δ = 1 the scheduler sends while (outstanding + 1)/estimate ≤ 1, so at most
        // 1054 packets go out and an estimate of 1054.5 is never reached. In whole packets
        // (rounded down) the estimate is 1054, reached, and the binary search halves the gap
        // to Max each time: ⌊(1406 + 1054)/2⌋ = 1230, then 1318, 1362, 1384, 1395, 1400,
        // 1403, 1404, 1405 = Max − 1, where it stays (⌊(1406 + 1405)/2⌋ = 1405) with 1405
        // packets outstanding: 1406/1405 > δ.
        let steps = [
            1054.0, 1230.0, 1318.0, 1362.0, 1384.0, 1395.0, 1400.0, 1403.0, 1404.0, 1405.0,
        ];
        assert_eq!(drive(1.0, 703, 2000), (steps.to_vec(), 1405));
    }

    #[test]
    fn the_search_moves_for_every_delta() {
        // ssthresh 3, cwnd 20: Max 6, Min 3, estimate ⌊4.5⌋ = 4.
        // δ = 1.0: the 4th packet reaches 4 (< Max): Min 4, estimate 5; the 5th: Min 5,
        // estimate ⌊5.5⌋ = 5 = Max − 1, converged; 6/5 > δ: wait with 5 outstanding.
        assert_eq!(drive(1.0, 3, 20), (vec![4.0, 5.0], 5));
        // δ = 1.2 and 1.4: as δ = 1.0 up to 5, then 6/5 = 1.2 ≤ δ: the 6th packet reaches
        // Max, the third branch: Max = cwnd = 20, Min 6, estimate 13; then 13 outstanding:
        // Min 13, estimate 16; 16: 18; 18: 19; 19: ⌊19.5⌋ = 19; 20 ≥ Max: Max 20, Min 20,
        // estimate 20; the window is full: wait with 20 outstanding.
        let up = vec![4.0, 5.0, 13.0, 16.0, 18.0, 19.0, 20.0];
        assert_eq!(drive(1.2, 3, 20), (up.clone(), 20));
        assert_eq!(drive(1.4, 3, 20), (up, 20));
    }

    #[test]
    fn on_a_three_packet_path_delta_one_point_two_holds_and_one_point_four_feeds_on() {
        // ssthresh 2 (the least a Linux TCP sets): Max 4, Min 2, estimate 3. With 3
        // outstanding (≥ 3, < 4): Min 3, estimate ⌊3.5⌋ = 3, converged at Max − 1.
        // δ = 1.0 and 1.2: 4/3 = 1.33 > δ, the subflow holds at 3 packets.
        assert_eq!(drive(1.0, 2, 20), (vec![3.0], 3));
        assert_eq!(drive(1.2, 2, 20), (vec![3.0], 3));
        // δ = 1.4: 4/3 ≤ δ, a 4th packet reaches Max: Max = cwnd = 20, Min 4, estimate 12;
        // then 12: 16; 16: 18; 18: 19; 19: 19; 20: 20; wait with the window full.
        assert_eq!(
            drive(1.4, 2, 20),
            (vec![3.0, 12.0, 16.0, 18.0, 19.0, 20.0], 20)
        );
    }

    #[test]
    fn midpoint_rounds_down_in_whole_packets() {
        assert_eq!(midpoint(6, 3), 4);
        assert_eq!(midpoint(1406, 703), 1054);
        assert_eq!(midpoint(4, 3), 3);
        assert_eq!(midpoint(5, 5), 5);
        // The third branch may set Max (cwnd) below Min (outstanding): the same midpoint.
        assert_eq!(midpoint(7, 12), 9);
        assert_eq!(midpoint(u64::MAX, u64::MAX - 1), u64::MAX - 1);
    }

    #[test]
    fn every_subflow_is_estimated_even_when_not_a_candidate() {
        let mut subflows = [view(0, 10, 20, 0), view(1, 20, 20, 0)];
        subflows[1].usable = false;
        subflows[1].loss_events = 1;
        subflows[1].ssthresh_bytes = 4000;
        let mut c = Capacity::new(0.5, 1.0, 2);
        c.schedule(&conn(), &new_data(), &subflows);
        assert_eq!(c.subflow_estimate(1), Some(6.0));
        assert_eq!(c.subflow_estimate(2), None);
    }

    #[test]
    fn the_estimate_steers_data_away_from_a_congested_fast_path() {
        // The paper's Figure 1: the fast path (10 ms) near its estimated capacity, the slow
        // one (50 ms) far from it.
        let mut fast = view(0, 10, 30, 3);
        fast.ssthresh_bytes = 10_000;
        fast.loss_events = 1;
        let slow = view(1, 50, 30, 3);
        let mut c = Capacity::new(0.5, 1.0, 2);
        // Estimate 15: Occupied (3 + 1)/15 ≤ 0.5: the fast path.
        assert_eq!(
            c.schedule(&conn(), &new_data(), &[fast, slow]),
            Pick::one(0, Reason::Uncongested)
        );
        // 8 outstanding: 9/15 = 0.6 > γ; the slow path is uncongested.
        fast.in_flight_bytes = 8000;
        assert_eq!(
            c.schedule(&conn(), &new_data(), &[fast, slow]),
            Pick::one(1, Reason::Uncongested)
        );
        assert_eq!(c.subflow_estimate(0), Some(15.0));
    }

    #[test]
    fn gamma_must_be_below_delta() {
        assert!(SPEC.check(&[]).is_ok());
        let err = SPEC.check(&[("gamma", Value::Number(1.0))]).unwrap_err();
        assert_eq!(err.param.as_deref(), Some("gamma"));
        assert_eq!(err.message, "gamma (1) must be less than delta (1)");
        let err = SPEC.check(&[("delta", Value::Number(0.4))]).unwrap_err();
        assert_eq!(err.param.as_deref(), Some("delta"));
        assert!(SPEC
            .check(&[("gamma", Value::Number(0.9)), ("delta", Value::Number(1.2))])
            .is_ok());
    }
}
