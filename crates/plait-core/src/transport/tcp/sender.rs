//! The TCP data sender: window-limited transmission, ACK processing, RTT measurement, the
//! retransmission timer, and loss recovery.
//!
//! [`TcpSender`] is sans-IO and generic over its congestion controller. The driver calls
//! [`TcpSender::handle_ack`] / [`TcpSender::handle_timeout`], then drains
//! [`TcpSender::poll_transmit`] (one segment per call) and re-arms its one timer from
//! [`TcpSender::poll_timeout`]. Timers that fire late or stale are harmless: a
//! `handle_timeout` before the current deadline does nothing.
//!
//! **Sending.** A segment goes out when `pipe + len <= cwnd` (RFC 6675 §5 (C): "If
//! `cwnd - pipe >= 1 SMSS`"; outside recovery `pipe` is RFC 5681's FlightSize when there is no
//! SACK state, which makes this RFC 5681 §3.1's rule that nothing above the highest
//! acknowledged byte plus `min(cwnd, rwnd)` is sent). When nothing is in flight one segment may always go, so a window below one segment cannot
//! stall the connection. New data must also fit the peer's window: it may not extend past
//! `snd_una + rwnd` (RFC 9293 §3.8.6.2.1 send window). A new segment is as large as the MSS
//! and the remaining application data allow; a shorter one is sent only when nothing is
//! outstanding (sender-side silly-window avoidance). `rwnd` starts at the configured receive
//! buffer (both ends share the configuration; there is no handshake). What to send is
//! [`LossRecovery::next_segment`]'s choice.
//!
//! **ACKs.** An ACK below `snd_una` (reordered) or above `snd_nxt` (acknowledging unsent
//! data) is ignored. Otherwise the scoreboard is updated (RFC 6675 `Update()`), the RTT is
//! sampled and the recovery state advanced; the controller then hears, in this order,
//! `on_recovery_exit` (if the ACK ended fast recovery), `on_congestion_event` (if it started
//! one; with RFC 5681's FlightSize, `snd_nxt - snd_una`, as its `bytes_in_flight`), and
//! `on_ack` (if the ACK acknowledged or newly SACKed anything). The ACK that ends recovery is
//! reported with `in_recovery = true`, so the bytes it acknowledges, repaired during recovery,
//! do not grow the window.
//!
//! **RTT** (RFC 6298 §3, Karn): a sample `now - echo_sent_at` is taken only from an ACK that
//! acknowledges new data and whose triggering segment was not a retransmission.
//!
//! **`is_cwnd_limited`** (RFC 7661 §4): true when the bytes in flight at the moment the ACK
//! arrived left no room for another full segment, `pipe + SMSS >= cwnd` (with NewReno's
//! inflation counted in the window). An application-limited or receive-window-limited sender
//! leaves such room, so it reports false.
//!
//! **Retransmission timer** (RFC 6298 §5): armed when a segment is sent and the timer is not
//! running (5.1), stopped when all data is acknowledged (5.2), restarted by every ACK that
//! acknowledges new data (5.3; during NewReno recovery this is the "Slow-but-Steady" variant of
//! RFC 6582 §4). On expiry (5.4–5.6): the controller's `on_retransmission_timeout` (RFC 5681
//! §3.1, FlightSize capped at cwnd passed: see [`TcpSender::flight_size_for_timeout`]), recovery switches to go-back-N from `snd_una`
//! ([`RecoveryPhase::Timeout`]), the RTO is doubled, and the timer restarted with it. A
//! timeout during fast recovery ends it without `on_recovery_exit`: the controller hears
//! `on_retransmission_timeout` instead.
//!
//! Per-ACK and per-segment work does not allocate once the scoreboard has grown to its
//! working size; without loss the scoreboard is empty and every step is O(1).

use crate::packet::{AckSegment, DataSegment};
use crate::time::SimTime;
use crate::transport::cc::{AckSample, CongestionControl};
use crate::transport::rtt::RttEstimator;

use super::recovery::{LossRecovery, RecoveryPhase, SegmentKind};
use super::sack::Scoreboard;
use super::{SenderStats, TcpConfig};

