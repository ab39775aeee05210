//! MPAT, Multi-Probe Aggregate TCP (Singh, Pradhan and Francis, ICNP 2004), as one
//! [`Transport`]: N application flows between the same two hosts, each with its own reliable
//! byte stream, sharing N AIMD congestion windows.
//!
//! **The paper's mechanism** (§3.2–§3.4). The N windows C_1..C_N each evolve like one TCP
//! flow's, so the aggregate holds the fair share of N TCP flows; the application flows are
//! decoupled from them and split the aggregate window `C = Σ C_j` by shares: flow i's MPAT
//! window is `A_i = x_i · C` (eq. 1), `Σ x_i = 1`. Each packet a flow sends is charged to a
//! window with room ("open", §3.3.1) and the mapping is kept; the packet's ACK, or its loss,
//! is charged back to the window that carried it (§3.3.2), which grows by one segment per
//! window of ACKs, halves on three out-of-order ACKs and backs off on its own timeout.
//!
//! **How plait models it.** Each window is a full TCP sender core ([`TcpCore`], SACK, RTO,
//! recovery as configured) with its own congestion controller (Reno by default), numbering the
//! packets it carries in its own sequence space; what it would learn from the flows' ACKs
//! translated through the mappings, it learns from ACKs of that space (a receiver per window).
//! The sender holds every mapping, so this is the translation done exactly (the paper's
//! `seqno2id`/`id2seqno` lists). Windows are paths 0..N−1 of the flow, all on the flow's one
//! route: the network sees N TCP flows. A window resends the packets it lost, which carry the
//! same application bytes (the flow's reliability is served by the window that carried them).
//! Each application flow has its own in-order reassembly at the receiving end.
//!
//! **Sending** (after every input). Each window first resends what its own loss recovery
//! asks for. Then, while a window is open and a flow has data: the flow is the one furthest
//! below its MPAT window, the smallest `outstanding_i / x_i` (ties to the lowest index); a flow
//! at or above `A_i` still sends when no flow below its window has data (the paper's
//! work-conserving scheduler, §3.4); and the window is chosen by the `mapping` (§3.3.3):
//! `random` (an open window uniformly at random, the paper's choice), `sticky` (the window
//! that carried the flow's previous packet if open, else random) or `spread` (an open window
//! other than that one, if any).
//!
//! **Counting.** Every acknowledged or lost segment is charged to exactly one window (its
//! path) and one flow (its tag). A fast retransmit of a window is counted for the flow of the
//! first segment it marked lost; a timeout for the flow of the window's oldest outstanding
//! segment.

use std::collections::VecDeque;

use rand::Rng;

use crate::ids::PathId;
use crate::packet::{DataSegment, Header};
use crate::rng::SimRng;
use crate::time::SimTime;
use crate::transport::cc::{CongestionControl, Controller};
use crate::transport::host_noise::HostNoise;
use crate::transport::multipath::data_receiver::DataReceiver;
use crate::transport::tcp::{CoreEvent, StopMode, TcpConfig, TcpCore, TcpReceiver};
use crate::transport::{
    ApplicationStats, Direction, FlowChange, Outbox, PathState, Transmit, Transport,
    TransportEvent, TransportStats,
};

/// How a packet is charged to a window (§3.3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mapping {
    /// An open window uniformly at random (the paper's implementation).
    #[default]
    Random,
    /// The window of the flow's previous packet when it is open, else random.
    Sticky,
    /// An open window other than the one of the flow's previous packet, if any.
    Spread,
}

impl Mapping {
    pub const NAMES: &'static [&'static str] = &["random", "sticky", "spread"];

    pub fn from_name(name: &str) -> Option<Mapping> {
        match name {
            "random" => Some(Mapping::Random),
            "sticky" => Some(Mapping::Sticky),
            "spread" => Some(Mapping::Spread),
            _ => None,
        }
    }
}

/// The settings of an aggregate.
#[derive(Clone, Debug, PartialEq)]
pub struct MpatConfig {
    /// Every window's TCP settings.
    pub tcp: TcpConfig,
    /// One share per application flow and window (any positive weights; normalised).
    pub shares: Vec<f64>,
    pub mapping: Mapping,
    /// Bytes each application flow sends; `None`: unbounded.
    pub app_bytes: Option<u64>,
}

/// A segment's tag in its window's sent log: the application flow it belongs to (its place in
/// the flow's stream is in the window's mappings).
fn tag(flow: usize) -> u64 {
    flow as u64
}

fn tag_flow(tag: u64) -> usize {
    tag as usize
}

/// A segment a window carries: its place in the window's space and in its flow's stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mapped {
    window_seq: u64,
    len: u32,
    flow: usize,
    offset: u64,
    /// Reported lost (resent, or outstanding at a timeout) once already.
    lost: bool,
}

/// Marks every mapping overlapping `[seq, end)` not yet reported lost as lost, noting the flow
/// of the first in `first_lost` if none is noted: the sent log's `mark_lost`
/// ([`TcpCore::with_sent_log`]), for a window that keeps no log.
fn mark_lost(mappings: &mut [Mapped], first_lost: &mut Option<usize>, seq: u64, end: u64) {
    let mut k = first_ending_after(mappings, seq);
    while let Some(m) = mappings.get_mut(k) {
        if m.window_seq >= end {
            break;
        }
        if !m.lost {
            m.lost = true;
            first_lost.get_or_insert(m.flow);
        }
        k += 1;
    }
}

/// [`first_ending_after`], looked for first where it usually is: mappings follow one another
/// in window sequence, a full segment each, so the one holding `seq` is most often the
/// `(seq − first)/mss`-th. If that one holds `seq`, every earlier one ends at or before its
/// start (they are in order and do not overlap), so it is the first ending after `seq`;
/// otherwise the binary search decides.
#[inline]
fn mapping_at(mappings: &[Mapped], seq: u64, mss: u32) -> usize {
    if let Some(front) = mappings.first() {
        if seq < front.window_seq {
            return 0;
        }
        let k = (seq - front.window_seq) / u64::from(mss.max(1));
        if let Some(m) = usize::try_from(k).ok().and_then(|k| mappings.get(k)) {
            if m.window_seq <= seq && seq < m.window_seq + u64::from(m.len) {
                return k as usize;
            }
        }
    }
    first_ending_after(mappings, seq)
}

/// The index of the first of `mappings` (in window sequence order, not overlapping) that ends
/// after `seq`, by binary search.
#[inline]
fn first_ending_after(mappings: &[Mapped], seq: u64) -> usize {
    mappings.partition_point(|x| x.window_seq + u64::from(x.len) <= seq)
}

