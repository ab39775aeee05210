//! CUBIC congestion control, RFC 9438 (which obsoletes RFC 8312); the algorithm is from Ha,
//! Rhee and Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", ACM SIGOPS OSR 42(5), 2008.
//!
//! Units follow RFC 9438 §4.1: windows in segments, times in seconds, both as `f64`. The window
//! itself is kept in bytes as an `f64` (CUBIC grows it by fractions of a segment per ACK) and
//! [`CongestionControl::cwnd`] reports it rounded down to whole bytes.
//!
//! What is implemented, by section of RFC 9438:
//! - §4.2 window increase: `W_cubic(t) = C·(t − K)³ + W_max` (Figure 1) with
//!   `K = ∛((W_max − cwnd_epoch)/C)` (Figure 2), `t` the time since the current congestion
//!   avoidance stage began (`t_epoch`) and `cwnd_epoch` the window at that moment. On each new
//!   ACK the target is `W_cubic(t + RTT)` (RTT = smoothed RTT) clamped to `[cwnd, 1.5·cwnd]`,
//!   and the window moves towards it by `(target − cwnd)/cwnd`;
//! - §4.3 Reno-friendly region: `W_est = W_est + α_cubic·segments_acked/cwnd` (Figure 4) with
//!   `α_cubic = 3(1 − β_cubic)/(1 + β_cubic)`, raised to 1 once `W_est ≥ cwnd_prior`; when
//!   `W_cubic(t) < W_est` the window follows `W_est` (switch `tcp_friendliness`);
//! - §4.4–§4.5 concave and convex regions: the same per-ACK rule on either side of `W_max`;
//! - §4.6 multiplicative decrease on a loss: `ssthresh = max(FlightSize·β_cubic, 2)`,
//!   `cwnd = ssthresh`, `cwnd_prior = cwnd` before the reduction;
//! - §4.7 fast convergence (switch `fast_convergence`): `W_max = cwnd·(1 + β_cubic)/2` if the
//!   window at the loss is below the previous `W_max`, else `W_max = cwnd`;
//! - §4.8 timeout: `cwnd` = one segment (RFC 5681), ssthresh by β_cubic as in §4.6, and in the
//!   first congestion avoidance stage after it `W_max = cwnd_epoch`, so `K = 0`;
//! - §4.10 slow start: the standard RFC 5681 slow start, shared with [`Reno`](super::Reno);
//! - §5.8 application-limited flows: no growth when the sender is not cwnd-limited, and such
//!   periods are taken out of `t`: when an ACK reports the sender not cwnd-limited, the time
//!   since the previous ACK is added to `t_epoch`.
//!
//! Choices where RFC 9438 leaves room or where this file departs from its letter:
//! - the per-ACK increase `(target − cwnd)/cwnd` is multiplied by `segments_acked` (and never
//!   carries cwnd past `target`), so that an ACK for two segments counts as two ACKs, as for
//!   `W_est` in §4.3 and as Linux does; the text of §4.4–§4.5 says "for each received new ACK";
//! - in the Reno-friendly region `cwnd = max(cwnd, W_est)`: §4.3 says "set to W_est", which
//!   could shrink a window the concave rule has already taken past `W_est`;
//! - `cwnd_epoch > W_max` (possible after fast convergence, or when FlightSize exceeded cwnd)
//!   gives a negative `K` from Figure 2 taken literally; the curve then starts at `cwnd_epoch`
//!   already in its convex part, which is continuous and is what the formula says;
//! - not implemented because the [`CongestionControl`] hooks do not carry them: ECN-triggered
//!   reductions (§4.6), undo of spurious congestion events (§4.9), HyStart++ (§4.10 recommends
//!   it; [RFC 9406] can be added as a separate slow-start policy).
//!
//! [RFC 9406]: https://www.rfc-editor.org/rfc/rfc9406

use super::window::{initial_window_bytes, reduced_window, SlowStart};
use super::{AckSample, CongestionControl, ControllerKind};
use crate::registry::{AlgorithmSpec, Bound, Param, ParamError, Params, Scalar, Value};
use crate::time::SimTime;

