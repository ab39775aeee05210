//! Protocol tests of an MPAT aggregate ([`MpatFlow`]): both ends driven by a scripted
//! two-endpoint harness, as `tcp/tests.rs` drives one TCP sender and receiver. No simulator:
//! the harness is the network and calls the aggregate's [`Transport`] methods itself, in the
//! driver's order (an input, then every transmit, then every event).
//!
//! The network is the aggregate's one route: every window's data packets share one
//! bottleneck (FIFO serialisation at a fixed rate, unlimited buffer) and then a fixed one-way
//! delay; ACKs take the delay only. A script drops data packets by their index (the n-th data
//! packet of the aggregate, or the n-th of one window: its path), delays data packets by
//! index (those behind overtake them), drops ACKs by index, and can take the route down for an
//! interval.
//!
//! The harness keeps its own model of what reached the receiving end (each window's bytes, in
//! order at its receiver, mapped to their flow's stream through the mappings the sender made
//! when it first sent them) and of the flows' outstanding bytes, and checks after every input
//! (Singh, Pradhan and Francis, ICNP 2004, §3.2–§3.4; reference `ratebased_aggregate.md` §4.1):
//!
//! - the shares: positive, summing to one, in the ratio of the weights; flow i's MPAT window
//!   is `A_i = x_i · C` with `C = Σ_j C_j` the sum of the windows (eq. 1), so `Σ_i A_i = C`;
//! - the sending rule (§3.4): every new packet belongs to the flow with data whose
//!   `outstanding_i / x_i` is the smallest (ties to the lowest index), replayed packet by packet
//!   from the outstanding bytes before the send loop;
//! - the congestion state is split, not shared: an input for window j changes no other
//!   window's congestion window or threshold; a loss (fast retransmit or timeout) of window j
//!   reduces window j alone, to at most half its flight (`ssthresh = max(FlightSize/2,
//!   2·SMSS)`, RFC 5681 §3.1) — C drops by about C_j/2, i.e. C/(2N) when the windows are equal;
//! - per flow, exactly-once in-order delivery: each byte of a flow's stream is mapped to one
//!   window segment only (a window resends its own losses), the flow's receiver delivers the
//!   contiguous prefix of what became in order, and never sees a duplicate;
//! - conservation: each flow's `outstanding + acked` is the bytes it sent; each window's
//!   mappings cover exactly its unacknowledged sequence space; every window is positive.

use std::collections::{BTreeMap, VecDeque};

use proptest::prelude::*;

use super::*;
use crate::packet::AckSegment;
use crate::rng::rng_from_seed;
use crate::time::Rate;
use crate::transport::cc::Reno;
use crate::transport::multipath::connection::mptcp_tests::Ranges;
use crate::transport::Capture;

/// What the network does to the aggregate's packets.
#[derive(Clone, Debug, Default)]
struct Script {
    /// Drop the aggregate's data packet `i` if `drop_data[i]`.
    drop_data: Vec<bool>,
    /// `(window, index)`: drop that window's data packet `index`.
    drop_window_data: Vec<(usize, usize)>,
    /// Extra one-way delay of data packet `i`.
    delay_data: Vec<SimTime>,
    /// Drop ACK `i` if `drop_ack[i]`.
    drop_ack: Vec<bool>,
    /// Everything sent in `[from, to)` is lost.
    down: Option<(SimTime, SimTime)>,
}

#[derive(Clone, Copy, Debug)]
struct InFlight {
    at: SimTime,
    order: u64,
    window: usize,
    header: Header,
}

/// A window's congestion state, before an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WindowState {
    cwnd: u64,
    ssthresh: u64,
    flight: u64,
    /// Its sender's timer.
    deadline: Option<SimTime>,
}

#[derive(Clone, Debug, Default)]
struct Log {
    data_packets: u64,
    dropped_data: u64,
    dropped_acks: u64,
    retransmissions: u64,
    losses: u64,
    timeouts: u64,
    finished_events: u32,
    inputs: u64,
    /// Windows whose threshold ever left its initial value (reduced by a loss).
    reduced: Vec<bool>,
}

const MAX_INPUTS: u64 = 2_000_000;
const MSS: u32 = 1460;

