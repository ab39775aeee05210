//! A flow in the simulator: its transport, its paths and its meters.

use crate::ids::{NodeId, PathId, RouteId};
pub use crate::packet::FlowPath;
use crate::time::SimTime;
use crate::trace::meters::FlowMeters;
use crate::transport::outbox::LocalRoom;
use crate::transport::{AnyTransport, Direction, Transport};

pub struct Flow {
    pub name: String,
    pub kind: &'static str,
    /// The congestion controller's name (empty for datagram flows).
    pub cc: String,
    pub src: NodeId,
    pub dst: NodeId,
    /// The flow's paths, indexed by [`PathId`]; a single-path flow has one.
    pub paths: Vec<FlowPath>,
    pub start: SimTime,
    pub stop: Option<SimTime>,
    /// Earliest `FlowTimer` event in the queue for this flow (lazy cancellation).
    pub timer_scheduled: Option<SimTime>,
    /// The transport's wake-up as it reported it after its last input (`poll_timeout`).
    pub deadline: Option<SimTime>,
    pub transport: AnyTransport,
    pub meters: FlowMeters,
    /// The sending host's interface queues (`local = true` links) the flow's paths start on,
    /// if any: what they can take, read before each input ([`LocalRoom`]).
    pub local: Option<Box<LocalRoom>>,
}

impl Flow {
    /// The route of `path` in `direction`.
    #[inline]
    pub fn route(&self, path: PathId, direction: Direction) -> RouteId {
        self.paths[path.index()].route(direction)
    }

    /// Payload bytes delivered in order to the receiving application.
    pub fn delivered_bytes(&self) -> u64 {
        self.transport.stats().delivered_bytes
    }
}
