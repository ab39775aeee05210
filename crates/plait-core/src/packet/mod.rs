//! Packets as they cross the network.
//!
//! Packets live in a pool ([`pool`]) owned by the simulator ([`crate::sim`]) and events refer to them by
//! [`PacketId`](crate::ids::PacketId), so an event entry stays small. The route is carried in
//! the packet (`route`, `hop`), so forwarding is an index lookup. What a packet carries is its
//! [`Header`], one variant per protocol's header, each header defined in a file of its own here
//! (`tcp`, `mptcp`, `tfrc`, `datagram`); the network never looks inside. Headers are plain data
//! and name no transport: the transports import them, never the other way round.

pub mod datagram;
pub mod mptcp;
pub mod pool;
pub mod tcp;
pub mod tfrc;

use crate::ids::{FlowId, PathId, RouteId};

pub use datagram::{DatagramHeader, UDP_IP_HEADER_BYTES};
pub use mptcp::MptcpAck;
pub use tcp::{AckSegment, DataSegment, SackBlocks, MAX_SACK_BLOCKS, TCP_IP_HEADER_BYTES};
pub use tfrc::{TfrcData, TfrcFeedback, TfrcNack};

/// Largest packet a source may send, and largest segment (the IPv4 total-length field).
pub const MAX_PACKET_BYTES: u32 = 65_535;

/// Which way a packet travels on its path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the flow's source to its sink (data): the path's forward route.
    #[default]
    Forward,
    /// From the sink back to the source (feedback): the path's reverse route.
    Reverse,
}

/// A header defined outside the crate's protocols: four words whose meaning belongs to the
/// [`crate::transport::Transport`] that sent it (the extension point's header).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CustomHeader {
    pub words: [u64; 4],
}

/// What a packet carries, by protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header {
    /// A TCP data segment (sender to receiver).
    TcpData(DataSegment),
    /// A TCP acknowledgement (receiver to sender).
    TcpAck(AckSegment),
    /// An MPTCP subflow's acknowledgement, with the DATA_ACK.
    MptcpAck(MptcpAck),
    /// A TFRC-family data packet, feedback packet and (reliable flows) NACK.
    TfrcData(TfrcData),
    TfrcFeedback(TfrcFeedback),
    TfrcNack(TfrcNack),
    /// A UDP datagram of a datagram source.
    Datagram(DatagramHeader),
    /// A header of a custom transport.
    Custom(CustomHeader),
}

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

/// A packet on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub flow: FlowId,
    /// The flow's path this packet travels on, and which way.
    pub path: PathId,
    pub direction: Direction,
    pub route: RouteId,
    /// Index into the route of the link the packet is on or about to enter.
    pub hop: u16,
    /// Size on the wire, headers included.
    pub size_bytes: u32,
    pub header: Header,
}

impl Packet {
    /// What a new slot of the pool holds until it is written ([`pool::PacketPool::alloc_slot`]).
    pub const PLACEHOLDER: Packet = Packet {
        flow: FlowId(0),
        path: PathId(0),
        direction: Direction::Forward,
        route: RouteId(0),
        hop: 0,
        size_bytes: 0,
        header: Header::Custom(CustomHeader { words: [0; 4] }),
    };

    /// Feedback (ACKs) travels in the reverse direction; data forward.
    pub fn is_feedback(&self) -> bool {
        self.direction == Direction::Reverse
    }
}
