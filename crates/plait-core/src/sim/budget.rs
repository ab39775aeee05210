//! How much memory a run will need, and how much work it is, estimated from the scenario
//! before anything is built, so that a typo (`sample_interval = "1ns"`, `count = 1000000`,
//! `trace_picks` on a 600 s gigabit run) is refused with a message instead of exhausting the
//! machine.
//!
//! The estimate counts what grows with the scenario: per-flow state and result rows, per
//! MPTCP subflow and per MPAT application flow (its window, its rows in `flows` and `paths`),
//! per link direction, the time-series rows (one per flow, application flow, path and link
//! direction at every sample), and the rows of the two traces that grow with the traffic:
//! `picks` (`trace_picks`) and `drops` (`trace_drops`), bounded from the link rates and the
//! duration. The per-item costs are measured: peak resident memory of `plait run` and
//! `plait.run` at two sizes, the difference divided by the number of items (docs/results.md
//! lists the runs); they include the Python tables built from the results and are rounded up.
//! Packets in flight and queues are not counted: they are bounded by the queue limits and
//! windows, not by the scenario's size.
//!
//! The estimate is made from the flow entries as written, each with its `count`
//! ([`MemoryEstimate::of_entries`]), so that a run of a million flows is refused without
//! building a million flows.

use std::collections::BTreeMap;

use crate::registry::Value;
use crate::scenario::{FlowSpec, Scenario, SimulationSpec, StartSpec};

/// Simulator state and result row of one flow (TCP sender and receiver, RTT histogram, tables,
/// the JSON summary's row; measured: TCP flows x 1000 and x 4000, 4.4 KiB each with
/// `plait.run`, 11.8 KiB with `plait run --json`).
pub const BYTES_PER_FLOW: u64 = 12 << 10;
/// One MPTCP subflow beyond the first: its TCP sender and receiver state, its row in `paths`
/// (measured: 32 subflows x 250 and x 1000 connections, 10.2 KiB per subflow with `plait run
/// --json`, 5.2 KiB with `plait.run`).
pub const BYTES_PER_SUBFLOW: u64 = 12 << 10;
/// One application flow of an MPAT aggregate: its window, its share of the sender and
/// receiver, its rows in `flows` and `paths` (measured: 4096 shares x 10 and x 20 aggregates,
/// 16.0 KiB per share with `plait run --json`, 6.1 KiB with `plait.run`).
pub const BYTES_PER_SHARE: u64 = 20 << 10;
/// One link direction: queue, pipeline, counters and result row.
pub const BYTES_PER_LINK_DIRECTION: u64 = 4 << 10;
/// One time-series row, from the Rust columns to the pandas table.
pub const BYTES_PER_SAMPLE_ROW: u64 = 160;
/// One row of `picks` or `drops`: the Rust row (with its `reason` or `cause` string), its copy
/// in the results, the Python columns (measured: MPTCP over two 1 Gb/s paths for 5 s and 10 s
/// with `trace_picks`, 290-300 bytes per pick; a 1 Gb/s CBR losing half its packets for 5 s
/// and 10 s with `trace_drops`, 230-310 bytes per drop).
pub const BYTES_PER_TRACE_ROW: u64 = 320;

/// Picks per segment a subflow's slowest link can carry: one decision per segment sent, sent
/// again after a loss, or a decision to wait (the scheduler is asked again on the next ACK).
const PICKS_PER_SEGMENT: u64 = 2;

/// Estimated packets ([`MemoryEstimate::packets`]) the simulator handles per second of wall
/// time: a rough guide to how long a run takes. Measured with `plait run` on the dumbbell
/// (experiments/dumbbell): 1000 Reno flows through 100 Mb/s for 240 s, 1.2 * 10^7 estimated
/// packets in 1.2 s; 10 flows through 1 Gb/s for 120 s, 6.2 * 10^7 in 3.4 s.
pub const PACKETS_PER_SECOND: f64 = 1e7;

/// The estimated memory of a run, with what it is made of, and the packets it will handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// Flows after `count` expansion.
    pub flows: u64,
    /// MPTCP subflows, over every MPTCP flow.
    pub subflows: u64,
    /// Application flows of the MPAT aggregates (one per share).
    pub shares: u64,
    /// Paths of every flow (rows of `paths`): one per single-path flow, per subflow, per
    /// MPAT window.
    pub paths: u64,
    pub link_directions: u64,
    /// Sampling instants over the run.
    pub samples: u64,
    /// Time-series rows: `samples * (flows + shares + paths + link_directions)`.
    pub sample_rows: u64,
    /// Upper bound on the rows of `picks` (0 unless an MPTCP flow sets `trace_picks`).
    pub picks: u64,
    /// Upper bound on the rows of `drops` (0 unless `trace_drops`).
    pub drops: u64,
    /// Packet transmissions over link directions (data and feedback) if every path carried
    /// its max-min fair share of the link rates for the whole run: the run's work, roughly.
    pub packets: u64,
    /// Total, saturating at `u64::MAX`.
    pub bytes: u64,
}

