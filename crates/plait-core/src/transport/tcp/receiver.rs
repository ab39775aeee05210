//! The TCP data receiver: reassembly, cumulative and selective acknowledgements, delayed ACKs.
//!
//! [`TcpReceiver`] is sans-IO. The driver hands it data segments ([`TcpReceiver::handle_data`])
//! and, after each call, drains [`TcpReceiver::poll_transmit`] (at most one ACK is pending at a
//! time: an ACK owed and not yet polled is merged into the next one) and re-arms the
//! delayed-ACK timer from [`TcpReceiver::poll_timeout`].
//!
//! - **Reassembly.** The application reads in-order data the moment it arrives, so bytes below
//!   `rcv_nxt` are delivered ([`TcpReceiver::delivered_bytes`]) and only out-of-order data
//!   occupies the buffer. It is held as sorted disjoint ranges ([`RangeSet`]). Bytes that
//!   arrive again count as duplicates. The receiver accepts data up to
//!   `rcv_nxt + receive_buffer` (the buffer's physical extent); anything beyond is discarded
//!   and counted, which a sender honouring the advertised window never causes.
//! - **Advertised window**: `receive_buffer` minus the out-of-order bytes held.
//! - **SACK** (RFC 2018 §4), when `TcpConfig::sack` is set: "The first SACK block ... MUST
//!   specify the contiguous block of data containing the segment which triggered this ACK,
//!   unless that segment advanced the Acknowledgment Number field"; the remaining blocks
//!   repeat "the most recently reported SACK blocks ... that are not subsets of a SACK block
//!   already included", each widened to the current extent of its range. At most
//!   [`SACK_BLOCKS_PER_ACK`] = 3 blocks are sent: the receiver echoes the sender's transmit
//!   time, which stands for the timestamp option (RFC 7323), and with timestamps only three
//!   blocks fit in the 40 option bytes (RFC 2018 §3). Duplicate data is not reported in a
//!   D-SACK block (RFC 2883 is not implemented).
//! - **Delayed ACKs** (RFC 5681 §4.2, RFC 1122 §4.2.3.2), when `TcpConfig::delayed_ack` is set:
//!   an ACK "SHOULD be generated for at least every second full-sized segment" — counted here
//!   as two SMSS of in-order bytes not yet acknowledged — or when `delayed_ack_timeout`
//!   expires; an immediate ACK is sent for an out-of-order segment, for a segment that "fills
//!   in all or part of a gap", and for a segment carrying only data already received (as
//!   RFC 9293 §3.10.7.4 asks for unacceptable segments).
//! - **Echo.** Each ACK carries `sent_at` and `is_retransmission` of the most recently received
//!   segment, the one that triggered it (for a timer-driven ACK, the last segment received).

use std::ops::Range;

use crate::packet::{AckSegment, DataSegment, SackBlocks};
use crate::time::SimTime;

use super::sack::RangeSet;
use super::TcpConfig;

/// SACK blocks per ACK (RFC 2018 §3: three when the timestamp option is in use).
pub const SACK_BLOCKS_PER_ACK: usize = crate::packet::MAX_SACK_BLOCKS;

/// A TCP receiver over a byte sequence space starting at 0.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    mss: u32,
    sack: bool,
    delayed_ack: bool,
    delayed_ack_timeout: SimTime,
    receive_buffer: u64,
    /// Next byte expected; everything below has been delivered.
    rcv_nxt: u64,
    out_of_order: RangeSet,
    /// Blocks to report, most recent first.
    sack_blocks: [(u64, u64); SACK_BLOCKS_PER_ACK],
    sack_block_count: usize,
    duplicate_bytes: u64,
    out_of_window_bytes: u64,
    segments_received: u64,
    acks_sent: u64,
    /// An ACK is owed now.
    ack_now: bool,
    /// In-order bytes received since the last ACK.
    unacked_bytes: u64,
    /// Delayed-ACK deadline.
    ack_deadline: Option<SimTime>,
    echo_sent_at: SimTime,
    echo_is_retransmission: bool,
    /// The advertised window when the owner sets it.
    window_override: Option<u64>,
}

impl TcpReceiver {
    pub fn new(config: &TcpConfig) -> Self {
        TcpReceiver {
            mss: config.mss,
            sack: config.sack,
            delayed_ack: config.delayed_ack,
            delayed_ack_timeout: config.delayed_ack_timeout,
            receive_buffer: config.receive_buffer,
            rcv_nxt: 0,
            out_of_order: RangeSet::new(),
            sack_blocks: [(0, 0); SACK_BLOCKS_PER_ACK],
            sack_block_count: 0,
            duplicate_bytes: 0,
            out_of_window_bytes: 0,
            segments_received: 0,
            acks_sent: 0,
            ack_now: false,
            unacked_bytes: 0,
            ack_deadline: None,
            echo_sent_at: SimTime::ZERO,
            echo_is_retransmission: false,
            window_override: None,
        }
    }

