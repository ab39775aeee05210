//! Protocol tests: a [`TcpSender`] and a [`TcpReceiver`] joined by a scripted two-endpoint
//! harness.
//!
//! The data path is one bottleneck: FIFO serialisation at a fixed rate (payload plus 40 header
//! bytes, unlimited buffer) followed by a fixed one-way delay. ACKs take the same delay without
//! serialisation and are never lost. Data transmissions are dropped, before the bottleneck, by
//! a script: by transmission index (the n-th segment the sender emitted, from 0) or by sequence
//! number (the first k transmissions that start at a given byte). The script can also delay a
//! transmission after the bottleneck (by index, or the first one starting at a given byte), so
//! that the segments behind it overtake it: reordering.
//!
//! The event loop follows the driver contract: it processes the earliest event (data arrival,
//! ACK arrival, delayed-ACK timer, retransmission timer; in that order on ties), then drains
//! both endpoints' `poll_transmit`, then checks the invariants:
//!
//! - conservation: segments and bytes sent = arrived + dropped + still in the network, and the
//!   receiver's own accounting (delivered + queued out of order + duplicates) equals the bytes
//!   that arrived;
//! - exactly-once in-order delivery: the harness counts the copies of every byte that reached
//!   the receiver; the receiver's delivered count must equal the length of the prefix present,
//!   its duplicate count the surplus copies, and never exceed the application's bytes;
//! - the sender: `snd_una <= delivered`, new data within the advertised window, the
//!   retransmission flag set exactly on resent bytes, the timer running while data is
//!   outstanding, one controller reduction per recovery episode, timeout, loss repaired by a
//!   tail loss probe (RFC 8985 §7.4) or window of lost retransmissions (§9.3);
//! - with RACK-TLP, RACK's per-segment bookkeeping agrees with itself and with the scoreboard.

use std::collections::VecDeque;

use proptest::prelude::*;

use crate::packet::{AckSegment, DataSegment, TCP_IP_HEADER_BYTES};
use crate::time::{Rate, SimTime};
use crate::transport::cc::window::{half_flight_size, loss_window};
use crate::transport::cc::{AckSample, CongestionControl};

use super::{RecoveryPhase, RecoveryWindow, TcpConfig, TcpReceiver, TcpSender};

/// A Reno-like controller for tests (RFC 5681 §3.1): slow start by `min(acked, SMSS)`,
/// congestion avoidance by `SMSS*SMSS/cwnd` per ACK, growth only while cwnd-limited and out of
/// recovery, `ssthresh = max(FlightSize/2, 2*SMSS)` on loss, `cwnd = ssthresh` on a congestion
/// event and one SMSS on a timeout. A fixed-window variant never changes its window. Every
/// hook is counted.
#[derive(Clone, Debug)]
pub(crate) struct TestReno {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    fixed: bool,
    pub congestion_events: u32,
    pub timeouts: u32,
    pub recovery_exits: u32,
    pub acks: u64,
    pub packets_sent: u64,
    /// `bytes_in_flight` given to the latest `on_congestion_event` / timeout.
    pub last_flight: u64,
    /// The largest `bytes_in_flight - cwnd` any `on_congestion_event` was given (0 if never
    /// above the window).
    pub most_basis_above_cwnd: u64,
    pub last_sample: Option<AckSample>,
    /// (tag, bytes) of each `on_tagged_ack` / `on_tagged_loss`.
    pub tagged_acks: Vec<(u64, u64)>,
    pub tagged_losses: Vec<(u64, u64)>,
}

impl TestReno {
    pub(crate) fn new(mss: u32, initial_window_segments: u32) -> Self {
        TestReno {
            mss: mss as u64,
            cwnd: initial_window_segments as u64 * mss as u64,
            ssthresh: u64::MAX,
            fixed: false,
            congestion_events: 0,
            timeouts: 0,
            recovery_exits: 0,
            acks: 0,
            packets_sent: 0,
            last_flight: 0,
            most_basis_above_cwnd: 0,
            last_sample: None,
            tagged_acks: Vec::new(),
            tagged_losses: Vec::new(),
        }
    }

    /// Starting from a window of `window_bytes`, any number of bytes.
    pub(crate) fn with_window(mss: u32, window_bytes: u64) -> Self {
        TestReno {
            cwnd: window_bytes,
            ..TestReno::new(mss, 1)
        }
    }

    pub(crate) fn fixed(mss: u32, window_bytes: u64) -> Self {
        TestReno {
            cwnd: window_bytes,
            fixed: true,
            ..TestReno::new(mss, 1)
        }
    }
}

impl CongestionControl for TestReno {
    fn name(&self) -> &'static str {
        "test-reno"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn on_packet_sent(&mut self, _now: SimTime, _bytes: u32, _bytes_in_flight: u64) {
        self.packets_sent += 1;
    }
    fn on_ack(&mut self, sample: &AckSample) {
        self.acks += 1;
        self.last_sample = Some(*sample);
        if self.fixed || sample.in_recovery || sample.acked_bytes == 0 || !sample.is_cwnd_limited {
            return;
        }
        if self.cwnd < self.ssthresh {
            self.cwnd += sample.acked_bytes.min(self.mss);
        } else {
            self.cwnd += (self.mss * self.mss / self.cwnd).max(1);
        }
    }
    fn on_congestion_event(&mut self, _now: SimTime, bytes_in_flight: u64) {
        self.congestion_events += 1;
        self.last_flight = bytes_in_flight;
        self.most_basis_above_cwnd = self
            .most_basis_above_cwnd
            .max(bytes_in_flight.saturating_sub(self.cwnd));
        if !self.fixed {
            self.ssthresh = half_flight_size(bytes_in_flight, self.mss);
            self.cwnd = self.ssthresh;
        }
    }
    fn on_tagged_ack(&mut self, tag: u64, bytes: u64) {
        self.tagged_acks.push((tag, bytes));
    }
    fn on_tagged_loss(&mut self, tag: u64, bytes: u64) {
        self.tagged_losses.push((tag, bytes));
    }
    fn on_recovery_exit(&mut self, _now: SimTime) {
        self.recovery_exits += 1;
    }
    fn on_retransmission_timeout(&mut self, _now: SimTime, bytes_in_flight: u64) {
        self.timeouts += 1;
        self.last_flight = bytes_in_flight;
        // RFC 5681 §3.1, without its rule for a repeated timeout.
        if !self.fixed {
            self.ssthresh = half_flight_size(bytes_in_flight, self.mss);
            self.cwnd = loss_window(self.mss);
        }
    }
}

