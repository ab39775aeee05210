//! RACK-TLP loss detection (RFC 8985) for [`super::TcpCore`], used when
//! [`super::TcpConfig::rack_tlp`] and [`super::TcpConfig::sack`] are both on.
//!
//! RFC 8985 needs SACK (§4: "The connection MUST use selective acknowledgment (SACK)
//! options"), as Linux does (`tcp_is_rack` is only consulted for SACK connections): without
//! SACK `rack_tlp` is ignored and NewReno (RFC 6582) runs as before.
//!
//! # What [`Rack`] keeps
//!
//! - **Per-segment records** (§6.1): one per segment sent as new data, in sequence order,
//!   trimmed at `snd_una`, with the time of its most recent (re)transmission (`xmit_ts`), the
//!   number of transmissions, and whether it is SACKed, lost (marked by RACK, sticky until
//!   delivered) and *pending* (lost and not retransmitted since). A retransmission that
//!   covers part of a record counts as a retransmission of the whole record (records are never
//!   split; recovery's segments are aligned with them except after odd-sized segments).
//! - **A transmission queue in time order**: one entry per (re)transmission of a record. Loss
//!   detection walks it from the oldest entry, dropping entries that are stale (the record was
//!   delivered, resent or already marked lost), and stops at the first entry sent after the
//!   RACK reference or still inside its deadline — the role of Linux's `tsorted_sent_queue`.
//!   Per ACK this costs the entries it drops plus the transmissions made at the very instant
//!   of the reference segment; without loss it is O(1).
//! - **The lost list**: the lost records in sequence order (usually few), from which
//!   [`super::recovery::LossRecovery`] learns what to resend and how much is out of the pipe.
//!
//! Nothing allocates once the queues have grown to the window's size.
//!
//! # RACK (§6.2), on every ACK
//!
//! 1. `RACK.min_RTT` is the RTT estimator's minimum (a global minimum; §6.2 step 1 suggests
//!    a windowed filter, Linux uses a 300 s window).
//! 2. Among the records this ACK newly delivers (cumulatively or by SACK), those retransmitted
//!    are ignored when the ACK's echo of the send time (which stands for the TSecr of the
//!    timestamp option, RFC 7323) is older than their latest transmission, or when their
//!    latest transmission is less than `min_RTT` old. Of the rest, the most recently sent
//!    (send time, ties broken by `end_seq`) gives `RACK.rtt` (now minus its send time), and
//!    becomes `RACK.xmit_ts` / `RACK.end_seq` if it was sent after the current reference.
//! 3. A newly delivered record never retransmitted that lies below `RACK.fack` (the highest
//!    end delivered before this ACK) sets `RACK.reordering_seen`.
//! 4. `RACK.reo_wnd = min(reo_wnd_mult · min_RTT / 4, SRTT)` with `reo_wnd_mult = 1`: plait's
//!    receiver sends no DSACK (RFC 2883), so the DSACK-driven growth of the window (and its
//!    16-recovery persistence) never happens. As the RFC says, it is zero when no reordering
//!    has been seen and either the sender is in fast or RTO recovery or at least DupThresh
//!    segments are SACKed.
//! 5. Every record not yet delivered nor already pending, sent before the reference
//!    (`xmit_ts < RACK.xmit_ts`, or equal with a lower `end_seq`), is lost once
//!    `now >= xmit_ts + RACK.rtt + RACK.reo_wnd`. Otherwise the **reordering timer** is armed
//!    for the earliest such deadline (the RFC and Linux arm it for the latest one; the
//!    earliest wakes up in time for every record, and a fire that finds the next record not
//!    yet due simply re-arms). Its expiry runs the same detection (§6.3).
//!
//! A record marked lost is pending until it is retransmitted, even if it had been
//! retransmitted before: this is how a lost retransmission is found without waiting for the
//! retransmission timer. A retransmission marked lost again sets it pending again.
//!
//! # TLP (§7)
//!
//! - **Scheduling** (§7.2): after new data is sent (not itself a probe) or an ACK
//!   cumulatively acknowledges new data, when the sender is not in fast or RTO recovery, has
//!   nothing SACKed, has data outstanding and has an SRTT, the probe timer is set to
//!   `PTO = 2·SRTT`, plus `TLP.max_ack_delay` when one segment is in flight, and no later than
//!   the retransmission timer's expiry. `TLP.max_ack_delay` is the worst-case delayed-ACK
//!   timer `WCDelAckT` = 200 ms, or the configured receiver's `delayed_ack_timeout` if that
//!   is longer. An ACK after which the conditions no longer hold cancels the timer. The timer
//!   is only armed when a probe may be sent at its expiry (no probe in flight, an RTT sample
//!   since the last probe, §7.3), so that a probe is never skipped (the RFC arms it anyway and
//!   re-arms the retransmission timer when the probe is skipped: that would let a stream of
//!   skipped probes push the retransmission timer back indefinitely).
//! - **Probe** (§7.3): one previously unsent segment if the offered data and the peer's
//!   window allow, else the highest-sequence segment sent, whatever the congestion window;
//!   `TLP.end_seq = SND.NXT`; the retransmission timer is re-armed to a full RTO from now.
//! - **Detecting a loss the probe repaired** (§7.4): when an ACK first covers `TLP.end_seq` of
//!   a retransmitted probe, the RFC looks for a DSACK of the probe ("no loss") and otherwise
//!   "MUST assume that either the original data segment, the TLP retransmission, or a
//!   corresponding ACK was lost". plait has no DSACK; the ACK's echo stands in for it: if the
//!   ACK was triggered by the probe (its echo is the probe's send time), the probe delivered
//!   data the receiver did not have — the original, or its ACK, was lost — and the controller
//!   gets one congestion event (`on_congestion_event` immediately followed by
//!   `on_recovery_exit`, as Linux's `tcp_process_tlp_ack` enters and leaves CWR at once). If
//!   it echoes another segment the original arrived and the probe was superfluous: no
//!   response. (An original delivered whose ACK was only delayed past the probe's arrival is
//!   taken as a loss: the conservative side of the RFC's rule.) `TLP.end_seq` is also cleared
//!   when fast recovery or a timeout starts (§7.1).
//!
//! # Beside the duplicate-ACK rules; what the sender does with RACK's losses
//!
//! RACK runs beside RFC 6675's `IsLost` and DupThresh rules rather than instead of them (as
//! [`super::TcpConfig::rack_tlp`] says): recovery starts when either detects a loss (one
//! `on_congestion_event` per episode, as before), and its retransmission rules are RFC 6675's
//! extended as in [`super::recovery`] (RACK's lost segments resent first, lost
//! retransmissions included, and counted out of `pipe` while they wait). With `reo_wnd`
//! zeroed once DupThresh segments are SACKed the two agree in the common case; they differ
//! where RACK sees more (lost retransmissions, tails) and under reordering, where DupThresh
//! still fires when three segments overtake a late one.
//!
//! Two consequences of repairing lost retransmissions instead of waiting for the timer are
//! handled in [`super::core`]:
//!
//! - **A lost retransmission is congestion in a new window** (§9.3: "In the absence of PRR
//!   ..., when RACK-TLP detects a lost retransmission, the congestion control MUST trigger
//!   an additional congestion response", once per window). Without PRR the controller hears
//!   `on_congestion_event` again for a retransmission sent since its last reduction in the
//!   episode and found lost ([`RackStats::retransmission_loss_responses`]). Without it the
//!   RFC 6675 window, which takes lost segments out of the pipe, keeps the post-reduction rate
//!   however much is lost: a CUBIC flow that overshot by 3× in slow start resent its lost
//!   retransmissions in synchronised bursts into a full queue for seconds. With PRR (and
//!   Linux) the sending follows what is delivered and no further response is made.
//! - **The retransmission timer restarts when the first segment is resent** (Linux's
//!   `tcp_xmit_retransmit_queue`; RFC 6298 only starts a stopped timer): an episode in which
//!   RACK repairs lost retransmissions can outlast one RTO counted from the last cumulative
//!   ACK while it is making progress; without the restart such timeouts were the most common
//!   kind in a 32-flow CUBIC dumbbell (1152 of them, against 17 with it).
//!
//! # Differences from Linux (`tcp_rack_detect_loss`, `tcp_rack_advance`,
//! `tcp_rack_reo_timeout` in net/ipv4/tcp_recovery.c; `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe` in net/ipv4/tcp_output.c; `tcp_process_tlp_ack` in tcp_input.c)
//!
//! - Linux since 5.10 uses RACK *instead of* RFC 6675 loss marking; here both run.
//! - Linux's DupThresh for the zero window is its adaptive `tp->reordering`; here the
//!   configured `dupack_threshold`. No DSACK, so no window growth (`reo_wnd_steps = 1`).
//! - Linux arms the reordering timer for the latest deadline plus 2 jiffies; here the
//!   earliest, exactly.
//! - Linux's PTO is `2·SRTT` plus `TCP_RTO_MIN` (200 ms) with one packet out and 2 jiffies
//!   otherwise; here RFC 8985's `2·SRTT` (+ `TLP.max_ack_delay` with one segment out).
//! - After a probe Linux re-arms the RTO relative to the head's send time; here to a full RTO
//!   from the probe, as the RFC says.
//! - On an RTO Linux marks lost only the head and the segments older than `RACK.rtt`
//!   (§6.3); here the RTO keeps RFC 6675 §5.1 / RFC 6298 go-back-N and RACK forgets its lost
//!   marks (every outstanding segment is lost then).
//! - The TLP loss response uses the ACK echo instead of DSACK (above).
//! - Linux makes no further congestion response for lost retransmissions (it uses PRR); here
//!   one is made per window when PRR is off (§9.3, above).
//! - Linux retransmits lost segments wherever they lie; here, as in RFC 6675 recovery, a
//!   fast-recovery episode resends only below its recovery point, and what was lost above it
//!   starts the next episode.