    /// A data segment arrived. Returns the bytes it delivered in order to the owner,
    /// `[previous rcv_nxt, rcv_nxt)` (empty when it landed out of order or was a duplicate):
    /// what a connection above this receiver (an MPTCP connection) reassembles.
    pub fn handle_data(&mut self, now: SimTime, segment: &DataSegment) -> Range<u64> {
        if segment.len == 0 {
            return self.rcv_nxt..self.rcv_nxt;
        }
        self.segments_received += 1;
        self.echo_sent_at = segment.sent_at;
        self.echo_is_retransmission = segment.is_retransmission;

        let start = segment.seq;
        let end = start + segment.len as u64;
        let capacity_end = self.rcv_nxt.saturating_add(self.receive_buffer);
        let beyond_window = end.saturating_sub(start.max(capacity_end));
        self.out_of_window_bytes += beyond_window;
        let accepted = segment.len as u64 - beyond_window;

        let previous_rcv_nxt = self.rcv_nxt;
        let had_gap = !self.out_of_order.is_empty();
        let from = start.max(self.rcv_nxt);
        let to = end.min(capacity_end);
        let mut newly = 0;
        // The range now holding this segment, when it landed above `rcv_nxt`.
        let mut landed_out_of_order = None;
        if from < to {
            if from == self.rcv_nxt && !had_gap {
                // In order with nothing queued: straight to the application.
                newly = to - from;
                self.rcv_nxt = to;
            } else {
                let (fresh, merged) = self.out_of_order.insert(from, to);
                newly = fresh;
                // Queued ranges all start above `rcv_nxt`, so only the range just merged can
                // start at it.
                match self.out_of_order.pop_first_if_starts_by(self.rcv_nxt) {
                    Some((_, delivered_to)) => self.rcv_nxt = delivered_to,
                    None => landed_out_of_order = Some(merged),
                }
            }
        }
        let duplicates = accepted - newly;
        self.duplicate_bytes += duplicates;
        let advanced = self.rcv_nxt > previous_rcv_nxt;

        if self.sack {
            self.refresh_sack_blocks(landed_out_of_order);
        }

        let in_order_without_gap = advanced && !had_gap && duplicates == 0 && beyond_window == 0;
        if !in_order_without_gap || !self.delayed_ack {
            self.ack_now = true;
        } else {
            self.unacked_bytes += newly;
            if self.unacked_bytes >= 2 * self.mss as u64 {
                // "at least every second full-sized segment".
                self.ack_now = true;
            } else if self.ack_deadline.is_none() {
                self.ack_deadline = Some(now + self.delayed_ack_timeout);
            }
        }
        previous_rcv_nxt..self.rcv_nxt
    }

    /// Lets the owner set the advertised window (an MPTCP connection advertises its
    /// connection-level window on every subflow); `None` returns to the receiver's own
    /// (the receive buffer minus the out-of-order bytes held).
    pub fn set_advertised_window(&mut self, window: Option<u64>) {
        self.window_override = window;
    }

    /// Rebuilds the SACK blocks: the range holding the triggering segment first (if it landed
    /// out of order), then the previously reported ranges still above `rcv_nxt`, widened to
    /// their current extent and without repeats.
    fn refresh_sack_blocks(&mut self, triggering: Option<(u64, u64)>) {
        if triggering.is_none() && self.sack_block_count == 0 {
            return; // in-order data and nothing reported: no blocks (the common case)
        }
        let previous = self.sack_blocks;
        let previous_count = self.sack_block_count;
        let mut count = 0;
        if let Some(block) = triggering {
            self.sack_blocks[0] = block;
            count = 1;
        }
        for &(block_start, _) in &previous[..previous_count] {
            if count == SACK_BLOCKS_PER_ACK {
                break;
            }
            let Some(current) = self.out_of_order.range_containing(block_start) else {
                continue; // delivered since it was reported
            };
            if !self.sack_blocks[..count].contains(&current) {
                self.sack_blocks[count] = current;
                count += 1;
            }
        }
        self.sack_block_count = count;
    }

