//! The declarations themselves: well formed, consistent defaults and ranges, and every
//! algorithm builds.

use super::*;
use crate::net::loss::LossKind;
use crate::net::queue::{LinkInfo, QueueKind};
use crate::protocol::{FlowContext, SourceKind};
use crate::rng::rng_from_seed;
use crate::time::{Rate, SimTime};
use crate::transport::cc::{CongestionControl, Connection, ControllerKind};
use crate::transport::Transport;

/// Every declaration of every category.
fn all() -> Vec<Entry> {
    Category::ALL.iter().flat_map(|c| c.entries()).collect()
}

fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[test]
fn names_are_unique_lowercase_and_listed_in_order() {
    for category in Category::ALL {
        let names: Vec<&str> = category.entries().iter().map(|e| e.name).collect();
        assert!(!names.is_empty(), "no {category:?}");
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, names, "{category:?}: listed out of order or twice");
        for name in names {
            assert!(is_identifier(name), "{category:?} name {name:?}");
        }
    }
}

#[test]
fn declarations_are_well_formed() {
    for e in all() {
        let what = format!("{} {}", e.category.name(), e.name);
        assert!(
            !e.summary.is_empty() && !e.summary.ends_with('.'),
            "{what}: summary {:?} (one line, no final period)",
            e.summary
        );
        let mut seen = Vec::new();
        for p in e.params {
            let what = format!("{what}: {}", p.name);
            assert!(is_identifier(p.name), "{what}: not an identifier");
            assert!(!seen.contains(&p.name), "{what}: declared twice");
            seen.push(p.name);
            assert!(
                !p.doc.is_empty() && !p.doc.ends_with('.') && !p.doc.contains('\n'),
                "{what}: doc {:?} (one line, no final period)",
                p.doc
            );
            assert!(
                p.ty.is_ordered() || p.range.is_unbounded(),
                "{what}: a range on an unordered type"
            );
            if p.ty == ParamType::Probability {
                assert_eq!(
                    p.range.text().as_deref(),
                    Some("[0, 1]"),
                    "{what}: a probability's range"
                );
            }
            match p.default {
                Default::Required => {}
                Default::Unset(meaning) => assert!(!meaning.is_empty(), "{what}: unset means?"),
                Default::Value(Scalar::Name(name)) if p.ty == ParamType::Controller => {
                    assert!(
                        find::<ControllerKind>(name).is_some(),
                        "{what}: default {name}"
                    );
                }
                Default::Value(s) => {
                    let value = Value::from(s);
                    assert_eq!(p.check(&value), Ok(()), "{what}: default {value}");
                }
            }
            if p.in_section {
                assert_eq!(
                    e.category,
                    Category::Source,
                    "{what}: only sources have sections"
                );
            }
        }
    }
}

#[test]
fn draws_are_valid_values() {
    for e in all() {
        for p in e.params {
            for i in 0..=20 {
                let u = f64::from(i) / 20.0;
                let value = p.draw(u);
                assert_eq!(
                    p.check(&value),
                    Ok(()),
                    "{} {}: {} drawn from {u}",
                    e.category.name(),
                    e.name,
                    p.name
                );
            }
        }
    }
}

/// The algorithm's defaults with its required parameters drawn mid-range; when its own checks
/// want more (drop-tail needs one of its two limits), with one unset parameter drawn as well.
fn configured<K: Kind>(spec: &'static AlgorithmSpec<K>) -> Configured<K> {
    let given: Vec<(&str, Value)> = spec
        .params
        .iter()
        .filter(|p| p.is_required())
        .map(|p| (p.name, p.draw(0.5)))
        .collect();
    let first = Configured::new(spec.name, &given);
    first
        .or_else(|e| {
            spec.params
                .iter()
                .filter(|p| matches!(p.default, Default::Unset(_)))
                .find_map(|p| {
                    let mut more = given.clone();
                    more.push((p.name, p.draw(0.5)));
                    Configured::new(spec.name, &more).ok()
                })
                .ok_or(e)
        })
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_algorithm_builds_from_its_defaults() {
    for spec in ControllerKind::registry() {
        let connection = Connection {
            mss: 1000,
            initial_window: 4,
            profile: crate::transport::tcp::TcpProfile::Rfc,
        };
        let cc = configured(spec).build(connection);
        assert_eq!((cc.name(), cc.cwnd()), (spec.name, 4000));
    }
    for spec in crate::transport::multipath::coupled::CoupledKind::registry() {
        use crate::transport::multipath::coupled::{
            MultipathCongestionControl, MultipathConnection,
        };
        let connection = MultipathConnection {
            subflows: 2,
            mss: 1000,
            initial_window: 4,
            profile: crate::transport::tcp::TcpProfile::Rfc,
        };
        let cc = configured(spec).build(connection);
        assert_eq!((cc.name(), cc.cwnd(0)), (spec.name, 4000));
    }
    for spec in QueueKind::registry() {
        let link = LinkInfo {
            rate: Rate::from_mbps(10),
            default_hold: SimTime::from_millis(10),
        };
        assert_eq!(configured(spec).build(link).kind_name(), spec.name);
    }
    for spec in LossKind::registry() {
        assert_eq!(configured(spec).build(()).kind_name(), spec.name);
    }
    for spec in SourceKind::registry() {
        // MPTCP and MPAT need the paths the scenario reader reads: they say which.
        let context = FlowContext::new(rng_from_seed(1));
        match configured(spec).build(context) {
            Ok(built) => assert_eq!(built.transport.kind(), spec.name),
            Err(missing) => assert!(["subflows", "shares"].contains(&missing.key)),
        }
    }
}

#[test]
fn configured_values_compare_by_name_and_values() {
    let a = Configured::<ControllerKind>::new("cubic", &[]).unwrap();
    let b = Configured::<ControllerKind>::new("cubic", &[("c", Value::Number(0.4))]).unwrap();
    assert_eq!(a, b, "a default written out is the default");
    let c = Configured::<ControllerKind>::new("cubic", &[("c", Value::Number(0.5))]).unwrap();
    assert_ne!(a, c);
    assert_ne!(
        Configured::<ControllerKind>::new("reno", &[]).unwrap(),
        Configured::<ControllerKind>::new("aimd", &[]).unwrap()
    );
    assert_eq!(
        format!("{c:?}"),
        "cubic { c: 0.5, beta: 0.7, fast_convergence: true, tcp_friendliness: true, hystart: \"auto\" }"
    );
    let err = Configured::<LossKind>::new("burst", &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "loss burst: unknown loss model (known: bernoulli, gilbert_elliott, periodic)"
    );
}
