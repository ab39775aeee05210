//! Transports: sans-IO protocol state machines and their congestion controllers.
//!
//! Every protocol the simulator runs is a [`Transport`]: a TCP connection ([`tcp`]), an MPTCP
//! connection ([`multipath`]), a TFRC, MulTFRC or CP flow ([`tfrc`]), an MPAT aggregate
//! ([`aggregate`]) and a datagram flow ([`datagram`]) each are one object holding both ends of
//! a flow (the source and the sink), fed packets and timeouts by the driver, and asked for
//! what they send. Their headers are plain data in [`crate::packet`], which imports no
//! transport. The driver (`crate::sim`) knows no protocol. Its contract:
//!
//! 1. every input is one `handle_*` call with an [`Outbox`]; the transport puts into it, as it
//!    goes, every packet it sends in response ([`Outbox::send`]: the path, the direction, the
//!    size on the wire and the header) and everything it reports ([`Outbox::report`]:
//!    delivered bytes, RTT samples, window changes, losses, timeouts, completion). Nothing is
//!    sent or reported between inputs;
//! 2. after the call the driver records the events into the flow's measurements and the
//!    observer, in the order reported;
//! 3. re-arms the transport's one wake-up from [`Transport::poll_timeout`]: a deadline earlier
//!    than the one already queued is pushed, later ones wait for the queued wake-up, at which
//!    the driver calls [`Transport::handle_timeout`] and asks again;
//! 4. puts the packets on their routes, in the order they were sent.
//!
//! A transport never reads a clock or schedules anything itself; `now` comes with every call.
//! Packets travelling [`Direction::Forward`] go from the flow's source to its sink and carry
//! data (they count as the flow's sent and delivered packets); [`Direction::Reverse`] carries
//! feedback (ACKs) back to the source.
//!
//! Built-in transports are dispatched through [`AnyTransport`] on the hot path;
//! [`AnyTransport::Custom`] takes any `Box<dyn Transport + Send>` (the extension point).

pub mod aggregate;
pub mod cc;
pub mod datagram;
pub mod host_noise;
pub mod multipath;
pub mod outbox;
pub mod rtt;
pub mod tcp;
pub mod tfrc;

use crate::ids::PathId;
pub use crate::packet::Direction;
use crate::packet::Header;
use crate::time::SimTime;
use datagram::DatagramFlow;
use multipath::MptcpFlow;
use tcp::TcpFlow;
use tfrc::TfrcFlow;

pub use outbox::{Capture, Outbox};

/// A packet a transport wants sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub path: PathId,
    pub direction: Direction,
    /// Size on the wire, headers included.
    pub size_bytes: u32,
    pub header: Header,
}

/// Something a transport reports to the driver (for measurements and tracing), keyed by the
/// path it concerns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TransportEvent {
    /// The sink received a data packet carrying `bytes` (payload for TCP, the whole datagram
    /// for datagram sources).
    Delivered { path: PathId, bytes: u32 },
    /// The source measured a round-trip time.
    RttSample { path: PathId, rtt: SimTime },
    /// The congestion window after an ACK, a timeout or the end of a recovery.
    Cwnd { path: PathId, cwnd_bytes: u64 },
    /// Loss recovery started (a fast retransmit).
    Loss { path: PathId },
    /// The retransmission timer fired.
    Timeout { path: PathId },
    /// Every byte of a finite transfer has been acknowledged.
    Finished,
}

/// A setting of a flow changed during the run (a scenario `[[event]]` naming the flow, or
/// the API): the key the flow's protocol declares changeable (`crate::protocol::ProtocolSpec::
/// settings`: `n` of MulTFRC and CP, `shares` of MPAT) and its new value. A transport acts on
/// the keys it declared and ignores the others.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowChange {
    pub key: &'static str,
    pub value: SettingValue,
}

/// The new value of a setting.
#[derive(Clone, Debug, PartialEq)]
pub enum SettingValue {
    Number(f64),
    /// A list of numbers (MPAT's shares: positive weights, one per application flow).
    Numbers(Vec<f64>),
}

impl FlowChange {
    /// Setting `key` becomes the number `value`.
    pub fn number(key: &'static str, value: f64) -> Self {
        FlowChange {
            key,
            value: SettingValue::Number(value),
        }
    }

    /// Setting `key` becomes the list `values`.
    pub fn numbers(key: &'static str, values: Vec<f64>) -> Self {
        FlowChange {
            key,
            value: SettingValue::Numbers(values),
        }
    }