/// The registry declaration of CUBIC; the defaults are RFC 9438's (§5: C = 0.4,
/// β_cubic = 0.7; fast convergence and the Reno-friendly region on).
pub const SPEC: AlgorithmSpec<ControllerKind> = AlgorithmSpec {
    name: "cubic",
    summary: "CUBIC (RFC 9438)",
    params: &[
        Param::number("c", "cubic scaling constant C")
            .unit("segments/s³")
            .default(Scalar::Number(0.4))
            .greater_than(0.0),
        Param::number(
            "beta",
            "multiplicative decrease: fraction of the window kept after a loss",
        )
        .default(Scalar::Number(0.7))
        .range(Bound::Exclusive(0.0), Bound::Exclusive(1.0)),
        Param::bool(
            "fast_convergence",
            "release bandwidth faster when the window shrinks (RFC 9438 §4.7)",
        )
        .default(Scalar::Bool(true)),
        Param::bool("tcp_friendliness", "Reno-friendly region (RFC 9438 §4.3)")
            .default(Scalar::Bool(true)),
    ],
    finish: None,
    build: |params, connection| {
        let params = CubicParams::from(params);
        Cubic::new(connection.mss, connection.initial_window, params).into()
    },
};

/// CUBIC parameters (RFC 9438 §4.1.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicParams {
    /// Aggressiveness `C` in segments/s³ (RFC 9438 §5.1: 0.4).
    pub c: f64,
    /// Multiplicative decrease factor `β_cubic`, the fraction of the window kept after a loss
    /// (RFC 9438 §4.6: 0.7).
    pub beta: f64,
    /// Fast convergence, RFC 9438 §4.7.
    pub fast_convergence: bool,
    /// The Reno-friendly region, RFC 9438 §4.3.
    pub tcp_friendliness: bool,
}

impl Default for CubicParams {
    /// `C = 0.4`, `β_cubic = 0.7`, fast convergence and the Reno-friendly region on.
    fn default() -> Self {
        CubicParams {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            tcp_friendliness: true,
        }
    }
}

impl CubicParams {
    /// Checks the parameters against their declaration ([`SPEC`]): `c` positive and finite,
    /// `beta` strictly between 0 and 1.
    pub fn validate(&self) -> Result<(), ParamError> {
        let given = [
            ("c", Value::Number(self.c)),
            ("beta", Value::Number(self.beta)),
        ];
        SPEC.check(&given).map(drop)
    }
}

impl From<&Params> for CubicParams {
    fn from(p: &Params) -> Self {
        CubicParams {
            c: p.number("c"),
            beta: p.number("beta"),
            fast_convergence: p.bool("fast_convergence"),
            tcp_friendliness: p.bool("tcp_friendliness"),
        }
    }
}

/// `K = ∛((W_max − cwnd_epoch)/C)` in seconds (RFC 9438 Figure 2); negative when
/// `cwnd_epoch > W_max`.
pub fn cubic_k(w_max_segments: f64, cwnd_epoch_segments: f64, c: f64) -> f64 {
    ((w_max_segments - cwnd_epoch_segments) / c).cbrt()
}

/// `W_cubic(t) = C·(t − K)³ + W_max` in segments (RFC 9438 Figure 1).
pub fn w_cubic(t_seconds: f64, c: f64, k_seconds: f64, w_max_segments: f64) -> f64 {
    let offset = t_seconds - k_seconds;
    c * offset * offset * offset + w_max_segments
}

/// `α_cubic = 3(1 − β)/(1 + β)`, the additive increase per RTT that gives AIMD(α, β) the same
/// average window as Reno (RFC 9438 §4.3).
pub fn alpha_cubic(beta: f64) -> f64 {
    3.0 * (1.0 - beta) / (1.0 + beta)
}

/// One congestion avoidance stage (RFC 9438 §4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Epoch {
    /// `t_epoch`, moved later by the application-limited time excluded from `t` (§5.8).
    start: SimTime,
    cwnd_epoch: f64,
    k: f64,
    w_est: f64,
}

/// CUBIC congestion window (RFC 9438).
#[derive(Clone, Debug, PartialEq)]
pub struct Cubic {
    params: CubicParams,
    mss: u64,
    /// Slow-start byte counting and the timeout state (shared with Reno and AIMD).
    slow_start: SlowStart,
    /// Congestion window in bytes, with the fraction of a byte CUBIC's increments leave.
    cwnd_bytes: f64,
    ssthresh: u64,
    /// `W_max` in segments; zero before the first loss.
    w_max: f64,
    /// `cwnd_prior` in segments: the window just before the last reduction.
    cwnd_prior: f64,
    /// The current congestion avoidance stage; `None` in slow start, in recovery and until the
    /// first cwnd-limited ACK after them.
    epoch: Option<Epoch>,
    /// The next stage follows a timeout: it starts with `W_max = cwnd_epoch` (§4.8).
    timeout_epoch: bool,
    last_ack_time: Option<SimTime>,
}

