//! A first-in first-out ring buffer whose capacity is a power of two.
//!
//! For the queues a link pushes at the back and pops at the front once per packet: its
//! pipeline (packets on the wire or propagating) and the packets waiting in a drop-tail queue.
//! The `n`-th entry lives at slot `(head + n) & mask`, one addition and one mask, where
//! `VecDeque` compares and subtracts to wrap; the buffer doubles when it is full, so its
//! capacity is at most twice the longest the queue has been (and at least
//! [`Ring::MIN_CAPACITY`] once anything was pushed).

/// A FIFO queue of `Copy` entries in a power-of-two ring.
#[derive(Clone, Debug, Default)]
pub struct Ring<T> {
    /// Every slot holds a value (unused ones a default or a stale entry); `buf.len()` is 0 or
    /// a power of two.
    buf: Vec<T>,
    /// The slot of the first entry.
    head: usize,
    len: usize,
}

impl<T: Copy + Default> Ring<T> {
    /// The capacity of the first allocation.
    pub const MIN_CAPACITY: usize = 8;

    pub fn new() -> Self {
        Ring {
            buf: Vec::new(),
            head: 0,
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }

    /// The `i`-th entry from the front.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        if i < self.len {
            Some(&self.buf[(self.head + i) & self.mask()])
        } else {
            None
        }
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.get(0)
    }

    #[inline]
    pub fn push_back(&mut self, value: T) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let slot = (self.head + self.len) & self.mask();
        self.buf[slot] = value;
        self.len += 1;
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let value = self.buf[self.head];
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(value)
    }

    pub fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// The entries, front first.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len).map(move |i| &self.buf[(self.head + i) & self.mask()])
    }

    /// Doubles the capacity (to [`Ring::MIN_CAPACITY`] at first), the entries moved to the
    /// start of the new buffer in order.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let capacity = (self.buf.len() * 2).max(Self::MIN_CAPACITY);
        let mut buf = Vec::with_capacity(capacity);
        buf.extend(self.iter().copied());
        buf.resize(capacity, T::default());
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[test]
    fn wraps_around_and_grows_in_order() {
        let mut r = Ring::new();
        assert_eq!(r.pop_front(), None::<u32>);
        for i in 0..6 {
            r.push_back(i);
        }
        for i in 0..4 {
            assert_eq!(r.pop_front(), Some(i));
        }
        // The back wraps to the start of the buffer of 8, then the ring grows while wrapped.
        for i in 6..20 {
            r.push_back(i);
        }
        assert_eq!(r.len(), 16);
        assert_eq!(
            r.iter().copied().collect::<Vec<_>>(),
            (4..20).collect::<Vec<_>>()
        );
        assert_eq!(r.front(), Some(&4));
        assert_eq!(r.get(15), Some(&19));
        assert_eq!(r.get(16), None);
        r.clear();
        assert!(r.is_empty());
        assert_eq!(r.front(), None);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Push(u16),
        Pop,
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => any::<u16>().prop_map(Op::Push),
            5 => Just(Op::Pop),
            1 => Just(Op::Clear),
        ]
    }

    proptest! {
        /// Any sequence of pushes, pops and clears leaves the same entries as `VecDeque`.
        #[test]
        fn matches_vecdeque(ops in proptest::collection::vec(op(), 0..300)) {
            let mut ring = Ring::new();
            let mut reference = VecDeque::new();
            for op in ops {
                match op {
                    Op::Push(v) => {
                        ring.push_back(v);
                        reference.push_back(v);
                    }
                    Op::Pop => prop_assert_eq!(ring.pop_front(), reference.pop_front()),
                    Op::Clear => {
                        ring.clear();
                        reference.clear();
                    }
                }
                prop_assert_eq!(ring.len(), reference.len());
                prop_assert_eq!(ring.front(), reference.front());
                for i in 0..=reference.len() {
                    prop_assert_eq!(ring.get(i), reference.get(i));
                }
                prop_assert!(ring.iter().eq(reference.iter()));
            }
        }
    }
}