struct Harness {
    flow: MpatFlow,
    app_bytes: Option<u64>,
    weights: Vec<f64>,
    rate: Rate,
    delay: SimTime,
    link_free_at: SimTime,
    carry: u64,
    script: Script,
    now: SimTime,
    order: u64,
    network: VecDeque<InFlight>,
    data_index: usize,
    ack_index: usize,
    window_data_index: Vec<usize>,
    /// Per window: the end of the highest sequence sent, its mappings
    /// `window_seq -> (flow, offset, len)` as first sent, the bytes that arrived, packets sent.
    win_highest: Vec<u64>,
    win_maps: Vec<BTreeMap<u64, (usize, u64, u32)>>,
    win_arrived: Vec<Ranges>,
    win_sent: Vec<u64>,
    initial_ssthresh: Vec<u64>,
    /// Per flow: the bytes sent (each once), the bytes handed to its receiver in order at their
    /// window, with their surplus copies, and the model's next byte and outstanding bytes.
    flow_sent: Vec<Ranges>,
    flow_in_order: Vec<Ranges>,
    flow_handed: Vec<u64>,
    flow_duplicates: Vec<u64>,
    model_next: Vec<u64>,
    model_outstanding: Vec<u64>,
    started: bool,
    log: Log,
    /// What the aggregate sends and reports while it handles an input.
    out: Capture,
    /// The same aggregate with every input taken through the general path (no shortcut), fed
    /// the same inputs; what it sends, reports and wakes up for must be the same.
    twin: Option<(MpatFlow, Capture)>,
}

impl Harness {
    fn new(
        weights: &[f64],
        mapping: Mapping,
        app_bytes: Option<u64>,
        seed: u64,
        script: Script,
    ) -> Self {
        Self::with_twin(weights, mapping, app_bytes, seed, script, None)
    }

    /// [`Harness::new`], with the windows' TCP settings `twin` (MSS set here) and a twin
    /// taking every input through the general path when given.
    fn with_twin(
        weights: &[f64],
        mapping: Mapping,
        app_bytes: Option<u64>,
        seed: u64,
        script: Script,
        twin: Option<TcpConfig>,
    ) -> Self {
        let tcp = TcpConfig {
            mss: MSS,
            ..twin.unwrap_or_default()
        };
        let twin = twin.is_some();
        let config = MpatConfig {
            tcp,
            shares: weights.to_vec(),
            mapping,
            app_bytes,
        };
        let flow_config = config.clone();
        let flow = MpatFlow::new(
            config,
            || Reno::new(MSS, tcp.initial_window).into(),
            rng_from_seed(seed),
        );
        let n = weights.len();
        let twin = twin.then(|| {
            let mut general = MpatFlow::new(
                flow_config.clone(),
                || Reno::new(MSS, tcp.initial_window).into(),
                rng_from_seed(seed),
            );
            general.general_only = true;
            (general, Capture::new(n))
        });
        let initial_ssthresh = (0..n).map(|j| flow.windows[j].cc.ssthresh()).collect();
        Harness {
            flow,
            app_bytes,
            weights: weights.to_vec(),
            rate: Rate::from_mbps(10),
            delay: SimTime::from_millis(20),
            link_free_at: SimTime::ZERO,
            carry: 0,
            script,
            now: SimTime::ZERO,
            order: 0,
            network: VecDeque::new(),
            data_index: 0,
            ack_index: 0,
            window_data_index: vec![0; n],
            win_highest: vec![0; n],
            win_maps: vec![BTreeMap::new(); n],
            win_arrived: vec![Ranges::default(); n],
            win_sent: vec![0; n],
            initial_ssthresh,
            flow_sent: vec![Ranges::default(); n],
            flow_in_order: vec![Ranges::default(); n],
            flow_handed: vec![0; n],
            flow_duplicates: vec![0; n],
            model_next: vec![0; n],
            model_outstanding: vec![0; n],
            started: false,
            out: Capture::new(n),
            twin,
            log: Log {
                reduced: vec![false; n],
                ..Log::default()
            },
        }
    }

