//! Traffic sources: what a flow sends. Datagram sources (constant bit rate, on/off) generate
//! packets themselves; a TCP source ([`tcp`]) is a TCP sender with a finite or unbounded amount
//! of application data, its congestion controller and the receiver.
//!
//! One source per file, each with its registry declaration (`SPEC`, see [`crate::registry`]);
//! the built-ins are listed once in [`REGISTRY`], and the datagram sources are dispatched
//! through the [`DatagramSource`] enum.

pub mod cbr;
pub mod cp;
pub mod mpat;
pub mod mptcp;
pub mod multfrc;
pub mod onoff;
pub mod tcp;
pub mod tfrc;

use crate::registry::{AlgorithmSpec, Category, Configured, Kind, Param, Scalar};
// The category is the registry's; this module registers into it (`impl Kind` below).
pub use crate::registry::SourceKind;
use crate::rng::SimRng;
use crate::time::SimTime;
use crate::transport::cc::Controller;
use crate::transport::host_noise::{HostNoise, HostNoiseConfig};
use crate::transport::tcp::{StopMode, TcpReceiver, TcpSender};

pub use cbr::Cbr;
pub use onoff::OnOff;

/// Largest packet a source may send, and largest segment (the IPv4 total-length field).
pub use crate::packet::MAX_PACKET_BYTES;

/// The packet size of the datagram sources, shared by their declarations.
pub const PACKET_SIZE: Param = Param::size("packet_size", "size of each packet on the wire")
    .between(1.0, MAX_PACKET_BYTES as f64)
    .default(Scalar::Size(1000));

/// What a datagram source wants after a wake-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wake {
    /// Send one datagram now.
    pub send: bool,
    /// Next wake-up.
    pub next: SimTime,
}

/// A source that generates datagrams on its own schedule.
pub trait Datagrams {
    /// Size of every datagram on the wire.
    fn packet_bytes(&self) -> u32;
    /// Called at the source's start time and at every wake-up it asked for.
    fn wake(&mut self, now: SimTime) -> Wake;
}

/// A built source: the endpoints a flow runs.
pub enum Source {
    /// A TCP connection, with the name of its congestion controller.
    Tcp {
        sender: Box<TcpSender<Controller>>,
        receiver: Box<TcpReceiver>,
        cc: &'static str,
        /// What the flow does at its stop time.
        stop_mode: StopMode,
        /// Host timing noise at the two ends, when configured.
        noise: Option<Box<HostNoise>>,
    },
    Datagram(DatagramSource),
    /// An MPTCP connection's settings; the builder adds its subflows, controller and scheduler.
    Mptcp {
        config: Box<crate::transport::multipath::MptcpConfig>,
        stop_mode: StopMode,
        /// Keep every scheduler decision for the `picks` table.
        trace_picks: bool,
        /// Host timing noise at the two ends (the builder draws it from the flow's
        /// `flow.<name>.host` stream).
        noise: HostNoiseConfig,
    },
    /// An MPAT aggregate's settings; the builder adds its shares and windows.
    Mpat {
        config: Box<crate::transport::aggregate::MpatConfig>,
        /// Every window's controller.
        cc: crate::transport::cc::CcSpec,
        stop_mode: StopMode,
        /// The flow's stream, for the random mapping.
        rng: SimRng,
        /// Host timing noise at the two ends (drawn from the flow's `flow.<name>.host`
        /// stream, apart from the mapping's).
        noise: HostNoiseConfig,
    },
    /// A TFRC, MulTFRC or CP flow, both ends.
    Tfrc(Box<crate::transport::tfrc::TfrcFlow>),
}

/// What a source's constructor is given besides its parameters.
#[derive(Clone, Debug)]
pub struct SourceContext {
    /// The flow's own random stream (`flow.<name>.<kind>`), for sources that draw.
    pub rng: SimRng,
}

/// A flow's source as named in a scenario (`kind = "tcp"`), with its validated parameters;
/// built by [`Configured::build`].
pub type SourceSpec = Configured<SourceKind>;

impl Kind for SourceKind {
    const CATEGORY: Category = Category::Source;
    type Context = SourceContext;
    type Output = Source;

