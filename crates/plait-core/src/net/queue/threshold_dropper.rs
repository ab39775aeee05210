//! The threshold-dropper: the validation queue of E. Altman, D. Barman, B. Tuffin and
//! M. Vojnovic, "Parallel TCP Sockets: Simple Model, Throughput and Validation", INFOCOM 2006
//! (MSR-TR-2005-130), §V.D "Loss policies that conform to ONE".
//!
//! The fluid model assumes that exactly one connection is signalled at each congestion event
//! (assumption ONE). §V.D enforces it with this queue: "The queue buffer length is set to
//! virtually infinite value. The dropping is based on a finite positive threshold T_h and loss
//! policy described as follows. Consider the system from a time at which there are at most T_h
//! queued packets. The first packet arrival that exceeds threshold is dropped and the
//! corresponding connection is declared selected. The selected connection remains selected for
//! an interval of τ time units, where τ is set to a factor of the mean round-trip time. This
//! process repeats. No packets are dropped during this period. [...] It also permits
//! implementation of various loss policies."
//!
//! As implemented here:
//! - the buffer never overflows (no limit);
//! - the dropper is *armed* from a time at which at most `threshold` (T_h) packets are queued;
//!   armed, the first arrival that would make the queue exceed T_h (it finds T_h queued) is a
//!   congestion event: one connection is selected and signalled, and the dropper disarms;
//! - the selection lasts `hold` (τ) from the event, during which no other packet is dropped;
//!   "this process repeats": once τ has passed, the dropper re-arms only at a time at which at
//!   most T_h packets are queued again, so a queue that stays above T_h after τ is left alone
//!   until it falls back ([`Rearm::Threshold`], the default). With the unbounded buffer this
//!   rule can stop for good: when the one signalled connection's decrease does not bring the
//!   queue back to T_h (others still in slow start, or its halving smaller than what the
//!   others add during the feedback delay), no further event comes and the queue grows without
//!   bound. [`Rearm::Hold`] (`rearm = "hold"`) re-arms as soon as τ has passed, the other
//!   reading of "this process repeats";
//! - which connection is selected is the loss policy (§I and §III define them on the fluid
//!   model, at the congestion event):
//!   - [`DropPolicy::FirstArrival`]: the connection of the arrival, whose packet is dropped
//!     (§V.D's own wording);
//!   - [`DropPolicy::RateIndependent`]: "a connection is chosen with fixed probability", "each
//!     connection selected equally likely" (§I, §III): uniformly among every connection that
//!     has sent through the queue, whether or not it has a packet queued at that moment;
//!   - [`DropPolicy::LargestRate`]: "a connection with largest rate just before the congestion
//!     event is chosen" (§I): the connection that brought the most bytes to the queue in the
//!     rate window before the event (one mean propagation RTT when built from a scenario, so a
//!     window-limited connection's count is its window; ties to the lowest flow id);
//! - the selected connection is signalled by dropping its most recently queued packet (the
//!   arrival itself when the arrival is its packet: the packet it would have lost had its own
//!   arrival crossed the threshold), or, when it has none queued, its next arrival while it is
//!   still selected (within τ of the event). A selected connection that sends nothing during τ
//!   (idle, or waiting for a retransmission timeout) is not signalled; such events are counted
//!   ([`ThresholdDropper::unsignalled`]).
//!
//! The paper does not say at packet level which packet its policies drop, nor how it measured
//! the rates; those two choices are ours.

use std::collections::VecDeque;

use rand::Rng;

use super::{DropPolicy, QueueDisc, QueueItem, QueueKind};
use crate::ids::FlowId;
use crate::registry::{AlgorithmSpec, Param, Scalar};
use crate::rng::SimRng;
use crate::time::SimTime;

/// The registry declaration of the threshold-dropper. The buffer is unbounded.
pub const SPEC: AlgorithmSpec<QueueKind> = AlgorithmSpec {
    name: "threshold_dropper",
    summary: "signals one connection when an arrival would take the queue above threshold, \
              then holds, and re-arms once the queue is back at the threshold \
              (Altman et al. 2006 §V.D)",
    params: &[
        Param::integer(
            "threshold",
            "T_h: an arrival that would make more than threshold packets queued is a \
             congestion event",
        )
        .unit("packets"),
        Param::duration(
            "hold",
            "tau: how long a connection stays selected after a congestion event, during which \
             no other packet is dropped",
        )
        .unset(
            "the mean propagation round-trip time of the flows whose data crosses the \
                 link direction (100 ms if none does)",
        ),
        Param::choice(
            "policy",
            DropPolicy::NAMES,
            "which connection is signalled: the arrival's (first_arrival), one drawn \
             uniformly among every flow seen (rate_independent), or the one that sent the \
             most bytes in the last mean propagation RTT (largest_rate)",
        )
        .default(Scalar::Name("first_arrival")),
        Param::choice(
            "rearm",
            Rearm::NAMES,
            "when the next congestion event may happen: after the hold, once at most \
             threshold packets are queued (threshold, §V.D as written), or as soon as the \
             hold is over (hold)",
        )
        .default(Scalar::Name("threshold")),
    ],
    finish: None,
    build: |params, link| {
        let policy = DropPolicy::from_name(params.choice("policy")).expect("a declared policy");
        let hold = params.opt_duration("hold").unwrap_or(link.default_hold);
        // The rate window is the mean propagation RTT whatever the hold: a connection's rate
        // is its window per round trip.
        let rearm = Rearm::from_name(params.choice("rearm")).expect("a declared rule");
        ThresholdDropper::new(params.integer("threshold"), hold, policy)
            .with_rate_window(link.default_hold)
            .with_rearm(rearm)
            .into()
    },
};