/// Bits in a byte, for rates in bit/s.
const BITS: f64 = 8.0;

impl MemoryEstimate {
    /// The estimate of a validated scenario (its flows already expanded).
    pub fn of(scenario: &Scenario) -> Self {
        Self::of_entries(scenario, &vec![1; scenario.flows.len()])
    }

    /// The estimate of a scenario whose flow `i` stands for `counts[i]` identical flows
    /// ([`Scenario::unexpanded`]: one flow per `[[flow]]` entry, with its `count`).
    pub fn of_entries(scenario: &Scenario, counts: &[u64]) -> Self {
        assert_eq!(scenario.flows.len(), counts.len(), "one count per flow");
        let sim = &scenario.simulation;
        // Link directions as the simulator numbers them (`LinkId`): each link's `from -> to`,
        // then its `to -> from` if duplex, in file order.
        let rates: Vec<f64> = scenario
            .links
            .iter()
            .flat_map(|l| std::iter::repeat_n(l.rate.0 as f64, if l.duplex { 2 } else { 1 }))
            .collect();
        let link_directions = rates.len() as u64;
        let mut e = MemoryEstimate {
            flows: 0,
            subflows: 0,
            shares: 0,
            paths: 0,
            link_directions,
            samples: samples(sim),
            sample_rows: 0,
            picks: 0,
            drops: 0,
            packets: 0,
            bytes: 0,
        };
        let mut item_bytes = link_directions.saturating_mul(BYTES_PER_LINK_DIRECTION);
        let mut fill = Filling::default();
        for (f, &m) in scenario.flows.iter().zip(counts) {
            let shares = f.shares.as_ref().map_or(0, Vec::len) as u64;
            let subflows = f.multipath.as_ref().map_or(0, |mp| mp.subflows.len()) as u64;
            let paths = f.paths.len() as u64;
            e.flows = e.flows.saturating_add(m);
            e.shares = e.shares.saturating_add(m.saturating_mul(shares));
            e.subflows = e.subflows.saturating_add(m.saturating_mul(subflows));
            e.paths = e.paths.saturating_add(m.saturating_mul(paths));
            let per_flow = BYTES_PER_FLOW
                .saturating_add(subflows.saturating_mul(BYTES_PER_SUBFLOW))
                .saturating_add(shares.saturating_mul(BYTES_PER_SHARE));
            item_bytes = item_bytes.saturating_add(m.saturating_mul(per_flow));

            let traffic = Traffic::of(f, sim, &rates);
            if sim.trace_drops {
                // A packet is dropped at most once: at most one row per data packet and per
                // feedback packet the flow can send.
                let drops = traffic.sent.saturating_add(traffic.feedback);
                e.drops = e.drops.saturating_add(m.saturating_mul(drops));
            }
            if f.multipath.is_some() && param_bool(f, "trace_picks") {
                e.picks = e.picks.saturating_add(m.saturating_mul(traffic.sent));
            }
            for p in &f.paths {
                fill.add(&p.forward, p.reverse.len(), m as f64, &traffic);
            }
        }
        e.packets = fill.packets(&rates);
        e.sample_rows = e.samples.saturating_mul(
            e.flows
                .saturating_add(e.shares)
                .saturating_add(e.paths)
                .saturating_add(link_directions),
        );
        e.bytes = item_bytes
            .saturating_add(e.sample_rows.saturating_mul(BYTES_PER_SAMPLE_ROW))
            .saturating_add(
                e.picks
                    .saturating_add(e.drops)
                    .saturating_mul(BYTES_PER_TRACE_ROW),
            );
        e
    }

    /// Seconds of wall time the run's packets take at [`PACKETS_PER_SECOND`].
    pub fn seconds(&self) -> f64 {
        self.packets as f64 / PACKETS_PER_SECOND
    }

    /// Bytes of the traces' rows (`picks` and `drops`) at their upper bounds.
    pub fn trace_bytes(&self) -> u64 {
        self.picks
            .saturating_add(self.drops)
            .saturating_mul(BYTES_PER_TRACE_ROW)
    }

    /// Bytes of everything but the traces: what the scenario's size fixes before it runs.
    pub fn state_bytes(&self) -> u64 {
        self.bytes.saturating_sub(self.trace_bytes())
    }

