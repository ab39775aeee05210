//! Protocol tests of the MPTCP connection ([`MptcpFlow`]): both ends of every subflow driven by
//! a scripted two-endpoint harness, as `tcp/tests.rs` drives one TCP sender and receiver. No
//! simulator: the harness is the network and calls the connection's [`Transport`] methods
//! itself, in the driver's order (an input, then every transmit, then every event).
//!
//! Each path is its own link: data packets are serialised at the path's rate (their size on
//! the wire, unlimited buffer) and then take the path's one-way delay; ACKs take the delay
//! only. A script per path drops data packets or ACKs by their index on that path (the n-th
//! data packet or ACK the path carried, from 0), delays data packets by index (those behind
//! overtake them: reordering) and can take the path down for an interval (everything sent on
//! it then is lost, both ways).
//!
//! The harness keeps its own model of what reached the receiving end: the subflow-level bytes
//! that arrived, hence which became in order at each subflow's receiver, mapped to data
//! sequence numbers through the mappings the sender made when it first sent them (the DSS
//! option's content). After every input it checks (RFC 8684 §3.3; reference `multipath_cc.md`
//! §4):
//!
//! - data-level delivery exactly once and in order: the shared receive buffer's delivered
//!   bytes are the contiguous prefix of the DSNs that became in order at some subflow, its
//!   out-of-order queue the rest of them, its duplicate count the surplus copies, nothing
//!   beyond its window;
//! - the DATA_ACK: every ACK carries the receiver's current DATA_ACK and window, DATA_ACKs go
//!   out non-decreasing, and the sender's DATA_ACK never decreases and never passes what was
//!   delivered or sent;
//! - new data is contiguous, within the application's bytes, the send buffer and the peer's
//!   window; a data-level resend (reinjection, opportunistic retransmission, redundant copy) is
//!   a whole chunk sent before and not yet DATA_ACKed; the reinjection queue holds only such
//!   chunks, ascending;
//! - each subflow: its mappings cover exactly its unacknowledged sequence space, it resends
//!   only its own unacknowledged bytes, and its window (the coupled controller's) is positive.

use std::collections::{BTreeMap, VecDeque};

use proptest::prelude::*;

use super::*;
use crate::time::Rate;
use crate::transport::cc::{Controller, Reno};
use crate::transport::multipath::coupled::lia::Lia;
use crate::transport::multipath::coupled::olia::Olia;
use crate::transport::multipath::coupled::{MultipathConnection, Uncoupled};
use crate::transport::multipath::scheduler::min_rtt::MinRtt;
use crate::transport::multipath::scheduler::redundant::Redundant;
use crate::transport::multipath::scheduler::round_robin::RoundRobin;
use crate::transport::multipath::scheduler::SchedulerOptions;
use crate::transport::Capture;

/// Disjoint half-open byte ranges, merged when they touch.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ranges {
    map: BTreeMap<u64, u64>,
    total: u64,
}

impl Ranges {
    /// Adds `[start, end)`; returns how many of its bytes were not present.
    pub(crate) fn insert(&mut self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let touching: Vec<(u64, u64)> = self
            .map
            .range(..=end)
            .rev()
            .take_while(|&(_, &e)| e >= start)
            .map(|(&s, &e)| (s, e))
            .collect();
        let (mut lo, mut hi, mut present) = (start, end, 0);
        for (s, e) in touching {
            present += e.min(end).saturating_sub(s.max(start));
            lo = lo.min(s);
            hi = hi.max(e);
            self.map.remove(&s);
            self.total -= e - s;
        }
        self.map.insert(lo, hi);
        self.total += hi - lo;
        (end - start) - present
    }

    /// The end of the contiguous prefix from 0.
    pub(crate) fn prefix(&self) -> u64 {
        match self.map.first_key_value() {
            Some((&0, &e)) => e,
            _ => 0,
        }
    }

    pub(crate) fn total(&self) -> u64 {
        self.total
    }
}

/// What the network does to one path's packets.
#[derive(Clone, Debug, Default)]
struct PathScript {
    /// Drop the path's data packet `i` if `drop_data[i]`.
    drop_data: Vec<bool>,
    /// Extra one-way delay of the path's data packet `i`.
    delay_data: Vec<SimTime>,
    /// Drop the path's ACK `i` if `drop_ack[i]`.
    drop_ack: Vec<bool>,
    /// Everything sent on the path in `[from, to)` is lost.
    down: Option<(SimTime, SimTime)>,
}

impl PathScript {
    fn drop_data(mut self, indices: &[usize]) -> Self {
        for &i in indices {
            if self.drop_data.len() <= i {
                self.drop_data.resize(i + 1, false);
            }
            self.drop_data[i] = true;
        }
        self
    }

