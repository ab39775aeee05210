//! The threshold-dropper: the validation queue of E. Altman, D. Barman, B. Tuffin and
//! M. Vojnovic, "Parallel TCP Sockets: Simple Model, Throughput and Validation", INFOCOM 2006
//! (MSR-TR-2005-130), §V.D "Loss policies that conform to ONE".
//!
//! The fluid model assumes that exactly one connection is signalled at each congestion event
//! (assumption ONE). The paper enforces it with a queue whose buffer is virtually infinite: "the
//! first packet arrival that exceeds threshold is dropped and the corresponding connection is
//! declared selected"; the connection stays selected for an interval `tau`, a factor of the mean
//! round-trip time, during which no packet is dropped; then the process repeats. The paper
//! reports runs with a rate-independent and a largest-rate policy without saying, at packet
//! level, which packet those policies drop.
//!
//! Our reading:
//! - an arrival triggers a drop when it finds more than `threshold` packets queued and at least
//!   `hold` (= `tau`) has passed since the previous drop; the first drop may happen at any time,
//!   and re-arming does not wait for the queue to fall back to the threshold;
//! - the buffer never overflows (no limit);
//! - [`DropPolicy::FirstArrival`]: the arrival itself is dropped, which hits flows roughly in
//!   proportion to their arrival rates;
//! - [`DropPolicy::RateIndependent`]: the arrival is queued first, then a flow is drawn
//!   uniformly among the flows with packets queued (so the arrival's flow is a candidate, with
//!   the same chance as any other) and that flow's most recently queued packet is dropped, which
//!   is the arrival itself when its own flow is drawn. The latest packet is the one the flow
//!   would have lost had its packet been the arrival that crossed the threshold, and it is found
//!   by a short scan from the tail;
//! - [`DropPolicy::LargestRate`]: the arrival is queued first, then the flow with the most bytes
//!   queued (ties to the lowest flow id) loses its most recently queued packet. Bytes queued
//!   stand in for the rate: behind a common bottleneck a flow's share of the backlog tracks its
//!   share of the arrivals.
//!
//! (The reference note `ratebased_aggregate.md` §5.6, unverified, suggests suppressing drops
//! "until the episode ends"; the paper suppresses them for the time `tau`, which is `hold`.)

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
    summary: "drops when an arrival finds more than threshold packets queued, then holds \
              (Altman et al. 2006 §V.D)",
    params: &[
        Param::integer(
            "threshold",
            "queue length above which an arrival triggers a drop",
        )
        .unit("packets"),
        Param::duration(
            "hold",
            "quiet time after a drop, during which nothing is dropped",
        )
        .unset(
            "the mean propagation round-trip time of the flows whose data crosses the \
                 link direction (100 ms if none does)",
        ),
        Param::choice(
            "policy",
            DropPolicy::NAMES,
            "which packet is dropped: the arrival (first_arrival), the latest packet of a \
             flow drawn uniformly among those queued (rate_independent), or of the flow with \
             the most bytes queued (largest_rate)",
        )
        .default(Scalar::Name("first_arrival")),
    ],
    finish: None,
    build: |params, link| {
        let policy = DropPolicy::from_name(params.choice("policy")).expect("a declared policy");
        let hold = params.opt_duration("hold").unwrap_or(link.default_hold);
        ThresholdDropper::new(params.integer("threshold"), hold, policy).into()
    },
};

/// What one flow has queued, and where it sits in the active set.
#[derive(Clone, Copy, Debug, Default)]
struct FlowBacklog {
    packets: u64,
    bytes: u64,
    /// Position in `active`; meaningful only while `packets > 0`.
    slot: usize,
}

/// The threshold-dropper queue.
#[derive(Clone, Debug)]
pub struct ThresholdDropper {
    threshold: u64,
    hold: SimTime,
    policy: DropPolicy,
    items: VecDeque<QueueItem>,
    queued_bytes: u64,
    /// Indexed by `FlowId`, grown on demand.
    backlog: Vec<FlowBacklog>,
    /// Flows with at least one packet queued, in no particular order (uniform pick in O(1)).
    active: Vec<FlowId>,
    /// No drop before this time.
    armed_at: SimTime,
    /// The flow whose packet was dropped last.
    selected: Option<FlowId>,
}

impl ThresholdDropper {
    pub fn new(threshold: u64, hold: SimTime, policy: DropPolicy) -> Self {
        ThresholdDropper {
            threshold,
            hold,
            policy,
            items: VecDeque::new(),
            queued_bytes: 0,
            backlog: Vec::new(),
            active: Vec::new(),
            armed_at: SimTime::ZERO,
            selected: None,
        }
    }

    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    pub fn hold(&self) -> SimTime {
        self.hold
    }

