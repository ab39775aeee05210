//! Loss events, loss intervals and the loss event rate of a TFRC receiver, RFC 5348 §5.2–§5.5,
//! and the packets lost per loss event j that MulTFRC adds (Damjanovic and Welzl, CCR 2009
//! §3: "it is possible to precisely count the number of lost packets in a loss event ... The
//! same method for sample discounting is used as for measuring the loss event probability").
//!
//! * §5.2: a lost packet starts a new loss event when its send time is more than one RTT R
//!   after the start of the current event; otherwise it joins it (and j of the event grows).
//! * §5.3: loss interval i ≥ 1 (closed) counts the packets from the first loss of one event
//!   to the first loss of the next; the open interval I_0 counts from the first loss of the
//!   most recent event to the newest packet, inclusive.
//! * §5.4: with weights w = [1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2] and k closed intervals,
//!   `I_mean = max(Σ_{i=0}^{k−1} w_i·I_i, Σ_{i=1}^{k} w_{i−1}·I_i) / Σ_{i=0}^{k−1} w_i`, and
//!   p = 1/I_mean (the open interval counts only when it lowers p).
//! * §5.5 (history discounting, optional): when I_0 > 2·Ī (Ī the weighted mean of the closed
//!   intervals as used), `DF = max(0.5, 2·Ī/I_0)` weighs the closed intervals in the first
//!   sum, and on each new loss event every closed interval's own factor DF_i is multiplied by
//!   the DF of that moment: `p = min(W_0/I_tot0, W_1/I_tot1)` with
//!   `I_tot0 = w_0·I_0 + Σ_{i=1}^{k−1} w_i·DF_i·DF·I_i`, `W_0 = w_0 + Σ w_i·DF_i·DF`,
//!   `I_tot1 = Σ_{i=1}^{k} w_{i−1}·DF_i·I_i`, `W_1 = Σ w_{i−1}·DF_i`.
//! * j is the average of the per-event lost-packet counts LP_i with the same weights, the
//!   same choice of sum and the same discount factors.
//!
//! The first loss interval (§6.3.1) is synthetic: the receiver computes it from the receive
//! rate ([`LossHistory::set_first_interval`]); its LP is that of the first loss event.

use std::collections::VecDeque;

use crate::time::SimTime;

/// RFC 5348 §5.4: n = 8 intervals, `w_i = 1` for i < n/2, `2(n − i)/(n + 2)` after.
pub const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// RFC 5348 §5.5: the discount factor never goes below 0.5.
pub const MIN_DISCOUNT: f64 = 0.5;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Closed {
    /// Packets in the interval (the synthetic first one need not be whole).
    length: f64,
    /// Packets lost in the loss event that opened it; `None` for the synthetic first
    /// interval, which takes the count of the event after it.
    lost: Option<u32>,
    /// DF_i, the product of the discount factors at each later loss event.
    discount: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Open {
    /// Index of the first packet lost in the most recent loss event.
    first: u64,
    /// Its send time: the start of the event.
    started: SimTime,
    /// Packets lost in the event so far.
    lost: u32,
}

/// What one resolved packet did to the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    None,
    /// A lost packet joined the current loss event.
    Joined,
    /// A lost packet started a new loss event; `first` when it is the first ever (the caller
    /// then sets the synthetic first interval).
    NewEvent {
        first: bool,
    },
}

/// The loss-interval history of one receiver.
#[derive(Clone, Debug)]
pub struct LossHistory {
    discounting: bool,
    /// Packets fed so far; the next one's index.
    count: u64,
    open: Option<Open>,
    /// Closed intervals, most recent first, at most 8.
    closed: VecDeque<Closed>,
    /// Packets declared lost, in total.
    lost_packets: u64,
    /// Loss events, in total.
    events: u64,
}

/// Which of the two sums of §5.4 gave the mean, with its weighted sums.
struct Mean {
    interval: f64,
    /// Use I_0..I_{k−1} (true) or I_1..I_k.
    with_open: bool,
    /// The discount of the closed intervals in the first sum.
    discount: f64,
}

impl LossHistory {
    pub fn new(discounting: bool) -> Self {
        LossHistory {
            discounting,
            count: 0,
            open: None,
            closed: VecDeque::with_capacity(WEIGHTS.len()),
            lost_packets: 0,
            events: 0,
        }
    }

