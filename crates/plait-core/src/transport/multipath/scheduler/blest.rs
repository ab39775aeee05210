//! BLEST, blocking estimation (reference `multipath_cc.md` §3.4; Ferlin, Alay, Mehani,
//! Boreli, "BLEST: Blocking estimation-based MPTCP scheduler for heterogeneous networks", IFIP
//! Networking 2016; `mptcp_blest.c` at multipath-tcp/mptcp ed812029).
//!
//! The default choice ([`lowest_rtt`]) with a veto: when it names a subflow `S` other than the
//! fastest usable subflow `F`, BLEST estimates whether the segment sent on `S` would block `F`
//! at the data level, and then waits for `F` instead. For each segment:
//! 1. the running minimum and maximum SRTT of every usable subflow are updated (never aged);
//!    `F` is the usable subflow with the smallest SRTT (window, class and history aside; ties
//!    to the lower index);
//! 2. `S` is the default choice; if there is none (wait) or `S = F`, that is the answer;
//! 3. λ is updated, at most once per `min_srtt` of `S` (time since the last update
//!    `≥ min_srtt_S`): `+bad_step` if `retrans_flag` is set (the connection ran the
//!    receive-buffer optimisation since, [`PacketScheduler::on_receive_buffer_optimisation`]),
//!    else `−good_step`; clamped to `[min_lambda, max_lambda]`; the flag is cleared;
//! 4. the linger time of `S`: with `inflight_S + 1 ≥ cwnd_S` (segments), `max_srtt_S`, else
//!    `min_srtt_S + (max_srtt_S − min_srtt_S)·(inflight_S + 1)/cwnd_S`; at least `srtt_S`;
//! 5. what `F` would send meanwhile by a Reno model: `n = ⌊linger/avg_rtt_F⌋ + 1` with
//!    `avg_rtt_F = (min_srtt_F + max_srtt_F)/2` (`n = 1` when that is zero); in the initial slow
//!    start (`ssthresh` not set yet) `packets = cwnd_F·(2ⁿ − 1)` with `n ≤ 16`, otherwise
//!    `packets = (c + ⌊(n − 1)/2⌋)·n` with `c = max(cwnd_F, ssthresh_F + 1)`;
//!    `fast_bytes = ⌊packets·mss_F·λ⌋`;
//! 6. `avail = peer_window − (len + queued_bytes_S)`, zero if negative, where `peer_window` is
//!    the whole advertised data-level window ([`ConnectionView::peer_window_bytes`], the
//!    kernel's meta `snd_wnd`) and `queued_bytes_S` the bytes sent on `S` and not acknowledged;
//! 7. `fast_bytes > avail`: wait ([`Reason::BlestWait`]); otherwise `S`.
//!
//! The receive-buffer optimisation (penalisation and opportunistic retransmission, §3.1.4) is on,
//! as BLEST wraps the default `next_segment`. The veto applies to reinjections as well, as in the
//! kernel, where the same chooser serves every segment.
//!
//! Choices where the kernel leaves room:
//! - λ is kept in thousandths, as the kernel's `lambda_1000`, so the steps are exact; the
//!   parameters are rounded to the nearest thousandth;
//! - times are in nanoseconds with the kernel's integer divisions (the kernel works in µs);
//!   windows are whole segments ([`SubflowView::cwnd_segments`], `ssthresh_bytes / mss`) and
//!   `inflight` is [`SubflowView::in_flight_segments`]; the products are computed without the
//!   kernel's 32-bit overflow;
//! - a subflow without an RTT sample (SRTT zero) does not enter its min/max tracking (in the
//!   kernel every established subflow has one); a subflow with no tracked sample counts
//!   `min = max = 0`;
//! - the time of the last λ update starts at the first call (the kernel sets it when the first
//!   subflow is initialised, which is when the connection begins to send);
//! - like the kernel, BLEST ignores the backup flag when it looks for `F`.

use super::min_rtt::{fastest_usable, lowest_rtt};
use super::{
    ConnectionView, Decision, PacketScheduler, Pick, Reason, SchedulerKind, SchedulerOptions,
    SegmentView, SubflowView,
};
use crate::registry::{AlgorithmSpec, Param, ParamIssue, Params, Scalar};
use crate::time::SimTime;
use crate::units::format_number;

