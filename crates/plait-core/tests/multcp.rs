//! MulTCP through the simulator: with n = 1 it is Reno, result for result; with n = 4 it takes
//! about four Reno flows' share of a bottleneck whose losses hit flows independently, and,
//! as the AIMD model predicts, far more than that when drop-tail losses are synchronized.

mod common;

use std::path::{Path, PathBuf};

use plait_core::scenario::Scenario;
use plait_core::sim::build;
use serde_json::Value;

fn golden_scenarios() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden");
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tests/golden exists")
        .map(|e| e.expect("a readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    out.sort();
    out
}

/// Every result of a run of `text` with `overrides`, sampled every 100 ms (so that the cwnd
/// series are compared too), as JSON, without the `cc` column.
fn results_without_cc(text: &str, overrides: &[(String, String)]) -> Value {
    let mut overrides = overrides.to_vec();
    overrides.push(("simulation.sample_interval".into(), "\"100ms\"".into()));
    let scenario =
        Scenario::from_toml_str(text, "multcp", &overrides).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario, None).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    common::check_invariants(&sim);
    let mut results = serde_json::to_value(sim.results()).expect("results serialise");
    let flows = results["flows"]
        .as_object_mut()
        .expect("a table of columns");
    flows.remove("cc").expect("a cc column");
    results
}

#[test]
fn one_flow_is_reno_result_for_result_in_every_golden_scenario() {
    let mut compared = 0;
    for path in golden_scenarios() {
        let text = std::fs::read_to_string(&path).expect("a readable scenario");
        let table: toml::Table = text.parse().expect("valid TOML");
        let tcp_entries: Vec<usize> = table["flow"]
            .as_array()
            .expect("flows")
            .iter()
            .enumerate()
            .filter(|(_, f)| f.get("kind").and_then(toml::Value::as_str) == Some("tcp"))
            .map(|(i, _)| i)
            .collect();
        if tcp_entries.is_empty() {
            continue;
        }
        let with = |cc: &str| -> Vec<(String, String)> {
            tcp_entries
                .iter()
                .map(|i| (format!("flow[{i}].cc"), cc.to_string()))
                .collect()
        };
        let reno = results_without_cc(&text, &with("reno"));
        for multcp in [
            "{ name = \"multcp\", n = 1 }",
            "{ name = \"multcp\", n = 1.0, equivalence = \"exact\" }",
        ] {
            let got = results_without_cc(&text, &with(multcp));
            assert!(
                got == reno,
                "{}: {multcp} differs from Reno",
                path.display()
            );
        }
        let events = reno["events"].as_u64().unwrap();
        assert!(events > 10_000, "{}: only {events} events", path.display());
        compared += 1;
    }
    assert!(
        compared >= 6,
        "only {compared} golden scenarios with TCP flows"
    );
}

/// One MulTCP flow (`cc`) and four Reno flows with the same path (RTT about 44 ms) through a
/// 20 Mb/s bottleneck with the given queue and loss, for 120 s (the first 20 s discarded).
/// Returns MulTCP's goodput over the mean goodput of the Reno flows.
fn share(cc: &str, bottleneck: &str) -> f64 {
    share_with(cc, bottleneck, "")
}

/// [`share`] with TCP settings `tcp` (the `[tcp]` section).
fn share_with(cc: &str, bottleneck: &str, tcp: &str) -> f64 {
    let text = format!(
        r#"
[simulation]
duration = "120s"
warmup = "20s"
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
delay = "20ms"
{bottleneck}

[[link]]
name = "access_dst"
from = "r2"
to = "dst"
rate = "1Gbps"
delay = "1ms"

[[flow]]
name = "multcp"
kind = "tcp"
cc = {cc}
src = "src"
dst = "dst"
start = {{ uniform = ["0s", "2s"] }}

[[flow]]
name = "reno"
count = 4
kind = "tcp"
src = "src"
dst = "dst"
start = {{ uniform = ["0s", "2s"] }}
"#
    );
    let sim = common::run(&text, None);
    let r = sim.results();
    assert_eq!(r.flows.cc, ["multcp", "reno", "reno", "reno", "reno"]);
    let goodput = &r.flows.goodput_bps;
    let reno_mean = goodput[1..].iter().sum::<f64>() / 4.0;
    assert!(reno_mean > 0.0);
    goodput[0] / reno_mean
}