    /// The new value if this changes the number `key`.
    pub fn as_number(&self, key: &str) -> Option<f64> {
        match self.value {
            SettingValue::Number(x) if self.key == key => Some(x),
            _ => None,
        }
    }

    /// The new list if this changes the list `key`.
    pub fn as_numbers(&self, key: &str) -> Option<&[f64]> {
        match &self.value {
            SettingValue::Numbers(x) if self.key == key => Some(x),
            _ => None,
        }
    }
}

/// One application flow of an aggregate (MPAT), reported as its own row of the results.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ApplicationStats {
    /// Its share x_i of the aggregate window (current).
    pub share: f64,
    /// Payload bytes delivered in order at the receiving end.
    pub delivered_bytes: u64,
    /// Data segments and payload bytes sent for it, retransmissions included.
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// Its segments resent.
    pub retransmissions: u64,
    /// Fast retransmits and timeouts of the windows charged to it (see the transport).
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// When its finite transfer was fully acknowledged.
    pub completed_at: Option<SimTime>,
}

/// A flow's counters, read by the results at the end of the warm-up and of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransportStats {
    /// Payload bytes delivered in order to the receiving application.
    pub delivered_bytes: u64,
    /// Data packets retransmitted.
    pub retransmissions: u64,
    /// Loss-recovery episodes entered on duplicate ACKs / SACK.
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
}

