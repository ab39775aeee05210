//! The redundant scheduler (reference `multipath_cc.md` §3.3; `mptcp_redundant.c` at
//! multipath-tcp/mptcp 98b6f999; Frömmgen et al., "ReMP TCP: Low latency multipath TCP",
//! ICC 2016): every segment on every subflow, the receiver keeping the first copy.
//!
//! - New data: [`Decision::Several`] with every usable non-backup subflow that has window
//!   space for the segment; the backup subflows take the place of the non-backup ones only
//!   when no non-backup subflow is usable. If the chosen class has none with window space, the
//!   scheduler waits.
//! - Reinjections: one copy, on the default scheduler's choice ([`lowest_rtt`], §3.1.1), as
//!   the kernel serves its reinjection queue.
//!
//! What the kernel keeps per subflow (a cursor: the last segment each subflow carried, so that
//! a lagging subflow catches up on the segments it has not carried yet and skips those already
//! DATA_ACKed) belongs to the connection here: it offers each segment once, sends the copies
//! this scheduler names, and suppresses duplicates at the data level. This scheduler is
//! stateless.

use super::min_rtt::lowest_rtt;
use super::{
    backups_only, ConnectionView, Decision, PacketScheduler, Pick, Reason, SchedulerKind,
    SegmentView, SubflowSet, SubflowView, MAX_SUBFLOWS,
};
use crate::registry::AlgorithmSpec;

/// The registry declaration of the redundant scheduler.
pub const SPEC: AlgorithmSpec<SchedulerKind> = AlgorithmSpec {
    name: "redundant",
    summary: "a copy of every segment on every subflow with window space (v0.9x redundant, \
              ReMP TCP)",
    params: &[],
    finish: None,
    build: |_, _| Redundant.into(),
};

/// Every segment on every subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Redundant;

impl PacketScheduler for Redundant {
    fn name(&self) -> &'static str {
        "redundant"
    }

    fn is_stateless(&self) -> bool {
        true
    }

    fn schedule(
        &mut self,
        _: &ConnectionView,
        segment: &SegmentView,
        subflows: &[SubflowView],
    ) -> Pick {
        if segment.is_reinjection {
            return lowest_rtt(segment, subflows);
        }
        let backups = backups_only(subflows);
        let mut set = SubflowSet::EMPTY;
        for s in subflows {
            if s.id < MAX_SUBFLOWS && s.backup == backups && s.can_send(segment.len) {
                set.insert(s.id);
            }
        }
        if set.is_empty() {
            Pick::wait(Reason::NoWindowSpace)
        } else {
            Pick {
                decision: Decision::Several(set),
                reason: Reason::Redundant,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::multipath::scheduler::tests::{new_data, reinjection, view};

    fn several(ids: &[usize]) -> Pick {
        let mut set = SubflowSet::EMPTY;
        for &id in ids {
            set.insert(id);
        }
        Pick {
            decision: Decision::Several(set),
            reason: Reason::Redundant,
        }
    }

    #[test]
    fn new_data_goes_to_every_active_subflow_with_window_space() {
        let conn = ConnectionView::default();
        let mut subflows = [
            view(0, 10, 10, 0),
            view(1, 50, 10, 3),
            view(2, 20, 4, 4),
            view(3, 5, 10, 0),
        ];
        subflows[3].usable = false;
        // 2 has no window space, 3 is not usable.
        assert_eq!(
            Redundant.schedule(&conn, &new_data(), &subflows),
            several(&[0, 1])
        );
        subflows[0].in_flight_bytes = 10_000;
        subflows[1].in_flight_bytes = 10_000;
        assert_eq!(
            Redundant.schedule(&conn, &new_data(), &subflows),
            Pick::wait(Reason::NoWindowSpace)
        );
    }

    #[test]
    fn backups_only_when_no_active_subflow_is_usable() {
        let conn = ConnectionView::default();
        let mut subflows = [view(0, 10, 4, 4), view(1, 10, 10, 0), view(2, 10, 10, 0)];
        subflows[1].backup = true;
        subflows[2].backup = true;
        // The active subflow is full: wait for it rather than use the backups.
        assert_eq!(
            Redundant.schedule(&conn, &new_data(), &subflows),
            Pick::wait(Reason::NoWindowSpace)
        );
        subflows[0].usable = false;
        assert_eq!(
            Redundant.schedule(&conn, &new_data(), &subflows),
            several(&[1, 2])
        );
    }

    #[test]
    fn reinjections_take_the_lowest_rtt_choice() {
        let conn = ConnectionView::default();
        let mut subflows = [view(0, 10, 10, 0), view(1, 50, 10, 0), view(2, 30, 10, 0)];
        subflows[0].carried = true;
        assert_eq!(
            Redundant.schedule(&conn, &reinjection(), &subflows),
            Pick::one(2, Reason::LowestRtt)
        );
    }
}
