//! A first-in first-out queue kept in one contiguous slice.
//!
//! For queues that are searched by position far more often than they change: the SACK
//! scoreboard's ranges and a receiver's out-of-order ranges, a sender's log of segments, an
//! MPTCP connection's chunks and its subflows' mappings. [`Fifo`] keeps them in a vector whose first `head` entries have been removed from the
//! front; those are dropped in one move once they make up half of the vector and at least
//! [`Fifo::COMPACT_AT`] entries, so each removal costs O(1) amortised (at most one move per
//! removal) and the live entries are always one slice: indexing and binary searches need no
//! wrap-around arithmetic. The vector holds at most twice the live entries plus
//! `COMPACT_AT`. (For a queue that is mostly pushed and popped, such as a link's pipeline,
//! `VecDeque` is as cheap or cheaper: the moves cost what the wrap-around saves.)

use std::ops::{Index, IndexMut};

#[derive(Clone, Debug)]
pub struct Fifo<T> {
    buf: Vec<T>,
    head: usize,
    /// Entries removed from the front since the queue was made ([`Fifo::removed`]).
    removed: u64,
}

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Fifo {
            buf: Vec::new(),
            head: 0,
            removed: 0,
        }
    }
}

impl<T: PartialEq> PartialEq for Fifo<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq> Eq for Fifo<T> {}

impl<T> Fifo<T> {
    /// Removed entries are dropped from the vector once there are at least this many (and they
    /// are half of it).
    pub const COMPACT_AT: usize = 16;

    pub fn with_capacity(capacity: usize) -> Self {
        Fifo {
            buf: Vec::with_capacity(capacity),
            head: 0,
            removed: 0,
        }
    }

    /// The entries, oldest first.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        &self.buf[self.head..]
    }

    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.buf[self.head..]
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len() - self.head
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == self.buf.len()
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.buf.get(self.head)
    }

    #[inline]
    pub fn back(&self) -> Option<&T> {
        self.as_slice().last()
    }

    #[inline]
    pub fn back_mut(&mut self) -> Option<&mut T> {
        self.as_mut_slice().last_mut()
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        self.as_slice().get(i)
    }

    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.as_mut_slice().get_mut(i)
    }

    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.as_slice().iter()
    }

    #[inline]
    pub fn push_back(&mut self, value: T) {
        self.buf.push(value);
    }

    /// Removes the oldest entry (nothing if empty).
    #[inline]
    pub fn drop_front(&mut self) {
        if self.is_empty() {
            return;
        }
        self.head += 1;
        self.removed += 1;
        self.compact();
    }

    /// Removes the entries at the front while `pred` holds of them: [`Fifo::drop_front`] for
    /// each, with the removed entries dropped from the vector (if due) once at the end, as
    /// the last of those calls would leave it due.
    #[inline]
    pub fn drop_front_while(&mut self, mut pred: impl FnMut(&T) -> bool) {
        let start = self.head;
        while self.buf.get(self.head).is_some_and(&mut pred) {
            self.head += 1;
        }
        if self.head != start {
            self.removed += (self.head - start) as u64;
            self.compact();
        }
    }

    /// How many entries were removed from the front (by [`Fifo::drop_front`] and
    /// [`Fifo::pop_front`]) since the queue was made: with it, a position kept from one call
    /// to the next survives removals at the front ([`Fifo::partition_point_from`]).
    #[inline]
    pub fn removed(&self) -> u64 {
        self.removed
    }

    /// `as_slice().partition_point(pred)` for a predicate true on a prefix of the entries, by
    /// a search from the front (entries 0, 1, 3, 7, ... then a binary search between the last
    /// two): O(log i) for an answer i, cheaper than a binary search over the whole queue when
    /// the answer is usually among its first entries.
    #[inline]
    pub fn partition_point_near_front(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        let s = self.as_slice();
        // Every entry before `lo` satisfies `pred`; the answer is at most `hi - 1`.
        let (mut lo, mut hi) = (0, 1);
        while hi <= s.len() && pred(&s[hi - 1]) {
            lo = hi;
            hi = 2 * hi + 1;
        }
        let end = (hi - 1).min(s.len());
        lo + s[lo..end].partition_point(pred)
    }

    /// `as_slice().partition_point(pred)` for a predicate true on a prefix of the entries,
    /// trying first whether the answer is `guess` (one check of two entries instead of a
    /// binary search when the caller keeps track of where the last answer was).
    #[inline]
    pub fn partition_point_from(&self, guess: usize, mut pred: impl FnMut(&T) -> bool) -> usize {
        let s = self.as_slice();
        if guess <= s.len()
            && (guess == 0 || pred(&s[guess - 1]))
            && s.get(guess).is_none_or(|e| !pred(e))
        {
            return guess;
        }
        s.partition_point(pred)
    }

    /// Drops the removed entries when the queue is empty, or when they are at least
    /// `COMPACT_AT` and half of the vector.
    #[inline]
    fn compact(&mut self) {
        if self.head == self.buf.len() {
            self.buf.clear();
            self.head = 0;
        } else if self.head >= Self::COMPACT_AT && 2 * self.head >= self.buf.len() {
            self.buf.drain(..self.head);
            self.head = 0;
        }
    }

    /// Inserts `value` at position `i` (0 is the oldest).
    pub fn insert(&mut self, i: usize, value: T) {
        self.buf.insert(self.head + i, value);
    }

    /// Removes the entries at positions `[from, to)`.
    pub fn remove_range(&mut self, from: usize, to: usize) {
        self.buf.drain(self.head + from..self.head + to);
        self.compact();
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.head = 0;
    }
}

