//! The TFRC sender's rate control, RFC 5348 §4: the allowed rate X from feedback, slow
//! start, the X_recv set, the nofeedback timer, oscillation reduction and the inter-packet
//! spacing.
//!
//! * §4.2: before any feedback the sender sends one packet per second; the first feedback
//!   sets `X = initial_rate = W_init/R`, `W_init = min(4·s, max(2·s, 4380))` (RFC 3390).
//! * §4.3, on feedback: `R_sample = (now − t_recvdata) − t_delay`; `R = 0.9·R + 0.1·R_sample`;
//!   `t_RTO = max(4·R, 2·s/X)`; then, with `recv_limit` from the X_recv set
//!   (2·max over the last two RTTs normally; after a data-limited interval with a new loss,
//!   all entries halved and X_recv·0.85),
//!   `X = max(min(X_Bps, recv_limit), s/t_mbi)` if p > 0, else in slow start
//!   `X = max(min(2·X, recv_limit), initial_rate)` at most once per R.
//! * §4.4, nofeedback timer expiry: halve X (no feedback yet, or p = 0), keep the rate of an
//!   idle sender below the recover rate, otherwise limit the X_recv set to
//!   `max(X_recv, s/t_mbi)/2` (receive-rate limited) or `X_Bps/4` (equation limited) and
//!   recompute X; re-arm for `max(4·R, 2·s/X)`.
//! * §4.5 (optional): `X_inst = X·R_sqmean/sqrt(R_sample)` with
//!   `R_sqmean = 0.9·R_sqmean + 0.1·sqrt(R_sample)`.
//! * §4.6, §8.3: nominal send times `t_nom += s/X_inst`; a packet may leave early by
//!   `δ = min(t_ipi/2, t_gran/2)`, t_gran the sender's timer granularity; a sender that fell
//!   behind (idle) restarts from now instead of sending a burst of credit.

use super::equation::RateEquation;
use super::receiver::Report;
use crate::time::SimTime;

/// RFC 5348 §4.3: t_mbi, the maximum back-off interval, 64 s.
pub const T_MBI_S: f64 = 64.0;
/// §4.3: the RTT filter constant q (and q2 of §4.5).
pub const RTT_FILTER: f64 = 0.9;
/// §4.2: the nofeedback timer before the first feedback.
pub const INITIAL_NOFEEDBACK: SimTime = SimTime::from_secs(2);

/// Sender settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderConfig {
    /// Segment size s (payload bytes).
    pub segment_bytes: u32,
    /// §4.5 oscillation reduction.
    pub oscillation_reduction: bool,
    /// t_gran of §4.6 (zero: packets leave exactly at their nominal times).
    pub timer_granularity: SimTime,
}

/// The sender's protocol phase (§4.2–§4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// No feedback received yet (or none since the nofeedback timer expired before any).
    NoFeedback,
    /// Feedback received.
    Feedback,
}

/// The rate controller of a TFRC-family sender.
#[derive(Clone, Debug)]
pub struct TfrcSender {
    config: SenderConfig,
    equation: RateEquation,
    phase: Phase,
    any_feedback: bool,
    /// Allowed rate X, payload bytes/s.
    rate: f64,
    /// Pacing rate X_inst.
    pacing_rate: f64,
    rtt: Option<f64>,
    sqrt_rtt_mean: f64,
    loss_event_rate: f64,
    packets_per_loss_event: f64,
    receive_rate: f64,
    /// The last equation value X_Bps (0 before p > 0).
    equation_rate: f64,
    /// (X_recv, time) pairs; `None` rates stand for the initial +∞.
    receive_set: Vec<(Option<f64>, SimTime)>,
    /// Time of the last doubling in slow start (tld).
    last_doubling: Option<SimTime>,
    nofeedback_at: Option<SimTime>,
    sent_since_timer: bool,
    /// Nominal send time of the last packet sent.
    last_nominal: Option<SimTime>,
    feedbacks: u64,
    nofeedback_expiries: u64,
}

