//! MPAT through the simulator: an aggregate of one flow is one Reno flow, bit for bit; five
//! flows hold five fair shares and split them by weight; acknowledgements are conserved;
//! finite transfers deliver every byte once; an idle flow's share goes to the others; shares
//! change during a run; runs are deterministic.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A 20 Mb/s, 20 ms bottleneck (DropTail of 100 packets) with `flows` (TOML entries).
fn dumbbell(flows: &str, duration: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
warmup = "20s"
seed = 4
sample_interval = "1s"

[[link]]
name = "access"
from = "src"
to = "r"
rate = "1Gbps"
delay = "1ms"

[[link]]
name = "bottleneck"
from = "r"
to = "dst"
rate = "20Mbps"
delay = "20ms"
queue = {{ kind = "droptail", packets = 100 }}
{flows}
"#
    )
}

fn mpat(name: &str, shares: &str, extra: &str) -> String {
    format!(
        "\n[[flow]]\nname = \"{name}\"\nkind = \"mpat\"\nshares = {shares}\nsrc = \"src\"\ndst = \"dst\"\n{extra}\n"
    )
}

const BACKGROUND: &str = "\n[[flow]]\nname = \"bg\"\ncount = 5\nkind = \"tcp\"\nsrc = \"src\"\n\
                          dst = \"dst\"\nstart = { uniform = [\"0s\", \"2s\"] }\n";

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

