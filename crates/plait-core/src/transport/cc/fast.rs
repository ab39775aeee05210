//! FAST TCP: Jin, Wei and Low, "FAST TCP: motivation, architecture, algorithms, performance",
//! IEEE INFOCOM 2004 (window control), as summarised in reference `multipath_cc.md` §2.5.
//!
//! FAST updates its window periodically, not per ACK:
//!
//! `w ← min{ 2w, (1 − γ)·w + γ·(baseRTT/RTT·w + α) }`,  γ ∈ (0, 1],
//!
//! with `baseRTT` the smallest RTT observed and `RTT` the average RTT. At the fixed point
//! `w·(RTT − baseRTT)/RTT = α`: the flow keeps α segments queued in the network, i.e. its rate
//! times its queueing delay is α. With the RTT fixed, an update moves the window towards that
//! point by the factor `1 − γ·q/RTT` (q the queueing delay); in a network where the queue is the
//! flow's own backlog the factor is `1 − γ` (reference §2.5 F2).
//!
//! Choices (the FAST paper itself was not available here: the formula is the reference's and
//! the MPFAST paper's eq. (1); the details are from the reference's reading of the ns-2 module
//! by Cui and Andrew, `tcp-fast.cc`, or are ours):
//! - `RTT` is the sender's smoothed RTT ([`AckSample::srtt`], RFC 6298's EWMA with gain 1/8,
//!   which is the average the MPFAST paper writes as `New_RTT = a·Old_RTT + (1 − a)·Newest_RTT`).
//!   ns-2 smooths far more (gain `1/max(256, cwnd/3)`). `baseRTT` is the smallest sample of
//!   [`AckSample::rtt`] (zero samples ignored), never forgotten;
//! - **when**: once per round trip by default (parameter `update_period` unset): at the first ACK
//!   of each round, rounds counted by sequence numbers as for Vegas (see [`super::vegas`]); or,
//!   with `update_period`, at the first ACK at least that long after the previous update. ns-2
//!   updates every *other* round trip by default ("as in Linux", its changelog says), with an
//!   optional minimum interval; a fixed period approximates that. The new window applies at
//!   once, where ns-2 spreads an increase over the following ACKs;
//! - **start**: with a constant α the rule grows the window by only γ·α per update while nothing
//!   queues. The MPFAST paper's summary of FAST (its eq. (2)) takes `α(w, q) = α·w` when `q = 0`,
//!   a multiplicative increase, and ns-2 adds one segment per ACK while the queueing delay is
//!   below a threshold (`mi_threshold_`). Here FAST starts in RFC 5681 slow start (per ACK, byte
//!   counting) and leaves it at the first update instant at which the estimated backlog
//!   `w·(RTT − baseRTT)/RTT` reaches α, i.e. where the rule above would no longer raise the
//!   window (the rule applies, then `ssthresh = cwnd`). After a timeout slow start runs again,
//!   up to ssthresh or until the backlog reaches α;
//! - **multiplicative increase** (the MPFAST paper's eq. (2), off by default): with the
//!   parameter `mi_threshold` set, an update outside slow start at which the queueing delay
//!   `RTT − baseRTT` is below it takes `α(w, q) = α·w` (α in segments) in place of α, i.e.
//!   `w ← min{2w, (1 − γ)·w + γ·(baseRTT/RTT·w + α·w)}`: with γ·α ≥ 1 the window doubles per
//!   update while nothing queues. The paper's condition is `q = 0`; a smoothed RTT reaches its
//!   minimum only slowly, and exactly never with rounding, so "nothing queued" is a queueing
//!   delay below the threshold (ns-2 has the same kind of threshold, `mi_threshold_`). A
//!   threshold below one packet's serialisation at the bottleneck is the paper's `q = 0`;
//! - in congestion avoidance ssthresh follows the window down (`ssthresh = min(ssthresh, cwnd)`
//!   after each update), so that an update that lowers the window does not bring back slow start;
//! - the window is kept in bytes with the fraction of a byte each update leaves carried to the
//!   next (never rounded away), and is at least 2 MSS after an update (ns-2);
//! - losses are Reno's, as in ns-2: `ssthresh = cwnd = max(FlightSize/2, 2·MSS)` on a congestion
//!   event, one MSS on a timeout (RFC 5681 §3.1);
//! - an ACK in recovery or while the sender is not cwnd-limited changes nothing (no update
//!   either, decreases included).
//!
//! The window (`FastWindow`) is shared with MPFAST (`transport::multipath::coupled::mpfast`),
//! which gives each subflow its share of α; with one subflow it is this controller.

