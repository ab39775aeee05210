//! The redundant scheduler (reference `multipath_cc.md` §3.3; `mptcp_redundant.c` at
//! multipath-tcp/mptcp 98b6f999; Frömmgen et al., "ReMP TCP: Low latency multipath TCP",
//! ICC 2016): every segment on every subflow, the receiver keeping the first copy.
//!
//! Each subflow carries the whole stream, as far as its window lets it: the kernel keeps, per
//! subflow, the last segment it sent (its cursor, cleared once that segment is DATA_ACKed,
//! so a lagging subflow skips data already delivered), and when a subflow's window opens it
//! sends the segment after its cursor, whether other subflows carried it already (a copy) or
//! not (new data). Here the cursors belong to the connection
//! ([`PacketScheduler::copies_to_every_subflow`]): before new data it offers the oldest chunk
//! not DATA_ACKed that a usable non-backup subflow with window space has not carried, and
//! this scheduler names who takes it.
//!
//! - Copies (a segment some subflow carried, not a reinjection): [`Decision::Several`] with
//!   every usable non-backup subflow with window space that has not carried it; backup
//!   subflows never take copies (v0.9x: data already sent goes only to active subflows).
//! - New data: every usable non-backup subflow that has window space for the segment; the
//!   backup subflows take the place of the non-backup ones only when no non-backup subflow is
//!   usable. If the chosen class has none with window space, the scheduler waits.
//! - Reinjections: one copy, on the default scheduler's choice ([`lowest_rtt`], §3.1.1), as
//!   the kernel serves its reinjection queue.
//!
//! The scheduler itself is stateless.

use super::min_rtt::lowest_rtt;
use super::{
    backups_only, ConnectionView, Decision, PacketScheduler, Pick, Reason, SchedulerKind,
    SegmentView, SubflowSet, SubflowView, MAX_SUBFLOWS,
};
use crate::registry::AlgorithmSpec;

/// The registry declaration of the redundant scheduler.
pub const SPEC: AlgorithmSpec<SchedulerKind> = AlgorithmSpec {
    name: "redundant",
    summary: "every subflow carries the whole stream: each segment on every subflow as its \
              window opens, skipping data already DATA_ACKed (v0.9x redundant, ReMP TCP)",
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

    fn copies_to_every_subflow(&self) -> bool {
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
        // A copy (some subflow carried it) goes only to the non-backup subflows that have
        // not; new data to the non-backups, or to the backups when no non-backup is usable.
        let is_copy = subflows.iter().any(|s| s.carried);
        let backups = !is_copy && backups_only(subflows);
        let mut set = SubflowSet::EMPTY;
        for s in subflows {
            if s.id < MAX_SUBFLOWS && s.backup == backups && !s.carried && s.can_send(segment.len) {
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
    fn copies_go_to_the_active_subflows_that_have_not_carried_the_segment() {
        let conn = ConnectionView::default();
        let mut subflows = [
            view(0, 10, 10, 0),
            view(1, 50, 10, 3),
            view(2, 20, 10, 0),
            view(3, 30, 10, 0),
        ];
        // 0 carried it first; 3 is a backup: the copy goes to 1 and 2.
        subflows[0].carried = true;
        subflows[3].backup = true;
        assert_eq!(
            Redundant.schedule(&conn, &new_data(), &subflows),
            several(&[1, 2])
        );
        // No backup takes a copy, even when it is the only subflow with window space.
        subflows[1].in_flight_bytes = 10_000;
        subflows[2].usable = false;
        assert_eq!(
            Redundant.schedule(&conn, &new_data(), &subflows),
            Pick::wait(Reason::NoWindowSpace)
        );
        // Every subflow carried it: nothing to do.
        let mut all = [view(0, 10, 10, 0), view(1, 50, 10, 0)];
        all[0].carried = true;
        all[1].carried = true;
        assert_eq!(
            Redundant.schedule(&conn, &new_data(), &all),
            Pick::wait(Reason::NoWindowSpace)
        );
        assert!(Redundant.copies_to_every_subflow());
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
