//! Criterion micro-benchmarks of the simulator's hot paths, one group per component, so that a
//! regression shows where it happens and not only in the end-to-end dumbbell:
//!
//! - `event_queue`: one event through the event queue;
//! - `link_admission`: one packet through a drop-tail link direction;
//! - `tcp_ack`: ACKs through a TCP sender, with the segments they release;
//! - `scheduler_pick`: one pick of each built-in multipath packet scheduler.
//!
//! Every input is fixed or drawn from a fixed seed, so two runs measure the same work. Where a
//! case's name promises a state (an idle link, a standing queue, holes in the scoreboard), its
//! setup checks that state before timing.

use std::collections::VecDeque;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use plait_core::event::{Event, EventQueue};
use plait_core::net::link::Link;
use plait_core::net::queue::{DropTail, Limit, Queue, QueueItem};
use plait_core::packet::{AckSegment, DataSegment};
use plait_core::rng::{rng_from_seed, splitmix64};
use plait_core::transport::cc::{CongestionControl, Reno};
use plait_core::transport::multipath::scheduler::{
    ConnectionView, PacketScheduler, SchedulerContext, SchedulerSpec, SegmentView, SubflowView,
    REGISTRY,
};
use plait_core::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use plait_core::{FlowId, LinkId, NodeId, PacketId, Rate, SimTime};

/// Deterministic draws for the benchmarks' inputs: SplitMix64 over a counter.
struct Draws(u64);

impl Draws {
    /// Uniform in `[low, high]` (the modulo bias is negligible for these small ranges).
    fn between(&mut self, low: u64, high: u64) -> u64 {
        self.0 += 1;
        low + splitmix64(self.0) % (high - low + 1)
    }
}

// ---- event_queue ------------------------------------------------------------------------------

/// `event_queue/timers/N`: one event through [`EventQueue`] in the steady state of a run with
/// 16 packet events pending (one arrival per link direction) and N flow timers (one per flow),
/// for N = 10 and 1000. An iteration pops the earliest event and pushes the one that follows
/// it: a packet event 1 to 100 µs later, a flow timer 200 to 300 ms later (a retransmission
/// timer's distance), so the queue keeps its size and almost every pop is a packet event, as in
/// a run. The gaps are drawn before timing. Throughput is in events (one pop and one push).
fn event_queue(c: &mut Criterion) {
    const PACKET_EVENTS: u32 = 16;
    const GAPS: usize = 1024;
    let mut draws = Draws(1);
    let packet_gaps: Vec<SimTime> = (0..GAPS)
        .map(|_| SimTime::from_nanos(draws.between(1_000, 100_000)))
        .collect();
    let timer_gaps: Vec<SimTime> = (0..GAPS)
        .map(|_| SimTime::from_nanos(draws.between(200_000_000, 300_000_000)))
        .collect();

    let mut group = c.benchmark_group("event_queue");
    group.throughput(Throughput::Elements(1));
    for timers in [10u32, 1000] {
        let mut queue = EventQueue::new();
        for link in 0..PACKET_EVENTS {
            queue.push(packet_gaps[link as usize], Event::Arrive(LinkId(link)));
        }
        for flow in 0..timers {
            let at = SimTime::from_nanos(draws.between(200_000_000, 300_000_000));
            queue.push(at, Event::FlowTimer(FlowId(flow)));
        }
        let mut i = 0usize;
        group.bench_function(BenchmarkId::new("timers", timers), |b| {
            b.iter(|| {
                let (time, event) = queue.pop().expect("the queue never empties");
                let gaps = if matches!(event, Event::FlowTimer(_)) {
                    &timer_gaps
                } else {
                    &packet_gaps
                };
                queue.push(time + gaps[i % GAPS], event);
                i = i.wrapping_add(1);
                time
            })
        });
    }
    group.finish();
}

// ---- link_admission ---------------------------------------------------------------------------

/// Size on the wire of the packets offered to the link.
const PACKET_BYTES: u32 = 1500;
/// Time the bottleneck takes to serialise one packet: 1500 B at 100 Mb/s.
const PACKET_TX: SimTime = SimTime::from_micros(120);

/// One direction of the dumbbell's bottleneck: 100 Mb/s, 20 ms, drop-tail of 367 packets.
fn bottleneck() -> Link {
    Link::new(
        "bottleneck".into(),
        false,
        NodeId(0),
        NodeId(1),
        Rate::from_mbps(100),
        SimTime::from_millis(20),
        Queue::from(DropTail::new(Limit::Packets(367))),
        None,
        rng_from_seed(1),
    )
}