/// A window's mappings, oldest first: a vector read from `head` on. The oldest leave by
/// moving `head` (no wrapped index to compute for every access, as a ring buffer's); the part
/// they leave is dropped when nothing is left after it, or when the vector is full and that
/// part is at least half of it (so each mapping is moved at most once per mapping popped
/// before it, and the vector holds at most about four times the most mappings held).
#[derive(Clone, Debug, Default)]
struct MappingLog {
    v: Vec<Mapped>,
    head: usize,
}

impl MappingLog {
    #[inline(always)]
    fn as_slice(&self) -> &[Mapped] {
        &self.v[self.head..]
    }

    #[inline(always)]
    fn as_mut_slice(&mut self) -> &mut [Mapped] {
        &mut self.v[self.head..]
    }

    #[inline(always)]
    fn front(&self) -> Option<&Mapped> {
        self.v.get(self.head)
    }

    #[inline(always)]
    fn iter(&self) -> std::slice::Iter<'_, Mapped> {
        self.as_slice().iter()
    }

    /// Drops the `k` oldest (`k` at most as many as there are).
    #[inline(always)]
    fn pop_front(&mut self, k: usize) {
        self.head += k;
        debug_assert!(self.head <= self.v.len());
        if self.head >= self.v.len() {
            self.v.clear();
            self.head = 0;
        }
    }

    #[inline(always)]
    fn push_back(&mut self, m: Mapped) {
        if self.v.len() == self.v.capacity() && self.head > 0 && 2 * self.head >= self.v.len() {
            self.compact();
        }
        self.v.push(m);
    }

    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        self.v.drain(..self.head);
        self.head = 0;
    }
}

impl PartialEq for MappingLog {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<'a> IntoIterator for &'a MappingLog {
    type Item = &'a Mapped;
    type IntoIter = std::slice::Iter<'a, Mapped>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

struct Window {
    core: TcpCore,
    cc: Controller,
    receiver: TcpReceiver,
    /// Mappings of the window's unacknowledged segments, in window sequence order.
    mappings: MappingLog,
    /// Whether the core keeps its sent log: with RACK-TLP, whose tail loss probes the log
    /// tells from retransmissions. Without it the mappings stand for the log (they hold the
    /// same segments: every new segment the window sends, in order), and `first_lost` for
    /// its reports of lost segments since the last drain.
    logged: bool,
    first_lost: Option<usize>,
    poll_receiver: bool,
}

struct AppFlow {
    share: f64,
    /// 1/share, for the send loop's comparisons.
    inverse_share: f64,
    /// Next new byte of the flow's stream.
    next: u64,
    /// Bytes sent and not yet cumulatively acknowledged by their window.
    outstanding: u64,
    acked: u64,
    receiver: DataReceiver,
    last_window: Option<usize>,
    stats: ApplicationStats,
}

/// Both ends of an MPAT aggregate.
pub struct MpatFlow {
    windows: Vec<Window>,
    flows: Vec<AppFlow>,
    /// Each flow's `outstanding / share` while it has new data, infinite once it has none:
    /// what the send loop compares, side by side ([`MpatFlow::set_load`]).
    loads: Vec<f64>,
    /// Flows whose acknowledged bytes reached their transfer size since the last ACK was
    /// handled, and how many have done so in all.
    reaching_end: Vec<usize>,
    completed: usize,
    mapping: Mapping,
    rng: SimRng,
    mss: u32,
    header_bytes: u32,
    app_bytes: Option<u64>,
    started: bool,
    /// No new data (stopped in finish mode).
    closed: bool,
    stop_mode: StopMode,
    aborted: bool,
    finished: bool,
    tracing: bool,
    /// Run the send loop when the input's sending is flushed.
    send_pending: bool,
    /// Windows that may have room for new data: every window an input touched since it last
    /// refused some (a window's room changes only with its own ACKs and timer).
    open: Vec<usize>,
    listed: Vec<bool>,
    /// Windows an input touched since the last send loop: only they can have resends due.
    touched: Vec<usize>,
    is_touched: Vec<bool>,
    /// Scratch for the `spread` mapping.
    candidates: Vec<usize>,
    /// Windows whose receiver may have an ACK to send, each once.
    acking: VecDeque<usize>,
    /// Each window's next wake-up (sender's timer if active, receiver's), kept for
    /// `poll_timeout`; recomputed for the windows in `changed` once the transmits are drained.
    deadlines: Vec<Option<SimTime>>,
    /// Each window's receiver's timer as it was when its wake-up was last refreshed.
    receiver_deadlines: Vec<Option<SimTime>>,
    /// The earliest of `deadlines`, kept up to date by `refresh_deadlines`.
    earliest: Option<SimTime>,
    changed: Vec<usize>,
    is_changed: Vec<bool>,
    /// Host timing noise: the packets the hosts send leave when it releases them.
    noise: Option<Box<HostNoise>>,
    /// Every input through `on_packet` and `flush`, none through their shortcuts (for the
    /// tests that compare the two).
    #[cfg(test)]
    general_only: bool,
}

impl MpatFlow {
    /// An aggregate of `config.shares.len()` flows and windows, each window with a controller
    /// from `controller` (called once per window); `rng` draws the random mappings.
    ///
    /// # Panics
    /// Without shares, with a share that is not positive and finite, or with more than 65,535
    /// flows.
    pub fn new(
        config: MpatConfig,
        mut controller: impl FnMut() -> Controller,
        rng: SimRng,
    ) -> Self {
        let n = config.shares.len();
        assert!(
            (1..=u16::MAX as usize).contains(&n),
            "1 to 65535 flows, got {n}"
        );
        let shares = normalised(&config.shares);
        let tcp = config.tcp;
        let windows = (0..n)
            .map(|_| {
                let core = TcpCore::new(tcp);
                let logged = core.rack().is_some();
                (core, logged)
            })
            .map(|(core, logged)| Window {
                core: if logged { core.with_sent_log() } else { core },
                cc: controller(),
                receiver: TcpReceiver::new(&tcp),
                mappings: MappingLog::default(),
                logged,
                first_lost: None,
                poll_receiver: false,
            })
            .collect();
        let flows = shares
            .iter()
            .map(|&share| AppFlow {
                share,
                inverse_share: 1.0 / share,
                next: 0,
                outstanding: 0,
                acked: 0,
                receiver: DataReceiver::new(tcp.receive_buffer),
                last_window: None,
                stats: ApplicationStats {
                    share,
                    ..ApplicationStats::default()
                },
            })
            .collect();
        let mut flow = MpatFlow {
            windows,
            flows,
            loads: vec![0.0; n],
            reaching_end: Vec::new(),
            completed: 0,
            mapping: config.mapping,
            rng,
            mss: tcp.mss,
            header_bytes: tcp.header_bytes,
            app_bytes: config.app_bytes,
            started: false,
            closed: false,
            stop_mode: StopMode::default(),
            aborted: false,
            finished: false,
            tracing: false,
            send_pending: false,
            open: Vec::with_capacity(n),
            listed: vec![false; n],
            touched: Vec::with_capacity(n),
            is_touched: vec![false; n],
            candidates: Vec::with_capacity(n),
            acking: VecDeque::with_capacity(n),
            deadlines: vec![None; n],
            receiver_deadlines: vec![None; n],
            earliest: None,
            changed: Vec::with_capacity(n),
            is_changed: vec![false; n],
            noise: None,
            #[cfg(test)]
            general_only: false,
        };
        for i in 0..n {
            flow.set_load(i);
            if flow.app_bytes == Some(0) {
                flow.reaching_end.push(i);
            }
        }
        flow
    }

