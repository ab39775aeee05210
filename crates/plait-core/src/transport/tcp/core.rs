//! The TCP sequence-space core of a sender: window-limited transmission, ACK processing, RTT
//! measurement, the retransmission timer, and loss recovery — owning neither its congestion
//! controller nor its application data.
//!
//! [`TcpCore`] is what a single-path connection ([`super::TcpSender`]), an MPTCP subflow and an
//! MPAT window have in common. Its owner passes the controller (`&mut impl CongestionControl`)
//! to [`TcpCore::handle_ack`], [`TcpCore::handle_timeout`] and [`TcpCore::poll_transmit`],
//! and to `poll_transmit` also how far the application data it offers extends and the tag to
//! attach to a new segment. The owner calls `handle_*`, then drains `poll_transmit` (one
//! segment per call) and re-arms its one timer from [`TcpCore::poll_timeout`]. Timers that
//! fire late or stale are harmless: a `handle_timeout` before the current deadline does
//! nothing.
//!
//! **Sent log** (on request, [`TcpCore::with_sent_log`]): one entry per segment in sequence
//! order — its range, the owner's tag, when it was (last) sent, and the delivered-bytes count
//! and time at that moment — trimmed at `snd_una`. From it the core reports, through
//! [`TcpCore::poll_event`] and the controller's [`CongestionControl::on_tagged_ack`] /
//! [`CongestionControl::on_tagged_loss`], which tagged segments were acknowledged and which
//! were lost (retransmitted by recovery, or outstanding when the timer fired), and it fills
//! the delivery-rate fields of [`AckSample`] (delivered bytes over the time since the
//! acknowledged segment was sent, as in the delivery-rate estimation of
//! draft-cheng-iccrg-delivery-rate-estimation §3, without its send-rate bound). Without the
//! log (the single-path default) nothing of this costs anything.
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
//! one; its `bytes_in_flight` is [`TcpCore::ssthresh_basis`]: RFC 5681's FlightSize,
//! `snd_nxt - snd_una`, without the data limited transmit sent since the last cumulative ACK
//! (§3.2 step 2), or the congestion window as Linux takes it), and
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
//! **Window during recovery.** RFC 6675's rule above, or with
//! [`RecoveryWindow::Prr`] Proportional Rate Reduction (RFC 6937, see [`super::prr`]): from
//! the ACK that starts fast recovery to the one that ends it, the window is the `pipe + sndcnt`
//! PRR computed at the latest ACK, and every segment sent counts towards `prr_out`. The
//! controller's own window is left at the ssthresh it set.
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
//! **RACK-TLP** (RFC 8985; `rack_tlp` with `sack`; the algorithm, and what differs from the
//! RFC and from Linux, is documented in [`super::rack`]). The core keeps a [`Rack`] beside the
//! scoreboard and:
//!
//! - tells it every transmission (§6.1: per-segment send times) and every ACK: before the
//!   scoreboard update it notes which SACKed bytes are new, after the RTT sample it runs
//!   §6.2 steps 2–5 (the receiver's echo of the send time stands for the timestamp option);
//!   a segment RACK marks lost starts fast recovery from the Open phase, like a third
//!   duplicate ACK (one `on_congestion_event` per episode), and recovery resends it first even
//!   if it had been resent already — a lost retransmission repaired without a timeout;
//!   `pipe` leaves RACK's lost segments out (see [`super::recovery`]);
//! - keeps two more timers: RACK's reordering timer (§6.2 step 5, §6.3: detection again when
//!   it fires, which may start fast recovery) and the tail loss probe timer (§7.2: `2·SRTT`,
//!   plus `TLP.max_ack_delay` with one segment in flight, never after the retransmission
//!   timer). [`TcpCore::poll_timeout`] reports the earliest of the three and
//!   [`TcpCore::handle_timeout`] serves the reordering timer, then the probe timer, then the
//!   retransmission timer (a probe due with the RTO goes in its place and re-arms it);
//! - sends the probe on the next [`TcpCore::poll_transmit`] whatever the congestion window
//!   (§7.3: new data if allowed, else the highest segment again), and reports a loss the probe
//!   repaired (§7.4) as one `on_congestion_event` followed at once by `on_recovery_exit`;
//! - without PRR, gives the controller one more `on_congestion_event` (basis capped at its
//!   window) per window of retransmissions RACK finds lost during fast recovery (§9.3);
//! - restarts the retransmission timer when the first unacknowledged segment is resent (as
//!   Linux does; RFC 6298 (5.1) only starts a stopped timer);
//! - on a timeout, drops RACK's lost marks (go-back-N resends everything) and the probe.
//!
//! With `rack_tlp` off none of this runs: each addition is one branch on an empty `Option`.
//!
//! Per-ACK and per-segment work does not allocate once the scoreboard (and, with RACK-TLP,
//! RACK's per-segment records) has grown to its working size; without loss the scoreboard is
//! empty and every step is O(1).

use std::collections::VecDeque;

use crate::fifo::Fifo;

use crate::packet::{AckSegment, DataSegment};
use crate::time::SimTime;
use crate::transport::cc::{AckSample, CongestionControl};
use crate::transport::rtt::RttEstimator;

use super::prr::Prr;
use super::rack::Rack;
use super::recovery::{LossRecovery, RecoveryPhase, SegmentKind, Transmission};
use super::sack::Scoreboard;
use super::{RecoveryWindow, SenderStats, SsthreshBasis, TcpConfig};

/// What one ACK told the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// The RTT sample taken from this ACK, if Karn's rule allowed one.
    pub rtt: Option<SimTime>,
    /// Bytes newly acknowledged by the cumulative ACK.
    pub newly_acked: u64,
}

/// One segment in the sent log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentSegment {
    pub seq: u64,
    pub end: u64,
    /// The owner's tag, given to [`TcpCore::poll_transmit`] when the segment was first sent.
    pub tag: u64,
    /// When it was last (re)sent.
    pub sent_at: SimTime,
    /// The core's delivered-bytes count, and the time it last grew, when it was last sent.
    pub delivered: u64,
    pub delivered_at: SimTime,
    /// Reported lost (it will not be reported again).
    pub lost: bool,
}

/// What the sent log reports to the owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreEvent {
    /// `[seq, end)`, sent with `tag`, was cumulatively acknowledged.
    Acked { seq: u64, end: u64, tag: u64 },
    /// `[seq, end)`, sent with `tag`, is presumed lost: recovery retransmits it, or it was
    /// outstanding when the retransmission timer fired.
    Lost { seq: u64, end: u64, tag: u64 },
}

#[derive(Clone, Debug, Default)]
struct SentLog {
    segments: Fifo<SentSegment>,
    /// Bytes delivered so far (cumulatively acknowledged or SACKed), and when that last grew.
    delivered: u64,
    delivered_at: SimTime,
    events: VecDeque<CoreEvent>,
}

impl SentLog {
    /// The index of the entry holding `seq`, if any. Searched from the front: an ACK's newest
    /// segment is usually among the first entries still logged.
    fn find(&self, seq: u64) -> Option<usize> {
        let i = self.segments.partition_point_near_front(|s| s.end <= seq);
        (i < self.segments.len() && self.segments[i].seq <= seq).then_some(i)
    }

    /// An ACK that delivered `newly_delivered` bytes and moved the cumulative point to
    /// `snd_una`: a delivery-rate sample from the newest segment it acknowledges, then the
    /// acknowledged entries trimmed. Returns (delivered bytes so far, delivery rate in bit/s).
    fn on_ack<C: CongestionControl + ?Sized>(
        &mut self,
        now: SimTime,
        newly_delivered: u64,
        ack: &AckSegment,
        snd_una: u64,
        cc: &mut C,
    ) -> (u64, Option<f64>) {
        self.delivered += newly_delivered;
        self.delivered_at = now;
        // The newest segment this ACK covers: the one below the cumulative ACK, or the one
        // holding the end of the first (most recent) SACK block.
        let newest = match ack.sack.as_slice().first() {
            Some(&(_, end)) if end > ack.ack => self.find(end - 1),
            _ => ack.ack.checked_sub(1).and_then(|s| self.find(s)),
        };
        let rate = newest.and_then(|i| {
            let s = self.segments[i];
            let interval = now.saturating_sub(s.delivered_at).as_nanos();
            (interval > 0).then(|| (self.delivered - s.delivered) as f64 * 8e9 / interval as f64)
        });
        while let Some(s) = self.segments.front() {
            if s.end > snd_una {
                break;
            }
            let (seq, end, tag) = (s.seq, s.end, s.tag);
            self.segments.pop_front();
            cc.on_tagged_ack(tag, end - seq);
            self.events.push_back(CoreEvent::Acked { seq, end, tag });
        }
        (self.delivered, rate)
    }

    /// Marks every unreported entry overlapping `[seq, end)` lost.
    fn mark_lost<C: CongestionControl + ?Sized>(&mut self, seq: u64, end: u64, cc: &mut C) {
        let mut i = self.segments.as_slice().partition_point(|s| s.end <= seq);
        while let Some(s) = self.segments.get_mut(i) {
            if s.seq >= end {
                break;
            }
            if !s.lost {
                s.lost = true;
                let (seq, end, tag) = (s.seq, s.end, s.tag);
                cc.on_tagged_loss(tag, end - seq);
                self.events.push_back(CoreEvent::Lost { seq, end, tag });
            }
            i += 1;
        }
    }
}

