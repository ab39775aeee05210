//! Scenario parsing end to end: the dumbbell file, one test per kind of mistake, overrides,
//! JSON input and the catalog.

use super::*;
use crate::app::onoff::Period;
use crate::app::tcp;
use crate::ids::LinkId;
use crate::net::queue::{Limit, QueueSpec, RedSpec};
use crate::protocol::SourceSpec;
use crate::registry::Value;
use crate::time::{Rate, SimTime};
use crate::transport::cc::CcSpec;
use crate::transport::tcp::TcpConfig;

const DUMBBELL: &str = include_str!("../../../../experiments/dumbbell/dumbbell.toml");

/// A small two-host scenario that mistakes are spliced into.
const BASE: &str = r#"
[simulation]
duration = "10s"

[[link]]
name = "a"
from = "h1"
to = "r"
rate = "10Mbps"
delay = "5ms"

[[link]]
name = "b"
from = "r"
to = "h2"
rate = "10Mbps"
delay = "5ms"
"#;

const TCP_FLOW: &str = r#"
[[flow]]
name = "f"
kind = "tcp"
src = "h1"
dst = "h2"
"#;

fn set(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn ok(text: &str) -> Scenario {
    Scenario::from_toml_str(text, "test.toml", &[]).unwrap_or_else(|e| panic!("{e}"))
}

fn ok_with(text: &str, overrides: &[(&str, &str)]) -> Scenario {
    Scenario::from_toml_str(text, "test.toml", &set(overrides)).unwrap_or_else(|e| panic!("{e}"))
}

fn err(text: &str) -> ScenarioError {
    match Scenario::from_toml_str(text, "test.toml", &[]) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

fn err_with(text: &str, overrides: &[(&str, &str)]) -> ScenarioError {
    match Scenario::from_toml_str(text, "test.toml", &set(overrides)) {
        Ok(_) => panic!("accepted with {overrides:?}"),
        Err(e) => e,
    }
}

/// An algorithm of category `K` configured in code, as a scenario would give it.
fn configured<K: crate::registry::Kind>(
    name: &str,
    given: &[(&str, Value)],
) -> crate::registry::Configured<K> {
    crate::registry::Configured::new(name, given).unwrap_or_else(|e| panic!("{e}"))
}

fn droptail(limit: Limit) -> QueueSpec {
    match limit {
        Limit::Packets(n) => configured("droptail", &[("packets", Value::Integer(n))]),
        Limit::Bytes(n) => configured("droptail", &[("bytes", Value::Size(n))]),
    }
}

/// The controller of a TCP flow.
fn cc_of(flow: &FlowSpec) -> &CcSpec {
    assert_eq!(flow.kind.name(), "tcp");
    flow.kind.params().controller("cc")
}

/// The connection settings of a TCP flow.
fn tcp_of(flow: &FlowSpec) -> TcpConfig {
    assert_eq!(flow.kind.name(), "tcp");
    tcp::config(flow.kind.params())
}

/// BASE plus one TCP flow whose table gets `extra` lines.
fn base_flow(extra: &str) -> String {
    format!("{BASE}{TCP_FLOW}{extra}\n")
}

#[test]
fn dumbbell_file_parses_to_the_expected_values() {
    let s = Scenario::from_toml_str(DUMBBELL, "dumbbell.toml", &[]).unwrap();
    assert_eq!(s.source, "dumbbell.toml");
    assert_eq!(
        s.simulation,
        SimulationSpec {
            duration: SimTime::from_secs(60),
            warmup: SimTime::from_secs(10),
            seed: 1,
            sample_interval: None,
            trace_drops: false,
            lookahead: true,
        }
    );
    let node = |name: &str, kind| NodeSpec {
        name: name.to_string(),
        kind,
    };
    assert_eq!(
        s.nodes,
        vec![
            node("src", NodeKind::Host),
            node("r1", NodeKind::Router),
            node("r2", NodeKind::Router),
            node("dst", NodeKind::Host),
        ]
    );
    let default_queue = droptail(Limit::Packets(1000));
    let bottleneck_queue = droptail(Limit::Packets(367));
    let link = |name: &str, from: &str, to: &str, rate, delay, queue: &QueueSpec| LinkSpec {
        name: name.to_string(),
        from: from.to_string(),
        to: to.to_string(),
        rate,
        delay,
        duplex: true,
        queue: queue.clone(),
        reverse_queue: queue.clone(),
        loss: None,
        reverse_loss: None,
        local: false,
    };
    let gbps = Rate::from_mbps(1000);
    let ms = SimTime::from_millis;
    assert_eq!(
        s.links,
        vec![
            link("access_src", "src", "r1", gbps, ms(1), &default_queue),
            link(
                "bottleneck",
                "r1",
                "r2",
                Rate::from_mbps(100),
                ms(20),
                &bottleneck_queue
            ),
            link("access_dst", "r2", "dst", gbps, ms(1), &default_queue),
        ]
    );
    assert_eq!(s.flows.len(), 10);
    for (i, flow) in s.flows.iter().enumerate() {
        assert_eq!(
            flow,
            &FlowSpec {
                name: format!("bulk.{i}"),
                kind: configured::<crate::protocol::SourceKind>("tcp", &[]),
                src: "src".to_string(),
                dst: "dst".to_string(),
                start: StartSpec::Uniform(SimTime::ZERO, SimTime::from_secs(4)),
                stop: None,
                route: None,
                // Link directions: access_src 0 (r1 side back: 1), bottleneck 2/3,
                // access_dst 4/5.
                paths: vec![crate::scenario::PathSpec {
                    forward: vec![LinkId(0), LinkId(2), LinkId(4)],
                    reverse: vec![LinkId(5), LinkId(3), LinkId(1)],
                }],
                multipath: None,
                shares: None,
            }
        );
    }
}

#[test]
fn count_expansion_names_copies_and_keeps_single_names() {
    let s = ok(&format!(
        "{BASE}{TCP_FLOW}count = 3\n[[flow]]\nname = \"solo\"\nkind = \"cbr\"\nsrc = \"h2\"\ndst = \"h1\"\nrate = \"1Mbps\"\n"
    ));
    let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["f.0", "f.1", "f.2", "solo"]);
    assert_eq!(s.flow("f.1").unwrap().src, "h1");
    assert!(s.flow("f").is_none());
    let e = err(&base_flow("count = 0"));
    assert_eq!(e.path, "flow[0].count");
    assert!(e.message.contains("between 1 and"), "{e}");
}

#[test]
fn error_display_names_file_path_and_message() {
    let e = ScenarioError {
        file: "x.toml".into(),
        path: "flow[0].cc".into(),
        message: "bad".into(),
    };
    assert_eq!(e.to_string(), "x.toml: flow[0].cc: bad");
    let e = ScenarioError {
        file: "x.toml".into(),
        path: String::new(),
        message: "bad".into(),
    };
    assert_eq!(e.to_string(), "x.toml: bad");
    let boxed: Box<dyn std::error::Error> = Box::new(e);
    assert_eq!(boxed.to_string(), "x.toml: bad");
}

// ---- One test per kind of mistake ----------------------------------------------------------

#[test]
fn unknown_key_lists_the_fields_and_suggests_the_closest() {
    let text = BASE.replace(
        "name = \"b\"",
        "name = \"b\"\nqeue = { kind = \"droptail\", packets = 5 }",
    );
    let e = err(&format!("{text}{TCP_FLOW}"));
    assert_eq!(e.path, "link[1].qeue");
    assert_eq!(
        e.message,
        "unknown field (expected one of: name, from, to, rate, delay, duplex, queue, reverse_queue, \
         loss, reverse_loss, local); did you mean 'queue'?"
    );
    let e = err(&base_flow("").replace("[simulation]", "[simulaton]\n[simulation]"));
    assert_eq!(e.path, "simulaton");
    assert!(
        e.message.starts_with("unknown section")
            && e.message.ends_with("did you mean 'simulation'?")
    );
    // A key far from any known one gets no suggestion.
    let e = err(&base_flow("bandwidth = 3"));
    assert_eq!(e.path, "flow[0].bandwidth");
    assert!(!e.message.contains("did you mean"), "{e}");
}

/// The registered controllers as an error message lists them: `aimd, cubic, ..., reno`.
fn known_controllers() -> String {
    let names = crate::registry::names::<crate::transport::cc::ControllerKind>();
    assert!(names.starts_with(&["aimd", "cubic"]) && names.contains(&"reno"));
    names.join(", ")
}

#[test]
fn unknown_controller_has_the_exact_message() {
    let e = err(&base_flow("cc = \"renoo\""));
    assert_eq!(
        e.to_string(),
        format!(
            "test.toml: flow[0].cc: unknown controller 'renoo' (known: {})",
            known_controllers()
        )
    );
    let e = err(&base_flow("cc = { name = \"vegass\" }"));
    assert_eq!(e.path, "flow[0].cc.name");
    assert_eq!(
        e.message,
        format!(
            "unknown controller 'vegass' (known: {})",
            known_controllers()
        )
    );
}

#[test]
fn unknown_queue_kind() {
    let e = err(&BASE
        .replace(
            "delay = \"5ms\"\n\n",
            "delay = \"5ms\"\nqueue = { kind = \"fifo\" }\n\n",
        )
        .to_string());
    assert_eq!(e.path, "link[0].queue.kind");
    assert_eq!(
        e.message,
        "unknown queue kind 'fifo' (known: droptail, red, threshold_dropper)"
    );
}

#[test]
fn field_of_another_kind_says_which_kinds_use_it() {
    let e = err(&format!(
        "{BASE}[[flow]]\nname = \"c\"\nkind = \"cbr\"\nsrc = \"h1\"\ndst = \"h2\"\nrate = \"1Mbps\"\ncc = \"reno\"\n"
    ));
    assert_eq!(e.path, "flow[0].cc");
    assert_eq!(
        e.message,
        "not a field of cbr flows (used by: mpat, mptcp, tcp)"
    );
    let e = err(&base_flow("").replace(
        "delay = \"5ms\"\n\n[[link]]",
        "delay = \"5ms\"\nqueue = { kind = \"droptail\", packets = 5, max_p = 0.2 }\n\n[[link]]",
    ));
    assert_eq!(e.path, "link[0].queue.max_p");
    assert_eq!(e.message, "not a field of droptail queues (used by: red)");
}

#[test]
fn missing_required_fields() {
    let e = err(&base_flow("").replacen("rate = \"10Mbps\"\n", "", 1));
    assert_eq!(e.path, "link[0].rate");
    assert_eq!(
        e.message,
        "missing required field (a rate such as \"100Mbps\" or a number of bit/s)"
    );
    let e = err(&base_flow("").replace("kind = \"tcp\"\n", ""));
    assert_eq!(e.path, "flow[0].kind");
    // Every protocol, in name order (`crate::protocol::PROTOCOLS` lists them so).
    let kinds: Vec<&str> = crate::protocol::PROTOCOLS
        .iter()
        .map(|p| p.name())
        .collect();
    assert!(kinds.starts_with(&["cbr", "cp"]) && kinds.ends_with(&["onoff", "tcp", "tfrc"]));
    assert_eq!(
        e.message,
        format!("missing required field (one of: {})", kinds.join(", "))
    );
    let e = err(&base_flow("").replace("duration = \"10s\"", ""));
    assert_eq!(e.path, "simulation.duration");
    let e = err(&base_flow("").replace("[simulation]\nduration = \"10s\"", ""));
    assert_eq!(
        e.to_string(),
        "test.toml: simulation: missing required section [simulation]"
    );
    let e = err(BASE);
    assert_eq!(e.path, "flow");
}

#[test]
fn bad_unit_lists_the_accepted_ones() {
    let e = err(&base_flow("").replacen("delay = \"5ms\"", "delay = \"5msec\"", 1));
    assert_eq!(e.path, "link[0].delay");
    assert_eq!(
        e.message,
        "invalid duration \"5msec\": unknown unit 'msec' (accepted: ns, us, ms, s, min)"
    );
    let e = err(&base_flow("").replacen("rate = \"10Mbps\"", "rate = \"10 megabits\"", 1));
    assert_eq!(e.path, "link[0].rate");
    assert!(
        e.message.contains("accepted: bps, kbps, Mbps, Gbps, Tbps"),
        "{e}"
    );
    let e = err(&base_flow("").replacen("rate = \"10Mbps\"", "rate = \"0Mbps\"", 1));
    assert!(e.message.contains("at least 1 bps"), "{e}");
    let e = err(&base_flow("receive_buffer = \"1.5 kilobytes\""));
    assert_eq!(e.path, "flow[0].receive_buffer");
    assert!(e.message.contains("KiB"), "{e}");
}

#[test]
fn negative_duration() {
    let e = err(&base_flow("").replace("duration = \"10s\"", "duration = \"-10s\""));
    assert_eq!(
        e.to_string(),
        "test.toml: simulation.duration: invalid duration \"-10s\": must not be negative"
    );
    let e = err(&base_flow("").replacen("delay = \"5ms\"", "delay = -0.005", 1));
    assert_eq!(e.path, "link[0].delay");
    assert_eq!(e.message, "must not be negative, got -0.005");
}

#[test]
fn warmup_must_be_less_than_duration() {
    let e =
        err(&base_flow("").replace("duration = \"10s\"", "duration = \"10s\"\nwarmup = \"10s\""));
    assert_eq!(e.path, "simulation.warmup");
    assert_eq!(e.message, "must be less than the duration (10s), got 10s");
    let e = err(&base_flow("").replace("duration = \"10s\"", "duration = 0"));
    assert_eq!(e.path, "simulation.duration");
}

#[test]
fn duplicate_names() {
    let e = err(&base_flow("").replace("name = \"b\"", "name = \"a\""));
    assert_eq!(e.path, "link[1].name");
    assert_eq!(e.message, "duplicate link name 'a' (also link[0])");
    // Names clash after count expansion too, and the path is the entry as written.
    let e = err(&format!(
        "{BASE}{TCP_FLOW}count = 2\n{}",
        TCP_FLOW.replace("\"f\"", "\"f.1\"")
    ));
    assert_eq!(e.path, "flow[1].name");
    assert_eq!(
        e.message,
        "duplicate flow name 'f.1' (also flow[0]: copy 1 of 'f', count = 2)"
    );
    let e = err(&format!(
        "{}[[node]]\nname = \"r\"\n[[node]]\nname = \"r\"\n",
        base_flow("")
    ));
    assert_eq!(e.path, "node[1].name");
}

#[test]
fn unknown_node_in_a_flow() {
    let e = err(&base_flow("").replace("dst = \"h2\"", "dst = \"h3\""));
    assert_eq!(e.path, "flow[0].dst");
    assert_eq!(
        e.message,
        "unknown node 'h3' (known: h1, h2, r); did you mean 'h1'?"
    );
}

#[test]
fn flow_src_equal_to_dst() {
    let e = err(&base_flow("").replace("dst = \"h2\"", "dst = \"h1\""));
    assert_eq!(e.path, "flow[0].dst");
    assert_eq!(
        e.message,
        "same node as src ('h1'); a flow needs two different hosts"
    );
}

#[test]
fn routes_must_be_connected_paths() {
    let with_route = |route: &str| base_flow(&format!("route = {route}"));
    let s = ok(&with_route("[\"h1\", \"r\", \"h2\"]"));
    assert_eq!(
        s.flows[0].route.as_deref(),
        Some(&["h1".to_string(), "r".into(), "h2".into()][..])
    );
    let e = err(&with_route("[\"h1\", \"h2\"]"));
    assert_eq!(e.path, "flow[0].route[1]");
    assert_eq!(e.message, "no link from 'h1' to 'h2'");
    let e = err(&with_route("[\"r\", \"h2\"]"));
    assert_eq!(e.path, "flow[0].route[0]");
    assert_eq!(e.message, "a route starts at src ('h1')");
    let e = err(&with_route("[\"h1\", \"r\"]"));
    assert_eq!(e.path, "flow[0].route[1]");
    assert_eq!(e.message, "a route ends at dst ('h2')");
    let e = err(&with_route("[\"h1\", \"r\", \"h1\", \"r\", \"h2\"]"));
    assert_eq!(e.path, "flow[0].route[2]");
    assert!(e.message.contains("must not loop"), "{e}");
    let e = err(&with_route("[\"h1\", \"x\", \"h2\"]"));
    assert_eq!(e.path, "flow[0].route[1]");
    assert!(e.message.starts_with("unknown node 'x'"), "{e}");
    // A simplex link cannot be crossed backwards.
    let simplex = base_flow("route = [\"h1\", \"r\", \"h2\"]").replace(
        "name = \"b\"\nfrom = \"r\"\nto = \"h2\"",
        "name = \"b\"\nfrom = \"h2\"\nto = \"r\"\nduplex = false",
    );
    let e = err(&simplex);
    assert_eq!(e.path, "flow[0].route[2]");
    assert_eq!(
        e.message,
        "no link from 'r' to 'h2' (the link between them is simplex, from the other side)"
    );
}

#[test]
fn unreachable_destination() {
    let island = format!(
        "{BASE}[[link]]\nname = \"c\"\nfrom = \"h3\"\nto = \"h4\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n{}",
        TCP_FLOW.replace("dst = \"h2\"", "dst = \"h4\"")
    );
    let e = err(&island);
    assert_eq!(e.path, "flow[0].dst");
    assert_eq!(e.message, "no path from 'h1' to 'h4' over the links");
    // A simplex forward path is enough for CBR, but TCP needs a way back for its ACKs.
    let one_way = BASE.replace("delay = \"5ms\"", "delay = \"5ms\"\nduplex = false");
    let cbr = format!("{one_way}[[flow]]\nname = \"c\"\nkind = \"cbr\"\nsrc = \"h1\"\ndst = \"h2\"\nrate = \"1Mbps\"\n");
    assert_eq!(ok(&cbr).flows.len(), 1);
    let e = err(&format!("{one_way}{TCP_FLOW}"));
    assert_eq!(e.path, "flow[0].dst");
    assert!(
        e.message.starts_with("no path back from 'h2' to 'h1'"),
        "{e}"
    );
    let e = err(&format!(
        "{}[[flow]]\nname = \"c\"\nkind = \"cbr\"\nsrc = \"h2\"\ndst = \"h1\"\nrate = \"1Mbps\"\n",
        one_way
    ));
    assert_eq!(e.message, "no path from 'h2' to 'h1' over the links");
}

#[test]
fn probability_out_of_range() {
    let text = base_flow("").replacen(
        "delay = \"5ms\"",
        "delay = \"5ms\"\nloss = { kind = \"bernoulli\", p = 1.5 }",
        1,
    );
    let e = err(&text);
    assert_eq!(e.path, "link[0].loss.p");
    assert_eq!(e.message, "must be a probability between 0 and 1, got 1.5");
    let text = base_flow("").replacen(
        "delay = \"5ms\"",
        "delay = \"5ms\"\nloss = { kind = \"gilbert_elliott\", p_good_to_bad = 0.1, p_bad_to_good = -0.2 }",
        1,
    );
    assert_eq!(err(&text).path, "link[0].loss.p_bad_to_good");
}

#[test]
fn red_thresholds_reversed() {
    let text = base_flow("").replacen(
        "delay = \"5ms\"",
        "delay = \"5ms\"\nqueue = { kind = \"red\", min_th = 20, max_th = 10, packets = 100 }",
        1,
    );
    let e = err(&text);
    assert_eq!(e.path, "link[0].queue.max_th");
    assert_eq!(e.message, "min_th (20) must be less than max_th (10)");
    // The default max_th (15) is below a min_th of 30 as well.
    let text = base_flow("").replacen(
        "delay = \"5ms\"",
        "delay = \"5ms\"\nqueue = { kind = \"red\", min_th = 30 }",
        1,
    );
    assert_eq!(err(&text).path, "link[0].queue.min_th");
    // And max_th beyond the buffer is caught.
    let text = base_flow("").replacen(
        "delay = \"5ms\"",
        "delay = \"5ms\"\nqueue = { kind = \"red\", max_th = 60 }",
        1,
    );
    let e = err(&text);
    assert_eq!(e.path, "link[0].queue.max_th");
    assert_eq!(
        e.message,
        "max_th (60) exceeds the buffer limit (50 packets)"
    );
}

#[test]
fn toml_syntax_error_gives_line_and_column() {
    let text = "[simulation]\nduration = \"10s\"\nseed = = 3\n";
    let e = err(text);
    assert_eq!(e.path, "");
    assert!(
        e.message
            .starts_with("TOML syntax error at line 3, column 8: "),
        "{e}"
    );
    assert!(e
        .to_string()
        .starts_with("test.toml: TOML syntax error at line 3"));
    // Multi-line parser messages are folded into one line.
    let e = err("[simulation]\nduration = 1\n[simulation]\n");
    assert!(!e.message.contains('\n'), "{e}");
    assert!(
        e.message
            .starts_with("TOML syntax error at line 3, column 1: "),
        "{e}"
    );
}

#[test]
fn type_mistakes() {
    let single = "[simulation]\nduration = 1\n[link]\nname = \"a\"\nfrom = \"h1\"\nto = \"h2\"\nrate = 1000\ndelay = 0\n";
    let e = err(&format!("{single}{TCP_FLOW}"));
    assert_eq!(e.path, "link");
    assert!(e.message.contains("write [[link]] for each entry"), "{e}");
    let e = err(&base_flow("sack = \"yes\""));
    assert_eq!(e.path, "flow[0].sack");
    assert_eq!(e.message, "expected true or false, got \"yes\"");
    let e = err(&base_flow("").replace("duration = \"10s\"", "duration = \"10s\"\nseed = 1.5"));
    assert_eq!(e.message, "expected a non-negative integer, got 1.5");
    let e = err(&base_flow("").replace("duration = \"10s\"", "duration = \"10s\"\nseed = -1"));
    assert_eq!(e.message, "must not be negative, got -1");
}

#[test]
fn start_and_stop_must_fit_the_run() {
    let e = err(&base_flow("start = \"10s\""));
    assert_eq!(e.path, "flow[0].start");
    assert_eq!(
        e.message,
        "must be before the end of the simulation (10s), got 10s"
    );
    let e = err(&base_flow("start = { uniform = [\"4s\", \"2s\"] }"));
    assert_eq!(e.path, "flow[0].start.uniform[1]");
    let e = err(&base_flow("start = { uniform = [\"0s\", \"2x\"] }"));
    assert_eq!(e.path, "flow[0].start.uniform[1]");
    let e = err(&base_flow("start = true"));
    assert_eq!(
        e.message,
        "expected a duration or a table such as { uniform = [\"0s\", \"4s\"] }, got true"
    );
    let e = err(&base_flow("start = { uniform = \"2s\" }"));
    assert_eq!(e.path, "flow[0].start.uniform");
    let e = err(&base_flow("start = \"2s\"\nstop = \"1s\""));
    assert_eq!(e.path, "flow[0].stop");
    let s = ok(&base_flow("start = 1.5\nstop = \"9s\""));
    assert_eq!(s.flows[0].start, StartSpec::At(SimTime::from_millis(1500)));
    assert_eq!(s.flows[0].stop, Some(SimTime::from_secs(9)));
}

#[test]
fn node_kinds_follow_declarations_and_flow_endpoints() {
    let s = ok(&format!(
        "{}[[node]]\nname = \"r\"\nkind = \"host\"\n",
        base_flow("")
    ));
    // Declared nodes come first.
    assert_eq!(
        s.nodes[0],
        NodeSpec {
            name: "r".into(),
            kind: NodeKind::Host
        }
    );
    assert_eq!(s.node("h1").unwrap().kind, NodeKind::Host);
    let e = err(&format!(
        "{}[[node]]\nname = \"h1\"\nkind = \"router\"\n",
        base_flow("")
    ));
    assert_eq!(e.path, "flow[0].src");
    assert_eq!(
        e.message,
        "'h1' is declared as a router; flows start and end at hosts"
    );
    let e = err(&format!("{}[[node]]\nname = \"lonely\"\n", base_flow("")));
    assert_eq!(e.path, "node[0].name");
    assert_eq!(e.message, "node 'lonely' is not an endpoint of any link");
    let e = err(&format!(
        "{}[[node]]\nname = \"r\"\nkind = \"switch\"\n",
        base_flow("")
    ));
    assert_eq!(e.path, "node[0].kind");
}

#[test]
fn link_checks() {
    let e = err(&base_flow("").replacen("to = \"r\"", "to = \"h1\"", 1));
    assert_eq!(e.path, "link[0].to");
    let simplex = base_flow("").replacen(
        "delay = \"5ms\"",
        "delay = \"5ms\"\nduplex = false\nreverse_queue = { packets = 5 }",
        1,
    );
    let e = err(&simplex);
    assert_eq!(e.path, "link[0].reverse_queue");
    let e = err(&base_flow("").replacen(
        "delay = \"5ms\"",
        "delay = \"5ms\"\nqueue = { kind = \"droptail\" }",
        1,
    ));
    assert_eq!(e.path, "link[0].queue");
    assert!(e.message.contains("needs a limit"), "{e}");
    let e = err(&base_flow("").replacen(
        "delay = \"5ms\"",
        "delay = \"5ms\"\nqueue = { packets = 5, bytes = \"1MB\" }",
        1,
    ));
    assert_eq!(e.path, "link[0].queue.bytes");
    // A queue without a kind is a droptail queue, so RED settings in it are a mistake.
    let e = err(&base_flow("").replacen(
        "delay = \"5ms\"",
        "delay = \"5ms\"\nqueue = { packets = 5, min_th = 2 }",
        1,
    ));
    assert_eq!(e.path, "link[0].queue.min_th");
    assert_eq!(e.message, "not a field of droptail queues (used by: red)");
}

#[test]
fn queues_and_losses_parse_with_their_parameters() {
    let text = base_flow("").replacen(
        "delay = \"5ms\"",
        r#"delay = "5ms"
queue = { kind = "red", min_th = 10, max_th = 30.5, max_p = 0.2, w_q = 0.01, gentle = false, wait = false, packets = 100 }
reverse_queue = { bytes = "64KiB" }
loss = { kind = "periodic", every = 100 }
reverse_loss = { kind = "gilbert_elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.5 }"#,
        1,
    )
    .replacen(
        "delay = \"5ms\"\n\n[[flow]]",
        r#"delay = "5ms"
queue = { kind = "threshold_dropper", threshold = 20, hold = "100ms", policy = "largest_rate" }
loss = { kind = "bernoulli", p = 0.01 }

[[flow]]"#,
        1,
    );
    let s = ok(&text);
    let a = s.link("a").unwrap();
    assert_eq!(a.queue.name(), "red");
    assert_eq!(
        RedSpec::from(a.queue.params()),
        RedSpec {
            min_th: 10.0,
            max_th: 30.5,
            max_p: 0.2,
            w_q: 0.01,
            gentle: false,
            wait: false,
            byte_mode: false,
            mean_packet_bytes: RedSpec::default().mean_packet_bytes,
            limit: Limit::Packets(100),
        }
    );
    assert_eq!(a.reverse_queue, droptail(Limit::Bytes(65_536)));
    assert_eq!(
        a.loss,
        Some(configured(
            "periodic",
            &[
                ("every", Value::Integer(100)),
                ("offset", Value::Integer(0))
            ]
        ))
    );
    assert_eq!(
        a.reverse_loss,
        Some(configured(
            "gilbert_elliott",
            &[
                ("p_good_to_bad", Value::Number(0.01)),
                ("p_bad_to_good", Value::Number(0.5)),
                ("loss_good", Value::Number(0.0)),
                ("loss_bad", Value::Number(1.0)),
            ]
        ))
    );
    let b = s.link("b").unwrap();
    assert_eq!(
        b.queue,
        configured(
            "threshold_dropper",
            &[
                ("threshold", Value::Integer(20)),
                ("hold", Value::Duration(SimTime::from_millis(100))),
                ("policy", Value::Choice("largest_rate")),
            ]
        )
    );
    assert_eq!(
        b.loss,
        Some(configured::<crate::net::loss::LossKind>(
            "bernoulli",
            &[("p", Value::Number(0.01))]
        ))
    );
    assert_eq!(b.reverse_loss, None);
}

#[test]
fn red_in_byte_mode_scales_default_thresholds() {
    let text = base_flow("").replacen(
        "delay = \"5ms\"",
        "delay = \"5ms\"\nqueue = { kind = \"red\", mode = \"bytes\", mean_packet_size = \"1000B\", bytes = \"100KB\" }",
        1,
    );
    let queue = ok(&text).links[0].queue.clone();
    assert_eq!(queue.name(), "red");
    let red = RedSpec::from(queue.params());
    assert!(red.byte_mode);
    assert_eq!((red.min_th, red.max_th), (5_000.0, 15_000.0));
    assert_eq!(red.limit, Limit::Bytes(100_000));
}

#[test]
fn controllers_as_names_and_tables() {
    let cc = |line: &str| cc_of(&ok(&base_flow(line)).flows[0]).clone();
    assert_eq!(cc(""), configured("reno", &[]));
    assert_eq!(cc("cc = \"cubic\""), configured("cubic", &[]));
    assert_eq!(
        cc("cc = { name = \"cubic\", c = 0.4, beta = 0.8, tcp_friendliness = false }"),
        configured(
            "cubic",
            &[
                ("beta", Value::Number(0.8)),
                ("tcp_friendliness", Value::Bool(false)),
            ]
        )
    );
    let aimd = cc("cc = { name = \"aimd\", alpha = 1, beta = 0.5 }");
    assert_eq!(aimd, configured("aimd", &[]));
    assert_eq!(
        crate::transport::cc::AimdParams::from(aimd.params()),
        crate::transport::cc::AimdParams {
            alpha: 1.0,
            beta: 0.5
        }
    );
    let e = err(&base_flow("cc = { name = \"aimd\", beta = 1.5 }"));
    assert_eq!(e.path, "flow[0].cc.beta");
    let e = err(&base_flow("cc = { name = \"reno\", beta = 0.5 }"));
    assert_eq!(e.path, "flow[0].cc.beta");
    assert_eq!(
        e.message,
        "not a field of reno controllers (used by: aimd, cubic, vegas)"
    );
    let e = err(&base_flow("cc = 3"));
    assert!(e.message.starts_with("expected a controller name"), "{e}");
}

#[test]
fn tcp_defaults_and_flow_overrides() {
    let text = format!(
        "[tcp]\nmss = \"1000B\"\nsack = false\nmin_rto = \"1s\"\n{}",
        base_flow("initial_window = 4\nbytes = \"1.5MB\"\nreceive_buffer = 65536")
    );
    let flow = ok(&text).flows[0].clone();
    let (tcp, bytes) = (tcp_of(&flow), flow.kind.params().opt_size("bytes"));
    assert_eq!(bytes, Some(1_500_000));
    assert_eq!(
        tcp,
        TcpConfig {
            mss: 1000,
            sack: false,
            min_rto: SimTime::from_secs(1),
            initial_window: 4,
            receive_buffer: 65_536,
            ..TcpConfig::default()
        }
    );
    // A flow setting that conflicts with [tcp] is reported where the flow sets it.
    let e = err(&format!(
        "[tcp]\nmin_rto = \"2s\"\n{}",
        base_flow("max_rto = \"1s\"")
    ));
    assert_eq!(e.path, "flow[0].max_rto");
    assert_eq!(e.message, "min_rto (2s) must not exceed max_rto (1s)");
    let e = err(&format!("[tcp]\nmin_rto = \"90s\"\n{}", base_flow("")));
    assert_eq!(e.path, "tcp.min_rto");
    let e = err(&base_flow("mss = 0"));
    assert_eq!(e.path, "flow[0].mss");
    assert_eq!(e.message, "must be between 1 and 65535 bytes, got 0");
    let e = err(&base_flow("receive_buffer = 100"));
    assert_eq!(e.path, "flow[0].receive_buffer");
    let e = err(&format!("[tcp]\nmsss = 1000\n{}", base_flow("")));
    assert_eq!(e.path, "tcp.msss");
    assert!(e.message.ends_with("did you mean 'mss'?"), "{e}");
}

#[test]
fn cbr_and_onoff_sources() {
    let text = format!(
        "{BASE}[[flow]]\nname = \"c\"\nkind = \"cbr\"\nsrc = \"h1\"\ndst = \"h2\"\nrate = \"1.5Mbps\"\n\
         [[flow]]\nname = \"o\"\nkind = \"onoff\"\nsrc = \"h2\"\ndst = \"h1\"\nrate = 64000\npacket_size = \"1500B\"\n\
         on = {{ exponential = \"500ms\" }}\noff = {{ pareto = \"1s\", shape = 1.5 }}\n"
    );
    let s = ok(&text);
    let source = |name: &str, given: &[(&str, Value)]| -> SourceSpec { configured(name, given) };
    assert_eq!(
        s.flows[0].kind,
        source(
            "cbr",
            &[
                ("rate", Value::Rate(Rate(1_500_000))),
                ("packet_size", Value::Size(1000))
            ]
        )
    );
    assert_eq!(
        s.flows[1].kind,
        source(
            "onoff",
            &[
                ("rate", Value::Rate(Rate(64_000))),
                ("packet_size", Value::Size(1500)),
                (
                    "on",
                    Value::Period(Period::Exponential {
                        mean: SimTime::from_millis(500)
                    })
                ),
                (
                    "off",
                    Value::Period(Period::Pareto {
                        mean: SimTime::from_secs(1),
                        shape: 1.5
                    })
                ),
            ]
        )
    );
    let onoff = |on: &str| {
        format!("{BASE}[[flow]]\nname = \"o\"\nkind = \"onoff\"\nsrc = \"h1\"\ndst = \"h2\"\nrate = \"1Mbps\"\n{on}off = {{ exponential = 1 }}\n")
    };
    assert_eq!(err(&onoff("")).path, "flow[0].on");
    assert_eq!(
        err(&onoff("on = { pareto = \"1s\", shape = 1 }\n")).path,
        "flow[0].on.shape"
    );
    assert_eq!(
        err(&onoff("on = { pareto = \"1s\" }\n")).path,
        "flow[0].on.shape"
    );
    assert_eq!(
        err(&onoff("on = { exponential = \"1s\", shape = 2 }\n")).path,
        "flow[0].on.shape"
    );
    assert_eq!(
        err(&onoff(
            "on = { exponential = \"1s\", pareto = \"1s\", shape = 2 }\n"
        ))
        .path,
        "flow[0].on"
    );
    assert_eq!(
        err(&onoff("on = { normal = \"1s\" }\n")).path,
        "flow[0].on.normal"
    );
    let e = err(&format!(
        "{BASE}[[flow]]\nname = \"c\"\nkind = \"cbr\"\nsrc = \"h1\"\ndst = \"h2\"\n"
    ));
    assert_eq!(e.path, "flow[0].rate");
}

// ---- Overrides -----------------------------------------------------------------------------

#[test]
fn overrides_by_index() {
    let s = ok_with(
        DUMBBELL,
        &[
            ("simulation.seed", "3"),
            ("flow[0].cc", "cubic"),
            ("link[1].queue.packets", "40"),
            ("link[0].queue.packets", "80"),
            ("simulation.sample_interval", "\"100ms\""),
        ],
    );
    assert_eq!(s.simulation.seed, 3);
    assert_eq!(
        s.simulation.sample_interval,
        Some(SimTime::from_millis(100))
    );
    assert_eq!(cc_of(&s.flows[9]).name(), "cubic");
    assert_eq!(s.links[1].queue, droptail(Limit::Packets(40)));
    // A link without a queue table gets one; its kind defaults to droptail.
    assert_eq!(s.links[0].queue, droptail(Limit::Packets(80)));
    assert_eq!(s.links[2].queue, droptail(Limit::Packets(1000)));
}

#[test]
fn overrides_by_name() {
    let s = ok_with(
        DUMBBELL,
        &[
            ("link.bottleneck.rate", "10Mbps"),
            ("flow.bulk.count", "5"),
            ("link.bottleneck.queue", "{ kind = \"red\", packets = 100 }"),
            ("flow.bulk.start", "1"),
            ("flow.bulk.cc", "{ name = \"aimd\", alpha = 2 }"),
        ],
    );
    assert_eq!(s.link("bottleneck").unwrap().rate, Rate::from_mbps(10));
    let queue = &s.link("bottleneck").unwrap().queue;
    assert_eq!(queue.name(), "red");
    assert_eq!(
        RedSpec::from(queue.params()),
        RedSpec {
            limit: Limit::Packets(100),
            ..RedSpec::default()
        }
    );
    assert_eq!(s.flows.len(), 5);
    assert_eq!(s.flows[4].name, "bulk.4");
    assert_eq!(s.flows[0].start, StartSpec::At(SimTime::from_secs(1)));
    let cc = cc_of(&s.flows[0]);
    assert_eq!(cc.name(), "aimd");
    assert_eq!(
        (cc.params().number("alpha"), cc.params().number("beta")),
        (2.0, 0.5)
    );
    // Later overrides win.
    let s = ok_with(
        DUMBBELL,
        &[("simulation.seed", "3"), ("simulation.seed", "4")],
    );
    assert_eq!(s.simulation.seed, 4);
    // An element of a list can be set.
    let s = ok_with(DUMBBELL, &[("flow[0].start.uniform[1]", "\"2s\"")]);
    assert_eq!(
        s.flows[0].start,
        StartSpec::Uniform(SimTime::ZERO, SimTime::from_secs(2))
    );
}

#[test]
fn override_to_a_missing_entry() {
    let two = format!("{BASE}{TCP_FLOW}{}", TCP_FLOW.replace("\"f\"", "\"g\""));
    let e = err_with(&two, &[("flow[9].cc", "cubic")]);
    assert_eq!(
        e.to_string(),
        "test.toml: --set flow[9].cc: there is no flow[9] (2 flows)"
    );
    let e = err_with(DUMBBELL, &[("link.bottlenek.rate", "1Mbps")]);
    assert_eq!(e.path, "--set link.bottlenek.rate");
    assert_eq!(
        e.message,
        "there is no link named 'bottlenek' (names: access_src, bottleneck, access_dst)"
    );
    let e = err_with(DUMBBELL, &[("node[0].kind", "host")]);
    assert_eq!(e.message, "there is no node[0] (0 nodes)");
    let e = err_with(DUMBBELL, &[("flow[0].start.uniform[2]", "1")]);
    assert_eq!(
        e.message,
        "there is no flow[0].start.uniform[2] (the list has 2 entries)"
    );
    let e = err_with(DUMBBELL, &[("flow[0].cc.beta", "0.5")]);
    assert_eq!(e.message, "flow[0].cc is \"reno\", not a table");
    let e = err_with(DUMBBELL, &[("flow[0.cc", "x")]);
    assert!(e.message.starts_with("bad key"), "{e}");
}

#[test]
fn override_with_a_bad_value_points_at_the_override() {
    let e = err_with(DUMBBELL, &[("simulation.duration", "fast")]);
    assert_eq!(e.path, "simulation.duration");
    assert_eq!(
        e.message,
        "invalid duration \"fast\": expected a number followed by a unit (ns, us, ms, s, min) \
         (from --set simulation.duration=fast)"
    );
    let e = err_with(DUMBBELL, &[("flow.bulk.cc", "renoo")]);
    assert_eq!(
        e.to_string(),
        format!(
            "test.toml: flow[0].cc: unknown controller 'renoo' (known: {}) \
             (from --set flow.bulk.cc=renoo)",
            known_controllers()
        )
    );
    let e = err_with(DUMBBELL, &[("link[1].queue.packets", "-4")]);
    assert_eq!(e.path, "link[1].queue.packets");
    assert!(
        e.message.ends_with("(from --set link[1].queue.packets=-4)"),
        "{e}"
    );
    // A typo in a section name is caught by validation, still pointing at the override.
    let e = err_with(DUMBBELL, &[("simulaton.seed", "2")]);
    assert_eq!(e.path, "simulaton");
}

// ---- JSON, files, robustness ---------------------------------------------------------------

#[test]
fn json_input_is_equivalent_to_toml() {
    let json = r#"{
        "simulation": { "duration": "60s", "warmup": "10s", "seed": 1, "sample_interval": null },
        "link": [
            { "name": "access_src", "from": "src", "to": "r1", "rate": "1Gbps", "delay": "1ms" },
            { "name": "bottleneck", "from": "r1", "to": "r2", "rate": "100Mbps", "delay": "20ms",
              "queue": { "kind": "droptail", "packets": 367 } },
            { "name": "access_dst", "from": "r2", "to": "dst", "rate": "1Gbps", "delay": "1ms" }
        ],
        "flow": [
            { "name": "bulk", "count": 10, "kind": "tcp", "cc": "reno", "src": "src", "dst": "dst",
              "start": { "uniform": ["0s", "4s"] }, "stop": null }
        ]
    }"#;
    let overrides = set(&[("link.bottleneck.rate", "10Mbps")]);
    let from_json = Scenario::from_json_str(json, "dumbbell", &overrides).unwrap();
    let from_toml = Scenario::from_toml_str(DUMBBELL, "dumbbell", &overrides).unwrap();
    assert_eq!(from_json, from_toml);

    let e =
        Scenario::from_json_str("{\"simulation\": {\n\"duration\": }", "d.json", &[]).unwrap_err();
    assert!(
        e.message.starts_with("JSON syntax error at line 2, column"),
        "{e}"
    );
    let e = Scenario::from_json_str("[1, 2]", "d.json", &[]).unwrap_err();
    assert_eq!(e.message, "expected a JSON object at the top level");
    let e = Scenario::from_json_str("{\"flow\": [null]}", "d.json", &[]).unwrap_err();
    assert_eq!(e.path, "flow[0]");
    let e = Scenario::from_json_str(
        "{\"simulation\": {\"seed\": 18446744073709551615}}",
        "d.json",
        &[],
    )
    .unwrap_err();
    assert_eq!(e.path, "simulation.seed");
}

#[test]
fn from_file_reads_toml_and_reports_unreadable_files() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/dumbbell/dumbbell.toml");
    let s = Scenario::from_file(&path, &[]).unwrap();
    assert_eq!(s.flows.len(), 10);
    assert!(s.source.ends_with("dumbbell.toml"));
    let missing = std::path::Path::new("/nonexistent/plait/scenario.toml");
    let e = Scenario::from_file(missing, &[]).unwrap_err();
    assert_eq!(e.file, "/nonexistent/plait/scenario.toml");
    assert!(
        e.message.starts_with("cannot read the scenario file: "),
        "{e}"
    );
}