/// When the dropper re-arms after a congestion event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rearm {
    /// Once the hold is over and at most `threshold` packets are queued (§V.D: "Consider the
    /// system from a time at which there are at most T_h queued packets [...] This process
    /// repeats").
    Threshold,
    /// As soon as the hold is over, whatever the queue.
    Hold,
}

impl Rearm {
    /// The scenario names, in the order of [`Rearm::from_name`].
    pub const NAMES: &'static [&'static str] = &["threshold", "hold"];

    pub fn from_name(name: &str) -> Option<Rearm> {
        match name {
            "threshold" => Some(Rearm::Threshold),
            "hold" => Some(Rearm::Hold),
            _ => None,
        }
    }
}

/// What the dropper knows of one flow.
#[derive(Clone, Copy, Debug, Default)]
struct FlowState {
    /// Packets and bytes queued.
    packets: u64,
    bytes: u64,
    /// Bytes that arrived within the rate window (kept for the largest-rate policy only).
    recent_bytes: u64,
    /// Whether the flow has sent a packet through the queue.
    seen: bool,
}

/// The threshold-dropper queue.
#[derive(Clone, Debug)]
pub struct ThresholdDropper {
    threshold: u64,
    hold: SimTime,
    rate_window: SimTime,
    policy: DropPolicy,
    rearm: Rearm,
    items: VecDeque<QueueItem>,
    queued_bytes: u64,
    /// Indexed by `FlowId`, grown on demand.
    flows: Vec<FlowState>,
    /// Every flow seen, in the order first seen (the rate-independent draw is among these).
    seen: Vec<FlowId>,
    /// Arrivals within the rate window, oldest first: (time, flow, bytes). Largest-rate only.
    recent: VecDeque<(SimTime, FlowId, u32)>,
    /// Whether the next arrival that would exceed the threshold is a congestion event.
    armed: bool,
    /// End of the selection (hold) of the latest congestion event.
    held_until: SimTime,
    /// The selected flow, while its signal is still owed (its next arrival before
    /// `held_until` is dropped).
    owed: Option<FlowId>,
    /// The flow selected at the latest congestion event.
    selected: Option<FlowId>,
    congestion_events: u64,
    unsignalled: u64,
}

impl ThresholdDropper {
    /// A dropper with threshold T_h = `threshold` packets, hold τ = `hold` and `policy`. The
    /// largest-rate policy's rate window is `hold` until [`Self::with_rate_window`] sets it.
    pub fn new(threshold: u64, hold: SimTime, policy: DropPolicy) -> Self {
        ThresholdDropper {
            threshold,
            hold,
            rate_window: hold,
            policy,
            rearm: Rearm::Threshold,
            items: VecDeque::new(),
            queued_bytes: 0,
            flows: Vec::new(),
            seen: Vec::new(),
            recent: VecDeque::new(),
            // The queue starts empty, at most T_h packets: armed.
            armed: true,
            held_until: SimTime::ZERO,
            owed: None,
            selected: None,
            congestion_events: 0,
            unsignalled: 0,
        }
    }

    /// Sets the window over which the largest-rate policy measures each flow's rate.
    pub fn with_rate_window(mut self, window: SimTime) -> Self {
        self.rate_window = window;
        self
    }

    /// Sets when the dropper re-arms ([`Rearm::Threshold`] unless set).
    pub fn with_rearm(mut self, rearm: Rearm) -> Self {
        self.rearm = rearm;
        self
    }

    pub fn rearm(&self) -> Rearm {
        self.rearm
    }

    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    pub fn hold(&self) -> SimTime {
        self.hold
    }

    pub fn rate_window(&self) -> SimTime {
        self.rate_window
    }

    pub fn policy(&self) -> DropPolicy {
        self.policy
    }

