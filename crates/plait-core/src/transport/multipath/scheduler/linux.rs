//! The upstream Linux MPTCP (v1) default scheduler, adapted to late binding (reference
//! `multipath_cc.md` §3.6.2 for new data, §3.6.3 for retransmissions, §1.8 for the pacing
//! rate; `mptcp_subflow_get_send` and `mptcp_subflow_get_retrans` in net/mptcp/protocol.c).
//!
//! New data, a fresh choice: among the usable non-backup subflows with window space, the one
//! with the lowest linger time `queued_bytes / avg_pacing_rate` (strict `<`, so ties go to the
//! lower index); the backup subflows take their place only when no non-backup subflow is
//! usable ([`Reason::Backup`]). None with window space in that class: wait. The linger time is
//! Linux's integer `(queued_bytes << 32) / avg_pacing_rate`; a subflow without an RTT sample
//! has linger 0 (Linux's pacing rate is then unbounded).
//!
//! The pacing rate is Linux's `tcp_update_pacing_rate`
//! ([`linux_pacing_rate`]): `ratio · mss · max(cwnd, packets_out) / srtt` in bytes per second,
//! ratio 200 % while `cwnd < ssthresh/2` and 120 % otherwise, with windows in segments
//! ([`SubflowView::cwnd_segments`], `ssthresh_bytes / mss`) and `packets_out` the queued bytes
//! in segments, rounded up. Each subflow keeps Linux's `avg_pacing_rate`: set to the current
//! pacing rate the first time the scheduler looks at the subflow with an RTT sample, and, each
//! time a fresh choice takes the subflow with a burst `b > 0`, moved to
//! `(avg·queued + rate·b) / (queued + b)` (integer division), `queued` being its queued bytes
//! at that moment.
//!
//! Burst: a fresh choice commits `b = min(burst_size, data-level window left)` bytes
//! (`burst_size` = `MPTCP_SEND_BURST_SIZE`, 65 428 bytes; the window is
//! [`ConnectionView::data_window_bytes`]). The following new-data segments stay on that subflow
//! ([`Reason::Burst`]), each using up its length of the budget, as long as budget is left
//! before the segment (as in Linux, the last segment may overrun it) and the subflow is usable
//! with window space; then a fresh choice. With `b = 0` the subflow is chosen for that segment
//! only and its average is left alone, as Linux does.
//!
//! Reinjections (upstream's retransmission chooser, §3.6.3): the first usable non-backup
//! subflow with nothing queued (`queued_bytes = 0`: Linux's empty retransmission and write
//! queues), reported as [`Reason::LowestLinger`] (its linger time is zero); else the first
//! such backup subflow ([`Reason::Backup`]) if no usable subflow has data outstanding; else
//! wait. Reinjections leave the burst alone.
//!
//! Simplifications: upstream schedules ahead of the congestion window (up to the subflow's
//! send buffer) and re-runs the choice only when a burst ends; with late binding a subflow
//! without window space is not a candidate and a burst also ends when its subflow's window is
//! full. Upstream's stale-subflow detection (§3.6.4) is not modelled: stale counts are taken
//! as zero, so a backup subflow carries a retransmission only when no usable subflow has data
//! outstanding, and `queued_bytes` stands for Linux's `sk_wmem_queued` (which also counts
//! buffer overhead). A subflow first seen without an RTT sample gets its average at its first
//! sample instead of Linux's unbounded initial pacing rate.

use super::{
    backups_only, ConnectionView, PacketScheduler, Pick, Reason, SchedulerKind, SegmentView,
    SubflowView,
};
use crate::registry::{AlgorithmSpec, Param, Scalar};
use crate::time::SimTime;
use crate::transport::cc::cubic::linux_pacing_rate;

/// `MPTCP_SEND_BURST_SIZE`: 65 536 bytes less the TCP, IPv6, fragment and option overheads.
pub const SEND_BURST_SIZE: u64 = 65_428;

