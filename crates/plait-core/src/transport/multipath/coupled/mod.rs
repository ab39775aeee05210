//! Coupled (multipath) congestion control: one controller sees every subflow of its MPTCP
//! connection (reference `multipath_cc.md` §2).
//!
//! A [`MultipathCongestionControl`] holds the windows of all the subflows of one connection;
//! its hooks are [`CongestionControl`]'s keyed by subflow index (subflows are numbered from 0
//! in the order the scenario lists them). The connection hands each subflow's TCP core a
//! [`SubflowController`], a view of the shared controller for that one subflow, so a subflow
//! is the same TCP core as a single-path connection.
//!
//! Common rules (§2.0): coupling is across the subflows of one connection; only subflows that
//! are established and have an RTT sample take part in the coupled sums; slow start, fast
//! recovery and the timeout are per subflow.
//!
//! One algorithm per file with its registry declaration (`SPEC`); the built-ins are listed in
//! the `builtin_coupled!` invocation below. Each built-in implements only its own algorithm
//! (`per_subflow::CoupledAlgorithm`: the ACK, and its loss and timeout rules where they are not
//! Reno's on the subflow alone); the per-subflow forwarding that makes it a
//! [`MultipathCongestionControl`] is written once in `per_subflow.rs`, and the window
//! arithmetic of the loss-based ones (LIA, OLIA, BALIA) in `window.rs`. [`Coupled::Uncoupled`] runs any single-path
//! controller on each subflow independently (scenario `cc = "uncoupled:cubic"`).

use crate::registry::{AlgorithmSpec, Category, Configured, Kind};
// The category is the registry's; this module registers into it (`impl Kind` below).
pub use crate::registry::CoupledKind;
use crate::time::{Rate, SimTime};
use crate::transport::cc::{AckSample, CongestionControl, Controller};
use crate::transport::tcp::config::TcpProfile;

mod per_subflow;
mod window;

/// A congestion controller that sees all the subflows of one connection.
pub trait MultipathCongestionControl {
    /// Registry name (`lia`, `olia`, ...).
    fn name(&self) -> &'static str;
    /// Number of subflows (fixed at construction).
    fn subflows(&self) -> usize;
    /// Congestion window of `subflow` in bytes.
    fn cwnd(&self, subflow: usize) -> u64;
    /// Slow-start threshold of `subflow` in bytes (`u64::MAX` before its first loss).
    fn ssthresh(&self, subflow: usize) -> u64;
    fn on_packet_sent(&mut self, _subflow: usize, _now: SimTime, _bytes: u32, _in_flight: u64) {}
    /// An ACK on `subflow` (see [`CongestionControl::on_ack`]).
    fn on_ack(&mut self, subflow: usize, sample: &AckSample);
    /// Loss detected on `subflow` by duplicate ACKs or SACK: reduce its window once.
    fn on_congestion_event(&mut self, subflow: usize, now: SimTime, bytes_in_flight: u64);
    fn on_recovery_exit(&mut self, _subflow: usize, _now: SimTime) {}
    /// The retransmission timer of `subflow` fired.
    fn on_retransmission_timeout(&mut self, subflow: usize, now: SimTime, bytes_in_flight: u64);
    /// Whether `subflow` can send (started, its path not failed); a subflow that cannot send
    /// takes no part in the coupled sums. All subflows start not established.
    fn set_established(&mut self, subflow: usize, established: bool);
    /// The connection's receive-buffer optimisation halves `subflow`'s window (reference
    /// §3.1.4 step 2): `cwnd = max(cwnd/2, 1 MSS)`, and outside slow start also
    /// `ssthresh = max(ssthresh/2, 2 MSS)`.
    fn penalise(&mut self, subflow: usize);
    /// A pacing rate for `subflow`, for controllers that pace.
    fn pacing_rate(&self, _subflow: usize) -> Option<Rate> {
        None
    }
}

/// What a coupled controller's constructor is given besides its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultipathConnection {
    /// Number of subflows (at least 1).
    pub subflows: usize,
    /// Segment size in bytes of every subflow; must be positive.
    pub mss: u32,
    /// Initial window of every subflow in segments (0 is treated as 1).
    pub initial_window: u32,
    pub profile: TcpProfile,
}

/// A coupled controller as named in a scenario, with its validated parameters.
pub type CoupledSpec = Configured<CoupledKind>;