/// Offers a link packets at a fixed spacing and does what the simulator does with each: the
/// arrival at the input, the launch of the transmission it starts, and the arrivals at the far
/// end that are due by then (which keep the link's pipeline at its steady length).
struct LinkFeed {
    link: Link,
    now: SimTime,
    spacing: SimTime,
    next_packet: u32,
    /// When the head of the link's pipeline reaches the far end.
    head: Option<SimTime>,
}

impl LinkFeed {
    fn new(link: Link, spacing: SimTime) -> Self {
        LinkFeed {
            link,
            now: SimTime::ZERO,
            spacing,
            next_packet: 0,
            head: None,
        }
    }

    /// A packet arrives now. Returns when its last bit leaves (`None`: dropped).
    #[inline]
    fn arrive(&mut self) -> Option<SimTime> {
        let item = QueueItem {
            packet: PacketId(self.next_packet),
            flow: FlowId(0),
            bytes: PACKET_BYTES,
        };
        self.next_packet = self.next_packet.wrapping_add(1);
        // As the simulator does for a drop-tail link: admission, departure, pipeline.
        let started = self.link.arrive_scheduled(self.now, item).ok();
        let tx_end = started.map(|s| s.tx_end);
        if let Some(s) = started {
            let departure = self.link.departure(s, self.now);
            if let Some((at, _)) = self.link.launch_departed(departure) {
                self.head = Some(at);
            }
        }
        while self.head.is_some_and(|at| at <= self.now) {
            let (_, next, _) = self.link.pop_arrival();
            self.head = next.map(|(at, _)| at);
        }
        tx_end
    }

    /// The next packet arrives, one spacing after the previous one.
    #[inline]
    fn step(&mut self) -> Option<SimTime> {
        self.now += self.spacing;
        self.arrive()
    }
}

/// `link_admission/{idle,standing_queue}`: one packet through a drop-tail link direction (the
/// dumbbell's bottleneck, whose queue departs at admission): `Link::arrive_scheduled`,
/// `departure`, `launch_departed` and the `pop_arrival` of the packets that reached the far
/// end meanwhile.
///
/// - `idle`: a packet every 200 µs, so each finds the link idle and starts at once;
/// - `standing_queue`: 100 packets at once, then one every 120 µs (the link's own rate), so the
///   queue stands still: each arrival waits behind the same number of packets, 99 (11.88 ms),
///   before its own transmission.
///
/// Throughput is in packets.
fn link_admission(c: &mut Criterion) {
    let mut group = c.benchmark_group("link_admission");
    group.throughput(Throughput::Elements(1));

    let mut idle = LinkFeed::new(bottleneck(), SimTime::from_micros(200));
    for _ in 0..1000 {
        idle.step();
    }
    let tx_end = idle.step().expect("an idle link admits");
    assert_eq!(tx_end, idle.now + PACKET_TX, "starts at once");
    group.bench_function("idle", |b| b.iter(|| idle.step()));

    let mut standing = LinkFeed::new(bottleneck(), PACKET_TX);
    for _ in 0..100 {
        standing.arrive();
    }
    for _ in 0..1000 {
        standing.step();
    }
    let tx_end = standing.step().expect("the queue has room");
    assert_eq!(
        tx_end,
        standing.now + SimTime::from_micros(100 * 120),
        "waits behind 99 packets"
    );
    group.bench_function("standing_queue", |b| b.iter(|| standing.step()));
    group.finish();
}

// ---- tcp_ack ----------------------------------------------------------------------------------

/// ACKs handled per timed batch of `tcp_ack`: about two windows of the flow below without
/// loss, four with.
const ACKS: usize = 256;

/// A TCP sender (Reno, SACK, 1460-byte segments, default settings) and its receiver joined by
/// a synthetic path: segments reach the receiver in the order sent, one every 120 µs (a
/// 100 Mb/s bottleneck that never idles), and each one's ACK reaches the sender at once.
#[derive(Clone)]
struct TcpPath {
    sender: TcpSender<Reno>,
    receiver: TcpReceiver,
    in_flight: VecDeque<DataSegment>,
    now: SimTime,
    /// The first transmission of the segment starting here is lost.
    lose_once: Option<u64>,
    /// Every transmission of the segments starting here is lost.
    lose_always: Vec<u64>,
}

impl TcpPath {
    fn new() -> Self {
        let config = TcpConfig::default();
        let mut path = TcpPath {
            sender: TcpSender::new(config, Reno::new(config.mss, config.initial_window), None),
            receiver: TcpReceiver::new(&config),
            in_flight: VecDeque::new(),
            now: SimTime::ZERO,
            lose_once: None,
            lose_always: Vec::new(),
        };
        path.send();
        path
    }

    fn mss(&self) -> u64 {
        u64::from(self.sender.config().mss)
    }

    /// Puts on the path every segment the sender has to send now.
    fn send(&mut self) {
        while let Some(segment) = self.sender.poll_transmit(self.now) {
            self.in_flight.push_back(segment);
        }
    }

