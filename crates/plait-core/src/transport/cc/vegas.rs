//! TCP Vegas: Brakmo and Peterson, "TCP Vegas: end to end congestion avoidance on a global
//! Internet", IEEE JSAC 13(8), 1995 (its congestion avoidance and modified slow start), with
//! the once-per-round-trip structure of Linux's `net/ipv4/tcp_vegas.c` (reference
//! `multipath_cc.md` §1.9).
//!
//! Vegas estimates how many of its segments sit in queues, `Diff`, and keeps it between α and β:
//!
//! - `baseRTT` is the smallest RTT sample seen ([`AckSample::rtt`], which obeys Karn's rule;
//!   samples of zero are ignored). It is never forgotten.
//! - **Rounds.** Vegas decides once per round trip, at the first ACK that acknowledges data sent
//!   after the previous decision (Linux: the first ACK beyond `beg_snd_nxt`, the `snd_nxt` saved
//!   at the previous round's end). The hooks carry no sequence numbers, so `snd_una` is the sum
//!   of [`AckSample::acked_bytes`] and `snd_nxt` the sum of the bytes reported to
//!   [`CongestionControl::on_packet_sent`] (never below `snd_una`; set back to `snd_una` on a
//!   timeout, since the sender goes back). Retransmissions count as new bytes, which only makes
//!   the round in progress end later. A sender that reports no sends ends a round on every ACK,
//!   with too few samples to decide (below): Vegas is then Reno.
//! - At the end of a round with at least three RTT samples (fewer means one ACK per round trip,
//!   likely delayed ACKs: that ACK is handled as Reno would, slow start or byte counting,
//!   as Linux does), `RTT` is the *smallest* sample of the round (Linux: it filters out the
//!   delay that delayed ACKs add) and
//!   `Diff = cwnd·(RTT − baseRTT)/RTT`, in segments: the paper's `(Expected − Actual)·baseRTT`
//!   with `Expected = cwnd/baseRTT`, `Actual = cwnd/RTT`. Linux divides by `baseRTT` instead of
//!   `RTT` (a larger estimate) and truncates `Diff` to whole segments; neither is done here.
//! - **Slow start** is RFC 5681's, per ACK, as in Linux (the paper's Vegas doubles only every
//!   other round trip). At the end of a round, if `Diff > γ`, slow start ends:
//!   `cwnd = min(cwnd, ⌊cwnd·baseRTT/RTT⌋ + 1 MSS)` (the rate actually achieved, plus the segment
//!   Linux adds back for truncation) and `ssthresh = cwnd`.
//! - **Congestion avoidance**, at the end of each round only: `Diff < α` → one MSS more;
//!   `Diff > β` → one MSS less (and ssthresh follows it down, so that Vegas stays in congestion
//!   avoidance, the purpose of Linux's `tcp_vegas_ssthresh`); otherwise no change. After each
//!   decision the window is at least 2 MSS (Linux).
//! - Losses are Reno's: `ssthresh = cwnd = max(FlightSize/2, 2·MSS)` on a congestion event, one
//!   MSS on a timeout (RFC 5681 §3.1). Linux turns Vegas off during recovery and starts a fresh
//!   round when it ends; here ACKs in recovery change nothing and [`Vegas::on_recovery_exit`]
//!   starts a fresh round.
//! - An ACK in recovery or while the sender is not cwnd-limited changes nothing, decreases
//!   included (Linux would still lower the window of an application-limited flow); the round it
//!   ends is skipped.
//! - Not reproduced: Linux's `tcp_current_ssthresh` (ssthresh raised to ¾·cwnd after each
//!   decision), which matters only to Linux's undo and reporting.
//!
//! The window machinery (`VegasWindow`, `Rounds`) is shared with wVegas
//! (`transport::multipath::coupled::wvegas`) and the round bookkeeping with FAST and MPFAST.

use super::window::{half_flight_size, initial_window_bytes, penalise, PathWindow, SlowStart};
use super::{AckSample, CongestionControl, ControllerKind};
use crate::registry::{AlgorithmSpec, Param, ParamIssue, Params, Scalar};
use crate::time::SimTime;
use crate::units::format_number;

