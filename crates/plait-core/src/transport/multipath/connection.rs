//! An MPTCP connection (RFC 8684) as one [`Transport`]: several TCP subflows, each a full
//! [`TcpCore`] (SACK, RTO, RACK-TLP and PRR as configured) on its own path with its own
//! [`TcpReceiver`], a data sequence space over them, a shared send buffer, a shared receive
//! buffer ([`DataReceiver`]), a packet scheduler and a coupled congestion controller.
//!
//! **Data level** (reference `multipath_cc.md` §4). The application's byte stream is numbered
//! by data sequence numbers (DSN). New data is cut into chunks of at most one MSS; a chunk
//! handed to a subflow becomes one segment of that subflow's own sequence space, and the
//! subflow keeps the mapping (subflow sequence number, DSN, length) that the DSS option
//! carries on the wire (RFC 8684 §3.3.1). Every copy of a chunk (a reinjection, a redundant
//! copy) keeps the chunk's boundaries, so the receiver can drop copies whole. When a subflow
//! has data in order at its level, the receiver maps it back to DSNs through the same mappings
//! (the simulation reads them from the sender rather than from the packet: the same
//! information) and places it in the shared receive buffer. ACKs carry the DATA_ACK (the next
//! DSN expected) and, in the TCP window field, the connection-level window, as every Linux
//! subflow advertises it (§4.3).
//!
//! **Sender** (§4.2, v0.9x late binding). The application writes while the send buffer has
//! room: at most `send_buffer` bytes from the oldest byte not DATA_ACKed. New data may not pass
//! the right edge of the peer's data-level window (`DATA_ACK + window`, never moved left). The
//! send loop, run after every input: each subflow first sends what its own TCP has to resend
//! (subflow sequence integrity: a subflow repairs its own losses), then, repeatedly, the
//! connection takes the next segment (the head of the reinjection queue, else, when the
//! scheduler wants every subflow to carry the whole stream, the oldest chunk a subflow with
//! room has not carried yet, else the next new chunk), asks the scheduler which subflow
//! carries it, and hands it over if that subflow is usable and has room in its congestion
//! window; it stops when the scheduler says wait or nothing is left. A chunk is not cut shorter to fit the peer's window while data is in
//! flight (data-level silly-window avoidance).
//!
//! **Reinjection** (§4.4, v0.9x triggers). When a subflow's retransmission timer fires, every
//! chunk it holds that is not yet DATA_ACKed is queued for reinjection on another subflow, and
//! the subflow is marked potentially failed (no new data) until an ACK arrives on it. With the
//! scheduler's receive-buffer optimisation (§3.1.4), when new data is blocked by the peer's
//! window or by the send buffer, the oldest chunk not DATA_ACKed may be resent on the fast
//! subflow (opportunistic retransmission) and the slower subflows holding it have their
//! window halved, at most once per SRTT of the fast subflow (penalisation).
//!
//! **Subflows** join at their start time (an offset from the connection's start); the MP_JOIN
//! handshake is not simulated. A path that fails shows as losses and timeouts on its subflow.
//!
//! Header overhead, as Linux sends it (measured on the testbed, Linux 6.18): every data
//! segment carries a DSS option with a 4-byte DATA_ACK, an 8-byte DSN, the subflow sequence
//! number and the data-level length (RFC 8684 §3.3: 4 + 4 + 8 + 4 + 2 = 22 bytes, padded to
//! 24; no DSS checksum), inside its MSS: the options come out of the segment's payload (RFC
//! 6691 §3), so a subflow carries `mss - 24` bytes of data per segment and its packets are as
//! long on the wire as a TCP flow's of the same `mss` (Linux: 1424 payload bytes where TCP
//! carries 1448, both 1500-byte packets). Every ACK carries a DSS option with an 8-byte
//! DATA_ACK (12 bytes).

use std::collections::VecDeque;

use crate::fifo::Fifo;

use crate::ids::PathId;
use crate::packet::{DataSegment, Header, MptcpAck};
use crate::time::SimTime;
use crate::transport::cc::CongestionControl;
use crate::transport::host_noise::HostNoise;
use crate::transport::tcp::{RecoveryPhase, StopMode, TcpConfig, TcpCore, TcpReceiver};
use crate::transport::{
    Direction, Outbox, PathState, Transmit, Transport, TransportEvent, TransportStats,
};

use super::coupled::{Coupled, MultipathCongestionControl, SubflowController};
use super::data_receiver::DataReceiver;
use super::scheduler::min_rtt::NewDataChoice;
use super::scheduler::{
    ConnectionView, Decision, PacketScheduler, Reason, Scheduler, SegmentView, SubflowSet,
    SubflowView, MAX_SUBFLOWS,
};

/// DSS option bytes on a data segment (RFC 8684 §3.3: 22 with Linux's 4-byte DATA_ACK and
/// 8-byte DSN, padded to a multiple of 4), taken from the segment's MSS (RFC 6691 §3).
pub const DSS_DATA_OPTION_BYTES: u32 = 24;
/// DSS option bytes on an ACK: the DATA_ACK alone, 8 bytes as Linux sends it.
pub const DSS_ACK_OPTION_BYTES: u32 = 12;

/// One subflow as configured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubflowConfig {
    /// When the subflow joins, after the connection starts.
    pub start: SimTime,
    /// A backup subflow (RFC 8684 §3.3.8 MP_PRIO): new data only when no other is usable.
    pub backup: bool,
}

/// The settings of a connection.
#[derive(Clone, Debug, PartialEq)]
pub struct MptcpConfig {
    /// Every subflow's TCP settings; `receive_buffer` is ignored (the connection's is used).
    pub tcp: TcpConfig,
    /// Connection-level send buffer in bytes.
    pub send_buffer: u64,
    /// Connection-level receive buffer in bytes.
    pub receive_buffer: u64,
    /// Application bytes to send; `None` for an unbounded bulk transfer.
    pub app_bytes: Option<u64>,
    pub subflows: Vec<SubflowConfig>,
}

impl MptcpConfig {
    /// The data bytes a subflow's full segment carries: the mss less the DSS option inside it
    /// (RFC 6691 §3). The subflows' TCP and the coupled controller count in these.
    pub fn segment_payload(&self) -> u32 {
        self.tcp.mss.saturating_sub(DSS_DATA_OPTION_BYTES)
    }
}

/// Counters of one subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubflowStats {
    /// Data segments and their payload bytes sent, retransmissions and reinjections included.
    pub segments_sent: u64,
    pub bytes_sent: u64,
    /// Segments the subflow's TCP resent (its own loss recovery).
    pub retransmissions: u64,
    /// Bytes of new data this subflow carried first.
    pub new_data_bytes: u64,
    /// Bytes of data-level retransmissions (reinjections, opportunistic retransmissions) and
    /// redundant copies it carried.
    pub reinjected_bytes: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Window halvings by the receive-buffer optimisation.
    pub penalisations: u64,
    /// The integral of the congestion window over time (byte·ns) and the time it covers, for
    /// its time average; the largest window.
    pub cwnd_area: u128,
    pub cwnd_time_ns: u64,
    pub cwnd_max_bytes: u64,
}

/// Counters of the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    /// Time new data was ready but could not go because the peer's window was full.
    pub window_blocked_ns: u64,
    /// Time the application could not write because the send buffer was full.
    pub send_buffer_blocked_ns: u64,
    /// In-order delivery delay (from a chunk's first transmission to when it became readable),
    /// summed over delivered bytes (byte·ns), and its largest value.
    pub delivery_delay_area: u128,
    pub delivery_delay_bytes: u64,
    pub delivery_delay_max_ns: u64,
    /// Bytes resent at the data level (reinjections and opportunistic retransmissions) and
    /// redundant copies.
    pub reinjected_bytes: u64,
    pub opportunistic_retransmissions: u64,
    pub penalisations: u64,
    /// Copies the receiver dropped as duplicates, in bytes.
    pub duplicate_bytes: u64,
    /// The largest out-of-order queue at the receiver, in bytes.
    pub max_out_of_order_bytes: u64,
}

/// A scheduler's decision, as traced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickRecord {
    pub time: SimTime,
    /// The subflow(s) chosen (empty: wait).
    pub subflows: SubflowSet,
    pub reason: Reason,
    pub dsn: u64,
    pub is_reinjection: bool,
}

/// Where `[sub_seq, sub_seq + len)` of a subflow sits in the data sequence space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mapping {
    sub_seq: u64,
    dsn: u64,
    len: u32,
}