/// The sequence-space state of a TCP sender over a byte space starting at 0.
#[derive(Clone, Debug)]
pub struct TcpCore {
    config: TcpConfig,
    rtt: RttEstimator,
    scoreboard: Scoreboard,
    recovery: LossRecovery,
    /// First unacknowledged byte.
    snd_una: u64,
    /// One past the highest byte ever sent (RFC 6675 `HighData + 1`; never moved back).
    snd_nxt: u64,
    /// Peer's advertised window from the latest ACK.
    rwnd: u64,
    /// RFC 6675 `pipe` (FlightSize without SACK), kept current after every event.
    pipe: u64,
    rto_deadline: Option<SimTime>,
    stats: SenderStats,
    log: Option<Box<SentLog>>,
    /// New data sent while duplicate ACKs were being counted (RFC 3042 limited transmit, or
    /// RFC 6675 step (3)'s pipe-governed form), since the last cumulative ACK: RFC 5681 §3.2
    /// step 2 leaves it out of the FlightSize ssthresh is computed from.
    limited_transmit_bytes: u64,
    /// The last [`TcpCore::poll_transmit`] sent a segment after which the next call with the
    /// same offer, nothing else having changed, returns nothing (see
    /// [`TcpCore::window_filled`]).
    window_filled: bool,
    /// Proportional Rate Reduction during fast recovery, with the window it allows after the
    /// latest ACK (`pipe + sndcnt`), when `recovery_window` is PRR.
    prr: Option<(Prr, u64)>,
    /// RACK-TLP (RFC 8985), when `rack_tlp` and `sack` are on.
    rack: Option<Box<Rack>>,
    /// When the controller last reduced its window for fast recovery (its start, or a lost
    /// retransmission RACK found during it).
    reduced_at: SimTime,
    /// Linux's CWR state after the local interface queue refused a segment: `high_seq`, the
    /// episode ends when it is acknowledged ([`TcpCore::poll_transmit_gated`]).
    cwr_high: Option<u64>,
    /// Tests only: every call takes the general path, none of the shortcuts, so that the
    /// shortcuts can be compared with it.
    #[cfg(test)]
    general_only: bool,
}

impl TcpCore {
    pub fn new(config: TcpConfig) -> Self {
        assert!(config.mss > 0, "TcpConfig::mss must be positive");
        assert!(
            config.receive_buffer > 0,
            "TcpConfig::receive_buffer must be positive"
        );
        TcpCore {
            rtt: RttEstimator::from_config(&config),
            scoreboard: Scoreboard::new(),
            recovery: LossRecovery::new(&config),
            snd_una: 0,
            snd_nxt: 0,
            rwnd: config.receive_buffer,
            pipe: 0,
            rto_deadline: None,
            stats: SenderStats::default(),
            config,
            log: None,
            limited_transmit_bytes: 0,
            window_filled: false,
            prr: None,
            rack: (config.rack_tlp && config.sack).then(|| Box::new(Rack::new(&config))),
            reduced_at: SimTime::ZERO,
            cwr_high: None,
            #[cfg(test)]
            general_only: false,
        }
    }

    /// Whether the shortcuts of the common cases may be taken (always, but in the tests that
    /// compare them with the general path).
    #[inline(always)]
    fn shortcuts_allowed(&self) -> bool {
        #[cfg(test)]
        return !self.general_only;
        #[cfg(not(test))]
        return true;
    }

    /// Keeps the sent log (tags, acknowledged and lost segments, delivery-rate samples).
    pub fn with_sent_log(mut self) -> Self {
        self.log = Some(Box::default());
        self
    }

    /// Processes an acknowledgement: the no-holes path (`ack_without_holes`) inline, the
    /// general path apart.
    #[inline(always)]
    pub fn handle_ack<C: CongestionControl + ?Sized>(
        &mut self,
        now: SimTime,
        ack: &AckSegment,
        cc: &mut C,
    ) -> AckOutcome {
        if ack.ack < self.snd_una || ack.ack > self.snd_nxt {
            return AckOutcome::default();
        }
        // The per-ACK fast path: a cumulative ACK outside recovery with nothing SACKed before
        // or now (no holes) changes the scoreboard and the recovery state only as
        // `ack_without_holes` does, and leaves `pipe` equal to FlightSize.
        if ack.ack > self.snd_una
            && ack.sack.is_empty()
            && self.scoreboard.is_empty()
            && self.rack.is_none()
            && self.prr.is_none()
            && self.cwr_high.is_none()
            && self.recovery.phase() == RecoveryPhase::Open
            && self.shortcuts_allowed()
        {
            let is_cwnd_limited = self.pipe + self.config.mss as u64 >= self.send_window(cc);
            let newly_acked = ack.ack - self.snd_una;
            self.snd_una = ack.ack;
            self.rwnd = ack.rwnd;
            return self.ack_without_holes(now, ack, cc, newly_acked, is_cwnd_limited, false);
        }
        self.handle_ack_general(now, ack, cc)
    }

    /// [`TcpCore::handle_ack`] for an ACK inside the window that does not take the no-holes
    /// path: a duplicate, SACK information before or now, recovery, RACK-TLP or PRR.
    #[inline(never)]
    fn handle_ack_general<C: CongestionControl + ?Sized>(
        &mut self,
        now: SimTime,
        ack: &AckSegment,
        cc: &mut C,
    ) -> AckOutcome {
        let mss = self.config.mss as u64;
        let is_cwnd_limited = self.pipe + mss >= self.send_window(cc);

        let newly_acked = ack.ack - self.snd_una;
        if newly_acked > 0
            && ack.sack.is_empty()
            && self.recovery.phase() == RecoveryPhase::Timeout
            && self.rack.is_none()
            && self.prr.is_none()
            && self
                .scoreboard
                .highest_sacked()
                .is_none_or(|end| end <= ack.ack)
            && self.shortcuts_allowed()
        {
            // Go-back-N after a timeout, acknowledged in order: as the no-holes path, but for
            // the end of the timeout phase and its `pipe`.
            self.snd_una = ack.ack;
            self.rwnd = ack.rwnd;
            return self.ack_without_holes(now, ack, cc, newly_acked, is_cwnd_limited, true);
        }
        // RACK notes what the ACK SACKs for the first time; a loss a tail probe may have
        // repaired is reduced for from the flight before this ACK.
        let mut tlp_basis = None;
        if let Some(rack) = self.rack.as_deref_mut() {
            rack.before_scoreboard_update(&self.scoreboard, ack, self.snd_nxt);
            if rack.tlp_end_seq().is_some() {
                tlp_basis = Some(self.ssthresh_basis(cc));
            }
        }
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

        if let Some(rack) = self.rack.as_deref_mut() {
            // RFC 8985 §6.2 steps 2-5 (step 1 is the estimator's minimum).
            let in_loss_recovery = self.recovery.phase() != RecoveryPhase::Open;
            rack.on_ack(
                now,
                ack,
                &self.scoreboard,
                self.snd_una,
                &self.rtt,
                rtt.is_some(),
                in_loss_recovery,
            );
        }
        let transition = self.recovery.on_ack(
            &self.scoreboard,
            self.snd_una,
            self.snd_nxt,
            newly_acked,
            newly_sacked,
            self.rack.as_deref(),
        );
        if transition.exited {
            self.prr = None;
            cc.on_recovery_exit(now);
        }
        let in_cwr = self.cwr_high.is_some();
        if in_cwr && !transition.entered {
            self.end_cwr_if_acknowledged(now, cc);
        }
        if transition.entered {
            self.start_fast_recovery(now, cc);
        } else if let Some(rack) = self.rack.as_deref_mut() {
            if rack.tlp_on_ack(ack) {
                // RFC 8985 §7.4.2: the probe repaired a loss; the controller reduces its window
                // once, and the reduction ends at once (Linux's CWR state for one ACK).
                cc.on_congestion_event(now, tlp_basis.unwrap_or(0));
                cc.on_recovery_exit(now);
            }
            self.respond_to_lost_retransmissions(now, cc);
        }
        if newly_acked > 0 {
            self.limited_transmit_bytes = 0;
        }
        self.pipe = self.recovery.pipe(
            &self.scoreboard,
            self.snd_una,
            self.snd_nxt,
            self.rack.as_deref(),
        );
        if let Some((prr, window)) = self.prr.as_mut() {
            // RFC 6937 §3.1, on every ACK during recovery (the one that started it included).
            let sndcnt = prr.on_ack(
                newly_acked + newly_sacked,
                self.pipe,
                cc.ssthresh(),
                self.config.mss,
            );
            *window = self.pipe + sndcnt;
        }

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
        if self.rack.is_some() {
            // RFC 8985 §7.2: "upon receiving an ACK that cumulatively acknowledges new data".
            self.schedule_probe(now, newly_acked > 0);
        }

        if newly_acked > 0 || newly_sacked > 0 {
            let (delivered_bytes, delivery_rate_bps) =
                self.log_ack(now, newly_acked + newly_sacked, ack, cc);
            let sample = AckSample {
                now,
                acked_bytes: newly_acked,
                newly_sacked_bytes: newly_sacked,
                rtt,
                srtt: self.rtt.srtt(),
                min_rtt: self.rtt.min_rtt(),
                bytes_in_flight: self.pipe,
                is_cwnd_limited,
                // No growth in CWR either (`tcp_may_raise_cwnd`), the ACK that ends it included.
                in_recovery: transition.was_in_fast_recovery
                    || self.recovery.in_fast_recovery()
                    || in_cwr,
                mss: self.config.mss,
                delivered_bytes,
                delivery_rate_bps,
            };
            cc.on_ack(&sample);
        }
        AckOutcome { rtt, newly_acked }
    }