    fn is_complete(&self) -> bool {
        let Some(total) = self.app_bytes else {
            return false;
        };
        (0..self.weights.len())
            .all(|i| self.flow.delivered(i) >= total && self.flow.flows[i].acked >= total)
    }

    /// Runs until every flow's bytes are delivered and acknowledged (or, for unbounded flows,
    /// until `until`), checking after every input.
    fn run(mut self, until: SimTime) -> Self {
        self.start();
        while !self.is_complete() {
            let before = self.window_states();
            let input = self.step();
            if self.now >= until {
                assert!(self.app_bytes.is_none(), "no completion by {until:?}");
                break;
            }
            self.check_split(&before, input);
            self.drain();
            self.check_losses(&before);
            self.check();
        }
        if self.app_bytes.is_some() {
            self.check_completion();
        }
        self
    }

    fn start(&mut self) {
        if !self.started {
            self.started = true;
            let (flow, now) = (&mut self.flow, self.now);
            self.out.with(|out| flow.handle_start(now, out));
            if let Some((general, out)) = &mut self.twin {
                out.with(|out| general.handle_start(now, out));
            }
            self.compare_twin();
            self.drain();
            self.check();
        }
    }

    fn window_states(&self) -> Vec<WindowState> {
        self.flow
            .windows
            .iter()
            .map(|w| WindowState {
                cwnd: w.cc.cwnd(),
                ssthresh: w.cc.ssthresh(),
                flight: w.core.snd_nxt() - w.core.snd_una(),
                deadline: w.core.poll_timeout(),
            })
            .collect()
    }

    /// The next input (a packet arrival, else the wake-up; packets first on a tie): `Some(j)`
    /// for a packet of window j, `None` for a wake-up.
    fn step(&mut self) -> Option<(usize, Direction)> {
        self.log.inputs += 1;
        assert!(
            self.log.inputs < MAX_INPUTS,
            "no completion after {MAX_INPUTS} inputs"
        );
        let packet_at = self.network.front().map(|p| p.at);
        let timer_at = self.flow.poll_timeout().map(|t| t.max(self.now));
        let take_packet = match (packet_at, timer_at) {
            (Some(p), Some(t)) => p <= t,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => panic!("stalled at {:?}: no packet on its way, no timer", self.now),
        };
        if take_packet {
            let p = self.network.pop_front().unwrap();
            assert!(p.at >= self.now, "time went backwards");
            self.now = p.at;
            let direction = match p.header {
                Header::TcpData(seg) => {
                    self.arrive(p.window, &seg);
                    Direction::Forward
                }
                _ => Direction::Reverse,
            };
            let (flow, now) = (&mut self.flow, self.now);
            let path = PathId::from_index(p.window);
            self.out
                .with(|out| flow.handle_packet(now, path, direction, &p.header, out));
            if let Some((general, out)) = &mut self.twin {
                out.with(|out| general.handle_packet(now, path, direction, &p.header, out));
            }
            self.compare_twin();
            Some((p.window, direction))
        } else {
            self.now = timer_at.unwrap();
            let (flow, now) = (&mut self.flow, self.now);
            self.out.with(|out| flow.handle_timeout(now, out));
            if let Some((general, out)) = &mut self.twin {
                out.with(|out| general.handle_timeout(now, out));
            }
            self.compare_twin();
            None
        }
    }

    /// The twin is left in the same state as the aggregate by the same input, and wakes up at
    /// the same time (what they sent and reported is compared in `drain` and `check_losses`).
    fn compare_twin(&self) {
        let Some((general, _)) = &self.twin else {
            return;
        };
        let flow = &self.flow;
        assert_eq!(general.poll_timeout(), flow.poll_timeout(), "wake-up");
        assert_eq!(general.earliest, flow.earliest);
        assert_eq!(general.deadlines, flow.deadlines);
        assert_eq!(general.loads, flow.loads);
        for (a, b) in general.flows.iter().zip(&flow.flows) {
            assert_eq!(
                (a.next, a.outstanding, a.acked, a.last_window, a.stats),
                (b.next, b.outstanding, b.acked, b.last_window, b.stats)
            );
            assert_eq!(a.receiver.rcv_nxt(), b.receiver.rcv_nxt());
        }
        for (a, b) in general.windows.iter().zip(&flow.windows) {
            assert_eq!(a.mappings, b.mappings);
            assert_eq!(
                (a.core.snd_una(), a.core.snd_nxt(), a.cc.cwnd()),
                (b.core.snd_una(), b.core.snd_nxt(), b.cc.cwnd())
            );
        }
        assert_eq!(general.stats(), flow.stats());
    }