impl TfrcSender {
    pub fn new(config: SenderConfig, equation: RateEquation) -> Self {
        let s = config.segment_bytes as f64;
        TfrcSender {
            config,
            equation,
            phase: Phase::NoFeedback,
            any_feedback: false,
            // §4.2: one packet per second until the first feedback.
            rate: s,
            pacing_rate: s,
            rtt: None,
            sqrt_rtt_mean: 0.0,
            loss_event_rate: 0.0,
            packets_per_loss_event: 1.0,
            receive_rate: 0.0,
            equation_rate: 0.0,
            receive_set: Vec::new(),
            last_doubling: None,
            nofeedback_at: None,
            sent_since_timer: false,
            last_nominal: None,
            feedbacks: 0,
            nofeedback_expiries: 0,
        }
    }

    fn s(&self) -> f64 {
        self.config.segment_bytes as f64
    }
    /// The rate floor s/t_mbi.
    fn floor(&self) -> f64 {
        self.s() / T_MBI_S
    }
    /// `W_init/R` (RFC 3390 initial window over the RTT), the initial and recover rate.
    fn initial_rate(&self) -> f64 {
        let s = self.s();
        let window = (4.0 * s).min((2.0 * s).max(4380.0));
        self.rtt.map_or(s, |r| window / r)
    }

    /// Allowed rate X (payload bytes/s).
    pub fn rate(&self) -> f64 {
        self.rate
    }
    pub fn pacing_rate(&self) -> f64 {
        self.pacing_rate
    }
    /// Smoothed RTT R in seconds, once measured.
    pub fn rtt(&self) -> Option<f64> {
        self.rtt
    }
    pub fn loss_event_rate(&self) -> f64 {
        self.loss_event_rate
    }
    pub fn packets_per_loss_event(&self) -> f64 {
        self.packets_per_loss_event
    }
    pub fn equation(&self) -> &RateEquation {
        &self.equation
    }
    pub fn phase(&self) -> Phase {
        self.phase
    }
    pub fn nofeedback_at(&self) -> Option<SimTime> {
        self.nofeedback_at
    }
    pub fn feedbacks(&self) -> u64 {
        self.feedbacks
    }
    pub fn nofeedback_expiries(&self) -> u64 {
        self.nofeedback_expiries
    }

    /// A new n (MulTFRC, CP), effective at once: X is recomputed from the last feedback.
    pub fn set_flows(&mut self, flows: f64) {
        self.equation.set_flows(flows);
        if self.loss_event_rate > 0.0 {
            if let Some(r) = self.rtt {
                self.equation_rate = self.equation.rate(
                    self.s(),
                    r,
                    self.loss_event_rate,
                    self.packets_per_loss_event,
                );
                let limit = self.receive_limit(2.0);
                self.rate = self.equation_rate.min(limit).max(self.floor());
                self.pacing_rate = self.rate;
            }
        }
    }

    /// The earliest time the next packet may leave: the nominal time of the last one plus
    /// s/X_inst (at the current rate), less the burst tolerance δ.
    pub fn next_send(&self, now: SimTime) -> SimTime {
        match self.last_nominal {
            None => now,
            Some(t) => {
                let ipi = self.interval();
                let delta = SimTime(ipi.0.min(self.config.timer_granularity.0) / 2);
                t.saturating_add(ipi).saturating_sub(delta)
            }
        }
    }

    /// The inter-packet interval s/X_inst.
    fn interval(&self) -> SimTime {
        SimTime::from_secs_f64(self.s() / self.pacing_rate)
    }

    /// A data packet left at `now`; the first one starts the nofeedback timer (§4.2).
    pub fn on_sent(&mut self, now: SimTime) {
        let ipi = self.interval();
        // The packet's nominal time follows the last one's; a sender behind its schedule by
        // more than one interval (idle, data-limited, or at a rate that just rose) restarts
        // from now: no burst of saved-up credit.
        self.last_nominal = Some(match self.last_nominal {
            Some(t) if t.saturating_add(ipi) >= now.saturating_sub(ipi) => t.saturating_add(ipi),
            _ => now,
        });
        self.sent_since_timer = true;
        if self.nofeedback_at.is_none() && !self.any_feedback {
            self.nofeedback_at = Some(now + INITIAL_NOFEEDBACK);
            self.sent_since_timer = false;
        }
    }