/// Which data transmissions the network drops.
#[derive(Clone, Debug, Default)]
struct LossScript {
    /// Drop transmission `i` if `by_index[i]`.
    by_index: Vec<bool>,
    /// `(seq, remaining)`: drop the next `remaining` transmissions starting at `seq`.
    by_seq: Vec<(u64, u32)>,
    /// Extra one-way delay of transmission `i`.
    delay_by_index: Vec<SimTime>,
    /// `(seq, extra)`: the first transmission starting at `seq` takes `extra` longer.
    delay_by_seq: Vec<(u64, SimTime)>,
}

impl LossScript {
    fn none() -> Self {
        LossScript::default()
    }

    fn seq(mut self, seq: u64, times: u32) -> Self {
        self.by_seq.push((seq, times));
        self
    }

    fn pattern(by_index: Vec<bool>) -> Self {
        LossScript {
            by_index,
            ..LossScript::default()
        }
    }

    fn delay_seq(mut self, seq: u64, extra: SimTime) -> Self {
        self.delay_by_seq.push((seq, extra));
        self
    }

    fn delays(mut self, by_index: Vec<SimTime>) -> Self {
        self.delay_by_index = by_index;
        self
    }

    fn extra_delay(&mut self, index: u64, seq: u64) -> SimTime {
        let mut extra = self
            .delay_by_index
            .get(index as usize)
            .copied()
            .unwrap_or(SimTime::ZERO);
        if let Some(i) = self.delay_by_seq.iter().position(|&(s, _)| s == seq) {
            extra = extra.max(self.delay_by_seq.swap_remove(i).1);
        }
        extra
    }

    fn should_drop(&mut self, index: u64, seq: u64) -> bool {
        let mut drop = self.by_index.get(index as usize).copied().unwrap_or(false);
        for (s, remaining) in &mut self.by_seq {
            if *s == seq && *remaining > 0 {
                *remaining -= 1;
                drop = true;
            }
        }
        drop
    }
}

/// A retransmission timeout seen by the harness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Timeout {
    at: SimTime,
    /// The RTO the expired timer had been armed with.
    rto: SimTime,
    /// When the sender last saw its cumulative ACK advance.
    last_progress: SimTime,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Log {
    transmissions: u64,
    dropped_segments: u64,
    dropped_bytes: u64,
    arrived_segments: u64,
    arrived_bytes: u64,
    acks: u64,
    timeouts: Vec<Timeout>,
    /// `(time, seq)` of every retransmission.
    retransmissions: Vec<(SimTime, u64)>,
    /// When the cumulative ACK had last moved, at each retransmission.
    progress_before_retransmissions: Vec<SimTime>,
    max_outstanding: u64,
    last_progress: SimTime,
    finished_at: SimTime,
}

const MAX_EVENTS: u64 = 5_000_000;

struct Harness {
    sender: TcpSender<TestReno>,
    receiver: TcpReceiver,
    config: TcpConfig,
    now: SimTime,
    delay: SimTime,
    rate: Rate,
    link_free_at: SimTime,
    carry: u64,
    data_in_network: VecDeque<(SimTime, DataSegment)>,
    network_bytes: u64,
    acks_in_network: VecDeque<(SimTime, AckSegment)>,
    script: LossScript,
    app_bytes: u64,
    highest_sent: u64,
    /// Copies of each byte that reached the receiver.
    copies: Vec<u16>,
    expected_delivered: u64,
    expected_duplicates: u64,
    unique_arrived: u64,
    events: u64,
    log: Log,
}

impl Harness {
    fn new(config: TcpConfig, cc: TestReno, app_bytes: u64, script: LossScript) -> Self {
        Harness {
            sender: TcpSender::new(config, cc, Some(app_bytes)),
            receiver: TcpReceiver::new(&config),
            config,
            now: SimTime::ZERO,
            delay: SimTime::from_millis(10),
            rate: Rate::from_mbps(50),
            link_free_at: SimTime::ZERO,
            carry: 0,
            data_in_network: VecDeque::new(),
            network_bytes: 0,
            acks_in_network: VecDeque::new(),
            script,
            app_bytes,
            highest_sent: 0,
            copies: vec![0; app_bytes as usize],
            expected_delivered: 0,
            expected_duplicates: 0,
            unique_arrived: 0,
            events: 0,
            log: Log::default(),
        }
    }

    /// Runs until every application byte is acknowledged, checking invariants throughout.
    fn run(mut self) -> Self {
        loop {
            self.drain();
            self.check_invariants();
            if self.sender.is_finished() {
                break;
            }
            self.step();
        }
        self.log.finished_at = self.now;
        self.check_completion();
        self
    }