#[test]
fn truncated_input_gives_errors_not_panics() {
    // Every prefix of a valid file is parsed; none may panic, and the full file must pass.
    let mut boundaries: Vec<usize> = DUMBBELL.char_indices().map(|(i, _)| i).collect();
    boundaries.push(DUMBBELL.len());
    let mut verdicts = Vec::new();
    for end in boundaries {
        verdicts.push(Scenario::from_toml_str(&DUMBBELL[..end], "cut.toml", &[]).is_ok());
    }
    assert_eq!(verdicts.last(), Some(&true));
    // Cut inside the bottleneck rate string: a syntax error, not a panic.
    let cut = DUMBBELL.find("100Mb").unwrap() + 3;
    assert!(!verdicts[DUMBBELL[..cut].chars().count()]);
}

// ---- Numbers, duplicate keys and unparsable override values -------------------------------

/// A JSON version of BASE + TCP_FLOW with `simulation` replaced by `sim`.
fn json_with_simulation(sim: &str) -> String {
    format!(
        r#"{{"simulation": {sim},
  "link": [{{"name": "a", "from": "h1", "to": "r", "rate": "10Mbps", "delay": "5ms"}},
           {{"name": "b", "from": "r", "to": "h2", "rate": "10Mbps", "delay": "5ms"}}],
  "flow": [{{"name": "f", "kind": "tcp", "src": "h1", "dst": "h2"}}]}}"#
    )
}