/// What one ACK told the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// The RTT sample taken from this ACK, if Karn's rule allowed one.
    pub rtt: Option<SimTime>,
    /// Bytes newly acknowledged by the cumulative ACK.
    pub newly_acked: u64,
}

/// A TCP sender over a byte sequence space starting at 0.
#[derive(Clone, Debug)]
pub struct TcpSender<C: CongestionControl> {
    config: TcpConfig,
    cc: C,
    rtt: RttEstimator,
    scoreboard: Scoreboard,
    recovery: LossRecovery,
    /// First unacknowledged byte.
    snd_una: u64,
    /// One past the highest byte ever sent (RFC 6675 `HighData + 1`; never moved back).
    snd_nxt: u64,
    /// Bytes the application has handed over so far; `None` for an unbounded bulk source.
    app_bytes: Option<u64>,
    /// Peer's advertised window from the latest ACK.
    rwnd: u64,
    /// RFC 6675 `pipe` (FlightSize without SACK), kept current after every event.
    pipe: u64,
    rto_deadline: Option<SimTime>,
    stats: SenderStats,
}

impl<C: CongestionControl> TcpSender<C> {
    /// A sender with `app_bytes` of application data to send (`None`: unbounded).
    pub fn new(config: TcpConfig, cc: C, app_bytes: Option<u64>) -> Self {
        assert!(config.mss > 0, "TcpConfig::mss must be positive");
        assert!(
            config.receive_buffer > 0,
            "TcpConfig::receive_buffer must be positive"
        );
        TcpSender {
            rtt: RttEstimator::from_config(&config),
            scoreboard: Scoreboard::new(),
            recovery: LossRecovery::new(&config),
            snd_una: 0,
            snd_nxt: 0,
            app_bytes,
            rwnd: config.receive_buffer,
            pipe: 0,
            rto_deadline: None,
            stats: SenderStats::default(),
            config,
            cc,
        }
    }

    /// The application wrote `bytes` more (ignored by an unbounded sender).
    pub fn push_app_bytes(&mut self, bytes: u64) {
        if let Some(total) = self.app_bytes.as_mut() {
            *total = total.saturating_add(bytes);
        }
    }

    /// Processes an acknowledgement.
    pub fn handle_ack(&mut self, now: SimTime, ack: &AckSegment) -> AckOutcome {
        if ack.ack < self.snd_una || ack.ack > self.snd_nxt {
            return AckOutcome::default();
        }
        let mss = self.config.mss as u64;
        let is_cwnd_limited = self.pipe + mss >= self.send_window();

        let newly_acked = ack.ack - self.snd_una;
        self.snd_una = ack.ack;
        self.rwnd = ack.rwnd;
        let newly_sacked = if self.config.sack {
            self.scoreboard
                .update(ack.ack, self.snd_nxt, ack.sack.as_slice())
        } else {
            self.scoreboard.advance(ack.ack);
            0
        };
        self.stats.bytes_acked += newly_acked;

        // Karn (RFC 6298 §3): no sample from an ACK triggered by a retransmitted segment.
        let rtt = if newly_acked > 0 && !ack.echo_is_retransmission {
            Some(now.saturating_sub(ack.echo_sent_at))
        } else {
            None
        };
        if let Some(sample) = rtt {
            self.rtt.on_sample(sample);
        }

        let transition = self.recovery.on_ack(
            &self.scoreboard,
            self.snd_una,
            self.snd_nxt,
            newly_acked,
            newly_sacked,
        );
        if transition.exited {
            self.cc.on_recovery_exit(now);
        }
        if transition.entered {
            self.stats.fast_retransmits += 1;
            self.cc.on_congestion_event(now, self.flight_size());
        }
        self.pipe = self
            .recovery
            .pipe(&self.scoreboard, self.snd_una, self.snd_nxt);

        if newly_acked > 0 {
            // RFC 6298 (5.2) "When all outstanding data has been acknowledged, turn off the
            // retransmission timer"; (5.3) "When an ACK is received that acknowledges new
            // data, restart the retransmission timer".
            self.rto_deadline = if self.snd_una == self.snd_nxt {
                None
            } else {
                Some(now + self.rtt.rto())
            };
        }

        if newly_acked > 0 || newly_sacked > 0 {
            let sample = AckSample {
                now,
                acked_bytes: newly_acked,
                newly_sacked_bytes: newly_sacked,
                rtt,
                srtt: self.rtt.srtt(),
                min_rtt: self.rtt.min_rtt(),
                bytes_in_flight: self.pipe,
                is_cwnd_limited,
                in_recovery: transition.was_in_fast_recovery || self.recovery.in_fast_recovery(),
                mss: self.config.mss,
            };
            self.cc.on_ack(&sample);
        }
        AckOutcome { rtt, newly_acked }
    }