    fn delay_data(mut self, index: usize, extra: SimTime) -> Self {
        if self.delay_data.len() <= index {
            self.delay_data.resize(index + 1, SimTime::ZERO);
        }
        self.delay_data[index] = extra;
        self
    }

    fn drop_acks(mut self, indices: &[usize]) -> Self {
        for &i in indices {
            if self.drop_ack.len() <= i {
                self.drop_ack.resize(i + 1, false);
            }
            self.drop_ack[i] = true;
        }
        self
    }

    fn down(mut self, from: SimTime, to: SimTime) -> Self {
        self.down = Some((from, to));
        self
    }

    fn is_down(&self, now: SimTime) -> bool {
        self.down.is_some_and(|(a, b)| a <= now && now < b)
    }
}

/// One path of the harness's network.
#[derive(Clone, Debug)]
struct PathNet {
    rate: Rate,
    delay: SimTime,
    link_free_at: SimTime,
    carry: u64,
    script: PathScript,
    data_sent: usize,
    acks_sent: usize,
}

impl PathNet {
    fn new(mbps: u64, delay_ms: u64, script: PathScript) -> Self {
        PathNet {
            rate: Rate::from_mbps(mbps),
            delay: SimTime::from_millis(delay_ms),
            link_free_at: SimTime::ZERO,
            carry: 0,
            script,
            data_sent: 0,
            acks_sent: 0,
        }
    }
}

/// A packet on its way.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    at: SimTime,
    order: u64,
    path: usize,
    direction: Direction,
    header: Header,
}

/// What the harness counted.
#[derive(Clone, Debug, Default)]
struct Log {
    data_packets: u64,
    dropped_data: u64,
    dropped_acks: u64,
    subflow_retransmissions: u64,
    /// Data-level resends (reinjections, opportunistic retransmissions, redundant copies).
    data_level_resends: u64,
    timeouts: u64,
    losses: u64,
    finished_events: u32,
    inputs: u64,
}

const MAX_INPUTS: u64 = 2_000_000;
const TIME_LIMIT: SimTime = SimTime::from_secs(600);

struct Harness {
    flow: MptcpFlow,
    app_bytes: u64,
    send_buffer: u64,
    mss: u32,
    paths: Vec<PathNet>,
    now: SimTime,
    order: u64,
    network: VecDeque<InFlight>,
    /// Per subflow: the end of the highest sequence sent, the mappings `sub_seq -> (dsn, len)`
    /// as first sent, and the bytes that reached the receiving end.
    sub_highest: Vec<u64>,
    sub_maps: Vec<BTreeMap<u64, (u64, u32)>>,
    sub_arrived: Vec<Ranges>,
    sub_sent: Vec<u64>,
    /// Every chunk of new data, `dsn -> len`, and the end of the highest one.
    chunks: BTreeMap<u64, u32>,
    data_highest: u64,
    /// DSNs handed to the data level (in order at their subflow), with their copies.
    dsn_in_order: Ranges,
    handed_bytes: u64,
    expected_duplicates: u64,
    last_data_ack_sent: u64,
    last_data_una: u64,
    log: Log,
    /// What the connection sends and reports while it handles an input.
    out: Capture,
}

impl Harness {
    fn new(flow: MptcpFlow, app_bytes: u64, paths: Vec<PathNet>) -> Self {
        let n = flow.subflow_count();
        assert_eq!(n, paths.len());
        Harness {
            send_buffer: flow.send_buffer,
            mss: flow.mss,
            flow,
            app_bytes,
            paths,
            now: SimTime::ZERO,
            order: 0,
            network: VecDeque::new(),
            sub_highest: vec![0; n],
            sub_maps: vec![BTreeMap::new(); n],
            sub_arrived: vec![Ranges::default(); n],
            sub_sent: vec![0; n],
            chunks: BTreeMap::new(),
            data_highest: 0,
            dsn_in_order: Ranges::default(),
            handed_bytes: 0,
            expected_duplicates: 0,
            last_data_ack_sent: 0,
            last_data_una: 0,
            out: Capture::new(n),
            log: Log::default(),
        }
    }

    fn is_complete(&self) -> bool {
        self.flow.data_una() >= self.app_bytes
            && self.flow.receiver().delivered_bytes() >= self.app_bytes
    }

    /// Runs until every byte is delivered and DATA_ACKed, checking after every input.
    fn run(mut self) -> Self {
        let (flow, now) = (&mut self.flow, self.now);
        self.out.with(|out| flow.handle_start(now, out));
        self.drain();
        self.check();
        while !self.is_complete() {
            self.step();
            self.drain();
            self.check();
        }
        self.check_completion();
        self
    }