fn json_err(text: &str) -> ScenarioError {
    match Scenario::from_json_str(text, "x.json", &[]) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

#[test]
fn json_duplicate_keys_are_rejected() {
    let e = json_err(&json_with_simulation(
        r#"{"duration": "10s", "duration": "5s"}"#,
    ));
    assert_eq!(e.to_string(), "x.json: simulation.duration: duplicate key");
    // Inside a list entry, and a duplicate whose first value is null.
    let text = json_with_simulation(r#"{"duration": "10s"}"#).replace(
        r#""name": "f","#,
        r#""name": "f", "cc": null, "cc": "reno","#,
    );
    assert_eq!(
        json_err(&text).to_string(),
        "x.json: flow[0].cc: duplicate key"
    );
    // At the top level.
    let text = json_with_simulation(r#"{"duration": "10s"}"#).replacen(
        '{',
        r#"{"simulation": {"duration": "1s"}, "#,
        1,
    );
    assert_eq!(
        json_err(&text).to_string(),
        "x.json: simulation: duplicate key"
    );
    // Equal keys written differently are still equal.
    let e = json_err(&json_with_simulation(
        r#"{"seed": 1, "se\u0065d": 2, "duration": "10s"}"#,
    ));
    assert_eq!(e.to_string(), "x.json: simulation.seed: duplicate key");
    // The same key in different objects is fine.
    Scenario::from_json_str(
        &json_with_simulation(r#"{"duration": "10s"}"#),
        "x.json",
        &[],
    )
    .unwrap();
}

fn duration_err(value: &str) -> String {
    err(&base_flow("").replace("duration = \"10s\"", &format!("duration = {value}"))).to_string()
}

#[test]
fn quantities_with_exponents_are_numbers() {
    let s = ok(&base_flow("").replace("duration = \"10s\"", "duration = \"1e1s\""));
    assert_eq!(s.simulation.duration, SimTime::from_secs(10));
    let s = ok(&base_flow("").replacen("delay = \"5ms\"", "delay = \"5E-3s\"", 1));
    assert_eq!(s.links[0].delay, SimTime::from_millis(5));
    let s = ok(&base_flow("").replacen("rate = \"10Mbps\"", "rate = \"2.5e6bps\"", 1));
    assert_eq!(s.links[0].rate, Rate(2_500_000));
    let s = ok(&base_flow("receive_buffer = \"6.4e+1KiB\""));
    assert_eq!(tcp_of(&s.flows[0]).receive_buffer, 65_536);
    let s = ok(&base_flow("").replace(
        "duration = \"10s\"",
        "duration = \"1e-3s\"\nwarmup = \"1e-400s\"",
    ));
    assert_eq!(s.simulation.duration, SimTime::from_millis(1));
    assert_eq!(s.simulation.warmup, SimTime::ZERO);
}

#[test]
fn quantities_out_of_range_give_the_maximum() {
    assert_eq!(
        duration_err("\"1e30s\""),
        "test.toml: simulation.duration: 1e30s is out of range (at most 18446744073.709551615 s)"
    );
    assert_eq!(
        duration_err("\"18446744073.709551616s\""),
        "test.toml: simulation.duration: 18446744073.709551616s is out of range \
         (at most 18446744073.709551615 s)"
    );
    assert_eq!(
        duration_err("\"99999999999999999999999999min\""),
        "test.toml: simulation.duration: 99999999999999999999999999min is out of range \
         (at most 18446744073.709551615 s)"
    );
    assert_eq!(
        duration_err("1e30"),
        "test.toml: simulation.duration: 1e30 is out of range (at most 18446744073.709551615 s)"
    );
    assert_eq!(
        duration_err("99999999999"),
        "test.toml: simulation.duration: 99999999999 is out of range \
         (at most 18446744073.709551615 s)"
    );
    let e = err(&base_flow("").replacen("rate = \"10Mbps\"", "rate = \"2e7Tbps\"", 1));
    assert_eq!(
        e.to_string(),
        "test.toml: link[0].rate: 2e7Tbps is out of range (at most 18446744073709551615 bps)"
    );
    let e = err(&base_flow("").replacen("rate = \"10Mbps\"", "rate = 1e20", 1));
    assert_eq!(
        e.to_string(),
        "test.toml: link[0].rate: 1e20 is out of range (at most 18446744073709551615 bps)"
    );
    let e = err(&base_flow("receive_buffer = \"2e7TiB\""));
    assert_eq!(
        e.to_string(),
        "test.toml: flow[0].receive_buffer: 2e7TiB is out of range (at most 18446744073709551615 B)"
    );
}

#[test]
fn non_numbers_and_negative_quantities_say_so() {
    assert_eq!(
        duration_err("-1e30"),
        "test.toml: simulation.duration: must not be negative, got -1e30"
    );
    assert_eq!(
        duration_err("nan"),
        "test.toml: simulation.duration: must be a finite number of seconds, got nan"
    );
    assert_eq!(
        duration_err("-inf"),
        "test.toml: simulation.duration: must be a finite number of seconds, got -inf"
    );
    assert_eq!(
        duration_err("\"-1e3s\""),
        "test.toml: simulation.duration: invalid duration \"-1e3s\": must not be negative"
    );
    assert_eq!(
        duration_err("\"inf s\""),
        "test.toml: simulation.duration: invalid duration \"inf s\": not a finite number"
    );
    assert_eq!(
        duration_err("\"NaNms\""),
        "test.toml: simulation.duration: invalid duration \"NaNms\": not a finite number"
    );
    // An exponent without digits is not an exponent: the unit is unknown.
    assert_eq!(
        duration_err("\"1es\""),
        "test.toml: simulation.duration: invalid duration \"1es\": unknown unit 'es' \
         (accepted: ns, us, ms, s, min)"
    );
    // A float is shown as a float, not as the integer it happens to equal.
    let e = err(&base_flow("mss = 1.5e3"));
    assert_eq!(
        e.message,
        "expected a size such as \"64KiB\" or an integer number of bytes, got 1500.0"
    );
}

#[test]
fn integers_beyond_the_range_are_shown_as_written() {
    let big = "99999999999999999999999";
    let e = err(&base_flow("").replace(
        "duration = \"10s\"",
        &format!("duration = \"10s\"\nseed = {big}"),
    ));
    assert_eq!(
        e.to_string(),
        format!(
            "test.toml: TOML syntax error at line 4, column 8: {big} is out of range \
             (at most 9223372036854775807)"
        )
    );
    let e = json_err(&json_with_simulation(&format!(
        r#"{{"duration": "10s", "seed": {big}}}"#
    )));
    assert_eq!(
        e.to_string(),
        format!("x.json: simulation.seed: {big} is out of range (at most 9223372036854775807)")
    );
    let e = json_err(&json_with_simulation(&format!(
        r#"{{"duration": "10s", "seed": -{big}}}"#
    )));
    assert_eq!(
        e.to_string(),
        format!("x.json: simulation.seed: -{big} is out of range (at least -9223372036854775808)")
    );
    let e = json_err(&json_with_simulation(r#"{"duration": 1e400}"#));
    assert_eq!(
        e.to_string(),
        "x.json: simulation.duration: 1e400 is out of range (at most 1.7976931348623157e308)"
    );
    let e = err_with(&base_flow(""), &[("simulation.seed", big)]);
    assert_eq!(
        e.to_string(),
        format!(
            "test.toml: --set simulation.seed: {big} is out of range (at most 9223372036854775807)"
        )
    );
}

#[test]
fn truncated_override_value_says_it_does_not_parse() {
    let e = err_with(&base_flow(""), &[("link.b.queue", "{kind=\"red\"")]);
    assert_eq!(
        e.to_string(),
        "test.toml: --set link.b.queue: value '{kind=\"red\"' does not parse: \
         unterminated inline table at column 12"
    );
    let e = err_with(
        &base_flow(""),
        &[("flow.f.start.uniform", "[\"0s\", \"1s\"")],
    );
    assert_eq!(
        e.message,
        "value '[\"0s\", \"1s\"' does not parse: unterminated list at column 12"
    );
    let e = err_with(&base_flow(""), &[("flow.f.cc", "\"reno")]);
    assert_eq!(
        e.message,
        "value '\"reno' does not parse: unterminated string at column 6"
    );
    let e = err_with(&base_flow(""), &[("link.b.queue", "{kind=}")]);
    assert_eq!(e.path, "--set link.b.queue");
    assert!(
        e.message.starts_with("value '{kind=}' does not parse: ")
            && e.message.ends_with(" at column 7"),
        "{e}"
    );
    let e = err_with(
        &base_flow(""),
        &[("link.b.queue", "{kind=\"red\", kind=\"red\"}")],
    );
    assert!(e.message.contains("duplicate key `kind`"), "{e}");
    // Bare words and surrounding spaces are still fine.
    let s = ok_with(
        &base_flow(""),
        &[("flow.f.cc", " cubic "), ("simulation.seed", " 7 ")],
    );
    assert_eq!(s.simulation.seed, 7);
}

#[test]
fn regression_errors_span_lines_when_a_key_or_name_has_a_newline() {
    // Keys, names and values are quoted in messages; the error must still be one line.
    let e = err("\"a\\nb\" = 1\n");
    assert_eq!(e.path, "a\nb");
    assert_eq!(
        e.to_string(),
        "test.toml: a\\nb: unknown section (expected one of: simulation, tcp, node, link, flow, event, sweep, testbed)"
    );
    let text = base_flow("").replace("name = \"b\"", "name = \"x\\ty\"");
    let text = text.replace("name = \"a\"", "name = \"x\\ty\"");
    assert_eq!(
        err(&text).to_string(),
        "test.toml: link[1].name: duplicate link name 'x\\ty' (also link[0])"
    );
    let e = err_with(&base_flow(""), &[("flow.f.cc", "[\"reno\",\n")]);
    assert!(!e.to_string().contains('\n'), "{e}");
    let e = err_with(&base_flow(""), &[("flow.f.cc", "ren\no")]);
    assert!(!e.to_string().contains('\n'), "{e}");
}

// ---- Catalog -------------------------------------------------------------------------------

/// A value for a required parameter of a catalog entry, drawn from its declaration and
/// written as TOML.
fn sample(category: &str, entry: &str, param: &str) -> String {
    let declared = crate::registry::Category::ALL
        .iter()
        .flat_map(|c| c.entries())
        .find(|e| e.category.name() == category && e.name == entry)
        .and_then(|e| e.params.iter().find(|p| p.name == param))
        .unwrap_or_else(|| panic!("{category} {entry}: no parameter {param}"));
    match declared.draw(0.5) {
        Value::Number(x) => format!("{x:?}"),
        Value::Integer(n) | Value::Size(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Duration(t) => format!("\"{}\"", format_duration(t)),
        Value::Rate(r) => format!("\"{}\"", format_rate(r)),
        Value::Choice(c) => format!("\"{c}\""),
        Value::Period(Period::Exponential { mean }) => {
            format!("{{ exponential = \"{}\" }}", format_duration(mean))
        }
        other => panic!("{category} {entry}: no TOML for {param} = {other}"),
    }
}

#[test]
fn catalog_defaults_are_what_the_parser_uses() {
    use super::catalog::{REQUIRED, UNSET};
    let entries = catalog();
    let categories: Vec<&str> = entries.iter().map(|e| e.category.as_str()).collect();
    for category in ["controller", "queue", "source", "loss"] {
        assert!(
            categories.contains(&category),
            "no {category} in the catalog"
        );
    }
    for entry in &entries {
        // Where an instance of the entry lives, and the overrides that create it.
        let (at, base): (&str, String) = match entry.category.as_str() {
            "controller" => ("flow[0].cc", format!("{{ name = \"{}\" }}", entry.name)),
            "queue" if entry.name == "droptail" => (
                "link[0].queue",
                "{ kind = \"droptail\", packets = 7 }".into(),
            ),
            "queue" => ("link[0].queue", format!("{{ kind = \"{}\" }}", entry.name)),
            "loss" => ("link[0].loss", format!("{{ kind = \"{}\" }}", entry.name)),
            "source" => (
                "flow[0]",
                format!(
                    "{{ name = \"f\", kind = \"{}\", src = \"src\", dst = \"dst\"{} }}",
                    entry.name,
                    match entry.name.as_str() {
                        "mptcp" => ", subflows = [{}]",
                        "mpat" => ", shares = [1, 2]",
                        _ => "",
                    }
                ),
            ),
            // A multipath flow's controller and scheduler: tests/mptcp.rs builds each one.
            "coupled" | "scheduler" => continue,
            other => panic!("unknown category {other}"),
        };
        let mut minimal = vec![(at.to_string(), base)];
        for p in entry.params.iter().filter(|p| p.default == REQUIRED) {
            let value = sample(&entry.category, &entry.name, &p.name);
            minimal.push((format!("{at}.{}", p.name), value));
        }
        let mut explicit = minimal.clone();
        for p in entry
            .params
            .iter()
            .filter(|p| p.default != REQUIRED && p.default != UNSET)
        {
            explicit.push((format!("{at}.{}", p.name), p.default.clone()));
        }
        let parse = |overrides: &[(String, String)]| {
            Scenario::from_toml_str(DUMBBELL, "catalog", overrides)
                .unwrap_or_else(|e| panic!("{} {}: {e}", entry.category, entry.name))
        };
        assert_eq!(
            parse(&minimal),
            parse(&explicit),
            "{} {}",
            entry.category,
            entry.name
        );
    }
}

// ---- The reference page ---------------------------------------------------------------------

/// A source's settings come from a section the parser accepts: `[tcp]` for the subflows of an
/// MPTCP flow and the windows of an MPAT aggregate, never a `[mptcp]` or `[mpat]` that
/// validation rejects as an unknown section (`plait list` and the reference page named them).
#[test]
fn catalog_names_only_sections_a_scenario_accepts() {
    let mut named = 0;
    for entry in catalog() {
        for p in &entry.params {
            if let Some(section) = &p.section {
                named += 1;
                assert!(
                    schema::sections().contains(&section.as_str()),
                    "{} {}: section [{section}] is not a scenario section",
                    entry.name,
                    p.name
                );
            }
        }
    }
    assert!(named > 0);
    for source in ["mptcp", "mpat"] {
        let block = reference_block("sources").unwrap();
        let start = block.find(&format!("**`{source}`**")).unwrap();
        let rest = &block[start..];
        let end = rest[2..].find("**`").map_or(rest.len(), |i| i + 2);
        assert!(
            rest[..end].contains("[`[tcp]`](#tcp-optional)"),
            "{source}: {}",
            &rest[..end]
        );
    }
}

/// The parameter tables of `docs/scenario.md` are generated from the registry, between
/// `<!-- registry:NAME -->` and `<!-- /registry -->`. `make docs` (`PLAIT_BLESS=1` on this
/// test) rewrites them.
#[test]
fn generated_reference_tables_match_the_registry() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/scenario.md");
    let text = std::fs::read_to_string(&path).expect("docs/scenario.md is readable");
    let expected = regenerate_reference(&text).unwrap_or_else(|e| panic!("docs/scenario.md: {e}"));
    if std::env::var_os("PLAIT_BLESS").is_some() {
        if expected != text {
            std::fs::write(&path, &expected).expect("docs/scenario.md is writable");
        }
        return;
    }
    if let Some((line, (was, now))) = text
        .lines()
        .zip(expected.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        panic!(
            "docs/scenario.md:{}: the generated tables differ from the registry (run `make \
             docs`):\n  file:     {was}\n  registry: {now}",
            line + 1
        );
    }
    assert_eq!(text, expected, "docs/scenario.md: run `make docs`");
}

#[test]
fn regenerating_the_reference_needs_every_marker() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/scenario.md"),
    )
    .unwrap();
    for name in REFERENCE_BLOCKS {
        let open = format!("<!-- registry:{name} -->");
        let err = regenerate_reference(&text.replace(&open, "")).unwrap_err();
        assert_eq!(err, format!("no `{open}` marker"));
    }
    // Regenerating is idempotent, and changes a stale block.
    let fresh = regenerate_reference(&text).unwrap();
    assert_eq!(regenerate_reference(&fresh).unwrap(), fresh);
    let stale = fresh.replace("| `alpha` |", "| `alfa` |");
    assert_ne!(stale, fresh);
    assert_eq!(regenerate_reference(&stale).unwrap(), fresh);
}

const REFERENCE: &str = include_str!("../../../../docs/scenario.md");

/// The fenced code blocks of `lang` in the reference page.
fn code_blocks(lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    let mut blocks = Vec::new();
    let mut rest = REFERENCE;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```").expect("unclosed code block");
        blocks.push(body[..end].to_string());
        rest = &body[end..];
    }
    blocks
}

#[test]
fn every_example_in_the_reference_is_accepted() {
    // Fragments are spliced into a small network a -> gateway -> b with one TCP flow.
    let base = r#"
[simulation]
duration = "60s"

[[link]]
name = "left"
from = "a"
to = "gateway"
rate = "100Mbps"
delay = "10ms"

[[link]]
name = "right"
from = "gateway"
to = "b"
rate = "100Mbps"
delay = "10ms"

[[flow]]
name = "base"
kind = "tcp"
src = "a"
dst = "b"
"#;
    let blocks = code_blocks("toml");
    assert!(
        blocks.len() >= 13,
        "only {} TOML examples found",
        blocks.len()
    );
    for block in &blocks {
        let first = block.trim_start();
        if first.starts_with("[simulation]") {
            ok(block);
        } else if first.starts_with("queue") || first.starts_with("loss") {
            for line in block.lines().filter(|l| !l.trim().is_empty()) {
                ok(&base.replacen("delay = \"10ms\"", &format!("delay = \"10ms\"\n{line}"), 1));
            }
        } else if first.starts_with("[tcp]") {
            ok(&format!("{block}{base}"));
        } else {
            ok(&format!("{base}{block}"));
        }
    }
    let json = code_blocks("json");
    assert_eq!(json.len(), 1);
    Scenario::from_json_str(&json[0], "reference.json", &[]).unwrap();
}

#[test]
fn a_sweep_table_is_ignored_by_the_run_and_must_be_a_table() {
    let with =
        format!("{BASE}{TCP_FLOW}\n[sweep]\nseeds = 3\ngrid = {{ \"flow.f.count\" = [1, 2] }}\n");
    let plain = ok(&format!("{BASE}{TCP_FLOW}"));
    assert_eq!(ok(&with).flows.len(), plain.flows.len());
    let e = err(&format!("sweep = 3\n{BASE}{TCP_FLOW}"));
    assert_eq!(e.path, "sweep");
    assert!(e.message.contains("expected a table"), "{e}");
}

#[test]
fn a_testbed_table_is_ignored_by_the_run_and_its_sim_only_keys_must_be_set() {
    // `[testbed] sim_only` names keys the kernel testbed leaves out (docs/scenario.md); the
    // simulator runs the scenario as without it.
    let text = format!("{BASE}{TCP_FLOW}\n[tcp]\nhost_jitter = \"5us\"\n");
    let marked = format!(
        "{text}\n[testbed]\nsim_only = [\"tcp.host_jitter\", \"flow.f.src\", \"link[1].rate\"]\n"
    );
    assert_eq!(ok(&marked), ok(&text));
    // Each entry names a key set in the scenario, else one line naming the entry.
    let e = err(&format!(
        "{text}\n[testbed]\nsim_only = [\"tcp.host_jitter\", \"tcp.mss\"]\n"
    ));
    assert_eq!(e.path, "testbed.sim_only[1]");
    assert_eq!(
        e.to_string(),
        "test.toml: testbed.sim_only[1]: `tcp.mss`: is not set in the scenario"
    );
    let e = err(&format!(
        "{text}\n[testbed]\nsim_only = [\"flow.nope.cc\"]\n"
    ));
    assert!(e.message.contains("no flow named 'nope'"), "{e}");
    let e = err(&format!(
        "{text}\n[testbed]\nsim_only = \"tcp.host_jitter\"\n"
    ));
    assert_eq!(e.path, "testbed.sim_only");
    let e = err(&format!("{text}\n[testbed]\nonly = []\n"));
    assert_eq!(e.path, "testbed.only");
    let e = err(&format!("testbed = 1\n{text}"));
    assert!(e.message.contains("expected a table"), "{e}");
}

#[test]
fn canonical_form_ignores_layout_format_and_sweep_but_not_values() {
    let canon = |text: &str, json: bool, o: &[(&str, &str)]| {
        Scenario::canonical_json(text, "t", json, &set(o))
            .unwrap_or_else(|e| panic!("{e}"))
            .1
    };
    let toml = format!("{BASE}{TCP_FLOW}");
    let a = canon(&toml, false, &[]);
    // Comments, spacing and a [sweep] table change nothing.
    let b = canon(
        &format!("# note\n{toml}\n\n[sweep]\nseeds = 4\n"),
        false,
        &[],
    );
    assert_eq!(a, b);
    // The same scenario written as JSON.
    let json = r#"{"simulation": {"duration": "10s"},
        "link": [{"name": "a", "from": "h1", "to": "r", "rate": "10Mbps", "delay": "5ms"},
                 {"name": "b", "from": "r", "to": "h2", "rate": "10Mbps", "delay": "5ms"}],
        "flow": [{"name": "f", "kind": "tcp", "src": "h1", "dst": "h2"}]}"#;
    assert_eq!(canon(json, true, &[]), a);
    // An override is part of it, whether set in the file or by --set.
    let c = canon(&toml, false, &[("flow.f.count", "2")]);
    assert_ne!(c, a);
    let in_file = toml.replace("kind = \"tcp\"", "kind = \"tcp\"\ncount = 2");
    assert_eq!(canon(&in_file, false, &[]), c);
    // Keys come out sorted.
    assert!(a.starts_with("{\"flow\":"), "{a}");
    // A bad value is refused as validation refuses it.
    let e = Scenario::canonical_json(&toml, "t", false, &set(&[("flow.f.count", "\"x\"")]))
        .unwrap_err();
    assert!(e.to_string().contains("--set flow.f.count"), "{e}");
}

/// A sweep point too large to make is keyed without validating it: the key must be the one
/// the full path gives a valid scenario, or a run refused under one limit and run under a
/// higher one would be stored under two keys.
#[test]
fn canonical_form_without_checks_is_that_of_a_valid_scenario() {
    let toml = format!("# note\n{BASE}{TCP_FLOW}\n[sweep]\nseeds = 4\n");
    let json = r#"{"simulation": {"duration": "10s"}, "sweep": {"seeds": 2},
        "link": [{"name": "a", "from": "h1", "to": "r", "rate": "10Mbps", "delay": "5ms"}],
        "flow": [{"name": "f", "kind": "tcp", "src": "h1", "dst": "r", "count": 3}]}"#;
    for (text, json, o) in [
        (toml.as_str(), false, vec![]),
        (toml.as_str(), false, vec![("flow.f.count", "3")]),
        (toml.as_str(), false, vec![("link.a.rate", "\"1Gbps\"")]),
        (json, true, vec![("simulation.seed", "7")]),
    ] {
        let full = Scenario::canonical_json(text, "t", json, &set(&o))
            .unwrap_or_else(|e| panic!("{e}"))
            .1;
        let quick = Scenario::canonical_json_unchecked(text, "t", json, &set(&o))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(quick, full, "{o:?}");
    }
    // Syntax is still checked (the rest is checked by the estimate that chose this path).
    assert!(Scenario::canonical_json_unchecked("[x", "t", false, &[]).is_err());
}

/// `[[event]]` tables: sorted by time, file order kept at equal times.
#[test]
fn link_events_are_read_in_time_order() {
    let events = "[[event]]\nat = \"5s\"\nlink = \"b\"\naction = \"up\"\n\
                  [[event]]\nat = \"2s\"\nlink = \"b\"\naction = \"down\"\n\
                  [[event]]\nat = \"5s\"\nlink = \"a\"\naction = \"down\"\n";
    let s = ok(&format!("{}{events}", base_flow("")));
    let got: Vec<(u64, &str, bool)> = s
        .events
        .iter()
        .map(|e| (e.at.as_nanos() / 1_000_000_000, e.link.as_str(), e.up))
        .collect();
    assert_eq!(got, [(2, "b", false), (5, "b", true), (5, "a", false)]);
    assert!(ok(&base_flow("")).events.is_empty());
}

#[test]
fn bad_link_events_name_the_field() {
    let event = |body: &str| format!("{}[[event]]\n{body}\n", base_flow(""));
    let cases = [
        ("link = \"b\"\naction = \"down\"", "event[0].at", "missing required field"),
        (
            "at = \"11s\"\nlink = \"b\"\naction = \"down\"",
            "event[0].at",
            "must be at most the duration (10s), got 11s",
        ),
        (
            "at = \"1s\"\nlink = \"bb\"\naction = \"down\"",
            "event[0].link",
            "unknown link 'bb' (known: a, b); did you mean 'b'?",
        ),
        (
            "at = \"1s\"\nlink = \"b\"\naction = \"off\"",
            "event[0].action",
            "expected \"down\" or \"up\", got 'off'",
        ),
        (
            "at = \"1s\"\nlink = \"b\"\naction = \"up\"",
            "event[0].action",
            "link 'b' is already up at 1s (links start up; take it down first)",
        ),
        (
            "at = \"1s\"\nlink = \"b\"\naction = \"down\"\nwhen = 3",
            "event[0].when",
            "unknown field",
        ),
        (
            "at = \"1s\"\nlink = \"b\"\naction = \"down\"\n[[event]]\nat = \"3s\"\nlink = \"b\"\naction = \"down\"",
            "event[1].action",
            "link 'b' is already down at 3s (down since 1s)",
        ),
    ];
    for (body, path, message) in cases {
        let e = err(&event(body));
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.starts_with(message), "{e}");
    }
    let e = err(&format!("event = 3\n{}", base_flow("")));
    assert_eq!(e.path, "event", "{e}");
}

/// A scenario with a MulTFRC flow `m`, a CP flow `c` and a TCP flow `t`, plus `extra`.
fn rate_based(extra: &str) -> String {
    format!(
        "{BASE}\n[[flow]]\nname = \"m\"\nkind = \"multfrc\"\nn = 2.5\nsrc = \"h1\"\ndst = \"h2\"\n\
         [[flow]]\nname = \"c\"\nkind = \"cp\"\nn = 3\nsrc = \"h1\"\ndst = \"h2\"\n\
         [[flow]]\nname = \"t\"\nkind = \"tcp\"\nsrc = \"h1\"\ndst = \"h2\"\n{extra}"
    )
}

/// `[[event]]` tables naming a flow change its n, in time order.
#[test]
fn flow_events_change_n_in_time_order() {
    let events = "[[event]]\nat = \"5s\"\nflow = \"m\"\nn = 4\n\
                  [[event]]\nat = \"2s\"\nflow = \"c\"\nn = 1\n\
                  [[event]]\nat = \"3s\"\nlink = \"b\"\naction = \"down\"\n";
    let s = ok(&rate_based(events));
    let got: Vec<(u64, &str, crate::transport::FlowChange)> = s
        .flow_events
        .iter()
        .map(|e| {
            (
                e.at.as_nanos() / 1_000_000_000,
                e.flow.as_str(),
                e.change.clone(),
            )
        })
        .collect();
    let n = |x| crate::transport::FlowChange::number("n", x);
    assert_eq!(got, [(2, "c", n(1.0)), (5, "m", n(4.0))]);
    assert_eq!(s.events.len(), 1, "the link event is read as before");
    assert_eq!(s.flows[0].kind.name(), "multfrc");
}

#[test]
fn bad_flow_events_and_rate_based_flows_name_the_field() {
    let cases = [
        (
            "[[event]]\nat = \"1s\"\nflow = \"x\"\nn = 2",
            "event[0].flow",
            "unknown flow 'x' (known: c, m, t)",
        ),
        (
            "[[event]]\nat = \"1s\"\nflow = \"t\"\nn = 2",
            "event[0].n",
            "flow 't' is a tcp flow; n can change only for multfrc and cp flows",
        ),
        (
            "[[event]]\nat = \"1s\"\nflow = \"c\"\nn = 0.5",
            "event[0].n",
            "must be at least 1 for a cp flow, got 0.5",
        ),
        (
            "[[event]]\nat = \"1s\"\nflow = \"m\"\nn = 0",
            "event[0].n",
            "must be greater than 0 for a multfrc flow, got 0",
        ),
        (
            "[[event]]\nat = \"1s\"\nflow = \"m\"",
            "event[0]",
            "a flow event needs the setting it changes",
        ),
        (
            "[[event]]\nat = \"1s\"\nflow = \"m\"\nn = 2\nlink = \"b\"",
            "event[0].link",
            "an event changes a link (at, link, action) or a flow's setting",
        ),
        (
            "[[event]]\nat = \"1s\"\nlink = \"b\"\naction = \"down\"\nn = 2",
            "event[0].n",
            "unknown field",
        ),
        (
            "[[event]]\nat = \"20s\"\nflow = \"m\"\nn = 2",
            "event[0].at",
            "must be at most the duration (10s), got 20s",
        ),
    ];
    for (body, path, message) in cases {
        let e = err(&rate_based(body));
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.starts_with(message), "{e}");
    }
    let flow = |kind: &str, keys: &str| {
        format!("{BASE}\n[[flow]]\nname = \"f\"\nkind = \"{kind}\"\nsrc = \"h1\"\ndst = \"h2\"\n{keys}\n")
    };
    let e = err(&flow("tfrc", "bytes = \"1MB\""));
    assert_eq!(e.path, "flow[0].bytes", "{e}");
    assert!(e.message.contains("needs reliable = true"), "{e}");
    let e = err(&flow("cp", ""));
    assert_eq!(e.path, "flow[0].n", "{e}");
    let e = err(&flow("cp", "n = 0.5"));
    assert_eq!(e.path, "flow[0].n", "{e}");
    let e = err(&flow("multfrc", "n = -1"));
    assert_eq!(e.path, "flow[0].n", "{e}");
    let e = err(&flow("multfrc", "equation = \"rfc\""));
    assert_eq!(e.path, "flow[0].equation", "{e}");
    let e = err(&flow("tfrc", "n = 2"));
    assert_eq!(e.path, "flow[0].n", "{e}");
    let e = err(&flow("tfrc", "segment_size = 65500\nheader_bytes = 40"));
    assert_eq!(e.path, "flow[0].segment_size", "{e}");
    ok(&flow("tfrc", "reliable = true\nbytes = \"1MB\""));
    ok(&flow(
        "multfrc",
        "n = 0.1\nequation = \"ns2\"\nrefine_j = false",
    ));
}

/// `[[event]]` tables with `loss` give a link a new loss model.
#[test]
fn loss_events_replace_a_links_loss_model() {
    let events = "[[event]]\nat = \"5s\"\nlink = \"b\"\nloss = { kind = \"periodic\", every = 10 }\n\
                  [[event]]\nat = \"2s\"\nlink = \"a\"\nloss = { kind = \"bernoulli\", p = 0.01 }\n";
    let s = ok(&format!("{}{events}", base_flow("")));
    let got: Vec<(u64, &str, &str)> = s
        .loss_events
        .iter()
        .map(|e| {
            (
                e.at.as_nanos() / 1_000_000_000,
                e.link.as_str(),
                e.loss.name(),
            )
        })
        .collect();
    assert_eq!(got, [(2, "a", "bernoulli"), (5, "b", "periodic")]);
    assert!(s.events.is_empty() && s.flow_events.is_empty());
    let cases = [
        (
            "at = \"1s\"\nlink = \"b\"\naction = \"down\"\nloss = { kind = \"bernoulli\", p = 0.1 }",
            "event[0].action",
            "an event takes a link down or up (action) or changes its loss model (loss), not both",
        ),
        (
            "at = \"1s\"\nlink = \"c\"\nloss = { kind = \"bernoulli\", p = 0.1 }",
            "event[0].link",
            "unknown link 'c'",
        ),
        (
            "at = \"1s\"\nlink = \"b\"\nloss = { kind = \"bernoulli\", p = 2 }",
            "event[0].loss.p",
            "",
        ),
        (
            "link = \"b\"\nloss = { kind = \"bernoulli\", p = 0.1 }",
            "event[0].at",
            "missing required field",
        ),
    ];
    for (body, path, message) in cases {
        let e = err(&format!("{}[[event]]\n{body}\n", base_flow("")));
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.starts_with(message), "{e}");
    }
}

/// An MPAT aggregate: its shares, one path per window on the flow's route, the `[tcp]`
/// section for its windows, and share events; each mistake names its field.
#[test]
fn mpat_flows_read_their_shares() {
    let flow = |keys: &str| {
        format!(
            "{BASE}\n[tcp]\nmss = 1000\n\n[[flow]]\nname = \"agg\"\nkind = \"mpat\"\nsrc = \"h1\"\ndst = \"h2\"\n{keys}\n"
        )
    };
    let s = ok(&flow("shares = [1, 2.5, 3]\nmapping = \"spread\""));
    let f = &s.flows[0];
    assert_eq!(f.shares.as_deref(), Some(&[1.0, 2.5, 3.0][..]));
    assert_eq!(f.paths.len(), 3);
    assert!(f.paths.iter().all(|p| p == &f.paths[0]));
    assert_eq!(
        f.kind.params().size("mss"),
        1000,
        "[tcp] applies to the windows"
    );
    let cases = [
        ("", "flow[0].shares", "missing required field"),
        (
            "shares = []",
            "flow[0].shares",
            "must have 1 to 4096 weights, got 0",
        ),
        (
            "shares = [1, -2]",
            "flow[0].shares[1]",
            "must be a positive number, got -2",
        ),
        (
            "shares = [1, 0]",
            "flow[0].shares[1]",
            "must be a positive number, got 0",
        ),
        (
            "shares = 3",
            "flow[0].shares",
            "expected a list of positive weights",
        ),
        ("shares = [1, \"a\"]", "flow[0].shares[1]", ""),
        ("shares = [1]\nmapping = \"rr\"", "flow[0].mapping", ""),
        (
            "shares = [1e-320, 1]",
            "flow[0].shares",
            "the smallest weight must be at least 1e-9 of the largest",
        ),
    ];
    for (keys, path, message) in cases {
        let e = err(&flow(keys));
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.starts_with(message), "{e}");
    }
    let e = err(&format!("{}shares = [1]\n", base_flow("")));
    assert_eq!(e.path, "flow[0].shares", "{e}");
    assert_eq!(e.message, "not a field of tcp flows (used by: mpat)");
    let events = |body: &str| {
        flow(&format!(
            "shares = [1, 2]\n[[event]]\nat = \"1s\"\nflow = \"agg\"\n{body}"
        ))
    };
    let s = ok(&events("shares = [2, 1]"));
    assert_eq!(
        s.flow_events[0].change,
        crate::transport::FlowChange::numbers("shares", vec![2.0, 1.0])
    );
    for (body, path, message) in [
        (
            "shares = [1]",
            "event[0].shares",
            "flow 'agg' has 2 application flows; give 2 shares, got 1",
        ),
        (
            "shares = [1, 2]\nn = 2",
            "event[0].n",
            "a flow event changes one setting",
        ),
        (
            "n = 2",
            "event[0].n",
            "flow 'agg' is a mpat flow; n can change only",
        ),
    ] {
        let e = err(&events(body));
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.starts_with(message), "{e}");
    }
    let e = err(&rate_based(
        "[[event]]\nat = \"1s\"\nflow = \"m\"\nshares = [1]",
    ));
    assert_eq!(e.path, "event[0].shares", "{e}");
    assert!(
        e.message.contains("shares can change only for mpat flows"),
        "{e}"
    );
}

// ---- Generated names, shared paths, small things (issue 34, items 4, 5 and 20) --------------

/// Two paths from h1 to h2: h1 -> r -> h2 over `a` and `b` (10 ms in all, two hops) and the
/// direct link `c` (20 ms, one hop).
fn two_paths(flows: &str) -> String {
    format!(
        "{BASE}\n[[link]]\nname = \"c\"\nfrom = \"h1\"\nto = \"h2\"\nrate = \"10Mbps\"\ndelay = \"20ms\"\n{flows}"
    )
}

fn mptcp_flow(extra: &str) -> String {
    format!("[[flow]]\nname = \"mp\"\nkind = \"mptcp\"\nsrc = \"h1\"\ndst = \"h2\"\n{extra}\n")
}

/// An MPAT aggregate names its application flows `agg.0`, `agg.1` in the `flows` table: a flow
/// named so was accepted, and the table had two rows `agg.0` whose series were merged.
#[test]
fn flow_names_must_not_collide_with_generated_names() {
    let mpat =
        "[[flow]]\nname = \"agg\"\nkind = \"mpat\"\nsrc = \"h1\"\ndst = \"h2\"\nshares = [1, 1]\n";
    let tcp = |name: &str| TCP_FLOW.replace("\"f\"", &format!("\"{name}\""));
    let e = err(&format!("{BASE}{mpat}{}", tcp("agg.0")));
    assert_eq!(e.path, "flow[1].name", "{e}");
    assert_eq!(
        e.message,
        "duplicate flow name 'agg.0' (also application flow 0 of the mpat flow 'agg' at \
         flow[0], one per share); names must differ from the generated ones (NAME.K for the \
         application flows of an mpat flow)"
    );
    assert!(
        e.to_string().starts_with("test.toml: flow[1].name: "),
        "{e}"
    );
    // Written the other way round, the aggregate is the later entry.
    let e = err(&format!("{BASE}{}{mpat}", tcp("agg.1")));
    assert_eq!(e.path, "flow[1].name", "{e}");
    assert!(
        e.message.starts_with(
            "duplicate flow name 'agg.1' (application flow 1 of the mpat flow 'agg' at flow[1], \
             one per share; also flow[0])"
        ),
        "{e}"
    );
    // The copies of an aggregate with `count` name theirs `agg.i.k`.
    let e = err(&format!("{BASE}{mpat}count = 2\n{}", tcp("agg.1.0")));
    assert_eq!(e.path, "flow[1].name", "{e}");
    assert!(
        e.message.contains("at flow[0]: copy 1 of 'agg', count = 2"),
        "{e}"
    );
    // A copy of `count` colliding with another copy names both.
    let e = err(&format!(
        "{BASE}{}count = 3\n{}count = 2\n",
        tcp("x"),
        tcp("x")
    ));
    assert_eq!(e.path, "flow[1].name", "{e}");
    assert_eq!(
        e.message,
        "duplicate flow name 'x.0' (copy 0 of 'x', count = 2; also flow[0]: copy 0 of 'x', \
         count = 3)"
    );
    // Names that only look alike are fine: no third share, not an index as results write it.
    for name in ["agg.2", "agg.00", "agg.+1"] {
        let s = ok(&format!("{BASE}{mpat}{}", tcp(name)));
        assert_eq!(s.flows.len(), 2);
    }
}

/// Without a route a flow takes the path of least propagation delay, not of fewest hops; MPTCP
/// subflows without routes all take that one path, which a warning says when another exists.
#[test]
fn subflows_without_routes_on_one_path_are_warned_about() {
    // The shortest path by delay: two hops, 10 ms, over the one hop of 20 ms.
    let s = ok(&two_paths(TCP_FLOW));
    assert_eq!(s.flows[0].paths[0].forward.len(), 2);
    assert!(s.warnings.is_empty());

    let s = ok(&two_paths(&mptcp_flow("subflows = [{}, {}]")));
    assert_eq!(s.flows[0].paths[0], s.flows[0].paths[1]);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    let w = &s.warnings[0];
    assert_eq!(
        (w.file.as_str(), w.path.as_str()),
        ("test.toml", "flow[0].subflows")
    );
    assert!(
        w.message.starts_with(
            "subflows 0, 1 all take the path h1 -> r -> h2 (a subflow without a route takes the \
             path of least propagation delay, here 10ms), though the topology has other paths"
        ),
        "{w}"
    );
    assert!(w
        .to_string()
        .starts_with("test.toml: flow[0].subflows: subflows 0, 1"));
    // One route-less subflow on the path another takes by its route.
    let s = ok(&two_paths(&mptcp_flow(
        "subflows = [{ route = [\"r\"] }, {}, { route = [\"h1\", \"h2\"] }]",
    )));
    assert_eq!(s.warnings.len(), 1);
    assert!(s.warnings[0].message.starts_with("subflows 0, 1 all take"));
    // No warning: routes spread them, routes share a path on purpose, one subflow alone, or
    // a topology with a single path.
    for (text, why) in [
        (
            two_paths(&mptcp_flow(
                "subflows = [{ route = [\"r\"] }, { route = [\"h1\", \"h2\"] }]",
            )),
            "spread",
        ),
        (
            two_paths(&mptcp_flow(
                "subflows = [{ route = [\"r\"] }, { route = [\"r\"] }]",
            )),
            "shared on purpose",
        ),
        (
            two_paths(&mptcp_flow("subflows = [{}, { route = [\"h1\", \"h2\"] }]")),
            "distinct",
        ),
        (
            format!("{BASE}{}", mptcp_flow("subflows = [{}, {}]")),
            "one path",
        ),
    ] {
        assert!(ok(&text).warnings.is_empty(), "{why}");
    }
}

/// `uncoupled:NAME` runs a single-path controller per subflow; its parameters are that
/// controller's, checked as in a single-path flow's `cc`.
#[test]
fn uncoupled_controllers_take_parameters() {
    let s = ok(&two_paths(&mptcp_flow(
        "cc = { name = \"uncoupled:cubic\", beta = 0.8 }\nsubflows = [{ route = [\"r\"] }]",
    )));
    let Some(CoupledChoice::Uncoupled(cc)) = s.flows[0].multipath.as_ref().map(|m| &m.cc) else {
        panic!("{:?}", s.flows[0].multipath);
    };
    assert_eq!(cc.name(), "cubic");
    assert_eq!(cc.params().number("beta"), 0.8);
    assert_eq!(
        s.flows[0].multipath.as_ref().unwrap().cc.name(),
        "uncoupled:cubic"
    );
    for (cc, path, message) in [
        (
            "{ name = \"uncoupled:cubic\", beta = 1.5 }",
            "flow[0].cc.beta",
            "must be between 0 and 1 (exclusive), got 1.5",
        ),
        (
            "{ name = \"uncoupled:cubic\", alpha = 1 }",
            "flow[0].cc.alpha",
            "not a field of cubic controllers",
        ),
        (
            "{ name = \"uncoupled:cubc\" }",
            "flow[0].cc.name",
            "unknown controller 'cubc'",
        ),
    ] {
        let e = err(&two_paths(&mptcp_flow(&format!(
            "cc = {cc}\nsubflows = [{{ route = [\"r\"] }}]"
        ))));
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.starts_with(message), "{e}");
    }
}

/// A subflow joins `start` after its flow starts; joining after the run (or the flow's stop)
/// would never send, and is refused as a flow starting after the end is.
#[test]
fn subflows_join_before_the_end() {
    let flow = |extra: &str| {
        err(&two_paths(&mptcp_flow(&format!(
            "{extra}\nsubflows = [{{ route = [\"r\"] }}, {{ route = [\"h1\", \"h2\"], start = \"4s\" }}]"
        ))))
    };
    let e = flow("start = \"6s\"");
    assert_eq!(e.path, "flow[0].subflows[1].start", "{e}");
    assert_eq!(
        e.message,
        "the subflow would join at 10s (the flow starts at 6s, the subflow 4s later), not before \
         the end of the simulation (10s)"
    );
    let e = flow("start = \"1s\"\nstop = \"5s\"");
    assert_eq!(e.path, "flow[0].subflows[1].start", "{e}");
    assert!(
        e.message.ends_with("not before the flow's stop (5s)"),
        "{e}"
    );
    let e = flow("start = { uniform = [\"0s\", \"7s\"] }");
    assert!(
        e.message.starts_with("the subflow would join at 11s"),
        "{e}"
    );
    let e = err(&two_paths(&mptcp_flow(
        "subflows = [{ route = [\"r\"], start = \"10s\" }]",
    )));
    assert_eq!(e.path, "flow[0].subflows[0].start", "{e}");
    ok(&two_paths(&mptcp_flow(
        "start = \"5s\"\nsubflows = [{ route = [\"r\"] }, { route = [\"h1\", \"h2\"], start = \"4999ms\" }]",
    )));
}

/// Numbers in messages are compact: 5e-324 was written with 324 digits.
#[test]
fn numbers_in_messages_are_compact() {
    for (extra, path, shown) in [
        (
            "cc = { name = \"cubic\", beta = -5e-324 }",
            "flow[0].cc.beta",
            "got -5e-324",
        ),
        (
            "cc = { name = \"cubic\", beta = 1.7e308 }",
            "flow[0].cc.beta",
            "got 1.7e308",
        ),
        (
            "cc = { name = \"vegas\", alpha = 2, beta = 5e-324 }",
            "flow[0].cc.beta",
            "got 5e-324",
        ),
    ] {
        let e = err(&base_flow(extra));
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.ends_with(shown), "{e}");
        assert!(e.to_string().len() < 120, "{e}");
    }
    let e = err(&format!(
        "{BASE}[[flow]]\nname = \"agg\"\nkind = \"mpat\"\nsrc = \"h1\"\ndst = \"h2\"\nshares = [1, 5e-324]\n"
    ));
    assert!(e.message.ends_with("got 5e-324 and 1"), "{e}");
    let e = err(&base_flow("").replacen(
        "delay = \"5ms\"\n",
        "delay = \"5ms\"\nloss = { kind = \"bernoulli\", p = -5e-324 }\n",
        1,
    ));
    assert_eq!(e.path, "link[0].loss.p", "{e}");
    assert!(e.message.ends_with("got -5e-324"), "{e}");
    assert_eq!(crate::scenario::format_number(0.7), "0.7");
    assert_eq!(crate::scenario::format_number(3.0), "3");
    assert_eq!(crate::scenario::format_number(5e-324), "5e-324");
    assert_eq!(crate::scenario::format_number(-1e20), "-1e20");
}

/// A name with a right-to-left override (U+202E) reversed the rest of the printed message.
#[test]
fn bidirectional_controls_are_escaped_in_messages() {
    let e = err(&base_flow("").replace("dst = \"h2\"", "dst = \"h\u{202e}2\u{2066}\""));
    let shown = e.to_string();
    assert!(
        shown.contains("unknown node 'h\\u{202e}2\\u{2066}'"),
        "{shown}"
    );
    assert!(!shown.contains('\u{202e}') && !shown.contains('\u{2066}'));
    let w = ScenarioWarning {
        file: "a\u{200f}.toml".into(),
        path: "flow[0]".into(),
        message: "x".into(),
    };
    assert_eq!(w.to_string(), "a\\u{200f}.toml: flow[0]: x");
}
