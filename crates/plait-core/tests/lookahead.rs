//! Admission ahead of time (`Link::admit_ahead`) changes how many events a run takes, never
//! its results: every golden scenario, and scenarios chosen to stress what it must keep
//! right (drops decided ahead, readings of counters and queues between a packet's admission
//! and its arrival, slices, wire bytes of the first hop), gives the same trace and the same
//! results with it and without it.
//!
//! Untraced, the arrivals of data at its destination are handled ahead of time too
//! (`Transport::reacts_ahead`: TCP without delayed ACKs, datagram sinks), and their answers
//! admitted at once on the reverse route; the stress cases include drops of those answers at
//! the reverse route's first link and flows that cannot react ahead (delayed ACKs).
//!
//! Runs are compared both traced (an observer sees every event, so each drop decided ahead is
//! reported by an event at its time) and untraced (no observer, no drops table: such a drop
//! is counted when it is decided, unless a reading of the meters comes before its time).

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
    let (untraced_with, _) = run_untraced(scenario, true);
    let (untraced_without, _) = run_untraced(scenario, false);
    assert!(
        untraced_with == untraced_without,
        "{name}: untraced results differ"
    );
}

/// The JSON results (without the event count) and the event count of an untraced run.
fn run_untraced(scenario: &Scenario, lookahead: bool) -> (serde_json::Value, u64) {
    let mut sim = build(scenario, None).expect("builds");
    if !lookahead {
        sim.disable_lookahead().expect("before the run");
    }
    sim.run();
    let mut results = serde_json::to_value(sim.results()).expect("serialisable");
    results.as_object_mut().expect("an object").remove("events");
    (results, sim.events_processed())
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
/// numbers that make simultaneous events common, and drops traced or not.
fn stress_toml(sample: &str, loss: &str, trace_drops: bool) -> String {
    stress_toml_with(sample, loss, trace_drops, "", "")
}

/// [`stress_toml`] with more settings of the last link (`last`, e.g. its reverse direction's
/// queue and loss model, the first link of the ACKs' route) and of TCP (`tcp`).
fn stress_toml_with(sample: &str, loss: &str, trace_drops: bool, last: &str, tcp: &str) -> String {
    format!(
        r#"[simulation]
duration = "4s"
warmup = "0.5s"
seed = 3
sample_interval = "{sample}"
trace_drops = {trace_drops}

[tcp]
{tcp}

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
{last}

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
            for trace_drops in [true, false] {
                let toml = stress_toml(sample, loss, trace_drops);
                let scenario = Scenario::from_toml_str(&toml, "<stress>", &[]).expect("parses");
                assert_same(
                    &format!("stress, samples {sample}, loss {loss:?}, traced drops {trace_drops}"),
                    &scenario,
                );
            }
        }
    }
}

#[test]
fn the_stress_scenario_admits_ahead_and_drops_there() {
    // Exact timing: with send jitter every data packet leaves its host at an event of its
    // own, with lookahead or without, which hides the events admission ahead saves.
    let toml = stress_toml_with("1ms", "", true, "", "exact_timing = true");
    let scenario = Scenario::from_toml_str(&toml, "<stress>", &[]).expect("parses");
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

/// Untraced, a drop decided ahead that no reading comes before is counted when it is
/// decided, with no event in the queue; the results, and the number of events, are those of
/// the traced run.
#[test]
fn untraced_drops_ahead_take_no_event() {
    let traced =
        Scenario::from_toml_str(&stress_toml("100ms", "", true), "<stress>", &[]).expect("parses");
    let untraced =
        Scenario::from_toml_str(&stress_toml("100ms", "", false), "<stress>", &[]).expect("parses");
    let mut t = build(&traced, None).expect("builds");
    t.run();
    let mut u = build(&untraced, None).expect("builds");
    u.run();
    let (rt, ru) = (t.results(), u.results());
    assert_eq!(t.drops_folded(), 0, "traced drops are reported by events");
    let dropped_ahead: u64 = (0..rt.links.name.len())
        .filter(|&i| rt.links.name[i] != "access")
        .map(|i| rt.links.drops[i])
        .sum();
    // Drops just before a reading (every 100 ms) keep their event; most need none.
    assert!(
        u.drops_folded() > dropped_ahead / 2,
        "{} of {dropped_ahead} drops ahead folded",
        u.drops_folded()
    );
    assert!(u.drops_folded() <= u.packet_counters().dropped);
    let mut a = serde_json::to_value(rt).expect("serialisable");
    let mut b = serde_json::to_value(ru).expect("serialisable");
    a.as_object_mut().expect("an object").remove("drops");
    b.as_object_mut().expect("an object").remove("drops");
    assert!(a == b, "untraced results differ from traced ones");
}

#[test]
fn slices_with_lookahead_give_the_whole_run_without_it() {
    for trace_drops in [true, false] {
        let toml = stress_toml("3ms", "", trace_drops);
        let scenario = Scenario::from_toml_str(&toml, "<stress>", &[]).expect("parses");
        let (whole, _) = run_untraced(&scenario, false);
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
            assert!(
                r == whole,
                "a sliced run differs from the whole one (traced drops {trace_drops})"
            );
        }
    }
}