/// The registry declaration of Vegas; the defaults are Linux's (α = 2, β = 4, γ = 1 segments).
pub const SPEC: AlgorithmSpec<ControllerKind> = AlgorithmSpec {
    name: "vegas",
    summary: "TCP Vegas: between alpha and beta segments queued (Brakmo & Peterson 1995)",
    params: &[
        Param::number(
            "alpha",
            "fewer segments queued than this: one segment more per round trip",
        )
        .unit("segments")
        .default(Scalar::Number(2.0))
        .at_least(0.0),
        Param::number(
            "beta",
            "more segments queued than this: one segment less per round trip",
        )
        .unit("segments")
        .default(Scalar::Number(4.0))
        .at_least(0.0),
        Param::number(
            "gamma",
            "slow start ends once more segments than this are queued",
        )
        .unit("segments")
        .default(Scalar::Number(1.0))
        .at_least(0.0),
    ],
    finish: Some(|params| {
        let p = VegasParams::from(&*params);
        if p.beta < p.alpha {
            return Err(ParamIssue::at(
                "beta",
                format!(
                    "must not be less than alpha ({}), got {}",
                    format_number(p.alpha),
                    format_number(p.beta)
                ),
            ));
        }
        Ok(())
    }),
    build: |params, connection| {
        Vegas::new(
            connection.mss,
            connection.initial_window,
            VegasParams::from(params),
        )
        .into()
    },
};

/// Vegas thresholds, in segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasParams {
    /// Below this many queued segments the window grows.
    pub alpha: f64,
    /// Above this many queued segments the window shrinks.
    pub beta: f64,
    /// Above this many queued segments slow start ends.
    pub gamma: f64,
}

impl Default for VegasParams {
    /// Linux's `tcp_vegas.c` module defaults: α = 2, β = 4, γ = 1.
    fn default() -> Self {
        VegasParams {
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
        }
    }
}

impl From<&Params> for VegasParams {
    fn from(p: &Params) -> Self {
        VegasParams {
            alpha: p.number("alpha"),
            beta: p.number("beta"),
            gamma: p.number("gamma"),
        }
    }
}

/// The Vegas congestion window.
#[derive(Clone, Debug, PartialEq)]
pub struct Vegas {
    params: VegasParams,
    window: VegasWindow,
}

impl Vegas {
    /// A Vegas window for segments of `mss` bytes, starting at `initial_window_segments × mss`
    /// (at least one segment) with an unbounded ssthresh.
    ///
    /// # Panics
    /// If `mss` is zero, or the thresholds are negative, not finite, or `beta < alpha`.
    pub fn new(mss: u32, initial_window_segments: u32, params: VegasParams) -> Self {
        let VegasParams { alpha, beta, gamma } = params;
        assert!(
            [alpha, beta, gamma]
                .iter()
                .all(|x| x.is_finite() && *x >= 0.0)
                && alpha <= beta,
            "vegas: invalid thresholds {params:?}"
        );
        Vegas {
            params,
            window: VegasWindow::new("vegas", mss, initial_window_segments),
        }
    }

    /// The smallest RTT seen so far, if any.
    pub fn base_rtt(&self) -> Option<SimTime> {
        self.window.base_rtt()
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
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
        let Some(round) = self.window.on_ack(sample) else {
            return;
        };
        // Linux: the smallest sample of the round.
        let rtt_ns = round.stats.min_rtt.as_nanos() as f64;
        let queued = self.window.queued_segments(rtt_ns, round.base_rtt);
        if self.window.in_slow_start() {
            if queued > self.params.gamma {
                self.window.leave_slow_start(rtt_ns, round.base_rtt);
            } else {
                self.window.slow_start_ack(round.acked_bytes);
            }
        } else if queued > self.params.beta {
            self.window.remove_segment();
        } else if queued < self.params.alpha {
            self.window.add_segment();
        }
        self.window.end_decision();
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

/// What the delay-based controllers measure over one round trip (see the module
/// documentation): the cumulative and sent byte counts that delimit rounds, and the RTT
/// samples of the round in progress.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rounds {
    /// Bytes cumulatively acknowledged so far.
    snd_una: u64,
    /// Bytes sent so far (never below `snd_una`).
    snd_nxt: u64,
    /// The round in progress ends with the first ACK beyond this (Linux `beg_snd_nxt`).
    round_end: u64,
    /// RTT samples in the round in progress: count, smallest, sum in nanoseconds.
    samples: u32,
    min_rtt: SimTime,
    sum_rtt_ns: u128,
    /// The smallest RTT sample ever.
    base_rtt: Option<SimTime>,
}

/// The RTT samples of one finished round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RoundStats {
    pub(crate) samples: u32,
    /// The smallest sample of the round ([`SimTime::MAX`] if none).
    pub(crate) min_rtt: SimTime,
    /// The mean of the samples of the round in nanoseconds (0 if none).
    pub(crate) mean_rtt_ns: f64,
}