    /// `None` when the estimate without the traces is within `limit_bytes`; otherwise a
    /// one-line explanation naming what makes the run large and how to allow it.
    ///
    /// The traces are not refused here: their bounds assume every packet is dropped (or
    /// scheduled twice), which a responsive flow never does (the MulTFRC paper's Figure 1 run,
    /// `experiments/multfrc/equation_red.toml`, is bounded at 41 M drops and records 115 with
    /// seed 1). A run keeps them within the limit as it goes instead
    /// ([`MemoryEstimate::trace_row_limit`]).
    pub fn check(&self, limit_bytes: u64) -> Option<String> {
        if self.state_bytes() <= limit_bytes {
            return None;
        }
        let mut parts = Vec::new();
        if self.sample_rows > 0 {
            parts.push(format!(
                "{} time-series rows ({} samples x {} series; see simulation.sample_interval)",
                self.sample_rows,
                self.samples,
                self.sample_rows / self.samples.max(1)
            ));
        }
        parts.push(format!("{} flows", self.flows));
        if self.subflows > 0 {
            parts.push(format!("{} MPTCP subflows", self.subflows));
        }
        if self.shares > 0 {
            parts.push(format!("{} MPAT application flows (shares)", self.shares));
        }
        parts.push(format!("{} link directions", self.link_directions));
        Some(format!(
            "this run would need about {} of memory ({}), more than the limit of {}; \
             raise the limit with --max-memory (max_memory= in Python) if that is intended",
            human_bytes(self.state_bytes()),
            parts.join(", "),
            human_bytes(limit_bytes)
        ))
    }
}

impl MemoryEstimate {
    /// The rows `picks` and `drops` may hold together within `limit_bytes`, beside the rest
    /// of the run; `None` when their upper bounds fit (nothing to watch). A run stops with
    /// [`trace_overflow_message`] once its traces pass this many rows.
    pub fn trace_row_limit(&self, limit_bytes: u64) -> Option<u64> {
        if self.bytes <= limit_bytes {
            return None;
        }
        Some(limit_bytes.saturating_sub(self.state_bytes()) / BYTES_PER_TRACE_ROW)
    }

    /// What the traces may add, for `plait validate`: `None` without traces.
    pub fn trace_note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.picks > 0 {
            parts.push(format!(
                "up to {} scheduler decisions in the picks table (trace_picks)",
                self.picks
            ));
        }
        if self.drops > 0 {
            parts.push(format!(
                "up to {} dropped packets in the drops table (simulation.trace_drops)",
                self.drops
            ));
        }
        (!parts.is_empty()).then(|| {
            format!(
                "{}: at most {} more",
                parts.join(" and "),
                human_bytes(self.trace_bytes())
            )
        })
    }
}

/// Why a run was stopped when its traces passed [`MemoryEstimate::trace_row_limit`].
pub fn trace_overflow_message(rows: u64, at_s: f64, limit_bytes: u64) -> String {
    format!(
        "the run was stopped at {at_s:.3} s: its traces (trace_picks, simulation.trace_drops) \
         reached {rows} rows, about {}, which with the rest of the run passes the memory limit \
         of {}; raise the limit with --max-memory (max_memory= in Python), shorten the run or \
         turn the trace off",
        human_bytes(rows.saturating_mul(BYTES_PER_TRACE_ROW)),
        human_bytes(limit_bytes)
    )
}

/// Sampling instants: at dt, 2 dt, ... strictly before the end of the run.
fn samples(sim: &SimulationSpec) -> u64 {
    match sim.sample_interval {
        Some(dt) if dt.as_nanos() > 0 => sim.duration.as_nanos().saturating_sub(1) / dt.as_nanos(),
        _ => 0,
    }
}

/// A source parameter by name, if the source declares it and it is set.
fn param<'a>(f: &'a FlowSpec, name: &str) -> Option<&'a Value> {
    f.kind
        .params()
        .iter()
        .find(|(p, _)| p.name == name)
        .and_then(|(_, v)| v)
}

fn param_bool(f: &FlowSpec, name: &str) -> bool {
    matches!(param(f, name), Some(Value::Bool(true)))
}

/// What one flow can send, in packets, over the run.
struct Traffic {
    /// The size of its packets: the datagram size, or the segment size (payload only: fewer
    /// bytes per packet counts more packets).
    packet_bytes: f64,
    /// From its earliest start to its stop (or the end of the run).
    active_s: f64,
    /// Its own rate, for a source that sends at a rate of its own (`cbr`, `onoff`).
    own_rate: Option<f64>,
    /// Upper bound on the data packets it sends (new and resent).
    sent: u64,
    /// Upper bound on its feedback packets (ACKs, reports): one per data packet.
    feedback: u64,
}

