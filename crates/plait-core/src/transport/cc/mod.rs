//! Congestion controllers.
//!
//! A controller is sans-IO: the TCP sender calls its hooks with `now` and what it learned, and
//! reads back `cwnd()` (bytes). One algorithm per file; built-ins are dispatched through the
//! [`Controller`] enum on the hot path, and [`Controller::Custom`] takes any
//! `Box<dyn CongestionControl + Send>` (the extension point).
//!
//! Contract with the sender (see `transport::tcp::sender`):
//! - `on_ack` is called for every ACK that acknowledges new data cumulatively or newly SACKs
//!   bytes, with `in_recovery` set while the sender is in loss recovery (controllers must not
//!   grow the window then: RFC 5681 §3.2, RFC 6675 §5);
//! - `on_congestion_event` once when loss recovery starts (at most once per window of data);
//!   the controller sets ssthresh and cwnd (RFC 5681 eq. (4); RFC 6675 §5 step 4.2);
//! - `on_recovery_exit` when the cumulative ACK passes the recovery point;
//! - `on_retransmission_timeout` when the RTO fires (RFC 5681 §3.1 eq. (4), cwnd = loss window).
//!
//! Rules shared by the built-in controllers (their arithmetic is in the `window` submodule):
//! - windows are in bytes; the initial window is `initial_window_segments × MSS` (RFC 6928
//!   allows 10 segments), the initial ssthresh is `u64::MAX` ("arbitrarily high", RFC 5681 §3.1);
//! - slow start adds `min(N, L·SMSS)` per ACK, N being the newly acknowledged bytes
//!   (RFC 5681 §3.1 eq. (2) with RFC 3465 §2.2 byte counting). The default limit is
//!   L = [`DEFAULT_ABC_LIMIT_SEGMENTS`] = 1: the standards-track rule of RFC 5681, which is
//!   also what packet-counting simulators (one segment per ACK) do. Each controller's
//!   `with_abc_limit(2)` selects the experimental L = 2 of RFC 3465, under which a delayed ACK
//!   for two segments opens the window by two, closer to Linux; even then L = 1 is used in the
//!   slow start that follows a retransmission timeout (RFC 3465 §2.3);
//! - only bytes covered by the cumulative ACK (`acked_bytes`) open the window; SACKed bytes
//!   do not, since SACK information only arrives around losses;
//! - nothing grows while `in_recovery` or while the sender is not cwnd-limited (RFC 7661 §4);
//! - a second timeout before any new data is acknowledged keeps ssthresh where the first one
//!   put it, and only resets cwnd to the loss window: RFC 5681 §3.1 applies eq. (4) only when
//!   the lost segment "has not yet been resent by way of the retransmission timer".

use crate::time::{Rate, SimTime};

pub mod aimd;
pub mod cubic;
pub mod reno;
mod window;

pub use aimd::{Aimd, AimdParams};
pub use cubic::{Cubic, CubicParams};
pub use reno::Reno;

/// Registry names of the built-in controllers, sorted.
pub const KNOWN_CONTROLLERS: &[&str] = &["aimd", "cubic", "reno"];

/// Default Appropriate Byte Counting limit L in segments: 1, as in RFC 5681 eq. (2)
/// (RFC 3465 §2.2 allows up to 2).
pub const DEFAULT_ABC_LIMIT_SEGMENTS: u32 = 1;

