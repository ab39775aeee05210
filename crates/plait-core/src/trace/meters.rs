//! Meters: what the driver counts per flow and per path while a run goes on (packets and
//! bytes sent, drops, RTT samples) and the readings kept when the warm-up ends. Plain counters
//! that the event loop feeds; they import no part of the simulator, and the simulator's
//! measurement (`sim::measure`) turns them into the result tables.

use crate::ids::PathId;
use crate::time::SimTime;
use crate::transport::multipath::connection::{ConnectionStats, SubflowStats};
use crate::transport::{ApplicationStats, TransportStats};

use super::histogram::RttHistograms;

/// Counters of a flow read when the warm-up ends and subtracted at the end of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCounters {
    pub data_packets_sent: u64,
    pub wire_bytes_sent: u64,
    pub drops: u64,
    pub transport: TransportStats,
}

/// Counters of one path of a multipath flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathCounters {
    pub packets_sent: u64,
    pub wire_bytes_sent: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
}

/// What is measured on one path of a flow with several.
#[derive(Clone, Debug, Default)]
pub struct PathMeters {
    pub counters: PathCounters,
    pub at_warmup: PathCounters,
    /// An MPTCP subflow's counters when the warm-up ended.
    pub subflow_at_warmup: SubflowStats,
}

/// What the driver measures for a flow.
#[derive(Clone, Debug, Default)]
pub struct FlowMeters {
    /// Data packets (travelling forward) the flow emitted, retransmissions included, whole
    /// run, whether or not they got past its first link.
    pub data_packets_sent: u64,
    /// Bytes (headers included) of the flow's data packets that left the sender's access link,
    /// i.e. reached the far end of the first link of the forward route, whole run. Packets
    /// dropped by that link's queue or loss model are not counted.
    pub wire_bytes_sent: u64,
    /// Packets of this flow dropped anywhere, whole run.
    pub drops: u64,
    /// RTT samples taken after the warm-up, the flow's and (with several paths) each path's.
    pub rtt: RttHistograms,
    pub completed_at: Option<SimTime>,
    pub at_warmup: FlowCounters,
    /// Delivered bytes at the previous time-series sample.
    pub delivered_at_last_sample: u64,
    /// Per path, for flows with more than one (empty otherwise: a single path is the flow).
    pub paths: Vec<PathMeters>,
    /// An MPTCP connection's counters when the warm-up ended.
    pub connection_at_warmup: ConnectionStats,
    /// An aggregate's application flows: their counters when the warm-up ended, and their
    /// delivered bytes at the previous time-series sample.
    pub applications_at_warmup: Vec<ApplicationStats>,
    pub application_delivered_at_last_sample: Vec<u64>,
}

impl FlowMeters {
    /// Meters for a flow with `paths` paths.
    pub fn new(paths: usize) -> Self {
        FlowMeters {
            paths: if paths > 1 {
                vec![PathMeters::default(); paths]
            } else {
                Vec::new()
            },
            rtt: RttHistograms::new(paths),
            ..FlowMeters::default()
        }
    }

    /// The meters of `path`, when the flow has several.
    #[inline]
    pub fn path_mut(&mut self, path: PathId) -> Option<&mut PathMeters> {
        self.paths.get_mut(path.index())
    }
}
