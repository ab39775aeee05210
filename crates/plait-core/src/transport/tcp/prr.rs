//! Proportional Rate Reduction (RFC 6937): how much a sender in fast recovery may send.
//!
//! RFC 6675 lets a sender in recovery send whenever `pipe` is below the reduced window, which
//! after a loss of several segments means nothing for a while and then a burst. PRR spreads the
//! reduction over the recovery instead: while `pipe` is above `ssthresh` it sends in proportion
//! to what is delivered (`ssthresh / RecoverFS` of it), and once `pipe` has fallen to
//! `ssthresh` it grows back towards it no faster than slow start (the slow-start reduction
//! bound, SSRB, which is what Linux's `tcp_cwnd_reduction` uses).
//!
//! RFC 6937 §3.1, in bytes:
//!
//! ```text
//! on entering recovery:  prr_delivered = 0; prr_out = 0; RecoverFS = snd.nxt - snd.una
//! on every ACK in recovery:
//!     DeliveredData = change_in(snd.una) + change_in(SACKd)
//!     prr_delivered += DeliveredData
//!     if pipe > ssthresh:  sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
//!     else:                limit  = MAX(prr_delivered - prr_out, DeliveredData) + MSS
//!                          sndcnt = MIN(ssthresh - pipe, limit)
//!     cwnd = pipe + sndcnt
//! on any (re)transmission: prr_out += data sent
//! ```
//!
//! The proportional allowance is rounded up to whole segments (the RFC's CEIL, taken in
//! segments as Linux's packet arithmetic does): in bytes, an allowance of half a segment could
//! not be sent and every send would slip by one ACK.
//!
//! `RecoverFS` is the RFC's FlightSize at the start of recovery (Linux divides by the window
//! before the reduction instead, `prior_cwnd`; with the `cwnd` ssthresh basis the two differ
//! only by the limited-transmit data in flight).

/// PRR's state during one fast-recovery episode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prr {
    /// FlightSize when recovery started (at least 1, so the ratio is defined).
    recover_fs: u64,
    /// Bytes delivered to the receiver since recovery started.
    delivered: u64,
    /// Bytes sent since recovery started, retransmissions included.
    out: u64,
}

impl Prr {
    /// A recovery episode starts with `flight_size` bytes outstanding.
    pub fn start(flight_size: u64) -> Prr {
        Prr {
            recover_fs: flight_size.max(1),
            delivered: 0,
            out: 0,
        }
    }

    /// An ACK in recovery delivered `delivered` bytes and left `pipe` in flight; returns
    /// `sndcnt`, the bytes that may be sent now (the window is `pipe + sndcnt`).
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, mss: u32) -> u64 {
        self.delivered += delivered;
        if pipe > ssthresh {
            // Proportional part: CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out, the
            // CEIL taken in whole segments: a sender cannot send the fraction of a segment the
            // byte form allows, and Linux counts in packets.
            let due = (self.delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs as u128);
            let due = due.div_ceil(mss as u128) * mss as u128;
            (due as u64).saturating_sub(self.out)
        } else {
            // Slow-start reduction bound.
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + mss as u64;
            (ssthresh - pipe).min(limit)
        }
    }

    /// `bytes` were sent (new data or a retransmission).
    pub fn on_sent(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// Bytes delivered since recovery started.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Bytes sent since recovery started.
    pub fn sent(&self) -> u64 {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6937 §6's example: a window of 20 segments, one of them lost, ssthresh = 10, one
    /// segment delivered per ACK. Where RFC 6675 sends nothing until pipe has fallen to 10
    /// and then one segment per ACK, PRR sends one segment on every other ACK from the start.
    #[test]
    fn proportional_part_sends_ssthresh_over_recoverfs_of_what_is_delivered() {
        const MSS: u64 = 1000;
        let mut prr = Prr::start(20 * MSS);
        let ssthresh = 10 * MSS;
        // The first ACK after the loss was detected: 19 segments still in flight (one lost).
        let mut pipe = 19 * MSS;
        let mut sent_per_ack = Vec::new();
        for _ in 0..10 {
            pipe -= MSS; // one segment left the network
            let sndcnt = prr.on_ack(MSS, pipe, ssthresh, MSS as u32);
            let send = sndcnt / MSS;
            prr.on_sent(send * MSS);
            pipe += send * MSS;
            sent_per_ack.push(send);
        }
        // CEIL(k * 10 / 20) - out: 1, 0, 1, 0, ... (the RFC's "send on every other ACK").
        assert_eq!(sent_per_ack, [1, 0, 1, 0, 1, 0, 1, 0, 1, 0]);
        assert_eq!(prr.sent(), 5 * MSS);
        assert_eq!(prr.delivered(), 10 * MSS);
    }

    #[test]
    fn at_or_below_ssthresh_the_slow_start_bound_applies() {
        const MSS: u64 = 1000;
        let mut prr = Prr::start(20 * MSS);
        // A large loss: pipe far below ssthresh. Each ACK delivering one segment allows the
        // delivered data plus one MSS (slow start), not a jump to ssthresh.
        assert_eq!(prr.on_ack(MSS, 2 * MSS, 10 * MSS, MSS as u32), 2 * MSS);
        prr.on_sent(2 * MSS);
        assert_eq!(prr.on_ack(MSS, 3 * MSS, 10 * MSS, MSS as u32), 2 * MSS);
        prr.on_sent(2 * MSS);
        // Close to ssthresh the gap is the limit.
        assert_eq!(prr.on_ack(3 * MSS, 9 * MSS, 10 * MSS, MSS as u32), MSS);
    }

    #[test]
    fn the_proportional_part_rounds_up_to_a_segment_and_never_goes_negative() {
        let mut prr = Prr::start(3);
        // CEIL(1 * 2 / 3) = 1.
        assert_eq!(prr.on_ack(1, 10, 2, 1), 1);
        prr.on_sent(5);
        assert_eq!(prr.on_ack(1, 10, 2, 1), 0);
        // 100 bytes delivered of RecoverFS 2000 with ssthresh 1000: 50 bytes due, rounded up
        // to one segment of 100.
        let mut prr = Prr::start(2_000);
        assert_eq!(prr.on_ack(100, 1_500, 1_000, 100), 100);
    }
}
