//! The receiver's loss detection, RFC 5348 §5.1: a packet is lost once at least
//! [`NDUPACK`] packets with higher sequence numbers have arrived; its nominal send time is
//! interpolated between the packets received just before and just after it:
//!
//! `T_loss = T_before + (T_after − T_before)·(S_loss − S_before)/(S_after − S_before)`.
//!
//! The detector turns arrivals (possibly reordered) into a stream of *resolved* packets in
//! sequence order, each received or lost, which the loss history consumes. A packet arriving
//! after it was declared lost is reported as late and is not resolved again (RFC 5348 §5.1
//! counts it lost).

use std::collections::VecDeque;

use crate::time::SimTime;

/// Packets with higher sequence numbers that must arrive before a gap is a loss (RFC 5348
/// §5.1, "NDUPACK = 3").
pub const NDUPACK: usize = 3;

/// A packet whose fate is known, in sequence order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub seq: u64,
    /// The sender's timestamp (interpolated for a lost packet).
    pub sent_at: SimTime,
    pub lost: bool,
}

/// What an arrival was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// A packet not seen before, within the window of unresolved packets.
    New,
    /// A packet already declared lost, or received before.
    LateOrDuplicate,
}

/// Loss detection over the sequence numbers 0, 1, 2, ... of one sender.
#[derive(Clone, Debug, Default)]
pub struct LossDetector {
    /// Lowest sequence number not yet resolved.
    base: u64,
    /// Sequence numbers `base..` up to the highest received: the send time of those received.
    window: VecDeque<Option<SimTime>>,
    /// Received entries in `window`.
    received_in_window: usize,
    /// The last received packet resolved: (seq, send time).
    before: Option<(u64, SimTime)>,
}

impl LossDetector {
    pub fn new() -> Self {
        LossDetector::default()
    }

    /// Highest sequence number received plus one (0 before any arrival).
    pub fn end(&self) -> u64 {
        self.base + self.window.len() as u64
    }

    /// Whether a packet is missing below the highest received one (only then can an arrival
    /// resolve a loss).
    pub fn has_gap(&self) -> bool {
        !self.window.is_empty()
    }

    /// Records the arrival of `seq`, sent at `sent_at`, and hands every packet it resolves to
    /// `resolved`, in sequence order.
    pub fn on_arrival(
        &mut self,
        seq: u64,
        sent_at: SimTime,
        mut resolved: impl FnMut(Resolved),
    ) -> Arrival {
        if seq < self.base {
            return Arrival::LateOrDuplicate;
        }
        let offset = (seq - self.base) as usize;
        if offset >= self.window.len() {
            self.window.resize(offset + 1, None);
        }
        if self.window[offset].is_some() {
            return Arrival::LateOrDuplicate;
        }
        self.window[offset] = Some(sent_at);
        self.received_in_window += 1;
        self.resolve(&mut resolved);
        Arrival::New
    }

    fn resolve(&mut self, resolved: &mut impl FnMut(Resolved)) {
        loop {
            match self.window.front() {
                Some(&Some(t)) => {
                    resolved(Resolved {
                        seq: self.base,
                        sent_at: t,
                        lost: false,
                    });
                    self.before = Some((self.base, t));
                    self.window.pop_front();
                    self.received_in_window -= 1;
                    self.base += 1;
                }
                Some(None) if self.received_in_window >= NDUPACK => {
                    // A run of missing packets up to the first received one after it: every
                    // packet of the run has the same NDUPACK later arrivals, so all are lost.
                    let gap = self
                        .window
                        .iter()
                        .position(Option::is_some)
                        .expect("received packets lie after the gap");
                    let after_seq = self.base + gap as u64;
                    let after_t = self.window[gap].expect("received");
                    for _ in 0..gap {
                        let sent_at = self.interpolate(self.base, after_seq, after_t);
                        resolved(Resolved {
                            seq: self.base,
                            sent_at,
                            lost: true,
                        });
                        self.window.pop_front();
                        self.base += 1;
                    }
                }
                _ => return,
            }
        }
    }

    /// `T_before + (T_after − T_before)·(S_loss − S_before)/(S_after − S_before)`, in integer
    /// nanoseconds; without a packet before the loss, the send time of the one after.
    fn interpolate(&self, seq: u64, after_seq: u64, after_t: SimTime) -> SimTime {
        let Some((before_seq, before_t)) = self.before else {
            return after_t;
        };
        let span = after_t.0.saturating_sub(before_t.0) as u128;
        let num = (seq - before_seq) as u128;
        let den = (after_seq - before_seq) as u128;
        SimTime(before_t.0 + (span * num / den) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(d: &mut LossDetector, seqs: &[u64]) -> Vec<Resolved> {
        let mut out = Vec::new();
        for &s in seqs {
            d.on_arrival(s, SimTime::from_millis(10 * s), |r| out.push(r));
        }
        out
    }

    #[test]
    fn in_order_packets_resolve_at_once() {
        let mut d = LossDetector::new();
        let out = feed(&mut d, &[0, 1, 2]);
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|r| !r.lost));
        assert_eq!(d.end(), 3);
    }

    #[test]
    fn a_gap_is_a_loss_after_three_later_packets_only() {
        let mut d = LossDetector::new();
        let out = feed(&mut d, &[0, 2, 3]);
        assert_eq!(out.len(), 1, "two later packets are not enough");
        let out = feed(&mut d, &[4]);
        assert_eq!(
            out[0],
            Resolved {
                seq: 1,
                sent_at: SimTime::from_millis(10),
                lost: true
            }
        );
        assert_eq!(out.len(), 4, "1 lost, then 2, 3, 4 received");
    }

    #[test]
    fn reordering_by_two_is_not_a_loss() {
        let mut d = LossDetector::new();
        let out = feed(&mut d, &[0, 2, 3, 1, 4]);
        assert!(out.iter().all(|r| !r.lost));
        assert_eq!(
            out.iter().map(|r| r.seq).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
        assert_eq!(
            d.on_arrival(1, SimTime::ZERO, |_| {}),
            Arrival::LateOrDuplicate
        );
    }

    #[test]
    fn lost_send_times_are_interpolated() {
        // Before: seq 1 at 100 ms; after: seq 5 at 140 ms (not on the 10 ms grid): the lost
        // 2, 3, 4 are at 110, 120, 130 ms.
        let mut d = LossDetector::new();
        let mut out = Vec::new();
        for (s, t) in [(0, 0), (1, 100), (5, 140), (6, 150), (7, 160)] {
            d.on_arrival(s, SimTime::from_millis(t), |r| out.push(r));
        }
        let lost: Vec<_> = out.iter().filter(|r| r.lost).map(|r| r.sent_at).collect();
        assert_eq!(lost, [110, 120, 130].map(SimTime::from_millis).to_vec());
        assert_eq!(
            d.on_arrival(3, SimTime::ZERO, |_| {}),
            Arrival::LateOrDuplicate
        );
    }

    #[test]
    fn a_loss_before_any_arrival_takes_the_next_send_time() {
        let mut d = LossDetector::new();
        let out = feed(&mut d, &[1, 2, 3]);
        assert_eq!(
            out[0],
            Resolved {
                seq: 0,
                sent_at: SimTime::from_millis(10),
                lost: true
            }
        );
    }
}
