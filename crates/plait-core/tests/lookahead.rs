//! Admission ahead of time (`Link::admit_ahead`) changes how many events a run takes, never
//! its results: every golden scenario, and scenarios chosen to stress what it must keep
//! right (drops decided ahead, readings of counters and queues between a packet's admission
//! and its arrival, slices, wire bytes of the first hop), gives the same trace and the same
//! results with it and without it.

use std::path::{Path, PathBuf};

use plait_core::scenario::Scenario;
use plait_core::sim::build;
use plait_core::trace::Recorder;

fn golden_scenarios() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden");
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tests/golden exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    out.sort();
    out
}

/// The trace and the JSON results of a run, with or without lookahead.
fn run(scenario: &Scenario, lookahead: bool) -> (Vec<String>, serde_json::Value) {
    let mut sim = build(scenario, None)
        .expect("builds")
        .with_observer(Recorder::default());
    if !lookahead {
        sim.disable_lookahead().expect("before the run");
    }
    sim.run();
    let trace = sim
        .observer()
        .events
        .iter()
        .map(|e| format!("{e:?}"))
        .collect();
    let mut results = serde_json::to_value(sim.results()).expect("serialisable");
    // The number of events is what lookahead changes.
    results.as_object_mut().expect("an object").remove("events");
    (trace, results)
}

fn assert_same(name: &str, scenario: &Scenario) {
    let (trace_with, with) = run(scenario, true);
    let (trace_without, without) = run(scenario, false);
    if let Some(i) =
        (0..trace_with.len().min(trace_without.len())).find(|&i| trace_with[i] != trace_without[i])
    {
        panic!(
            "{name}: traces differ at event {i}:\n  with:    {}\n  without: {}",
            trace_with[i], trace_without[i]
        );
    }
    assert_eq!(
        trace_with.len(),
        trace_without.len(),
        "{name}: trace length"
    );
    assert!(with == without, "{name}: results differ");
}

#[test]
fn golden_scenarios_give_the_same_results_with_and_without_lookahead() {
    for path in golden_scenarios() {
        let scenario = Scenario::from_file(&path, &[]).expect("golden scenario parses");
        assert_same(&path.display().to_string(), &scenario);
    }
}

/// Three drop-tail hops each way, the middle ones admitted ahead; drops there (a small
/// queue, a byte limit and a loss model on links admitted ahead), samples every millisecond
/// (shorter than a hop, so they fall between admissions and arrivals), a warm-up, round
/// numbers that make simultaneous events common, and traced drops.
fn stress_toml(sample: &str, loss: &str) -> String {
    format!(
        r#"[simulation]
duration = "4s"
warmup = "0.5s"
seed = 3
sample_interval = "{sample}"
trace_drops = true

[[link]]
name = "access"
from = "s"
to = "r1"
rate = "100Mbps"
delay = "1ms"

[[link]]
name = "middle"
from = "r1"
to = "r2"
rate = "12Mbps"
delay = "2ms"
queue = {{ kind = "droptail", packets = 12 }}
{loss}

[[link]]
name = "last"
from = "r2"
to = "d"
rate = "10Mbps"
delay = "3ms"
queue = {{ kind = "droptail", bytes = 9000 }}

[[flow]]
name = "bulk"
count = 4
kind = "tcp"
src = "s"
dst = "d"
start = {{ uniform = [0, 0.2] }}

[[flow]]
name = "cbr"
kind = "cbr"
rate = "1.2Mbps"
src = "s"
dst = "d"
start = "0.1s"
"#
    )
}

#[test]
fn stressed_readings_and_drops_are_the_same_with_and_without_lookahead() {
    for sample in ["1ms", "3ms", "100ms"] {
        for loss in ["", r#"loss = { kind = "bernoulli", p = 0.01 }"#] {
            let toml = stress_toml(sample, loss);
            let scenario = Scenario::from_toml_str(&toml, "<stress>", &[]).expect("parses");
            assert_same(
                &format!("stress, samples {sample}, loss {loss:?}"),
                &scenario,
            );
        }
    }
}

#[test]
fn the_stress_scenario_admits_ahead_and_drops_there() {
    let scenario =
        Scenario::from_toml_str(&stress_toml("1ms", ""), "<stress>", &[]).expect("parses");
    let mut with = build(&scenario, None).expect("builds");
    let mut without = build(&scenario, None).expect("builds");
    without.disable_lookahead().expect("before the run");
    assert!(with.links().iter().filter(|l| l.has_lookahead()).count() >= 4);
    with.run();
    without.run();
    let r = with.results();
    let dropped_ahead: u64 = (0..r.links.name.len())
        .filter(|&i| r.links.name[i] != "access")
        .map(|i| r.links.drops[i])
        .sum();
    assert!(
        dropped_ahead > 10,
        "{dropped_ahead} drops at links admitted ahead"
    );
    assert!(
        with.events_processed() * 2 < without.events_processed(),
        "{} events with lookahead, {} without",
        with.events_processed(),
        without.events_processed()
    );
}

#[test]
fn slices_with_lookahead_give_the_whole_run_without_it() {
    let scenario =
        Scenario::from_toml_str(&stress_toml("3ms", ""), "<stress>", &[]).expect("parses");
    let (_, whole) = run(&scenario, false);
    // Slices by time (ends between admissions and arrivals) and by event budget.
    let mut by_time = build(&scenario, None).expect("builds");
    let mut t = 0.0;
    while !by_time.run_until(plait_core::time::SimTime::from_secs_f64(t)) {
        t += 0.0137;
    }
    let mut by_budget = build(&scenario, None).expect("builds");
    while !by_budget.run_until_bounded(by_budget.config().duration, 101) {}
    for sim in [by_time, by_budget] {
        let mut r = serde_json::to_value(sim.results()).expect("serialisable");
        r.as_object_mut().expect("an object").remove("events");
        assert!(r == whole, "a sliced run differs from the whole one");
    }
}
