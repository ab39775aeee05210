//! A single-path TCP connection as a [`Transport`]: a sender (with its congestion controller
//! and a bulk source of finite or unbounded size) at the flow's source, a receiver at its sink,
//! on path 0.
//!
//! It keeps the work per packet small: after a data segment arrives only the receiver can have
//! something to send, after an ACK only the sender, so each input asks only the end that
//! handled it (the other's state did not change) and puts what it sends into the outbox. Before the start and after
//! the stop what the sender does depends on [`StopMode`]: by default it sends no new data but
//! goes on repairing what is in flight (retransmissions, its timer) until all of it is
//! acknowledged; [`StopMode::Abort`] silences it at once (no retransmission, no timer). ACKs
//! still update it either way.

use crate::ids::PathId;
use crate::packet::{AckSegment, Header};
use crate::time::SimTime;
use crate::transport::cc::Controller;
use crate::transport::host_noise::HostNoise;
use crate::transport::{
    Direction, Outbox, PathState, Transmit, Transport, TransportEvent, TransportStats,
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
    finished: bool,
    tracing: bool,
    /// Host timing noise: the packets the ends send leave when it releases them.
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
            finished: false,
            tracing: false,
            noise: None,
        }
    }

    /// Delays the packets of both ends by host timing noise ([`HostNoise`]), if given.
    pub fn with_host_noise(mut self, noise: Option<Box<HostNoise>>) -> Self {
        self.noise = noise;
        self
    }

    /// The sender's next segment now, while `window_open`: it stays open until the sender has
    /// nothing to send or a segment filled the window (nothing reaches the sender before its
    /// next input, so it would find nothing more to send).
    #[inline(always)]
    fn next_data(&mut self, now: SimTime, window_open: &mut bool) -> Option<Transmit> {
        if !*window_open || !self.is_active() {
            return None;
        }
        let Some(seg) = self.sender.poll_transmit(now) else {
            *window_open = false;
            return None;
        };
        *window_open = !self.sender.window_filled();
        Some(Transmit {
            path: PATH,
            direction: Direction::Forward,
            size_bytes: seg.len + self.header_bytes,
            header: Header::TcpData(seg),
        })
    }

    /// The ACKs the receiver owes now, in order.
    #[inline(always)]
    fn next_ack(&mut self, now: SimTime) -> Option<Transmit> {
        let ack = self.receiver.poll_transmit(now)?;
        Some(Transmit {
            path: PATH,
            direction: Direction::Reverse,
            size_bytes: self.header_bytes + ack.sack.option_bytes(),
            header: Header::TcpAck(ack),
        })
    }

    /// What the ends send after an input, the sender's (if `sender`) then the receiver's (if
    /// `receiver`): into the outbox, through the host noise if any.
    #[inline(always)]
    fn flush(&mut self, now: SimTime, sender: bool, receiver: bool, out: &mut Outbox<'_>) {
        // Only the sender's segments are offered to a local queue: without them `flush_local`
        // sends the ACKs as this does (a constant `sender` leaves the question out).
        if sender && out.has_local() {
            return self.flush_local(now, sender, receiver, out);
        }
        match &self.noise {
            None => {
                let mut window_open = sender;
                while let Some(x) = self.next_data(now, &mut window_open) {
                    out.send(x);
                }
            }
            // Noise at the receiver too: every packet through it.
            Some(noise) if !noise.receiver_is_exact() => {
                return self.flush_through_noise(now, sender, receiver, out);
            }
            // Send jitter alone: the data through the noise, the ACKs at once as without it
            // (the noise would send each at once: its receiving end never delays).
            Some(_) => {
                if sender {
                    self.send_data_through_noise(now, out);
                }
            }
        }
        if receiver {
            // Each ACK is written where it lies in the pool (no copy of its SACK blocks).
            while self.receiver.ack_pending() {
                let (receiver, header_bytes) = (&mut self.receiver, self.header_bytes);
                out.send_with(
                    PATH,
                    Direction::Reverse,
                    #[inline(always)]
                    |header| header_bytes + receiver.write_ack(now, header),
                );
            }
        }
    }

    /// [`TcpFlow::flush`] for a sender behind its host's interface queue (a `local` link):
    /// each segment is offered to the queue before it is committed, and the sender stops at
    /// the first one the queue refuses ([`TcpSender::poll_transmit_gated`]); what is sent
    /// goes through the host noise as `flush` sends it (data first, then the ACKs).
    #[inline(never)]
    fn flush_local(&mut self, now: SimTime, sender: bool, receiver: bool, out: &mut Outbox<'_>) {
        if sender && self.is_active() {
            let header_bytes = self.header_bytes;
            while let Some(seg) = self
                .sender
                .poll_transmit_gated(now, &mut |len| out.refuses(PATH, len + header_bytes))
            {
                let filled = self.sender.window_filled();
                let x = Transmit {
                    path: PATH,
                    direction: Direction::Forward,
                    size_bytes: seg.len + header_bytes,
                    header: Header::TcpData(seg),
                };
                match self.noise.as_deref_mut() {
                    Some(noise) => noise.send(now, x, out),
                    None => out.send(x),
                }
                if filled {
                    break;
                }
            }
        }
        if receiver {
            while let Some(ack) = self.next_ack(now) {
                match self.noise.as_deref_mut() {
                    Some(noise) if !noise.receiver_is_exact() => noise.send(now, ack, out),
                    _ => out.send(ack),
                }
            }
        }
    }

    /// The sender's segments through the host noise (send jitter alone): what
    /// [`TcpFlow::flush_through_noise`] does for the sender, without the generic relay.
    #[inline(always)]
    fn send_data_through_noise(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        if !self.is_active() {
            return;
        }
        let Some(noise) = self.noise.as_deref_mut() else {
            return;
        };
        // As `next_data`: the window stays open until a segment fills it.
        while let Some(seg) = self.sender.poll_transmit(now) {
            let window_open = !self.sender.window_filled();
            let x = Transmit {
                path: PATH,
                direction: Direction::Forward,
                size_bytes: seg.len + self.header_bytes,
                header: Header::TcpData(seg),
            };
            noise.send(now, x, out);
            if !window_open {
                break;
            }
        }
    }

    /// [`TcpFlow::flush`] with host noise: what the ends send leaves when the noise releases
    /// it.
    #[inline(never)]
    fn flush_through_noise(
        &mut self,
        now: SimTime,
        sender: bool,
        receiver: bool,
        out: &mut Outbox<'_>,
    ) {
        let mut noise = self.noise.take().expect("flush_through_noise with noise");
        let mut window_open = sender;
        noise.relay(
            now,
            || {
                self.next_data(now, &mut window_open)
                    .or_else(|| receiver.then(|| self.next_ack(now)).flatten())
            },
            out,
        );
        self.noise = Some(noise);
    }

    /// The sender's handling of an ACK and what the flow reports of it, the RTT sample first.
    #[inline(always)]
    fn handle_ack(&mut self, now: SimTime, ack: &AckSegment, out: &mut Outbox<'_>) {
        let fast_retransmits = self.sender.stats().fast_retransmits;
        let outcome = self.sender.handle_ack(now, ack);
        if let Some(rtt) = outcome.rtt {
            out.report(TransportEvent::RttSample { path: PATH, rtt });
        }
        if self.sender.stats().fast_retransmits > fast_retransmits {
            out.report(TransportEvent::Loss { path: PATH });
        }
        if !self.finished && self.sender.is_finished() {
            self.finished = true;
            out.report(TransportEvent::Finished);
        }
        self.cwnd_event(out);
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
    fn cwnd_event(&self, out: &mut Outbox<'_>) {
        if self.tracing {
            self.push_cwnd(out);
        }
    }

    #[inline(never)]
    fn push_cwnd(&self, out: &mut Outbox<'_>) {
        out.report(TransportEvent::Cwnd {
            path: PATH,
            cwnd_bytes: self.sender.cwnd(),
        });
    }
}

