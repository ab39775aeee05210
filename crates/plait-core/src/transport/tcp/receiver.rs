//! The TCP data receiver: reassembly, cumulative and selective acknowledgements, delayed ACKs.
//!
//! [`TcpReceiver`] is sans-IO. The driver hands it data segments ([`TcpReceiver::handle_data`])
//! and, after each call, drains [`TcpReceiver::poll_transmit`] and re-arms the receiver's timer
//! from [`TcpReceiver::poll_timeout`] (the earlier of the delayed-ACK and the SACK-compression
//! deadlines). Usually at most one ACK is pending: an ACK owed and not yet polled is merged
//! into the next one. The one exception is SACK compression's flush (below), which can leave
//! two.
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
//! - **Delayed ACKs, RFC style** (RFC 5681 §4.2, RFC 1122 §4.2.3.2), when
//!   `TcpConfig::delayed_ack` is set and `delayed_ack_style` is [`DelayedAckStyle::Rfc`]: an ACK
//!   "SHOULD be generated for at least every second full-sized segment" — counted here as two
//!   SMSS of in-order bytes not yet acknowledged — or when `delayed_ack_timeout` expires; an
//!   immediate ACK is sent for an out-of-order segment, for a segment that "fills in all or
//!   part of a gap", and for a segment carrying only data already received (as RFC 9293
//!   §3.10.7.4 asks for unacceptable segments).
//! - **Delayed ACKs, Linux style** (Linux 6.x), when `delayed_ack` is set and
//!   `delayed_ack_style` is [`DelayedAckStyle::Linux`]; `delayed_ack_timeout` is then unused.
//!   - *Quick-ACK mode* (`tcp_incr_quickack`, `tcp_enter_quickack_mode`,
//!     `tcp_in_quickack_mode`): while a count of quick ACKs is left, every segment is ACKed at
//!     once, and each ACK sent uses one up (`tcp_dec_quickack_mode`, which also resets `ato`
//!     to `TCP_ATO_MIN` when the count runs out). The count is raised to
//!     min(rwnd / (2·MSS), `TCP_MAX_QUICKACKS` = 16) (2 when that quotient is 0) on the first
//!     in-order segment, when in-order data arrives after an idle time longer than the RTO
//!     (`tcp_event_data_recv`), and on a segment wholly below `rcv_nxt` or wholly beyond the
//!     window (`tcp_data_queue`'s duplicate and out-of-window cases, which also reset `ato`).
//!   - *The `ato` estimate* (`tcp_event_data_recv`): `TCP_ATO_MIN` = 40 ms on the first
//!     in-order segment; then, for each in-order segment arriving `m` after the previous one:
//!     `m <= TCP_ATO_MIN / 2` gives `ato = ato / 2 + TCP_ATO_MIN / 2`, `m < ato` gives
//!     `ato = min(ato / 2 + m, rto)`. A delayed-ACK timer that expires doubles it, up to the
//!     RTO (`tcp_delack_timer_handler`).
//!   - *When to ACK* (`__tcp_ack_snd_check`): at once when more than one MSS of in-order data
//!     is unacknowledged (`rcv_nxt - rcv_wup > rcv_mss`, i.e. on the second full segment), in
//!     quick-ACK mode, when a segment fills the last hole (`tcp_data_queue`'s `ICSK_ACK_NOW`),
//!     and for duplicates and out-of-window data (above). Otherwise, with no out-of-order
//!     data held, the delayed-ACK timer is armed (`tcp_send_delayed_ack`) at `now + ato`,
//!     where an `ato` above `TCP_DELACK_MIN` = 40 ms is bounded by 500 ms (`HZ / 2`) and by
//!     max(srtt, 40 ms) when an RTT is known, and every `ato` by `TCP_DELACK_MAX` = 200 ms;
//!     an armed timer is kept if earlier, and an ACK goes at once if the armed timer is due
//!     within `ato / 4`. With out-of-order data held (an out-of-order segment, or one that
//!     fills only part of a hole) the ACK goes at once, unless SACK compression holds it.
//!   - *SACK compression* (`__tcp_ack_snd_check`, `tcp_sack_new_ofo_skb`,
//!     `tcp_sack_compress_send_ack`, `tcp_compressed_ack_kick`), when also
//!     `TcpConfig::sack_compression` and `TcpConfig::sack` are set: for each value of
//!     `rcv_nxt` the first `TCP_FASTRETRANS_THRESH` = 3 ACKs owed with out-of-order data held
//!     go at once (the sender's duplicate-ACK threshold; so the first out-of-order segment
//!     after in-order data, and a partial hole fill, are ACKed at once); later ones are held
//!     and merged until a timer of min(`tcp_comp_sack_delay_ns` = 1 ms, RTT / 20) expires,
//!     armed by the first of them; the 45th owed while 44 (`tcp_comp_sack_nr`) are held goes
//!     at once. When a segment changes which SACK blocks lead (it creates a block while two
//!     or more are reported, or extends one that is not among the first
//!     `TCP_SACK_BLOCKS_EXPECTED` = 2), the held ACK is flushed first, with the blocks as they
//!     were before that segment (widened to their current extent), and the segment itself is
//!     then held anew: that flush is the second pending ACK mentioned above.
//!
//!   The receiver has no RTT estimate of its own (it sends no data): the owner passes its
//!   sender's smoothed RTT with [`TcpReceiver::set_rtt_hint`]. The hint serves as `srtt`
//!   for the `tcp_send_delayed_ack` bound and the SACK-compression delay, and gives the RTO
//!   used for the idle test and the `ato` cap as Linux computes it from a first RTT sample
//!   (`tcp_rtt_estimator`, `__tcp_set_rto`): `srtt + max(2·srtt, min_rto)`, at most
//!   `max_rto`. Without a hint (or with a zero one) the RTT is unknown: no srtt bound, the
//!   1 ms compression delay, and `initial_rto` (Linux's `TCP_TIMEOUT_INIT`) clamped to
//!   [`min_rto`, `max_rto`] as the RTO.
//!
//!   Approximated or left out: time is continuous, not jiffies; `rcv_mss` is the configured
//!   MSS rather than measured from arriving segments (`tcp_measure_rcv_mss`); `rcv_wnd` is
//!   the current advertised window; the right-edge and `SO_RCVLOWAT` conditions of
//!   `__tcp_ack_snd_check` are taken as met (the application reads at once); ping-pong
//!   (interactive) mode, `tcp_grow_window`'s extra quick ACK while the receive window grows
//!   (there is no window autotuning here), ECN-driven quick ACKs, D-SACK and the compression
//!   timer's slack are not modelled; data partly beyond the window gets an immediate ACK.
//!   `sack_compression` has no effect unless the Linux style is in use.
//! - **Echo.** Each ACK carries `sent_at` and `is_retransmission` of the most recently received
//!   segment, the one that triggered it (for a timer-driven ACK, the last segment received).

use std::ops::Range;

use crate::packet::{AckSegment, DataSegment, Header, SackBlocks};
use crate::time::SimTime;

use super::sack::RangeSet;
use super::{DelayedAckStyle, TcpConfig};

/// SACK blocks per ACK (RFC 2018 §3: three when the timestamp option is in use).
pub const SACK_BLOCKS_PER_ACK: usize = crate::packet::MAX_SACK_BLOCKS;

