//! A warning when a connection's send or receive buffer is below the bandwidth-delay product
//! of its paths.
//!
//! A window-based sender has at most one buffer of data in flight per round trip, so its rate
//! is at most `buffer / RTT` (the receive window limit of RFC 7323 §1.1, and the same for
//! data a send buffer holds until it is acknowledged). A connection whose buffer is below
//! `rate x base RTT` of its paths cannot fill them: the links sit partly idle without a loss,
//! and what the run measures is the buffer, not the congestion control. The check is a
//! warning, not an error: a buffer-limited flow may be what a scenario means to study.
//!
//! The bandwidth-delay product of a connection is the sum over its paths of the rate of the
//! path's slowest link times the path's base RTT (the propagation delays, forward and back),
//! with paths that share their slowest link counted once (at the longest of their RTTs): two
//! subflows through one bottleneck cannot get more than its rate between them.

use std::collections::BTreeMap;

use super::schema::{FlowSpec, LinkSpec, PathSpec};
use super::tree::{join, Issue};
use crate::ids::LinkId;
use crate::registry::Origin;
use crate::units::format_size;

/// The link index of each link direction, numbered as the simulator numbers them: each link's
/// `from -> to` direction, then its `to -> from` direction if it is duplex, in file order.
fn directions(links: &[LinkSpec]) -> Vec<usize> {
    let mut out = Vec::with_capacity(2 * links.len());
    for (i, link) in links.iter().enumerate() {
        out.push(i);
        if link.duplex {
            out.push(i);
        }
    }
    out
}

/// The bandwidth-delay product of `paths` in bytes (see the module doc) and the number of
/// distinct bottlenecks counted.
pub(crate) fn bdp_bytes(paths: &[PathSpec], links: &[LinkSpec]) -> (u64, usize) {
    let dirs = directions(links);
    let link = |id: &LinkId| &links[dirs[id.index()]];
    // Per bottleneck direction: (rate in bit/s, longest base RTT in ns).
    let mut bottlenecks: BTreeMap<LinkId, (u64, u64)> = BTreeMap::new();
    for path in paths {
        let Some(slowest) = path.forward.iter().min_by_key(|id| link(id).rate.bps()) else {
            continue;
        };
        let rtt_ns: u64 = path
            .forward
            .iter()
            .chain(&path.reverse)
            .map(|id| link(id).delay.as_nanos())
            .sum();
        let entry = bottlenecks
            .entry(*slowest)
            .or_insert((link(slowest).rate.bps(), 0));
        entry.1 = entry.1.max(rtt_ns);
    }
    let bits: u128 = bottlenecks
        .values()
        .map(|&(bps, rtt_ns)| u128::from(bps) * u128::from(rtt_ns) / 1_000_000_000)
        .sum();
    (
        u64::try_from(bits / 8).unwrap_or(u64::MAX),
        bottlenecks.len(),
    )
}

/// Bytes in decimal units (a bandwidth-delay product is usually quoted so): `4.94MB`, `75.0kB`.
fn decimal_size(bytes: u64) -> String {
    match bytes {
        0..=999 => format!("{bytes}B"),
        1_000..=999_999 => format!("{:.1}kB", bytes as f64 / 1e3),
        _ => format!("{:.2}MB", bytes as f64 / 1e6),
    }
}