    /// The next input: the earliest packet arrival, else the connection's wake-up (packets
    /// first on a tie).
    fn step(&mut self) {
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
            self.arrive(&p);
            let (flow, now) = (&mut self.flow, self.now);
            self.out.with(|out| {
                flow.handle_packet(now, PathId::from_index(p.path), p.direction, &p.header, out)
            });
        } else {
            self.now = timer_at.unwrap();
            let (flow, now) = (&mut self.flow, self.now);
            self.out.with(|out| flow.handle_timeout(now, out));
        }
        assert!(self.now < TIME_LIMIT, "no completion by {TIME_LIMIT:?}");
    }

    /// The harness's model of the receiving end, before the connection sees the packet.
    fn arrive(&mut self, p: &InFlight) {
        let Header::TcpData(seg) = p.header else {
            return;
        };
        let i = p.path;
        let before = self.sub_arrived[i].prefix();
        self.sub_arrived[i].insert(seg.seq, seg.seq + u64::from(seg.len));
        let after = self.sub_arrived[i].prefix();
        // The newly in-order subflow bytes, through the mappings, to the data level.
        let mut at = before;
        while at < after {
            let (&sub_seq, &(dsn, len)) = self.sub_maps[i]
                .range(..=at)
                .next_back()
                .expect("in-order subflow bytes without a mapping");
            let end = sub_seq + u64::from(len);
            assert!(at < end, "a hole in subflow {i}'s mappings at {at}");
            let hi = end.min(after);
            let (lo_dsn, hi_dsn) = (dsn + (at - sub_seq), dsn + (hi - sub_seq));
            let added = self.dsn_in_order.insert(lo_dsn, hi_dsn);
            self.handed_bytes += hi_dsn - lo_dsn;
            self.expected_duplicates += (hi_dsn - lo_dsn) - added;
            at = hi;
        }
    }

    fn send(&mut self, path: usize, direction: Direction, header: Header, size_bytes: u32) {
        let net = &mut self.paths[path];
        let (dropped, at) = match direction {
            Direction::Forward => {
                let index = net.data_sent;
                net.data_sent += 1;
                let dropped = net.script.drop_data.get(index).copied().unwrap_or(false);
                let start = self.now.max(net.link_free_at);
                net.link_free_at = start
                    + net
                        .rate
                        .tx_time_carry(u64::from(size_bytes), &mut net.carry);
                let extra = net
                    .script
                    .delay_data
                    .get(index)
                    .copied()
                    .unwrap_or(SimTime::ZERO);
                (dropped, net.link_free_at + net.delay + extra)
            }
            Direction::Reverse => {
                let index = net.acks_sent;
                net.acks_sent += 1;
                let dropped = net.script.drop_ack.get(index).copied().unwrap_or(false);
                (dropped, self.now + net.delay)
            }
        };
        if dropped || net.script.is_down(self.now) {
            match direction {
                Direction::Forward => self.log.dropped_data += 1,
                Direction::Reverse => self.log.dropped_acks += 1,
            }
            return;
        }
        self.order += 1;
        let packet = InFlight {
            at,
            order: self.order,
            path,
            direction,
            header,
        };
        let k = self
            .network
            .partition_point(|q| (q.at, q.order) <= (at, packet.order));
        self.network.insert(k, packet);
    }

    /// Every packet the input sent, then every event it reported, in order.
    fn drain(&mut self) {
        for t in self.out.take_transmits() {
            let i = t.path.index();
            assert!(i < self.paths.len());
            match (t.direction, t.header) {
                (Direction::Forward, Header::TcpData(seg)) => {
                    self.on_data_sent(i, &seg);
                    assert_eq!(t.size_bytes, seg.len + TCP_HEADER + DSS_DATA_OPTION_BYTES);
                    // The DSS option is inside the MSS (RFC 6691 §3): at most a TCP
                    // segment's length on the wire.
                    assert!(t.size_bytes <= MSS + TCP_HEADER);
                }
                (Direction::Reverse, Header::MptcpAck(ack)) => self.on_ack_sent(&ack),
                other => panic!("unexpected transmit {other:?}"),
            }
            self.send(i, t.direction, t.header, t.size_bytes);
        }
        for e in self.out.take_events() {
            match e {
                TransportEvent::Finished => {
                    self.log.finished_events += 1;
                    assert!(self.flow.data_una() >= self.app_bytes, "finished early");
                }
                TransportEvent::Timeout { .. } => self.log.timeouts += 1,
                TransportEvent::Loss { .. } => self.log.losses += 1,
                _ => {}
            }
        }
    }

    fn on_data_sent(&mut self, i: usize, seg: &DataSegment) {
        self.log.data_packets += 1;
        self.sub_sent[i] += 1;
        let end = seg.seq + u64::from(seg.len);
        assert!(seg.len > 0 && seg.len <= self.mss);
        assert_eq!(seg.sent_at, self.now);
        let core = &self.flow.subflows[i].core;
        if seg.seq < self.sub_highest[i] {
            // The subflow repairs its own loss: only bytes it has not had acknowledged.
            assert!(seg.is_retransmission);
            assert!(
                end <= self.sub_highest[i],
                "a resend mixes in new subflow data"
            );
            assert!(
                seg.seq >= core.snd_una(),
                "subflow {i} resent acknowledged bytes"
            );
            self.log.subflow_retransmissions += 1;
            return;
        }
        assert_eq!(
            seg.seq, self.sub_highest[i],
            "a gap in subflow {i}'s sequence space"
        );
        assert!(!seg.is_retransmission);
        self.sub_highest[i] = end;
        let m = *self.flow.subflows[i]
            .mappings
            .iter()
            .find(|m| m.sub_seq == seg.seq)
            .expect("new subflow data without a mapping");
        assert_eq!(m.len, seg.len);
        self.sub_maps[i].insert(m.sub_seq, (m.dsn, m.len));
        let dsn_end = m.dsn + u64::from(m.len);
        if m.dsn >= self.data_highest {
            // New data: contiguous, within the application's bytes, the send buffer and the
            // peer's window.
            assert_eq!(m.dsn, self.data_highest, "a gap in the data sequence space");
            assert!(
                dsn_end <= self.app_bytes,
                "sent beyond the application's data"
            );
            assert!(
                dsn_end <= self.flow.data_una() + self.send_buffer,
                "beyond the send buffer"
            );
            assert!(
                dsn_end <= self.flow.peer_right_edge,
                "beyond the peer's window"
            );
            self.chunks.insert(m.dsn, m.len);
            self.data_highest = dsn_end;
        } else {
            // A data-level resend: a whole chunk sent before, not yet DATA_ACKed.
            assert_eq!(
                self.chunks.get(&m.dsn),
                Some(&m.len),
                "a data-level resend that is not a chunk sent before"
            );
            assert!(
                dsn_end > self.flow.data_una(),
                "resent DSN {} already DATA_ACKed ({})",
                m.dsn,
                self.flow.data_una()
            );
            self.log.data_level_resends += 1;
        }
    }

    fn on_ack_sent(&mut self, ack: &MptcpAck) {
        let rx = self.flow.receiver();
        assert_eq!(ack.data_ack, rx.rcv_nxt(), "an ACK with a stale DATA_ACK");
        assert_eq!(ack.ack.rwnd, rx.window(), "an ACK with a stale window");
        assert!(
            ack.data_ack >= self.last_data_ack_sent,
            "DATA_ACK went back"
        );
        self.last_data_ack_sent = ack.data_ack;
    }

    fn check(&mut self) {
        let flow = &self.flow;
        let rx = flow.receiver();
        // Data-level delivery exactly once and in order.
        assert_eq!(
            rx.rcv_nxt(),
            self.dsn_in_order.prefix(),
            "delivered != in-order prefix"
        );
        assert_eq!(
            rx.out_of_order_bytes(),
            self.dsn_in_order.total() - rx.rcv_nxt()
        );
        assert_eq!(rx.duplicate_bytes(), self.expected_duplicates);
        assert_eq!(
            rx.beyond_window_bytes(),
            0,
            "data beyond the advertised window"
        );
        assert_eq!(
            self.handed_bytes,
            rx.rcv_nxt() + rx.out_of_order_bytes() + rx.duplicate_bytes()
        );
        assert!(rx.rcv_nxt() <= self.app_bytes);
        // The sender's DATA_ACK.
        let (una, nxt) = (flow.data_una(), flow.data_nxt());
        assert!(una >= self.last_data_una, "the sender's DATA_ACK went back");
        self.last_data_una = una;
        assert!(una <= rx.rcv_nxt(), "DATA_ACKed bytes never delivered");
        assert!(una <= nxt && nxt == self.data_highest);
        assert!(nxt - una <= self.send_buffer);
        // The reinjection queue: outstanding chunks, ascending, each once.
        let mut previous = None;
        for &dsn in &flow.reinject {
            assert!(
                previous.is_none_or(|p| p < dsn),
                "reinjection queue out of order"
            );
            previous = Some(dsn);
            let len = *self
                .chunks
                .get(&dsn)
                .expect("reinjection of a DSN never sent");
            assert!(
                dsn + u64::from(len) > una,
                "reinjection queued for DATA_ACKed data"
            );
            assert!(dsn < nxt);
        }
        for (i, s) in flow.subflows.iter().enumerate() {
            // Mappings cover exactly the subflow's unacknowledged sequence space.
            let (sub_una, sub_nxt) = (s.core.snd_una(), s.core.snd_nxt());
            assert_eq!(sub_nxt, self.sub_highest[i]);
            let mut expected = None;
            for m in &s.mappings {
                if let Some(e) = expected {
                    assert_eq!(m.sub_seq, e, "subflow {i}'s mappings are not contiguous");
                }
                expected = Some(m.sub_seq + u64::from(m.len));
            }
            match (s.mappings.front(), expected) {
                (Some(first), Some(end)) => {
                    assert!(
                        first.sub_seq <= sub_una && sub_una < first.sub_seq + u64::from(first.len)
                    );
                    assert_eq!(end, sub_nxt);
                }
                _ => assert_eq!(sub_una, sub_nxt, "subflow {i} has unmapped data"),
            }
            assert_eq!(s.stats.segments_sent, self.sub_sent[i]);
            if s.established {
                assert!(flow.cc.cwnd(i) > 0, "subflow {i}'s window is zero");
            }
        }
    }

    fn check_completion(&self) {
        let rx = self.flow.receiver();
        assert_eq!(rx.delivered_bytes(), self.app_bytes);
        assert_eq!(rx.out_of_order_bytes(), 0);
        assert_eq!(self.flow.data_una(), self.app_bytes);
        assert_eq!(self.dsn_in_order.total(), self.app_bytes);
        assert_eq!(self.log.finished_events, 1, "Finished reported once");
    }
}

