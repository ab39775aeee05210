//! A datagram flow as a [`Transport`]: a source (constant bit rate, on/off) that sends UDP
//! datagrams on path 0 when it wakes, and a sink that counts what arrives. No feedback.

use super::{Direction, Outbox, Transmit, Transport, TransportEvent, TransportStats};
use crate::app::DatagramSource;
use crate::ids::PathId;
use crate::packet::{DatagramHeader, Header, UDP_IP_HEADER_BYTES};
use crate::time::SimTime;

const PATH: PathId = PathId(0);

/// Source and sink of a datagram flow.
pub struct DatagramFlow {
    source: DatagramSource,
    active: bool,
    /// The source's next wake-up (never before the time it was asked for).
    next_wake: Option<SimTime>,
    next_seq: u64,
    received_packets: u64,
    received_bytes: u64,
    tracing: bool,
}

impl DatagramFlow {
    pub fn new(source: DatagramSource) -> Self {
        DatagramFlow {
            source,
            active: false,
            next_wake: None,
            next_seq: 0,
            received_packets: 0,
            received_bytes: 0,
            tracing: false,
        }
    }

    pub fn source(&self) -> &DatagramSource {
        &self.source
    }
    /// Datagrams the source emitted.
    pub fn sent_packets(&self) -> u64 {
        self.next_seq
    }
    /// Datagrams that reached the sink.
    pub fn received_packets(&self) -> u64 {
        self.received_packets
    }
    /// Payload bytes that reached the sink.
    pub fn received_bytes(&self) -> u64 {
        self.received_bytes
    }

    /// The source wakes at `now`: it sends a datagram if its pattern says so.
    fn wake(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        let wake = self.source.wake(now);
        self.next_wake = Some(wake.next.max(now));
        if wake.send {
            let size = self.source.packet_bytes();
            out.send(Transmit {
                path: PATH,
                direction: Direction::Forward,
                size_bytes: size,
                header: Header::Datagram(DatagramHeader {
                    seq: self.next_seq,
                    len: size.saturating_sub(UDP_IP_HEADER_BYTES),
                }),
            });
            self.next_seq += 1;
        }
    }
}

impl Transport for DatagramFlow {
    fn kind(&self) -> &'static str {
        match self.source {
            DatagramSource::Cbr(_) => "cbr",
            DatagramSource::OnOff(_) => "onoff",
        }
    }

    fn handle_start(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.active = true;
        self.wake(now, out);
    }

    fn handle_stop(&mut self, _now: SimTime, _out: &mut Outbox<'_>) {
        self.active = false;
        self.next_wake = None;
    }

    fn handle_packet(
        &mut self,
        _now: SimTime,
        _path: PathId,
        _dir: Direction,
        header: &Header,
        out: &mut Outbox<'_>,
    ) {
        if let Header::Datagram(d) = header {
            self.received_packets += 1;
            self.received_bytes += d.len as u64;
            if self.tracing {
                out.report(TransportEvent::Delivered {
                    path: PATH,
                    bytes: d.len,
                });
            }
        }
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        if self.active && self.next_wake.is_some_and(|t| t <= now) {
            self.wake(now, out);
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.next_wake
    }

    fn set_tracing(&mut self, enabled: bool) {
        self.tracing = enabled;
    }

    /// The receiving end only counts what arrives and sends nothing; tracing reports each
    /// delivery at its time.
    fn reacts_ahead(&self) -> bool {
        !self.tracing
    }

    fn stats(&self) -> TransportStats {
        TransportStats {
            delivered_bytes: self.received_bytes,
            ..TransportStats::default()
        }
    }
}