    /// The receiving end: window j's newly in-order bytes, mapped to their flows.
    fn arrive(&mut self, j: usize, seg: &DataSegment) {
        let before = self.win_arrived[j].prefix();
        self.win_arrived[j].insert(seg.seq, seg.seq + u64::from(seg.len));
        let after = self.win_arrived[j].prefix();
        let mut at = before;
        while at < after {
            let (&seq, &(i, offset, len)) = self.win_maps[j]
                .range(..=at)
                .next_back()
                .expect("in-order window bytes without a mapping");
            let end = seq + u64::from(len);
            assert!(at < end, "a hole in window {j}'s mappings at {at}");
            let hi = end.min(after);
            let (lo, hi_offset) = (offset + (at - seq), offset + (hi - seq));
            let added = self.flow_in_order[i].insert(lo, hi_offset);
            self.flow_handed[i] += hi_offset - lo;
            self.flow_duplicates[i] += (hi_offset - lo) - added;
            at = hi;
        }
    }

    fn send(&mut self, j: usize, header: Header, size_bytes: u32) {
        let (dropped, at) = match header {
            Header::TcpData(_) => {
                let (index, own) = (self.data_index, self.window_data_index[j]);
                self.data_index += 1;
                self.window_data_index[j] += 1;
                let dropped = self.script.drop_data.get(index).copied().unwrap_or(false)
                    || self.script.drop_window_data.contains(&(j, own));
                let start = self.now.max(self.link_free_at);
                self.link_free_at = start
                    + self
                        .rate
                        .tx_time_carry(u64::from(size_bytes), &mut self.carry);
                let extra = self
                    .script
                    .delay_data
                    .get(index)
                    .copied()
                    .unwrap_or(SimTime::ZERO);
                (dropped, self.link_free_at + self.delay + extra)
            }
            _ => {
                let index = self.ack_index;
                self.ack_index += 1;
                let dropped = self.script.drop_ack.get(index).copied().unwrap_or(false);
                (dropped, self.now + self.delay)
            }
        };
        let down = self
            .script
            .down
            .is_some_and(|(a, b)| a <= self.now && self.now < b);
        if dropped || down {
            match header {
                Header::TcpData(_) => self.log.dropped_data += 1,
                _ => self.log.dropped_acks += 1,
            }
            return;
        }
        self.order += 1;
        let order = self.order;
        let k = self
            .network
            .partition_point(|q| (q.at, q.order) <= (at, order));
        self.network.insert(
            k,
            InFlight {
                at,
                order,
                window: j,
                header,
            },
        );
    }

    /// Every packet the input sent, in order, replayed against the model (the events wait for
    /// `check_losses`).
    fn drain(&mut self) {
        let transmits = self.out.take_transmits();
        if let Some((_, out)) = &mut self.twin {
            assert_eq!(
                out.take_transmits(),
                transmits,
                "packets sent at {:?}",
                self.now
            );
        }
        // The send loop started from the flows' outstanding bytes as the input left them: what
        // they are now less the new data sent (each segment's mapping names its flow).
        for (i, f) in self.flow.flows.iter().enumerate() {
            self.model_outstanding[i] = f.outstanding;
        }
        let mut highest = self.win_highest.clone();
        for t in &transmits {
            if let (Direction::Forward, Header::TcpData(seg)) = (t.direction, t.header) {
                let j = t.path.index();
                if seg.seq >= highest[j] {
                    highest[j] = seg.seq + u64::from(seg.len);
                    if let Some(m) = self.flow.windows[j]
                        .mappings
                        .iter()
                        .find(|m| m.window_seq == seg.seq)
                    {
                        self.model_outstanding[m.flow] -= u64::from(m.len);
                    }
                }
            }
        }
        for t in transmits {
            let j = t.path.index();
            assert!(j < self.weights.len());
            match (t.direction, t.header) {
                (Direction::Forward, Header::TcpData(seg)) => {
                    assert_eq!(t.size_bytes, seg.len + crate::packet::TCP_IP_HEADER_BYTES);
                    self.on_data_sent(j, &seg);
                }
                (Direction::Reverse, Header::TcpAck(ack)) => self.on_ack_sent(j, &ack),
                other => panic!("unexpected transmit {other:?}"),
            }
            self.send(j, t.header, t.size_bytes);
        }
        // The replay ends where the aggregate's own counts do: its next byte of every flow
        // (the model's is kept from the start of the run).
        for (i, f) in self.flow.flows.iter().enumerate() {
            assert_eq!(
                f.outstanding, self.model_outstanding[i],
                "flow {i}'s outstanding bytes"
            );
            assert_eq!(f.next, self.model_next[i], "flow {i}'s next byte");
        }
    }