/// The registry declaration of the upstream Linux scheduler.
pub const SPEC: AlgorithmSpec<SchedulerKind> = AlgorithmSpec {
    name: "linux",
    summary: "lowest linger time (queued bytes over pacing rate) in bursts of 64 KB \
              (upstream Linux MPTCP default)",
    params: &[Param::size(
        "burst_size",
        "bytes committed to one subflow by a choice (MPTCP_SEND_BURST_SIZE)",
    )
    .default(Scalar::Size(SEND_BURST_SIZE))
    .at_least(1.0)],
    finish: None,
    build: |params, context| Linux::new(params.size("burst_size"), context.subflows).into(),
};

/// A burst in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Burst {
    subflow: usize,
    /// Bytes of the budget left (`msk->snd_burst`).
    left: u64,
}

/// The upstream Linux scheduler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Linux {
    burst_size: u64,
    /// Linux's `avg_pacing_rate` per subflow, bytes per second; 0 until set.
    avg_pacing_rate: Vec<u64>,
    burst: Option<Burst>,
}

impl Default for Linux {
    fn default() -> Self {
        Linux::new(SEND_BURST_SIZE, 0)
    }
}

/// The current pacing rate of `s` in bytes per second (§1.8); `None` without an RTT sample.
fn pacing_rate(s: &SubflowView) -> Option<u64> {
    if s.srtt == SimTime::ZERO {
        return None;
    }
    let mss = u64::from(s.mss.max(1));
    Some(linux_pacing_rate(
        u64::from(s.mss),
        s.cwnd_segments(),
        s.queued_bytes.div_ceil(mss),
        s.ssthresh_bytes / mss,
        s.srtt,
    ))
}

impl Linux {
    pub fn new(burst_size: u64, subflows: usize) -> Linux {
        Linux {
            burst_size: burst_size.max(1),
            avg_pacing_rate: vec![0; subflows],
            burst: None,
        }
    }

    /// The averaged pacing rate of `subflow` in bytes per second (0 until set).
    pub fn avg_pacing_rate(&self, subflow: usize) -> u64 {
        self.avg_pacing_rate.get(subflow).copied().unwrap_or(0)
    }

    /// The subflow of the burst in progress and the bytes of budget it has left.
    pub fn burst(&self) -> Option<(usize, u64)> {
        self.burst.map(|b| (b.subflow, b.left))
    }

    /// The linger time of `s` in Linux's units (seconds · 2³²), initialising its average;
    /// `None` when Linux skips the subflow (a zero pacing rate).
    fn linger_time(&mut self, s: &SubflowView) -> Option<u128> {
        let Some(rate) = pacing_rate(s) else {
            return Some(0);
        };
        let avg = &mut self.avg_pacing_rate[s.id];
        if *avg == 0 {
            *avg = rate;
        }
        if *avg == 0 {
            return None;
        }
        Some((u128::from(s.queued_bytes) << 32) / u128::from(*avg))
    }

    fn fresh_choice(
        &mut self,
        connection: &ConnectionView,
        segment: &SegmentView,
        subflows: &[SubflowView],
    ) -> Pick {
        let backups = backups_only(subflows);
        let mut best: Option<(&SubflowView, u128)> = None;
        for s in subflows.iter().filter(|s| s.usable) {
            // Linux sets the average of every active subflow it looks at.
            let Some(linger) = self.linger_time(s) else {
                continue;
            };
            if s.backup == backups
                && s.has_window_space(segment.len)
                && best.is_none_or(|(_, l)| linger < l)
            {
                best = Some((s, linger));
            }
        }
        let Some((chosen, _)) = best else {
            return Pick::wait(Reason::NoWindowSpace);
        };
        let burst = self.burst_size.min(connection.data_window_bytes);
        if burst > 0 {
            if let Some(rate) = pacing_rate(chosen) {
                let avg = &mut self.avg_pacing_rate[chosen.id];
                let queued = u128::from(chosen.queued_bytes);
                let b = u128::from(burst);
                let mixed = (u128::from(*avg) * queued + u128::from(rate) * b) / (queued + b);
                *avg = u64::try_from(mixed).unwrap_or(u64::MAX);
            }
            let left = burst.saturating_sub(u64::from(segment.len));
            self.burst = (left > 0).then_some(Burst {
                subflow: chosen.id,
                left,
            });
        }
        let reason = if backups {
            Reason::Backup
        } else {
            Reason::LowestLinger
        };
        Pick::one(chosen.id, reason)
    }
}