impl Rounds {
    pub(crate) fn new() -> Self {
        Rounds {
            min_rtt: SimTime::MAX,
            ..Rounds::default()
        }
    }

    pub(crate) fn base_rtt(&self) -> Option<SimTime> {
        self.base_rtt
    }

    pub(crate) fn on_packet_sent(&mut self, bytes: u32) {
        self.snd_nxt = self
            .snd_nxt
            .saturating_add(u64::from(bytes))
            .max(self.snd_una);
    }

    /// Records one ACK (its acknowledged bytes and RTT sample); returns whether it ends the
    /// round in progress, in which case the caller calls [`Rounds::end_round`].
    pub(crate) fn on_ack(&mut self, sample: &AckSample) -> bool {
        self.snd_una = self.snd_una.saturating_add(sample.acked_bytes);
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        if let Some(rtt) = sample.rtt.filter(|r| *r > SimTime::ZERO) {
            self.samples = self.samples.saturating_add(1);
            self.min_rtt = self.min_rtt.min(rtt);
            self.sum_rtt_ns += u128::from(rtt.as_nanos());
            self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        }
        self.snd_una > self.round_end
    }

    /// Ends the round in progress: returns its samples and starts the next one, which ends
    /// with the first ACK beyond what has been sent so far.
    pub(crate) fn end_round(&mut self) -> RoundStats {
        let stats = RoundStats {
            samples: self.samples,
            min_rtt: self.min_rtt,
            mean_rtt_ns: if self.samples == 0 {
                0.0
            } else {
                self.sum_rtt_ns as f64 / f64::from(self.samples)
            },
        };
        self.restart();
        stats
    }

    /// Starts a fresh round from here, forgetting the samples of the one in progress.
    pub(crate) fn restart(&mut self) {
        self.round_end = self.snd_nxt;
        self.samples = 0;
        self.min_rtt = SimTime::MAX;
        self.sum_rtt_ns = 0;
    }

    /// A retransmission timeout: the sender goes back to `snd_una`.
    pub(crate) fn on_timeout(&mut self) {
        self.snd_nxt = self.snd_una;
        self.restart();
    }
}

/// The end of a round on which Vegas or wVegas decides (at least three RTT samples).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RoundEnd {
    pub(crate) stats: RoundStats,
    pub(crate) base_rtt: SimTime,
    /// Bytes acknowledged by the ACK that ended the round.
    pub(crate) acked_bytes: u64,
}

/// The window of Vegas and of each wVegas subflow: slow start, rounds, the Reno fallback, the
/// one-segment steps, the losses (see the module documentation). The controller decides what
/// to do at the end of each round ([`VegasWindow::on_ack`] returns it).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct VegasWindow {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    slow_start: SlowStart,
    /// RFC 3465 `bytes_acked` for the ACKs handled as Reno (rounds with too few samples).
    reno_bytes_acked: u64,
    rounds: Rounds,
}

impl VegasWindow {
    /// # Panics
    /// If `mss` is zero; the message names `controller`.
    pub(crate) fn new(controller: &str, mss: u32, initial_window_segments: u32) -> Self {
        assert!(mss > 0, "{controller}: MSS must be positive");
        let mss = u64::from(mss);
        VegasWindow {
            mss,
            cwnd: initial_window_bytes(mss, initial_window_segments),
            ssthresh: u64::MAX,
            slow_start: SlowStart::default(),
            reno_bytes_acked: 0,
            rounds: Rounds::new(),
        }
    }