impl Traffic {
    fn of(f: &FlowSpec, sim: &SimulationSpec, rates: &[f64]) -> Self {
        let packet_bytes = ["packet_size", "mss", "segment_size"]
            .iter()
            .find_map(|k| match param(f, k) {
                Some(Value::Size(n)) if *n > 0 => Some(*n as f64),
                _ => None,
            })
            .unwrap_or(500.0);
        let start = match f.start {
            StartSpec::At(t) | StartSpec::Uniform(t, _) => t,
        };
        let end = f.stop.unwrap_or(sim.duration);
        let active_s = end.as_secs_f64() - start.as_secs_f64().min(end.as_secs_f64());
        let own_rate = match param(f, "rate") {
            Some(Value::Rate(r)) => Some(r.0 as f64),
            _ => None,
        };
        let packets_at = |bps: f64| bps * active_s / (BITS * packet_bytes);
        let sent = match own_rate {
            // A datagram source sends at its own rate whatever the links can carry.
            Some(rate) => packets_at(rate),
            // A window- or feedback-driven source sends about what its paths' slowest links
            // carry; twice that bounds what it resends after losses (and, for an MPTCP
            // flow, the scheduler's decisions to wait).
            None => {
                // Paths over the same links (an MPAT aggregate's windows, subflows without
                // routes) share what those links carry.
                let mut routes: Vec<&[crate::ids::LinkId]> =
                    f.paths.iter().map(|p| p.forward.as_slice()).collect();
                routes.sort();
                routes.dedup();
                let carried: f64 = routes.iter().map(|r| bottleneck(r, rates)).sum();
                let by_rate = PICKS_PER_SEGMENT as f64 * packets_at(carried);
                match param(f, "bytes") {
                    // A finite transfer (per application flow for MPAT) sends its bytes, and
                    // resends fewer than that.
                    Some(Value::Size(b)) => {
                        let flows = f.shares.as_ref().map_or(1, Vec::len) as f64;
                        let segments = flows * (*b as f64 / packet_bytes).ceil();
                        by_rate.min(PICKS_PER_SEGMENT as f64 * segments)
                    }
                    _ => by_rate,
                }
            }
        };
        let sent = whole(sent);
        // Datagram sources get no feedback, whatever way back the links offer.
        let feedback = if own_rate.is_none() && f.paths.iter().any(|p| !p.reverse.is_empty()) {
            sent
        } else {
            0
        };
        Traffic {
            packet_bytes,
            active_s,
            own_rate,
            sent,
            feedback,
        }
    }
}

/// The rate of the slowest link direction of a path (bit/s).
fn bottleneck(path: &[crate::ids::LinkId], rates: &[f64]) -> f64 {
    path.iter()
        .map(|l| rates[l.index()])
        .fold(f64::INFINITY, f64::min)
}

/// A non-negative count as a whole number, saturating (and rounding up).
fn whole(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x.ceil() as u64
    }
}

/// Max-min fair shares of the link rates, by progressive filling (Bertsekas & Gallager, *Data
/// Networks*, 2nd ed., section 6.5.2): every path's rate rises together until a link is full
/// or a source reaches its own rate; those paths keep their rate and the others go on. Paths
/// over the same links with the same cap form one group, weighted by how many flows take it.
#[derive(Default)]
struct Filling {
    /// (links, cap bits) -> group.
    index: BTreeMap<(Vec<usize>, u64), usize>,
    /// Per group: its links, cap (bit/s, infinite without one), total weight.
    groups: Vec<(Vec<usize>, f64, f64)>,
    /// Per path and flow: (group, weight, packets per bit/s of its rate).
    uses: Vec<(usize, f64, f64)>,
}

impl Filling {
    fn add(&mut self, forward: &[crate::ids::LinkId], back: usize, weight: f64, t: &Traffic) {
        let links: Vec<usize> = forward.iter().map(|l| l.index()).collect();
        let cap = t.own_rate.unwrap_or(f64::INFINITY);
        let key = (links.clone(), cap.to_bits());
        let next = self.groups.len();
        let g = *self.index.entry(key).or_insert(next);
        if g == next {
            self.groups.push((links, cap, 0.0));
        }
        self.groups[g].2 += weight;
        // Data over the forward links, one feedback packet per data packet over the way back.
        let hops = (forward.len() + if t.feedback > 0 { back } else { 0 }) as f64;
        self.uses
            .push((g, weight, t.active_s * hops / (BITS * t.packet_bytes)));
    }