/// Upstream's retransmission chooser (§3.6.3), with stale counts taken as zero.
fn retransmission_choice(segment: &SegmentView, subflows: &[SubflowView]) -> Pick {
    let idle = |backup: bool| {
        subflows
            .iter()
            .find(|s| s.backup == backup && s.queued_bytes == 0 && s.can_send(segment.len))
    };
    if let Some(s) = idle(false) {
        return Pick::one(s.id, Reason::LowestLinger);
    }
    let outstanding = subflows.iter().any(|s| s.usable && s.queued_bytes > 0);
    match idle(true) {
        Some(s) if !outstanding => Pick::one(s.id, Reason::Backup),
        _ => Pick::wait(Reason::NoWindowSpace),
    }
}

impl PacketScheduler for Linux {
    fn name(&self) -> &'static str {
        "linux"
    }

    fn schedule(
        &mut self,
        connection: &ConnectionView,
        segment: &SegmentView,
        subflows: &[SubflowView],
    ) -> Pick {
        if let Some(largest) = subflows.iter().map(|s| s.id + 1).max() {
            if self.avg_pacing_rate.len() < largest {
                self.avg_pacing_rate.resize(largest, 0);
            }
        }
        if segment.is_reinjection {
            return retransmission_choice(segment, subflows);
        }
        if let Some(burst) = self.burst.take() {
            let on = subflows.iter().find(|s| s.id == burst.subflow);
            if on.is_some_and(|s| s.can_send(segment.len)) {
                let left = burst.left.saturating_sub(u64::from(segment.len));
                self.burst = (left > 0).then_some(Burst { left, ..burst });
                return Pick::one(burst.subflow, Reason::Burst);
            }
        }
        self.fresh_choice(connection, segment, subflows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::multipath::scheduler::tests::{new_data, reinjection, view};

    fn conn(data_window_bytes: u64) -> ConnectionView {
        ConnectionView {
            data_window_bytes,
            peer_window_bytes: data_window_bytes,
            ..ConnectionView::default()
        }
    }

    #[test]
    fn the_pacing_rate_is_linuxs() {
        // 10 segments of 1000 bytes over 10 ms = 1 000 000 B/s; slow start (no ssthresh): 200 %.
        let mut s = view(0, 10, 10, 0);
        assert_eq!(pacing_rate(&s), Some(2_000_000));
        // cwnd 10 ≥ ssthresh/2 = 10: 120 %.
        s.ssthresh_bytes = 20_000;
        assert_eq!(pacing_rate(&s), Some(1_200_000));
        s.ssthresh_bytes = 21_000;
        assert_eq!(pacing_rate(&s), Some(1_200_000));
        s.ssthresh_bytes = 22_000;
        assert_eq!(pacing_rate(&s), Some(2_000_000));
        // More queued than the window (after a reduction): max(cwnd, packets_out).
        s.queued_bytes = 14_500;
        assert_eq!(pacing_rate(&s), Some(3_000_000));
        s.srtt = SimTime::ZERO;
        assert_eq!(pacing_rate(&s), None);
    }

    #[test]
    fn the_lowest_linger_time_wins_and_ties_go_to_the_lower_index() {
        // Equal empty queues: linger 0 everywhere, the first subflow.
        let subflows = [view(0, 50, 10, 0), view(1, 10, 10, 0)];
        let mut linux = Linux::new(SEND_BURST_SIZE, 2);
        assert_eq!(
            linux.schedule(&conn(0), &new_data(), &subflows),
            Pick::one(0, Reason::LowestLinger)
        );
        // Queues of 5 segments: linger = 5000 / (2·10 000 / srtt) is smaller on the 10 ms one.
        let subflows = [view(0, 50, 10, 5), view(1, 10, 10, 5)];
        let mut linux = Linux::new(SEND_BURST_SIZE, 2);
        assert_eq!(
            linux.schedule(&conn(0), &new_data(), &subflows),
            Pick::one(1, Reason::LowestLinger)
        );
        // The fast one carries a long queue: 9 segments at 10 ms (linger 4.5 ms) against 1
        // at 50 ms (linger 2.5 ms).
        let subflows = [view(0, 50, 10, 1), view(1, 10, 10, 9)];
        let mut linux = Linux::new(SEND_BURST_SIZE, 2);
        assert_eq!(
            linux.schedule(&conn(0), &new_data(), &subflows),
            Pick::one(0, Reason::LowestLinger)
        );
        // No RTT sample: linger 0.
        let mut subflows = [view(0, 10, 10, 3), view(1, 10, 10, 3)];
        subflows[1].srtt = SimTime::ZERO;
        let mut linux = Linux::new(SEND_BURST_SIZE, 2);
        assert_eq!(
            linux.schedule(&conn(0), &new_data(), &subflows),
            Pick::one(1, Reason::LowestLinger)
        );
    }

    #[test]
    fn a_burst_stays_on_its_subflow_until_the_budget_is_used() {
        let subflows = [view(0, 10, 100, 0), view(1, 10, 100, 0)];
        let mut linux = Linux::new(SEND_BURST_SIZE, 2);
        let c = conn(1 << 30);
        assert_eq!(
            linux.schedule(&c, &new_data(), &subflows),
            Pick::one(0, Reason::LowestLinger)
        );
        assert_eq!(linux.burst(), Some((0, 64_428)));
        // 65 428 bytes: 65 segments of 1000 bytes, the 66th overruns it.
        for i in 1..66 {
            assert_eq!(
                linux.schedule(&c, &new_data(), &subflows),
                Pick::one(0, Reason::Burst),
                "segment {i}"
            );
        }
        assert_eq!(linux.burst(), None);
        // A fresh choice (the views did not change: subflow 0 again).
        assert_eq!(
            linux.schedule(&c, &new_data(), &subflows),
            Pick::one(0, Reason::LowestLinger)
        );
    }

    #[test]
    fn the_burst_is_bounded_by_the_data_window_and_ends_without_window_space() {
        let mut subflows = [view(0, 10, 100, 0), view(1, 10, 100, 0)];
        let mut linux = Linux::new(SEND_BURST_SIZE, 2);
        // 2500 bytes of data window: this segment and two more (1500 left, then 500).
        linux.schedule(&conn(2500), &new_data(), &subflows);
        assert_eq!(linux.burst(), Some((0, 1500)));
        assert_eq!(
            linux.schedule(&conn(2500), &new_data(), &subflows),
            Pick::one(0, Reason::Burst)
        );
        assert_eq!(linux.burst(), Some((0, 500)));
        // Subflow 0's window fills: the burst ends, a fresh choice takes subflow 1.
        subflows[0].in_flight_bytes = 100_000;
        assert_eq!(
            linux.schedule(&conn(2500), &new_data(), &subflows),
            Pick::one(1, Reason::LowestLinger)
        );
        // A zero data window: the choice holds for one segment, no burst, and the average
        // stays the rate it was set to when first seen (100 segments over 10 ms, 200 %).
        let mut linux = Linux::new(SEND_BURST_SIZE, 2);
        subflows[0].in_flight_bytes = 0;
        subflows[0].queued_bytes = 2000;
        assert_eq!(
            linux.schedule(&conn(0), &new_data(), &subflows),
            Pick::one(1, Reason::LowestLinger)
        );
        subflows[1].queued_bytes = 3000;
        assert_eq!(
            linux.schedule(&conn(0), &new_data(), &subflows),
            Pick::one(0, Reason::LowestLinger)
        );
        assert_eq!(
            (linux.burst(), linux.avg_pacing_rate(0)),
            (None, 20_000_000)
        );
    }

    #[test]
    fn the_average_pacing_rate_mixes_the_burst_in() {
        // Subflow 0: 10 ms, cwnd 10, queue of 4 segments: rate 2 000 000 B/s, the average set
        // to it when first seen. Then its rate halves (srtt 20 ms) and a burst of 65 428 bytes
        // is committed: avg = (2e6·4000 + 1e6·65 428) / 69 428 = 1 057 613 (integer division).
        let mut subflows = [view(0, 10, 10, 4)];
        let mut linux = Linux::new(SEND_BURST_SIZE, 1);
        assert_eq!(
            linux.linger_time(&subflows[0]),
            Some((4000u128 << 32) / 2_000_000)
        );
        assert_eq!(linux.avg_pacing_rate(0), 2_000_000);
        subflows[0].srtt = SimTime::from_millis(20);
        linux.schedule(&conn(1 << 30), &new_data(), &subflows);
        let expected = (2_000_000u128 * 4000 + 1_000_000 * 65_428) / 69_428;
        assert_eq!(u128::from(linux.avg_pacing_rate(0)), expected);
        assert_eq!(expected, 1_057_613);
    }

    #[test]
    fn backups_only_when_no_active_subflow_is_usable() {
        let mut subflows = [view(0, 10, 4, 4), view(1, 10, 10, 0)];
        subflows[1].backup = true;
        let mut linux = Linux::new(SEND_BURST_SIZE, 2);
        assert_eq!(
            linux.schedule(&conn(1 << 20), &new_data(), &subflows),
            Pick::wait(Reason::NoWindowSpace)
        );
        subflows[0].usable = false;
        assert_eq!(
            linux.schedule(&conn(1 << 20), &new_data(), &subflows),
            Pick::one(1, Reason::Backup)
        );
    }

    #[test]
    fn retransmissions_go_to_the_first_idle_active_subflow() {
        let mut subflows = [view(0, 10, 10, 3), view(1, 50, 10, 0), view(2, 20, 10, 0)];
        let mut linux = Linux::new(SEND_BURST_SIZE, 3);
        assert_eq!(
            linux.schedule(&conn(1 << 20), &reinjection(), &subflows),
            Pick::one(1, Reason::LowestLinger)
        );
        // Every active subflow has data outstanding: wait, even with an idle backup.
        subflows[1].in_flight_bytes = 1000;
        subflows[1].queued_bytes = 1000;
        subflows[2].backup = true;
        assert_eq!(
            linux.schedule(&conn(1 << 20), &reinjection(), &subflows),
            Pick::wait(Reason::NoWindowSpace)
        );
        // Nothing outstanding on any usable subflow: the idle backup.
        subflows[0].usable = false;
        subflows[1].usable = false;
        assert_eq!(
            linux.schedule(&conn(1 << 20), &reinjection(), &subflows),
            Pick::one(2, Reason::Backup)
        );
        // Reinjections leave a burst alone.
        let subflows = [view(0, 10, 100, 0), view(1, 10, 100, 0)];
        let mut linux = Linux::new(SEND_BURST_SIZE, 2);
        linux.schedule(&conn(1 << 20), &new_data(), &subflows);
        let burst = linux.burst();
        linux.schedule(&conn(1 << 20), &reinjection(), &subflows);
        assert_eq!(linux.burst(), burst);
    }
}