    /// [`TcpCore::handle_ack`] for a cumulative ACK that acknowledges new data, in the Open
    /// phase, with an empty scoreboard, no SACK blocks, no PRR and RACK-TLP off: the general
    /// path then
    /// reduces to moving `HighACK` (the scoreboard stays empty), resetting the duplicate count
    /// and `HighRxt` (`LossRecovery::on_ack`, which can start no episode: no duplicate, nothing
    /// SACKed for `IsLost`) and `pipe = snd_nxt - snd_una` (SetPipe with nothing SACKed,
    /// nothing lost and nothing retransmitted above `snd_una`).
    ///
    /// With `after_timeout`, the same ACK in the timeout phase, when the scoreboard holds
    /// nothing above it: the scoreboard is then empty too, and `LossRecovery::on_ack` and
    /// SetPipe reduce to [`LossRecovery::on_cumulative_ack_after_timeout`]. Fast recovery is
    /// not active before or after, so the controller sees an ACK outside recovery.
    #[inline(always)]
    fn ack_without_holes<C: CongestionControl + ?Sized>(
        &mut self,
        now: SimTime,
        ack: &AckSegment,
        cc: &mut C,
        newly_acked: u64,
        is_cwnd_limited: bool,
        after_timeout: bool,
    ) -> AckOutcome {
        self.scoreboard.advance(ack.ack);
        debug_assert!(self.scoreboard.is_empty());
        self.stats.bytes_acked += newly_acked;
        // Karn (RFC 6298 §3).
        let rtt = (!ack.echo_is_retransmission).then(|| now.saturating_sub(ack.echo_sent_at));
        if let Some(sample) = rtt {
            self.rtt.on_sample(sample);
        }
        self.limited_transmit_bytes = 0;
        self.pipe = if after_timeout {
            self.recovery
                .on_cumulative_ack_after_timeout(self.snd_una, self.snd_nxt)
        } else {
            self.recovery.on_cumulative_ack_in_open(self.snd_una);
            self.snd_nxt - self.snd_una
        };
        debug_assert_eq!(
            self.pipe,
            self.recovery
                .pipe(&self.scoreboard, self.snd_una, self.snd_nxt, None)
        );
        // RFC 6298 (5.2) and (5.3).
        self.rto_deadline = if self.snd_una == self.snd_nxt {
            None
        } else {
            Some(now + self.rtt.rto())
        };
        let (delivered_bytes, delivery_rate_bps) = self.log_ack(now, newly_acked, ack, cc);
        cc.on_ack(&AckSample {
            now,
            acked_bytes: newly_acked,
            newly_sacked_bytes: 0,
            rtt,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            bytes_in_flight: self.pipe,
            is_cwnd_limited,
            in_recovery: false,
            mss: self.config.mss,
            delivered_bytes,
            delivery_rate_bps,
        });
        AckOutcome { rtt, newly_acked }
    }

    /// The sent log's part of an ACK that delivered `newly_delivered` bytes
    /// ([`SentLog::on_ack`]). Returns (delivered bytes so far, delivery rate in bit/s), zero
    /// and `None` without log.
    #[inline]
    fn log_ack<C: CongestionControl + ?Sized>(
        &mut self,
        now: SimTime,
        newly_delivered: u64,
        ack: &AckSegment,
        cc: &mut C,
    ) -> (u64, Option<f64>) {
        match self.log.as_deref_mut() {
            Some(log) => log.on_ack(now, newly_delivered, ack, self.snd_una, cc),
            None => (0, None),
        }
    }

