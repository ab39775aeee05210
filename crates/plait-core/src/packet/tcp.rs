//! TCP segments as they travel in a packet's header: data segments from the sender, ACKs with
//! their SACK blocks from the receiver. These are the TCP variants of
//! [`crate::packet::Header`].

use crate::time::SimTime;

/// IPv4 + TCP header bytes without options (RFC 791, RFC 9293).
pub const TCP_IP_HEADER_BYTES: u32 = 40;
/// Most SACK blocks an ACK carries: RFC 2018 §3 allows 4, and 3 when the timestamp option is
/// in use — which it is here, since receivers echo the sender's send time (see
/// `receiver::SACK_BLOCKS_PER_ACK`). Three blocks also keep an ACK header, and with it every
/// packet in the pool, 24 bytes smaller.
pub const MAX_SACK_BLOCKS: usize = 3;

/// Up to [`MAX_SACK_BLOCKS`] half-open byte ranges `[start, end)`, most recent first
/// (RFC 2018 §4: the first block reports the most recently received segment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    blocks: [(u64, u64); MAX_SACK_BLOCKS],
    /// A whole word (the struct's size is the same): an ACK is copied without byte-sized
    /// pieces of padding.
    len: u64,
}

impl SackBlocks {
    pub const EMPTY: SackBlocks = SackBlocks {
        blocks: [(0, 0); MAX_SACK_BLOCKS],
        len: 0,
    };

    /// Appends a block; blocks beyond the capacity are ignored.
    pub fn push(&mut self, start: u64, end: u64) {
        if (self.len as usize) < MAX_SACK_BLOCKS && start < end {
            self.blocks[self.len as usize] = (start, end);
            self.len += 1;
        }
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }
    /// Bytes the SACK option adds to the TCP header: kind + length (2) plus 8 per block,
    /// padded with NOPs to a multiple of 4 (RFC 2018 §3).
    pub fn option_bytes(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            (2 + 8 * self.len as u32).div_ceil(4) * 4
        }
    }
}

/// A TCP data segment as emitted by a sender (sans-IO; the simulator wraps it in a [`Packet`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataSegment {
    /// Sequence number of the first payload byte (byte sequence space starting at 0).
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Time the sender emitted it; echoed by the receiver for RTT measurement.
    pub sent_at: SimTime,
    /// True if these bytes were sent before (Karn's algorithm: no RTT sample from its ACK).
    pub is_retransmission: bool,
}

/// A TCP acknowledgement as emitted by a receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSegment {
    /// Cumulative acknowledgement: next byte expected.
    pub ack: u64,
    pub sack: SackBlocks,
    /// Advertised receive window in bytes.
    pub rwnd: u64,
    /// `sent_at` of the data segment that triggered this ACK.
    pub echo_sent_at: SimTime,
    /// `is_retransmission` of that segment.
    pub echo_is_retransmission: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sack_option_size() {
        let mut s = SackBlocks::EMPTY;
        assert_eq!(s.option_bytes(), 0);
        s.push(10, 20);
        assert_eq!(s.option_bytes(), 12);
        s.push(30, 40);
        s.push(50, 60);
        assert_eq!(s.option_bytes(), 28);
        s.push(70, 80); // beyond capacity: ignored
        assert_eq!(s.len(), 3);
        assert_eq!(s.as_slice()[2], (50, 60));
    }

    #[test]
    fn empty_ranges_ignored() {
        let mut s = SackBlocks::EMPTY;
        s.push(5, 5);
        assert!(s.is_empty());
    }
}