/// The results of `text` as JSON, with the rows of the scenario's own flows only (no
/// application-flow rows) and without the columns that name the kind.
fn results(text: &str, source: &str) -> Value {
    let scenario = plait_core::scenario::Scenario::from_toml_str(text, source, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let rows = scenario.flows.len();
    let mut sim = plait_core::sim::build(&scenario, None).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    common::check_invariants(&sim);
    let mut r = serde_json::to_value(sim.results()).expect("results serialise");
    let flows = r["flows"].as_object_mut().expect("columns");
    for column in ["kind", "cc", "aggregate_name"] {
        flows.remove(column);
    }
    for (_, column) in flows.iter_mut() {
        column.as_array_mut().expect("a column").truncate(rows);
    }
    r.as_object_mut().unwrap().remove("flow_series");
    r
}

/// Every TCP flow of every golden scenario replaced by an MPAT aggregate of one flow: the
/// results are Reno's, bit for bit (the window is a TCP sender core, the flow its stream).
#[test]
fn an_aggregate_of_one_flow_is_one_reno_flow_bit_for_bit() {
    let mut compared = 0;
    for path in golden_scenarios() {
        let text = std::fs::read_to_string(&path).expect("a readable scenario");
        let table: toml::Table = text.parse().expect("valid TOML");
        let tcp = table["flow"]
            .as_array()
            .expect("flows")
            .iter()
            .any(|f| f.get("kind").and_then(toml::Value::as_str) == Some("tcp"));
        let delayed = text.contains("delayed_ack") || text.contains("profile");
        if !tcp || delayed {
            continue;
        }
        let aggregated = text.replace("kind = \"tcp\"", "kind = \"mpat\"\nshares = [1]");
        let name = path.display().to_string();
        assert_eq!(
            results(&aggregated, &name),
            results(&text, &name),
            "{name}: an MPAT aggregate of one flow differs from TCP"
        );
        compared += 1;
    }
    assert!(compared >= 4, "only {compared} golden scenarios compared");
}

/// Figure 3 of the paper in small: five flows with shares 1:2:3:4:5 beside five TCP flows.
/// The aggregate holds about five fair shares and its flows split them by weight.
#[test]
fn five_flows_hold_five_shares_split_by_weight() {
    let text = dumbbell(
        &format!("{}{BACKGROUND}", mpat("agg", "[1, 2, 3, 4, 5]", "")),
        "200s",
    );
    let sim = common::run(&text, None);
    let r = sim.results();
    let f = &r.flows;
    assert_eq!(
        f.name,
        [
            "agg", "bg.0", "bg.1", "bg.2", "bg.3", "bg.4", "agg.0", "agg.1", "agg.2", "agg.3",
            "agg.4"
        ]
    );
    assert_eq!(f.aggregate_name[6], "agg");
    assert_eq!(f.aggregate_name[0], "");
    let bg = f.goodput_bps[1..6].iter().sum::<f64>() / 5.0;
    let aggregate = f.goodput_bps[0];
    let parts: f64 = f.goodput_bps[6..].iter().sum();
    assert!(
        (parts - aggregate).abs() < 1e-6 * aggregate,
        "{parts} vs {aggregate}"
    );
    let fair_shares = aggregate / bg;
    let ratios: Vec<f64> = f.goodput_bps[6..]
        .iter()
        .map(|g| g / f.goodput_bps[6])
        .collect();
    println!("aggregate = {fair_shares:.2} TCP shares; split {ratios:.2?}");
    assert!((4.0..6.0).contains(&fair_shares), "{fair_shares}");
    for (k, r) in ratios.iter().enumerate() {
        let expect = (k + 1) as f64;
        assert!(
            (r / expect - 1.0).abs() < 0.25,
            "flow {k}: {r} for {expect}"
        );
    }
    // Per-flow fast retransmits and timeouts add up to the windows'.
    let fr: u64 = f.fast_retransmits[6..].iter().sum();
    assert!(
        fr > 0 && fr <= f.fast_retransmits[0],
        "{fr} of {}",
        f.fast_retransmits[0]
    );
    // One row per window in the paths table.
    assert_eq!(r.paths.flow.iter().filter(|&&i| i == 0).count(), 5);
}

/// Every acknowledged byte is charged to one window and one flow; shares sum to one.
#[test]
fn acknowledgements_are_conserved_and_shares_sum_to_one() {
    let text = dumbbell(&mpat("agg", "[3, 1, 0.5]", "bytes = \"4MB\""), "120s")
        .replace("warmup = \"20s\"", "warmup = \"0s\"");
    let sim = common::run(&text, None);
    let m = sim.flows()[0].transport.as_mpat().expect("an aggregate");
    let shares = m.shares();
    assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!((shares[0] / shares[1] - 3.0).abs() < 1e-12);
    let windows: u64 = (0..3).map(|j| m.window_core(j).snd_una()).sum();
    let flows: u64 = (0..3).map(|i| m.delivered(i)).sum();
    assert_eq!(windows, flows, "window-level and flow-level bytes");
    let r = sim.results();
    for k in 0..3 {
        assert_eq!(r.flows.bytes_delivered[1 + k], 4_000_000, "flow {k}");
        assert!(r.flows.completion_s[1 + k].is_finite());
        assert_eq!(m.outstanding(k), 0);
    }
    assert!(r.flows.completion_s[0].is_finite());
    // The flow with three times the share finishes first.
    assert!(r.flows.completion_s[1] < r.flows.completion_s[2]);
}

/// A flow that has finished leaves its share to the other (work conservation): with shares
/// 4:1 and 20 MB each, once the first is done the second sends at about the aggregate's two
/// fair shares, not at its own fifth of them.
#[test]
fn a_finished_flows_share_goes_to_the_other() {
    let text = dumbbell(
        &format!("{}{BACKGROUND}", mpat("agg", "[4, 1]", "bytes = \"20MB\"")),
        "150s",
    )
    .replace("warmup = \"20s\"", "warmup = \"0s\"");
    let r = common::run(&text, None).results();
    let (done0, done1) = (r.flows.completion_s[6], r.flows.completion_s[7]);
    assert!(done0 < done1 && done1 < 150.0, "{done0} {done1}");
    let fs = &r.flow_series;
    let mean = |rows: &[u32], from: f64, to: f64| {
        let v: Vec<f64> = (0..fs.time_s.len())
            .filter(|&k| rows.contains(&fs.flow[k]) && fs.time_s[k] > from && fs.time_s[k] <= to)
            .map(|k| fs.goodput_bps[k])
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let bg = [1, 2, 3, 4, 5];
    let before = mean(&[7], 10.0, done0 - 1.0) / mean(&bg, 10.0, done0 - 1.0);
    let after = mean(&[7], done0 + 5.0, done1 - 1.0) / mean(&bg, done0 + 5.0, done1 - 1.0);
    println!("flow 1 in TCP shares: {before:.2} while flow 0 sends, {after:.2} after ({done0:.1} s, {done1:.1} s)");
    assert!((0.25..0.6).contains(&before), "{before}");
    assert!((1.5..2.6).contains(&after), "{after}");
}

/// An `[[event]]` swaps the shares at 80 s: the goodput ratio swaps with them.
#[test]
fn shares_change_during_the_run() {
    let text = format!(
        "{}\n[[event]]\nat = \"80s\"\nflow = \"agg\"\nshares = [1, 3]\n",
        dumbbell(&mpat("agg", "[3, 1]", ""), "140s")
    );
    let sim = common::run(&text, None);
    let r = sim.results();
    let fs = &r.flow_series;
    let mean = |row: u32, from: f64, to: f64| {
        let v: Vec<f64> = (0..fs.time_s.len())
            .filter(|&k| fs.flow[k] == row && fs.time_s[k] > from && fs.time_s[k] <= to)
            .map(|k| fs.goodput_bps[k])
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let before = mean(1, 20.0, 80.0) / mean(2, 20.0, 80.0);
    let after = mean(1, 90.0, 140.0) / mean(2, 90.0, 140.0);
    println!("flow 0 / flow 1: {before:.2} before, {after:.2} after");
    assert!((2.4..3.6).contains(&before), "{before}");
    assert!((1.0 / 3.6..1.0 / 2.4).contains(&after), "{after}");
    let m = sim.flows()[0].transport.as_mpat().unwrap();
    assert!((m.shares()[1] - 0.75).abs() < 1e-12);
}

#[test]
fn runs_are_deterministic() {
    for mapping in ["random", "sticky", "spread"] {
        let text = dumbbell(
            &format!(
                "{}{BACKGROUND}",
                mpat("agg", "[1, 2, 3]", &format!("mapping = \"{mapping}\""))
            ),
            "60s",
        );
        let a = serde_json::to_string(&common::run(&text, None).results()).unwrap();
        let b = serde_json::to_string(&common::run(&text, None).results()).unwrap();
        assert_eq!(a, b, "{mapping}");
    }
}

/// Issue 34: `host_jitter`, `host_stall_rate` and the `linux` profile's jitter changed a TCP
/// flow's results but left an MPAT aggregate byte-identical. They delay the packets of the
/// aggregate's two hosts, every window's: the results change, and stay the same for a seed.
#[test]
fn regression_host_noise_delays_the_windows_packets() {
    let run = |extra: &str, seed: u64| {
        let text = dumbbell(&mpat("agg", "[1, 2]", extra), "25s");
        let scenario = plait_core::scenario::Scenario::from_toml_str(&text, "<test>", &[])
            .unwrap_or_else(|e| panic!("{e}"));
        let mut sim =
            plait_core::sim::build(&scenario, Some(seed)).unwrap_or_else(|e| panic!("{e}"));
        sim.run();
        common::check_invariants(&sim);
        sim.results()
    };
    // What the run measured (not the seed it names).
    let json = |r: &plait_core::trace::results::RunResult| {
        serde_json::to_string(&(&r.flows, &r.paths, &r.links)).unwrap()
    };
    // The aggregate's goodput and its application flows'.
    let goodput = |r: &plait_core::trace::results::RunResult| r.flows.goodput_bps.clone();
    let calm = run("", 1);
    let jitter = run("host_jitter = \"20us\"", 1);
    assert_ne!(json(&calm), json(&jitter), "jitter changes the run");
    assert_eq!(json(&jitter), json(&run("host_jitter = \"20us\"", 1)));
    assert_ne!(json(&jitter), json(&run("host_jitter = \"20us\"", 2)));
    let stalls = run("host_stall_rate = 10\nhost_stall_duration = \"20ms\"", 1);
    assert_ne!(json(&calm), json(&stalls), "stalls change the run");
    assert!(
        stalls.flows.rtt_max_s[0] > calm.flows.rtt_max_s[0] + 0.015,
        "{} vs {}",
        stalls.flows.rtt_max_s[0],
        calm.flows.rtt_max_s[0]
    );
    // The linux profile's 50 us of jitter applies, and host_jitter = 0 turns it off.
    let linux = run("profile = \"linux\"", 1);
    assert_ne!(
        json(&linux),
        json(&run("profile = \"linux\"\nhost_jitter = \"0s\"", 1))
    );
    eprintln!(
        "mpat goodput: calm {:?} jitter {:?} (seed 2: {:?}) stalls {:?} linux {:?}",
        goodput(&calm),
        goodput(&jitter),
        goodput(&run("host_jitter = \"20us\"", 2)),
        goodput(&stalls),
        goodput(&linux)
    );
}