    /// `recv_limit` from the X_recv set: `factor`·max (∞ while the initial entry is there).
    fn receive_limit(&self, factor: f64) -> f64 {
        let mut max = 0.0f64;
        for &(x, _) in &self.receive_set {
            match x {
                None => return f64::INFINITY,
                Some(x) => max = max.max(x),
            }
        }
        factor * max
    }

    /// §4.3's Update_X_recv_set: add X_recv, drop entries older than two RTTs.
    fn update_receive_set(&mut self, now: SimTime, x_recv: f64) {
        self.receive_set.push((Some(x_recv), now));
        let horizon = now.saturating_sub(SimTime::from_secs_f64(2.0 * self.rtt.unwrap_or(0.0)));
        self.receive_set.retain(|&(_, t)| t >= horizon);
    }

    /// §4.3's Maximize_X_recv_set: keep only the largest value (the initial ∞ dropped),
    /// stamped now.
    fn maximize_receive_set(&mut self, now: SimTime, x_recv: f64) {
        let max = self
            .receive_set
            .iter()
            .filter_map(|&(x, _)| x)
            .fold(x_recv, f64::max);
        self.receive_set.clear();
        self.receive_set.push((Some(max), now));
    }

    /// A feedback report arrived at `now`. `data_limited` says the sender had nothing to send
    /// throughout the interval the report covers (§4.3, §8.2.1). Returns the RTT sample.
    pub fn on_feedback(&mut self, now: SimTime, report: &Report, data_limited: bool) -> SimTime {
        self.feedbacks += 1;
        let sample = now
            .saturating_sub(report.echo_sent_at)
            .saturating_sub(report.delay)
            .max(SimTime(1));
        let sample_s = sample.as_secs_f64();
        // Steps 1–2: the RTT estimate.
        let rtt = match self.rtt {
            None => sample_s,
            Some(r) => RTT_FILTER * r + (1.0 - RTT_FILTER) * sample_s,
        };
        self.rtt = Some(rtt);
        // §4.5: the mean of sqrt(R_sample).
        self.sqrt_rtt_mean = if self.feedbacks == 1 {
            sample_s.sqrt()
        } else {
            RTT_FILTER * self.sqrt_rtt_mean + (1.0 - RTT_FILTER) * sample_s.sqrt()
        };
        let p_before = self.loss_event_rate;
        self.loss_event_rate = report.loss_event_rate;
        self.packets_per_loss_event = report.packets_per_loss_event.max(1.0);
        self.receive_rate = report.receive_rate;
        let p = self.loss_event_rate;
        if !self.any_feedback {
            // §4.2–§4.3: the first feedback sets the initial rate; the X_recv set starts
            // with the single value +∞.
            self.any_feedback = true;
            self.phase = Phase::Feedback;
            self.receive_set = vec![(None, now)];
            self.rate = self.initial_rate();
            self.last_doubling = Some(now);
            if p > 0.0 {
                self.equation_rate =
                    self.equation
                        .rate(self.s(), rtt, p, self.packets_per_loss_event);
                self.rate = self.equation_rate.min(self.rate).max(self.floor());
            }
        } else {
            self.phase = Phase::Feedback;
            // Step 4: recv_limit.
            let recv_limit = if data_limited {
                if p > p_before {
                    for (x, _) in &mut self.receive_set {
                        if let Some(x) = x {
                            *x /= 2.0;
                        }
                    }
                    self.maximize_receive_set(now, 0.85 * report.receive_rate);
                    self.receive_limit(1.0)
                } else {
                    self.maximize_receive_set(now, report.receive_rate);
                    self.receive_limit(2.0)
                }
            } else {
                self.update_receive_set(now, report.receive_rate);
                self.receive_limit(2.0)
            };
            if p > 0.0 {
                self.equation_rate =
                    self.equation
                        .rate(self.s(), rtt, p, self.packets_per_loss_event);
                self.rate = self.equation_rate.min(recv_limit).max(self.floor());
            } else if self
                .last_doubling
                .is_none_or(|t| now.saturating_sub(t).as_secs_f64() >= rtt)
            {
                self.rate = (2.0 * self.rate).min(recv_limit).max(self.initial_rate());
                self.last_doubling = Some(now);
            }
        }
        // Step 5: oscillation reduction.
        self.pacing_rate = if self.config.oscillation_reduction {
            (self.rate * self.sqrt_rtt_mean / sample_s.sqrt()).max(self.floor())
        } else {
            self.rate
        };
        // Step 6: the nofeedback timer.
        self.arm_nofeedback(now);
        sample
    }