    /// The flow selected at the latest congestion event, if any happened.
    pub fn selected(&self) -> Option<FlowId> {
        self.selected
    }

    /// Congestion events so far (one connection selected at each).
    pub fn congestion_events(&self) -> u64 {
        self.congestion_events
    }

    /// Congestion events whose selected flow sent nothing while selected, so went unsignalled.
    pub fn unsignalled(&self) -> u64 {
        self.unsignalled
    }

    /// Whether an arrival at `now` that would take the queue above the threshold would be a
    /// congestion event.
    pub fn is_armed(&self, now: SimTime) -> bool {
        self.armed
            || (now >= self.held_until
                && (self.rearm == Rearm::Hold || self.items.len() as u64 <= self.threshold))
    }

    /// Packets of `flow` queued.
    pub fn flow_packets(&self, flow: FlowId) -> u64 {
        self.flows.get(flow.index()).map_or(0, |f| f.packets)
    }

    /// Bytes of `flow` queued.
    pub fn flow_bytes(&self, flow: FlowId) -> u64 {
        self.flows.get(flow.index()).map_or(0, |f| f.bytes)
    }

    /// Bytes of `flow` that arrived within the rate window (largest-rate policy only).
    pub fn flow_recent_bytes(&self, flow: FlowId) -> u64 {
        self.flows.get(flow.index()).map_or(0, |f| f.recent_bytes)
    }

    /// The flows that have sent through the queue, in the order first seen.
    pub fn seen_flows(&self) -> &[FlowId] {
        &self.seen
    }

    /// The queued packets, head first.
    pub fn iter(&self) -> impl Iterator<Item = &QueueItem> + '_ {
        self.items.iter()
    }

    /// Records an arrival: the flow is known from now on, and (largest-rate) its bytes count
    /// in the rate window (now - rate_window, now].
    fn note_arrival(&mut self, now: SimTime, item: QueueItem) {
        let index = item.flow.index();
        if index >= self.flows.len() {
            self.flows.resize(index + 1, FlowState::default());
        }
        if !self.flows[index].seen {
            self.flows[index].seen = true;
            self.seen.push(item.flow);
        }
        if self.policy == DropPolicy::LargestRate {
            while let Some(&(t, flow, bytes)) = self.recent.front() {
                if t.saturating_add(self.rate_window) > now {
                    break;
                }
                self.flows[flow.index()].recent_bytes -= u64::from(bytes);
                self.recent.pop_front();
            }
            self.recent.push_back((now, item.flow, item.bytes));
            self.flows[index].recent_bytes += u64::from(item.bytes);
        }
    }

    /// Re-arms at a time `now` at which `len` packets are queued, if the hold is over and
    /// (as §V.D is written) `len` is at most the threshold ("from a time at which there are
    /// at most T_h queued packets").
    fn maybe_rearm(&mut self, now: SimTime, len: usize) {
        if !self.armed
            && now >= self.held_until
            && (self.rearm == Rearm::Hold || len as u64 <= self.threshold)
        {
            self.armed = true;
        }
    }

    fn push(&mut self, item: QueueItem) {
        let entry = &mut self.flows[item.flow.index()];
        entry.packets += 1;
        entry.bytes += u64::from(item.bytes);
        self.queued_bytes += u64::from(item.bytes);
        self.items.push_back(item);
    }

    /// Updates the accounting for `item`, which has just left `items`.
    fn forget(&mut self, item: QueueItem) {
        self.queued_bytes -= u64::from(item.bytes);
        let entry = &mut self.flows[item.flow.index()];
        entry.packets -= 1;
        entry.bytes -= u64::from(item.bytes);
    }

    /// Removes and returns the most recently queued packet of `flow`, which must have one.
    fn remove_latest_of(&mut self, flow: FlowId) -> QueueItem {
        let position = self
            .items
            .iter()
            .rposition(|it| it.flow == flow)
            .expect("the flow has a queued packet");
        let item = self.items.remove(position).expect("position is in range");
        self.forget(item);
        item
    }

    /// The seen flow with the most bytes in the rate window, lowest id among equals.
    fn largest_rate_flow(&self) -> FlowId {
        let mut best = self.seen[0];
        for &flow in &self.seen[1..] {
            let (bytes, best_bytes) = (self.flow_recent_bytes(flow), self.flow_recent_bytes(best));
            if bytes > best_bytes || (bytes == best_bytes && flow < best) {
                best = flow;
            }
        }
        best
    }
}

