//! The flow timers' queue: a small heap of the timers due soonest in front of a wheel of
//! unsorted slots.
//!
//! A run of N flows keeps about N retransmission timers, mostly a timeout ahead, and re-arms
//! one on nearly every wake-up (see `sim`: a wake-up finds its deadline moved later by the ACKs
//! since, and arms it again). In one heap of N entries every re-arm is a pass down log₂ N
//! levels. Here an entry a slot or more ahead is appended to its slot, and slots enter the
//! heap one at a time, when the heap has run dry: the heap then holds only the timers of one
//! slot (about a millisecond). The order of the entries popped is that of a single heap: the
//! heap holds every entry before `boundary` and the slots every entry at or after it, so the
//! heap's top is the earliest of all.
//!
//! The wheel covers `SLOTS` slots of 2^`SHIFT` ns from the boundary (by default 4096 slots of
//! 2^20 ns, about a millisecond: 4.3 s); an entry further ahead (a backed-off timeout) waits
//! in an overflow heap and moves to its slot once the boundary is near enough. `SLOTS` is a
//! power of two, so a slot's index is its number masked.
//!
//! A few timers are cheaper in the heap alone: a flow that paces its packets (TFRC, a constant
//! bit rate source) re-arms its timer a packet's spacing ahead, and on the wheel every such
//! entry would go onto a slot and from there into the heap. So the wheel is used only while
//! more than [`WHEEL_ABOVE`] entries are held, and given up below [`HEAP_BELOW`] (the gap
//! keeps a count near either from switching back and forth). Without the wheel, `boundary` is
//! `u64::MAX`: every entry is before it.

use super::{Entry, MinHeap};

/// The end of a list of nodes.
const NONE: u32 = u32::MAX;

/// An entry on the wheel and the next node of its list.
#[derive(Clone, Copy, Debug)]
struct Node {
    entry: Entry,
    next: u32,
}

/// Entries above which the wheel is taken into use.
pub(super) const WHEEL_ABOVE: usize = 256;
/// Entries below which the wheel is given up.
pub(super) const HEAP_BELOW: usize = 64;

#[derive(Debug)]
pub(super) struct TimerWheel<const SHIFT: u32 = 20, const SLOTS: u64 = 4096> {
    /// Every entry whose slot number is below `boundary`.
    near: MinHeap<true>,
    /// The first slot number not in `near`: slots `boundary .. boundary + SLOTS` are on the
    /// wheel. `u64::MAX` while the wheel is not in use.
    boundary: u64,
    /// The heap's size above which the wheel is taken into use: `wheel_above` without the
    /// wheel, `usize::MAX` with it (one comparison per push either way).
    spread_above: usize,
    wheel_above: usize,
    heap_below: usize,
    /// Slot `n`'s entries, for `boundary <= n < boundary + SLOTS`: the first of a list
    /// through `nodes` at index `n % SLOTS` ([`NONE`] for none); allocated when the first
    /// entry goes on the wheel.
    slots: Vec<u32>,
    /// The entries on the wheel, each with the next of its slot, and the unused nodes, each
    /// with the next unused one. One arena rather than a vector per slot: the wheel's memory
    /// is that of the entries it holds at most.
    nodes: Vec<Node>,
    /// The first unused node ([`NONE`] for none).
    unused: u32,
    /// Entries on the wheel.
    on_wheel: usize,
    /// Entries at or beyond slot `boundary + SLOTS`, earliest first.
    overflow: MinHeap<true>,
}

impl<const SHIFT: u32, const SLOTS: u64> Default for TimerWheel<SHIFT, SLOTS> {
    fn default() -> Self {
        Self::with_thresholds(WHEEL_ABOVE, HEAP_BELOW)
    }
}

impl<const SHIFT: u32, const SLOTS: u64> TimerWheel<SHIFT, SLOTS> {
    /// A queue that takes the wheel into use above `wheel_above` entries and gives it up below
    /// `heap_below`.
    pub(super) fn with_thresholds(wheel_above: usize, heap_below: usize) -> Self {
        TimerWheel {
            near: MinHeap::default(),
            boundary: u64::MAX,
            spread_above: wheel_above,
            wheel_above,
            heap_below,
            slots: Vec::new(),
            nodes: Vec::new(),
            unused: NONE,
            on_wheel: 0,
            overflow: MinHeap::default(),
        }
    }

    /// The slot an entry falls in.
    #[inline]
    fn slot_of(entry: &Entry) -> u64 {
        entry.time.0 >> SHIFT
    }

    /// The earliest entry (after [`TimerWheel::refill`]).
    #[inline]
    pub(super) fn peek(&self) -> Option<&Entry> {
        self.near.peek()
    }

    /// Entries held.
    pub(super) fn len(&self) -> usize {
        self.near.len() + self.on_wheel + self.overflow.len()
    }

    #[inline]
    pub(super) fn push(&mut self, entry: Entry) {
        if Self::slot_of(&entry) < self.boundary {
            self.near.push(entry);
            if self.near.len() > self.spread_above {
                self.spread();
            }
        } else {
            self.put_ahead(entry);
        }
    }

    /// Replaces the earliest entry (it exists) by `entry`: the same as removing it and pushing
    /// `entry`.
    #[inline]
    pub(super) fn replace_top(&mut self, entry: Entry) {
        if Self::slot_of(&entry) < self.boundary {
            self.near.replace_top(entry);
        } else {
            self.near.remove_top();
            self.put_ahead(entry);
        }
    }

    /// Removes the earliest entry (it exists).
    #[inline]
    pub(super) fn remove_top(&mut self) {
        self.near.remove_top();
    }