use std::collections::VecDeque;

use crate::packet::AckSegment;
use crate::time::SimTime;
use crate::transport::rtt::RttEstimator;

use super::sack::Scoreboard;
use super::TcpConfig;

/// RFC 8985 `WCDelAckT`: the worst-case delayed-ACK timer a probe allows for when one segment
/// is in flight.
pub const WC_DEL_ACK_T: SimTime = SimTime::from_millis(200);

/// What RACK-TLP did (counted from the connection's start).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RackStats {
    /// Segments RACK marked lost (§6.2 step 5), lost retransmissions included.
    pub marked_lost: u64,
    /// Of those, segments whose latest transmission was a retransmission.
    pub lost_retransmissions: u64,
    /// Expiries of the reordering timer that marked a segment lost.
    pub reo_timeouts: u64,
    /// Tail loss probes sent (§7.3).
    pub probes: u64,
    /// Of those, retransmissions of the highest segment (no new data could go).
    pub probe_retransmissions: u64,
    /// Losses a probe repaired (§7.4), each reported to the controller as one congestion event.
    pub probe_recoveries: u64,
    /// Further congestion events during fast recovery for retransmissions found lost (§9.3;
    /// only without PRR).
    pub retransmission_loss_responses: u64,
}

/// One segment sent as new data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Record {
    seq: u64,
    end: u64,
    /// `Segment.xmit_ts`: when it was last (re)sent.
    xmit_ts: SimTime,
    /// 1 for the original transmission, more once retransmitted.
    transmissions: u32,
    sacked: bool,
    /// Marked lost by RACK (until delivered).
    lost: bool,
    /// Marked lost and not retransmitted since.
    pending: bool,
}

/// One (re)transmission of the record starting at `seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Send {
    xmit_ts: SimTime,
    seq: u64,
    /// The record's transmission count after this one (stale once it differs).
    transmission: u32,
    /// The record's place among all records ever made (`Rack::popped` plus its index while it
    /// is outstanding): records are only appended and taken from the front, never split or
    /// merged, so the place finds the record without a search (`Rack::index_of`).
    record: u64,
}

/// A lost record, as recovery sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Lost {
    seq: u64,
    end: u64,
    pending: bool,
}

/// Which of RACK's lost records [`Rack::lost_bytes`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lostness {
    /// All: marked lost and not delivered.
    Any,
    /// Marked lost and not retransmitted since.
    Pending,
    /// Marked lost and retransmitted since.
    Resent,
}

/// `RACK_sent_after(t1, seq1, t2, seq2)`: `(t1, seq1)` was sent after `(t2, seq2)`.
#[inline]
fn sent_after(t1: SimTime, end1: u64, t2: SimTime, end2: u64) -> bool {
    t1 > t2 || (t1 == t2 && end1 > end2)
}