const TCP_HEADER: u32 = crate::packet::TCP_IP_HEADER_BYTES;
const MSS: u32 = 1460;

#[derive(Clone, Copy, Debug)]
enum Cc {
    Lia,
    Olia,
    UncoupledReno,
}

#[derive(Clone, Copy, Debug)]
enum Sched {
    MinRtt {
        penalisation: bool,
        opportunistic: bool,
    },
    Redundant,
    RoundRobin,
}

fn tcp_config(receive_buffer: u64) -> TcpConfig {
    TcpConfig {
        mss: MSS,
        receive_buffer,
        ..TcpConfig::default()
    }
}

fn connection(
    cc: Cc,
    sched: Sched,
    subflows: usize,
    app_bytes: u64,
    receive_buffer: u64,
) -> MptcpFlow {
    connection_with(tcp_config(receive_buffer), cc, sched, subflows, app_bytes)
}

/// [`connection`] with the subflows' TCP configured as `tcp` says.
fn connection_with(
    tcp: TcpConfig,
    cc: Cc,
    sched: Sched,
    subflows: usize,
    app_bytes: u64,
) -> MptcpFlow {
    let receive_buffer = tcp.receive_buffer;
    // The controller counts in the data bytes of a full segment, as the subflows do.
    let payload = MSS - DSS_DATA_OPTION_BYTES;
    let multipath = MultipathConnection {
        subflows,
        mss: payload,
        initial_window: tcp.initial_window,
        profile: tcp.profile,
    };
    let cc: Coupled = match cc {
        Cc::Lia => Lia::new(multipath).into(),
        Cc::Olia => Olia::new(multipath).into(),
        Cc::UncoupledReno => Coupled::Uncoupled(Uncoupled {
            controllers: (0..subflows)
                .map(|_| Controller::from(Reno::new(payload, tcp.initial_window)))
                .collect(),
            mss: payload,
        }),
    };
    let scheduler: Scheduler = match sched {
        Sched::MinRtt {
            penalisation,
            opportunistic,
        } => MinRtt {
            options: SchedulerOptions {
                penalisation,
                opportunistic_retransmission: opportunistic,
            },
        }
        .into(),
        Sched::Redundant => Redundant.into(),
        Sched::RoundRobin => RoundRobin::new(1, true, subflows).into(),
    };
    let config = MptcpConfig {
        tcp,
        send_buffer: 4 << 20,
        receive_buffer,
        app_bytes: Some(app_bytes),
        subflows: vec![SubflowConfig::default(); subflows],
    };
    MptcpFlow::new(config, cc, scheduler)
}