    fn step(&mut self) {
        self.events += 1;
        assert!(
            self.events < MAX_EVENTS,
            "no completion after {MAX_EVENTS} events"
        );
        let candidates = [
            self.data_in_network.front().map(|&(t, _)| t),
            self.acks_in_network.front().map(|&(t, _)| t),
            self.receiver.poll_timeout(),
            self.sender.poll_timeout(),
        ];
        let (which, at) = candidates
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (i, t)))
            .min_by_key(|&(i, t)| (t, i))
            .expect("stalled: nothing in the network and no timer armed");
        assert!(at >= self.now, "time went backwards");
        self.now = at;
        match which {
            0 => {
                let (_, segment) = self.data_in_network.pop_front().unwrap();
                self.network_bytes -= segment.len as u64;
                self.arrive(segment);
            }
            1 => {
                let (_, ack) = self.acks_in_network.pop_front().unwrap();
                let before = self.sender.snd_una();
                self.sender.handle_ack(self.now, &ack);
                if self.sender.snd_una() > before {
                    self.log.last_progress = self.now;
                }
            }
            2 => self.receiver.handle_timeout(self.now),
            _ => {
                let rto = self.sender.rto();
                let before = self.sender.stats().timeouts;
                self.sender.handle_timeout(self.now);
                if self.sender.stats().timeouts > before {
                    let last_progress = self.log.last_progress;
                    self.log.timeouts.push(Timeout {
                        at: self.now,
                        rto,
                        last_progress,
                    });
                }
            }
        }
    }

    fn arrive(&mut self, segment: DataSegment) {
        self.log.arrived_segments += 1;
        self.log.arrived_bytes += segment.len as u64;
        for byte in segment.seq..segment.seq + segment.len as u64 {
            let copies = &mut self.copies[byte as usize];
            if *copies == 0 {
                self.unique_arrived += 1;
            } else {
                self.expected_duplicates += 1;
            }
            *copies = copies.saturating_add(1);
        }
        while self.expected_delivered < self.app_bytes
            && self.copies[self.expected_delivered as usize] > 0
        {
            self.expected_delivered += 1;
        }
        self.receiver.handle_data(self.now, &segment);
    }

    fn drain(&mut self) {
        while let Some(segment) = self.sender.poll_transmit(self.now) {
            let filled = self.sender.window_filled();
            self.on_sent(segment);
            if filled {
                // A driver skips this poll (`TcpFlow`): it must find nothing.
                assert_eq!(
                    self.sender.poll_transmit(self.now),
                    None,
                    "window_filled, yet another segment went"
                );
                break;
            }
        }
        while let Some(ack) = self.receiver.poll_transmit(self.now) {
            self.log.acks += 1;
            self.acks_in_network.push_back((self.now + self.delay, ack));
        }
    }

    fn on_sent(&mut self, segment: DataSegment) {
        let end = segment.seq + segment.len as u64;
        assert!(segment.len > 0 && segment.len <= self.config.mss);
        assert_eq!(segment.sent_at, self.now);
        assert!(end <= self.app_bytes, "sent beyond the application's data");
        assert_eq!(segment.is_retransmission, segment.seq < self.highest_sent);
        if segment.is_retransmission {
            assert!(
                end <= self.highest_sent,
                "a retransmission mixes in new data"
            );
            self.log.retransmissions.push((self.now, segment.seq));
            self.log
                .progress_before_retransmissions
                .push(self.log.last_progress);
        } else {
            assert_eq!(segment.seq, self.highest_sent);
            assert!(
                end <= self.sender.snd_una() + self.sender.rwnd(),
                "new data beyond the peer's window"
            );
            self.highest_sent = end;
        }
        self.log.max_outstanding = self
            .log
            .max_outstanding
            .max(self.sender.snd_nxt() - self.sender.snd_una());
        let index = self.log.transmissions;
        self.log.transmissions += 1;
        if self.script.should_drop(index, segment.seq) {
            self.log.dropped_segments += 1;
            self.log.dropped_bytes += segment.len as u64;
            return;
        }
        let start = self.now.max(self.link_free_at);
        let wire_bytes = (segment.len + TCP_IP_HEADER_BYTES) as u64;
        self.link_free_at = start + self.rate.tx_time_carry(wire_bytes, &mut self.carry);
        // In arrival order (FIFO unless the script delays a segment).
        let arrival = self.link_free_at + self.delay + self.script.extra_delay(index, segment.seq);
        let at = self.data_in_network.partition_point(|&(t, _)| t <= arrival);
        self.data_in_network.insert(at, (arrival, segment));
        self.network_bytes += segment.len as u64;
    }

    fn check_invariants(&self) {
        let stats = self.sender.stats();
        let rx = &self.receiver;
        let log = &self.log;
        // Conservation of segments and bytes.
        assert_eq!(stats.segments_sent, log.transmissions);
        assert_eq!(
            stats.segments_sent,
            log.arrived_segments + log.dropped_segments + self.data_in_network.len() as u64
        );
        assert_eq!(
            stats.bytes_sent,
            log.arrived_bytes + log.dropped_bytes + self.network_bytes
        );
        assert_eq!(
            rx.delivered_bytes() + rx.out_of_order_bytes() + rx.duplicate_bytes(),
            log.arrived_bytes
        );
        assert_eq!(
            stats.retransmitted_segments,
            log.retransmissions.len() as u64
        );
        // Exactly-once, in-order delivery against the harness's own byte copies.
        assert_eq!(rx.delivered_bytes(), self.expected_delivered);
        assert_eq!(rx.duplicate_bytes(), self.expected_duplicates);
        assert_eq!(
            rx.delivered_bytes() + rx.out_of_order_bytes(),
            self.unique_arrived
        );
        assert!(rx.delivered_bytes() <= self.app_bytes);
        assert_eq!(rx.out_of_window_bytes(), 0);
        assert_eq!(
            rx.rwnd(),
            self.config.receive_buffer - rx.out_of_order_bytes()
        );
        // Sender.
        let (una, nxt) = (self.sender.snd_una(), self.sender.snd_nxt());
        if let Some(rack) = self.sender.rack() {
            rack.check_invariants(self.sender.scoreboard(), una, nxt);
        }
        assert!(
            una <= rx.delivered_bytes(),
            "acknowledged bytes never delivered"
        );
        assert!(una <= nxt && nxt == self.highest_sent);
        assert!(nxt - una <= self.config.receive_buffer);
        assert_eq!(stats.bytes_acked, una);
        if nxt > una {
            assert!(
                self.sender.poll_timeout().is_some(),
                "data outstanding without a timer"
            );
        } else {
            assert_eq!(self.sender.poll_timeout(), None);
        }
        let cc = self.sender.cc();
        // One reduction per fast recovery, one per loss a tail loss probe repaired, and one per
        // window of lost retransmissions RACK found in fast recovery (RFC 8985 §9.3).
        let rack = self.sender.rack().map(|r| r.stats()).unwrap_or_default();
        assert_eq!(
            cc.congestion_events as u64,
            stats.fast_retransmits + rack.probe_recoveries + rack.retransmission_loss_responses
        );
        assert_eq!(cc.timeouts as u64, stats.timeouts);
        assert_eq!(cc.packets_sent, stats.segments_sent);
        assert!(cc.recovery_exits <= cc.congestion_events);
        assert_eq!(
            self.sender.in_recovery(),
            self.sender.recovery_phase() == RecoveryPhase::FastRecovery
        );
    }

    fn check_completion(&self) {
        assert_eq!(self.receiver.delivered_bytes(), self.app_bytes);
        assert_eq!(self.receiver.out_of_order_bytes(), 0);
        assert!(self.copies.iter().all(|&c| c > 0));
        assert_eq!(self.sender.snd_una(), self.app_bytes);
        assert_eq!(self.sender.stats().bytes_acked, self.app_bytes);
        assert_eq!(self.sender.poll_timeout(), None);
    }

    fn retransmitted_seqs(&self) -> Vec<u64> {
        self.log
            .retransmissions
            .iter()
            .map(|&(_, seq)| seq)
            .collect()
    }
}

