//! Loss recovery: what to (re)transmit next and how much is in the network.
//!
//! [`LossRecovery`] is the sender's recovery state machine. It decides when a loss episode
//! starts and ends, chooses the next segment, and estimates the bytes in flight; the sender
//! owns the sequence variables, the scoreboard and the congestion controller and calls the
//! controller's hooks when [`LossRecovery::on_ack`] reports a transition.
//!
//! Three phases ([`RecoveryPhase`]):
//!
//! - **Open**: no loss being repaired. Duplicate ACKs are counted; with SACK, new data may go
//!   out on them when `pipe` allows (RFC 6675 §5 step (3), the pipe-governed form of Limited
//!   Transmit). `HighRxt` stays at `HighACK` ("(3.1) Set HighRxt to HighACK").
//! - **FastRecovery**, entered on the DupThresh-th duplicate ACK, or with SACK when
//!   `IsLost(HighACK + 1)` (RFC 6675 §5 steps (1), (2); RFC 5681 §3.2), and only once the
//!   cumulative ACK has reached the previous recovery point, so that one window of data is
//!   reduced at most once (RFC 6582 §3.2 step 2, the `recover` variable; RFC 6675 §5 step (4)
//!   "If no previous loss event has occurred ... or the cumulative acknowledgment point is
//!   beyond the last value of RecoveryPoint"). On entry `RecoveryPoint = HighData` (4.1), the
//!   first unacknowledged segment is retransmitted whatever the window (4.3), and the sender
//!   tells the controller, which sets `ssthresh = cwnd` from FlightSize (4.2).
//!   - With SACK (RFC 6675 §4–§5): `pipe` is `SetPipe()`, the next segment is `NextSeg()`:
//!     (1) the lowest un-SACKed octet above `HighRxt` that `IsLost`, (2) new data, (3) the
//!     lowest un-SACKed octet above `HighRxt` below the highest SACKed octet, (4) once per
//!     episode, a "rescue" retransmission of up to one SMSS holding the highest un-SACKed
//!     outstanding octet, allowed when "HighACK > RescueRxt", after which RescueRxt is "set
//!     to RecoveryPoint" and "HighRxt MUST NOT be updated".
//!   - Without SACK (RFC 6582 §3.2, NewReno): the window is inflated by DupThresh·SMSS on
//!     entry and by one SMSS per further duplicate ACK; a partial ACK retransmits the first
//!     unacknowledged segment and deflates "the congestion window by the amount of new data
//!     acknowledged ... If the partial ACK acknowledges at least one SMSS of new data, then add
//!     back SMSS bytes"; `pipe` is FlightSize.
//!
//!   The episode ends when the cumulative ACK reaches `RecoveryPoint` (RFC 6675 step (A),
//!   RFC 6582 full ACK: the inflation is dropped, leaving `cwnd = ssthresh`, option (2)).
//! - **Timeout**: after the retransmission timer fires (RFC 6298 §5.4–§5.6, RFC 5681 §3.1,
//!   RFC 6675 §5.1): "RecoveryPoint MUST be set to HighData" and fast recovery ends; every
//!   un-SACKed octet below that point is considered lost and is resent from `HighACK` upwards
//!   (go-back-N), skipping SACKed data, which is kept on the scoreboard (§5.1: the scoreboard
//!   is not cleared). No new fast recovery starts until the cumulative ACK reaches the
//!   recovery point (§5.1, RFC 6582 §3.2 "RTO ... recover = highest sent").
//!
//! Decisions worth knowing:
//!
//! - Within an episode, retransmissions are confined below its recovery point. Data sent
//!   during the episode that is lost is a loss in the next window: it starts its own episode
//!   (and its own window reduction) once this one ends, rather than being repaired silently.
//! - Sequence numbers here are half-open: `snd_una` is the first unacknowledged byte
//!   (RFC 6675's `HighACK + 1`), `snd_nxt` is one past the highest byte sent (`HighData + 1`),
//!   `high_rxt` is one past the highest byte retransmitted in the episode.
//! - `SetPipe()` is evaluated over holes, not octets: all un-SACKed octets below the lost
//!   boundary ([`Scoreboard::lost_boundary`]) are lost, all above are not, so
//!   `pipe = unSACKed[lost, snd_nxt) + unSACKed[snd_una, high_rxt)` (condition (a) counts the
//!   first term, condition (b) "S1 <= HighRxt" the second). With no SACK state this is
//!   `snd_nxt - snd_una` in O(1).
//! - Without SACK, a duplicate ACK is RFC 5681's: no new cumulative ACK while data is
//!   outstanding. The advertised-window clause is left out because the receiver's window
//!   shrinks as it queues out-of-order data. With SACK, a duplicate ACK is RFC 6675's: one that
//!   SACKs octets not SACKed before (a cumulative ACK resets the count first, as §5 orders).
//!
//! **With RACK-TLP** (RFC 8985; [`Rack`], when `rack_tlp` and `sack` are on) the functions
//! below take the sender's [`Rack`] and extend the rules above; without it (`None`) they are
//! exactly the rules above. RFC 8985 §9.2 says RFC 6675 as written "MUST NOT be used with
//! RACK-TLP; instead, a modified recovery algorithm that carefully addresses such a case [a
//! lost retransmission] is needed". This is the modification:
//!
//! - **Entry**: a segment RACK marks lost also starts fast recovery (in the Open phase, so
//!   still at most once per window). When RACK alone detected the loss, the window-exempt
//!   first retransmission (4.3) is the lowest segment RACK marked lost rather than the first
//!   unacknowledged one (which RACK may know to be in flight).
//! - **`NextSeg()`**: a segment RACK marked lost and not retransmitted since ("pending") is
//!   sent before everything but that first retransmission — before rule (1) when it lies
//!   lower — whether or not it was retransmitted before (a lost retransmission lies below
//!   `HighRxt`, where rule (1) never looks) and whether or not `IsLost` holds for it. Like
//!   rule (1) it stays below the recovery point; unlike it, it leaves `HighRxt` alone
//!   ([`SegmentKind::RackLost`]), and rules (1) and (3) pass over the segments RACK marked
//!   lost that were resent above `HighRxt`.
//! - **`SetPipe()`**: an octet is lost if it is below the recovery point and `IsLost` or RACK
//!   says so; it counts as retransmitted if it is below `HighRxt` and RACK has not found that
//!   retransmission lost (it is pending again), or if RACK had marked it lost and it was
//!   resent above `HighRxt`. Over holes, with `lost` the `IsLost` boundary clipped to the
//!   recovery `point` (`snd_nxt` in the Open phase):
//!
//!   ```text
//!   pipe = unSACKed[lost, snd_nxt) - RACKlost[lost, point)
//!        + unSACKed[snd_una, high_rxt) - pending[snd_una, high_rxt) + resent[high_rxt, point)
//!   ```
//!
//!   A pending octet counts nothing; once resent, one. Lost octets at or above the recovery point stay
//!   counted: this episode does not resend them, and taking them out of the pipe lets new
//!   data take their place for as long as the episode lasts — which, with lost
//!   retransmissions repaired instead of ending in a timeout, can be long: the flight then
//!   grows without bound (a CUBIC dumbbell with a 50-packet buffer did that). They leave it
//!   when the next episode starts. (Without RACK, RFC 6675's rule stands: `IsLost` octets
//!   above the recovery point are out of the pipe.)
//! - After a timeout the go-back-N pass is unchanged; RACK's marks made during it (lost
//!   go-back-N retransmissions) are resent first, the same way.
//!
//! An episode still starts with one congestion event. A retransmission RACK finds lost during
//! it brings the controller another one when PRR is off (RFC 8985 §9.3, once per window):
//! the sender decides that, see [`super::core`] and [`super::rack`].