/// What the sender learned from one ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSample {
    pub now: SimTime,
    /// Bytes newly acknowledged by the cumulative ACK.
    pub acked_bytes: u64,
    /// Bytes newly covered by SACK blocks (not yet cumulatively acknowledged).
    pub newly_sacked_bytes: u64,
    /// RTT measured from this ACK, if Karn's rule allows one.
    pub rtt: Option<SimTime>,
    /// Smoothed RTT after this sample (RFC 6298), or zero before the first sample.
    pub srtt: SimTime,
    /// Smallest RTT seen on the connection so far, or zero before the first sample.
    pub min_rtt: SimTime,
    /// Bytes in flight (RFC 6675 "pipe" when SACK is on) after processing the ACK.
    pub bytes_in_flight: u64,
    /// True if the sender was limited by cwnd (not by the application or the receive window)
    /// when this ACK arrived (RFC 7661 §4).
    pub is_cwnd_limited: bool,
    pub in_recovery: bool,
    pub mss: u32,
    /// Bytes delivered (cumulatively acknowledged or SACKed) so far, counting this ACK; 0 when
    /// the sender keeps no sent log.
    pub delivered_bytes: u64,
    /// Delivery rate in bit/s measured by this ACK (bytes delivered since the newest segment
    /// it acknowledges was sent, over the time since then), when the sender keeps a sent log.
    pub delivery_rate_bps: Option<f64>,
}

/// A congestion-control algorithm.
pub trait CongestionControl {
    /// Registry name (`reno`, `cubic`, ...).
    fn name(&self) -> &'static str;
    /// Congestion window in bytes.
    fn cwnd(&self) -> u64;
    /// Slow-start threshold in bytes (`u64::MAX` before the first loss).
    fn ssthresh(&self) -> u64;
    fn in_slow_start(&self) -> bool {
        self.cwnd() < self.ssthresh()
    }
    fn on_packet_sent(&mut self, _now: SimTime, _bytes: u32, _bytes_in_flight: u64) {}
    fn on_ack(&mut self, sample: &AckSample);
    /// A segment sent with `tag` was cumulatively acknowledged (only from senders that keep a
    /// sent log, see `transport::tcp::core`): per-packet accounting, e.g. by the window that
    /// carried it.
    fn on_tagged_ack(&mut self, _tag: u64, _bytes: u64) {}
    /// A segment sent with `tag` is presumed lost (retransmitted by recovery, or outstanding
    /// at a timeout); reported once per segment, from senders that keep a sent log.
    fn on_tagged_loss(&mut self, _tag: u64, _bytes: u64) {}
    /// Loss detected by duplicate ACKs or SACK: reduce the window once.
    fn on_congestion_event(&mut self, now: SimTime, bytes_in_flight: u64);
    fn on_recovery_exit(&mut self, _now: SimTime) {}
    /// The retransmission timer fired.
    fn on_retransmission_timeout(&mut self, now: SimTime, bytes_in_flight: u64);
    /// A pacing rate, for controllers that pace.
    fn pacing_rate(&self) -> Option<Rate> {
        None
    }
}

/// A controller as named in a scenario, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcSpec {
    /// Reno / NewReno window rules (RFC 5681); NewReno/SACK recovery lives in the sender.
    Reno,
    /// CUBIC (RFC 9438): `c` (default 0.4), `beta` (default 0.7), TCP-friendly region on/off.
    Cubic {
        c: f64,
        beta: f64,
        fast_convergence: bool,
        tcp_friendliness: bool,
    },
    /// Generic AIMD: +alpha MSS per RTT, window multiplied by `beta` on loss (`beta` is the
    /// fraction kept: 0.5 halves the window; see [`aimd`]).
    Aimd { alpha: f64, beta: f64 },
}