/// One chunk of the data sequence space between the DATA_ACK and the highest DSN sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Chunk {
    dsn: u64,
    len: u32,
    /// Subflows that carried it (v0.9x `path_mask`).
    carried: SubflowSet,
    first_sent: SimTime,
}

struct Subflow {
    core: TcpCore,
    /// The core's `local_refusals` when the connection last looked.
    refusals_seen: u64,
    receiver: TcpReceiver,
    /// Mappings of the subflow's unacknowledged data, in subflow sequence order.
    mappings: Fifo<Mapping>,
    /// Where the receiving end's last in-order bytes ended among `mappings`, counted from the
    /// first mapping ever made ([`Fifo::removed`] plus the position): where the next ones
    /// usually start.
    mapping_hint: u64,
    start: SimTime,
    backup: bool,
    established: bool,
    /// v0.9x `pf`: its timer fired and its data was reinjected; cleared by an ACK on it.
    potentially_failed: bool,
    poll_receiver: bool,
    /// How far along the data sequence space this subflow has carried the stream (the end of
    /// the last chunk it took in order): the redundant scheduler's cursor (reference §3.3),
    /// kept only when the scheduler asks for copies. Below the DATA_ACK it counts as the
    /// DATA_ACK: a lagging subflow skips delivered data.
    carried_to: u64,
    loss_events: u64,
    last_penalised_at: Option<SimTime>,
    stats: SubflowStats,
    /// Window and time of the latest change, for the time average.
    cwnd: u64,
    cwnd_since: SimTime,
    /// The subflow's wake-up (the earlier of its sender's and its receiver's, or its join
    /// time) as [`MptcpFlow::refresh_deadlines`] last computed it.
    wake: Option<SimTime>,
    /// Its receiver's wake-up when `wake` was computed.
    receiver_wake: Option<SimTime>,
}

/// An MPTCP connection: both ends of every subflow.
pub struct MptcpFlow {
    subflows: Vec<Subflow>,
    cc: Coupled,
    scheduler: Scheduler,
    /// The scheduler wants every subflow to carry the whole stream
    /// ([`PacketScheduler::copies_to_every_subflow`]).
    copies: bool,
    /// The scheduler only reads its inputs ([`PacketScheduler::is_stateless`]).
    stateless: bool,
    /// The scheduler places new data by lowest RTT
    /// ([`PacketScheduler::places_new_data_by_lowest_rtt`]).
    new_data_by_lowest_rtt: bool,
    mss: u32,
    header_bytes: u32,
    send_buffer: u64,
    app_bytes: Option<u64>,
    closed_at: Option<u64>,
    /// The DATA_ACK received (everything below is acknowledged at the data level).
    data_una: u64,
    /// The next new DSN.
    data_nxt: u64,
    /// Right edge of the peer's data-level window.
    peer_right_edge: u64,
    peer_window: u64,
    chunks: Fifo<Chunk>,
    /// Where the last in-order data ended among `chunks`, counted as `Subflow::mapping_hint`.
    chunk_hint: u64,
    /// DSNs of chunks to resend, ascending, no duplicates.
    reinject: VecDeque<u64>,
    receiver: DataReceiver,
    started_at: Option<SimTime>,
    stopped: bool,
    stop_mode: StopMode,
    finished: bool,
    tracing: bool,
    send_pending: bool,
    views: Vec<SubflowView>,
    /// The subflows whose view in `views` is still exact (but for its `carried` flag):
    /// nothing of them changed since it was taken, in this input or an earlier one.
    views_fresh: SubflowSet,
    /// The subflows whose host interface queue (a `local` link) refused a segment in the
    /// current send loop: not usable until it ends (Linux's `tcp_write_xmit` stops at the
    /// refusal; the subflow tries again at its next ACK).
    refused: SubflowSet,
    /// The subflows whose timers an input may have moved since their `wake` was computed.
    changed: SubflowSet,
    /// The earliest of the subflows' `wake`s, kept up to date by
    /// [`MptcpFlow::refresh_deadlines`] at the end of every input.
    earliest: Option<SimTime>,
    stats: ConnectionStats,
    window_blocked_since: Option<SimTime>,
    buffer_blocked_since: Option<SimTime>,
    picks: Option<Vec<PickRecord>>,
    /// Host timing noise: the packets the hosts send leave when it releases them.
    noise: Option<Box<HostNoise>>,
    /// How much work the inputs took (for the tests of what an input costs).
    #[cfg(test)]
    work: Work,
}

/// Counts of the connection's work, for tests.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default)]
struct Work {
    /// Runs of the send loop.
    send_loops: u64,
    /// Scheduler views taken (not kept from before).
    views_taken: u64,
    /// Tail loss probes that carried new data.
    probes_with_new_data: u64,
    /// Resends a subflow's TCP made when offered a new chunk (`MptcpFlow::send_on`).
    repairs_for_new_data: u64,
}

impl MptcpFlow {
    /// A connection with `config.subflows` subflows (path `i` is subflow `i`), its coupled
    /// controller (built for as many subflows) and its scheduler. Its subflows carry
    /// `config.tcp.mss - DSS_DATA_OPTION_BYTES` bytes of data per segment (the DSS option is
    /// inside the MSS).
    ///
    /// # Panics
    /// If there are no subflows, more than [`MAX_SUBFLOWS`], the controller was built for
    /// another number of subflows, or the mss leaves no room for data beside the DSS option.
    pub fn new(config: MptcpConfig, cc: Coupled, scheduler: Scheduler) -> Self {
        let n = config.subflows.len();
        assert!(
            (1..=MAX_SUBFLOWS).contains(&n),
            "an MPTCP connection has 1 to {MAX_SUBFLOWS} subflows, got {n}"
        );
        assert_eq!(cc.subflows(), n, "the controller's number of subflows");
        assert!(
            config.tcp.mss > DSS_DATA_OPTION_BYTES,
            "an MPTCP mss must exceed the DSS option's {DSS_DATA_OPTION_BYTES} bytes"
        );
        let tcp = TcpConfig {
            receive_buffer: config.receive_buffer.max(1),
            mss: config.segment_payload(),
            ..config.tcp
        };
        let subflows = config
            .subflows
            .iter()
            .map(|s| Subflow {
                core: TcpCore::new(tcp),
                refusals_seen: 0,
                receiver: TcpReceiver::new(&tcp),
                mappings: Fifo::default(),
                mapping_hint: 0,
                start: s.start,
                backup: s.backup,
                established: false,
                potentially_failed: false,
                poll_receiver: false,
                carried_to: 0,
                loss_events: 0,
                last_penalised_at: None,
                stats: SubflowStats::default(),
                cwnd: 0,
                cwnd_since: SimTime::ZERO,
                wake: None,
                receiver_wake: None,
            })
            .collect();
        MptcpFlow {
            subflows,
            cc,
            copies: scheduler.copies_to_every_subflow(),
            stateless: scheduler.is_stateless(),
            new_data_by_lowest_rtt: scheduler.places_new_data_by_lowest_rtt(),
            scheduler,
            mss: tcp.mss,
            header_bytes: tcp.header_bytes,
            send_buffer: config.send_buffer.max(1),
            app_bytes: config.app_bytes,
            closed_at: None,
            data_una: 0,
            data_nxt: 0,
            peer_right_edge: tcp.receive_buffer,
            peer_window: tcp.receive_buffer,
            chunks: Fifo::default(),
            chunk_hint: 0,
            reinject: VecDeque::new(),
            receiver: DataReceiver::new(tcp.receive_buffer),
            started_at: None,
            stopped: false,
            stop_mode: StopMode::default(),
            finished: false,
            tracing: false,
            send_pending: false,
            views: vec![SubflowView::default(); n],
            views_fresh: SubflowSet::EMPTY,
            refused: SubflowSet::EMPTY,
            changed: SubflowSet::EMPTY,
            earliest: None,
            stats: ConnectionStats::default(),
            window_blocked_since: None,
            buffer_blocked_since: None,
            picks: None,
            noise: None,
            #[cfg(test)]
            work: Work::default(),
        }
    }

    /// Delays the packets of both hosts by host timing noise ([`HostNoise`]), if given: one
    /// host stack sends every subflow's packets, in the order it emitted them.
    pub fn with_host_noise(mut self, noise: Option<Box<HostNoise>>) -> Self {
        self.noise = noise;
        self
    }

    /// What the connection does at its stop time.
    pub fn with_stop_mode(mut self, mode: StopMode) -> Self {
        self.stop_mode = mode;
        self
    }

    /// Keeps every scheduler decision ([`MptcpFlow::picks`]).
    pub fn with_pick_log(mut self) -> Self {
        self.picks = Some(Vec::new());
        self
    }