    /// The flow the sending rule picks now (§3.4): the smallest outstanding/share among the
    /// flows with data, ties to the lowest index.
    fn expected_flow(&self) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for (i, f) in self.flow.flows.iter().enumerate() {
            if self
                .app_bytes
                .is_some_and(|total| self.model_next[i] >= total)
            {
                continue;
            }
            let load = self.model_outstanding[i] as f64 * f.inverse_share;
            if best.is_none_or(|(l, _)| load < l) {
                best = Some((load, i));
            }
        }
        best.map(|(_, i)| i)
    }

    fn on_data_sent(&mut self, j: usize, seg: &DataSegment) {
        self.log.data_packets += 1;
        self.win_sent[j] += 1;
        let end = seg.seq + u64::from(seg.len);
        assert!(seg.len > 0 && seg.len <= MSS);
        assert_eq!(seg.sent_at, self.now);
        let core = &self.flow.windows[j].core;
        if seg.seq < self.win_highest[j] {
            // A window resends its own loss: bytes it has not had acknowledged.
            assert!(seg.is_retransmission);
            assert!(end <= self.win_highest[j], "a resend mixes in new data");
            assert!(
                seg.seq >= core.snd_una(),
                "window {j} resent acknowledged bytes"
            );
            self.log.retransmissions += 1;
            return;
        }
        assert_eq!(
            seg.seq, self.win_highest[j],
            "a gap in window {j}'s sequence space"
        );
        assert!(!seg.is_retransmission);
        self.win_highest[j] = end;
        let m = *self.flow.windows[j]
            .mappings
            .iter()
            .find(|m| m.window_seq == seg.seq)
            .expect("new window data without a mapping");
        assert_eq!(m.len, seg.len);
        assert_eq!(
            Some(m.flow),
            self.expected_flow(),
            "new data of flow {} against the sending rule (outstanding {:?}, shares {:?})",
            m.flow,
            self.model_outstanding,
            self.flow.shares()
        );
        let i = m.flow;
        assert_eq!(m.offset, self.model_next[i], "a gap in flow {i}'s stream");
        let new = self.flow_sent[i].insert(m.offset, m.offset + u64::from(m.len));
        assert_eq!(new, u64::from(m.len), "flow {i}'s bytes mapped twice");
        if let Some(total) = self.app_bytes {
            assert!(m.offset + u64::from(m.len) <= total);
        }
        self.model_next[i] += u64::from(m.len);
        self.model_outstanding[i] += u64::from(m.len);
        self.win_maps[j].insert(m.window_seq, (i, m.offset, m.len));
    }

    fn on_ack_sent(&mut self, j: usize, ack: &AckSegment) {
        assert!(
            ack.ack <= self.win_arrived[j].prefix(),
            "an ACK for bytes that never arrived"
        );
    }

    /// The congestion state is split: an input for window j leaves every other window alone.
    fn check_split(&self, before: &[WindowState], input: Option<(usize, Direction)>) {
        let after = self.window_states();
        for (k, (b, a)) in before.iter().zip(&after).enumerate() {
            let may_change = match input {
                Some((j, Direction::Reverse)) => k == j,
                Some((_, Direction::Forward)) => false,
                // A wake-up: the windows whose timer was due.
                None => b.deadline.is_some_and(|t| t <= self.now),
            };
            if !may_change {
                assert_eq!(
                    (a.cwnd, a.ssthresh),
                    (b.cwnd, b.ssthresh),
                    "window {k} changed by {input:?}"
                );
            }
        }
    }

    /// A loss of window j reduces window j alone, to at most half its flight.
    fn check_losses(&mut self, before: &[WindowState]) {
        let events = self.out.take_events();
        if let Some((_, out)) = &mut self.twin {
            assert_eq!(out.take_events(), events, "events at {:?}", self.now);
        }
        for e in events {
            match e {
                TransportEvent::Loss { path } | TransportEvent::Timeout { path } => {
                    if matches!(e, TransportEvent::Loss { .. }) {
                        self.log.losses += 1;
                    } else {
                        self.log.timeouts += 1;
                    }
                    let j = path.index();
                    let w = &self.flow.windows[j];
                    let bound = (before[j].flight / 2).max(2 * u64::from(MSS));
                    assert!(
                        w.cc.ssthresh() <= bound,
                        "window {j}: ssthresh {} > {bound}",
                        w.cc.ssthresh()
                    );
                    assert!(
                        w.cc.cwnd() <= before[j].cwnd.max(bound),
                        "window {j} grew on a loss"
                    );
                }
                TransportEvent::Finished => self.log.finished_events += 1,
                _ => {}
            }
        }
        for (j, w) in self.flow.windows.iter().enumerate() {
            if w.cc.ssthresh() != self.initial_ssthresh[j] {
                self.log.reduced[j] = true;
            }
        }
    }

    fn check(&self) {
        let flow = &self.flow;
        let n = self.weights.len();
        // Shares: positive, summing to one, in the ratio of the weights.
        let shares = flow.shares();
        assert!(shares.iter().all(|&x| x > 0.0));
        assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        for i in 1..n {
            let (r, w) = (shares[i] / shares[0], self.weights[i] / self.weights[0]);
            assert!(
                (r - w).abs() <= 1e-9 * w,
                "shares {shares:?} against weights {:?}",
                self.weights
            );
        }
        // The aggregate window and the MPAT windows A_i = x_i·C (eq. 1).
        let c: u64 = flow.windows.iter().map(|w| w.cc.cwnd()).sum();
        assert_eq!(flow.aggregate_cwnd(), c);
        let total_a: f64 = (0..n).map(|i| flow.mpat_window(i)).sum();
        assert!((total_a - c as f64).abs() <= 1e-9 * c as f64);
        for (i, f) in flow.flows.iter().enumerate() {
            assert_eq!(flow.mpat_window(i), f.share * c as f64);
            // Conservation of the flow's bytes.
            assert_eq!(f.next, self.model_next[i]);
            assert_eq!(
                f.outstanding + f.acked,
                f.next,
                "flow {i}: outstanding + acked != sent"
            );
            // Exactly-once, in-order delivery.
            let rx = &f.receiver;
            assert_eq!(
                rx.rcv_nxt(),
                self.flow_in_order[i].prefix(),
                "flow {i}: delivered != in-order prefix"
            );
            assert_eq!(
                rx.out_of_order_bytes(),
                self.flow_in_order[i].total() - rx.rcv_nxt()
            );
            assert_eq!(rx.duplicate_bytes(), self.flow_duplicates[i]);
            assert_eq!(self.flow_duplicates[i], 0, "flow {i} received a byte twice");
            assert_eq!(rx.beyond_window_bytes(), 0);
            assert_eq!(self.flow_handed[i], rx.rcv_nxt() + rx.out_of_order_bytes());
            assert!(f.acked <= f.next);
        }
        for (j, w) in flow.windows.iter().enumerate() {
            assert!(w.cc.cwnd() > 0, "window {j} is zero");
            let (una, nxt) = (w.core.snd_una(), w.core.snd_nxt());
            assert_eq!(nxt, self.win_highest[j]);
            assert_eq!(w.core.stats().segments_sent, self.win_sent[j]);
            let mut expected = None;
            for m in &w.mappings {
                if let Some(e) = expected {
                    assert_eq!(m.window_seq, e, "window {j}'s mappings are not contiguous");
                }
                expected = Some(m.window_seq + u64::from(m.len));
            }
            match (w.mappings.front(), expected) {
                (Some(first), Some(end)) => {
                    assert!(
                        first.window_seq <= una && una < first.window_seq + u64::from(first.len)
                    );
                    assert_eq!(end, nxt);
                }
                _ => assert_eq!(una, nxt, "window {j} has unmapped data"),
            }
        }
    }

    fn check_completion(&self) {
        let total = self.app_bytes.unwrap();
        for (i, f) in self.flow.flows.iter().enumerate() {
            assert_eq!(f.receiver.rcv_nxt(), total);
            assert_eq!(f.receiver.out_of_order_bytes(), 0);
            assert_eq!((f.acked, f.outstanding), (total, 0));
            assert!(f.stats.completed_at.is_some(), "flow {i} never completed");
        }
        assert_eq!(self.log.finished_events, 1, "Finished reported once");
    }
}

