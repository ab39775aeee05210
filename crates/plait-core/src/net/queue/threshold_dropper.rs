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
//! - armed, the first arrival that would make the queue exceed T_h (`threshold`; the arrival
//!   finds T_h or more queued) is a congestion event: one connection is selected and signalled
//!   and the dropper disarms for the hold τ (`hold`, or `hold_rtts` times the mean propagation
//!   round-trip time of the flows crossing the link direction);
//! - after τ the dropper re-arms as [`Rearm`] says (`rearm`). The paper's "from a time at
//!   which there are at most T_h queued packets" read literally ([`Rearm::Threshold`]) stops
//!   for good in a packet network whenever the signalled connection's decrease cannot bring
//!   the queue back to T_h: after the slow-start overshoot (the other connections still
//!   double every round trip) and when N is large (the paper itself: "the queue does not
//!   deplete"); the queue then grows without bound with no further signal (measured: about
//!   100,000 packets queued and no drop after the first for N ≥ 4 in experiments/parallel-tcp).
//!   [`Rearm::Hold`] (the default) re-arms as soon as τ has passed, whatever the queue: τ is
//!   the only pause the paper names between events ("No packets are dropped during this
//!   period"), and its own runs must have done so, since with many connections "the queue does
//!   not deplete" and its Fig. 12 (N = 10, T_h = 3) still shows every window cut again and
//!   again. An overshoot is then resolved one connection per τ, as in the fluid model where
//!   every congestion event cuts one connection. [`Rearm::ThresholdOrGrowth`] re-arms after τ
//!   once the queue is back at T_h or has grown since τ ended (more packets arrived than the
//!   link sent: the aggregate rate is above capacity, the fluid model's congestion event); it
//!   leaves a queue that drains slowly alone, and in packet runs it keeps standing queues of
//!   hundreds of packets for N ≥ 6 (experiments/parallel-tcp/README.md);
//! - which connection is selected is the loss policy (§I and §III define them on the fluid
//!   model, at the congestion event):
//!   - [`DropPolicy::FirstArrival`]: the connection of the arrival, whose packet is dropped
//!     (§V.D's own wording);
//!   - [`DropPolicy::RateIndependent`]: "a connection is chosen with fixed probability", each
//!     "equally likely" (§I, §III): uniformly among every connection that has sent through
//!     the queue, whether or not it has a packet queued at that moment (a draw among the
//!     connections with packets queued favours the fast senders: rate-correlated);
//!   - [`DropPolicy::LargestRate`]: "a connection with largest rate just before the congestion
//!     event is chosen" (§I): the connection that brought the most bytes to the queue in the
//!     rate window before the event (the mean propagation RTT when built from a scenario, so
//!     a window-limited connection's count is its window; ties to the lowest flow id);
//! - the selected connection is signalled by dropping its most recently queued packet (the
//!   arrival itself when the arrival is its packet: the packet it would have lost had its own
//!   arrival crossed the threshold), or, when it has none queued, its next arrival while it is
//!   still selected (within τ of the event); the hold then restarts from that drop, so that
//!   drops stay at least τ apart. A selected connection that sends nothing during τ (idle, or
//!   waiting for a retransmission timeout) is not signalled; such events are counted
//!   ([`ThresholdDropper::unsignalled`]).
//!
//! The paper says neither which packet its policies drop nor how it measured rates; those two
//! choices are ours.

use std::collections::VecDeque;

use rand::Rng;

use super::{DropPolicy, QueueDisc, QueueItem, QueueKind};
use crate::ids::FlowId;
use crate::registry::{AlgorithmSpec, Param, ParamIssue, Params, Scalar};
use crate::rng::SimRng;
use crate::time::SimTime;