    /// Flow i's entry in `loads` after a change of its outstanding bytes, share or data.
    #[inline]
    fn set_load(&mut self, i: usize) {
        let f = &self.flows[i];
        self.loads[i] = if self.app_bytes.is_some_and(|total| f.next >= total) {
            f64::INFINITY
        } else {
            f.outstanding as f64 * f.inverse_share
        };
    }

    /// Delays the packets of both hosts by host timing noise ([`HostNoise`]), if given: one
    /// host stack sends every window's packets, in the order it emitted them.
    pub fn with_host_noise(mut self, noise: Option<Box<HostNoise>>) -> Self {
        self.noise = noise;
        self
    }

    pub fn with_stop_mode(mut self, mode: StopMode) -> Self {
        self.stop_mode = mode;
        self
    }

    /// Number of application flows (and windows).
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }
    /// The current shares x_i (summing to one).
    pub fn shares(&self) -> Vec<f64> {
        self.flows.iter().map(|f| f.share).collect()
    }
    /// The aggregate window C (bytes).
    pub fn aggregate_cwnd(&self) -> u64 {
        self.windows.iter().map(|w| w.cc.cwnd()).sum()
    }
    /// Flow i's MPAT window A_i = x_i·C (bytes).
    pub fn mpat_window(&self, i: usize) -> f64 {
        self.flows[i].share * self.aggregate_cwnd() as f64
    }
    /// Window j's sender core.
    pub fn window_core(&self, j: usize) -> &TcpCore {
        &self.windows[j].core
    }
    /// Bytes flow i has sent that its windows have not cumulatively acknowledged.
    pub fn outstanding(&self, i: usize) -> u64 {
        self.flows[i].outstanding
    }
    /// Bytes of flow i delivered in order at the receiving end.
    pub fn delivered(&self, i: usize) -> u64 {
        self.flows[i].receiver.rcv_nxt()
    }

    fn is_active(&self) -> bool {
        self.started && !self.aborted
    }

    /// An input reached window j: it may have resends due and room again.
    #[inline(always)]
    fn touch(&mut self, j: usize) {
        self.change(j);
        self.reopen(j);
        if !self.is_touched[j] {
            self.is_touched[j] = true;
            self.touched.push(j);
        }
    }

    /// Window j may have room again.
    #[inline(always)]
    fn reopen(&mut self, j: usize) {
        if !self.listed[j] {
            self.listed[j] = true;
            self.open.push(j);
        }
    }

    /// Window j's timers may have moved.
    #[inline(always)]
    fn change(&mut self, j: usize) {
        if !self.is_changed[j] {
            self.is_changed[j] = true;
            self.changed.push(j);
        }
    }

    /// The windows' wake-ups after their changes.
    #[inline(always)]
    fn refresh_deadlines(&mut self) {
        // Most inputs change one window (an ACK's, which sends on itself): the loop below
        // for it alone.
        #[cfg(test)]
        let general = self.general_only;
        #[cfg(not(test))]
        let general = false;
        if self.changed.len() == 1 && !general {
            let j = self.changed[0];
            self.changed.clear();
            self.is_changed[j] = false;
            let active = self.is_active();
            if self.set_deadline(j, active) {
                self.earliest = self.deadlines.iter().flatten().min().copied();
            }
            debug_assert_eq!(
                self.earliest,
                self.deadlines.iter().flatten().min().copied()
            );
            return;
        }
        self.refresh_changed();
    }

    /// [`MpatFlow::refresh_deadlines`] of any number of windows changed.
    #[inline(never)]
    fn refresh_changed(&mut self) {
        let active = self.is_active();
        // The earliest deadline moves earlier with a window's, and is looked for anew only
        // when the window that held it moved its own (later, or unset).
        let mut rescan = false;
        for k in 0..self.changed.len() {
            let j = self.changed[k];
            self.is_changed[j] = false;
            rescan |= self.set_deadline(j, active);
        }
        self.changed.clear();
        if rescan {
            self.earliest = self.deadlines.iter().flatten().min().copied();
        }
        debug_assert_eq!(
            self.earliest,
            self.deadlines.iter().flatten().min().copied()
        );
    }

    /// Window j's wake-up anew, and the earliest with it unless it has to be looked for
    /// anew (returns whether it has: the window that held it moved its own).
    #[inline(always)]
    fn set_deadline(&mut self, j: usize, active: bool) -> bool {
        let w = &self.windows[j];
        let sender = if active { w.core.poll_timeout() } else { None };
        let receiver = w.receiver.poll_timeout();
        self.receiver_deadlines[j] = receiver;
        let new = match (sender, receiver) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let old = std::mem::replace(&mut self.deadlines[j], new);
        // An unchanged wake-up leaves the earliest as it is (it is at most this one).
        if new == old {
            return false;
        }
        if old.is_some() && old == self.earliest {
            return true;
        }
        if let Some(t) = new {
            if self.earliest.is_none_or(|e| t < e) {
                self.earliest = Some(t);
            }
        }
        false
    }

    /// Window j's receiver may have an ACK to send.
    fn want_ack(&mut self, j: usize) {
        self.change(j);
        let w = &mut self.windows[j];
        if !w.poll_receiver {
            w.poll_receiver = true;
            self.acking.push_back(j);
        }
    }

    /// Window j has no room for new data until its next input.
    #[inline]
    fn refuse(&mut self, j: usize) {
        if let Some(k) = self.open.iter().position(|&x| x == j) {
            self.open.swap_remove(k);
        }
        self.listed[j] = false;
    }

    /// Window j's congestion window, for a traced run.
    #[inline(always)]
    fn note_cwnd(&self, j: usize, out: &mut Outbox<'_>) {
        if self.tracing {
            out.report(TransportEvent::Cwnd {
                path: PathId::from_index(j),
                cwnd_bytes: self.windows[j].cc.cwnd(),
            });
        }
    }