/// The reverse direction of the last link, where the ACKs of the arrivals handled ahead are
/// admitted: a queue of 60 bytes (too small for an ACK with two SACK blocks) and random
/// loss, so that answers are dropped there, by the queue and by the loss model.
const DROPPING_ANSWERS: &str = r#"reverse_queue = { kind = "droptail", bytes = 60 }
reverse_loss = { kind = "bernoulli", p = 0.02 }"#;

#[test]
fn arrivals_handled_ahead_give_the_same_results() {
    for sample in ["1ms", "100ms"] {
        for last in ["", DROPPING_ANSWERS] {
            for tcp in ["", "delayed_ack = true"] {
                let toml = stress_toml_with(sample, "", false, last, tcp);
                let scenario = Scenario::from_toml_str(&toml, "<stress>", &[]).expect("parses");
                assert_same(
                    &format!("stress, samples {sample}, last link {last:?}, tcp {tcp:?}"),
                    &scenario,
                );
            }
        }
    }
}

/// Untraced, a TCP flow's ACKs are handled by the sender directly (`TcpFlow::take_ack`), and
/// the data segments handled ahead by the receiver directly (`TcpFlow::answer_data`); traced,
/// every packet goes through the generic rounds of the transport contract (an input, then
/// polling until nothing is left). The results are the same for each variant of TCP: SACK
/// off, RACK-TLP with PRR, delayed ACKs, the linux profile (host noise: the generic rounds
/// untraced too), CUBIC, a finite transfer, a stop with and without abort.
#[test]
fn tcp_handled_directly_gives_the_results_of_the_generic_rounds() {
    let variants = [
        ("", ""),
        ("sack = false", ""),
        ("rack_tlp = true\nrecovery_window = \"prr\"", ""),
        ("delayed_ack = true", ""),
        ("profile = \"linux\"", ""),
        ("", "cc = \"cubic\""),
        ("", "bytes = \"300KB\""),
        ("", "stop = \"2s\""),
        ("", "stop = \"2s\"\non_stop = \"abort\""),
    ];
    for (tcp, flow) in variants {
        let toml = stress_toml_with(
            "100ms",
            r#"loss = { kind = "bernoulli", p = 0.01 }"#,
            false,
            DROPPING_ANSWERS,
            tcp,
        )
        .replace("kind = \"tcp\"\n", &format!("kind = \"tcp\"\n{flow}\n"));
        let scenario = Scenario::from_toml_str(&toml, "<stress>", &[]).expect("parses");
        let (_, traced) = run(&scenario, true);
        let (untraced, _) = run_untraced(&scenario, true);
        assert!(
            traced == untraced,
            "tcp {tcp:?}, flow {flow:?}: traced and untraced results differ"
        );
    }
}

/// Untraced, the arrivals at the destination are handled ahead of time, without an event in
/// the queue (they still count as events); the answers dropped at the reverse route's first
/// link are counted. The results and the number of events are those of the traced run, which
/// handles every arrival at its time.
#[test]
fn arrivals_handled_ahead_take_no_event() {
    let toml = stress_toml_with("100ms", "", false, DROPPING_ANSWERS, "");
    let scenario = Scenario::from_toml_str(&toml, "<stress>", &[]).expect("parses");
    let mut u = build(&scenario, None).expect("builds");
    u.run();
    let mut t = build(&scenario, None)
        .expect("builds")
        .with_observer(Recorder::default());
    t.run();
    assert_eq!(
        t.reactions_ahead(),
        0,
        "a traced run handles arrivals at their time"
    );
    let data = u.packet_counters().data_delivered;
    assert!(
        u.reactions_ahead() * 10 > data * 9,
        "{} of {data} arrivals handled ahead",
        u.reactions_ahead()
    );
    assert_eq!(u.events_processed(), t.events_processed());
    let r = u.results();
    let answer_drops: (u64, u64) = (0..r.links.name.len())
        .filter(|&i| r.links.name[i] == "last" && r.links.direction[i] == "reverse")
        .map(|i| (r.links.drops[i], r.links.loss_drops[i]))
        .fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
    assert!(
        answer_drops.0 > 10 && answer_drops.1 > 10,
        "{answer_drops:?} ACKs dropped at the reverse first link (queue, loss model)"
    );
    let a = serde_json::to_value(r).expect("serialisable");
    let b = serde_json::to_value(t.results()).expect("serialisable");
    assert!(a == b, "untraced results differ from traced ones");
}

/// A flow with delayed ACKs answers some arrivals later, from a timer: no arrival on its
/// reverse route's first link is handled ahead, nor any other flow's whose answers share it.
#[test]
fn delayed_acks_keep_arrivals_at_their_time() {
    let toml = stress_toml_with("100ms", "", false, "", "delayed_ack = true");
    let scenario = Scenario::from_toml_str(&toml, "<stress>", &[]).expect("parses");
    let mut sim = build(&scenario, None).expect("builds");
    sim.run();
    assert_eq!(sim.reactions_ahead(), 0);
    assert!(sim.packet_counters().data_delivered > 1000);
}