impl Kind for CoupledKind {
    const CATEGORY: Category = Category::Coupled;
    type Context = MultipathConnection;
    type Output = Coupled;

    fn registry() -> &'static [&'static AlgorithmSpec<Self>] {
        REGISTRY
    }
}

/// One controller of `subflow`'s window seen through the shared one: what the subflow's TCP
/// core is given.
pub struct SubflowController<'a> {
    pub cc: &'a mut Coupled,
    pub subflow: usize,
}

impl CongestionControl for SubflowController<'_> {
    fn name(&self) -> &'static str {
        self.cc.name()
    }
    #[inline]
    fn cwnd(&self) -> u64 {
        self.cc.cwnd_of(self.subflow)
    }
    #[inline]
    fn ssthresh(&self) -> u64 {
        self.cc.ssthresh(self.subflow)
    }
    /// LIA's hook in place, as [`Coupled::cwnd_of`] reads its window (once per packet sent).
    #[inline(always)]
    fn on_packet_sent(&mut self, now: SimTime, bytes: u32, in_flight: u64) {
        match &mut *self.cc {
            Coupled::Lia(lia) => lia.on_packet_sent(self.subflow, now, bytes, in_flight),
            other => other.on_packet_sent(self.subflow, now, bytes, in_flight),
        }
    }
    /// LIA's hook without the dispatch, as for [`SubflowController::on_packet_sent`].
    #[inline(always)]
    fn on_ack(&mut self, sample: &AckSample) {
        match &mut *self.cc {
            Coupled::Lia(lia) => lia.on_ack(self.subflow, sample),
            other => other.on_ack(self.subflow, sample),
        }
    }
    fn on_congestion_event(&mut self, now: SimTime, bytes_in_flight: u64) {
        self.cc
            .on_congestion_event(self.subflow, now, bytes_in_flight)
    }
    fn on_recovery_exit(&mut self, now: SimTime) {
        self.cc.on_recovery_exit(self.subflow, now)
    }
    fn on_retransmission_timeout(&mut self, now: SimTime, bytes_in_flight: u64) {
        self.cc
            .on_retransmission_timeout(self.subflow, now, bytes_in_flight)
    }
    fn pacing_rate(&self) -> Option<Rate> {
        self.cc.pacing_rate(self.subflow)
    }
}

/// Single-path controllers, one per subflow, that know nothing of each other (the
/// "uncoupled" baseline: each subflow is a TCP of its own).
pub struct Uncoupled {
    pub controllers: Vec<Controller>,
    pub mss: u32,
}

impl MultipathCongestionControl for Uncoupled {
    fn name(&self) -> &'static str {
        "uncoupled"
    }
    fn subflows(&self) -> usize {
        self.controllers.len()
    }
    fn cwnd(&self, subflow: usize) -> u64 {
        self.controllers[subflow].cwnd()
    }
    fn ssthresh(&self, subflow: usize) -> u64 {
        self.controllers[subflow].ssthresh()
    }
    fn on_packet_sent(&mut self, subflow: usize, now: SimTime, bytes: u32, in_flight: u64) {
        self.controllers[subflow].on_packet_sent(now, bytes, in_flight)
    }
    fn on_ack(&mut self, subflow: usize, sample: &AckSample) {
        self.controllers[subflow].on_ack(sample)
    }
    fn on_congestion_event(&mut self, subflow: usize, now: SimTime, bytes_in_flight: u64) {
        self.controllers[subflow].on_congestion_event(now, bytes_in_flight)
    }
    fn on_recovery_exit(&mut self, subflow: usize, now: SimTime) {
        self.controllers[subflow].on_recovery_exit(now)
    }
    fn on_retransmission_timeout(&mut self, subflow: usize, now: SimTime, bytes_in_flight: u64) {
        self.controllers[subflow].on_retransmission_timeout(now, bytes_in_flight)
    }
    fn set_established(&mut self, _subflow: usize, _established: bool) {}
    /// A single-path controller has no way to be told; its window is left alone (the
    /// upstream maintainers' objection to penalisation, reference §3.1.4).
    fn penalise(&mut self, _subflow: usize) {}
    fn pacing_rate(&self, subflow: usize) -> Option<Rate> {
        self.controllers[subflow].pacing_rate()
    }
}

