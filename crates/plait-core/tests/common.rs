//! Shared helpers for simulator tests: building from TOML and the invariants every run must
//! satisfy.

#![allow(dead_code)]

use plait_core::scenario::Scenario;
use plait_core::sim::{build, Simulator};
use plait_core::trace::Observer;

pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml, "<test>", &[]).unwrap_or_else(|e| panic!("{e}"))
}

pub fn run(toml: &str, seed: Option<u64>) -> Simulator {
    let mut sim = build(&scenario(toml), seed).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    check_invariants(&sim);
    sim
}

/// Packets are conserved (created = delivered + dropped + in flight), and every TCP byte is
/// delivered in order exactly once: the receiver never hands the application more than the
/// sender had acknowledged plus what is in flight, never delivers a byte twice, and a finished
/// transfer delivered exactly its size.
pub fn check_invariants<O: Observer>(sim: &Simulator<O>) {
    let c = sim.packet_counters();
    assert_eq!(
        c.created,
        c.delivered + c.dropped + sim.packets_in_flight(),
        "packet conservation: {c:?}, in flight {}",
        sim.packets_in_flight()
    );
    for f in sim.flows() {
        if let Some(tcp) = f.transport.as_tcp() {
            let (sender, receiver) = (tcp.sender(), tcp.receiver());
            let delivered = receiver.delivered_bytes();
            // The receiver cannot deliver what the sender never sent.
            assert!(
                delivered <= sender.snd_nxt(),
                "flow {}: delivered beyond snd_nxt",
                f.name
            );
            // Cumulatively acknowledged bytes were delivered.
            assert!(
                sender.snd_una() <= delivered,
                "flow {}: acked beyond delivered",
                f.name
            );
            if sender.is_finished() {
                assert_eq!(delivered, sender.snd_una(), "flow {}", f.name);
            }
        }
    }
}
