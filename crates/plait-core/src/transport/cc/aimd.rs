//! Generic additive-increase / multiplicative-decrease window, AIMD(α, β).
//!
//! The family studied by Chiu and Jain ("Analysis of the increase and decrease algorithms for
//! congestion avoidance in computer networks", 1989) and, as a model of TCP, by Altman, Avrachenkov
//! and Barakat ("A stochastic model of TCP/IP with stationary random losses", SIGCOMM 2000) and
//! Yang and Lam ("General AIMD congestion control", ICNP 2000):
//!
//! - congestion avoidance: `cwnd += α·MSS` per window of acknowledged data (on average
//!   `α·MSS·acked/cwnd` per ACK);
//! - congestion event: `cwnd ← β·cwnd`, `ssthresh = cwnd` (both at least 2 MSS).
//!
//! **Convention for β.** Here β is the *fraction of the window kept* after a loss, as in
//! Altman et al., in Yang and Lam's GAIMD and in CUBIC's `β_cubic` (RFC 9438 §4.6): β = 0.5
//! halves the window, β = 0.7 keeps 70 %. MulTCP (Crowcroft and Oechslin, "Differentiated end-
//! to-end Internet services using a weighted proportional fair sharing TCP", CCR 1998) and
//! Floyd, Handley and Padhye ("A comparison of equation-based and AIMD congestion control",
//! 2000) write the decrease as `cwnd ← (1 − b)·cwnd` instead: their b = 0.5 is our β = 0.5, but
//! MulTCP's `b = 1/(2N)` is our `β = 1 − 1/(2N)`. In this convention the Reno-friendly pairs of
//! RFC 9438 §4.3 are `α = 3(1 − β)/(1 + β)`: AIMD(α, β) then gets the same average window as
//! Reno under the same periodic losses, e.g. AIMD(0.53, 0.7).
//!
//! The rest follows Reno (RFC 5681 §3.1): slow start with byte counting before the first loss
//! and after a timeout, a loss window of one MSS on a timeout with
//! `ssthresh = max(β·FlightSize, 2·MSS)`, no growth in recovery or when the sender is not
//! cwnd-limited (RFC 7661 §4). AIMD(1, 0.5) makes exactly the same decisions as
//! [`Reno`](super::Reno) in congestion avoidance and, when FlightSize equals cwnd, on losses.
//!
//! Increase bookkeeping: RFC 3465 §2.1 byte counting, generalised. Acknowledged bytes
//! accumulate in `bytes_acked`; each time a whole window has been acknowledged, cwnd is
//! subtracted from the counter and the window grows by `α·MSS` bytes (the fraction of a byte
//! that `α·MSS` may have is carried to the next increase, never lost). The window thus grows by
//! exactly α segments per window of acknowledged data, and with α = 1 the arithmetic is
//! Reno's, step for step. Paying the increase out per ACK instead (`α·MSS·acked/cwnd`) would
//! grow by slightly less than α per round trip, since the window grows during the round.

use super::window::{reduced_window, ByteCountingWindow};
use super::{AckSample, CongestionControl, ControllerKind};
use crate::registry::{AlgorithmSpec, Bound, Param, ParamError, Params, Scalar, Value};
use crate::time::SimTime;

/// The registry declaration of AIMD(α, β).
pub const SPEC: AlgorithmSpec<ControllerKind> = AlgorithmSpec {
    name: "aimd",
    summary: "generic AIMD: +alpha MSS per RTT, window times beta on a loss (Chiu & Jain 1989)",
    params: &[
        Param::number(
            "alpha",
            "additive increase per round trip of acknowledged data",
        )
        .unit("MSS per RTT")
        .default(Scalar::Number(1.0))
        .greater_than(0.0),
        Param::number(
            "beta",
            "fraction of the window kept after a loss (0.5 halves it)",
        )
        .default(Scalar::Number(0.5))
        .range(Bound::Exclusive(0.0), Bound::Exclusive(1.0)),
    ],
    finish: None,
    build: |params, connection| {
        let params = AimdParams::from(params);
        Aimd::new(connection.mss, connection.initial_window, params).into()
    },
};

/// AIMD parameters: `alpha` segments added per round trip, `beta` the fraction of the window
/// kept after a loss (0.5 halves it; see the module documentation for the convention).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimdParams {
    pub alpha: f64,
    pub beta: f64,
}