    /// The scheduler decisions so far, when the pick log is on.
    pub fn picks(&self) -> &[PickRecord] {
        self.picks.as_deref().unwrap_or(&[])
    }

    pub fn subflow_count(&self) -> usize {
        self.subflows.len()
    }

    /// The TCP core of subflow `i`.
    pub fn subflow_core(&self, i: usize) -> &TcpCore {
        &self.subflows[i].core
    }

    /// The counters of subflow `i`, with the window's time average brought up to `now`.
    pub fn subflow_stats(&self, now: SimTime, i: usize) -> SubflowStats {
        let s = &self.subflows[i];
        let mut stats = s.stats;
        if s.established && now > s.cwnd_since {
            let dt = (now - s.cwnd_since).as_nanos();
            stats.cwnd_area += u128::from(s.cwnd) * u128::from(dt);
            stats.cwnd_time_ns += dt;
        }
        stats
    }

    /// The connection's counters, with blocked times brought up to `now`.
    pub fn connection_stats(&self, now: SimTime) -> ConnectionStats {
        let mut stats = self.stats;
        if let Some(t) = self.window_blocked_since {
            stats.window_blocked_ns += now.saturating_sub(t).as_nanos();
        }
        if let Some(t) = self.buffer_blocked_since {
            stats.send_buffer_blocked_ns += now.saturating_sub(t).as_nanos();
        }
        stats.duplicate_bytes = self.receiver.duplicate_bytes();
        stats.max_out_of_order_bytes = self.receiver.max_out_of_order_bytes();
        stats
    }

    pub fn receiver(&self) -> &DataReceiver {
        &self.receiver
    }

    pub fn controller(&self) -> &Coupled {
        &self.cc
    }

    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    /// The DATA_ACK received so far and the next new DSN.
    pub fn data_una(&self) -> u64 {
        self.data_una
    }
    pub fn data_nxt(&self) -> u64 {
        self.data_nxt
    }

    fn is_active(&self) -> bool {
        self.started_at.is_some() && !self.stopped
    }

    /// How far the application has written: the transfer's end, the stop point, and the send
    /// buffer bound it.
    fn written(&self) -> u64 {
        self.app_bytes
            .unwrap_or(u64::MAX)
            .min(self.closed_at.unwrap_or(u64::MAX))
            .min(self.data_una.saturating_add(self.send_buffer))
    }

    /// Records subflow `i`'s window for the time average.
    #[inline(always)]
    fn note_cwnd(&mut self, now: SimTime, i: usize, io: &mut Io<'_, '_>) {
        let cwnd = self.cc.cwnd_of(i);
        let s = &mut self.subflows[i];
        if s.established && cwnd == s.cwnd {
            // The same window since `cwnd_since`: its area is added when it changes (or read by
            // `subflow_stats`), and cwnd·(t1 − t0) + cwnd·(t2 − t1) = cwnd·(t2 − t0) exactly in
            // integers, so the sums are those of adding at every call.
        } else {
            self.note_cwnd_change(now, i, cwnd);
        }
        if self.tracing {
            io.report(TransportEvent::Cwnd {
                path: PathId::from_index(i),
                cwnd_bytes: cwnd,
            });
        }
    }

    /// Subflow `i`'s window changed to `cwnd` (or it is not established): the area of the
    /// old one is added up to `now`.
    fn note_cwnd_change(&mut self, now: SimTime, i: usize, cwnd: u64) {
        let s = &mut self.subflows[i];
        if s.established {
            let dt = now.saturating_sub(s.cwnd_since).as_nanos();
            s.stats.cwnd_area += u128::from(s.cwnd) * u128::from(dt);
            s.stats.cwnd_time_ns += dt;
        }
        s.cwnd = cwnd;
        s.cwnd_since = now;
        s.stats.cwnd_max_bytes = s.stats.cwnd_max_bytes.max(cwnd);
    }

    /// Subflows whose start time has come join the connection.
    fn join_subflows(&mut self, now: SimTime) {
        let Some(started) = self.started_at else {
            return;
        };
        for i in 0..self.subflows.len() {
            let s = &mut self.subflows[i];
            if !s.established && started + s.start <= now {
                s.established = true;
                s.cwnd_since = now;
                s.cwnd = self.cc.cwnd(i);
                self.cc.set_established(i, true);
                self.views_fresh = SubflowSet::EMPTY;
                self.changed.insert(i);
                self.send_pending = true;
            }
        }
    }

    /// A data segment reached the receiving end of subflow `i`.
    fn receive_data(&mut self, now: SimTime, i: usize, segment: &DataSegment, io: &mut Io<'_, '_>) {
        let s = &mut self.subflows[i];
        let in_order = s.receiver.handle_data(now, segment);
        s.poll_receiver = true;
        if self.tracing {
            io.report(TransportEvent::Delivered {
                path: PathId::from_index(i),
                bytes: segment.len,
            });
        }
        if in_order.is_empty() {
            return;
        }
        // Map the subflow's newly in-order bytes to data sequence numbers.
        let guess = s.mapping_hint.saturating_sub(s.mappings.removed()) as usize;
        let first = s
            .mappings
            .partition_point_from(guess, |m| m.sub_seq + u64::from(m.len) <= in_order.start);
        let before = self.receiver.rcv_nxt();
        let mut k = first;
        for m in &s.mappings.as_slice()[first..] {
            if m.sub_seq >= in_order.end {
                break;
            }
            let lo = m.sub_seq.max(in_order.start);
            let hi = (m.sub_seq + u64::from(m.len)).min(in_order.end);
            self.receiver.handle_data(m.dsn + (lo - m.sub_seq), hi - lo);
            k += 1;
        }
        // The next in-order bytes usually start where these ended, at a mapping's start.
        s.mapping_hint = s.mappings.removed() + k as u64;
        let after = self.receiver.rcv_nxt();
        if after > before {
            self.note_delivery_delay(now, before, after);
        }
        // Every subflow advertises the connection-level window.
        let window = self.receiver.window();
        self.subflows[i]
            .receiver
            .set_advertised_window(Some(window));
    }

    /// `[from, to)` became readable at `now`: its in-order delivery delay, per byte, from the
    /// first transmission of each chunk.
    fn note_delivery_delay(&mut self, now: SimTime, from: u64, to: u64) {
        let guess = self.chunk_hint.saturating_sub(self.chunks.removed()) as usize;
        let first = self
            .chunks
            .partition_point_from(guess, |c| c.dsn + u64::from(c.len) <= from);
        let mut k = first;
        for c in &self.chunks.as_slice()[first..] {
            if c.dsn >= to {
                break;
            }
            let bytes = (c.dsn + u64::from(c.len)).min(to) - c.dsn.max(from);
            let delay = now.saturating_sub(c.first_sent).as_nanos();
            self.stats.delivery_delay_area += u128::from(delay) * u128::from(bytes);
            self.stats.delivery_delay_bytes += bytes;
            self.stats.delivery_delay_max_ns = self.stats.delivery_delay_max_ns.max(delay);
            k += 1;
        }
        self.chunk_hint = self.chunks.removed() + k as u64;
    }

    /// An ACK reached the sending end of subflow `i`.
    fn receive_ack(&mut self, now: SimTime, i: usize, ack: &MptcpAck, io: &mut Io<'_, '_>) {
        self.views_fresh.remove(i);
        self.changed.insert(i);
        let s = &mut self.subflows[i];
        s.potentially_failed = false;
        let fast_retransmits = s.core.stats().fast_retransmits;
        let outcome = s.core.handle_ack(
            now,
            &ack.ack,
            &mut SubflowController {
                cc: &mut self.cc,
                subflow: i,
            },
        );
        let path = PathId::from_index(i);
        if let Some(rtt) = outcome.rtt {
            io.report(TransportEvent::RttSample { path, rtt });
        }
        let s = &mut self.subflows[i];
        if s.core.stats().fast_retransmits > fast_retransmits {
            s.loss_events += 1;
            s.stats.fast_retransmits += 1;
            io.report(TransportEvent::Loss { path });
        }
        let una = s.core.snd_una();
        s.mappings
            .drop_front_while(|m| m.sub_seq + u64::from(m.len) <= una);
        self.note_cwnd(now, i, io);

        // The data level: DATA_ACK and the peer's window (its right edge never moves left).
        if ack.data_ack > self.data_una && ack.data_ack <= self.data_nxt {
            self.data_una = ack.data_ack;
            let data_una = self.data_una;
            self.chunks
                .drop_front_while(|c| c.dsn + u64::from(c.len) <= data_una);
            while self.reinject.front().is_some_and(|&d| d < self.data_una) {
                self.reinject.pop_front();
            }
        }
        if ack.data_ack >= self.data_una {
            self.peer_window = ack.ack.rwnd;
            self.peer_right_edge = self
                .peer_right_edge
                .max(ack.data_ack.saturating_add(ack.ack.rwnd));
        }
        if !self.finished && self.app_bytes.is_some_and(|total| self.data_una >= total) {
            self.finished = true;
            io.report(TransportEvent::Finished);
        }
        self.send_pending = true;
    }

