//! TFRC, MulTFRC and CP through the simulator: the rate follows the equation at the measured
//! loss event rate, MulTFRC with n = 1 behaves like TFRC, its rate with the measured j is the
//! model's, CP takes about n shares, a reliable transfer delivers every byte once and in
//! order, n changes during a run, and runs are deterministic.

mod common;

use plait_core::model::multfrc;
use plait_core::transport::tfrc::RateEquation;
use plait_core::transport::Transport;

/// Flows (`flows`, TOML) over one 100 Mb/s, 20 ms link whose data direction drops packets
/// with `loss` (a loss model table), for `duration`, warm-up 20 s.
fn scenario(flows: &str, loss: &str, duration: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
warmup = "20s"
seed = 3
sample_interval = "1s"

[[link]]
name = "bottleneck"
from = "src"
to = "dst"
rate = "100Mbps"
delay = "20ms"
loss = {loss}
{flows}
"#
    )
}

fn flow(name: &str, kind: &str, extra: &str) -> String {
    format!(
        "\n[[flow]]\nname = \"{name}\"\nkind = \"{kind}\"\nsrc = \"src\"\ndst = \"dst\"\n{extra}\n"
    )
}

const BERNOULLI_1: &str = "{ kind = \"bernoulli\", p = 0.01 }";

/// Every 100th data packet is lost, each loss its own event (100 packets span more than an
/// RTT here), so p converges to exactly 0.01 and X·R to the equation's.
#[test]
fn the_rate_is_the_equation_at_the_measured_loss_event_rate_and_rtt() {
    let text = scenario(
        &flow("f", "tfrc", ""),
        "{ kind = \"periodic\", every = 100 }",
        "200s",
    );
    let sim = common::run(&text, None);
    let f = sim.flows()[0].transport.as_tfrc().expect("a TFRC flow");
    let s = f.sender();
    let p = s.loss_event_rate();
    assert!((p - 0.01).abs() < 1e-12, "p = {p}");
    assert_eq!(s.packets_per_loss_event(), 1.0);
    let rtt = s.rtt().expect("an RTT");
    // The path's RTT: 40 ms of propagation plus the serialisation of a 1500-byte packet and
    // a 64-byte feedback at 100 Mb/s.
    assert!((rtt - 0.04012).abs() < 1e-4, "R = {rtt}");
    let x = RateEquation::Tfrc.rate(1460.0, rtt, p, 1.0);
    assert!((s.rate() - x).abs() <= 1e-9 * x, "{} vs {x}", s.rate());
    // Long-run goodput: the equation's rate, less the lost packets, within 3 %.
    let r = sim.results();
    let goodput = r.flows.goodput_bps[0] / 8.0;
    let expect = x * 0.99;
    println!("periodic loss: goodput {goodput:.0} B/s, equation {x:.0} B/s");
    assert!(
        (goodput / expect - 1.0).abs() < 0.03,
        "{goodput} vs {expect}"
    );
    assert_eq!(r.flows.loss_event_rate[0], p);
    assert!((r.flows.allowed_rate_bps[0] - 8.0 * s.rate()).abs() < 1e-6);
    assert_eq!(r.flows.kind[0], "tfrc");
}

fn goodputs(flows: &str, loss: &str, seed: u64) -> Vec<f64> {
    let sim = common::run(&scenario(flows, loss, "220s"), Some(seed));
    sim.results().flows.goodput_bps.clone()
}

/// With n = 1, MulTFRC's equation is within 4 % of TFRC's for p ≤ 0.01 (reference §2.6:
/// 1.038 at p = 0.01): in the same scenario, over four seeds, the mean goodputs agree within
/// 8 %, and the ns-2 form (TFRC's equation at n = 1) within 1 %.
#[test]
fn multfrc_with_one_flow_behaves_like_tfrc() {
    let mean = |kind: &str, extra: &str| -> f64 {
        (1..=4)
            .map(|seed| goodputs(&flow("f", kind, extra), BERNOULLI_1, seed)[0])
            .sum::<f64>()
            / 4.0
    };
    let tfrc = mean("tfrc", "");
    let draft = mean("multfrc", "n = 1");
    let ns2 = mean("multfrc", "n = 1\nequation = \"ns2\"");
    println!("n = 1: TFRC {tfrc:.0}, MulTFRC draft {draft:.0}, ns-2 form {ns2:.0} bit/s");
    assert!((draft / tfrc - 1.0).abs() < 0.08, "{draft} vs {tfrc}");
    assert!((ns2 / tfrc - 1.0).abs() < 0.01, "{ns2} vs {tfrc}");
}