    fn is_lost(&mut self, segment: &DataSegment) -> bool {
        if self.lose_once == Some(segment.seq) && !segment.is_retransmission {
            self.lose_once = None;
            return true;
        }
        self.lose_always.contains(&segment.seq)
    }

    /// Delivers segments until one makes the receiver acknowledge; returns that ACK and the
    /// time it reaches the sender.
    fn next_ack(&mut self) -> (SimTime, AckSegment) {
        loop {
            let segment = self
                .in_flight
                .pop_front()
                .expect("the sender keeps data in flight");
            self.now += PACKET_TX;
            if self.is_lost(&segment) {
                continue;
            }
            self.receiver.handle_data(self.now, &segment);
            if let Some(ack) = self.receiver.poll_transmit(self.now) {
                return (self.now, ack);
            }
        }
    }

    /// One ACK: delivered to the sender, which then sends what it may.
    fn step(&mut self) -> (SimTime, AckSegment) {
        let (now, ack) = self.next_ack();
        self.sender.handle_ack(now, &ack);
        self.send();
        (now, ack)
    }

    /// The flow in congestion avoidance with a window of about 130 segments: slow start until
    /// the window reaches 128 segments, one loss there (found a round trip later, when the
    /// window has doubled), repaired by fast recovery, which halves the window; then two
    /// windows more.
    fn in_congestion_avoidance() -> Self {
        let mut path = TcpPath::new();
        while path.sender.cwnd() < 128 * path.mss() {
            path.step();
        }
        path.lose_once = Some(path.sender.snd_nxt());
        while path.sender.stats().fast_retransmits == 0 || path.sender.in_recovery() {
            path.step();
        }
        for _ in 0..2 * path.sender.cwnd() / path.mss() {
            path.step();
        }
        assert!(!path.sender.in_recovery() && !path.sender.cc().in_slow_start());
        assert!(path.sender.scoreboard().is_empty());
        path
    }

    /// From `self`, three segments of the next window lost, 8 segments apart, and all their
    /// retransmissions too; returned once the sender is in fast recovery with the three holes
    /// reported by SACK.
    fn with_three_holes(&self) -> Self {
        let mut path = self.clone();
        let first = path.sender.snd_nxt();
        let mss = path.mss();
        path.lose_always = vec![first, first + 8 * mss, first + 16 * mss];
        while !(path.sender.in_recovery() && path.sender.scoreboard().ranges().len() == 3) {
            path.step();
        }
        path
    }

    /// The next `ACKS` ACKs and their arrival times, and the path after them.
    fn record(&self) -> (Vec<(SimTime, AckSegment)>, TcpPath) {
        let mut path = self.clone();
        let acks = (0..ACKS).map(|_| path.step()).collect();
        (acks, path)
    }
}

/// Feeds `acks` to `sender`, sending after each what the window allows.
#[inline]
fn replay(sender: &mut TcpSender<Reno>, acks: &[(SimTime, AckSegment)]) {
    for (now, ack) in acks {
        sender.handle_ack(*now, ack);
        while let Some(segment) = sender.poll_transmit(*now) {
            black_box(segment);
        }
    }
}