    pub fn policy(&self) -> DropPolicy {
        self.policy
    }

    /// The flow selected by the latest drop, if any drop happened.
    pub fn selected(&self) -> Option<FlowId> {
        self.selected
    }

    /// Whether an arrival at `now` that finds more than `threshold` packets would cause a drop.
    pub fn is_armed(&self, now: SimTime) -> bool {
        now >= self.armed_at
    }

    /// Packets of `flow` queued.
    pub fn flow_packets(&self, flow: FlowId) -> u64 {
        self.backlog.get(flow.index()).map_or(0, |b| b.packets)
    }

    /// Bytes of `flow` queued.
    pub fn flow_bytes(&self, flow: FlowId) -> u64 {
        self.backlog.get(flow.index()).map_or(0, |b| b.bytes)
    }

    /// The flows with packets queued, in no particular order.
    pub fn active_flows(&self) -> &[FlowId] {
        &self.active
    }

    /// The queued packets, head first.
    pub fn iter(&self) -> impl Iterator<Item = &QueueItem> + '_ {
        self.items.iter()
    }

    fn push(&mut self, item: QueueItem) {
        let index = item.flow.index();
        if index >= self.backlog.len() {
            self.backlog.resize(index + 1, FlowBacklog::default());
        }
        let entry = &mut self.backlog[index];
        if entry.packets == 0 {
            entry.slot = self.active.len();
            self.active.push(item.flow);
        }
        entry.packets += 1;
        entry.bytes += u64::from(item.bytes);
        self.queued_bytes += u64::from(item.bytes);
        self.items.push_back(item);
    }

    /// Updates the accounting for `item`, which has just left `items`.
    fn forget(&mut self, item: QueueItem) {
        self.queued_bytes -= u64::from(item.bytes);
        let entry = &mut self.backlog[item.flow.index()];
        entry.packets -= 1;
        entry.bytes -= u64::from(item.bytes);
        if entry.packets == 0 {
            let slot = entry.slot;
            self.active.swap_remove(slot);
            if let Some(&moved) = self.active.get(slot) {
                self.backlog[moved.index()].slot = slot;
            }
        }
    }

    /// Removes and returns the most recently queued packet of `flow`, which must have one.
    fn remove_latest_of(&mut self, flow: FlowId) -> QueueItem {
        let position = self
            .items
            .iter()
            .rposition(|it| it.flow == flow)
            .expect("an active flow has a queued packet");
        let item = self.items.remove(position).expect("position is in range");
        self.forget(item);
        item
    }

    /// The active flow with the most bytes queued, lowest id among equals.
    fn largest_flow(&self) -> FlowId {
        let mut best = self.active[0];
        for &flow in &self.active[1..] {
            let (bytes, best_bytes) = (self.flow_bytes(flow), self.flow_bytes(best));
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
        if self.items.len() as u64 <= self.threshold || !self.is_armed(now) {
            self.push(item);
            return;
        }
        let victim = match self.policy {
            DropPolicy::FirstArrival => item,
            DropPolicy::RateIndependent => {
                self.push(item);
                let flow = self.active[rng.gen_range(0..self.active.len())];
                self.remove_latest_of(flow)
            }
            DropPolicy::LargestRate => {
                self.push(item);
                let flow = self.largest_flow();
                self.remove_latest_of(flow)
            }
        };
        self.selected = Some(victim.flow);
        self.armed_at = now.saturating_add(self.hold);
        dropped.push(victim);
    }

    fn dequeue(&mut self, _now: SimTime) -> Option<QueueItem> {
        let item = self.items.pop_front()?;
        self.forget(item);
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

    /// Recomputes the per-flow accounting from the queued packets and compares.
    fn assert_consistent(q: &ThresholdDropper) {
        let mut packets = vec![0u64; q.backlog.len()];
        let mut bytes = vec![0u64; q.backlog.len()];
        for it in &q.items {
            packets[it.flow.index()] += 1;
            bytes[it.flow.index()] += u64::from(it.bytes);
        }
        assert_eq!(q.queued_bytes, bytes.iter().sum::<u64>());
        let mut active_expected: Vec<FlowId> = (0..packets.len())
            .filter(|&f| packets[f] > 0)
            .map(FlowId::from_index)
            .collect();
        let mut active = q.active.clone();
        active.sort();
        active_expected.sort();
        assert_eq!(active, active_expected);
        for (f, entry) in q.backlog.iter().enumerate() {
            assert_eq!(entry.packets, packets[f], "flow {f} packets");
            assert_eq!(entry.bytes, bytes[f], "flow {f} bytes");
            if entry.packets > 0 {
                assert_eq!(q.active[entry.slot], FlowId::from_index(f), "flow {f} slot");
            }
        }
    }

    #[test]
    fn drops_exactly_when_more_than_threshold_are_queued() {
        let mut q = ThresholdDropper::new(3, SimTime::ZERO, DropPolicy::FirstArrival);
        let mut rng = rng_from_seed(1);
        // Arrivals finding 0, 1, 2, 3 packets are admitted.
        for i in 0..4 {
            assert!(offer(&mut q, SimTime::ZERO, item(i, 0, 100), &mut rng).is_empty());
        }
        // The next finds 4 > 3.
        assert_eq!(
            offer(&mut q, SimTime::ZERO, item(4, 1, 100), &mut rng),
            vec![item(4, 1, 100)]
        );
        assert_eq!(q.selected(), Some(FlowId(1)));
        assert_eq!(q.len_packets(), 4);
        // Back to exactly 3 queued: admitted again.
        q.dequeue(SimTime::ZERO);
        assert!(offer(&mut q, SimTime::ZERO, item(5, 0, 100), &mut rng).is_empty());
    }

    #[test]
    fn the_buffer_is_unbounded_while_held() {
        let mut q = ThresholdDropper::new(0, SimTime::from_secs(1), DropPolicy::FirstArrival);
        let mut rng = rng_from_seed(2);
        assert!(offer(&mut q, SimTime::ZERO, item(0, 0, 1500), &mut rng).is_empty());
        assert_eq!(
            offer(&mut q, SimTime::ZERO, item(1, 0, 1500), &mut rng).len(),
            1
        );
        for i in 2..10_002 {
            assert!(offer(&mut q, SimTime::from_millis(1), item(i, 0, 1500), &mut rng).is_empty());
        }
        assert_eq!(q.len_packets(), 10_001);
        assert_eq!(q.len_bytes(), 10_001 * 1500);
    }

    #[test]
    fn hold_suppresses_drops_then_rearms() {
        let hold = SimTime::from_millis(10);
        let mut q = ThresholdDropper::new(2, hold, DropPolicy::FirstArrival);
        let mut rng = rng_from_seed(3);
        for i in 0..3 {
            offer(&mut q, SimTime::ZERO, item(i, 0, 100), &mut rng);
        }
        let t0 = SimTime::from_millis(5);
        assert_eq!(offer(&mut q, t0, item(3, 0, 100), &mut rng).len(), 1);
        assert!(!q.is_armed(t0 + SimTime::from_nanos(10_000_000 - 1)));
        // Every arrival during the hold is admitted, however long the queue.
        for (k, i) in (4..50).enumerate() {
            let now = t0 + SimTime::from_micros(200 * k as u64 + 1);
            assert!(now < t0 + hold);
            assert!(offer(&mut q, now, item(i, 0, 100), &mut rng).is_empty());
        }
        let last = t0 + hold - SimTime::from_nanos(1);
        assert!(offer(&mut q, last, item(50, 0, 100), &mut rng).is_empty());
        // Exactly `hold` after the drop the queue is armed again.
        assert!(q.is_armed(t0 + hold));
        assert_eq!(
            offer(&mut q, t0 + hold, item(51, 1, 100), &mut rng),
            vec![item(51, 1, 100)]
        );
        // And held again.
        assert!(offer(&mut q, t0 + hold, item(52, 0, 100), &mut rng).is_empty());
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
            if q.len_packets() > 5 {
                q.dequeue(SimTime::ZERO);
            }
        }
    }

    #[test]
    fn first_arrival_drops_the_arrival() {
        let mut q = ThresholdDropper::new(4, SimTime::from_millis(100), DropPolicy::FirstArrival);
        let mut rng = rng_from_seed(5);
        for i in 0..5 {
            q.push(item(i, 0, 100));
        }
        assert_eq!(
            offer(&mut q, SimTime::ZERO, item(5, 7, 40), &mut rng),
            vec![item(5, 7, 40)]
        );
        assert_eq!(q.flow_packets(FlowId(7)), 0);
        assert_eq!(q.flow_packets(FlowId(0)), 5);
        assert_consistent(&q);
    }

    #[test]
    fn largest_rate_drops_the_latest_packet_of_the_biggest_backlog() {
        let mut q = ThresholdDropper::new(4, SimTime::from_millis(100), DropPolicy::LargestRate);
        let mut rng = rng_from_seed(6);
        // Flow 0: 3 x 100 B; flow 1: 1 x 1500 B; flow 2: 2 x 100 B.
        q.push(item(0, 0, 100));
        q.push(item(1, 1, 1500));
        q.push(item(2, 2, 100));
        q.push(item(3, 0, 100));
        q.push(item(4, 2, 100));
        q.push(item(5, 0, 100));
        // Arrival of flow 2: flow 1 has most bytes (1500 > 300 = 300), so packet 1 goes, from
        // the middle of the queue.
        assert_eq!(
            offer(&mut q, SimTime::ZERO, item(6, 2, 100), &mut rng),
            vec![item(1, 1, 1500)]
        );
        assert_eq!(q.selected(), Some(FlowId(1)));
        let order: Vec<u32> = q.iter().map(|it| it.packet.0).collect();
        assert_eq!(order, vec![0, 2, 3, 4, 5, 6]);
        assert_consistent(&q);
        // Now flows 0 and 2 tie at 300 B: the lowest id loses its latest packet (5).
        let mut q2 = q.clone();
        q2.armed_at = SimTime::ZERO;
        assert_eq!(
            offer(&mut q2, SimTime::ZERO, item(7, 3, 300), &mut rng),
            vec![item(5, 0, 100)]
        );
        assert_consistent(&q2);
        // The arrival counts: a big arrival makes its own flow the largest and is dropped.
        let mut q3 = q.clone();
        q3.armed_at = SimTime::ZERO;
        assert_eq!(
            offer(&mut q3, SimTime::ZERO, item(8, 4, 9000), &mut rng),
            vec![item(8, 4, 9000)]
        );
        assert_consistent(&q3);
    }

    #[test]
    fn rate_independent_picks_flows_uniformly_whatever_their_backlog() {
        // Flows 0, 1, 2 hold 10, 1 and 3 packets; the arrival is from flow 3. Each of the four
        // flows should be hit a quarter of the time.
        let mut rng = rng_from_seed(7);
        let trials = 20_000;
        let mut hits = [0u32; 4];
        for _ in 0..trials {
            let mut q = ThresholdDropper::new(5, SimTime::ZERO, DropPolicy::RateIndependent);
            let mut packet = 0;
            for (flow, n) in [(0u32, 10u32), (1, 1), (2, 3)] {
                for _ in 0..n {
                    q.push(item(packet, flow, 100 * (flow + 1)));
                    packet += 1;
                }
            }
            let dropped = offer(&mut q, SimTime::ZERO, item(packet, 3, 100), &mut rng);
            assert_eq!(dropped.len(), 1);
            let victim = dropped[0];
            // The victim is the latest packet of its flow.
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
    fn accounting_survives_drops_from_the_middle() {
        let mut q = ThresholdDropper::new(3, SimTime::ZERO, DropPolicy::LargestRate);
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
            q.dequeue(SimTime::ZERO);
            assert_consistent(&q);
        }
        while q.dequeue(SimTime::ZERO).is_some() {
            assert_consistent(&q);
        }
        assert!(q.active_flows().is_empty());
        assert_eq!(q.len_bytes(), 0);
    }

    fn policy() -> impl Strategy<Value = DropPolicy> {
        prop_oneof![
            Just(DropPolicy::FirstArrival),
            Just(DropPolicy::RateIndependent),
            Just(DropPolicy::LargestRate),
        ]
    }

    proptest! {
        #[test]
        fn per_flow_accounting_matches_the_queue(
            threshold in 0u64..8,
            hold_us in 0u64..500,
            policy in policy(),
            seed in any::<u64>(),
            ops in proptest::collection::vec(
                (any::<bool>(), 0u32..6, 1u32..1500, 0u64..100),
                1..300,
            ),
        ) {
            let mut q = ThresholdDropper::new(threshold, SimTime::from_micros(hold_us), policy);
            let mut rng = rng_from_seed(seed);
            let mut now = SimTime::ZERO;
            let mut last_drop: Option<SimTime> = None;
            for (i, &(arrive, flow, bytes, dt_us)) in ops.iter().enumerate() {
                now += SimTime::from_micros(dt_us);
                if arrive {
                    let before = q.len_packets();
                    let dropped = offer(&mut q, now, item(i as u32, flow, bytes), &mut rng);
                    prop_assert!(dropped.len() <= 1);
                    prop_assert_eq!(q.len_packets() + dropped.len(), before + 1);
                    if !dropped.is_empty() {
                        prop_assert!(before as u64 > threshold);
                        if let Some(t) = last_drop {
                            prop_assert!(now >= t + SimTime::from_micros(hold_us));
                        }
                        last_drop = Some(now);
                    } else if before as u64 > threshold {
                        // Only the hold can spare an arrival above the threshold.
                        let t = last_drop.expect("a hold follows a drop");
                        prop_assert!(now < t + SimTime::from_micros(hold_us));
                    }
                } else {
                    q.dequeue(now);
                }
                assert_consistent(&q);
            }
        }
    }
}
