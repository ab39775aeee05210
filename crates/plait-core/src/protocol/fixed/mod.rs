//! `fixed`: a sender with a constant window of W segments and go-back-N repair, for tests.
//!
//! The sender keeps at most `window` segments outstanding, whatever happens: no slow start,
//! no reaction to loss but the retransmission timer. The receiver accepts segments in order
//! only, discards the others and answers every arrival with a cumulative acknowledgement (the
//! next segment it expects) that echoes the segment's send time. When the timer fires, the
//! sender goes back to the oldest unacknowledged segment and sends the window again from there:
//! go-back-N ARQ (Tanenbaum and Wetherall, *Computer Networks*, 5th ed., §3.4.2, "Go-back-n").
//! The timer is armed when a segment leaves with none outstanding and restarted by every ACK
//! that advances the window (RFC 6298 §5.1 and §5.3), its length the fixed `rto`.
//!
//! A window-limited flow of W segments over a path whose round trip is R (propagation,
//! serialisation of a segment and of its ACK) and never queued delivers W · segment_size every
//! R: its goodput is W · segment_size · 8 / R bit/s (tests check this exactly).
//!
//! It is also the example of a protocol declared whole in one folder: the declaration
//! ([`PROTOCOL`]), its transport ([`FixedWindow`], built into
//! [`AnyTransport::Custom`](crate::transport::AnyTransport::Custom)) and its header (a
//! [`CustomHeader`]) live here, and `crate::protocol` lists it with one line.

use super::{Built, Missing, Paths, ProtocolSpec};
use crate::ids::PathId;
use crate::packet::{CustomHeader, Header, MAX_PACKET_BYTES};
use crate::registry::{AlgorithmSpec, Param, Params, Scalar};
use crate::time::SimTime;
use crate::transport::{
    AnyTransport, Direction, Outbox, PathState, Transmit, Transport, TransportEvent, TransportStats,
};

/// The declaration of `fixed`: one path, acknowledged, nothing that changes during a run.
pub const PROTOCOL: ProtocolSpec = ProtocolSpec {
    source: SPEC,
    section: None,
    paths: Paths::One,
    feedback: true,
    settings: &[],
    columns: &[],
};

/// The registry declaration of the fixed-window source.
const SPEC: AlgorithmSpec<super::SourceKind> = AlgorithmSpec {
    name: "fixed",
    summary: "a constant window of W segments with go-back-N repair on timeout, no congestion \
              control (for tests)",
    params: &[
        Param::integer("window", "segments outstanding at most, always")
            .unit("segments")
            .between(1.0, 1_000_000.0)
            .default(Scalar::Integer(10)),
        Param::size("segment_size", "payload bytes per data segment")
            .between(1.0, (MAX_PACKET_BYTES - 120) as f64)
            .default(Scalar::Size(1460)),
        Param::integer(
            "header_bytes",
            "header bytes of every packet (an ACK is header only)",
        )
        .unit("bytes")
        .between(20.0, 120.0)
        .default(Scalar::Integer(40)),
        Param::duration(
            "rto",
            "the retransmission timeout: how long the oldest outstanding segment waits for \
             its ACK before the window is sent again",
        )
        .greater_than(0.0)
        .default(Scalar::Duration(SimTime::from_secs(1))),
        Param::size("bytes", "size of the transfer")
            .at_least(1.0)
            .unset("a long-lived flow"),
    ],
    finish: None,
    build,
};

fn build(params: &Params, _context: super::FlowContext) -> Result<Built, Missing> {
    let flow = FixedWindow::new(FixedConfig {
        window: params.integer("window"),
        segment_bytes: params.size("segment_size") as u32,
        header_bytes: params.integer("header_bytes") as u32,
        rto: params.duration("rto"),
        app_bytes: params.opt_size("bytes"),
    });
    Ok(Built {
        transport: AnyTransport::Custom(Box::new(flow)),
        cc: String::new(),
    })
}

/// The settings of a fixed-window flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedConfig {
    /// Segments outstanding at most.
    pub window: u64,
    /// Payload bytes of a full segment.
    pub segment_bytes: u32,
    /// Header bytes of every packet.
    pub header_bytes: u32,
    pub rto: SimTime,
    /// Bytes to send; `None` sends for ever.
    pub app_bytes: Option<u64>,
}

const PATH: PathId = PathId(0);

/// Both ends of a fixed-window flow. Segments are numbered from 0; a data packet's header is
/// `[segment, send time ns, 0, 0]`, an ACK's `[next expected segment, echoed send time ns, 0,
/// 0]`.
#[derive(Clone, Debug)]
pub struct FixedWindow {
    config: FixedConfig,
    /// Segments of the transfer (`None`: unbounded).
    segments: Option<u64>,
    /// Sending: the oldest unacknowledged segment, the next one to send, and one past the
    /// highest ever sent (what lies below it and is sent again is a retransmission).
    una: u64,
    next: u64,
    high: u64,
    active: bool,
    /// The application stopped: nothing new is sent, what was sent is repaired.
    stopped: bool,
    deadline: Option<SimTime>,
    /// Smoothed RTT (RFC 6298 §2, alpha = 1/8), for time series.
    srtt: Option<SimTime>,
    finished: bool,
    /// Receiving: the next segment expected in order.
    expected: u64,
    delivered_bytes: u64,
    retransmissions: u64,
    timeouts: u64,
    tracing: bool,
}