/// RACK-TLP state of one sender (see the module documentation).
#[derive(Clone, Debug)]
pub struct Rack {
    dupack_threshold: u32,
    max_ack_delay: SimTime,
    records: VecDeque<Record>,
    /// Records taken from the front of `records` (cumulatively acknowledged) so far.
    popped: u64,
    sends: VecDeque<Send>,
    lost: VecDeque<Lost>,
    pending: u32,
    segs_sacked: u32,
    /// Ranges the ACK being processed SACKs for the first time (scratch).
    newly_sacked: Vec<(u64, u64)>,
    /// `RACK.xmit_ts` and `RACK.end_seq`; `None` before anything was delivered.
    reference: Option<(SimTime, u64)>,
    /// `RACK.rtt`.
    rtt: SimTime,
    /// `RACK.fack`.
    fack: u64,
    reordering_seen: bool,
    reo_deadline: Option<SimTime>,
    pto_deadline: Option<SimTime>,
    probe_due: bool,
    /// `TLP.end_seq`, `TLP.is_retrans`, and when the probe was sent.
    tlp_end_seq: Option<u64>,
    tlp_is_retrans: bool,
    tlp_sent_at: SimTime,
    rtt_sampled_since_probe: bool,
    /// The latest send time of the retransmissions marked lost since the owner last asked.
    lost_retransmission: Option<SimTime>,
    stats: RackStats,
}

impl Rack {
    pub fn new(config: &TcpConfig) -> Self {
        let receiver_delay = if config.delayed_ack {
            config.delayed_ack_timeout
        } else {
            SimTime::ZERO
        };
        Rack {
            dupack_threshold: config.dupack_threshold.max(1),
            max_ack_delay: WC_DEL_ACK_T.max(receiver_delay),
            records: VecDeque::new(),
            popped: 0,
            sends: VecDeque::new(),
            lost: VecDeque::new(),
            pending: 0,
            segs_sacked: 0,
            newly_sacked: Vec::new(),
            reference: None,
            rtt: SimTime::ZERO,
            fack: 0,
            reordering_seen: false,
            reo_deadline: None,
            pto_deadline: None,
            probe_due: false,
            tlp_end_seq: None,
            tlp_is_retrans: false,
            tlp_sent_at: SimTime::ZERO,
            rtt_sampled_since_probe: false,
            lost_retransmission: None,
            stats: RackStats::default(),
        }
    }

    pub fn stats(&self) -> RackStats {
        self.stats
    }

    /// `RACK.xmit_ts`, if anything was delivered yet.
    pub fn xmit_ts(&self) -> Option<SimTime> {
        self.reference.map(|(t, _)| t)
    }

    /// `RACK.rtt`.
    pub fn rtt(&self) -> SimTime {
        self.rtt
    }

