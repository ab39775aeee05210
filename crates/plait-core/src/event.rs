//! The event queue: a binary heap of small entries ordered by (time, insertion sequence).
//!
//! Ties in time are broken by the order of insertion, so a run is a deterministic function of
//! its inputs. Entries are 24 bytes: the time, the sequence number and a compact event. Timers
//! are cancelled lazily: the owner remembers the deadline it armed and ignores any wake-up
//! that does not match it (see `sim`).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
    /// A flow's transport timer (retransmission, delayed ACK) may be due.
    FlowTimer(FlowId),
    /// A datagram source's next send or period change.
    SourceWake(FlowId),
    /// Take a time-series sample.
    Sample,
    /// The warm-up period ends: snapshot the counters.
    WarmupEnd,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: SimTime,
    seq: u64,
    event: Event,
}

impl Entry {
    #[inline]
    fn key(&self) -> u128 {
        ((self.time.0 as u128) << 64) | self.seq as u128
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest entry first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        // One 128-bit comparison of (time, seq): fewer unpredictable branches in the heap.
        other.key().cmp(&self.key())
    }
}

/// A priority queue of events ordered by (time, insertion sequence).
///
/// Flow timers live in a heap of their own: there is one per flow, mostly far in the future,
/// while the packet events (a few per link) are the ones popped all the time. Keeping the hot
/// heap small makes each pop a few levels deep. `pop` takes the earlier of the two heads, so
/// the order is exactly that of a single queue.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    timers: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue::default()
    }

    /// Schedules `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(Entry { time, seq, event });
    }

    #[inline]
    fn insert(&mut self, entry: Entry) {
        if matches!(entry.event, Event::FlowTimer(_)) {
            self.timers.push(entry);
        } else {
            self.heap.push(entry);
        }
    }

    /// Puts back an event just popped, ahead of every other event at the same time (its
    /// original position: nothing at time `time` was inserted before it that is still queued).
    #[inline]
    pub fn push_front(&mut self, time: SimTime, event: Event) {
        self.heap.push(Entry {
            time,
            seq: 0,
            event,
        });
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        // `Entry`'s order is reversed: the greater entry is the earlier one.
        let from_timers = match (self.heap.peek(), self.timers.peek()) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(a), Some(b)) => b > a,
        };
        let heap = if from_timers {
            &mut self.timers
        } else {
            &mut self.heap
        };
        heap.pop().map(|e| (e.time, e.event))
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
        self.heap.is_empty() && self.timers.is_empty()
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
    fn entry_is_small() {
        assert!(std::mem::size_of::<Entry>() <= 24);
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