use super::rack::{Lostness, Rack};
use super::sack::Scoreboard;
use super::TcpConfig;
use crate::packet::DataSegment;
use crate::time::SimTime;

/// Where the sender stands with respect to loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryPhase {
    /// No loss being repaired.
    Open,
    /// Fast retransmit / fast recovery (RFC 6675 §5 with SACK, RFC 6582 without).
    FastRecovery,
    /// Repairing after a retransmission timeout, until the cumulative ACK reaches the recovery
    /// point.
    Timeout,
}

/// Why a segment is being sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentKind {
    /// The first unacknowledged segment, sent whatever the window: fast retransmit on entering
    /// recovery (RFC 6675 (4.3), RFC 5681 §3.2) or after a NewReno partial ACK.
    FastRetransmit,
    /// A segment presumed lost: `NextSeg()` rule (1), or go-back-N after a timeout.
    Lost,
    /// Previously unsent data: rule (2).
    NewData,
    /// Un-SACKed data below the highest SACKed octet, not yet deemed lost: rule (3).
    Unsacked,
    /// The rescue retransmission: rule (4).
    Rescue,
    /// A segment RACK (RFC 8985) marked lost and not resent since, perhaps a lost
    /// retransmission; it does not move `HighRxt`.
    RackLost,
    /// A tail loss probe resending the highest segment (RFC 8985 §7.3); a probe of new data
    /// is [`SegmentKind::NewData`].
    Probe,
}

/// A segment chosen by [`LossRecovery::next_segment`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmission {
    pub seq: u64,
    pub len: u32,
    pub kind: SegmentKind,
}

impl Transmission {
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }

    /// The segment as sent at `now`.
    pub fn sent_at(&self, now: SimTime) -> DataSegment {
        DataSegment {
            seq: self.seq,
            len: self.len,
            sent_at: now,
            is_retransmission: self.is_retransmission(),
        }
    }

    pub fn is_retransmission(&self) -> bool {
        self.kind != SegmentKind::NewData
    }
    /// Whether the segment goes out even when `pipe` has reached `cwnd`.
    pub fn ignores_window(&self) -> bool {
        self.kind == SegmentKind::FastRetransmit
    }
}

/// What one ACK changed, for the sender to tell the congestion controller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckTransition {
    /// Fast recovery was active when the ACK arrived.
    pub was_in_fast_recovery: bool,
    /// The ACK ended fast recovery.
    pub exited: bool,
    /// The ACK started fast recovery.
    pub entered: bool,
}

/// Loss recovery state (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LossRecovery {
    sack: bool,
    dupack_threshold: u32,
    mss: u32,
    phase: RecoveryPhase,
    dupacks: u32,
    /// RFC 6675 `RecoveryPoint` / RFC 6582 `recover`, exclusive; `None` before any loss.
    recovery_point: Option<u64>,
    /// One past the highest byte retransmitted in this episode (`HighRxt + 1`).
    high_rxt: u64,
    /// Rule (4) is allowed while `snd_una > rescue_rxt` (RFC "HighACK > RescueRxt").
    rescue_rxt: Option<u64>,
    /// The first unacknowledged segment is owed a retransmission.
    retransmit_head: bool,
    /// The episode was started by RACK alone: its first retransmission is RACK's lowest lost
    /// segment.
    rack_entry: bool,
    /// NewReno window inflation in bytes (may go negative after deflation).
    inflation: i64,
}

impl LossRecovery {
    pub fn new(config: &TcpConfig) -> Self {
        LossRecovery {
            sack: config.sack,
            dupack_threshold: config.dupack_threshold.max(1),
            mss: config.mss,
            phase: RecoveryPhase::Open,
            dupacks: 0,
            recovery_point: None,
            high_rxt: 0,
            rescue_rxt: None,
            retransmit_head: false,
            rack_entry: false,
            inflation: 0,
        }
    }

    pub fn phase(&self) -> RecoveryPhase {
        self.phase
    }

    pub fn in_fast_recovery(&self) -> bool {
        self.phase == RecoveryPhase::FastRecovery
    }

    /// Duplicate ACKs counted since the last cumulative ACK.
    pub fn dupacks(&self) -> u32 {
        self.dupacks
    }

    /// The current or last recovery point (exclusive), if a loss was ever detected.
    pub fn recovery_point(&self) -> Option<u64> {
        self.recovery_point
    }

    /// One past the highest byte retransmitted in the current episode.
    pub fn high_rxt(&self) -> u64 {
        self.high_rxt
    }

    /// NewReno window inflation (zero with SACK and outside fast recovery).
    pub fn window_inflation(&self) -> i64 {
        self.inflation
    }