impl Cubic {
    /// A CUBIC window for segments of `mss` bytes, starting at `initial_window_segments × mss`
    /// (at least one segment) with an unbounded ssthresh.
    ///
    /// # Panics
    /// If `mss` is zero or the parameters are invalid ([`CubicParams::validate`]).
    pub fn new(mss: u32, initial_window_segments: u32, params: CubicParams) -> Self {
        assert!(mss > 0, "cubic: MSS must be positive");
        if let Err(e) = params.validate() {
            panic!("{e}");
        }
        let mss = u64::from(mss);
        Cubic {
            params,
            mss,
            slow_start: SlowStart::default(),
            cwnd_bytes: initial_window_bytes(mss, initial_window_segments) as f64,
            ssthresh: u64::MAX,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch: None,
            timeout_epoch: false,
            last_ack_time: None,
        }
    }

    /// Sets the slow-start byte-counting limit L in segments (1 or 2, RFC 3465 §2.2).
    ///
    /// # Panics
    /// If `segments` is not 1 or 2.
    pub fn with_abc_limit(mut self, segments: u32) -> Self {
        self.slow_start.set_abc_limit(segments);
        self
    }

    pub fn params(&self) -> CubicParams {
        self.params
    }

    /// Segment size in bytes.
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// The congestion window in segments, with its fractional part.
    pub fn cwnd_segments(&self) -> f64 {
        self.cwnd_bytes / self.mss as f64
    }

    /// `W_max` in segments (zero before the first loss).
    pub fn w_max_segments(&self) -> f64 {
        self.w_max
    }

    /// `cwnd_prior` in segments: the window just before the last reduction.
    pub fn cwnd_prior_segments(&self) -> f64 {
        self.cwnd_prior
    }

    /// `K` in seconds for the current congestion avoidance stage.
    pub fn k_seconds(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }

    /// `W_est` in segments for the current congestion avoidance stage.
    pub fn w_est_segments(&self) -> Option<f64> {
        self.epoch.map(|e| e.w_est)
    }

    /// `cwnd_epoch` in segments for the current congestion avoidance stage.
    pub fn cwnd_epoch_segments(&self) -> Option<f64> {
        self.epoch.map(|e| e.cwnd_epoch)
    }

    /// `t_epoch` of the current stage, shifted by the application-limited time left out of `t`.
    pub fn epoch_start(&self) -> Option<SimTime> {
        self.epoch.map(|e| e.start)
    }

    /// Starts a congestion avoidance stage at `now` with the current window (RFC 9438 §4.2,
    /// §4.3: `W_est = cwnd_epoch`; §4.8: after a timeout `W_max = cwnd_epoch`).
    fn start_epoch(&mut self, now: SimTime) -> Epoch {
        let cwnd_epoch = self.cwnd_segments();
        if self.timeout_epoch || self.w_max <= 0.0 {
            // After a timeout (§4.8), or a stage entered without any loss: the curve starts
            // flat at the current window.
            self.w_max = cwnd_epoch;
        }
        self.timeout_epoch = false;
        let epoch = Epoch {
            start: now,
            cwnd_epoch,
            k: cubic_k(self.w_max, cwnd_epoch, self.params.c),
            w_est: cwnd_epoch,
        };
        self.epoch = Some(epoch);
        epoch
    }

    /// One cwnd-limited new ACK in congestion avoidance (RFC 9438 §4.2–§4.5).
    fn congestion_avoidance(&mut self, sample: &AckSample) {
        let mut epoch = match self.epoch {
            Some(epoch) => epoch,
            None => self.start_epoch(sample.now),
        };
        let c = self.params.c;
        let mss = self.mss as f64;
        let cwnd = self.cwnd_segments();
        let segments_acked = sample.acked_bytes as f64 / mss;
        let t = sample.now.saturating_sub(epoch.start).as_secs_f64();
        let rtt = smoothed_rtt(sample).as_secs_f64();

        // §4.3 Figure 4: W_est += α_cubic · segments_acked / cwnd, α_cubic = 1 once W_est has
        // caught up with cwnd_prior.
        let alpha = if epoch.w_est >= self.cwnd_prior {
            1.0
        } else {
            alpha_cubic(self.params.beta)
        };
        epoch.w_est += alpha * segments_acked / cwnd;

        let new_cwnd =
            if self.params.tcp_friendliness && w_cubic(t, c, epoch.k, self.w_max) < epoch.w_est {
                // §4.3: Reno-friendly region, follow W_est.
                cwnd.max(epoch.w_est)
            } else {
                // §4.2: target = W_cubic(t + RTT), bounded to [cwnd, 1.5·cwnd]; §4.4–§4.5:
                // cwnd += (target − cwnd)/cwnd per acknowledged segment.
                let target = w_cubic(t + rtt, c, epoch.k, self.w_max)
                    .min(1.5 * cwnd)
                    .max(cwnd);
                (cwnd + (target - cwnd) / cwnd * segments_acked).min(target)
            };
        self.cwnd_bytes = self.cwnd_bytes.max(new_cwnd * mss);
        self.epoch = Some(epoch);
    }
}