impl Default for AimdParams {
    /// AIMD(1, 0.5): Reno's congestion avoidance.
    fn default() -> Self {
        AimdParams {
            alpha: 1.0,
            beta: 0.5,
        }
    }
}

impl AimdParams {
    /// Checks the parameters against their declaration ([`SPEC`]): `alpha` positive and
    /// finite, `beta` strictly between 0 and 1.
    pub fn validate(&self) -> Result<(), ParamError> {
        let given = [
            ("alpha", Value::Number(self.alpha)),
            ("beta", Value::Number(self.beta)),
        ];
        SPEC.check(&given).map(drop)
    }
}

impl From<&Params> for AimdParams {
    fn from(p: &Params) -> Self {
        AimdParams {
            alpha: p.number("alpha"),
            beta: p.number("beta"),
        }
    }
}

/// AIMD(α, β) congestion window.
#[derive(Clone, Debug, PartialEq)]
pub struct Aimd {
    params: AimdParams,
    window: ByteCountingWindow,
    /// Fraction of a byte left over from the last `α·MSS` increase.
    increase_remainder: f64,
}

impl Aimd {
    /// An AIMD window for segments of `mss` bytes, starting at `initial_window_segments × mss`
    /// (at least one segment) with an unbounded ssthresh.
    ///
    /// # Panics
    /// If `mss` is zero or the parameters are invalid ([`AimdParams::validate`]).
    pub fn new(mss: u32, initial_window_segments: u32, params: AimdParams) -> Self {
        let window = ByteCountingWindow::new("aimd", mss, initial_window_segments);
        if let Err(e) = params.validate() {
            panic!("{e}");
        }
        Aimd {
            params,
            window,
            increase_remainder: 0.0,
        }
    }

    /// Sets the slow-start byte-counting limit L in segments (1 or 2, RFC 3465 §2.2).
    ///
    /// # Panics
    /// If `segments` is not 1 or 2.
    pub fn with_abc_limit(mut self, segments: u32) -> Self {
        self.window.set_abc_limit(segments);
        self
    }

    pub fn params(&self) -> AimdParams {
        self.params
    }

    /// Segment size in bytes.
    pub fn mss(&self) -> u64 {
        self.window.mss()
    }

    /// Bytes counted towards the next congestion-avoidance increase (RFC 3465 `bytes_acked`).
    pub fn bytes_acked(&self) -> u64 {
        self.window.bytes_acked()
    }
}