/// `tcp_ack/{no_holes,with_holes}`: a batch of 256 ACKs through a TCP sender
/// (`TcpSender::handle_ack`), each followed by draining `poll_transmit` of the segments it
/// releases. The flow starts in congestion avoidance with a window of about 130 segments
/// (see [`TcpPath`]).
///
/// - `no_holes`: every segment arrives; each ACK acknowledges one more segment cumulatively
///   and lets one new segment go, two when the window has grown (about two windows of ACKs).
/// - `with_holes`: three segments of a window, and every retransmission of them, are lost, so
///   during the whole batch the cumulative ACK stays at the first hole and every ACK carries
///   SACK blocks; the sender is in fast recovery, its window halved to about 65 segments, with
///   three holes in its scoreboard, and each ACK SACKs one more segment and, once the pipe has
///   drained below the window, lets one new segment go (about four windows of ACKs).
///
/// The ACKs are recorded from the sender and receiver running together, once, before timing;
/// each timed batch replays them on a fresh copy of the sender taken at the start of the
/// recording (the copy is made outside the timed part), so it follows the same trajectory.
/// Throughput is in ACKs.
fn tcp_ack(c: &mut Criterion) {
    let steady = TcpPath::in_congestion_avoidance();
    let holes = steady.with_three_holes();

    let (no_hole_acks, no_hole_end) = steady.record();
    assert!(no_hole_acks
        .windows(2)
        .all(|w| w[1].1.ack > w[0].1.ack && w[1].1.sack.is_empty()));
    assert!(!no_hole_end.sender.in_recovery());

    let (hole_acks, hole_end) = holes.record();
    let hole = hole_acks[0].1.ack;
    assert!(hole_acks
        .iter()
        .all(|(_, ack)| ack.ack == hole && !ack.sack.is_empty()));
    assert!(hole_end.sender.in_recovery() && hole_end.sender.scoreboard().ranges().len() == 3);
    assert!(
        hole_end
            .sender
            .poll_timeout()
            .is_some_and(|t| t > hole_end.now),
        "no retransmission timeout is due during the batch"
    );

    let mut group = c.benchmark_group("tcp_ack");
    group.throughput(Throughput::Elements(ACKS as u64));
    for (name, start, acks, end) in [
        ("no_holes", &steady, &no_hole_acks, &no_hole_end),
        ("with_holes", &holes, &hole_acks, &hole_end),
    ] {
        // The replay reaches the state the recording reached.
        let mut check = start.sender.clone();
        replay(&mut check, acks);
        assert_eq!(check.snd_nxt(), end.sender.snd_nxt());
        assert_eq!(check.stats(), end.sender.stats());
        group.bench_function(name, |b| {
            b.iter_batched_ref(
                || start.sender.clone(),
                |sender| replay(sender, acks),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

// ---- scheduler_pick ---------------------------------------------------------------------------

/// Snapshots of the subflows' state the picks cycle through.
const SNAPSHOTS: usize = 64;

/// `SNAPSHOTS` views of `subflows` subflows: subflow i has an SRTT of 20 + 10·i ms (plus up to
/// 2 ms of jitter), RTTVAR an eighth of it, a window of 20 + 6·i segments (after one loss, so
/// ssthresh equals it), and in each snapshot either a full window or room for one or two more
/// segments, drawn at random.
fn subflow_snapshots(subflows: usize, mss: u32) -> Vec<Vec<SubflowView>> {
    let mut draws = Draws(2);
    (0..SNAPSHOTS)
        .map(|_| {
            (0..subflows)
                .map(|i| {
                    let cwnd_segments = 20 + 6 * i as u64;
                    let in_flight = (cwnd_segments - draws.between(0, 2)) * u64::from(mss);
                    let srtt = SimTime::from_micros(20_000 + 10_000 * i as u64)
                        + SimTime::from_micros(draws.between(0, 2_000));
                    SubflowView {
                        id: i,
                        usable: true,
                        backup: false,
                        mss,
                        cwnd_bytes: cwnd_segments * u64::from(mss),
                        ssthresh_bytes: cwnd_segments * u64::from(mss),
                        in_flight_bytes: in_flight,
                        queued_bytes: in_flight,
                        srtt,
                        rttvar: SimTime::from_nanos(srtt.as_nanos() / 8),
                        loss_events: 1,
                        carried: false,
                    }
                })
                .collect()
        })
        .collect()
}

/// `scheduler_pick/<scheduler>/<subflows>`: one `PacketScheduler::schedule` call of each
/// built-in multipath scheduler (`min_rtt` and every other one in the registry, with default
/// parameters) for a connection of 2 and of 8 subflows. Each pick places one new 1460-byte
/// segment, 50 µs after the previous one, and sees the next of 64 fixed snapshots of the
/// subflows (see [`subflow_snapshots`]), so which subflows have room changes from pick to pick
/// as in a run. The scheduler keeps its own state from pick to pick. Throughput is in picks.
fn scheduler_pick(c: &mut Criterion) {
    const MSS: u32 = 1460;
    let mut group = c.benchmark_group("scheduler_pick");
    group.throughput(Throughput::Elements(1));
    for spec in REGISTRY {
        for subflows in [2usize, 8] {
            let snapshots = subflow_snapshots(subflows, MSS);
            let mut scheduler = SchedulerSpec::new(spec.name, &[])
                .expect("the defaults are valid")
                .build(SchedulerContext { subflows });
            let mut connection = ConnectionView {
                now: SimTime::ZERO,
                data_window_bytes: 4 << 20,
                peer_window_bytes: 8 << 20,
                unscheduled_bytes: 1 << 20,
            };
            let mut segment = SegmentView {
                dsn: 0,
                len: MSS,
                is_reinjection: false,
            };
            let mut k = 0usize;
            group.bench_function(BenchmarkId::new(spec.name, subflows), |b| {
                b.iter(|| {
                    connection.now += SimTime::from_micros(50);
                    segment.dsn += u64::from(MSS);
                    let views = &snapshots[k % SNAPSHOTS];
                    k = k.wrapping_add(1);
                    scheduler.schedule(black_box(&connection), &segment, black_box(views))
                })
            });
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    event_queue,
    link_admission,
    tcp_ack,
    scheduler_pick
);
criterion_main!(benches);
