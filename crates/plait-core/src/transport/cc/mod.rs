//! Congestion controllers.
//!
//! A controller is sans-IO: the TCP sender calls its hooks with `now` and what it learned, and
//! reads back `cwnd()` (bytes). One algorithm per file, with its registry declaration beside it
//! (`SPEC`: name, parameters, constructor; see [`crate::registry`]). The built-ins are listed
//! once, one line each, in the `builtin_controllers!` invocation below, which makes
//! [`REGISTRY`] and the [`Controller`] enum that dispatches them on the hot path;
//! [`Controller::Custom`] takes any `Box<dyn CongestionControl + Send>` (the extension point).
//! Adding a controller is its file, its `mod` line and its registry line.
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

use crate::registry::{AlgorithmSpec, Category, Configured, Kind};
// The category is the registry's; this module registers into it (`impl Kind` below).
pub use crate::registry::ControllerKind;
use crate::time::{Rate, SimTime};

pub mod aimd;
pub mod cubic;
pub mod fast;
pub mod multcp;
pub mod reno;
pub mod vegas;
pub(crate) mod window;

pub use aimd::{Aimd, AimdParams};
pub use cubic::{Cubic, CubicParams};
pub use fast::{Fast, FastParams};
pub use reno::Reno;
pub use vegas::{Vegas, VegasParams};

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

/// A controller as named in a scenario, with its validated parameters:
/// `CcSpec::new("cubic", &[("beta", Value::Number(0.8))])`, built for a connection by
/// [`Configured::build`].
pub type CcSpec = Configured<ControllerKind>;

/// What a controller's constructor is given besides its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connection {
    /// Segment size in bytes; must be positive.
    pub mss: u32,
    /// Initial window in segments (0 is treated as 1).
    pub initial_window: u32,
    /// The connection's TCP profile: a controller may take defaults from it (CUBIC's
    /// HyStart is on in the `linux` profile).
    pub profile: crate::transport::tcp::config::TcpProfile,
}

impl Kind for ControllerKind {
    const CATEGORY: Category = Category::Controller;
    type Context = Connection;
    type Output = Controller;

    fn registry() -> &'static [&'static AlgorithmSpec<Self>] {
        REGISTRY
    }
}

/// Generates, from one line `module::Type` per built-in controller (its declaration is
/// `module::SPEC`): [`REGISTRY`], the [`Controller`] enum with one variant per line plus
/// `Custom`, and the enum's static dispatch of [`CongestionControl`].
macro_rules! builtin_controllers {
    ($($module:ident :: $variant:ident),+ $(,)?) => {
        /// The declarations of the built-in controllers, sorted by name.
        pub const REGISTRY: &[&AlgorithmSpec<ControllerKind>] = &[$(&$module::SPEC),+];

        /// A congestion controller: the built-ins dispatched by `match` (no virtual call on
        /// the hot path), or any boxed implementation of [`CongestionControl`].
        ///
        /// The boxed variant is `Send` so that a simulator holding controllers can be moved
        /// to the thread that runs it.
        pub enum Controller {
            $($variant($module::$variant),)+
            Custom(Box<dyn CongestionControl + Send>),
        }

        impl std::fmt::Debug for Controller {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self {
                    $(Controller::$variant(c) => {
                        f.debug_tuple(stringify!($variant)).field(c).finish()
                    })+
                    Controller::Custom(c) => f
                        .debug_struct("Custom")
                        .field("name", &c.name())
                        .field("cwnd", &c.cwnd())
                        .field("ssthresh", &c.ssthresh())
                        .finish(),
                }
            }
        }

        $(impl From<$module::$variant> for Controller {
            fn from(c: $module::$variant) -> Self {
                Controller::$variant(c)
            }
        })+

        $crate::dispatch::enum_dispatch! {
            impl CongestionControl for Controller [$($variant,)+ Custom] {
                #[inline]
                fn name(&self) -> &'static str;
                #[inline(always)]
                fn cwnd(&self) -> u64;
                #[inline]
                fn ssthresh(&self) -> u64;
                #[inline]
                fn in_slow_start(&self) -> bool;
                #[inline]
                fn on_packet_sent(&mut self, now: SimTime, bytes: u32, bytes_in_flight: u64);
                #[inline]
                fn on_ack(&mut self, sample: &AckSample);
                fn on_tagged_ack(&mut self, tag: u64, bytes: u64);
                fn on_tagged_loss(&mut self, tag: u64, bytes: u64);
                #[inline]
                fn on_congestion_event(&mut self, now: SimTime, bytes_in_flight: u64);
                #[inline]
                fn on_recovery_exit(&mut self, now: SimTime);
                #[inline]
                fn on_retransmission_timeout(&mut self, now: SimTime, bytes_in_flight: u64);
                #[inline]
                fn pacing_rate(&self) -> Option<Rate>;
            }
        }
    };
}