const MSS: u64 = 1460;

fn config(sack: bool) -> TcpConfig {
    TcpConfig {
        sack,
        ..TcpConfig::default()
    }
}

fn transfer(config: TcpConfig, segments: u64, script: LossScript) -> Harness {
    let cc = TestReno::new(config.mss, config.initial_window);
    Harness::new(config, cc, segments * MSS, script).run()
}

#[test]
fn lossless_transfer_needs_no_retransmission() {
    for sack in [true, false] {
        let h = transfer(config(sack), 300, LossScript::none());
        let stats = h.sender.stats();
        assert_eq!(stats.segments_sent, 300);
        assert_eq!(
            stats.retransmitted_segments + stats.fast_retransmits + stats.timeouts,
            0
        );
        assert_eq!(h.log.acks, 300);
        assert_eq!(h.receiver.duplicate_bytes(), 0);
        // Slow start grew the window by one segment per ACK while the sender was cwnd-limited,
        // and stopped once the application ran out of data.
        let cwnd = h.sender.cwnd();
        assert!(cwnd > 100 * MSS && cwnd < 310 * MSS, "cwnd {cwnd}");
        assert_eq!(cwnd % MSS, 0);
    }
}

#[test]
fn single_loss_one_fast_retransmit_one_reduction() {
    for sack in [true, false] {
        let h = transfer(config(sack), 200, LossScript::none().seq(30 * MSS, 1));
        let stats = h.sender.stats();
        assert_eq!(stats.fast_retransmits, 1, "sack={sack}");
        assert_eq!(stats.timeouts, 0);
        assert_eq!(stats.retransmitted_segments, 1);
        assert_eq!(h.retransmitted_seqs(), vec![30 * MSS]);
        let cc = h.sender.cc();
        assert_eq!(
            (cc.congestion_events, cc.recovery_exits, cc.timeouts),
            (1, 1, 0)
        );
        assert_eq!(h.receiver.duplicate_bytes(), 0);
    }
}

#[test]
fn several_losses_in_one_window_sack_recovers_in_one_episode() {
    let lost = [30, 33, 36, 39];
    let script = lost
        .iter()
        .fold(LossScript::none(), |s, &k| s.seq(k * MSS, 1));
    let h = transfer(config(true), 200, script);
    let stats = h.sender.stats();
    assert_eq!((stats.fast_retransmits, stats.timeouts), (1, 0));
    assert_eq!(h.sender.cc().congestion_events, 1);
    assert_eq!(h.sender.cc().recovery_exits, 1);
    let mut seqs = h.retransmitted_seqs();
    seqs.sort_unstable();
    assert_eq!(seqs, lost.iter().map(|k| k * MSS).collect::<Vec<_>>());
    assert_eq!(h.receiver.duplicate_bytes(), 0);
}