    /// The ACK owed, if any.
    pub fn poll_transmit(&mut self, _now: SimTime) -> Option<AckSegment> {
        if !self.ack_now {
            return None;
        }
        self.ack_now = false;
        self.unacked_bytes = 0;
        self.ack_deadline = None;
        self.acks_sent += 1;
        Some(AckSegment {
            ack: self.rcv_nxt,
            sack: self.sack_blocks(),
            rwnd: self.rwnd(),
            echo_sent_at: self.echo_sent_at,
            echo_is_retransmission: self.echo_is_retransmission,
        })
    }

    /// When the delayed-ACK timer expires, if it is armed.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.ack_deadline
    }

    /// The timer fired; calls before the deadline are ignored.
    pub fn handle_timeout(&mut self, now: SimTime) {
        if self.ack_deadline.is_some_and(|deadline| now >= deadline) {
            self.ack_deadline = None;
            self.ack_now = true;
        }
    }

    /// Bytes delivered in order to the application (equals `rcv_nxt`).
    pub fn delivered_bytes(&self) -> u64 {
        self.rcv_nxt
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Bytes received more than once.
    pub fn duplicate_bytes(&self) -> u64 {
        self.duplicate_bytes
    }

    /// Out-of-order bytes held for reassembly.
    pub fn out_of_order_bytes(&self) -> u64 {
        self.out_of_order.total_bytes()
    }

    /// The out-of-order ranges held.
    pub fn out_of_order_ranges(&self) -> &RangeSet {
        &self.out_of_order
    }

    /// Bytes discarded because they lay beyond `rcv_nxt + receive_buffer`.
    pub fn out_of_window_bytes(&self) -> u64 {
        self.out_of_window_bytes
    }

    /// Advertised window: the receive buffer minus out-of-order bytes held, unless the owner
    /// set one ([`TcpReceiver::set_advertised_window`]).
    pub fn rwnd(&self) -> u64 {
        self.window_override.unwrap_or_else(|| {
            self.receive_buffer
                .saturating_sub(self.out_of_order.total_bytes())
        })
    }

    /// The SACK blocks the next ACK carries (empty when SACK is off).
    pub fn sack_blocks(&self) -> SackBlocks {
        let mut blocks = SackBlocks::EMPTY;
        for &(start, end) in &self.sack_blocks[..self.sack_block_count] {
            blocks.push(start, end);
        }
        blocks
    }

    pub fn segments_received(&self) -> u64 {
        self.segments_received
    }

    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 100;

    fn config() -> TcpConfig {
        TcpConfig {
            mss: MSS,
            receive_buffer: 10_000,
            ..TcpConfig::default()
        }
    }

    fn data(seq: u64, len: u32, sent_at_ms: u64) -> DataSegment {
        DataSegment {
            seq,
            len,
            sent_at: SimTime::from_millis(sent_at_ms),
            is_retransmission: false,
        }
    }

    /// Delivers segment `k` (bytes `[100k, 100k + 100)`) and returns the ACK it causes.
    fn deliver(rx: &mut TcpReceiver, k: u64) -> AckSegment {
        rx.handle_data(SimTime::from_millis(k), &data(k * 100, MSS, k));
        rx.poll_transmit(SimTime::from_millis(k))
            .expect("an immediate ACK")
    }

    #[test]
    fn in_order_data_is_delivered_and_acked_per_segment() {
        let mut rx = TcpReceiver::new(&config());
        for k in 0..5 {
            let ack = deliver(&mut rx, k);
            assert_eq!(ack.ack, (k + 1) * 100);
            assert!(ack.sack.is_empty());
            assert_eq!(ack.rwnd, 10_000);
            assert_eq!(ack.echo_sent_at, SimTime::from_millis(k));
            assert!(
                rx.poll_transmit(SimTime::ZERO).is_none(),
                "one ACK per segment"
            );
        }
        assert_eq!(rx.delivered_bytes(), 500);
        assert_eq!(rx.duplicate_bytes(), 0);
        assert_eq!(rx.acks_sent(), 5);
    }

    #[test]
    fn sack_blocks_follow_rfc_2018_ordering() {
        let mut rx = TcpReceiver::new(&config());
        deliver(&mut rx, 0);
        // Segment 1 is missing.
        let blocks = |ack: &AckSegment| ack.sack.as_slice().to_vec();
        let ack = deliver(&mut rx, 2);
        assert_eq!((ack.ack, blocks(&ack)), (100, vec![(200, 300)]));
        let ack = deliver(&mut rx, 4);
        assert_eq!(blocks(&ack), vec![(400, 500), (200, 300)]);
        let ack = deliver(&mut rx, 6);
        assert_eq!(blocks(&ack), vec![(600, 700), (400, 500), (200, 300)]);
        let ack = deliver(&mut rx, 8);
        assert_eq!(
            blocks(&ack),
            vec![(800, 900), (600, 700), (400, 500)],
            "three blocks at most"
        );
        assert_eq!(ack.rwnd, 10_000 - 400);
        // Segment 3 joins [200,300) and [400,500); that range goes first, its parts are gone.
        let ack = deliver(&mut rx, 3);
        assert_eq!(blocks(&ack), vec![(200, 500), (800, 900), (600, 700)]);
        // Segment 5 joins [200,500) and [600,700).
        let ack = deliver(&mut rx, 5);
        assert_eq!(blocks(&ack), vec![(200, 700), (800, 900)]);
        // Segment 1 fills the first hole: the ACK jumps, remaining blocks are repeated.
        let ack = deliver(&mut rx, 1);
        assert_eq!((ack.ack, blocks(&ack)), (700, vec![(800, 900)]));
        assert_eq!(ack.rwnd, 10_000 - 100);
        let ack = deliver(&mut rx, 7);
        assert_eq!((ack.ack, blocks(&ack)), (900, vec![]));
        assert_eq!(rx.out_of_order_bytes(), 0);
        assert_eq!(rx.duplicate_bytes(), 0);
    }

    #[test]
    fn duplicate_segment_in_out_of_order_data_reports_its_block_first() {
        let mut rx = TcpReceiver::new(&config());
        deliver(&mut rx, 2);
        deliver(&mut rx, 4);
        let ack = deliver(&mut rx, 2);
        assert_eq!(ack.sack.as_slice(), &[(200, 300), (400, 500)]);
        assert_eq!(rx.duplicate_bytes(), 100);
    }

    #[test]
    fn sack_off_sends_no_blocks() {
        let mut rx = TcpReceiver::new(&TcpConfig {
            sack: false,
            ..config()
        });
        deliver(&mut rx, 0);
        let ack = deliver(&mut rx, 2);
        assert_eq!(ack.ack, 100);
        assert!(ack.sack.is_empty());
        assert_eq!(ack.rwnd, 10_000 - 100);
    }

    #[test]
    fn duplicates_are_counted_once_per_extra_copy() {
        let mut rx = TcpReceiver::new(&config());
        deliver(&mut rx, 0);
        deliver(&mut rx, 0);
        assert_eq!(rx.duplicate_bytes(), 100);
        // Overlapping the delivered edge: 50 old bytes, 50 new.
        rx.handle_data(SimTime::ZERO, &data(50, 100, 0));
        assert_eq!(rx.delivered_bytes(), 150);
        assert_eq!(rx.duplicate_bytes(), 150);
        // Overlapping queued out-of-order data.
        rx.handle_data(SimTime::ZERO, &data(300, 100, 0));
        rx.handle_data(SimTime::ZERO, &data(250, 100, 0));
        assert_eq!(rx.duplicate_bytes(), 200);
        assert_eq!(rx.out_of_order_bytes(), 150);
        assert_eq!(
            rx.out_of_order_ranges().iter().collect::<Vec<_>>(),
            vec![(250, 400)]
        );
    }

    #[test]
    fn delayed_acks_every_second_segment_or_on_timeout() {
        let config = TcpConfig {
            delayed_ack: true,
            ..config()
        };
        let mut rx = TcpReceiver::new(&config);
        let t0 = SimTime::from_millis(1);
        rx.handle_data(t0, &data(0, MSS, 0));
        assert!(rx.poll_transmit(t0).is_none());
        assert_eq!(rx.poll_timeout(), Some(t0 + config.delayed_ack_timeout));
        rx.handle_data(t0, &data(100, MSS, 1));
        let ack = rx.poll_transmit(t0).expect("second full segment");
        assert_eq!(ack.ack, 200);
        assert_eq!(
            ack.echo_sent_at,
            SimTime::from_millis(1),
            "echo of the triggering segment"
        );
        assert_eq!(rx.poll_timeout(), None);

        // A lone segment waits for the timer; early calls are ignored.
        let t1 = SimTime::from_millis(10);
        rx.handle_data(t1, &data(200, MSS, 2));
        let deadline = rx.poll_timeout().unwrap();
        rx.handle_timeout(deadline - SimTime(1));
        assert!(rx.poll_transmit(deadline).is_none());
        rx.handle_timeout(deadline);
        assert_eq!(rx.poll_transmit(deadline).unwrap().ack, 300);
        assert_eq!(rx.poll_timeout(), None);
    }

    #[test]
    fn delayed_acks_are_immediate_for_gaps_and_fills() {
        let config = TcpConfig {
            delayed_ack: true,
            ..config()
        };
        let mut rx = TcpReceiver::new(&config);
        let t = SimTime::ZERO;
        rx.handle_data(t, &data(200, MSS, 0));
        assert_eq!(
            rx.poll_transmit(t).unwrap().ack,
            0,
            "out of order: immediate"
        );
        rx.handle_data(t, &data(0, MSS, 0));
        assert_eq!(
            rx.poll_transmit(t).unwrap().ack,
            100,
            "fills part of the gap: immediate"
        );
        rx.handle_data(t, &data(100, MSS, 0));
        assert_eq!(
            rx.poll_transmit(t).unwrap().ack,
            300,
            "fills the gap: immediate"
        );
        rx.handle_data(t, &data(0, MSS, 0));
        assert_eq!(
            rx.poll_transmit(t).unwrap().ack,
            300,
            "duplicate: immediate"
        );
        // Small in-order segments: two SMSS of bytes are needed.
        for k in 0..3 {
            rx.handle_data(t, &data(300 + 50 * k, 50, 0));
            assert!(rx.poll_transmit(t).is_none());
        }
        rx.handle_data(t, &data(450, 50, 0));
        assert_eq!(rx.poll_transmit(t).unwrap().ack, 500);
    }

    #[test]
    fn window_shrinks_with_queued_data_and_excess_is_discarded() {
        let config = TcpConfig {
            receive_buffer: 300,
            ..config()
        };
        let mut rx = TcpReceiver::new(&config);
        rx.handle_data(SimTime::ZERO, &data(100, MSS, 0));
        assert_eq!(rx.poll_transmit(SimTime::ZERO).unwrap().rwnd, 200);
        // [250, 350) reaches past rcv_nxt + buffer = 300: 50 bytes discarded.
        rx.handle_data(SimTime::ZERO, &data(250, MSS, 0));
        assert_eq!(rx.out_of_window_bytes(), 50);
        assert_eq!(rx.out_of_order_bytes(), 150);
        assert_eq!(rx.poll_transmit(SimTime::ZERO).unwrap().rwnd, 150);
        rx.handle_data(SimTime::ZERO, &data(0, MSS, 0));
        assert_eq!(rx.delivered_bytes(), 200);
        assert_eq!(rx.rwnd(), 300 - 50);
        assert_eq!(rx.duplicate_bytes(), 0);
    }

    #[test]
    fn echo_reports_retransmissions() {
        let mut rx = TcpReceiver::new(&config());
        let seg = DataSegment {
            is_retransmission: true,
            ..data(0, MSS, 7)
        };
        rx.handle_data(SimTime::ZERO, &seg);
        let ack = rx.poll_transmit(SimTime::ZERO).unwrap();
        assert!(ack.echo_is_retransmission);
        assert_eq!(ack.echo_sent_at, SimTime::from_millis(7));
    }
}

