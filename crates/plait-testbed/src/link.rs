//! The emulator's sans-IO core: link directions and the routes that chain them.
//!
//! A link direction is an exact FIFO server at the link's rate followed by a fixed
//! propagation delay (a virtual clock, as in the simulator's `net/link.rs`):
//!
//! ```text
//! start     = max(arrival, previous departure)
//! departure = start + 8 * bytes * 1e9 / rate      (integer ns, fractional remainder carried)
//! exit      = departure + delay
//! ```
//!
//! Packets wait in plait-core's [`DropTail`] (limit in packets or bytes, counting the waiting
//! packets, as ns-2 and the simulator do; a scenario's `limit_includes_service` is resolved
//! to that convention by the caller). A packet is dequeued from it when its service starts,
//! which the virtual clock knows in advance: the queue is advanced to `now` before each
//! arrival is offered. Loss models (plait-core's [`LossModel`]) are applied before the queue.
//!
//! [`Emulator`] moves packets hop by hop along routes in time order (an event heap keyed by
//! ideal time and insertion order), so a packet reaches its next link at its ideal exit time
//! from the previous one, whatever the binary's own lateness.

#![forbid(unsafe_code)]

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use plait_core::net::loss::LossModel;
use plait_core::net::queue::{DropTail, Limit, Queue, QueueDisc, QueueItem};
use plait_core::rng::{rng_from_seed, SimRng};
use plait_core::{FlowId, PacketId, Rate, SimTime};

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DropCause {
    /// The queue discipline dropped it (a full drop-tail buffer, RED).
    Queue,
    /// The link's random loss model.
    Loss,
    /// The link direction was down (a scenario `[[event]]`, docs/scenario.md: "While a link
    /// is down every packet that reaches it is dropped"; the packets queued, in service or
    /// propagating when it went down are lost too).
    Down,
}

/// Counters of one link direction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkStats {
    pub arrived_packets: u64,
    pub arrived_bytes: u64,
    /// Packets and bytes that finished their transmission by the time of the last
    /// [`LinkDirection::advance`] (admitted ones still queued or in service are not counted).
    pub departed_packets: u64,
    pub departed_bytes: u64,
    pub dropped_queue: u64,
    pub dropped_loss: u64,
    pub dropped_down: u64,
    /// Drops per flow index: `[queue, loss, down]`.
    pub dropped_by_flow: BTreeMap<u32, [u64; 3]>,
    /// Largest number of waiting packets and bytes (the packet in service not counted).
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
    /// Integral of the waiting packets over time (packet·ns), for the time-average queue.
    pub queue_packet_ns: u128,
    /// Time of the last change of the queue integral.
    pub integral_until: u64,
    /// Time the server spent transmitting up to the last [`LinkDirection::advance`] (ns).
    pub busy_ns: u64,
}

/// One direction of a link.
#[derive(Debug)]
pub struct LinkDirection {
    rate: Rate,
    delay: SimTime,
    queue: Queue,
    loss: Option<(LossModel, SimRng)>,
    /// The queue discipline's random stream (RED's early drops; drop-tail draws nothing).
    queue_rng: SimRng,
    /// Service start times of the waiting packets, in queue order.
    starts: VecDeque<u64>,
    /// Departure time and size of every admitted packet not yet fully transmitted, in order.
    pending: VecDeque<(u64, u32)>,
    /// When the server is free (the last departure).
    free_at: u64,
    /// Serialisation time of every admitted packet, the future included.
    scheduled_busy_ns: u64,
    /// Fractional serialisation remainder (units of 1/rate ns), carried across packets.
    carry: u64,
    /// False while a scenario event has the link direction down.
    up: bool,
    stats: LinkStats,
}

impl LinkDirection {
    pub fn new(rate: Rate, delay: SimTime, limit: Limit) -> Self {
        LinkDirection {
            rate,
            delay,
            queue: DropTail::new(limit).into(),
            loss: None,
            queue_rng: rng_from_seed(0),
            starts: VecDeque::new(),
            pending: VecDeque::new(),
            free_at: 0,
            scheduled_busy_ns: 0,
            carry: 0,
            up: true,
            stats: LinkStats::default(),
        }
    }

