//! A TFRC-family flow as a [`Transport`]: the [`TfrcSender`]'s rate control pacing data
//! packets on path 0, and the [`TfrcReceiver`] at the other end answering with feedback.
//!
//! Unreliable by default, as RFC 5348 (every packet carries new data; the sink counts what
//! arrives). With `reliable`, the flow moves a byte stream: each packet carries a data
//! sequence number, the receiver delivers in order, sends a NACK for every packet its loss
//! detection declares lost and acknowledges cumulatively in every feedback; the sender resends
//! NACKed data before new data, at the allowed rate (a retransmission is a packet like any
//! other, so it counts in the loss history and the rate). A lost NACK, or a loss at the tail
//! that no later packet reveals, is repaired by resending the first unacknowledged segment
//! once every two RTTs while the sender has nothing else to send.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::receiver::{Report, TfrcReceiver};
use super::sender::TfrcSender;
use super::{feedback, report_of, TfrcData, TfrcFeedback, TfrcNack, FEEDBACK_OPTION_BYTES};
use crate::ids::PathId;
use crate::packet::Header;
use crate::time::SimTime;
use crate::transport::{
    Direction, FlowChange, Outbox, PathState, Transmit, Transport, TransportEvent, TransportStats,
};

const PATH: PathId = PathId(0);

/// How a TFRC-family flow moves data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowConfig {
    /// Segment size s (payload bytes per data packet).
    pub segment_bytes: u32,
    /// Header bytes added to every packet on the wire.
    pub header_bytes: u32,
    /// Retransmit lost packets and deliver a byte stream in order.
    pub reliable: bool,
    /// Size of the transfer (reliable flows; `None`: unbounded).
    pub app_bytes: Option<u64>,
}

/// Source and sink of a TFRC, MulTFRC or CP flow.
pub struct TfrcFlow {
    kind: &'static str,
    config: FlowConfig,
    sender: TfrcSender,
    receiver: TfrcReceiver,
    /// Between start and stop.
    sending: bool,
    next_seq: u64,
    /// Next new data segment.
    next_data: u64,
    total_segments: Option<u64>,
    /// The receiver's cumulative acknowledgement as the sender last heard it (segments).
    acked: u64,
    /// Data segment carried by each transmission from `tx_base` (reliable flows).
    tx_data: VecDeque<u64>,
    tx_base: u64,
    resend: BTreeSet<u64>,
    last_probe: Option<SimTime>,
    /// Since when the sender has had nothing to send, if it has not.
    limited_since: Option<SimTime>,
    last_feedback: SimTime,
    // Receiver side of a reliable flow: next segment expected, segments held out of order.
    expected: u64,
    out_of_order: BTreeMap<u64, u32>,
    delivered_bytes: u64,
    retransmissions: u64,
    finished: bool,
    tracing: bool,
}

impl TfrcFlow {
    pub fn new(
        kind: &'static str,
        config: FlowConfig,
        sender: TfrcSender,
        receiver: TfrcReceiver,
    ) -> Self {
        let s = config.segment_bytes as u64;
        TfrcFlow {
            kind,
            config,
            sender,
            receiver,
            sending: false,
            next_seq: 0,
            next_data: 0,
            total_segments: config.app_bytes.map(|b| b.div_ceil(s)),
            acked: 0,
            tx_data: VecDeque::new(),
            tx_base: 0,
            resend: BTreeSet::new(),
            last_probe: None,
            limited_since: None,
            last_feedback: SimTime::ZERO,
            expected: 0,
            out_of_order: BTreeMap::new(),
            delivered_bytes: 0,
            retransmissions: 0,
            finished: false,
            tracing: false,
        }
    }

    pub fn sender(&self) -> &TfrcSender {
        &self.sender
    }
    pub fn receiver(&self) -> &TfrcReceiver {
        &self.receiver
    }
    pub fn config(&self) -> &FlowConfig {
        &self.config
    }
    /// Data packets sent (retransmissions included).
    pub fn sent_packets(&self) -> u64 {
        self.next_seq
    }

    /// Payload bytes of data segment `d`.
    fn segment_len(&self, d: u64) -> u32 {
        let s = self.config.segment_bytes;
        match self.config.app_bytes {
            Some(total) => (total - d * s as u64).min(s as u64) as u32,
            None => s,
        }
    }