impl CcSpec {
    /// Registry name of the controller this spec builds.
    pub fn name(&self) -> &'static str {
        match self {
            CcSpec::Reno => "reno",
            CcSpec::Cubic { .. } => "cubic",
            CcSpec::Aimd { .. } => "aimd",
        }
    }

    /// The spec with default parameters for a registry name (exact, lower case), or `None` if
    /// the name is not one of [`KNOWN_CONTROLLERS`].
    pub fn default_for(name: &str) -> Option<CcSpec> {
        match name {
            "reno" => Some(CcSpec::Reno),
            "cubic" => Some(CubicParams::default().into()),
            "aimd" => Some(AimdParams::default().into()),
            _ => None,
        }
    }

    /// Checks the parameters; [`CcSpec::build`] panics on a spec this rejects.
    pub fn validate(&self) -> Result<(), InvalidCcParameter> {
        match *self {
            CcSpec::Reno => Ok(()),
            CcSpec::Cubic {
                c,
                beta,
                fast_convergence,
                tcp_friendliness,
            } => CubicParams {
                c,
                beta,
                fast_convergence,
                tcp_friendliness,
            }
            .validate(),
            CcSpec::Aimd { alpha, beta } => AimdParams { alpha, beta }.validate(),
        }
    }

    /// Builds the controller for a connection with the given MSS (bytes) and initial window
    /// (segments; 0 is treated as 1).
    ///
    /// # Panics
    /// If `mss` is zero or [`CcSpec::validate`] rejects the parameters.
    pub fn build(&self, mss: u32, initial_window_segments: u32) -> Controller {
        match *self {
            CcSpec::Reno => Controller::Reno(Reno::new(mss, initial_window_segments)),
            CcSpec::Cubic {
                c,
                beta,
                fast_convergence,
                tcp_friendliness,
            } => {
                let params = CubicParams {
                    c,
                    beta,
                    fast_convergence,
                    tcp_friendliness,
                };
                Controller::Cubic(Cubic::new(mss, initial_window_segments, params))
            }
            CcSpec::Aimd { alpha, beta } => {
                let params = AimdParams { alpha, beta };
                Controller::Aimd(Aimd::new(mss, initial_window_segments, params))
            }
        }
    }
}

impl From<CubicParams> for CcSpec {
    fn from(p: CubicParams) -> Self {
        CcSpec::Cubic {
            c: p.c,
            beta: p.beta,
            fast_convergence: p.fast_convergence,
            tcp_friendliness: p.tcp_friendliness,
        }
    }
}

impl From<AimdParams> for CcSpec {
    fn from(p: AimdParams) -> Self {
        CcSpec::Aimd {
            alpha: p.alpha,
            beta: p.beta,
        }
    }
}

/// A controller parameter outside its valid range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{controller}: parameter `{parameter}` = {value} is invalid (expected {expected})")]
pub struct InvalidCcParameter {
    pub controller: &'static str,
    pub parameter: &'static str,
    pub value: f64,
    pub expected: &'static str,
}

impl InvalidCcParameter {
    /// `value` must be positive and finite.
    pub(crate) fn check_positive(
        controller: &'static str,
        parameter: &'static str,
        value: f64,
    ) -> Result<(), Self> {
        if value.is_finite() && value > 0.0 {
            return Ok(());
        }
        Err(InvalidCcParameter {
            controller,
            parameter,
            value,
            expected: "a finite number > 0",
        })
    }

    /// `beta`, the fraction of the window kept after a loss, must lie strictly between 0 and 1.
    pub(crate) fn check_beta(controller: &'static str, beta: f64) -> Result<(), Self> {
        if beta > 0.0 && beta < 1.0 {
            return Ok(());
        }
        Err(InvalidCcParameter {
            controller,
            parameter: "beta",
            value: beta,
            expected: "0 < beta < 1 (fraction of the window kept)",
        })
    }
}

/// A congestion controller: the built-ins dispatched by `match` (no virtual call on the hot
/// path), or any boxed implementation of [`CongestionControl`].
///
/// The boxed variant is `Send` so that a simulator holding controllers can be moved to the
/// thread that runs it.
pub enum Controller {
    Reno(Reno),
    Cubic(Cubic),
    Aimd(Aimd),
    Custom(Box<dyn CongestionControl + Send>),
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Controller::Reno(c) => f.debug_tuple("Reno").field(c).finish(),
            Controller::Cubic(c) => f.debug_tuple("Cubic").field(c).finish(),
            Controller::Aimd(c) => f.debug_tuple("Aimd").field(c).finish(),
            Controller::Custom(c) => f
                .debug_struct("Custom")
                .field("name", &c.name())
                .field("cwnd", &c.cwnd())
                .field("ssthresh", &c.ssthresh())
                .finish(),
        }
    }
}