/// The registry declaration of BLEST.
pub const SPEC: AlgorithmSpec<SchedulerKind> = AlgorithmSpec {
    name: "blest",
    summary: "lowest RTT with a veto on slow subflows that would block the fast one \
              (BLEST, Ferlin et al. 2016)",
    params: &[
        Param::number(
            "lambda",
            "initial scaling factor of the fast subflow's estimated bytes (kept in thousandths)",
        )
        .default(Scalar::Number(1.2))
        .greater_than(0.0),
        Param::number("min_lambda", "lower bound of lambda")
            .default(Scalar::Number(1.0))
            .greater_than(0.0),
        Param::number("max_lambda", "upper bound of lambda")
            .default(Scalar::Number(1.3))
            .greater_than(0.0),
        Param::number(
            "lambda_good_step",
            "decrease of lambda per update without a receive-buffer optimisation",
        )
        .default(Scalar::Number(0.01))
        .at_least(0.0),
        Param::number(
            "lambda_bad_step",
            "increase of lambda per update after a receive-buffer optimisation",
        )
        .default(Scalar::Number(0.04))
        .at_least(0.0),
    ],
    finish: Some(finish),
    build: |params, context| {
        let mut blest = Blest::new(&BlestParams::from(params));
        blest.srtt_bounds.resize(context.subflows, None);
        blest.into()
    },
};

/// `min_lambda ≤ lambda ≤ max_lambda`.
fn finish(params: &mut Params) -> Result<(), ParamIssue> {
    let p = BlestParams::from(&*params);
    if p.min_lambda > p.max_lambda {
        let key = if params.is_given("max_lambda") {
            "max_lambda"
        } else {
            "min_lambda"
        };
        return Err(ParamIssue::at(
            key,
            format!(
                "min_lambda ({}) must not exceed max_lambda ({})",
                format_number(p.min_lambda),
                format_number(p.max_lambda)
            ),
        ));
    }
    if !(p.min_lambda..=p.max_lambda).contains(&p.lambda) {
        return Err(ParamIssue::at(
            "lambda",
            format!(
                "must lie in [min_lambda, max_lambda] = [{}, {}], got {}",
                format_number(p.min_lambda),
                format_number(p.max_lambda),
                format_number(p.lambda)
            ),
        ));
    }
    Ok(())
}

/// BLEST's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlestParams {
    pub lambda: f64,
    pub min_lambda: f64,
    pub max_lambda: f64,
    pub lambda_good_step: f64,
    pub lambda_bad_step: f64,
}

impl Default for BlestParams {
    /// The kernel's defaults.
    fn default() -> Self {
        BlestParams {
            lambda: 1.2,
            min_lambda: 1.0,
            max_lambda: 1.3,
            lambda_good_step: 0.01,
            lambda_bad_step: 0.04,
        }
    }
}

impl From<&Params> for BlestParams {
    fn from(p: &Params) -> Self {
        BlestParams {
            lambda: p.number("lambda"),
            min_lambda: p.number("min_lambda"),
            max_lambda: p.number("max_lambda"),
            lambda_good_step: p.number("lambda_good_step"),
            lambda_bad_step: p.number("lambda_bad_step"),
        }
    }
}

/// A value in thousandths, rounded.
fn thousandths(x: f64) -> i64 {
    (x * 1000.0).round() as i64
}

/// BLEST's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blest {
    /// λ in thousandths, within `[min_lambda, max_lambda]`.
    lambda_1000: i64,
    min_lambda_1000: i64,
    max_lambda_1000: i64,
    good_step_1000: i64,
    bad_step_1000: i64,
    /// The connection ran the receive-buffer optimisation since the last λ update.
    retrans_flag: bool,
    last_lambda_update: Option<SimTime>,
    /// Running (min, max) SRTT per subflow; `None` before its first RTT sample.
    srtt_bounds: Vec<Option<(SimTime, SimTime)>>,
}

impl Default for Blest {
    fn default() -> Self {
        Blest::new(&BlestParams::default())
    }
}

/// The largest `n` of the slow-start model (`packets = cwnd·(2ⁿ − 1)`), the kernel's cap.
const MAX_SLOW_START_RTTS: u64 = 16;

impl Blest {
    pub fn new(params: &BlestParams) -> Blest {
        Blest {
            lambda_1000: thousandths(params.lambda),
            min_lambda_1000: thousandths(params.min_lambda),
            max_lambda_1000: thousandths(params.max_lambda),
            good_step_1000: thousandths(params.lambda_good_step),
            bad_step_1000: thousandths(params.lambda_bad_step),
            retrans_flag: false,
            last_lambda_update: None,
            srtt_bounds: Vec::new(),
        }
    }

