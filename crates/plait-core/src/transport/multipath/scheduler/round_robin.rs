//! The v0.9x kernel's round-robin scheduler, `roundrobin` (reference `multipath_cc.md` §3.2;
//! `mptcp_rr.c` at multipath-tcp/mptcp 7a662b69).
//!
//! Each subflow has a quota: the segments it has carried in the current round. For new data
//! the subflows are scanned in index order, considering only the *available* ones (usable and,
//! with `cwnd_limited`, with window space for the segment):
//! - the first one with `0 < quota < num_segments` continues its turn and is chosen at once;
//! - otherwise a subflow with `quota = 0` is chosen, and as the kernel keeps scanning without
//!   stopping, it is the **last** such subflow in index order; so with equal paths and
//!   `num_segments = 1` the rotation runs from the highest index down (2, 1, 0, 2, 1, 0, ...);
//! - when every considered subflow has a full quota (`quota ≥ num_segments`, and at least one
//!   was considered), the quotas of the available subflows are reset to zero and the scan runs
//!   again; subflows that are not available keep their quota.
//!
//! The chosen subflow must have window space even when `cwnd_limited` is off (the kernel checks
//! again with the window test); if it has none the scheduler waits. So with `cwnd_limited` off a
//! subflow whose turn it is and whose window is full holds the whole connection until its window
//! opens. The chosen subflow's quota grows by the segments carried: one for a segment of at most
//! one MSS, `⌈len/mss⌉` for a longer one. Nothing is available at all: wait.
//!
//! Reinjections (the kernel's `rr_get_available_subflow`, which leaves quotas alone): among the
//! usable subflows with window space, the last one in index order that has not carried the
//! segment; if all of them carried it, the last one of those (the kernel then clears the
//! segment's path mask, which the connection does here).
//!
//! Departure from the kernel: the kernel's round robin ignores the backup flag; here new data
//! follows the rule of [`SubflowView::backup`] (backups only when no non-backup subflow is
//! usable), so with no backup subflow the behaviour is the kernel's. Reinjections may use any
//! subflow, as in the kernel. The kernel's quota is an `unsigned char` that could wrap; here it
//! cannot.

use super::{
    backups_only, ConnectionView, PacketScheduler, Pick, Reason, SchedulerKind, SegmentView,
    SubflowView,
};
use crate::registry::{AlgorithmSpec, Param, Scalar};

/// The registry declaration of the round-robin scheduler.
pub const SPEC: AlgorithmSpec<SchedulerKind> = AlgorithmSpec {
    name: "round_robin",
    summary: "round robin over the subflows, num_segments segments per turn (v0.9x roundrobin)",
    params: &[
        Param::integer(
            "num_segments",
            "consecutive segments a subflow carries in its turn (the kernel's byte-sized \
             module parameter)",
        )
        .unit("segments")
        .default(Scalar::Integer(1))
        .between(1.0, 255.0),
        Param::bool(
            "cwnd_limited",
            "skip subflows without window space in the rotation (off: wait for the subflow \
             whose turn it is)",
        )
        .default(Scalar::Bool(true)),
    ],
    finish: None,
    build: |params, context| {
        RoundRobin::new(
            params.integer("num_segments") as u32,
            params.bool("cwnd_limited"),
            context.subflows,
        )
        .into()
    },
};

/// Round robin with per-subflow quotas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundRobin {
    num_segments: u32,
    cwnd_limited: bool,
    /// Segments carried in the current round, by subflow index.
    quotas: Vec<u32>,
}

impl RoundRobin {
    pub fn new(num_segments: u32, cwnd_limited: bool, subflows: usize) -> RoundRobin {
        RoundRobin {
            num_segments: num_segments.max(1),
            cwnd_limited,
            quotas: vec![0; subflows],
        }
    }

    /// The quota of `subflow` in the current round.
    pub fn quota(&self, subflow: usize) -> u32 {
        self.quotas.get(subflow).copied().unwrap_or(0)
    }

    fn schedule_new_data(&mut self, segment: &SegmentView, subflows: &[SubflowView]) -> Pick {
        let backups = backups_only(subflows);
        let cwnd_limited = self.cwnd_limited;
        let available = |s: &SubflowView| {
            s.usable && s.backup == backups && (!cwnd_limited || s.has_window_space(segment.len))
        };
        let mut chosen: Option<&SubflowView> = None;
        // At most two scans: after a reset every available subflow has a zero quota.
        for _ in 0..2 {
            let (mut considered, mut full) = (0usize, 0usize);
            for s in subflows.iter().filter(|s| available(s)) {
                considered += 1;
                let quota = self.quotas[s.id];
                if quota > 0 && quota < self.num_segments {
                    // Its turn is not over: continue on it.
                    chosen = Some(s);
                    break;
                }
                if quota == 0 {
                    // Unused this round; a later unused subflow replaces it (no break).
                    chosen = Some(s);
                }
                if quota >= self.num_segments {
                    full += 1;
                }
            }
            if considered > 0 && considered == full {
                for s in subflows.iter().filter(|s| available(s)) {
                    self.quotas[s.id] = 0;
                }
                continue;
            }
            break;
        }
        let Some(s) = chosen else {
            return Pick::wait(Reason::NoWindowSpace);
        };
        if !s.has_window_space(segment.len) {
            return Pick::wait(Reason::NoWindowSpace);
        }
        let mss = s.mss.max(1);
        self.quotas[s.id] += if segment.len > mss {
            segment.len.div_ceil(mss)
        } else {
            1
        };
        let reason = if backups {
            Reason::Backup
        } else {
            Reason::RoundRobin
        };
        Pick::one(s.id, reason)
    }
}