    /// Brings the next slot in when the heap has run dry: then the heap's top is the earliest
    /// entry, if any. Call before [`TimerWheel::peek`].
    #[inline(always)]
    pub(super) fn refill(&mut self) {
        if self.near.len() == 0 && (self.on_wheel > 0 || self.overflow.len() > 0) {
            self.advance();
        }
    }

    /// An entry at or after the boundary, onto its slot or into the overflow list.
    #[inline]
    fn put_ahead(&mut self, entry: Entry) {
        let slot = Self::slot_of(&entry);
        if slot < self.boundary + SLOTS {
            if self.slots.is_empty() {
                self.slots = vec![NONE; SLOTS as usize];
            }
            let head = &mut self.slots[(slot % SLOTS) as usize];
            let node = Node { entry, next: *head };
            *head = if self.unused == NONE {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            } else {
                let i = self.unused;
                self.unused = self.nodes[i as usize].next;
                self.nodes[i as usize] = node;
                i
            };
            self.on_wheel += 1;
        } else {
            self.overflow.push(entry);
        }
    }

    /// Takes the wheel into use: the heap keeps the entries of the earliest entry's slot, the
    /// others go onto the wheel (or into the overflow).
    #[inline(never)]
    fn spread(&mut self) {
        let entries = std::mem::take(&mut self.near.entries);
        self.boundary = entries.iter().map(Self::slot_of).min().unwrap_or(0) + 1;
        self.spread_above = usize::MAX;
        for entry in entries {
            if Self::slot_of(&entry) < self.boundary {
                self.near.push(entry);
            } else {
                self.put_ahead(entry);
            }
        }
    }

    /// Moves the first occupied slot into the (empty) heap, or, when few entries are left,
    /// gives up the wheel and moves them all.
    #[inline(never)]
    fn advance(&mut self) {
        if self.len() < self.heap_below {
            self.boundary = u64::MAX;
            self.spread_above = self.wheel_above;
            for k in 0..self.slots.len() {
                self.take_slot(k);
            }
            while let Some(&entry) = self.overflow.peek() {
                self.overflow.remove_top();
                self.near.push(entry);
            }
            return;
        }
        if self.on_wheel == 0 {
            // Nothing on the wheel: it jumps to the slot of the first entry in the overflow.
            self.boundary = self.overflow.peek().map_or(self.boundary, Self::slot_of);
            self.take_overflow();
        }
        // `on_wheel > 0`: an occupied slot lies within `SLOTS` of the boundary, and before any
        // entry of the overflow list (those are `SLOTS` or more beyond the boundary).
        while self.slots[(self.boundary % SLOTS) as usize] == NONE {
            self.boundary += 1;
        }
        self.take_slot((self.boundary % SLOTS) as usize);
        self.boundary += 1;
        self.take_overflow();
    }

    /// Moves the entries of the slot at index `k` into the heap.
    fn take_slot(&mut self, k: usize) {
        let mut i = std::mem::replace(&mut self.slots[k], NONE);
        let (nodes, near) = (&mut self.nodes, &mut self.near);
        let (mut unused, mut taken) = (self.unused, 0);
        while let Some(node) = nodes.get_mut(i as usize) {
            near.push(node.entry);
            let next = std::mem::replace(&mut node.next, unused);
            unused = i;
            taken += 1;
            i = next;
        }
        self.unused = unused;
        self.on_wheel -= taken;
    }

    /// Moves the overflow entries that the wheel now covers onto their slots.
    fn take_overflow(&mut self) {
        while let Some(entry) = self.overflow.peek().copied() {
            if Self::slot_of(&entry) >= self.boundary + SLOTS {
                break;
            }
            self.overflow.remove_top();
            self.put_ahead(entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Event, Which};
    use crate::ids::FlowId;
    use crate::time::SimTime;
    use proptest::prelude::*;

    fn entry(time: u64, seq: u64) -> Entry {
        Entry {
            time: SimTime(time),
            order: seq,
            event: Event::FlowTimer(FlowId(seq as u32)),
        }
    }

    proptest! {
        /// A wheel of 4 slots of 2 ns against an ordered set, with every path taken: entries
        /// into the heap, onto slots and into the overflow, the wheel jumping to the overflow,
        /// pushes that replace the entry just popped (`Which::Timers` taken), and the wheel
        /// always in use, taken into use and given up, or never used.
        #[test]
        fn pops_follow_the_reference_order(
            ops in proptest::collection::vec((0u8..3, 0u64..40), 0..300),
            (wheel_above, heap_below) in prop_oneof![Just((0, 0)), Just((8, 3)), Just((5, 4)), Just((usize::MAX, 0))],
        ) {
            let mut wheel = TimerWheel::<1, 4>::with_thresholds(wheel_above, heap_below);
            let mut reference = std::collections::BTreeSet::new();
            let (mut now, mut seq, mut taken) = (0u64, 0u64, None::<Which>);
            for (op, dt) in ops {
                if op == 0 {
                    if taken.take().is_some() {
                        wheel.remove_top();
                    }
                    wheel.refill();
                    let got = wheel.peek().map(|e| (e.time.0, e.order));
                    let want = reference.pop_first();
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = want {
                        now = t;
                        taken = Some(Which::Timers);
                    }
                } else {
                    let e = entry(now + dt, seq);
                    if taken.take().is_some() {
                        wheel.replace_top(e);
                    } else {
                        wheel.push(e);
                    }
                    reference.insert((now + dt, seq));
                    seq += 1;
                }
                prop_assert_eq!(wheel.len() - usize::from(taken.is_some()), reference.len());
            }
        }
    }
}
