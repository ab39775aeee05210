//! Protocols: what a flow runs (its `kind`), each declared once.
//!
//! A protocol's declaration ([`ProtocolSpec`], `pub const PROTOCOL` in the protocol's own file
//! or folder here) is everything the rest of the crate knows about it:
//!
//! - its source: name, one-line summary, parameters (type, unit, default, range, doc), the
//!   checks that relate them, and the builder that turns validated parameters into the flow's
//!   [`AnyTransport`] (a registry declaration of category `source`, see [`crate::registry`]);
//! - the scenario section that gives its connection settings their defaults (`[tcp]`);
//! - how the scenario reader gives it its paths ([`Paths`]: one route, one per subflow, one
//!   per weighted window) and so which keys it reads besides its parameters;
//! - whether its receiving end answers (the flow then needs a way back);
//! - which of its settings an `[[event]]` may change during the run;
//! - which result columns are its own (the TFRC family's `loss_event_rate`, ...), whose values
//!   its transport gives through `Transport::column`.
//!
//! Scenario validation, the `[tcp]`-style sections, flow events, `plait list`, the reference
//! tables of `docs/scenario.md` and the simulator builder read these declarations; none of them
//! names a protocol. The declarations are listed once, in [`PROTOCOLS`], one line each: adding
//! a protocol is one file or folder here with its `PROTOCOL` and one line in that list. A
//! protocol defined here may bring its own transport (a [`Transport`](crate::transport::Transport)
//! built into [`AnyTransport::Custom`]) and its own header ([`crate::packet::CustomHeader`]);
//! `fixed` is one, whole in its folder.
//!
//! This module sits above the transports, the sources (`crate::app`) and the registry, and
//! below the scenario reader and the simulator: nothing it imports imports it.

use crate::registry::AlgorithmSpec;
// The category is the registry's; this module registers into it (`impl Kind` below).
pub use crate::registry::SourceKind;
use crate::registry::{Category, Configured, Kind};
use crate::rng::SimRng;
use crate::transport::host_noise::HostNoise;
use crate::transport::AnyTransport;

pub use mptcp::{CoupledChoice, MultipathSpec, SubflowSpec};

/// How the scenario reader gives a flow its paths, and the keys it reads for them besides the
/// protocol's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paths {
    /// One path: the flow's `route`, or the shortest path from `src` to `dst`.
    One,
    /// One path per subflow, each on its own route (`subflows = [{ route, start, backup }]`),
    /// with a multipath controller (`cc`) and a packet scheduler (`scheduler`): the flow's
    /// [`MultipathSpec`].
    Subflows,
    /// One path per weighted window, all on the flow's route (`shares = [..]`, one positive
    /// weight per application flow).
    Shares,
}

impl Paths {
    /// The keys the scenario reader takes for these paths besides the protocol's parameters.
    pub const fn keys(self) -> &'static [&'static str] {
        match self {
            Paths::One => &[],
            Paths::Subflows => &["cc", "scheduler", "subflows"],
            Paths::Shares => &["shares"],
        }
    }
}

/// Largest number of weights in `shares` ([`Paths::Shares`]): application flows in one MPAT
/// aggregate.
pub const MAX_SHARES: usize = 4096;

/// The declaration of one protocol (see the module documentation).
pub struct ProtocolSpec {
    /// Its source: the name a flow's `kind` gives, its parameters and its builder.
    pub source: AlgorithmSpec<SourceKind>,
    /// The scenario section whose keys give defaults to the parameters declared
    /// [`in_section`](crate::registry::Param::in_section), named after the protocol that
    /// declares them: `[tcp]` for TCP and for the protocols built on TCP connections (MPTCP's
    /// subflows and MPAT's windows are TCP); `None` for a protocol without such parameters.
    pub section: Option<&'static str>,
    pub paths: Paths,
    /// Whether the receiving end answers (ACKs, feedback reports): the flow then needs a route
    /// back, which validation checks.
    pub feedback: bool,
    /// The settings an `[[event]]` naming the flow may change during the run: a declared
    /// number parameter (`n`, checked against its declared range), or `shares` for a protocol
    /// of [`Paths::Shares`].
    pub settings: &'static [&'static str],
    /// The result columns (of `flows` and `flow_series`) that are its own: its transport
    /// gives their values ([`Transport::column`](crate::transport::Transport::column)), every
    /// other flow's are NaN.
    pub columns: &'static [&'static str],
}

impl ProtocolSpec {
    /// Its name (the source's).
    pub const fn name(&self) -> &'static str {
        self.source.name
    }
}

impl std::fmt::Debug for ProtocolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtocolSpec")
            .field("name", &self.source.name)
            .field("section", &self.section)
            .field("paths", &self.paths)
            .field("feedback", &self.feedback)
            .field("settings", &self.settings)
            .field("columns", &self.columns)
            .finish_non_exhaustive()
    }
}

/// What a protocol's builder is given besides its parameters: the flow's random streams and
/// what the scenario reader read for its [`Paths`].
#[derive(Clone, Debug)]
pub struct FlowContext {
    /// The flow's own random stream (`flow.<name>.<kind>`), for protocols that draw.
    pub rng: SimRng,
    /// The stream of its two hosts' timing noise (`flow.<name>.host`), for protocols whose own
    /// stream serves something else.
    pub host: SimRng,
    /// The subflows, controller and scheduler ([`Paths::Subflows`]).
    pub multipath: Option<MultipathSpec>,
    /// The application flows' weights ([`Paths::Shares`]).
    pub shares: Option<Vec<f64>>,
    /// The rate of the slowest link its data crosses, over all its paths, in bits per second
    /// (`None` for a flow built in code): the service time a TCP connection's `send_jitter`
    /// counts in.
    pub slowest_rate_bps: Option<f64>,
}