#[test]
fn several_losses_in_one_window_newreno_recovers_by_partial_acks() {
    let lost = [30, 33, 36, 39];
    let script = lost
        .iter()
        .fold(LossScript::none(), |s, &k| s.seq(k * MSS, 1));
    let h = transfer(config(false), 200, script);
    let stats = h.sender.stats();
    assert_eq!((stats.fast_retransmits, stats.timeouts), (1, 0));
    assert_eq!(h.sender.cc().congestion_events, 1);
    // One hole per partial ACK, in order.
    assert_eq!(
        h.retransmitted_seqs(),
        lost.iter().map(|k| k * MSS).collect::<Vec<_>>()
    );
    // Each partial-ACK retransmission waits for the previous one's ACK: about one RTT apart.
    let times: Vec<SimTime> = h.log.retransmissions.iter().map(|&(t, _)| t).collect();
    for pair in times.windows(2) {
        assert!(pair[1] - pair[0] >= h.delay.saturating_mul(2), "{times:?}");
    }
    assert_eq!(h.receiver.duplicate_bytes(), 0);
}

#[test]
fn tail_loss_is_repaired_by_timeouts_with_backoff() {
    for sack in [true, false] {
        // The last two segments are lost, and so is the first retransmission of the first one.
        let script = LossScript::none().seq(18 * MSS, 2).seq(19 * MSS, 1);
        let h = transfer(config(sack), 20, script);
        let stats = h.sender.stats();
        assert_eq!(
            (stats.timeouts, stats.fast_retransmits),
            (2, 0),
            "sack={sack}"
        );
        assert_eq!(h.retransmitted_seqs(), vec![18 * MSS, 18 * MSS, 19 * MSS]);
        let [first, second] = h.log.timeouts[..] else {
            panic!("{:?}", h.log.timeouts)
        };
        // The first timer ran one RTO from the last ACK that advanced the window.
        assert_eq!(first.at - first.last_progress, first.rto);
        // The second ran twice as long (RFC 6298 §5.5).
        assert_eq!(second.rto, first.rto.saturating_mul(2));
        assert_eq!(second.at - first.at, second.rto);
        assert_eq!(second.last_progress, first.last_progress);
        assert_eq!(h.sender.cc().congestion_events, 0);
        // The ACKs of the retransmissions carried no sample: the backoff is still in force.
        assert_eq!(h.sender.rtt_estimator().backoff_count(), 2);
    }
}

#[test]
fn tail_loss_behind_a_recovery_needs_no_timeout() {
    // All 60 segments are out before the losses are detected; nothing follows the last one.
    // With SACK the rescue retransmission (RFC 6675 NextSeg rule 4) resends it once the first
    // hole is repaired; NewReno resends it on the partial ACK.
    for sack in [true, false] {
        let script = LossScript::none().seq(50 * MSS, 1).seq(59 * MSS, 1);
        let h = transfer(config(sack), 60, script);
        let stats = h.sender.stats();
        assert_eq!(
            (stats.fast_retransmits, stats.timeouts),
            (1, 0),
            "sack={sack}"
        );
        assert_eq!(h.retransmitted_seqs(), vec![50 * MSS, 59 * MSS]);
        assert_eq!(h.receiver.duplicate_bytes(), 0);
    }
}

/// A fast retransmit reduces from at most the window (`TcpCore::ssthresh_basis`). Here a second
/// loss in the first window (45) keeps the first recovery going while new data sent during it
/// arrives, one of those segments (54) is lost too, and the next episode starts with the
/// segments SACKed above 54 still in FlightSize: 11 segments above the window of 20 the
/// sender keeps. RFC 5681's halving of such a FlightSize stays below the window, but a
/// controller that keeps more (MulTCP(N) keeps 1 − 1/(2N)) would "reduce" to a larger window.
#[test]
fn congestion_events_reduce_from_at_most_the_window() {
    let lost = [30, 45, 54];
    let script = lost
        .iter()
        .fold(LossScript::none(), |s, &k| s.seq(k * MSS, 1));
    let config = config(true);
    let cc = TestReno::fixed(config.mss, 20 * MSS);
    let h = Harness::new(config, cc, 300 * MSS, script).run();
    let cc = h.sender.cc();
    assert_eq!((cc.congestion_events, cc.timeouts), (2, 0));
    assert_eq!(cc.most_basis_above_cwnd, 0);
    assert_eq!(cc.last_flight, 20 * MSS);
}

#[test]
fn lost_fast_retransmission_is_repaired_by_the_timer() {
    for sack in [true, false] {
        let h = transfer(config(sack), 200, LossScript::none().seq(30 * MSS, 2));
        let stats = h.sender.stats();
        assert_eq!(
            (stats.fast_retransmits, stats.timeouts),
            (1, 1),
            "sack={sack}"
        );
        let cc = h.sender.cc();
        assert_eq!((cc.congestion_events, cc.timeouts), (1, 1));
        assert_eq!(
            cc.recovery_exits, 0,
            "the timeout, not an ACK, ended fast recovery"
        );
        let resent_30 = h
            .retransmitted_seqs()
            .iter()
            .filter(|&&s| s == 30 * MSS)
            .count();
        assert_eq!(resent_30, 2);
        // The timer expired one RTO after the cumulative ACK last moved (stuck at 30).
        let [timeout] = h.log.timeouts[..] else {
            panic!("{:?}", h.log.timeouts)
        };
        assert_eq!(timeout.at - timeout.last_progress, timeout.rto);
    }
}

#[test]
fn delayed_acks_halve_the_ack_count() {
    let config = TcpConfig {
        delayed_ack: true,
        ..config(true)
    };
    let h = transfer(config, 201, LossScript::none());
    let acks = h.log.acks;
    assert!((100..=103).contains(&acks), "{acks} ACKs for 201 segments");
    assert_eq!(h.receiver.acks_sent(), acks);
    assert_eq!(h.sender.stats().retransmitted_segments, 0);
}