#[test]
fn lossless_transfer_delivers_every_flow_once() {
    let h = Harness::new(
        &[1.0, 2.0, 5.0],
        Mapping::Random,
        Some(200_000),
        1,
        Script::default(),
    )
    .run(SimTime::from_secs(60));
    assert_eq!(h.log.dropped_data, 0);
    assert_eq!(h.log.retransmissions, 0);
    assert!(h.log.reduced.iter().all(|&r| !r));
}

#[test]
fn one_loss_reduces_exactly_one_window() {
    // One packet of window 1 is lost, well after slow start's first round: its window alone
    // halves (§3.3.2: the loss is charged to the window that carried the packet).
    for mapping in [Mapping::Random, Mapping::Sticky, Mapping::Spread] {
        let script = Script {
            drop_window_data: vec![(1, 30)],
            ..Script::default()
        };
        let mut h = Harness::new(&[1.0, 1.0, 1.0, 1.0], mapping, Some(400_000), 7, script);
        // A fast route: the slow starts' queue (unlimited buffer) stays well under the RTO.
        h.rate = Rate::from_mbps(100);
        let h = h.run(SimTime::from_secs(60));
        assert_eq!(h.log.dropped_data, 1);
        assert_eq!(
            h.log.reduced,
            [false, true, false, false],
            "{mapping:?} {:?}",
            h.log
        );
        assert_eq!((h.log.losses, h.log.timeouts), (1, 0), "{mapping:?}");
    }
}