    fn arm_nofeedback(&mut self, now: SimTime) {
        let rtt = self.rtt.unwrap_or(0.0);
        let t = (4.0 * rtt).max(2.0 * self.s() / self.rate);
        self.nofeedback_at = Some(now + SimTime::from_secs_f64(t));
        self.sent_since_timer = false;
    }

    /// Whether the nofeedback timer is due at `now`.
    pub fn is_nofeedback_due(&self, now: SimTime) -> bool {
        self.nofeedback_at.is_some_and(|t| t <= now)
    }

    /// The nofeedback timer expired (§4.4).
    pub fn on_nofeedback_timer(&mut self, now: SimTime) {
        self.nofeedback_expiries += 1;
        let idle = !self.sent_since_timer;
        let p = self.loss_event_rate;
        let recover = self.initial_rate();
        if !self.any_feedback {
            if !idle {
                self.rate = (self.rate / 2.0).max(self.floor());
            }
        } else if idle
            && ((p > 0.0 && self.receive_rate < recover) || (p == 0.0 && self.rate < 2.0 * recover))
        {
            // An idle sender keeps its restart rate.
        } else if p == 0.0 {
            self.rate = (self.rate / 2.0).max(self.floor());
        } else {
            let limit = if self.equation_rate > 2.0 * self.receive_rate {
                self.receive_rate
            } else {
                self.equation_rate / 2.0
            };
            // Update_Limits: X_recv_set = { max(limit, s/t_mbi)/2 }, then step 4.
            let limit = limit.max(self.floor());
            self.receive_set = vec![(Some(limit / 2.0), now)];
            let recv_limit = self.receive_limit(2.0);
            self.rate = self.equation_rate.min(recv_limit).max(self.floor());
        }
        self.pacing_rate = self.rate;
        self.phase = Phase::NoFeedback;
        self.arm_nofeedback(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> SimTime = SimTime::from_millis;

    fn sender() -> TfrcSender {
        TfrcSender::new(
            SenderConfig {
                segment_bytes: 1460,
                oscillation_reduction: false,
                timer_granularity: SimTime::ZERO,
            },
            RateEquation::Tfrc,
        )
    }

    fn report(echo: SimTime, p: f64, x_recv: f64) -> Report {
        Report {
            echo_sent_at: echo,
            delay: SimTime::ZERO,
            receive_rate: x_recv,
            loss_event_rate: p,
            packets_per_loss_event: 1.0,
        }
    }

    #[test]
    fn one_packet_a_second_then_the_initial_rate() {
        let mut s = sender();
        assert_eq!(s.rate(), 1460.0);
        s.on_sent(MS(0));
        assert_eq!(s.next_send(MS(0)), SimTime::from_secs(1));
        assert_eq!(s.nofeedback_at(), Some(SimTime::from_secs(2)));
        let sample = s.on_feedback(MS(100), &report(MS(0), 0.0, 0.0), false);
        assert_eq!(sample, MS(100));
        // W_init = min(4·1460, max(2·1460, 4380)) = 4380; R = 0.1 s -> 43800 B/s.
        assert!((s.rate() - 43_800.0).abs() < 1e-6);
        // t_RTO = max(4R, 2s/X) = max(0.4, 0.0667) s.
        assert_eq!(s.nofeedback_at(), Some(MS(500)));
    }

    #[test]
    fn slow_start_doubles_at_most_once_per_rtt_within_the_receive_limit() {
        let mut s = sender();
        s.on_sent(MS(0));
        s.on_feedback(MS(100), &report(MS(0), 0.0, 0.0), false);
        let x0 = s.rate();
        // 50 ms later: no doubling yet (R = 100 ms).
        s.on_feedback(MS(150), &report(MS(50), 0.0, 1e9), false);
        assert_eq!(s.rate(), x0);
        s.on_feedback(MS(250), &report(MS(150), 0.0, 1e9), false);
        assert_eq!(s.rate(), 2.0 * x0);
        // A receive rate of 30 kB/s caps the doubling at 2·max(X_recv set)... the set still
        // holds the larger values of the last two RTTs, so the cap is 2e9; after they age
        // out (two RTTs) the cap binds.
        s.on_feedback(MS(600), &report(MS(500), 0.0, 30_000.0), false);
        assert_eq!(s.rate(), 60_000.0_f64.max(43_800.0));
    }

    #[test]
    fn with_loss_the_rate_is_the_equation_bounded_by_twice_the_receive_rate() {
        let mut s = sender();
        s.on_sent(MS(0));
        s.on_feedback(MS(100), &report(MS(0), 0.0, 0.0), false);
        s.on_feedback(MS(200), &report(MS(100), 0.01, 1e9), false);
        let r = s.rtt().unwrap();
        assert!((r - 0.1).abs() < 1e-12);
        let x = RateEquation::Tfrc.rate(1460.0, r, 0.01, 1.0);
        assert!((s.rate() - x).abs() < 1e-6);
        // A low receive rate: X = 2·max over the two-RTT set (1e9 still in it).
        s.on_feedback(MS(300), &report(MS(200), 0.01, 10_000.0), false);
        assert!((s.rate() - x).abs() < 1e-6);
        s.on_feedback(MS(700), &report(MS(600), 0.01, 10_000.0), false);
        assert!((s.rate() - 20_000.0).abs() < 1e-6);
    }

    #[test]
    fn the_rate_never_falls_below_s_over_t_mbi() {
        let mut s = sender();
        s.on_sent(MS(0));
        s.on_feedback(MS(100), &report(MS(0), 0.0, 0.0), false);
        // A data-limited interval with a new loss and nothing received: recv_limit = 0.
        s.on_feedback(MS(200), &report(MS(100), 0.01, 0.0), true);
        assert!((s.rate() - 1460.0 / 64.0).abs() < 1e-9, "{}", s.rate());
    }

    #[test]
    fn the_rtt_filter_moves_a_tenth_of_the_way_per_feedback() {
        let mut s = sender();
        s.on_sent(MS(0));
        s.on_feedback(MS(100), &report(MS(0), 0.0, 0.0), false);
        // Samples of 200 ms: R = 0.1 + 0.1·(0.2 − 0.1)·(1 + 0.9 + ...) -> 0.2 geometrically.
        let mut expect = 0.1;
        for k in 1..=20u64 {
            let now = MS(100 + 200 * k);
            s.on_feedback(now, &report(now - MS(200), 0.0, 0.0), false);
            expect = 0.9 * expect + 0.1 * 0.2;
            assert!((s.rtt().unwrap() - expect).abs() < 1e-12);
        }
    }

    #[test]
    fn nofeedback_halves_until_the_floor() {
        let mut s = sender();
        s.on_sent(MS(0));
        s.on_feedback(MS(100), &report(MS(0), 0.0, 0.0), false);
        let mut x = s.rate();
        let mut t = MS(100);
        for _ in 0..20 {
            s.on_sent(t);
            let due = s.nofeedback_at().unwrap();
            // Expiries spaced max(4R, 2s/X).
            let spacing = (4.0 * 0.1f64).max(2.0 * 1460.0 / x);
            assert_eq!(due, t + SimTime::from_secs_f64(spacing));
            t = due;
            s.on_sent(t - SimTime(1));
            s.on_nofeedback_timer(t);
            x = (x / 2.0).max(1460.0 / 64.0);
            assert!((s.rate() - x).abs() < 1e-9);
        }
        assert_eq!(s.rate(), 1460.0 / 64.0);
    }

    #[test]
    fn an_idle_sender_below_the_recover_rate_keeps_it() {
        let mut s = sender();
        s.on_sent(MS(0));
        s.on_feedback(MS(100), &report(MS(0), 0.0, 0.0), false);
        let x = s.rate();
        // Nothing sent since the timer was armed: no halving (p = 0, X < 2·recover).
        s.on_nofeedback_timer(MS(500));
        assert_eq!(s.rate(), x);
    }

    #[test]
    fn a_data_limited_sender_with_a_new_loss_keeps_max_of_the_halved_set() {
        let mut s = sender();
        s.on_sent(MS(0));
        s.on_feedback(MS(100), &report(MS(0), 0.0, 0.0), false);
        s.on_feedback(MS(200), &report(MS(100), 0.0, 100_000.0), false);
        // Data-limited, p rose: the set {∞, 100000} halved, 0.85·20000 added, maximised:
        // max(50000, 17000) = 50000 with no factor 2; the equation allows more.
        s.on_feedback(MS(300), &report(MS(200), 1e-4, 20_000.0), true);
        assert!((s.rate() - 50_000.0).abs() < 1e-6, "{}", s.rate());
        // Data-limited without a new loss: 2·max.
        s.on_feedback(MS(400), &report(MS(300), 1e-4, 20_000.0), true);
        assert!((s.rate() - 100_000.0).abs() < 1e-6, "{}", s.rate());
    }

    #[test]
    fn pacing_spaces_packets_by_s_over_x_with_the_burst_tolerance() {
        let mut s = TfrcSender::new(
            SenderConfig {
                segment_bytes: 1000,
                oscillation_reduction: false,
                timer_granularity: MS(1),
            },
            RateEquation::Tfrc,
        );
        s.on_sent(MS(0));
        s.on_feedback(MS(100), &report(MS(0), 0.0, 0.0), false);
        // W_init = min(4·1000, max(2·1000, 4380)) = 4000: X = 40000 B/s, t_ipi = 25 ms;
        // δ = min(t_ipi, 1 ms)/2.
        s.on_sent(MS(100));
        let ipi = MS(25);
        assert_eq!(
            s.next_send(MS(100)),
            MS(100) + ipi - SimTime::from_micros(500)
        );
        // Sending late by less than an interval keeps the schedule; later restarts it.
        s.on_sent(MS(100) + ipi + MS(5));
        assert_eq!(
            s.next_send(MS(0)),
            MS(100) + ipi + ipi - SimTime::from_micros(500)
        );
        s.on_sent(SimTime::from_secs(5));
        assert_eq!(
            s.next_send(MS(0)),
            SimTime::from_secs(5) + ipi - SimTime::from_micros(500)
        );
    }

    #[test]
    fn oscillation_reduction_paces_slower_when_the_rtt_rises() {
        let mut s = TfrcSender::new(
            SenderConfig {
                segment_bytes: 1460,
                oscillation_reduction: true,
                timer_granularity: SimTime::ZERO,
            },
            RateEquation::Tfrc,
        );
        s.on_sent(MS(0));
        s.on_feedback(MS(100), &report(MS(0), 0.0, 0.0), false);
        s.on_feedback(MS(300), &report(MS(100), 0.01, 1e9), false);
        // R_sqmean = 0.9·sqrt(0.1) + 0.1·sqrt(0.2); X_inst = X·R_sqmean/sqrt(0.2).
        let sq = 0.9 * 0.1f64.sqrt() + 0.1 * 0.2f64.sqrt();
        assert!((s.pacing_rate() - s.rate() * sq / 0.2f64.sqrt()).abs() < 1e-6);
        assert!(s.pacing_rate() < s.rate());
    }

    #[test]
    fn a_new_n_rescales_the_rate_at_once() {
        let mut s = TfrcSender::new(
            SenderConfig {
                segment_bytes: 1460,
                oscillation_reduction: false,
                timer_granularity: SimTime::ZERO,
            },
            RateEquation::Cp {
                flows: 2.0,
                whole_flow: false,
            },
        );
        s.on_sent(MS(0));
        s.on_feedback(MS(100), &report(MS(0), 0.0, 0.0), false);
        s.on_feedback(MS(200), &report(MS(100), 0.01, 1e9), false);
        let x2 = s.rate();
        s.set_flows(4.0);
        assert!((s.rate() - 2.0 * x2).abs() < 1e-6);
    }
}
