//! The dumbbell benchmark: N bulk TCP flows (SACK on, an ACK per segment, 1500-byte packets)
//! across a 100 Mb/s bottleneck, reported as delivered packets and events per wall second.

use std::time::Instant;

use serde::Serialize;

use crate::scenario::{Scenario, ScenarioError};
use crate::sim::build;

/// The benchmark scenario: `experiments/dumbbell/dumbbell.toml` with `flows` flows and the
/// given duration (no warm-up, so every delivered packet counts). Start times are uniform in
/// [0, 4 s] as in the file, or in the first half of shorter runs.
pub fn dumbbell_toml(flows: usize, duration_s: f64) -> String {
    dumbbell_toml_with_tcp(
        flows,
        duration_s,
        "mss = 1460\nsack = true\ndelayed_ack = false",
    )
}

/// The dumbbell with the TCP settings of the `linux` profile (docs/linux.md), for the cost of
/// the profile: RACK-TLP, PRR, Linux delayed ACKs with SACK compression, host jitter.
pub fn dumbbell_linux_toml(flows: usize, duration_s: f64) -> String {
    dumbbell_toml_with_tcp(flows, duration_s, "profile = \"linux\"")
}

fn dumbbell_toml_with_tcp(flows: usize, duration_s: f64, tcp: &str) -> String {
    let last_start = (duration_s / 2.0).min(4.0);
    format!(
        r#"[simulation]
duration = {duration_s}
warmup = 0
seed = 1

[tcp]
{tcp}

[[link]]
name = "access_src"
from = "src"
to = "r1"
rate = "1Gbps"
delay = "1ms"

[[link]]
name = "bottleneck"
from = "r1"
to = "r2"
rate = "100Mbps"
delay = "20ms"
queue = {{ kind = "droptail", packets = 367 }}

[[link]]
name = "access_dst"
from = "r2"
to = "dst"
rate = "1Gbps"
delay = "1ms"

[[flow]]
name = "bulk"
count = {flows}
kind = "tcp"
cc = "reno"
src = "src"
dst = "dst"
start = {{ uniform = [0, {last_start}] }}
"#
    )
}

/// What the benchmark measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BenchReport {
    pub flows: usize,
    pub duration_s: f64,
    pub delivered_packets: u64,
    pub events: u64,
    pub wall_seconds: f64,
    pub delivered_packets_per_second: f64,
    pub events_per_second: f64,
    /// Peak resident set of this process (Linux `VmHWM`), 0 where unavailable.
    pub peak_rss_bytes: u64,
}

/// Peak resident set size of the current process, from `/proc/self/status` (Linux).
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// Builds and runs the dumbbell with `flows` flows for `duration_s` simulated seconds.
pub fn run_dumbbell(flows: usize, duration_s: f64) -> Result<BenchReport, ScenarioError> {
    run_dumbbell_text(flows, duration_s, dumbbell_toml)
}

/// [`run_dumbbell`] with the `linux` TCP profile ([`dumbbell_linux_toml`]).
pub fn run_dumbbell_linux(flows: usize, duration_s: f64) -> Result<BenchReport, ScenarioError> {
    run_dumbbell_text(flows, duration_s, dumbbell_linux_toml)
}

fn run_dumbbell_text(
    flows: usize,
    duration_s: f64,
    toml: fn(usize, f64) -> String,
) -> Result<BenchReport, ScenarioError> {
    if flows == 0 || !(duration_s > 0.0 && duration_s.is_finite()) {
        return Err(ScenarioError {
            file: "<bench>".into(),
            path: String::new(),
            message: format!(
                "expected at least one flow and a positive duration, got {flows} flows, {duration_s} s"
            ),
        });
    }
    let scenario = Scenario::from_toml_str(&toml(flows, duration_s), "<bench>", &[])?;
    let started = Instant::now();
    let mut sim = build(&scenario, None)?;
    sim.run();
    let wall_seconds = started.elapsed().as_secs_f64();
    let delivered_packets = sim.packet_counters().data_delivered;
    let events = sim.events_processed();
    Ok(BenchReport {
        flows,
        duration_s,
        delivered_packets,
        events,
        wall_seconds,
        delivered_packets_per_second: delivered_packets as f64 / wall_seconds,
        events_per_second: events as f64 / wall_seconds,
        peak_rss_bytes: peak_rss_bytes(),
    })
}