    /// Processes an ACK the sender has already applied: `snd_una` is the new cumulative point,
    /// the scoreboard is updated, `newly_acked`/`newly_sacked` are what this ACK added, and
    /// `rack` (if RACK-TLP is on) has marked what it found lost.
    #[inline(always)]
    pub fn on_ack(
        &mut self,
        scoreboard: &Scoreboard,
        snd_una: u64,
        snd_nxt: u64,
        newly_acked: u64,
        newly_sacked: u64,
        rack: Option<&Rack>,
    ) -> AckTransition {
        let mut transition = AckTransition {
            was_in_fast_recovery: self.in_fast_recovery(),
            ..AckTransition::default()
        };
        let outstanding = snd_nxt > snd_una;
        // RFC 6675 §5: "If the incoming ACK is a cumulative acknowledgment, the TCP MUST reset
        // DupAcks to zero"; then a duplicate (new SACK information, "regardless of its status
        // as a cumulative acknowledgment") counts one. RFC 5681 §2: without SACK a duplicate
        // does not move the cumulative point.
        let duplicate = outstanding
            && if self.sack {
                newly_sacked > 0
            } else {
                newly_acked == 0
            };
        if newly_acked > 0 {
            self.dupacks = 0;
        }
        if duplicate {
            self.dupacks = self.dupacks.saturating_add(1);
        }

        let reached_point = !matches!(self.recovery_point, Some(point) if snd_una < point);
        match self.phase {
            RecoveryPhase::FastRecovery if reached_point => {
                // RFC 6675 (A) / RFC 6582 step 6 (full ACK): leave recovery.
                self.phase = RecoveryPhase::Open;
                self.inflation = 0;
                self.retransmit_head = false;
                transition.exited = true;
            }
            RecoveryPhase::FastRecovery if !self.sack => {
                if newly_acked > 0 {
                    // RFC 6582 step 5 (partial ACK): retransmit the first unacknowledged
                    // segment, deflate by the amount acknowledged, add back one SMSS if at
                    // least one SMSS was acknowledged.
                    self.retransmit_head = true;
                    self.inflation -= newly_acked as i64;
                    if newly_acked >= self.mss as u64 {
                        self.inflation += self.mss as i64;
                    }
                } else if duplicate {
                    // RFC 6582 step 4: "increment cwnd by SMSS" per additional duplicate ACK.
                    self.inflation += self.mss as i64;
                }
            }
            RecoveryPhase::Timeout if reached_point => self.phase = RecoveryPhase::Open,
            _ => {}
        }

        if self.phase == RecoveryPhase::Open {
            self.high_rxt = snd_una;
            let loss_detected = self.dupacks >= self.dupack_threshold
                || (self.sack && scoreboard.is_lost(snd_una, self.dupack_threshold, self.mss));
            let rack_loss = rack.is_some_and(Rack::has_pending);
            // The RFC 6582 `recover` test ("covers more than recover") needs no check here:
            // the phase only returns to Open once the cumulative ACK reaches the point.
            if outstanding && (loss_detected || rack_loss) {
                self.enter(snd_una, snd_nxt);
                self.rack_entry = !loss_detected;
                transition.entered = true;
            }
        } else {
            self.high_rxt = self.high_rxt.max(snd_una);
        }
        transition
    }

    /// What [`LossRecovery::on_ack`] does for an ACK that acknowledges new data and SACKs
    /// nothing in the Open phase with an empty scoreboard and without RACK: the duplicate
    /// count restarts and `HighRxt` follows the cumulative point; no episode can start.
    #[inline]
    pub fn on_cumulative_ack_in_open(&mut self, snd_una: u64) {
        debug_assert_eq!(self.phase, RecoveryPhase::Open);
        self.dupacks = 0;
        self.high_rxt = snd_una;
    }

    /// What [`LossRecovery::on_ack`] and then [`LossRecovery::pipe`] do for an ACK that
    /// acknowledges new data and SACKs nothing, after a timeout, leaving the scoreboard empty
    /// (everything SACKed lay below the new `snd_una`), without RACK: the duplicate count
    /// restarts; at the recovery point the phase is Open again (no episode can start: no
    /// duplicate and nothing SACKed for `IsLost`) and `pipe` is FlightSize; before it,
    /// `HighRxt` follows the cumulative point, and `pipe` is what lies above the recovery point
    /// (not lost) plus what was resent above `snd_una`. Returns `pipe`.
    #[inline]
    pub fn on_cumulative_ack_after_timeout(&mut self, snd_una: u64, snd_nxt: u64) -> u64 {
        debug_assert_eq!(self.phase, RecoveryPhase::Timeout);
        self.dupacks = 0;
        // `on_timeout` set the point.
        let point = self.recovery_point.unwrap_or(snd_una);
        if snd_una >= point {
            self.phase = RecoveryPhase::Open;
            self.high_rxt = snd_una;
            return snd_nxt - snd_una;
        }
        self.high_rxt = self.high_rxt.max(snd_una);
        // SetPipe with nothing SACKed: (a) the octets at or above the lost boundary (the
        // recovery point), (b) those below `HighRxt`.
        let lost = point.min(snd_nxt);
        (snd_nxt - lost) + (self.high_rxt.min(snd_nxt) - snd_una)
    }

    /// RFC 6675 step (4) / RFC 6582 step 3: start a fast-recovery episode.
    fn enter(&mut self, snd_una: u64, snd_nxt: u64) {
        self.phase = RecoveryPhase::FastRecovery;
        self.recovery_point = Some(snd_nxt);
        self.high_rxt = snd_una;
        self.rescue_rxt = None;
        self.retransmit_head = true;
        // RFC 6582 step 3: "cwnd = ssthresh + 3*SMSS" (DupThresh segments have left the
        // network). With SACK, pipe accounts for them instead.
        self.inflation = if self.sack {
            0
        } else {
            self.dupack_threshold as i64 * self.mss as i64
        };
    }

    /// RACK's reordering timer marked a segment lost (RFC 8985 §6.3): fast recovery starts if
    /// the sender is in the Open phase with data outstanding. Returns whether it started.
    pub fn on_rack_loss(&mut self, snd_una: u64, snd_nxt: u64) -> bool {
        if self.phase != RecoveryPhase::Open || snd_una >= snd_nxt {
            return false;
        }
        self.enter(snd_una, snd_nxt);
        self.rack_entry = true;
        true
    }

    /// The retransmission timer fired with data outstanding.
    pub fn on_timeout(&mut self, snd_una: u64, snd_nxt: u64) {
        self.phase = RecoveryPhase::Timeout;
        self.recovery_point = Some(snd_nxt);
        self.high_rxt = snd_una;
        self.rescue_rxt = None;
        self.retransmit_head = false;
        self.inflation = 0;
        self.dupacks = 0;
    }