    /// Feeds the next packet in sequence order, received or lost, with its send time and the
    /// RTT R that groups losses into events.
    pub fn on_packet(&mut self, sent_at: SimTime, lost: bool, rtt: SimTime) -> Change {
        let index = self.count;
        self.count += 1;
        if !lost {
            return Change::None;
        }
        self.lost_packets += 1;
        match self.open {
            None => {
                self.open = Some(Open {
                    first: index,
                    started: sent_at,
                    lost: 1,
                });
                self.events += 1;
                Change::NewEvent { first: true }
            }
            Some(ref mut open) if sent_at <= open.started.saturating_add(rtt) => {
                open.lost += 1;
                Change::Joined
            }
            Some(open) => {
                let df = self.discount_factor();
                for c in &mut self.closed {
                    c.discount *= df;
                }
                self.closed.push_front(Closed {
                    length: (index - open.first) as f64,
                    lost: Some(open.lost),
                    discount: 1.0,
                });
                self.closed.truncate(WEIGHTS.len());
                self.open = Some(Open {
                    first: index,
                    started: sent_at,
                    lost: 1,
                });
                self.events += 1;
                Change::NewEvent { first: false }
            }
        }
    }

    /// Sets the synthetic first loss interval of RFC 5348 §6.3.1 (`1/p` for the p at which
    /// the equation gives the receive rate), oldest in the history. Once, at the first loss
    /// event; the arrival that revealed it may also have revealed later loss events (a gap
    /// longer than an RTT), whose closed intervals are then already in the history, more
    /// recent than this one.
    pub fn set_first_interval(&mut self, packets: f64) {
        debug_assert!(
            self.closed.iter().all(|c| c.lost.is_some()),
            "a second synthetic interval"
        );
        self.closed.push_back(Closed {
            length: packets.max(1.0),
            lost: None,
            discount: 1.0,
        });
    }

    /// The open interval I_0 (0 before the first loss).
    pub fn open_interval(&self) -> f64 {
        self.open.map_or(0.0, |o| (self.count - o.first) as f64)
    }