#[test]
fn backlogged_flows_get_their_shares() {
    // Every flow always has data: their acknowledged bytes follow the weights 1 : 3 : 6
    // (property 2 of reference §4.1), through losses and reordering on the shared route.
    let drops: Vec<bool> = (0..20_000).map(|i| i % 97 == 13).collect();
    let delays: Vec<SimTime> = (0..20_000)
        .map(|i| {
            if i % 53 == 7 {
                SimTime::from_millis(9)
            } else {
                SimTime::ZERO
            }
        })
        .collect();
    let script = Script {
        drop_data: drops,
        delay_data: delays,
        ..Script::default()
    };
    let weights = [1.0, 3.0, 6.0];
    let h = Harness::new(&weights, Mapping::Random, None, 3, script).run(SimTime::from_secs(10));
    assert!(h.log.losses > 5, "{:?}", h.log);
    let acked: Vec<f64> = h.flow.flows.iter().map(|f| f.acked as f64).collect();
    let total: f64 = acked.iter().sum();
    for (i, w) in weights.iter().enumerate() {
        let share = acked[i] / total;
        assert!(
            (share - w / 10.0).abs() < 0.02,
            "flow {i}: {share} of the bytes against {}",
            w / 10.0
        );
    }
}

#[test]
fn shares_changed_mid_run_take_effect() {
    let mut h = Harness::new(&[1.0, 1.0], Mapping::Random, None, 5, Script::default());
    h.start();
    let flow = &mut h.flow;
    h.out.with(|out| {
        flow.handle_change(
            SimTime::ZERO,
            &FlowChange::numbers("shares", vec![4.0, 1.0]),
            out,
        )
    });
    h.weights = vec![4.0, 1.0];
    h.drain();
    h.check();
    let h = h.run(SimTime::from_secs(2));
    let shares = h.flow.shares();
    assert!((shares[0] - 0.8).abs() < 1e-12 && (shares[1] - 0.2).abs() < 1e-12);
}