impl From<Reno> for Controller {
    fn from(c: Reno) -> Self {
        Controller::Reno(c)
    }
}

impl From<Cubic> for Controller {
    fn from(c: Cubic) -> Self {
        Controller::Cubic(c)
    }
}

impl From<Aimd> for Controller {
    fn from(c: Aimd) -> Self {
        Controller::Aimd(c)
    }
}

/// Forwards one trait call to whichever controller the enum holds.
macro_rules! dispatch {
    ($self:expr, $inner:ident => $call:expr) => {
        match $self {
            Controller::Reno($inner) => $call,
            Controller::Cubic($inner) => $call,
            Controller::Aimd($inner) => $call,
            Controller::Custom($inner) => $call,
        }
    };
}

impl CongestionControl for Controller {
    #[inline]
    fn name(&self) -> &'static str {
        dispatch!(self, c => c.name())
    }
    #[inline]
    fn cwnd(&self) -> u64 {
        dispatch!(self, c => c.cwnd())
    }
    #[inline]
    fn ssthresh(&self) -> u64 {
        dispatch!(self, c => c.ssthresh())
    }
    #[inline]
    fn in_slow_start(&self) -> bool {
        dispatch!(self, c => c.in_slow_start())
    }
    #[inline]
    fn on_packet_sent(&mut self, now: SimTime, bytes: u32, bytes_in_flight: u64) {
        dispatch!(self, c => c.on_packet_sent(now, bytes, bytes_in_flight))
    }
    #[inline]
    fn on_ack(&mut self, sample: &AckSample) {
        dispatch!(self, c => c.on_ack(sample))
    }
    fn on_tagged_ack(&mut self, tag: u64, bytes: u64) {
        dispatch!(self, c => c.on_tagged_ack(tag, bytes))
    }
    fn on_tagged_loss(&mut self, tag: u64, bytes: u64) {
        dispatch!(self, c => c.on_tagged_loss(tag, bytes))
    }
    #[inline]
    fn on_congestion_event(&mut self, now: SimTime, bytes_in_flight: u64) {
        dispatch!(self, c => c.on_congestion_event(now, bytes_in_flight))
    }
    #[inline]
    fn on_recovery_exit(&mut self, now: SimTime) {
        dispatch!(self, c => c.on_recovery_exit(now))
    }
    #[inline]
    fn on_retransmission_timeout(&mut self, now: SimTime, bytes_in_flight: u64) {
        dispatch!(self, c => c.on_retransmission_timeout(now, bytes_in_flight))
    }
    #[inline]
    fn pacing_rate(&self) -> Option<Rate> {
        dispatch!(self, c => c.pacing_rate())
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Synthetic ACK streams for the controller tests.

    use super::{AckSample, CongestionControl};
    use crate::time::SimTime;

    /// A cwnd-limited ACK outside recovery.
    pub fn ack(now: SimTime, acked_bytes: u64, srtt: SimTime, mss: u32) -> AckSample {
        AckSample {
            now,
            acked_bytes,
            newly_sacked_bytes: 0,
            rtt: Some(srtt),
            srtt,
            min_rtt: srtt,
            bytes_in_flight: 0,
            is_cwnd_limited: true,
            in_recovery: false,
            mss,
            delivered_bytes: 0,
            delivery_rate_bps: None,
        }
    }

    /// One round trip of a cwnd-limited flow: the window at the start of the round is sent and
    /// acknowledged one MSS per ACK, the ACKs spread evenly over `rtt` starting at `start`.
    /// Returns the time at which the next round starts.
    pub fn run_round(
        cc: &mut impl CongestionControl,
        start: SimTime,
        rtt: SimTime,
        mss: u32,
    ) -> SimTime {
        let segments = (cc.cwnd() / u64::from(mss)).max(1);
        let spacing = rtt.as_nanos() / segments;
        for i in 1..=segments {
            let now = SimTime(start.as_nanos() + i * spacing);
            cc.on_ack(&ack(now, u64::from(mss), rtt, mss));
        }
        SimTime(start.as_nanos() + rtt.as_nanos())
    }
}

