//! The JSON configuration `plait testbed` writes for `plait-linkemu`.
//!
//! ```json
//! {"hosts": [{"name": "a", "netns": "plait-123-a", "tun": "pt-a", "addrs": ["10.0.0.1"]}],
//!  "links": [{"name": "l0:a>b", "rate_bps": 20000000, "delay_ns": 20000000,
//!             "limit_packets": 100}],
//!  "routes": [{"src": "10.0.0.1", "dst": "10.0.0.2", "links": [0]}],
//!  "cpu": 1, "stats_file": "/tmp/x/emu.json", "ready_file": "/tmp/x/ready"}
//! ```

#![forbid(unsafe_code)]

use std::net::Ipv4Addr;

use plait_core::net::loss::{LossKind, LossModel};
use plait_core::net::queue::{Limit, LinkInfo, QueueKind};
use plait_core::registry::{find, Configured, ParamType, Value};
use plait_core::{Rate, SimTime};
use serde::Deserialize;

use crate::link::LinkDirection;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    pub name: String,
    /// Name of the network namespace (as under /run/netns) that gets this host's TUN device.
    pub netns: String,
    /// Name of the TUN device created in it.
    pub tun: String,
    pub addrs: Vec<Ipv4Addr>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub name: String,
    pub rate_bps: u64,
    pub delay_ns: u64,
    /// Waiting packets allowed (the packet in service not counted); exactly one of the two.
    #[serde(default)]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// A plait-core loss model as a scenario writes it (`{"kind": "bernoulli", "p": 0.01}`),
    /// applied before the queue.
    #[serde(default)]
    pub loss: Option<serde_json::Map<String, serde_json::Value>>,
    /// Seed of the loss model's random stream.
    #[serde(default)]
    pub loss_seed: u64,
    /// A plait-core queue discipline other than drop-tail, as a scenario writes it with sizes
    /// in bytes (`{"kind": "red", "min_th": 5, "max_th": 15, "packets": 50}`); its buffer limit
    /// is among its parameters, so `limit_packets` and `limit_bytes` are then absent.
    #[serde(default)]
    pub queue: Option<serde_json::Map<String, serde_json::Value>>,
    /// Seed of the queue discipline's random stream (RED's early drops, the
    /// threshold-dropper's `rate_independent` draws).
    #[serde(default)]
    pub queue_seed: u64,
    /// The threshold-dropper's hold when its table gives none: the simulator's default, the
    /// mean propagation RTT of the flows whose data crosses the direction (plait-core
    /// sim/build.rs), computed by the caller. 100 ms when absent.
    #[serde(default)]
    pub default_hold_ns: Option<u64>,
}

impl LinkConfig {
    pub fn build(&self) -> Result<LinkDirection, String> {
        let limit = match (self.limit_packets, self.limit_bytes, &self.queue) {
            (Some(p), None, None) => Limit::Packets(p),
            (None, Some(b), None) => Limit::Bytes(b),
            // Replaced below by the discipline, which holds its own limit.
            (None, None, Some(_)) => Limit::Packets(1),
            (_, _, Some(_)) => {
                return Err(format!(
                    "link {}: a queue discipline holds its own limit (no limit_packets or \
                     limit_bytes)",
                    self.name
                ))
            }
            _ => {
                return Err(format!(
                    "link {}: give exactly one of limit_packets and limit_bytes",
                    self.name
                ))
            }
        };
        if self.rate_bps == 0 {
            return Err(format!("link {}: rate_bps must be positive", self.name));
        }
        let mut link =
            LinkDirection::new(Rate::from_bps(self.rate_bps), SimTime(self.delay_ns), limit);
        if let Some(table) = &self.queue {
            link = link.with_queue(self.queue_disc(table)?, self.queue_seed);
        }
        match &self.loss {
            None => Ok(link.with_loss_stream(self.loss_seed)),
            Some(table) => Ok(link.with_loss(self.loss_model(table)?, self.loss_seed)),
        }
    }

