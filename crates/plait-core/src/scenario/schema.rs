//! The typed, validated form of a scenario, and the names and defaults of its schema.
//!
//! Everything here is plain data: `validate` produces it from the parsed tree, the simulator
//! builder consumes it, and `catalog` describes it for `plait list`. The key lists and default
//! values live here once so that the parser, the catalog and the documentation cannot drift.

use crate::net::loss::LossSpec;
use crate::net::queue::{Limit, QueueSpec};
use crate::time::{Rate, SimTime};
use crate::transport::cc::CcSpec;
use crate::transport::tcp::TcpConfig;

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

/// Distribution of the length of an on or off period.
#[derive(Clone, Debug, PartialEq)]
pub enum PeriodSpec {
    Exponential {
        mean: SimTime,
    },
    /// Pareto with the given mean and shape (> 1 so that the mean is finite).
    Pareto {
        mean: SimTime,
        shape: f64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum FlowKind {
    /// A TCP connection; `bytes: None` means a long-lived (infinite) transfer.
    Tcp {
        cc: CcSpec,
        bytes: Option<u64>,
        tcp: TcpConfig,
    },
    /// Constant bit rate: packets of `packet_bytes` sent at `rate`.
    Cbr { rate: Rate, packet_bytes: u32 },
    /// Sends at `rate` during on periods and nothing during off periods.
    OnOff {
        rate: Rate,
        packet_bytes: u32,
        on: PeriodSpec,
        off: PeriodSpec,
    },
}

impl FlowKind {
    /// The scenario name of the kind.
    pub fn kind_name(&self) -> &'static str {
        match self {
            FlowKind::Tcp { .. } => "tcp",
            FlowKind::Cbr { .. } => "cbr",
            FlowKind::OnOff { .. } => "onoff",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// Unique; `name.i` for the copies of an entry with `count > 1`.
    pub name: String,
    pub kind: FlowKind,
    pub src: String,
    pub dst: String,
    pub start: StartSpec,
    /// The source stops sending at this time; `None` runs to the end.
    pub stop: Option<SimTime>,
    /// An explicit path of node names from `src` to `dst`; `None` means shortest path.
    pub route: Option<Vec<String>>,
}

// ---- Names and defaults of the schema -------------------------------------------------------

pub(crate) const SECTIONS: &[&str] = &["simulation", "tcp", "node", "link", "flow"];

pub(crate) const SIMULATION_KEYS: &[&str] = &["duration", "warmup", "seed", "sample_interval"];
pub(crate) const DEFAULT_SEED: u64 = 1;

pub(crate) const TCP_KEYS: &[&str] = &[
    "mss",
    "initial_window",
    "sack",
    "delayed_ack",
    "delayed_ack_timeout",
    "min_rto",
    "max_rto",
    "initial_rto",
    "receive_buffer",
    "dupack_threshold",
];

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
];

/// Queue of a link that does not name one.
pub(crate) const DEFAULT_QUEUE: QueueSpec = QueueSpec::DropTail {
    limit: Limit::Packets(1000),
};

pub(crate) const QUEUE_KINDS: &[(&str, &[&str])] = &[
    ("droptail", &["kind", "packets", "bytes"]),
    (
        "red",
        &[
            "kind",
            "min_th",
            "max_th",
            "max_p",
            "w_q",
            "gentle",
            "wait",
            "mode",
            "mean_packet_size",
            "packets",
            "bytes",
        ],
    ),
    (
        "threshold_dropper",
        &["kind", "threshold", "hold", "policy"],
    ),
];

pub(crate) const DROP_POLICIES: &[&str] = &["first_arrival", "rate_independent", "largest_rate"];

pub(crate) const LOSS_KINDS: &[(&str, &[&str])] = &[
    ("bernoulli", &["kind", "p"]),
    ("periodic", &["kind", "every", "offset"]),
    (
        "gilbert_elliott",
        &[
            "kind",
            "p_good_to_bad",
            "p_bad_to_good",
            "loss_good",
            "loss_bad",
        ],
    ),
];
pub(crate) const DEFAULT_LOSS_GOOD: f64 = 0.0;
pub(crate) const DEFAULT_LOSS_BAD: f64 = 1.0;

pub(crate) const CONTROLLERS: &[(&str, &[&str])] = &[
    ("aimd", &["name", "alpha", "beta"]),
    (
        "cubic",
        &["name", "c", "beta", "fast_convergence", "tcp_friendliness"],
    ),
    ("reno", &["name"]),
];
pub(crate) const DEFAULT_CC: CcSpec = CcSpec::Reno;
/// RFC 9438 §5: C = 0.4, beta_cubic = 0.7; fast convergence and the Reno-friendly region on.
pub(crate) const CUBIC_DEFAULT_C: f64 = 0.4;
pub(crate) const CUBIC_DEFAULT_BETA: f64 = 0.7;
pub(crate) const CUBIC_DEFAULT_FAST_CONVERGENCE: bool = true;
pub(crate) const CUBIC_DEFAULT_TCP_FRIENDLINESS: bool = true;
/// AIMD(1, 0.5) is Reno's congestion avoidance.
pub(crate) const AIMD_DEFAULT_ALPHA: f64 = 1.0;
pub(crate) const AIMD_DEFAULT_BETA: f64 = 0.5;

/// Keys every flow accepts, whatever its kind.
pub(crate) const FLOW_COMMON_KEYS: &[&str] = &[
    "name", "kind", "src", "dst", "count", "start", "stop", "route",
];
pub(crate) const FLOW_KINDS: &[&str] = &["tcp", "cbr", "onoff"];
/// Keys specific to each flow kind (the TCP settings of `TCP_KEYS` also belong to `tcp`).
pub(crate) const FLOW_TCP_KEYS: &[&str] = &["cc", "bytes"];
pub(crate) const FLOW_CBR_KEYS: &[&str] = &["rate", "packet_size"];
pub(crate) const FLOW_ONOFF_KEYS: &[&str] = &["rate", "packet_size", "on", "off"];
pub(crate) const DEFAULT_PACKET_SIZE: u32 = 1000;
/// Largest packet a source may send (the IPv4 total-length field).
pub(crate) const MAX_PACKET_SIZE: u32 = 65_535;
/// Upper bound on `count`, so that a typo cannot exhaust memory.
pub(crate) const MAX_COUNT: u64 = 1_000_000;
pub(crate) const PERIOD_KINDS: &[&str] = &["exponential", "pareto"];

/// Every key a flow of `kind` accepts.
pub(crate) fn flow_keys(kind: &str) -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = FLOW_COMMON_KEYS.to_vec();
    match kind {
        "tcp" => {
            keys.extend_from_slice(FLOW_TCP_KEYS);
            keys.extend_from_slice(TCP_KEYS);
        }
        "cbr" => keys.extend_from_slice(FLOW_CBR_KEYS),
        "onoff" => keys.extend_from_slice(FLOW_ONOFF_KEYS),
        _ => {}
    }
    keys
}