    /// Every un-SACKed octet in `[snd_una, boundary)` is considered lost, none above it.
    #[inline]
    pub fn lost_boundary(&self, scoreboard: &Scoreboard, snd_una: u64) -> u64 {
        match self.phase {
            RecoveryPhase::Timeout => self.recovery_point.unwrap_or(snd_una).max(snd_una),
            // Nothing SACKed (the common case): the scoreboard's boundary is HighACK, without
            // setting up a walk over no ranges.
            _ if self.sack && scoreboard.is_empty() => scoreboard.high_ack().max(snd_una),
            _ if self.sack => scoreboard
                .lost_boundary(self.dupack_threshold, self.mss)
                .max(snd_una),
            _ => snd_una,
        }
    }

    /// The lost boundary clipped to `snd_nxt`, as in SetPipe, and the bytes SACKed from it to
    /// `snd_nxt`. With SACK outside the timeout phase the walk that finds the boundary sums
    /// those bytes on its way down, when the boundary is the start of the range it stopped at
    /// and no range lies above `snd_nxt` (always, for a scoreboard the sender updated);
    /// otherwise they are searched for.
    #[inline(always)]
    fn lost_boundary_and_sacked_from(
        &self,
        scoreboard: &Scoreboard,
        snd_una: u64,
        snd_nxt: u64,
    ) -> (u64, u64) {
        if self.sack && self.phase != RecoveryPhase::Timeout {
            let (boundary, sacked_from) =
                scoreboard.lost_boundary_and_sacked_from(self.dupack_threshold, self.mss);
            let lost = boundary.max(snd_una).min(snd_nxt);
            if lost == boundary && scoreboard.highest_sacked().is_some_and(|e| e <= snd_nxt) {
                return (lost, sacked_from);
            }
        }
        let lost = self.lost_boundary(scoreboard, snd_una).min(snd_nxt);
        (lost, scoreboard.sacked_between(lost, snd_nxt))
    }

    /// RFC 6675 `SetPipe()` (FlightSize without SACK), computed over holes; with RACK-TLP,
    /// extended as the module documentation says.
    #[inline(always)]
    pub fn pipe(
        &self,
        scoreboard: &Scoreboard,
        snd_una: u64,
        snd_nxt: u64,
        rack: Option<&Rack>,
    ) -> u64 {
        let Some(rack) = rack else {
            return self.rfc6675_pipe(scoreboard, snd_una, snd_nxt);
        };
        // What this episode resends lies below the recovery point; above it nothing leaves the
        // pipe before the next episode.
        let point = match self.phase {
            RecoveryPhase::Open => snd_nxt,
            _ => self.recovery_point.unwrap_or(snd_nxt).min(snd_nxt),
        };
        let boundary = self.lost_boundary(scoreboard, snd_una).min(snd_nxt);
        if !rack.has_lost() && boundary <= point {
            return self.rfc6675_pipe(scoreboard, snd_una, snd_nxt);
        }
        let lost = boundary.min(point);
        let retransmitted_end = self.high_rxt.max(snd_una).min(snd_nxt);
        // Not lost: neither below the (clipped) IsLost boundary nor marked lost by RACK.
        let not_lost = (snd_nxt - lost)
            - scoreboard.sacked_between(lost, snd_nxt)
            - rack.lost_bytes(scoreboard, lost, point, Lostness::Any);
        // Retransmitted: below HighRxt unless RACK found the retransmission lost, and the
        // segments RACK had marked lost resent above HighRxt.
        let retransmitted = (retransmitted_end - snd_una)
            - scoreboard.sacked_between(snd_una, retransmitted_end)
            - rack.lost_bytes(scoreboard, snd_una, retransmitted_end, Lostness::Pending)
            + rack.lost_bytes(scoreboard, retransmitted_end, point, Lostness::Resent);
        not_lost + retransmitted
    }

    #[inline(always)]
    fn rfc6675_pipe(&self, scoreboard: &Scoreboard, snd_una: u64, snd_nxt: u64) -> u64 {
        let retransmitted_end = self.high_rxt.max(snd_una).min(snd_nxt);
        if scoreboard.is_empty() {
            // The common case, no SACK information: the same sums with nothing SACKed and
            // nothing lost below the boundary, without walking the (empty) ranges.
            let lost = self.lost_boundary(scoreboard, snd_una).min(snd_nxt);
            return (snd_nxt - lost) + (retransmitted_end - snd_una);
        }
        let (lost, sacked_from_lost) =
            self.lost_boundary_and_sacked_from(scoreboard, snd_una, snd_nxt);
        debug_assert_eq!(lost, self.lost_boundary(scoreboard, snd_una).min(snd_nxt));
        debug_assert_eq!(sacked_from_lost, scoreboard.sacked_between(lost, snd_nxt));
        // (a) "If IsLost (S1) returns false: Pipe is incremented by 1 octet."
        let not_lost = (snd_nxt - lost) - sacked_from_lost;
        // (b) "If S1 <= HighRxt: Pipe is incremented by 1 octet."
        let retransmitted =
            (retransmitted_end - snd_una) - scoreboard.sacked_between(snd_una, retransmitted_end);
        not_lost + retransmitted
    }

    /// Whether the next segment is the fast retransmit of the first unacknowledged one, which
    /// goes whatever the window ([`SegmentKind::FastRetransmit`]).
    #[inline]
    pub fn head_retransmit_due(&self, snd_una: u64, snd_nxt: u64) -> bool {
        self.phase == RecoveryPhase::FastRecovery && self.retransmit_head && snd_una < snd_nxt
    }