    /// The retransmission timer fired (calls before the current deadline are ignored).
    pub fn handle_timeout(&mut self, now: SimTime) {
        let Some(deadline) = self.rto_deadline else {
            return;
        };
        if now < deadline {
            return;
        }
        if self.snd_una == self.snd_nxt {
            self.rto_deadline = None;
            return;
        }
        self.stats.timeouts += 1;
        self.cc
            .on_retransmission_timeout(now, self.flight_size_for_timeout());
        self.recovery.on_timeout(self.snd_una, self.snd_nxt);
        // RFC 6298 (5.5) "back off the timer", (5.6) "Start the retransmission timer, such
        // that it expires after RTO seconds (for the value of RTO after the doubling".
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.rto());
        self.pipe = self
            .recovery
            .pipe(&self.scoreboard, self.snd_una, self.snd_nxt);
    }

    /// The next segment to send now, if the windows allow one.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<DataSegment> {
        let new_len = self.new_data_len();
        let t =
            self.recovery
                .next_segment(&self.scoreboard, self.snd_una, self.snd_nxt, new_len)?;
        if !t.ignores_window() && self.pipe > 0 && self.pipe + t.len as u64 > self.send_window() {
            return None;
        }
        let pipe_growth = self.recovery.on_transmit(&t);
        if t.kind == SegmentKind::NewData {
            self.snd_nxt = t.end();
        }
        self.pipe += pipe_growth;
        debug_assert_eq!(
            self.pipe,
            self.recovery
                .pipe(&self.scoreboard, self.snd_una, self.snd_nxt)
        );

        self.stats.segments_sent += 1;
        self.stats.bytes_sent += t.len as u64;
        if t.is_retransmission() {
            self.stats.retransmitted_segments += 1;
        }
        self.cc.on_packet_sent(now, t.len, self.pipe);
        // RFC 6298 (5.1): "if the timer is not running, start it running".
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        Some(DataSegment {
            seq: t.seq,
            len: t.len,
            sent_at: now,
            is_retransmission: t.is_retransmission(),
        })
    }

    /// The retransmission timer's deadline, if it is running.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.rto_deadline
    }

    /// All application data has been acknowledged (never true for an unbounded sender).
    pub fn is_finished(&self) -> bool {
        self.app_bytes.is_some_and(|total| self.snd_una >= total)
    }

    /// Length of the next new segment the application data and the peer's window allow.
    fn new_data_len(&self) -> u32 {
        let app_end = self.app_bytes.unwrap_or(u64::MAX);
        if self.snd_nxt >= app_end {
            return 0;
        }
        let full = (app_end - self.snd_nxt).min(self.config.mss as u64);
        let room = self
            .snd_una
            .saturating_add(self.rwnd)
            .saturating_sub(self.snd_nxt);
        if room >= full {
            full as u32
        } else if self.snd_nxt == self.snd_una {
            room as u32
        } else {
            0
        }
    }

    /// Congestion window plus NewReno's inflation.
    fn send_window(&self) -> u64 {
        let window = self.cc.cwnd() as i128 + self.recovery.window_inflation() as i128;
        window.max(0) as u64
    }

    /// RFC 5681 FlightSize: sent and not cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// The amount of data in flight a timeout's ssthresh is computed from: FlightSize, capped
    /// at the congestion window.
    ///
    /// RFC 5681 eq. (4) uses FlightSize. When the timer fires during SACK recovery, though,
    /// FlightSize also counts every hole and every new segment the recovery sent, and after a
    /// large loss it can be several times the window the path carried: ssthresh would then be
    /// set *above* the window in force, and the next slow start would overshoot again (a CUBIC
    /// flow in the dumbbell timed out once per loss episode this way). The cap keeps the
    /// RFC's value whenever FlightSize is within the window, and otherwise uses the window, as
    /// ns-2 (`window()`) and Linux (`snd_cwnd`) do.
    pub fn flight_size_for_timeout(&self) -> u64 {
        self.flight_size().min(self.cc.cwnd())
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    pub fn cc(&self) -> &C {
        &self.cc
    }

    pub fn cc_mut(&mut self) -> &mut C {
        &mut self.cc
    }

    /// The controller's congestion window in bytes.
    pub fn cwnd(&self) -> u64 {
        self.cc.cwnd()
    }

    /// Smoothed RTT, zero before the first sample.
    pub fn srtt(&self) -> SimTime {
        self.rtt.srtt()
    }

    /// Current retransmission timeout, backoff included.
    pub fn rto(&self) -> SimTime {
        self.rtt.rto()
    }

    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }

    /// RFC 6675 `pipe` with SACK, FlightSize without (both exclude data presumed lost after a
    /// timeout until it is resent).
    pub fn bytes_in_flight(&self) -> u64 {
        self.pipe
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// In fast recovery (RFC 6675 / RFC 6582); false after a timeout.
    pub fn in_recovery(&self) -> bool {
        self.recovery.in_fast_recovery()
    }

    pub fn recovery_phase(&self) -> RecoveryPhase {
        self.recovery.phase()
    }

    pub fn recovery(&self) -> &LossRecovery {
        &self.recovery
    }

    pub fn scoreboard(&self) -> &Scoreboard {
        &self.scoreboard
    }

    /// The peer's advertised window from the latest ACK.
    pub fn rwnd(&self) -> u64 {
        self.rwnd
    }

    /// Application bytes handed over so far (`None`: unbounded).
    pub fn app_bytes(&self) -> Option<u64> {
        self.app_bytes
    }

    pub fn config(&self) -> &TcpConfig {
        &self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::SackBlocks;
    use crate::transport::tcp::tests::TestReno;

    const MSS: u32 = 100;

    fn config() -> TcpConfig {
        TcpConfig {
            mss: MSS,
            initial_window: 4,
            receive_buffer: 1_000_000,
            ..TcpConfig::default()
        }
    }

    fn sender(app: Option<u64>) -> TcpSender<TestReno> {
        let config = config();
        TcpSender::new(config, TestReno::new(MSS, config.initial_window), app)
    }

    fn drain(s: &mut TcpSender<TestReno>, now: SimTime) -> Vec<DataSegment> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    fn ack(ack: u64, echo: SimTime) -> AckSegment {
        AckSegment {
            ack,
            sack: SackBlocks::EMPTY,
            rwnd: 1_000_000,
            echo_sent_at: echo,
            echo_is_retransmission: false,
        }
    }

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    #[test]
    fn initial_window_then_clocked_by_acks() {
        let mut s = sender(None);
        let sent = drain(&mut s, ms(0));
        assert_eq!(sent.len(), 4);
        for (k, seg) in sent.iter().enumerate() {
            assert_eq!(
                (seg.seq, seg.len, seg.sent_at, seg.is_retransmission),
                (k as u64 * 100, MSS, ms(0), false)
            );
        }
        assert_eq!(s.bytes_in_flight(), 400);
        assert_eq!(s.poll_timeout(), Some(config().initial_rto));

        let outcome = s.handle_ack(ms(50), &ack(200, ms(0)));
        assert_eq!(
            outcome,
            AckOutcome {
                rtt: Some(ms(50)),
                newly_acked: 200
            }
        );
        assert_eq!(s.srtt(), ms(50));
        // RTO = 50 + 4 * 25 = 150 ms, raised to the 200 ms floor; restarted by the ACK.
        assert_eq!(s.rto(), ms(200));
        assert_eq!(s.poll_timeout(), Some(ms(250)));
        // Slow start: +1 MSS for this ACK (RFC 5681 min(N, SMSS)), and 200 bytes left.
        assert_eq!(s.cwnd(), 500);
        assert_eq!(drain(&mut s, ms(50)).len(), 3);
        assert_eq!(s.snd_nxt(), 700);
        let sample = s.cc().last_sample.unwrap();
        assert!(sample.is_cwnd_limited);
        assert_eq!(sample.acked_bytes, 200);
        assert_eq!(sample.bytes_in_flight, 200);
        assert!(!sample.in_recovery);
    }

    #[test]
    fn karn_rule_and_ignored_acks() {
        let mut s = sender(None);
        drain(&mut s, ms(0));
        let retransmitted = AckSegment {
            echo_is_retransmission: true,
            ..ack(100, ms(0))
        };
        assert_eq!(
            s.handle_ack(ms(10), &retransmitted),
            AckOutcome {
                rtt: None,
                newly_acked: 100
            }
        );
        assert!(!s.rtt_estimator().has_sample());
        // Reordered old ACK and an ACK for unsent data change nothing.
        assert_eq!(s.handle_ack(ms(11), &ack(50, ms(0))), AckOutcome::default());
        assert_eq!(
            s.handle_ack(ms(11), &ack(10_000, ms(0))),
            AckOutcome::default()
        );
        assert_eq!(s.snd_una(), 100);
        assert_eq!(s.stats().bytes_acked, 100);
        // A duplicate ACK acknowledges nothing: no sample either.
        assert_eq!(s.handle_ack(ms(12), &ack(100, ms(1))).rtt, None);
    }

    #[test]
    fn finite_transfer_sends_a_short_last_segment_and_finishes() {
        let mut s = sender(Some(250));
        let sent = drain(&mut s, ms(0));
        assert_eq!(
            sent.iter().map(|d| (d.seq, d.len)).collect::<Vec<_>>(),
            vec![(0, 100), (100, 100), (200, 50)]
        );
        assert!(!s.is_finished());
        s.handle_ack(ms(10), &ack(250, ms(0)));
        assert!(s.is_finished());
        assert_eq!(
            s.poll_timeout(),
            None,
            "timer off once everything is acknowledged"
        );
        let sample = s.cc().last_sample.unwrap();
        assert!(
            !sample.is_cwnd_limited,
            "250 bytes in a 400-byte window: application-limited"
        );
        s.push_app_bytes(100);
        assert!(!s.is_finished());
        let more = drain(&mut s, ms(10));
        assert_eq!(
            more.iter().map(|d| (d.seq, d.len)).collect::<Vec<_>>(),
            vec![(250, 100)]
        );
        assert_eq!(s.stats().segments_sent, 4);
        assert_eq!(s.stats().bytes_sent, 350);
    }

    #[test]
    fn receive_window_bounds_new_data() {
        let mut s = sender(None);
        drain(&mut s, ms(0));
        // The peer's window ends at 100 + 250 = 350, below what is already sent.
        let small = AckSegment {
            rwnd: 250,
            ..ack(100, ms(0))
        };
        s.handle_ack(ms(10), &small);
        assert_eq!(s.snd_nxt(), 400);
        assert!(drain(&mut s, ms(10)).is_empty());
        let sample = s.cc().last_sample.unwrap();
        assert!(sample.is_cwnd_limited);
        // Everything acknowledged, window smaller than a segment: a short segment goes.
        let tiny = AckSegment {
            rwnd: 30,
            ..ack(400, ms(0))
        };
        s.handle_ack(ms(20), &tiny);
        let sent = drain(&mut s, ms(20));
        assert_eq!(
            sent.iter().map(|d| (d.seq, d.len)).collect::<Vec<_>>(),
            vec![(400, 30)]
        );
    }

    #[test]
    fn timeout_retransmits_backs_off_and_ignores_early_calls() {
        let mut s = sender(None);
        drain(&mut s, ms(0));
        let deadline = s.poll_timeout().unwrap();
        s.handle_timeout(deadline - SimTime(1));
        assert_eq!(s.stats().timeouts, 0);
        assert!(s.poll_transmit(deadline).is_none());

        s.handle_timeout(deadline);
        assert_eq!(s.stats().timeouts, 1);
        assert_eq!(s.cc().timeouts, 1);
        assert_eq!(s.cc().last_flight, 400);
        assert_eq!(s.recovery_phase(), RecoveryPhase::Timeout);
        assert_eq!(s.rto(), SimTime::from_secs(2));
        assert_eq!(s.poll_timeout(), Some(deadline + SimTime::from_secs(2)));
        assert_eq!(
            s.bytes_in_flight(),
            0,
            "everything outstanding is presumed lost"
        );
        // cwnd is one segment: the first hole goes, then the window is full.
        let sent = drain(&mut s, deadline);
        assert_eq!(sent.len(), 1);
        assert_eq!((sent[0].seq, sent[0].is_retransmission), (0, true));
        assert_eq!(s.stats().retransmitted_segments, 1);
        // Its ACK (a retransmission's: no sample, backoff kept) lets two go: 100 and 200.
        let t = deadline + ms(30);
        let outcome = s.handle_ack(
            t,
            &AckSegment {
                echo_is_retransmission: true,
                ..ack(100, deadline)
            },
        );
        assert_eq!(outcome.rtt, None);
        assert_eq!(s.rto(), SimTime::from_secs(2));
        let sent = drain(&mut s, t);
        assert_eq!(
            sent.iter()
                .map(|d| (d.seq, d.is_retransmission))
                .collect::<Vec<_>>(),
            vec![(100, true), (200, true)]
        );
        // Reaching the recovery point (400) returns to normal; new data follows.
        s.handle_ack(
            t + ms(30),
            &AckSegment {
                echo_is_retransmission: true,
                ..ack(400, t)
            },
        );
        assert_eq!(s.recovery_phase(), RecoveryPhase::Open);
        let sent = drain(&mut s, t + ms(30));
        assert!(sent.iter().all(|d| !d.is_retransmission && d.seq >= 400));
        assert_eq!(s.stats().fast_retransmits, 0);
    }

    #[test]
    fn sack_duplicates_trigger_one_fast_retransmit() {
        let mut s = sender(None);
        let mut now = ms(0);
        drain(&mut s, now);
        now = ms(10);
        s.handle_ack(now, &ack(400, ms(0))); // slow start: cwnd 500, five segments go
        let sent = drain(&mut s, now);
        assert_eq!(s.snd_nxt(), 400 + 100 * sent.len() as u64);
        // Segment at 400 lost; the next three arrive.
        for k in 1..=3u64 {
            let mut sack = SackBlocks::EMPTY;
            sack.push(500, 500 + 100 * k);
            s.handle_ack(
                now,
                &AckSegment {
                    sack,
                    ..ack(400, now)
                },
            );
        }
        assert!(s.in_recovery());
        assert_eq!(s.stats().fast_retransmits, 1);
        assert_eq!(s.cc().congestion_events, 1);
        let flight = s.snd_nxt() - 400;
        assert_eq!(s.cc().last_flight, flight);
        let sent = drain(&mut s, now);
        assert_eq!((sent[0].seq, sent[0].is_retransmission), (400, true));
        assert!(s.cc().last_sample.unwrap().in_recovery);
        // Full ACK: recovery ends, the controller is told.
        let high = s.snd_nxt();
        s.handle_ack(
            now + ms(10),
            &AckSegment {
                echo_is_retransmission: true,
                ..ack(high, now)
            },
        );
        assert!(!s.in_recovery());
        assert_eq!(s.cc().recovery_exits, 1);
        assert!(
            s.cc().last_sample.unwrap().in_recovery,
            "the ACK ending recovery grows nothing"
        );
    }
}
