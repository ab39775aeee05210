//! A single-path TCP connection as a [`Transport`]: a sender (with its congestion controller
//! and a bulk source of finite or unbounded size) at the flow's source, a receiver at its sink,
//! on path 0.
//!
//! It keeps the driver's work per packet small: after a data segment arrives only the receiver
//! can have something to send, after an ACK only the sender, so `poll_transmit` asks only the
//! end that handled an input (the other's state did not change). Before the start and after
//! the stop what the sender does depends on [`StopMode`]: by default it sends no new data but
//! goes on repairing what is in flight (retransmissions, its timer) until all of it is
//! acknowledged; [`StopMode::Abort`] silences it at once (no retransmission, no timer). ACKs
//! still update it either way.

use crate::ids::PathId;
use crate::packet::{AckSegment, DataSegment, Header};
use crate::time::SimTime;
use crate::transport::cc::Controller;
use crate::transport::host_noise::HostNoise;
use crate::transport::{
    Direction, EventBuffer, PathState, Transmit, Transport, TransportEvent, TransportStats,
};

use super::{TcpReceiver, TcpSender};

/// Path of a single-path connection.
const PATH: PathId = PathId(0);

/// What a TCP flow does when its application stops (the scenario's `stop`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StopMode {
    /// No new data; what was sent is still repaired until acknowledged.
    #[default]
    Finish,
    /// Nothing more is sent, not even retransmissions; the timer stops.
    Abort,
}

impl StopMode {
    /// Scenario names (`on_stop`), in declaration order.
    pub const NAMES: &'static [&'static str] = &["finish", "abort"];

    pub fn from_name(name: &str) -> Option<StopMode> {
        match name {
            "finish" => Some(StopMode::Finish),
            "abort" => Some(StopMode::Abort),
            _ => None,
        }
    }
}

/// Both ends of a TCP connection.
pub struct TcpFlow {
    sender: TcpSender<Controller>,
    receiver: TcpReceiver,
    /// IP + TCP header bytes without options, added to every segment.
    header_bytes: u32,
    started: bool,
    /// Aborted: the sender is silent.
    stopped: bool,
    stop_mode: StopMode,
    /// The sender handled an input since it last had nothing to send.
    poll_sender: bool,
    /// The receiver handled an input since it last had nothing to send.
    poll_receiver: bool,
    finished: bool,
    tracing: bool,
    events: EventBuffer,
    /// Host timing noise: packets wait here until their release time.
    noise: Option<Box<HostNoise>>,
}

impl TcpFlow {
    /// The path of every packet of the flow.
    pub const PATH: PathId = PATH;

    pub fn new(sender: TcpSender<Controller>, receiver: TcpReceiver) -> Self {
        TcpFlow {
            header_bytes: sender.config().header_bytes,
            sender,
            receiver,
            started: false,
            stopped: false,
            stop_mode: StopMode::default(),
            poll_sender: false,
            poll_receiver: false,
            finished: false,
            tracing: false,
            events: EventBuffer::default(),
            noise: None,
        }
    }

    /// Delays the packets of both ends by host timing noise ([`HostNoise`]), if given.
    pub fn with_host_noise(mut self, noise: Option<Box<HostNoise>>) -> Self {
        self.noise = noise;
        self
    }

    /// The next packet of either end, as the sender and receiver produce it.
    #[inline(always)]
    fn poll_ends(&mut self, now: SimTime) -> Option<Transmit> {
        if self.poll_sender {
            if self.is_active() {
                if let Some(seg) = self.sender.poll_transmit(now) {
                    // Nothing reaches the sender before its next poll: when this segment
                    // filled the window, that poll would find nothing to send.
                    self.poll_sender = !self.sender.window_filled();
                    return Some(Transmit {
                        path: PATH,
                        direction: Direction::Forward,
                        size_bytes: seg.len + self.header_bytes,
                        header: Header::TcpData(seg),
                    });
                }
            }
            self.poll_sender = false;
        }
        if self.poll_receiver {
            if let Some(ack) = self.receiver.poll_transmit(now) {
                self.poll_receiver = self.receiver.ack_pending();
                return Some(Transmit {
                    path: PATH,
                    direction: Direction::Reverse,
                    size_bytes: self.header_bytes + ack.sack.option_bytes(),
                    header: Header::TcpAck(ack),
                });
            }
            self.poll_receiver = false;
        }
        None
    }