    /// Packet transmissions over the run at the max-min fair rates.
    fn packets(&self, capacity: &[f64]) -> u64 {
        let n = self.groups.len();
        let mut rate = vec![0.0_f64; n];
        let mut frozen = vec![false; n];
        let mut level = 0.0_f64;
        let mut left = n;
        while left > 0 {
            // Per link: the rate taken by frozen groups, the weight of the others.
            let mut used = vec![0.0_f64; capacity.len()];
            let mut weight = vec![0.0_f64; capacity.len()];
            for (g, (links, _, w)) in self.groups.iter().enumerate() {
                for &l in links {
                    if frozen[g] {
                        used[l] += rate[g] * w;
                    } else {
                        weight[l] += w;
                    }
                }
            }
            // The next level at which a link fills or a group reaches its cap.
            let full = |l: usize| (capacity[l] - used[l]).max(0.0) / weight[l];
            let mut next = (0..capacity.len())
                .filter(|&l| weight[l] > 0.0)
                .map(full)
                .fold(f64::INFINITY, f64::min);
            for (g, (_, cap, _)) in self.groups.iter().enumerate() {
                if !frozen[g] {
                    next = next.min(*cap);
                }
            }
            if !next.is_finite() {
                break;
            }
            level = level.max(next);
            let before = left;
            for (g, (links, cap, _)) in self.groups.iter().enumerate() {
                let done = *cap <= level
                    || links
                        .iter()
                        .any(|&l| weight[l] > 0.0 && full(l) <= level * (1.0 + 1e-12));
                if !frozen[g] && done {
                    frozen[g] = true;
                    rate[g] = level.min(*cap);
                    left -= 1;
                }
            }
            if left == before {
                break;
            }
        }
        let total: f64 = self
            .uses
            .iter()
            .map(|&(g, w, per_bps)| w * rate[g] * per_bps)
            .sum();
        whole(total)
    }
}