#[cfg(test)]
mod owner_tests {
    //! What the receiver tells, and takes from, an owner above it.

    use super::*;

    fn seg(seq: u64, len: u32) -> DataSegment {
        DataSegment {
            seq,
            len,
            sent_at: SimTime::ZERO,
            is_retransmission: false,
        }
    }

    #[test]
    fn each_segment_reports_the_bytes_it_delivered_in_order() {
        let mut r = TcpReceiver::new(&TcpConfig::default());
        let t = SimTime::ZERO;
        assert_eq!(r.handle_data(t, &seg(0, 100)), 0..100);
        // Out of order: nothing delivered yet.
        assert_eq!(r.handle_data(t, &seg(200, 100)), 100..100);
        // The hole filled: its bytes and the queued ones.
        assert_eq!(r.handle_data(t, &seg(100, 100)), 100..300);
        // A duplicate delivers nothing.
        assert_eq!(r.handle_data(t, &seg(0, 100)), 300..300);
    }

    #[test]
    fn the_owner_can_set_the_advertised_window() {
        let config = TcpConfig {
            receive_buffer: 10_000,
            ..TcpConfig::default()
        };
        let mut r = TcpReceiver::new(&config);
        r.handle_data(SimTime::ZERO, &seg(1000, 500));
        assert_eq!(r.rwnd(), 9_500);
        r.set_advertised_window(Some(3_000));
        assert_eq!(r.poll_transmit(SimTime::ZERO).unwrap().rwnd, 3_000);
        r.set_advertised_window(None);
        assert_eq!(r.rwnd(), 9_500);
    }
}
