//! The typed, validated form of a scenario, and the names and defaults of its schema.
//!
//! Everything here is plain data: `validate` produces it from the parsed tree and the simulator
//! builder consumes it. The keys and defaults of the sections live here once; those of the
//! algorithms a scenario names (controllers, queues, loss models, sources) are their registry
//! declarations (`crate::registry`), which `catalog` describes for `plait list`.

use crate::ids::LinkId;
use crate::net::loss::LossSpec;
use crate::net::queue::QueueSpec;
use crate::protocol::SourceSpec;
use crate::registry::Value;
use crate::time::{Rate, SimTime};

/// A validated scenario, ready to be built into a simulator.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Where the scenario came from (a file name, or a label given by the caller).
    pub source: String,
    pub simulation: SimulationSpec,
    /// Every node, declared ones first (in file order), then link endpoints in order of first
    /// appearance.
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// Flows after `count` expansion, in file order.
    pub flows: Vec<FlowSpec>,
    /// Links that fail and come back (`[[event]]`), in time order (file order at equal times).
    pub events: Vec<LinkEventSpec>,
    /// Links whose loss model changes during the run (`[[event]]` with `loss`), in time order.
    pub loss_events: Vec<LossEventSpec>,
    /// Settings of flows that change during the run (`[[event]]` with `flow`), in time order
    /// (file order at equal times).
    pub flow_events: Vec<FlowEventSpec>,
    /// What validation found legal but probably not meant (subflows sharing a path without
    /// routes); `plait validate` and `plait run` print these.
    pub warnings: Vec<ScenarioWarning>,
}

/// Something a scenario says that is legal but probably not what was meant, in the shape of a
/// [`ScenarioError`](super::ScenarioError): `file: path: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioWarning {
    pub file: String,
    pub path: String,
    pub message: String,
}

/// An `[[event]]` that gives a link's forward direction (from -> to) a new loss model.
#[derive(Clone, Debug, PartialEq)]
pub struct LossEventSpec {
    pub at: SimTime,
    /// The link's name.
    pub link: String,
    pub loss: LossSpec,
}

/// An `[[event]]` naming a flow: one of its settings changes.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowEventSpec {
    pub at: SimTime,
    /// The flow's name.
    pub flow: String,
    pub change: crate::transport::FlowChange,
}

/// An `[[event]]`: a link fails or is repaired, both directions of a duplex link at once.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkEventSpec {
    pub at: SimTime,
    /// The link's name.
    pub link: String,
    /// Whether the link is up after the event.
    pub up: bool,
}

/// The `[simulation]` section.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulationSpec {
    pub duration: SimTime,
    /// Statistics are reset at this time; always less than `duration`.
    pub warmup: SimTime,
    pub seed: u64,
    /// Time series are sampled at this interval when set.
    pub sample_interval: Option<SimTime>,
    /// Keep every dropped packet in the `drops` table.
    pub trace_drops: bool,
    /// Do work ahead of time where it applies (`sim/ahead.rs`); the results are the same
    /// either way, only the count of events differs.
    pub lookahead: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: SimTime,
    /// A duplex link carries traffic both ways, each direction with its own queue.
    pub duplex: bool,
    /// Queue of the `from -> to` direction.
    pub queue: QueueSpec,
    /// Queue of the `to -> from` direction: equal to `queue` unless `reverse_queue` is given.
    /// Unused on a simplex link.
    pub reverse_queue: QueueSpec,
    /// Random loss on the `from -> to` direction.
    pub loss: Option<LossSpec>,
    /// Random loss on the `to -> from` direction (none unless `reverse_loss` is given).
    pub reverse_loss: Option<LossSpec>,
    /// The `from -> to` queue is the sending host's own interface queue (`local = true`): a
    /// TCP or MPTCP segment that finds it full is refused, not lost (the sender enters CWR
    /// and sends it later, as Linux treats `NET_XMIT_DROP` from its qdisc). Only on a link
    /// whose `from` node is the source of a flow, with a drop-tail queue limited in packets.
    pub local: bool,
}

/// When a flow starts.
#[derive(Clone, Debug, PartialEq)]
pub enum StartSpec {
    At(SimTime),
    /// Drawn uniformly in `[a, b]` from the scenario seed, independently for each copy.
    Uniform(SimTime, SimTime),
}

