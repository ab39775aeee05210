//! Observability: an injected observer receives typed trace events; metrics and result
//! tables are accumulated as counters and emitted as columns.

pub mod histogram;
pub mod meters;
pub mod results;
pub mod table;

use crate::ids::{FlowId, LinkId, PathId};
use crate::net::link::DropCause;
use crate::time::SimTime;

/// A typed trace event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TraceEvent {
    /// A packet of `flow` was dropped on `link` (by the queue, the loss model, or because
    /// the link was down).
    Drop {
        time: SimTime,
        link: LinkId,
        flow: FlowId,
        cause: DropCause,
    },
    /// A TCP sender took an RTT sample.
    RttSample {
        time: SimTime,
        flow: FlowId,
        rtt: SimTime,
    },
    /// A sender's window after processing an ACK (recovery exits included) or a timeout.
    Cwnd {
        time: SimTime,
        flow: FlowId,
        cwnd_bytes: u64,
    },
    /// A data packet of `flow` reached its destination.
    Delivered {
        time: SimTime,
        flow: FlowId,
        bytes: u32,
    },
    /// A sender of `flow` started loss recovery on `path` (a fast retransmit).
    Loss {
        time: SimTime,
        flow: FlowId,
        path: PathId,
    },
    /// A retransmission timer of `flow` fired on `path`.
    Timeout {
        time: SimTime,
        flow: FlowId,
        path: PathId,
    },
}

/// Receives trace events. The default methods do nothing, and the simulator is generic over
/// the observer, so tracing costs nothing when it is off.
pub trait Observer {
    /// Whether `on_event` wants per-packet events (lets the simulator skip building them).
    const ENABLED: bool = true;
    fn on_event(&mut self, _event: &TraceEvent) {}
}

/// The observer that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrace;

impl Observer for NoTrace {
    const ENABLED: bool = false;
}

/// An observer that keeps every event (tests, short runs).
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    pub events: Vec<TraceEvent>,
}

impl Observer for Recorder {
    fn on_event(&mut self, event: &TraceEvent) {
        self.events.push(*event);
    }
}