const MIN_RTT: Sched = Sched::MinRtt {
    penalisation: true,
    opportunistic: true,
};

/// Two paths: 10 Mb/s with 10 ms one way, 5 Mb/s with 30 ms.
fn two_paths(a: PathScript, b: PathScript) -> Vec<PathNet> {
    vec![PathNet::new(10, 10, a), PathNet::new(5, 30, b)]
}

fn run(cc: Cc, sched: Sched, app_bytes: u64, receive_buffer: u64, paths: Vec<PathNet>) -> Harness {
    let n = paths.len();
    Harness::new(
        connection(cc, sched, n, app_bytes, receive_buffer),
        app_bytes,
        paths,
    )
    .run()
}

#[test]
fn ranges_merge_and_count_new_bytes() {
    let mut r = Ranges::default();
    assert_eq!(r.insert(10, 20), 10);
    assert_eq!(r.prefix(), 0);
    assert_eq!(r.insert(0, 5), 5);
    assert_eq!(r.insert(5, 15), 5);
    assert_eq!((r.prefix(), r.total()), (20, 20));
    assert_eq!(r.insert(30, 40), 10);
    assert_eq!(r.insert(0, 50), 20);
    assert_eq!((r.prefix(), r.total()), (50, 50));
}

#[test]
fn lossless_paths_deliver_everything_once_over_both_subflows() {
    let h = run(
        Cc::Lia,
        MIN_RTT,
        400_000,
        64 << 20,
        two_paths(PathScript::default(), PathScript::default()),
    );
    assert_eq!(h.log.dropped_data, 0);
    assert_eq!(h.log.subflow_retransmissions + h.log.data_level_resends, 0);
    assert_eq!(h.flow.receiver().duplicate_bytes(), 0);
    for i in 0..2 {
        assert!(
            h.flow.subflow_stats(h.now, i).new_data_bytes > 0,
            "subflow {i} carried nothing"
        );
    }
}

