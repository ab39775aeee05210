//! Drop-tail FIFO: packets leave in arrival order and an arrival that does not fit in the buffer
//! is discarded (ns-2 `queue/drop-tail.cc` with `drop_front_ false`).
//!
//! The buffer is a [`Limit`] in packets or bytes; see [`Limit::admits`] for the exact rule.
//! By default a packet limit counts only the packets waiting, not the one being transmitted
//! (ns-2's convention); `limit_includes_service = true` counts that one too, as a Linux qdisc
//! limit (`pfifo limit`) and most link emulators do: `packets = K` then leaves K - 1 places to
//! wait while the link is busy. The
//! ring buffer keeps its capacity once grown, so after warm-up no packet allocates.

use std::collections::VecDeque;

use super::{limit_of, Limit, QueueDisc, QueueItem, QueueKind};
use crate::registry::{AlgorithmSpec, Param, ParamIssue, Params, Scalar};
use crate::ring::Ring;
use crate::rng::SimRng;
use crate::time::SimTime;

/// The registry declaration of the drop-tail queue: exactly one limit is required.
pub const SPEC: AlgorithmSpec<QueueKind> = AlgorithmSpec {
    name: "droptail",
    summary: "FIFO that drops arrivals when full; give exactly one of packets or bytes",
    params: &[
        Param::integer("packets", "buffer limit in packets")
            .unit("packets")
            .at_least(1.0)
            .unset("the limit is in bytes"),
        Param::size("bytes", "buffer limit in bytes")
            .at_least(1.0)
            .unset("the limit is in packets"),
        Param::bool(
            "limit_includes_service",
            "whether the packet limit also counts the packet being transmitted (as a Linux \
             qdisc limit or most testbed emulators do); by default it counts only waiting \
             packets (as ns-2 does)",
        )
        .default(Scalar::Bool(false)),
    ],
    finish: Some(|params| match limit_of(params)? {
        Some(Limit::Bytes(_)) if params.bool("limit_includes_service") => Err(ParamIssue::at(
            "limit_includes_service",
            "applies to a limit in packets; a byte limit counts waiting bytes only",
        )),
        Some(Limit::Packets(1)) if params.bool("limit_includes_service") => Err(ParamIssue::at(
            "packets",
            "must be at least 2 with limit_includes_service (1 would leave no room to wait; \
                 the packet in transmission always has its place)",
        )),
        Some(_) => Ok(()),
        None => Err(ParamIssue::whole(
            "a droptail queue needs a limit: packets = N or bytes = SIZE",
        )),
    }),
    build: |params, _| DropTail::new(limit(params)).into(),
};

/// The limit of validated drop-tail parameters, on waiting packets: a limit of K that
/// includes the packet in transmission leaves K - 1 places to wait (an arrival at an idle link
/// goes straight into transmission, so the two conventions differ exactly by that one place).
fn limit(params: &Params) -> Limit {
    match params.opt_size("bytes") {
        Some(bytes) => Limit::Bytes(bytes),
        None if params.bool("limit_includes_service") => {
            Limit::Packets(params.integer("packets") - 1)
        }
        None => Limit::Packets(params.integer("packets")),
    }
}

/// Ring-buffer capacity reserved up front for a packet limit, so that short buffers never
/// reallocate; longer ones grow geometrically on demand.
const INITIAL_CAPACITY_CAP: u64 = 1024;

/// A drop-tail FIFO queue.
#[derive(Clone, Debug)]
pub struct DropTail {
    limit: Limit,
    items: VecDeque<QueueItem>,
    queued_bytes: u64,
}

impl DropTail {
    pub fn new(limit: Limit) -> Self {
        let capacity = match limit {
            Limit::Packets(n) => n.min(INITIAL_CAPACITY_CAP) as usize,
            Limit::Bytes(_) => 0,
        };
        DropTail {
            limit,
            items: VecDeque::with_capacity(capacity),
            queued_bytes: 0,
        }
    }

    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// The queued packets, head (next to leave) first.
    pub fn iter(&self) -> impl Iterator<Item = &QueueItem> + '_ {
        self.items.iter()
    }
}

impl QueueDisc for DropTail {
    fn enqueue(
        &mut self,
        _now: SimTime,
        item: QueueItem,
        _rng: &mut SimRng,
        dropped: &mut Vec<QueueItem>,
    ) {
        if self
            .limit
            .admits(self.items.len(), self.queued_bytes, item.bytes)
        {
            self.queued_bytes += u64::from(item.bytes);
            self.items.push_back(item);
        } else {
            dropped.push(item);
        }
    }