    /// Takes what the window learnt since the last drain: its cumulatively acknowledged
    /// segments release their flow's outstanding bytes (the mappings below `snd_una`, the
    /// segments the sent log reports acknowledged, in the same order); returns the flow of the
    /// first segment reported lost since.
    #[inline(always)]
    fn drain_core_events(&mut self, j: usize) -> Option<usize> {
        let w = &mut self.windows[j];
        let mut first_lost = w.first_lost.take();
        if w.logged {
            while let Some(e) = w.core.poll_event() {
                if let CoreEvent::Lost { tag, .. } = e {
                    first_lost.get_or_insert(tag_flow(tag));
                }
            }
        }
        let una = w.core.snd_una();
        let live = w.mappings.as_slice();
        let mut acked = 0;
        while let Some(m) = live
            .get(acked)
            .filter(|x| x.window_seq + u64::from(x.len) <= una)
        {
            let (i, len) = (m.flow, u64::from(m.len));
            acked += 1;
            let f = &mut self.flows[i];
            f.outstanding = f.outstanding.saturating_sub(len);
            let before = f.acked;
            f.acked += len;
            // `set_load`, with the transfer size looked at once.
            self.loads[i] = match self.app_bytes {
                None => f.outstanding as f64 * f.inverse_share,
                Some(total) => {
                    if before < total && f.acked >= total {
                        self.reaching_end.push(i);
                    }
                    if f.next >= total {
                        f64::INFINITY
                    } else {
                        f.outstanding as f64 * f.inverse_share
                    }
                }
            };
        }
        w.mappings.pop_front(acked);
        first_lost
    }

    /// The flow of window j's oldest outstanding segment.
    fn oldest_flow(&self, j: usize) -> Option<usize> {
        self.windows[j].mappings.front().map(|m| m.flow)
    }

    fn receive_data(&mut self, now: SimTime, j: usize, seg: &DataSegment, out: &mut Outbox<'_>) {
        self.want_ack(j);
        self.take_data(now, j, seg, out);
    }

    /// Window j's receiver takes a data segment; its newly in-order bytes go to their flows.
    #[inline(always)]
    fn take_data(&mut self, now: SimTime, j: usize, seg: &DataSegment, out: &mut Outbox<'_>) {
        let w = &mut self.windows[j];
        let in_order = w.receiver.handle_data(now, seg);
        if self.tracing {
            out.report(TransportEvent::Delivered {
                path: PathId::from_index(j),
                bytes: seg.len,
            });
        }
        if in_order.is_empty() {
            return;
        }
        // The window's newly in-order bytes, mapped back to their flows.
        let mappings = self.windows[j].mappings.as_slice();
        let mut k = mapping_at(mappings, in_order.start, self.mss);
        while let Some(&m) = mappings.get(k) {
            if m.window_seq >= in_order.end {
                break;
            }
            let lo = m.window_seq.max(in_order.start);
            let hi = (m.window_seq + u64::from(m.len)).min(in_order.end);
            self.flows[m.flow]
                .receiver
                .handle_data(m.offset + (lo - m.window_seq), hi - lo);
            k += 1;
        }
    }

    #[inline(always)]
    fn receive_ack(
        &mut self,
        now: SimTime,
        j: usize,
        ack: &crate::packet::AckSegment,
        out: &mut Outbox<'_>,
    ) {
        self.touch(j);
        self.ack_arrived(now, j, ack, out);
    }

    /// Window j's sender takes an ACK (what [`MpatFlow::receive_ack`] does once the window is
    /// touched).
    #[inline(always)]
    fn ack_arrived(
        &mut self,
        now: SimTime,
        j: usize,
        ack: &crate::packet::AckSegment,
        out: &mut Outbox<'_>,
    ) {
        let w = &mut self.windows[j];
        let fast_retransmits = w.core.stats().fast_retransmits;
        let outcome = w.core.handle_ack(now, ack, &mut w.cc);
        let path = PathId::from_index(j);
        if let Some(rtt) = outcome.rtt {
            out.report(TransportEvent::RttSample { path, rtt });
            let srtt = w.core.srtt();
            w.receiver.set_rtt_hint(srtt);
        }
        let recovered = self.windows[j].core.stats().fast_retransmits > fast_retransmits;
        // The oldest segment's flow before the drain (read only when it may be needed).
        let oldest = if recovered { self.oldest_flow(j) } else { None };
        let first_lost = self.drain_core_events(j);
        if recovered {
            out.report(TransportEvent::Loss { path });
            if let Some(i) = first_lost.or(oldest) {
                self.flows[i].stats.fast_retransmits += 1;
            }
        }
        self.note_cwnd(j, out);
        self.check_finished(now, out);
    }

    #[inline(always)]
    fn check_finished(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        if self.app_bytes.is_none() {
            return;
        }
        // A flow completes at the first ACK handled once its window acknowledged all its bytes.
        for i in self.reaching_end.drain(..) {
            self.flows[i].stats.completed_at = Some(now);
            self.completed += 1;
        }
        if !self.finished && self.completed == self.flows.len() {
            self.finished = true;
            out.report(TransportEvent::Finished);
        }
    }

    /// Window j's own retransmissions, then new data while windows are open, each packet
    /// handed to `emit` as it is decided.
    ///
    /// A resend the core would answer with nothing is not asked for
    /// ([`TcpCore::sends_nothing`]), and new data is asked for without that question: either
    /// way the window is refused as the call's answer would have it, with the same draws of
    /// the mapping before it, so the packets are the same.
    fn send(&mut self, now: SimTime, mut emit: impl FnMut(Transmit)) {
        if !self.is_active() {
            return;
        }
        // Each touched window's own resends first, decided as a single sender would decide
        // them with the next flow's data on offer (a due tail loss probe may carry that data).
        let mut touched = std::mem::take(&mut self.touched);
        if touched.len() > 1 {
            touched.sort_unstable();
        }
        let mut next = self.next_flow();
        for &j in &touched {
            self.is_touched[j] = false;
            next = self.resend(now, j, next, &mut emit);
        }
        touched.clear();
        self.touched = touched;
        self.send_new(now, next, &mut emit);
    }

    /// [`MpatFlow::send`] with window j the one window touched, without the list.
    #[inline(always)]
    fn send_touched(&mut self, now: SimTime, j: usize, mut emit: impl FnMut(Transmit)) {
        debug_assert!(self.is_active() && self.touched.is_empty());
        let next = self.next_flow();
        let next = self.resend(now, j, next, &mut emit);
        self.send_new(now, next, &mut emit);
    }