use super::vegas::Rounds;
use super::window::{half_flight_size, initial_window_bytes, penalise, PathWindow, SlowStart};
use super::{AckSample, CongestionControl, ControllerKind};
use crate::registry::{AlgorithmSpec, Bound, Param, Params, Scalar};
use crate::time::SimTime;

/// The registry declaration of FAST. α is this project's choice (the papers tune it per path;
/// 10 segments matches wVegas's total α), γ = 0.5 is ns-2's.
pub const SPEC: AlgorithmSpec<ControllerKind> = AlgorithmSpec {
    name: "fast",
    summary: "FAST TCP: delay-based, keeps alpha segments queued (Jin, Wei & Low, INFOCOM 2004)",
    params: &[
        alpha_param("segments the flow aims to keep queued in the network"),
        GAMMA_PARAM,
        UPDATE_PERIOD_PARAM,
        MI_THRESHOLD_PARAM,
    ],
    finish: None,
    build: |params, connection| {
        Fast::new(
            connection.mss,
            connection.initial_window,
            FastParams::from(params),
        )
        .into()
    },
};

/// FAST's α, declared with `doc` (FAST's and MPFAST's differ).
pub(crate) const fn alpha_param(doc: &'static str) -> Param {
    Param::number("alpha", doc)
        .unit("segments")
        .default(Scalar::Number(10.0))
        .greater_than(0.0)
}

/// FAST's γ, shared with MPFAST.
pub(crate) const GAMMA_PARAM: Param = Param::number(
    "gamma",
    "gain of each window update: 1 jumps to the target, smaller values move part of the way",
)
.default(Scalar::Number(0.5))
.range(Bound::Exclusive(0.0), Bound::Inclusive(1.0));

/// The queueing delay below which FAST increases multiplicatively, shared with MPFAST.
pub(crate) const MI_THRESHOLD_PARAM: Param = Param::duration(
    "mi_threshold",
    "queueing delay below which an update doubles the window (eq. (2) of the MPFAST paper)",
)
.unset("no multiplicative increase: slow start, then the periodic rule")
.greater_than(0.0);

/// FAST's update period, shared with MPFAST.
pub(crate) const UPDATE_PERIOD_PARAM: Param =
    Param::duration("update_period", "time between two window updates")
        .unset("once per round trip")
        .greater_than(0.0);

/// FAST parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FastParams {
    /// Segments the flow aims to keep queued.
    pub alpha: f64,
    /// Gain of each update, in (0, 1].
    pub gamma: f64,
    /// Time between updates; `None` for once per round trip.
    pub update_period: Option<SimTime>,
    /// Queueing delay below which an update increases multiplicatively; `None`: never.
    pub mi_threshold: Option<SimTime>,
}

impl Default for FastParams {
    /// α = 10 segments, γ = 0.5, once per round trip, no multiplicative increase.
    fn default() -> Self {
        FastParams {
            alpha: 10.0,
            gamma: 0.5,
            update_period: None,
            mi_threshold: None,
        }
    }
}

impl From<&Params> for FastParams {
    fn from(p: &Params) -> Self {
        FastParams {
            alpha: p.number("alpha"),
            gamma: p.number("gamma"),
            update_period: p.opt_duration("update_period"),
            mi_threshold: p.opt_duration("mi_threshold"),
        }
    }
}