/// The registry declaration of the threshold-dropper. The buffer is unbounded.
pub const SPEC: AlgorithmSpec<QueueKind> = AlgorithmSpec {
    name: "threshold_dropper",
    summary: "signals one connection when an arrival would take the queue above threshold, \
              then holds for tau (Altman et al. 2006 §V.D)",
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
        .unset("hold_rtts times the mean propagation round-trip time"),
        Param::number(
            "hold_rtts",
            "tau as a factor of the mean propagation round-trip time of the flows whose data \
             crosses the link direction (100 ms if none does); only when hold is unset",
        )
        .default(Scalar::Number(DEFAULT_HOLD_RTTS))
        .greater_than(0.0),
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
            "when the next congestion event may happen after tau: at once (hold), once at \
             most threshold packets are queued (threshold, §V.D as written: stops for good \
             when one decrease cannot drain the queue), or that or once the queue has grown \
             since tau ended (threshold_or_growth)",
        )
        .default(Scalar::Name("hold")),
    ],
    finish: Some(finish),
    build: |params, link| {
        let policy = DropPolicy::from_name(params.choice("policy")).expect("a declared policy");
        let hold = params.opt_duration("hold").unwrap_or_else(|| {
            SimTime::from_secs_f64(link.default_hold.as_secs_f64() * params.number("hold_rtts"))
        });
        let rearm = Rearm::from_name(params.choice("rearm")).expect("a declared rule");
        // The rate window is the mean propagation RTT whatever the hold: a window-limited
        // connection's rate is its window per round trip.
        ThresholdDropper::new(params.integer("threshold"), hold, policy)
            .with_rate_window(link.default_hold)
            .with_rearm(rearm)
            .into()
    },
};

/// τ in mean propagation round-trip times when neither `hold` nor `hold_rtts` is given.
pub const DEFAULT_HOLD_RTTS: f64 = 1.0;

/// `hold` and `hold_rtts` both set τ: one at most.
fn finish(params: &mut Params) -> Result<(), ParamIssue> {
    if params.is_given("hold") && params.is_given("hold_rtts") {
        return Err(ParamIssue::at(
            "hold_rtts",
            "give hold (a duration) or hold_rtts (a factor of the mean RTT), not both",
        ));
    }
    Ok(())
}

/// When the dropper re-arms after a congestion event, once the hold τ is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rearm {
    /// Once at most `threshold` packets are queued (§V.D: "Consider the system from a time at
    /// which there are at most T_h queued packets [...] This process repeats").
    Threshold,
    /// Once at most `threshold` packets are queued, or once the queue is longer than it was
    /// when τ ended (the aggregate arrival rate since then is above the link's rate: the
    /// signalled decrease has not ended the congestion).
    ThresholdOrGrowth,
    /// As soon as τ is over, whatever the queue.
    Hold,
}