/// An ACK makes the send loop take the scheduler's view of its own subflow alone (the others'
/// are kept from earlier inputs: nothing of their subflows changed), and the loop's closing
/// question (does any subflow have the window?) takes none: 322 views in these 275 send
/// loops. Before, every send loop took the view of every established subflow anew: 529. (The
/// loop with the views, that is: min_rtt's shortcut for new data, off here, takes none.)
#[test]
fn an_ack_takes_the_view_of_its_own_subflow_alone() {
    let mut flow = connection(Cc::Lia, MIN_RTT, 2, 400_000, 64 << 20);
    flow.new_data_by_lowest_rtt = false;
    let h = Harness::new(
        flow,
        400_000,
        two_paths(PathScript::default(), PathScript::default()),
    )
    .run();
    let Work {
        send_loops,
        views_taken,
        ..
    } = h.flow.work;
    assert!(send_loops > 100, "{send_loops} send loops");
    assert!(
        views_taken * 10 < send_loops * 13,
        "{views_taken} views taken in {send_loops} send loops"
    );
}

/// The send loop's shortcut for new data under min_rtt (no view taken, the scheduler not
/// asked) takes the decisions of the loop with the views: with it off, the same transfer, to
/// the nanosecond and the counter, under losses, reordering, an outage and a small receive
/// buffer (reinjections and the receive-buffer optimisation interleaved with it).
#[test]
fn the_new_data_shortcut_sends_what_the_views_would() {
    let lossy = PathScript::default()
        .drop_data(&[12, 13, 40])
        .delay_data(20, SimTime::from_millis(15))
        .drop_acks(&[30, 31]);
    let outage = PathScript::default()
        .drop_data(&[5])
        .down(SimTime::from_millis(150), SimTime::from_millis(900));
    let cases = [
        (PathScript::default(), PathScript::default(), 64 << 20),
        (lossy.clone(), outage.clone(), 64 << 20),
        (outage, lossy, 30_000),
    ];
    for (a, b, receive_buffer) in cases {
        for cc in [Cc::Lia, Cc::Olia, Cc::UncoupledReno] {
            let [on, off] = [true, false].map(|shortcut| {
                let mut flow = connection(cc, MIN_RTT, 2, 500_000, receive_buffer);
                assert!(flow.new_data_by_lowest_rtt);
                flow.new_data_by_lowest_rtt = shortcut;
                Harness::new(flow, 500_000, two_paths(a.clone(), b.clone())).run()
            });
            assert!(
                on.flow.work.views_taken < off.flow.work.views_taken,
                "{cc:?}: the shortcut was not taken"
            );
            assert_eq!(on.now, off.now, "{cc:?}");
            assert_eq!(format!("{:?}", on.log), format!("{:?}", off.log), "{cc:?}");
            assert_eq!(
                on.flow.connection_stats(on.now),
                off.flow.connection_stats(off.now),
                "{cc:?}"
            );
            for i in 0..2 {
                assert_eq!(
                    on.flow.subflow_stats(on.now, i),
                    off.flow.subflow_stats(off.now, i),
                    "{cc:?}, subflow {i}"
                );
            }
        }
    }
}

