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
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

/// A priority queue of events ordered by (time, insertion sequence).
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
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
        self.heap.push(Entry { time, seq, event });
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
        self.heap.pop().map(|e| (e.time, e.event))
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
