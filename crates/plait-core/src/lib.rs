//! plait-core: a deterministic packet-level simulator for multipath and aggregate congestion
//! control, with the closed-form models and the AIMD fluid model beside it.
//!
//! Layout follows `DESIGN.md`: sans-IO protocol logic (`transport`), a single-threaded event
//! loop with integer time (`sim`, `event`, `time`), arenas and typed ids (`ids`), named seeded
//! random streams (`rng`), packets and their headers as plain data (`packet`), the network
//! (`net`), traffic sources (`app`), the registry that declares every controller, queue, loss
//! model and source once (`registry`), quantities with units (`units`), scenarios
//! (`scenario`), tracing and metrics (`trace`) and models (`model`). No two files import each
//! other through a chain (`tests/import_graph.rs`; `docs/architecture.md` lists the rooms from
//! the ground up).
//!
//! # A tour: one packet's life
//!
//! 1. A scenario (`scenario::Scenario::from_toml_str`) is read and checked, every parameter through
//!    the registry (`registry`), each protocol through its declaration (`protocol`), and built
//!    (`sim::build`) into links (`net::link::Link`, each with its queue from `net::queue` and
//!    its loss model from `net::loss`), routes of links, and flows, each holding one
//!    transport (`transport::AnyTransport`).
//! 2. The loop (`sim::Simulator::run`) pops the earliest event (`event::EventQueue`) and hands
//!    the flow's transport its input (`transport::Transport::handle_packet`, `handle_timeout`,
//!    ...) with an outbox (`transport::Outbox`). A TCP flow (`transport::tcp::TcpFlow`) takes
//!    an ACK into its sender (`transport::tcp::TcpSender`: `TcpCore`'s scoreboard, recovery and
//!    RTT estimator around a controller from `transport::cc`) and sends what the window now
//!    allows: each segment goes straight into the packet pool (`packet::pool`).
//! 3. The driver records what the transport reported (`trace::meters`), re-arms its wake-up,
//!    and puts the new packets on the first link of their routes; a link queues, serialises
//!    and propagates them (`Link::arrive_scheduled`, `Link::departure`), and where nothing can
//!    tell the difference the work is done ahead of time (`sim/ahead.rs`).
//! 4. At the end of its route a packet is delivered to its flow's transport, and its slot freed
//!    for the first packet the transport sends in answer. At the end of the run the meters
//!    become the result tables (`trace::results::RunResult`).

/// The identity of the simulator's source: 16 hex digits hashed from every file under this
/// crate's `src/`, its `Cargo.toml` and the workspace's `Cargo.lock` (`build.rs`). Two builds
/// with the same identity run the same code; stored runs are keyed by it.
pub const SOURCE_ID: &str = env!("PLAIT_CORE_SOURCE_ID");

pub mod app;
pub mod bench;
pub(crate) mod dispatch;
pub mod event;
pub mod fifo;
/// Fuzz-target bodies (`fuzz/`), shared with the corpus replay test; not a public API.
#[doc(hidden)]
pub mod fuzzing;
pub mod ids;
pub mod model;
pub mod net;
pub mod packet;
pub mod protocol;
pub mod registry;
pub mod ring;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod time;
pub mod trace;
pub mod transport;
pub mod units;

pub use ids::{FlowId, LinkId, NodeId, PacketId, PathId, RouteId};
pub use time::{Rate, SimTime};