    /// The closed intervals, most recent first.
    pub fn closed_intervals(&self) -> impl Iterator<Item = f64> + '_ {
        self.closed.iter().map(|c| c.length)
    }

    /// Packets declared lost, and loss events, since the start.
    pub fn lost_packets(&self) -> u64 {
        self.lost_packets
    }
    pub fn loss_events(&self) -> u64 {
        self.events
    }

    /// The weighted mean of the closed intervals as the second sum uses them (with DF_i).
    fn closed_mean(&self) -> f64 {
        let (mut sum, mut weights) = (0.0, 0.0);
        for (c, w) in self.closed.iter().zip(WEIGHTS) {
            sum += w * c.discount * c.length;
            weights += w * c.discount;
        }
        sum / weights
    }

    /// §5.5's DF for the current open interval (1 without discounting).
    fn discount_factor(&self) -> f64 {
        if !self.discounting || self.closed.is_empty() {
            return 1.0;
        }
        let mean = self.closed_mean();
        let i0 = self.open_interval();
        if i0 > 2.0 * mean {
            (2.0 * mean / i0).max(MIN_DISCOUNT)
        } else {
            1.0
        }
    }

    fn mean(&self) -> Option<Mean> {
        let open = self.open?;
        let i0 = (self.count - open.first) as f64;
        let k = self.closed.len();
        if k == 0 {
            return Some(Mean {
                interval: i0,
                with_open: true,
                discount: 1.0,
            });
        }
        let df = self.discount_factor();
        // First sum: I_0 and the k − 1 most recent closed intervals.
        let (mut tot0, mut w0) = (WEIGHTS[0] * i0, WEIGHTS[0]);
        for (c, w) in self.closed.iter().take(k - 1).zip(&WEIGHTS[1..]) {
            tot0 += w * c.discount * df * c.length;
            w0 += w * c.discount * df;
        }
        let mean1 = self.closed_mean();
        let mean0 = tot0 / w0;
        Some(if mean0 > mean1 {
            Mean {
                interval: mean0,
                with_open: true,
                discount: df,
            }
        } else {
            Mean {
                interval: mean1,
                with_open: false,
                discount: df,
            }
        })
    }

    /// The loss event rate p = 1/I_mean (0 before the first loss).
    pub fn loss_event_rate(&self) -> f64 {
        self.mean().map_or(0.0, |m| 1.0 / m.interval)
    }

    /// The mean number of packets lost per loss event j over the same intervals, weights and
    /// discounts as p (1 before the first loss).
    pub fn packets_per_loss_event(&self) -> f64 {
        let (Some(m), Some(open)) = (self.mean(), self.open) else {
            return 1.0;
        };
        // LP of each closed interval, most recent first; the synthetic one (the oldest)
        // takes the count of the event after it.
        let lost = |i: usize| -> f64 {
            let c = &self.closed[i];
            let later = if i == 0 {
                open.lost
            } else {
                self.closed[i - 1].lost.unwrap_or(open.lost)
            };
            c.lost.unwrap_or(later) as f64
        };
        let k = self.closed.len();
        let (mut sum, mut weights) = (0.0, 0.0);
        if m.with_open {
            sum += WEIGHTS[0] * open.lost as f64;
            weights += WEIGHTS[0];
            for i in 0..k.saturating_sub(1) {
                let w = WEIGHTS[i + 1] * self.closed[i].discount * m.discount;
                sum += w * lost(i);
                weights += w;
            }
        } else {
            for (i, w) in WEIGHTS.iter().enumerate().take(k) {
                let w = w * self.closed[i].discount;
                sum += w * lost(i);
                weights += w;
            }
        }
        sum / weights
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: SimTime = SimTime::from_millis(100);

    /// A history whose closed intervals are `closed` (most recent first, each opened by an
    /// event that lost `lost` packets back to back) and whose open interval is `open` packets
    /// long, opened by one loss. Packets are sent 10 ms apart, so the losses of one event lie
    /// within R = 100 ms and intervals of more than 10 packets start new events.
    fn history(closed: &[(u64, u32)], open: u64, discounting: bool) -> LossHistory {
        let mut h = LossHistory::new(discounting);
        let mut sent = 0u64;
        let mut feed = |h: &mut LossHistory, len: u64, lost: u32| {
            for i in 0..len {
                sent += 1;
                h.on_packet(SimTime::from_millis(10 * sent), i < lost as u64, R);
            }
        };
        for &(len, lost) in closed.iter().rev() {
            feed(&mut h, len, lost);
        }
        feed(&mut h, open, 1);
        h
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn the_weights_are_rfc_5348s() {
        let n = 8.0;
        for (i, w) in WEIGHTS.iter().enumerate() {
            let expect = if (i as f64) < n / 2.0 {
                1.0
            } else {
                2.0 * (n - i as f64) / (n + 2.0)
            };
            assert_eq!(*w, expect);
        }
    }

    #[test]
    fn worked_example_without_and_with_a_long_open_interval() {
        // reference §1.8: I = [40 (open), 100, 90, 110, 100, 80, 120, 100, 100]:
        // I_tot0 = 536, I_tot1 = 596, W = 6 -> p = 6/596 = 0.0100671.
        let closed: Vec<(u64, u32)> = [100, 90, 110, 100, 80, 120, 100, 100]
            .iter()
            .map(|&l| (l, 1))
            .collect();
        // The first event has no closed interval before it: build 9 events, the oldest only
        // opens the history (its own interval is the first closed one).
        let h = history(&closed, 40, false);
        assert_eq!(h.closed_intervals().collect::<Vec<_>>().len(), 8);
        assert!(close(h.loss_event_rate(), 0.0100671, 1e-5));
        // I_0 = 400: I_tot0 = 896 -> p = 6/896 = 0.00669643.
        let h = history(&closed, 400, false);
        assert!(close(h.loss_event_rate(), 0.00669643, 1e-5));
        // With discounting: DF = max(0.5, 2·(596/6)/400) = 0.5 -> p = 3.5/648 = 0.00540123.
        let h = history(&closed, 400, true);
        assert!(close(h.loss_event_rate(), 0.00540123, 1e-5));
        // The short open interval triggers no discount.
        let h = history(&closed, 40, true);
        assert!(close(h.loss_event_rate(), 0.0100671, 1e-5));
    }

    #[test]
    fn the_open_interval_only_ever_lowers_p() {
        let closed = [(50, 1), (70, 1), (60, 1)];
        let closed_only = 1.0 / ((50.0 + 70.0 + 60.0) / 3.0);
        for open in [1, 10, 59, 60, 61, 500] {
            let h = history(&closed, open, false);
            assert!(h.loss_event_rate() <= closed_only + 1e-15, "{open}");
        }
        // With 3 closed intervals, the first sum is I_0, I_1, I_2: open = 200 ->
        // (200 + 50 + 70)/3.
        let h = history(&closed, 200, false);
        assert!(close(h.loss_event_rate(), 3.0 / 320.0, 1e-12));
    }

    #[test]
    fn losses_within_one_rtt_of_the_event_start_are_one_event() {
        let mut h = LossHistory::new(false);
        let ms = SimTime::from_millis;
        assert_eq!(h.on_packet(ms(0), false, R), Change::None);
        assert_eq!(
            h.on_packet(ms(1), true, R),
            Change::NewEvent { first: true }
        );
        h.set_first_interval(100.0);
        assert_eq!(h.on_packet(ms(50), true, R), Change::Joined);
        assert_eq!(
            h.on_packet(ms(101), true, R),
            Change::Joined,
            "exactly R after"
        );
        assert_eq!(
            h.on_packet(ms(102), true, R),
            Change::NewEvent { first: false }
        );
        assert_eq!(h.loss_events(), 2);
        assert_eq!(h.lost_packets(), 4);
        // The closed interval runs from packet 1 to packet 4 (exclusive): 3 packets.
        assert_eq!(h.closed_intervals().collect::<Vec<_>>(), [3.0, 100.0]);
    }

    #[test]
    fn p_is_zero_and_j_one_before_any_loss() {
        let mut h = LossHistory::new(true);
        for i in 0..100 {
            h.on_packet(SimTime::from_millis(i), false, R);
        }
        assert_eq!(h.loss_event_rate(), 0.0);
        assert_eq!(h.packets_per_loss_event(), 1.0);
    }

    #[test]
    fn j_is_the_weighted_mean_of_the_packets_lost_per_event() {
        // Closed intervals of 100 packets opened by events of 1, 2, 3 packets (most recent
        // first: 1, 2, 3), open interval 10 packets opened by one loss: the closed sum wins
        // (mean 100 > (10 + 100 + 100)/3), so j = (1 + 2 + 3)/3 = 2.
        let h = history(&[(100, 1), (100, 2), (100, 3)], 10, false);
        assert!(close(h.packets_per_loss_event(), 2.0, 1e-12));
        // Open interval of 1000 packets: the first sum wins, j = (1 + 1 + 2)/3 = 4/3.
        let h = history(&[(100, 1), (100, 2), (100, 3)], 1000, false);
        assert!(close(h.packets_per_loss_event(), 4.0 / 3.0, 1e-12));
        // With discounting, DF = 0.5 weighs the closed intervals of the first sum:
        // j = (1 + 0.5·(1 + 2))/(1 + 0.5·2) = 1.25.
        let h = history(&[(100, 1), (100, 2), (100, 3)], 1000, true);
        assert!(close(h.packets_per_loss_event(), 1.25, 1e-12));
    }

    #[test]
    fn discount_factors_persist_across_events() {
        // Two closed intervals of 100, then a long open interval of 1000 (DF = 0.5 at the
        // next event), then a new event: the older intervals keep DF_i = 0.5.
        let mut h = history(&[(100, 1), (100, 1)], 1000, true);
        let t = SimTime::from_secs(10_000);
        assert_eq!(h.on_packet(t, true, R), Change::NewEvent { first: false });
        for i in 0..50 {
            h.on_packet(t + SimTime::from_millis(1 + i), false, R);
        }
        // Closed: [1000 (DF 1), 100 (0.5), 100 (0.5)]; open 51.
        // Second sum: (1000 + 0.5·100 + 0.5·100)/(1 + 0.5 + 0.5) = 550.
        // First sum: I_0 = 51 < 2·550, DF = 1: (51 + 1000 + 0.5·100)/(1 + 1 + 0.5) = 440.4.
        assert!(close(h.loss_event_rate(), 1.0 / 550.0, 1e-12));
    }

    #[test]
    fn the_synthetic_first_interval_takes_the_first_events_count() {
        let mut h = LossHistory::new(false);
        let ms = SimTime::from_millis;
        h.on_packet(ms(0), true, R);
        h.set_first_interval(300.0);
        h.on_packet(ms(1), true, R);
        h.on_packet(ms(2), true, R);
        for i in 3..10 {
            h.on_packet(ms(i), false, R);
        }
        // Open interval 10 < 300: the closed sum wins, with LP = 3 copied from event 1.
        assert!(close(h.loss_event_rate(), 1.0 / 300.0, 1e-12));
        assert!(close(h.packets_per_loss_event(), 3.0, 1e-12));
    }
}