impl StartSpec {
    /// The latest time the flow can start.
    pub fn latest(&self) -> SimTime {
        match *self {
            StartSpec::At(t) => t,
            StartSpec::Uniform(_, b) => b,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// Unique; `name.i` for the copies of an entry with `count > 1`.
    pub name: String,
    /// The traffic source (`kind = "tcp"`) with its validated parameters.
    pub kind: SourceSpec,
    pub src: String,
    pub dst: String,
    pub start: StartSpec,
    /// The source stops sending at this time; `None` runs to the end.
    pub stop: Option<SimTime>,
    /// An explicit path of node names from `src` to `dst`; `None` means shortest path.
    pub route: Option<Vec<String>>,
    /// The flow's paths resolved by validation to link directions: one (`route`, or the
    /// shortest path), or one per subflow of an MPTCP flow.
    pub paths: Vec<PathSpec>,
    /// What an MPTCP flow adds: its controller, scheduler and subflows (`None` for others).
    pub multipath: Option<MultipathSpec>,
    /// An MPAT aggregate's shares, one per application flow (`None` for others).
    pub shares: Option<Vec<f64>>,
}

/// The multipath part of a flow whose protocol has one path per subflow, with its controller
/// and subflows: declared by the MPTCP protocol.
pub use crate::protocol::{CoupledChoice, MultipathSpec, SubflowSpec};

/// A path resolved to link directions, numbered as the simulator numbers them: each link's
/// `from -> to` direction, then its `to -> from` direction if it is duplex, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathSpec {
    /// From `src` to `dst` (data).
    pub forward: Vec<LinkId>,
    /// From `dst` back to `src` (feedback); empty when there is none and the flow's source
    /// needs none (a datagram source over one-way links).
    pub reverse: Vec<LinkId>,
}

// ---- Names and defaults of the schema -------------------------------------------------------

/// The top-level sections: `[simulation]`, then the sections that give protocols' settings
/// their defaults (`[tcp]` gives the parameters TCP declares `in_section`, for every flow of a
/// protocol that names the section: TCP, MPTCP's subflows, MPAT's windows), then the rest.
/// `[sweep]` belongs to the sweep runner (`plait sweep`), which reads it; a scenario run alone
/// ignores it, so a sweep file is also a scenario. `[testbed]` belongs to `plait testbed` (its
/// `sim_only` keys, which the kernel testbed leaves out); the simulator checks and ignores it.
pub(crate) fn sections() -> Vec<&'static str> {
    let mut all = vec!["simulation"];
    all.extend(crate::protocol::sections());
    all.extend(["node", "link", "flow", "event", "sweep", "testbed"]);
    all
}

/// The keys of a link event and of a loss event.
pub(crate) const LINK_EVENT_KEYS: &[&str] = &["at", "link", "action"];
pub(crate) const LOSS_EVENT_KEYS: &[&str] = &["at", "link", "loss"];

/// The keys of a flow event: the flow, and the settings the protocols let change.
pub(crate) fn flow_event_keys() -> Vec<&'static str> {
    let mut keys = vec!["at", "flow"];
    keys.extend(crate::protocol::setting_keys());
    keys
}

/// Every key an event may have, whatever it is.
pub(crate) fn event_keys() -> Vec<&'static str> {
    let mut keys = vec!["at", "link", "action", "loss", "flow"];
    keys.extend(crate::protocol::setting_keys());
    keys
}

/// The section the sweep runner reads and the simulator ignores.
pub(crate) const SWEEP_SECTION: &str = "sweep";
/// The section `plait testbed` reads and the simulator ignores (after checking it).
pub(crate) const TESTBED_SECTION: &str = "testbed";
pub(crate) const TESTBED_KEYS: &[&str] = &["sim_only"];

pub(crate) const SIMULATION_KEYS: &[&str] = &[
    "duration",
    "warmup",
    "seed",
    "sample_interval",
    "trace_drops",
    "lookahead",
];
pub(crate) const DEFAULT_SEED: u64 = 1;

pub(crate) const NODE_KEYS: &[&str] = &["name", "kind"];

pub(crate) const LINK_KEYS: &[&str] = &[
    "name",
    "from",
    "to",
    "rate",
    "delay",
    "duplex",
    "queue",
    "reverse_queue",
    "loss",
    "reverse_loss",
    "local",
];

/// Queue of a link that does not name one: drop-tail, 1000 packets.
pub(crate) fn default_queue() -> QueueSpec {
    QueueSpec::new("droptail", &[("packets", Value::Integer(1000))])
        .expect("a valid drop-tail queue")
}

/// Keys every flow accepts, whatever its kind (the source's parameters come on top).
pub(crate) const FLOW_COMMON_KEYS: &[&str] = &[
    "name", "kind", "src", "dst", "count", "start", "stop", "route",
];
/// Upper bound on `count`, so that a typo cannot exhaust memory.
pub(crate) const MAX_COUNT: u64 = 1_000_000;
