//! One direction of a link: a loss model, a queue discipline, a serialiser and a propagation
//! delay.
//!
//! The link keeps at most one pending "transmission done" event: while it is transmitting and
//! packets wait, the simulator holds one `TransmitDone` for the end of the current packet. A
//! packet that arrives at an idle link with an empty queue goes straight through the queue
//! discipline (so that RED still sees the arrival) and onto the wire, with no extra event.
//! Serialisation times carry their fractional nanoseconds from packet to packet
//! ([`Rate::tx_time_carry`]).

use std::collections::VecDeque;

use crate::ids::{NodeId, PacketId};
use crate::net::loss::LossModel;
use crate::net::queue::{Queue, QueueDisc, QueueItem};
use crate::rng::SimRng;
use crate::time::{Rate, SimTime};

/// Counters of a link direction. Time integrals are in packet·ns and byte·ns.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkCounters {
    pub arrivals: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Packets dropped by the queue discipline.
    pub queue_drops: u64,
    /// Packets dropped by the loss model.
    pub loss_drops: u64,
    pub queue_area_packets_ns: u128,
    pub queue_area_bytes_ns: u128,
    pub max_queue_packets: u64,
}

/// What the simulator must do after the link handled an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started {
    /// The packet put on the wire.
    pub item: QueueItem,
    /// When its last bit leaves (the link is busy until then).
    pub tx_end: SimTime,
}

/// One direction of a link.
pub struct Link {
    /// The scenario name of the link this direction belongs to.
    pub name: String,
    /// True for the `to -> from` direction of a duplex link.
    pub is_reverse: bool,
    pub from: NodeId,
    pub to: NodeId,
    pub rate: Rate,
    pub delay: SimTime,
    pub queue: Queue,
    pub loss: Option<LossModel>,
    pub rng: SimRng,
    busy_until: SimTime,
    carry: u64,
    /// A `TransmitDone` event is pending for `busy_until`.
    pub(crate) done_pending: bool,
    last_change: SimTime,
    pub counters: LinkCounters,
    /// Packets on the wire or propagating, with their arrival times at the far end. Arrival
    /// times are non-decreasing (FIFO serialisation, constant delay), so the simulator keeps
    /// one event, for the head, instead of one per packet.
    pub(crate) pipeline: VecDeque<(SimTime, PacketId)>,
}

impl Link {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        is_reverse: bool,
        from: NodeId,
        to: NodeId,
        rate: Rate,
        delay: SimTime,
        queue: Queue,
        loss: Option<LossModel>,
        rng: SimRng,
    ) -> Self {
        Link {
            name,
            is_reverse,
            from,
            to,
            rate,
            delay,
            queue,
            loss,
            rng,
            busy_until: SimTime::ZERO,
            carry: 0,
            done_pending: false,
            last_change: SimTime::ZERO,
            counters: LinkCounters::default(),
            pipeline: VecDeque::new(),
        }
    }

    /// "forward" or "reverse".
    pub fn direction(&self) -> &'static str {
        if self.is_reverse {
            "reverse"
        } else {
            "forward"
        }
    }

    pub fn is_busy(&self, now: SimTime) -> bool {
        now < self.busy_until
    }

    /// Accumulates the time integral of the queue length up to `now`.
    #[inline]
    fn account_queue(&mut self, now: SimTime) {
        let dt = now.0.saturating_sub(self.last_change.0) as u128;
        if dt > 0 {
            self.counters.queue_area_packets_ns += self.queue.len_packets() as u128 * dt;
            self.counters.queue_area_bytes_ns += self.queue.len_bytes() as u128 * dt;
            self.last_change = now;
        }
    }

    /// A packet arrives at the link's input. Dropped packets are appended to `dropped`.
    /// Returns the packet put on the wire if the link was idle.
    #[inline]
    pub fn handle_arrival(
        &mut self,
        now: SimTime,
        item: QueueItem,
        dropped: &mut Vec<QueueItem>,
    ) -> Option<Started> {
        self.counters.arrivals += 1;
        if let Some(loss) = self.loss.as_mut() {
            if loss.should_drop(&mut self.rng) {
                self.counters.loss_drops += 1;
                dropped.push(item);
                return None;
            }
        }
        self.account_queue(now);
        let before = dropped.len();
        self.queue.enqueue(now, item, &mut self.rng, dropped);
        self.counters.queue_drops += (dropped.len() - before) as u64;
        let queued = self.queue.len_packets() as u64;
        if queued > self.counters.max_queue_packets {
            self.counters.max_queue_packets = queued;
        }
        // An idle link (nothing on the wire, no completion pending) starts at once.
        if now >= self.busy_until && !self.done_pending {
            self.start_next(now)
        } else {
            None
        }
    }

    /// The current transmission ended: start the next packet, if any.
    #[inline]
    pub fn handle_transmit_done(&mut self, now: SimTime) -> Option<Started> {
        self.done_pending = false;
        self.account_queue(now);
        self.start_next(now)
    }

    #[inline]
    fn start_next(&mut self, now: SimTime) -> Option<Started> {
        let item = self.queue.dequeue(now)?;
        let tx = self.rate.tx_time_carry(item.bytes as u64, &mut self.carry);
        let tx_end = now.saturating_add(tx);
        self.busy_until = tx_end;
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += item.bytes as u64;
        Some(Started { item, tx_end })
    }

    /// Whether a `TransmitDone` must be scheduled now: the link is busy, packets wait and no
    /// event is pending. Marks it pending and returns its time.
    #[inline]
    pub fn needs_done_event(&mut self, now: SimTime) -> Option<SimTime> {
        if !self.done_pending && now < self.busy_until && !self.queue.is_empty() {
            self.done_pending = true;
            Some(self.busy_until)
        } else {
            None
        }
    }

    /// Brings the time integrals up to `now` (end of run, snapshots).
    pub fn settle(&mut self, now: SimTime) {
        self.account_queue(now);
    }
}