const N4: &str = "{ name = \"multcp\", n = 4 }";
const N4_EXACT: &str = "{ name = \"multcp\", n = 4, equivalence = \"exact\" }";

/// A congested bottleneck that signals one flow per congestion episode, the one whose packet
/// arrives first above the threshold (Altman et al.'s "ONE" loss policy, rate-proportional):
/// MulTCP n = 4 takes about four Reno flows' share.
#[test]
fn four_flows_worth_when_losses_hit_one_flow_at_a_time() {
    let bottleneck = "rate = \"20Mbps\"\nqueue = { kind = \"threshold_dropper\", threshold = 50 }";
    let crowcroft = share(N4, bottleneck);
    let exact = share(N4_EXACT, bottleneck);
    println!("threshold dropper: MulTCP n = 4 / mean Reno = {crowcroft:.3} (crowcroft), {exact:.3} (exact)");
    for ratio in [crowcroft, exact] {
        assert!((2.5..6.0).contains(&ratio), "ratio {ratio}");
    }
}

/// Random losses independent of the flows (Bernoulli, 0.2 %, on an uncongested 100 Mb/s
/// bottleneck): the regime of the square-root law behind both equivalences. The model gives
/// 4·sqrt((2 − 1/8)/1.5) = 4.5 for α = N and exactly 4 for the exact α (`model::aimd`).
#[test]
fn four_flows_worth_under_random_losses() {
    let bottleneck = "rate = \"100Mbps\"\nqueue = { kind = \"droptail\", packets = 2000 }\n\
                      loss = { kind = \"bernoulli\", p = 0.002 }";
    let crowcroft = share(N4, bottleneck);
    let exact = share(N4_EXACT, bottleneck);
    println!(
        "random loss: MulTCP n = 4 / mean Reno = {crowcroft:.3} (crowcroft), {exact:.3} (exact)"
    );
    for ratio in [crowcroft, exact] {
        assert!((2.5..6.0).contains(&ratio), "ratio {ratio}");
    }
    // The exact choice is the less aggressive one (alpha 3.2 instead of 4).
    assert!(exact < crowcroft, "exact {exact}, crowcroft {crowcroft}");
}

/// A drop-tail bottleneck of one bandwidth-delay product: overflows hit every flow at once.
/// When each flow reduces once per congestion epoch of length T rounds, a window AIMD(α, β)
/// peaks at αT/β and averages (1 − β/2)·αT/β, so MulTCP (α = 4, β = 1/8) averages 30T against
/// Reno's 1.5T: 20 times Reno, not 4 (N² = 16 times the increase-over-decrease of one flow).
/// This is MulTCP's known weakness, not a property of one implementation.
///
/// Measured: 19.9 while ssthresh counted the two limited-transmit segments in FlightSize,
/// 29.5 since it does not (RFC 5681 §3.2; 30.2 with Linux's cwnd basis). The Reno flows
/// here average about 3.3 segments, where those two segments were a third of the window
/// they halved: the fluid model's 20 holds for windows large enough to be continuous, and
/// below it every flow's 2-segment floor and whole segments make Reno weaker still. What
/// stays is the weakness itself: far more than n = 4 shares, beyond N² = 16.
///
/// Losses that hit every flow at every overflow need exact timing (`exact_timing`, as ns-2's
/// agents without `overhead_`): with the default send jitter of one service time the flows'
/// packets reach the full queue in an order that varies, not every flow loses at each
/// overflow, and MulTCP takes 13.4 shares here: fewer, still far more than four.
#[test]
fn synchronized_drop_tail_losses_give_far_more_than_four_shares() {
    let bottleneck = "rate = \"20Mbps\"\nqueue = { kind = \"droptail\", packets = 75 }";
    let ratio = share_with(N4, bottleneck, "exact_timing = true");
    println!("drop-tail, exact timing: MulTCP n = 4 / mean Reno = {ratio:.3}");
    assert!((16.0..40.0).contains(&ratio), "ratio {ratio}");
    let jittered = share(N4, bottleneck);
    println!("drop-tail, send jitter: MulTCP n = 4 / mean Reno = {jittered:.3}");
    assert!((8.0..ratio).contains(&jittered), "ratio {jittered}");
}