#[test]
fn delayed_acks_with_losses_still_recover_quickly() {
    let config = TcpConfig {
        delayed_ack: true,
        ..config(true)
    };
    let script = LossScript::none().seq(40 * MSS, 1).seq(45 * MSS, 1);
    let h = transfer(config, 200, script);
    assert_eq!(h.sender.stats().timeouts, 0);
    assert_eq!(h.sender.stats().fast_retransmits, 1);
    assert_eq!(h.sender.stats().retransmitted_segments, 2);
}

#[test]
fn receive_window_limits_bytes_in_flight() {
    let config = TcpConfig {
        receive_buffer: 4 * MSS,
        ..config(true)
    };
    let h = transfer(config, 100, LossScript::none());
    assert_eq!(h.log.max_outstanding, 4 * MSS);
    // Limited by the peer, never by cwnd: the window did not grow from its initial 10 MSS.
    assert_eq!(h.sender.cwnd(), 10 * MSS);
    assert!(!h.sender.cc().last_sample.unwrap().is_cwnd_limited);

    // With a loss the receiver's window shrinks by what it queues out of order; the sender
    // still never has more than the buffer outstanding (checked at every step) and recovers.
    let h = transfer(config, 100, LossScript::none().seq(20 * MSS, 1));
    assert_eq!(h.sender.stats().retransmitted_segments, 1);
    assert!(h.log.max_outstanding <= 4 * MSS);
}

#[test]
fn fixed_window_is_respected() {
    let config = config(true);
    let cc = TestReno::fixed(config.mss, 6 * MSS);
    let h = Harness::new(config, cc, 100 * MSS, LossScript::none()).run();
    assert_eq!(h.log.max_outstanding, 6 * MSS);
}

#[test]
fn runs_are_deterministic() {
    let script = || LossScript::pattern((0..300).map(|i| i % 7 == 3).collect());
    let a = transfer(config(true), 150, script());
    let b = transfer(config(true), 150, script());
    assert_eq!(a.log, b.log);
    assert_eq!(a.sender.stats(), b.sender.stats());
    assert!(a.log.dropped_segments > 0);
}

/// SACK with RACK-TLP (RFC 8985).
fn rack(sack: bool) -> TcpConfig {
    TcpConfig {
        rack_tlp: true,
        ..config(sack)
    }
}

/// The harness's round trip without queueing: both delays and one full segment's
/// serialisation.
fn base_rtt(h: &Harness) -> SimTime {
    h.delay.saturating_mul(2) + h.rate.tx_time(MSS + TCP_IP_HEADER_BYTES as u64)
}

#[test]
fn rack_repairs_a_lost_fast_retransmission_without_a_timeout() {
    // Segment 30 is lost, and so is its fast retransmission. Without RACK only the timer finds
    // the second loss (see `lost_fast_retransmission_is_repaired_by_the_timer`).
    let script = || LossScript::none().seq(30 * MSS, 2);
    let off = transfer(config(true), 200, script());
    assert_eq!(off.sender.stats().timeouts, 1);
    assert!(off.sender.rack().is_none());

    let h = transfer(rack(true), 200, script());
    let stats = h.sender.stats();
    assert_eq!((stats.fast_retransmits, stats.timeouts), (1, 0));
    // One episode; the lost retransmission brings the controller a second reduction (RFC 8985
    // §9.3, without PRR), where the timer would have brought a timeout.
    let cc = h.sender.cc();
    assert_eq!(
        (cc.congestion_events, cc.recovery_exits, cc.timeouts),
        (2, 1, 0)
    );
    let counts = h.sender.rack().unwrap().stats();
    assert_eq!(counts.retransmission_loss_responses, 1);
    let resent: Vec<SimTime> = h
        .log
        .retransmissions
        .iter()
        .filter(|&&(_, seq)| seq == 30 * MSS)
        .map(|&(t, _)| t)
        .collect();
    let [first, second] = resent[..] else {
        panic!("{:?}", h.log.retransmissions)
    };
    // The second retransmission follows the first by about a round trip (the ACKs of data
    // sent after it), not by an RTO.
    let gap = second - first;
    assert!(gap < base_rtt(&h).saturating_mul(3), "{gap}");
    assert!(gap < h.sender.rto(), "{gap}");
    assert!(counts.lost_retransmissions >= 1, "{counts:?}");
    assert_eq!(h.receiver.duplicate_bytes(), 0);
    // Repaired long before the timer fired without RACK. (The whole transfer, though, is not
    // shorter here: the second reduction leaves a smaller window for the rest of it.)
    assert!(off.log.timeouts[0].at - second > SimTime(h.sender.rto().as_nanos() / 2));

    // With PRR the window already follows delivery: no second reduction.
    let prr = TcpConfig {
        recovery_window: RecoveryWindow::Prr,
        ..rack(true)
    };
    let h = transfer(prr, 200, script());
    assert_eq!(h.sender.stats().timeouts, 0);
    assert_eq!(h.sender.cc().congestion_events, 1);
    assert!(h.log.finished_at < off.log.finished_at);
    assert_eq!(
        h.retransmitted_seqs()
            .iter()
            .filter(|&&s| s == 30 * MSS)
            .count(),
        2
    );
}

