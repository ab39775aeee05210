//! Queue disciplines.
//!
//! A discipline decides which packets are queued, dropped and dequeued; it does not own
//! statistics (the link does) and never schedules events. One discipline per file; built-ins
//! are dispatched through the [`Queue`] enum.

use crate::ids::{FlowId, PacketId};
use crate::rng::SimRng;
use crate::time::SimTime;

/// A packet as a queue sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueItem {
    pub packet: PacketId,
    pub flow: FlowId,
    /// Size on the wire.
    pub bytes: u32,
}

/// A queue discipline.
pub trait QueueDisc {
    /// Offers an arriving packet at time `now`. Every packet dropped as a consequence (the
    /// arrival itself, or packets already queued) is pushed onto `dropped`; the caller clears
    /// `dropped` before the call.
    fn enqueue(&mut self, now: SimTime, item: QueueItem, rng: &mut SimRng, dropped: &mut Vec<QueueItem>);
    /// Removes the next packet to transmit, if any.
    fn dequeue(&mut self, now: SimTime) -> Option<QueueItem>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
}

/// A buffer limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

/// How the threshold-dropper chooses the packet to drop (Altman et al. §V.D).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropPolicy {
    /// Drop the arrival that found more than `threshold` packets queued.
    FirstArrival,
    /// Drop a packet of a flow drawn uniformly among the flows with packets queued.
    RateIndependent,
    /// Drop a packet of the flow with the most bytes queued.
    LargestRate,
}

/// RED parameters, with ns-2's meaning (Floyd & Jacobson 1993; ns-2 `queue/red.cc`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedSpec {
    /// Thresholds on the average queue, in packets (packet mode) or bytes (byte mode).
    pub min_th: f64,
    pub max_th: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
    /// EWMA weight of the average queue.
    pub w_q: f64,
    /// Ramp the drop probability from max_p to 1 between max_th and 2 max_th.
    pub gentle: bool,
    /// ns-2 `wait_`: keep roughly uniform spacing between drops.
    pub wait: bool,
    /// Byte mode: thresholds in bytes, drop probability scaled by packet size / mean_packet_bytes.
    pub byte_mode: bool,
    /// Mean packet size (bytes), for byte mode and for decaying the average over idle periods.
    pub mean_packet_bytes: u32,
    /// Physical buffer.
    pub limit: Limit,
}

/// A queue discipline as named in a scenario, before it is built for a link.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueSpec {
    DropTail { limit: Limit },
    Red(RedSpec),
    ThresholdDropper {
        /// Drop when an arrival finds more than this many packets queued.
        threshold: u64,
        /// No further drop for this long after one; `None` means one mean RTT of the flows
        /// crossing the link, resolved by the scenario builder.
        hold: Option<SimTime>,
        policy: DropPolicy,
    },
}