/// RED that drops arrivals at random (min_th 5, max_th 15, w_q 0.002, max_p 0.1, gentle, 100
/// packets): losses hit flows in proportion to their rates, and MulTCP n = 4 takes about four
/// shares. ns-2.35 on this set-up (Sack1 agents with `increase_num_ 4`, `decrease_num_ 0.875`,
/// `first_decrease_ 0`; python/plait/ns2, docs/ns2.md) gives 3.67–4.07 over five seeds.
///
/// Measured 3.95. It was 7.6 (8.3 over five seeds of experiments/ns2-differential, with 11 %
/// of packets dropped) while a fast retransmit's FlightSize basis was not capped at cwnd:
/// after a SACK recovery FlightSize holds the SACKed bytes above the holes, 7/8 of it was
/// more than the window, and "reductions" raised the window (TcpCore::ssthresh_basis).
#[test]
fn four_flows_worth_on_red_as_in_ns2() {
    let bottleneck = "rate = \"20Mbps\"\nqueue = { kind = \"red\", min_th = 5, max_th = 15, \
                      max_p = 0.1, w_q = 0.002, gentle = true, packets = 100 }";
    let ratio = share(N4, bottleneck);
    println!("RED: MulTCP n = 4 / mean Reno = {ratio:.3}");
    assert!((3.3..4.6).contains(&ratio), "ratio {ratio}");
}

#[test]
fn scenario_errors_name_the_field_and_what_is_expected() {
    let dumbbell = include_str!("../../../experiments/dumbbell/dumbbell.toml");
    let error = |cc: &str| {
        let overrides = [("flow.bulk.cc".to_string(), cc.to_string())];
        Scenario::from_toml_str(dumbbell, "d.toml", &overrides)
            .map(drop)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        error("multcp"),
        "d.toml: flow[0].cc: controller 'multcp' needs its parameter `n` (a number > 0): \
         write { name = \"multcp\", n = ... } (from --set flow.bulk.cc=multcp)"
    );
    for (n, message) in [
        ("0", "must be greater than zero, got 0"),
        ("-1.5", "must be greater than zero, got -1.5"),
        ("nan", "must be a finite number, got nan"),
        ("inf", "must be a finite number, got inf"),
        ("-inf", "must be a finite number, got -inf"),
        ("\"4\"", "expected a number, got \"4\""),
    ] {
        let cc = format!("{{ name = \"multcp\", n = {n} }}");
        assert_eq!(
            error(&cc),
            format!("d.toml: flow[0].cc.n: {message} (from --set flow.bulk.cc={cc})")
        );
    }
    let cc = "{ name = \"multcp\", n = 0.25, equivalence = \"exact\" }";
    assert!(
        error(cc).starts_with("d.toml: flow[0].cc.n: must be greater than 0.25 with equivalence"),
        "{}",
        error(cc)
    );
    let cc = "{ name = \"multcp\", n = 4, equivalence = \"exakt\" }";
    assert!(
        error(cc).contains("unknown equivalence 'exakt' (known: crowcroft, exact)"),
        "{}",
        error(cc)
    );
}