/// The kernel's `rr_get_available_subflow`: the last usable subflow with window space that has
/// not carried the segment, else the last one that has.
fn schedule_reinjection(segment: &SegmentView, subflows: &[SubflowView]) -> Pick {
    let mut fresh = None;
    let mut used = None;
    for s in subflows.iter().filter(|s| s.can_send(segment.len)) {
        if s.carried {
            used = Some(s.id);
        } else {
            fresh = Some(s.id);
        }
    }
    match fresh.or(used) {
        Some(id) => Pick::one(id, Reason::RoundRobin),
        None => Pick::wait(Reason::NoWindowSpace),
    }
}

impl PacketScheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "round_robin"
    }

    fn schedule(
        &mut self,
        _: &ConnectionView,
        segment: &SegmentView,
        subflows: &[SubflowView],
    ) -> Pick {
        if let Some(largest) = subflows.iter().map(|s| s.id + 1).max() {
            if self.quotas.len() < largest {
                self.quotas.resize(largest, 0);
            }
        }
        if segment.is_reinjection {
            schedule_reinjection(segment, subflows)
        } else {
            self.schedule_new_data(segment, subflows)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::multipath::scheduler::tests::{new_data, reinjection, view};
    use crate::transport::multipath::scheduler::Decision;

    fn picks(rr: &mut RoundRobin, subflows: &[SubflowView], n: usize) -> Vec<usize> {
        (0..n)
            .map(
                |_| match rr.schedule(&ConnectionView::default(), &new_data(), subflows) {
                    Pick {
                        decision: Decision::One(id),
                        reason: Reason::RoundRobin,
                    } => id,
                    other => panic!("unexpected {other:?}"),
                },
            )
            .collect()
    }

    #[test]
    fn equal_paths_alternate_exactly() {
        let subflows = [view(0, 10, 10, 0), view(1, 10, 10, 0)];
        let mut rr = RoundRobin::new(1, true, 2);
        let order = picks(&mut rr, &subflows, 8);
        assert_eq!(order, [1, 0, 1, 0, 1, 0, 1, 0]);
        let counts = [0, 1].map(|i| order.iter().filter(|&&x| x == i).count());
        assert_eq!(counts, [4, 4]);
    }

    #[test]
    fn the_order_is_the_kernels_last_unused_first() {
        // Three equal subflows, one segment per turn: the last unused subflow wins each scan.
        let subflows = [view(0, 10, 10, 0), view(1, 30, 10, 0), view(2, 20, 10, 0)];
        let mut rr = RoundRobin::new(1, true, 3);
        assert_eq!(picks(&mut rr, &subflows, 7), [2, 1, 0, 2, 1, 0, 2]);
        // Two segments per turn: a subflow in the middle of its turn continues first.
        let mut rr = RoundRobin::new(2, true, 3);
        assert_eq!(picks(&mut rr, &subflows, 8), [2, 2, 1, 1, 0, 0, 2, 2]);
    }

    #[test]
    fn a_turn_resumes_on_the_first_subflow_in_the_middle_of_one() {
        let subflows = [view(0, 10, 10, 0), view(1, 10, 10, 0), view(2, 10, 10, 0)];
        let mut rr = RoundRobin::new(3, true, 3);
        rr.quotas = vec![0, 1, 2];
        // Subflow 1 (quota 1 < 3) comes first in index order and continues.
        assert_eq!(picks(&mut rr, &subflows, 2), [1, 1]);
        // Now 1 is full; 2 is still in its turn.
        assert_eq!(picks(&mut rr, &subflows, 1), [2]);
        // 1 and 2 full, 0 unused.
        assert_eq!(picks(&mut rr, &subflows, 3), [0, 0, 0]);
        // All full: reset, the last unused first.
        assert_eq!(picks(&mut rr, &subflows, 1), [2]);
    }

    #[test]
    fn skips_subflows_without_window_space_when_cwnd_limited() {
        // Subflow 2's window is full: the rotation runs over 0 and 1 only.
        let mut subflows = [view(0, 10, 10, 0), view(1, 10, 10, 0), view(2, 10, 4, 4)];
        let mut rr = RoundRobin::new(1, true, 3);
        assert_eq!(picks(&mut rr, &subflows, 4), [1, 0, 1, 0]);
        assert_eq!(rr.quota(2), 0);
        // Its window opens: it has not had its turn this round, so it comes next; then every
        // quota is full, the round restarts, and the last unused subflow (2 again) leads.
        subflows[2].in_flight_bytes = 0;
        assert_eq!(picks(&mut rr, &subflows, 4), [2, 2, 1, 0]);
    }

    #[test]
    fn without_cwnd_limited_the_rotation_waits_for_a_full_subflow() {
        let mut subflows = [view(0, 10, 10, 0), view(1, 10, 4, 4)];
        let mut rr = RoundRobin::new(1, false, 2);
        // Subflow 1 (the last unused one) is chosen but has no window space: wait.
        for _ in 0..3 {
            assert_eq!(
                rr.schedule(&ConnectionView::default(), &new_data(), &subflows),
                Pick::wait(Reason::NoWindowSpace)
            );
        }
        assert_eq!((rr.quota(0), rr.quota(1)), (0, 0));
        subflows[1].in_flight_bytes = 3000;
        assert_eq!(picks(&mut rr, &subflows, 3), [1, 0, 1]);
    }

    #[test]
    fn never_picks_a_subflow_without_window_space() {
        for cwnd_limited in [true, false] {
            let subflows = [view(0, 10, 2, 2), view(1, 10, 3, 3)];
            let mut rr = RoundRobin::new(1, cwnd_limited, 2);
            for _ in 0..4 {
                assert_eq!(
                    rr.schedule(&ConnectionView::default(), &new_data(), &subflows),
                    Pick::wait(Reason::NoWindowSpace)
                );
            }
            assert_eq!(
                rr.schedule(&ConnectionView::default(), &reinjection(), &subflows),
                Pick::wait(Reason::NoWindowSpace)
            );
        }
    }

    #[test]
    fn unusable_subflows_are_skipped_and_keep_their_quota() {
        let mut subflows = [view(0, 10, 10, 0), view(1, 10, 10, 0), view(2, 10, 10, 0)];
        let mut rr = RoundRobin::new(1, true, 3);
        assert_eq!(picks(&mut rr, &subflows, 1), [2]);
        subflows[2].usable = false;
        // 0 and 1 alternate; 2's quota (full) survives the resets it is not part of.
        assert_eq!(picks(&mut rr, &subflows, 4), [1, 0, 1, 0]);
        assert_eq!(rr.quota(2), 1);
        subflows[2].usable = true;
        assert_eq!(picks(&mut rr, &subflows, 3), [2, 1, 0]);
    }

    #[test]
    fn a_long_segment_uses_up_its_segments_of_the_quota() {
        let subflows = [view(0, 10, 10, 0), view(1, 10, 10, 0)];
        let mut rr = RoundRobin::new(3, true, 2);
        let long = SegmentView {
            len: 2500,
            ..new_data()
        };
        assert_eq!(
            rr.schedule(&ConnectionView::default(), &long, &subflows),
            Pick::one(1, Reason::RoundRobin)
        );
        assert_eq!(rr.quota(1), 3);
        assert_eq!(picks(&mut rr, &subflows, 1), [0]);
    }

    #[test]
    fn backups_carry_new_data_only_when_no_active_subflow_is_usable() {
        let mut subflows = [view(0, 10, 10, 0), view(1, 10, 10, 0), view(2, 10, 10, 0)];
        subflows[2].backup = true;
        let mut rr = RoundRobin::new(1, true, 3);
        assert_eq!(picks(&mut rr, &subflows, 4), [1, 0, 1, 0]);
        subflows[0].usable = false;
        subflows[1].usable = false;
        assert_eq!(
            rr.schedule(&ConnectionView::default(), &new_data(), &subflows),
            Pick::one(2, Reason::Backup)
        );
    }

    #[test]
    fn reinjections_take_the_last_subflow_that_has_not_carried_them() {
        let mut subflows = [view(0, 10, 10, 0), view(1, 10, 10, 0), view(2, 10, 10, 0)];
        subflows[1].carried = true;
        let mut rr = RoundRobin::new(1, true, 3);
        let conn = ConnectionView::default();
        assert_eq!(
            rr.schedule(&conn, &reinjection(), &subflows),
            Pick::one(2, Reason::RoundRobin)
        );
        subflows[2].in_flight_bytes = 10_000;
        assert_eq!(
            rr.schedule(&conn, &reinjection(), &subflows),
            Pick::one(0, Reason::RoundRobin)
        );
        // Every subflow with room carried it: the last of those.
        subflows[0].carried = true;
        assert_eq!(
            rr.schedule(&conn, &reinjection(), &subflows),
            Pick::one(1, Reason::RoundRobin)
        );
        // Reinjections leave the quotas alone.
        assert_eq!((rr.quota(0), rr.quota(1), rr.quota(2)), (0, 0, 0));
    }
}
