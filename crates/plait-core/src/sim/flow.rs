//! A flow in the simulator: its transport, its paths and its counters.

use crate::ids::{NodeId, PathId, RouteId};
use crate::time::SimTime;
use crate::trace::histogram::LogHistogram;
use crate::transport::{AnyTransport, Direction, Transport, TransportStats};

/// One path of a flow: the route its data takes and the route its feedback takes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowPath {
    pub forward: RouteId,
    pub reverse: RouteId,
}

impl FlowPath {
    #[inline]
    pub fn route(&self, direction: Direction) -> RouteId {
        match direction {
            Direction::Forward => self.forward,
            Direction::Reverse => self.reverse,
        }
    }
}

/// Counters snapshotted at the end of the warm-up, subtracted at the end of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCounters {
    pub data_packets_sent: u64,
    pub wire_bytes_sent: u64,
    pub drops: u64,
    pub transport: TransportStats,
}

pub struct Flow {
    pub name: String,
    pub kind: &'static str,
    pub cc: &'static str,
    pub src: NodeId,
    pub dst: NodeId,
    /// The flow's paths, indexed by [`PathId`]; a single-path flow has one.
    pub paths: Vec<FlowPath>,
    pub start: SimTime,
    pub stop: Option<SimTime>,
    pub completed_at: Option<SimTime>,
    /// Earliest `FlowTimer` event in the queue for this flow (lazy cancellation).
    pub timer_scheduled: Option<SimTime>,
    pub transport: AnyTransport,
    /// Data packets (travelling forward) the flow emitted, retransmissions included, whole
    /// run, whether or not they got past its first link.
    pub data_packets_sent: u64,
    /// Bytes (headers included) of the flow's data packets that left the sender's access link,
    /// i.e. reached the far end of the first link of the forward route, whole run. Packets
    /// dropped by that link's queue or loss model are not counted.
    pub wire_bytes_sent: u64,
    /// Packets of this flow dropped anywhere, whole run.
    pub drops: u64,
    /// RTT samples taken after the warm-up.
    pub rtt: LogHistogram,
    pub at_warmup: FlowCounters,
    /// Delivered bytes at the previous time-series sample.
    pub delivered_at_last_sample: u64,
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

    pub fn counters(&self) -> FlowCounters {
        FlowCounters {
            data_packets_sent: self.data_packets_sent,
            wire_bytes_sent: self.wire_bytes_sent,
            drops: self.drops,
            transport: self.transport.stats(),
        }
    }
}