/// Linux's `TCP_ATO_MIN` (`HZ / 25`): the initial and smallest `ato`.
const TCP_ATO_MIN: SimTime = SimTime::from_millis(40);
/// Linux's `TCP_DELACK_MIN`: an `ato` up to this is used unbounded by the RTT.
const TCP_DELACK_MIN: SimTime = SimTime::from_millis(40);
/// Linux's `TCP_DELACK_MAX` (the default `icsk_delack_max`): the longest delayed-ACK timer.
const TCP_DELACK_MAX: SimTime = SimTime::from_millis(200);
/// `HZ / 2`: `tcp_send_delayed_ack`'s bound outside ping-pong mode.
const DELACK_HALF_SECOND: SimTime = SimTime::from_millis(500);
/// Linux's `TCP_MAX_QUICKACKS`.
const TCP_MAX_QUICKACKS: u32 = 16;
/// Linux's `TCP_FASTRETRANS_THRESH`: ACKs sent at once per `rcv_nxt` before compression.
const TCP_FASTRETRANS_THRESH: u32 = 3;
/// Linux's `tcp_comp_sack_nr` default: ACKs held by SACK compression before one must go.
const TCP_COMP_SACK_NR: u32 = 44;
/// Linux's `tcp_comp_sack_delay_ns` default: the longest an ACK is held by SACK compression.
const TCP_COMP_SACK_DELAY: SimTime = SimTime::from_millis(1);
/// Linux's `TCP_SACK_BLOCKS_EXPECTED`: a change beyond these blocks flushes a held ACK.
const TCP_SACK_BLOCKS_EXPECTED: usize = 2;

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
    /// In-order bytes received since the last ACK (RFC style).
    unacked_bytes: u64,
    /// Delayed-ACK deadline.
    ack_deadline: Option<SimTime>,
    echo_sent_at: SimTime,
    echo_is_retransmission: bool,
    /// The advertised window when the owner sets it.
    window_override: Option<u64>,

    // Linux-style delayed ACKs (unused in the RFC style and without delayed ACKs).
    /// `delayed_ack` with [`DelayedAckStyle::Linux`].
    linux_acks: bool,
    /// SACK compression in force (Linux style, SACK and `sack_compression`).
    sack_compression: bool,
    min_rto: SimTime,
    max_rto: SimTime,
    initial_rto: SimTime,
    /// The owner's RTT estimate, if known.
    rtt_hint: Option<SimTime>,
    /// `icsk_ack.ato`; zero until the first in-order segment.
    ato: SimTime,
    /// `icsk_ack.quick`: quick ACKs left.
    quick: u32,
    /// `icsk_ack.lrcvtime`: when in-order data last arrived.
    last_data_at: SimTime,
    /// `rcv_wup`: `rcv_nxt` when the last ACK was sent.
    rcv_wup: u64,
    /// `compressed_ack`: ACKs held by SACK compression.
    compressed_acks: u32,
    /// `compressed_ack_rcv_nxt`, `dup_ack_counter`: ACKs sent at once for this `rcv_nxt`.
    compressed_ack_rcv_nxt: u64,
    dup_ack_counter: u32,
    /// SACK-compression deadline.
    compress_deadline: Option<SimTime>,
    /// A held ACK flushed before a SACK block change, sent before anything else.
    flushed: Option<AckSegment>,
}

