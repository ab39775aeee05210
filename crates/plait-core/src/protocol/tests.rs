use super::*;
use crate::app::onoff;
use crate::registry::Value;
use crate::rng::rng_from_seed;
use crate::time::{Rate, SimTime};
use crate::transport::Transport;

fn build(name: &str, given: &[(&str, Value)]) -> Built {
    SourceSpec::new(name, given)
        .unwrap_or_else(|e| panic!("{e}"))
        .build(FlowContext::new(rng_from_seed(1)))
        .unwrap_or_else(|e| panic!("{}: {}", e.key, e.message))
}

#[test]
fn datagram_sources_build_with_their_parameters() {
    let rate = ("rate", Value::Rate(Rate::from_mbps(1)));
    let cbr = build("cbr", std::slice::from_ref(&rate));
    assert_eq!((cbr.transport.kind(), cbr.cc.as_str()), ("cbr", ""));
    let d = cbr.transport.as_datagram().expect("a datagram flow");
    assert_eq!(d.source().packet_bytes(), 1000);
    let period = Value::Period(onoff::Period::Exponential {
        mean: SimTime::from_millis(10),
    });
    let given = [
        rate,
        ("packet_size", Value::Size(1500)),
        ("on", period.clone()),
        ("off", period),
    ];
    let onoff = build("onoff", &given);
    assert_eq!(onoff.transport.kind(), "onoff");
    let d = onoff.transport.as_datagram().expect("a datagram flow");
    assert_eq!(d.source().packet_bytes(), 1500);
    let err = SourceSpec::new("cbr", &[("packet_size", Value::Size(70_000))]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "source cbr: packet_size: must be between 1 and 65535 bytes, got 70000"
    );
}

#[test]
fn tcp_flows_carry_their_controller() {
    let tcp = build("tcp", &[]);
    assert_eq!(tcp.cc, "reno");
    let flow = tcp.transport.as_tcp().expect("a TCP flow");
    assert_eq!(
        flow.sender().config(),
        &crate::transport::tcp::TcpConfig::default()
    );
    let cubic = crate::transport::cc::CcSpec::new("cubic", &[]).unwrap();
    assert_eq!(
        build("tcp", &[("cc", Value::Controller(cubic))]).cc,
        "cubic"
    );
}

#[test]
fn paths_a_builder_needs_are_named_when_missing() {
    for (name, key) in [("mptcp", "subflows"), ("mpat", "shares")] {
        let missing = SourceSpec::new(name, &[])
            .unwrap()
            .build(FlowContext::new(rng_from_seed(1)))
            .err()
            .expect("no paths read");
        assert_eq!(missing.key, key);
    }
    let mpat = SourceSpec::new("mpat", &[])
        .unwrap()
        .build(FlowContext {
            shares: Some(vec![1.0, 3.0]),
            ..FlowContext::new(rng_from_seed(1))
        })
        .unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!((mpat.transport.kind(), mpat.cc.as_str()), ("mpat", "reno"));
    assert_eq!(mpat.transport.application_flows(), 2);
}

#[test]
fn declarations_are_consistent() {
    assert_eq!(REGISTRY.len(), PROTOCOLS.len());
    for p in PROTOCOLS {
        assert_eq!(find(p.name()).map(|f| f.name()), Some(p.name()));
        // A section is named after the protocol that declares its parameters.
        if let Some(section) = p.section {
            let owner = find(section).expect("a section names a protocol");
            let own: Vec<&str> = owner
                .source
                .params
                .iter()
                .filter(|q| q.in_section)
                .map(|q| q.name)
                .collect();
            let mine: Vec<&str> = p
                .source
                .params
                .iter()
                .filter(|q| q.in_section)
                .map(|q| q.name)
                .collect();
            assert_eq!(mine, own, "{}: the section's parameters", p.name());
        } else {
            assert!(
                p.source.params.iter().all(|q| !q.in_section),
                "{}: parameters in a section it does not name",
                p.name()
            );
        }
        // A setting is a number parameter, or the shares of a protocol of shares.
        for key in p.settings {
            let ok = match *key {
                "shares" => p.paths == Paths::Shares,
                _ => p
                    .source
                    .param(key)
                    .is_some_and(|q| q.ty == crate::registry::ParamType::Number),
            };
            assert!(ok, "{}: setting {key}", p.name());
        }
        // What the paths need read is not also a parameter.
        for key in p.paths.keys() {
            assert!(p.source.param(key).is_none(), "{}: {key}", p.name());
        }
    }
    assert_eq!(sections(), ["tcp"]);
    // The columns a protocol declares are the ones its transport fills, and only those.
    let every: Vec<&str> = PROTOCOLS
        .iter()
        .flat_map(|p| p.columns.iter().copied())
        .collect();
    assert_eq!(
        every.iter().filter(|c| **c == "loss_event_rate").count(),
        3,
        "tfrc, multfrc and cp"
    );
    {
        use crate::trace::results::{FlowSeries, FlowTable};
        use crate::trace::table::Table;
        let flows = FlowTable::default();
        let series = FlowSeries::default();
        let names = |t: Vec<(&'static str, _)>| t.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
        let (in_flows, in_series) = (names(flows.columns()), names(series.columns()));
        for name in &every {
            assert!(
                in_flows.contains(name) && in_series.contains(name),
                "{name}"
            );
        }
    }
    for p in PROTOCOLS {
        let given: Vec<(&str, Value)> = match p.name() {
            "cbr" => vec![("rate", Value::Rate(Rate::from_mbps(1)))],
            "onoff" => {
                let period = Value::Period(onoff::Period::Exponential {
                    mean: SimTime::from_millis(10),
                });
                vec![
                    ("rate", Value::Rate(Rate::from_mbps(1))),
                    ("on", period.clone()),
                    ("off", period),
                ]
            }
            "cp" => vec![("n", Value::Number(2.0))],
            _ => Vec::new(),
        };
        let context = FlowContext {
            shares: Some(vec![1.0]),
            multipath: None,
            ..FlowContext::new(rng_from_seed(1))
        };
        let Ok(built) = SourceSpec::new(p.name(), &given).unwrap().build(context) else {
            continue; // MPTCP needs its subflows; it declares no column
        };
        for name in &every {
            assert_eq!(
                built.transport.column(name).is_some(),
                p.columns.contains(name),
                "{}: {name}",
                p.name()
            );
        }
    }
    assert_eq!(setting_keys(), ["n", "shares"]);
    let names = |key| changing(key).iter().map(|p| p.name()).collect::<Vec<_>>();
    assert_eq!(names("n"), ["multfrc", "cp"]);
    assert_eq!(names("shares"), ["mpat"]);
}