    pub fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }

    /// Segments SACKed above the cumulative ACK (`RACK.segs_sacked`).
    pub fn segs_sacked(&self) -> u32 {
        self.segs_sacked
    }

    /// Segments outstanding (not cumulatively acknowledged).
    pub fn segments_outstanding(&self) -> usize {
        self.records.len()
    }

    /// The reordering timer's deadline.
    pub fn reo_deadline(&self) -> Option<SimTime> {
        self.reo_deadline
    }

    /// The probe timer's deadline.
    pub fn pto_deadline(&self) -> Option<SimTime> {
        self.pto_deadline
    }

    /// `TLP.end_seq`: a probe is in flight.
    pub fn tlp_end_seq(&self) -> Option<u64> {
        self.tlp_end_seq
    }

    // ---- transmissions ------------------------------------------------------------------

    /// Records a transmission of `[seq, end)` at `now` (§6.1: "record the time in
    /// Segment.xmit_ts and set Segment.lost to FALSE"; a retransmitted segment stays lost for
    /// the pipe until delivered, but is no longer pending).
    pub fn on_transmit(&mut self, now: SimTime, seq: u64, end: u64, retransmission: bool) {
        if !retransmission {
            debug_assert!(self.records.back().is_none_or(|r| r.end == seq));
            let record = self.popped + self.records.len() as u64;
            self.records.push_back(Record {
                seq,
                end,
                xmit_ts: now,
                transmissions: 1,
                sacked: false,
                lost: false,
                pending: false,
            });
            self.sends.push_back(Send {
                xmit_ts: now,
                seq,
                transmission: 1,
                record,
            });
            return;
        }
        let mut i = self.records.partition_point(|r| r.end <= seq);
        while i < self.records.len() && self.records[i].seq < end {
            let r = &mut self.records[i];
            r.xmit_ts = now;
            r.transmissions += 1;
            let (rseq, transmission, was_pending) = (r.seq, r.transmissions, r.pending);
            r.pending = false;
            if was_pending {
                self.pending -= 1;
                if let Some(l) = self.lost_entry_mut(rseq) {
                    l.pending = false;
                }
            }
            self.sends.push_back(Send {
                xmit_ts: now,
                seq: rseq,
                transmission,
                record: self.popped + i as u64,
            });
            i += 1;
        }
    }

    // ---- ACKs ---------------------------------------------------------------------------

    /// First half of an ACK, before the scoreboard is updated with it: notes which of its
    /// SACK blocks' bytes are new (RFC 6675 `Update()` clips blocks to
    /// `(cumulative ACK, snd_nxt]`, and so does this).
    pub fn before_scoreboard_update(
        &mut self,
        scoreboard: &Scoreboard,
        ack: &AckSegment,
        snd_nxt: u64,
    ) {
        self.newly_sacked.clear();
        for &(start, end) in ack.sack.as_slice() {
            let end = end.min(snd_nxt);
            let mut seq = start.max(ack.ack);
            while seq < end {
                seq = scoreboard.next_unsacked(seq);
                if seq >= end {
                    break;
                }
                let gap_end = scoreboard
                    .next_sacked_start(seq)
                    .map_or(end, |s| s.min(end));
                self.newly_sacked.push((seq, gap_end));
                seq = gap_end;
            }
        }
    }

    /// Second half of an ACK, after the scoreboard update (`snd_una` is the new cumulative
    /// point, `rtt` has taken this ACK's sample, `rtt_sampled` says whether it gave one):
    /// RFC 8985 §6.2 steps 2 to 5, and the TLP bookkeeping of an RTT sample. `in_recovery`:
    /// in fast or RTO recovery before this ACK. Returns how many records were newly marked
    /// lost.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        now: SimTime,
        ack: &AckSegment,
        scoreboard: &Scoreboard,
        snd_una: u64,
        rtt: &RttEstimator,
        rtt_sampled: bool,
        in_recovery: bool,
    ) -> u32 {
        if rtt_sampled {
            self.rtt_sampled_since_probe = true;
        }
        let fack_before = self.fack;
        let min_rtt = rtt.min_rtt();
        let mut newest: Option<(SimTime, u64)> = None;
        // Cumulatively acknowledged records.
        while let Some(&r) = self.records.front() {
            if r.end > snd_una {
                break;
            }
            self.records.pop_front();
            self.popped += 1;
            if r.lost {
                let l = self.lost.pop_front();
                debug_assert_eq!(l.map(|l| l.seq), Some(r.seq));
                if r.pending {
                    self.pending -= 1;
                }
            }
            debug_assert!(!r.sacked || !r.lost);
            if r.sacked {
                self.segs_sacked -= 1;
            } else {
                self.delivered(now, ack, &r, min_rtt, fack_before, &mut newest);
            }
        }
        // Records the ACK's new SACK information covers completely.
        for k in 0..self.newly_sacked.len() {
            let (start, end) = self.newly_sacked[k];
            let mut i = self.records.partition_point(|r| r.end <= start);
            while i < self.records.len() && self.records[i].seq < end {
                let r = self.records[i];
                i += 1;
                if r.sacked {
                    continue;
                }
                let from = r.seq.max(snd_una);
                let covered = scoreboard
                    .ranges()
                    .range_containing(from)
                    .is_some_and(|(_, e)| e >= r.end);
                if !covered {
                    continue;
                }
                let record = &mut self.records[i - 1];
                record.sacked = true;
                record.lost = false;
                record.pending = false;
                self.segs_sacked += 1;
                if r.lost {
                    self.remove_lost(r.seq);
                    if r.pending {
                        self.pending -= 1;
                    }
                }
                self.delivered(now, ack, &r, min_rtt, fack_before, &mut newest);
            }
        }
        if let Some((xmit_ts, end)) = newest {
            self.rtt = now.saturating_sub(xmit_ts);
            if self
                .reference
                .is_none_or(|(t, e)| sent_after(xmit_ts, end, t, e))
            {
                self.reference = Some((xmit_ts, end));
            }
        }
        self.detect_loss(now, rtt, in_recovery)
    }

    /// A newly delivered record: §6.2 step 3 (reordering) and the step 2 candidate.
    fn delivered(
        &mut self,
        now: SimTime,
        ack: &AckSegment,
        r: &Record,
        min_rtt: SimTime,
        fack_before: u64,
        newest: &mut Option<(SimTime, u64)>,
    ) {
        if r.transmissions == 1 && r.end < fack_before {
            self.reordering_seen = true;
        }
        self.fack = self.fack.max(r.end);
        if r.transmissions > 1
            && (ack.echo_sent_at < r.xmit_ts || now.saturating_sub(r.xmit_ts) < min_rtt)
        {
            // §6.2 step 2: the ACK may be for an earlier transmission (spurious inference).
            return;
        }
        if newest.is_none_or(|(t, e)| sent_after(r.xmit_ts, r.end, t, e)) {
            *newest = Some((r.xmit_ts, r.end));
        }
    }

    /// §6.2 step 4, `RACK_update_reo_wnd()` without DSACK (`reo_wnd_mult` = 1).
    pub fn reo_wnd(&self, rtt: &RttEstimator, in_recovery: bool) -> SimTime {
        if !self.reordering_seen && (in_recovery || self.segs_sacked >= self.dupack_threshold) {
            return SimTime::ZERO;
        }
        SimTime(rtt.min_rtt().as_nanos() / 4).min(rtt.srtt())
    }

    /// §6.2 step 5 and §6.3, `RACK_detect_loss_and_arm_timer()`: marks lost what is overdue
    /// and (re)arms the reordering timer for the earliest deadline still ahead. Returns how
    /// many records were newly marked lost.
    pub fn detect_loss(&mut self, now: SimTime, rtt: &RttEstimator, in_recovery: bool) -> u32 {
        self.reo_deadline = None;
        let Some((rack_ts, rack_end)) = self.reference else {
            return 0;
        };
        let reo_wnd = self.reo_wnd(rtt, in_recovery);
        let mut marked = 0;
        let mut i = 0;
        while let Some(&send) = self.sends.get(i) {
            let index = self.index_of(&send);
            let current = index
                .map(|j| self.records[j])
                .filter(|r| r.transmissions == send.transmission && !r.sacked && !r.pending);
            let Some(r) = current else {
                // Delivered, resent since, or already marked lost.
                if i == 0 {
                    self.sends.pop_front();
                } else {
                    i += 1;
                }
                continue;
            };
            if send.xmit_ts > rack_ts {
                break;
            }
            if !sent_after(rack_ts, rack_end, send.xmit_ts, r.end) {
                // Sent at the reference's instant with a higher end: not before it.
                i += 1;
                continue;
            }
            let deadline = send
                .xmit_ts
                .saturating_add(self.rtt)
                .saturating_add(reo_wnd);
            if now < deadline {
                self.reo_deadline = Some(deadline);
                break;
            }
            self.mark_lost(index.expect("a current record"));
            marked += 1;
            if i == 0 {
                self.sends.pop_front();
            } else {
                i += 1;
            }
        }
        marked
    }

    /// The reordering timer fired: detection again (§6.3).
    pub fn on_reo_timeout(&mut self, now: SimTime, rtt: &RttEstimator, in_recovery: bool) -> u32 {
        let marked = self.detect_loss(now, rtt, in_recovery);
        if marked > 0 {
            self.stats.reo_timeouts += 1;
        }
        marked
    }

    fn mark_lost(&mut self, index: usize) {
        let r = &mut self.records[index];
        debug_assert!(!r.pending && !r.sacked);
        r.pending = true;
        let (seq, end, was_lost, retransmitted) = (r.seq, r.end, r.lost, r.transmissions > 1);
        let xmit_ts = r.xmit_ts;
        r.lost = true;
        self.pending += 1;
        self.stats.marked_lost += 1;
        if retransmitted {
            self.stats.lost_retransmissions += 1;
            self.lost_retransmission = self.lost_retransmission.max(Some(xmit_ts));
        }
        if was_lost {
            if let Some(l) = self.lost_entry_mut(seq) {
                l.pending = true;
            }
        } else {
            let at = self.lost.partition_point(|l| l.seq < seq);
            self.lost.insert(
                at,
                Lost {
                    seq,
                    end,
                    pending: true,
                },
            );
        }
    }

    /// The retransmission timer fired: everything outstanding is lost now (go-back-N), so
    /// RACK's own marks are dropped; the probe is abandoned (§7.1).
    pub fn on_rto(&mut self) {
        for k in 0..self.lost.len() {
            if let Some(j) = self.find(self.lost[k].seq) {
                self.records[j].lost = false;
                self.records[j].pending = false;
            }
        }
        self.lost.clear();
        self.pending = 0;
        self.reo_deadline = None;
        self.reset_tlp();
    }

    /// The latest send time of the retransmissions marked lost since the last call.
    pub fn take_lost_retransmission(&mut self) -> Option<SimTime> {
        self.lost_retransmission.take()
    }

    /// The owner answered a lost retransmission with a congestion response (§9.3).
    pub fn on_retransmission_loss_response(&mut self) {
        self.stats.retransmission_loss_responses += 1;
    }

    /// Fast recovery started: `TLP.end_seq` is reset and no probe is scheduled (§7.1, §7.2).
    pub fn on_recovery_start(&mut self) {
        self.reset_tlp();
    }

    fn reset_tlp(&mut self) {
        self.tlp_end_seq = None;
        self.tlp_is_retrans = false;
        self.pto_deadline = None;
        self.probe_due = false;
    }

    /// The index of the record `send` transmitted, if it is still outstanding: what
    /// [`Rack::find`] gives for its start, read from its place (`Send::record`).
    #[inline]
    fn index_of(&self, send: &Send) -> Option<usize> {
        let index = usize::try_from(send.record.checked_sub(self.popped)?).ok()?;
        let found = self
            .records
            .get(index)
            .is_some_and(|r| r.seq == send.seq)
            .then_some(index);
        debug_assert_eq!(found, self.find(send.seq), "a record's place");
        found
    }

    /// The index of the record starting at `seq`.
    fn find(&self, seq: u64) -> Option<usize> {
        let i = self.records.partition_point(|r| r.end <= seq);
        (i < self.records.len() && self.records[i].seq == seq).then_some(i)
    }

    fn lost_entry_mut(&mut self, seq: u64) -> Option<&mut Lost> {
        let i = self.lost.partition_point(|l| l.seq < seq);
        self.lost.get_mut(i).filter(|l| l.seq == seq)
    }

    fn remove_lost(&mut self, seq: u64) {
        let i = self.lost.partition_point(|l| l.seq < seq);
        if self.lost.get(i).is_some_and(|l| l.seq == seq) {
            self.lost.remove(i);
        }
    }

    // ---- what recovery asks -------------------------------------------------------------

    /// Some segment is marked lost (pending or already resent).
    #[inline]
    pub fn has_lost(&self) -> bool {
        !self.lost.is_empty()
    }

    /// Some segment is marked lost and not retransmitted since.
    #[inline]
    pub fn has_pending(&self) -> bool {
        self.pending > 0
    }

    /// Un-SACKed bytes of lost records of the given kind inside `[from, to)`.
    pub fn lost_bytes(&self, scoreboard: &Scoreboard, from: u64, to: u64, which: Lostness) -> u64 {
        if from >= to || self.lost.is_empty() {
            return 0;
        }
        let mut bytes = 0;
        let first = self.lost.partition_point(|l| l.end <= from);
        for l in self.lost.range(first..) {
            if l.seq >= to {
                break;
            }
            let wanted = match which {
                Lostness::Any => true,
                Lostness::Pending => l.pending,
                Lostness::Resent => !l.pending,
            };
            if !wanted {
                continue;
            }
            let (a, b) = (l.seq.max(from), l.end.min(to));
            bytes += (b - a) - scoreboard.sacked_between(a, b);
        }
        bytes
    }

    /// The first pending un-SACKed byte in `[from, limit)`, with the end of the run of
    /// pending bytes it starts (stopping at SACKed data and at `limit`).
    pub fn first_pending(
        &self,
        scoreboard: &Scoreboard,
        from: u64,
        limit: u64,
    ) -> Option<(u64, u64)> {
        if self.pending == 0 {
            return None;
        }
        let first = self.lost.partition_point(|l| l.end <= from);
        let mut k = first;
        while let Some(l) = self.lost.get(k) {
            if l.seq >= limit {
                return None;
            }
            k += 1;
            if !l.pending {
                continue;
            }
            let start = scoreboard.next_unsacked(l.seq.max(from));
            let mut end = l.end;
            if start >= end.min(limit) {
                continue;
            }
            while let Some(next) = self.lost.get(k).filter(|n| n.pending && n.seq == end) {
                end = next.end;
                k += 1;
            }
            let hole_end = scoreboard.next_sacked_start(start).unwrap_or(u64::MAX);
            return Some((start, end.min(limit).min(hole_end)));
        }
        None
    }

    /// The end of the lost record holding `seq` if it was resent since it was marked lost.
    pub fn resent_lost_end(&self, seq: u64) -> Option<u64> {
        let i = self.lost.partition_point(|l| l.end <= seq);
        self.lost
            .get(i)
            .filter(|l| l.seq <= seq && !l.pending)
            .map(|l| l.end)
    }

    /// Whether the byte `seq` belongs to a record RACK marked lost (resent since or not).
    pub fn is_lost(&self, seq: u64) -> bool {
        let i = self.lost.partition_point(|l| l.end <= seq);
        self.lost.get(i).is_some_and(|l| l.seq <= seq)
    }

    /// Whether the byte `seq` belongs to a pending lost record.
    pub fn is_pending(&self, seq: u64) -> bool {
        let i = self.lost.partition_point(|l| l.end <= seq);
        self.lost.get(i).is_some_and(|l| l.seq <= seq && l.pending)
    }

    /// Checks the bookkeeping against itself and the scoreboard (tests).
    #[cfg(test)]
    pub(crate) fn check_invariants(&self, scoreboard: &Scoreboard, snd_una: u64, snd_nxt: u64) {
        let mut next = None;
        for r in &self.records {
            assert!(r.seq < r.end && next.is_none_or(|n| n == r.seq), "{r:?}");
            next = Some(r.end);
            assert!(!(r.sacked && r.lost), "{r:?}");
            assert!(!r.pending || r.lost, "{r:?}");
            let covered = scoreboard
                .ranges()
                .range_containing(r.seq.max(snd_una))
                .is_some_and(|(_, e)| e >= r.end);
            assert_eq!(r.sacked, covered, "{r:?} against {:?}", scoreboard.ranges());
        }
        assert!(self.records.front().is_none_or(|r| r.end > snd_una));
        assert_eq!(next.unwrap_or(snd_nxt), snd_nxt);
        let lost: Vec<Lost> = self
            .records
            .iter()
            .filter(|r| r.lost)
            .map(|r| Lost {
                seq: r.seq,
                end: r.end,
                pending: r.pending,
            })
            .collect();
        assert_eq!(lost, self.lost.iter().copied().collect::<Vec<_>>());
        assert_eq!(
            self.pending as usize,
            lost.iter().filter(|l| l.pending).count()
        );
        let sacked = self.records.iter().filter(|r| r.sacked).count();
        assert_eq!(self.segs_sacked as usize, sacked);
        if let Some(end) = self.tlp_end_seq {
            assert!(end <= snd_nxt);
        }
    }

    // ---- TLP ----------------------------------------------------------------------------

    /// Whether a probe may be sent (§7.3): none in flight, and an RTT sample since the last one
    /// (or since the start of the connection).
    pub fn probe_allowed(&self) -> bool {
        self.tlp_end_seq.is_none() && self.rtt_sampled_since_probe
    }

    /// §7.2 `TLP_calc_PTO()`, for a sender eligible for a probe: arms the probe timer when a
    /// probe would be allowed at its expiry, cancels it otherwise. `rto_deadline` caps it.
    pub fn arm_pto(&mut self, now: SimTime, srtt: SimTime, rto_deadline: Option<SimTime>) {
        if !self.probe_allowed() || srtt == SimTime::ZERO {
            self.pto_deadline = None;
            return;
        }
        let mut pto = srtt.saturating_mul(2);
        if self.records.len() == 1 {
            pto = pto.saturating_add(self.max_ack_delay);
        }
        let mut at = now.saturating_add(pto);
        if let Some(rto) = rto_deadline {
            at = at.min(rto);
        }
        self.pto_deadline = Some(at);
    }

    pub fn cancel_pto(&mut self) {
        self.pto_deadline = None;
    }

    /// The probe timer fired: the next transmission is the probe, if one is allowed (then the
    /// caller re-arms the retransmission timer, §7.3). Returns whether it is.
    pub fn on_pto(&mut self) -> bool {
        self.pto_deadline = None;
        self.probe_due = self.probe_allowed();
        self.probe_due
    }

    /// The probe timer asked for a probe, not sent yet.
    pub fn probe_pending(&self) -> bool {
        self.probe_due
    }

    /// Takes the pending probe, if the probe timer asked for one.
    pub fn take_probe(&mut self) -> bool {
        std::mem::take(&mut self.probe_due)
    }

    /// The range of the highest-sequence segment sent, from `snd_una` on (§7.3).
    pub fn last_segment(&self, snd_una: u64) -> Option<(u64, u64)> {
        self.records
            .back()
            .map(|r| (r.seq.max(snd_una), r.end))
            .filter(|(a, b)| a < b)
    }

    /// The probe went out at `now`; `snd_nxt` after it.
    pub fn on_probe_sent(&mut self, now: SimTime, snd_nxt: u64, retransmission: bool) {
        self.tlp_end_seq = Some(snd_nxt);
        self.tlp_is_retrans = retransmission;
        self.tlp_sent_at = now;
        self.rtt_sampled_since_probe = false;
        self.stats.probes += 1;
        if retransmission {
            self.stats.probe_retransmissions += 1;
        }
    }

    /// §7.4 `TLP_process_ack()`, with the ACK echo standing for DSACK (module documentation).
    /// Returns true if the probe repaired a loss: the controller is owed a congestion event.
    pub fn tlp_on_ack(&mut self, ack: &AckSegment) -> bool {
        let Some(end) = self.tlp_end_seq else {
            return false;
        };
        if ack.ack < end {
            return false;
        }
        self.tlp_end_seq = None;
        let repaired = self.tlp_is_retrans
            && ack.echo_is_retransmission
            && ack.echo_sent_at == self.tlp_sent_at;
        if repaired {
            self.stats.probe_recoveries += 1;
        }
        repaired
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::SackBlocks;

    const MSS: u64 = 100;

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    fn config() -> TcpConfig {
        TcpConfig {
            mss: MSS as u32,
            ..TcpConfig::default()
        }
    }

    /// An estimator whose SRTT and minimum are `rtt`.
    fn estimator(rtt: SimTime) -> RttEstimator {
        let mut e = RttEstimator::new(ms(1000), ms(1), ms(60_000));
        e.on_sample(rtt);
        e
    }

    fn ack(cumulative: u64, sack: &[(u64, u64)], echo: SimTime, echo_rtx: bool) -> AckSegment {
        let mut blocks = SackBlocks::EMPTY;
        for &(a, b) in sack {
            blocks.push(a, b);
        }
        AckSegment {
            ack: cumulative,
            sack: blocks,
            rwnd: 1 << 30,
            echo_sent_at: echo,
            echo_is_retransmission: echo_rtx,
        }
    }

    /// RACK, its scoreboard and `snd_nxt`, driven as the core drives them.
    struct Fixture {
        rack: Rack,
        sb: Scoreboard,
        snd_nxt: u64,
        rtt: RttEstimator,
    }

    impl Fixture {
        fn new(rtt: SimTime) -> Self {
            Fixture {
                rack: Rack::new(&config()),
                sb: Scoreboard::new(),
                snd_nxt: 0,
                rtt: estimator(rtt),
            }
        }

        /// Sends `n` new segments at `now`.
        fn send(&mut self, now: SimTime, n: u64) {
            for _ in 0..n {
                self.rack
                    .on_transmit(now, self.snd_nxt, self.snd_nxt + MSS, false);
                self.snd_nxt += MSS;
            }
        }

        fn resend(&mut self, now: SimTime, segment: u64) {
            self.rack
                .on_transmit(now, segment * MSS, (segment + 1) * MSS, true);
        }

        fn ack(&mut self, now: SimTime, a: &AckSegment, in_recovery: bool) -> u32 {
            self.rack
                .before_scoreboard_update(&self.sb, a, self.snd_nxt);
            self.sb.update(a.ack, self.snd_nxt, a.sack.as_slice());
            self.rack
                .on_ack(now, a, &self.sb, a.ack, &self.rtt, false, in_recovery)
        }

        /// Segments (by index) RACK holds lost and pending.
        fn pending(&self) -> Vec<u64> {
            (0..self.snd_nxt / MSS)
                .filter(|&k| self.rack.is_pending(k * MSS))
                .collect()
        }
    }

    /// Every send's record, found from its place, is the one a search by its start finds.
    fn check_places(rack: &Rack) {
        for send in &rack.sends {
            assert_eq!(rack.index_of(send), rack.find(send.seq), "{send:?}");
        }
    }

    #[test]
    fn a_send_finds_its_record_by_place_as_a_search_does() {
        let mut f = Fixture::new(ms(40));
        f.send(ms(0), 6);
        check_places(&f.rack);
        // Cumulative ACKs take records from the front; retransmissions add sends of old
        // records.
        f.ack(ms(40), &ack(200, &[(300, 500)], ms(0), false), false);
        check_places(&f.rack);
        f.resend(ms(41), 2);
        f.send(ms(42), 3);
        check_places(&f.rack);
        f.ack(ms(80), &ack(500, &[(600, 800)], ms(41), true), true);
        check_places(&f.rack);
        f.resend(ms(81), 5);
        check_places(&f.rack);
        assert!(f.rack.sends.iter().any(|s| f.rack.index_of(s).is_some()));
        // A send of a record taken away (segment 0, acknowledged at 40 ms) finds nothing, as
        // the search does.
        let gone = Send {
            xmit_ts: ms(0),
            seq: 0,
            transmission: 1,
            record: 0,
        };
        assert_eq!((f.rack.index_of(&gone), f.rack.find(0)), (None, None));
        f.ack(ms(120), &ack(900, &[], ms(81), true), false);
        check_places(&f.rack);
    }

    #[test]
    fn a_segment_sent_before_a_delivered_one_is_lost_after_rtt_plus_reo_wnd() {
        // min_RTT = SRTT = 40 ms: reo_wnd = 10 ms while fewer than DupThresh are SACKed.
        let mut f = Fixture::new(ms(40));
        assert_eq!(f.rack.reo_wnd(&f.rtt, false), ms(10));
        f.send(ms(0), 1); // segment 0 at 0 ms
        f.send(ms(2), 1); // segment 1 at 2 ms
        f.send(ms(4), 1); // segment 2 at 4 ms
                          // Segment 2 is SACKed at 44 ms (RACK.rtt = 40 ms); 0 and 1 are missing. Segment 0's
                          // deadline is 0 + 40 + 10 = 50 ms, segment 1's 52 ms: nothing yet, and the timer is
                          // armed for the earliest.
        let a = ack(0, &[(200, 300)], ms(4), false);
        assert_eq!(f.ack(ms(44), &a, false), 0);
        assert_eq!(f.rack.xmit_ts(), Some(ms(4)));
        assert_eq!(f.rack.rtt(), ms(40));
        assert_eq!(f.rack.reo_deadline(), Some(ms(50)));
        // Just before: nothing; at the deadline, segment 0 only; then segment 1 at 52 ms.
        assert_eq!(f.rack.on_reo_timeout(ms(50) - SimTime(1), &f.rtt, false), 0);
        assert_eq!(f.rack.on_reo_timeout(ms(50), &f.rtt, false), 1);
        assert_eq!(f.pending(), [0]);
        assert_eq!(f.rack.reo_deadline(), Some(ms(52)));
        assert_eq!(f.rack.on_reo_timeout(ms(52), &f.rtt, false), 1);
        assert_eq!(f.pending(), [0, 1]);
        assert_eq!(f.rack.reo_deadline(), None);
        assert_eq!(f.rack.stats().marked_lost, 2);
        assert_eq!(f.rack.stats().reo_timeouts, 2);
        // Both are out of the pipe until resent; resending 0 takes it out of the pending set
        // but keeps it lost for the pipe.
        assert_eq!(f.rack.lost_bytes(&f.sb, 0, 300, Lostness::Pending), 200);
        f.resend(ms(53), 0);
        assert_eq!(f.pending(), [1]);
        assert_eq!(f.rack.lost_bytes(&f.sb, 0, 300, Lostness::Pending), 100);
        assert_eq!(f.rack.lost_bytes(&f.sb, 0, 300, Lostness::Any), 200);
        assert_eq!(f.rack.lost_bytes(&f.sb, 0, 300, Lostness::Resent), 100);
        assert_eq!(f.rack.resent_lost_end(50), Some(100));
        assert_eq!(f.rack.resent_lost_end(150), None);
        assert_eq!(f.rack.first_pending(&f.sb, 0, 300), Some((100, 200)));
    }

    #[test]
    fn nothing_sent_after_the_reference_is_lost() {
        let mut f = Fixture::new(ms(40));
        f.send(ms(0), 1);
        f.send(ms(10), 2);
        // Segment 0 delivered: segments 1 and 2 were sent after it.
        assert_eq!(f.ack(ms(100), &ack(100, &[], ms(0), false), false), 0);
        assert_eq!(f.rack.reo_deadline(), None);
        assert!(f.pending().is_empty());
    }

    #[test]
    fn ties_in_send_time_are_broken_by_end_seq() {
        let mut f = Fixture::new(ms(40));
        f.send(ms(0), 3);
        // Segment 1 SACKed: 0 (same instant, lower end) was sent before it, 2 was not.
        assert_eq!(
            f.ack(ms(40), &ack(0, &[(100, 200)], ms(0), false), false),
            0
        );
        assert_eq!(f.rack.reo_deadline(), Some(ms(50)));
        assert_eq!(f.rack.on_reo_timeout(ms(50), &f.rtt, false), 1);
        assert_eq!(f.pending(), [0]);
        assert_eq!(f.rack.reo_deadline(), None);
        assert_eq!(f.rack.on_reo_timeout(ms(500), &f.rtt, false), 0);
        assert_eq!(f.pending(), [0]);
    }

    #[test]
    fn reo_wnd_is_zero_after_dupthresh_sacks_or_in_recovery_until_reordering_is_seen() {
        let mut f = Fixture::new(ms(40));
        // min_RTT / 4, whatever SRTT (which, never below min_RTT, only bounds the window once
        // DSACKs have multiplied it, which cannot happen here).
        let mut big_min = estimator(ms(8));
        for _ in 0..60 {
            big_min.on_sample(ms(2000));
        }
        assert_eq!(f.rack.reo_wnd(&big_min, false), ms(2));

        assert_eq!(f.rack.reo_wnd(&f.rtt, true), SimTime::ZERO, "in recovery");
        f.send(ms(0), 5);
        // Two SACKed segments: the window stands; the third zeroes it.
        f.ack(ms(40), &ack(0, &[(100, 300)], ms(0), false), false);
        assert_eq!(f.rack.segs_sacked(), 2);
        assert_eq!(f.rack.reo_wnd(&f.rtt, false), ms(10));
        f.ack(ms(41), &ack(0, &[(100, 400)], ms(0), false), false);
        assert_eq!(f.rack.segs_sacked(), 3);
        assert_eq!(f.rack.reo_wnd(&f.rtt, false), SimTime::ZERO);
        // Segment 0 arrives late (never retransmitted, below RACK.fack): reordering.
        assert!(!f.rack.reordering_seen());
        f.ack(ms(42), &ack(400, &[], ms(0), false), false);
        assert!(f.rack.reordering_seen());
        assert_eq!(f.rack.reo_wnd(&f.rtt, true), ms(10));
    }

    #[test]
    fn a_lost_retransmission_is_marked_lost_again() {
        let mut f = Fixture::new(ms(40));
        f.send(ms(0), 4);
        // 1, 2, 3 SACKed: 0 is lost at once (reo_wnd 0 with DupThresh SACKed).
        assert_eq!(
            f.ack(ms(40), &ack(0, &[(100, 400)], ms(0), false), false),
            1
        );
        f.resend(ms(40), 0);
        assert!(f.pending().is_empty());
        // New data sent after the retransmission is SACKed; the retransmission is not: it was
        // sent before the new reference, and with reo_wnd 0 (in recovery) it is lost at once.
        f.send(ms(45), 1);
        assert_eq!(
            f.ack(ms(85), &ack(0, &[(100, 500)], ms(45), false), true),
            1
        );
        assert_eq!(f.rack.xmit_ts(), Some(ms(45)));
        assert_eq!(f.pending(), [0]);
        assert_eq!(f.rack.stats().marked_lost, 2);
        assert_eq!(f.rack.stats().lost_retransmissions, 1);
    }

    #[test]
    fn an_ack_of_a_retransmission_faster_than_min_rtt_does_not_advance_rack() {
        let mut f = Fixture::new(ms(40));
        f.send(ms(0), 3);
        f.ack(ms(40), &ack(0, &[(100, 300)], ms(0), false), false);
        let reference = f.rack.xmit_ts();
        // Segment 0 resent at 50 ms; the original, only late, is acknowledged at 60 ms: 10 ms
        // after the retransmission, below min_RTT, and the echo is the original's.
        f.resend(ms(50), 0);
        f.ack(ms(60), &ack(300, &[], ms(0), false), false);
        assert_eq!(f.rack.xmit_ts(), reference);
        // With an echo of the retransmission but still below min_RTT: ignored as well.
        let mut g = Fixture::new(ms(40));
        g.send(ms(0), 3);
        g.ack(ms(40), &ack(0, &[(100, 300)], ms(0), false), false);
        g.resend(ms(50), 0);
        g.ack(ms(60), &ack(300, &[], ms(50), true), false);
        assert_eq!(g.rack.xmit_ts(), reference);
        // A genuine delivery of the retransmission one RTT later advances it.
        let mut h = Fixture::new(ms(40));
        h.send(ms(0), 3);
        h.ack(ms(40), &ack(0, &[(100, 300)], ms(0), false), false);
        h.resend(ms(50), 0);
        h.ack(ms(90), &ack(300, &[], ms(50), true), false);
        assert_eq!(h.rack.xmit_ts(), Some(ms(50)));
        assert_eq!(h.rack.rtt(), ms(40));
    }

    #[test]
    fn an_echo_older_than_the_retransmission_is_not_its_delivery() {
        let mut f = Fixture::new(ms(40));
        f.send(ms(0), 3);
        f.ack(ms(40), &ack(0, &[(100, 300)], ms(0), false), false);
        f.resend(ms(50), 0);
        // 100 ms later, so the RTT test alone would accept it, but the echo is older.
        f.ack(ms(150), &ack(300, &[], ms(0), false), false);
        assert_eq!(f.rack.xmit_ts(), Some(ms(0)));
    }

    #[test]
    fn pto_is_two_srtt_plus_the_delayed_ack_allowance_for_one_segment_capped_by_the_rto() {
        let mut f = Fixture::new(ms(40));
        f.rack.rtt_sampled_since_probe = true;
        f.send(ms(0), 2);
        f.rack.arm_pto(ms(0), ms(40), Some(ms(1000)));
        assert_eq!(f.rack.pto_deadline(), Some(ms(80)));
        f.ack(ms(40), &ack(100, &[], ms(0), false), false);
        f.rack.arm_pto(ms(40), ms(40), Some(ms(1000)));
        assert_eq!(f.rack.pto_deadline(), Some(ms(40 + 80 + 200)));
        f.rack.arm_pto(ms(40), ms(40), Some(ms(240)));
        assert_eq!(f.rack.pto_deadline(), Some(ms(240)));
        // A probe in flight: no timer, and none allowed until an RTT sample.
        f.rack.on_pto();
        assert!(f.rack.take_probe());
        f.rack.on_probe_sent(ms(240), 200, true);
        f.rack.arm_pto(ms(240), ms(40), Some(ms(1000)));
        assert_eq!(f.rack.pto_deadline(), None);
        // Its ACK, triggered by the probe: a repaired loss.
        assert!(f.rack.tlp_on_ack(&ack(200, &[], ms(240), true)));
        assert_eq!(f.rack.tlp_end_seq(), None);
        assert!(!f.rack.probe_allowed(), "no RTT sample since the probe");
        assert_eq!(f.rack.stats().probe_recoveries, 1);
    }

    #[test]
    fn a_probe_acknowledged_through_the_original_repairs_nothing() {
        let mut f = Fixture::new(ms(40));
        f.rack.rtt_sampled_since_probe = true;
        f.send(ms(0), 1);
        f.rack.on_pto();
        assert!(f.rack.take_probe());
        f.rack.on_probe_sent(ms(100), 100, true);
        assert!(!f.rack.tlp_on_ack(&ack(100, &[], ms(0), false)));
        assert_eq!(f.rack.tlp_end_seq(), None);
        // A probe of new data repairs nothing either.
        f.rack.rtt_sampled_since_probe = true;
        f.rack.on_probe_sent(ms(200), 200, false);
        assert!(!f.rack.tlp_on_ack(&ack(200, &[], ms(200), false)));
    }
}