    /// Subflow `i`'s retransmission timer fired: the v0.9x reinjection (§4.4 trigger 1).
    fn on_subflow_timeout(&mut self, now: SimTime, i: usize, io: &mut Io<'_, '_>) {
        let s = &mut self.subflows[i];
        s.loss_events += 1;
        s.stats.timeouts += 1;
        s.potentially_failed = true;
        io.report(TransportEvent::Timeout {
            path: PathId::from_index(i),
        });
        let data_una = self.data_una;
        for m in &self.subflows[i].mappings {
            if m.dsn + u64::from(m.len) > data_una {
                queue_reinjection(&mut self.reinject, m.dsn);
            }
        }
        self.note_cwnd(now, i, io);
    }

    /// Whether subflow `i` is [`SubflowView::usable`].
    #[inline]
    fn usable(&self, i: usize) -> bool {
        self.usable_unless_refused(i) && !self.refused.contains(i)
    }

    /// [`MptcpFlow::usable`] but for a refusal by a local queue in this send loop: the same
    /// where none can happen (a connection without local queues).
    #[inline]
    fn usable_unless_refused(&self, i: usize) -> bool {
        let s = &self.subflows[i];
        s.established && !s.potentially_failed && s.core.recovery_phase() != RecoveryPhase::Timeout
    }

    /// Subflow `i`'s [`SubflowView::cwnd_bytes`].
    #[inline]
    fn send_window(&self, i: usize) -> u64 {
        let controller = SubflowControllerRef { cc: &self.cc, i };
        self.subflows[i].core.send_window(&controller)
    }

    /// The view subflow `i` would get now (taken with the send window read once, as
    /// [`MptcpFlow::view`] takes it) if [`SubflowView::can_send`] would say yes of it, else
    /// `None` without taking it.
    #[inline]
    fn view_if_can_send(&self, i: usize, len: u32, carried: SubflowSet) -> Option<SubflowView> {
        let view = self
            .usable(i)
            .then(|| {
                let in_flight = self.subflows[i].core.bytes_in_flight();
                let window = self.send_window(i);
                (in_flight == 0 || in_flight + u64::from(len) <= window)
                    .then(|| self.view_with_window(i, carried, window))
            })
            .flatten();
        debug_assert_eq!(view.is_some(), self.view(i, carried).can_send(len));
        view
    }

    /// The view of subflow `i` the scheduler gets.
    fn view(&self, i: usize, carried: SubflowSet) -> SubflowView {
        self.view_with_window(i, carried, self.send_window(i))
    }

    /// [`MptcpFlow::view`] with the send window already read.
    #[inline]
    fn view_with_window(&self, i: usize, carried: SubflowSet, send_window: u64) -> SubflowView {
        let s = &self.subflows[i];
        let rtt = s.core.rtt_estimator();
        SubflowView {
            id: i,
            usable: self.usable(i),
            backup: s.backup,
            mss: self.mss,
            cwnd_bytes: send_window,
            ssthresh_bytes: self.cc.ssthresh(i),
            in_flight_bytes: s.core.bytes_in_flight(),
            queued_bytes: s.core.snd_nxt() - s.core.snd_una(),
            srtt: view_srtt(s),
            rttvar: if rtt.has_sample() {
                rtt.rttvar()
            } else {
                SimTime::ZERO
            },
            loss_events: s.loss_events,
            carried: carried.contains(i),
        }
    }

    /// Brings the scheduler's views up to date for a segment `carried` already went on: the
    /// views in `fresh` are still exact but for that flag (nothing of their subflows changed
    /// since they were taken), the others are taken anew and join `fresh`.
    fn refresh_views(&mut self, carried: SubflowSet, fresh: &mut SubflowSet) {
        for i in 0..self.subflows.len() {
            if fresh.contains(i) {
                self.views[i].carried = carried.contains(i);
                debug_assert_eq!(self.views[i], self.view(i, carried), "a kept view");
            } else {
                self.views[i] = self.view(i, carried);
                fresh.insert(i);
                #[cfg(test)]
                {
                    self.work.views_taken += 1;
                }
            }
        }
    }

    /// Hands `[dsn, dsn + len)` to subflow `i` as its next new segment. False if its TCP
    /// would not send it now.
    ///
    /// The subflow's TCP applies the peer's window (the connection-level window each ACK
    /// carries) from its own `snd_una`, so it may have no room for the chunk the connection's
    /// window lets go. Then RFC 6675's NextSeg skips rule (2) (new data) and, in fast
    /// recovery, may answer the offer with rule (3) or (4): a resend of its own un-SACKed
    /// data. That resend is sent as what it is, a repair with no new mapping (as the send
    /// loop's repairs are), and the TCP is asked again, until it sends the chunk or nothing:
    /// the chunk is then not this subflow's.
    #[inline(always)]
    fn send_on(&mut self, now: SimTime, i: usize, dsn: u64, len: u32, io: &mut Io<'_, '_>) -> bool {
        let gated = io.out.has_local();
        self.send_on_as(now, i, dsn, len, io, gated)
    }

    /// [`MptcpFlow::send_on`], the segment offered to the local queue first if `gated` (the
    /// outbox [`Outbox::has_local`]).
    #[inline(always)]
    fn send_on_as(
        &mut self,
        now: SimTime,
        i: usize,
        dsn: u64,
        len: u32,
        io: &mut Io<'_, '_>,
        gated: bool,
    ) -> bool {
        self.changed.insert(i);
        loop {
            let s = &mut self.subflows[i];
            let sub_seq = s.core.snd_nxt();
            let mut controller = SubflowController {
                cc: &mut self.cc,
                subflow: i,
            };
            let end = sub_seq + u64::from(len);
            let seg = if gated {
                // Behind the host's interface queue: offered to it before it is committed. A
                // refused chunk is not the subflow's (plait's subflows keep no unsent queue;
                // the kernel's keeps it entailed there): it stays the connection's next.
                let (path, extra) = (
                    PathId::from_index(i),
                    self.header_bytes + DSS_DATA_OPTION_BYTES,
                );
                let out = &mut *io.out;
                let seg = s
                    .core
                    .poll_transmit_gated(now, &mut controller, end, dsn, &mut |len| {
                        out.refuses(path, len + extra)
                    });
                if seg.is_none() && s.core.stats().local_refusals > s.refusals_seen {
                    s.refusals_seen = s.core.stats().local_refusals;
                    self.refused.insert(i);
                    self.views_fresh.remove(i);
                }
                seg
            } else {
                s.core.poll_transmit(now, &mut controller, end, dsn)
            };
            let Some(seg) = seg else {
                return false;
            };
            if seg.is_retransmission {
                // A repair in place of the chunk (above): the subflow's own bytes, mapped
                // when they were first sent.
                #[cfg(test)]
                {
                    self.work.repairs_for_new_data += 1;
                }
                self.push_data(i, seg, io);
                continue;
            }
            debug_assert!(seg.seq == sub_seq && seg.len == len);
            s.mappings.push_back(Mapping { sub_seq, dsn, len });
            self.push_data(i, seg, io);
            return true;
        }
    }

    #[inline(always)]
    fn push_data(&mut self, i: usize, seg: DataSegment, io: &mut Io<'_, '_>) {
        let s = &mut self.subflows[i];
        s.stats.segments_sent += 1;
        s.stats.bytes_sent += u64::from(seg.len);
        if seg.is_retransmission {
            s.stats.retransmissions += 1;
        }
        let path = PathId::from_index(i);
        let size_bytes = seg.len + self.header_bytes + DSS_DATA_OPTION_BYTES;
        if io.noise.is_none() {
            // Written where it lies in the pool, as `Io::send` would put it there.
            io.out.send_with(
                path,
                Direction::Forward,
                #[inline(always)]
                |header| {
                    *header = Header::TcpData(seg);
                    size_bytes
                },
            );
            return;
        }
        io.send(Transmit {
            path,
            direction: Direction::Forward,
            size_bytes,
            header: Header::TcpData(seg),
        });
    }

