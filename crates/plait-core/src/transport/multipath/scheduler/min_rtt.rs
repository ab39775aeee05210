//! The v0.9x kernel's default scheduler, lowest RTT first (reference §3.1; `mptcp_sched.c`,
//! Paasch et al. 2014).
//!
//! For a segment (§3.1.1): among the non-backup subflows, those that have not carried it yet
//! are preferred; among the preferred class, the usable subflow with window space and the
//! smallest SRTT is chosen. If a preferred subflow exists but none of them has window space,
//! the scheduler waits (it does not fall back to used or backup subflows). With no non-backup
//! subflow left to prefer, the same runs over the backup subflows; if no subflow at all is
//! left that has not carried the segment, every subflow counts as not having carried it.
//! Ties go to the lower index.
//!
//! Options (§3.1.4), carried out by the connection: `penalisation` and
//! `opportunistic_retransmission`, both on by default as in the kernel.

use super::{
    ConnectionView, PacketScheduler, Pick, Reason, SchedulerKind, SchedulerOptions, SegmentView,
    SubflowView,
};
use crate::registry::{AlgorithmSpec, Param, Scalar};
use crate::time::SimTime;

/// The registry declaration of the lowest-RTT scheduler.
pub const SPEC: AlgorithmSpec<SchedulerKind> = AlgorithmSpec {
    name: "min_rtt",
    summary: "lowest smoothed RTT first among subflows with window space (v0.9x default)",
    params: &[
        Param::bool(
            "penalisation",
            "halve the window of a slow subflow that blocks the receive window",
        )
        .default(Scalar::Bool(true)),
        Param::bool(
            "opportunistic_retransmission",
            "resend the segment that blocks the receive window on the fast subflow",
        )
        .default(Scalar::Bool(true)),
    ],
    finish: None,
    build: |params, _| {
        MinRtt {
            options: SchedulerOptions {
                penalisation: params.bool("penalisation"),
                opportunistic_retransmission: params.bool("opportunistic_retransmission"),
            },
        }
        .into()
    },
};

/// Lowest RTT first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinRtt {
    pub options: SchedulerOptions,
}

/// The §3.1.1 choice, shared by the schedulers built on it (BLEST, ECF, redundant's
/// reinjections).
pub fn lowest_rtt(segment: &SegmentView, subflows: &[SubflowView]) -> Pick {
    for backup in [false, true] {
        if let Some(pick) = choose_in_class(segment, subflows, backup, true) {
            return pick;
        }
    }
    // Every subflow carried the segment: forget that and choose among all of them.
    choose_in_class(segment, subflows, false, false)
        .or_else(|| choose_in_class(segment, subflows, true, false))
        .unwrap_or(Pick::wait(Reason::NoWindowSpace))
}

/// [`lowest_rtt`] for new data (no subflow carried the segment), folded one subflow at a
/// time from the little it reads of each, so that the connection need not take the views
/// ([`PacketScheduler::places_new_data_by_lowest_rtt`]). Offered the usable subflows in index
/// order, it chooses as [`lowest_rtt`] does then: with no subflow preferred for having carried
/// the segment, the non-backup class if it has a usable subflow, else the backup class; in
/// the class, the subflow with window space and the smallest SRTT (the first on a tie), or
/// wait if none has space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NewDataChoice {
    /// Per class (non-backup, backup): the subflow with window space and the smallest SRTT
    /// offered so far, with that SRTT.
    best: [Option<(SimTime, usize)>; 2],
    /// A non-backup subflow was offered.
    any_regular: bool,
    /// How many subflows offered had window space.
    with_space: u32,
}

impl NewDataChoice {
    /// The usable subflow `id` (offered after those of lower index): a backup one or not,
    /// with window space for the segment or not, and its SRTT ([`SubflowView::srtt`]), read
    /// only if it has window space.
    #[inline(always)]
    pub fn offer(
        &mut self,
        id: usize,
        backup: bool,
        window_space: bool,
        srtt: impl FnOnce() -> SimTime,
    ) {
        self.any_regular |= !backup;
        if window_space {
            self.with_space += 1;
            let srtt = srtt();
            let best = &mut self.best[usize::from(backup)];
            if best.is_none_or(|(b, _)| srtt < b) {
                *best = Some((srtt, id));
            }
        }
    }