/// The FAST congestion window.
#[derive(Clone, Debug, PartialEq)]
pub struct Fast {
    alpha: f64,
    window: FastWindow,
}

impl Fast {
    /// A FAST window for segments of `mss` bytes, starting at `initial_window_segments × mss`
    /// (at least one segment) in slow start.
    ///
    /// # Panics
    /// If `mss` is zero, `alpha` is not positive and finite, or `gamma` is not in (0, 1].
    pub fn new(mss: u32, initial_window_segments: u32, params: FastParams) -> Self {
        assert!(
            params.alpha.is_finite() && params.alpha > 0.0,
            "fast: alpha must be positive, got {}",
            params.alpha
        );
        Fast {
            alpha: params.alpha,
            window: FastWindow::new(
                "fast",
                mss,
                initial_window_segments,
                params.gamma,
                params.update_period,
            )
            .with_mi_threshold(params.mi_threshold),
        }
    }

    /// The smallest RTT seen so far, if any.
    pub fn base_rtt(&self) -> Option<SimTime> {
        self.window.base_rtt()
    }

    /// The window in bytes with the fraction of a byte the last update left.
    pub fn exact_cwnd(&self) -> f64 {
        self.window.exact_cwnd()
    }
}

impl CongestionControl for Fast {
    fn name(&self) -> &'static str {
        "fast"
    }

    fn cwnd(&self) -> u64 {
        self.window.cwnd()
    }

    fn ssthresh(&self) -> u64 {
        self.window.ssthresh()
    }

    fn on_packet_sent(&mut self, _now: SimTime, bytes: u32, _bytes_in_flight: u64) {
        self.window.on_packet_sent(bytes);
    }

    fn on_ack(&mut self, sample: &AckSample) {
        if self.window.on_ack(sample) {
            let alpha_bytes = self.alpha * self.window.mss() as f64;
            self.window.update(sample.now, alpha_bytes);
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, bytes_in_flight: u64) {
        self.window.on_congestion_event(bytes_in_flight);
    }

    fn on_recovery_exit(&mut self, _now: SimTime) {
        self.window.on_recovery_exit();
    }

    fn on_retransmission_timeout(&mut self, _now: SimTime, bytes_in_flight: u64) {
        self.window.on_retransmission_timeout(bytes_in_flight);
    }
}

/// The window of FAST and of each MPFAST subflow (see the module documentation): the caller
/// supplies α, in bytes, at each update.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FastWindow {
    mss: u64,
    cwnd: u64,
    /// The fraction of a byte the last update left: the window is `cwnd + fraction`.
    fraction: f64,
    ssthresh: u64,
    slow_start: SlowStart,
    rounds: Rounds,
    srtt: SimTime,
    gamma: f64,
    update_period: Option<SimTime>,
    last_update: Option<SimTime>,
    mi_threshold: Option<SimTime>,
}

impl FastWindow {
    /// # Panics
    /// If `mss` is zero, `gamma` is not in (0, 1], or `update_period` is zero; the message
    /// names `controller`.
    pub(crate) fn new(
        controller: &str,
        mss: u32,
        initial_window_segments: u32,
        gamma: f64,
        update_period: Option<SimTime>,
    ) -> Self {
        assert!(mss > 0, "{controller}: MSS must be positive");
        assert!(
            gamma > 0.0 && gamma <= 1.0,
            "{controller}: gamma must be in (0, 1], got {gamma}"
        );
        assert!(
            update_period != Some(SimTime::ZERO),
            "{controller}: the update period must be positive"
        );
        let mss = u64::from(mss);
        FastWindow {
            mss,
            cwnd: initial_window_bytes(mss, initial_window_segments),
            fraction: 0.0,
            ssthresh: u64::MAX,
            slow_start: SlowStart::default(),
            rounds: Rounds::new(),
            srtt: SimTime::ZERO,
            gamma,
            update_period,
            last_update: None,
            mi_threshold: None,
        }
    }