    /// The send loop (module doc).
    fn run_send_loop(&mut self, now: SimTime, io: &mut Io<'_, '_>) {
        #[cfg(test)]
        {
            self.work.send_loops += 1;
        }
        // Each subflow first repairs its own losses. Outside recovery and without RACK-TLP's
        // probes a subflow has nothing to resend (only new data goes then: RFC 6675 NextSeg's
        // rule (2)), so its TCP is not asked: asked to send nothing new, it would return
        // nothing and change nothing the connection reads. Usually no subflow is asked: one
        // pass over them tells, before the loop that asks (a subflow's repairs change nothing
        // of whether another is asked).
        let asked = |s: &Subflow| {
            s.established
                && (s.core.recovery_phase() != RecoveryPhase::Open || s.core.rack().is_some())
        };
        let n = if self.subflows.iter().any(asked) {
            self.subflows.len()
        } else {
            0
        };
        for i in 0..n {
            if !asked(&self.subflows[i]) {
                continue;
            }
            self.changed.insert(i);
            loop {
                // The connection's next new chunk is on offer, as a single TCP sender's
                // unsent data is (the kernel's subflow has data queued): with new data
                // available RFC 6675's NextSeg takes rule (2) before rules (3) and (4), so a
                // subflow does not resend un-SACKed data that is not lost, nor make a rescue
                // retransmission, while the connection has data to send. The repair asked for
                // here sends no new data by the window (`poll_retransmission`); only a tail
                // loss probe may carry the offer (RFC 8985 §7.3: new data if available).
                let offer = self.next_new_chunk(now).unwrap_or(0);
                let dsn = self.data_nxt;
                let s = &mut self.subflows[i];
                let snd_nxt = s.core.snd_nxt();
                let mut controller = SubflowController {
                    cc: &mut self.cc,
                    subflow: i,
                };
                let end = snd_nxt + u64::from(offer);
                let seg = if io.out.has_local() {
                    let path = PathId::from_index(i);
                    let extra = self.header_bytes + DSS_DATA_OPTION_BYTES;
                    let out = &mut *io.out;
                    let seg = s.core.poll_retransmission_gated(
                        now,
                        &mut controller,
                        end,
                        dsn,
                        &mut |len| out.refuses(path, len + extra),
                    );
                    if seg.is_none() && s.core.stats().local_refusals > s.refusals_seen {
                        s.refusals_seen = s.core.stats().local_refusals;
                        self.refused.insert(i);
                        self.views_fresh.remove(i);
                    }
                    seg
                } else {
                    s.core.poll_retransmission(now, &mut controller, end, dsn)
                };
                match seg {
                    Some(seg) => {
                        self.views_fresh.remove(i);
                        if offer > 0 && !seg.is_retransmission && seg.seq == snd_nxt {
                            let s = &mut self.subflows[i];
                            s.mappings.push_back(Mapping {
                                sub_seq: snd_nxt,
                                dsn,
                                len: seg.len,
                            });
                            self.push_data(i, seg, io);
                            let mut sent = SubflowSet::EMPTY;
                            sent.insert(i);
                            self.account_sent(now, dsn, seg.len, false, false, sent);
                            #[cfg(test)]
                            {
                                self.work.probes_with_new_data += 1;
                            }
                        } else {
                            self.push_data(i, seg, io);
                        }
                    }
                    None => break,
                }
            }
        }
        // Then the scheduler places segments until it waits or nothing is left. A view stays
        // exact until its subflow sends or takes an ACK or a timeout (or the receive-buffer
        // optimisation changes a window), in this input or a later one: sending on one
        // subflow or an ACK on it changes no other's view, as a built-in coupled controller's
        // `on_packet_sent` and `on_ack` touch only that subflow's window (the hooks of
        // `CoupledAlgorithm` and `Uncoupled` reach the named subflow alone). A custom
        // controller promises nothing of the kind, so its views are all taken anew for every
        // segment.
        if self.new_data_by_lowest_rtt
            && !io.out.has_local()
            && self.picks.is_none()
            && !self.copies
            && self.reinject.is_empty()
            && self.send_new_data_by_lowest_rtt(now, io)
        {
            return;
        }
        let mut optimised = false;
        let keep_views = !matches!(self.cc, Coupled::Custom(_));
        let mut fresh = if keep_views {
            self.views_fresh
        } else {
            SubflowSet::EMPTY
        };
        // A segment no subflow has the window for is not sent whatever the scheduler picks:
        // one that only reads its inputs need not be asked (`is_stateless`).
        let skip_blocked = self.picks.is_none() && self.stateless;
        loop {
            if !keep_views {
                fresh = SubflowSet::EMPTY;
            }
            while self.reinject.front().is_some_and(|&d| d < self.data_una) {
                self.reinject.pop_front();
            }
            let next_copy = match self.reinject.front() {
                None if self.copies => self.next_copy(&mut fresh),
                _ => None,
            };
            let (dsn, len, is_reinjection, carried) = match (self.reinject.front(), next_copy) {
                (Some(&dsn), _) => match self.chunk_index(dsn) {
                    Some(k) => {
                        let c = self.chunks[k];
                        (c.dsn, c.len, true, c.carried)
                    }
                    None => {
                        self.reinject.pop_front();
                        continue;
                    }
                },
                // A copy for the subflows that have not carried it: not a reinjection, some
                // subflow's `carried` set.
                (None, Some(c)) => (c.dsn, c.len, false, c.carried),
                (None, None) => match self.next_new_chunk(now) {
                    Some(len) => (self.data_nxt, len, false, SubflowSet::EMPTY),
                    None => {
                        if !optimised && self.is_blocked() {
                            optimised = true;
                            let resent = self.receive_buffer_optimisation(now, io);
                            fresh = SubflowSet::EMPTY;
                            if resent {
                                continue;
                            }
                        }
                        break;
                    }
                },
            };
            let n = self.subflows.len();
            // Whether any subflow has the window, from the views still exact and, for the
            // others, without taking their views unless they have it (usually the question that
            // ends the loop). The view of one that has it is taken here, its window read once:
            // refresh_views would take it next.
            if skip_blocked {
                let mut any = false;
                for j in 0..n {
                    if fresh.contains(j) {
                        if self.views[j].can_send(len) {
                            any = true;
                            break;
                        }
                    } else if let Some(view) = self.view_if_can_send(j, len, carried) {
                        self.views[j] = view;
                        fresh.insert(j);
                        #[cfg(test)]
                        {
                            self.work.views_taken += 1;
                        }
                        any = true;
                        break;
                    }
                }
                if !any {
                    break;
                }
            }
            self.refresh_views(carried, &mut fresh);
            let connection = ConnectionView {
                now,
                data_window_bytes: self.peer_right_edge.saturating_sub(self.data_nxt),
                peer_window_bytes: self.peer_window,
                unscheduled_bytes: self.written().saturating_sub(self.data_nxt),
            };
            let segment = SegmentView {
                dsn,
                len,
                is_reinjection,
            };
            let pick = self.scheduler.schedule(&connection, &segment, &self.views);
            let targets = match pick.decision {
                Decision::Wait => SubflowSet::EMPTY,
                Decision::One(i) => {
                    let mut set = SubflowSet::EMPTY;
                    if i < self.subflows.len() {
                        set.insert(i);
                    }
                    set
                }
                Decision::Several(set) => set,
            };
            let is_copy = next_copy.is_some();
            let refused_before = self.refused;
            let mut sent = SubflowSet::EMPTY;
            for i in targets.iter().filter(|&i| i < n) {
                // A copy only to a subflow that has not carried it or passed it.
                let owes = !is_copy
                    || (!carried.contains(i) && self.subflows[i].carried_to < dsn + u64::from(len));
                if owes && self.views[i].can_send(len) {
                    fresh.remove(i);
                    if self.send_on(now, i, dsn, len, io) {
                        sent.insert(i);
                    }
                }
            }
            if let Some(log) = self.picks.as_mut() {
                log.push(PickRecord {
                    time: now,
                    subflows: sent,
                    reason: pick.reason,
                    dsn,
                    is_reinjection: is_reinjection || is_copy,
                });
            }
            if sent.is_empty() {
                // A subflow whose queue refused the segment is out of this loop: the segment
                // is offered again, to the others.
                if self.refused.0 != refused_before.0 {
                    continue;
                }
                break;
            }
            self.account_sent(now, dsn, len, is_reinjection, is_copy, sent);
        }
        self.views_fresh = if keep_views { fresh } else { SubflowSet::EMPTY };
        for i in self.refused.iter() {
            self.views_fresh.remove(i);
        }
        self.refused = SubflowSet::EMPTY;
    }