    /// The next segment to send, if any, before any window check. `new_data_len` is the
    /// length of the next new segment the application data and the peer's window allow (zero
    /// if none).
    #[inline(always)]
    pub fn next_segment(
        &self,
        scoreboard: &Scoreboard,
        snd_una: u64,
        snd_nxt: u64,
        new_data_len: u32,
        rack: Option<&Rack>,
    ) -> Option<Transmission> {
        let mss = self.mss as u64;
        if self.head_retransmit_due(snd_una, snd_nxt) {
            if let Some((start, end)) = rack
                .filter(|_| self.rack_entry)
                .and_then(|r| r.first_pending(scoreboard, snd_una, snd_nxt))
            {
                return Some(segment(
                    start,
                    end.min(start + mss),
                    SegmentKind::FastRetransmit,
                ));
            }
            let hole_end = scoreboard.next_sacked_start(snd_una).unwrap_or(snd_nxt);
            let end = (snd_una + mss).min(hole_end).min(snd_nxt);
            return Some(segment(snd_una, end, SegmentKind::FastRetransmit));
        }
        if self.phase == RecoveryPhase::Open {
            // Outside recovery only new data goes (rule (2) below), so no hole is looked for:
            // the per-ACK fast path.
            return (new_data_len > 0).then_some(Transmission {
                seq: snd_nxt,
                len: new_data_len,
                kind: SegmentKind::NewData,
            });
        }
        let point = self.recovery_point.unwrap_or(snd_una).min(snd_nxt);
        let mut first_candidate = scoreboard.next_unsacked(self.high_rxt.max(snd_una));
        if let Some(rack) = rack {
            // Segments RACK marked lost and already resent above HighRxt are not candidates.
            while let Some(end) = rack.resent_lost_end(first_candidate) {
                first_candidate = scoreboard.next_unsacked(end);
            }
        }
        // Rule (1) (and go-back-N after a timeout): "the smallest unSACKed sequence number
        // 'S2' ... greater than HighRxt ... IsLost (S2)", here kept below RecoveryPoint.
        let limit = self.lost_boundary(scoreboard, snd_una).min(point);
        if let Some((start, end)) = rack.and_then(|r| r.first_pending(scoreboard, snd_una, point)) {
            // RACK's lost segments, resent before or not, before rule (1) when lower.
            if first_candidate >= limit || start < first_candidate {
                return Some(segment(start, end.min(start + mss), SegmentKind::RackLost));
            }
        }
        if first_candidate < limit {
            return Some(self.hole_segment(scoreboard, first_candidate, limit, SegmentKind::Lost));
        }
        if new_data_len > 0 {
            // Rule (2): "available unsent data and the receiver's advertised window allows".
            return Some(Transmission {
                seq: snd_nxt,
                len: new_data_len,
                kind: SegmentKind::NewData,
            });
        }
        if self.phase != RecoveryPhase::FastRecovery || !self.sack {
            return None;
        }
        // Rule (3): as rule (1) without the IsLost condition.
        let highest_sacked = scoreboard.highest_sacked().unwrap_or(snd_una).min(point);
        if first_candidate < highest_sacked {
            return Some(self.hole_segment(
                scoreboard,
                first_candidate,
                highest_sacked,
                SegmentKind::Unsacked,
            ));
        }
        // Rule (4): once, when "HighACK > RescueRxt (or RescueRxt is undefined)", up to one
        // SMSS that "MUST include the highest outstanding unSACKed sequence number".
        if self.rescue_rxt.is_some_and(|rescue| snd_una <= rescue) || point <= snd_una {
            return None;
        }
        let top_end = match scoreboard.ranges().range_containing(point - 1) {
            Some((start, _)) => start,
            None => point,
        };
        if top_end <= snd_una {
            return None;
        }
        let hole_start = scoreboard
            .ranges()
            .previous_end(top_end - 1)
            .unwrap_or(snd_una)
            .max(snd_una);
        let start = top_end.saturating_sub(mss).max(hole_start);
        Some(segment(start, top_end, SegmentKind::Rescue))
    }

    /// Up to one SMSS from `start`, stopping at the next SACKed range and at `limit`.
    fn hole_segment(
        &self,
        scoreboard: &Scoreboard,
        start: u64,
        limit: u64,
        kind: SegmentKind,
    ) -> Transmission {
        let hole_end = scoreboard.next_sacked_start(start).unwrap_or(u64::MAX);
        let end = (start + self.mss as u64).min(hole_end).min(limit);
        segment(start, end, kind)
    }

    /// Records that `t` was sent; returns how much `pipe` grows (RFC 6675 (C.4) "incrementing
    /// pipe by the number of octets transmitted", except where SetPipe would not count them).
    pub fn on_transmit(&mut self, t: &Transmission) -> u64 {
        let len = t.len as u64;
        match t.kind {
            SegmentKind::FastRetransmit => {
                self.retransmit_head = false;
                if self.sack {
                    // (4.3): "set both HighRxt and RescueRxt to the highest sequence number in
                    // the retransmitted segment" (HighRxt only when the segment starts at or
                    // below it: with RACK the first retransmission may lie higher).
                    if t.seq <= self.high_rxt {
                        self.high_rxt = self.high_rxt.max(t.end());
                    }
                    self.rescue_rxt = Some(t.end());
                    len
                } else {
                    // NewReno's pipe is FlightSize, which a retransmission does not change.
                    0
                }
            }
            SegmentKind::Lost | SegmentKind::Unsacked => {
                // (C.2): "HighRxt MUST be set to the highest sequence number of the
                // retransmitted segment".
                self.high_rxt = self.high_rxt.max(t.end());
                len
            }
            SegmentKind::NewData | SegmentKind::RackLost => len,
            SegmentKind::Rescue => {
                // Rule (4): "RescueRxt set to RecoveryPoint. HighRxt MUST NOT be updated." An
                // octet above HighRxt adds nothing to SetPipe for its second copy.
                self.rescue_rxt = self.recovery_point;
                0
            }
            // A second copy of an octet above HighRxt, as the rescue.
            SegmentKind::Probe => 0,
        }
    }
}