    /// The RTT the tail probe waits for: twice R, or a second before R is known.
    fn probe_interval(&self) -> SimTime {
        self.sender
            .rtt()
            .map_or(SimTime::from_secs(1), |r| SimTime::from_secs_f64(2.0 * r))
    }

    fn has_new_data(&self) -> bool {
        self.sending && self.total_segments.is_none_or(|t| self.next_data < t)
    }

    /// The next segment to send now, if any: (segment, is a retransmission).
    fn next_segment(&mut self, now: SimTime) -> Option<(u64, bool)> {
        if self.config.reliable {
            while let Some(d) = self.resend.pop_first() {
                if d >= self.acked {
                    return Some((d, true));
                }
            }
        }
        if self.has_new_data() {
            let d = self.next_data;
            self.next_data += 1;
            return Some((d, false));
        }
        if self.config.reliable && self.acked < self.next_data && !self.finished {
            let due = self
                .last_probe
                .is_none_or(|t| now >= t.saturating_add(self.probe_interval()));
            if due {
                self.last_probe = Some(now);
                return Some((self.acked, true));
            }
        }
        None
    }

    /// Sends every data packet due at `now`.
    fn send_due(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        while self.sender.next_send(now) <= now {
            let Some((d, resent)) = self.next_segment(now) else {
                self.limited_since.get_or_insert(now);
                return;
            };
            self.limited_since = None;
            let len = self.segment_len(d);
            if self.config.reliable {
                self.tx_data.push_back(d);
            }
            if resent {
                self.retransmissions += 1;
            }
            let rtt = self
                .sender
                .rtt()
                .map_or(SimTime::ZERO, SimTime::from_secs_f64);
            out.send(Transmit {
                path: PATH,
                direction: Direction::Forward,
                size_bytes: len + self.config.header_bytes,
                header: Header::TfrcData(TfrcData {
                    seq: self.next_seq,
                    sent_at: now,
                    rtt,
                    data: d,
                    len,
                }),
            });
            self.next_seq += 1;
            self.sender.on_sent(now);
        }
    }

    /// When the sender next wants to send, if it has anything.
    fn send_deadline(&self, now: SimTime) -> Option<SimTime> {
        let resend = self.config.reliable && !self.resend.is_empty();
        if resend || self.has_new_data() {
            return Some(self.sender.next_send(now));
        }
        if self.config.reliable && self.acked < self.next_data && !self.finished {
            let probe = self
                .last_probe
                .map_or(now, |t| t.saturating_add(self.probe_interval()));
            return Some(probe.max(self.sender.next_send(now)));
        }
        None
    }

    fn feedback(&self, report: Report, out: &mut Outbox<'_>) {
        out.send(Transmit {
            path: PATH,
            direction: Direction::Reverse,
            size_bytes: self.config.header_bytes + FEEDBACK_OPTION_BYTES,
            header: Header::TfrcFeedback(feedback(&report, self.expected)),
        });
    }

    fn on_data(&mut self, now: SimTime, d: &TfrcData, out: &mut Outbox<'_>) {
        let outcome = self.receiver.on_data(now, d.seq, d.sent_at, d.rtt, d.len);
        if self.config.reliable {
            for i in 0..self.receiver.newly_lost().len() {
                let seq = self.receiver.newly_lost()[i];
                out.send(Transmit {
                    path: PATH,
                    direction: Direction::Reverse,
                    size_bytes: self.config.header_bytes + 8,
                    header: Header::TfrcNack(TfrcNack {
                        seq,
                        cumulative: self.expected,
                    }),
                });
            }
        }
        let delivered = if self.config.reliable {
            self.deliver_in_order(d.data, d.len)
        } else if outcome.new {
            d.len as u64
        } else {
            0
        };
        self.delivered_bytes += delivered;
        if self.tracing && delivered > 0 {
            out.report(TransportEvent::Delivered {
                path: PATH,
                bytes: delivered as u32,
            });
        }
        if outcome.feedback_now || (outcome.new && self.receiver.has_no_timer()) {
            let r = self.receiver.report_now(now);
            self.feedback(r, out);
        }
    }

    /// Reliable receiver: in-order delivery; returns the bytes made readable.
    fn deliver_in_order(&mut self, d: u64, len: u32) -> u64 {
        if d < self.expected || self.out_of_order.contains_key(&d) {
            return 0;
        }
        if d > self.expected {
            self.out_of_order.insert(d, len);
            return 0;
        }
        let mut bytes = len as u64;
        self.expected += 1;
        while let Some(len) = self.out_of_order.remove(&self.expected) {
            bytes += len as u64;
            self.expected += 1;
        }
        bytes
    }