    /// The send loop's new data when the scheduler places it by lowest RTT
    /// ([`PacketScheduler::places_new_data_by_lowest_rtt`]), nothing is to be reinjected, the
    /// scheduler wants no copies and its picks are not logged: each chunk goes where
    /// [`NewDataChoice`] says, from each usable subflow's class, window space and SRTT, which
    /// is what the loop below does with the views (the scheduler, stateless for new data,
    /// is not asked; nor when no subflow has the window, which is a wait for it). No view is
    /// taken: those of the subflows sent on are no longer fresh. True when the loop is over
    /// (the scheduler waits, or the subflow's TCP would not send); false when no new data
    /// may go, for the loop below to take over (its [`MptcpFlow::next_new_chunk`] asked again
    /// at the same time changes nothing more and answers the same).
    fn send_new_data_by_lowest_rtt(&mut self, now: SimTime, io: &mut Io<'_, '_>) -> bool {
        // `(i, len)` when subflow i, just sent on, was the only subflow with window space for
        // a chunk of `len` bytes: for the next chunk of that length no other has it still
        // (within the input only a send changes a subflow's usability or window space, and
        // only that subflow's, as the loop with the views relies on for a built-in
        // controller, whose `on_packet_sent` touches the named subflow's window alone), so
        // the choice is i if it still has the space (it was chosen from the class the
        // choice reads), else a wait. A custom controller promises nothing: never kept.
        let keep = !matches!(self.cc, Coupled::Custom(_));
        // Only for a connection without local queues (`run_send_loop`): no subflow is refused,
        // no segment offered to a queue.
        debug_assert!(!io.out.has_local() && self.refused.is_empty());
        let mut alone: Option<(usize, u32)> = None;
        loop {
            let Some(len) = self.next_new_chunk(now) else {
                return false;
            };
            let target = match alone {
                Some((i, l)) if l == len => {
                    let in_flight = self.subflows[i].core.bytes_in_flight();
                    (in_flight == 0 || in_flight + u64::from(len) <= self.send_window(i))
                        .then_some(i)
                }
                _ => {
                    let mut choice = NewDataChoice::default();
                    for j in 0..self.subflows.len() {
                        if !self.usable_unless_refused(j) {
                            continue;
                        }
                        let s = &self.subflows[j];
                        let in_flight = s.core.bytes_in_flight();
                        let window_space =
                            in_flight == 0 || in_flight + u64::from(len) <= self.send_window(j);
                        choice.offer(j, s.backup, window_space, || view_srtt(s));
                    }
                    let target = choice.decision();
                    alone = target
                        .filter(|_| keep && choice.with_space() == 1)
                        .map(|i| (i, len));
                    target
                }
            };
            debug_assert_eq!(
                target,
                self.scheduled_new_data(now, len),
                "the new-data choice"
            );
            let Some(i) = target else {
                return true;
            };
            let dsn = self.data_nxt;
            self.views_fresh.remove(i);
            if !self.send_on_as(now, i, dsn, len, io, false) {
                return true;
            }
            // `account_sent` for new data on one subflow (no copies are wanted).
            self.chunks.push_back(Chunk {
                dsn,
                len,
                carried: SubflowSet(1 << i),
                first_sent: now,
            });
            self.data_nxt += u64::from(len);
            self.subflows[i].stats.new_data_bytes += u64::from(len);
        }
    }

    /// Where the loop with the views would send the next new chunk, of `len` bytes: the
    /// scheduler's choice if it names a subflow that can send it, else `None` (to check
    /// [`MptcpFlow::send_new_data_by_lowest_rtt`]; the scheduler is stateless for new data).
    fn scheduled_new_data(&mut self, now: SimTime, len: u32) -> Option<usize> {
        let views: Vec<SubflowView> = (0..self.subflows.len())
            .map(|j| self.view(j, SubflowSet::EMPTY))
            .collect();
        if !views.iter().any(|v| v.can_send(len)) {
            return None;
        }
        let connection = ConnectionView {
            now,
            data_window_bytes: self.peer_right_edge.saturating_sub(self.data_nxt),
            peer_window_bytes: self.peer_window,
            unscheduled_bytes: self.written().saturating_sub(self.data_nxt),
        };
        let segment = SegmentView {
            dsn: self.data_nxt,
            len,
            is_reinjection: false,
        };
        match self
            .scheduler
            .schedule(&connection, &segment, &views)
            .decision
        {
            Decision::One(i) if views.get(i).is_some_and(|v| v.can_send(len)) => Some(i),
            _ => None,
        }
    }

    /// Bookkeeping after `[dsn, dsn + len)` went out on the subflows in `sent` (as a
    /// reinjection, as a copy for subflows that had not carried it, or as new data).
    fn account_sent(
        &mut self,
        now: SimTime,
        dsn: u64,
        len: u32,
        is_reinjection: bool,
        is_copy: bool,
        sent: SubflowSet,
    ) {
        let copies = u64::from(sent.len());
        if self.copies && !is_reinjection {
            // New data and copies move the subflows' cursors past the chunk; a reinjection
            // does not (the cursor skips it later, as carried).
            for i in sent.iter() {
                let s = &mut self.subflows[i];
                s.carried_to = s.carried_to.max(dsn + u64::from(len));
            }
        }
        if is_reinjection || is_copy {
            if is_reinjection {
                self.reinject.pop_front();
            }
            if let Some(k) = self.chunk_index(dsn) {
                self.chunks[k].carried.0 |= sent.0;
            }
            self.stats.reinjected_bytes += u64::from(len) * copies;
            for i in sent.iter() {
                self.subflows[i].stats.reinjected_bytes += u64::from(len);
            }
        } else {
            self.chunks.push_back(Chunk {
                dsn,
                len,
                carried: sent,
                first_sent: now,
            });
            self.data_nxt += u64::from(len);
            let mut first = true;
            for i in sent.iter() {
                if first {
                    self.subflows[i].stats.new_data_bytes += u64::from(len);
                    first = false;
                } else {
                    self.subflows[i].stats.reinjected_bytes += u64::from(len);
                    self.stats.reinjected_bytes += u64::from(len);
                }
            }
        }
    }

    /// The length of the next new chunk, if one may go: at most one MSS, within what the
    /// application wrote and the peer's window (not cut shorter by the window while data is in
    /// flight). Tracks the time the window or the send buffer blocks the connection.
    fn next_new_chunk(&mut self, now: SimTime) -> Option<u32> {
        let app_end = self
            .app_bytes
            .unwrap_or(u64::MAX)
            .min(self.closed_at.unwrap_or(u64::MAX));
        let written = self.written();
        // The send buffer blocks the application when it is full and there is more to write.
        let buffer_full = written < app_end && written == self.data_una + self.send_buffer;
        match (buffer_full, self.buffer_blocked_since) {
            (true, None) => self.buffer_blocked_since = Some(now),
            (false, Some(t)) => {
                self.stats.send_buffer_blocked_ns += now.saturating_sub(t).as_nanos();
                self.buffer_blocked_since = None;
            }
            _ => {}
        }
        let ready = written
            .saturating_sub(self.data_nxt)
            .min(u64::from(self.mss));
        if ready == 0 {
            return None;
        }
        let room = self.peer_right_edge.saturating_sub(self.data_nxt);
        let len = if room >= ready {
            ready
        } else if self.data_nxt == self.data_una && room > 0 {
            room
        } else {
            if self.window_blocked_since.is_none() {
                self.window_blocked_since = Some(now);
            }
            return None;
        };
        if let Some(t) = self.window_blocked_since.take() {
            self.stats.window_blocked_ns += now.saturating_sub(t).as_nanos();
        }
        Some(len as u32)
    }

    /// New data is held back by the peer's window or by a full send buffer.
    fn is_blocked(&self) -> bool {
        self.window_blocked_since.is_some() || self.buffer_blocked_since.is_some()
    }