    /// The current λ.
    pub fn lambda(&self) -> f64 {
        self.lambda_1000 as f64 / 1000.0
    }

    /// Whether a receive-buffer optimisation is waiting to raise λ.
    pub fn retrans_flag(&self) -> bool {
        self.retrans_flag
    }

    /// The running (min, max) SRTT of `subflow`, (0, 0) before its first sample.
    pub fn srtt_bounds(&self, subflow: usize) -> (SimTime, SimTime) {
        self.srtt_bounds
            .get(subflow)
            .copied()
            .flatten()
            .unwrap_or((SimTime::ZERO, SimTime::ZERO))
    }

    /// Step 3: λ moves once per `min_srtt` of the slow subflow.
    fn update_lambda(&mut self, now: SimTime, slow: &SubflowView) {
        let last = self.last_lambda_update.unwrap_or(now);
        if now.saturating_sub(last) < self.srtt_bounds(slow.id).0 {
            return;
        }
        self.lambda_1000 += if self.retrans_flag {
            self.bad_step_1000
        } else {
            -self.good_step_1000
        };
        self.retrans_flag = false;
        self.lambda_1000 = self
            .lambda_1000
            .min(self.max_lambda_1000)
            .max(self.min_lambda_1000);
        self.last_lambda_update = Some(now);
    }

    /// Step 4: how long a segment sent now on `slow` would occupy its window.
    fn linger_time(&self, slow: &SubflowView) -> SimTime {
        let (min, max) = self.srtt_bounds(slow.id);
        let in_flight = slow.in_flight_segments() + 1;
        let cwnd = slow.cwnd_segments();
        let estimate = if in_flight >= cwnd {
            max
        } else {
            let slope = u128::from(max.as_nanos() - min.as_nanos());
            let rise = slope * u128::from(in_flight) / u128::from(cwnd);
            SimTime(min.as_nanos() + rise as u64)
        };
        estimate.max(slow.srtt)
    }

    /// Step 5: the bytes `fast` would send during `linger`, scaled by λ.
    fn fast_bytes(&self, fast: &SubflowView, linger: SimTime) -> u128 {
        let (min, max) = self.srtt_bounds(fast.id);
        let avg_rtt = (u128::from(min.as_nanos()) + u128::from(max.as_nanos())) / 2;
        // `n = 1` when the average is zero (the kernel's sanity case).
        let rtts = u128::from(linger.as_nanos())
            .checked_div(avg_rtt)
            .map_or(1, |n| n as u64 + 1);
        let cwnd = u128::from(fast.cwnd_segments());
        let packets = if fast.ssthresh_bytes == u64::MAX {
            let rtts = rtts.min(MAX_SLOW_START_RTTS);
            cwnd * ((1u128 << rtts) - 1)
        } else {
            let ssthresh = u128::from(fast.ssthresh_bytes / u64::from(fast.mss.max(1)));
            let ca_cwnd = cwnd.max(ssthresh + 1);
            let rtts = u128::from(rtts);
            (ca_cwnd + (rtts - 1) / 2) * rtts
        };
        packets * u128::from(fast.mss) * self.lambda_1000.max(0) as u128 / 1000
    }
}