impl Rearm {
    /// The scenario names, in the order of [`Rearm::from_name`].
    pub const NAMES: &'static [&'static str] = &["threshold", "threshold_or_growth", "hold"];

    pub fn from_name(name: &str) -> Option<Rearm> {
        match name {
            "threshold" => Some(Rearm::Threshold),
            "threshold_or_growth" => Some(Rearm::ThresholdOrGrowth),
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
    /// End of the hold of the latest congestion event (or of its delayed signal).
    held_until: SimTime,
    /// The queue length seen first once the hold was over ([`Rearm::ThresholdOrGrowth`]).
    length_after_hold: Option<usize>,
    /// The selected flow, while its signal is still owed (its next arrival before
    /// `held_until` is dropped).
    owed: Option<FlowId>,
    /// The flow selected at the latest congestion event.
    selected: Option<FlowId>,
    congestion_events: u64,
    unsignalled: u64,
}

impl ThresholdDropper {
    /// A dropper with threshold T_h = `threshold` packets, hold τ = `hold`, `policy`, and the
    /// default re-arm rule ([`Rearm::Hold`]). The largest-rate policy's rate
    /// window is `hold` until [`Self::with_rate_window`] sets it.
    pub fn new(threshold: u64, hold: SimTime, policy: DropPolicy) -> Self {
        ThresholdDropper {
            threshold,
            hold,
            rate_window: hold,
            policy,
            rearm: Rearm::Hold,
            items: VecDeque::new(),
            queued_bytes: 0,
            flows: Vec::new(),
            seen: Vec::new(),
            recent: VecDeque::new(),
            // The queue starts empty, at most T_h packets: armed.
            armed: true,
            held_until: SimTime::ZERO,
            length_after_hold: None,
            owed: None,
            selected: None,
            congestion_events: 0,
            unsignalled: 0,
        }
    }

    /// The window over which the largest-rate policy measures rates.
    pub fn with_rate_window(mut self, window: SimTime) -> Self {
        self.rate_window = window;
        self
    }

    /// When the dropper re-arms after a congestion event.
    pub fn with_rearm(mut self, rearm: Rearm) -> Self {
        self.rearm = rearm;
        self
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

    pub fn rearm(&self) -> Rearm {
        self.rearm
    }

    /// The flow selected at the latest congestion event, if any.
    pub fn selected(&self) -> Option<FlowId> {
        self.selected
    }

    /// Whether, as of the latest arrival or departure, the next arrival that would make the
    /// queue exceed the threshold is a congestion event.
    pub fn is_armed(&self) -> bool {
        self.armed
    }

    /// Congestion events so far (one connection selected at each).
    pub fn congestion_events(&self) -> u64 {
        self.congestion_events
    }

    /// Congestion events whose selected connection sent nothing while selected, so lost no
    /// packet.
    pub fn unsignalled(&self) -> u64 {
        self.unsignalled
    }

    /// Packets of `flow` queued.
    pub fn flow_packets(&self, flow: FlowId) -> u64 {
        self.flows.get(flow.index()).map_or(0, |f| f.packets)
    }

    /// Bytes of `flow` queued.
    pub fn flow_bytes(&self, flow: FlowId) -> u64 {
        self.flows.get(flow.index()).map_or(0, |f| f.bytes)
    }

    /// Bytes of `flow` that arrived within the rate window before the latest arrival
    /// (largest-rate policy only; 0 otherwise).
    pub fn flow_recent_bytes(&self, flow: FlowId) -> u64 {
        self.flows.get(flow.index()).map_or(0, |f| f.recent_bytes)
    }

    /// Every flow that has sent through the queue, in the order first seen.
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

    /// Re-arms, at a time `now` at which `len` packets are queued, if the hold is over and
    /// the re-arm rule allows it.
    fn maybe_rearm(&mut self, now: SimTime, len: usize) {
        if self.armed || now < self.held_until {
            return;
        }
        let back_at_threshold = len as u64 <= self.threshold;
        self.armed = match self.rearm {
            Rearm::Hold => true,
            Rearm::Threshold => back_at_threshold,
            Rearm::ThresholdOrGrowth => {
                back_at_threshold
                    || match self.length_after_hold {
                        // The queue grew since the hold ended: more arrived than the link sent.
                        Some(reference) => len > reference,
                        None => {
                            self.length_after_hold = Some(len);
                            false
                        }
                    }
            }
        };
    }

    /// Disarms for the hold from `now`.
    fn hold_from(&mut self, now: SimTime) {
        self.armed = false;
        self.held_until = now.saturating_add(self.hold);
        self.length_after_hold = None;
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
        // while selected. The hold restarts from that drop.
        if let Some(flow) = self.owed {
            if now >= self.held_until {
                self.owed = None;
                self.unsignalled += 1;
            } else if flow == item.flow {
                self.owed = None;
                self.hold_from(now);
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
        self.hold_from(now);
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
    use crate::net::queue::{LinkInfo, QueueSpec};
    use crate::registry::Value;
    use crate::rng::rng_from_seed;
    use crate::time::Rate;
    use proptest::prelude::*;

    use crate::net::queue::test_item as item;
    use crate::net::queue::Queue;

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

    fn ms(n: u64) -> SimTime {
        SimTime::from_millis(n)
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

    /// A queue of `len` packets of flow 0, built below the threshold or during a hold.
    fn fill(q: &mut ThresholdDropper, now: SimTime, len: usize, rng: &mut SimRng) {
        let mut i = 1000;
        while q.len_packets() < len {
            assert!(offer(q, now, item(i, 0, 100), rng).is_empty());
            i += 1;
        }
    }

    /// §V.D: "The first packet arrival that exceeds threshold is dropped": with T_h = 3
    /// queued, the arrival that would be the fourth is the congestion event (the old code
    /// waited for an arrival finding four).
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
        assert_eq!(q.selected(), Some(FlowId(1)));
        assert_eq!(q.len_packets(), 3);
        assert_eq!(q.congestion_events(), 1);
    }

    #[test]
    fn the_buffer_is_unbounded_while_held() {
        let mut q = ThresholdDropper::new(0, SimTime::from_secs(1), DropPolicy::FirstArrival);
        let mut rng = rng_from_seed(2);
        assert_eq!(
            offer(&mut q, SimTime::ZERO, item(0, 0, 1500), &mut rng).len(),
            1
        );
        for i in 1..10_002 {
            assert!(offer(&mut q, ms(1), item(i, 0, 1500), &mut rng).is_empty());
        }
        assert_eq!(q.len_packets(), 10_001);
        assert_eq!(q.len_bytes(), 10_001 * 1500);
    }

    /// The hold: no drop for τ after an event, whatever the queue.
    #[test]
    fn nothing_is_dropped_during_the_hold() {
        for rearm in [Rearm::Threshold, Rearm::ThresholdOrGrowth, Rearm::Hold] {
            let hold = ms(10);
            let mut q = ThresholdDropper::new(2, hold, DropPolicy::FirstArrival).with_rearm(rearm);
            let mut rng = rng_from_seed(3);
            fill(&mut q, SimTime::ZERO, 2, &mut rng);
            let t0 = ms(5);
            assert_eq!(offer(&mut q, t0, item(3, 0, 100), &mut rng).len(), 1);
            for (k, i) in (4..50).enumerate() {
                let now = t0 + SimTime::from_micros(200 * k as u64 + 1);
                assert!(now < t0 + hold);
                assert!(offer(&mut q, now, item(i, 0, 100), &mut rng).is_empty());
            }
            let last = t0 + hold - SimTime::from_nanos(1);
            assert!(offer(&mut q, last, item(50, 0, 100), &mut rng).is_empty());
            assert!(!q.is_armed(), "{rearm:?}");
        }
    }

    /// [`Rearm::Hold`]: exactly τ after the event the next arrival above the threshold is an
    /// event, however long the queue.
    #[test]
    fn hold_rearms_when_the_hold_is_over() {
        let mut q =
            ThresholdDropper::new(2, ms(10), DropPolicy::FirstArrival).with_rearm(Rearm::Hold);
        let mut rng = rng_from_seed(4);
        fill(&mut q, ms(0), 2, &mut rng);
        assert_eq!(offer(&mut q, ms(5), item(1, 0, 100), &mut rng).len(), 1);
        fill(&mut q, ms(6), 40, &mut rng);
        q.dequeue(ms(14));
        assert_eq!(
            offer(&mut q, ms(15), item(2, 1, 100), &mut rng),
            vec![item(2, 1, 100)]
        );
    }

    /// §V.D as written ([`Rearm::Threshold`]): "Consider the system from a time at which there
    /// are at most T_h queued packets [...] This process repeats": after τ the dropper waits
    /// for the queue to fall back to T_h before the next event (the old code dropped again as
    /// soon as τ was over).
    #[test]
    fn regression_threshold_rearms_only_once_the_queue_is_back_at_the_threshold() {
        let mut q =
            ThresholdDropper::new(2, ms(10), DropPolicy::FirstArrival).with_rearm(Rearm::Threshold);
        let mut rng = rng_from_seed(12);
        fill(&mut q, ms(0), 2, &mut rng);
        assert_eq!(offer(&mut q, ms(1), item(1, 0, 100), &mut rng).len(), 1);
        fill(&mut q, ms(5), 22, &mut rng);
        // The hold is over (from 11 ms), the queue is above T_h and growing: no event.
        for i in 100..107 {
            assert!(offer(&mut q, ms(20), item(i, 1, 100), &mut rng).is_empty());
        }
        assert!(!q.is_armed());
        // Down to 3 queued: still above the threshold, still no drop.
        while q.len_packets() > 3 {
            q.dequeue(ms(21));
        }
        assert!(offer(&mut q, ms(21), item(107, 1, 100), &mut rng).is_empty());
        // Down to 2 = T_h: armed; the arrival that would be the third is dropped.
        while q.len_packets() > 2 {
            q.dequeue(ms(22));
        }
        assert!(q.is_armed());
        assert_eq!(
            offer(&mut q, ms(23), item(108, 1, 100), &mut rng),
            vec![item(108, 1, 100)]
        );
    }

    /// [`Rearm::ThresholdOrGrowth`]: after τ, a queue above T_h that is falling
    /// (the signalled decrease is draining it) is left alone, where the old code signalled a
    /// second connection at once; a queue longer than it was when τ ended (more arrivals than
    /// departures since: the aggregate rate is above capacity) re-arms it, where the literal
    /// rule would wait for ever.
    #[test]
    fn regression_threshold_or_growth_rearms_on_growth_after_the_hold_not_while_draining() {
        let mut q = ThresholdDropper::new(2, ms(10), DropPolicy::FirstArrival)
            .with_rearm(Rearm::ThresholdOrGrowth);
        let mut rng = rng_from_seed(13);
        fill(&mut q, ms(0), 2, &mut rng);
        assert_eq!(offer(&mut q, ms(1), item(1, 0, 100), &mut rng).len(), 1);
        fill(&mut q, ms(5), 30, &mut rng);
        // τ is over at 11 ms; the first look after it finds 29 queued: the reference.
        q.dequeue(ms(12));
        assert!(!q.is_armed());
        // Draining, one arrival per two departures: no event.
        for i in 0..10 {
            q.dequeue(ms(13));
            q.dequeue(ms(13));
            assert!(offer(&mut q, ms(13), item(200 + i, 1, 100), &mut rng).is_empty());
        }
        assert_eq!(q.len_packets(), 19);
        // Growing again, but not yet past 29 queued: no event.
        for i in 0..10 {
            assert!(offer(&mut q, ms(14), item(300 + i, 1, 100), &mut rng).is_empty());
        }
        assert_eq!(q.len_packets(), 29);
        assert!(!q.is_armed());
        // The 30th: longer than when τ ended. Armed: the next arrival is the event.
        assert!(offer(&mut q, ms(14), item(400, 1, 100), &mut rng).is_empty());
        assert_eq!(
            offer(&mut q, ms(14), item(401, 2, 100), &mut rng),
            vec![item(401, 2, 100)]
        );
        assert_eq!(q.congestion_events(), 2);
        // And back at T_h it re-arms as the paper has it.
        while q.len_packets() > 2 {
            q.dequeue(ms(30));
        }
        assert!(q.is_armed());
    }

    /// The literal rule stops for good when the queue never falls back to T_h (a slow-start
    /// overshoot); the others keep signalling one connection per τ while the queue grows.
    #[test]
    fn a_queue_that_keeps_growing_is_signalled_every_hold_unless_the_rule_is_literal() {
        let events = |rearm: Rearm| {
            let mut q =
                ThresholdDropper::new(3, ms(10), DropPolicy::FirstArrival).with_rearm(rearm);
            let mut rng = rng_from_seed(14);
            // Two arrivals per departure, one every 0.1 ms, for 1 s.
            for k in 0..10_000u32 {
                let now = SimTime::from_micros(100 * u64::from(k));
                offer(&mut q, now, item(k, k % 4, 100), &mut rng);
                if k % 2 == 1 {
                    q.dequeue(now);
                }
            }
            q.congestion_events()
        };
        assert_eq!(events(Rearm::Threshold), 1);
        // One event per hold of 10 ms (plus the few arrivals it takes to see growth).
        let growth = events(Rearm::ThresholdOrGrowth);
        assert!((90..=100).contains(&growth), "{growth}");
        assert!((90..=100).contains(&events(Rearm::Hold)));
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
                q.dequeue(SimTime::ZERO);
            }
        }
    }

    #[test]
    fn first_arrival_drops_the_arrival() {
        let mut q = ThresholdDropper::new(4, ms(100), DropPolicy::FirstArrival);
        let mut rng = rng_from_seed(5);
        for i in 0..4 {
            assert!(offer(&mut q, SimTime::ZERO, item(i, 0, 100), &mut rng).is_empty());
        }
        assert_eq!(
            offer(&mut q, SimTime::ZERO, item(5, 7, 40), &mut rng),
            vec![item(5, 7, 40)]
        );
        assert_eq!(q.flow_packets(FlowId(7)), 0);
        assert_eq!(q.flow_packets(FlowId(0)), 4);
        assert_consistent(&q);
    }

    /// §I, §III: rate-independent means "a connection is chosen with fixed probability", each
    /// "equally likely": every flow using the link, not only those with packets queued at the
    /// event (the old code drew among the queued ones). Five flows have sent; only flow 0 has
    /// packets queued at the event; each flow is signalled a fifth of the time, a flow with
    /// nothing queued at its next arrival.
    #[test]
    fn regression_rate_independent_draws_among_every_flow_not_only_the_queued_ones() {
        let mut rng = rng_from_seed(15);
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
            assert_eq!(q.selected(), Some(dropped[0].flow));
            assert_consistent(&q);
        }
        // Binomial(10000, 1/5): sd = 40; allow 5 sd.
        for (flow, &h) in hits.iter().enumerate() {
            assert!(
                (f64::from(h) - 2000.0).abs() < 200.0,
                "flow {flow}: {h} hits ({hits:?})"
            );
        }
    }

    /// The victim of a selected flow with packets queued is its latest one.
    #[test]
    fn rate_independent_drops_the_latest_packet_of_the_selected_flow() {
        let mut rng = rng_from_seed(7);
        let mut hits = [0u32; 4];
        for _ in 0..4_000 {
            let mut q = ThresholdDropper::new(6, SimTime::ZERO, DropPolicy::RateIndependent);
            let mut packet = 0;
            for (flow, n) in [(0u32, 3u32), (1, 1), (2, 2)] {
                for _ in 0..n {
                    assert!(offer(&mut q, ms(0), item(packet, flow, 100), &mut rng).is_empty());
                    packet += 1;
                }
            }
            // Flow 3 arrives with 6 queued.
            let dropped = offer(&mut q, ms(0), item(packet, 3, 100), &mut rng);
            assert_eq!(dropped.len(), 1);
            let victim = dropped[0];
            let latest = [2, 3, 5, packet][victim.flow.index()];
            assert_eq!(victim.packet.0, latest);
            hits[victim.flow.index()] += 1;
            assert_consistent(&q);
        }
        // Binomial(4000, 1/4): sd = 27; allow 5 sd.
        assert!(
            hits.iter().all(|&h| (f64::from(h) - 1000.0).abs() < 140.0),
            "{hits:?}"
        );
    }

    /// §I: largest-rate chooses "a connection with largest rate just before the congestion
    /// event", not the one with most bytes queued (the old code): flow 0 sent 10 kB in the
    /// window but has nothing queued; flow 1 has 3 kB queued. Flow 0 is signalled, at its
    /// next arrival.
    #[test]
    fn regression_largest_rate_selects_the_fastest_sender_not_the_biggest_backlog() {
        let mut q = ThresholdDropper::new(2, ms(100), DropPolicy::LargestRate);
        let mut rng = rng_from_seed(16);
        for i in 0..10 {
            assert!(offer(&mut q, ms(u64::from(i)), item(i, 0, 1000), &mut rng).is_empty());
            q.dequeue(ms(u64::from(i)));
        }
        assert!(offer(&mut q, ms(50), item(20, 1, 1500), &mut rng).is_empty());
        assert!(offer(&mut q, ms(50), item(21, 1, 1500), &mut rng).is_empty());
        // The arrival that would be the third: the event. Flow 0 has nothing queued.
        assert!(offer(&mut q, ms(51), item(22, 2, 100), &mut rng).is_empty());
        assert_eq!(q.selected(), Some(FlowId(0)));
        assert_eq!(q.len_packets(), 3);
        // Flow 1's next packet goes through; flow 0's is the signal.
        assert!(offer(&mut q, ms(55), item(23, 1, 1500), &mut rng).is_empty());
        assert_eq!(
            offer(&mut q, ms(60), item(24, 0, 1000), &mut rng),
            vec![item(24, 0, 1000)]
        );
        assert_consistent(&q);
    }

    /// The rate window forgets: bytes older than the window do not count.
    #[test]
    fn largest_rate_counts_only_the_rate_window() {
        let mut q =
            ThresholdDropper::new(2, ms(100), DropPolicy::LargestRate).with_rate_window(ms(20));
        let mut rng = rng_from_seed(17);
        // Flow 0: 10 kB long ago; flow 1: 2 kB within the window.
        for i in 0..10 {
            offer(&mut q, ms(0), item(i, 0, 1000), &mut rng);
            q.dequeue(ms(0));
        }
        assert_eq!(q.flow_recent_bytes(FlowId(0)), 10_000);
        offer(&mut q, ms(40), item(10, 1, 1000), &mut rng);
        offer(&mut q, ms(40), item(11, 1, 1000), &mut rng);
        assert_eq!(q.flow_recent_bytes(FlowId(0)), 0);
        // The event: flow 1 (2 kB in the window) loses its latest packet.
        assert_eq!(
            offer(&mut q, ms(41), item(12, 0, 100), &mut rng),
            vec![item(11, 1, 1000)]
        );
        assert_consistent(&q);
    }

    /// A selected flow with nothing queued loses its next arrival within τ, and the hold
    /// restarts from that drop; one that sends nothing within τ is not signalled (counted).
    #[test]
    fn a_signal_owed_is_paid_within_the_hold_or_counted_as_unsignalled() {
        let mut q =
            ThresholdDropper::new(1, ms(10), DropPolicy::LargestRate).with_rate_window(ms(100));
        let mut rng = rng_from_seed(18);
        for i in 0..5 {
            offer(&mut q, ms(0), item(i, 0, 1000), &mut rng);
            q.dequeue(ms(0));
        }
        offer(&mut q, ms(1), item(5, 1, 100), &mut rng);
        // Event at 2 ms: flow 0 selected, nothing queued.
        assert!(offer(&mut q, ms(2), item(6, 1, 100), &mut rng).is_empty());
        assert_eq!(q.selected(), Some(FlowId(0)));
        // Its arrival at 8 ms is dropped; the hold runs to 18 ms.
        assert_eq!(
            offer(&mut q, ms(8), item(7, 0, 1000), &mut rng),
            vec![item(7, 0, 1000)]
        );
        while q.dequeue(ms(9)).is_some() {}
        assert!(offer(&mut q, ms(15), item(8, 1, 100), &mut rng).is_empty());
        assert!(offer(&mut q, ms(15), item(9, 1, 100), &mut rng).is_empty());
        assert_eq!(q.unsignalled(), 0);
        // At 18 ms the hold is over and 1 = T_h is queued: armed. The next event (19 ms)
        // selects flow 0 again, which sends nothing before its hold ends (29 ms).
        q.dequeue(ms(18));
        assert!(q.is_armed());
        assert!(offer(&mut q, ms(19), item(10, 1, 100), &mut rng).is_empty());
        assert_eq!(q.congestion_events(), 2);
        assert!(offer(&mut q, ms(30), item(11, 1, 100), &mut rng).is_empty());
        assert_eq!(q.unsignalled(), 1);
    }

    /// The registry: τ is `hold_rtts` times the mean propagation RTT unless `hold` is given;
    /// giving both is refused; `rearm` is parsed.
    #[test]
    fn hold_rtts_scales_the_mean_rtt_and_excludes_hold() {
        let link = LinkInfo {
            rate: Rate::from_mbps(10),
            default_hold: ms(120),
        };
        let build = |given: &[(&str, Value)]| {
            let mut all = vec![("threshold", Value::Integer(3))];
            all.extend_from_slice(given);
            match QueueSpec::new("threshold_dropper", &all)
                .unwrap_or_else(|e| panic!("{e}"))
                .build(link)
            {
                Queue::ThresholdDropper(q) => q,
                other => panic!("built {other:?}"),
            }
        };
        let q = build(&[]);
        assert_eq!(q.hold(), ms(120));
        assert_eq!(q.rate_window(), ms(120));
        assert_eq!(q.rearm(), Rearm::Hold);
        let q = build(&[("hold_rtts", Value::Number(2.5))]);
        assert_eq!((q.hold(), q.rate_window()), (ms(300), ms(120)));
        let q = build(&[
            ("hold", Value::Duration(ms(7))),
            ("rearm", Value::Choice("threshold_or_growth")),
        ]);
        assert_eq!((q.hold(), q.rearm()), (ms(7), Rearm::ThresholdOrGrowth));
        let err = QueueSpec::new(
            "threshold_dropper",
            &[
                ("threshold", Value::Integer(3)),
                ("hold", Value::Duration(ms(7))),
                ("hold_rtts", Value::Number(2.0)),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("not both"), "{err}");
        for bad in [0.0, -1.0] {
            assert!(QueueSpec::new(
                "threshold_dropper",
                &[
                    ("threshold", Value::Integer(3)),
                    ("hold_rtts", Value::Number(bad))
                ],
            )
            .is_err());
        }
    }

    #[test]
    fn accounting_survives_drops_from_the_middle() {
        let mut q = ThresholdDropper::new(3, SimTime::ZERO, DropPolicy::LargestRate)
            .with_rate_window(ms(1));
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
        assert_eq!(q.len_bytes(), 0);
    }

    fn policy() -> impl Strategy<Value = DropPolicy> {
        prop_oneof![
            Just(DropPolicy::FirstArrival),
            Just(DropPolicy::RateIndependent),
            Just(DropPolicy::LargestRate),
        ]
    }

    fn rearm() -> impl Strategy<Value = Rearm> {
        prop_oneof![
            Just(Rearm::Threshold),
            Just(Rearm::ThresholdOrGrowth),
            Just(Rearm::Hold),
        ]
    }

    proptest! {
        #[test]
        fn per_flow_accounting_matches_the_queue(
            threshold in 0u64..8,
            hold_us in 0u64..500,
            policy in policy(),
            rearm in rearm(),
            seed in any::<u64>(),
            ops in proptest::collection::vec(
                (any::<bool>(), 0u32..6, 1u32..1500, 0u64..100),
                1..300,
            ),
        ) {
            let hold = SimTime::from_micros(hold_us);
            let mut q = ThresholdDropper::new(threshold, hold, policy)
                .with_rearm(rearm)
                .with_rate_window(SimTime::from_micros(300));
            let mut rng = rng_from_seed(seed);
            let mut now = SimTime::ZERO;
            let mut last_drop: Option<SimTime> = None;
            for (i, &(arrive, flow, bytes, dt_us)) in ops.iter().enumerate() {
                now += SimTime::from_micros(dt_us);
                if arrive {
                    let before = q.len_packets();
                    let events = q.congestion_events();
                    let dropped = offer(&mut q, now, item(i as u32, flow, bytes), &mut rng);
                    prop_assert!(dropped.len() <= 1);
                    prop_assert_eq!(q.len_packets() + dropped.len(), before + 1);
                    prop_assert!(q.congestion_events() <= events + 1);
                    if q.congestion_events() > events {
                        // An event only for an arrival that would exceed the threshold.
                        prop_assert!(before as u64 >= threshold);
                    }
                    if let Some(d) = dropped.first() {
                        // The victim is the selected flow's; drops are at least τ apart.
                        prop_assert_eq!(Some(d.flow), q.selected());
                        if let Some(t) = last_drop {
                            prop_assert!(now >= t + hold);
                        }
                        last_drop = Some(now);
                    }
                } else {
                    q.dequeue(now);
                }
                assert_consistent(&q);
            }
        }
    }
}
