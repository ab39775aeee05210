//! The event queue: small entries ordered by (time, insertion sequence), in a binary heap of
//! packet events beside the flows' wake-ups (`timer_wheel`) and the packets held by their
//! hosts (a short sorted lane, `EventQueue::push_release`).
//!
//! Ties in time are broken by the order of insertion, so a run is a deterministic function of
//! its inputs. Insertion order is (the time an event was scheduled at, a sequence number):
//! events are scheduled in the order they are processed, so that is the order of insertion,
//! and it lets the simulator schedule an event *as of* a later instant when it works ahead of
//! time (admission ahead, `net::link`) and still have it keep the place it would have had.
//! Entries are 24 bytes: the time, the order among events at that time and a compact event.
//! The order packs the scheduling time, as the delay from it to the event (later scheduled,
//! shorter delay, later in the order; delays of 2³² ns, 4.3 s, or more count as equal), and
//! the low 32 bits of the sequence number: exact unless two events at the same nanosecond,
//! scheduled at the same nanosecond or both more than 4.3 s ahead, were inserted 2³² events
//! apart. A popped entry leaves its heap lazily: the next push into that heap takes its place
//! in one pass down the heap (a link's next arrival after an arrival, a flow's wake-up re-armed
//! after a stale one), and any other operation removes it first. Timers are cancelled lazily:
//! the owner remembers the deadline it armed and ignores any wake-up that does not match it
//! (see `sim`).

mod timer_wheel;

use crate::ids::{FlowId, LinkId, PacketId};
use crate::time::SimTime;
use timer_wheel::TimerWheel;

/// What happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link direction finished serialising its current packet.
    TransmitDone(LinkId),
    /// The packet at the head of a link direction's pipeline reached the far end.
    Arrive(LinkId),
    /// A flow starts.
    FlowStart(FlowId),
    /// A flow stops sending new data.
    FlowStop(FlowId),
    /// A flow's transport wake-up (retransmission, delayed ACK, a source's next send) may be
    /// due.
    FlowTimer(FlowId),
    /// Take a time-series sample.
    Sample,
    /// The warm-up period ends: snapshot the counters.
    WarmupEnd,
    /// A link direction fails (a scenario `[[event]]` with `action = "down"`).
    LinkDown(LinkId),
    /// A link direction is repaired.
    LinkUp(LinkId),
    /// A link direction's loss model changes: the index of the change in the simulator's
    /// list.
    LossChange(u32),
    /// A flow's setting changes (a scenario `[[event]]` naming a flow): the index of the
    /// change in the simulator's list.
    FlowChange(u32),
    /// A packet admitted ahead of time by a link (`Link::admit_ahead`) was dropped there:
    /// report the first such drop now, at its arrival time.
    DropAhead(LinkId),
    /// A packet a host held back (host timing noise, `Outbox::send_at`) leaves it: it enters
    /// the first link of its route.
    Release(PacketId),
    /// As `Release`, for a flow whose paths start on local links (`Flow::local`): the place
    /// it held in its first link's queue, if local, is given back. Apart, so that the other
    /// flows' releases ask nothing of the kind.
    ReleaseLocal(PacketId),
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: SimTime,
    /// `!min(time - scheduled, 2³² - 1)` in the high half (scheduled earlier, first), the low
    /// 32 bits of the sequence number in the low half.
    order: u64,
    event: Event,
}

/// An entry's place in the order: (time, order) as one integer, one comparison.
type Key = u128;

/// The delay from scheduling to the event, as the order's high half.
#[inline]
fn rank(time: SimTime, scheduled: SimTime) -> u64 {
    let delay = time.0.saturating_sub(scheduled.0).min(u32::MAX as u64);
    u32::MAX as u64 - delay
}

impl Entry {
    #[inline]
    fn key(&self) -> Key {
        ((self.time.0 as u128) << 64) | self.order as u128
    }

    /// When it was scheduled, as far as the order tells (a delay of 4.3 s or more counts as
    /// 4.3 s).
    fn scheduled(&self) -> SimTime {
        SimTime(
            self.time
                .0
                .saturating_sub(u32::MAX as u64 - (self.order >> 32)),
        )
    }
}