    pub(crate) fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    pub(crate) fn base_rtt(&self) -> Option<SimTime> {
        self.rounds.base_rtt()
    }

    /// Applies one ACK: slow start between round ends, Reno at the end of a round with too
    /// few samples. Returns the end of a round on which the controller is to decide; nothing
    /// happens on an ACK in recovery, when the sender is not cwnd-limited, or that acknowledges
    /// no new data (a round such an ACK ends is skipped).
    pub(crate) fn on_ack(&mut self, sample: &AckSample) -> Option<RoundEnd> {
        self.slow_start.on_ack(sample.acked_bytes);
        let round_over = self.rounds.on_ack(sample);
        let eligible = !sample.in_recovery && sample.is_cwnd_limited && sample.acked_bytes > 0;
        if round_over {
            let stats = self.rounds.end_round();
            if !eligible {
                return None;
            }
            // Linux: "if we only had 2 samples total, then that means we're getting only 1 ACK
            // per RTT" (delayed ACKs): behave like Reno for this ACK.
            if stats.samples <= 2 {
                self.reno_ack(sample.acked_bytes);
                return None;
            }
            let base_rtt = self.rounds.base_rtt()?;
            return Some(RoundEnd {
                stats,
                base_rtt,
                acked_bytes: sample.acked_bytes,
            });
        }
        if eligible && self.in_slow_start() {
            self.slow_start_ack(sample.acked_bytes);
        }
        None
    }

    /// One ACK as Reno handles it: slow start, or RFC 3465 byte counting.
    fn reno_ack(&mut self, acked_bytes: u64) {
        if self.in_slow_start() {
            self.slow_start_ack(acked_bytes);
            return;
        }
        self.slow_start.exit();
        self.reno_bytes_acked = self.reno_bytes_acked.saturating_add(acked_bytes);
        if self.reno_bytes_acked >= self.cwnd {
            let windows = self.reno_bytes_acked / self.cwnd;
            self.reno_bytes_acked -= windows * self.cwnd;
            self.cwnd = self.cwnd.saturating_add(windows.saturating_mul(self.mss));
        }
    }

    /// The slow-start increase for one ACK, `min(N, L·SMSS)` (RFC 5681 eq. (2)).
    pub(crate) fn slow_start_ack(&mut self, acked_bytes: u64) {
        let increase = self.slow_start.increase(acked_bytes, self.mss);
        self.cwnd = self.cwnd.saturating_add(increase);
    }

    /// Segments queued in the network by Vegas's estimate, `cwnd·(RTT − baseRTT)/RTT / MSS`,
    /// for a round measured at `rtt_ns` (not below `base_rtt`).
    pub(crate) fn queued_segments(&self, rtt_ns: f64, base_rtt: SimTime) -> f64 {
        let base_ns = base_rtt.as_nanos() as f64;
        if rtt_ns <= base_ns {
            return 0.0;
        }
        self.cwnd as f64 * (rtt_ns - base_ns) / rtt_ns / self.mss as f64
    }

    /// Ends slow start: `cwnd = min(cwnd, ⌊cwnd·baseRTT/RTT⌋ + 1 MSS)` (at least 2 MSS),
    /// `ssthresh = cwnd`.
    pub(crate) fn leave_slow_start(&mut self, rtt_ns: f64, base_rtt: SimTime) {
        let achieved = (self.cwnd as f64 * base_rtt.as_nanos() as f64 / rtt_ns).floor();
        let target = (achieved as u64).saturating_add(self.mss);
        self.cwnd = self.cwnd.min(target).max(2 * self.mss);
        self.ssthresh = self.ssthresh.min(self.cwnd);
        self.slow_start.exit();
    }

    pub(crate) fn add_segment(&mut self) {
        self.cwnd = self.cwnd.saturating_add(self.mss);
    }

    /// One segment less; ssthresh follows, so that the window stays in congestion avoidance.
    pub(crate) fn remove_segment(&mut self) {
        self.cwnd = self.cwnd.saturating_sub(self.mss).max(2 * self.mss);
        self.ssthresh = self.ssthresh.min(self.cwnd);
    }