    fn on_acknowledged(&mut self, cumulative: u64, out: &mut Outbox<'_>) {
        if cumulative <= self.acked {
            return;
        }
        self.acked = cumulative;
        while self.tx_data.front().is_some_and(|&d| d < cumulative) {
            self.tx_data.pop_front();
            self.tx_base += 1;
        }
        if self.total_segments.is_some_and(|t| cumulative >= t) && !self.finished {
            self.finished = true;
            out.report(TransportEvent::Finished);
        }
    }

    fn on_feedback(&mut self, now: SimTime, f: &TfrcFeedback, out: &mut Outbox<'_>) {
        let data_limited = self.limited_since.is_some_and(|t| t <= self.last_feedback);
        self.last_feedback = now;
        let rtt = self.sender.on_feedback(now, &report_of(f), data_limited);
        out.report(TransportEvent::RttSample { path: PATH, rtt });
        if self.config.reliable {
            self.on_acknowledged(f.cumulative, out);
        }
        self.send_due(now, out);
    }

    fn on_nack(&mut self, now: SimTime, n: &TfrcNack, out: &mut Outbox<'_>) {
        self.on_acknowledged(n.cumulative, out);
        if n.seq >= self.tx_base {
            if let Some(&d) = self.tx_data.get((n.seq - self.tx_base) as usize) {
                if d >= self.acked {
                    self.resend.insert(d);
                }
            }
        }
        self.send_due(now, out);
    }
}

impl Transport for TfrcFlow {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn handle_start(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.sending = true;
        self.send_due(now, out);
    }

    fn handle_stop(&mut self, _now: SimTime, _out: &mut Outbox<'_>) {
        self.sending = false;
        if !self.config.reliable {
            self.resend.clear();
        }
    }

    fn handle_packet(
        &mut self,
        now: SimTime,
        _path: PathId,
        _dir: Direction,
        header: &Header,
        out: &mut Outbox<'_>,
    ) {
        match header {
            Header::TfrcData(d) => self.on_data(now, d, out),
            Header::TfrcFeedback(f) => self.on_feedback(now, f, out),
            Header::TfrcNack(n) => self.on_nack(now, n, out),
            _ => {}
        }
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        if self.receiver.is_report_due(now) {
            if let Some(r) = self.receiver.on_report_timer(now) {
                self.feedback(r, out);
            }
        }
        if self.sender.is_nofeedback_due(now) {
            self.sender.on_nofeedback_timer(now);
            out.report(TransportEvent::Timeout { path: PATH });
        }
        self.send_due(now, out);
    }

    fn handle_change(&mut self, now: SimTime, change: &FlowChange, out: &mut Outbox<'_>) {
        if let Some(n) = change.as_number("n") {
            self.sender.set_flows(n);
            self.receiver.set_flows(n);
            self.send_due(now, out);
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        // `now` is not known here: a send deadline is the sender's next nominal time.
        let send = self.send_deadline(SimTime::ZERO);
        [
            send,
            self.sender.nofeedback_at(),
            self.receiver.next_report(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn set_tracing(&mut self, enabled: bool) {
        self.tracing = enabled;
    }

    fn stats(&self) -> TransportStats {
        TransportStats {
            delivered_bytes: self.delivered_bytes,
            retransmissions: self.retransmissions,
            fast_retransmits: 0,
            timeouts: self.sender.nofeedback_expiries(),
        }
    }

    fn path_state(&self, _path: Option<PathId>) -> PathState {
        PathState {
            srtt: self.sender.rtt().map(SimTime::from_secs_f64),
            ..PathState::default()
        }
    }

    /// The columns the TFRC family declares (`crate::protocol::tfrc::COLUMNS`): the allowed
    /// rate X (bit/s), the loss event rate p it follows and the packets lost per loss event j
    /// the sender last heard.
    fn column(&self, name: &str) -> Option<f64> {
        match name {
            "allowed_rate_bps" => Some(self.sender.rate() * 8.0),
            "loss_event_rate" => Some(self.sender.loss_event_rate()),
            "packets_per_loss_event" => Some(self.sender.packets_per_loss_event()),
            _ => None,
        }
    }
}