impl Transport for TcpFlow {
    fn kind(&self) -> &'static str {
        "tcp"
    }

    fn handle_start(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.started = true;
        self.flush(now, true, true, out);
    }

    fn handle_stop(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        match self.stop_mode {
            StopMode::Finish => self.sender.close(),
            StopMode::Abort => self.stopped = true,
        }
        // Nothing to send after a stop (the sender only stops sending).
        self.flush(now, false, false, out);
    }

    fn set_tracing(&mut self, enabled: bool) {
        self.tracing = enabled;
    }

    /// Without delayed ACKs (and so without SACK compression) the receiver ACKs every
    /// segment at once, from its own state alone, and arms no timer; host noise at the
    /// receiving end would delay the ACK (noise at the sender alone does not), and tracing
    /// reports each delivery at its time.
    fn reacts_ahead(&self) -> bool {
        self.receiver.acks_at_once()
            && self.noise.as_ref().is_none_or(|n| n.receiver_is_exact())
            && !self.tracing
    }

    #[inline(always)]
    fn handle_packet(
        &mut self,
        now: SimTime,
        _path: PathId,
        _dir: Direction,
        header: &Header,
        out: &mut Outbox<'_>,
    ) {
        match header {
            Header::TcpData(seg) => {
                self.receiver.handle_data(now, seg);
                if self.tracing {
                    out.report(TransportEvent::Delivered {
                        path: PATH,
                        bytes: seg.len,
                    });
                }
                self.flush(now, false, true, out);
            }
            Header::TcpAck(ack) => {
                self.handle_ack(now, ack, out);
                self.flush(now, true, false, out);
            }
            _ => {}
        }
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        if self.is_active() && self.sender.poll_timeout().is_some_and(|t| t <= now) {
            let timeouts = self.sender.stats().timeouts;
            self.sender.handle_timeout(now);
            if self.sender.stats().timeouts > timeouts {
                out.report(TransportEvent::Timeout { path: PATH });
                self.cwnd_event(out);
            }
        }
        if self.receiver.poll_timeout().is_some_and(|t| t <= now) {
            self.receiver.handle_timeout(now);
        }
        self.flush(now, true, true, out);
    }

    #[inline(always)]
    fn poll_timeout(&self) -> Option<SimTime> {
        let s = if self.is_active() {
            self.sender.poll_timeout()
        } else {
            None
        };
        match (s, self.receiver.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
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