    /// How many of the subflows offered had window space.
    #[inline(always)]
    pub fn with_space(&self) -> u32 {
        self.with_space
    }

    /// The subflow to send the segment on, `None` to wait.
    #[inline(always)]
    pub fn decision(&self) -> Option<usize> {
        let class = usize::from(!self.any_regular);
        self.best[class].map(|(_, id)| id)
    }
}

/// The usable subflow with the smallest SRTT, whatever its window, class or history (the fast
/// subflow `F` of BLEST and ECF, the kernel's `minsk`); ties go to the lower index.
pub fn fastest_usable(subflows: &[SubflowView]) -> Option<&SubflowView> {
    let mut best: Option<&SubflowView> = None;
    for s in subflows.iter().filter(|s| s.usable) {
        if best.is_none_or(|b| s.srtt < b.srtt) {
            best = Some(s);
        }
    }
    best
}

/// The choice among the subflows of one class (backup or not) that are candidates (have not
/// carried the segment, when `prefer_unused`). `None` when the class has no candidate at all.
fn choose_in_class(
    segment: &SegmentView,
    subflows: &[SubflowView],
    backup: bool,
    prefer_unused: bool,
) -> Option<Pick> {
    let mut best: Option<&SubflowView> = None;
    let mut any_candidate = false;
    for s in subflows
        .iter()
        .filter(|s| s.backup == backup && s.usable && !(prefer_unused && s.carried))
    {
        any_candidate = true;
        if s.has_window_space(segment.len) && best.is_none_or(|b| s.srtt < b.srtt) {
            best = Some(s);
        }
    }
    let reason = if backup {
        Reason::Backup
    } else {
        Reason::LowestRtt
    };
    match best {
        Some(s) => Some(Pick::one(s.id, reason)),
        None if any_candidate => Some(Pick::wait(Reason::NoWindowSpace)),
        None => None,
    }
}