    /// The v0.9x receive-buffer optimisation (reference §3.1.4), when the scheduler asks for
    /// it: with the oldest chunk not DATA_ACKed as `head` and the fast subflow `f` (usable,
    /// window space, lowest SRTT): penalise the slower subflows that carried `head` (at most
    /// once per SRTT of `f`), then resend `head` on `f` if the subflows holding it are much
    /// slower (4·SRTT) or have tiny windows (≤ 4 segments). True if `head` was resent.
    fn receive_buffer_optimisation(&mut self, now: SimTime, io: &mut Io<'_, '_>) -> bool {
        let options = self.scheduler.options();
        if !options.penalisation && !options.opportunistic_retransmission {
            return false;
        }
        let Some(head) = self.chunks.front().copied() else {
            return false;
        };
        let mut fresh = SubflowSet::EMPTY;
        self.refresh_views(head.carried, &mut fresh);
        let Some(f) = self
            .views
            .iter()
            .filter(|v| v.can_send(head.len) && !v.backup)
            .min_by_key(|v| (v.srtt, v.id))
            .map(|v| v.id)
        else {
            return false;
        };
        let srtt_f = self.views[f].srtt;
        let mut acted = false;
        if options.penalisation
            && self.subflows[f]
                .last_penalised_at
                .is_none_or(|t| now.saturating_sub(t) >= srtt_f)
        {
            for g in 0..self.subflows.len() {
                let v = self.views[g];
                if g != f
                    && head.carried.contains(g)
                    && srtt_f < v.srtt
                    && self.subflows[g].core.recovery_phase() == RecoveryPhase::Open
                {
                    self.cc.penalise(g);
                    self.subflows[g].loss_events += 1;
                    self.subflows[g].stats.penalisations += 1;
                    self.stats.penalisations += 1;
                    self.subflows[f].last_penalised_at = Some(now);
                    self.note_cwnd(now, g, io);
                    acted = true;
                }
            }
        }
        let mut resent = false;
        if options.opportunistic_retransmission && !head.carried.contains(f) {
            let mut retransmit = false;
            for g in head.carried.iter().filter(|&g| g != f) {
                let v = self.views[g];
                if v.cwnd_segments() <= 4 {
                    retransmit = true;
                    break;
                }
                if srtt_f.as_nanos().saturating_mul(4) >= v.srtt.as_nanos() {
                    retransmit = false;
                    break;
                }
                retransmit = true;
            }
            if retransmit && self.send_on(now, f, head.dsn, head.len, io) {
                let mut sent = SubflowSet::EMPTY;
                sent.insert(f);
                if let Some(log) = self.picks.as_mut() {
                    log.push(PickRecord {
                        time: now,
                        subflows: sent,
                        reason: Reason::LowestRtt,
                        dsn: head.dsn,
                        is_reinjection: true,
                    });
                }
                self.chunks[0].carried.insert(f);
                self.stats.reinjected_bytes += u64::from(head.len);
                self.stats.opportunistic_retransmissions += 1;
                self.subflows[f].stats.reinjected_bytes += u64::from(head.len);
                resent = true;
            }
        }
        if acted || resent {
            self.scheduler.on_receive_buffer_optimisation();
        }
        resent
    }

    /// The chunk to offer as a copy, when the scheduler wants every subflow to carry the
    /// whole stream (reference §3.3): for each usable non-backup subflow, the first chunk
    /// from its cursor (or the DATA_ACK, if that is further: delivered data is skipped) that
    /// it has not carried; of those whose subflow has window space for them, the oldest.
    /// `None` when there is none: every such subflow has carried all it can now. Brings the
    /// views up to date (their `carried` flags aside).
    fn next_copy(&mut self, fresh: &mut SubflowSet) -> Option<Chunk> {
        self.refresh_views(SubflowSet::EMPTY, fresh);
        let mut oldest: Option<usize> = None;
        for i in 0..self.subflows.len() {
            let v = self.views[i];
            if !v.usable || v.backup {
                continue;
            }
            let from = self.subflows[i].carried_to.max(self.data_una);
            if from >= self.data_nxt {
                continue;
            }
            let mut k = self
                .chunks
                .as_slice()
                .partition_point(|c| c.dsn + u64::from(c.len) <= from);
            // Chunks it carried already (reinjections) are passed over for good.
            while let Some(c) = self.chunks.get(k).filter(|c| c.carried.contains(i)) {
                self.subflows[i].carried_to = c.dsn + u64::from(c.len);
                k += 1;
            }
            let Some(c) = self.chunks.get(k) else {
                continue;
            };
            if v.has_window_space(c.len) && oldest.is_none_or(|o| k < o) {
                oldest = Some(k);
            }
        }
        oldest.map(|k| self.chunks[k])
    }

    fn chunk_index(&self, dsn: u64) -> Option<usize> {
        let k = self.chunks.as_slice().partition_point(|c| c.dsn < dsn);
        (self.chunks.get(k)?.dsn == dsn).then_some(k)
    }

    /// The ACKs the receiving end of subflow `i` has to send now.
    #[inline(always)]
    fn send_acks(&mut self, now: SimTime, i: usize, io: &mut Io<'_, '_>) {
        self.subflows[i].poll_receiver = false;
        // With send jitter alone the noise would send every ACK at once (its receiving end
        // never delays): the same ACKs, written in place.
        if io.noise.as_ref().is_none_or(|n| n.receiver_is_exact()) {
            // Each ACK written where it lies in the pool (no copy of its SACK blocks); the
            // same ACKs as below: nothing here changes the window or the DATA_ACK.
            let (window, data_ack) = (self.receiver.window(), self.receiver.rcv_nxt());
            let receiver = &mut self.subflows[i].receiver;
            let header_bytes = self.header_bytes;
            while receiver.ack_pending() {
                io.out.send_with(
                    PathId::from_index(i),
                    Direction::Reverse,
                    #[inline(always)]
                    |header| {
                        let sack_bytes = receiver.write_ack_in(now, |ack| {
                            *header = Header::MptcpAck(MptcpAck { ack, data_ack });
                            let Header::MptcpAck(placed) = header else {
                                unreachable!("written as an MPTCP ACK above")
                            };
                            placed.ack.rwnd = window;
                            &mut placed.ack
                        });
                        header_bytes + sack_bytes + DSS_ACK_OPTION_BYTES
                    },
                );
            }
            return;
        }
        while let Some(mut ack) = self.subflows[i].receiver.poll_transmit(now) {
            // The window goes with the DATA_ACK it is relative to, both as they stand now: a
            // window computed when this subflow last received data, put beside a later
            // DATA_ACK, would move the right edge past what the receive buffer holds, and the
            // data sent there would be dropped after its subflow had acknowledged it (RFC 8684
            // §3.3.4: the window is relative to the DATA_ACK).
            ack.rwnd = self.receiver.window();
            let size_bytes = self.header_bytes + ack.sack.option_bytes() + DSS_ACK_OPTION_BYTES;
            io.send(Transmit {
                path: PathId::from_index(i),
                direction: Direction::Reverse,
                size_bytes,
                header: Header::MptcpAck(MptcpAck {
                    ack,
                    data_ack: self.receiver.rcv_nxt(),
                }),
            });
        }
    }

    /// Everything the ends send now: the ACKs of the receivers that have some to send, in
    /// subflow order, then the send loop if an input asked for it.
    fn send_all(&mut self, now: SimTime, io: &mut Io<'_, '_>) {
        for i in 0..self.subflows.len() {
            if self.subflows[i].poll_receiver {
                self.send_acks(now, i, io);
            }
        }
        if self.send_pending && self.is_active() {
            self.send_pending = false;
            self.run_send_loop(now, io);
        }
    }
}

/// Where the ends' packets and the connection's events go while it handles one input: the
/// outbox, with the host noise (if any) in between for the packets. One host stack sends
/// every subflow's packets, in the order they are emitted.
struct Io<'o, 'a> {
    out: &'o mut Outbox<'a>,
    noise: Option<Box<HostNoise>>,
    now: SimTime,
}

impl Io<'_, '_> {
    #[inline(always)]
    fn send(&mut self, x: Transmit) {
        match self.noise.as_deref_mut() {
            None => self.out.send(x),
            Some(noise) => noise.send(self.now, x, self.out),
        }
    }

    #[inline(always)]
    fn report(&mut self, event: TransportEvent) {
        self.out.report(event);
    }
}

/// A subflow's [`SubflowView::srtt`]: its smoothed RTT, zero before the first sample.
#[inline(always)]
fn view_srtt(s: &Subflow) -> SimTime {
    let rtt = s.core.rtt_estimator();
    if rtt.has_sample() {
        rtt.srtt()
    } else {
        SimTime::ZERO
    }
}

/// Adds `dsn` to the ascending, duplicate-free reinjection queue.
fn queue_reinjection(queue: &mut VecDeque<u64>, dsn: u64) {
    let k = queue.partition_point(|&d| d < dsn);
    if queue.get(k) != Some(&dsn) {
        queue.insert(k, dsn);
    }
}

/// A read-only view of one subflow's window, for [`TcpCore::send_window`].
struct SubflowControllerRef<'a> {
    cc: &'a Coupled,
    i: usize,
}

impl CongestionControl for SubflowControllerRef<'_> {
    fn name(&self) -> &'static str {
        self.cc.name()
    }
    fn cwnd(&self) -> u64 {
        self.cc.cwnd_of(self.i)
    }
    fn ssthresh(&self) -> u64 {
        self.cc.ssthresh(self.i)
    }
    fn on_ack(&mut self, _: &crate::transport::cc::AckSample) {}
    fn on_congestion_event(&mut self, _: SimTime, _: u64) {}
    fn on_retransmission_timeout(&mut self, _: SimTime, _: u64) {}
}