    /// Window j's own resends, with flow `next`'s data on offer; returns the flow that sends
    /// next after them.
    #[inline(always)]
    fn resend(
        &mut self,
        now: SimTime,
        j: usize,
        mut next: Option<usize>,
        emit: &mut impl FnMut(Transmit),
    ) -> Option<usize> {
        loop {
            // Asked about resends alone, the question does not read the offer: asked
            // before the offer is made up.
            let w = &self.windows[j];
            if w.core.sends_nothing(&w.cc, w.core.snd_nxt(), false) {
                break;
            }
            let (i, offset, len) = match next {
                Some(i) => (i, self.flows[i].next, self.segment_len(i)),
                None => (0, 0, 0),
            };
            let w = &mut self.windows[j];
            let before = w.core.snd_nxt();
            let Some(seg) = w
                .core
                .poll_retransmission(now, &mut w.cc, before + len, tag(i))
            else {
                break;
            };
            if !seg.is_retransmission && seg.seq == before && next.is_some() {
                // A tail loss probe carried the offered data: the next offer changes.
                self.account_new(i, j, offset, &seg);
                next = self.next_flow();
            } else {
                self.account_resend(j, &seg);
            }
            self.push_data(j, seg, emit);
        }
        next
    }

    /// New data while windows are open, from flow `next` on.
    #[inline(always)]
    fn send_new(&mut self, now: SimTime, mut next: Option<usize>, emit: &mut impl FnMut(Transmit)) {
        // `next` is still the flow that sends next: resends change no flow's outstanding.
        while let Some(i) = next {
            let Some(j) = self.pick_window(i) else {
                return;
            };
            let offset = self.flows[i].next;
            let len = self.segment_len(i);
            let w = &mut self.windows[j];
            let before = w.core.snd_nxt();
            // A call the core would answer with nothing changes nothing but its
            // `window_filled`, which an aggregate does not read ([`TcpCore::sends_nothing`]):
            // the call is made without asking first (the window picked usually has room);
            // the general path asks first, for the tests that compare the two.
            #[cfg(test)]
            if self.general_only && w.core.sends_nothing(&w.cc, before + len, true) {
                self.refuse(j);
                continue;
            }
            match w.core.poll_transmit(now, &mut w.cc, before + len, tag(i)) {
                Some(seg) if !seg.is_retransmission && seg.seq == before => {
                    self.account_new(i, j, offset, &seg);
                    self.push_data(j, seg, emit);
                    next = if self.open.is_empty() || self.only_open_is_full() {
                        None
                    } else {
                        self.next_flow()
                    };
                }
                Some(seg) => {
                    self.account_resend(j, &seg);
                    self.push_data(j, seg, emit);
                }
                None => self.refuse(j),
            }
        }
    }

    /// Whether the one window open has no room for the next flow's segment, whichever flow
    /// that is: with an unbounded source every flow has a full segment to send while not
    /// closed, so the send loop would choose a flow, pick this window without a draw, find
    /// no room and refuse it. Then the window is refused here, and the flow not chosen.
    #[inline(always)]
    fn only_open_is_full(&mut self) -> bool {
        if self.open.len() != 1 || self.app_bytes.is_some() || self.closed {
            return false;
        }
        let j = self.open[0];
        let w = &self.windows[j];
        if w.core
            .sends_nothing(&w.cc, w.core.snd_nxt() + u64::from(self.mss), true)
        {
            // `refuse(j)` of the one window open.
            self.open.clear();
            self.listed[j] = false;
            return true;
        }
        false
    }

    /// Bytes of flow i's next new segment.
    fn segment_len(&self, i: usize) -> u64 {
        match self.app_bytes {
            Some(total) => (total - self.flows[i].next).min(self.mss as u64),
            None => self.mss as u64,
        }
    }

    /// New data of flow `i` at `offset` went out on window `j`.
    #[inline(always)]
    fn account_new(&mut self, i: usize, j: usize, offset: u64, seg: &DataSegment) {
        self.windows[j].mappings.push_back(Mapped {
            window_seq: seg.seq,
            len: seg.len,
            flow: i,
            offset,
            lost: false,
        });
        let f = &mut self.flows[i];
        f.next += u64::from(seg.len);
        f.outstanding += u64::from(seg.len);
        f.last_window = Some(j);
        f.stats.packets_sent += 1;
        f.stats.bytes_sent += u64::from(seg.len);
        self.set_load(i);
    }

    fn account_resend(&mut self, j: usize, seg: &DataSegment) {
        let w = &mut self.windows[j];
        if !w.logged && seg.is_retransmission {
            // Without RACK-TLP every resend is a retransmission the log would mark lost.
            let end = seg.seq + u64::from(seg.len);
            mark_lost(w.mappings.as_mut_slice(), &mut w.first_lost, seg.seq, end);
        }
        let m = self.windows[j].mappings.as_slice();
        if let Some(x) = m.get(mapping_at(m, seg.seq, self.mss)) {
            let s = &mut self.flows[x.flow].stats;
            s.packets_sent += 1;
            s.bytes_sent += u64::from(seg.len);
            s.retransmissions += 1;
        }
    }

    #[inline(always)]
    fn push_data(&mut self, j: usize, seg: DataSegment, emit: &mut impl FnMut(Transmit)) {
        self.change(j);
        emit(Transmit {
            path: PathId::from_index(j),
            direction: Direction::Forward,
            size_bytes: seg.len + self.header_bytes,
            header: Header::TcpData(seg),
        });
    }

    /// The flow that sends next: the one with data furthest below its MPAT window (smallest
    /// outstanding/share); flows at or above theirs only when none below has data.
    ///
    /// Both rules are one: a flow is below its window exactly when its outstanding/share is
    /// below C, so the flow with the smallest outstanding/share is the one furthest below if
    /// any is, and otherwise the least over.
    #[inline]
    fn next_flow(&self) -> Option<usize> {
        if self.closed {
            return None;
        }
        least_load(&self.loads)
    }

    /// The window flow `i`'s next packet goes on, by the mapping, among the windows that may
    /// have room (the caller tries it and, if it has none, takes it off the list, so the
    /// choice is uniform over the windows with room); `None` when no window has room.
    #[inline(always)]
    fn pick_window(&mut self, i: usize) -> Option<usize> {
        let n = self.open.len();
        if n == 0 {
            return None;
        }
        let last = self.flows[i].last_window;
        match (self.mapping, last) {
            (Mapping::Sticky, Some(l)) if self.listed[l] => return Some(l),
            (Mapping::Spread, Some(l)) if n > 1 && self.listed[l] => {
                self.candidates.clear();
                self.candidates
                    .extend(self.open.iter().copied().filter(|&c| c != l));
                let k = self.rng.gen_range(0..self.candidates.len());
                return Some(self.candidates[k]);
            }
            _ => {}
        }
        let k = if n == 1 { 0 } else { self.rng.gen_range(0..n) };
        Some(self.open[k])
    }