/// At the end of a run the sender's X is `plait.models.multfrc_rate` at the p, j and R it
/// measured (the receive-rate limit not binding), for a fractional n.
#[test]
fn multfrc_rate_is_the_model_at_the_measured_p_and_j() {
    for (n, loss) in [
        (2.5, "{ kind = \"gilbert_elliott\", p_good_to_bad = 0.002, p_bad_to_good = 0.4, loss_bad = 0.8 }"),
        (0.5, BERNOULLI_1),
    ] {
        let sim = common::run(
            &scenario(&flow("m", "multfrc", &format!("n = {n}")), loss, "100s"),
            None,
        );
        let s = sim.flows()[0].transport.as_tfrc().unwrap().sender();
        let (p, j, rtt) = (
            s.loss_event_rate(),
            s.packets_per_loss_event(),
            s.rtt().unwrap(),
        );
        let model = multfrc::rate(
            &multfrc::Inputs {
                flows: n,
                loss_event_rate: p,
                packets_per_loss_event: j,
                rtt_s: rtt,
                segment_bytes: 1460.0,
                t_rto_s: 4.0 * rtt,
                packets_per_ack: 1.0,
            },
            multfrc::Options::default(),
        );
        println!("n = {n}: p = {p:.5}, j = {j:.3}, X = {:.0}, model {model:.0}", s.rate());
        assert!(p > 0.0 && j >= 1.0);
        assert!((s.rate() - model).abs() <= 1e-9 * model, "{} vs {model}", s.rate());
        if n > 1.0 {
            assert!(j > 1.05, "bursty losses: j = {j}");
        }
    }
}

/// Independent losses at 1 %: MulTFRC with n = 4 and CP with 4 shares each take about four
/// TFRC flows' rate (the equations give 4.24 and 4 at p = 0.01, j = 1).
#[test]
fn multfrc_and_cp_with_n_4_take_about_four_tfrc_rates() {
    let mut ratios = Vec::new();
    for seed in 1..=3 {
        let flows = format!(
            "{}{}{}",
            flow("tfrc", "tfrc", ""),
            flow("multfrc", "multfrc", "n = 4"),
            flow("cp", "cp", "n = 4")
        );
        let g = goodputs(&flows, BERNOULLI_1, seed);
        ratios.push((g[1] / g[0], g[2] / g[0]));
    }
    let m = ratios.iter().map(|r| r.0).sum::<f64>() / 3.0;
    let c = ratios.iter().map(|r| r.1).sum::<f64>() / 3.0;
    println!("n = 4 over TFRC: MulTFRC {m:.2}, CP {c:.2} ({ratios:?})");
    assert!((3.4..5.2).contains(&m), "MulTFRC {m}");
    assert!((3.0..5.2).contains(&c), "CP {c}");
}

/// A reliable MulTFRC transfer of 3 MB (not a whole number of segments) through 3 % loss:
/// every byte is delivered once, in order, and the transfer completes.
#[test]
fn a_reliable_transfer_delivers_every_byte_once() {
    for kind in ["tfrc", "multfrc"] {
        let text = scenario(
            &flow("f", kind, "reliable = true\nbytes = 3000001"),
            "{ kind = \"bernoulli\", p = 0.03 }",
            "120s",
        )
        .replace("warmup = \"20s\"", "warmup = \"0s\"");
        let sim = common::run(&text, None);
        let r = sim.results();
        assert_eq!(r.flows.bytes_delivered[0], 3_000_001, "{kind}");
        assert!(r.flows.completion_s[0].is_finite(), "{kind}");
        let f = sim.flows()[0].transport.as_tfrc().unwrap();
        assert!(r.flows.retransmissions[0] > 50, "{kind}");
        assert_eq!(f.stats().delivered_bytes, 3_000_001);
        println!(
            "{kind}: completed at {:.2} s, {} retransmissions, {} packets",
            r.flows.completion_s[0],
            r.flows.retransmissions[0],
            f.sent_packets()
        );
    }
}

/// An `[[event]]` raising n from 1 to 4 at 60 s: X follows the new equation at once, and the
/// rate over the next minute is about 4× (p = 1 %, independent losses).
#[test]
fn n_changes_during_the_run() {
    let text = format!(
        "{}\n[[event]]\nat = \"60s\"\nflow = \"m\"\nn = 4\n",
        scenario(&flow("m", "multfrc", "n = 1"), BERNOULLI_1, "120s")
    );
    let sim = common::run(&text, None);
    let r = sim.results();
    let fs = &r.flow_series;
    let mean = |from: f64, to: f64| {
        let xs: Vec<f64> = fs
            .time_s
            .iter()
            .zip(&fs.allowed_rate_bps)
            .filter(|(t, _)| **t > from && **t <= to)
            .map(|(_, x)| *x)
            .collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    let (before, after) = (mean(20.0, 60.0), mean(70.0, 120.0));
    println!("allowed rate: n = 1 {before:.0}, n = 4 {after:.0} bit/s");
    assert!(
        (3.2..5.5).contains(&(after / before)),
        "{before} -> {after}"
    );
    let s = sim.flows()[0].transport.as_tfrc().unwrap().sender();
    assert_eq!(s.equation().flows(), 4.0);
}

#[test]
fn runs_are_deterministic() {
    let text = scenario(
        &format!(
            "{}{}",
            flow("m", "multfrc", "n = 2.5"),
            flow("c", "cp", "n = 3\noscillation_reduction = true")
        ),
        BERNOULLI_1,
        "60s",
    );
    let a = serde_json::to_string(&common::run(&text, None).results()).unwrap();
    let b = serde_json::to_string(&common::run(&text, None).results()).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&common::run(&text, Some(9)).results()).unwrap();
    assert_ne!(a, c);
}