/// `1536` -> `1.5 KiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra_sim: &str, count: u32) -> Scenario {
        let text = format!(
            "[simulation]\nduration = \"10s\"\n{extra_sim}\n\
             [[link]]\nname = \"l\"\nfrom = \"a\"\nto = \"b\"\nrate = \"10Mbps\"\ndelay = \"1ms\"\n\
             [[link]]\nname = \"s\"\nfrom = \"b\"\nto = \"c\"\nrate = \"10Mbps\"\ndelay = \"1ms\"\nduplex = false\n\
             [[flow]]\nname = \"f\"\nkind = \"tcp\"\nsrc = \"a\"\ndst = \"b\"\ncount = {count}\n"
        );
        Scenario::from_toml_str(&text, "t.toml", &[]).unwrap()
    }

    /// Two disjoint paths s -> r1 -> d and s -> r2 -> d, every link at `rate`, and `flows`.
    fn two_paths(duration: &str, rate: &str, sim: &str, flows: &str) -> String {
        let mut text = format!("[simulation]\nduration = \"{duration}\"\n{sim}\n");
        for (name, from, to) in [
            ("a1", "s", "r1"),
            ("a2", "s", "r2"),
            ("b1", "r1", "d"),
            ("b2", "r2", "d"),
        ] {
            text += &format!(
                "[[link]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\nrate = \"{rate}\"\ndelay = \"5ms\"\n"
            );
        }
        text + flows
    }

    const TWO_SUBFLOWS: &str =
        "subflows = [{ route = [\"s\", \"r1\", \"d\"] }, { route = [\"s\", \"r2\", \"d\"] }]\n";

    /// The estimate as the run makes it: from the entries, before `count` is expanded.
    fn estimate(text: &str) -> MemoryEstimate {
        let (s, counts) = Scenario::unexpanded(text, "t.toml", false, &[]).unwrap();
        MemoryEstimate::of_entries(&s, &counts)
    }

    #[test]
    fn counts_flows_paths_directions_and_sample_rows() {
        let e = MemoryEstimate::of(&scenario("sample_interval = \"1s\"", 3));
        assert_eq!(e.flows, 3);
        assert_eq!(e.paths, 3);
        assert_eq!(e.link_directions, 3);
        // Samples at 1 s .. 9 s: the one at 10 s is the end of the run.
        assert_eq!(e.samples, 9);
        // flow_series, path_series and link_series rows.
        assert_eq!(e.sample_rows, 9 * (3 + 3 + 3));
        assert_eq!(
            e.bytes,
            3 * BYTES_PER_FLOW + 3 * BYTES_PER_LINK_DIRECTION + 81 * BYTES_PER_SAMPLE_ROW
        );
        assert_eq!((e.picks, e.drops), (0, 0));
        assert_eq!(e.check(e.bytes), None);
    }

    #[test]
    fn one_nanosecond_sampling_is_refused_with_its_cause() {
        let e = MemoryEstimate::of(&scenario("sample_interval = \"1ns\"", 1));
        assert_eq!(e.samples, 9_999_999_999);
        let msg = e.check(4 << 30).unwrap();
        assert!(msg.contains("49999999995 time-series rows"), "{msg}");
        assert!(msg.contains("limit of 4.0 GiB"), "{msg}");
        assert!(msg.contains("--max-memory"), "{msg}");
    }

    #[test]
    fn no_sampling_no_rows() {
        let e = MemoryEstimate::of(&scenario("", 2));
        assert_eq!((e.samples, e.sample_rows), (0, 0));
    }

    #[test]
    fn the_estimate_of_the_entries_is_that_of_the_expanded_flows() {
        let text = two_paths(
            "10s",
            "100Mbps",
            "sample_interval = \"1s\"\ntrace_drops = true",
            &format!(
                "[[flow]]\nname = \"t\"\nkind = \"tcp\"\nsrc = \"s\"\ndst = \"d\"\ncount = 7\n\
                 [[flow]]\nname = \"m\"\nkind = \"mptcp\"\nsrc = \"s\"\ndst = \"d\"\ncount = 3\n\
                 trace_picks = true\n{TWO_SUBFLOWS}\
                 [[flow]]\nname = \"g\"\nkind = \"mpat\"\nsrc = \"s\"\ndst = \"d\"\ncount = 2\nshares = [1, 2, 3]\n\
                 [[event]]\nat = \"5s\"\nflow = \"g.1\"\nshares = [1, 1, 1]\n"
            ),
        );
        let full = MemoryEstimate::of(&Scenario::from_toml_str(&text, "t.toml", &[]).unwrap());
        let (entries, counts) = Scenario::unexpanded(&text, "t.toml", false, &[]).unwrap();
        assert_eq!(entries.flows.len(), 3);
        assert_eq!(counts, [7, 3, 2]);
        assert_eq!(MemoryEstimate::of_entries(&entries, &counts), full);
        assert_eq!((full.flows, full.subflows, full.shares), (12, 6, 6));
        assert_eq!(full.paths, 7 + 6 + 6);
    }

    #[test]
    fn a_million_flows_are_estimated_without_making_them() {
        let text = two_paths(
            "10s",
            "100Mbps",
            "",
            "[[flow]]\nname = \"t\"\nkind = \"tcp\"\nsrc = \"s\"\ndst = \"d\"\ncount = 1000000\n",
        );
        let (entries, counts) = Scenario::unexpanded(&text, "t.toml", false, &[]).unwrap();
        assert_eq!(
            (entries.flows.len(), counts.as_slice()),
            (1, &[1_000_000][..])
        );
        let e = MemoryEstimate::of_entries(&entries, &counts);
        assert_eq!(e.flows, 1_000_000);
        assert!(e.check(4 << 30).unwrap().contains("1000000 flows"));
        // A count given by override is set aside too.
        let over = vec![("flow.t.count".to_string(), "5".to_string())];
        let (_, counts) = Scenario::unexpanded(&text, "t.toml", false, &over).unwrap();
        assert_eq!(counts, [5]);
        // An invalid count is left for validation to name.
        let bad = text.replace("count = 1000000", "count = 0");
        let err = Scenario::unexpanded(&bad, "t.toml", false, &[]).unwrap_err();
        assert_eq!(err.path, "flow[0].count");
    }

    #[test]
    fn entries_that_only_differ_after_expansion_are_read_in_full() {
        // `a` with count = 2 is a.0 and a.1, beside an `a`: the one-per-entry reading has two
        // `a`s, so the full reading decides (and finds the scenario valid).
        let text = two_paths(
            "10s",
            "100Mbps",
            "",
            "[[flow]]\nname = \"a\"\nkind = \"tcp\"\nsrc = \"s\"\ndst = \"d\"\ncount = 2\n\
             [[flow]]\nname = \"a\"\nkind = \"tcp\"\nsrc = \"s\"\ndst = \"d\"\n",
        );
        let (entries, counts) = Scenario::unexpanded(&text, "t.toml", false, &[]).unwrap();
        assert_eq!((entries.flows.len(), counts), (3, vec![1, 1, 1]));
    }

    #[test]
    fn scheduler_picks_are_counted_from_the_rates_and_the_duration() {
        // MPTCP over two 1 Gb/s paths for 600 s: about 10^8 segments (issue 34 item 7: it
        // reached 4.85 GB and aborted while the estimate said 48 KiB).
        let flow = format!(
            "[[flow]]\nname = \"m\"\nkind = \"mptcp\"\nsrc = \"s\"\ndst = \"d\"\n{TWO_SUBFLOWS}"
        );
        let quiet = estimate(&two_paths("600s", "1Gbps", "", &flow));
        assert_eq!(quiet.picks, 0);
        assert_eq!(quiet.check(4 << 30), None);
        let traced = estimate(&two_paths(
            "600s",
            "1Gbps",
            "",
            &format!("{flow}trace_picks = true\n"),
        ));
        // Two segments' worth per segment the two paths carry (mss 1460 bytes).
        let segments: f64 = 2.0 * 1e9 * 600.0 / (8.0 * 1460.0);
        assert_eq!(traced.picks, (2.0 * segments).ceil() as u64);
        // Not refused before the run (the bound is loose), but watched as it runs: the rows
        // that fit beside the rest, and validate's note.
        assert_eq!(traced.check(4 << 30), None);
        let rows = traced.trace_row_limit(4 << 30).unwrap();
        assert_eq!(
            rows,
            ((4u64 << 30) - traced.state_bytes()) / BYTES_PER_TRACE_ROW
        );
        assert!(rows < traced.picks);
        let note = traced.trace_note().unwrap();
        assert!(note.contains("trace_picks"), "{note}");
        assert_eq!(quiet.trace_row_limit(4 << 30), None);
        assert_eq!(quiet.trace_note(), None);
        // Ten times longer, ten times the picks.
        let longer = estimate(&two_paths(
            "6000s",
            "1Gbps",
            "",
            &format!("{flow}trace_picks = true\n"),
        ));
        assert!(longer.picks >= 10 * traced.picks - 10, "{longer:?}");
        // A finite transfer is bounded by its size: 1 MB is at most 2 * 685 picks.
        let small = estimate(&two_paths(
            "600s",
            "1Gbps",
            "",
            &format!("{flow}trace_picks = true\nbytes = \"1MB\"\n"),
        ));
        assert_eq!(small.picks, 2 * 685);
    }

    #[test]
    fn dropped_packets_are_counted_from_the_rates_and_the_duration() {
        // A lossy 1 Gb/s CBR (issue 34 item 7: aborted at 5.8 GB).
        let flow = "[[flow]]\nname = \"c\"\nkind = \"cbr\"\nsrc = \"s\"\ndst = \"d\"\nroute = [\"s\", \"r1\", \"d\"]\nrate = \"1Gbps\"\n";
        let quiet = estimate(&two_paths("600s", "1Gbps", "", flow));
        assert_eq!(quiet.drops, 0);
        let traced = estimate(&two_paths("600s", "1Gbps", "trace_drops = true", flow));
        // One row per packet at most: 1 Gb/s of 1000-byte packets for 600 s; no feedback.
        assert_eq!(traced.drops, 75_000_000);
        assert_eq!(traced.check(4 << 30), None);
        assert!(traced.trace_row_limit(4 << 30).is_some());
        assert!(traced.trace_note().unwrap().contains("trace_drops"));
        // Within a limit that holds the bound, nothing needs watching.
        assert_eq!(traced.trace_row_limit(traced.bytes), None);
        // A CBR faster than its links still sends (and may lose) at its own rate.
        let faster = estimate(&two_paths(
            "600s",
            "1Gbps",
            "trace_drops = true",
            &flow.replace("rate = \"1Gbps\"", "rate = \"10Gbps\""),
        ));
        assert_eq!(faster.drops, 750_000_000);
        // TCP: data and ACKs, about twice what the path carries each.
        let tcp = estimate(&two_paths(
            "10s",
            "1Gbps",
            "trace_drops = true",
            "[[flow]]\nname = \"t\"\nkind = \"tcp\"\nsrc = \"s\"\ndst = \"d\"\n",
        ));
        let segments = (2.0 * 1e9 * 10.0 / (8.0 * 1460.0_f64)).ceil() as u64;
        assert_eq!(tcp.drops, 2 * segments);
    }

    #[test]
    fn subflows_and_shares_are_counted() {
        let subflows = |n: usize| {
            let list: Vec<String> = (0..n)
                .map(|i| format!("{{ route = [\"s\", \"r{}\", \"d\"] }}", 1 + i % 2))
                .collect();
            format!("subflows = [{}]\n", list.join(", "))
        };
        let mptcp = |n: usize, count: u32| {
            estimate(&two_paths(
                "10s",
                "100Mbps",
                "",
                &format!(
                    "[[flow]]\nname = \"m\"\nkind = \"mptcp\"\nsrc = \"s\"\ndst = \"d\"\ncount = {count}\n{}",
                    subflows(n)
                ),
            ))
        };
        let (two, many) = (mptcp(2, 1000), mptcp(32, 1000));
        assert_eq!((two.subflows, many.subflows), (2000, 32_000));
        assert_eq!(many.bytes - two.bytes, 30_000 * BYTES_PER_SUBFLOW);
        // Issue 34 item 8: 20000 connections of 32 subflows took over 5.5 GB.
        let msg = mptcp(32, 20_000).check(4 << 30).unwrap();
        assert!(msg.contains("640000 MPTCP subflows"), "{msg}");

        let mpat = |shares: usize, count: u32| {
            let list = vec!["1"; shares].join(", ");
            estimate(&two_paths(
                "10s",
                "100Mbps",
                "sample_interval = \"1s\"",
                &format!(
                    "[[flow]]\nname = \"g\"\nkind = \"mpat\"\nsrc = \"s\"\ndst = \"d\"\ncount = {count}\nshares = [{list}]\n"
                ),
            ))
        };
        let (few, all) = (mpat(2, 10), mpat(4096, 10));
        assert_eq!((few.shares, all.shares), (20, 40_960));
        // One flow_series row per application flow and one path_series row per window.
        assert_eq!(all.sample_rows, 9 * (10 + 40_960 + 40_960 + 8));
        assert!(all.bytes - few.bytes >= (40_960 - 20) * BYTES_PER_SHARE);
        // Issue 34 item 8: 1000 aggregates of 4096 shares aborted in 7 s.
        let msg = mpat(4096, 1000).check(4 << 30).unwrap();
        assert!(msg.contains("4096000 MPAT application flows"), "{msg}");
    }

    #[test]
    fn packets_are_the_max_min_fair_shares_of_the_links() {
        // A 100 Tb/s link without delay for 1 s: about 8.6 * 10^9 segments, and an ACK each.
        let text = "[simulation]\nduration = \"1s\"\n\
             [[link]]\nname = \"l\"\nfrom = \"a\"\nto = \"b\"\nrate = \"100Tbps\"\ndelay = \"0s\"\n\
             [[flow]]\nname = \"f\"\nkind = \"tcp\"\nsrc = \"a\"\ndst = \"b\"\n";
        let e = estimate(text);
        let segments = 100e12 / (8.0 * 1460.0);
        assert!((e.packets as f64 - 2.0 * segments).abs() < 2.0, "{e:?}");
        assert!(e.seconds() > 1000.0);
        // A dumbbell: 1000 flows share a 10 Mb/s bottleneck behind 1 Gb/s access links; they
        // carry what one flow would, not 1000 times that.
        let dumbbell = |count: u32| {
            estimate(&format!(
                "[simulation]\nduration = \"10s\"\n\
                 [[link]]\nname = \"in\"\nfrom = \"s\"\nto = \"r1\"\nrate = \"1Gbps\"\ndelay = \"1ms\"\n\
                 [[link]]\nname = \"mid\"\nfrom = \"r1\"\nto = \"r2\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\n\
                 [[link]]\nname = \"out\"\nfrom = \"r2\"\nto = \"d\"\nrate = \"1Gbps\"\ndelay = \"1ms\"\n\
                 [[flow]]\nname = \"f\"\nkind = \"tcp\"\nsrc = \"s\"\ndst = \"d\"\ncount = {count}\n"
            ))
            .packets
        };
        let (one, many) = (dumbbell(1), dumbbell(1000));
        assert!(many.abs_diff(one) <= 1000, "{one} {many}");
        // 10 Mb/s for 10 s over three hops each way.
        let expected = 10e6 * 10.0 / (8.0 * 1460.0) * 6.0;
        assert!((one as f64 - expected).abs() < 2.0, "{one} {expected}");
        // A CBR slower than its path keeps its own rate.
        let cbr = estimate(&two_paths(
            "10s",
            "1Gbps",
            "",
            "[[flow]]\nname = \"c\"\nkind = \"cbr\"\nsrc = \"s\"\ndst = \"d\"\nroute = [\"s\", \"r1\", \"d\"]\nrate = \"8Mbps\"\n",
        ));
        assert_eq!(cbr.packets, 10_000 * 2);
    }

    #[test]
    fn human_units() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(4 << 30), "4.0 GiB");
        assert_eq!(human_bytes(u64::MAX), "16.0 EiB");
    }
}