    /// A data segment arrived at `now` at a flow that reacts ahead
    /// ([`Transport::reacts_ahead`]): the receiver handles it and hands each ACK it owes to
    /// `answer`, with its size on the wire. This is what handling the segment as an input and
    /// polling the flow until it has nothing to send gives, without the rounds of the
    /// generic contract: untraced the segment reports no event, and between inputs the sender
    /// has nothing to send (each input's polling drained it), so only the receiver answers.
    #[inline(always)]
    pub(crate) fn answer_data(
        &mut self,
        now: SimTime,
        seg: &DataSegment,
        mut answer: impl FnMut(AckSegment, u32),
    ) {
        debug_assert!(self.reacts_ahead() && !self.poll_sender && !self.poll_receiver);
        self.receiver.handle_data(now, seg);
        while let Some(ack) = self.receiver.poll_transmit(now) {
            answer(ack, self.header_bytes + ack.sack.option_bytes());
        }
    }

    /// Whether an ACK can be handled by [`TcpFlow::answer_ack`]: untraced, without host noise.
    #[inline(always)]
    pub(crate) fn answers_acks_directly(&self) -> bool {
        !self.tracing && self.noise.is_none()
    }

    /// An ACK arrived at `now` at a flow that [answers ACKs
    /// directly](TcpFlow::answers_acks_directly): the sender handles it and hands its RTT
    /// sample, if any, to `rtt_sample`; the other events it reports (a fast retransmit, the
    /// end of the transfer) wait in the event buffer. Then [`TcpFlow::send_after_ack`].
    /// Together they do what handling the ACK as an input and polling the flow until it has
    /// nothing to send does, the RTT sample apart (reported at once instead of after the
    /// segments): between inputs the receiver has nothing to send (each input's polling
    /// drained it), so only the sender answers an ACK.
    #[inline(always)]
    pub(crate) fn take_ack(
        &mut self,
        now: SimTime,
        ack: &AckSegment,
        mut rtt_sample: impl FnMut(SimTime),
    ) {
        debug_assert!(self.answers_acks_directly() && !self.poll_sender && !self.poll_receiver);
        self.handle_ack(now, ack, |_, rtt| rtt_sample(rtt));
    }

    /// After [`TcpFlow::take_ack`]: hands each segment the sender sends to `send`, with its
    /// size on the wire (`poll_ends` with only the sender to poll).
    #[inline(always)]
    pub(crate) fn send_after_ack(&mut self, now: SimTime, mut send: impl FnMut(DataSegment, u32)) {
        if self.is_active() {
            while let Some(seg) = self.sender.poll_transmit(now) {
                send(seg, seg.len + self.header_bytes);
                if self.sender.window_filled() {
                    break;
                }
            }
        }
    }

    /// The sender's handling of an ACK and what the flow reports of it, the RTT sample to
    /// `on_rtt` (with the event buffer), first.
    #[inline(always)]
    fn handle_ack(
        &mut self,
        now: SimTime,
        ack: &AckSegment,
        on_rtt: impl FnOnce(&mut EventBuffer, SimTime),
    ) {
        let fast_retransmits = self.sender.stats().fast_retransmits;
        let outcome = self.sender.handle_ack(now, ack);
        if let Some(rtt) = outcome.rtt {
            on_rtt(&mut self.events, rtt);
        }
        if self.sender.stats().fast_retransmits > fast_retransmits {
            self.events.push(TransportEvent::Loss { path: PATH });
        }
        if !self.finished && self.sender.is_finished() {
            self.finished = true;
            self.events.push(TransportEvent::Finished);
        }
        self.cwnd_event();
        // The receiver of a bulk flow measures no RTT of its own; Linux's receiver
        // estimates one from timestamps. The sender's smoothed RTT stands for it.
        if outcome.rtt.is_some() {
            self.receiver.set_rtt_hint(self.sender.srtt());
        }
    }

    /// What the flow does at its stop time.
    pub fn with_stop_mode(mut self, mode: StopMode) -> Self {
        self.stop_mode = mode;
        self
    }

