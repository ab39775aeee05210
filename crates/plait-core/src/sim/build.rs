//! Building a [`Simulator`] from a validated [`Scenario`]: topology, routes, queues, loss
//! models, endpoints and their random streams.
//!
//! Random streams are named after what draws from them (`link.<name>.forward`,
//! `flow.<name>.start`, `flow.<name>.<kind>` for a source, e.g. `flow.<name>.onoff`), so adding
//! a flow or a link never changes the draws of another.

use std::collections::HashMap;

use crate::ids::{LinkId, NodeId, RouteId};
use crate::net::link::Link;
use crate::net::queue::LinkInfo;
use crate::net::topology::{NodeRole, Topology};
use crate::protocol::{Built, FlowContext};
use crate::rng::RngStreams;
use crate::scenario::{NodeKind, PathSpec, Scenario, ScenarioError, StartSpec};
use crate::time::SimTime;
use crate::trace::meters::FlowMeters;
use crate::transport::Transport;
use rand::Rng;

use super::flow::{Flow, FlowPath};
use super::{LinkChange, RunConfig, Simulator};

/// Hold time of a threshold-dropper when no flow crosses its link.
const FALLBACK_HOLD: SimTime = SimTime::from_millis(100);

/// Builds the simulator for `scenario`, with `seed` replacing the scenario's seed if given.
pub fn build(scenario: &Scenario, seed: Option<u64>) -> Result<Simulator, ScenarioError> {
    let err = |path: String, message: String| ScenarioError {
        file: scenario.source.clone(),
        path,
        message,
    };
    let seed = seed.unwrap_or(scenario.simulation.seed);
    let streams = RngStreams::new(seed);

    // Nodes and link directions.
    let mut topo = Topology::default();
    for n in &scenario.nodes {
        let role = match n.kind {
            NodeKind::Host => NodeRole::Host,
            NodeKind::Router => NodeRole::Router,
        };
        topo.add_node(&n.name, role);
    }
    let ids: HashMap<String, NodeId> = topo
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.clone(), NodeId::from_index(i)))
        .collect();
    // The error's path is formatted only for an error.
    let node = |name: &str, path: &dyn Fn() -> String| {
        ids.get(name)
            .copied()
            .ok_or_else(|| err(path(), format!("unknown node '{name}'")))
    };
    // (spec index, is_reverse) of each link direction, in id order.
    let mut directions: Vec<(usize, bool)> = Vec::new();
    for (i, l) in scenario.links.iter().enumerate() {
        let from = node(&l.from, &|| format!("link[{i}].from"))?;
        let to = node(&l.to, &|| format!("link[{i}].to"))?;
        topo.add_link(from, to, l.delay.as_nanos());
        directions.push((i, false));
        if l.duplex {
            topo.add_link(to, from, l.delay.as_nanos());
            directions.push((i, true));
        }
    }

    // Routes, interned so that flows on the same path share one.
    let mut routes: Vec<Box<[LinkId]>> = Vec::new();
    let mut route_ids: HashMap<Vec<LinkId>, RouteId> = HashMap::new();
    let mut intern = |path: Vec<LinkId>| -> RouteId {
        if let Some(&id) = route_ids.get(&path) {
            return id;
        }
        let id = RouteId::from_index(routes.len());
        routes.push(path.clone().into_boxed_slice());
        route_ids.insert(path, id);
        id
    };
    // Paths come resolved by validation (`FlowSpec::paths`); only a scenario assembled by
    // hand can name a link direction that does not exist.
    let mut flow_paths: Vec<(NodeId, NodeId, &[PathSpec])> = Vec::new();
    for f in &scenario.flows {
        let at = || format!("flow '{}'", f.name);
        let src = node(&f.src, &|| format!("{}.src", at()))?;
        let dst = node(&f.dst, &|| format!("{}.dst", at()))?;
        let valid = |links: &[LinkId]| links.iter().all(|l| l.index() < directions.len());
        if f.paths.is_empty()
            || f.paths
                .iter()
                .any(|p| p.forward.is_empty() || !valid(&p.forward) || !valid(&p.reverse))
        {
            return Err(err(
                format!("{}.route", at()),
                "the flow's paths were not resolved against this scenario's links".into(),
            ));
        }
        flow_paths.push((src, dst, &f.paths));
    }

    // Default threshold-dropper hold: the mean propagation RTT of the flows whose data crosses
    // the link direction (Altman et al. §V.D hold the dropper for about one RTT).
    let rtt_of = |fwd: &[LinkId], rev: &[LinkId]| -> u64 {
        fwd.iter()
            .chain(rev)
            .map(|l| topo.delay_ns[l.index()])
            .sum()
    };
    let mut hold_sum = vec![0u128; directions.len()];
    let mut hold_n = vec![0u64; directions.len()];
    for path in flow_paths.iter().flat_map(|(_, _, paths)| paths.iter()) {
        let (fwd, rev) = (&path.forward, &path.reverse);
        let rtt = rtt_of(fwd, rev);
        for l in fwd {
            hold_sum[l.index()] += rtt as u128;
            hold_n[l.index()] += 1;
        }
    }

    let mut links = Vec::with_capacity(directions.len());
    for (id, &(i, is_reverse)) in directions.iter().enumerate() {
        let spec = &scenario.links[i];
        let (from, to) = topo.ends[id];
        let hold = if hold_n[id] > 0 {
            SimTime((hold_sum[id] / hold_n[id] as u128) as u64)
        } else {
            FALLBACK_HOLD
        };
        let (queue_spec, loss_spec) = if is_reverse {
            (&spec.reverse_queue, &spec.reverse_loss)
        } else {
            (&spec.queue, &spec.loss)
        };
        let dir = if is_reverse { "reverse" } else { "forward" };
        links.push(Link::new(
            spec.name.clone(),
            is_reverse,
            from,
            to,
            spec.rate,
            spec.delay,
            queue_spec.build(LinkInfo {
                rate: spec.rate,
                default_hold: hold,
            }),
            loss_spec.as_ref().map(|l| l.build(())),
            streams.stream_of(&["link.", &spec.name, ".", dir]),
        ));
        // `local`: the `from` host's interface queue, so the forward direction's.
        links[id].local = spec.local && !is_reverse;
    }

    let mut flows = Vec::with_capacity(scenario.flows.len());
    for (f, (src, dst, paths)) in scenario.flows.iter().zip(flow_paths) {
        let start = match f.start {
            StartSpec::At(t) => t,
            StartSpec::Uniform(a, b) => {
                let mut rng = streams.stream_of(&["flow.", &f.name, ".start"]);
                let span = b.saturating_sub(a).as_nanos();
                a + SimTime(if span == 0 {
                    0
                } else {
                    rng.gen_range(0..=span)
                })
            }
        };
        // The protocol builds the flow's transport from its parameters, its streams and what
        // the scenario reader read for its paths.
        let context = FlowContext {
            rng: streams.stream_of(&["flow.", &f.name, ".", f.kind.name()]),
            host: streams.stream_of(&["flow.", &f.name, ".host"]),
            multipath: f.multipath.clone(),
            shares: f.shares.clone(),
            slowest_rate_bps: paths
                .iter()
                .flat_map(|p| p.forward.iter())
                .map(|l| scenario.links[directions[l.index()].0].rate.as_f64())
                .reduce(f64::min),
        };
        let Built { transport, cc } = f
            .kind
            .build(context)
            .map_err(|m| err(format!("flow '{}'.{}", f.name, m.key), m.message))?;
        let first_links: Vec<LinkId> = paths.iter().map(|p| p.forward[0]).collect();
        let local =
            crate::transport::outbox::LocalRoom::new(&first_links, |l| links[l.index()].local)
                .map(Box::new);
        flows.push(Flow {
            name: f.name.clone(),
            kind: transport.kind(),
            cc,
            src,
            dst,
            paths: paths
                .iter()
                .map(|p| FlowPath {
                    forward: intern(p.forward.clone()),
                    reverse: intern(p.reverse.clone()),
                })
                .collect(),
            start,
            stop: f.stop,
            timer_scheduled: None,
            deadline: None,
            transport,
            meters: FlowMeters::new(paths.len()),
            local,
        });
    }

    let config = RunConfig {
        duration: scenario.simulation.duration,
        warmup: scenario.simulation.warmup,
        seed,
        sample_interval: scenario.simulation.sample_interval,
        trace_drops: scenario.simulation.trace_drops,
        lookahead: scenario.simulation.lookahead,
    };
    let node_names = topo.nodes.iter().map(|n| n.name.clone()).collect();
    // An event acts on every direction of its link.
    let mut link_changes = Vec::new();
    for e in &scenario.events {
        for (id, &(i, _)) in directions.iter().enumerate() {
            if scenario.links[i].name == e.link {
                link_changes.push(LinkChange {
                    at: e.at,
                    link: LinkId::from_index(id),
                    up: e.up,
                });
            }
        }
    }
    // A loss event acts on the forward direction of its link.
    let mut loss_changes = Vec::new();
    for e in &scenario.loss_events {
        for (id, &(i, is_reverse)) in directions.iter().enumerate() {
            if !is_reverse && scenario.links[i].name == e.link {
                loss_changes.push(super::LossChange {
                    at: e.at,
                    link: LinkId::from_index(id),
                    loss: e.loss.clone(),
                });
            }
        }
    }
    let flow_changes = scenario
        .flow_events
        .iter()
        .filter_map(|e| {
            let i = scenario.flows.iter().position(|f| f.name == e.flow)?;
            Some(super::FlowSettingChange {
                at: e.at,
                flow: crate::ids::FlowId::from_index(i),
                change: e.change.clone(),
            })
        })
        .collect();
    Ok(Simulator::assemble(
        config,
        links,
        routes,
        flows,
        node_names,
        super::ScheduledChanges {
            links: link_changes,
            losses: loss_changes,
            flows: flow_changes,
        },
        crate::trace::NoTrace,
    ))
}