impl FlowContext {
    /// A context with the flow's stream `rng` (the host stream a copy of it) and nothing read
    /// for its paths: a one-path flow built in code.
    pub fn new(rng: SimRng) -> FlowContext {
        FlowContext {
            host: rng.clone(),
            rng,
            multipath: None,
            shares: None,
            slowest_rate_bps: None,
        }
    }
}

/// A flow's transport as its protocol builds it.
pub struct Built {
    pub transport: AnyTransport,
    /// The congestion controller results name (`""` for a flow without one).
    pub cc: String,
}

/// A builder found something the scenario reader should have given (a scenario assembled in
/// code without it): the flow's key at fault and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing {
    pub key: &'static str,
    pub message: String,
}

/// A flow's protocol as named in a scenario (`kind = "tcp"`), with its validated parameters;
/// built by [`Configured::build`].
pub type SourceSpec = Configured<SourceKind>;

impl Kind for SourceKind {
    const CATEGORY: Category = Category::Source;
    type Context = FlowContext;
    type Output = Result<Built, Missing>;

    fn registry() -> &'static [&'static AlgorithmSpec<Self>] {
        REGISTRY
    }
}

/// Whether `a` sorts before `b`, byte by byte (usable in constants).
const fn before(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
        i += 1;
    }
    a.len() < b.len()
}

/// Whether the declarations are sorted by name, each name once.
const fn sorted(list: &[&ProtocolSpec]) -> bool {
    let mut i = 1;
    while i < list.len() {
        if !before(list[i - 1].source.name, list[i].source.name) {
            return false;
        }
        i += 1;
    }
    true
}

/// Generates, from one line per protocol (its module here, which declares `PROTOCOL`): the
/// module, [`PROTOCOLS`] and the registry's list of sources [`REGISTRY`].
macro_rules! protocols {
    ($($module:ident),+ $(,)?) => {
        $(pub mod $module;)+

        /// The declarations of the protocols, sorted by name.
        pub const PROTOCOLS: &[&ProtocolSpec] = &[$(&$module::PROTOCOL,)+];

        /// Their sources, the registry's `source` category.
        pub const REGISTRY: &[&AlgorithmSpec<SourceKind>] = &[$(&$module::PROTOCOL.source,)+];

        // The list is written in name order, so listings and messages read it as is.
        const _: () = assert!(sorted(PROTOCOLS), "protocols! lists its protocols by name");
    };
}

// The registry of protocols: one line per protocol.
protocols! {
    cbr,
    cp,
    fixed,
    mpat,
    mptcp,
    multfrc,
    onoff,
    tcp,
    tfrc,
}

/// The host timing noise of validated TCP-connection parameters (`send_jitter`,
/// `host_jitter`, `host_stall_*`) of a flow whose slowest link runs at `slowest_rate_bps`,
/// drawn from `rng`; `None` when the settings delay nothing.
fn host_noise(
    params: &crate::registry::Params,
    rng: SimRng,
    slowest_rate_bps: Option<f64>,
) -> Option<Box<HostNoise>> {
    let config = crate::app::tcp::host_noise(params, slowest_rate_bps);
    config
        .is_on()
        .then(|| Box::new(HostNoise::new(config, rng)))
}

/// The declaration of the protocol called `name`.
pub fn find(name: &str) -> Option<&'static ProtocolSpec> {
    PROTOCOLS.iter().copied().find(|p| p.name() == name)
}

/// The declaration of a validated source: every source is a protocol's.
pub fn of(source: &SourceSpec) -> &'static ProtocolSpec {
    find(source.name()).expect("every source is declared by a protocol")
}

/// The sections that give protocols' settings their defaults (`tcp`), in the order the
/// protocols first name them.
pub fn sections() -> Vec<&'static str> {
    let mut sections: Vec<&'static str> = Vec::new();
    for section in PROTOCOLS.iter().filter_map(|p| p.section) {
        if !sections.contains(&section) {
            sections.push(section);
        }
    }
    sections
}

/// The protocols whose flows an `[[event]]` may change `key` for, loosest bound first (a
/// number setting's declared lower bound; name order between equals).
pub fn changing(key: &str) -> Vec<&'static ProtocolSpec> {
    use crate::registry::Bound;
    let least = |p: &ProtocolSpec| match p.source.param(key).map(|param| param.range.min) {
        Some(Bound::Inclusive(x) | Bound::Exclusive(x)) => x,
        _ => f64::NEG_INFINITY,
    };
    let mut found: Vec<&'static ProtocolSpec> = PROTOCOLS
        .iter()
        .copied()
        .filter(|p| p.settings.contains(&key))
        .collect();
    found.sort_by(|a, b| least(a).total_cmp(&least(b)));
    found
}

/// The setting keys an `[[event]]` naming a flow may carry, in the order the protocols
/// first declare them.
pub fn setting_keys() -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = Vec::new();
    for p in PROTOCOLS {
        for key in p.settings {
            if !keys.contains(key) {
                keys.push(key);
            }
        }
    }
    keys
}

#[cfg(test)]
mod tests;
