//! The event queue: a binary heap of small entries ordered by (time, insertion sequence).
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
//! apart. Timers are cancelled lazily: the owner remembers the deadline it armed and ignores
//! any wake-up that does not match it (see `sim`).

use crate::ids::{FlowId, LinkId};
use crate::time::SimTime;

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
#[derive(Debug, Default)]
struct MinHeap {
    entries: Vec<Entry>,
}

impl MinHeap {
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

    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        let last = self.entries.pop()?;
        let Some(&top) = self.entries.first() else {
            return Some(last);
        };
        // Sift `last` down from the root, moving the smaller child up into the hole.
        let n = self.entries.len();
        let key = last.key();
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
            if self.entries[child].key() >= key {
                break;
            }
            self.entries[i] = self.entries[child];
            i = child;
        }
        self.entries[i] = last;
        Some(top)
    }

    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// A priority queue of events ordered by (time, insertion sequence).
///
/// Flow timers live in a heap of their own: there is one per flow, mostly far in the future,
/// while the packet events (a few per link) are the ones popped all the time. Keeping the hot
/// heap small makes each pop a few levels deep. Pops take the earlier of the two heads, so
/// the order is exactly that of a single queue.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: MinHeap,
    timers: MinHeap,
    next_seq: u64,
    /// The time of the last event popped: what a new event is scheduled at.
    now: SimTime,
    /// When the last event popped was scheduled.
    scheduled: SimTime,
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
    #[inline]
    pub fn push_as_of(&mut self, time: SimTime, scheduled: SimTime, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry {
            time,
            order: (rank(time, scheduled) << 32) | (seq & u32::MAX as u64),
            event,
        };
        if matches!(event, Event::FlowTimer(_)) {
            self.timers.push(entry);
        } else {
            self.heap.push(entry);
        }
    }

    /// The heap holding the earliest event, if any.
    #[inline]
    fn earliest(&mut self) -> Option<&mut MinHeap> {
        match (self.heap.peek(), self.timers.peek()) {
            (None, None) => None,
            (Some(_), None) => Some(&mut self.heap),
            (None, Some(_)) => Some(&mut self.timers),
            (Some(a), Some(b)) => Some(if b.key() < a.key() {
                &mut self.timers
            } else {
                &mut self.heap
            }),
        }
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        let e = self.earliest()?.pop()?;
        (self.now, self.scheduled) = (e.time, e.scheduled());
        Some((e.time, e.event))
    }

    /// Removes and returns the earliest event if it is strictly before `end`.
    #[inline]
    pub fn pop_before(&mut self, end: SimTime) -> Option<(SimTime, Event)> {
        let heap = self.earliest()?;
        if heap.peek()?.time >= end {
            return None;
        }
        let e = heap.pop()?;
        (self.now, self.scheduled) = (e.time, e.scheduled());
        Some((e.time, e.event))
    }

    /// When the last event popped was scheduled: with its time, its place in the order.
    pub fn scheduled(&self) -> SimTime {
        self.scheduled
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        match (self.heap.peek(), self.timers.peek()) {
            (Some(a), Some(b)) => Some(a.time.min(b.time)),
            (a, b) => a.or(b).map(|e| e.time),
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.timers.len()
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