    /// Multiplies the window by `factor` (< 1), rounding down, at least 2 MSS; ssthresh is
    /// left alone (wVegas's queue drain; its kernel lets slow start take the window back).
    pub(crate) fn scale(&mut self, factor: f64) {
        let scaled = (self.cwnd as f64 * factor).floor() as u64;
        self.cwnd = scaled.max(2 * self.mss);
    }

    /// After each decision at the end of a round: the window is at least 2 MSS (Linux).
    pub(crate) fn end_decision(&mut self) {
        self.cwnd = self.cwnd.max(2 * self.mss);
    }
}

impl PathWindow for VegasWindow {
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
        self.ssthresh = reduced;
        self.reno_bytes_acked = 0;
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
        self.reno_bytes_acked = 0;
        self.rounds.on_timeout();
    }

    /// MPTCP's receive-buffer penalisation ([`penalise`]).
    fn penalise(&mut self) {
        penalise(&mut self.cwnd, &mut self.ssthresh, self.mss);
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! An ACK-clocked sender for the controllers that count rounds by sequence numbers.

    use crate::time::SimTime;
    use crate::transport::cc::testing::ack;
    use crate::transport::cc::CongestionControl;

    /// A cwnd-limited sender: it keeps as many whole segments in flight as the window allows,
    /// reporting each to the controller, and every segment is acknowledged by one ACK.
    #[derive(Clone, Debug)]
    pub(crate) struct Clocked {
        pub(crate) mss: u32,
        pub(crate) now: SimTime,
        pub(crate) snd_una: u64,
        pub(crate) snd_nxt: u64,
    }

    impl Clocked {
        pub(crate) fn new(mss: u32) -> Self {
            Clocked {
                mss,
                now: SimTime::ZERO,
                snd_una: 0,
                snd_nxt: 0,
            }
        }

        /// Sends whole segments while the window allows (at least one segment in flight).
        pub(crate) fn fill(&mut self, cc: &mut impl CongestionControl) {
            let mss = u64::from(self.mss);
            while self.snd_nxt == self.snd_una || self.snd_nxt - self.snd_una + mss <= cc.cwnd() {
                cc.on_packet_sent(self.now, self.mss, self.snd_nxt - self.snd_una + mss);
                self.snd_nxt += mss;
            }
        }

        /// One round trip: every segment in flight at its start is acknowledged, one ACK each,
        /// evenly over `rtt`, each ACK carrying the RTT sample `rtt` (also its SRTT); the sender
        /// refills the window after each ACK.
        pub(crate) fn round(&mut self, cc: &mut impl CongestionControl, rtt: SimTime) {
            self.fill(cc);
            let mss = u64::from(self.mss);
            let segments = (self.snd_nxt - self.snd_una) / mss;
            let spacing = rtt.as_nanos() / segments;
            let start = self.now;
            for i in 1..=segments {
                self.now = SimTime(start.as_nanos() + i * spacing);
                self.snd_una += mss;
                let mut sample = ack(self.now, mss, rtt, self.mss);
                sample.bytes_in_flight = self.snd_nxt - self.snd_una;
                cc.on_ack(&sample);
                self.fill(cc);
            }
            self.now = SimTime(start.as_nanos() + rtt.as_nanos());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Clocked;
    use super::*;
    use crate::registry::Value;
    use crate::transport::cc::testing::{ack, run_round};
    use crate::transport::cc::{CcSpec, Reno};

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;
    const BASE: SimTime = SimTime::from_millis(100);
    const RTT_110: SimTime = SimTime::from_millis(110);
    const RTT_120: SimTime = SimTime::from_millis(120);

    fn vegas() -> Vegas {
        Vegas::new(MSS, 10, VegasParams::default())
    }

    #[test]
    fn initial_state_and_declaration() {
        let cc = vegas();
        assert_eq!((cc.cwnd(), cc.ssthresh()), (10 * M, u64::MAX));
        assert!(cc.in_slow_start());
        assert_eq!(cc.name(), "vegas");
        assert_eq!(cc.base_rtt(), None);
        let spec = CcSpec::new("vegas", &[]).unwrap();
        assert_eq!(VegasParams::from(spec.params()), VegasParams::default());
        let err = CcSpec::new(
            "vegas",
            &[("alpha", Value::Number(5.0)), ("beta", Value::Number(4.0))],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "controller vegas: beta: must not be less than alpha (5), got 4"
        );
        assert!(CcSpec::new(
            "vegas",
            &[("alpha", Value::Number(4.0)), ("beta", Value::Number(4.0))]
        )
        .is_ok());
    }

    #[test]
    #[should_panic(expected = "vegas: invalid thresholds")]
    fn beta_below_alpha_is_rejected() {
        let _ = Vegas::new(
            MSS,
            10,
            VegasParams {
                alpha: 3.0,
                beta: 2.0,
                gamma: 1.0,
            },
        );
    }

    /// The window after each of `rounds` rounds of a clocked sender at `rtt`.
    fn trace(
        cc: &mut impl CongestionControl,
        sender: &mut Clocked,
        rtt: SimTime,
        rounds: usize,
    ) -> Vec<u64> {
        (0..rounds)
            .map(|_| {
                sender.round(cc, rtt);
                cc.cwnd()
            })
            .collect()
    }

    #[test]
    fn slow_start_doubles_while_nothing_queues() {
        let mut cc = vegas();
        let mut sender = Clocked::new(MSS);
        let windows = trace(&mut cc, &mut sender, BASE, 4);
        assert_eq!(windows, [20 * M, 40 * M, 80 * M, 160 * M]);
        assert_eq!(cc.base_rtt(), Some(BASE));
        assert!(cc.in_slow_start());
    }

    #[test]
    fn equilibrium_keeps_between_alpha_and_beta_segments_queued() {
        let mut cc = vegas();
        let mut sender = Clocked::new(MSS);
        // Round 0 at baseRTT = 100 ms: 10 → 20 segments.
        sender.round(&mut cc, BASE);
        assert_eq!(cc.cwnd(), 20 * M);
        // From round 1 on, RTT = 110 ms (10 ms of queueing). The first ACK of round 1 still
        // sees round 0's 100 ms samples: slow start goes on, 20 → 40 segments.
        sender.round(&mut cc, RTT_110);
        assert_eq!(cc.cwnd(), 40 * M);
        // The first ACK of round 2 ends a round of 110 ms samples: Diff = 40·10/110 = 3.6 > γ,
        // so slow start ends at ⌊40 000·100/110⌋ + 1000 = 36 363 + 1000 = 37 363 bytes.
        sender.round(&mut cc, RTT_110);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (37_363, 37_363));
        // Diff = 37 363·10/110 / 1000 = 3.40 segments, within [α, β] = [2, 4]: no change.
        let windows = trace(&mut cc, &mut sender, RTT_110, 20);
        assert!(windows.iter().all(|w| *w == 37_363), "{windows:?}");
        // The window of the equilibrium is [α, β]·RTT/q = [22, 44] segments.
        assert!((22 * M..=44 * M).contains(&cc.cwnd()));

        // Queueing grows to 20 ms: Diff = 37 363·20/120 = 6.2 > β. The first round end still
        // sees 110 ms samples (no change); then one segment less per round until
        // Diff ≤ 4, i.e. cwnd ≤ 24 000: 37 363 − 14·1000 = 23 363 (Diff = 3.9).
        let windows = trace(&mut cc, &mut sender, RTT_120, 40);
        assert_eq!(windows[0], 37_363);
        assert_eq!(windows[1], 36_363);
        assert_eq!(*windows.last().unwrap(), 23_363);
        assert!((12 * M..=24 * M).contains(&cc.cwnd()));
        assert!(!cc.in_slow_start());

        // Queueing falls to 1 ms: Diff = 23 363·1/101 = 0.23 < α, one segment more per round.
        // The round's smallest sample is the 101 ms of the ACK that ends it: at once.
        let rtt_101 = SimTime::from_millis(101);
        let windows = trace(&mut cc, &mut sender, rtt_101, 3);
        assert_eq!(windows, [24_363, 25_363, 26_363]);
    }

    #[test]
    fn rounds_with_fewer_than_three_samples_are_reno() {
        // A sender that reports no sends ends a round on every ACK, each with one sample: Vegas
        // takes Reno's decisions, even with a queue.
        let mut cc = vegas();
        let mut reno = Reno::new(MSS, 10);
        let mut now = SimTime::ZERO;
        for rtt in [BASE, RTT_120, RTT_120, RTT_120] {
            run_round(&mut cc, now, rtt, MSS);
            now = run_round(&mut reno, now, rtt, MSS);
            assert_eq!(cc.cwnd(), reno.cwnd());
        }
        cc.on_congestion_event(now, 100 * M);
        reno.on_congestion_event(now, 100 * M);
        for _ in 0..30 {
            run_round(&mut cc, now, RTT_120, MSS);
            now = run_round(&mut reno, now, RTT_120, MSS);
            assert_eq!((cc.cwnd(), cc.ssthresh()), (reno.cwnd(), reno.ssthresh()));
        }
    }

    #[test]
    fn losses_are_reno_and_restart_the_round() {
        let mut cc = vegas();
        let mut sender = Clocked::new(MSS);
        sender.round(&mut cc, BASE);
        cc.on_congestion_event(sender.now, 30 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (15 * M, 15 * M));
        cc.on_congestion_event(sender.now, M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (2 * M, 2 * M));
        cc.on_retransmission_timeout(sender.now, 40 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 20 * M));
        // A repeated timeout keeps ssthresh (RFC 5681 §3.1).
        cc.on_retransmission_timeout(sender.now, 4 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 20 * M));
        assert!(cc.in_slow_start());
        cc.on_recovery_exit(sender.now);
        assert_eq!(cc.cwnd(), M);
    }

    #[test]
    fn ineligible_acks_change_nothing() {
        let mut cc = vegas();
        let mut sender = Clocked::new(MSS);
        sender.round(&mut cc, BASE);
        sender.round(&mut cc, RTT_120);
        let before = cc.clone();
        for (recovering, limited) in [(true, true), (false, false)] {
            let mut other = before.clone();
            for _ in 0..40 {
                let mut sample = ack(sender.now, M, RTT_120, MSS);
                sample.in_recovery = recovering;
                sample.is_cwnd_limited = limited;
                other.on_ack(&sample);
            }
            assert_eq!(
                (other.cwnd(), other.ssthresh()),
                (before.cwnd(), before.ssthresh())
            );
        }
    }

    #[test]
    fn the_window_never_falls_below_two_segments_in_congestion_avoidance() {
        let mut cc = Vegas::new(
            MSS,
            10,
            VegasParams {
                alpha: 0.0,
                beta: 0.0,
                gamma: 0.0,
            },
        );
        let mut sender = Clocked::new(MSS);
        sender.round(&mut cc, BASE);
        let windows = trace(&mut cc, &mut sender, SimTime::from_millis(400), 40);
        assert_eq!(*windows.last().unwrap(), 2 * M);
    }

    #[test]
    fn rounds_end_at_the_first_ack_beyond_what_was_sent() {
        let mut rounds = Rounds::new();
        let mut sample = ack(SimTime::ZERO, M, BASE, MSS);
        // Nothing sent yet: the first ACK ends the (empty) first round.
        assert!(rounds.on_ack(&sample));
        rounds.end_round();
        for _ in 0..3 {
            rounds.on_packet_sent(MSS);
        }
        // snd_una = 1000, snd_nxt = 4000; the round ends beyond 1000.
        sample.rtt = Some(RTT_110);
        assert!(rounds.on_ack(&sample));
        let stats = rounds.end_round();
        assert_eq!((stats.samples, stats.min_rtt), (1, RTT_110));
        assert!(!rounds.on_ack(&sample));
        sample.rtt = Some(RTT_120);
        assert!(!rounds.on_ack(&sample));
        assert!(rounds.on_ack(&sample));
        let stats = rounds.end_round();
        assert_eq!((stats.samples, stats.min_rtt), (3, RTT_110));
        assert_eq!(stats.mean_rtt_ns, 350e6 / 3.0);
        assert_eq!(rounds.base_rtt(), Some(BASE));
        // After a timeout the sender goes back: the next ACK ends the round.
        rounds.on_packet_sent(MSS);
        rounds.on_timeout();
        assert!(rounds.on_ack(&sample));
    }
}