    /// New shares (any positive weights; normalised), effective for the next packets.
    pub fn set_shares(&mut self, shares: &[f64]) {
        if shares.len() != self.flows.len() {
            return;
        }
        for (f, x) in self.flows.iter_mut().zip(normalised(shares)) {
            f.share = x;
            f.inverse_share = 1.0 / x;
            f.stats.share = x;
        }
        for i in 0..self.flows.len() {
            self.set_load(i);
        }
        self.send_pending = true;
    }

    /// What the ends send after an input, each packet handed to `emit`: the send loop's
    /// data (when an input asked for it), then the ACKs of the windows whose receivers may
    /// owe one, in the order they were asked.
    #[inline]
    fn emit(&mut self, now: SimTime, emit: &mut impl FnMut(Transmit)) {
        if self.send_pending {
            self.send_pending = false;
            self.send(now, &mut *emit);
        }
        while let Some(j) = self.acking.pop_front() {
            let w = &mut self.windows[j];
            w.poll_receiver = false;
            while let Some(ack) = w.receiver.poll_transmit(now) {
                emit(Transmit {
                    path: PathId::from_index(j),
                    direction: Direction::Reverse,
                    size_bytes: self.header_bytes + ack.sack.option_bytes(),
                    header: Header::TcpAck(ack),
                });
            }
        }
    }
}

impl MpatFlow {
    fn on_start(&mut self) {
        self.started = true;
        for j in 0..self.windows.len() {
            self.touch(j);
            self.want_ack(j);
        }
        self.send_pending = true;
    }

    fn on_stop(&mut self) {
        match self.stop_mode {
            StopMode::Finish => self.closed = true,
            StopMode::Abort => self.aborted = true,
        }
        for j in 0..self.windows.len() {
            self.change(j);
        }
    }

    #[inline]
    fn on_packet(&mut self, now: SimTime, path: PathId, header: &Header, out: &mut Outbox<'_>) {
        let j = path.index();
        if j >= self.windows.len() {
            return;
        }
        match header {
            Header::TcpData(seg) => self.receive_data(now, j, seg, out),
            Header::TcpAck(ack) => {
                self.receive_ack(now, j, ack, out);
                self.send_pending = true;
            }
            _ => {}
        }
    }

    fn on_timeout(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        for j in 0..self.windows.len() {
            // A window none of whose timers is due has nothing to do (its receiver owes no
            // ACK: every ACK owed is sent when the input that owes it is flushed).
            if self.deadlines[j].is_none_or(|t| t > now) {
                continue;
            }
            let w = &mut self.windows[j];
            if self.started && !self.aborted && w.core.poll_timeout().is_some_and(|t| t <= now) {
                let (timeouts, fast) = (w.core.stats().timeouts, w.core.stats().fast_retransmits);
                let oldest = w.mappings.front().map(|m| m.flow);
                w.core.handle_timeout(now, &mut w.cc);
                self.touch(j);
                let w = &mut self.windows[j];
                let (timed_out, recovered) = (
                    w.core.stats().timeouts > timeouts,
                    w.core.stats().fast_retransmits > fast,
                );
                if timed_out && !w.logged {
                    // What the sent log marks lost at a timeout: everything outstanding and
                    // not SACKed (RFC 6298 §5, go-back-N).
                    let (una, nxt) = (w.core.snd_una(), w.core.snd_nxt());
                    let scoreboard = w.core.scoreboard();
                    let mut seq = una;
                    while seq < nxt {
                        let hole_end = scoreboard.next_sacked_start(seq).unwrap_or(nxt).min(nxt);
                        mark_lost(w.mappings.as_mut_slice(), &mut w.first_lost, seq, hole_end);
                        seq = scoreboard.next_unsacked(hole_end.max(seq + 1));
                    }
                }
                let first_lost = self.drain_core_events(j);
                let path = PathId::from_index(j);
                if timed_out {
                    out.report(TransportEvent::Timeout { path });
                    if let Some(i) = oldest {
                        self.flows[i].stats.timeouts += 1;
                    }
                }
                if recovered {
                    out.report(TransportEvent::Loss { path });
                    if let Some(i) = first_lost.or(oldest) {
                        self.flows[i].stats.fast_retransmits += 1;
                    }
                }
                if timed_out || recovered {
                    self.note_cwnd(j, out);
                }
            }
            let w = &mut self.windows[j];
            if w.receiver.poll_timeout().is_some_and(|t| t <= now) {
                w.receiver.handle_timeout(now);
            }
            self.want_ack(j);
        }
        self.send_pending = true;
    }

    fn on_change(&mut self, change: &FlowChange) {
        if let Some(shares) = change.as_numbers("shares") {
            self.set_shares(shares);
        }
    }

    /// A data segment or an ACK of window j, without host noise and without a send loop
    /// asked for before it, handled and flushed at once: what `on_packet` and `flush` do, in
    /// the same order, without their lists. Every input ends with a flush, which empties the
    /// lists of ACKs owed and windows changed; so a data segment leaves window j's ACKs alone
    /// to send and window j alone to change (the send loop is not asked for), and an ACK
    /// asks for the send loop and owes no ACK. Returns false, having done nothing, for any
    /// other input.
    #[inline(always)]
    fn shortcut(&mut self, now: SimTime, j: usize, header: &Header, out: &mut Outbox<'_>) -> bool {
        #[cfg(test)]
        if self.general_only {
            return false;
        }
        if self.send_pending || j >= self.windows.len() {
            return false;
        }
        // Host noise at the receiving end delays its ACKs, at the sender its data: a data
        // segment's answer goes at once unless the first, an ACK's only without any.
        if let Some(noise) = &self.noise {
            if !noise.receiver_is_exact() || matches!(header, Header::TcpAck(_)) {
                return false;
            }
        }
        debug_assert!(self.acking.is_empty() && self.changed.is_empty());
        match header {
            Header::TcpData(seg) => {
                self.take_data(now, j, seg, out);
                let header_bytes = self.header_bytes;
                let receiver = &mut self.windows[j].receiver;
                while receiver.ack_pending() {
                    out.send_with(
                        PathId::from_index(j),
                        Direction::Reverse,
                        // The ACK `take_ack` gives, written where it lies in the pool.
                        #[inline(always)]
                        |header| header_bytes + receiver.write_ack(now, header),
                    );
                }
                // A data segment changes window j's receiver alone: its wake-up, refreshed
                // at the end of every input that changed its sender or its receiver, moves
                // only if the receiver's timer did.
                // (Both unset, the usual case, is told without the deadline.)
                let receiver = &self.windows[j].receiver;
                if (receiver.timer_armed() || self.receiver_deadlines[j].is_some())
                    && receiver.poll_timeout() != self.receiver_deadlines[j]
                {
                    let active = self.is_active();
                    if self.set_deadline(j, active) {
                        self.earliest = self.deadlines.iter().flatten().min().copied();
                    }
                }
                debug_assert_eq!(self.deadlines[j], {
                    let w = &self.windows[j];
                    let sender = if self.is_active() {
                        w.core.poll_timeout()
                    } else {
                        None
                    };
                    match (sender, w.receiver.poll_timeout()) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    }
                });
                debug_assert_eq!(
                    self.earliest,
                    self.deadlines.iter().flatten().min().copied()
                );
            }
            Header::TcpAck(ack) => {
                // The send loop empties the list of windows touched when it runs (the
                // aggregate is active): then window j is the one touched, and is not listed.
                if self.touched.is_empty() && self.is_active() {
                    self.change(j);
                    self.reopen(j);
                    self.ack_arrived(now, j, ack, out);
                    self.send_touched(
                        now,
                        j,
                        #[inline(always)]
                        |x| out.send(x),
                    );
                } else {
                    self.receive_ack(now, j, ack, out);
                    self.send(
                        now,
                        #[inline(always)]
                        |x| out.send(x),
                    );
                }
                self.refresh_deadlines();
            }
            _ => return false,
        }
        true
    }