    /// Multiplicative increase while the queueing delay is below `threshold` (see the module
    /// documentation); `None` turns it off.
    pub(crate) fn with_mi_threshold(mut self, threshold: Option<SimTime>) -> Self {
        self.mi_threshold = threshold;
        self
    }

    pub(crate) fn mss(&self) -> u64 {
        self.mss
    }

    pub(crate) fn exact_cwnd(&self) -> f64 {
        self.cwnd as f64 + self.fraction
    }

    pub(crate) fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    pub(crate) fn base_rtt(&self) -> Option<SimTime> {
        self.rounds.base_rtt()
    }

    /// The smoothed RTT (zero before the first sample).
    pub(crate) fn srtt(&self) -> SimTime {
        self.srtt
    }

    /// Applies one ACK (RTT bookkeeping, the slow-start increase); returns whether a window
    /// update is due, in which case the caller calls [`FastWindow::update`]. Nothing happens on
    /// an ACK in recovery, when the sender is not cwnd-limited, or that acknowledges no new
    /// data, and no update is due before the first RTT sample.
    pub(crate) fn on_ack(&mut self, sample: &AckSample) -> bool {
        self.slow_start.on_ack(sample.acked_bytes);
        if sample.srtt > SimTime::ZERO {
            self.srtt = sample.srtt;
        } else if let Some(rtt) = sample.rtt.filter(|r| *r > SimTime::ZERO) {
            if self.srtt == SimTime::ZERO {
                self.srtt = rtt;
            }
        }
        let round_over = self.rounds.on_ack(sample);
        if round_over {
            self.rounds.end_round();
        }
        if sample.in_recovery || !sample.is_cwnd_limited || sample.acked_bytes == 0 {
            return false;
        }
        if self.in_slow_start() {
            let increase = self.slow_start.increase(sample.acked_bytes, self.mss);
            self.cwnd = self.cwnd.saturating_add(increase);
        }
        if self.base_rtt().is_none() || self.srtt == SimTime::ZERO {
            return false;
        }
        match (self.update_period, self.last_update) {
            (None, _) => round_over,
            (Some(_), None) => true,
            (Some(period), Some(last)) => sample.now.saturating_sub(last) >= period,
        }
    }

    /// Backlog the flow keeps queued by FAST's estimate, `w·(RTT − baseRTT)/RTT`, in bytes.
    pub(crate) fn queued_bytes(&self) -> f64 {
        match self.base_rtt() {
            Some(base) if self.srtt > base => {
                let rtt = self.srtt.as_nanos() as f64;
                self.exact_cwnd() * (rtt - base.as_nanos() as f64) / rtt
            }
            _ => 0.0,
        }
    }

    /// One window update aiming at `alpha_bytes` queued (see the module documentation): in
    /// slow start only if the backlog has reached α, which ends slow start.
    pub(crate) fn update(&mut self, now: SimTime, alpha_bytes: f64) {
        self.last_update = Some(now);
        let Some(base) = self.base_rtt() else {
            return;
        };
        if self.srtt == SimTime::ZERO {
            return;
        }
        let leaving_slow_start = self.in_slow_start();
        if leaving_slow_start {
            if self.queued_bytes() < alpha_bytes {
                return;
            }
            self.slow_start.exit();
        }
        let w = self.exact_cwnd();
        let ratio = (base.as_nanos() as f64 / self.srtt.as_nanos() as f64).min(1.0);
        // MPFAST paper eq. (2): α(w, q) = α·w (α in segments) while nothing is queued.
        let queueing = self.srtt.saturating_sub(base);
        let alpha = match self.mi_threshold {
            Some(threshold) if !leaving_slow_start && queueing < threshold => {
                alpha_bytes / self.mss as f64 * w
            }
            _ => alpha_bytes,
        };
        // w ← min{2w, (1 − γ)·w + γ·(baseRTT/RTT·w + α)}, at least 2 MSS.
        let target = (1.0 - self.gamma) * w + self.gamma * (ratio * w + alpha);
        let next = target.min(2.0 * w).max(2.0 * self.mss as f64);
        let whole = next.floor();
        // `as` saturates beyond u64::MAX.
        self.cwnd = whole as u64;
        self.fraction = if whole < u64::MAX as f64 {
            next - whole
        } else {
            0.0
        };
        self.ssthresh = if leaving_slow_start {
            self.cwnd
        } else {
            self.ssthresh.min(self.cwnd)
        };
    }
}

