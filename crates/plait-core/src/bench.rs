//! The benchmarks, reported as delivered packets and events per wall second and peak memory:
//!
//! - the dumbbell: N bulk TCP flows (SACK on, an ACK per segment, 1500-byte packets) across a
//!   100 Mb/s bottleneck, or N TFRC, MulTFRC (n = 1) or CP (n = 1) flows in their place
//!   (1460-byte segments, 1500-byte packets, feedback once per RTT), or one MPAT aggregate of
//!   N flows and N Reno windows;
//! - MPTCP: N bulk MPTCP connections (LIA, min_rtt) of S subflows each, over two disjoint
//!   100 Mb/s paths.

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

/// The MPTCP benchmark scenario: `connections` bulk MPTCP connections from `src` to `dst`,
/// each with `subflows` subflows placed alternately on two disjoint paths (1 Gb/s 1 ms access,
/// then a 100 Mb/s, 20 ms link with a 367-packet drop-tail queue, one bandwidth-delay product
/// at 1500 bytes), LIA and the min_rtt scheduler, starting uniformly in [0, 4 s] (or the
/// first half of shorter runs), no warm-up. SACK on, an ACK per segment, mss 1460.
pub fn mptcp_toml(connections: usize, subflows: usize, duration_s: f64) -> String {
    let last_start = (duration_s / 2.0).min(4.0);
    let routes: Vec<&str> = (0..subflows)
        .map(|k| {
            if k % 2 == 0 {
                r#"{ route = ["r1"] }"#
            } else {
                r#"{ route = ["r2"] }"#
            }
        })
        .collect();
    let mut text = format!(
        r#"[simulation]
duration = {duration_s}
warmup = 0
seed = 1

[tcp]
mss = 1460
sack = true
delayed_ack = false
"#
    );
    for (path, router) in [("1", "r1"), ("2", "r2")] {
        text += &format!(
            r#"
[[link]]
name = "access{path}"
from = "src"
to = "{router}"
rate = "1Gbps"
delay = "1ms"

[[link]]
name = "path{path}"
from = "{router}"
to = "dst"
rate = "100Mbps"
delay = "20ms"
queue = {{ kind = "droptail", packets = 367 }}
"#
        );
    }
    text += &format!(
        r#"
[[flow]]
name = "mp"
count = {connections}
kind = "mptcp"
cc = "lia"
scheduler = "min_rtt"
src = "src"
dst = "dst"
start = {{ uniform = [0, {last_start}] }}
subflows = [ {} ]
"#,
        routes.join(", ")
    );
    text
}

/// What the benchmark measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BenchReport {
    /// Flows (TCP flows or MPTCP connections).
    pub flows: usize,
    /// Subflows per flow (1 for TCP).
    pub subflows: usize,
    pub duration_s: f64,
    pub delivered_packets: u64,
    pub events: u64,
    pub wall_seconds: f64,
    pub delivered_packets_per_second: f64,
    pub events_per_second: f64,
    /// Peak resident set of this process (Linux `VmHWM`), 0 where unavailable.
    pub peak_rss_bytes: u64,
}