#[test]
fn scripted_losses_and_reordering_are_repaired_by_each_subflow() {
    let a = PathScript::default()
        .drop_data(&[12, 13, 40])
        .delay_data(20, SimTime::from_millis(15));
    let b = PathScript::default()
        .drop_data(&[5])
        .delay_data(8, SimTime::from_millis(40));
    for cc in [Cc::Lia, Cc::Olia, Cc::UncoupledReno] {
        let h = run(
            cc,
            MIN_RTT,
            400_000,
            64 << 20,
            two_paths(a.clone(), b.clone()),
        );
        assert_eq!(h.log.dropped_data, 4);
        assert!(h.log.subflow_retransmissions >= 4, "{cc:?}: {:?}", h.log);
        assert!(h.log.losses >= 2, "{cc:?}: {:?}", h.log);
    }
}

#[test]
fn a_path_that_dies_has_its_outstanding_data_reinjected() {
    // Path 1 goes down for good 150 ms in: its subflow times out, and what it held that was
    // not DATA_ACKed goes on path 0 (RFC 8684 §3.3.6; reference §4.4).
    let b = PathScript::default().down(SimTime::from_millis(150), SimTime::MAX);
    let h = run(
        Cc::Lia,
        MIN_RTT,
        800_000,
        64 << 20,
        two_paths(PathScript::default(), b),
    );
    assert!(h.log.timeouts >= 1, "{:?}", h.log);
    assert!(h.log.data_level_resends >= 1, "{:?}", h.log);
    assert!(h.flow.connection_stats(h.now).reinjected_bytes > 0);
}

#[test]
fn lost_acks_leave_the_data_ack_monotone() {
    let drop_every_third: Vec<usize> = (0..400).filter(|i| i % 3 == 1).collect();
    let a = PathScript::default().drop_acks(&drop_every_third);
    let b = PathScript::default().drop_acks(&[0, 1, 2, 3, 4, 5, 6, 7]);
    let h = run(Cc::Lia, MIN_RTT, 300_000, 64 << 20, two_paths(a, b));
    assert!(h.log.dropped_acks > 50, "{:?}", h.log);
}

#[test]
fn a_small_receive_buffer_blocks_and_resends_on_the_fast_subflow() {
    // 30 kB of receive buffer over a 20 ms and a 60 ms path: the slow subflow's data blocks
    // the window; the kernel's receive-buffer optimisation resends it on the fast one.
    let h = run(
        Cc::Lia,
        MIN_RTT,
        600_000,
        30_000,
        two_paths(PathScript::default(), PathScript::default()),
    );
    let stats = h.flow.connection_stats(h.now);
    assert!(stats.window_blocked_ns > 0);
    assert!(
        stats.opportunistic_retransmissions + stats.penalisations > 0,
        "{stats:?}"
    );
}

#[test]
fn redundant_copies_are_dropped_as_duplicates() {
    let a = PathScript::default().drop_data(&[3, 30]);
    let h = run(
        Cc::UncoupledReno,
        Sched::Redundant,
        300_000,
        64 << 20,
        two_paths(a, PathScript::default()),
    );
    assert!(h.flow.receiver().duplicate_bytes() > 0);
    assert!(h.log.data_level_resends > 0);
}

/// The case proptest found (proptest-regressions/transport/multipath/mptcp_tests.txt): path
/// 1's losses put its subflow in fast recovery while the 30 kB shared buffer keeps the peer's
/// window small. The subflow's TCP applies that window from its own `snd_una`, so after a few
/// redundant copies it has no room for the next and answers the offer with a resend of its
/// un-SACKed data (RFC 6675 NextSeg rule (3)). That resend used to be taken for the copy: a
/// mapping of new subflow bytes that were never sent (the harness: the mappings no longer end
/// at `snd_nxt`) and the chunk counted as carried by the subflow.
#[test]
fn a_resend_in_place_of_an_offered_chunk_is_not_mapped_as_the_chunk() {
    let b = PathScript::default()
        .drop_data(&[8, 21, 22])
        .delay_data(4, SimTime::from_millis(13));
    let paths = vec![
        PathNet::new(4, 26, PathScript::default()),
        PathNet::new(3, 4, b),
    ];
    let h = run(Cc::Lia, Sched::Redundant, 159_382, 30_657, paths);
    assert!(
        h.flow.work.repairs_for_new_data > 0,
        "no resend in place of an offered chunk: {:?}",
        h.log
    );
}