impl<T: Copy> Fifo<T> {
    /// Removes and returns the oldest entry.
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        let first = *self.front()?;
        self.drop_front();
        Some(first)
    }
}

impl<'a, T> IntoIterator for &'a Fifo<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T> Index<usize> for Fifo<T> {
    type Output = T;

    #[inline]
    fn index(&self, i: usize) -> &T {
        &self.as_slice()[i]
    }
}

impl<T> IndexMut<usize> for Fifo<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.as_mut_slice()[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    proptest! {
        /// Every operation against a `VecDeque`, with long runs of removals from the front so
        /// that the removed head is dropped many times.
        #[test]
        fn behaves_as_a_vecdeque(ops in proptest::collection::vec((0u8..6, any::<u16>()), 0..400)) {
            let mut fifo = Fifo::default();
            let mut reference = VecDeque::new();
            for (op, v) in ops {
                match op {
                    0 | 1 => {
                        fifo.push_back(v);
                        reference.push_back(v);
                    }
                    2 | 3 => prop_assert_eq!(fifo.pop_front(), reference.pop_front()),
                    4 if !reference.is_empty() => {
                        let i = v as usize % (reference.len() + 1);
                        fifo.insert(i, v);
                        reference.insert(i, v);
                    }
                    5 if !reference.is_empty() => {
                        let from = v as usize % reference.len();
                        let to = from + (v as usize / 7) % (reference.len() - from + 1);
                        fifo.remove_range(from, to);
                        reference.drain(from..to);
                    }
                    _ => fifo.drop_front(),
                }
                prop_assert_eq!(fifo.len(), reference.len());
                prop_assert!(fifo.iter().eq(reference.iter()));
                prop_assert_eq!(fifo.front(), reference.front());
                prop_assert_eq!(fifo.back(), reference.back());
                prop_assert!(fifo.buf.len() <= 2 * fifo.len() + Fifo::<u16>::COMPACT_AT);
            }
        }

        /// Removing while a predicate holds leaves the entries, the count removed and the
        /// bound on the vector that removing them one by one leaves.
        #[test]
        fn drop_front_while_is_drop_front_repeated(
            pushes in proptest::collection::vec((1usize..40, any::<u8>()), 1..30),
        ) {
            let (mut whole, mut one_by_one) = (Fifo::default(), Fifo::default());
            for (n, below) in pushes {
                for v in 0..n {
                    let v = (v * 37 % 256) as u8;
                    whole.push_back(v);
                    one_by_one.push_back(v);
                }
                whole.drop_front_while(|&v| v < below);
                while one_by_one.front().is_some_and(|&v| v < below) {
                    one_by_one.drop_front();
                }
                prop_assert_eq!(whole.as_slice(), one_by_one.as_slice());
                prop_assert_eq!(whole.removed(), one_by_one.removed());
                prop_assert!(whole.buf.len() <= 2 * whole.len() + Fifo::<u8>::COMPACT_AT);
            }
        }

        /// Whatever the guess, the answer is `partition_point`'s; `removed` counts the entries
        /// taken from the front.
        #[test]
        fn partition_point_from_any_guess(
            mut values in proptest::collection::vec(any::<u8>(), 0..60),
            removed in 0usize..40,
            pivot in any::<u8>(),
            guess in 0usize..70,
        ) {
            values.sort_unstable();
            let mut fifo = Fifo::default();
            for &v in &values {
                fifo.push_back(v);
            }
            let removed = removed.min(values.len());
            for _ in 0..removed {
                fifo.drop_front();
            }
            fifo.drop_front();
            let removed = (removed + 1).min(values.len());
            prop_assert_eq!(fifo.removed(), removed as u64);
            let expected = fifo.as_slice().partition_point(|&v| v < pivot);
            prop_assert_eq!(fifo.partition_point_from(guess, |&v| v < pivot), expected);
            prop_assert_eq!(fifo.partition_point_from(expected, |&v| v < pivot), expected);
            prop_assert_eq!(fifo.partition_point_near_front(|&v| v < pivot), expected);
        }
    }

    #[test]
    fn equal_contents_compare_equal_whatever_was_removed() {
        let mut a = Fifo::default();
        let mut b = Fifo::default();
        for v in 0..40 {
            a.push_back(v);
        }
        for _ in 0..30 {
            a.drop_front();
        }
        for v in 30..40 {
            b.push_back(v);
        }
        assert_eq!(a, b);
        a[0] = 99;
        assert_ne!(a, b);
    }
}