/// The shortcuts (a data segment or an ACK handled and flushed at once) send, report and
/// leave what the general path does, input by input: through slow start, losses, reordering,
/// lost ACKs, an outage (timeouts) and the flows' completion, for every mapping, with ACKs
/// sent at once, delayed (the receivers' timers run) or compressed, and with RACK-TLP.
#[test]
fn shortcuts_do_what_the_general_path_does() {
    let drops: Vec<bool> = (0..6_000).map(|i| i % 89 == 11).collect();
    let delays: Vec<SimTime> = (0..6_000)
        .map(|i| SimTime::from_millis(if i % 41 == 5 { 7 } else { 0 }))
        .collect();
    let acks: Vec<bool> = (0..6_000).map(|i| i % 67 == 3).collect();
    let plain = TcpConfig::default();
    let delayed = TcpConfig {
        delayed_ack: true,
        ..plain
    };
    let compressed = TcpConfig {
        sack_compression: true,
        ..delayed
    };
    let rack = TcpConfig {
        rack_tlp: true,
        ..delayed
    };
    for (k, (mapping, tcp)) in [
        (Mapping::Random, plain),
        (Mapping::Sticky, plain),
        (Mapping::Spread, plain),
        (Mapping::Random, delayed),
        (Mapping::Sticky, compressed),
        (Mapping::Random, rack),
    ]
    .into_iter()
    .enumerate()
    {
        let script = Script {
            drop_data: drops.clone(),
            delay_data: delays.clone(),
            drop_ack: acks.clone(),
            down: Some((SimTime::from_millis(900), SimTime::from_millis(1_400))),
            ..Script::default()
        };
        let weights = [1.0, 2.0, 1.0, 4.0];
        let h = Harness::with_twin(
            &weights,
            mapping,
            Some(1_500_000),
            k as u64,
            script,
            Some(tcp),
        )
        .run(SimTime::from_secs(600));
        assert!(h.log.losses > 0 && h.log.timeouts > 0, "{:?}", h.log);
        let h = Harness::with_twin(
            &weights,
            mapping,
            None,
            k as u64,
            Script::default(),
            Some(tcp),
        )
        .run(SimTime::from_secs(3));
        assert!(h.log.data_packets > 1_000, "{:?}", h.log);
    }
}

fn script_strategy() -> impl Strategy<Value = Script> {
    (
        prop::collection::vec(prop::bool::weighted(0.03), 0..1500),
        prop::collection::vec((0usize..4, 0usize..300), 0..6),
        prop::collection::vec(prop_oneof![12 => Just(0u64), 1 => 1u64..40], 0..1500),
        prop::collection::vec(prop::bool::weighted(0.05), 0..1500),
        prop::option::weighted(0.1, (0u64..2000, 1u64..2000)),
    )
        .prop_map(
            |(drop_data, drop_window_data, delays, drop_ack, down)| Script {
                drop_data,
                drop_window_data,
                delay_data: delays.into_iter().map(SimTime::from_millis).collect(),
                drop_ack,
                down: down.map(|(a, l)| (SimTime::from_millis(a), SimTime::from_millis(a + l))),
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Random loss, ACK loss, reordering and an outage; any weights, mapping and transfer
    /// size: every invariant holds after every input and every flow completes exactly once.
    #[test]
    fn invariants_hold_under_random_loss_and_reordering(
        weights in prop::collection::vec(0.01f64..100.0, 1..=4),
        mapping in prop_oneof![Just(Mapping::Random), Just(Mapping::Sticky), Just(Mapping::Spread)],
        app_bytes in 1u64..150_000,
        seed in any::<u64>(),
        script in script_strategy(),
    ) {
        Harness::new(&weights, mapping, Some(app_bytes), seed, script).run(SimTime::from_secs(600));
    }
}