#[test]
fn rack_finds_a_lost_go_back_n_retransmission_without_a_second_timeout() {
    // The last four segments are lost, and so is the probe resending segment 19: the timer
    // fires. Of the go-back-N retransmissions, the one of segment 17 is lost again while the
    // one of segment 18, sent with it, arrives. RACK sees 18 delivered and 17 not, and resends
    // 17 a round trip later; without RACK the loss waits for the backed-off timer.
    let script = || {
        LossScript::none()
            .seq(16 * MSS, 1)
            .seq(17 * MSS, 2)
            .seq(18 * MSS, 1)
            .seq(19 * MSS, 2)
    };
    let off = transfer(config(true), 20, script());
    assert_eq!(off.sender.stats().timeouts, 2);

    let h = transfer(rack(true), 20, script());
    let [timeout] = h.log.timeouts[..] else {
        panic!("{:?}", h.log.timeouts)
    };
    let resent_17: Vec<SimTime> = h
        .log
        .retransmissions
        .iter()
        .filter(|&&(t, seq)| seq == 17 * MSS && t > timeout.at)
        .map(|&(t, _)| t)
        .collect();
    let [go_back_n, repair] = resent_17[..] else {
        panic!("{:?}", h.log.retransmissions)
    };
    assert!(repair - go_back_n <= base_rtt(&h).saturating_mul(2));
    let rack = h.sender.rack().unwrap().stats();
    assert!(rack.lost_retransmissions >= 1, "{rack:?}");
    assert_eq!(
        h.sender.stats().fast_retransmits,
        0,
        "no fast recovery after a timeout"
    );
    assert!(h.log.finished_at < off.log.timeouts[1].at);
}

#[test]
fn rack_tlp_repairs_a_tail_loss_with_a_probe_after_two_round_trips() {
    // The last two segments of the transfer are lost: nothing follows them to produce
    // duplicate ACKs.
    let script = || LossScript::none().seq(18 * MSS, 1).seq(19 * MSS, 1);
    let off = transfer(config(true), 20, script());
    assert_eq!(
        off.sender.stats().timeouts,
        1,
        "without TLP the timer fires"
    );

    let h = transfer(rack(true), 20, script());
    let stats = h.sender.stats();
    assert_eq!(stats.timeouts, 0, "{:?}", h.log.timeouts);
    let rack = h.sender.rack().unwrap().stats();
    assert_eq!(
        (rack.probes, rack.probe_retransmissions),
        (1, 1),
        "{rack:?}"
    );
    // The probe resends the highest segment two SRTTs after the last ACK; its SACK lets RACK
    // find segment 18 lost, which starts fast recovery.
    assert_eq!(h.retransmitted_seqs(), vec![19 * MSS, 18 * MSS]);
    let [(probe_at, _), (repair_at, _)] = h.log.retransmissions[..] else {
        unreachable!()
    };
    // The ACK of segment 17 was the last to move the window before the probe, and gave the
    // last RTT sample (the ACKs of retransmissions give none): the probe left 2 SRTT after it.
    let acked_17 = h.log.progress_before_retransmissions[0];
    assert_eq!(probe_at - acked_17, h.sender.srtt().saturating_mul(2));
    let rtt = base_rtt(&h);
    assert!(
        repair_at - probe_at <= rtt.saturating_mul(2),
        "one round trip after the probe"
    );
    assert_eq!(stats.fast_retransmits, 1);
    // Everything is over well before the first RTO would have fired.
    assert!(
        h.log.finished_at < off.log.timeouts[0].at,
        "{} vs {:?}",
        h.log.finished_at,
        off.log.timeouts
    );
    assert_eq!(h.sender.rtt_estimator().backoff_count(), 0);
}

#[test]
fn rack_tlp_probe_with_one_segment_out_stands_in_for_the_rto_and_counts_as_a_loss() {
    // Only the last segment is lost: one segment is in flight when the probe is scheduled, so
    // the probe waits for a delayed ACK too (2 SRTT + 200 ms), which the RTO caps: the probe
    // goes at the RTO's time in its place, with no backoff and no window collapse, and its
    // ACK (triggered by the probe itself) reports the repaired loss to the controller once.
    let script = || LossScript::none().seq(19 * MSS, 1);
    let off = transfer(config(true), 20, script());
    let [timeout] = off.log.timeouts[..] else {
        panic!("{:?}", off.log.timeouts)
    };
    let h = transfer(rack(true), 20, script());
    assert_eq!(h.sender.stats().timeouts, 0);
    let rack = h.sender.rack().unwrap().stats();
    assert_eq!((rack.probes, rack.probe_recoveries), (1, 1), "{rack:?}");
    assert_eq!(h.retransmitted_seqs(), vec![19 * MSS]);
    assert_eq!(h.log.retransmissions[0].0, timeout.at);
    let cc = h.sender.cc();
    assert_eq!(
        (cc.congestion_events, cc.recovery_exits, cc.timeouts),
        (1, 1, 0)
    );
    assert_eq!(h.sender.stats().fast_retransmits, 0);
    assert_eq!(h.sender.rtt_estimator().backoff_count(), 0);
}

#[test]
fn reordering_within_the_reordering_window_is_not_a_loss() {
    // Segment 40 takes half a millisecond longer than the segments behind it: two of them
    // (0.24 ms apart on the 50 Mbit/s link) overtake it, too few for three duplicate ACKs, and
    // it arrives within RACK's window of min_RTT / 4 (about 5 ms).
    let script = || LossScript::none().delay_seq(40 * MSS, SimTime::from_micros(500));
    for config in [config(true), rack(true)] {
        let h = transfer(config, 200, script());
        let stats = h.sender.stats();
        assert_eq!(
            (
                stats.retransmitted_segments,
                stats.fast_retransmits,
                stats.timeouts
            ),
            (0, 0, 0),
            "rack_tlp={}",
            config.rack_tlp
        );
        if let Some(rack) = h.sender.rack() {
            assert!(rack.reordering_seen(), "segment 40 arrived after 41 and 42");
            assert_eq!(rack.stats().marked_lost, 0);
        }
    }
}