/// A binary min-heap of entries by key. Written out rather than `std`'s `BinaryHeap` because
/// `BinaryHeap::push` stores the new entry and at once reloads it to sift it up, a load the
/// processor cannot forward from the narrower stores just made (it showed as the simulator's
/// hottest instruction); here the entry being placed stays in registers until its slot is
/// found. Keys are unique (sequence numbers are), so the order is total.
///
/// With `TO_LEAF`, the top's replacement is placed the way Floyd proposed: the hole moves down
/// along the smaller children to a leaf, one comparison per level, and the entry moves up from
/// there. That is half the comparisons for entries that belong near the bottom: in the timer
/// heap, a wake-up re-armed a retransmission timeout ahead, or the last entry moved to the top.
#[derive(Debug, Default)]
struct MinHeap<const TO_LEAF: bool> {
    entries: Vec<Entry>,
}

impl<const TO_LEAF: bool> MinHeap<TO_LEAF> {
    #[inline]
    fn peek(&self) -> Option<&Entry> {
        self.entries.first()
    }

    #[inline]
    fn push(&mut self, entry: Entry) {
        let key = entry.key();
        let mut i = self.entries.len();
        self.entries.push(entry);
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.entries[parent].key() <= key {
                break;
            }
            self.entries[i] = self.entries[parent];
            i = parent;
        }
        self.entries[i] = entry;
    }

    /// Removes the top entry (the heap is not empty).
    #[inline]
    fn remove_top(&mut self) {
        let last = self.entries.pop().expect("a top to remove");
        if !self.entries.is_empty() {
            self.sift_down_from_top(last);
        }
    }

    /// Replaces the top entry (the heap is not empty) by `entry`: the same heap as removing
    /// the top and pushing `entry`, in one pass.
    #[inline]
    fn replace_top(&mut self, entry: Entry) {
        self.sift_down_from_top(entry);
    }

    /// Puts `entry` in the place of the top entry and moves it down to where it belongs.
    #[inline]
    fn sift_down_from_top(&mut self, entry: Entry) {
        if TO_LEAF {
            self.sift_through_leaf(entry);
        } else {
            self.sift_down(entry);
        }
    }

    /// [`MinHeap::sift_down_from_top`] by way of the leaf its smaller children lead to.
    #[inline]
    fn sift_through_leaf(&mut self, entry: Entry) {
        let n = self.entries.len();
        let key = entry.key();
        let mut i = 0;
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.entries[right].key() < self.entries[left].key() {
                right
            } else {
                left
            };
            self.entries[i] = self.entries[child];
            i = child;
        }
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.entries[parent].key() <= key {
                break;
            }
            self.entries[i] = self.entries[parent];
            i = parent;
        }
        self.entries[i] = entry;
    }

    /// [`MinHeap::sift_down_from_top`] comparing with `entry` at every level.
    #[inline]
    fn sift_down(&mut self, entry: Entry) {
        let entries = &mut self.entries[..];
        let key = entry.key();
        let mut i = 0;
        // The children read with `get`, which tests each index once, where indexing after the
        // tests on `len` tested them again.
        loop {
            let left = 2 * i + 1;
            let Some(&l) = entries.get(left) else {
                break;
            };
            let (child, c) = match entries.get(left + 1) {
                Some(&r) if r.key() < l.key() => (left + 1, r),
                _ => (left, l),
            };
            if c.key() >= key {
                break;
            }
            entries[i] = c;
            i = child;
        }
        entries[i] = entry;
    }

    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// A priority queue of events ordered by (time, insertion sequence).
///
/// Flow timers live in a queue of their own (`timer_wheel`): there is one per flow, mostly far
/// in the future, while the packet events (a few per link) are the ones popped all the time.
/// Keeping the hot heap small makes each pop a few levels deep. Pops take the earlier of the
/// two heads, so the order is exactly that of a single queue.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: MinHeap<false>,
    timers: TimerWheel,
    /// Packets held by their hosts (`Event::Release`, [`EventQueue::push_release`]), sorted
    /// by key, the earliest last. Host noise holds a packet for at most a few service times,
    /// so a few are held at once: each goes in by a short move from the back and leaves from
    /// the back, where in the heap it would cost a pass up and a pass down. Past
    /// [`RELEASE_LANE`] entries a release goes into the heap like any event; pops take the
    /// earliest of the three, so the order is that of a single queue.
    releases: Vec<Entry>,
    /// The heap whose top entry was popped last and is still in place: it is removed at the
    /// next pop, or replaced by the next entry pushed into that heap (a flow's re-armed
    /// wake-up, a link's next arrival), which saves a pass over the heap.
    taken: Option<Which>,
    next_seq: u64,
    /// The time of the last event popped: what a new event is scheduled at.
    now: SimTime,
    /// The order of the last event popped, which tells when it was scheduled
    /// ([`EventQueue::scheduled`], worked out only when asked).
    order: u64,
}