impl MptcpFlow {
    fn on_start(&mut self, now: SimTime, io: &mut Io<'_, '_>) {
        self.changed = self.all_subflows();
        self.started_at = Some(now);
        self.join_subflows(now);
        self.send_pending = true;
        self.send_all(now, io);
    }

    fn on_stop(&mut self, now: SimTime, io: &mut Io<'_, '_>) {
        self.changed = self.all_subflows();
        match self.stop_mode {
            StopMode::Finish => {
                self.closed_at.get_or_insert(self.data_nxt);
            }
            StopMode::Abort => self.stopped = true,
        }
        self.send_all(now, io);
    }

    /// A data segment: its subflow's receiver answers (no other end has anything new to
    /// send). An ACK: the sending end takes it, then the send loop runs.
    #[inline(always)]
    fn on_packet(&mut self, now: SimTime, path: PathId, header: &Header, io: &mut Io<'_, '_>) {
        let i = path.index();
        if i >= self.subflows.len() {
            return;
        }
        match header {
            Header::TcpData(seg) => {
                self.receive_data(now, i, seg, io);
                self.send_acks(now, i, io);
                // A data segment changes subflow i's receiver alone: its wake-up moves only
                // if the receiver's did.
                let s = &self.subflows[i];
                if s.receiver.poll_timeout() != s.receiver_wake {
                    self.changed.insert(i);
                }
            }
            Header::MptcpAck(ack) if self.subflows[i].established => {
                self.receive_ack(now, i, ack, io);
                if self.is_active() {
                    self.run_send_loop(now, io);
                } else {
                    self.send_pending = true;
                }
            }
            _ => {}
        }
    }

    fn on_timeout(&mut self, now: SimTime, io: &mut Io<'_, '_>) {
        self.views_fresh = SubflowSet::EMPTY;
        self.changed = self.all_subflows();
        self.join_subflows(now);
        let active = self.is_active();
        for i in 0..self.subflows.len() {
            let s = &mut self.subflows[i];
            if active && s.established && s.core.poll_timeout().is_some_and(|t| t <= now) {
                let timeouts = s.core.stats().timeouts;
                let fast_retransmits = s.core.stats().fast_retransmits;
                s.core.handle_timeout(
                    now,
                    &mut SubflowController {
                        cc: &mut self.cc,
                        subflow: i,
                    },
                );
                let s = &mut self.subflows[i];
                if s.core.stats().fast_retransmits > fast_retransmits {
                    // RACK's reordering timer started a recovery.
                    s.loss_events += 1;
                    s.stats.fast_retransmits += 1;
                    io.report(TransportEvent::Loss {
                        path: PathId::from_index(i),
                    });
                }
                if self.subflows[i].core.stats().timeouts > timeouts {
                    self.on_subflow_timeout(now, i, io);
                }
                self.send_pending = true;
            }
            let s = &mut self.subflows[i];
            if s.receiver.poll_timeout().is_some_and(|t| t <= now) {
                s.receiver.handle_timeout(now);
                s.poll_receiver = true;
            }
        }
        self.send_all(now, io);
    }

    /// Every subflow, as a set.
    fn all_subflows(&self) -> SubflowSet {
        SubflowSet(((1u64 << self.subflows.len()) - 1) as u32)
    }

    /// Subflow i's wake-up: its sender's timers while the connection is active and the
    /// subflow established, its join time before it joins (once the connection started), and
    /// its receiver's timers.
    #[inline(always)]
    fn subflow_wake(&self, i: usize, active: bool) -> (Option<SimTime>, Option<SimTime>) {
        let s = &self.subflows[i];
        let sender = match (s.established, self.started_at) {
            (true, _) if active => s.core.poll_timeout(),
            (true, _) | (false, None) => None,
            // It joins then.
            (false, Some(started)) => Some(started + s.start),
        };
        let receiver = s.receiver.poll_timeout();
        let wake = match (sender, receiver) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        (wake, receiver)
    }

    /// Brings the wake-ups of the subflows an input changed up to date, and the earliest
    /// with them. A subflow's timers move only through its own sender or receiver (or the
    /// connection's start, stop and timeouts, which mark every subflow), and every place
    /// that reaches one marks it in `changed`; the others' wake-ups are as they were.
    #[inline(always)]
    fn refresh_deadlines(&mut self) {
        let changed = std::mem::replace(&mut self.changed, SubflowSet::EMPTY);
        let active = self.is_active();
        let mut rescan = false;
        for i in changed.iter() {
            let (new, receiver) = self.subflow_wake(i, active);
            let s = &mut self.subflows[i];
            s.receiver_wake = receiver;
            let old = std::mem::replace(&mut s.wake, new);
            if new == old {
                continue;
            }
            // `earliest` is the least of the wake-ups, `old` among them: unless `old` was
            // it, the others keep it (a later wake-up gone changes no minimum).
            if old.is_some() && old == self.earliest {
                rescan = true;
            } else if let Some(t) = new {
                if self.earliest.is_none_or(|e| t < e) {
                    self.earliest = Some(t);
                }
            }
        }
        if rescan {
            self.earliest = self.subflows.iter().filter_map(|s| s.wake).min();
        }
        debug_assert_eq!(self.earliest, self.computed_wake(), "the earliest wake-up");
    }

    /// The earliest of the subflows' wake-ups, computed afresh.
    fn computed_wake(&self) -> Option<SimTime> {
        let active = self.is_active();
        (0..self.subflows.len())
            .filter_map(|i| self.subflow_wake(i, active).0)
            .min()
    }

    /// Runs `f` with the outbox (through the host noise, if any).
    #[inline(always)]
    fn with_io(
        &mut self,
        now: SimTime,
        out: &mut Outbox<'_>,
        f: impl FnOnce(&mut Self, &mut Io<'_, '_>),
    ) {
        let mut io = Io {
            out,
            noise: self.noise.take(),
            now,
        };
        f(self, &mut io);
        self.noise = io.noise.take();
    }
}

impl Transport for MptcpFlow {
    fn kind(&self) -> &'static str {
        "mptcp"
    }

    fn handle_start(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.with_io(now, out, |flow, io| flow.on_start(now, io));
        self.refresh_deadlines();
    }

    fn handle_stop(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.with_io(now, out, |flow, io| flow.on_stop(now, io));
        self.refresh_deadlines();
    }

    fn handle_packet(
        &mut self,
        now: SimTime,
        path: PathId,
        _dir: Direction,
        header: &Header,
        out: &mut Outbox<'_>,
    ) {
        self.with_io(now, out, |flow, io| flow.on_packet(now, path, header, io));
        self.refresh_deadlines();
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.with_io(now, out, |flow, io| flow.on_timeout(now, io));
        self.refresh_deadlines();
    }

    fn set_tracing(&mut self, enabled: bool) {
        self.tracing = enabled;
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        debug_assert!(self.changed.is_empty(), "wake-ups left to refresh");
        debug_assert_eq!(self.earliest, self.computed_wake(), "the earliest wake-up");
        self.earliest
    }

    fn stats(&self) -> TransportStats {
        let mut stats = TransportStats {
            delivered_bytes: self.receiver.delivered_bytes(),
            ..TransportStats::default()
        };
        for s in &self.subflows {
            let c = s.core.stats();
            stats.retransmissions += c.retransmitted_segments;
            stats.fast_retransmits += c.fast_retransmits;
            stats.timeouts += c.timeouts;
        }
        stats
    }

    fn path_state(&self, path: Option<PathId>) -> PathState {
        match path {
            Some(p) if p.index() < self.subflows.len() => {
                let i = p.index();
                let s = &self.subflows[i];
                PathState {
                    cwnd_bytes: Some(self.cc.cwnd(i)),
                    srtt: s.core.rtt_estimator().has_sample().then(|| s.core.srtt()),
                    in_flight_bytes: Some(s.core.bytes_in_flight()),
                    estimate: self.scheduler.subflow_estimate(i),
                }
            }
            Some(_) => PathState::default(),
            None => PathState {
                cwnd_bytes: Some((0..self.subflows.len()).map(|i| self.cc.cwnd(i)).sum()),
                srtt: None,
                in_flight_bytes: Some(self.subflows.iter().map(|s| s.core.bytes_in_flight()).sum()),
                ..PathState::default()
            },
        }
    }
}

#[cfg(test)]
#[path = "mptcp_tests.rs"]
pub(crate) mod mptcp_tests;