    fn registry() -> &'static [&'static AlgorithmSpec<Self>] {
        REGISTRY
    }
}

/// Generates, from one line `module::Type` per built-in datagram source and one line `module`
/// per other source (each declaration is `module::SPEC`): [`REGISTRY`], and the
/// [`DatagramSource`] enum with one variant per datagram source and its static dispatch.
macro_rules! builtin_sources {
    (
        datagram: $($module:ident :: $variant:ident),+ ;
        other: $($other:ident),* ;
        sorted: $($sorted:ident),+ $(,)?
    ) => {
        /// The declarations of the built-in sources, sorted by name.
        pub const REGISTRY: &[&AlgorithmSpec<SourceKind>] = &[$(&$sorted::SPEC,)+];

        // Every source is listed in `sorted`, once.
        const _: () = assert!(
            REGISTRY.len() == [$(stringify!($module),)+ $(stringify!($other),)*].len()
        );

        /// A datagram source (enum dispatch).
        #[derive(Clone, Debug)]
        pub enum DatagramSource {
            $($variant($module::$variant),)+
        }

        $crate::dispatch::enum_dispatch! {
            impl DatagramSource [$($variant),+] {
                pub fn packet_bytes(&self) -> u32;
                /// Called at the source's start time and at every wake-up it asked for.
                pub fn wake(&mut self, now: SimTime) -> Wake;
            }
        }

        $(impl From<$module::$variant> for Source {
            fn from(s: $module::$variant) -> Self {
                Source::Datagram(DatagramSource::$variant(s))
            }
        })+
    };
}

// The registry of traffic sources: one line per built-in.
builtin_sources! {
    datagram:
        cbr::Cbr,
        onoff::OnOff;
    other:
        cp,
        mpat,
        mptcp,
        multfrc,
        tcp,
        tfrc;
    sorted:
        cbr,
        cp,
        mpat,
        mptcp,
        multfrc,
        onoff,
        tcp,
        tfrc,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Value;
    use crate::rng::rng_from_seed;
    use crate::time::Rate;

    fn build(name: &str, given: &[(&str, Value)]) -> Source {
        SourceSpec::new(name, given)
            .unwrap_or_else(|e| panic!("{e}"))
            .build(SourceContext {
                rng: rng_from_seed(1),
            })
    }

    #[test]
    fn datagram_sources_build_with_their_parameters() {
        let rate = ("rate", Value::Rate(Rate::from_mbps(1)));
        match build("cbr", std::slice::from_ref(&rate)) {
            Source::Datagram(s @ DatagramSource::Cbr(_)) => assert_eq!(s.packet_bytes(), 1000),
            _ => panic!("not a CBR source"),
        }
        let period = Value::Period(onoff::Period::Exponential {
            mean: SimTime::from_millis(10),
        });
        let given = [
            rate,
            ("packet_size", Value::Size(1500)),
            ("on", period.clone()),
            ("off", period),
        ];
        match build("onoff", &given) {
            Source::Datagram(mut s @ DatagramSource::OnOff(_)) => {
                assert_eq!(s.packet_bytes(), 1500);
                assert!(s.wake(SimTime::ZERO).send);
            }
            _ => panic!("not an on/off source"),
        }
        let err = SourceSpec::new("cbr", &[("packet_size", Value::Size(70_000))]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "source cbr: packet_size: must be between 1 and 65535 bytes, got 70000"
        );
    }

    #[test]
    fn tcp_sources_carry_their_controller() {
        match build("tcp", &[]) {
            Source::Tcp { cc, sender, .. } => {
                assert_eq!(cc, "reno");
                assert_eq!(
                    sender.config(),
                    &crate::transport::tcp::TcpConfig::default()
                );
            }
            _ => panic!("not a TCP source"),
        }
        let cubic = crate::transport::cc::CcSpec::new("cubic", &[]).unwrap();
        match build("tcp", &[("cc", Value::Controller(cubic))]) {
            Source::Tcp { cc, .. } => assert_eq!(cc, "cubic"),
            _ => panic!("not a TCP source"),
        }
    }
}
