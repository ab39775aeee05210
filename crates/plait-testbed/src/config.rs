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

use plait_core::net::queue::Limit;
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
}

impl LinkConfig {
    pub fn build(&self) -> Result<LinkDirection, String> {
        let limit = match (self.limit_packets, self.limit_bytes) {
            (Some(p), None) => Limit::Packets(p),
            (None, Some(b)) => Limit::Bytes(b),
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
        Ok(LinkDirection::new(
            Rate::from_bps(self.rate_bps),
            SimTime(self.delay_ns),
            limit,
        ))
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
        assert!(bad.check().unwrap_err().contains("exactly one"));
    }
}