    /// Adds a random loss model, drawing from its own stream seeded by `seed`.
    pub fn with_loss(mut self, model: LossModel, seed: u64) -> Self {
        self.loss = Some((model, rng_from_seed(seed)));
        self
    }

    /// Replaces the drop-tail queue by another of plait-core's disciplines, drawing from its
    /// own stream seeded by `seed`. The service-start bookkeeping assumes a FIFO that drops
    /// nothing but the arrival (drop-tail, RED with ns-2's `drop_tail_`), which `handle_arrival`
    /// checks.
    pub fn with_queue(mut self, queue: Queue, seed: u64) -> Self {
        assert!(
            self.queue.is_empty() && self.starts.is_empty(),
            "set before any arrival"
        );
        self.queue = queue;
        self.queue_rng = rng_from_seed(seed);
        self
    }

    pub fn rate(&self) -> Rate {
        self.rate
    }

    pub fn delay(&self) -> SimTime {
        self.delay
    }

    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// Packets waiting at time `now` (after [`LinkDirection::advance`]).
    pub fn queue_packets(&self) -> usize {
        self.queue.len_packets()
    }

    /// Moves the queue to time `now`: every waiting packet whose service has started leaves
    /// the buffer, every packet transmitted by then is counted as departed; the queue
    /// integral and the busy time are brought up to date.
    pub fn advance(&mut self, now: u64) {
        while let Some(&(departure, bytes)) = self.pending.front() {
            if departure > now {
                break;
            }
            self.pending.pop_front();
            self.stats.departed_packets += 1;
            self.stats.departed_bytes += u64::from(bytes);
        }
        // The server is busy without a break from `now` to `free_at` (the packets in it are
        // back to back), so the time still to transmit is exactly `free_at - now`.
        self.stats.busy_ns = self.scheduled_busy_ns - self.free_at.saturating_sub(now);
        while let Some(&start) = self.starts.front() {
            if start > now {
                break;
            }
            self.integrate(start);
            self.starts.pop_front();
            self.queue.dequeue(SimTime(start));
        }
        self.integrate(now);
    }

    fn integrate(&mut self, t: u64) {
        if t > self.stats.integral_until {
            let dt = t - self.stats.integral_until;
            self.stats.queue_packet_ns += self.queue.len_packets() as u128 * dt as u128;
            self.stats.integral_until = t;
        }
    }

    /// A packet of `bytes` bytes of flow `flow` arrives at time `now`. Returns the time it
    /// leaves the far end of the link (departure + delay), or why it was dropped.
    pub fn handle_arrival(&mut self, now: u64, flow: u32, bytes: u32) -> Result<u64, DropCause> {
        self.advance(now);
        self.stats.arrived_packets += 1;
        self.stats.arrived_bytes += u64::from(bytes);
        if !self.up {
            return Err(self.count_drop(flow, DropCause::Down));
        }
        if let Some((model, rng)) = &mut self.loss {
            if model.should_drop(rng) {
                return Err(self.count_drop(flow, DropCause::Loss));
            }
        }
        let start = now.max(self.free_at);
        // Drop-tail is only consulted when the server is busy (an idle server takes the packet
        // at once, as the simulator's scheduled links do); an event-driven discipline such as
        // RED sees every arrival, idle or not, as in the simulator (plait-core net/link.rs,
        // `enqueue`) and ns-2, since its average queue is updated on each (Floyd & Jacobson
        // 1993, section 4).
        if start > now || !matches!(self.queue, Queue::DropTail(_)) {
            let mut dropped = Vec::new(); // never allocates unless something is dropped
            let item = QueueItem {
                packet: PacketId(0),
                flow: FlowId(flow),
                bytes,
            };
            self.queue
                .enqueue(SimTime(now), item, &mut self.queue_rng, &mut dropped);
            if !dropped.is_empty() {
                assert_eq!(dropped, [item], "the queue may only drop the arrival");
                return Err(self.count_drop(flow, DropCause::Queue));
            }
            if start > now {
                self.starts.push_back(start);
            } else {
                // Nothing waits and the server is free: the packet enters service now.
                self.queue.dequeue(SimTime(now));
            }
            self.stats.max_queue_packets = self
                .stats
                .max_queue_packets
                .max(self.queue.len_packets() as u64);
            self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.queue.len_bytes());
        }
        let tx = self.rate.tx_time_carry(u64::from(bytes), &mut self.carry).0;
        self.free_at = start + tx;
        self.scheduled_busy_ns += tx;
        self.pending.push_back((self.free_at, bytes));
        Ok(self.free_at + self.delay.0)
    }

    fn count_drop(&mut self, flow: u32, cause: DropCause) -> DropCause {
        let per_flow = self.stats.dropped_by_flow.entry(flow).or_default();
        match cause {
            DropCause::Queue => {
                self.stats.dropped_queue += 1;
                per_flow[0] += 1;
            }
            DropCause::Loss => {
                self.stats.dropped_loss += 1;
                per_flow[1] += 1;
            }
            DropCause::Down => {
                self.stats.dropped_down += 1;
                per_flow[2] += 1;
            }
        }
        cause
    }

    pub fn is_up(&self) -> bool {
        self.up
    }

    /// Takes the direction down at `at` (no arrival after `at` handled yet): the waiting
    /// packets leave the buffer, the transmission in progress is cut (it never departs and
    /// the server is free at `at`). The packets themselves are dropped by the
    /// [`Emulator`], which holds them (`count_drop` with [`DropCause::Down`]).
    fn take_down(&mut self, at: u64) {
        self.advance(at);
        while self
            .pending
            .back()
            .is_some_and(|&(departure, _)| departure > at)
        {
            self.pending.pop_back();
        }
        while self.queue.dequeue(SimTime(at)).is_some() {}
        self.starts.clear();
        if self.free_at > at {
            self.scheduled_busy_ns -= self.free_at - at;
            self.free_at = at;
        }
        self.stats.busy_ns = self.scheduled_busy_ns;
        self.up = false;
    }

    /// Brings the direction back up at `at`, idle and empty.
    fn bring_up(&mut self, at: u64) {
        self.advance(at);
        self.up = true;
    }
}