    /// The ACKs the windows' receivers owe, each written where it lies in the pool (no copy
    /// of its SACK blocks): `emit`'s ACKs, in the same order.
    #[inline(always)]
    fn flush_acks(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        let header_bytes = self.header_bytes;
        while let Some(j) = self.acking.pop_front() {
            let w = &mut self.windows[j];
            w.poll_receiver = false;
            let receiver = &mut w.receiver;
            while receiver.ack_pending() {
                out.send_with(
                    PathId::from_index(j),
                    Direction::Reverse,
                    #[inline(always)]
                    |header| {
                        let ack = receiver.take_ack(now);
                        *header = Header::TcpAck(ack);
                        header_bytes + ack.sack.option_bytes()
                    },
                );
            }
        }
    }

    /// Puts what the ends send now into the outbox (through the host noise, if any), and
    /// brings the windows' wake-ups up to date.
    #[inline]
    fn flush(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        match self.noise.take() {
            None => {
                // `emit`, with each ACK written where it lies in the pool (no copy of its
                // SACK blocks): the same packets in the same order.
                if self.send_pending {
                    self.send_pending = false;
                    self.send(
                        now,
                        #[inline(always)]
                        |x| out.send(x),
                    );
                }
                self.flush_acks(now, out);
            }
            // Send jitter alone: the data through the noise, the ACKs at once as without it
            // (the noise would send each at once: its receiving end never delays).
            Some(mut noise) if noise.receiver_is_exact() => {
                if self.send_pending {
                    self.send_pending = false;
                    self.send(now, |x| noise.send(now, x, out));
                }
                self.flush_acks(now, out);
                self.noise = Some(noise);
            }
            Some(mut noise) => {
                self.emit(now, &mut |x: Transmit| noise.send(now, x, out));
                self.noise = Some(noise);
            }
        }
        self.refresh_deadlines();
    }
}

impl Transport for MpatFlow {
    fn kind(&self) -> &'static str {
        "mpat"
    }

    fn handle_start(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.on_start();
        self.flush(now, out);
    }

    fn handle_stop(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.on_stop();
        self.flush(now, out);
    }

    fn handle_packet(
        &mut self,
        now: SimTime,
        path: PathId,
        _dir: Direction,
        header: &Header,
        out: &mut Outbox<'_>,
    ) {
        if self.shortcut(now, path.index(), header, out) {
            return;
        }
        self.on_packet(now, path, header, out);
        self.flush(now, out);
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.on_timeout(now, out);
        self.flush(now, out);
    }

    fn handle_change(&mut self, now: SimTime, change: &FlowChange, out: &mut Outbox<'_>) {
        self.on_change(change);
        self.flush(now, out);
    }

    fn set_tracing(&mut self, enabled: bool) {
        self.tracing = enabled;
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        debug_assert!(
            self.changed.is_empty(),
            "poll_timeout before the transmits were drained"
        );
        self.earliest
    }

    fn stats(&self) -> TransportStats {
        let mut s = TransportStats {
            delivered_bytes: self.flows.iter().map(|f| f.receiver.rcv_nxt()).sum(),
            ..TransportStats::default()
        };
        for w in &self.windows {
            let c = w.core.stats();
            s.retransmissions += c.retransmitted_segments;
            s.fast_retransmits += c.fast_retransmits;
            s.timeouts += c.timeouts;
        }
        s
    }

    fn path_state(&self, path: Option<PathId>) -> PathState {
        match path {
            Some(p) if p.index() < self.windows.len() => {
                let w = &self.windows[p.index()];
                PathState {
                    cwnd_bytes: Some(w.cc.cwnd()),
                    srtt: w.core.rtt_estimator().has_sample().then(|| w.core.srtt()),
                    in_flight_bytes: Some(w.core.bytes_in_flight()),
                    ..PathState::default()
                }
            }
            Some(_) => PathState::default(),
            None => PathState {
                cwnd_bytes: Some(self.aggregate_cwnd()),
                srtt: self.windows[0]
                    .core
                    .rtt_estimator()
                    .has_sample()
                    .then(|| self.windows[0].core.srtt()),
                in_flight_bytes: Some(self.windows.iter().map(|w| w.core.bytes_in_flight()).sum()),
                ..PathState::default()
            },
        }
    }

    fn application_flows(&self) -> usize {
        self.flows.len()
    }

    fn application_stats(&self, i: usize) -> ApplicationStats {
        let f = &self.flows[i];
        ApplicationStats {
            delivered_bytes: f.receiver.rcv_nxt(),
            ..f.stats
        }
    }
}

/// The first index of the smallest of `loads` if it is finite (a flow with data), ties to the
/// lowest index; `None` when every load is infinite (no flow has data).
///
/// The smallest value first (no index to carry along), then the first index holding it:
/// loads are never NaN (outstanding bytes times a positive finite inverse share, or
/// infinite), so the first equal to the minimum is the first strictly below every earlier
/// one, what a scan keeping the first strict minimum finds ([`least_load_by_scan`]).
#[inline(always)]
fn least_load(loads: &[f64]) -> Option<usize> {
    let least = loads
        .iter()
        .fold(f64::INFINITY, |m, &x| if x < m { x } else { m });
    if least == f64::INFINITY {
        return None;
    }
    loads.iter().position(|&x| x == least)
}

/// [`least_load`] by one scan: a later load replaces the best only when strictly below it
/// (ties to the lowest index); infinite loads (flows without data) never do.
#[cfg(test)]
fn least_load_by_scan(loads: &[f64]) -> Option<usize> {
    let mut best = f64::INFINITY;
    let mut arg = None;
    for (i, &load) in loads.iter().enumerate() {
        if load < best {
            best = load;
            arg = Some(i);
        }
    }
    arg
}

