//! The extension point: a transport defined outside the crate, run through the simulator.
//!
//! `Echo` sends a 1000-byte datagram every millisecond on path 0; its sink answers each with a
//! 40-byte echo on the reverse route; the source takes an RTT sample from every echo. On an
//! idle path of known rates and delays, every number it produces is exact.

mod common;

use plait_core::ids::PathId;
use plait_core::packet::{CustomHeader, Header};
use plait_core::sim::build;
use plait_core::trace::{Recorder, TraceEvent};
use plait_core::transport::{
    AnyTransport, Direction, Outbox, Transmit, Transport, TransportEvent, TransportStats,
};
use plait_core::SimTime;

const SIZE: u32 = 1000;
const ECHO: u32 = 40;
const INTERVAL: SimTime = SimTime::from_millis(1);

#[derive(Default)]
struct Echo {
    active: bool,
    next_send: Option<SimTime>,
    seq: u64,
    received: u64,
    echoes: u64,
}

impl Transport for Echo {
    fn kind(&self) -> &'static str {
        "echo"
    }
    fn handle_start(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.active = true;
        self.next_send = Some(now);
        self.handle_timeout(now, out);
    }
    fn handle_stop(&mut self, _now: SimTime, _out: &mut Outbox<'_>) {
        self.active = false;
        self.next_send = None;
    }
    fn handle_packet(
        &mut self,
        now: SimTime,
        path: PathId,
        direction: Direction,
        header: &Header,
        out: &mut Outbox<'_>,
    ) {
        let Header::Custom(h) = header else {
            panic!("a foreign header reached the echo transport")
        };
        match direction {
            Direction::Forward => {
                self.received += 1;
                out.report(TransportEvent::Delivered { path, bytes: SIZE });
                // Echo the sequence number and the send time back.
                out.send(Transmit {
                    path,
                    direction: Direction::Reverse,
                    size_bytes: ECHO,
                    header: *header,
                });
            }
            Direction::Reverse => {
                self.echoes += 1;
                let rtt = now - SimTime(h.words[1]);
                out.report(TransportEvent::RttSample { path, rtt });
            }
        }
    }
    fn handle_timeout(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        while self.active && self.next_send.is_some_and(|t| t <= now) {
            out.send(Transmit {
                path: PathId(0),
                direction: Direction::Forward,
                size_bytes: SIZE,
                header: Header::Custom(CustomHeader {
                    words: [self.seq, now.as_nanos(), 0, 0],
                }),
            });
            self.seq += 1;
            self.next_send = Some(now + INTERVAL);
        }
    }
    fn poll_timeout(&self) -> Option<SimTime> {
        self.next_send
    }
    fn stats(&self) -> TransportStats {
        TransportStats {
            delivered_bytes: self.received * SIZE as u64,
            ..TransportStats::default()
        }
    }
}

const SCENARIO: &str = r#"
[simulation]
duration = "1s"
seed = 1

[[link]]
name = "a"
from = "h1"
to = "r"
rate = "80Mbps"
delay = "5ms"

[[link]]
name = "b"
from = "r"
to = "h2"
rate = "8Mbps"
delay = "10ms"

[[flow]]
name = "probe"
kind = "cbr"
rate = "1kbps"
src = "h1"
dst = "h2"
stop = "0.5s"
"#;

#[test]
fn a_custom_transport_runs_through_the_simulator() {
    let mut sim = build(&common::scenario(SCENARIO), None)
        .unwrap()
        .with_observer(Recorder::default());
    let f = sim.flow_id("probe").unwrap();
    sim.set_transport(f, AnyTransport::Custom(Box::<Echo>::default()), "")
        .unwrap();
    sim.run();
    common::check_invariants(&sim);

    // Sent at 0, 1, ..., 499 ms (the stop at 500 ms ends it), each on an idle path: 1000 B
    // take 100 us at 80 Mb/s, 5 ms, 1 ms at 8 Mb/s, 10 ms; the 40 B echo 40 us at 8 Mb/s,
    // 10 ms, 4 us at 80 Mb/s, 5 ms.
    let r = sim.results();
    assert_eq!(r.flows.kind, vec!["echo"]);
    assert_eq!(r.flows.packets_sent, vec![500]);
    assert_eq!(r.flows.bytes_delivered, vec![500 * SIZE as u64]);
    let forward = 100_000 + 5_000_000 + 1_000_000 + 10_000_000;
    let back = 40_000 + 10_000_000 + 4_000 + 5_000_000;
    let rtts: Vec<u64> = sim
        .observer()
        .events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::RttSample { rtt, .. } => Some(rtt.as_nanos()),
            _ => None,
        })
        .collect();
    assert_eq!(rtts.len(), 500);
    assert!(
        rtts.iter().all(|&t| t == forward + back),
        "{:?}",
        &rtts[..3]
    );
    assert_eq!(r.flows.rtt_samples, vec![500]);
    assert_eq!(r.flows.rtt_min_s[0], (forward + back) as f64 * 1e-9);
}

#[test]
fn a_transport_cannot_be_replaced_once_the_run_has_started() {
    let mut sim = build(&common::scenario(SCENARIO), None).unwrap();
    sim.run_until(SimTime::from_millis(10));
    let f = sim.flow_id("probe").unwrap();
    let e = sim.set_transport(f, AnyTransport::Custom(Box::<Echo>::default()), "");
    assert!(e.is_err());
}

/// The datagram sink this replaces reacts ahead of time (`Transport::reacts_ahead`); the
/// custom transport does not say it can, so its arrivals are all handled at their time, and
/// its run untraced gives the results of the traced one.
#[test]
fn a_replaced_transport_no_longer_reacts_ahead() {
    let scenario = common::scenario(SCENARIO);
    let mut plain = build(&scenario, None).unwrap();
    plain.run();
    assert!(
        plain.reactions_ahead() > 0,
        "the datagram sink reacts ahead"
    );
    let mut untraced = build(&scenario, None).unwrap();
    let mut traced = build(&scenario, None)
        .unwrap()
        .with_observer(Recorder::default());
    let f = untraced.flow_id("probe").unwrap();
    untraced
        .set_transport(f, AnyTransport::Custom(Box::<Echo>::default()), "")
        .unwrap();
    traced
        .set_transport(f, AnyTransport::Custom(Box::<Echo>::default()), "")
        .unwrap();
    untraced.run();
    traced.run();
    assert_eq!(untraced.reactions_ahead(), 0);
    assert_eq!(untraced.events_processed(), traced.events_processed());
    assert_eq!(
        format!("{:?}", untraced.results()),
        format!("{:?}", traced.results())
    );
}
