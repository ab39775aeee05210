//! The single-path TCP sender: the sequence-space [`TcpCore`] composed with its congestion
//! controller and a bulk source of finite or unbounded size.
//!
//! [`TcpSender`] is sans-IO and generic over its controller. The driver calls
//! [`TcpSender::handle_ack`] / [`TcpSender::handle_timeout`], then drains
//! [`TcpSender::poll_transmit`] (one segment per call) and re-arms its one timer from
//! [`TcpSender::poll_timeout`]. The rules it follows (windows, ACK processing, RTT, the
//! retransmission timer, loss recovery) are the core's: see [`super::core`].

use std::ops::Deref;

use crate::packet::{AckSegment, DataSegment};
use crate::time::SimTime;
use crate::transport::cc::CongestionControl;

pub use super::core::AckOutcome;
use super::core::TcpCore;
use super::TcpConfig;

/// A TCP sender over a byte sequence space starting at 0. Read-only accessors of its core
/// (`snd_una`, `bytes_in_flight`, `stats`, ...) are reached through `Deref`.
#[derive(Clone, Debug)]
pub struct TcpSender<C: CongestionControl> {
    core: TcpCore,
    cc: C,
    /// Bytes the application has handed over so far; `None` for an unbounded bulk source.
    app_bytes: Option<u64>,
    /// Set by [`TcpSender::close`]: no new data beyond this sequence number.
    closed_at: Option<u64>,
}

impl<C: CongestionControl> Deref for TcpSender<C> {
    type Target = TcpCore;
    fn deref(&self) -> &TcpCore {
        &self.core
    }
}

impl<C: CongestionControl> TcpSender<C> {
    /// A sender with `app_bytes` of application data to send (`None`: unbounded).
    pub fn new(config: TcpConfig, cc: C, app_bytes: Option<u64>) -> Self {
        TcpSender {
            core: TcpCore::new(config),
            cc,
            app_bytes,
            closed_at: None,
        }
    }

    /// The application stops: nothing is sent beyond what has been sent so far, while the
    /// data already sent is still retransmitted until it is acknowledged (the timer runs).
    /// A finite transfer closed early never counts as finished.
    pub fn close(&mut self) {
        self.closed_at.get_or_insert(self.core.snd_nxt());
    }

    /// Whether [`TcpSender::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed_at.is_some()
    }

    /// The application wrote `bytes` more (ignored by an unbounded sender).
    pub fn push_app_bytes(&mut self, bytes: u64) {
        if let Some(total) = self.app_bytes.as_mut() {
            *total = total.saturating_add(bytes);
        }
    }

    /// Processes an acknowledgement.
    #[inline]
    pub fn handle_ack(&mut self, now: SimTime, ack: &AckSegment) -> AckOutcome {
        self.core.handle_ack(now, ack, &mut self.cc)
    }

    /// The retransmission timer fired (calls before the current deadline are ignored).
    pub fn handle_timeout(&mut self, now: SimTime) {
        self.core.handle_timeout(now, &mut self.cc)
    }

    /// The next segment to send now, if the windows allow one.
    #[inline]
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<DataSegment> {
        let app_end = self
            .app_bytes
            .unwrap_or(u64::MAX)
            .min(self.closed_at.unwrap_or(u64::MAX));
        self.core.poll_transmit(now, &mut self.cc, app_end, 0)
    }

    /// [`TcpSender::poll_transmit`] behind an interface queue that may refuse the segment
    /// ([`TcpCore::poll_transmit_gated`]: `refuses` gets the payload length).
    pub fn poll_transmit_gated(
        &mut self,
        now: SimTime,
        refuses: &mut dyn FnMut(u32) -> bool,
    ) -> Option<DataSegment> {
        let app_end = self
            .app_bytes
            .unwrap_or(u64::MAX)
            .min(self.closed_at.unwrap_or(u64::MAX));
        self.core
            .poll_transmit_gated(now, &mut self.cc, app_end, 0, refuses)
    }

    /// In Linux's CWR state after a local refusal ([`TcpCore::in_cwr`]).
    pub fn in_cwr(&self) -> bool {
        self.core.in_cwr()
    }

    /// Whether the segment the last [`TcpSender::poll_transmit`] returned filled what may be
    /// sent, so that polling again before the next input would return nothing
    /// ([`TcpCore::window_filled`]).
    #[inline]
    pub fn window_filled(&self) -> bool {
        self.core.window_filled()
    }

    /// All application data has been acknowledged (never true for an unbounded sender).
    pub fn is_finished(&self) -> bool {
        self.app_bytes
            .is_some_and(|total| self.core.snd_una() >= total)
    }

    /// The amount of data in flight a timeout's ssthresh is computed from (see
    /// [`TcpCore::flight_size_for_timeout`]).
    pub fn flight_size_for_timeout(&self) -> u64 {
        self.core.flight_size_for_timeout(&self.cc)
    }

    pub fn core(&self) -> &TcpCore {
        &self.core
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

    /// Application bytes handed over so far (`None`: unbounded).
    pub fn app_bytes(&self) -> Option<u64> {
        self.app_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::SackBlocks;
    use crate::transport::tcp::tests::TestReno;
    use crate::transport::tcp::RecoveryPhase;

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