impl PathWindow for FastWindow {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_packet_sent(&mut self, bytes: u32) {
        self.rounds.on_packet_sent(bytes);
    }

    /// Reno's reduction (RFC 5681 eq. (4), RFC 6675 §5).
    fn on_congestion_event(&mut self, bytes_in_flight: u64) {
        let reduced = half_flight_size(bytes_in_flight, self.mss);
        self.cwnd = reduced;
        self.fraction = 0.0;
        self.ssthresh = reduced;
        self.slow_start.exit();
        self.rounds.restart();
    }

    fn on_recovery_exit(&mut self) {
        self.rounds.restart();
    }

    /// RFC 5681 §3.1: ssthresh by eq. (4) unless the previous timeout has not been followed by
    /// new acknowledged data, cwnd = 1 MSS.
    fn on_retransmission_timeout(&mut self, bytes_in_flight: u64) {
        self.slow_start.rfc5681_timeout(
            &mut self.cwnd,
            &mut self.ssthresh,
            self.mss,
            bytes_in_flight,
        );
        self.fraction = 0.0;
        self.rounds.on_timeout();
    }

    /// MPTCP's receive-buffer penalisation ([`penalise`]); the fraction of a byte is dropped.
    fn penalise(&mut self) {
        penalise(&mut self.cwnd, &mut self.ssthresh, self.mss);
        self.fraction = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Value;
    use crate::transport::cc::testing::ack;
    use crate::transport::cc::vegas::testing::Clocked;
    use crate::transport::cc::CcSpec;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;
    const BASE: SimTime = SimTime::from_millis(100);
    const RTT_110: SimTime = SimTime::from_millis(110);

    fn fast() -> Fast {
        Fast::new(MSS, 10, FastParams::default())
    }

    /// A FAST window in congestion avoidance at `cwnd` bytes that has seen `BASE`.
    fn in_avoidance(cwnd: u64, params: FastParams) -> Fast {
        let mut cc = Fast::new(MSS, 10, params);
        let mut learn = ack(SimTime::ZERO, M, BASE, MSS);
        learn.is_cwnd_limited = false;
        cc.on_ack(&learn);
        cc.on_congestion_event(SimTime::ZERO, 2 * cwnd);
        assert_eq!((cc.cwnd(), cc.base_rtt()), (cwnd, Some(BASE)));
        cc
    }

    #[test]
    fn initial_state_and_declaration() {
        let cc = fast();
        assert_eq!((cc.cwnd(), cc.ssthresh()), (10 * M, u64::MAX));
        assert!(cc.in_slow_start());
        assert_eq!(cc.name(), "fast");
        let spec = CcSpec::new("fast", &[]).unwrap();
        assert_eq!(FastParams::from(spec.params()), FastParams::default());
        let spec = CcSpec::new(
            "fast",
            &[("update_period", Value::Duration(SimTime::from_millis(20)))],
        )
        .unwrap();
        assert_eq!(
            FastParams::from(spec.params()).update_period,
            Some(SimTime::from_millis(20))
        );
        let err = CcSpec::new("fast", &[("gamma", Value::Number(0.0))]).unwrap_err();
        assert_eq!(err.param.as_deref(), Some("gamma"));
    }

    #[test]
    #[should_panic(expected = "fast: gamma must be in (0, 1]")]
    fn gamma_above_one_is_rejected() {
        let _ = Fast::new(
            MSS,
            10,
            FastParams {
                gamma: 1.5,
                ..FastParams::default()
            },
        );
    }

    #[test]
    fn slow_start_until_alpha_segments_queue_then_the_periodic_rule() {
        let mut cc = fast();
        let mut sender = Clocked::new(MSS);
        sender.round(&mut cc, BASE);
        assert_eq!(cc.cwnd(), 20 * M);
        // At RTT = 110 ms the backlog estimate at the first ACK of each round is
        // cwnd·10/110: 21 000 → 1909, 41 000 → 3727, 81 000 → 7363 bytes, below α = 10 000.
        let mut windows = Vec::new();
        for _ in 0..4 {
            sender.round(&mut cc, RTT_110);
            windows.push(cc.cwnd());
        }
        // The first ACK of round 4 has raised the window to 161 000: backlog 14 636 ≥ α, so
        // slow start ends there and w = 0.5·161 000 + 0.5·(161 000·100/110 + 10 000)
        // = 80 500 + 0.5·156 363.636 = 158 681.818.
        assert_eq!(windows, [40 * M, 80 * M, 160 * M, 158_681]);
        assert_eq!(cc.ssthresh(), 158_681);
        assert!((cc.exact_cwnd() - 158_681.818_181_818).abs() < 1e-6);
        // Next round: 0.5·158 681.818 + 0.5·(158 681.818/1.1 + 10 000) = 156 469.008.
        sender.round(&mut cc, RTT_110);
        assert_eq!(cc.cwnd(), 156_469);
        assert!(!cc.in_slow_start());
    }

    #[test]
    fn the_window_converges_to_alpha_segments_queued() {
        // Fixed RTT = 110 ms over baseRTT = 100 ms: the fixed point of
        // w = 0.5·w + 0.5·(w·100/110 + α) is w* = α·RTT/q = 10·110/10 = 110 segments, and each
        // update multiplies the distance to it by 1 − γ·q/RTT = 1 − 0.5/11.
        let mut cc = fast();
        let mut sender = Clocked::new(MSS);
        sender.round(&mut cc, BASE);
        for _ in 0..5 {
            sender.round(&mut cc, RTT_110);
        }
        let target = 110_000.0;
        let mut distance = cc.exact_cwnd() - target;
        for _ in 0..20 {
            sender.round(&mut cc, RTT_110);
            let next = cc.exact_cwnd() - target;
            assert!((next / distance - (1.0 - 0.5 / 11.0)).abs() < 1e-9);
            distance = next;
        }
        for _ in 0..400 {
            sender.round(&mut cc, RTT_110);
        }
        assert!(cc.cwnd().abs_diff(110_000) <= 1, "{}", cc.cwnd());
        // Backlog w·q/RTT = α.
        let queued = cc.exact_cwnd() * 10.0 / 110.0;
        assert!((queued - 10_000.0).abs() < 0.1, "{queued}");
    }

    #[test]
    fn an_update_at_most_doubles_the_window() {
        let params = FastParams {
            alpha: 1000.0,
            ..FastParams::default()
        };
        let mut cc = in_avoidance(2 * M, params);
        // No queue: the rule asks for 0.5·2000 + 0.5·(2000 + 1 000 000); 2w = 4000 caps it.
        cc.on_ack(&ack(SimTime::ZERO, M, BASE, MSS));
        assert_eq!(cc.cwnd(), 4 * M);
        cc.on_ack(&ack(SimTime::ZERO, M, BASE, MSS));
        assert_eq!(cc.cwnd(), 8 * M);
    }

    #[test]
    fn with_no_queue_the_window_grows_by_gamma_alpha_per_update() {
        let mut cc = in_avoidance(100 * M, FastParams::default());
        // A sender that reports no sends ends a round on every ACK, so each ACK updates:
        // w = 0.5·w + 0.5·(w + 10 000) = w + 5000.
        for k in 1..=3 {
            cc.on_ack(&ack(SimTime::ZERO, M, BASE, MSS));
            assert_eq!(cc.cwnd(), 100 * M + k * 5 * M);
        }
    }

    #[test]
    fn below_the_threshold_an_update_doubles_the_window() {
        let params = FastParams {
            mi_threshold: Some(SimTime::from_millis(1)),
            ..FastParams::default()
        };
        let mut cc = in_avoidance(100 * M, params);
        // No queue (RTT = baseRTT): α(w, q) = α·w = 10·w, so the rule asks for
        // 0.5·w + 0.5·(w + 10·w) = 6w; 2w caps it.
        for k in 1..=3 {
            cc.on_ack(&ack(SimTime::ZERO, M, BASE, MSS));
            assert_eq!(cc.cwnd(), (100 << k) * M);
        }
        // With γ·α < 1 the increase is w·(1 + γ·α): α = 1, γ = 0.5 gives 1.5w.
        let gentle = FastParams {
            alpha: 1.0,
            ..params
        };
        let mut cc = in_avoidance(100 * M, gentle);
        cc.on_ack(&ack(SimTime::ZERO, M, BASE, MSS));
        assert_eq!(cc.cwnd(), 150 * M);
        // At or above the threshold (RTT = 110 ms, q = 10 ms) the rule is the additive one:
        // 200 000 → 195 909 as without the option.
        let mut cc = in_avoidance(200 * M, params);
        cc.on_ack(&ack(SimTime::ZERO, M, RTT_110, MSS));
        assert_eq!(cc.cwnd(), 195_909);
    }

    #[test]
    fn a_fixed_update_period() {
        let params = FastParams {
            update_period: Some(SimTime::from_secs(1)),
            ..FastParams::default()
        };
        let mut cc = in_avoidance(200 * M, params);
        let mut changes = Vec::new();
        let mut before = cc.cwnd();
        // One ACK every 10 ms for 3 s at RTT = 110 ms: updates at 10 ms, 1010 ms and 2010 ms.
        for i in 1..=300u64 {
            let now = SimTime::from_millis(10 * i);
            cc.on_ack(&ack(now, M, RTT_110, MSS));
            if cc.cwnd() != before {
                changes.push(now.as_nanos() / 1_000_000);
                before = cc.cwnd();
            }
        }
        assert_eq!(changes, [10, 1010, 2010]);
        // 200 000 → 0.5·200 000 + 0.5·(200 000/1.1 + 10 000) = 195 909.09.
        let mut cc = in_avoidance(200 * M, params);
        cc.on_ack(&ack(SimTime::from_millis(10), M, RTT_110, MSS));
        assert_eq!(cc.cwnd(), 195_909);
    }

    #[test]
    fn losses_are_reno() {
        let mut cc = in_avoidance(40 * M, FastParams::default());
        cc.on_congestion_event(SimTime::ZERO, 30 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (15 * M, 15 * M));
        cc.on_retransmission_timeout(SimTime::ZERO, 30 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 15 * M));
        cc.on_retransmission_timeout(SimTime::ZERO, 2 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 15 * M));
        // Slow start again: one segment per ACK while no backlog builds.
        let mut sender = Clocked::new(MSS);
        sender.round(&mut cc, BASE);
        assert_eq!(cc.cwnd(), 2 * M);
        cc.on_recovery_exit(SimTime::ZERO);
        assert_eq!(cc.cwnd(), 2 * M);
    }

    #[test]
    fn ineligible_acks_change_nothing() {
        let cc = in_avoidance(40 * M, FastParams::default());
        for (recovering, limited) in [(true, true), (false, false)] {
            let mut other = cc.clone();
            for _ in 0..10 {
                let mut sample = ack(SimTime::ZERO, M, RTT_110, MSS);
                sample.in_recovery = recovering;
                sample.is_cwnd_limited = limited;
                other.on_ack(&sample);
            }
            assert_eq!(other.cwnd(), 40 * M);
        }
    }
}