#[cfg(test)]
mod tests {
    use super::testing::ack;
    use super::*;
    use proptest::prelude::*;

    const MSS: u32 = 1460;

    #[test]
    fn known_controllers_are_sorted_and_resolve() {
        let mut sorted = KNOWN_CONTROLLERS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, KNOWN_CONTROLLERS);
        for name in KNOWN_CONTROLLERS {
            let spec = CcSpec::default_for(name).expect("known name resolves");
            assert_eq!(spec.name(), *name);
            assert_eq!(spec.build(MSS, 10).name(), *name);
            assert_eq!(spec.validate(), Ok(()));
        }
        assert_eq!(CcSpec::default_for("vegas"), None);
        assert_eq!(CcSpec::default_for("Reno"), None);
    }

    #[test]
    fn default_parameters() {
        assert_eq!(
            CcSpec::default_for("cubic"),
            Some(CcSpec::Cubic {
                c: 0.4,
                beta: 0.7,
                fast_convergence: true,
                tcp_friendliness: true
            })
        );
        assert_eq!(
            CcSpec::default_for("aimd"),
            Some(CcSpec::Aimd {
                alpha: 1.0,
                beta: 0.5
            })
        );
    }

    #[test]
    fn build_sets_initial_window_and_infinite_ssthresh() {
        for name in KNOWN_CONTROLLERS {
            let cc = CcSpec::default_for(name).unwrap().build(MSS, 10);
            assert_eq!(cc.cwnd(), 14_600, "{name}");
            assert_eq!(cc.ssthresh(), u64::MAX, "{name}");
            assert!(cc.in_slow_start(), "{name}");
            assert_eq!(cc.pacing_rate(), None, "{name}");
            // An initial window of zero segments still allows one segment.
            assert_eq!(
                CcSpec::default_for(name).unwrap().build(MSS, 0).cwnd(),
                1460
            );
        }
    }

    #[test]
    fn validate_rejects_out_of_range_parameters() {
        let bad_beta = CcSpec::Cubic {
            c: 0.4,
            beta: 1.0,
            fast_convergence: true,
            tcp_friendliness: true,
        };
        let err = bad_beta.validate().unwrap_err();
        assert_eq!((err.controller, err.parameter), ("cubic", "beta"));
        let bad_c = CcSpec::Cubic {
            c: 0.0,
            beta: 0.7,
            fast_convergence: true,
            tcp_friendliness: true,
        };
        assert_eq!(bad_c.validate().unwrap_err().parameter, "c");
        let bad_alpha = CcSpec::Aimd {
            alpha: f64::NAN,
            beta: 0.5,
        };
        assert_eq!(bad_alpha.validate().unwrap_err().parameter, "alpha");
        let bad_aimd_beta = CcSpec::Aimd {
            alpha: 1.0,
            beta: 0.0,
        };
        assert_eq!(bad_aimd_beta.validate().unwrap_err().parameter, "beta");
        assert!(bad_aimd_beta
            .validate()
            .unwrap_err()
            .to_string()
            .contains("aimd"));
    }

    #[test]
    fn validation_messages_name_controller_parameter_and_range() {
        let message = |spec: CcSpec| spec.validate().unwrap_err().to_string();
        assert_eq!(
            message(CcSpec::Aimd {
                alpha: -1.0,
                beta: 0.5
            }),
            "aimd: parameter `alpha` = -1 is invalid (expected a finite number > 0)"
        );
        assert_eq!(
            message(CcSpec::Cubic {
                c: f64::INFINITY,
                beta: 0.7,
                fast_convergence: true,
                tcp_friendliness: true,
            }),
            "cubic: parameter `c` = inf is invalid (expected a finite number > 0)"
        );
        for (spec, controller) in [
            (
                CcSpec::Aimd {
                    alpha: 1.0,
                    beta: 1.0,
                },
                "aimd",
            ),
            (
                CcSpec::Cubic {
                    c: 0.4,
                    beta: 1.0,
                    fast_convergence: false,
                    tcp_friendliness: false,
                },
                "cubic",
            ),
        ] {
            assert_eq!(
                message(spec),
                format!(
                    "{controller}: parameter `beta` = 1 is invalid \
                     (expected 0 < beta < 1 (fraction of the window kept))"
                )
            );
        }
    }

    #[test]
    #[should_panic(expected = "beta")]
    fn build_panics_on_invalid_spec() {
        CcSpec::Aimd {
            alpha: 1.0,
            beta: 1.5,
        }
        .build(MSS, 10);
    }

    /// A fixed window, to check that the boxed variant forwards every call.
    struct FixedWindow {
        cwnd: u64,
        events: Vec<&'static str>,
    }

    impl CongestionControl for FixedWindow {
        fn name(&self) -> &'static str {
            "fixed"
        }
        fn cwnd(&self) -> u64 {
            self.cwnd
        }
        fn ssthresh(&self) -> u64 {
            0
        }
        fn on_ack(&mut self, _sample: &AckSample) {
            self.events.push("ack");
            self.cwnd += 1;
        }
        fn on_congestion_event(&mut self, _now: SimTime, _bytes_in_flight: u64) {
            self.cwnd -= 10;
        }
        fn on_retransmission_timeout(&mut self, _now: SimTime, _bytes_in_flight: u64) {
            self.cwnd = 1;
        }
        fn pacing_rate(&self) -> Option<Rate> {
            Some(Rate::from_mbps(self.cwnd))
        }
    }

    #[test]
    fn custom_controller_is_forwarded() {
        let mut cc = Controller::Custom(Box::new(FixedWindow {
            cwnd: 100,
            events: Vec::new(),
        }));
        assert_eq!(cc.name(), "fixed");
        assert!(!cc.in_slow_start());
        cc.on_ack(&ack(SimTime::ZERO, 1, SimTime::from_millis(1), MSS));
        assert_eq!(cc.cwnd(), 101);
        cc.on_congestion_event(SimTime::ZERO, 0);
        assert_eq!(cc.cwnd(), 91);
        assert_eq!(cc.pacing_rate(), Some(Rate::from_mbps(91)));
        cc.on_retransmission_timeout(SimTime::ZERO, 0);
        assert_eq!(cc.cwnd(), 1);
        assert!(format!("{cc:?}").contains("fixed"));
    }

    /// One input to a controller, for the property tests.
    #[derive(Clone, Debug)]
    enum Input {
        Ack {
            advance_us: u64,
            acked_bytes: u64,
            sacked_bytes: u64,
            srtt_us: u64,
            cwnd_limited: bool,
            in_recovery: bool,
        },
        Sent {
            bytes: u32,
        },
        CongestionEvent {
            flight_permille: u64,
        },
        RecoveryExit,
        Timeout {
            flight_permille: u64,
        },
    }

    fn input() -> impl Strategy<Value = Input> {
        prop_oneof![
            6 => (
                (0u64..200_000, 0u64..6_000, 0u64..3_000),
                (0u64..500_000, any::<bool>(), any::<bool>()),
            )
                .prop_map(|(ack, (srtt_us, cwnd_limited, in_recovery))| {
                    let (advance_us, acked_bytes, sacked_bytes) = ack;
                    Input::Ack {
                        advance_us,
                        acked_bytes,
                        sacked_bytes,
                        srtt_us,
                        cwnd_limited,
                        in_recovery,
                    }
                }),
            1 => (1u32..2000).prop_map(|bytes| Input::Sent { bytes }),
            1 => (0u64..3000).prop_map(|p| Input::CongestionEvent { flight_permille: p }),
            1 => Just(Input::RecoveryExit),
            1 => (0u64..3000).prop_map(|p| Input::Timeout { flight_permille: p }),
        ]
    }

    fn spec() -> impl Strategy<Value = CcSpec> {
        prop_oneof![
            Just(CcSpec::Reno),
            (0.05f64..4.0, 0.05f64..0.95, any::<bool>(), any::<bool>()).prop_map(
                |(c, beta, fast_convergence, tcp_friendliness)| CcSpec::Cubic {
                    c,
                    beta,
                    fast_convergence,
                    tcp_friendliness
                }
            ),
            (0.1f64..20.0, 0.05f64..0.95).prop_map(|(alpha, beta)| CcSpec::Aimd { alpha, beta }),
        ]
    }

    proptest! {
        /// Whatever the order of events: no panic, cwnd never below one MSS, no growth on ACKs
        /// in recovery or when not cwnd-limited, no ACK ever shrinks the window, a loss leaves
        /// at least two segments and a timeout exactly one.
        #[test]
        fn window_invariants_hold_for_any_event_sequence(
            spec in spec(),
            mss in 500u32..9000,
            initial_window in 0u32..20,
            inputs in proptest::collection::vec(input(), 1..300),
        ) {
            let mut cc = spec.build(mss, initial_window);
            let mss64 = u64::from(mss);
            let mut now = SimTime::ZERO;
            for input in inputs {
                let before = cc.cwnd();
                match input {
                    Input::Ack {
                        advance_us,
                        acked_bytes,
                        sacked_bytes,
                        srtt_us,
                        cwnd_limited,
                        in_recovery,
                    } => {
                        now = now.saturating_add(SimTime::from_micros(advance_us));
                        let srtt = SimTime::from_micros(srtt_us);
                        let sample = AckSample {
                            now,
                            acked_bytes,
                            newly_sacked_bytes: sacked_bytes,
                            rtt: (srtt_us % 3 != 0).then_some(srtt),
                            srtt,
                            min_rtt: srtt,
                            bytes_in_flight: before,
                            is_cwnd_limited: cwnd_limited,
                            in_recovery,
                            mss,
                            delivered_bytes: 0,
                            delivery_rate_bps: None,
                        };
                        cc.on_ack(&sample);
                        prop_assert!(cc.cwnd() >= before, "an ACK shrank the window");
                        if in_recovery || !cwnd_limited || acked_bytes == 0 {
                            prop_assert_eq!(cc.cwnd(), before, "grew on an ineligible ACK");
                        }
                    }
                    Input::Sent { bytes } => {
                        cc.on_packet_sent(now, bytes, before);
                        prop_assert_eq!(cc.cwnd(), before);
                    }
                    Input::CongestionEvent { flight_permille } => {
                        cc.on_congestion_event(now, before * flight_permille / 1000);
                        prop_assert!(cc.cwnd() >= 2 * mss64);
                        prop_assert!(cc.ssthresh() >= 2 * mss64);
                    }
                    Input::RecoveryExit => {
                        cc.on_recovery_exit(now);
                        prop_assert_eq!(cc.cwnd(), before);
                    }
                    Input::Timeout { flight_permille } => {
                        cc.on_retransmission_timeout(now, before * flight_permille / 1000);
                        prop_assert_eq!(cc.cwnd(), mss64);
                        prop_assert!(cc.ssthresh() >= 2 * mss64);
                    }
                }
                prop_assert!(cc.cwnd() >= mss64);
                prop_assert_eq!(cc.in_slow_start(), cc.cwnd() < cc.ssthresh());
            }
        }
    }
}