    /// The queue discipline of a scenario's queue table, built and validated by plait-core's
    /// registry (the simulator's parameters, defaults and checks): RED, or the
    /// threshold-dropper (whose drops of waiting packets the link core reschedules behind).
    fn queue_disc(
        &self,
        table: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<plait_core::net::queue::Queue, String> {
        let kind = table
            .get("kind")
            .and_then(|k| k.as_str())
            .ok_or_else(|| format!("link {}: queue needs a kind", self.name))?;
        if kind != "red" && kind != "threshold_dropper" {
            return Err(format!(
                "link {}: queue kind {kind:?} is not run by the emulator (drop-tail, red or \
                 threshold_dropper)",
                self.name
            ));
        }
        let spec = find::<QueueKind>(kind)
            .ok_or_else(|| format!("link {}: unknown queue {kind:?}", self.name))?;
        let mut given = Vec::new();
        for (key, value) in table.iter().filter(|(k, _)| k.as_str() != "kind") {
            let param = spec.params.iter().find(|p| p.name == key).ok_or_else(|| {
                format!("link {}: queue {kind} has no parameter {key:?}", self.name)
            })?;
            let typed = match param.ty {
                ParamType::Integer => value.as_u64().map(Value::Integer),
                ParamType::Size => value.as_u64().map(Value::Size),
                ParamType::Number | ParamType::Probability | ParamType::NumberOrSize => {
                    value.as_f64().map(Value::Number)
                }
                ParamType::Bool => value.as_bool().map(Value::Bool),
                // Durations in ns.
                ParamType::Duration => value.as_u64().map(|ns| Value::Duration(SimTime(ns))),
                ParamType::Choice(options) => value
                    .as_str()
                    .and_then(|v| options.iter().find(|o| **o == v))
                    .map(|o| Value::Choice(o)),
                _ => None,
            }
            .ok_or_else(|| {
                format!(
                    "link {}: queue {kind}: {key} = {value} not understood",
                    self.name
                )
            })?;
            given.push((param.name, typed));
        }
        let configured = Configured::<QueueKind>::new(kind, &given)
            .map_err(|e| format!("link {}: {e}", self.name))?;
        Ok(configured.build(LinkInfo {
            rate: Rate::from_bps(self.rate_bps),
            // The threshold-dropper's default hold; RED does not read it.
            default_hold: SimTime(self.default_hold_ns.unwrap_or(100_000_000)),
        }))
    }

    /// The loss model of a scenario's loss table, built and validated by plait-core's
    /// registry (the same parameters, defaults and ranges as the simulator).
    pub fn loss_model(
        &self,
        table: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<LossModel, String> {
        let kind = table
            .get("kind")
            .and_then(|k| k.as_str())
            .ok_or_else(|| format!("link {}: loss needs a kind", self.name))?;
        let spec = find::<LossKind>(kind)
            .ok_or_else(|| format!("link {}: unknown loss model {kind:?}", self.name))?;
        let mut given = Vec::new();
        for (key, value) in table.iter().filter(|(k, _)| k.as_str() != "kind") {
            let param = spec.params.iter().find(|p| p.name == key).ok_or_else(|| {
                format!("link {}: loss {kind} has no parameter {key:?}", self.name)
            })?;
            let typed = match param.ty {
                ParamType::Integer => value.as_u64().map(Value::Integer),
                ParamType::Number | ParamType::Probability => value.as_f64().map(Value::Number),
                ParamType::Bool => value.as_bool().map(Value::Bool),
                _ => None,
            }
            .ok_or_else(|| {
                format!(
                    "link {}: loss {kind}: {key} = {value} not understood",
                    self.name
                )
            })?;
            given.push((param.name, typed));
        }
        let configured = Configured::<LossKind>::new(kind, &given)
            .map_err(|e| format!("link {}: {e}", self.name))?;
        Ok(configured.build(()))
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteConfig {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    /// Link directions crossed, as indices into `links`.
    pub links: Vec<usize>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub hosts: Vec<HostConfig>,
    pub links: Vec<LinkConfig>,
    pub routes: Vec<RouteConfig>,
    /// CPU to pin the forwarder to (none: not pinned).
    #[serde(default)]
    pub cpu: Option<usize>,
    /// Keep the other CPUs from halting with SCHED_IDLE busy loops while the run lasts.
    #[serde(default)]
    pub keep_awake: bool,
    /// A departure closer than this (ns) is waited for by spinning rather than sleeping: a
    /// timed sleep on a virtual machine ends tens to hundreds of microseconds late.
    #[serde(default = "default_spin_ns")]
    pub spin_ns: u64,
    /// Largest share of each `spin_window_ns` the emulator may spend spinning (see `spin`).
    #[serde(default = "default_spin_share")]
    pub spin_share: f64,
    #[serde(default = "default_spin_window_ns")]
    pub spin_window_ns: u64,
    pub stats_file: String,
    /// Written (empty) once every TUN device exists.
    pub ready_file: String,
    /// Captures: every packet admitted to one of `links` is written to `file` at the ideal end
    /// of its transmission there.
    #[serde(default)]
    pub pcap: Vec<PcapConfig>,
    /// Link directions taken down and up, or given a new loss model (a scenario's
    /// `[[event]]`s), in time order (at one instant, down/up before loss changes).
    #[serde(default)]
    pub events: Vec<EventConfig>,
    /// The run's start (CLOCK_REALTIME, ns), from which the events' times count; required with
    /// events.
    #[serde(default)]
    pub t0_realtime_ns: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventConfig {
    /// From the run's start (`t0_realtime_ns`).
    pub at_ns: u64,
    /// Index into `links`.
    pub link: usize,
    /// Down (false) or up (true); exactly one of `up` and `loss`.
    #[serde(default)]
    pub up: Option<bool>,
    /// A new loss model, a table as the link's `loss` (docs/scenario.md, "A link's loss model
    /// changes").
    #[serde(default)]
    pub loss: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcapConfig {
    pub links: Vec<usize>,
    pub file: String,
}

fn default_spin_ns() -> u64 {
    100_000
}

fn default_spin_window_ns() -> u64 {
    1_000_000
}

fn default_spin_share() -> f64 {
    0.5
}

impl Config {
    /// Checks the cross references: one line naming what is wrong.
    pub fn check(&self) -> Result<(), String> {
        for (i, r) in self.routes.iter().enumerate() {
            if r.links.is_empty() {
                return Err(format!("routes[{i}]: crosses no link"));
            }
            if let Some(l) = r.links.iter().find(|&&l| l >= self.links.len()) {
                return Err(format!("routes[{i}]: link {l} does not exist"));
            }
            if self.host_of(r.dst).is_none() {
                return Err(format!("routes[{i}]: no host has address {}", r.dst));
            }
        }
        for l in &self.links {
            l.build()?;
        }
        for (i, p) in self.pcap.iter().enumerate() {
            if let Some(l) = p.links.iter().find(|&&l| l >= self.links.len()) {
                return Err(format!("pcap[{i}]: link {l} does not exist"));
            }
        }
        for (i, e) in self.events.iter().enumerate() {
            if e.link >= self.links.len() {
                return Err(format!("events[{i}]: link {} does not exist", e.link));
            }
            if i > 0 && e.at_ns < self.events[i - 1].at_ns {
                return Err(format!("events[{i}]: not in time order"));
            }
            match (&e.up, &e.loss) {
                (Some(_), None) => {}
                (None, Some(table)) => {
                    self.links[e.link]
                        .loss_model(table)
                        .map_err(|m| format!("events[{i}]: {m}"))?;
                }
                _ => return Err(format!("events[{i}]: give exactly one of up and loss")),
            }
        }
        if !self.events.is_empty() && self.t0_realtime_ns.is_none() {
            return Err("events: need t0_realtime_ns (the run's start)".to_string());
        }
        Ok(())
    }

    /// Index of the host that owns `addr`.
    pub fn host_of(&self, addr: Ipv4Addr) -> Option<usize> {
        self.hosts.iter().position(|h| h.addrs.contains(&addr))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_checks() {
        let text = r#"{"hosts": [{"name": "a", "netns": "n-a", "tun": "t", "addrs": ["10.0.0.1"]},
                                 {"name": "b", "netns": "n-b", "tun": "t", "addrs": ["10.0.0.2"]}],
            "links": [{"name": "l", "rate_bps": 1000, "delay_ns": 5, "limit_bytes": 3000}],
            "routes": [{"src": "10.0.0.1", "dst": "10.0.0.2", "links": [0]}],
            "stats_file": "s", "ready_file": "r"}"#;
        let c: Config = serde_json::from_str(text).unwrap();
        c.check().unwrap();
        assert_eq!(c.host_of("10.0.0.2".parse().unwrap()), Some(1));
        let mut bad = c.clone();
        bad.routes[0].links = vec![3];
        assert_eq!(bad.check().unwrap_err(), "routes[0]: link 3 does not exist");
        let mut bad = c.clone();
        bad.links[0].limit_packets = Some(4);
        assert!(bad.check().unwrap_err().contains("exactly one")); // Events: a link that exists, in time order, counted from the run's start.
        let ev = |at_ns, link| EventConfig {
            at_ns,
            link,
            up: Some(false),
            loss: None,
        };
        let mut events = c.clone();
        events.events = vec![ev(5, 0), ev(9, 0)];
        assert_eq!(
            events.check().unwrap_err(),
            "events: need t0_realtime_ns (the run's start)"
        );
        events.t0_realtime_ns = Some(1);
        events.check().unwrap();
        events.events = vec![ev(9, 0), ev(5, 0)];
        assert_eq!(events.check().unwrap_err(), "events[1]: not in time order");
        events.events = vec![ev(5, 2)];
        assert_eq!(
            events.check().unwrap_err(),
            "events[0]: link 2 does not exist"
        );
    }

    #[test]
    fn loss_models_are_built_by_the_registry() {
        let link = |loss: &str| -> LinkConfig {
            serde_json::from_str(&format!(
                r#"{{"name": "l", "rate_bps": 20000000, "delay_ns": 0, "limit_packets": 100,
                     "loss": {loss}}}"#
            ))
            .unwrap()
        };
        // Every 2nd packet lost (offset 0): packets 2, 4, 6 of six.
        let mut l = link(r#"{"kind": "periodic", "every": 2}"#).build().unwrap();
        let lost = (0..6u64)
            .filter(|i| l.handle_arrival(i * 1_000_000, 0, 1500).is_err())
            .count();
        assert_eq!(lost, 3);
        assert_eq!(l.stats().dropped_loss, 3);
        // The registry's checks apply: p must be a probability.
        let err = link(r#"{"kind": "bernoulli", "p": 1.5}"#)
            .build()
            .unwrap_err();
        assert!(err.starts_with("link l: ") && err.contains("p"), "{err}");
        let err = link(r#"{"kind": "bernoulli", "q": 0.1}"#)
            .build()
            .unwrap_err();
        assert_eq!(err, "link l: loss bernoulli has no parameter \"q\"");
    }

    #[test]
    fn red_queues_are_built_by_the_registry() {
        let link = |fields: &str| -> Result<LinkDirection, String> {
            serde_json::from_str::<LinkConfig>(&format!(
                r#"{{"name": "l", "rate_bps": 20000000, "delay_ns": 0, {fields}}}"#
            ))
            .unwrap()
            .build()
        };
        let q = r#""queue": {"kind": "red", "min_th": 1, "max_th": 2, "packets": 3,
                   "mode": "packets", "gentle": true, "mean_packet_size": 1000},
                   "queue_seed": 9"#;
        // Its own limit: three waiting packets (one in service), the fifth dropped (the
        // average, w_q = 0.002, stays far below min_th: a forced drop by the buffer).
        let mut l = link(q).unwrap();
        let ok = (0..5)
            .filter(|_| l.handle_arrival(0, 0, 1500).is_ok())
            .count();
        assert_eq!((ok, l.stats().dropped_queue), (4, 1));
        let err = link(&format!(r#""limit_packets": 10, {q}"#)).unwrap_err();
        assert!(err.contains("holds its own limit"), "{err}");
        // The registry's checks: max_th above min_th.
        let err = link(r#""queue": {"kind": "red", "min_th": 20, "max_th": 15}"#).unwrap_err();
        assert!(
            err.starts_with("link l: ") && err.contains("max_th"),
            "{err}"
        );
        let err = link(r#""queue": {"kind": "fq_codel"}"#).unwrap_err();
        assert!(err.contains("not run by the emulator"), "{err}");
        let err = link(r#""queue": {"kind": "red", "mode": "joules"}"#).unwrap_err();
        assert!(err.contains("mode"), "{err}");
    }

    #[test]
    fn threshold_droppers_are_built_by_the_registry_with_the_default_hold() {
        use plait_core::net::queue::Queue;
        let build = |fields: &str| -> Result<Queue, String> {
            let cfg: LinkConfig = serde_json::from_str(&format!(
                r#"{{"name": "l", "rate_bps": 20000000, "delay_ns": 0, {fields}}}"#
            ))
            .unwrap();
            cfg.queue_disc(cfg.queue.as_ref().unwrap())
        };
        let hold_of = |q: Queue| match q {
            Queue::ThresholdDropper(d) => (d.threshold(), d.hold(), d.policy()),
            other => panic!("{}", other.kind_name()),
        };
        // No hold in the table: the caller's default (the flows' mean propagation RTT).
        let q = build(
            r#""queue": {"kind": "threshold_dropper", "threshold": 5}, "default_hold_ns": 40000000"#,
        );
        let (threshold, hold, policy) = hold_of(q.unwrap());
        assert_eq!((threshold, hold), (5, SimTime(40_000_000)));
        assert_eq!(policy, plait_core::net::queue::DropPolicy::FirstArrival);
        // A hold (ns) and a policy of its own.
        let q = build(
            r#""queue": {"kind": "threshold_dropper", "threshold": 9, "hold": 7000000,
                         "policy": "largest_rate"}, "default_hold_ns": 40000000"#,
        );
        let (_, hold, policy) = hold_of(q.unwrap());
        assert_eq!(hold, SimTime(7_000_000));
        assert_eq!(policy, plait_core::net::queue::DropPolicy::LargestRate);
        // The registry's checks: threshold is required, policies are named.
        let err = build(r#""queue": {"kind": "threshold_dropper"}"#).unwrap_err();
        assert!(
            err.starts_with("link l: ") && err.contains("threshold"),
            "{err}"
        );
        let err =
            build(r#""queue": {"kind": "threshold_dropper", "threshold": 1, "policy": "random"}"#)
                .unwrap_err();
        assert!(err.contains("policy"), "{err}");
    }

    #[test]
    fn loss_events_are_checked_by_the_registry() {
        let text = r#"{"hosts": [{"name": "a", "netns": "n-a", "tun": "t", "addrs": ["10.0.0.1"]},
                                 {"name": "b", "netns": "n-b", "tun": "t", "addrs": ["10.0.0.2"]}],
            "links": [{"name": "l", "rate_bps": 1000, "delay_ns": 5, "limit_packets": 3}],
            "routes": [{"src": "10.0.0.1", "dst": "10.0.0.2", "links": [0]}],
            "stats_file": "s", "ready_file": "r", "t0_realtime_ns": 1,
            "events": [{"at_ns": 5, "link": 0, "loss": {"kind": "bernoulli", "p": 0.1}},
                       {"at_ns": 6, "link": 0, "up": false}]}"#;
        let c: Config = serde_json::from_str(text).unwrap();
        c.check().unwrap();
        let mut bad = c.clone();
        bad.events[0].loss =
            Some(serde_json::from_str(r#"{"kind": "bernoulli", "p": 2}"#).unwrap());
        let err = bad.check().unwrap_err();
        assert!(err.starts_with("events[0]: link l: "), "{err}");
        let mut both = c.clone();
        both.events[1].loss = c.events[0].loss.clone();
        assert_eq!(
            both.check().unwrap_err(),
            "events[1]: give exactly one of up and loss"
        );
    }
}