impl PacketScheduler for Blest {
    fn name(&self) -> &'static str {
        "blest"
    }

    fn schedule(
        &mut self,
        connection: &ConnectionView,
        segment: &SegmentView,
        subflows: &[SubflowView],
    ) -> Pick {
        if self.last_lambda_update.is_none() {
            self.last_lambda_update = Some(connection.now);
        }
        if let Some(largest) = subflows.iter().map(|s| s.id + 1).max() {
            if self.srtt_bounds.len() < largest {
                self.srtt_bounds.resize(largest, None);
            }
        }
        // Step 1.
        for s in subflows
            .iter()
            .filter(|s| s.usable && s.srtt > SimTime::ZERO)
        {
            let bounds = &mut self.srtt_bounds[s.id];
            *bounds = Some(match *bounds {
                None => (s.srtt, s.srtt),
                Some((min, max)) => (min.min(s.srtt), max.max(s.srtt)),
            });
        }
        let Some(fast) = fastest_usable(subflows) else {
            return lowest_rtt(segment, subflows);
        };
        // Step 2.
        let pick = lowest_rtt(segment, subflows);
        let slow = match pick.decision {
            Decision::One(id) if id != fast.id => match subflows.iter().find(|s| s.id == id) {
                Some(s) => s,
                None => return pick,
            },
            _ => return pick,
        };
        // Steps 3 to 7.
        self.update_lambda(connection.now, slow);
        let linger = self.linger_time(slow);
        let fast_bytes = self.fast_bytes(fast, linger);
        let slow_bytes = u64::from(segment.len) + slow.queued_bytes;
        let avail = connection.peer_window_bytes.saturating_sub(slow_bytes);
        if fast_bytes > u128::from(avail) {
            Pick::wait(Reason::BlestWait)
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

    fn on_receive_buffer_optimisation(&mut self) {
        self.retrans_flag = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Value;
    use crate::transport::multipath::scheduler::min_rtt::MinRtt;
    use crate::transport::multipath::scheduler::tests::{new_data, view};

    fn conn(now_ms: u64, peer_window_bytes: u64) -> ConnectionView {
        ConnectionView {
            now: SimTime::from_millis(now_ms),
            data_window_bytes: peer_window_bytes,
            peer_window_bytes,
            unscheduled_bytes: 1_000_000,
        }
    }

    /// F: 10 ms, window full (10 of 10); S: 40 ms, 2 of 10 in flight.
    fn fast_full_slow_free() -> [SubflowView; 2] {
        [view(0, 10, 10, 10), view(1, 40, 10, 2)]
    }

    #[test]
    fn bl1_a_huge_window_gives_the_min_rtt_picks() {
        let mut blest = Blest::default();
        let mut min_rtt = MinRtt::default();
        let huge = conn(0, u64::MAX / 2);
        let cases = [
            fast_full_slow_free(),
            [view(0, 10, 10, 3), view(1, 40, 10, 2)],
            [view(0, 50, 10, 0), view(1, 10, 10, 10)],
            [view(0, 10, 4, 4), view(1, 40, 4, 4)],
        ];
        for (i, subflows) in cases.iter().enumerate() {
            let c = conn(i as u64 * 100, huge.peer_window_bytes);
            assert_eq!(
                blest.schedule(&c, &new_data(), subflows),
                min_rtt.schedule(&c, &new_data(), subflows),
                "case {i}"
            );
        }
    }

    #[test]
    fn bl2_a_small_window_and_rtt_ratio_4_waits_for_the_fast_subflow() {
        // linger_S: min = max = 40 ms, so 40 ms; avg_rtt_F = 10 ms, n = 40/10 + 1 = 5; F in
        // initial slow start: 10·(2⁵ − 1) = 310 packets, ·1000 B·1.2 = 372 000 bytes.
        let subflows = fast_full_slow_free();
        let mut blest = Blest::default();
        // avail = 64 000 − (1000 + 2000) = 61 000 < 372 000: wait.
        assert_eq!(
            blest.schedule(&conn(0, 64_000), &new_data(), &subflows),
            Pick::wait(Reason::BlestWait)
        );
        // Just enough room: fast_bytes (λ is still 1.2: less than 40 ms since the start)
        // equal to avail is allowed.
        let mut blest = Blest::default();
        assert_eq!(
            blest.schedule(&conn(0, 375_000), &new_data(), &subflows),
            Pick::one(1, Reason::LowestRtt)
        );
        let mut blest = Blest::default();
        assert_eq!(
            blest.schedule(&conn(0, 374_999), &new_data(), &subflows),
            Pick::wait(Reason::BlestWait)
        );
    }

    #[test]
    fn the_reno_model_after_slow_start() {
        // F after a loss: cwnd 10, ssthresh 8 segments: c = max(10, 9) = 10; n = 5:
        // (10 + 2)·5 = 60 packets, ·1000·1.2 = 72 000 bytes.
        let mut subflows = fast_full_slow_free();
        subflows[0].ssthresh_bytes = 8000;
        let mut blest = Blest::default();
        assert_eq!(
            blest.schedule(&conn(0, 75_000), &new_data(), &subflows),
            Pick::one(1, Reason::LowestRtt)
        );
        let mut blest = Blest::default();
        assert_eq!(
            blest.schedule(&conn(0, 74_999), &new_data(), &subflows),
            Pick::wait(Reason::BlestWait)
        );
    }

    #[test]
    fn the_linger_time_follows_the_srtt_range_and_the_window() {
        let mut blest = Blest::default();
        let mut slow = view(1, 20, 10, 4);
        blest.srtt_bounds = vec![
            None,
            Some((SimTime::from_millis(20), SimTime::from_millis(70))),
        ];
        // 20 + 50·5/10 = 45 ms.
        assert_eq!(blest.linger_time(&slow), SimTime::from_millis(45));
        // At least the current SRTT.
        slow.srtt = SimTime::from_millis(60);
        assert_eq!(blest.linger_time(&slow), SimTime::from_millis(60));
        // The window full with the new segment: max_srtt.
        slow.in_flight_bytes = 9000;
        assert_eq!(blest.linger_time(&slow), SimTime::from_millis(70));
    }

    #[test]
    fn bl3_lambda_steps_at_most_once_per_slow_min_srtt_and_clamps() {
        let subflows = fast_full_slow_free();
        let mut blest = Blest::default();
        let window = 1 << 40;
        let mut now = 0;
        blest.schedule(&conn(now, window), &new_data(), &subflows);
        assert_eq!(blest.lambda_1000, 1200);
        // 39 ms later: less than min_srtt_S = 40 ms, no update.
        now += 39;
        blest.schedule(&conn(now, window), &new_data(), &subflows);
        assert_eq!(blest.lambda_1000, 1200);
        // 40 ms after the start: −0.01.
        now += 1;
        blest.schedule(&conn(now, window), &new_data(), &subflows);
        assert_eq!(blest.lambda_1000, 1190);
        // Twenty more good periods: down to the bound 1.0 and no further.
        for _ in 0..20 {
            now += 40;
            blest.schedule(&conn(now, window), &new_data(), &subflows);
        }
        assert_eq!(blest.lambda_1000, 1000);
        assert_eq!(blest.lambda(), 1.0);
        // A receive-buffer optimisation: +0.04 at the next update, and the flag is cleared.
        blest.on_receive_buffer_optimisation();
        now += 40;
        blest.schedule(&conn(now, window), &new_data(), &subflows);
        assert_eq!((blest.lambda_1000, blest.retrans_flag()), (1040, false));
        for _ in 0..10 {
            blest.on_receive_buffer_optimisation();
            now += 40;
            blest.schedule(&conn(now, window), &new_data(), &subflows);
        }
        assert_eq!(blest.lambda_1000, 1300);
    }

    #[test]
    fn lambda_does_not_move_when_the_default_choice_is_the_fast_subflow() {
        let subflows = [view(0, 10, 10, 0), view(1, 40, 10, 0)];
        let mut blest = Blest::default();
        for t in 0..10 {
            assert_eq!(
                blest.schedule(&conn(t * 100, 10_000), &new_data(), &subflows),
                Pick::one(0, Reason::LowestRtt)
            );
        }
        assert_eq!(blest.lambda_1000, 1200);
    }

    #[test]
    fn srtt_bounds_are_running_and_skip_subflows_without_a_sample() {
        let mut subflows = [view(0, 10, 10, 0), view(1, 0, 10, 0)];
        let mut blest = Blest::default();
        blest.schedule(&conn(0, 10_000), &new_data(), &subflows);
        subflows[0].srtt = SimTime::from_millis(30);
        blest.schedule(&conn(1, 10_000), &new_data(), &subflows);
        subflows[0].srtt = SimTime::from_millis(20);
        blest.schedule(&conn(2, 10_000), &new_data(), &subflows);
        assert_eq!(
            blest.srtt_bounds(0),
            (SimTime::from_millis(10), SimTime::from_millis(30))
        );
        assert_eq!(blest.srtt_bounds(1), (SimTime::ZERO, SimTime::ZERO));
    }

    #[test]
    fn the_options_are_on_and_the_lambda_bounds_are_checked() {
        assert_eq!(
            Blest::default().options(),
            SchedulerOptions {
                penalisation: true,
                opportunistic_retransmission: true
            }
        );
        assert!(SPEC.check(&[]).is_ok());
        let err = SPEC.check(&[("lambda", Value::Number(1.5))]).unwrap_err();
        assert_eq!(err.param.as_deref(), Some("lambda"));
        let err = SPEC
            .check(&[("max_lambda", Value::Number(0.9))])
            .unwrap_err();
        assert_eq!(err.param.as_deref(), Some("max_lambda"));
    }
}