    pub fn sender(&self) -> &TcpSender<Controller> {
        &self.sender
    }
    pub fn receiver(&self) -> &TcpReceiver {
        &self.receiver
    }

    /// Started and not stopped: the sender may send and its timer runs.
    fn is_active(&self) -> bool {
        self.started && !self.stopped
    }

    #[inline]
    fn cwnd_event(&mut self) {
        if self.tracing {
            self.push_cwnd();
        }
    }

    #[inline(never)]
    fn push_cwnd(&mut self) {
        self.events.push(TransportEvent::Cwnd {
            path: PATH,
            cwnd_bytes: self.sender.cwnd(),
        });
    }
}

impl Transport for TcpFlow {
    fn kind(&self) -> &'static str {
        "tcp"
    }

    fn handle_start(&mut self, _now: SimTime) {
        self.started = true;
        self.poll_sender = true;
        self.poll_receiver = true;
    }

    fn handle_stop(&mut self, _now: SimTime) {
        match self.stop_mode {
            StopMode::Finish => self.sender.close(),
            StopMode::Abort => self.stopped = true,
        }
    }

    fn set_tracing(&mut self, enabled: bool) {
        self.tracing = enabled;
    }

    /// Without delayed ACKs (and so without SACK compression) the receiver ACKs every
    /// segment at once, from its own state alone, and arms no timer; host noise would delay
    /// the ACK, and tracing reports each delivery at its time.
    fn reacts_ahead(&self) -> bool {
        self.receiver.acks_at_once() && self.noise.is_none() && !self.tracing
    }

    #[inline(always)]
    fn handle_packet(&mut self, now: SimTime, _path: PathId, _dir: Direction, header: &Header) {
        match header {
            Header::TcpData(seg) => {
                self.receiver.handle_data(now, seg);
                if self.tracing {
                    self.events.push(TransportEvent::Delivered {
                        path: PATH,
                        bytes: seg.len,
                    });
                }
                self.poll_receiver = true;
            }
            Header::TcpAck(ack) => {
                self.handle_ack(now, ack, |events, rtt| {
                    events.push(TransportEvent::RttSample { path: PATH, rtt })
                });
                self.poll_sender = true;
            }
            _ => {}
        }
    }

    fn handle_timeout(&mut self, now: SimTime) {
        if self.is_active() && self.sender.poll_timeout().is_some_and(|t| t <= now) {
            let timeouts = self.sender.stats().timeouts;
            self.sender.handle_timeout(now);
            if self.sender.stats().timeouts > timeouts {
                self.events.push(TransportEvent::Timeout { path: PATH });
                self.cwnd_event();
            }
        }
        if self.receiver.poll_timeout().is_some_and(|t| t <= now) {
            self.receiver.handle_timeout(now);
        }
        self.poll_sender = true;
        self.poll_receiver = true;
    }

    #[inline(always)]
    fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if self.noise.is_none() {
            return self.poll_ends(now);
        }
        while let Some(x) = self.poll_ends(now) {
            let end = usize::from(x.direction == Direction::Reverse);
            self.noise.as_mut().expect("checked").admit(now, end, x);
        }
        self.noise.as_mut().expect("checked").poll(now)
    }

    #[inline(always)]
    fn poll_timeout(&self) -> Option<SimTime> {
        let s = if self.is_active() {
            self.sender.poll_timeout()
        } else {
            None
        };
        let ends = match (s, self.receiver.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (ends, self.noise.as_ref().and_then(|n| n.next_release())) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    #[inline(always)]
    fn poll_event(&mut self) -> Option<TransportEvent> {
        self.events.pop()
    }

    fn stats(&self) -> TransportStats {
        let s = self.sender.stats();
        TransportStats {
            delivered_bytes: self.receiver.delivered_bytes(),
            retransmissions: s.retransmitted_segments,
            fast_retransmits: s.fast_retransmits,
            timeouts: s.timeouts,
        }
    }

    fn path_state(&self, _path: Option<PathId>) -> PathState {
        PathState {
            cwnd_bytes: Some(self.sender.cwnd()),
            srtt: Some(self.sender.srtt()),
            ..PathState::default()
        }
    }
}