impl TcpReceiver {
    pub fn new(config: &TcpConfig) -> Self {
        let linux_acks = config.delayed_ack && config.delayed_ack_style == DelayedAckStyle::Linux;
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
            linux_acks,
            sack_compression: linux_acks && config.sack && config.sack_compression,
            min_rto: config.min_rto,
            max_rto: config.max_rto,
            initial_rto: config.initial_rto,
            rtt_hint: None,
            ato: SimTime::ZERO,
            quick: 0,
            last_data_at: SimTime::ZERO,
            rcv_wup: 0,
            compressed_acks: 0,
            compressed_ack_rcv_nxt: 0,
            dup_ack_counter: 0,
            compress_deadline: None,
            flushed: None,
        }
    }

    /// A data segment arrived. Returns the bytes it delivered in order to the owner,
    /// `[previous rcv_nxt, rcv_nxt)` (empty when it landed out of order or was a duplicate):
    /// what a connection above this receiver (an MPTCP connection) reassembles.
    #[inline(always)]
    pub fn handle_data(&mut self, now: SimTime, segment: &DataSegment) -> Range<u64> {
        let (start, end) = (segment.seq, segment.seq + segment.len as u64);
        if segment.len > 0
            && start == self.rcv_nxt
            && !self.delayed_ack
            && self.sack_block_count == 0
            && self.out_of_order.is_empty()
            && end <= self.rcv_nxt.saturating_add(self.receive_buffer)
        {
            // The common case, the general path reduced to what it does then: the next
            // segment in order, nothing held out of order or reported in SACK blocks, within
            // the window, without delayed ACKs: delivered at once and acknowledged at once.
            self.accept_segment(segment);
            self.rcv_nxt = end;
            self.ack_now = true;
            return start..end;
        }
        self.handle_data_out_of_line(now, segment)
    }

    /// [`TcpReceiver::handle_data`] but for the next segment in order.
    #[inline(never)]
    fn handle_data_out_of_line(&mut self, now: SimTime, segment: &DataSegment) -> Range<u64> {
        let (start, end) = (segment.seq, segment.seq + segment.len as u64);
        if segment.len == 0
            || self.delayed_ack
            || end > self.rcv_nxt.saturating_add(self.receive_buffer)
        {
            return self.handle_data_general(now, segment);
        }
        // The common cases out of order, within the window, without delayed ACKs (so no SACK
        // compression), each the general path reduced to what it does then. The segment is
        // acknowledged at once.
        let first = self.out_of_order.first();
        // Above it, the segment lands at or above the end of the highest range held (or, with
        // none held, above `rcv_nxt`).
        let above = self
            .out_of_order
            .last()
            .map_or(self.rcv_nxt.saturating_add(1), |(_, top_end)| top_end);
        if start >= above {
            // It extends the highest range or starts a new one, all of it new; its range
            // leads the SACK blocks.
            self.accept_segment(segment);
            let (_, merged) = self.out_of_order.insert(start, end);
            if self.sack {
                self.lead_sack_blocks_with(merged);
            }
            self.ack_now = true;
            return self.rcv_nxt..self.rcv_nxt;
        }
        if let Some((_, first_end)) = first.filter(|&(_, e)| start == self.rcv_nxt && end <= e) {
            // It fills the hole at `rcv_nxt` and reaches at most the end of the first range
            // held: the segment, and that range if the segment reaches it, are delivered
            // (what it overlaps of the range counts as duplicate); the range's SACK block,
            // if reported, goes.
            self.accept_segment(segment);
            let previous_rcv_nxt = self.rcv_nxt;
            match self.out_of_order.pop_first_if_starts_by(end) {
                Some(range) => {
                    debug_assert_eq!(range.1, first_end);
                    self.duplicate_bytes += end - range.0;
                    self.rcv_nxt = range.1;
                    if self.sack {
                        self.drop_sack_block(range);
                    }
                }
                None => self.rcv_nxt = end,
            }
            self.ack_now = true;
            return previous_rcv_nxt..self.rcv_nxt;
        }
        self.handle_data_general(now, segment)
    }

    /// Counts a data segment received and keeps what its ACK echoes.
    #[inline(always)]
    fn accept_segment(&mut self, segment: &DataSegment) {
        self.segments_received += 1;
        self.echo_sent_at = segment.sent_at;
        self.echo_is_retransmission = segment.is_retransmission;
    }

    /// `refresh_sack_blocks(None)` when the only change of the ranges since the blocks were
    /// last refreshed is that `range` was delivered: its block, if reported, goes, the others
    /// keep their order (each block is a range held).
    #[inline(always)]
    fn drop_sack_block(&mut self, range: (u64, u64)) {
        let count = self.sack_block_count;
        if let Some(i) = self.sack_blocks[..count].iter().position(|&b| b == range) {
            // At most three blocks: moved one by one (no call to move memory).
            for j in i..count - 1 {
                self.sack_blocks[j] = self.sack_blocks[j + 1];
            }
            self.sack_blocks[count - 1] = (0, 0);
            self.sack_block_count = count - 1;
        }
        debug_assert_eq!(
            (self.sack_blocks, self.sack_block_count),
            self.widened_blocks(None)
        );
    }

    /// `refresh_sack_blocks(Some(merged))` when `merged` is the highest range held and the
    /// only one changed since the blocks were last refreshed (each block then is a range
    /// held): `merged` first, then the blocks it did not swallow, as before, up to the
    /// capacity.
    #[inline(always)]
    fn lead_sack_blocks_with(&mut self, merged: (u64, u64)) {
        let mut blocks = [(0, 0); SACK_BLOCKS_PER_ACK];
        blocks[0] = merged;
        let mut count = 1;
        for &block in &self.sack_blocks[..self.sack_block_count] {
            if count == SACK_BLOCKS_PER_ACK {
                break;
            }
            if block.0 >= merged.0 && block.0 < merged.1 {
                continue; // the range `merged` extended
            }
            debug_assert_eq!(self.out_of_order.range_containing(block.0), Some(block));
            blocks[count] = block;
            count += 1;
        }
        debug_assert_eq!((blocks, count), self.widened_blocks(Some(merged)));
        (self.sack_blocks, self.sack_block_count) = (blocks, count);
    }

    /// [`TcpReceiver::handle_data`] in every case.
    #[inline(always)]
    fn handle_data_general(&mut self, now: SimTime, segment: &DataSegment) -> Range<u64> {
        if segment.len == 0 {
            return self.rcv_nxt..self.rcv_nxt;
        }
        self.accept_segment(segment);

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

        if self.sack_compression
            && self.compressed_acks > 0
            && !self.ack_now
            && landed_out_of_order.is_some()
            && self.changes_leading_sack_blocks(from, to)
        {
            // `tcp_sack_new_ofo_skb` → `tcp_sack_compress_send_ack`, before the blocks move.
            self.flush_compressed_ack();
        }
        if self.sack {
            self.refresh_sack_blocks(landed_out_of_order);
        }

        if self.linux_acks {
            if end <= previous_rcv_nxt || start >= capacity_end {
                // `tcp_data_queue`: a retransmission of delivered data, or a segment wholly
                // out of the window.
                self.enter_quickack_mode();
                self.ack_now = true;
            } else {
                if advanced {
                    self.event_data_recv(now);
                    if had_gap && self.out_of_order.is_empty() {
                        self.ack_now = true; // the last hole filled
                    }
                }
                if beyond_window > 0 {
                    self.ack_now = true;
                }
                self.ack_snd_check(now);
            }
            return previous_rcv_nxt..self.rcv_nxt;
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

    /// The owner's estimate of the connection's RTT (its sender's smoothed RTT), used by the
    /// Linux-style delayed ACKs as srtt and to derive the RTO (see the module documentation);
    /// zero means unknown. Without effect in the RFC style.
    pub fn set_rtt_hint(&mut self, rtt: SimTime) {
        self.rtt_hint = (rtt > SimTime::ZERO).then_some(rtt);
    }

    /// Linux style: the current `ato` estimate (zero before the first in-order segment).
    pub fn ato(&self) -> SimTime {
        self.ato
    }

    /// Linux style: quick ACKs left (zero outside quick-ACK mode).
    pub fn quick_acks(&self) -> u32 {
        self.quick
    }

    /// Rebuilds the SACK blocks: the range holding the triggering segment first (if it landed
    /// out of order), then the previously reported ranges still above `rcv_nxt`, widened to
    /// their current extent and without repeats.
    fn refresh_sack_blocks(&mut self, triggering: Option<(u64, u64)>) {
        if triggering.is_none() && self.sack_block_count == 0 {
            return; // in-order data and nothing reported: no blocks (the common case)
        }
        (self.sack_blocks, self.sack_block_count) = self.widened_blocks(triggering);
    }

    /// The blocks `refresh_sack_blocks` would report, without changing them.
    #[inline(always)]
    fn widened_blocks(
        &self,
        triggering: Option<(u64, u64)>,
    ) -> ([(u64, u64); SACK_BLOCKS_PER_ACK], usize) {
        let mut blocks = [(0, 0); SACK_BLOCKS_PER_ACK];
        let mut count = 0;
        if let Some(block) = triggering {
            blocks[0] = block;
            count = 1;
        }
        for &(block_start, _) in &self.sack_blocks[..self.sack_block_count] {
            if count == SACK_BLOCKS_PER_ACK {
                break;
            }
            let Some(current) = self.out_of_order.range_containing(block_start) else {
                continue; // delivered since it was reported
            };
            if !blocks[..count].contains(&current) {
                blocks[count] = current;
                count += 1;
            }
        }
        (blocks, count)
    }

    /// Whether out-of-order data `[from, to)` makes `tcp_sack_new_ofo_skb` flush a held ACK:
    /// it extends (overlaps or abuts) a reported block beyond the first
    /// `TCP_SACK_BLOCKS_EXPECTED`, or extends none while that many are reported.
    fn changes_leading_sack_blocks(&self, from: u64, to: u64) -> bool {
        let blocks = &self.sack_blocks[..self.sack_block_count];
        match blocks.iter().position(|&(s, e)| from <= e && s <= to) {
            Some(i) => i >= TCP_SACK_BLOCKS_EXPECTED,
            None => blocks.len() >= TCP_SACK_BLOCKS_EXPECTED,
        }
    }

    /// Sends the ACKs held by SACK compression now, with the SACK blocks as last reported
    /// (widened to their current extent).
    fn flush_compressed_ack(&mut self) {
        let (blocks, count) = self.widened_blocks(None);
        let mut sack = SackBlocks::EMPTY;
        for &(start, end) in &blocks[..count] {
            sack.push(start, end);
        }
        self.flushed = Some(AckSegment {
            ack: self.rcv_nxt,
            sack,
            rwnd: self.rwnd(),
            echo_sent_at: self.echo_sent_at,
            echo_is_retransmission: self.echo_is_retransmission,
        });
        self.ack_sent();
    }

    /// Linux's RTO at the receiver (see the module documentation).
    fn rto(&self) -> SimTime {
        let rto = match self.rtt_hint {
            Some(srtt) => srtt.saturating_add(srtt.saturating_mul(2).max(self.min_rto)),
            None => self.initial_rto.max(self.min_rto),
        };
        rto.min(self.max_rto)
    }

    /// `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)`.
    fn incr_quickack(&mut self) {
        let per_window = self.rwnd() / (2 * self.mss.max(1) as u64);
        let quickacks = match per_window {
            0 => 2,
            n => n.min(TCP_MAX_QUICKACKS as u64) as u32,
        };
        self.quick = self.quick.max(quickacks);
    }

    /// `tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS)`.
    fn enter_quickack_mode(&mut self) {
        self.incr_quickack();
        self.ato = TCP_ATO_MIN;
    }

    /// `tcp_event_data_recv`: in-order data arrived.
    fn event_data_recv(&mut self, now: SimTime) {
        const HALF_ATO_MIN: SimTime = SimTime(TCP_ATO_MIN.0 / 2);
        if self.ato == SimTime::ZERO {
            // The first data: start in quick-ACK mode.
            self.incr_quickack();
            self.ato = TCP_ATO_MIN;
        } else {
            let m = now.saturating_sub(self.last_data_at);
            let half_ato = SimTime(self.ato.0 / 2);
            if m <= HALF_ATO_MIN {
                self.ato = half_ato + HALF_ATO_MIN;
            } else if m < self.ato {
                self.ato = (half_ato + m).min(self.rto());
            } else if m > self.rto() {
                // Idle for longer than the RTO: the sender restarts from a small window.
                self.incr_quickack();
            }
        }
        self.last_data_at = now;
    }

    /// `__tcp_ack_snd_check`: an ACK is owed for the segment just handled; now or later?
    fn ack_snd_check(&mut self, now: SimTime) {
        if self.ack_now {
            return;
        }
        if self.rcv_nxt - self.rcv_wup > self.mss as u64 || self.quick > 0 {
            self.ack_now = true;
            return;
        }
        if self.out_of_order.is_empty() {
            self.send_delayed_ack(now);
            return;
        }
        if !self.sack_compression || self.compressed_acks >= TCP_COMP_SACK_NR {
            self.ack_now = true;
            return;
        }
        if self.compressed_ack_rcv_nxt != self.rcv_nxt {
            self.compressed_ack_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < TCP_FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            self.ack_now = true;
            return;
        }
        self.compressed_acks += 1;
        if self.compress_deadline.is_none() {
            // 5 % of the RTT, at most `tcp_comp_sack_delay_ns`.
            let delay = match self.rtt_hint {
                Some(rtt) => SimTime(rtt.0 / 20).min(TCP_COMP_SACK_DELAY),
                None => TCP_COMP_SACK_DELAY,
            };
            self.compress_deadline = Some(now + delay);
        }
    }

    /// `tcp_send_delayed_ack`: arms the delayed-ACK timer.
    fn send_delayed_ack(&mut self, now: SimTime) {
        let mut ato = self.ato;
        if ato > TCP_DELACK_MIN {
            let mut max_ato = DELACK_HALF_SECOND;
            if let Some(srtt) = self.rtt_hint {
                max_ato = max_ato.min(srtt.max(TCP_DELACK_MIN));
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(TCP_DELACK_MAX);
        let mut deadline = now + ato;
        if let Some(armed) = self.ack_deadline {
            if armed <= now + SimTime(ato.0 / 4) {
                self.ack_now = true; // the armed timer is about to expire anyway
                return;
            }
            deadline = deadline.min(armed);
        }
        self.ack_deadline = Some(deadline);
    }

    /// An ACK went out: `tcp_event_ack_sent` and `tcp_select_window`'s `rcv_wup`.
    fn ack_sent(&mut self) {
        self.unacked_bytes = 0;
        self.ack_deadline = None;
        self.compressed_acks = 0;
        self.compress_deadline = None;
        self.rcv_wup = self.rcv_nxt;
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = TCP_ATO_MIN; // leaving quick-ACK mode deflates ato
            }
        }
    }

    /// The ACK owed, if any.
    #[inline]
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<AckSegment> {
        if !self.ack_pending() {
            return None;
        }
        Some(self.take_ack(now))
    }

    /// The ACK owed when one is ([`TcpReceiver::ack_pending`]): [`TcpReceiver::poll_transmit`]
    /// without the `Option`, so that the caller can build the ACK where it goes (in the
    /// packet pool) rather than on the stack first.
    #[inline(always)]
    pub fn take_ack(&mut self, _now: SimTime) -> AckSegment {
        debug_assert!(self.ack_pending(), "take_ack without an ACK owed");
        if let Some(ack) = self.flushed.take() {
            self.acks_sent += 1;
            return ack;
        }
        self.ack_now = false;
        self.ack_sent();
        self.acks_sent += 1;
        AckSegment {
            ack: self.rcv_nxt,
            sack: self.sack_blocks(),
            rwnd: self.rwnd(),
            echo_sent_at: self.echo_sent_at,
            echo_is_retransmission: self.echo_is_retransmission,
        }
    }

    /// [`TcpReceiver::take_ack`] written into `header`, where the ACK travels (in the packet
    /// pool): the SACK blocks go there directly rather than through the stack and two copies.
    /// Returns the bytes of the SACK option ([`SackBlocks::option_bytes`]).
    #[inline(always)]
    pub fn write_ack(&mut self, _now: SimTime, header: &mut Header) -> u32 {
        debug_assert!(self.ack_pending(), "write_ack without an ACK owed");
        if let Some(ack) = self.flushed.take() {
            self.acks_sent += 1;
            *header = Header::TcpAck(ack);
            return ack.sack.option_bytes();
        }
        self.ack_now = false;
        self.ack_sent();
        self.acks_sent += 1;
        *header = Header::TcpAck(AckSegment {
            ack: self.rcv_nxt,
            sack: SackBlocks::EMPTY,
            rwnd: self.rwnd(),
            echo_sent_at: self.echo_sent_at,
            echo_is_retransmission: self.echo_is_retransmission,
        });
        let Header::TcpAck(ack) = header else {
            unreachable!("written as an ACK above")
        };
        // The blocks `sack_blocks` would give, pushed in the same order.
        for &(start, end) in &self.sack_blocks[..self.sack_block_count] {
            ack.sack.push(start, end);
        }
        ack.sack.option_bytes()
    }

    /// [`TcpReceiver::take_ack`] written where the ACK travels inside another header (an
    /// MPTCP ACK): `place` writes the ACK it is given (its SACK blocks left out) there and
    /// returns it, and the SACK blocks are pushed in place, in the order `take_ack` gives
    /// them (as [`TcpReceiver::write_ack`] does for a TCP ACK). Returns the bytes of the
    /// SACK option ([`SackBlocks::option_bytes`]).
    #[inline(always)]
    pub fn write_ack_in<'h>(
        &mut self,
        _now: SimTime,
        place: impl FnOnce(AckSegment) -> &'h mut AckSegment,
    ) -> u32 {
        debug_assert!(self.ack_pending(), "write_ack_in without an ACK owed");
        if let Some(ack) = self.flushed.take() {
            self.acks_sent += 1;
            return place(ack).sack.option_bytes();
        }
        self.ack_now = false;
        self.ack_sent();
        self.acks_sent += 1;
        let ack = place(AckSegment {
            ack: self.rcv_nxt,
            sack: SackBlocks::EMPTY,
            rwnd: self.rwnd(),
            echo_sent_at: self.echo_sent_at,
            echo_is_retransmission: self.echo_is_retransmission,
        });
        for &(start, end) in &self.sack_blocks[..self.sack_block_count] {
            ack.sack.push(start, end);
        }
        ack.sack.option_bytes()
    }

    /// Whether every segment is acknowledged at once, by an ACK that depends on nothing but
    /// the segments received (no delayed ACKs, so no SACK compression and no use of the RTT
    /// hint), and no timer is ever armed.
    pub fn acks_at_once(&self) -> bool {
        !self.delayed_ack
    }

    /// Whether [`TcpReceiver::poll_transmit`] has an ACK to return.
    #[inline]
    pub fn ack_pending(&self) -> bool {
        self.flushed.is_some() || self.ack_now
    }

    /// Whether a timer is armed: `poll_timeout().is_some()`, without the deadline.
    #[inline(always)]
    pub fn timer_armed(&self) -> bool {
        self.ack_deadline.is_some() || self.compress_deadline.is_some()
    }

    /// When the receiver's timer expires (delayed ACK or SACK compression), if it is armed.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        match (self.ack_deadline, self.compress_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The timer fired; calls before the deadline are ignored.
    pub fn handle_timeout(&mut self, now: SimTime) {
        if self
            .compress_deadline
            .is_some_and(|deadline| now >= deadline)
        {
            // `tcp_compressed_ack_kick`.
            self.compress_deadline = None;
            if self.compressed_acks > 0 {
                self.ack_now = true;
            }
        }
        if self.ack_deadline.is_some_and(|deadline| now >= deadline) {
            self.ack_deadline = None;
            self.ack_now = true;
            if self.linux_acks {
                // `tcp_delack_timer_handler`: the delayed ACK was missed, inflate ato.
                self.ato = self.ato.saturating_mul(2).min(self.rto());
            }
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
    fn take_ack_is_poll_transmit_without_the_option() {
        // Two receivers fed the same segments (in order, a hole, its repair, a duplicate):
        // one answered by `poll_transmit`, the other by `take_ack` while `ack_pending`.
        let (mut a, mut b) = (TcpReceiver::new(&config()), TcpReceiver::new(&config()));
        for (i, k) in [0u64, 1, 3, 4, 2, 2, 5].into_iter().enumerate() {
            let now = SimTime::from_millis(i as u64);
            a.handle_data(now, &data(k * 100, MSS, k));
            b.handle_data(now, &data(k * 100, MSS, k));
            let polled: Vec<_> = std::iter::from_fn(|| a.poll_transmit(now)).collect();
            let mut taken = Vec::new();
            while b.ack_pending() {
                taken.push(b.take_ack(now));
            }
            assert!(!polled.is_empty());
            assert_eq!(polled, taken);
            assert_eq!(a.acks_sent(), b.acks_sent());
        }
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
mod linux_tests {
    //! Linux-style delayed ACKs and SACK compression.

    use super::*;

    const MSS: u32 = 100;

    fn linux() -> TcpConfig {
        TcpConfig {
            mss: MSS,
            receive_buffer: 10_000,
            delayed_ack: true,
            delayed_ack_style: DelayedAckStyle::Linux,
            ..TcpConfig::default()
        }
    }

    fn compressing() -> TcpConfig {
        TcpConfig {
            sack_compression: true,
            ..linux()
        }
    }

    fn ms(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    fn us(us: u64) -> SimTime {
        SimTime::from_micros(us)
    }

    /// Segment `k` (bytes `[100k, 100k + 100)`) arrives at `at`; returns the ACKs it causes.
    fn recv(rx: &mut TcpReceiver, at: SimTime, k: u64) -> Vec<AckSegment> {
        rx.handle_data(
            at,
            &DataSegment {
                seq: k * 100,
                len: MSS,
                sent_at: at,
                is_retransmission: false,
            },
        );
        drain(rx, at)
    }

    fn drain(rx: &mut TcpReceiver, at: SimTime) -> Vec<AckSegment> {
        std::iter::from_fn(|| rx.poll_transmit(at)).collect()
    }

    /// Fires the receiver's timer and returns the ACKs it causes.
    fn fire(rx: &mut TcpReceiver) -> (SimTime, Vec<AckSegment>) {
        let at = rx.poll_timeout().expect("a timer armed");
        rx.handle_timeout(at);
        (at, drain(rx, at))
    }

    fn acked(acks: &[AckSegment]) -> Vec<u64> {
        acks.iter().map(|a| a.ack).collect()
    }

    /// Segments `0..16` at 1 ms spacing use up the 16 quick ACKs of a 10 000-byte window;
    /// returns when the last arrived.
    fn past_quick_acks(rx: &mut TcpReceiver) -> SimTime {
        for k in 0..16 {
            assert_eq!(acked(&recv(rx, ms(k), k)), vec![(k + 1) * 100]);
        }
        assert_eq!(rx.quick_acks(), 0);
        ms(15)
    }

    #[test]
    fn quick_acks_at_the_start_then_every_second_segment_then_the_timer() {
        // min(rwnd / (2 MSS), 16): 16 for 10 000 bytes, 5 for 1 000.
        for (receive_buffer, quick) in [(10_000, 16), (1_000, 5)] {
            let mut rx = TcpReceiver::new(&TcpConfig {
                receive_buffer,
                ..linux()
            });
            let mut k = 0;
            for _ in 0..quick {
                let acks = recv(&mut rx, ms(k), k);
                assert_eq!(
                    acked(&acks),
                    vec![(k + 1) * 100],
                    "quick ACK for segment {k}"
                );
                assert_eq!(rx.poll_timeout(), None);
                k += 1;
            }
            assert_eq!(rx.quick_acks(), 0);
            for pair in 0..5 {
                let t = ms(k);
                assert!(recv(&mut rx, t, k).is_empty(), "pair {pair}: first waits");
                assert_eq!(rx.poll_timeout(), Some(t + ms(40)));
                k += 1;
                let acks = recv(&mut rx, ms(k), k);
                assert_eq!(
                    acked(&acks),
                    vec![(k + 1) * 100],
                    "pair {pair}: second ACKed"
                );
                assert_eq!(rx.poll_timeout(), None);
                k += 1;
            }
            // A trailing lone segment waits for the timer: at least 40 ms (ato = TCP_ATO_MIN).
            let t = ms(k);
            assert!(recv(&mut rx, t, k).is_empty());
            let deadline = rx.poll_timeout().unwrap();
            assert!(deadline - t >= ms(40));
            rx.handle_timeout(deadline - SimTime(1));
            assert!(drain(&mut rx, deadline).is_empty(), "too early");
            rx.handle_timeout(deadline);
            assert_eq!(acked(&drain(&mut rx, deadline)), vec![(k + 1) * 100]);
            assert_eq!(rx.poll_timeout(), None);
            assert_eq!(rx.acks_sent(), quick + 5 + 1);
        }
    }

    #[test]
    fn quick_ack_mode_returns_after_idle_longer_than_the_rto() {
        let mut rx = TcpReceiver::new(&linux());
        let mut t = past_quick_acks(&mut rx);
        assert!(recv(&mut rx, t + ms(1), 16).is_empty());
        assert_eq!(recv(&mut rx, t + ms(2), 17).len(), 1);
        t += ms(2);

        // Idle 0.9 s: less than the RTO (initial_rto = 1 s without an RTT hint).
        t += ms(900);
        assert!(recv(&mut rx, t, 18).is_empty(), "not idle long enough");
        assert_eq!(recv(&mut rx, t + ms(1), 19).len(), 1);
        t += ms(1);

        // Idle 1.1 s: quick-ACK mode again, 16 segments ACKed one by one.
        t += ms(1_100);
        for k in 20..36 {
            assert_eq!(acked(&recv(&mut rx, t, k)), vec![(k + 1) * 100]);
            t += ms(1);
        }
        assert!(recv(&mut rx, t, 36).is_empty(), "quick ACKs used up");

        // With an RTT hint of 10 ms the RTO is 10 + max(20, min_rto = 200) = 210 ms.
        rx.set_rtt_hint(ms(10));
        assert_eq!(recv(&mut rx, t + ms(1), 37).len(), 1);
        t += ms(1) + ms(150);
        assert!(recv(&mut rx, t, 38).is_empty(), "150 ms is not idle");
        assert_eq!(recv(&mut rx, t + ms(1), 39).len(), 1);
        t += ms(1) + ms(250);
        assert_eq!(recv(&mut rx, t, 40).len(), 1, "250 ms is idle");
        assert!(rx.quick_acks() > 0);
    }

    #[test]
    fn out_of_order_hole_fills_and_duplicates_are_acked_at_once() {
        let mut rx = TcpReceiver::new(&linux());
        let t = past_quick_acks(&mut rx) + ms(1);
        let blocks = |ack: &AckSegment| ack.sack.as_slice().to_vec();

        // Segments 16 and 17 missing: an out-of-order segment is ACKed at once.
        let acks = recv(&mut rx, t, 18);
        assert_eq!(acks.len(), 1);
        assert_eq!((acks[0].ack, blocks(&acks[0])), (1600, vec![(1800, 1900)]));
        // Another out-of-order segment (no compression): at once too.
        let acks = recv(&mut rx, t, 20);
        assert_eq!(acks.len(), 1);
        assert_eq!(blocks(&acks[0]), vec![(2000, 2100), (1800, 1900)]);
        // Filling part of the hole: at once.
        let acks = recv(&mut rx, t, 16);
        assert_eq!(acked(&acks), vec![1700]);
        // Filling the first hole (another remains): at once.
        let acks = recv(&mut rx, t, 17);
        assert_eq!((acks[0].ack, blocks(&acks[0])), (1900, vec![(2000, 2100)]));
        // Filling the last hole: at once.
        assert_eq!(acked(&recv(&mut rx, t, 19)), vec![2100]);
        assert_eq!(rx.quick_acks(), 0, "no quick-ACK mode so far");
        assert_eq!(rx.poll_timeout(), None);

        // A duplicate: at once, and quick-ACK mode (16 quick ACKs, one used by this ACK).
        let acks = recv(&mut rx, t, 5);
        assert_eq!(acked(&acks), vec![2100]);
        assert_eq!(rx.duplicate_bytes(), 100);
        assert_eq!(rx.quick_acks(), 15);
        assert_eq!(rx.ato(), ms(40));
        for k in 21..36 {
            assert_eq!(recv(&mut rx, t, k).len(), 1, "quick ACK for segment {k}");
        }
        assert!(recv(&mut rx, t, 36).is_empty());

        // A segment wholly beyond the window: at once, quick-ACK mode.
        let acks = recv(&mut rx, t, 36 + 200);
        assert_eq!(acked(&acks), vec![3700]);
        assert_eq!(rx.out_of_window_bytes(), 100);
        assert_eq!(rx.quick_acks(), 15);
    }

    #[test]
    fn an_armed_delayed_ack_timer_is_kept_and_an_ack_sent_when_it_is_nearly_due() {
        let mut rx = TcpReceiver::new(&linux());
        let t = past_quick_acks(&mut rx);
        let half = |rx: &mut TcpReceiver, at: SimTime, seq: u64| {
            rx.handle_data(
                at,
                &DataSegment {
                    seq,
                    len: MSS / 2,
                    sent_at: at,
                    is_retransmission: false,
                },
            );
            drain(rx, at)
        };
        // Half segments: one MSS unacknowledged is not "more than one".
        let t = t + ms(1);
        assert!(half(&mut rx, t, 1600).is_empty());
        assert_eq!(rx.poll_timeout(), Some(t + ms(40)));
        // 15 ms later the armed timer (25 ms away) is kept, not pushed back.
        assert!(half(&mut rx, t + ms(15), 1650).is_empty());
        assert_eq!(rx.poll_timeout(), Some(t + ms(40)));
        assert_eq!(acked(&fire(&mut rx).1), vec![1700]);
        // The expiry doubled ato to 80 ms: the next lone segment's timer is 80 ms away.
        assert_eq!(rx.ato(), ms(80));
        let t = t + ms(100);
        assert!(half(&mut rx, t, 1700).is_empty());
        assert_eq!(rx.poll_timeout(), Some(t + ms(80)));
        // 70 ms later ato is 80 / 2 + 70 = 110 ms, and the armed timer is due within
        // ato / 4: the ACK goes at once.
        assert_eq!(acked(&half(&mut rx, t + ms(70), 1750)), vec![1800]);
        assert_eq!(rx.ato(), ms(110));
        assert_eq!(rx.poll_timeout(), None);
    }

    #[test]
    fn ato_follows_the_inter_arrival_time_and_the_timer() {
        let mut rx = TcpReceiver::new(&linux());
        assert_eq!(rx.ato(), SimTime::ZERO);
        // Arrivals 1 ms apart (m <= 20 ms): ato = ato / 2 + 20 ms stays at 40 ms.
        for k in 0..16 {
            assert_eq!(recv(&mut rx, ms(k), k).len(), 1);
            assert_eq!(rx.ato(), ms(40), "TCP_ATO_MIN from the first segment on");
        }
        let t = ms(15);

        // 30 ms apart (20 ms < m < ato): ato = ato / 2 + m.
        assert!(recv(&mut rx, t + ms(30), 16).is_empty());
        assert_eq!(rx.ato(), ms(50));
        assert_eq!(
            rx.poll_timeout(),
            Some(t + ms(30) + ms(50)),
            "timer at now + ato"
        );
        assert_eq!(recv(&mut rx, t + ms(60), 17).len(), 1);
        assert_eq!(rx.ato(), ms(55));
        let t = t + ms(90);
        assert!(recv(&mut rx, t, 18).is_empty());
        assert_eq!(rx.ato(), us(57_500));
        assert_eq!(rx.poll_timeout(), Some(t + us(57_500)));

        // The timer expires: ato doubles.
        let (at, acks) = fire(&mut rx);
        assert_eq!((at, acked(&acks)), (t + us(57_500), vec![1900]));
        assert_eq!(rx.ato(), ms(115));

        // A gap longer than ato but not idle (below the RTO, 1 s without a hint) leaves ato;
        // the timer doubles it again, and from 200 ms on the timer is TCP_DELACK_MAX.
        let t = t + ms(300);
        assert!(recv(&mut rx, t, 19).is_empty());
        assert_eq!(rx.ato(), ms(115));
        assert_eq!(fire(&mut rx).0, t + ms(115));
        assert_eq!(rx.ato(), ms(230));
        let t = t + ms(700);
        assert!(recv(&mut rx, t, 20).is_empty());
        assert_eq!(rx.ato(), ms(230));
        assert_eq!(fire(&mut rx).0, t + ms(200), "TCP_DELACK_MAX");
        assert_eq!(rx.ato(), ms(460));
        let t = t + ms(900);
        assert!(recv(&mut rx, t, 21).is_empty());
        fire(&mut rx);
        assert_eq!(rx.ato(), ms(920));
        // m = 900 ms < ato: ato / 2 + m = 1.36 s, capped by the RTO.
        let t = t + ms(900);
        assert!(recv(&mut rx, t, 22).is_empty());
        assert_eq!(rx.ato(), ms(1_000));
        fire(&mut rx);
        assert_eq!(
            rx.ato(),
            ms(1_000),
            "the timer's doubling capped by the RTO too"
        );

        // An RTT hint of 10 ms: the RTO is 210 ms (m = 900 ms < ato: ato / 2 + m, capped),
        // and the timer is bounded by max(srtt, 40 ms).
        rx.set_rtt_hint(ms(10));
        let t = t + ms(900);
        assert!(recv(&mut rx, t, 23).is_empty());
        assert_eq!(rx.ato(), ms(210));
        assert_eq!(fire(&mut rx).0, t + ms(40));
        assert_eq!(rx.ato(), ms(210));
        // 60 ms: the RTO is 260 ms, the timer at most 60 ms.
        rx.set_rtt_hint(ms(60));
        let t = t + ms(100);
        assert!(recv(&mut rx, t, 24).is_empty());
        assert_eq!(rx.ato(), ms(205));
        assert_eq!(fire(&mut rx).0, t + ms(60));
        assert_eq!(rx.ato(), ms(260));

        // Back-to-back arrivals pull ato back towards 40 ms.
        let t = t + ms(100);
        recv(&mut rx, t, 25);
        assert_eq!(rx.ato(), ms(230));
        recv(&mut rx, t + ms(1), 26);
        assert_eq!(rx.ato(), ms(135));
        recv(&mut rx, t + ms(2), 27);
        assert_eq!(rx.ato(), us(87_500));
    }

    #[test]
    fn sack_compression_holds_and_merges_acks_after_three_sent_at_once() {
        let mut rx = TcpReceiver::new(&compressing());
        let t = past_quick_acks(&mut rx) + ms(1);
        // Segments 16 and 17 lost. The first three out-of-order segments for this rcv_nxt
        // are ACKed at once (the sender's duplicate-ACK threshold) ...
        for k in 18..21 {
            let acks = recv(&mut rx, t, k);
            assert_eq!(acked(&acks), vec![1600], "segment {k} ACKed at once");
            assert_eq!(acks[0].sack.as_slice(), &[(1800, (k + 1) * 100)]);
        }
        // ... later ones are held, for 1 ms without an RTT hint, and merged.
        for k in 21..24 {
            assert!(recv(&mut rx, t + us(100 * (k - 21)), k).is_empty());
        }
        let (at, acks) = fire(&mut rx);
        assert_eq!(at, t + ms(1), "timed from the first held");
        assert_eq!(acks.len(), 1, "one ACK for three segments");
        assert_eq!(
            (acks[0].ack, acks[0].sack.as_slice()),
            (1600, &[(1800, 2400)][..])
        );
        assert_eq!(rx.poll_timeout(), None);

        // With an RTT hint the delay is RTT / 20, at most 1 ms.
        rx.set_rtt_hint(ms(10));
        let t = t + ms(2);
        assert!(recv(&mut rx, t, 24).is_empty());
        assert_eq!(rx.poll_timeout(), Some(t + us(500)));
        assert_eq!(fire(&mut rx).1.len(), 1);
        rx.set_rtt_hint(ms(100));
        let t = t + ms(1);
        assert!(recv(&mut rx, t, 25).is_empty());
        assert_eq!(rx.poll_timeout(), Some(t + ms(1)));
        assert_eq!(fire(&mut rx).1.len(), 1);

        // At most 44 held: the 45th goes at once.
        let t = t + ms(2);
        for k in 26..70 {
            assert!(recv(&mut rx, t, k).is_empty(), "segment {k} held");
        }
        let acks = recv(&mut rx, t, 70);
        assert_eq!(acks.len(), 1, "the 45th is sent");
        assert_eq!(acks[0].sack.as_slice(), &[(1800, 7100)]);
        assert_eq!(rx.poll_timeout(), None, "nothing held any more");
        assert!(recv(&mut rx, t, 71).is_empty(), "held again");

        // Filling part of the hole (one MSS: not the "more than one MSS" rule) moves rcv_nxt:
        // ACKed at once, counting as the first of three for the new rcv_nxt.
        let acks = recv(&mut rx, t, 16);
        assert_eq!(acked(&acks), vec![1700]);
        assert_eq!(rx.poll_timeout(), None, "the held ACK went with it");
        assert_eq!(recv(&mut rx, t, 72).len(), 1);
        assert_eq!(recv(&mut rx, t, 73).len(), 1);
        assert!(recv(&mut rx, t, 74).is_empty(), "held");
        // Filling the last hole: at once.
        assert_eq!(acked(&recv(&mut rx, t, 17)), vec![7500]);
        assert_eq!(rx.poll_timeout(), None);
    }

    #[test]
    fn sack_compression_flushes_before_the_leading_blocks_change() {
        let mut rx = TcpReceiver::new(&compressing());
        let t = past_quick_acks(&mut rx) + ms(1);
        let blocks = |acks: &[AckSegment]| acks[0].sack.as_slice().to_vec();
        // Segment 16 lost; 17 to 19 ACKed at once, then ACKs are held.
        for k in 17..20 {
            assert_eq!(recv(&mut rx, t, k).len(), 1);
        }
        assert!(recv(&mut rx, t, 20).is_empty(), "held");
        // A second block while one is reported: still held.
        assert!(recv(&mut rx, t, 22).is_empty(), "held: a second block");
        // A third block while two are reported: the held ACK goes first, without it ...
        let acks = recv(&mut rx, t, 24);
        assert_eq!(acks.len(), 1, "flushed");
        assert_eq!(blocks(&acks), vec![(2200, 2300), (1700, 2100)]);
        // ... and the new segment's ACK is held in its turn.
        let (at, acks) = fire(&mut rx);
        assert_eq!(at, t + ms(1));
        assert_eq!(acks.len(), 1);
        assert_eq!(
            blocks(&acks),
            vec![(2400, 2500), (2200, 2300), (1700, 2100)]
        );

        // Extending the first or the second reported block does not flush.
        let t = t + ms(2);
        assert!(recv(&mut rx, t, 25).is_empty(), "held: extends the first");
        assert!(recv(&mut rx, t, 21).is_empty(), "held: extends the second");
        let (_, acks) = fire(&mut rx);
        assert_eq!(acks.len(), 1);
        assert_eq!(blocks(&acks), vec![(1700, 2300), (2400, 2600)]);

        // Extending the third does.
        let t = t + ms(2);
        assert!(recv(&mut rx, t, 29).is_empty(), "held: a third block");
        let acks = recv(&mut rx, t, 26);
        assert_eq!(acks.len(), 1, "extends the third block: flushed");
        assert_eq!(
            blocks(&acks),
            vec![(2900, 3000), (1700, 2300), (2400, 2700)]
        );
        let (_, acks) = fire(&mut rx);
        assert_eq!(
            blocks(&acks),
            vec![(2400, 2700), (2900, 3000), (1700, 2300)]
        );
        assert_eq!(rx.poll_timeout(), None);
    }

    #[test]
    fn every_byte_is_eventually_acknowledged() {
        // A scrambled arrival order with duplicates: once the timers have run, the last ACK
        // covers everything, whatever the style.
        for config in [
            linux(),
            compressing(),
            TcpConfig {
                sack: false,
                ..compressing()
            },
        ] {
            let mut rx = TcpReceiver::new(&config);
            let mut state = 7u64;
            let mut t = SimTime::ZERO;
            let mut last_ack = None;
            for _ in 0..2_000 {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let k = (state >> 33) % 60 + rx.rcv_nxt() / 100;
                t += us((state >> 20) % 3_000);
                while rx.poll_timeout().is_some_and(|d| d <= t) {
                    let (_, acks) = fire(&mut rx);
                    last_ack = acks.last().map(|a| a.ack).or(last_ack);
                }
                let acks = recv(&mut rx, t, k);
                last_ack = acks.last().map(|a| a.ack).or(last_ack);
            }
            while rx.poll_timeout().is_some() {
                let (_, acks) = fire(&mut rx);
                last_ack = acks.last().map(|a| a.ack).or(last_ack);
            }
            assert_eq!(last_ack, Some(rx.rcv_nxt()));
        }
    }

    /// Every ACK and timer of a receiver driven through a scrambled script.
    fn transcript(config: &TcpConfig, rtt_hint: Option<SimTime>) -> Vec<(SimTime, u64, u64)> {
        let mut rx = TcpReceiver::new(config);
        if let Some(rtt) = rtt_hint {
            rx.set_rtt_hint(rtt);
        }
        let mut out = Vec::new();
        let mut state = 11u64;
        let mut t = SimTime::ZERO;
        for _ in 0..3_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = (state >> 33) % 40 + rx.rcv_nxt() / 100;
            let len = if (state >> 10) % 4 == 0 { 50 } else { MSS };
            t += us((state >> 20) % 30_000);
            while let Some(deadline) = rx.poll_timeout().filter(|&d| d <= t) {
                rx.handle_timeout(deadline);
                for ack in drain(&mut rx, deadline) {
                    out.push((deadline, ack.ack, ack.rwnd));
                }
            }
            rx.handle_data(
                t,
                &DataSegment {
                    seq: k * 100,
                    len,
                    sent_at: t,
                    is_retransmission: false,
                },
            );
            for ack in drain(&mut rx, t) {
                out.push((t, ack.ack, ack.rwnd));
            }
            out.push((rx.poll_timeout().unwrap_or(SimTime::MAX), u64::MAX, 0));
        }
        out
    }

    #[test]
    fn rfc_style_and_no_delayed_acks_ignore_the_linux_settings() {
        let rfc = TcpConfig {
            mss: MSS,
            receive_buffer: 10_000,
            delayed_ack: true,
            ..TcpConfig::default()
        };
        let with_linux_settings = TcpConfig {
            sack_compression: true,
            ..rfc
        };
        let expected = transcript(&rfc, None);
        assert_eq!(transcript(&with_linux_settings, Some(ms(10))), expected);
        // The RFC style's own rules: a lone segment waits delayed_ack_timeout.
        let mut rx = TcpReceiver::new(&with_linux_settings);
        rx.set_rtt_hint(ms(10));
        assert!(recv(&mut rx, ms(5), 0).is_empty(), "no quick-ACK mode");
        assert_eq!(rx.poll_timeout(), Some(ms(5) + rfc.delayed_ack_timeout));

        // Without delayed ACKs the style and compression change nothing: one ACK a segment.
        let plain = TcpConfig {
            delayed_ack: false,
            ..rfc
        };
        let linux_without_delay = TcpConfig {
            delayed_ack: false,
            delayed_ack_style: DelayedAckStyle::Linux,
            sack_compression: true,
            ..rfc
        };
        let expected = transcript(&plain, None);
        assert_eq!(transcript(&linux_without_delay, Some(ms(10))), expected);
        let data_segments = expected.iter().filter(|e| e.1 == u64::MAX).count();
        let acks = expected.len() - data_segments;
        assert_eq!(acks, data_segments, "one ACK per segment");
    }

    #[test]
    fn an_ack_written_into_a_header_is_the_ack_taken() {
        // Three receivers fed the same segments (losses, reordering, SACK compression's held
        // and flushed ACKs): each ACK one takes is the one the second writes into a header,
        // and the one the third writes inside an MPTCP ACK.
        let plain = TcpConfig {
            mss: MSS,
            receive_buffer: 10_000,
            ..TcpConfig::default()
        };
        for cfg in [plain, linux(), compressing()] {
            let (mut taken, mut written) = (TcpReceiver::new(&cfg), TcpReceiver::new(&cfg));
            let mut inside = TcpReceiver::new(&cfg);
            let mut sacks = 0;
            let mut compare = |a: &mut TcpReceiver,
                               b: &mut TcpReceiver,
                               c: &mut TcpReceiver,
                               at: SimTime| {
                let mut n = 0;
                while a.ack_pending() {
                    assert!(b.ack_pending() && c.ack_pending());
                    let ack = a.take_ack(at);
                    let mut header = Header::Custom(crate::packet::CustomHeader { words: [7; 4] });
                    let option_bytes = b.write_ack(at, &mut header);
                    assert_eq!(header, Header::TcpAck(ack));
                    assert_eq!(option_bytes, ack.sack.option_bytes());
                    let mut header = Header::Custom(crate::packet::CustomHeader { words: [7; 4] });
                    let option_bytes = c.write_ack_in(at, |placed| {
                        header = Header::MptcpAck(crate::packet::MptcpAck {
                            ack: placed,
                            data_ack: 9,
                        });
                        match &mut header {
                            Header::MptcpAck(m) => &mut m.ack,
                            _ => unreachable!(),
                        }
                    });
                    let expected = crate::packet::MptcpAck { ack, data_ack: 9 };
                    assert_eq!(header, Header::MptcpAck(expected));
                    assert_eq!(option_bytes, ack.sack.option_bytes());
                    n += 1;
                    sacks += usize::from(!ack.sack.is_empty());
                }
                assert!(!b.ack_pending() && !c.ack_pending());
                n
            };
            // In order past the quick ACKs (16 segments 1 ms apart), then losses and
            // reordering 10 µs apart: ACKs held, and flushed before the blocks change.
            let order: Vec<u64> = (0..16)
                .chain([17, 18, 19, 20, 22, 24, 26, 16, 21, 28, 23, 25, 27, 30, 29])
                .chain(31..60)
                .collect();
            let time = |i: usize| match i {
                0..16 => ms(i as u64),
                _ => ms(15) + us(10 * (i as u64 - 15)),
            };
            let mut acks = 0;
            for (i, &k) in order.iter().enumerate() {
                let at = time(i);
                for rx in [&mut taken, &mut written, &mut inside] {
                    rx.handle_data(
                        at,
                        &DataSegment {
                            seq: k * 100,
                            len: MSS,
                            sent_at: at,
                            is_retransmission: k % 5 == 0,
                        },
                    );
                }
                acks += compare(&mut taken, &mut written, &mut inside, at);
                assert_eq!(taken.timer_armed(), taken.poll_timeout().is_some());
                if let Some(t) = taken.poll_timeout() {
                    if t < time(i + 1) {
                        assert_eq!(written.poll_timeout(), Some(t));
                        assert_eq!(inside.poll_timeout(), Some(t));
                        taken.handle_timeout(t);
                        written.handle_timeout(t);
                        inside.handle_timeout(t);
                        acks += compare(&mut taken, &mut written, &mut inside, t);
                    }
                }
            }
            assert!(acks > 20, "{acks} ACKs compared");
            assert!(sacks > 5, "{sacks} with SACK blocks");
        }
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

    proptest::proptest! {
        /// The shortcuts of `handle_data` (the next segment in order, a segment at or above the
        /// highest range held, one that fills the hole at `rcv_nxt` up to at most the end of the
        /// first range held) leave the receiver as the general path does: two receivers
        /// given the same segments (in order, out of order, duplicated,
        /// beyond the window, a buffer smaller than a segment), one through `handle_data`,
        /// one always through the general path, report the same deliveries and send the same
        /// ACKs, with or without SACK and delayed ACKs.
        #[test]
        fn the_shortcuts_do_what_the_general_path_does(
            sack in proptest::bool::ANY,
            delayed_ack in proptest::bool::ANY,
            buffer in proptest::prop_oneof![
                proptest::strategy::Just(70u64),
                proptest::strategy::Just(750),
                proptest::strategy::Just(1 << 20),
            ],
            segments in proptest::collection::vec((0u64..40, 0u32..5, proptest::bool::ANY), 1..150),
        ) {
            let config = TcpConfig {
                mss: 100,
                sack,
                delayed_ack,
                receive_buffer: buffer,
                ..TcpConfig::default()
            };
            let (mut fast, mut general) = (TcpReceiver::new(&config), TcpReceiver::new(&config));
            for (i, &(slot, kind, retransmitted)) in segments.iter().enumerate() {
                let now = SimTime::from_millis(i as u64);
                // The next segment in order (whole or half), one at a random slot, a short one
                // at a random place (ranges shorter than a segment, holes a segment at the
                // hole overlaps beyond), or one at the end of the highest range held out of
                // order.
                let top = fast.out_of_order_ranges().last().map_or(fast.rcv_nxt(), |r| r.1);
                let (seq, len) = match kind {
                    0 => (slot * 100, 100),
                    2 => (fast.rcv_nxt(), 50),
                    3 => (top, 100),
                    4 => (slot * 50 + 10, 30),
                    _ => (fast.rcv_nxt(), 100),
                };
                let s = DataSegment {
                    seq,
                    len,
                    sent_at: SimTime::from_micros(i as u64),
                    is_retransmission: retransmitted,
                };
                proptest::prop_assert_eq!(fast.handle_data(now, &s), general.handle_data_general(now, &s));
                for r in [&mut fast, &mut general] {
                    if r.poll_timeout().is_some_and(|t| t <= now) {
                        r.handle_timeout(now);
                    }
                }
                loop {
                    let (a, b) = (fast.poll_transmit(now), general.poll_transmit(now));
                    proptest::prop_assert_eq!(a, b);
                    if a.is_none() {
                        break;
                    }
                }
                proptest::prop_assert_eq!(format!("{fast:?}"), format!("{general:?}"));
            }
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