// The registry of congestion controllers: one line per built-in.
builtin_controllers! {
    aimd::Aimd,
    cubic::Cubic,
    fast::Fast,
    multcp::MulTcp,
    reno::Reno,
    vegas::Vegas,
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
    use crate::registry::Value;
    use proptest::prelude::*;

    const MSS: u32 = 1460;

    const CONNECTION: Connection = Connection {
        mss: MSS,
        initial_window: 10,
        profile: crate::transport::tcp::config::TcpProfile::Rfc,
    };

    /// Every registered controller with its defaults, its required parameters (if any) drawn
    /// from the middle of their ranges.
    fn registered() -> Vec<CcSpec> {
        REGISTRY
            .iter()
            .map(|spec| {
                let given: Vec<(&str, Value)> = spec
                    .params
                    .iter()
                    .filter(|p| p.is_required())
                    .map(|p| (p.name, p.draw(0.5)))
                    .collect();
                CcSpec::new(spec.name, &given).unwrap_or_else(|e| panic!("{e}"))
            })
            .collect()
    }

    #[test]
    fn registered_names_resolve_and_build() {
        let names: Vec<&str> = REGISTRY.iter().map(|s| s.name).collect();
        assert!(names.contains(&"reno") && names.contains(&"cubic"));
        for cc in registered() {
            assert_eq!(cc.build(CONNECTION).name(), cc.name());
        }
        for unknown in ["westwood", "Reno"] {
            let err = CcSpec::new(unknown, &[]).unwrap_err();
            assert_eq!(err.param, None);
            assert!(
                err.to_string().starts_with(&format!(
                    "controller {unknown}: unknown controller (known: aimd, cubic, "
                )),
                "{err}"
            );
        }
    }

    #[test]
    fn declared_defaults_are_the_parameter_defaults() {
        let cubic = CcSpec::new("cubic", &[]).unwrap();
        assert_eq!(CubicParams::from(cubic.params()), CubicParams::default());
        let aimd = CcSpec::new("aimd", &[]).unwrap();
        assert_eq!(AimdParams::from(aimd.params()), AimdParams::default());
        assert_eq!(
            CcSpec::new("cubic", &[("beta", Value::Number(0.8))])
                .unwrap()
                .params()
                .number("beta"),
            0.8
        );
    }

    #[test]
    fn build_sets_initial_window_and_infinite_ssthresh() {
        for spec in registered() {
            let cc = spec.build(CONNECTION);
            let name = spec.name();
            assert_eq!(cc.cwnd(), 14_600, "{name}");
            assert_eq!(cc.ssthresh(), u64::MAX, "{name}");
            assert!(cc.in_slow_start(), "{name}");
            assert_eq!(cc.pacing_rate(), None, "{name}");
            // An initial window of zero segments still allows one segment.
            let one = Connection {
                mss: MSS,
                initial_window: 0,
                profile: Default::default(),
            };
            assert_eq!(spec.build(one).cwnd(), 1460, "{name}");
        }
    }

    #[test]
    fn out_of_range_parameters_name_controller_parameter_and_range() {
        let message = |name: &str, param: &str, value: f64| {
            CcSpec::new(name, &[(param, Value::Number(value))])
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            message("aimd", "alpha", -1.0),
            "controller aimd: alpha: must be greater than zero, got -1"
        );
        assert_eq!(
            message("cubic", "c", f64::INFINITY),
            "controller cubic: c: expected a number value, got inf"
        );
        assert_eq!(
            message("aimd", "alpha", f64::NAN),
            "controller aimd: alpha: expected a number value, got NaN"
        );
        for controller in ["aimd", "cubic"] {
            assert_eq!(
                message(controller, "beta", 1.0),
                format!(
                    "controller {controller}: beta: must be between 0 and 1 (exclusive), got 1"
                )
            );
        }
        assert_eq!(
            message("reno", "beta", 0.5),
            "controller reno: beta: unknown parameter (expected one of: none)"
        );
        let err = CcSpec::new("cubic", &[("fast_convergence", Value::Number(1.0))]).unwrap_err();
        assert_eq!(err.message, "expected a bool value, got 1");
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

    /// Any registered controller, each parameter drawn from its declared range (draws that
    /// the controller's own cross-parameter checks refuse are skipped).
    fn spec() -> impl Strategy<Value = CcSpec> {
        (0..REGISTRY.len(), proptest::collection::vec(0.0f64..1.0, 8)).prop_filter_map(
            "refused by the controller's checks",
            |(index, draws)| {
                let spec = REGISTRY[index];
                let given: Vec<(&str, Value)> = spec
                    .params
                    .iter()
                    .zip(draws)
                    .map(|(p, u)| (p.name, p.draw(u)))
                    .collect();
                CcSpec::new(spec.name, &given).ok()
            },
        )
    }

    proptest! {
        /// Whatever the order of events: no panic, cwnd never below one MSS, no change on ACKs
        /// in recovery or when not cwnd-limited, no ACK ever shrinks the window (the
        /// delay-based controllers, which lower it on purpose, never below two segments), a
        /// loss leaves at least two segments and a timeout exactly one.
        #[test]
        fn window_invariants_hold_for_any_event_sequence(
            spec in spec(),
            mss in 500u32..9000,
            initial_window in 0u32..20,
            inputs in proptest::collection::vec(input(), 1..300),
        ) {
            let mut cc = spec.build(Connection {
                mss,
                initial_window,
                profile: Default::default(),
            });
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
                        if ["fast", "vegas"].contains(&spec.name()) {
                            prop_assert!(cc.cwnd() >= before.min(2 * mss64), "below 2 MSS");
                        } else {
                            prop_assert!(cc.cwnd() >= before, "an ACK shrank the window");
                        }
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