    fn dequeue(&mut self, _now: SimTime) -> Option<QueueItem> {
        let item = self.items.pop_front()?;
        self.queued_bytes -= u64::from(item.bytes);
        Some(item)
    }

    fn len_packets(&self) -> usize {
        self.items.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queued_bytes
    }
}

/// An admitted packet of a [`ScheduledFifo`] that has not started transmission.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Waiting {
    /// When its transmission starts.
    pub(crate) start: SimTime,
    pub(crate) bytes: u32,
}

/// Drop-tail as a link whose departures are fixed at admission runs it (`net/link.rs`, the
/// scheduled FIFO): the same rule as [`DropTail`] (an arrival is admitted when
/// [`Limit::admits`] it beside the packets waiting, not counting the one in transmission), but
/// a FIFO that decides only at arrival never changes a departure once admitted, so the link
/// keeps, instead of the packets, when each admitted packet starts and its size, and trims
/// them lazily. The link's test `scheduled_fifo_matches_the_event_driven_queue` checks the
/// two forms against each other.
#[derive(Debug)]
pub(crate) struct ScheduledFifo {
    pub(crate) limit: Limit,
    /// Admitted packets that have not started transmission by the simulator's time, in order
    /// (start times increasing).
    pub(crate) waiting: Ring<Waiting>,
    pub(crate) waiting_bytes: u64,
    /// With admissions ahead of the simulator's time (`Link::admit_ahead`): how many of the
    /// first `waiting` entries have started by the latest admission time, and their bytes.
    /// Always 0 otherwise.
    pub(crate) started_ahead: usize,
    pub(crate) started_ahead_bytes: u64,
}

impl ScheduledFifo {
    pub(crate) fn new(limit: Limit) -> Self {
        ScheduledFifo {
            limit,
            waiting: Ring::new(),
            waiting_bytes: 0,
            started_ahead: 0,
            started_ahead_bytes: 0,
        }
    }

    /// Forgets the packets whose transmission has started by `now`.
    #[inline]
    pub(crate) fn trim(&mut self, now: SimTime) {
        while let Some(&w) = self.waiting.front() {
            if w.start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= w.bytes as u64;
            if self.started_ahead > 0 {
                self.started_ahead -= 1;
                self.started_ahead_bytes -= w.bytes as u64;
            }
        }
    }

    /// A packet of `bytes` admitted at `arrival` waits until `start`: it joins the waiting list
    /// and its whole wait goes into the queue integrals (packet·ns and byte·ns).
    #[inline]
    pub(crate) fn wait(
        &mut self,
        arrival: SimTime,
        start: SimTime,
        bytes: u32,
        area_packets_ns: &mut u128,
        area_bytes_ns: &mut u128,
    ) {
        self.waiting.push_back(Waiting { start, bytes });
        self.waiting_bytes += bytes as u64;
        let wait = (start.0 - arrival.0) as u128;
        *area_packets_ns += wait;
        *area_bytes_ns += wait * bytes as u128;
    }