/// A protocol endpoint pair driven by the simulator (see the module doc for the contract).
pub trait Transport {
    /// The flow's kind as results name it (`"tcp"`, `"cbr"`, ...).
    fn kind(&self) -> &'static str;
    /// The flow starts: the application begins sending.
    fn handle_start(&mut self, now: SimTime, out: &mut Outbox<'_>);
    /// The flow stops: the application sends nothing new.
    fn handle_stop(&mut self, now: SimTime, out: &mut Outbox<'_>);
    /// A packet of this flow reached the end of `path` travelling `direction`.
    fn handle_packet(
        &mut self,
        now: SimTime,
        path: PathId,
        direction: Direction,
        header: &Header,
        out: &mut Outbox<'_>,
    );
    /// A setting changes during the run; transports without it ignore the change (the
    /// scenario reader only lets through changes the flow's kind has).
    fn handle_change(&mut self, _now: SimTime, _change: &FlowChange, _out: &mut Outbox<'_>) {}
    /// The wake-up from [`Transport::poll_timeout`] is due (or a stale one fired: a transport
    /// must ignore a call before its deadline).
    fn handle_timeout(&mut self, now: SimTime, out: &mut Outbox<'_>);
    /// The earliest time the transport wants `handle_timeout`.
    fn poll_timeout(&self) -> Option<SimTime>;
    /// Whether the driver may hand the transport a packet that reaches the flow's receiving
    /// end (`Direction::Forward`) before the simulated time of its arrival, with that time as
    /// `now` (it does so only when nothing can tell the difference; see `docs/architecture.md`,
    /// "Reactions ahead of time"). A transport may say so only if, for the whole run, the
    /// handling of such a packet
    /// - depends on nothing but the packets that reached the receiving end before it and on
    ///   `now`, and changes nothing that the sending end or `poll_timeout` depend on, and
    ///   reports no event;
    /// - sends at once whatever it sends in response (on the reverse route), and the
    ///   receiving end sends nothing at any other time (no timer of its own).
    ///
    /// Off by default. Only a flow with one path uses it.
    fn reacts_ahead(&self) -> bool {
        false
    }
    /// Whether to report the events only tracing needs ([`TransportEvent::Cwnd`] after every
    /// ACK, [`TransportEvent::Delivered`]); off unless the driver has an observer.
    fn set_tracing(&mut self, _enabled: bool) {}
    fn stats(&self) -> TransportStats;
    /// The application flows of an aggregate (MPAT), each reported as its own row; 0 for a
    /// transport that is one flow.
    fn application_flows(&self) -> usize {
        0
    }
    /// Counters of application flow `i` (`i < application_flows()`).
    fn application_stats(&self, _i: usize) -> ApplicationStats {
        ApplicationStats::default()
    }
    /// The window and RTT of one path (`Some(path)`) or of the whole flow (`None`), for time
    /// series; fields the transport does not have are `None`.
    fn path_state(&self, _path: Option<PathId>) -> PathState {
        PathState::default()
    }
    /// The flow's value, now, of a result column its protocol declares its own
    /// (`crate::protocol::ProtocolSpec::columns`: the TFRC family's `loss_event_rate`, ...);
    /// `None` for a column it does not fill (NaN in the results).
    fn column(&self, _name: &str) -> Option<f64> {
        None
    }
}

/// What time series sample of a flow or of one of its paths.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PathState {
    /// Congestion window in bytes.
    pub cwnd_bytes: Option<u64>,
    /// Smoothed RTT.
    pub srtt: Option<SimTime>,
    /// Bytes in flight (multipath subflows).
    pub in_flight_bytes: Option<u64>,
    /// The scheduler's estimate for the path (the `capacity` scheduler's available path
    /// capacity, in segments).
    pub estimate: Option<f64>,
}

/// The built-in transports, dispatched without a virtual call, and the extension point.
/// Built-ins are held inline (one flow's state, one cache-friendly place, no pointer to chase
/// per packet); the flows of a run live in one `Vec`, so their size difference costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum AnyTransport {
    Tcp(TcpFlow),
    Datagram(DatagramFlow),
    Mptcp(Box<MptcpFlow>),
    Tfrc(Box<TfrcFlow>),
    Mpat(Box<aggregate::MpatFlow>),
    Custom(Box<dyn Transport + Send>),
}

macro_rules! dispatch {
    ($self:expr, $t:ident => $body:expr) => {
        match $self {
            AnyTransport::Tcp($t) => $body,
            AnyTransport::Datagram($t) => $body,
            AnyTransport::Mptcp($t) => $body,
            AnyTransport::Tfrc($t) => $body,
            AnyTransport::Mpat($t) => $body,
            AnyTransport::Custom($t) => $body,
        }
    };
}

impl AnyTransport {
    /// The TCP connection, if this is one.
    pub fn as_tcp(&self) -> Option<&TcpFlow> {
        match self {
            AnyTransport::Tcp(t) => Some(t),
            _ => None,
        }
    }
    /// The MPTCP connection, if this is one.
    pub fn as_mptcp(&self) -> Option<&MptcpFlow> {
        match self {
            AnyTransport::Mptcp(t) => Some(t),
            _ => None,
        }
    }
    /// The MPAT aggregate, if this is one.
    pub fn as_mpat(&self) -> Option<&aggregate::MpatFlow> {
        match self {
            AnyTransport::Mpat(t) => Some(t),
            _ => None,
        }
    }
    /// The TFRC-family flow, if this is one.
    pub fn as_tfrc(&self) -> Option<&TfrcFlow> {
        match self {
            AnyTransport::Tfrc(t) => Some(t),
            _ => None,
        }
    }
    /// The datagram source, if this is one.
    pub fn as_datagram(&self) -> Option<&DatagramFlow> {
        match self {
            AnyTransport::Datagram(t) => Some(t),
            _ => None,
        }
    }
}

impl Transport for AnyTransport {
    fn kind(&self) -> &'static str {
        dispatch!(self, t => t.kind())
    }
    #[inline]
    fn handle_start(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        dispatch!(self, t => t.handle_start(now, out))
    }
    #[inline]
    fn handle_stop(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        dispatch!(self, t => t.handle_stop(now, out))
    }
    #[inline]
    fn handle_packet(
        &mut self,
        now: SimTime,
        path: PathId,
        direction: Direction,
        header: &Header,
        out: &mut Outbox<'_>,
    ) {
        dispatch!(self, t => t.handle_packet(now, path, direction, header, out))
    }
    #[inline]
    fn handle_timeout(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        dispatch!(self, t => t.handle_timeout(now, out))
    }
    fn handle_change(&mut self, now: SimTime, change: &FlowChange, out: &mut Outbox<'_>) {
        dispatch!(self, t => t.handle_change(now, change, out))
    }
    #[inline]
    fn poll_timeout(&self) -> Option<SimTime> {
        dispatch!(self, t => t.poll_timeout())
    }
    fn reacts_ahead(&self) -> bool {
        dispatch!(self, t => t.reacts_ahead())
    }
    fn set_tracing(&mut self, enabled: bool) {
        dispatch!(self, t => t.set_tracing(enabled))
    }
    fn stats(&self) -> TransportStats {
        dispatch!(self, t => t.stats())
    }
    fn path_state(&self, path: Option<PathId>) -> PathState {
        dispatch!(self, t => t.path_state(path))
    }
    fn column(&self, name: &str) -> Option<f64> {
        dispatch!(self, t => t.column(name))
    }
    fn application_flows(&self) -> usize {
        dispatch!(self, t => t.application_flows())
    }
    fn application_stats(&self, i: usize) -> ApplicationStats {
        dispatch!(self, t => t.application_stats(i))
    }
}