fn script_strategy() -> impl Strategy<Value = PathScript> {
    (
        prop::collection::vec(prop::bool::weighted(0.04), 0..400),
        prop::collection::vec(prop_oneof![9 => Just(0u64), 1 => 1u64..60], 0..400),
        prop::collection::vec(prop::bool::weighted(0.05), 0..400),
        prop::option::weighted(0.15, (0u64..2000, 1u64..3000)),
    )
        .prop_map(|(drop_data, delays, drop_ack, down)| PathScript {
            drop_data,
            delay_data: delays.into_iter().map(SimTime::from_millis).collect(),
            drop_ack,
            down: down.map(|(from, length)| {
                (
                    SimTime::from_millis(from),
                    SimTime::from_millis(from + length),
                )
            }),
        })
}

fn cc_strategy() -> impl Strategy<Value = Cc> {
    prop_oneof![Just(Cc::Lia), Just(Cc::Olia), Just(Cc::UncoupledReno)]
}

fn sched_strategy() -> impl Strategy<Value = Sched> {
    prop_oneof![
        (any::<bool>(), any::<bool>()).prop_map(|(penalisation, opportunistic)| Sched::MinRtt {
            penalisation,
            opportunistic
        }),
        Just(Sched::Redundant),
        Just(Sched::RoundRobin),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Random loss, ACK loss, reordering and outages on two or three paths, any controller,
    /// scheduler and receive buffer: every invariant holds after every input, and the
    /// transfer completes with every byte delivered once. (A path down for good is not drawn:
    /// the outages end, so every subflow can finish.)
    #[test]
    fn invariants_hold_under_random_loss_and_reordering(
        scripts in prop::collection::vec(script_strategy(), 2..=3),
        rates in prop::collection::vec((1u64..20, 1u64..50), 3),
        cc in cc_strategy(),
        sched in sched_strategy(),
        receive_buffer in prop_oneof![Just(64u64 << 20), 20_000u64..200_000],
        app_bytes in 1u64..300_000,
    ) {
        let paths = scripts
            .into_iter()
            .zip(rates)
            .map(|(s, (mbps, delay))| PathNet::new(mbps, delay, s))
            .collect();
        run(cc, sched, app_bytes, receive_buffer, paths);
    }
}

#[test]
fn a_subflow_resends_only_what_it_lost_while_the_connection_has_data() {
    // Two and three losses in one window on each path. A TCP sender with data to send
    // resends only the lost segments (RFC 6675 NextSeg: rule (2), new data, comes before
    // rules (3) and (4)); so does a subflow while its connection has data to send. It used
    // to be asked to repair with no new data on offer, and made a rescue retransmission
    // (rule (4)) of data that was not lost in every such recovery.
    let a = PathScript::default().drop_data(&[30, 31, 90, 91, 92]);
    let b = PathScript::default().drop_data(&[25, 26, 70, 71]);
    for cc in [Cc::Lia, Cc::Olia, Cc::UncoupledReno] {
        let h = run(
            cc,
            MIN_RTT,
            3_000_000,
            64 << 20,
            two_paths(a.clone(), b.clone()),
        );
        assert_eq!(h.log.dropped_data, 9, "{cc:?}: {:?}", h.log);
        assert_eq!(h.log.timeouts, 0, "{cc:?}: {:?}", h.log);
        assert_eq!(
            h.log.subflow_retransmissions, 9,
            "{cc:?}: a resend of data that was not lost: {:?}",
            h.log
        );
    }
}

#[test]
fn tail_loss_probes_carry_new_data_and_keep_the_invariants() {
    // With RACK-TLP a subflow's due probe carries the connection's next new data when there
    // is some (RFC 8985 §7.3), mapped like any new segment: the harness checks every
    // segment's mapping, the data sequence and delivery at every event. A short outage of
    // path 0 (shorter than its two SRTTs plus a little, far shorter than the RTO) stops its
    // ACKs: its probe fires after the outage, with the connection's data on offer.
    let a = PathScript::default()
        .drop_data(&[40, 41, 42, 43, 44, 45])
        .down(SimTime::from_millis(300), SimTime::from_millis(330));
    let b = PathScript::default().drop_data(&[20, 21, 22, 23, 60]);
    let tcp = TcpConfig {
        rack_tlp: true,
        ..tcp_config(64 << 20)
    };
    for cc in [Cc::Lia, Cc::UncoupledReno] {
        let paths = two_paths(a.clone(), b.clone());
        let n = paths.len();
        let flow = connection_with(tcp, cc, MIN_RTT, n, 600_000);
        let h = Harness::new(flow, 600_000, paths).run();
        assert!(h.log.dropped_data >= 11, "{cc:?}: {:?}", h.log);
        assert!(h.log.subflow_retransmissions >= 11, "{cc:?}: {:?}", h.log);
        assert!(
            h.flow.work.probes_with_new_data > 0,
            "{cc:?}: no probe carried data"
        );
    }
}