/// The smallest weight an aggregate accepts, relative to its largest.
pub const MIN_SHARE_RATIO: f64 = 1e-9;

/// Shares scaled to sum to one (scaled by the largest first, so no sum overflows).
///
/// # Panics
/// If a share is not positive and finite (the scenario reader checks them).
pub fn normalised(shares: &[f64]) -> Vec<f64> {
    assert!(
        shares.iter().all(|s| s.is_finite() && *s > 0.0),
        "shares must be positive and finite"
    );
    let max = shares.iter().copied().fold(0.0, f64::max);
    let scaled: Vec<f64> = shares.iter().map(|s| s / max).collect();
    let total: f64 = scaled.iter().sum();
    scaled.iter().map(|s| s / total).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_normalised_without_overflow() {
        assert_eq!(normalised(&[1.0, 3.0]), [0.25, 0.75]);
        let huge = normalised(&[1e308, 1e308]);
        assert_eq!(huge, [0.5, 0.5]);
        let x = normalised(&[95.0, 1.0, 4.0]);
        assert!((x.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        assert!((x[0] / x[1] - 95.0).abs() < 1e-12);
    }

    /// `mark_lost` reports what the sent log's `mark_lost` reports: each segment overlapping
    /// the range once, the first reported since the last drain naming the flow.
    #[test]
    fn a_mapping_is_reported_lost_once_and_the_first_names_the_flow() {
        let mut m: Vec<Mapped> = (0..4)
            .map(|k| Mapped {
                window_seq: 100 * k,
                len: 100,
                flow: k as usize + 10,
                offset: 0,
                lost: false,
            })
            .collect();
        let m = &mut m[..];
        let mut first = None;
        mark_lost(m, &mut first, 150, 250);
        assert_eq!(first, Some(11));
        assert_eq!(
            m.iter().map(|x| x.lost).collect::<Vec<_>>(),
            [false, true, true, false]
        );
        // Already reported: a second mark of the same range reports nothing new.
        let mut again = None;
        mark_lost(m, &mut again, 100, 300);
        assert_eq!(again, None);
        // A range ending where a segment starts leaves it alone; a later report keeps the
        // first flow noted.
        mark_lost(m, &mut first, 0, 100);
        assert_eq!(first, Some(11));
        assert!(m[0].lost && !m[3].lost);
        let mut after = None;
        mark_lost(&mut m[1..], &mut after, 0, 1_000);
        assert_eq!(after, Some(13));
    }

    /// The guess by segment size finds what the binary search finds: full and short
    /// segments, gaps, a log with popped mappings before its live ones and one compacted,
    /// sequence numbers before, inside and after them.
    #[test]
    fn a_mapping_found_by_its_size_is_the_one_the_search_finds() {
        let mut m = MappingLog {
            v: Vec::with_capacity(8),
            head: 0,
        };
        let mut seq = 1_000;
        for k in 0..14u64 {
            if k == 6 {
                // Pop from the front, push at the back: the log compacts when full.
                m.pop_front(5);
            }
            let len = match k % 5 {
                3 => 400,
                4 => 1,
                _ => 1_000,
            };
            m.push_back(Mapped {
                window_seq: seq,
                len,
                flow: 0,
                offset: 0,
                lost: false,
            });
            seq += u64::from(len) + if k == 9 { 700 } else { 0 };
        }
        let (first, end) = (m.front().unwrap().window_seq, seq + 2_000);
        let m = m.as_slice();
        for s in (first.saturating_sub(1_500)..end)
            .step_by(7)
            .chain([0, first, end])
        {
            assert_eq!(mapping_at(m, s, 1_000), first_ending_after(m, s), "seq {s}");
        }
        assert_eq!(mapping_at(&[], 5, 1_000), 0);
    }

    /// The log holds what a ring buffer given the same pushes and pops holds, in the same
    /// order, through pops of one and of many, emptying, compaction and growth; and its
    /// vector stays within four times the most mappings held (plus its first allocation).
    #[test]
    fn the_mapping_log_holds_what_a_ring_buffer_holds() {
        let mut log = MappingLog::default();
        let mut ring: VecDeque<Mapped> = VecDeque::new();
        let mut rng = crate::rng::rng_from_seed(11);
        let (mut seq, mut most, mut compactions) = (0u64, 0usize, 0);
        for step in 0..20_000u64 {
            // Phases of growth and of shrinking, so the log grows, empties and compacts.
            let push_bias = if (step / 500) % 2 == 0 { 6 } else { 3 };
            if rng.gen_range(0..10) < push_bias {
                let m = Mapped {
                    window_seq: seq,
                    len: 1_000,
                    flow: (step % 7) as usize,
                    offset: step,
                    lost: step % 3 == 0,
                };
                seq += 1_000;
                let before = log.head;
                log.push_back(m);
                if before > 0 && log.head == 0 {
                    compactions += 1;
                }
                ring.push_back(m);
            } else {
                let k = rng.gen_range(0..=ring.len().min(4));
                log.pop_front(k);
                ring.drain(..k);
            }
            most = most.max(ring.len());
            assert!(log.iter().eq(ring.iter()), "step {step}");
            assert_eq!(log.front(), ring.front());
            assert!(log.v.capacity() <= 4 * most.max(4), "step {step}");
        }
        assert!(compactions > 10, "{compactions}");
    }

    /// The two-pass search finds the flow the one-pass scan finds: ties (equal shares make
    /// many), zeros, infinite loads (flows without data) anywhere, all infinite, one flow.
    #[test]
    fn the_least_load_is_the_one_the_scan_finds() {
        let mut rng = crate::rng::rng_from_seed(5);
        let values = [0.0, 1_460.0, 2_920.0, 4_380.0, 1e300, f64::INFINITY];
        for _ in 0..20_000 {
            let n = rng.gen_range(1..=12);
            let loads: Vec<f64> = (0..n)
                .map(|_| {
                    if rng.gen_range(0..4) == 0 {
                        rng.gen_range(0.0..1e6)
                    } else {
                        values[rng.gen_range(0..values.len())]
                    }
                })
                .collect();
            assert_eq!(least_load(&loads), least_load_by_scan(&loads), "{loads:?}");
        }
        assert_eq!(least_load(&[f64::INFINITY; 3]), None);
        assert_eq!(least_load(&[3.0, 1.0, 1.0]), Some(1));
        assert_eq!(
            least_load(&[f64::INFINITY, 2.0, 2.0, f64::INFINITY]),
            Some(1)
        );
    }

    #[test]
    fn tags_name_the_flow() {
        assert_eq!(tag_flow(tag(4095)), 4095);
    }
}

#[cfg(test)]
#[path = "mpat_tests.rs"]
mod mpat_tests;