/// One warning per buffer below the bandwidth-delay product, for the first flow of each
/// `[[flow]]` entry (`entries`: the entry's path, `flow[2]`, and its first flow's index).
pub(crate) fn warnings<'a>(
    flows: &[FlowSpec],
    links: &[LinkSpec],
    entries: impl Iterator<Item = (&'a str, usize)>,
) -> Vec<Issue> {
    let mut out = Vec::new();
    for (entry, first) in entries {
        let flow = &flows[first];
        let params = flow.kind.params();
        let declared = |key: &str| params.declared().iter().any(|p| p.name == key);
        let (bdp, bottlenecks) = bdp_bytes(&flow.paths, links);
        for key in ["send_buffer", "receive_buffer"] {
            if !declared(key) {
                continue;
            }
            let Some(buffer) = params.opt_size(key) else {
                continue;
            };
            // An MPAT aggregate's windows each have their own receive buffer.
            let windows = match (&flow.shares, key) {
                (Some(shares), "receive_buffer") => shares.len() as u64,
                _ => 1,
            };
            let total = buffer.saturating_mul(windows);
            // A transfer that fits in the buffer is never limited by it.
            let bytes = if declared("bytes") {
                params.opt_size("bytes")
            } else {
                None
            };
            if total >= bdp || bytes.is_some_and(|b| b <= total) {
                continue;
            }
            let (path, whence) = match params.origin(key) {
                Origin::Given => (join(entry, key), ""),
                Origin::Inherited => {
                    let section = crate::protocol::find(flow.kind.name())
                        .and_then(|p| p.section)
                        .unwrap_or("tcp");
                    (join(section, key), "")
                }
                Origin::Default => (join(entry, key), " (the default)"),
            };
            let per_window = if windows > 1 {
                format!(" x {windows} windows")
            } else {
                String::new()
            };
            let paths = match flow.paths.len() {
                1 => "its path".to_string(),
                n if bottlenecks == n => format!("its {n} paths"),
                n if bottlenecks == 1 => format!("its {n} paths (one bottleneck)"),
                n => format!("its {n} paths ({bottlenecks} bottlenecks)"),
            };
            out.push(Issue::new(
                path,
                format!(
                    "flow '{}': {key} {}{per_window}{whence} is below the bandwidth-delay \
                     product of {paths}, {} (slowest link's rate x propagation round trip): \
                     the connection will be limited by its buffer, not by the network",
                    flow.name,
                    format_size(buffer),
                    decimal_size(bdp),
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;

    /// Four disjoint 50 ms paths of 100, 80, 160 and 40 Mb/s with 1 ms access links (the
    /// MPFAST load-balancing topology): base RTT 104 ms, BDP 380 Mb/s x 104 ms = 4.94 MB.
    fn four_paths(flow_extra: &str, tcp_section: &str) -> String {
        let mut text = format!("[simulation]\nduration = \"10s\"\n{tcp_section}\n");
        text += "[[link]]\nname = \"a\"\nfrom = \"s\"\nto = \"r0\"\nrate = \"10Gbps\"\ndelay = \"1ms\"\n";
        for (i, rate) in [100, 80, 160, 40].iter().enumerate() {
            let k = i + 1;
            text += &format!(
                "[[link]]\nname = \"l{k}\"\nfrom = \"r0\"\nto = \"r{k}\"\nrate = \"{rate}Mbps\"\n\
                 delay = \"50ms\"\n[[link]]\nname = \"x{k}\"\nfrom = \"r{k}\"\nto = \"d\"\n\
                 rate = \"10Gbps\"\ndelay = \"1ms\"\n"
            );
        }
        text += "[[flow]]\nname = \"mp\"\nkind = \"mptcp\"\nsrc = \"s\"\ndst = \"d\"\n";
        text += "subflows = [";
        for k in 1..=4 {
            text += &format!("{{ route = [\"s\", \"r0\", \"r{k}\", \"d\"] }}, ");
        }
        text += "]\n";
        text + flow_extra + "\n"
    }

    fn warnings(text: &str) -> Vec<String> {
        Scenario::from_toml_str(text, "lb.toml", &[])
            .unwrap_or_else(|e| panic!("{e}"))
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn bdp_is_summed_over_the_paths() {
        let s = Scenario::from_toml_str(&four_paths("", ""), "lb.toml", &[]).unwrap();
        let (bdp, n) = super::bdp_bytes(&s.flows[0].paths, &s.links);
        // 380e6 bit/s x 0.104 s / 8.
        assert_eq!((bdp, n), (4_940_000, 4));
    }

    #[test]
    fn the_default_send_buffer_below_the_bdp_is_warned_about() {
        let w = warnings(&four_paths("", ""));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(
            w[0],
            "lb.toml: flow[0].send_buffer: flow 'mp': send_buffer 4MiB (the default) is below \
             the bandwidth-delay product of its 4 paths, 4.94MB (slowest link's rate x \
             propagation round trip): the connection will be limited by its buffer, not by \
             the network"
        );
        // Given in the entry, or inherited from [tcp] (the receive buffer).
        let w = warnings(&four_paths(
            "send_buffer = \"1MB\"",
            "[tcp]\nreceive_buffer = \"2MB\"",
        ));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with(
                "lb.toml: flow[0].send_buffer: flow 'mp': send_buffer 1000000B is below"
            ),
            "{}",
            w[0]
        );
        assert!(
            w[1].starts_with(
                "lb.toml: tcp.receive_buffer: flow 'mp': receive_buffer 2000000B is below"
            ),
            "{}",
            w[1]
        );
    }

    #[test]
    fn buffers_of_one_bdp_or_more_are_not_warned_about() {
        for (extra, why) in [
            ("send_buffer = \"64MiB\"", "above"),
            ("send_buffer = \"4940000B\"", "exactly the BDP"),
            ("bytes = \"4MiB\"", "a transfer that fits in the buffer"),
        ] {
            let w = warnings(&four_paths(extra, ""));
            assert!(w.is_empty(), "{why}: {w:?}");
        }
    }

    #[test]
    fn subflows_through_one_bottleneck_count_it_once() {
        // Both subflows through l1 (100 Mb/s, 104 ms: 1.3 MB): a 2 MB buffer suffices,
        // though twice the one path's product would not fit.
        let text = four_paths("send_buffer = \"2MB\"", "").replace(
            "{ route = [\"s\", \"r0\", \"r2\", \"d\"] }, { route = [\"s\", \"r0\", \"r3\", \"d\"] }, { route = [\"s\", \"r0\", \"r4\", \"d\"] }, ",
            "{ route = [\"s\", \"r0\", \"r1\", \"d\"] }, ",
        );
        let s = Scenario::from_toml_str(&text, "lb.toml", &[]).unwrap();
        assert_eq!(s.flows[0].paths.len(), 2);
        assert_eq!(
            super::bdp_bytes(&s.flows[0].paths, &s.links),
            (1_300_000, 1)
        );
        assert!(warnings(&text).is_empty());
    }
}