/// The most releases kept apart from the heap ([`EventQueue::releases`]).
const RELEASE_LANE: usize = 32;

/// One of the two heaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    Events,
    Timers,
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue::default()
    }

    /// Schedules `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        self.push_as_of(time, self.now, event);
    }

    /// Schedules `event` at `time` as if it were scheduled at `scheduled` (at or after the
    /// current time): among events at the same time it goes after those scheduled earlier
    /// and before those scheduled later.
    #[inline(always)]
    pub fn push_as_of(&mut self, time: SimTime, scheduled: SimTime, event: Event) {
        let entry = self.entry(time, scheduled, event);
        let which = if matches!(event, Event::FlowTimer(_)) {
            Which::Timers
        } else {
            Which::Events
        };
        self.push_into(which, entry);
    }

    /// The entry of `event` at `time` scheduled at `scheduled`, with the next sequence number.
    #[inline(always)]
    fn entry(&mut self, time: SimTime, scheduled: SimTime, event: Event) -> Entry {
        let seq = self.next_seq;
        self.next_seq += 1;
        Entry {
            time,
            order: (rank(time, scheduled) << 32) | (seq & u32::MAX as u64),
            event,
        }
    }

    /// Schedules `Event::Release(packet)` at `time` (not before the current time): the same
    /// place in the order as [`EventQueue::push`], kept apart from the heap while few are
    /// held.
    #[inline(always)]
    pub fn push_release(&mut self, time: SimTime, packet: PacketId) {
        self.push_held(time, Event::Release(packet));
    }

    /// [`EventQueue::push_release`] of `Event::ReleaseLocal(packet)`: the same place in the
    /// order.
    #[inline(always)]
    pub fn push_release_local(&mut self, time: SimTime, packet: PacketId) {
        self.push_held(time, Event::ReleaseLocal(packet));
    }

    /// Schedules a release `event` at `time` ([`EventQueue::push_release`]).
    #[inline(always)]
    fn push_held(&mut self, time: SimTime, event: Event) {
        let entry = self.entry(time, self.now, event);
        let n = self.releases.len();
        if n >= RELEASE_LANE {
            return self.push_into(Which::Events, entry);
        }
        // Mostly none is held, or the new one is the earliest: it goes at the back.
        if n == 0 || entry.key() < self.releases[n - 1].key() {
            self.releases.push(entry);
        } else {
            self.insert_release(entry);
        }
    }

    /// Puts `entry` in its place in `releases`, not at the back.
    #[inline(never)]
    fn insert_release(&mut self, entry: Entry) {
        let key = entry.key();
        let at = self.releases.partition_point(|e| e.key() > key);
        self.releases.insert(at, entry);
    }

    /// Puts `entry` into the heap `which`, in the place of the entry popped last if that is
    /// still there.
    #[inline(always)]
    fn push_into(&mut self, which: Which, entry: Entry) {
        let replace = self.taken == Some(which);
        if replace {
            self.taken = None;
        }
        match (which, replace) {
            (Which::Timers, true) => self.timers.replace_top(entry),
            (Which::Timers, false) => self.timers.push(entry),
            (Which::Events, true) => self.heap.replace_top(entry),
            (Which::Events, false) => self.heap.push(entry),
        }
    }

    /// Removes the entry popped last, if it is still in place, and brings the timers' next
    /// slot in when their heap has run dry.
    #[inline(always)]
    fn settle(&mut self) {
        match self.taken.take() {
            Some(Which::Events) => self.heap.remove_top(),
            Some(Which::Timers) => self.timers.remove_top(),
            None => {}
        }
        self.timers.refill();
    }

    /// The heap holding the earliest entry (after `settle`).
    #[inline]
    fn earliest(&self) -> Option<Which> {
        match (self.heap.peek(), self.timers.peek()) {
            (None, None) => None,
            (Some(_), None) => Some(Which::Events),
            (None, Some(_)) => Some(Which::Timers),
            (Some(a), Some(b)) => Some(if b.key() < a.key() {
                Which::Timers
            } else {
                Which::Events
            }),
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.pop_before(SimTime::MAX)
    }

    /// The earliest event if it comes strictly before `end`.
    #[inline]
    pub fn pop_before(&mut self, end: SimTime) -> Option<(SimTime, Event)> {
        self.settle();
        if !self.releases.is_empty() {
            return self.pop_with_releases(end);
        }
        let which = self.earliest()?;
        let e = *match which {
            Which::Events => self.heap.peek(),
            Which::Timers => self.timers.peek(),
        }?;
        if e.time >= end {
            return None;
        }
        self.taken = Some(which);
        (self.now, self.order) = (e.time, e.order);
        Some((e.time, e.event))
    }

    /// [`EventQueue::pop_before`] while releases are held: the earliest release if it comes
    /// before the heaps' earliest entry.
    #[inline(always)]
    fn pop_with_releases(&mut self, end: SimTime) -> Option<(SimTime, Event)> {
        let release = *self.releases.last()?;
        let which = self.earliest();
        let first = match which {
            Some(Which::Events) => self.heap.peek(),
            Some(Which::Timers) => self.timers.peek(),
            None => None,
        };
        let (e, from_heap) = match first {
            Some(&e) if e.key() < release.key() => (e, true),
            _ => (release, false),
        };
        if e.time >= end {
            return None;
        }
        if from_heap {
            self.taken = which;
        } else {
            self.releases.pop();
        }
        (self.now, self.order) = (e.time, e.order);
        Some((e.time, e.event))
    }

    /// When the last event popped was scheduled (as its entry tells,
    /// [`Entry::scheduled`]; the start of the run before any).
    #[inline]
    pub fn scheduled(&self) -> SimTime {
        Entry {
            time: self.now,
            order: self.order,
            event: Event::Sample,
        }
        .scheduled()
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.settle();
        let first = match (self.heap.peek(), self.timers.peek()) {
            (Some(a), Some(b)) => Some(a.time.min(b.time)),
            (a, b) => a.or(b).map(|e| e.time),
        };
        match (first, self.releases.last()) {
            (Some(t), Some(r)) => Some(t.min(r.time)),
            (t, r) => t.or(r.map(|r| r.time)),
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.timers.len() + self.releases.len()
            - usize::from(self.taken.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn earliest_first_then_insertion_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), Event::Sample);
        q.push(SimTime(1), Event::FlowStart(FlowId(1)));
        q.push(SimTime(5), Event::WarmupEnd);
        q.push(SimTime(1), Event::FlowStart(FlowId(0)));
        assert_eq!(q.pop(), Some((SimTime(1), Event::FlowStart(FlowId(1)))));
        assert_eq!(q.pop(), Some((SimTime(1), Event::FlowStart(FlowId(0)))));
        assert_eq!(q.pop(), Some((SimTime(5), Event::Sample)));
        assert_eq!(q.pop(), Some((SimTime(5), Event::WarmupEnd)));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn pop_before_stops_at_the_limit() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), Event::Sample);
        q.push(SimTime(3), Event::FlowTimer(FlowId(0)));
        assert_eq!(q.pop_before(SimTime(3)), None);
        assert_eq!(
            q.pop_before(SimTime(4)),
            Some((SimTime(3), Event::FlowTimer(FlowId(0))))
        );
        assert_eq!(q.pop_before(SimTime(10)), None);
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn entry_is_small() {
        assert!(std::mem::size_of::<Entry>() <= 24);
    }

    #[test]
    fn long_delays_keep_insertion_order_and_the_scheduling_time_is_recovered() {
        let mut q = EventQueue::new();
        // Both more than 4.3 s ahead: by insertion.
        q.push(SimTime::from_secs(100), Event::FlowStart(FlowId(2)));
        q.push(SimTime::from_secs(100), Event::FlowStart(FlowId(1)));
        q.push(SimTime::from_millis(1500), Event::Sample);
        assert_eq!(q.pop(), Some((SimTime::from_millis(1500), Event::Sample)));
        assert_eq!(q.scheduled(), SimTime::ZERO);
        q.push_as_of(
            SimTime::from_secs(100),
            SimTime::from_secs(99),
            Event::WarmupEnd,
        );
        assert_eq!(
            q.pop(),
            Some((SimTime::from_secs(100), Event::FlowStart(FlowId(2))))
        );
        assert_eq!(
            q.pop(),
            Some((SimTime::from_secs(100), Event::FlowStart(FlowId(1))))
        );
        assert_eq!(q.pop(), Some((SimTime::from_secs(100), Event::WarmupEnd)));
        assert_eq!(q.scheduled(), SimTime::from_secs(99));
    }

    #[test]
    fn an_event_scheduled_ahead_keeps_its_place_among_those_at_its_time() {
        let mut q = EventQueue::new();
        q.push(SimTime(1), Event::Sample);
        q.push(SimTime(10), Event::WarmupEnd); // scheduled at 0
                                               // Scheduled now (time 0) as of time 5: after WarmupEnd at 10, before what time 5
                                               // schedules for 10.
        q.push_as_of(SimTime(10), SimTime(5), Event::FlowStart(FlowId(1)));
        assert_eq!(q.pop(), Some((SimTime(1), Event::Sample)));
        q.push(SimTime(5), Event::FlowStop(FlowId(0)));
        assert_eq!(q.pop(), Some((SimTime(5), Event::FlowStop(FlowId(0)))));
        q.push(SimTime(10), Event::FlowStart(FlowId(2))); // scheduled at 5, after the one above
        q.push_as_of(SimTime(10), SimTime(7), Event::FlowStart(FlowId(3)));
        assert_eq!(q.pop(), Some((SimTime(10), Event::WarmupEnd)));
        assert_eq!(q.pop(), Some((SimTime(10), Event::FlowStart(FlowId(1)))));
        assert_eq!(q.pop(), Some((SimTime(10), Event::FlowStart(FlowId(2)))));
        assert_eq!(q.pop(), Some((SimTime(10), Event::FlowStart(FlowId(3)))));
    }

    fn event(i: u32, timer: bool) -> Event {
        if timer {
            Event::FlowTimer(FlowId(i))
        } else {
            Event::Arrive(LinkId(i))
        }
    }

    proptest! {
        #[test]
        fn timers_and_packet_events_interleave_in_one_order(
            items in proptest::collection::vec((0u64..30, any::<bool>()), 0..200)
        ) {
            let mut q = EventQueue::new();
            for (i, &(t, timer)) in items.iter().enumerate() {
                let ev = if timer { Event::FlowTimer(FlowId(i as u32)) } else { Event::FlowStart(FlowId(i as u32)) };
                q.push(SimTime(t), ev);
            }
            let mut expected: Vec<(u64, usize)> = items.iter().enumerate().map(|(i, &(t, _))| (t, i)).collect();
            expected.sort();
            for (t, i) in expected {
                let (time, ev) = q.pop().unwrap();
                prop_assert_eq!(time, SimTime(t));
                let id = match ev { Event::FlowTimer(f) | Event::FlowStart(f) => f.0 as usize, _ => unreachable!() };
                prop_assert_eq!(id, i);
            }
            prop_assert!(q.pop().is_none());
        }

        /// Pushes (as of now or of an earlier instant) interleaved with pops, against an
        /// ordered set of (time, scheduled, insertion): the popped entry's place taken by the
        /// next push into its heap changes nothing.
        #[test]
        fn interleaved_pushes_and_pops_follow_the_reference_order(
            ops in proptest::collection::vec((0u8..4, 0u64..20, 0u64..5, any::<bool>()), 0..300)
        ) {
            let mut q = EventQueue::new();
            let mut reference = std::collections::BTreeSet::new();
            let (mut now, mut n) = (0u64, 0u32);
            for (op, dt, back, timer) in ops {
                if op == 0 {
                    let got = q.pop();
                    let want = reference.pop_first();
                    prop_assert_eq!(got.map(|(t, e)| (t.0, e)), want.map(|(t, _, i, timer)| (t, event(i, timer))));
                    if let Some((t, ..)) = want {
                        now = t;
                    }
                    prop_assert_eq!(q.peek_time().map(|t| t.0), reference.first().map(|e| e.0));
                } else {
                    let scheduled = now.saturating_sub(back);
                    let time = now + dt;
                    q.push_as_of(SimTime(time), SimTime(scheduled), event(n, timer));
                    reference.insert((time, scheduled, n, timer));
                    n += 1;
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(want) = reference.pop_first() {
                prop_assert_eq!(q.pop(), Some((SimTime(want.0), event(want.2, want.3))));
            }
            prop_assert!(q.pop().is_none() && q.is_empty());
        }

        /// As above with times spread from nanoseconds to a minute, so that timers go into
        /// the wheel's heap, onto its slots and into its overflow (`timer_wheel`), with ties.
        /// Pushes are as of now, so the reference order is (time, insertion).
        #[test]
        fn timers_far_and_near_follow_the_reference_order(
            ops in proptest::collection::vec(
                (
                    0u8..3,
                    prop_oneof![0u64..4, 0u64..3_000_000, 0u64..(1 << 26), 0u64..(1 << 36)],
                    proptest::bool::weighted(0.8),
                ),
                0..400,
            )
        ) {
            let mut q = EventQueue::new();
            let mut reference = std::collections::BTreeSet::new();
            let (mut now, mut n) = (0u64, 0u32);
            for (op, dt, timer) in ops {
                if op == 0 {
                    let got = q.pop();
                    let want = reference.pop_first();
                    prop_assert_eq!(got.map(|(t, e)| (t.0, e)), want.map(|(t, i, timer)| (t, event(i, timer))));
                    if let Some((t, ..)) = want {
                        now = t;
                    }
                } else {
                    q.push(SimTime(now + dt), event(n, timer));
                    reference.insert((now + dt, n, timer));
                    n += 1;
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(want) = reference.pop_first() {
                prop_assert_eq!(q.pop(), Some((SimTime(want.0), event(want.1, want.2))));
            }
            prop_assert!(q.pop().is_none() && q.is_empty());
        }

        /// Releases (`push_release`, kept apart from the heap up to `RELEASE_LANE` held, then
        /// in the heap) interleaved with other events, timers and pops, against an ordered set
        /// of (time, scheduled, insertion): a single queue's order, ties included, with runs of
        /// pushes long enough to fill the lane.
        #[test]
        fn releases_follow_the_reference_order(
            ops in proptest::collection::vec((0u8..5, 0u64..12, 0u64..3, 0u8..3), 0..400)
        ) {
            let mut q = EventQueue::new();
            let mut reference = std::collections::BTreeSet::new();
            let (mut now, mut n) = (0u64, 0u32);
            let kind = |i: u32, k: u8| match k {
                0 => Event::Release(PacketId(i)),
                1 => Event::FlowTimer(FlowId(i)),
                _ => Event::Arrive(LinkId(i)),
            };
            for (op, dt, back, k) in ops {
                if op == 0 {
                    let got = q.pop();
                    let want = reference.pop_first();
                    prop_assert_eq!(got.map(|(t, e)| (t.0, e)), want.map(|(t, _, i, k)| (t, kind(i, k))));
                    if let Some((t, s, ..)) = want {
                        now = t;
                        prop_assert_eq!(q.scheduled(), SimTime(s));
                    }
                    prop_assert_eq!(q.peek_time().map(|t| t.0), reference.first().map(|e| e.0));
                } else {
                    let time = now + dt;
                    let scheduled = if k == 0 {
                        q.push_release(SimTime(time), PacketId(n));
                        now
                    } else {
                        let scheduled = now.saturating_sub(back);
                        q.push_as_of(SimTime(time), SimTime(scheduled), kind(n, k));
                        scheduled
                    };
                    reference.insert((time, scheduled, n, k));
                    n += 1;
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(want) = reference.pop_first() {
                prop_assert_eq!(q.pop(), Some((SimTime(want.0), kind(want.2, want.3))));
            }
            prop_assert!(q.pop().is_none() && q.is_empty());
        }

        #[test]
        fn pops_are_sorted_by_time_then_sequence(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::new();
            for (i, &t) in times.iter().enumerate() {
                q.push(SimTime(t), Event::FlowTimer(FlowId(i as u32)));
            }
            let mut last: Option<(SimTime, u32)> = None;
            while let Some((t, Event::FlowTimer(f))) = q.pop() {
                if let Some((lt, lf)) = last {
                    prop_assert!(t > lt || (t == lt && f.0 > lf));
                }
                last = Some((t, f.0));
            }
            prop_assert!(q.is_empty());
        }
    }
}