fn segment(start: u64, end: u64, kind: SegmentKind) -> Transmission {
    debug_assert!(end > start);
    Transmission {
        seq: start,
        len: (end - start) as u32,
        kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 100;

    fn config(sack: bool) -> TcpConfig {
        TcpConfig {
            mss: MSS,
            sack,
            ..TcpConfig::default()
        }
    }

    /// Scoreboard at `snd_una` with the given SACKed ranges.
    fn board(snd_una: u64, snd_nxt: u64, blocks: &[(u64, u64)]) -> Scoreboard {
        let mut sb = Scoreboard::new();
        sb.update(snd_una, snd_nxt, blocks);
        sb
    }

    /// Octet-by-octet SetPipe exactly as RFC 6675 §4 words it, for comparison.
    fn pipe_by_octets(r: &LossRecovery, sb: &Scoreboard, snd_una: u64, snd_nxt: u64) -> u64 {
        let mut pipe = 0;
        for s in snd_una..snd_nxt {
            if sb.is_sacked(s) {
                continue;
            }
            let lost = match r.phase() {
                RecoveryPhase::Timeout => s < r.recovery_point().unwrap(),
                _ => sb.is_lost(s, 3, MSS),
            };
            if !lost {
                pipe += 1;
            }
            if s < r.high_rxt() {
                pipe += 1;
            }
        }
        pipe
    }

    /// The same with RACK's marks (module documentation): lost below the recovery point if
    /// `IsLost` or RACK says so; retransmitted below HighRxt unless RACK found the
    /// retransmission lost, or above it if RACK had marked it lost and it was resent.
    fn pipe_by_octets_with_rack(
        r: &LossRecovery,
        sb: &Scoreboard,
        rack: &Rack,
        snd_una: u64,
        snd_nxt: u64,
    ) -> u64 {
        let mut pipe = 0;
        for s in snd_una..snd_nxt {
            if sb.is_sacked(s) {
                continue;
            }
            let point = match r.phase() {
                RecoveryPhase::Open => snd_nxt,
                _ => r.recovery_point().unwrap(),
            };
            let lost = s < point
                && (match r.phase() {
                    RecoveryPhase::Timeout => s < r.recovery_point().unwrap(),
                    _ => sb.is_lost(s, 3, MSS),
                } || rack.is_lost(s));
            if !lost {
                pipe += 1;
            }
            let resent = if s < r.high_rxt() {
                !rack.is_pending(s)
            } else {
                s < point && rack.resent_lost_end(s).is_some()
            };
            if resent {
                pipe += 1;
            }
        }
        pipe
    }

    #[test]
    fn rack_losses_are_resent_first_and_leave_the_pipe_lost_retransmissions_included() {
        use crate::packet::{AckSegment, SackBlocks};
        use crate::time::SimTime;
        use crate::transport::rtt::RttEstimator;

        let ms = SimTime::from_millis;
        let config = config(true);
        let mut r = LossRecovery::new(&config);
        let mut rack = Rack::new(&config);
        let mut sb = Scoreboard::new();
        let mut rtt = RttEstimator::new(ms(1000), ms(1), ms(60_000));
        rtt.on_sample(ms(40));
        // Ten segments, segment k sent at k ms.
        for k in 0..10u64 {
            rack.on_transmit(ms(k), k * 100, (k + 1) * 100, false);
        }
        let ack = |r: &mut LossRecovery,
                   rack: &mut Rack,
                   sb: &mut Scoreboard,
                   now: SimTime,
                   cumulative: u64,
                   blocks: &[(u64, u64)],
                   echo: SimTime,
                   snd_nxt: u64| {
            let mut sack = SackBlocks::EMPTY;
            for &(a, b) in blocks {
                sack.push(a, b);
            }
            let a = AckSegment {
                ack: cumulative,
                sack,
                rwnd: 1 << 30,
                echo_sent_at: echo,
                echo_is_retransmission: false,
            };
            let before = sb.high_ack();
            rack.before_scoreboard_update(sb, &a, snd_nxt);
            let newly_sacked = sb.update(cumulative, snd_nxt, blocks);
            let in_recovery = r.phase() != RecoveryPhase::Open;
            rack.on_ack(now, &a, sb, cumulative, &rtt, false, in_recovery);
            r.on_ack(
                sb,
                cumulative,
                snd_nxt,
                cumulative - before,
                newly_sacked,
                Some(rack),
            )
        };
        // Segment 5 SACKed at 45 ms: one duplicate, nothing lost for RFC 6675 or (yet) RACK.
        let t = ack(
            &mut r,
            &mut rack,
            &mut sb,
            ms(45),
            0,
            &[(500, 600)],
            ms(5),
            1_000,
        );
        assert!(!t.entered);
        assert_eq!(rack.reo_deadline(), Some(ms(50)));
        // At 54 ms the reordering timer has found segments 0 to 4 lost (sent 40 ms + 10 ms
        // before): fast recovery, and RACK's first lost segment goes first.
        assert_eq!(rack.on_reo_timeout(ms(54), &rtt, false), 5);
        assert!(r.on_rack_loss(0, 1_000));
        assert_eq!(r.lost_boundary(&sb, 0), 0, "IsLost holds nowhere");
        assert_eq!(r.pipe(&sb, 0, 1_000, Some(&rack)), 400);
        let mut sent = Vec::new();
        while let Some(t) = r.next_segment(&sb, 0, 1_000, 0, Some(&rack)) {
            r.on_transmit(&t);
            rack.on_transmit(ms(55), t.seq, t.end(), true);
            sent.push((t.seq, t.kind));
            assert_eq!(
                r.pipe(&sb, 0, 1_000, Some(&rack)),
                pipe_by_octets_with_rack(&r, &sb, &rack, 0, 1_000)
            );
        }
        assert_eq!(
            sent,
            [
                (0, SegmentKind::FastRetransmit),
                (100, SegmentKind::RackLost),
                (200, SegmentKind::RackLost),
                (300, SegmentKind::RackLost),
                (400, SegmentKind::RackLost),
            ]
        );
        assert_eq!(
            r.high_rxt(),
            100,
            "RACK's retransmissions leave HighRxt alone"
        );
        // Five resent, four (6 to 9) still in flight once.
        assert_eq!(r.pipe(&sb, 0, 1_000, Some(&rack)), 900);
        // New data at 60 ms; at 100 ms it is SACKed with the retransmissions of 2, 3 and 4, and
        // 0's fills the first hole. 1's retransmission, sent before the new data, is lost: it is
        // resent first, below HighRxt where RFC 6675's rule (1) never looks. Segments 6 to 9,
        // sent long before the new data, are overdue too.
        rack.on_transmit(ms(60), 1_000, 1_100, false);
        let blocks = [(1_000, 1_100), (200, 600)];
        ack(
            &mut r,
            &mut rack,
            &mut sb,
            ms(100),
            100,
            &blocks,
            ms(60),
            1_100,
        );
        assert!(rack.is_pending(100));
        assert_eq!(r.lost_boundary(&sb, 100), 200);
        let mut sent = Vec::new();
        loop {
            assert_eq!(
                r.pipe(&sb, 100, 1_100, Some(&rack)),
                pipe_by_octets_with_rack(&r, &sb, &rack, 100, 1_100)
            );
            let t = r.next_segment(&sb, 100, 1_100, 100, Some(&rack)).unwrap();
            if t.kind == SegmentKind::NewData {
                break;
            }
            // 1 is also below the IsLost boundary: rule (1) or RACK's rule, the same segment.
            assert_eq!(t.len, 100);
            assert!(matches!(t.kind, SegmentKind::Lost | SegmentKind::RackLost));
            r.on_transmit(&t);
            rack.on_transmit(ms(100), t.seq, t.end(), true);
            sent.push(t.seq);
        }
        assert_eq!(sent, [100, 600, 700, 800, 900]);
        // 1 and 6 to 9 resent once more each, nothing lost left: pipe counts one copy each.
        assert_eq!(r.pipe(&sb, 100, 1_100, Some(&rack)), 500);
        assert_eq!(rack.stats().lost_retransmissions, 1);
    }

    #[test]
    fn three_duplicates_enter_sack_recovery_once() {
        let mut r = LossRecovery::new(&config(true));
        // Segment 0 lost, 1..=3 SACKed one by one; 10 segments outstanding.
        let mut sb = Scoreboard::new();
        for k in 1..=2u64 {
            let newly = sb.update(0, 1_000, &[(100, 100 + 100 * k)]);
            let t = r.on_ack(&sb, 0, 1_000, 0, newly, None);
            assert!(!t.entered);
        }
        assert_eq!(r.dupacks(), 2);
        let newly = sb.update(0, 1_000, &[(100, 400)]);
        let t = r.on_ack(&sb, 0, 1_000, 0, newly, None);
        assert!(t.entered && !t.was_in_fast_recovery);
        assert_eq!(r.phase(), RecoveryPhase::FastRecovery);
        assert_eq!(r.recovery_point(), Some(1_000));
        // The head goes first, whatever the window.
        let head = r.next_segment(&sb, 0, 1_000, MSS, None).unwrap();
        assert_eq!(
            head,
            Transmission {
                seq: 0,
                len: 100,
                kind: SegmentKind::FastRetransmit
            }
        );
        assert!(head.ignores_window());
        assert_eq!(r.on_transmit(&head), 100);
        // A further duplicate does not re-enter.
        let newly = sb.update(0, 1_000, &[(100, 500)]);
        let t = r.on_ack(&sb, 0, 1_000, 0, newly, None);
        assert!(!t.entered && t.was_in_fast_recovery);
        // Cumulative ACK at the recovery point ends the episode.
        sb.update(1_000, 1_000, &[]);
        let t = r.on_ack(&sb, 1_000, 1_000, 1_000, 0, None);
        assert!(t.exited && !t.entered);
        assert_eq!(r.phase(), RecoveryPhase::Open);
    }

    #[test]
    fn is_lost_enters_without_three_duplicates() {
        let mut r = LossRecovery::new(&config(true));
        // One ACK SACKing three segments at once.
        let sb = board(0, 1_000, &[(100, 400)]);
        let t = r.on_ack(&sb, 0, 1_000, 0, 300, None);
        assert_eq!(r.dupacks(), 1);
        assert!(t.entered);
    }

    #[test]
    fn next_segment_follows_rules_one_to_four() {
        let mut r = LossRecovery::new(&config(true));
        // Holes: [0,100) [200,300) [500,600) [800,1000); SACKed [100,200) [300,500) [600,800).
        let sb = board(0, 1_000, &[(100, 200), (300, 500), (600, 800)]);
        let t = r.on_ack(&sb, 0, 1_000, 0, 500, None);
        assert!(t.entered);
        // 400 SACKed bytes in two ranges above 200 make the holes below 300 lost; above 500
        // there are one range and 200 bytes, not enough.
        assert_eq!(r.lost_boundary(&sb, 0), 300);
        let head = r.next_segment(&sb, 0, 1_000, MSS, None).unwrap();
        assert_eq!(head.kind, SegmentKind::FastRetransmit);
        r.on_transmit(&head);
        // Rule (1) before new data.
        let lost = r.next_segment(&sb, 0, 1_000, MSS, None).unwrap();
        assert_eq!(
            lost,
            Transmission {
                seq: 200,
                len: 100,
                kind: SegmentKind::Lost
            }
        );
        r.on_transmit(&lost);
        // Rule (2) before rule (3).
        let new = r.next_segment(&sb, 0, 1_000, MSS, None).unwrap();
        assert_eq!(
            new,
            Transmission {
                seq: 1_000,
                len: 100,
                kind: SegmentKind::NewData
            }
        );
        // Without new data, rule (3) takes the hole that is not yet lost.
        let unsacked = r.next_segment(&sb, 0, 1_000, 0, None).unwrap();
        assert_eq!(
            unsacked,
            Transmission {
                seq: 500,
                len: 100,
                kind: SegmentKind::Unsacked
            }
        );
        r.on_transmit(&unsacked);
        assert_eq!(r.high_rxt(), 600);
        // Nothing un-SACKed above HighRxt below the highest SACKed octet any more, and rule
        // (4) waits for HighACK to pass RescueRxt (the end of the first retransmission).
        assert_eq!(r.next_segment(&sb, 0, 1_000, 0, None), None);
        // Partial ACK to 200: rescue of the highest un-SACKed octets below the recovery point.
        let sb = board(200, 1_000, &[(300, 500), (600, 800)]);
        r.on_ack(&sb, 200, 1_000, 200, 0, None);
        let rescue = r.next_segment(&sb, 200, 1_000, 0, None).unwrap();
        assert_eq!(
            rescue,
            Transmission {
                seq: 900,
                len: 100,
                kind: SegmentKind::Rescue
            }
        );
        assert_eq!(r.on_transmit(&rescue), 0);
        assert_eq!(r.high_rxt(), 600, "rule (4) leaves HighRxt alone");
        assert_eq!(
            r.next_segment(&sb, 200, 1_000, 0, None),
            None,
            "one rescue per episode"
        );
        assert_eq!(
            r.pipe(&sb, 200, 1_000, None),
            pipe_by_octets(&r, &sb, 200, 1_000)
        );
    }

    #[test]
    fn rule_three_retransmits_unsacked_not_yet_lost() {
        let mut r = LossRecovery::new(&config(true));
        // Holes [0,100) and [200,300), SACKed [100,200) and [300,400): neither hole is lost
        // (two ranges, and 200 SACKed bytes is not more than 2 * SMSS).
        let sb = board(0, 400, &[(100, 200), (300, 400)]);
        assert!(!sb.is_lost(0, 3, MSS));
        // Enter by duplicate count.
        for _ in 0..3 {
            r.on_ack(&sb, 0, 400, 0, 1, None);
        }
        assert!(r.in_fast_recovery());
        let head = r.next_segment(&sb, 0, 400, 0, None).unwrap();
        r.on_transmit(&head);
        let next = r.next_segment(&sb, 0, 400, 0, None).unwrap();
        assert_eq!(
            next,
            Transmission {
                seq: 200,
                len: 100,
                kind: SegmentKind::Unsacked
            }
        );
        assert_eq!(r.on_transmit(&next), 100);
        assert_eq!(r.pipe(&sb, 0, 400, None), pipe_by_octets(&r, &sb, 0, 400));
    }

    #[test]
    fn pipe_matches_the_octet_definition() {
        let cases: &[(&[(u64, u64)], u64)] = &[
            (&[], 0),
            (&[(100, 200)], 0),
            (&[(100, 200), (300, 500), (600, 800)], 0),
            (&[(100, 200), (300, 500), (600, 800)], 550),
            (&[(150, 160), (170, 180), (190, 195), (700, 990)], 300),
        ];
        for &(blocks, high_rxt) in cases {
            let sb = board(0, 1_000, blocks);
            let mut r = LossRecovery::new(&config(true));
            r.phase = RecoveryPhase::FastRecovery;
            r.recovery_point = Some(1_000);
            r.high_rxt = high_rxt;
            assert_eq!(
                r.pipe(&sb, 0, 1_000, None),
                pipe_by_octets(&r, &sb, 0, 1_000),
                "{blocks:?}"
            );
            r.on_timeout(0, 1_000);
            r.high_rxt = high_rxt;
            assert_eq!(
                r.pipe(&sb, 0, 1_000, None),
                pipe_by_octets(&r, &sb, 0, 1_000),
                "{blocks:?}"
            );
        }
    }

    proptest::proptest! {
        /// SetPipe over holes (with the SACKed bytes above the lost boundary summed by the walk
        /// that finds it) equals the octet-by-octet definition, for scoreboards built by the
        /// updates of random ACKs, in every phase, with any `HighRxt`.
        #[test]
        fn pipe_matches_the_octet_definition_for_random_scoreboards(
            acks in proptest::collection::vec(
                (0u64..300, proptest::collection::vec((0u64..1_000, 1u64..300), 0..4)),
                1..6,
            ),
            high_rxt in 0u64..1_100,
            phase in 0u8..3,
        ) {
            let snd_nxt = 1_000;
            let mut sb = Scoreboard::new();
            let mut snd_una = 0;
            for (advance, blocks) in &acks {
                snd_una = (snd_una + advance).min(snd_nxt);
                let blocks: Vec<_> = blocks.iter().map(|&(s, len)| (s, s + len)).collect();
                sb.update(snd_una, snd_nxt, &blocks);
            }
            let mut r = LossRecovery::new(&config(true));
            match phase {
                0 => {}
                1 => {
                    r.phase = RecoveryPhase::FastRecovery;
                    r.recovery_point = Some(snd_nxt);
                }
                _ => r.on_timeout(snd_una.min(500), snd_nxt.min(800)),
            }
            r.high_rxt = high_rxt;
            proptest::prop_assert_eq!(
                r.pipe(&sb, snd_una, snd_nxt, None),
                pipe_by_octets(&r, &sb, snd_una, snd_nxt)
            );
        }
    }

    #[test]
    fn newreno_inflates_deflates_and_retransmits_on_partial_acks() {
        let mut r = LossRecovery::new(&config(false));
        let sb = Scoreboard::new();
        for _ in 0..3 {
            r.on_ack(&sb, 0, 2_000, 0, 0, None);
        }
        assert!(r.in_fast_recovery());
        assert_eq!(r.window_inflation(), 300);
        let head = r.next_segment(&sb, 0, 2_000, 0, None).unwrap();
        assert_eq!(head.kind, SegmentKind::FastRetransmit);
        assert_eq!(r.on_transmit(&head), 0);
        assert_eq!(r.next_segment(&sb, 0, 2_000, 0, None), None);
        r.on_ack(&sb, 0, 2_000, 0, 0, None);
        assert_eq!(r.window_inflation(), 400);
        assert_eq!(
            r.pipe(&sb, 0, 2_000, None),
            2_000,
            "NewReno's pipe is FlightSize"
        );
        // Partial ACK of 500 bytes: -500 + 100.
        let t = r.on_ack(&sb, 500, 2_000, 500, 0, None);
        assert!(!t.exited);
        assert_eq!(r.window_inflation(), 0);
        let head = r.next_segment(&sb, 500, 2_000, MSS, None).unwrap();
        assert_eq!(
            head,
            Transmission {
                seq: 500,
                len: 100,
                kind: SegmentKind::FastRetransmit
            }
        );
        r.on_transmit(&head);
        // Partial ACK of less than one SMSS: deflate only.
        r.on_ack(&sb, 550, 2_000, 50, 0, None);
        assert_eq!(r.window_inflation(), -50);
        // Full ACK.
        let t = r.on_ack(&sb, 2_000, 2_100, 1_450, 0, None);
        assert!(t.exited);
        assert_eq!(r.window_inflation(), 0);
        // Duplicates below the old recovery point could not re-enter; at it they may.
        for _ in 0..3 {
            r.on_ack(&sb, 2_000, 2_100, 0, 0, None);
        }
        assert!(r.in_fast_recovery());
    }

    #[test]
    fn no_second_episode_before_the_recovery_point() {
        let mut r = LossRecovery::new(&config(false));
        let sb = Scoreboard::new();
        r.on_timeout(0, 1_000);
        assert_eq!(r.phase(), RecoveryPhase::Timeout);
        for _ in 0..5 {
            let t = r.on_ack(&sb, 100, 1_000, 0, 0, None);
            assert!(!t.entered);
        }
        r.on_ack(&sb, 1_000, 1_200, 900, 0, None);
        assert_eq!(r.phase(), RecoveryPhase::Open);
    }

    #[test]
    fn timeout_resends_from_snd_una_skipping_sacked_data() {
        let mut r = LossRecovery::new(&config(true));
        let sb = board(0, 600, &[(100, 200), (400, 500)]);
        r.on_timeout(0, 600);
        assert_eq!(r.pipe(&sb, 0, 600, None), 0);
        let mut sent = Vec::new();
        while let Some(t) = r.next_segment(&sb, 0, 600, 0, None) {
            assert_eq!(t.kind, SegmentKind::Lost);
            r.on_transmit(&t);
            sent.push((t.seq, t.end()));
        }
        assert_eq!(sent, vec![(0, 100), (200, 300), (300, 400), (500, 600)]);
        assert_eq!(r.pipe(&sb, 0, 600, None), 400);
        // New data comes only after the go-back-N pass.
        assert_eq!(
            r.next_segment(&sb, 0, 600, MSS, None).unwrap().kind,
            SegmentKind::NewData
        );
    }
}