impl FixedWindow {
    pub fn new(config: FixedConfig) -> Self {
        let segment = u64::from(config.segment_bytes);
        FixedWindow {
            config,
            segments: config.app_bytes.map(|b| b.div_ceil(segment)),
            una: 0,
            next: 0,
            high: 0,
            active: false,
            stopped: false,
            deadline: None,
            srtt: None,
            finished: false,
            expected: 0,
            delivered_bytes: 0,
            retransmissions: 0,
            timeouts: 0,
            tracing: false,
        }
    }

    /// Payload bytes of segment `seq` (the last one of a transfer may be short).
    fn payload(&self, seq: u64) -> u32 {
        let full = u64::from(self.config.segment_bytes);
        match self.config.app_bytes {
            Some(total) => (total - seq * full).min(full) as u32,
            None => self.config.segment_bytes,
        }
    }

    /// Whether segment `seq` exists and may be sent as new data.
    fn may_send(&self, seq: u64) -> bool {
        let exists = self.segments.is_none_or(|n| seq < n);
        let new = seq >= self.high;
        exists && !(new && self.stopped) && seq < self.una + self.config.window
    }

    /// Sends what the window allows, from `next`.
    fn fill(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        while self.active && self.may_send(self.next) {
            let seq = self.next;
            if seq < self.high {
                self.retransmissions += 1;
            }
            out.send(Transmit {
                path: PATH,
                direction: Direction::Forward,
                size_bytes: self.payload(seq) + self.config.header_bytes,
                header: Header::Custom(CustomHeader {
                    words: [seq, now.as_nanos(), 0, 0],
                }),
            });
            self.next += 1;
            self.high = self.high.max(self.next);
            // RFC 6298 §5.1: the timer runs while data is outstanding.
            if self.deadline.is_none() {
                self.deadline = Some(now + self.config.rto);
            }
        }
    }
}

impl Transport for FixedWindow {
    fn kind(&self) -> &'static str {
        "fixed"
    }

    fn handle_start(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.active = true;
        out.report(TransportEvent::Cwnd {
            path: PATH,
            cwnd_bytes: self.config.window * u64::from(self.config.segment_bytes),
        });
        self.fill(now, out);
    }

    fn handle_stop(&mut self, _now: SimTime, _out: &mut Outbox<'_>) {
        self.stopped = true;
    }

    fn handle_packet(
        &mut self,
        now: SimTime,
        path: PathId,
        direction: Direction,
        header: &Header,
        out: &mut Outbox<'_>,
    ) {
        let Header::Custom(CustomHeader {
            words: [seq, sent_ns, ..],
        }) = *header
        else {
            panic!("a foreign header reached a fixed-window flow")
        };
        match direction {
            Direction::Forward => {
                // Go-back-N receiver: in order or discarded; every arrival is acknowledged.
                if seq == self.expected {
                    self.expected += 1;
                    let bytes = self.payload(seq);
                    self.delivered_bytes += u64::from(bytes);
                    if self.tracing {
                        out.report(TransportEvent::Delivered { path, bytes });
                    }
                }
                out.send(Transmit {
                    path,
                    direction: Direction::Reverse,
                    size_bytes: self.config.header_bytes,
                    header: Header::Custom(CustomHeader {
                        words: [self.expected, sent_ns, 0, 0],
                    }),
                });
            }
            Direction::Reverse => {
                if !self.active || seq <= self.una {
                    return;
                }
                let rtt = now - SimTime(sent_ns);
                // RFC 6298 §2.3: SRTT <- (1 - 1/8) SRTT + 1/8 R'.
                self.srtt = Some(match self.srtt {
                    None => rtt,
                    Some(s) => SimTime((s.as_nanos() * 7 + rtt.as_nanos()) / 8),
                });
                out.report(TransportEvent::RttSample { path, rtt });
                self.una = seq;
                self.next = self.next.max(self.una);
                // RFC 6298 §5.2-5.3: off when all is acknowledged, else restarted.
                self.deadline = (self.una < self.high).then_some(now + self.config.rto);
                if self.segments == Some(self.una) && !self.finished {
                    self.finished = true;
                    out.report(TransportEvent::Finished);
                }
                self.fill(now, out);
            }
        }
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        if self.deadline.is_none_or(|d| d > now) {
            return;
        }
        // Go back: the whole window again from the oldest unacknowledged segment.
        self.timeouts += 1;
        out.report(TransportEvent::Timeout { path: PATH });
        self.next = self.una;
        self.deadline = None;
        self.fill(now, out);
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.deadline
    }

    fn set_tracing(&mut self, enabled: bool) {
        self.tracing = enabled;
    }

    fn stats(&self) -> TransportStats {
        TransportStats {
            delivered_bytes: self.delivered_bytes,
            retransmissions: self.retransmissions,
            fast_retransmits: 0,
            timeouts: self.timeouts,
        }
    }

    fn path_state(&self, _path: Option<PathId>) -> PathState {
        PathState {
            cwnd_bytes: Some(self.config.window * u64::from(self.config.segment_bytes)),
            srtt: self.srtt,
            ..PathState::default()
        }
    }
}

#[cfg(test)]
mod tests;