/// The RTT CUBIC projects its target over: the smoothed RTT, else the latest sample, else the
/// minimum (all zero before the first sample).
fn smoothed_rtt(sample: &AckSample) -> SimTime {
    if sample.srtt > SimTime::ZERO {
        sample.srtt
    } else {
        sample.rtt.unwrap_or(sample.min_rtt)
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn cwnd(&self) -> u64 {
        // `as` rounds towards zero (and saturates), i.e. whole bytes.
        (self.cwnd_bytes as u64).max(self.mss)
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_ack(&mut self, sample: &AckSample) {
        let previous_ack = self.last_ack_time.replace(sample.now);
        self.slow_start.on_ack(sample.acked_bytes);
        if sample.in_recovery || sample.acked_bytes == 0 {
            return;
        }
        if !sample.is_cwnd_limited {
            // §5.8 / §4.2: "t MUST NOT include periods during which cwnd has not been updated
            // due to application-limited behavior" — slide t_epoch forward by this gap.
            if let (Some(epoch), Some(previous)) = (self.epoch.as_mut(), previous_ack) {
                epoch.start = epoch
                    .start
                    .saturating_add(sample.now.saturating_sub(previous));
            }
            return;
        }
        if self.cwnd() < self.ssthresh {
            self.cwnd_bytes += self.slow_start.increase(sample.acked_bytes, self.mss) as f64;
            return;
        }
        self.slow_start.exit();
        self.congestion_avoidance(sample);
    }

    fn on_congestion_event(&mut self, _now: SimTime, bytes_in_flight: u64) {
        let cwnd = self.cwnd_segments();
        // §4.7: remember the saturation point, lowered further if it is dropping.
        self.w_max = if self.params.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + self.params.beta) / 2.0
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        // §4.6: ssthresh = max(flight_size · β_cubic, 2 segments); cwnd = ssthresh.
        self.ssthresh = reduced_window(bytes_in_flight, self.params.beta, self.mss);
        self.cwnd_bytes = self.ssthresh as f64;
        self.epoch = None;
        self.timeout_epoch = false;
        self.slow_start.exit();
    }

    fn on_retransmission_timeout(&mut self, _now: SimTime, bytes_in_flight: u64) {
        if self.slow_start.on_timeout() {
            // §4.8: ssthresh from β_cubic as in §4.6; the next stage restarts the curve.
            self.cwnd_prior = self.cwnd_segments();
            self.ssthresh = reduced_window(bytes_in_flight, self.params.beta, self.mss);
            self.timeout_epoch = true;
        }
        // RFC 5681 §3.1: the loss window, one segment.
        self.cwnd_bytes = self.mss as f64;
        self.epoch = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::testing::{ack, run_round};
    use proptest::prelude::*;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;

    fn params(fast_convergence: bool, tcp_friendliness: bool) -> CubicParams {
        CubicParams {
            fast_convergence,
            tcp_friendliness,
            ..CubicParams::default()
        }
    }

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    /// Slow start (one ACK per segment) to exactly `w_max` segments, then a loss with the whole
    /// window in flight, at time zero.
    fn after_loss_at(params: CubicParams, w_max: u64) -> Cubic {
        let mut cc = Cubic::new(MSS, 10, params);
        while cc.cwnd() < w_max * M {
            cc.on_ack(&ack(SimTime::ZERO, M, SimTime::from_millis(100), MSS));
        }
        assert_eq!(cc.cwnd(), w_max * M);
        cc.on_congestion_event(SimTime::ZERO, w_max * M);
        cc
    }

    /// Runs cwnd-limited rounds of `rtt` from `start` until `end`, recording
    /// `(time at the end of the round, cwnd in segments)`.
    fn trajectory(cc: &mut Cubic, start: SimTime, rtt: SimTime, end: SimTime) -> Vec<(f64, f64)> {
        let mut now = start;
        let mut points = Vec::new();
        while now < end {
            now = run_round(cc, now, rtt, MSS);
            points.push((now.as_secs_f64(), cc.cwnd_segments()));
        }
        points
    }

    #[test]
    fn defaults() {
        let p = CubicParams::default();
        assert_eq!(
            (p.c, p.beta, p.fast_convergence, p.tcp_friendliness),
            (0.4, 0.7, true, true)
        );
        let cc = Cubic::new(MSS, 10, p);
        assert_eq!(
            (cc.cwnd(), cc.ssthresh(), cc.name()),
            (10 * M, u64::MAX, "cubic")
        );
        assert!(cc.in_slow_start());
    }

    #[test]
    fn formulas_against_hand_computation() {
        // W_max = 100, β = 0.7, C = 0.4: K = ∛(30/0.4) = ∛75 = 4.2172 s.
        let k = cubic_k(100.0, 70.0, 0.4);
        assert!(close(k, 4.217_163_326_508_746, 1e-12), "K = {k}");
        assert_eq!(w_cubic(k, 0.4, k, 100.0), 100.0);
        assert!(close(w_cubic(0.0, 0.4, k, 100.0), 70.0, 1e-9));
        // One second past K: W_max + C.
        assert!(close(w_cubic(k + 1.0, 0.4, k, 100.0), 100.4, 1e-9));
        // α_cubic(0.7) = 0.9/1.7; α_cubic(0.5) = 1 (Reno itself).
        assert!(close(alpha_cubic(0.7), 0.9 / 1.7, 1e-15));
        assert_eq!(alpha_cubic(0.5), 1.0);
        // cwnd_epoch above W_max: negative K, and the curve still starts at cwnd_epoch.
        let k = cubic_k(50.0, 60.0, 0.4);
        assert!(k < 0.0);
        assert!(close(w_cubic(0.0, 0.4, k, 50.0), 60.0, 1e-9));
    }

    #[test]
    fn slow_start_doubles_per_round_trip() {
        let mut cc = Cubic::new(MSS, 10, CubicParams::default());
        let mut now = SimTime::ZERO;
        for expected in [20, 40, 80, 160] {
            now = run_round(&mut cc, now, SimTime::from_millis(100), MSS);
            assert_eq!(cc.cwnd(), expected * M);
        }
    }

    #[test]
    fn loss_keeps_beta_of_flight_size() {
        let cc = after_loss_at(CubicParams::default(), 100);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (70 * M, 70 * M));
        assert_eq!(
            (cc.w_max_segments(), cc.cwnd_prior_segments()),
            (100.0, 100.0)
        );
        assert!(!cc.in_slow_start());
        // FlightSize, not cwnd, sets ssthresh (§4.6); 2 segments at least.
        let mut cc = after_loss_at(CubicParams::default(), 100);
        cc.on_congestion_event(SimTime::ZERO, 50 * M);
        assert_eq!(cc.cwnd(), 35 * M);
        cc.on_congestion_event(SimTime::ZERO, 2 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (2 * M, 2 * M));
    }

    #[test]
    fn k_and_plateau_of_the_first_stage() {
        let rtt = SimTime::from_millis(100);
        let mut cc = after_loss_at(params(true, false), 100);
        assert_eq!(cc.k_seconds(), None);
        cc.on_ack(&ack(SimTime::from_secs(1), M, rtt, MSS));
        let k = cc
            .k_seconds()
            .expect("the first ACK in congestion avoidance starts the stage");
        assert!(close(k, 4.2172, 5e-5), "K = {k}");
        assert_eq!(cc.cwnd_epoch_segments(), Some(70.0));
        assert_eq!(cc.epoch_start(), Some(SimTime::from_secs(1)));
        assert_eq!(w_cubic(k, 0.4, k, cc.w_max_segments()), 100.0);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        // A second loss at 70 segments, below W_max = 100: W_max = 70·(1 + 0.7)/2 = 59.5.
        let mut cc = after_loss_at(params(true, true), 100);
        cc.on_congestion_event(SimTime::ZERO, 70 * M);
        assert!(close(cc.w_max_segments(), 59.5, 1e-12));
        assert_eq!(cc.cwnd_prior_segments(), 70.0);
        assert_eq!(cc.cwnd(), 49 * M);
        // Without it, W_max is the window at the loss.
        let mut cc = after_loss_at(params(false, true), 100);
        cc.on_congestion_event(SimTime::ZERO, 70 * M);
        assert_eq!(cc.w_max_segments(), 70.0);
        // A loss above the previous W_max sets W_max to that window either way.
        let mut cc = after_loss_at(params(true, true), 100);
        cc.on_ack(&ack(SimTime::ZERO, M, SimTime::from_millis(1), MSS));
        cc.cwnd_bytes = 120_000.0;
        cc.on_congestion_event(SimTime::ZERO, 120 * M);
        assert_eq!(cc.w_max_segments(), 120.0);
    }

    #[test]
    fn target_is_capped_at_one_and_a_half_windows() {
        let rtt = SimTime::from_millis(100);
        let mut cc = after_loss_at(params(true, false), 100);
        cc.on_ack(&ack(SimTime::ZERO, M, rtt, MSS));
        let before = cc.cwnd_segments();
        // 60 s later W_cubic is far above 1.5·cwnd: the increase is (1.5·cwnd − cwnd)/cwnd.
        cc.on_ack(&ack(SimTime::from_secs(60), M, rtt, MSS));
        assert!(close(cc.cwnd_segments() - before, 0.5, 1e-9));
        let before = cc.cwnd_segments();
        cc.on_ack(&ack(SimTime::from_secs(61), 3 * M, rtt, MSS));
        assert!(close(cc.cwnd_segments() - before, 1.5, 1e-9));
        // A huge cumulative ACK cannot carry the window past the target.
        let before = cc.cwnd_segments();
        cc.on_ack(&ack(SimTime::from_secs(62), 1000 * M, rtt, MSS));
        assert!(close(cc.cwnd_segments(), 1.5 * before, 1e-9));
    }

    #[test]
    fn concave_then_convex() {
        let rtt = SimTime::from_millis(100);
        let mut cc = after_loss_at(params(true, false), 100);
        let k = cubic_k(100.0, 70.0, 0.4);
        let points = trajectory(&mut cc, SimTime::ZERO, rtt, SimTime::from_secs(10));
        let growth = |from: f64, to: f64| {
            let at = |t: f64| points.iter().find(|p| p.0 >= t).unwrap().1;
            at(to) - at(from)
        };
        // Concave: fast at first, flattening towards W_max.
        assert!(growth(0.0, 1.0) > growth(1.0, 2.0));
        assert!(growth(1.0, 2.0) > growth(2.0, 3.0));
        assert!(growth(2.0, 3.0) > growth(k - 0.5, k + 0.5));
        // Convex: accelerating away from W_max.
        assert!(growth(k + 1.0, k + 2.0) > growth(k - 0.5, k + 0.5));
        assert!(growth(k + 4.0, k + 5.0) > growth(k + 1.0, k + 2.0));
        // The window stays under W_max until about K and crosses it around K.
        assert!(points
            .iter()
            .filter(|p| p.0 < k - 2.0 * 0.1)
            .all(|p| p.1 < 100.0));
        assert!(points.iter().filter(|p| p.0 > k + 0.1).all(|p| p.1 > 100.0));
        // It tracks the curve: below W_cubic(t + RTT) (the target), within a segment of W_cubic(t).
        for &(t, w) in &points {
            assert!(w <= w_cubic(t + 0.1, 0.4, k, 100.0) + 1e-9, "t = {t}: {w}");
            assert!(w >= w_cubic(t, 0.4, k, 100.0) - 1.0, "t = {t}: {w}");
        }
    }

    #[test]
    fn reno_friendly_region_dominates_at_small_rtt_and_window() {
        // W_max = 20 segments, RTT = 10 ms. The curve needs K = ∛(6/0.4) ≈ 2.47 s (247 RTTs)
        // to return to W_max, while the Reno estimate of §4.3 gains α_cubic ≈ 0.53 segment per
        // RTT: W_est(t) ≈ cwnd_epoch + α_cubic·t/RTT, far above W_cubic(t).
        let rtt = SimTime::from_millis(10);
        let mut cc = after_loss_at(CubicParams::default(), 20);
        let mut plain = after_loss_at(params(true, false), 20);
        let k = cubic_k(20.0, 14.0, 0.4);
        let mut now = SimTime::ZERO;
        let mut alpha_one_rounds = 0;
        for round in 1..=30u32 {
            let start = now;
            let w0 = cc.cwnd_segments();
            let w_est0 = cc.w_est_segments().unwrap_or(w0);
            now = run_round(&mut cc, start, rtt, MSS);
            run_round(&mut plain, start, rtt, MSS);
            let t = now.as_secs_f64();
            let w_est = cc.w_est_segments().unwrap();
            // In the Reno-friendly region the window is W_est.
            assert!(w_est > w_cubic(t, 0.4, k, 20.0), "round {round}");
            assert!(close(cc.cwnd_segments(), w_est, 1e-9), "round {round}");
            assert!(cc.cwnd_segments() > plain.cwnd_segments(), "round {round}");
            // Figure 4 over one round: ⌊w0⌋ ACKs each add α/cwnd with w0 ≤ cwnd ≤ w0 + 1, and
            // α = α_cubic until W_est reaches cwnd_prior = 20, then 1.
            let alpha = if w_est0 >= 20.0 {
                alpha_one_rounds += 1;
                1.0
            } else if w_est < 20.0 {
                alpha_cubic(0.7)
            } else {
                continue; // the round in which α changes
            };
            let acks = w0.floor();
            let grown = w_est - w_est0;
            assert!(
                grown >= acks * alpha / (w0 + 1.0) - 1e-9,
                "round {round}: {grown}"
            );
            assert!(grown <= acks * alpha / w0 + 1e-9, "round {round}: {grown}");
        }
        assert!(alpha_one_rounds >= 10);
        // Thirty round trips in, the Reno estimate is far ahead of the curve alone.
        assert!(cc.cwnd_segments() > plain.cwnd_segments() + 10.0);
    }

    #[test]
    fn cubic_region_dominates_at_large_rtt_and_window() {
        // W_max = 1000 segments, RTT = 100 ms: after 3 s the curve is far ahead of Reno.
        let rtt = SimTime::from_millis(100);
        let mut cc = after_loss_at(CubicParams::default(), 1000);
        trajectory(&mut cc, SimTime::ZERO, rtt, SimTime::from_secs(3));
        let w_est = cc.w_est_segments().unwrap();
        assert!(
            close(w_est, 700.0 + 30.0 * alpha_cubic(0.7), 0.5),
            "W_est = {w_est}"
        );
        assert!(cc.cwnd_segments() > w_est + 100.0);
    }

    #[test]
    fn timeout_restarts_the_curve_from_the_new_window() {
        let rtt = SimTime::from_millis(100);
        let mut cc = after_loss_at(CubicParams::default(), 100).with_abc_limit(2);
        cc.on_ack(&ack(SimTime::ZERO, M, rtt, MSS));
        cc.on_retransmission_timeout(SimTime::from_secs(1), 100 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 70 * M));
        assert!(cc.in_slow_start());
        assert_eq!(cc.k_seconds(), None);
        // A second timeout before any new ACK keeps ssthresh.
        cc.on_retransmission_timeout(SimTime::from_secs(2), 3 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 70 * M));
        // L = 1 in this slow start, although L = 2 is configured.
        cc.on_ack(&ack(SimTime::from_secs(3), 2 * M, rtt, MSS));
        assert_eq!(cc.cwnd(), 2 * M);
        let mut now = SimTime::from_secs(3);
        while cc.in_slow_start() {
            now = now.saturating_add(SimTime::from_millis(1));
            cc.on_ack(&ack(now, M, rtt, MSS));
        }
        // Slow start stops exactly at ssthresh (one segment per ACK); the stage starts with
        // the next ACK.
        assert_eq!(cc.cwnd(), 70 * M);
        assert_eq!(cc.k_seconds(), None);
        cc.on_ack(&ack(now, M, rtt, MSS));
        // §4.8: W_max = cwnd_epoch, K = 0, W_est = cwnd_epoch (plus this ACK's share).
        let reached = 70.0;
        assert_eq!(cc.k_seconds(), Some(0.0));
        assert_eq!(cc.w_max_segments(), reached);
        // cwnd_prior is the window just before the timeout (70 and a little), so α = α_cubic.
        let expected_w_est = reached + alpha_cubic(0.7) / reached;
        assert!(close(cc.w_est_segments().unwrap(), expected_w_est, 1e-12));
        assert_eq!(cc.cwnd_epoch_segments(), Some(reached));
    }

    #[test]
    fn no_growth_in_recovery() {
        let rtt = SimTime::from_millis(100);
        let mut cc = after_loss_at(CubicParams::default(), 100);
        for i in 0..100 {
            let mut s = ack(SimTime::from_millis(i), M, rtt, MSS);
            s.in_recovery = true;
            cc.on_ack(&s);
        }
        assert_eq!(cc.cwnd(), 70 * M);
        assert_eq!(cc.k_seconds(), None, "the stage starts after recovery");
        cc.on_recovery_exit(SimTime::from_millis(100));
        assert_eq!(cc.cwnd(), 70 * M);
    }

    #[test]
    fn application_limited_time_is_left_out_of_t() {
        let rtt = SimTime::from_millis(100);
        let mut limited = after_loss_at(params(true, false), 100);
        let mut busy = after_loss_at(params(true, false), 100);
        limited.on_ack(&ack(SimTime::ZERO, M, rtt, MSS));
        busy.on_ack(&ack(SimTime::ZERO, M, rtt, MSS));
        // Ten seconds of application-limited ACKs: no growth, and the clock is held.
        for i in 1..=100 {
            let mut s = ack(SimTime::from_millis(100 * i), M, rtt, MSS);
            s.is_cwnd_limited = false;
            let before = limited.cwnd();
            limited.on_ack(&s);
            assert_eq!(limited.cwnd(), before);
        }
        assert_eq!(limited.epoch_start(), Some(SimTime::from_secs(10)));
        // The next cwnd-limited ACK, 100 ms later, sees t = 0.1 s as if there had been no gap.
        limited.on_ack(&ack(SimTime::from_millis(10_100), M, rtt, MSS));
        busy.on_ack(&ack(SimTime::from_millis(100), M, rtt, MSS));
        assert!(close(limited.cwnd_segments(), busy.cwnd_segments(), 1e-12));
    }

    #[test]
    fn sack_only_acks_do_not_grow_the_window() {
        let mut cc = after_loss_at(CubicParams::default(), 100);
        let mut s = ack(SimTime::from_secs(1), 0, SimTime::from_millis(100), MSS);
        s.newly_sacked_bytes = 10 * M;
        cc.on_ack(&s);
        assert_eq!(cc.cwnd(), 70 * M);
    }

    #[test]
    fn cwnd_epoch_above_w_max_starts_on_the_convex_side() {
        // Fast convergence puts W_max at 59.5 while 200 segments in flight leave cwnd at 140.
        let mut cc = after_loss_at(CubicParams::default(), 100);
        cc.on_congestion_event(SimTime::ZERO, 200 * M);
        assert_eq!(cc.cwnd(), 140 * M);
        cc.on_ack(&ack(SimTime::ZERO, M, SimTime::from_millis(100), MSS));
        let k = cc.k_seconds().unwrap();
        assert!(k < 0.0);
        assert!(close(
            w_cubic(0.0, 0.4, k, cc.w_max_segments()),
            140.0,
            1e-9
        ));
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        assert!(CubicParams {
            c: -1.0,
            ..CubicParams::default()
        }
        .validate()
        .is_err());
        assert!(CubicParams {
            beta: 0.0,
            ..CubicParams::default()
        }
        .validate()
        .is_err());
        assert!(CubicParams {
            beta: f64::NAN,
            ..CubicParams::default()
        }
        .validate()
        .is_err());
        assert!(CubicParams::default().validate().is_ok());
    }

    proptest! {
        /// In congestion avoidance without the Reno-friendly region, no ACK raises the window by
        /// more than half a segment per acknowledged segment (the 1.5·cwnd bound of §4.2), and
        /// no ACK lowers it.
        #[test]
        fn per_ack_growth_is_bounded(
            w_max in 10u64..400,
            acks in proptest::collection::vec(
                (0u64..2_000_000_000, 1u64..4000, 1u64..1_000_000_000),
                1..200,
            ),
        ) {
            let mut cc = after_loss_at(params(true, false), w_max);
            let mut now = SimTime::ZERO;
            for (advance_ns, acked, srtt_ns) in acks {
                now = now.saturating_add(SimTime(advance_ns));
                let before = cc.cwnd_segments();
                cc.on_ack(&ack(now, acked, SimTime(srtt_ns), MSS));
                let grown = cc.cwnd_segments() - before;
                prop_assert!(grown >= 0.0);
                prop_assert!(grown <= 0.5 * acked as f64 / MSS as f64 + 1e-9);
            }
        }
    }
}
