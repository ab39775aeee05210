//! ECF, earliest completion first (reference `multipath_cc.md` §3.5; Lim, Nahum, Towsley,
//! Gibbens, "ECF: An MPTCP path scheduler to manage heterogeneous paths", ACM CoNEXT 2017;
//! `mptcp_ecf.c` at multipath-tcp/mptcp 55634041).
//!
//! When the default choice ([`lowest_rtt`]) names a subflow `S` other than the fastest usable
//! subflow `F`, ECF asks whether waiting for `F` would finish the pending data sooner than
//! sending on `S`. With `k` the bytes the application has written that no subflow has carried
//! yet ([`ConnectionView::unscheduled_bytes`]), `W_F = cwnd_F·mss_F` and `W_S = cwnd_S·mss_S`
//! the windows in bytes (whole segments), `rtt` the SRTTs, `δ = max(2·rttvar_F, 2·rttvar_S)`
//! (the kernel's `rttvar_us >> 1`, half of Linux's RTO variance term, i.e. twice RFC 6298's
//! RTTVAR), `β = 1/r_beta` and `waiting ∈ {0, 1}` (initially 0):
//! 1. if there is no default choice (wait) or it is `F`, that is the answer;
//! 2. `x_F = max(k, W_F)`; if `rtt_F·(x_F + W_F) < W_F·(rtt_S + δ)·(1 + waiting·β)` (sending
//!    everything on `F` after waiting for it beats one round on `S`), then with
//!    `x_S = max(k, W_S)`: if `rtt_S·x_S ≥ W_S·(2·rtt_F + δ)`, set `waiting = 1` and wait
//!    ([`Reason::EcfWait`]); otherwise send on `S` (`waiting` unchanged);
//! 3. otherwise set `waiting = 0` and send on `S`.
//!
//! The first comparison is the kernel's integer form
//! `r_beta·lhs < r_beta·rhs + waiting·rhs`, evaluated exactly (times in nanoseconds, 128-bit
//! products). ECF keeps the default `next_segment`, so the receive-buffer optimisation
//! (penalisation and opportunistic retransmission, §3.1.4) is on, and its chooser serves every
//! segment, reinjections included.
//!
//! Choices: each window uses its own subflow's MSS (the kernel uses `S`'s for both, "assuming
//! equal MSS"); `F` ignores the backup flag, as in the kernel; the original authors'
//! `max(cwnd, cwnd before an idle restart)` is not used, as in the merged v0.95 code.

use super::min_rtt::{fastest_usable, lowest_rtt};
use super::{
    ConnectionView, Decision, PacketScheduler, Pick, Reason, SchedulerKind, SchedulerOptions,
    SegmentView, SubflowView,
};
use crate::registry::{AlgorithmSpec, Param, Scalar};

/// The registry declaration of ECF.
pub const SPEC: AlgorithmSpec<SchedulerKind> = AlgorithmSpec {
    name: "ecf",
    summary: "lowest RTT, waiting for the fastest subflow when that completes sooner \
              (ECF, Lim et al. 2017)",
    params: &[Param::integer(
        "r_beta",
        "inverse of the hysteresis margin beta = 1/r_beta once ECF has waited",
    )
    .default(Scalar::Integer(4))
    .at_least(1.0)],
    finish: None,
    build: |params, _| Ecf::new(params.integer("r_beta")).into(),
};

/// ECF's state: the hysteresis flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ecf {
    r_beta: u64,
    /// The kernel's `switching_margin`, the paper's `waiting`.
    waiting: bool,
}

impl Default for Ecf {
    fn default() -> Self {
        Ecf::new(4)
    }
}

impl Ecf {
    pub fn new(r_beta: u64) -> Ecf {
        Ecf {
            r_beta: r_beta.max(1),
            waiting: false,
        }
    }

    /// Whether ECF waited for the fast subflow last time it decided between the two.
    pub fn is_waiting(&self) -> bool {
        self.waiting
    }

