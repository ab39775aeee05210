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
