//! The connection-level receive side of an MPTCP connection (RFC 8684 §3.3; reference
//! `multipath_cc.md` §4.3): data from every subflow, once in order at the subflow level, is
//! placed by data sequence number in one shared receive buffer.
//!
//! - data at the next expected DSN is delivered to the application at once (a bulk reader:
//!   the application reads whatever is in order), and pulls in whatever the out-of-order queue
//!   then makes contiguous;
//! - data above it waits in the out-of-order queue: head-of-line blocking;
//! - data already delivered or queued (a reinjected copy) is a duplicate and is dropped, as is
//!   data beyond the right edge of the window last advertised;
//! - the advertised window is what is left of the buffer, `receive_buffer - out-of-order
//!   bytes`, and its right edge (`DATA_ACK + window`) never moves left (RFC 8684 §3.3.5,
//!   RFC 9293 §3.8.6.2.2: a receiver should not shrink the window).

use crate::transport::tcp::RangeSet;

/// The shared receive buffer of an MPTCP connection.
#[derive(Clone, Debug)]
pub struct DataReceiver {
    receive_buffer: u64,
    /// The next data sequence number expected (the DATA_ACK).
    rcv_nxt: u64,
    out_of_order: RangeSet,
    /// Right edge of the window last advertised.
    right_edge: u64,
    duplicate_bytes: u64,
    beyond_window_bytes: u64,
    max_out_of_order_bytes: u64,
}

impl DataReceiver {
    /// A receive buffer of `receive_buffer` bytes (at least 1).
    pub fn new(receive_buffer: u64) -> Self {
        let receive_buffer = receive_buffer.max(1);
        DataReceiver {
            receive_buffer,
            rcv_nxt: 0,
            out_of_order: RangeSet::new(),
            right_edge: receive_buffer,
            duplicate_bytes: 0,
            beyond_window_bytes: 0,
            max_out_of_order_bytes: 0,
        }
    }

    /// `[dsn, dsn + len)` arrived (in order at its subflow). Returns the new `rcv_nxt` if the
    /// data made more of the stream readable.
    #[inline(always)]
    pub fn handle_data(&mut self, dsn: u64, len: u64) -> Option<u64> {
        let end = dsn + len;
        // The usual case: the next bytes expected, inside the window, nothing waiting. What
        // the general path does with them: nothing beyond the window (`end <= right_edge`)
        // and nothing duplicate (`start == dsn == rcv_nxt < end`); readable at once.
        if dsn == self.rcv_nxt
            && dsn < end
            && end <= self.right_edge
            && self.out_of_order.is_empty()
        {
            self.rcv_nxt = end;
            self.refresh_right_edge();
            return Some(end);
        }
        self.handle_data_general(dsn, len)
    }

    /// [`DataReceiver::handle_data`], any case.
    #[inline(never)]
    fn handle_data_general(&mut self, dsn: u64, len: u64) -> Option<u64> {
        let end = dsn + len;
        let kept_end = end.min(self.right_edge);
        self.beyond_window_bytes += end - kept_end.max(dsn);
        let start = dsn.max(self.rcv_nxt);
        if start >= kept_end {
            self.duplicate_bytes += kept_end.saturating_sub(dsn);
            return None;
        }
        self.duplicate_bytes += start - dsn;
        if start == self.rcv_nxt {
            // In order: what the general path below does, without inserting into the queue
            // and taking out again. Every range held starts above `rcv_nxt` (the first is
            // removed as soon as it is reached), and ranges held neither overlap nor touch.
            match self.out_of_order.first() {
                // Nothing waiting (the usual case), or a range the data does not reach:
                // readable at once, the queue unchanged.
                None => {}
                Some((s, _)) if kept_end < s => {}
                // Ending where the first range held starts: the two join and are readable.
                Some((s, e)) if kept_end == s => {
                    self.out_of_order.remove_below(e);
                    self.rcv_nxt = e;
                    self.refresh_right_edge();
                    return Some(e);
                }
                Some(_) => return self.insert_out_of_order(start, kept_end),
            }
            self.rcv_nxt = kept_end;
            self.refresh_right_edge();
            return Some(kept_end);
        }
        self.insert_out_of_order(start, kept_end)
    }

    /// [`DataReceiver::handle_data`] of `[start, kept_end)`, new bytes inside the window, by
    /// way of the out-of-order queue.
    fn insert_out_of_order(&mut self, start: u64, kept_end: u64) -> Option<u64> {
        let before = self.out_of_order.total_bytes();
        let (added, _) = self.out_of_order.insert(start, kept_end);
        self.duplicate_bytes += (kept_end - start) - added;
        debug_assert_eq!(self.out_of_order.total_bytes(), before + added);
        let advanced = match self.out_of_order.first() {
            Some((s, e)) if s <= self.rcv_nxt => {
                self.out_of_order.remove_below(e);
                self.rcv_nxt = e;
                Some(e)
            }
            _ => None,
        };
        self.max_out_of_order_bytes = self
            .max_out_of_order_bytes
            .max(self.out_of_order.total_bytes());
        self.refresh_right_edge();
        advanced
    }