impl QueueDisc for ThresholdDropper {
    fn enqueue(
        &mut self,
        now: SimTime,
        item: QueueItem,
        rng: &mut SimRng,
        dropped: &mut Vec<QueueItem>,
    ) {
        self.note_arrival(now, item);
        // The signal still owed to the flow selected at the latest event: its first arrival
        // while selected. The selection ends with the hold.
        if let Some(flow) = self.owed {
            if now >= self.held_until {
                self.owed = None;
                self.unsignalled += 1;
            } else if flow == item.flow {
                self.owed = None;
                dropped.push(item);
                return;
            }
        }
        let len = self.items.len();
        self.maybe_rearm(now, len);
        // "The first packet arrival that exceeds threshold": with it, more than T_h queued.
        if !self.armed || (len as u64) < self.threshold {
            self.push(item);
            return;
        }
        self.armed = false;
        self.held_until = now.saturating_add(self.hold);
        self.congestion_events += 1;
        let flow = match self.policy {
            DropPolicy::FirstArrival => item.flow,
            DropPolicy::RateIndependent => self.seen[rng.gen_range(0..self.seen.len())],
            DropPolicy::LargestRate => self.largest_rate_flow(),
        };
        self.selected = Some(flow);
        if flow == item.flow {
            dropped.push(item);
            return;
        }
        self.push(item);
        if self.flow_packets(flow) > 0 {
            let victim = self.remove_latest_of(flow);
            dropped.push(victim);
        } else {
            self.owed = Some(flow);
        }
    }

    fn dequeue(&mut self, now: SimTime) -> Option<QueueItem> {
        let item = self.items.pop_front()?;
        self.forget(item);
        self.maybe_rearm(now, self.items.len());
        Some(item)
    }