impl PacketScheduler for MinRtt {
    fn name(&self) -> &'static str {
        "min_rtt"
    }

    fn schedule(
        &mut self,
        _: &ConnectionView,
        segment: &SegmentView,
        subflows: &[SubflowView],
    ) -> Pick {
        lowest_rtt(segment, subflows)
    }

    fn options(&self) -> SchedulerOptions {
        self.options
    }

    fn is_stateless(&self) -> bool {
        true
    }

    fn places_new_data_by_lowest_rtt(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(crate) fn view(id: usize, srtt_ms: u64, cwnd: u64, in_flight: u64) -> SubflowView {
        SubflowView {
            id,
            usable: true,
            mss: 1000,
            cwnd_bytes: cwnd * 1000,
            ssthresh_bytes: u64::MAX,
            in_flight_bytes: in_flight * 1000,
            queued_bytes: in_flight * 1000,
            srtt: SimTime::from_millis(srtt_ms),
            ..SubflowView::default()
        }
    }

    fn segment() -> SegmentView {
        SegmentView {
            dsn: 0,
            len: 1000,
            is_reinjection: false,
        }
    }

    fn pick(subflows: &[SubflowView]) -> Pick {
        MinRtt::default().schedule(&ConnectionView::default(), &segment(), subflows)
    }

    #[test]
    fn fastest_with_space_then_the_next() {
        // S1: 10 ms and 50 ms, both with room: the 10 ms one; once it is full, the 50 ms one.
        let mut subflows = [view(0, 50, 10, 0), view(1, 10, 10, 0)];
        assert_eq!(pick(&subflows), Pick::one(1, Reason::LowestRtt));
        subflows[1].in_flight_bytes = 10_000;
        assert_eq!(pick(&subflows), Pick::one(0, Reason::LowestRtt));
        subflows[0].in_flight_bytes = 10_000;
        assert_eq!(pick(&subflows), Pick::wait(Reason::NoWindowSpace));
    }

    #[test]
    fn backup_only_when_no_active_subflow_is_usable() {
        // S2: a full active subflow makes the scheduler wait, not fall back to the backup.
        let mut subflows = [view(0, 10, 10, 10), view(1, 5, 10, 0)];
        subflows[1].backup = true;
        assert_eq!(pick(&subflows), Pick::wait(Reason::NoWindowSpace));
        subflows[0].usable = false;
        assert_eq!(pick(&subflows), Pick::one(1, Reason::Backup));
    }

    #[test]
    fn reinjection_prefers_a_subflow_that_has_not_carried_it() {
        let mut subflows = [view(0, 10, 10, 0), view(1, 50, 10, 0)];
        subflows[0].carried = true;
        assert_eq!(pick(&subflows), Pick::one(1, Reason::LowestRtt));
        // The one that has not carried it is full: wait for it.
        subflows[1].in_flight_bytes = 10_000;
        assert_eq!(pick(&subflows), Pick::wait(Reason::NoWindowSpace));
        // Both carried it: the choice starts over among all.
        subflows[1].carried = true;
        assert_eq!(pick(&subflows), Pick::one(0, Reason::LowestRtt));
    }

    #[test]
    fn ties_go_to_the_lower_index_and_unusable_subflows_are_skipped() {
        let mut subflows = [view(0, 10, 10, 0), view(1, 10, 10, 0), view(2, 1, 10, 0)];
        subflows[2].usable = false;
        assert_eq!(pick(&subflows), Pick::one(0, Reason::LowestRtt));
    }

    fn new_data_choice(subflows: &[SubflowView], len: u32) -> Option<usize> {
        let mut choice = NewDataChoice::default();
        for s in subflows.iter().filter(|s| s.usable) {
            choice.offer(s.id, s.backup, s.has_window_space(len), || s.srtt);
        }
        choice.decision()
    }

    #[test]
    fn the_new_data_choice_reads_the_classes_as_lowest_rtt() {
        let mut subflows = [view(0, 10, 10, 10), view(1, 5, 10, 0), view(2, 5, 10, 0)];
        subflows[1].backup = true;
        subflows[2].backup = true;
        // The active subflow is full: wait, not a backup.
        assert_eq!(new_data_choice(&subflows, 1000), None);
        subflows[0].usable = false;
        // No active subflow is usable: the fastest backup with space, the first on a tie.
        assert_eq!(new_data_choice(&subflows, 1000), Some(1));
        subflows[1].in_flight_bytes = 10_000;
        assert_eq!(new_data_choice(&subflows, 1000), Some(2));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The new-data shortcut chooses what the scheduler chooses, on any views of a segment
        /// no subflow carried (a wait for a wait).
        #[test]
        fn the_new_data_choice_is_lowest_rtt(
            subflows in prop::collection::vec(
                (any::<bool>(), any::<bool>(), 0u64..4, 0u64..6, 0u64..6, 0u64..3),
                1..6,
            ),
            len in prop_oneof![Just(1000u32), 1u32..1000],
        ) {
            let views: Vec<SubflowView> = subflows
                .iter()
                .enumerate()
                .map(|(id, &(usable, backup, srtt, cwnd, in_flight, partial))| SubflowView {
                    usable,
                    backup,
                    in_flight_bytes: (in_flight * 1000).saturating_sub(partial * 400),
                    ..view(id, srtt, cwnd, 0)
                })
                .collect();
            let segment = SegmentView { dsn: 0, len, is_reinjection: false };
            let expected = match MinRtt::default()
                .schedule(&ConnectionView::default(), &segment, &views)
                .decision
            {
                super::super::Decision::One(i) => Some(i),
                super::super::Decision::Wait => None,
                super::super::Decision::Several(_) => unreachable!(),
            };
            prop_assert_eq!(new_data_choice(&views, len), expected);
        }
    }
}