/// A packet delivered at the end of its route.
#[derive(Debug, PartialEq, Eq)]
pub struct Delivered<T> {
    pub payload: T,
    pub route: usize,
    /// The ideal time it leaves the last link.
    pub ideal: u64,
}

#[derive(Debug)]
struct InFlight<T> {
    payload: T,
    route: usize,
    /// Index of the hop the packet is crossing.
    hop: usize,
    flow: u32,
    bytes: u32,
}

/// Link directions, routes over them, and the packets in flight.
#[derive(Debug)]
pub struct Emulator<T> {
    links: Vec<LinkDirection>,
    routes: Vec<Vec<usize>>,
    /// (ideal time, insertion sequence, slot) of the next hop end of each packet in flight.
    events: BinaryHeap<Reverse<(u64, u64, usize)>>,
    slots: Vec<Option<InFlight<T>>>,
    free_slots: Vec<usize>,
    sequence: u64,
    /// Link-state changes not applied yet, in time order: (time, link direction, up).
    changes: VecDeque<(u64, usize, bool)>,
}

impl<T> Emulator<T> {
    /// `routes[r]` lists the link directions route `r` crosses, in order (non-empty, each an
    /// index into `links`).
    pub fn new(links: Vec<LinkDirection>, routes: Vec<Vec<usize>>) -> Self {
        for route in &routes {
            assert!(!route.is_empty(), "a route crosses at least one link");
            assert!(route.iter().all(|&l| l < links.len()), "route names a link");
        }
        Emulator {
            links,
            routes,
            events: BinaryHeap::new(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            sequence: 0,
            changes: VecDeque::new(),
        }
    }

    /// Takes link direction `link` down (`up` false) or back up at ideal time `at` (a scenario
    /// `[[event]]`); calls in time order. The change is applied before any arrival or hop end
    /// after `at` is handled (by `handle_packet`, `poll_delivery` and `advance_all`).
    pub fn schedule_link_state(&mut self, at: u64, link: usize, up: bool) {
        assert!(link < self.links.len(), "event names a link");
        assert!(
            self.changes.back().is_none_or(|&(t, _, _)| t <= at),
            "link-state changes in time order"
        );
        self.changes.push_back((at, link, up));
    }

    /// Applies the link-state changes due by `t`. A link going down loses every packet that
    /// has not left it by then (docs/scenario.md, `[[event]]`: waiting, in service, on the
    /// wire or propagating): their hop ends on this link after the change are removed.
    fn apply_changes(&mut self, t: u64) {
        while let Some(&(at, link, up)) = self.changes.front() {
            if at > t {
                break;
            }
            self.changes.pop_front();
            if up {
                if !self.links[link].is_up() {
                    self.links[link].bring_up(at);
                }
                continue;
            }
            if !self.links[link].is_up() {
                continue;
            }
            let (slots, routes) = (&self.slots, &self.routes);
            let mut lost = Vec::new();
            self.events.retain(|&Reverse((end, _, slot))| {
                let p = slots[slot].as_ref().expect("event of a live packet");
                let on_link = routes[p.route][p.hop] == link && end > at;
                if on_link {
                    lost.push(slot);
                }
                !on_link
            });
            self.links[link].take_down(at);
            for slot in lost {
                let p = self.slots[slot].take().expect("live");
                self.free_slots.push(slot);
                self.links[link].count_drop(p.flow, DropCause::Down);
            }
        }
    }

    pub fn links(&self) -> &[LinkDirection] {
        &self.links
    }

    /// Brings every link's queue integral up to `now` (before reading the statistics).
    pub fn advance_all(&mut self, now: u64) {
        self.apply_changes(now);
        for link in &mut self.links {
            link.advance(now);
        }
    }

    /// A packet enters route `route` at time `now`. Drops are counted on the link that
    /// dropped it and reported here.
    pub fn handle_packet(
        &mut self,
        now: u64,
        route: usize,
        flow: u32,
        bytes: u32,
        payload: T,
    ) -> Result<(), DropCause> {
        self.handle_packet_tapped(now, route, flow, bytes, payload, &mut |_, _, _| {})
    }

    /// As [`Emulator::handle_packet`]; `tap(link, departure, payload)` is called when the
    /// packet is admitted to a link (`departure`: the ideal end of its transmission there),
    /// for capturing what crosses a link.
    pub fn handle_packet_tapped(
        &mut self,
        now: u64,
        route: usize,
        flow: u32,
        bytes: u32,
        payload: T,
        tap: &mut impl FnMut(usize, u64, &T),
    ) -> Result<(), DropCause> {
        self.apply_changes(now);
        let first = self.routes[route][0];
        let exit = self.links[first].handle_arrival(now, flow, bytes)?;
        tap(first, exit - self.links[first].delay.0, &payload);
        let packet = InFlight {
            payload,
            route,
            hop: 0,
            flow,
            bytes,
        };
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.slots[slot] = Some(packet);
                slot
            }
            None => {
                self.slots.push(Some(packet));
                self.slots.len() - 1
            }
        };
        self.push_event(exit, slot);
        Ok(())
    }

    fn push_event(&mut self, at: u64, slot: usize) {
        self.events.push(Reverse((at, self.sequence, slot)));
        self.sequence += 1;
    }

    /// The ideal time of the next hop end, if any packet is in flight.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.events.peek().map(|Reverse((at, _, _))| *at)
    }

    /// The next packet whose route ends at or before `now`, in ideal-time order. Packets
    /// ending an inner hop by `now` are passed to their next link at their ideal time (drops
    /// there are counted on that link).
    pub fn poll_delivery(&mut self, now: u64) -> Option<Delivered<T>> {
        self.poll_delivery_tapped(now, &mut |_, _, _| {})
    }

    /// As [`Emulator::poll_delivery`], with the tap of [`Emulator::handle_packet_tapped`]
    /// called for every admission to an inner hop.
    pub fn poll_delivery_tapped(
        &mut self,
        now: u64,
        tap: &mut impl FnMut(usize, u64, &T),
    ) -> Option<Delivered<T>> {
        loop {
            // Link-state changes come before the hop ends after them, and before `now`.
            let next = self.events.peek().map(|&Reverse((at, _, _))| at);
            self.apply_changes(next.map_or(now, |at| at.min(now)));
            let &Reverse((at, _, slot)) = self.events.peek()?;
            if at > now {
                return None;
            }
            self.events.pop();
            let (route, hop, flow, bytes) = {
                let p = self.slots[slot].as_ref().expect("event of a live packet");
                (p.route, p.hop, p.flow, p.bytes)
            };
            if hop + 1 < self.routes[route].len() {
                let next = self.routes[route][hop + 1];
                match self.links[next].handle_arrival(at, flow, bytes) {
                    Ok(exit) => {
                        let packet = self.slots[slot].as_mut().expect("live");
                        tap(next, exit - self.links[next].delay.0, &packet.payload);
                        packet.hop += 1;
                        self.push_event(exit, slot);
                    }
                    Err(_) => {
                        self.slots[slot] = None;
                        self.free_slots.push(slot);
                    }
                }
                continue;
            }
            let packet = self.slots[slot].take().expect("live");
            self.free_slots.push(slot);
            return Some(Delivered {
                payload: packet.payload,
                route,
                ideal: at,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plait_core::net::loss::Periodic;

    const MB20: Rate = Rate::from_mbps(20);

    fn link(rate: Rate, delay_ns: u64, limit: Limit) -> LinkDirection {
        LinkDirection::new(rate, SimTime(delay_ns), limit)
    }

    #[test]
    fn departures_follow_the_virtual_clock() {
        // 1500 B at 20 Mb/s: 12000 bits / 2e7 = 600 us; delay 20 ms.
        let mut l = link(MB20, 20_000_000, Limit::Packets(10));
        assert_eq!(l.handle_arrival(0, 0, 1500), Ok(600_000 + 20_000_000));
        // Arrives while the first is in service: starts at 600 us.
        assert_eq!(
            l.handle_arrival(100_000, 0, 1500),
            Ok(1_200_000 + 20_000_000)
        );
        // Arrives after the link went idle: starts at its arrival.
        assert_eq!(
            l.handle_arrival(5_000_000, 0, 40),
            Ok(5_016_000 + 20_000_000)
        );
    }

    #[test]
    fn fractional_remainders_are_carried() {
        // 1 byte at 3 b/s = 8/3 s: 2_666_666_666 ns + 2/3 ns carried; three packets sum to
        // exactly 8 s, where per-packet rounding would lose 2 ns.
        let mut l = link(Rate::from_bps(3), 0, Limit::Packets(10));
        assert_eq!(l.handle_arrival(0, 0, 1), Ok(2_666_666_666));
        assert_eq!(l.handle_arrival(0, 0, 1), Ok(5_333_333_333));
        assert_eq!(l.handle_arrival(0, 0, 1), Ok(8_000_000_000));
    }

    #[test]
    fn packet_limit_counts_waiting_packets_only() {
        // Limit 2: one in service plus two waiting; the fourth back-to-back arrival is dropped.
        let mut l = link(MB20, 0, Limit::Packets(2));
        for _ in 0..3 {
            assert!(l.handle_arrival(0, 7, 1500).is_ok());
        }
        assert_eq!(l.queue_packets(), 2);
        assert_eq!(l.handle_arrival(0, 7, 1500), Err(DropCause::Queue));
        // At 600 us the second packet enters service: one place frees.
        assert_eq!(l.handle_arrival(599_999, 7, 1500), Err(DropCause::Queue));
        assert_eq!(l.handle_arrival(600_000, 7, 1500), Ok(2_400_000));
        let s = l.stats();
        assert_eq!((s.dropped_queue, s.dropped_loss), (2, 0));
        assert_eq!(s.dropped_by_flow.get(&7), Some(&[2, 0, 0]));
        // At 600 us only the first packet has finished; three are queued or in service.
        assert_eq!((s.arrived_packets, s.departed_packets), (6, 1));
        assert_eq!(s.max_queue_packets, 2);
        l.advance(2_400_000);
        assert_eq!(l.stats().departed_packets, 4);
        assert_eq!(l.stats().departed_bytes, 6000);
    }

    #[test]
    fn byte_limit_admits_up_to_the_limit() {
        // 3000 waiting bytes allowed: two 1500 B packets wait, a third does not fit, a 40 B
        // one does not either (3040 > 3000), until the head enters service.
        let mut l = link(MB20, 0, Limit::Bytes(3000));
        assert!(l.handle_arrival(0, 1, 1500).is_ok()); // in service
        assert!(l.handle_arrival(0, 1, 1500).is_ok());
        assert!(l.handle_arrival(0, 2, 1500).is_ok());
        assert_eq!(l.handle_arrival(0, 2, 1500), Err(DropCause::Queue));
        assert_eq!(l.handle_arrival(0, 3, 40), Err(DropCause::Queue));
        assert!(l.handle_arrival(600_000, 3, 40).is_ok());
        let s = l.stats();
        assert_eq!(s.max_queue_bytes, 3000);
        assert_eq!(s.dropped_by_flow.get(&2), Some(&[1, 0, 0]));
        assert_eq!(s.dropped_by_flow.get(&3), Some(&[1, 0, 0]));
    }

    #[test]
    fn loss_model_drops_before_the_queue_and_counts_the_cause() {
        // Periodic loss: every 3rd packet lost.
        let model = LossModel::from(Periodic::new(3, 0));
        let mut l = link(MB20, 0, Limit::Packets(100)).with_loss(model, 1);
        let results: Vec<_> = (0..6)
            .map(|i| l.handle_arrival(i * 1_000_000, 4, 1500))
            .collect();
        let lost = results
            .iter()
            .filter(|r| **r == Err(DropCause::Loss))
            .count();
        assert_eq!(lost, 2);
        assert_eq!(l.stats().dropped_loss, 2);
        assert_eq!(l.stats().dropped_by_flow.get(&4), Some(&[0, 2, 0]));
    }

    #[test]
    fn time_average_queue_is_integrated() {
        // Three back-to-back packets at t=0: two wait, one leaves the queue at 600 us, the
        // other at 1200 us. Integral = 2*600us + 1*600us = 1800 packet-us.
        let mut l = link(MB20, 0, Limit::Packets(10));
        for _ in 0..3 {
            l.handle_arrival(0, 0, 1500).unwrap();
        }
        // Busy time counts only what was transmitted: 1 ms into 1.8 ms of work.
        l.advance(1_000_000);
        assert_eq!(l.stats().busy_ns, 1_000_000);
        assert_eq!(l.stats().departed_packets, 1);
        l.advance(2_000_000);
        assert_eq!(l.stats().queue_packet_ns, 1_800_000);
        assert_eq!(l.stats().busy_ns, 1_800_000);
        assert_eq!(l.stats().departed_packets, 3);
    }

    #[test]
    fn emulator_chains_hops_at_ideal_times() {
        // Route 0 crosses a 20 Mb/s 1 ms link then a 10 Mb/s 2 ms link.
        let links = vec![
            link(MB20, 1_000_000, Limit::Packets(10)),
            link(Rate::from_mbps(10), 2_000_000, Limit::Packets(10)),
        ];
        let mut e = Emulator::new(links, vec![vec![0, 1], vec![1]]);
        e.handle_packet(0, 0, 0, 1500, "a").unwrap();
        // Hop 1 ends at 600 us + 1 ms.
        assert_eq!(e.poll_timeout(), Some(1_600_000));
        // Polled late (at 10 ms): hop 2 still starts at the ideal 1.6 ms: 1.2 ms + 2 ms.
        assert_eq!(e.poll_delivery(1_700_000), None);
        assert_eq!(e.poll_timeout(), Some(4_800_000));
        // A packet on route 1 arriving at 2 ms waits behind it until 2.8 ms.
        e.handle_packet(2_000_000, 1, 1, 1500, "b").unwrap();
        assert_eq!(
            e.poll_delivery(10_000_000),
            Some(Delivered {
                payload: "a",
                route: 0,
                ideal: 4_800_000
            })
        );
        assert_eq!(
            e.poll_delivery(10_000_000),
            Some(Delivered {
                payload: "b",
                route: 1,
                ideal: 6_000_000
            })
        );
        assert_eq!(e.poll_delivery(10_000_000), None);
        assert_eq!(e.poll_timeout(), None);
    }

    #[test]
    fn taps_see_each_admission_at_its_departure_time() {
        let links = vec![
            link(MB20, 1_000_000, Limit::Packets(10)),
            link(Rate::from_mbps(10), 2_000_000, Limit::Packets(10)),
        ];
        let mut e = Emulator::new(links, vec![vec![0, 1]]);
        let mut seen = Vec::new();
        e.handle_packet_tapped(0, 0, 0, 1500, 'a', &mut |l, t, p| seen.push((l, t, *p)))
            .unwrap();
        while e
            .poll_delivery_tapped(u64::MAX, &mut |l, t, p| seen.push((l, t, *p)))
            .is_some()
        {}
        // Link 0: transmitted by 600 us; link 1: from 1.6 ms, 1.2 ms long.
        assert_eq!(seen, vec![(0, 600_000, 'a'), (1, 2_800_000, 'a')]);
    }

    #[test]
    fn emulator_drops_on_an_inner_hop_are_counted_there() {
        let links = vec![
            link(MB20, 0, Limit::Packets(10)),
            link(Rate::from_mbps(1), 0, Limit::Packets(1)),
        ];
        let mut e = Emulator::new(links, vec![vec![0, 1]]);
        for i in 0..4 {
            e.handle_packet(0, 0, 9, 1500, i).unwrap();
        }
        let mut delivered = Vec::new();
        while let Some(d) = e.poll_delivery(u64::MAX) {
            delivered.push(d.payload);
        }
        // 2nd link: one in service, one waiting; packets 2 and 3 reach it at 1.8 / 2.4 ms
        // while packet 0 is still in service (12 ms) and packet 1 waits: both dropped.
        assert_eq!(delivered, vec![0, 1]);
        assert_eq!(e.links()[1].stats().dropped_queue, 2);
        assert_eq!(e.links()[0].stats().dropped_queue, 0);
    }

    /// plait-core's RED (ns-2 semantics) with thresholds 5 and 15 packets, as the scenario
    /// `queue = { kind = "red", min_th = 5, max_th = 15, packets = 1000, w_q = ... }` builds it.
    fn red_link(w_q: f64, seed: u64) -> LinkDirection {
        use plait_core::net::queue::{LinkInfo, QueueKind};
        use plait_core::registry::{Configured, Value};
        let red = Configured::<QueueKind>::new(
            "red",
            &[
                ("min_th", Value::Number(5.0)),
                ("max_th", Value::Number(15.0)),
                ("w_q", Value::Number(w_q)),
                ("packets", Value::Integer(1000)),
            ],
        )
        .unwrap()
        .build(LinkInfo {
            rate: MB20,
            default_hold: SimTime(0),
        });
        link(MB20, 0, Limit::Packets(1000)).with_queue(red, seed)
    }

    /// Twice the link's rate for `n` packets (1500 B every 300 us at 20 Mb/s): for each
    /// arrival, the waiting packets it found and whether it was admitted.
    fn overload(l: &mut LinkDirection, n: u64) -> Vec<(usize, bool)> {
        (0..n)
            .map(|i| {
                l.advance(i * 300_000);
                let q = l.queue_packets();
                (q, l.handle_arrival(i * 300_000, 1, 1500).is_ok())
            })
            .collect()
    }

    #[test]
    fn red_drops_begin_above_min_th_on_a_sustained_overload() {
        // w_q = 1: the average is the queue each arrival finds, so the thresholds read directly
        // (Floyd & Jacobson 1993, section 4: avg <- (1 - w_q) avg + w_q q).
        let mut l = red_link(1.0, 7);
        let seen = overload(&mut l, 2000);
        let first = seen.iter().position(|&(_, ok)| !ok).expect("RED drops");
        // Below min_th nothing is dropped; p_b = max_p (avg - min_th) / (max_th - min_th) is 0
        // at min_th itself, and with gentle every arrival is dropped from 2 max_th = 30 on.
        assert!(seen[..first].iter().all(|&(q, ok)| ok && q <= 30));
        assert!(
            seen[first].0 > 5,
            "first drop with {} waiting",
            seen[first].0
        );
        assert!(seen.iter().all(|&(q, ok)| ok || q > 5));
        // The queue is held between the thresholds' reach, far below the 1000-packet buffer.
        assert!(seen.iter().all(|&(q, _)| q <= 31));
        let s = l.stats();
        let drops = seen.iter().filter(|&&(_, ok)| !ok).count() as u64;
        assert_eq!((s.dropped_queue, s.dropped_loss), (drops, 0));
        assert_eq!(s.dropped_by_flow.get(&1), Some(&[drops, 0, 0]));
        // Offered twice the rate: about half the arrivals are dropped, all early or forced.
        assert!((900..=1100).contains(&drops), "{drops} drops");
        // The average (ns-2's w_q = 0.002 default) lags: early drops begin later, still above
        // min_th, and well before the buffer fills.
        let mut slow = red_link(0.002, 7);
        let seen = overload(&mut slow, 2000);
        let first = seen.iter().position(|&(_, ok)| !ok).expect("RED drops");
        assert!(
            seen[first].0 > 5 && seen[first].0 < 1000,
            "{:?}",
            seen[first]
        );
        assert_eq!(
            slow.stats().dropped_queue as usize,
            seen.iter().filter(|s| !s.1).count()
        );
    }

    #[test]
    fn red_early_drops_are_deterministic_for_a_seed() {
        let run = |seed| overload(&mut red_link(1.0, seed), 2000);
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }

    #[test]
    fn red_sees_arrivals_to_an_idle_link() {
        // An arrival to an idle server goes through RED (enqueue, then service at once), as in
        // the simulator; it waits nowhere and leaves after its transmission time.
        let mut l = red_link(0.002, 1);
        assert_eq!(l.handle_arrival(0, 0, 1500), Ok(600_000));
        assert_eq!(l.queue_packets(), 0);
        assert_eq!(l.handle_arrival(100_000, 0, 1500), Ok(1_200_000));
        assert_eq!(l.queue_packets(), 1);
        l.advance(600_000);
        assert_eq!(l.queue_packets(), 0);
        assert_eq!(l.stats().max_queue_packets, 1);
    }

    #[test]
    fn a_link_taken_down_loses_what_it_holds_and_drops_arrivals_until_up() {
        // 20 Mb/s, 10 ms: five back-to-back 1500 B packets at 0 leave the server at 0.6, 1.2,
        // ..., 3.0 ms and the link 10 ms later. Down at 1.0 ms: the first (propagating), the
        // second (in service) and the three waiting are lost (docs/scenario.md, `[[event]]`).
        let mut e = Emulator::new(
            vec![link(MB20, 10_000_000, Limit::Packets(10))],
            vec![vec![0]],
        );
        e.schedule_link_state(1_000_000, 0, false);
        e.schedule_link_state(5_000_000, 0, true);
        for i in 0..5 {
            e.handle_packet(0, 0, 3, 1500, i).unwrap();
        }
        // Arrivals while down are dropped with cause Down.
        assert_eq!(
            e.handle_packet(2_000_000, 0, 3, 1500, 5),
            Err(DropCause::Down)
        );
        // Back up at 5 ms, idle and empty: the next packet is served at once.
        e.handle_packet(5_000_000, 0, 3, 1500, 6).unwrap();
        let mut delivered = Vec::new();
        while let Some(d) = e.poll_delivery(u64::MAX) {
            delivered.push((d.payload, d.ideal));
        }
        assert_eq!(delivered, vec![(6, 5_600_000 + 10_000_000)]);
        e.advance_all(20_000_000);
        let s = e.links()[0].stats();
        assert_eq!((s.dropped_down, s.dropped_queue, s.dropped_loss), (6, 0, 0));
        assert_eq!(s.dropped_by_flow.get(&3), Some(&[0, 0, 6]));
        // Departed: the first before the cut, the one after; the cut one never departs, and
        // the server was busy 0 - 1 ms and 5 - 5.6 ms.
        assert_eq!(s.departed_packets, 2);
        assert_eq!(s.busy_ns, 1_000_000 + 600_000);
        assert_eq!(e.links()[0].queue_packets(), 0);
    }

    #[test]
    fn packets_that_left_the_link_before_it_went_down_arrive() {
        // No delay: the first packet has left the link at 0.6 ms, before the 1 ms failure; on a
        // two-hop route it goes on over the second link, which stays up.
        let links = vec![
            link(MB20, 0, Limit::Packets(10)),
            link(MB20, 0, Limit::Packets(10)),
        ];
        let mut e = Emulator::new(links, vec![vec![0, 1]]);
        e.schedule_link_state(1_000_000, 0, false);
        for i in 0..3 {
            e.handle_packet(0, 0, 1, 1500, i).unwrap();
        }
        let mut delivered = Vec::new();
        while let Some(d) = e.poll_delivery(u64::MAX) {
            delivered.push((d.payload, d.ideal));
        }
        assert_eq!(delivered, vec![(0, 1_200_000)]);
        assert_eq!(e.links()[0].stats().dropped_down, 2);
        assert_eq!(e.links()[1].stats().dropped_down, 0);
        assert!(!e.links()[0].is_up() && e.links()[1].is_up());
    }
}
