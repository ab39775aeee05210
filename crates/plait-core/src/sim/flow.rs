//! A flow in the simulator: its two endpoints, its routes and its counters.

use crate::app::DatagramSource;
use crate::ids::{NodeId, RouteId};
use crate::time::SimTime;
use crate::trace::histogram::LogHistogram;
use crate::transport::cc::Controller;
use crate::transport::tcp::{SenderStats, TcpReceiver, TcpSender};

/// The two ends of a flow.
pub enum Endpoints {
    Tcp {
        sender: Box<TcpSender<Controller>>,
        receiver: Box<TcpReceiver>,
    },
    Datagram {
        source: DatagramSource,
        next_seq: u64,
        received_packets: u64,
        received_bytes: u64,
    },
}

/// Counters snapshotted at the end of the warm-up, subtracted at the end of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCounters {
    pub delivered_bytes: u64,
    pub data_packets_sent: u64,
    pub wire_bytes_sent: u64,
    pub drops: u64,
    pub sender: SenderStats,
}

pub struct Flow {
    pub name: String,
    pub kind: &'static str,
    pub cc: &'static str,
    pub src: NodeId,
    pub dst: NodeId,
    pub forward: RouteId,
    pub reverse: RouteId,
    pub start: SimTime,
    pub stop: Option<SimTime>,
    /// Started and not stopped.
    pub active: bool,
    pub completed_at: Option<SimTime>,
    /// Earliest `FlowTimer` event in the queue for this flow (lazy cancellation).
    pub timer_scheduled: Option<SimTime>,
    pub endpoints: Endpoints,
    /// Data packets the sender emitted (retransmissions included), whole run, whether or
    /// not they got past its first link.
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
    /// Payload bytes delivered in order to the receiving application.
    pub fn delivered_bytes(&self) -> u64 {
        match &self.endpoints {
            Endpoints::Tcp { receiver, .. } => receiver.delivered_bytes(),
            Endpoints::Datagram { received_bytes, .. } => *received_bytes,
        }
    }

    pub fn counters(&self) -> FlowCounters {
        FlowCounters {
            delivered_bytes: self.delivered_bytes(),
            data_packets_sent: self.data_packets_sent,
            wire_bytes_sent: self.wire_bytes_sent,
            drops: self.drops,
            sender: match &self.endpoints {
                Endpoints::Tcp { sender, .. } => *sender.stats(),
                Endpoints::Datagram { .. } => SenderStats::default(),
            },
        }
    }
}