    fn len_packets(&self) -> usize {
        self.items.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queued_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;
    use proptest::prelude::*;

    use crate::net::queue::test_item as item;

    fn offer(
        q: &mut ThresholdDropper,
        now: SimTime,
        it: QueueItem,
        rng: &mut SimRng,
    ) -> Vec<QueueItem> {
        let mut dropped = Vec::new();
        q.enqueue(now, it, rng, &mut dropped);
        dropped
    }

    /// Recomputes the per-flow accounting from the queued packets and the rate window, and
    /// compares.
    fn assert_consistent(q: &ThresholdDropper) {
        let mut packets = vec![0u64; q.flows.len()];
        let mut bytes = vec![0u64; q.flows.len()];
        let mut recent = vec![0u64; q.flows.len()];
        for it in &q.items {
            packets[it.flow.index()] += 1;
            bytes[it.flow.index()] += u64::from(it.bytes);
        }
        for &(_, flow, b) in &q.recent {
            recent[flow.index()] += u64::from(b);
        }
        assert_eq!(q.queued_bytes, bytes.iter().sum::<u64>());
        for (f, entry) in q.flows.iter().enumerate() {
            assert_eq!(entry.packets, packets[f], "flow {f} packets");
            assert_eq!(entry.bytes, bytes[f], "flow {f} bytes");
            assert_eq!(entry.recent_bytes, recent[f], "flow {f} recent bytes");
            let listed = q.seen.iter().filter(|&&s| s.index() == f).count();
            assert_eq!(listed, usize::from(entry.seen), "flow {f} seen");
            if packets[f] > 0 {
                assert!(entry.seen);
            }
        }
    }

    /// Altman et al. §V.D: "The first packet arrival that exceeds threshold is dropped": with
    /// T_h = 3 queued, the arrival that would be the fourth is the congestion event.
    #[test]
    fn regression_the_arrival_that_would_exceed_the_threshold_is_dropped() {
        let mut q = ThresholdDropper::new(3, SimTime::ZERO, DropPolicy::FirstArrival);
        let mut rng = rng_from_seed(11);
        for i in 0..3 {
            assert!(offer(&mut q, SimTime::ZERO, item(i, 0, 100), &mut rng).is_empty());
        }
        assert_eq!(
            offer(&mut q, SimTime::ZERO, item(3, 1, 100), &mut rng),
            vec![item(3, 1, 100)]
        );
        assert_eq!(q.len_packets(), 3);
    }

    /// §V.D: "Consider the system from a time at which there are at most T_h queued packets
    /// [...] This process repeats": after the hold the dropper waits for the queue to fall
    /// back to T_h before the next congestion event.
    #[test]
    fn regression_rearms_only_once_the_queue_is_back_at_the_threshold() {
        let hold = SimTime::from_millis(10);
        let mut q = ThresholdDropper::new(2, hold, DropPolicy::FirstArrival);
        let mut rng = rng_from_seed(12);
        let ms = SimTime::from_millis;
        // Up to the first drop (the event), at 1 ms.
        let mut i = 0;
        while offer(&mut q, ms(1), item(i, 0, 100), &mut rng).is_empty() {
            i += 1;
        }
        while q.len_packets() < 22 {
            i += 1;
            assert!(offer(&mut q, ms(5), item(i, 0, 100), &mut rng).is_empty());
        }
        // The hold is over (from 11 ms) but the queue never fell back to 2: no drop.
        for i in 100..107 {
            assert!(offer(&mut q, ms(20), item(i, 1, 100), &mut rng).is_empty());
        }
        // Down to 3 queued: still above the threshold, still no drop.
        while q.len_packets() > 3 {
            q.dequeue(ms(21));
        }
        assert!(offer(&mut q, ms(21), item(107, 1, 100), &mut rng).is_empty());
        // Down to 2 = T_h: armed; the arrival that would be the third is dropped.
        while q.len_packets() > 2 {
            q.dequeue(ms(22));
        }
        assert!(q.is_armed(ms(22)));
        assert_eq!(
            offer(&mut q, ms(23), item(108, 1, 100), &mut rng),
            vec![item(108, 1, 100)]
        );
    }

    /// §I, §III: rate-independent means "a connection is chosen with fixed probability", each
    /// "equally likely": every flow using the link, not only those with packets queued at the
    /// event. Five flows have sent; only flow 0 has packets queued at the event; each flow is
    /// signalled a fifth of the time, a flow with nothing queued at its next arrival.
    #[test]
    fn regression_rate_independent_draws_among_every_flow_not_only_the_queued_ones() {
        let mut rng = rng_from_seed(13);
        let ms = SimTime::from_millis;
        let trials = 10_000;
        let mut hits = [0u32; 5];
        for _ in 0..trials {
            let mut q = ThresholdDropper::new(2, ms(50), DropPolicy::RateIndependent);
            for flow in 0..5 {
                assert!(offer(&mut q, ms(0), item(flow, flow, 1000), &mut rng).is_empty());
                q.dequeue(ms(0));
            }
            let mut dropped = Vec::new();
            for i in 5..8 {
                dropped.extend(offer(&mut q, ms(1), item(i, 0, 1000), &mut rng));
            }
            // Then one arrival of every other flow, within the hold.
            for flow in 1..5 {
                dropped.extend(offer(&mut q, ms(2), item(10 + flow, flow, 1000), &mut rng));
            }
            assert_eq!(dropped.len(), 1, "{dropped:?}");
            hits[dropped[0].flow.index()] += 1;
        }
        // Binomial(10000, 1/5): sd = 40; allow 5 sd.
        for (flow, &h) in hits.iter().enumerate() {
            assert!(
                (f64::from(h) - 2000.0).abs() < 200.0,
                "flow {flow}: {h} hits ({hits:?})"
            );
        }
    }

    /// §I: largest-rate chooses "a connection with largest rate just before the congestion
    /// event", not the one with most bytes queued: flow 0 sent 10 kB in the window but has
    /// nothing queued; flow 1 has 3 kB queued. Flow 0 is signalled, at its next arrival.
    #[test]
    fn regression_largest_rate_selects_the_fastest_sender_not_the_biggest_backlog() {
        let ms = SimTime::from_millis;
        let mut q = ThresholdDropper::new(2, ms(100), DropPolicy::LargestRate);
        let mut rng = rng_from_seed(14);
        for i in 0..10 {
            assert!(offer(&mut q, ms(u64::from(i)), item(i, 0, 1000), &mut rng).is_empty());
            q.dequeue(ms(u64::from(i)));
        }
        assert!(offer(&mut q, ms(50), item(20, 1, 1500), &mut rng).is_empty());
        assert!(offer(&mut q, ms(50), item(21, 1, 1500), &mut rng).is_empty());
        // The arrival that would be the third: the event. Flow 0 has nothing queued.
        assert!(offer(&mut q, ms(51), item(22, 2, 100), &mut rng).is_empty());
        assert_eq!(q.len_packets(), 3);
        // Flow 1's next packet goes through; flow 0's is the signal.
        assert!(offer(&mut q, ms(55), item(23, 1, 1500), &mut rng).is_empty());
        assert_eq!(
            offer(&mut q, ms(60), item(24, 0, 1000), &mut rng),
            vec![item(24, 0, 1000)]
        );
    }

    #[test]
    fn the_buffer_is_unbounded_while_held() {
        let mut q = ThresholdDropper::new(0, SimTime::from_secs(1), DropPolicy::FirstArrival);
        let mut rng = rng_from_seed(2);
        // T_h = 0: the first arrival would exceed it.
        assert_eq!(
            offer(&mut q, SimTime::ZERO, item(0, 0, 1500), &mut rng).len(),
            1
        );
        for i in 1..10_001 {
            assert!(offer(&mut q, SimTime::from_millis(1), item(i, 0, 1500), &mut rng).is_empty());
        }
        assert_eq!(q.len_packets(), 10_000);
        assert_eq!(q.len_bytes(), 10_000 * 1500);
    }

    #[test]
    fn hold_suppresses_drops_then_rearms_at_the_threshold() {
        let hold = SimTime::from_millis(10);
        let mut q = ThresholdDropper::new(2, hold, DropPolicy::FirstArrival);
        let mut rng = rng_from_seed(3);
        for i in 0..2 {
            assert!(offer(&mut q, SimTime::ZERO, item(i, 0, 100), &mut rng).is_empty());
        }
        let t0 = SimTime::from_millis(5);
        assert_eq!(offer(&mut q, t0, item(2, 0, 100), &mut rng).len(), 1);
        assert_eq!(q.congestion_events(), 1);
        assert!(!q.is_armed(t0 + hold - SimTime::from_nanos(1)));
        // During the hold every arrival is admitted; the queue is kept at T_h by departures.
        for (k, i) in (3..50).enumerate() {
            let now = t0 + SimTime::from_micros(200 * k as u64 + 1);
            assert!(now < t0 + hold);
            assert!(offer(&mut q, now, item(i, 0, 100), &mut rng).is_empty());
            q.dequeue(now);
        }
        let last = t0 + hold - SimTime::from_nanos(1);
        assert!(offer(&mut q, last, item(50, 0, 100), &mut rng).is_empty());
        q.dequeue(last);
        // Exactly `hold` after the event, with T_h queued, the dropper is armed again.
        assert!(q.is_armed(t0 + hold));
        assert_eq!(
            offer(&mut q, t0 + hold, item(51, 1, 100), &mut rng),
            vec![item(51, 1, 100)]
        );
        assert_eq!(q.selected(), Some(FlowId(1)));
        // And held again.
        assert!(offer(&mut q, t0 + hold, item(52, 0, 100), &mut rng).is_empty());
        assert_eq!(q.congestion_events(), 2);
    }

    #[test]
    fn no_drop_below_threshold_even_when_armed() {
        let mut q = ThresholdDropper::new(5, SimTime::ZERO, DropPolicy::LargestRate);
        let mut rng = rng_from_seed(4);
        for i in 0..1000u32 {
            assert!(offer(
                &mut q,
                SimTime::from_micros(u64::from(i)),
                item(i, i % 3, 500),
                &mut rng
            )
            .is_empty());
            if q.len_packets() >= 5 {
                q.dequeue(SimTime::from_micros(u64::from(i)));
            }
        }
        assert_eq!(q.congestion_events(), 0);
    }

    #[test]
    fn first_arrival_drops_the_arrival() {
        let mut q = ThresholdDropper::new(4, SimTime::from_millis(100), DropPolicy::FirstArrival);
        let mut rng = rng_from_seed(5);
        for i in 0..4 {
            assert!(offer(&mut q, SimTime::ZERO, item(i, 0, 100), &mut rng).is_empty());
        }
        assert_eq!(
            offer(&mut q, SimTime::ZERO, item(5, 7, 40), &mut rng),
            vec![item(5, 7, 40)]
        );
        assert_eq!(q.selected(), Some(FlowId(7)));
        assert_eq!(q.flow_packets(FlowId(7)), 0);
        assert_eq!(q.flow_packets(FlowId(0)), 4);
        assert_consistent(&q);
    }

    #[test]
    fn largest_rate_drops_the_latest_packet_of_the_fastest_flow() {
        let mut q = ThresholdDropper::new(6, SimTime::from_millis(100), DropPolicy::LargestRate);
        let mut rng = rng_from_seed(6);
        // Flow 0: 3 x 100 B; flow 1: 1 x 1500 B; flow 2: 2 x 100 B.
        for (packet, flow, bytes) in [(0, 0, 100), (1, 1, 1500), (2, 2, 100), (3, 0, 100)] {
            assert!(offer(&mut q, SimTime::ZERO, item(packet, flow, bytes), &mut rng).is_empty());
        }
        for (packet, flow) in [(4, 2), (5, 0)] {
            assert!(offer(&mut q, SimTime::ZERO, item(packet, flow, 100), &mut rng).is_empty());
        }
        // The arrival of flow 2 would be the seventh: flow 1 sent the most bytes (1500 > 300 =
        // 300), so its packet 1 goes, from the middle of the queue.
        assert_eq!(
            offer(&mut q, SimTime::ZERO, item(6, 2, 100), &mut rng),
            vec![item(1, 1, 1500)]
        );
        assert_eq!(q.selected(), Some(FlowId(1)));
        let order: Vec<u32> = q.iter().map(|it| it.packet.0).collect();
        assert_eq!(order, vec![0, 2, 3, 4, 5, 6]);
        assert_consistent(&q);
    }

    #[test]
    fn largest_rate_ties_go_to_the_lowest_flow_and_the_window_forgets() {
        let ms = SimTime::from_millis;
        let mut q = ThresholdDropper::new(2, ms(10), DropPolicy::LargestRate);
        let mut rng = rng_from_seed(9);
        // Flow 0 sends 20 kB at 0-19 ms, all served at once.
        for i in 0..20 {
            assert!(offer(&mut q, ms(u64::from(i)), item(i, 0, 1000), &mut rng).is_empty());
            q.dequeue(ms(u64::from(i)));
        }
        assert_eq!(q.flow_recent_bytes(FlowId(0)), 10_000);
        // At 100 ms the window (90, 100] ms has forgotten flow 0: flows 2, 1 and 3 sent 100 B
        // each; the tie goes to flow 1, whose latest (and only) packet is dropped.
        assert!(offer(&mut q, ms(100), item(30, 2, 100), &mut rng).is_empty());
        assert!(offer(&mut q, ms(100), item(31, 1, 100), &mut rng).is_empty());
        assert_eq!(
            offer(&mut q, ms(100), item(32, 3, 100), &mut rng),
            vec![item(31, 1, 100)]
        );
        assert_eq!(q.flow_recent_bytes(FlowId(0)), 0);
        assert_consistent(&q);
    }

    #[test]
    fn rate_independent_signals_the_latest_packet_of_the_drawn_flow() {
        // Flows 0, 1, 2 hold 10, 1 and 3 packets; the arrival is from flow 3. Each of the four
        // flows is hit a quarter of the time, always its latest packet.
        let mut rng = rng_from_seed(7);
        let trials = 20_000;
        let mut hits = [0u32; 4];
        for _ in 0..trials {
            let mut q = ThresholdDropper::new(14, SimTime::ZERO, DropPolicy::RateIndependent);
            let mut packet = 0;
            for (flow, n) in [(0u32, 10u32), (1, 1), (2, 3)] {
                for _ in 0..n {
                    let it = item(packet, flow, 100 * (flow + 1));
                    assert!(offer(&mut q, SimTime::ZERO, it, &mut rng).is_empty());
                    packet += 1;
                }
            }
            let dropped = offer(&mut q, SimTime::ZERO, item(packet, 3, 100), &mut rng);
            assert_eq!(dropped.len(), 1);
            let victim = dropped[0];
            let latest = match victim.flow.0 {
                0 => 9,
                1 => 10,
                2 => 13,
                _ => packet,
            };
            assert_eq!(victim.packet.0, latest);
            hits[victim.flow.index()] += 1;
            assert_consistent(&q);
        }
        // Binomial(20000, 1/4): sd = 61; allow 5 sd.
        for (flow, &h) in hits.iter().enumerate() {
            assert!(
                (f64::from(h) - 5000.0).abs() < 306.0,
                "flow {flow}: {h} hits ({hits:?})"
            );
        }
    }

    #[test]
    fn rearm_hold_rearms_after_the_hold_whatever_the_queue() {
        let ms = SimTime::from_millis;
        let mut q =
            ThresholdDropper::new(2, ms(10), DropPolicy::FirstArrival).with_rearm(Rearm::Hold);
        let mut rng = rng_from_seed(15);
        let mut i = 0;
        while offer(&mut q, ms(1), item(i, 0, 100), &mut rng).is_empty() {
            i += 1;
        }
        for k in 0..20 {
            assert!(offer(&mut q, ms(5), item(100 + k, 0, 100), &mut rng).is_empty());
        }
        // The hold ends at 11 ms; 22 packets queued, and the next arrival is an event.
        assert!(offer(&mut q, ms(10), item(200, 1, 100), &mut rng).is_empty());
        assert_eq!(
            offer(&mut q, ms(11), item(201, 1, 100), &mut rng),
            vec![item(201, 1, 100)]
        );
        assert_eq!(q.congestion_events(), 2);
    }

    #[test]
    fn a_selected_flow_that_sends_nothing_during_the_hold_goes_unsignalled() {
        let ms = SimTime::from_millis;
        let mut q = ThresholdDropper::new(1, ms(10), DropPolicy::LargestRate);
        let mut rng = rng_from_seed(10);
        for i in 0..5 {
            assert!(offer(&mut q, ms(0), item(i, 0, 1000), &mut rng).is_empty());
            q.dequeue(ms(0));
        }
        assert!(offer(&mut q, ms(1), item(5, 1, 100), &mut rng).is_empty());
        // The event selects flow 0, which has nothing queued.
        assert!(offer(&mut q, ms(2), item(6, 1, 100), &mut rng).is_empty());
        assert_eq!(q.selected(), Some(FlowId(0)));
        while q.dequeue(ms(3)).is_some() {}
        // Flow 0's first packet after the hold is not the old event's signal.
        assert!(offer(&mut q, ms(12), item(7, 0, 1000), &mut rng).is_empty());
        assert_eq!(q.unsignalled(), 1);
        // But the dropper re-armed (empty queue after the hold): the next is an event.
        assert_eq!(offer(&mut q, ms(13), item(8, 0, 1000), &mut rng).len(), 1);
        assert_eq!(q.congestion_events(), 2);
    }

    #[test]
    fn accounting_survives_drops_from_the_middle() {
        let mut q = ThresholdDropper::new(3, SimTime::from_micros(3), DropPolicy::LargestRate)
            .with_rate_window(SimTime::from_micros(20));
        let mut rng = rng_from_seed(8);
        let mut next = 0u32;
        for round in 0..200u32 {
            for k in 0..4 {
                let flow = (round + k) % 5;
                offer(
                    &mut q,
                    SimTime::from_micros(u64::from(next)),
                    item(next, flow, 40 + 97 * flow),
                    &mut rng,
                );
                next += 1;
                assert_consistent(&q);
            }
            // Four arrivals a round against three departures, then five: the queue builds up
            // and drains below the threshold in turn.
            let departures = if round % 8 < 4 { 3 } else { 5 };
            for _ in 0..departures {
                q.dequeue(SimTime::from_micros(u64::from(next)));
                assert_consistent(&q);
            }
        }
        assert!(q.congestion_events() > 10);
        while q.dequeue(SimTime::from_micros(u64::from(next))).is_some() {
            assert_consistent(&q);
        }
        assert_eq!(q.len_bytes(), 0);
        assert_eq!(q.seen_flows().len(), 5);
    }

    fn policy() -> impl Strategy<Value = DropPolicy> {
        prop_oneof![
            Just(DropPolicy::FirstArrival),
            Just(DropPolicy::RateIndependent),
            Just(DropPolicy::LargestRate),
        ]
    }

    proptest! {
        /// Assumption ONE as §V.D enforces it, checked from outside: events only when an
        /// arrival would exceed T_h, at least the hold apart, each after the queue was seen at
        /// most T_h once the previous hold was over; at most one drop per event, within its
        /// hold, of the selected flow.
        #[test]
        fn one_signal_per_congestion_event(
            threshold in 0u64..8,
            hold_us in 0u64..500,
            policy in policy(),
            rearm_hold in any::<bool>(),
            seed in any::<u64>(),
            ops in proptest::collection::vec(
                (any::<bool>(), 0u32..6, 1u32..1500, 0u64..100),
                1..300,
            ),
        ) {
            let hold = SimTime::from_micros(hold_us);
            let rearm = if rearm_hold { Rearm::Hold } else { Rearm::Threshold };
            let mut q = ThresholdDropper::new(threshold, hold, policy).with_rearm(rearm);
            let mut rng = rng_from_seed(seed);
            let mut now = SimTime::ZERO;
            let mut last_event: Option<SimTime> = None;
            // Whether the queue was at most T_h at some time after the latest hold ended.
            let mut fell_back = true;
            let mut drops_since_event = 0;
            for (i, &(arrive, flow, bytes, dt_us)) in ops.iter().enumerate() {
                now += SimTime::from_micros(dt_us);
                let held = last_event.is_some_and(|t| now < t + hold);
                if !held && (rearm_hold || q.len_packets() as u64 <= threshold) {
                    fell_back = true;
                }
                if arrive {
                    let before = q.len_packets();
                    let events = q.congestion_events();
                    let dropped = offer(&mut q, now, item(i as u32, flow, bytes), &mut rng);
                    prop_assert!(dropped.len() <= 1);
                    prop_assert_eq!(q.len_packets() + dropped.len(), before + 1);
                    if q.congestion_events() > events {
                        prop_assert!(before as u64 >= threshold);
                        prop_assert!(!held && fell_back);
                        last_event = Some(now);
                        fell_back = false;
                        drops_since_event = 0;
                    } else {
                        prop_assert!(held || !fell_back || (before as u64) < threshold);
                    }
                    if let Some(victim) = dropped.first() {
                        drops_since_event += 1;
                        prop_assert_eq!(drops_since_event, 1);
                        prop_assert_eq!(Some(victim.flow), q.selected());
                        let t = last_event.expect("a drop follows an event");
                        prop_assert!(now == t || now < t + hold);
                    }
                } else {
                    q.dequeue(now);
                    let held = last_event.is_some_and(|t| now < t + hold);
                    if !held && (rearm_hold || q.len_packets() as u64 <= threshold) {
                        fell_back = true;
                    }
                }
                assert_consistent(&q);
            }
        }
    }
}