#[test]
fn reordering_beyond_the_reordering_window_is_taken_for_a_loss_by_the_rack_timer() {
    // The second-to-last segment is late; only the last one overtakes it (one duplicate ACK).
    // 3 ms late is within the window (min_RTT / 4, about 5 ms); 8 ms late is not: the
    // reordering timer marks it lost and it is resent (spuriously), which without RACK never
    // happens.
    let script = |late_ms| LossScript::none().delay_seq(18 * MSS, SimTime::from_millis(late_ms));
    let h = transfer(rack(true), 20, script(3));
    assert_eq!(h.sender.stats().retransmitted_segments, 0);
    assert_eq!(h.sender.rack().unwrap().reo_deadline(), None);

    let off = transfer(config(true), 20, script(8));
    assert_eq!(off.sender.stats().retransmitted_segments, 0);
    let h = transfer(rack(true), 20, script(8));
    let rack = h.sender.rack().unwrap().stats();
    assert_eq!((rack.marked_lost, rack.reo_timeouts), (1, 1), "{rack:?}");
    assert_eq!(h.retransmitted_seqs(), vec![18 * MSS]);
    assert_eq!(h.sender.stats().fast_retransmits, 1);
    assert_eq!(h.sender.stats().timeouts, 0);
}

#[test]
fn rack_tlp_changes_nothing_without_loss_or_without_sack() {
    for segments in [1, 7, 300] {
        let off = transfer(config(true), segments, LossScript::none());
        let on = transfer(rack(true), segments, LossScript::none());
        assert_eq!(off.log, on.log, "{segments} segments");
        assert_eq!(on.sender.rack().unwrap().stats(), Default::default());
    }
    // RACK-TLP needs SACK: without it the setting is ignored.
    let script = || LossScript::pattern((0..300).map(|i| i % 7 == 3).collect());
    let off = transfer(config(false), 150, script());
    let on = transfer(rack(false), 150, script());
    assert!(on.sender.rack().is_none());
    assert_eq!(off.log, on.log);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    /// Random loss (up to 20 % of the first 600 transmissions) on finite transfers of random
    /// size, with and without SACK, delayed ACKs and a small receive buffer: every transfer
    /// completes with every byte delivered in order exactly once (the harness checks the
    /// invariants after every event).
    #[test]
    fn random_losses_always_deliver_everything_once(
        sack in any::<bool>(),
        delayed_ack in any::<bool>(),
        small_buffer in any::<bool>(),
        mss in prop_oneof![Just(536u32), Just(1460u32)],
        app_bytes in 1u64..250_000,
        loss_percent in 0u8..=20,
        draws in proptest::collection::vec(0u8..100, 600),
    ) {
        let receive_buffer = if small_buffer { 6 * mss as u64 + 17 } else { 1 << 20 };
        let config = TcpConfig { mss, sack, delayed_ack, receive_buffer, ..TcpConfig::default() };
        let pattern = draws.iter().map(|&d| d < loss_percent).collect();
        let cc = TestReno::new(mss, config.initial_window);
        let h = Harness::new(config, cc, app_bytes, LossScript::pattern(pattern)).run();
        prop_assert_eq!(h.receiver.delivered_bytes(), app_bytes);
        if h.log.dropped_segments == 0 {
            prop_assert_eq!(h.sender.stats().retransmitted_segments, 0);
        }
    }

    /// The same with RACK-TLP, and with reordering: some transmissions (up to 10 %) are
    /// delayed by up to 3 ms (up to a dozen segments overtake them). Every byte is delivered in
    /// order exactly once, every invariant of the harness holds after every event, the timers
    /// are all stopped at the end, and without loss or reordering nothing is resent but
    /// (with delayed ACKs) a probe.
    #[test]
    fn random_losses_and_reordering_with_rack_tlp_deliver_everything_once(
        delayed_ack in any::<bool>(),
        small_buffer in any::<bool>(),
        mss in prop_oneof![Just(536u32), Just(1460u32)],
        app_bytes in 1u64..250_000,
        loss_percent in 0u8..=20,
        reorder_percent in 0u8..=10,
        draws in proptest::collection::vec((0u8..100, 0u8..100, 0u16..3000), 600),
    ) {
        let receive_buffer = if small_buffer { 6 * mss as u64 + 17 } else { 1 << 20 };
        let config = TcpConfig {
            mss,
            delayed_ack,
            receive_buffer,
            rack_tlp: true,
            ..TcpConfig::default()
        };
        let pattern = draws.iter().map(|&(d, _, _)| d < loss_percent).collect();
        let delays = draws
            .iter()
            .map(|&(_, r, us)| {
                if r < reorder_percent { SimTime::from_micros(us as u64) } else { SimTime::ZERO }
            })
            .collect();
        let cc = TestReno::new(mss, config.initial_window);
        let script = LossScript::pattern(pattern).delays(delays);
        let h = Harness::new(config, cc, app_bytes, script).run();
        prop_assert_eq!(h.receiver.delivered_bytes(), app_bytes);
        let rack = h.sender.rack().unwrap();
        if h.log.dropped_segments == 0 && reorder_percent == 0 {
            // Nothing is lost, but a probe may be: with delayed ACKs an ACK can take longer
            // than the 2 SRTT a probe waits when more than one segment is in flight (a short
            // last segment, which the receiver does not acknowledge at once).
            prop_assert_eq!(rack.stats().marked_lost, 0);
            prop_assert_eq!(h.sender.stats().timeouts, 0);
            prop_assert_eq!(
                h.sender.stats().retransmitted_segments,
                rack.stats().probe_retransmissions
            );
            if !delayed_ack {
                prop_assert_eq!(rack.stats().probes, 0);
            }
        }
        prop_assert_eq!(rack.reo_deadline(), None);
        prop_assert_eq!(rack.pto_deadline(), None);
        prop_assert_eq!(rack.segments_outstanding(), 0);
    }
}