/// Generates, from one line `module::Type` per built-in coupled controller (its declaration is
/// `module::SPEC`): [`REGISTRY`], the [`Coupled`] enum with one variant per line plus
/// `Uncoupled` and `Custom`, and the enum's static dispatch.
macro_rules! builtin_coupled {
    ($($module:ident :: $variant:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// The declarations of the built-in coupled controllers, sorted by name.
        pub const REGISTRY: &[&AlgorithmSpec<CoupledKind>] = &[$(&$module::SPEC),*];

        /// A multipath congestion controller (enum dispatch), or any boxed implementation.
        pub enum Coupled {
            $($variant($module::$variant),)*
            Uncoupled(Uncoupled),
            Custom(Box<dyn MultipathCongestionControl + Send>),
        }

        $(impl From<$module::$variant> for Coupled {
            fn from(c: $module::$variant) -> Self {
                Coupled::$variant(c)
            }
        })*

        $crate::dispatch::enum_dispatch! {
            impl MultipathCongestionControl for Coupled [$($variant,)* Uncoupled, Custom] {
                fn name(&self) -> &'static str;
                fn subflows(&self) -> usize;
                #[inline]
                fn cwnd(&self, subflow: usize) -> u64;
                #[inline]
                fn ssthresh(&self, subflow: usize) -> u64;
                #[inline]
                fn on_packet_sent(&mut self, subflow: usize, now: SimTime, bytes: u32, in_flight: u64);
                #[inline]
                fn on_ack(&mut self, subflow: usize, sample: &AckSample);
                fn on_congestion_event(&mut self, subflow: usize, now: SimTime, bytes_in_flight: u64);
                fn on_recovery_exit(&mut self, subflow: usize, now: SimTime);
                fn on_retransmission_timeout(&mut self, subflow: usize, now: SimTime, bytes_in_flight: u64);
                fn set_established(&mut self, subflow: usize, established: bool);
                fn penalise(&mut self, subflow: usize);
                fn pacing_rate(&self, subflow: usize) -> Option<Rate>;
            }
        }
    };
}

impl Coupled {
    /// [`MultipathCongestionControl::cwnd`] with LIA's window read in place rather than
    /// through a call (the connection reads windows several times per packet, and LIA is the
    /// usual controller); the others as the dispatch gives them.
    #[inline(always)]
    pub fn cwnd_of(&self, subflow: usize) -> u64 {
        match self {
            Coupled::Lia(lia) => lia.cwnd(subflow),
            other => other.cwnd(subflow),
        }
    }
}

impl std::fmt::Debug for Coupled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coupled")
            .field("name", &self.name())
            .field("subflows", &self.subflows())
            .finish()
    }
}

// The registry of coupled controllers: one line per built-in.
builtin_coupled! {
    balia::Balia,
    lia::Lia,
    mpfast::Mpfast,
    olia::Olia,
    wvegas::WVegas,
}

#[cfg(test)]
mod tests {
    use super::window::testing::{acked, connection};
    use super::*;

    #[test]
    fn cwnd_of_is_cwnd_for_every_controller() {
        let mut all: Vec<Coupled> = REGISTRY
            .iter()
            .map(|spec| {
                CoupledSpec::new(spec.name, &[])
                    .unwrap()
                    .build(connection(3))
            })
            .collect();
        let reno = |_| Controller::from(crate::transport::cc::Reno::new(1000, 10));
        all.push(Coupled::Uncoupled(Uncoupled {
            controllers: (0..3).map(reno).collect(),
            mss: 1000,
        }));
        for cc in &mut all {
            for i in 0..3 {
                cc.set_established(i, true);
                // Windows apart: subflow i grown by i + 1 slow-start ACKs of 2000 bytes.
                for _ in 0..=i {
                    let rtt = SimTime::from_millis(10 * (i as u64 + 1));
                    cc.on_ack(i, &acked(2000, rtt));
                }
            }
            let windows: Vec<u64> = (0..3).map(|i| cc.cwnd(i)).collect();
            assert!(windows[0] < windows[2], "{}: {windows:?}", cc.name());
            for (i, &w) in windows.iter().enumerate() {
                assert_eq!(cc.cwnd_of(i), w, "{} subflow {i}", cc.name());
                let sub = SubflowController { cc, subflow: i };
                assert_eq!(CongestionControl::cwnd(&sub), w);
            }
        }
    }
}