    #[inline(always)]
    fn refresh_right_edge(&mut self) {
        let free = self
            .receive_buffer
            .saturating_sub(self.out_of_order.total_bytes());
        self.right_edge = self.right_edge.max(self.rcv_nxt + free);
    }

    /// The DATA_ACK: the next data sequence number expected.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// The window to advertise, relative to the DATA_ACK.
    pub fn window(&self) -> u64 {
        self.right_edge - self.rcv_nxt
    }

    /// Bytes delivered in order to the application.
    pub fn delivered_bytes(&self) -> u64 {
        self.rcv_nxt
    }

    /// Bytes waiting in the out-of-order queue now, and the most ever.
    pub fn out_of_order_bytes(&self) -> u64 {
        self.out_of_order.total_bytes()
    }
    pub fn max_out_of_order_bytes(&self) -> u64 {
        self.max_out_of_order_bytes
    }

    /// Bytes received twice at the data level (reinjected or redundant copies).
    pub fn duplicate_bytes(&self) -> u64 {
        self.duplicate_bytes
    }

    /// Bytes dropped for arriving beyond the advertised window.
    pub fn beyond_window_bytes(&self) -> u64 {
        self.beyond_window_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The shortcut for the next bytes in order leaves the receiver as the general path
        /// does, and answers the same, whatever came before (gaps, copies, data beyond the
        /// window, empty segments).
        #[test]
        fn the_in_order_shortcut_is_the_general_path(
            buffer in 1u64..20_000,
            segments in proptest::collection::vec((0u64..40, 0u64..3000, any::<bool>()), 1..200),
        ) {
            let mut fast = DataReceiver::new(buffer);
            let mut general = fast.clone();
            for (k, len, next) in segments {
                // Half of them at the next byte expected, the others anywhere near it.
                let dsn = if next { fast.rcv_nxt() } else { (k * 500).saturating_sub(2000) + fast.rcv_nxt() / 2 };
                let a = fast.handle_data(dsn, len);
                let b = general.handle_data_general(dsn, len);
                prop_assert_eq!(a, b);
                prop_assert_eq!(format!("{fast:?}"), format!("{general:?}"));
            }
        }
    }

    #[test]
    fn in_order_out_of_order_and_duplicates() {
        let mut r = DataReceiver::new(10_000);
        assert_eq!(r.handle_data(0, 1000), Some(1000));
        // A gap: 2000..3000 waits; the window shrinks by what waits, the edge stays.
        assert_eq!(r.handle_data(2000, 1000), None);
        assert_eq!((r.out_of_order_bytes(), r.window()), (1000, 10_000));
        // The hole fills: both are readable.
        assert_eq!(r.handle_data(1000, 1000), Some(3000));
        assert_eq!((r.out_of_order_bytes(), r.window()), (0, 10_000));
        // Copies of delivered or queued data are duplicates.
        assert_eq!(r.handle_data(500, 1000), None);
        r.handle_data(5000, 1000);
        r.handle_data(5000, 1000);
        assert_eq!(r.duplicate_bytes(), 2000);
        assert_eq!(r.max_out_of_order_bytes(), 1000);
    }

    #[test]
    fn in_order_data_before_a_held_range_reaches_it_or_not() {
        let mut r = DataReceiver::new(100_000);
        assert_eq!(r.handle_data(5000, 1000), None);
        assert_eq!(r.handle_data(8000, 1000), None);
        // Short of the first range held: readable, the queue unchanged.
        assert_eq!(r.handle_data(0, 1000), Some(1000));
        assert_eq!(
            (r.out_of_order_bytes(), r.max_out_of_order_bytes()),
            (2000, 2000)
        );
        // Ending where it starts: both readable, the next range still held.
        assert_eq!(r.handle_data(1000, 4000), Some(6000));
        assert_eq!((r.out_of_order_bytes(), r.duplicate_bytes()), (1000, 0));
        // Overlapping it: the overlap counts as duplicate.
        assert_eq!(r.handle_data(6000, 2500), Some(9000));
        assert_eq!((r.out_of_order_bytes(), r.duplicate_bytes()), (0, 500));
        assert_eq!((r.window(), r.max_out_of_order_bytes()), (100_000, 2000));
    }

    #[test]
    fn window_never_shrinks_and_data_beyond_it_is_dropped() {
        let mut r = DataReceiver::new(3000);
        // Out of order: 1000..3000 waits; the edge stays at 3000 (free space 1000 from 0).
        r.handle_data(1000, 2000);
        assert_eq!(r.window(), 3000);
        // Beyond the edge: dropped.
        assert_eq!(r.handle_data(3000, 1000), None);
        assert_eq!(r.beyond_window_bytes(), 1000);
        // The head arrives: everything readable, the edge moves to 3000 + 3000.
        assert_eq!(r.handle_data(0, 1000), Some(3000));
        assert_eq!(r.window(), 3000);
    }
}