    /// The packets and bytes waiting at `at`, which is at or after every earlier admission
    /// time and the simulator's time: the entries not started by then.
    #[inline]
    pub(crate) fn queued_at(&mut self, at: SimTime) -> (usize, u64) {
        while let Some(w) = self.waiting.get(self.started_ahead) {
            if w.start > at {
                break;
            }
            self.started_ahead += 1;
            self.started_ahead_bytes += w.bytes as u64;
        }
        (
            self.waiting.len() - self.started_ahead,
            self.waiting_bytes - self.started_ahead_bytes,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PacketId;
    use crate::rng::rng_from_seed;

    use crate::net::queue::test_item as item;

    /// Offers `item` and returns what was dropped.
    fn offer(q: &mut DropTail, it: QueueItem) -> Vec<QueueItem> {
        let mut rng = rng_from_seed(1);
        let mut dropped = Vec::new();
        q.enqueue(SimTime::ZERO, it, &mut rng, &mut dropped);
        dropped
    }

    #[test]
    fn packet_limit_drops_the_arrival_beyond_it() {
        let mut q = DropTail::new(Limit::Packets(3));
        for i in 0..3 {
            assert!(offer(&mut q, item(i, 0, 1000)).is_empty());
        }
        assert_eq!(q.len_packets(), 3);
        assert_eq!(offer(&mut q, item(3, 1, 40)), vec![item(3, 1, 40)]);
        assert_eq!(q.len_packets(), 3);
        assert_eq!(q.len_bytes(), 3000);
        // Room again after one departure.
        assert_eq!(q.dequeue(SimTime::ZERO), Some(item(0, 0, 1000)));
        assert!(offer(&mut q, item(4, 1, 40)).is_empty());
        assert_eq!(q.len_packets(), 3);
        assert_eq!(q.len_bytes(), 2040);
    }

    #[test]
    fn byte_limit_admits_exactly_up_to_the_limit() {
        let mut q = DropTail::new(Limit::Bytes(2500));
        assert!(offer(&mut q, item(0, 0, 1500)).is_empty());
        // 1500 + 1001 = 2501 > 2500: dropped.
        assert_eq!(offer(&mut q, item(1, 0, 1001)), vec![item(1, 0, 1001)]);
        // 1500 + 1000 = 2500: fits exactly.
        assert!(offer(&mut q, item(2, 0, 1000)).is_empty());
        assert_eq!(q.len_bytes(), 2500);
        // Even the smallest packet no longer fits.
        assert_eq!(offer(&mut q, item(3, 0, 1)), vec![item(3, 0, 1)]);
        assert_eq!(q.len_packets(), 2);
    }

    #[test]
    fn a_small_packet_fits_where_a_large_one_does_not() {
        let mut q = DropTail::new(Limit::Bytes(1540));
        assert!(offer(&mut q, item(0, 0, 1500)).is_empty());
        assert_eq!(offer(&mut q, item(1, 0, 1500)).len(), 1);
        assert!(offer(&mut q, item(2, 0, 40)).is_empty());
        assert_eq!(q.len_bytes(), 1540);
    }

    #[test]
    fn zero_limit_drops_everything() {
        let mut q = DropTail::new(Limit::Packets(0));
        assert_eq!(offer(&mut q, item(0, 0, 100)).len(), 1);
        assert!(q.is_empty());
    }

    #[test]
    fn fifo_order_and_byte_accounting() {
        let mut q = DropTail::new(Limit::Packets(100));
        let sizes = [40u32, 1500, 576, 1000, 52];
        for (i, &b) in sizes.iter().enumerate() {
            assert!(offer(&mut q, item(i as u32, (i % 2) as u32, b)).is_empty());
        }
        assert_eq!(
            q.len_bytes(),
            sizes.iter().map(|&b| u64::from(b)).sum::<u64>()
        );
        let order: Vec<u32> = q.iter().map(|it| it.packet.0).collect();
        assert_eq!(order, vec![0, 1, 2, 3, 4]);
        let mut remaining = q.len_bytes();
        for (i, &b) in sizes.iter().enumerate() {
            let out = q.dequeue(SimTime::ZERO).expect("queued");
            assert_eq!(out.packet, PacketId(i as u32));
            remaining -= u64::from(b);
            assert_eq!(q.len_bytes(), remaining);
        }
        assert_eq!(q.dequeue(SimTime::ZERO), None);
        assert!(q.is_empty());
        assert_eq!(q.len_bytes(), 0);
    }

    #[test]
    fn no_reallocation_after_warm_up() {
        let mut q = DropTail::new(Limit::Packets(16));
        let capacity = q.items.capacity();
        assert!(capacity >= 16);
        for round in 0..100u32 {
            for i in 0..20 {
                offer(&mut q, item(round * 20 + i, 0, 100));
            }
            while q.dequeue(SimTime::ZERO).is_some() {}
        }
        assert_eq!(q.items.capacity(), capacity);
    }

    #[test]
    fn a_limit_including_service_leaves_one_place_less_to_wait() {
        use crate::registry::Value;
        let given = |includes: bool| {
            SPEC.check(&[
                ("packets", Value::Integer(5)),
                ("limit_includes_service", Value::Bool(includes)),
            ])
            .unwrap()
        };
        assert_eq!(limit(&given(false)), Limit::Packets(5));
        assert_eq!(limit(&given(true)), Limit::Packets(4));
        let err = SPEC
            .check(&[
                ("packets", Value::Integer(1)),
                ("limit_includes_service", Value::Bool(true)),
            ])
            .unwrap_err();
        assert_eq!(err.param.as_deref(), Some("packets"));
        let err = SPEC
            .check(&[
                ("bytes", Value::Size(10_000)),
                ("limit_includes_service", Value::Bool(true)),
            ])
            .unwrap_err();
        assert_eq!(err.param.as_deref(), Some("limit_includes_service"));
    }
}