    /// The timer fired (calls before the current deadline are ignored): with RACK-TLP, first
    /// the reordering timer, then the probe timer; then the retransmission timer.
    pub fn handle_timeout<C: CongestionControl + ?Sized>(&mut self, now: SimTime, cc: &mut C) {
        if self.rack.is_some() {
            self.handle_rack_timers(now, cc);
        }
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
        self.prr = None;
        self.cwr_high = None;
        self.limited_transmit_bytes = 0;
        cc.on_retransmission_timeout(now, self.flight_size_for_timeout(cc));
        self.recovery.on_timeout(self.snd_una, self.snd_nxt);
        if let Some(rack) = self.rack.as_deref_mut() {
            rack.on_rto();
            rack.take_lost_retransmission();
        }
        if let Some(log) = self.log.as_deref_mut() {
            // Everything outstanding and not SACKed is presumed lost (RFC 6298 §5: go-back-N).
            let mut seq = self.snd_una;
            while seq < self.snd_nxt {
                let hole_end = self
                    .scoreboard
                    .next_sacked_start(seq)
                    .unwrap_or(self.snd_nxt)
                    .min(self.snd_nxt);
                log.mark_lost(seq, hole_end, cc);
                seq = self.scoreboard.next_unsacked(hole_end.max(seq + 1));
            }
        }
        // RFC 6298 (5.5) "back off the timer", (5.6) "Start the retransmission timer, such
        // that it expires after RTO seconds (for the value of RTO after the doubling".
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.rto());
        self.pipe = self.recovery.pipe(
            &self.scoreboard,
            self.snd_una,
            self.snd_nxt,
            self.rack.as_deref(),
        );
    }

    /// RFC 8985 §6.3 (the reordering timer: detection again, which may start fast recovery)
    /// and §7.3 (the probe timer: the next transmission is a probe, and the retransmission
    /// timer is re-armed a full RTO from now).
    fn handle_rack_timers<C: CongestionControl + ?Sized>(&mut self, now: SimTime, cc: &mut C) {
        let in_loss_recovery = self.recovery.phase() != RecoveryPhase::Open;
        let Some(rack) = self.rack.as_deref_mut() else {
            return;
        };
        if rack.reo_deadline().is_some_and(|d| d <= now)
            && rack.on_reo_timeout(now, &self.rtt, in_loss_recovery) > 0
        {
            let entered = self.recovery.on_rack_loss(self.snd_una, self.snd_nxt);
            if entered {
                self.start_fast_recovery(now, cc);
            } else {
                self.respond_to_lost_retransmissions(now, cc);
            }
            self.pipe = self.recovery.pipe(
                &self.scoreboard,
                self.snd_una,
                self.snd_nxt,
                self.rack.as_deref(),
            );
            if let Some((prr, window)) = self.prr.as_mut().filter(|_| entered) {
                // No ACK started this episode: PRR's window with nothing delivered yet.
                *window = self.pipe + prr.on_ack(0, self.pipe, cc.ssthresh(), self.config.mss);
            }
        }
        let Some(rack) = self.rack.as_deref_mut() else {
            return;
        };
        if rack.pto_deadline().is_some_and(|d| d <= now)
            && rack.on_pto()
            && self.snd_una < self.snd_nxt
        {
            // "After attempting to send a loss probe ... the sender MUST re-arm the RTO timer,
            // not the PTO timer, if the FlightSize is not zero."
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    /// Fast recovery starts (RFC 6675 / RFC 6582 entry, or RACK's loss marking): the
    /// controller reduces its window once (from [`TcpCore::ssthresh_basis`]), PRR starts, and
    /// a tail loss probe is no longer tracked (RFC 8985 §7.1).
    fn start_fast_recovery<C: CongestionControl + ?Sized>(&mut self, now: SimTime, cc: &mut C) {
        self.stats.fast_retransmits += 1;
        let basis = self.ssthresh_basis(cc);
        // From CWR the window has been reduced already: Linux sets ssthresh again only from
        // the Open and Disorder states (3.0 `tcp_fastretrans_alert`: `if (icsk_ca_state <
        // TCP_CA_CWR)`; later kernels' `tcp_enter_recovery`: `if (!tcp_in_cwnd_reduction)`).
        if self.cwr_high.take().is_none() {
            cc.on_congestion_event(now, basis);
        }
        if self.config.recovery_window == RecoveryWindow::Prr {
            self.prr = Some((Prr::start(self.flight_size()), 0));
        }
        if let Some(rack) = self.rack.as_deref_mut() {
            rack.on_recovery_start();
            // Lost retransmissions found before this episode are its cause, not a new window.
            rack.take_lost_retransmission();
            self.reduced_at = now;
        }
    }

    /// RFC 8985 §9.3: "In the absence of PRR, when RACK-TLP detects a lost retransmission,
    /// the congestion control MUST trigger an additional congestion response" — once per
    /// window: for a retransmission sent since the controller last reduced its window in this
    /// fast recovery, whose loss says that the reduced window still overflows the path. The
    /// controller's window is the basis (FlightSize can by then hold much more than the path).
    /// With PRR the window already follows what is delivered; after a timeout the window is
    /// one segment: no response then.
    fn respond_to_lost_retransmissions<C: CongestionControl + ?Sized>(
        &mut self,
        now: SimTime,
        cc: &mut C,
    ) {
        let Some(rack) = self.rack.as_deref_mut() else {
            return;
        };
        let Some(sent_at) = rack.take_lost_retransmission() else {
            return;
        };
        if self.recovery.phase() != RecoveryPhase::FastRecovery
            || self.config.recovery_window == RecoveryWindow::Prr
            || sent_at < self.reduced_at
        {
            return;
        }
        rack.on_retransmission_loss_response();
        self.reduced_at = now;
        let basis = self.ssthresh_basis(cc).min(cc.cwnd());
        cc.on_congestion_event(now, basis);
    }

    /// RFC 8985 §7.2: (re)starts the probe timer when `restart` and the sender may probe (not
    /// in fast or RTO recovery, nothing SACKed, data outstanding, an SRTT), and cancels it
    /// when it may not.
    fn schedule_probe(&mut self, now: SimTime, restart: bool) {
        let eligible = self.recovery.phase() == RecoveryPhase::Open
            && self.scoreboard.is_empty()
            && self.snd_una < self.snd_nxt
            && self.rtt.has_sample();
        let Some(rack) = self.rack.as_deref_mut() else {
            return;
        };
        if !eligible {
            rack.cancel_pto();
        } else if restart {
            rack.arm_pto(now, self.rtt.srtt(), self.rto_deadline);
        }
    }

    /// The next segment to send now, if the windows allow one. New data may extend up to
    /// `app_end` (the end of what the owner offers; `u64::MAX` for an unbounded source) and is
    /// logged with `tag`.
    pub fn poll_transmit<C: CongestionControl + ?Sized>(
        &mut self,
        now: SimTime,
        cc: &mut C,
        app_end: u64,
        tag: u64,
    ) -> Option<DataSegment> {
        self.transmit(now, cc, app_end, tag, true, &mut |_| false)
    }

    /// [`TcpCore::poll_transmit`] from a host whose interface queue may be full: `refuses`
    /// is asked, with the segment's payload length, at the moment the segment would be
    /// committed, and when it says yes the segment is not sent (nothing changes: new data
    /// stays unsent, a retransmission stays to be resent) and nothing is returned.
    ///
    /// That is Linux's handling of a qdisc that returns `NET_XMIT_DROP` (3.0, before TSQ and
    /// BQL): `tcp_transmit_skb` calls `tcp_enter_cwr(sk, 1)` and returns the error, and
    /// `tcp_write_xmit` stops with the segment unsent, `snd_nxt` not advanced
    /// (`tcp_xmit_retransmit_queue` likewise stops at a refused retransmission); the next ACK
    /// tries again (net/ipv4/tcp_output.c). `tcp_enter_cwr` (net/ipv4/tcp_input.c), from the
    /// Open or Disorder state only: ssthresh from the controller (here its
    /// `on_congestion_event`, which also sets its window to it), `high_seq = snd_nxt`, the
    /// CWR state until `high_seq` is acknowledged, the window not raised meanwhile. With PRR
    /// (`RecoveryWindow::Prr`) the reduction is spread over the episode by RFC 6937 as
    /// Linux does in CWR from 3.12 (`tcp_cwnd_reduction`; 3.0 used rate halving,
    /// `tcp_cwnd_down`); without it the window drops to the new ssthresh at once, the
    /// response RFC 3168 §6.1.2 gives ECN's congestion signal, which Linux handles by the
    /// same CWR state. No loss is counted and nothing is retransmitted.
    pub fn poll_transmit_gated<C: CongestionControl + ?Sized>(
        &mut self,
        now: SimTime,
        cc: &mut C,
        app_end: u64,
        tag: u64,
        refuses: &mut dyn FnMut(u32) -> bool,
    ) -> Option<DataSegment> {
        self.transmit(now, cc, app_end, tag, true, refuses)
    }

    /// [`TcpCore::poll_retransmission`] with a local queue that may refuse the segment
    /// ([`TcpCore::poll_transmit_gated`]).
    pub fn poll_retransmission_gated<C: CongestionControl + ?Sized>(
        &mut self,
        now: SimTime,
        cc: &mut C,
        app_end: u64,
        tag: u64,
        refuses: &mut dyn FnMut(u32) -> bool,
    ) -> Option<DataSegment> {
        self.transmit(now, cc, app_end, tag, false, refuses)
    }

    /// The local queue refused the segment about to go: Linux's `tcp_enter_cwr` (see
    /// [`TcpCore::poll_transmit_gated`]).
    #[inline(never)]
    fn refused<C: CongestionControl + ?Sized>(&mut self, now: SimTime, cc: &mut C) {
        self.stats.local_refusals += 1;
        self.window_filled = false;
        if self.recovery.phase() != RecoveryPhase::Open || self.cwr_high.is_some() {
            return;
        }
        self.stats.local_cwr += 1;
        let basis = self.ssthresh_basis(cc);
        cc.on_congestion_event(now, basis);
        self.cwr_high = Some(self.snd_nxt);
        if self.config.recovery_window == RecoveryWindow::Prr {
            let mut prr = Prr::start(self.flight_size());
            // No ACK yet: PRR's window with nothing delivered.
            let window = self.pipe + prr.on_ack(0, self.pipe, cc.ssthresh(), self.config.mss);
            self.prr = Some((prr, window));
        }
    }

    /// In CWR (after a local refusal) and not entering fast recovery: Linux ends CWR when
    /// `high_seq` (snd_nxt at its start) is acknowledged (`tcp_try_to_open` ->
    /// `tcp_complete_cwr`, cwnd = min(cwnd, ssthresh)). Apart, out of the ACK path of a sender
    /// that never enters CWR.
    #[inline(never)]
    fn end_cwr_if_acknowledged<C: CongestionControl + ?Sized>(&mut self, now: SimTime, cc: &mut C) {
        let acknowledged = self.cwr_high.is_some_and(|high| self.snd_una >= high);
        if acknowledged && self.recovery.phase() == RecoveryPhase::Open {
            self.cwr_high = None;
            self.prr = None;
            cc.on_recovery_exit(now);
        }
    }

    /// In Linux's CWR state after a local refusal.
    pub fn in_cwr(&self) -> bool {
        self.cwr_high.is_some()
    }

    /// As [`TcpCore::poll_transmit`], but only what recovery resends (and a due tail loss
    /// probe, which may carry the offered new data): when the next segment would be new data
    /// sent by the window, nothing is sent and nothing changes. The decision is the one
    /// `poll_transmit` makes with the same offer, so an owner that places new data itself
    /// (an MPAT aggregate choosing the window) resends exactly what a single sender would.
    pub fn poll_retransmission<C: CongestionControl + ?Sized>(
        &mut self,
        now: SimTime,
        cc: &mut C,
        app_end: u64,
        tag: u64,
    ) -> Option<DataSegment> {
        self.transmit(now, cc, app_end, tag, false, &mut |_| false)
    }

    /// The shortcut outside recovery (`transmit_open`) inline, the rest apart. Generic in
    /// `refuses`, so that the calls without a local queue (`|_| false`) have the question
    /// folded away, in `transmit_general` too.
    #[inline(always)]
    fn transmit<C: CongestionControl + ?Sized, R: FnMut(u32) -> bool + ?Sized>(
        &mut self,
        now: SimTime,
        cc: &mut C,
        app_end: u64,
        tag: u64,
        new_data: bool,
        refuses: &mut R,
    ) -> Option<DataSegment> {
        if self.recovery.phase() == RecoveryPhase::Open && self.transmits_plainly() {
            return self.transmit_open(now, cc, app_end, new_data, refuses);
        }
        self.transmit_general(now, cc, app_end, tag, new_data, refuses)
    }

    /// Whether the shortcuts of `transmit` apply: no RACK-TLP, PRR or sent log.
    #[inline(always)]
    fn transmits_plainly(&self) -> bool {
        self.rack.is_none() && self.prr.is_none() && self.log.is_none() && self.shortcuts_allowed()
    }

    /// [`TcpCore::transmit`] in recovery (the shortcut `transmit_repair` without RACK-TLP,
    /// PRR or the sent log), or with any of them.
    #[inline(never)]
    fn transmit_general<C: CongestionControl + ?Sized, R: FnMut(u32) -> bool + ?Sized>(
        &mut self,
        now: SimTime,
        cc: &mut C,
        app_end: u64,
        tag: u64,
        new_data: bool,
        refuses: &mut R,
    ) -> Option<DataSegment> {
        if self.recovery.phase() != RecoveryPhase::Open && self.transmits_plainly() {
            return self.transmit_repair(now, cc, app_end, new_data, refuses);
        }
        self.window_filled = false;
        let new_len = self.new_data_len(app_end);
        if self.recovery.phase() == RecoveryPhase::Open
            && self.nothing_fits(cc, if new_data { new_len } else { 0 })
        {
            // The per-ACK fast path: outside recovery with no probe due only new data goes
            // (`LossRecovery::next_segment`'s rule (2)), so nothing goes when there is none,
            // it is not wanted or it does not fit the window.
            return None;
        }
        if self.recovery.phase() != RecoveryPhase::Open && self.recovery_window_full(cc) {
            return None;
        }
        // RFC 8985 §7.3: a due tail loss probe goes first, whatever the congestion window:
        // new data if the offered data and the peer's window allow, else the highest segment.
        // The probe is taken once it is sent (or when there is none to send): a refused probe
        // stays due.
        let mut probe_due = false;
        let probe = match self.rack.as_deref() {
            Some(rack) if rack.probe_pending() => {
                probe_due = true;
                if new_len > 0 {
                    Some(Transmission {
                        seq: self.snd_nxt,
                        len: new_len,
                        kind: SegmentKind::NewData,
                    })
                } else {
                    rack.last_segment(self.snd_una)
                        .map(|(seq, end)| Transmission {
                            seq,
                            len: (end - seq) as u32,
                            kind: SegmentKind::Probe,
                        })
                }
            }
            _ => None,
        };
        if probe_due && probe.is_none() {
            if let Some(rack) = self.rack.as_deref_mut() {
                rack.take_probe();
            }
        }
        let t = match probe {
            Some(t) => t,
            // Outside recovery the fast path above has found new data that fits the window:
            // it goes (`next_segment`'s rule (2)).
            None if self.recovery.phase() == RecoveryPhase::Open => Transmission {
                seq: self.snd_nxt,
                len: new_len,
                kind: SegmentKind::NewData,
            },
            None => {
                let t = self.recovery.next_segment(
                    &self.scoreboard,
                    self.snd_una,
                    self.snd_nxt,
                    new_len,
                    self.rack.as_deref(),
                )?;
                if !t.ignores_window()
                    && self.pipe > 0
                    && self.pipe + t.len as u64 > self.send_window(cc)
                {
                    return None;
                }
                if !new_data && t.kind == SegmentKind::NewData {
                    return None;
                }
                t
            }
        };
        if refuses(t.len) {
            self.refused(now, cc);
            return None;
        }
        if probe.is_some() {
            if let Some(rack) = self.rack.as_deref_mut() {
                rack.take_probe();
            }
        }
        let pipe_growth = self.recovery.on_transmit(&t);
        if t.kind == SegmentKind::NewData {
            self.snd_nxt = t.end();
            if self.recovery.phase() == RecoveryPhase::Open && self.recovery.dupacks() > 0 {
                self.limited_transmit_bytes += t.len as u64;
            }
        }
        if let Some((prr, _)) = self.prr.as_mut() {
            prr.on_sent(t.len as u64);
        }
        self.pipe += pipe_growth;
        if let Some(rack) = self.rack.as_deref_mut() {
            rack.on_transmit(now, t.seq, t.end(), t.is_retransmission());
            if probe.is_some() {
                rack.on_probe_sent(now, self.snd_nxt, t.is_retransmission());
            }
            // RACK's lost segments make the increment of RFC 6675 (C.4) inexact: recount.
            self.pipe =
                self.recovery
                    .pipe(&self.scoreboard, self.snd_una, self.snd_nxt, Some(rack));
        }
        debug_assert_eq!(
            self.pipe,
            self.recovery.pipe(
                &self.scoreboard,
                self.snd_una,
                self.snd_nxt,
                self.rack.as_deref()
            )
        );

        if let Some(log) = self.log.as_deref_mut() {
            let (delivered, delivered_at) = (log.delivered, log.delivered_at);
            if t.kind == SegmentKind::NewData {
                log.segments.push_back(SentSegment {
                    seq: t.seq,
                    end: t.end(),
                    tag,
                    sent_at: now,
                    delivered,
                    delivered_at,
                    lost: false,
                });
            } else {
                if t.kind != SegmentKind::Probe {
                    log.mark_lost(t.seq, t.end(), cc);
                }
                let mut i = log.segments.as_slice().partition_point(|s| s.end <= t.seq);
                while let Some(s) = log.segments.get_mut(i).filter(|s| s.seq < t.end()) {
                    s.sent_at = now;
                    s.delivered = delivered;
                    s.delivered_at = delivered_at;
                    i += 1;
                }
            }
        }
        self.count_sent(now, cc, &t);
        if self.rack.is_some() {
            if probe.is_none() && t.kind == SegmentKind::NewData {
                // RFC 8985 §7.2: "after transmitting new data (that was not itself a loss
                // probe)".
                self.schedule_probe(now, true);
            } else if t.is_retransmission() && t.seq <= self.snd_una {
                // A resent first segment gets a full RTO to be acknowledged (Linux's
                // `tcp_xmit_retransmit_queue`), rather than what is left of the one started
                // by the last cumulative ACK: RACK resends lost retransmissions, so an episode
                // can outlast an RTO while it is making progress.
                self.rto_deadline = Some(now + self.rtt.rto());
            }
        }
        // What the fast path at the top of the next call would find, when this call sent
        // by the window, or, recovering, its check of a full window: that call can be
        // skipped.
        self.window_filled = if self.recovery.phase() == RecoveryPhase::Open {
            new_data && self.nothing_fits(cc, self.new_data_len(app_end))
        } else {
            self.recovery_window_full(cc)
        };
        Some(t.sent_at(now))
    }

    /// [`TcpCore::transmit`] in fast recovery or after a timeout, without RACK-TLP, PRR or the
    /// sent log, reduced to what it does then: no probe; unless the window is full and the
    /// fast retransmit is not due, the segment `next_segment` chooses, if it fits the window
    /// (or ignores it) and is wanted; no limited transmit (that is the Open phase's).
    #[inline(always)]
    fn transmit_repair<C: CongestionControl + ?Sized, R: FnMut(u32) -> bool + ?Sized>(
        &mut self,
        now: SimTime,
        cc: &mut C,
        app_end: u64,
        new_data: bool,
        refuses: &mut R,
    ) -> Option<DataSegment> {
        self.window_filled = false;
        if self.recovery_window_full(cc) {
            return None;
        }
        let t = self.recovery.next_segment(
            &self.scoreboard,
            self.snd_una,
            self.snd_nxt,
            self.new_data_len(app_end),
            None,
        )?;
        if !t.ignores_window() && self.pipe > 0 && self.pipe + t.len as u64 > self.send_window(cc) {
            return None;
        }
        if !new_data && t.kind == SegmentKind::NewData {
            return None;
        }
        if refuses(t.len) {
            self.refused(now, cc);
            return None;
        }
        self.pipe += self.recovery.on_transmit(&t);
        if t.kind == SegmentKind::NewData {
            self.snd_nxt = t.end();
        }
        debug_assert_eq!(
            self.pipe,
            self.recovery
                .pipe(&self.scoreboard, self.snd_una, self.snd_nxt, None)
        );
        self.count_sent(now, cc, &t);
        // What the check of a full window at the top of the next call would find.
        self.window_filled = self.recovery_window_full(cc);
        Some(t.sent_at(now))
    }

    /// What sending `t` does besides choosing it: the counters, the controller's hook, and
    /// RFC 6298 (5.1): "if the timer is not running, start it running".
    #[inline(always)]
    fn count_sent<C: CongestionControl + ?Sized>(
        &mut self,
        now: SimTime,
        cc: &mut C,
        t: &Transmission,
    ) {
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += t.len as u64;
        if t.is_retransmission() {
            self.stats.retransmitted_segments += 1;
        }
        cc.on_packet_sent(now, t.len, self.pipe);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    /// [`TcpCore::transmit`] outside recovery without RACK-TLP, PRR or the sent log, the
    /// per-ACK case, reduced to what it does then: only new data goes (`next_segment`'s rule
    /// (2)), if it is wanted and fits the window; it adds its length to `pipe` and is no
    /// retransmission.
    #[inline(always)]
    fn transmit_open<C: CongestionControl + ?Sized, R: FnMut(u32) -> bool + ?Sized>(
        &mut self,
        now: SimTime,
        cc: &mut C,
        app_end: u64,
        new_data: bool,
        refuses: &mut R,
    ) -> Option<DataSegment> {
        self.window_filled = false;
        let len = self.new_data_len(app_end);
        if !new_data || self.nothing_fits(cc, len) {
            return None;
        }
        if refuses(len) {
            self.refused(now, cc);
            return None;
        }
        let seq = self.snd_nxt;
        self.snd_nxt = seq + len as u64;
        if self.recovery.dupacks() > 0 {
            self.limited_transmit_bytes += len as u64;
        }
        self.pipe += len as u64;
        debug_assert_eq!(
            self.pipe,
            self.recovery
                .pipe(&self.scoreboard, self.snd_una, self.snd_nxt, None)
        );
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        cc.on_packet_sent(now, len, self.pipe);
        // RFC 6298 (5.1): "if the timer is not running, start it running".
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        // What the fast path at the top of the next call would find.
        self.window_filled = self.nothing_fits(cc, self.new_data_len(app_end));
        Some(DataSegment {
            seq,
            len,
            sent_at: now,
            is_retransmission: false,
        })
    }

    /// Recovering with a full window: only the fast retransmit and a probe go whatever the
    /// window, and neither is due; any other segment, at least one byte, would not fit.
    #[inline(always)]
    fn recovery_window_full<C: CongestionControl + ?Sized>(&self, cc: &C) -> bool {
        self.pipe > 0
            && self.pipe >= self.send_window(cc)
            && self.rack.as_deref().is_none_or(|r| !r.probe_pending())
            && !self
                .recovery
                .head_retransmit_due(self.snd_una, self.snd_nxt)
    }

    /// Outside recovery, with no probe due, only new data goes (`LossRecovery::next_segment`'s
    /// rule (2)): whether a new segment of `new_len` bytes (0: none is offered or the peer's
    /// window is closed) cannot go.
    #[inline(always)]
    fn nothing_fits<C: CongestionControl + ?Sized>(&self, cc: &C, new_len: u32) -> bool {
        self.rack.as_deref().is_none_or(|r| !r.probe_pending())
            && (new_len == 0
                || (self.pipe > 0 && self.pipe + new_len as u64 > self.send_window(cc)))
    }

    /// Whether the segment the last [`TcpCore::poll_transmit`] returned filled what may be
    /// sent: a call with the same offer, with no input in between, would return nothing
    /// (outside recovery, no probe due, and the next new segment does not fit the window or
    /// there is none; recovering, the window is full and neither the fast retransmit nor a
    /// probe is due). A driver may then skip that call; `false` says nothing.
    #[inline]
    pub fn window_filled(&self) -> bool {
        self.window_filled
    }

    /// Whether [`TcpCore::poll_transmit`] (`new_data`) or [`TcpCore::poll_retransmission`]
    /// with the offer `app_end` would return nothing now, decided as both first decide it
    /// (outside recovery, no probe due, and no new segment wanted or fitting the window): an
    /// owner may skip the call, which would change nothing but clear
    /// [`TcpCore::window_filled`]. `false` says nothing.
    #[inline]
    pub fn sends_nothing<C: CongestionControl + ?Sized>(
        &self,
        cc: &C,
        app_end: u64,
        new_data: bool,
    ) -> bool {
        self.recovery.phase() == RecoveryPhase::Open
            && self.nothing_fits(
                cc,
                if new_data {
                    self.new_data_len(app_end)
                } else {
                    0
                },
            )
    }

    /// What the sent log has to report (nothing without it).
    pub fn poll_event(&mut self) -> Option<CoreEvent> {
        self.log.as_deref_mut()?.events.pop_front()
    }

    /// The sent log, oldest first (empty without it).
    pub fn sent_log(&self) -> impl Iterator<Item = &SentSegment> {
        self.log.iter().flat_map(|l| l.segments.iter())
    }

    /// The earliest deadline of the timers running: the retransmission timer and, with
    /// RACK-TLP, the reordering and probe timers.
    #[inline]
    pub fn poll_timeout(&self) -> Option<SimTime> {
        match self.rack.as_deref() {
            None => self.rto_deadline,
            Some(rack) => self.earliest_with_rack(rack),
        }
    }

    /// [`TcpCore::poll_timeout`] with RACK-TLP's timers.
    #[inline(never)]
    fn earliest_with_rack(&self, rack: &Rack) -> Option<SimTime> {
        /// The earlier of two deadlines, either of which may be unset.
        #[inline(always)]
        fn earlier(a: Option<SimTime>, b: Option<SimTime>) -> Option<SimTime> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        }
        earlier(
            earlier(self.rto_deadline, rack.reo_deadline()),
            rack.pto_deadline(),
        )
    }

    /// RACK-TLP's state and counters, when it is on.
    pub fn rack(&self) -> Option<&Rack> {
        self.rack.as_deref()
    }

    /// Length of the next new segment the offered data and the peer's window allow.
    #[inline]
    fn new_data_len(&self, app_end: u64) -> u32 {
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

    /// Congestion window plus NewReno's inflation; during fast recovery with PRR, the window
    /// PRR allowed at the latest ACK.
    #[inline]
    pub fn send_window<C: CongestionControl + ?Sized>(&self, cc: &C) -> u64 {
        if let Some((_, window)) = self.prr {
            return window;
        }
        inflated_window(cc.cwnd(), self.recovery.window_inflation())
    }

    /// What a fast retransmit's ssthresh is computed from ([`SsthreshBasis`]): RFC 5681 §3.2
    /// step 2, "ssthresh = max (FlightSize / 2, 2*SMSS)" where "data sent via limited
    /// transmit MUST NOT be included in this calculation", capped at the congestion window;
    /// or, as Linux does, the congestion window (`tcp_reno_ssthresh`: `max(cwnd >> 1, 2)`).
    ///
    /// The cap is the one of [`TcpCore::flight_size_for_timeout`], for the same reason: with
    /// SACK, FlightSize counts the bytes SACKed above the holes, which `pipe` (and so the
    /// window) does not, and a loss episode that starts soon after the previous recovery
    /// finds FlightSize well above cwnd. RFC 5681's halving hides it (FlightSize/2 rarely
    /// passes cwnd), but a controller that keeps more, as MulTCP(N) keeps 1 − 1/(2N), then
    /// "reduces" to a larger window: MulTCP(4) on RED went 65152 -> 67707 -> 89425 bytes in
    /// three congestion events, drove the queue into RED's gentle region (11 % dropped) and
    /// took 8.2 Reno shares where ns-2, which reduces from `window()` (tcp/tcp.cc
    /// `slowdown`), gives 3.9 (docs/ns2.md). The cap keeps the RFC's value whenever
    /// FlightSize is within the window (an application-limited sender included).
    pub fn ssthresh_basis<C: CongestionControl + ?Sized>(&self, cc: &C) -> u64 {
        match self.config.ssthresh_basis {
            SsthreshBasis::FlightSize => self
                .flight_size()
                .saturating_sub(self.limited_transmit_bytes)
                .min(cc.cwnd()),
            SsthreshBasis::Cwnd => cc.cwnd(),
        }
    }

    /// New data sent by limited transmit since the last cumulative ACK.
    pub fn limited_transmit_bytes(&self) -> u64 {
        self.limited_transmit_bytes
    }

    /// RFC 5681 FlightSize: sent and not cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// The amount of data in flight a timeout's ssthresh is computed from: FlightSize, capped
    /// at the congestion window (whatever the [`SsthreshBasis`]).
    ///
    /// RFC 5681 eq. (4) uses FlightSize. When the timer fires during SACK recovery, though,
    /// FlightSize also counts every hole and every new segment the recovery sent, and after a
    /// large loss it can be several times the window the path carried: ssthresh would then be
    /// set *above* the window in force, and the next slow start would overshoot again (a CUBIC
    /// flow in the dumbbell timed out once per loss episode this way). The cap keeps the
    /// RFC's value whenever FlightSize is within the window, and otherwise uses the window, as
    /// ns-2 (`window()`) and Linux (`snd_cwnd`) do. Limited transmit does not enter here the
    /// way it did for fast retransmits: the cap already bounds the basis by the window, which
    /// is what excluding limited-transmit data achieves there. What remains different from
    /// Linux: Linux's `tcp_enter_loss` does not lower ssthresh again for a timeout during fast
    /// recovery or for a repeated (backed-off) timeout; here every timeout asks the controller.
    pub fn flight_size_for_timeout<C: CongestionControl + ?Sized>(&self, cc: &C) -> u64 {
        self.flight_size().min(cc.cwnd())
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
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

    pub fn config(&self) -> &TcpConfig {
        &self.config
    }
}

/// `cwnd + inflation`, at least 0: `(cwnd as i128 + inflation as i128).max(0) as u64` in u64
/// arithmetic (a positive inflation wraps past `u64::MAX` as that cast truncates; a negative
/// one stops at 0).
#[inline(always)]
fn inflated_window(cwnd: u64, inflation: i64) -> u64 {
    if inflation >= 0 {
        cwnd.wrapping_add(inflation as u64)
    } else {
        cwnd.saturating_sub(inflation.unsigned_abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::SackBlocks;
    use crate::transport::tcp::tests::TestReno;
    use crate::transport::tcp::{RecoveryWindow, SsthreshBasis};

    const MSS: u32 = 100;

    #[test]
    fn the_inflated_window_is_the_wide_sum_clamped_at_zero() {
        let wide = |c: u64, i: i64| (c as i128 + i as i128).max(0) as u64;
        let cwnds = [0, 1, 1448, 1 << 40, i64::MAX as u64, u64::MAX - 1, u64::MAX];
        let inflations = [
            i64::MIN,
            i64::MIN + 1,
            -(1 << 40),
            -1449,
            -1448,
            -1,
            0,
            1,
            1448,
        ];
        for c in cwnds {
            for i in inflations.into_iter().chain([i64::MAX - 1, i64::MAX]) {
                assert_eq!(inflated_window(c, i), wide(c, i), "{c} {i}");
            }
        }
    }

    fn core() -> (TcpCore, TestReno) {
        let config = TcpConfig {
            mss: MSS,
            initial_window: 4,
            receive_buffer: 1_000_000,
            ..TcpConfig::default()
        };
        (
            TcpCore::new(config).with_sent_log(),
            TestReno::new(MSS, config.initial_window),
        )
    }

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    fn ack(ack: u64, sack: &[(u64, u64)], echo: SimTime) -> AckSegment {
        let mut blocks = SackBlocks::EMPTY;
        for &(a, b) in sack {
            blocks.push(a, b);
        }
        AckSegment {
            ack,
            sack: blocks,
            rwnd: 1_000_000,
            echo_sent_at: echo,
            echo_is_retransmission: false,
        }
    }

    /// Sends what the window allows, tagging new segments `first_tag`, `first_tag + 1`, ...
    fn send(c: &mut TcpCore, cc: &mut TestReno, now: SimTime, first_tag: u64) -> Vec<DataSegment> {
        let mut out = Vec::new();
        while let Some(seg) = c.poll_transmit(now, cc, u64::MAX, first_tag + out.len() as u64) {
            out.push(seg);
        }
        out
    }

    fn events(c: &mut TcpCore) -> Vec<CoreEvent> {
        std::iter::from_fn(|| c.poll_event()).collect()
    }

    /// Linux's `tcp_enter_cwr` on a local refusal (`poll_transmit_gated`): the refused segment
    /// is not sent (snd_nxt stays, nothing is retransmitted or counted lost), ssthresh comes
    /// from the controller and the window is reduced, once per episode; the window does not
    /// grow until `high_seq` is acknowledged, and the refused segment goes out later as new
    /// data. Both recovery windows (with PRR, RFC 6937 spreads the reduction).
    #[test]
    fn a_refused_segment_stays_unsent_and_starts_cwr_once() {
        for window in [RecoveryWindow::Rfc6675, RecoveryWindow::Prr] {
            let config = TcpConfig {
                mss: MSS,
                initial_window: 4,
                receive_buffer: 1_000_000,
                recovery_window: window,
                ..TcpConfig::default()
            };
            let (mut c, mut cc) = (TcpCore::new(config), TestReno::new(MSS, 4));
            assert_eq!(send(&mut c, &mut cc, ms(0), 0).len(), 4);
            c.handle_ack(ms(10), &ack(2 * MSS as u64, &[], ms(0)), &mut cc);
            let cwnd_before = cc.cwnd();
            assert_eq!(cwnd_before, 5 * MSS as u64, "{window:?}");
            // The queue takes two segments, then refuses.
            let mut offered = 0;
            let mut refuses = |len: u32| {
                assert_eq!(len, MSS);
                offered += 1;
                offered > 2
            };
            let mut sent = Vec::new();
            while let Some(seg) = c.poll_transmit_gated(ms(10), &mut cc, u64::MAX, 0, &mut refuses)
            {
                sent.push(seg);
            }
            assert_eq!(sent.len(), 2, "{window:?}");
            assert!(sent.iter().all(|s| !s.is_retransmission));
            let high = c.snd_nxt();
            assert_eq!(high, 6 * MSS as u64, "the refused segment is not sent");
            assert_eq!(c.stats().local_refusals, 1);
            assert_eq!(c.stats().local_cwr, 1);
            assert!(c.in_cwr());
            assert_eq!(cc.congestion_events, 1);
            // ssthresh from the controller (TestReno: half the 4 segments in flight), the
            // window reduced.
            assert_eq!(cc.ssthresh(), 2 * MSS as u64, "{window:?}");
            assert!(cc.cwnd() < cwnd_before);
            assert_eq!(c.stats().retransmitted_segments, 0);
            assert_eq!(c.stats().fast_retransmits, 0);
            // ACKs below high_seq: still CWR, the controller's window does not grow.
            c.handle_ack(ms(20), &ack(5 * MSS as u64, &[], ms(0)), &mut cc);
            assert!(c.in_cwr(), "{window:?}");
            assert_eq!(cc.cwnd(), 2 * MSS as u64);
            assert!(cc.last_sample.is_some_and(|s| s.in_recovery));
            // The window has room again and the queue refuses again, in the same episode: no
            // second reduction.
            assert!(c
                .poll_transmit_gated(ms(20), &mut cc, u64::MAX, 0, &mut |_| true)
                .is_none());
            assert_eq!(c.stats().local_refusals, 2, "{window:?}");
            assert!(c.stats().local_cwr == 1 && cc.congestion_events == 1);
            assert_eq!(c.snd_nxt(), high);
            // high_seq acknowledged: CWR ends; the next segment is the refused one, new data.
            c.handle_ack(ms(30), &ack(high, &[], ms(10)), &mut cc);
            assert!(!c.in_cwr(), "{window:?}");
            let next = send(&mut c, &mut cc, ms(30), 0);
            assert_eq!(next.first().map(|s| s.seq), Some(high), "{window:?}");
            assert!(next.iter().all(|s| !s.is_retransmission));
            assert_eq!(c.stats().retransmitted_segments, 0);
        }
    }

    #[test]
    fn acknowledged_segments_come_back_with_their_tags_and_leave_the_log() {
        let (mut c, mut cc) = core();
        assert_eq!(send(&mut c, &mut cc, ms(0), 10).len(), 4);
        assert_eq!(
            c.sent_log().map(|s| s.tag).collect::<Vec<_>>(),
            [10, 11, 12, 13]
        );
        c.handle_ack(ms(40), &ack(200, &[], ms(0)), &mut cc);
        assert_eq!(
            events(&mut c),
            [
                CoreEvent::Acked {
                    seq: 0,
                    end: 100,
                    tag: 10
                },
                CoreEvent::Acked {
                    seq: 100,
                    end: 200,
                    tag: 11
                },
            ]
        );
        assert_eq!(cc.tagged_acks, [(10, 100), (11, 100)]);
        assert_eq!(c.sent_log().map(|s| s.seq).collect::<Vec<_>>(), [200, 300]);
        assert!(cc.tagged_losses.is_empty());
    }

    #[test]
    fn a_retransmitted_hole_is_reported_lost_once_with_its_tag() {
        let (mut c, mut cc) = core();
        send(&mut c, &mut cc, ms(0), 0);
        // Segment 0 lost; 1, 2, 3 SACKed: three duplicate ACKs start recovery (RFC 6675).
        c.handle_ack(ms(40), &ack(0, &[(100, 200)], ms(0)), &mut cc);
        c.handle_ack(ms(41), &ack(0, &[(100, 300)], ms(0)), &mut cc);
        c.handle_ack(ms(42), &ack(0, &[(100, 400)], ms(0)), &mut cc);
        assert!(c.in_recovery());
        let resent = send(&mut c, &mut cc, ms(42), 100);
        assert_eq!((resent[0].seq, resent[0].is_retransmission), (0, true));
        let ev = events(&mut c);
        assert_eq!(
            ev[0],
            CoreEvent::Lost {
                seq: 0,
                end: 100,
                tag: 0
            }
        );
        assert_eq!(cc.tagged_losses, [(0, 100)]);
        // A timeout reports the new segment recovery sent with tag 101 (outstanding, not
        // SACKed) but not segment 0 again.
        c.handle_timeout(ms(5000), &mut cc);
        assert_eq!(cc.tagged_losses, [(0, 100), (101, 100)]);
        // The repair acknowledges everything, tags in sequence order.
        c.handle_ack(ms(5040), &ack(400, &[], ms(42)), &mut cc);
        let acked: Vec<u64> = cc.tagged_acks.iter().map(|a| a.0).collect();
        assert_eq!(&acked[..4], [0, 1, 2, 3]);
    }

    #[test]
    fn a_timeout_reports_every_outstanding_segment_not_sacked() {
        let (mut c, mut cc) = core();
        send(&mut c, &mut cc, ms(0), 0);
        // Only segment 2 arrives (one duplicate ACK, no recovery).
        c.handle_ack(ms(40), &ack(0, &[(200, 300)], ms(0)), &mut cc);
        assert!(!c.in_recovery());
        c.handle_timeout(c.poll_timeout().unwrap(), &mut cc);
        assert_eq!(cc.tagged_losses, [(0, 100), (1, 100), (3, 100)]);
        assert_eq!(
            events(&mut c),
            [
                CoreEvent::Lost {
                    seq: 0,
                    end: 100,
                    tag: 0
                },
                CoreEvent::Lost {
                    seq: 100,
                    end: 200,
                    tag: 1
                },
                CoreEvent::Lost {
                    seq: 300,
                    end: 400,
                    tag: 3
                },
            ]
        );
    }

    #[test]
    fn delivery_rate_is_bytes_delivered_since_the_segment_was_sent_over_the_time_taken() {
        let (mut c, mut cc) = core();
        send(&mut c, &mut cc, ms(0), 0);
        // First ACK: 100 bytes delivered over the 10 ms since the segment went out (the log's
        // delivered clock starts at 0): 80 kbit/s.
        c.handle_ack(ms(10), &ack(100, &[], ms(0)), &mut cc);
        let s = cc.last_sample.unwrap();
        assert_eq!(s.delivered_bytes, 100);
        assert_eq!(s.delivery_rate_bps, Some(100.0 * 8.0 / 0.010));
        // Segments sent at 10 ms carry (delivered 100, at 10 ms). Their ACK at 30 ms, after
        // 400 bytes in all: (400 - 100) bytes over 20 ms.
        send(&mut c, &mut cc, ms(10), 4);
        c.handle_ack(ms(20), &ack(300, &[], ms(0)), &mut cc);
        c.handle_ack(ms(30), &ack(500, &[], ms(10)), &mut cc);
        let s = cc.last_sample.unwrap();
        assert_eq!(s.delivered_bytes, 500);
        assert_eq!(s.delivery_rate_bps, Some(400.0 * 8.0 / 0.020));
    }

    #[test]
    fn without_the_log_nothing_is_reported() {
        let config = TcpConfig {
            mss: MSS,
            ..TcpConfig::default()
        };
        let mut c = TcpCore::new(config);
        let mut cc = TestReno::new(MSS, 10);
        send(&mut c, &mut cc, ms(0), 0);
        c.handle_ack(ms(10), &ack(300, &[], ms(0)), &mut cc);
        assert_eq!(c.poll_event(), None);
        assert_eq!(c.sent_log().count(), 0);
        let s = cc.last_sample.unwrap();
        assert_eq!((s.delivered_bytes, s.delivery_rate_bps), (0, None));
        assert!(cc.tagged_acks.is_empty());
    }

    /// A core with a window of `segments` full of data in flight (sent at 0 ms).
    fn full_window(config: TcpConfig, segments: u64) -> (TcpCore, TestReno) {
        let mut c = TcpCore::new(config);
        let mut cc = TestReno::new(MSS, segments as u32);
        assert_eq!(send(&mut c, &mut cc, ms(0), 0).len() as u64, segments);
        (c, cc)
    }

    fn config_40(basis: SsthreshBasis) -> TcpConfig {
        TcpConfig {
            mss: MSS,
            initial_window: 40,
            receive_buffer: 1_000_000,
            ssthresh_basis: basis,
            ..TcpConfig::default()
        }
    }

    /// Segment 0 of 40 lost; segments 1, 2, 3 SACKed one ACK at a time. The first two
    /// duplicates each let limited transmit send a new segment, the third starts recovery.
    fn lose_the_first_of_40(c: &mut TcpCore, cc: &mut TestReno) -> u64 {
        let mut sent = 0;
        for k in 1..=3u64 {
            c.handle_ack(ms(40 + k), &ack(0, &[(100, 100 + 100 * k)], ms(0)), cc);
            sent += send(c, cc, ms(40 + k), 100).len() as u64;
        }
        sent
    }

    #[test]
    fn ssthresh_bug_limited_transmit_data_counted_in_flight_size() {
        // Regression: a window of 40 fell to 21 (FlightSize 42 with the two limited-transmit
        // segments), where RFC 5681 §3.2 step 2 (and Linux, from cwnd) give 20.
        let (mut c, mut cc) = full_window(config_40(SsthreshBasis::FlightSize), 40);
        lose_the_first_of_40(&mut c, &mut cc);
        assert!(c.in_recovery());
        assert_eq!(
            c.flight_size(),
            42 * 100,
            "two limited-transmit segments in flight"
        );
        assert_eq!(cc.last_flight, 40 * 100);
        assert_eq!(cc.ssthresh(), 20 * 100);
    }

    #[test]
    fn linux_basis_takes_ssthresh_from_cwnd() {
        let (mut c, mut cc) = full_window(config_40(SsthreshBasis::Cwnd), 40);
        lose_the_first_of_40(&mut c, &mut cc);
        assert_eq!(cc.last_flight, 40 * 100);
        assert_eq!(cc.ssthresh(), 20 * 100);
        // The two rules differ when the window was not full: an application-limited sender
        // with 10 segments in flight under a window of 40.
        let mut c = TcpCore::new(config_40(SsthreshBasis::Cwnd));
        let mut cc = TestReno::new(MSS, 40);
        for i in 0..10 {
            c.poll_transmit(ms(0), &mut cc, 1_000, i).unwrap();
        }
        assert_eq!(c.ssthresh_basis(&cc), 40 * 100);
        let mut rfc = TcpCore::new(config_40(SsthreshBasis::FlightSize));
        for i in 0..10 {
            rfc.poll_transmit(ms(0), &mut cc, 1_000, i).unwrap();
        }
        assert_eq!(rfc.ssthresh_basis(&cc), 10 * 100);
    }

    #[test]
    fn limited_transmit_count_restarts_at_a_cumulative_ack() {
        let (mut c, mut cc) = full_window(config_40(SsthreshBasis::FlightSize), 40);
        c.handle_ack(ms(41), &ack(0, &[(100, 200)], ms(0)), &mut cc);
        send(&mut c, &mut cc, ms(41), 100);
        assert_eq!(c.limited_transmit_bytes(), 100);
        // Segment 0 was only late: the cumulative ACK ends the duplicate run.
        c.handle_ack(ms(42), &ack(200, &[], ms(0)), &mut cc);
        assert_eq!(c.limited_transmit_bytes(), 0);
        assert!(!c.in_recovery());
    }

    #[test]
    fn prr_spreads_the_reduction_over_the_recovery() {
        // RFC 6937 §6: one loss in a window of 20, ssthresh 10. RFC 6675 sends nothing until
        // pipe has fallen to ssthresh; PRR sends on every other ACK from the start.
        let run = |window: RecoveryWindow| {
            let config = TcpConfig {
                mss: MSS,
                initial_window: 20,
                receive_buffer: 1_000_000,
                recovery_window: window,
                ..TcpConfig::default()
            };
            let mut c = TcpCore::new(config);
            let mut cc = TestReno::new(MSS, 20);
            send(&mut c, &mut cc, ms(0), 0);
            let mut per_ack = Vec::new();
            for k in 1..=19u64 {
                let at = ms(40 + k);
                c.handle_ack(at, &ack(0, &[(100, 100 + 100 * k)], ms(0)), &mut cc);
                let out = send(&mut c, &mut cc, at, 100);
                per_ack.push(
                    out.iter()
                        .map(|s| if s.is_retransmission { 'R' } else { 'N' })
                        .collect::<String>(),
                );
            }
            per_ack
        };
        // Limited transmit on the first two duplicates, the fast retransmit on the third.
        let rfc = run(RecoveryWindow::Rfc6675);
        assert_eq!(&rfc[..3], ["N", "N", "R"]);
        // 22 segments in flight (two by limited transmit) and ssthresh 10: nine silent ACKs,
        // then one new segment per ACK.
        assert!(rfc[3..12].iter().all(String::is_empty), "{rfc:?}");
        assert!(rfc[12..].iter().all(|s| s == "N"), "{rfc:?}");
        // PRR: RecoverFS = 22 segments, so CEIL(delivered * 10 / 22) segments - prr_out
        // allows a segment on about every other ACK while pipe > ssthresh (two silent ACKs
        // where 10/22 accumulates to a whole segment late); at pipe = ssthresh nothing, below
        // it one segment per segment delivered.
        let prr = run(RecoveryWindow::Prr);
        assert_eq!(&prr[..3], ["N", "N", "R"]);
        let sent: Vec<usize> = prr[3..].iter().map(String::len).collect();
        assert_eq!(
            sent,
            [0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 1],
            "{prr:?}"
        );
        assert!(prr.iter().all(|s| s.len() <= 1), "no burst: {prr:?}");
    }

    /// Four segments in a fixed window of four at 0 ms; segment 0 acknowledged at 40 ms (SRTT
    /// 40 ms, RTO 200 ms), which lets segment 4 go; then silence.
    fn silent_after_one_ack(app_end: u64) -> (TcpCore, TestReno) {
        let config = TcpConfig {
            mss: MSS,
            initial_window: 4,
            receive_buffer: 1_000_000,
            rack_tlp: true,
            ..TcpConfig::default()
        };
        let mut c = TcpCore::new(config);
        let mut cc = TestReno::fixed(MSS, 400);
        let mut sent = 0;
        while c.poll_transmit(ms(0), &mut cc, app_end, 0).is_some() {
            sent += 1;
        }
        assert_eq!(sent, 4);
        c.handle_ack(ms(40), &ack(100, &[], ms(0)), &mut cc);
        while c.poll_transmit(ms(40), &mut cc, app_end, 0).is_some() {}
        (c, cc)
    }

    #[test]
    fn a_tail_loss_probe_sends_new_data_beyond_the_window_then_the_rto_is_rearmed() {
        let (mut c, mut cc) = silent_after_one_ack(u64::MAX);
        assert_eq!(c.snd_nxt(), 500);
        // RFC 8985 §7.2: PTO = 2 SRTT from the last new data, before the RTO (240 ms).
        assert_eq!(c.poll_timeout(), Some(ms(120)));
        assert_eq!(c.rack().unwrap().pto_deadline(), Some(ms(120)));
        c.handle_timeout(ms(119), &mut cc);
        assert_eq!(c.poll_transmit(ms(119), &mut cc, u64::MAX, 0), None);
        c.handle_timeout(ms(120), &mut cc);
        // §7.3: one new segment although the window is full, and the RTO re-armed from now.
        let probe = c.poll_transmit(ms(120), &mut cc, u64::MAX, 0).unwrap();
        assert_eq!((probe.seq, probe.is_retransmission), (500, false));
        assert_eq!(c.poll_transmit(ms(120), &mut cc, u64::MAX, 0), None);
        assert_eq!(c.rack().unwrap().tlp_end_seq(), Some(600));
        assert_eq!(c.poll_timeout(), Some(ms(320)));
        assert_eq!(c.stats().timeouts, 0);
        // No second probe while this one is unacknowledged: the RTO fires next.
        c.handle_timeout(ms(320), &mut cc);
        assert_eq!(c.stats().timeouts, 1);
        assert_eq!(c.rack().unwrap().tlp_end_seq(), None);
    }

    #[test]
    fn without_new_data_the_probe_resends_the_highest_segment() {
        let (mut c, mut cc) = silent_after_one_ack(500);
        c.handle_timeout(ms(120), &mut cc);
        let probe = c.poll_transmit(ms(120), &mut cc, 500, 0).unwrap();
        assert_eq!(
            (probe.seq, probe.len, probe.is_retransmission),
            (400, MSS, true)
        );
        assert_eq!(c.stats().retransmitted_segments, 1);
        // A second copy above HighRxt adds nothing to pipe, as the rescue retransmission.
        assert_eq!(c.bytes_in_flight(), 400);
        // An ACK triggered by the probe (its echo) covers the probe: the original of segment 4,
        // or the ACKs of segments 1 to 4, were lost, and the probe repaired that (§7.4).
        let mut a = ack(500, &[], ms(120));
        a.echo_is_retransmission = true;
        c.handle_ack(ms(160), &a, &mut cc);
        assert_eq!(cc.congestion_events, 1);
        assert_eq!(cc.recovery_exits, 1);
        assert_eq!(c.rack().unwrap().stats().probe_recoveries, 1);
        assert_eq!(c.poll_timeout(), None);
    }

    #[test]
    fn the_reordering_timer_starts_fast_recovery() {
        let (mut c, mut cc) = silent_after_one_ack(u64::MAX);
        // Segment 2 SACKed at 45 ms (sent at 0 ms): segment 1, sent with it but lower, is
        // lost once RACK.rtt (45 ms) and min_RTT / 4 (10 ms) have passed since 0 ms.
        c.handle_ack(ms(45), &ack(100, &[(200, 300)], ms(0)), &mut cc);
        assert!(!c.in_recovery());
        assert_eq!(
            c.rack().unwrap().pto_deadline(),
            None,
            "SACKed data: no probe"
        );
        assert_eq!(c.poll_timeout(), Some(ms(55)));
        c.handle_timeout(ms(55), &mut cc);
        assert!(c.in_recovery());
        assert_eq!(cc.congestion_events, 1);
        assert_eq!(c.stats().fast_retransmits, 1);
        let rtx = c.poll_transmit(ms(55), &mut cc, u64::MAX, 0).unwrap();
        assert_eq!((rtx.seq, rtx.is_retransmission), (100, true));
        assert_eq!(c.rack().unwrap().stats().reo_timeouts, 1);
        // Resending the first unacknowledged segment restarted the retransmission timer (it
        // ran from the ACK at 40 ms, to 240 ms).
        assert_eq!(c.poll_timeout(), Some(ms(255)));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

        /// The shortcuts of the common cases (`transmit` outside recovery and repairing
        /// without RACK-TLP, PRR or the sent log, `handle_ack` without holes in the Open phase
        /// and after a timeout) do what the general path does:
        /// a core that takes them, one that never does (`general_only`) and one with the sent
        /// log send the same segments and keep the same state (recovery, scoreboard, `pipe`,
        /// timers, estimator, counters, the controller's window), given the same ACKs, those of
        /// a receiver that gets what they send but the segments a random loss pattern drops
        /// (and timeouts when nothing is left in flight), with or without SACK and with a
        /// finite or unbounded offer, a window of whole segments or not, asked now and then
        /// only for what recovery resends.
        #[test]
        fn the_shortcuts_do_what_the_general_path_does(
            sack in proptest::bool::ANY,
            app_end in proptest::prop_oneof![proptest::strategy::Just(u64::MAX), 1u64..20_000],
            loss_percent in 0u8..40,
            draws in proptest::collection::vec(0u8..100, 64),
            // A window that is not a whole number of segments leaves room for less than one.
            window_extra in proptest::prop_oneof![proptest::strategy::Just(0u64), 1..MSS as u64],
        ) {
            let config = TcpConfig {
                mss: MSS,
                initial_window: 4,
                receive_buffer: 1_000_000,
                sack,
                ..TcpConfig::default()
            };
            let window = 4 * MSS as u64 + window_extra;
            let mut plain = (TcpCore::new(config), TestReno::with_window(MSS, window));
            let mut general = (TcpCore::new(config), TestReno::with_window(MSS, window));
            general.0.general_only = true;
            let mut logged = (
                TcpCore::new(config).with_sent_log(),
                TestReno::with_window(MSS, window),
            );
            let mut receiver = crate::transport::tcp::TcpReceiver::new(&config);
            let mut in_flight = std::collections::VecDeque::new();
            let mut now = ms(0);
            let mut sent = 0usize;
            for step in 0..300 {
                // Now and then only what recovery resends (an owner that places new data
                // itself), else whatever may go.
                let resend_only = draws[step % draws.len()] % 5 == 0;
                loop {
                    // `sends_nothing` says so only when the call then returns nothing.
                    let nothing = [
                        plain.0.sends_nothing(&plain.1, app_end, !resend_only),
                        logged.0.sends_nothing(&logged.1, app_end, !resend_only),
                        general.0.sends_nothing(&general.1, app_end, !resend_only),
                    ];
                    let (x, y, z) = if resend_only {
                        (
                            plain.0.poll_retransmission(now, &mut plain.1, app_end, 0),
                            logged.0.poll_retransmission(now, &mut logged.1, app_end, 0),
                            general.0.poll_retransmission(now, &mut general.1, app_end, 0),
                        )
                    } else {
                        (
                            plain.0.poll_transmit(now, &mut plain.1, app_end, 0),
                            logged.0.poll_transmit(now, &mut logged.1, app_end, 0),
                            general.0.poll_transmit(now, &mut general.1, app_end, 0),
                        )
                    };
                    proptest::prop_assert_eq!(x, y);
                    proptest::prop_assert_eq!(x, z);
                    proptest::prop_assert!(
                        nothing.iter().all(|&n| !n || x.is_none()),
                        "sends_nothing, yet {:?} went",
                        x
                    );
                    proptest::prop_assert_eq!(plain.0.window_filled(), logged.0.window_filled());
                    proptest::prop_assert_eq!(plain.0.window_filled(), general.0.window_filled());
                    let Some(seg) = x else { break };
                    if draws[sent % draws.len()] >= loss_percent {
                        in_flight.push_back(seg);
                    }
                    sent += 1;
                }
                now += ms(1);
                if let Some(seg) = in_flight.pop_front() {
                    receiver.handle_data(now, &seg);
                    while let Some(ack) = receiver.poll_transmit(now) {
                        plain.0.handle_ack(now, &ack, &mut plain.1);
                        logged.0.handle_ack(now, &ack, &mut logged.1);
                        general.0.handle_ack(now, &ack, &mut general.1);
                    }
                } else if let Some(t) = plain.0.poll_timeout() {
                    now = now.max(t);
                    plain.0.handle_timeout(now, &mut plain.1);
                    logged.0.handle_timeout(now, &mut logged.1);
                    general.0.handle_timeout(now, &mut general.1);
                } else {
                    break;
                }
                for other in [&logged, &general] {
                    proptest::prop_assert_eq!(
                        (plain.0.snd_una(), plain.0.snd_nxt(), plain.0.bytes_in_flight()),
                        (other.0.snd_una(), other.0.snd_nxt(), other.0.bytes_in_flight())
                    );
                    proptest::prop_assert_eq!(plain.0.poll_timeout(), other.0.poll_timeout());
                    proptest::prop_assert_eq!(plain.0.recovery(), other.0.recovery());
                    proptest::prop_assert_eq!(plain.0.scoreboard(), other.0.scoreboard());
                    proptest::prop_assert_eq!(plain.0.rtt_estimator(), other.0.rtt_estimator());
                    proptest::prop_assert_eq!(plain.0.stats(), other.0.stats());
                    proptest::prop_assert_eq!(
                        plain.0.limited_transmit_bytes(),
                        other.0.limited_transmit_bytes()
                    );
                    proptest::prop_assert_eq!(
                        (plain.1.cwnd(), plain.1.ssthresh()),
                        (other.1.cwnd(), other.1.ssthresh())
                    );
                }
            }
        }
    }
}