/// `text` (a benchmark scenario, with a `[tcp]` section) with exact timing
/// (`exact_timing = true`: no send jitter), for the cost of the default's send jitter.
pub fn with_exact_timing(text: &str) -> String {
    text.replacen("[tcp]\n", "[tcp]\nexact_timing = true\n", 1)
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

/// Builds and runs [`mptcp_toml`] with `connections` connections of `subflows` subflows, with
/// exact timing if `exact` ([`with_exact_timing`]).
pub fn run_mptcp(
    connections: usize,
    subflows: usize,
    duration_s: f64,
    exact: bool,
) -> Result<BenchReport, ScenarioError> {
    if subflows == 0 {
        return Err(bench_error(format!(
            "expected at least one subflow, got {subflows}"
        )));
    }
    check_size(connections, duration_s)?;
    let mut text = mptcp_toml(connections, subflows, duration_s);
    if exact {
        text = with_exact_timing(&text);
    }
    let mut report = run_text(&text)?;
    report.flows = connections;
    report.subflows = subflows;
    report.duration_s = duration_s;
    Ok(report)
}

fn bench_error(message: String) -> ScenarioError {
    ScenarioError {
        file: "<bench>".into(),
        path: String::new(),
        message,
    }
}

fn check_size(flows: usize, duration_s: f64) -> Result<(), ScenarioError> {
    if flows == 0 || !(duration_s > 0.0 && duration_s.is_finite()) {
        return Err(bench_error(format!(
            "expected at least one flow and a positive duration, got {flows} flows, {duration_s} s"
        )));
    }
    Ok(())
}

/// The flow kinds the dumbbell can run: `tcp` (Reno), the TFRC family, and `mpat` (one
/// aggregate of as many flows, equal shares).
pub const DUMBBELL_KINDS: &[&str] = &["tcp", "tfrc", "multfrc", "cp", "mpat"];

/// The dumbbell with `kind` flows in place of the TCP flows ([`DUMBBELL_KINDS`]); MulTFRC and CP
/// with n = 1.
pub fn dumbbell_kind_toml(flows: usize, duration_s: f64, kind: &str) -> String {
    let text = dumbbell_toml(flows, duration_s);
    let flow = match kind {
        "multfrc" | "cp" => format!("kind = \"{kind}\"\nn = 1"),
        other => format!("kind = \"{other}\""),
    };
    match kind {
        "tcp" => text,
        "mpat" => {
            let shares = vec!["1"; flows].join(", ");
            text.replace(
                &format!("count = {flows}\nkind = \"tcp\"\ncc = \"reno\""),
                &format!("kind = \"mpat\"\nshares = [{shares}]"),
            )
        }
        _ => text.replace("kind = \"tcp\"\ncc = \"reno\"", &flow),
    }
}

/// [`run_dumbbell`] with `kind` flows ([`dumbbell_kind_toml`]), with exact timing if `exact`
/// ([`with_exact_timing`]).
pub fn run_dumbbell_kind(
    flows: usize,
    duration_s: f64,
    kind: &str,
    exact: bool,
) -> Result<BenchReport, ScenarioError> {
    if !DUMBBELL_KINDS.contains(&kind) {
        return Err(bench_error(format!(
            "unknown flow kind '{kind}' (known: {})",
            DUMBBELL_KINDS.join(", ")
        )));
    }
    check_size(flows, duration_s)?;
    let mut text = dumbbell_kind_toml(flows, duration_s, kind);
    if exact {
        text = with_exact_timing(&text);
    }
    let mut report = run_text(&text)?;
    report.flows = flows;
    report.duration_s = duration_s;
    Ok(report)
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
    check_size(flows, duration_s)?;
    let mut report = run_text(&toml(flows, duration_s))?;
    report.flows = flows;
    report.duration_s = duration_s;
    Ok(report)
}

/// Builds and runs a scenario, timing the build and the run.
fn run_text(text: &str) -> Result<BenchReport, ScenarioError> {
    let scenario = Scenario::from_toml_str(text, "<bench>", &[])?;
    let duration_s = scenario.simulation.duration.as_secs_f64();
    let started = Instant::now();
    let mut sim = build(&scenario, None)?;
    sim.run();
    let wall_seconds = started.elapsed().as_secs_f64();
    let delivered_packets = sim.packet_counters().data_delivered;
    let events = sim.events_processed();
    Ok(BenchReport {
        flows: 0,
        subflows: 1,
        duration_s,
        delivered_packets,
        events,
        wall_seconds,
        delivered_packets_per_second: delivered_packets as f64 / wall_seconds,
        events_per_second: events as f64 / wall_seconds,
        peak_rss_bytes: peak_rss_bytes(),
    })
}