/// Loss steps from 1 % to 10 % at 30 s and to 0.5 % at 60 s (periodic loss changed by
/// `[[event]]`s, as in the MulTFRC paper's Figure 4): p follows each step within a few
/// seconds, and the allowed rate with it.
#[test]
fn the_loss_event_rate_follows_steps_in_the_loss_rate() {
    let text = format!(
        "{}\n[[event]]\nat = \"30s\"\nlink = \"bottleneck\"\nloss = {{ kind = \"periodic\", every = 10 }}\n\
         [[event]]\nat = \"60s\"\nlink = \"bottleneck\"\nloss = {{ kind = \"periodic\", every = 200 }}\n",
        scenario(
            &flow("m", "multfrc", "n = 2"),
            "{ kind = \"periodic\", every = 100 }",
            "90s"
        )
    );
    let sim = common::run(&text, None);
    let r = sim.results();
    let fs = &r.flow_series;
    let at = |t: f64| {
        let i = fs.time_s.iter().position(|x| *x >= t).unwrap();
        (fs.loss_event_rate[i], fs.allowed_rate_bps[i])
    };
    let (p1, x1) = at(29.0);
    let (p10, x10) = at(40.0);
    let (p05, x05) = at(89.0);
    println!("p: {p1:.4} -> {p10:.4} -> {p05:.5}; X: {x1:.0} -> {x10:.0} -> {x05:.0}");
    assert!((p1 - 0.01).abs() < 0.002, "{p1}");
    assert!(p10 > 0.06, "{p10}");
    assert!((p05 - 0.005).abs() < 0.001, "{p05}");
    assert!(x10 < x1 / 3.0 && x05 > x1);
}

/// Issue 34: host timing settings must never be ignored. The rate-based and datagram sources
/// (TFRC, MulTFRC, CP, CBR, on/off) have no TCP host stack to delay: on such a flow the keys
/// are refused, naming the flow's field and the kinds that take them.
#[test]
fn host_timing_keys_are_refused_where_they_cannot_apply() {
    let extras = [
        ("tfrc", ""),
        ("multfrc", ""),
        ("cp", ""),
        ("cbr", "rate = \"1Mbps\"\n"),
        ("onoff", "rate = \"1Mbps\"\n"),
    ];
    for (kind, extra) in extras {
        for key in [
            "host_jitter = \"5us\"",
            "host_stall_rate = 10",
            "host_stall_duration = \"1ms\"",
        ] {
            let text = scenario(
                &flow("f", kind, &format!("{extra}{key}")),
                "{ kind = \"bernoulli\", p = 0.0 }",
                "30s",
            );
            let error = plait_core::scenario::Scenario::from_toml_str(&text, "s.toml", &[])
                .expect_err(&format!("{kind} with {key}"))
                .to_string();
            let field = key.split(' ').next().unwrap();
            assert!(
                error.contains(&format!("flow[0].{field}")) && error.contains("mptcp"),
                "{kind}: {error}"
            );
        }
    }
}

/// CP measured over the whole flow (`loss_over = "flow"`, the TFRC variant of MulTCP of
/// Singh, Pradhan and Francis 2004): at 8 shares and 2 % independent losses, the whole flow
/// sees several losses in a round trip as one loss event, so its loss event rate is well
/// below a share's and the same equation (8 times TFRC's) allows it more; the allowed rate is
/// that equation at what it measured.
#[test]
fn cp_over_the_whole_flow_is_the_tfrc_variant_of_multcp() {
    let loss = "{ kind = \"bernoulli\", p = 0.02 }";
    let flows = format!(
        "{}{}",
        flow("share", "cp", "n = 8"),
        flow("whole", "cp", "n = 8\nloss_over = \"flow\"")
    );
    let sim = common::run(&scenario(&flows, loss, "100s"), None);
    let (share, whole) = (
        sim.flows()[0].transport.as_tfrc().unwrap().sender(),
        sim.flows()[1].transport.as_tfrc().unwrap().sender(),
    );
    let (p_share, p_whole) = (share.loss_event_rate(), whole.loss_event_rate());
    println!(
        "p: share {p_share:.5}, whole flow {p_whole:.5}; X: {:.0} vs {:.0}",
        share.rate(),
        whole.rate()
    );
    assert!(p_whole < 0.8 * p_share, "{p_whole} vs {p_share}");
    assert!(whole.rate() > 1.2 * share.rate());
    let rtt = whole.rtt().unwrap();
    let model = 8.0 * plait_core::model::tfrc::rate(1460.0, rtt, p_whole, 4.0 * rtt, 1.0);
    assert!(
        (whole.rate() - model).abs() <= 1e-9 * model,
        "{} vs {model}",
        whole.rate()
    );
}