impl CongestionControl for Aimd {
    fn name(&self) -> &'static str {
        "aimd"
    }

    fn cwnd(&self) -> u64 {
        self.window.cwnd()
    }

    fn ssthresh(&self) -> u64 {
        self.window.ssthresh()
    }

    fn on_ack(&mut self, sample: &AckSample) {
        // Once a full window has been acknowledged, cwnd += α·MSS (RFC 3465 §2.1 with α·SMSS
        // in place of SMSS).
        let windows = self.window.on_ack(sample);
        if windows > 0 {
            let increase = windows as f64 * self.params.alpha * self.window.mss() as f64
                + self.increase_remainder;
            let whole_bytes = increase.floor();
            self.increase_remainder = increase - whole_bytes;
            self.window.grow(whole_bytes as u64);
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, _bytes_in_flight: u64) {
        // cwnd ← β·cwnd, never below 2 MSS; ssthresh = the reduced window.
        let reduced = reduced_window(self.window.cwnd(), self.params.beta, self.window.mss());
        self.window.on_congestion_event(reduced);
    }

    fn on_retransmission_timeout(&mut self, _now: SimTime, bytes_in_flight: u64) {
        // ssthresh = max(β·FlightSize, 2·MSS): RFC 5681 eq. (4) with β in place of 1/2 (kept
        // by a repeated timeout); cwnd = one MSS.
        let ssthresh = reduced_window(bytes_in_flight, self.params.beta, self.window.mss());
        self.window.on_retransmission_timeout(ssthresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::testing::{ack, run_round};
    use crate::transport::cc::Reno;
    use proptest::prelude::*;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;
    const RTT: SimTime = SimTime::from_millis(50);

    fn aimd(alpha: f64, beta: f64) -> Aimd {
        Aimd::new(MSS, 10, AimdParams { alpha, beta })
    }

    /// Grows `cc` by slow start to `segments` segments, then takes a loss at that window.
    fn after_first_loss(mut cc: Aimd, segments: u64) -> Aimd {
        while cc.cwnd() < segments * M {
            cc.on_ack(&ack(SimTime::ZERO, M, RTT, MSS));
        }
        assert_eq!(cc.cwnd(), segments * M);
        cc.on_congestion_event(SimTime::ZERO, segments * M);
        cc
    }

    #[test]
    fn defaults_are_reno() {
        assert_eq!(
            AimdParams::default(),
            AimdParams {
                alpha: 1.0,
                beta: 0.5
            }
        );
        let cc = Aimd::new(MSS, 10, AimdParams::default());
        assert_eq!(
            (cc.cwnd(), cc.ssthresh(), cc.name()),
            (10 * M, u64::MAX, "aimd")
        );
    }

    #[test]
    #[should_panic(
        expected = "controller aimd: beta: must be between 0 and 1 (exclusive), got 1.5"
    )]
    fn invalid_parameters_are_refused() {
        aimd(1.0, 1.5);
    }

    #[test]
    fn slow_start_doubles_per_round_trip() {
        let mut cc = aimd(3.0, 0.8);
        let mut now = SimTime::ZERO;
        for expected in [20, 40, 80] {
            now = run_round(&mut cc, now, RTT, MSS);
            assert_eq!(cc.cwnd(), expected * M);
        }
    }

    #[test]
    fn beta_is_the_fraction_kept() {
        let cc = after_first_loss(aimd(1.0, 0.7), 100);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (70 * M, 70 * M));
        let cc = after_first_loss(aimd(1.0, 0.5), 100);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (50 * M, 50 * M));
        // Rounded down to whole bytes: half of 10 001 is 5 000.
        let mut cc = aimd(1.0, 0.5);
        cc.on_ack(&ack(SimTime::ZERO, 1, RTT, MSS));
        assert_eq!(cc.cwnd(), 10_001);
        cc.on_congestion_event(SimTime::ZERO, 0);
        assert_eq!(cc.cwnd(), 5_000);
    }

    #[test]
    fn decrease_has_a_two_segment_floor() {
        let mut cc = aimd(1.0, 0.5);
        for _ in 0..10 {
            cc.on_congestion_event(SimTime::ZERO, 0);
        }
        assert_eq!((cc.cwnd(), cc.ssthresh()), (2 * M, 2 * M));
    }

    #[test]
    fn alpha_two_grows_two_segments_per_round_trip() {
        let mut cc = after_first_loss(aimd(2.0, 0.5), 40);
        assert_eq!(cc.cwnd(), 20 * M);
        let mut now = SimTime::ZERO;
        for round in 1..=40u64 {
            now = run_round(&mut cc, now, RTT, MSS);
            assert_eq!(cc.cwnd(), (20 + 2 * round) * M, "round {round}");
            assert_eq!(cc.bytes_acked(), 0);
        }
    }

    #[test]
    fn fractional_increase_carries_the_fraction_of_a_byte() {
        // α = 1 + 1/1024: α·MSS = 1000 + 125/128 bytes per window (exact in binary), so after
        // n windows the window has grown by n·1000 + ⌊125·n/128⌋ bytes, nothing lost to rounding.
        let mut cc = after_first_loss(aimd(1.0 + 1.0 / 1024.0, 0.5), 40);
        let start = cc.cwnd();
        for windows in 1..=300u64 {
            cc.on_ack(&ack(SimTime::ZERO, cc.cwnd(), RTT, MSS));
            assert_eq!(
                cc.cwnd() - start,
                windows * 1000 + windows * 125 / 128,
                "window {windows}"
            );
        }
    }

    #[test]
    fn small_alpha_grows_less_than_a_segment_per_window() {
        let mut cc = after_first_loss(aimd(0.25, 0.5), 40);
        for windows in 1..=8u64 {
            cc.on_ack(&ack(SimTime::ZERO, cc.cwnd(), RTT, MSS));
            assert_eq!(cc.cwnd(), 20 * M + windows * 250);
        }
    }

    #[test]
    fn timeout_uses_beta_on_flight_size() {
        let mut cc = after_first_loss(aimd(1.0, 0.7), 100).with_abc_limit(2);
        cc.on_retransmission_timeout(SimTime::ZERO, 50 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 35 * M));
        cc.on_retransmission_timeout(SimTime::ZERO, 10 * M);
        assert_eq!(
            (cc.cwnd(), cc.ssthresh()),
            (M, 35 * M),
            "a repeated timeout keeps ssthresh"
        );
        // L = 1 in the slow start after a timeout, although L = 2 is configured.
        cc.on_ack(&ack(SimTime::ZERO, 2 * M, RTT, MSS));
        assert_eq!(cc.cwnd(), 2 * M);
        cc.on_retransmission_timeout(SimTime::ZERO, M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 2 * M));
    }

    #[test]
    fn no_growth_in_recovery_or_when_not_cwnd_limited() {
        let mut cc = after_first_loss(aimd(4.0, 0.5), 40);
        for _ in 0..100 {
            let mut s = ack(SimTime::ZERO, M, RTT, MSS);
            s.in_recovery = true;
            cc.on_ack(&s);
            let mut s = ack(SimTime::ZERO, M, RTT, MSS);
            s.is_cwnd_limited = false;
            cc.on_ack(&s);
        }
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (20 * M, 0));
        // Nothing was counted either: the next full window grows as if nothing happened.
        for _ in 0..19 {
            cc.on_ack(&ack(SimTime::ZERO, M, RTT, MSS));
        }
        assert_eq!(cc.cwnd(), 20 * M);
        cc.on_ack(&ack(SimTime::ZERO, M, RTT, MSS));
        assert_eq!(cc.cwnd(), 24 * M);
    }

    #[test]
    fn aimd_one_half_matches_reno_round_by_round() {
        let mut reno = Reno::new(MSS, 10);
        let mut aimd = aimd(1.0, 0.5);
        let mut now = SimTime::ZERO;
        for round in 0..200u64 {
            let start = now;
            now = run_round(&mut reno, start, RTT, MSS);
            run_round(&mut aimd, start, RTT, MSS);
            if round % 17 == 16 {
                // A loss at full window (FlightSize = cwnd).
                reno.on_congestion_event(now, reno.cwnd());
                aimd.on_congestion_event(now, aimd.cwnd());
            }
            assert_eq!(
                (reno.cwnd(), reno.ssthresh()),
                (aimd.cwnd(), aimd.ssthresh()),
                "round {round}"
            );
        }
    }

    #[derive(Clone, Debug)]
    enum Step {
        Ack {
            acked_bytes: u64,
            cwnd_limited: bool,
            in_recovery: bool,
        },
        LossAtFullWindow,
        Timeout {
            flight_bytes: u64,
        },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            8 => (0u64..5000, any::<bool>(), any::<bool>()).prop_map(
                |(acked_bytes, cwnd_limited, in_recovery)| Step::Ack {
                    acked_bytes,
                    cwnd_limited,
                    in_recovery,
                }
            ),
            1 => Just(Step::LossAtFullWindow),
            1 => (0u64..200_000).prop_map(|flight_bytes| Step::Timeout { flight_bytes }),
        ]
    }

    proptest! {
        /// AIMD(1, 0.5) and Reno take the same window through any mix of ACK sizes, recovery,
        /// application-limited periods, losses at full window and timeouts.
        #[test]
        fn aimd_one_half_is_reno(
            abc_limit in 1u32..=2,
            steps in proptest::collection::vec(step(), 1..400),
        ) {
            let mut reno = Reno::new(MSS, 10).with_abc_limit(abc_limit);
            let mut aimd = Aimd::new(MSS, 10, AimdParams::default()).with_abc_limit(abc_limit);
            for step in steps {
                match step {
                    Step::Ack { acked_bytes, cwnd_limited, in_recovery } => {
                        let mut s = ack(SimTime::ZERO, acked_bytes, RTT, MSS);
                        s.is_cwnd_limited = cwnd_limited;
                        s.in_recovery = in_recovery;
                        reno.on_ack(&s);
                        aimd.on_ack(&s);
                    }
                    Step::LossAtFullWindow => {
                        reno.on_congestion_event(SimTime::ZERO, reno.cwnd());
                        aimd.on_congestion_event(SimTime::ZERO, aimd.cwnd());
                    }
                    Step::Timeout { flight_bytes } => {
                        reno.on_retransmission_timeout(SimTime::ZERO, flight_bytes);
                        aimd.on_retransmission_timeout(SimTime::ZERO, flight_bytes);
                    }
                }
                prop_assert_eq!(reno.cwnd(), aimd.cwnd());
                prop_assert_eq!(reno.ssthresh(), aimd.ssthresh());
            }
        }
    }
}