    /// Step 2 and 3 for a slow subflow `slow` offered while `fast` is the fastest.
    fn should_wait(
        &mut self,
        unscheduled_bytes: u64,
        fast: &SubflowView,
        slow: &SubflowView,
    ) -> bool {
        let window = |s: &SubflowView| u128::from(s.cwnd_segments()) * u128::from(s.mss);
        let (window_f, window_s) = (window(fast), window(slow));
        let (rtt_f, rtt_s) = (
            u128::from(fast.srtt.as_nanos()),
            u128::from(slow.srtt.as_nanos()),
        );
        let delta = 2 * u128::from(fast.rttvar.as_nanos().max(slow.rttvar.as_nanos()));
        let k = u128::from(unscheduled_bytes);
        let r_beta = u128::from(self.r_beta);
        let x_f = k.max(window_f);
        let lhs = rtt_f * (x_f + window_f);
        let rhs = window_f * (rtt_s + delta);
        if r_beta * lhs < r_beta * rhs + u128::from(self.waiting) * rhs {
            let x_s = k.max(window_s);
            if rtt_s * x_s >= window_s * (2 * rtt_f + delta) {
                self.waiting = true;
                return true;
            }
        } else {
            self.waiting = false;
        }
        false
    }
}

impl PacketScheduler for Ecf {
    fn name(&self) -> &'static str {
        "ecf"
    }

    fn schedule(
        &mut self,
        connection: &ConnectionView,
        segment: &SegmentView,
        subflows: &[SubflowView],
    ) -> Pick {
        let pick = lowest_rtt(segment, subflows);
        let Decision::One(id) = pick.decision else {
            return pick;
        };
        let Some(fast) = fastest_usable(subflows) else {
            return pick;
        };
        if fast.id == id {
            return pick;
        }
        let Some(slow) = subflows.iter().find(|s| s.id == id) else {
            return pick;
        };
        if self.should_wait(connection.unscheduled_bytes, fast, slow) {
            Pick::wait(Reason::EcfWait)
        } else {
            pick
        }
    }

    fn options(&self) -> SchedulerOptions {
        SchedulerOptions {
            penalisation: true,
            opportunistic_retransmission: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;
    use crate::transport::multipath::scheduler::min_rtt::MinRtt;
    use crate::transport::multipath::scheduler::tests::{new_data, reinjection, view};

    fn conn(unscheduled_bytes: u64) -> ConnectionView {
        ConnectionView {
            unscheduled_bytes,
            ..ConnectionView::default()
        }
    }

    #[test]
    fn ec1_little_data_and_a_much_slower_subflow_wait_for_the_fast_one() {
        // F: 10 ms, window 10 segments, full; S: 100 ms, window 10, empty; k = 5000 ≤ W_F.
        // lhs = 10·(10 000 + 10 000) = 200 000 < rhs = 10 000·100 = 1 000 000;
        // rtt_S·x_S = 100·10 000 ≥ W_S·2·rtt_F = 10 000·20: wait.
        let subflows = [view(0, 10, 10, 10), view(1, 100, 10, 0)];
        let mut ecf = Ecf::default();
        for k in [0, 1000, 5000, 10_000] {
            assert_eq!(
                ecf.schedule(&conn(k), &new_data(), &subflows),
                Pick::wait(Reason::EcfWait),
                "k = {k}"
            );
            assert!(ecf.is_waiting());
        }
        // Much data pending: both subflows are worth using (EC2).
        let mut ecf = Ecf::default();
        assert_eq!(
            ecf.schedule(&conn(1_000_000), &new_data(), &subflows),
            Pick::one(1, Reason::LowestRtt)
        );
        assert!(!ecf.is_waiting());
    }

    #[test]
    fn the_variance_margin_counts_twice_rttvar() {
        // F 10 ms, S 30 ms, windows 10 segments, k = 25 000: lhs = 10·35 000 = 350 000,
        // rhs = 10 000·(30 + δ). Without variance 350 000 ≥ 300 000: use S. With rttvar_S = 2 ms,
        // δ = 4 ms: rhs = 340 000, still S; rttvar_F = 2.5 ms, δ = 5 ms: rhs = 350 000, still S
        // (strict); rttvar 3 ms, δ = 6 ms: rhs = 360 000 > lhs, and
        // rtt_S·x_S = 30·25 000 ≥ 10 000·(20 + 6): wait.
        let mut subflows = [view(0, 10, 10, 10), view(1, 30, 10, 0)];
        let mut ecf = Ecf::default();
        assert_eq!(
            ecf.schedule(&conn(25_000), &new_data(), &subflows),
            Pick::one(1, Reason::LowestRtt)
        );
        subflows[1].rttvar = SimTime::from_millis(2);
        assert_eq!(
            ecf.schedule(&conn(25_000), &new_data(), &subflows),
            Pick::one(1, Reason::LowestRtt)
        );
        subflows[0].rttvar = SimTime::from_micros(2500);
        assert_eq!(
            ecf.schedule(&conn(25_000), &new_data(), &subflows),
            Pick::one(1, Reason::LowestRtt)
        );
        subflows[0].rttvar = SimTime::from_millis(3);
        assert_eq!(
            ecf.schedule(&conn(25_000), &new_data(), &subflows),
            Pick::wait(Reason::EcfWait)
        );
    }

    #[test]
    fn ec3_once_waiting_the_slow_subflow_needs_a_larger_advantage() {
        // F 10 ms, S 30 ms, windows 10 segments, k = 25 000: lhs = 350 000, rhs = 300 000.
        // Not waiting: 4·350 000 ≥ 4·300 000, use S. Waiting: 1 400 000 < 1 200 000 + 300 000,
        // and rtt_S·x_S = 750 000 ≥ 10 000·20: keep waiting.
        let subflows = [view(0, 10, 10, 10), view(1, 30, 10, 0)];
        let mut fresh = Ecf::default();
        assert_eq!(
            fresh.schedule(&conn(25_000), &new_data(), &subflows),
            Pick::one(1, Reason::LowestRtt)
        );
        let mut waiting = Ecf::default();
        // Little data: wait, which sets the flag.
        assert_eq!(
            waiting.schedule(&conn(0), &new_data(), &subflows),
            Pick::wait(Reason::EcfWait)
        );
        assert_eq!(
            waiting.schedule(&conn(25_000), &new_data(), &subflows),
            Pick::wait(Reason::EcfWait)
        );
        // Beyond the margin (lhs ≥ 1.25·rhs: k ≥ 27 500): S again, and the flag clears.
        assert_eq!(
            waiting.schedule(&conn(27_500), &new_data(), &subflows),
            Pick::one(1, Reason::LowestRtt)
        );
        assert!(!waiting.is_waiting());
        assert_eq!(
            waiting.schedule(&conn(25_000), &new_data(), &subflows),
            Pick::one(1, Reason::LowestRtt)
        );
        // A larger r_beta (smaller beta) narrows the margin: r_beta = 8 gives 1.125·rhs =
        // 337 500 < 350 000.
        let mut narrow = Ecf::new(8);
        narrow.schedule(&conn(0), &new_data(), &subflows);
        assert!(narrow.is_waiting());
        assert_eq!(
            narrow.schedule(&conn(25_000), &new_data(), &subflows),
            Pick::one(1, Reason::LowestRtt)
        );
    }

    #[test]
    fn a_slow_subflow_within_two_fast_rtts_is_used_without_touching_the_flag() {
        // F: 10 ms, window 10 segments, full; k = 0, so x_F = W_F = 10 000 and
        // lhs = 10·20 000 = 200 000.
        let mut subflows = [view(0, 10, 10, 10), view(1, 15, 10, 0)];
        let mut ecf = Ecf::default();
        // S at 15 ms: rhs = 10 000·15 = 150 000 ≤ lhs: use S, waiting = 0.
        assert_eq!(
            ecf.schedule(&conn(0), &new_data(), &subflows),
            Pick::one(1, Reason::LowestRtt)
        );
        // S at 25 ms: rhs = 250 000 > lhs, and rtt_S·x_S = 250 000 ≥ W_S·2·rtt_F = 200 000:
        // wait, waiting = 1.
        subflows[1].srtt = SimTime::from_millis(25);
        assert_eq!(
            ecf.schedule(&conn(0), &new_data(), &subflows),
            Pick::wait(Reason::EcfWait)
        );
        // S at 19 ms while waiting: 4·200 000 < 4·190 000 + 190 000, but
        // rtt_S·x_S = 190 000 < 200 000: S, and the flag stays set.
        subflows[1].srtt = SimTime::from_millis(19);
        assert_eq!(
            ecf.schedule(&conn(0), &new_data(), &subflows),
            Pick::one(1, Reason::LowestRtt)
        );
        assert!(ecf.is_waiting());
    }

    #[test]
    fn ec4_one_subflow_is_min_rtt() {
        let mut ecf = Ecf::default();
        let mut min_rtt = MinRtt::default();
        for (cwnd, in_flight, k) in [(10, 0, 0), (10, 10, 0), (4, 3, 1 << 20), (1, 1, 5)] {
            let subflows = [view(0, 40, cwnd, in_flight)];
            for segment in [new_data(), reinjection()] {
                assert_eq!(
                    ecf.schedule(&conn(k), &segment, &subflows),
                    min_rtt.schedule(&conn(k), &segment, &subflows)
                );
            }
        }
        assert!(!ecf.is_waiting());
    }

    #[test]
    fn the_options_are_on() {
        assert_eq!(
            Ecf::default().options(),
            SchedulerOptions {
                penalisation: true,
                opportunistic_retransmission: true
            }
        );
    }
}
