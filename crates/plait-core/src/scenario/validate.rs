//! From the parsed tree to a validated [`Scenario`].
//!
//! The tree is walked section by section; the first mistake is returned as an [`Issue`] whose
//! path uses the indices of the entries as written (`flow[0]`, not the index after `count`
//! expansion). Checks that relate entries to each other (names, nodes, routes, reachability)
//! run once every entry they need has been read.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use toml::{Table, Value};

use super::schema::*;
use super::tree::{did_you_mean, index, join, listing, unknown_field, Fields, Issue};
use super::units::{
    bool_value, describe, duration_value, format_duration, name_value, number_value,
    probability_value, rate_value, size_value, string_value, uint_value, EXPECT_DURATION,
    EXPECT_RATE,
};
use crate::net::loss::LossSpec;
use crate::net::queue::{DropPolicy, Limit, QueueSpec, RedSpec};
use crate::time::SimTime;
use crate::transport::cc::CcSpec;
use crate::transport::tcp::TcpConfig;

/// Validates the whole tree.
pub(crate) fn scenario(root: &Table, source: &str) -> Result<Scenario, Issue> {
    let top = Fields::new("", root);
    for key in root.keys() {
        if !SECTIONS.contains(&key.as_str()) {
            return Err(unknown_field(key, key, SECTIONS, "section"));
        }
    }
    let simulation = simulation(&top)?;
    let tcp_defaults = tcp_section(&top)?;
    let declared = declared_nodes(&top)?;
    let links = links(&top)?;
    let topology = Topology::new(&declared, &links)?;
    let flow_entries = top.array_of_tables("flow")?;
    if flow_entries.is_empty() {
        return Err(Issue::new(
            "flow",
            "no flows defined (add at least one [[flow]])",
        ));
    }
    let mut flows = Vec::new();
    let mut flow_names: BTreeMap<String, String> = BTreeMap::new();
    for (path, table) in &flow_entries {
        let entry = Fields::new(path, table);
        let copies = flow(&entry, &simulation, &tcp_defaults, &topology)?;
        for copy in copies {
            if let Some(first) = flow_names.get(&copy.name) {
                return Err(Issue::new(
                    entry.at("name"),
                    format!("duplicate flow name '{}' (also {first})", copy.name),
                ));
            }
            flow_names.insert(copy.name.clone(), path.clone());
            flows.push(copy);
        }
    }
    let nodes = topology.node_specs(&flows);
    Ok(Scenario {
        source: source.to_string(),
        simulation,
        nodes,
        links,
        flows,
    })
}

fn simulation(top: &Fields) -> Result<SimulationSpec, Issue> {
    let Some(value) = top.get("simulation") else {
        return Err(Issue::new(
            "simulation",
            "missing required section [simulation]",
        ));
    };
    let sim = Fields::of("simulation", value)?;
    sim.check_keys(SIMULATION_KEYS)?;
    let duration = sim.req("duration", EXPECT_DURATION, duration_value)?;
    if duration == SimTime::ZERO {
        return Err(Issue::new(sim.at("duration"), "must be greater than zero"));
    }
    let warmup = sim.opt("warmup", duration_value)?.unwrap_or(SimTime::ZERO);
    if warmup >= duration {
        return Err(Issue::new(
            sim.at("warmup"),
            format!(
                "must be less than the duration ({}), got {}",
                format_duration(duration),
                format_duration(warmup)
            ),
        ));
    }
    let seed = sim.opt("seed", uint_value)?.unwrap_or(DEFAULT_SEED);
    let sample_interval = sim.opt("sample_interval", duration_value)?;
    if let Some(interval) = sample_interval {
        if interval == SimTime::ZERO || interval > duration {
            return Err(Issue::new(
                sim.at("sample_interval"),
                format!(
                    "must be greater than zero and at most the duration ({}), got {}",
                    format_duration(duration),
                    format_duration(interval)
                ),
            ));
        }
    }
    Ok(SimulationSpec {
        duration,
        warmup,
        seed,
        sample_interval,
    })
}

// ---- TCP settings --------------------------------------------------------------------------

fn tcp_section(top: &Fields) -> Result<TcpConfig, Issue> {
    let mut config = TcpConfig::default();
    if let Some(value) = top.get("tcp") {
        let tcp = Fields::of("tcp", value)?;
        tcp.check_keys(TCP_KEYS)?;
        apply_tcp(&tcp, &mut config)?;
        check_tcp(&config, |key| join("tcp", key), &|_| false)?;
    }
    Ok(config)
}

fn bounded_u32(value: &Value, min: u32, max: u32, unit: &str) -> Result<u32, String> {
    let n = uint_value(value)?;
    if n < min as u64 || n > max as u64 {
        return Err(format!("must be between {min} and {max}{unit}, got {n}"));
    }
    Ok(n as u32)
}

fn positive_duration(value: &Value) -> Result<SimTime, String> {
    let t = duration_value(value)?;
    if t == SimTime::ZERO {
        return Err("must be greater than zero".to_string());
    }
    Ok(t)
}

/// A packet or segment size: 1 to 65535 bytes, as an integer or a size string.
fn packet_size(value: &Value) -> Result<u32, String> {
    let bytes = size_value(value)?;
    if bytes == 0 || bytes > MAX_PACKET_SIZE as u64 {
        return Err(format!(
            "must be between 1 and {MAX_PACKET_SIZE} bytes, got {bytes}"
        ));
    }
    Ok(bytes as u32)
}

/// Overwrites the settings of `config` present in `fields` (the `[tcp]` section or a flow).
fn apply_tcp(fields: &Fields, config: &mut TcpConfig) -> Result<(), Issue> {
    if let Some(mss) = fields.opt("mss", packet_size)? {
        config.mss = mss;
    }
    if let Some(w) = fields.opt("initial_window", |v| {
        bounded_u32(v, 1, u32::MAX, " segments")
    })? {
        config.initial_window = w;
    }
    if let Some(sack) = fields.opt("sack", bool_value)? {
        config.sack = sack;
    }
    if let Some(delayed) = fields.opt("delayed_ack", bool_value)? {
        config.delayed_ack = delayed;
    }
    if let Some(t) = fields.opt("delayed_ack_timeout", positive_duration)? {
        config.delayed_ack_timeout = t;
    }
    if let Some(t) = fields.opt("min_rto", positive_duration)? {
        config.min_rto = t;
    }
    if let Some(t) = fields.opt("max_rto", positive_duration)? {
        config.max_rto = t;
    }
    if let Some(t) = fields.opt("initial_rto", positive_duration)? {
        config.initial_rto = t;
    }
    if let Some(bytes) = fields.opt("receive_buffer", size_value)? {
        config.receive_buffer = bytes;
    }
    if let Some(n) = fields.opt("dupack_threshold", |v| bounded_u32(v, 1, u32::MAX, ""))? {
        config.dupack_threshold = n;
    }
    Ok(())
}

/// Checks that relate several settings. `path_of` gives the path of a key; `set_here` says
/// whether the flow itself set it, so that a conflict is reported where it was introduced.
fn check_tcp(
    config: &TcpConfig,
    path_of: impl Fn(&str) -> String,
    set_here: &dyn Fn(&str) -> bool,
) -> Result<(), Issue> {
    let blame = |a: &str, b: &str| {
        if set_here(a) || !set_here(b) {
            path_of(a)
        } else {
            path_of(b)
        }
    };
    if config.min_rto > config.max_rto {
        return Err(Issue::new(
            blame("min_rto", "max_rto"),
            format!(
                "min_rto ({}) must not exceed max_rto ({})",
                format_duration(config.min_rto),
                format_duration(config.max_rto)
            ),
        ));
    }
    if config.receive_buffer < config.mss as u64 {
        return Err(Issue::new(
            blame("receive_buffer", "mss"),
            format!(
                "receive_buffer ({} bytes) must hold at least one mss ({} bytes)",
                config.receive_buffer, config.mss
            ),
        ));
    }
    Ok(())
}

// ---- Nodes and links -----------------------------------------------------------------------

struct DeclaredNode {
    path: String,
    name: String,
    kind: Option<NodeKind>,
}

fn declared_nodes(top: &Fields) -> Result<Vec<DeclaredNode>, Issue> {
    let mut nodes: Vec<DeclaredNode> = Vec::new();
    for (path, table) in top.array_of_tables("node")? {
        let node = Fields::new(&path, table);
        node.check_keys(NODE_KEYS)?;
        let name = node.req("name", "a node name", name_value)?;
        if let Some(first) = nodes.iter().find(|n| n.name == name) {
            return Err(Issue::new(
                node.at("name"),
                format!("duplicate node name '{name}' (also {})", first.path),
            ));
        }
        let kind = node.opt("kind", |v| match string_value(v)?.as_str() {
            "host" => Ok(NodeKind::Host),
            "router" => Ok(NodeKind::Router),
            other => Err(format!("unknown node kind '{other}' (known: host, router)")),
        })?;
        nodes.push(DeclaredNode {
            path: path.clone(),
            name,
            kind,
        });
    }
    Ok(nodes)
}

fn links(top: &Fields) -> Result<Vec<LinkSpec>, Issue> {
    let entries = top.array_of_tables("link")?;
    if entries.is_empty() {
        return Err(Issue::new(
            "link",
            "no links defined (add at least one [[link]])",
        ));
    }
    let mut links: Vec<LinkSpec> = Vec::new();
    let mut first_path: BTreeMap<String, String> = BTreeMap::new();
    for (path, table) in &entries {
        let link = Fields::new(path, table);
        link.check_keys(LINK_KEYS)?;
        let name = link.req("name", "a link name", name_value)?;
        if let Some(first) = first_path.get(&name) {
            return Err(Issue::new(
                link.at("name"),
                format!("duplicate link name '{name}' (also {first})"),
            ));
        }
        first_path.insert(name.clone(), path.clone());
        let from = link.req("from", "a node name", name_value)?;
        let to = link.req("to", "a node name", name_value)?;
        if from == to {
            return Err(Issue::new(
                link.at("to"),
                format!("same node as from ('{to}'); a link joins two different nodes"),
            ));
        }
        let rate = link.req("rate", EXPECT_RATE, rate_value)?;
        let delay = link.req("delay", EXPECT_DURATION, duration_value)?;
        let duplex = link.opt("duplex", bool_value)?.unwrap_or(true);
        if !duplex {
            for key in ["reverse_queue", "reverse_loss"] {
                if link.has(key) {
                    return Err(Issue::new(
                        link.at(key),
                        "only allowed on duplex links (this one has duplex = false)",
                    ));
                }
            }
        }
        let queue = match link.get("queue") {
            Some(value) => queue(&link.at("queue"), value)?,
            None => DEFAULT_QUEUE,
        };
        let reverse_queue = match link.get("reverse_queue") {
            Some(value) => self::queue(&link.at("reverse_queue"), value)?,
            None => queue.clone(),
        };
        let loss = match link.get("loss") {
            Some(value) => Some(self::loss(&link.at("loss"), value)?),
            None => None,
        };
        let reverse_loss = match link.get("reverse_loss") {
            Some(value) => Some(self::loss(&link.at("reverse_loss"), value)?),
            None => None,
        };
        links.push(LinkSpec {
            name,
            from,
            to,
            rate,
            delay,
            duplex,
            queue,
            reverse_queue,
            loss,
            reverse_loss,
        });
    }
    Ok(links)
}

/// Exactly one of `packets` / `bytes`, both positive; `None` when neither is given.
fn limit(q: &Fields) -> Result<Option<Limit>, Issue> {
    let at_least_one = |n: u64| {
        if n == 0 {
            Err("must be at least 1".to_string())
        } else {
            Ok(n)
        }
    };
    let packets = q.opt("packets", |v| uint_value(v).and_then(at_least_one))?;
    let bytes = q.opt("bytes", |v| size_value(v).and_then(at_least_one))?;
    match (packets, bytes) {
        (Some(_), Some(_)) => Err(Issue::new(
            q.at("bytes"),
            "give the limit in packets or in bytes, not both",
        )),
        (Some(n), None) => Ok(Some(Limit::Packets(n))),
        (None, Some(n)) => Ok(Some(Limit::Bytes(n))),
        (None, None) => Ok(None),
    }
}

fn queue(path: &str, value: &Value) -> Result<QueueSpec, Issue> {
    let q = Fields::of(path, value)?;
    let kind = q.kind(
        "kind",
        QUEUE_KINDS,
        "queue kind",
        "queues",
        Some("droptail"),
    )?;
    match kind {
        "droptail" => match limit(&q)? {
            Some(limit) => Ok(QueueSpec::DropTail { limit }),
            None => Err(Issue::new(
                path,
                "a droptail queue needs a limit: packets = N or bytes = SIZE",
            )),
        },
        "red" => red(&q).map(QueueSpec::Red),
        _ => {
            let threshold = q.req("threshold", "a number of packets", uint_value)?;
            let hold = q.opt("hold", duration_value)?;
            let policy = q
                .opt("policy", |v| {
                    let name = string_value(v)?;
                    match name.as_str() {
                        "first_arrival" => Ok(DropPolicy::FirstArrival),
                        "rate_independent" => Ok(DropPolicy::RateIndependent),
                        "largest_rate" => Ok(DropPolicy::LargestRate),
                        other => Err(format!(
                            "unknown drop policy '{other}' (known: {})",
                            listing(DROP_POLICIES)
                        )),
                    }
                })?
                .unwrap_or(DropPolicy::FirstArrival);
            Ok(QueueSpec::ThresholdDropper {
                threshold,
                hold,
                policy,
            })
        }
    }
}

fn red(q: &Fields) -> Result<RedSpec, Issue> {
    let defaults = RedSpec::default();
    let byte_mode = q
        .opt("mode", |v| match string_value(v)?.as_str() {
            "packets" => Ok(false),
            "bytes" => Ok(true),
            other => Err(format!(
                "unknown RED mode '{other}' (known: bytes, packets)"
            )),
        })?
        .unwrap_or(defaults.byte_mode);
    let mean_packet_bytes = q
        .opt("mean_packet_size", packet_size)?
        .unwrap_or(defaults.mean_packet_bytes);
    // Thresholds are in packets, or in bytes in byte mode where a size string is accepted too;
    // left out in byte mode, the packet defaults are scaled by the mean packet size (as ns-2
    // does for a queue measured in bytes).
    let threshold = |v: &Value| -> Result<f64, String> {
        let th = match v {
            Value::String(_) if byte_mode => size_value(v)? as f64,
            _ => number_value(v)?,
        };
        if th < 0.0 {
            return Err(format!("must not be negative, got {th}"));
        }
        Ok(th)
    };
    let scale = if byte_mode {
        mean_packet_bytes as f64
    } else {
        1.0
    };
    let min_th = q
        .opt("min_th", threshold)?
        .unwrap_or(defaults.min_th * scale);
    let max_th = q
        .opt("max_th", threshold)?
        .unwrap_or(defaults.max_th * scale);
    if min_th >= max_th {
        let key = if q.has("max_th") { "max_th" } else { "min_th" };
        return Err(Issue::new(
            q.at(key),
            format!("min_th ({min_th}) must be less than max_th ({max_th})"),
        ));
    }
    let fraction = |v: &Value| -> Result<f64, String> {
        let x = number_value(v)?;
        if x > 0.0 && x <= 1.0 {
            Ok(x)
        } else {
            Err(format!("must be in (0, 1], got {x}"))
        }
    };
    let max_p = q.opt("max_p", fraction)?.unwrap_or(defaults.max_p);
    let w_q = q.opt("w_q", fraction)?.unwrap_or(defaults.w_q);
    let gentle = q.opt("gentle", bool_value)?.unwrap_or(defaults.gentle);
    let wait = q.opt("wait", bool_value)?.unwrap_or(defaults.wait);
    let limit = limit(q)?.unwrap_or(defaults.limit);
    let (capacity, unit) = match limit {
        Limit::Packets(n) => (n, "packets"),
        Limit::Bytes(n) => (n, "bytes"),
    };
    if matches!(limit, Limit::Bytes(_)) == byte_mode && max_th > capacity as f64 {
        let key = if q.has("max_th") { "max_th" } else { unit };
        return Err(Issue::new(
            q.at(key),
            format!("max_th ({max_th}) exceeds the buffer limit ({capacity} {unit})"),
        ));
    }
    Ok(RedSpec {
        min_th,
        max_th,
        max_p,
        w_q,
        gentle,
        wait,
        byte_mode,
        mean_packet_bytes,
        limit,
    })
}

fn loss(path: &str, value: &Value) -> Result<LossSpec, Issue> {
    let l = Fields::of(path, value)?;
    let kind = l.kind("kind", LOSS_KINDS, "loss model", "loss models", None)?;
    match kind {
        "bernoulli" => Ok(LossSpec::Bernoulli {
            p: l.req("p", "a probability between 0 and 1", probability_value)?,
        }),
        "periodic" => {
            let every = l.req("every", "a number of packets", |v| {
                let n = uint_value(v)?;
                if n == 0 {
                    Err("must be at least 1".to_string())
                } else {
                    Ok(n)
                }
            })?;
            let offset = l.opt("offset", uint_value)?.unwrap_or(0);
            Ok(LossSpec::Periodic { every, offset })
        }
        _ => Ok(LossSpec::GilbertElliott {
            p_good_to_bad: l.req("p_good_to_bad", "a probability", probability_value)?,
            p_bad_to_good: l.req("p_bad_to_good", "a probability", probability_value)?,
            loss_good: l
                .opt("loss_good", probability_value)?
                .unwrap_or(DEFAULT_LOSS_GOOD),
            loss_bad: l
                .opt("loss_bad", probability_value)?
                .unwrap_or(DEFAULT_LOSS_BAD),
        }),
    }
}

/// Node names, their declared kinds, and which directed hops the links allow.
struct Topology {
    names: Vec<String>,
    ids: BTreeMap<String, usize>,
    declared: Vec<Option<NodeKind>>,
    /// `hops[a]` = the nodes reachable from `a` over one link, in link order.
    hops: Vec<Vec<usize>>,
    /// Simplex links, as (from, to), to explain why a hop is missing.
    one_way: BTreeSet<(usize, usize)>,
}

impl Topology {
    fn new(declared: &[DeclaredNode], links: &[LinkSpec]) -> Result<Self, Issue> {
        let mut topology = Topology {
            names: Vec::new(),
            ids: BTreeMap::new(),
            declared: Vec::new(),
            hops: Vec::new(),
            one_way: BTreeSet::new(),
        };
        for node in declared {
            let id = topology.intern(&node.name);
            topology.declared[id] = node.kind;
        }
        for link in links {
            let a = topology.intern(&link.from);
            let b = topology.intern(&link.to);
            topology.hops[a].push(b);
            if link.duplex {
                topology.hops[b].push(a);
            } else {
                topology.one_way.insert((a, b));
            }
        }
        for node in declared {
            let id = topology.ids[&node.name];
            let linked =
                !topology.hops[id].is_empty() || topology.hops.iter().any(|h| h.contains(&id));
            if !linked {
                return Err(Issue::new(
                    join(&node.path, "name"),
                    format!("node '{}' is not an endpoint of any link", node.name),
                ));
            }
        }
        Ok(topology)
    }

    fn intern(&mut self, name: &str) -> usize {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len();
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        self.declared.push(None);
        self.hops.push(Vec::new());
        id
    }

    /// The id of a node named in a flow, or an error listing the known names.
    fn lookup(&self, path: &str, name: &str) -> Result<usize, Issue> {
        if let Some(&id) = self.ids.get(name) {
            return Ok(id);
        }
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        let shown = if names.len() > 12 {
            format!("{}, ... ({} nodes)", listing(&names[..12]), names.len())
        } else {
            listing(&names)
        };
        Err(Issue::new(
            path,
            format!(
                "unknown node '{name}' (known: {shown}){}",
                did_you_mean(name, &names)
            ),
        ))
    }

    fn reachable(&self, from: usize, to: usize) -> bool {
        let mut seen = vec![false; self.names.len()];
        let mut queue = VecDeque::from([from]);
        seen[from] = true;
        while let Some(node) = queue.pop_front() {
            if node == to {
                return true;
            }
            for &next in &self.hops[node] {
                if !seen[next] {
                    seen[next] = true;
                    queue.push_back(next);
                }
            }
        }
        false
    }

    /// Declared kinds, else host for flow endpoints and router for the rest.
    fn node_specs(&self, flows: &[FlowSpec]) -> Vec<NodeSpec> {
        let endpoints: BTreeSet<&str> = flows
            .iter()
            .flat_map(|f| [f.src.as_str(), f.dst.as_str()])
            .collect();
        self.names
            .iter()
            .zip(&self.declared)
            .map(|(name, declared)| NodeSpec {
                name: name.clone(),
                kind: declared.unwrap_or(if endpoints.contains(name.as_str()) {
                    NodeKind::Host
                } else {
                    NodeKind::Router
                }),
            })
            .collect()
    }
}

// ---- Flows ---------------------------------------------------------------------------------

/// Reads one `[[flow]]` entry and returns its copies.
fn flow(
    entry: &Fields,
    sim: &SimulationSpec,
    tcp_defaults: &TcpConfig,
    topology: &Topology,
) -> Result<Vec<FlowSpec>, Issue> {
    let keys: Vec<(&str, Vec<&str>)> = FLOW_KINDS.iter().map(|k| (*k, flow_keys(k))).collect();
    let kinds: Vec<(&str, &[&str])> = keys.iter().map(|(k, v)| (*k, v.as_slice())).collect();
    let kind_name = entry.kind("kind", &kinds, "flow kind", "flows", None)?;
    let name = entry.req("name", "a flow name", name_value)?;
    let src = entry.req("src", "a host name", name_value)?;
    let dst = entry.req("dst", "a host name", name_value)?;
    let src_id = topology.lookup(&entry.at("src"), &src)?;
    let dst_id = topology.lookup(&entry.at("dst"), &dst)?;
    if src == dst {
        return Err(Issue::new(
            entry.at("dst"),
            format!("same node as src ('{dst}'); a flow needs two different hosts"),
        ));
    }
    for (key, id) in [("src", src_id), ("dst", dst_id)] {
        if topology.declared[id] == Some(NodeKind::Router) {
            return Err(Issue::new(
                entry.at(key),
                format!(
                    "'{}' is declared as a router; flows start and end at hosts",
                    topology.names[id]
                ),
            ));
        }
    }
    let count = entry
        .opt("count", |v| {
            let n = uint_value(v)?;
            if n == 0 || n > MAX_COUNT {
                Err(format!("must be between 1 and {MAX_COUNT}, got {n}"))
            } else {
                Ok(n)
            }
        })?
        .unwrap_or(1);
    let start = start(entry, sim)?;
    let stop = entry.opt("stop", duration_value)?;
    if let Some(stop) = stop {
        if stop <= start.latest() || stop > sim.duration {
            return Err(Issue::new(
                entry.at("stop"),
                format!(
                    "must be after the start ({}) and at most the duration ({}), got {}",
                    format_duration(start.latest()),
                    format_duration(sim.duration),
                    format_duration(stop)
                ),
            ));
        }
    }
    let route = route(entry, topology, src_id, dst_id)?;
    let kind = match kind_name {
        "tcp" => tcp_flow(entry, tcp_defaults)?,
        "cbr" => FlowKind::Cbr {
            rate: entry.req("rate", EXPECT_RATE, rate_value)?,
            packet_bytes: entry
                .opt("packet_size", packet_size)?
                .unwrap_or(DEFAULT_PACKET_SIZE),
        },
        _ => FlowKind::OnOff {
            rate: entry.req("rate", EXPECT_RATE, rate_value)?,
            packet_bytes: entry
                .opt("packet_size", packet_size)?
                .unwrap_or(DEFAULT_PACKET_SIZE),
            on: period(entry, "on")?,
            off: period(entry, "off")?,
        },
    };
    if route.is_none() && !topology.reachable(src_id, dst_id) {
        return Err(Issue::new(
            entry.at("dst"),
            format!("no path from '{src}' to '{dst}' over the links"),
        ));
    }
    if matches!(kind, FlowKind::Tcp { .. }) && !topology.reachable(dst_id, src_id) {
        return Err(Issue::new(
            entry.at("dst"),
            format!("no path back from '{dst}' to '{src}' for the ACKs (check the duplex = false links)"),
        ));
    }
    let names: Vec<String> = if count == 1 {
        vec![name]
    } else {
        (0..count).map(|i| format!("{name}.{i}")).collect()
    };
    Ok(names
        .into_iter()
        .map(|name| FlowSpec {
            name,
            kind: kind.clone(),
            src: src.clone(),
            dst: dst.clone(),
            start: start.clone(),
            stop,
            route: route.clone(),
        })
        .collect())
}

fn start(entry: &Fields, sim: &SimulationSpec) -> Result<StartSpec, Issue> {
    let path = entry.at("start");
    let spec = match entry.get("start") {
        None => StartSpec::At(SimTime::ZERO),
        Some(Value::Table(table)) => {
            let t = Fields::new(&path, table);
            t.check_keys(&["uniform"])?;
            let upath = t.at("uniform");
            let bounds = match t.get("uniform") {
                Some(Value::Array(items)) if items.len() == 2 => items,
                _ => {
                    return Err(Issue::new(
                        upath,
                        "expected two durations, e.g. uniform = [\"0s\", \"4s\"]",
                    ))
                }
            };
            let a = duration_value(&bounds[0]).map_err(|m| Issue::new(index(&upath, 0), m))?;
            let b = duration_value(&bounds[1]).map_err(|m| Issue::new(index(&upath, 1), m))?;
            if a > b {
                return Err(Issue::new(
                    index(&upath, 1),
                    format!(
                        "the upper bound ({}) is below the lower bound ({})",
                        format_duration(b),
                        format_duration(a)
                    ),
                ));
            }
            StartSpec::Uniform(a, b)
        }
        Some(value @ (Value::String(_) | Value::Integer(_) | Value::Float(_))) => {
            StartSpec::At(duration_value(value).map_err(|m| Issue::new(&path, m))?)
        }
        Some(other) => {
            return Err(Issue::new(
                path,
                format!(
                "expected a duration or a table such as {{ uniform = [\"0s\", \"4s\"] }}, got {}",
                describe(other)
            ),
            ))
        }
    };
    if spec.latest() >= sim.duration {
        return Err(Issue::new(
            path,
            format!(
                "must be before the end of the simulation ({}), got {}",
                format_duration(sim.duration),
                format_duration(spec.latest())
            ),
        ));
    }
    Ok(spec)
}

fn route(
    entry: &Fields,
    topology: &Topology,
    src: usize,
    dst: usize,
) -> Result<Option<Vec<String>>, Issue> {
    let path = entry.at("route");
    let Some(value) = entry.get("route") else {
        return Ok(None);
    };
    let Value::Array(items) = value else {
        return Err(Issue::new(
            path,
            format!(
                "expected a list of node names from src to dst, got {}",
                describe(value)
            ),
        ));
    };
    let mut ids = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let name = name_value(item).map_err(|m| Issue::new(index(&path, i), m))?;
        ids.push(topology.lookup(&index(&path, i), &name)?);
    }
    let name = |id: usize| topology.names[id].as_str();
    if ids.first() != Some(&src) {
        return Err(Issue::new(
            index(&path, 0),
            format!("a route starts at src ('{}')", name(src)),
        ));
    }
    if ids.last() != Some(&dst) || ids.len() < 2 {
        return Err(Issue::new(
            index(&path, ids.len().saturating_sub(1)),
            format!("a route ends at dst ('{}')", name(dst)),
        ));
    }
    for (i, pair) in ids.windows(2).enumerate() {
        let (a, b) = (pair[0], pair[1]);
        if ids[..=i].contains(&b) {
            return Err(Issue::new(
                index(&path, i + 1),
                format!("'{}' appears twice; a route must not loop", name(b)),
            ));
        }
        if !topology.hops[a].contains(&b) {
            let why = if topology.one_way.contains(&(b, a)) {
                " (the link between them is simplex, from the other side)"
            } else {
                ""
            };
            return Err(Issue::new(
                index(&path, i + 1),
                format!("no link from '{}' to '{}'{why}", name(a), name(b)),
            ));
        }
    }
    Ok(Some(
        ids.into_iter()
            .map(|id| topology.names[id].clone())
            .collect(),
    ))
}

fn tcp_flow(entry: &Fields, tcp_defaults: &TcpConfig) -> Result<FlowKind, Issue> {
    let cc = match entry.get("cc") {
        None => DEFAULT_CC,
        Some(value) => controller(&entry.at("cc"), value)?,
    };
    let bytes = entry.opt("bytes", |v| {
        let n = size_value(v)?;
        if n == 0 {
            Err("must be at least 1 byte (leave it out for an unlimited transfer)".to_string())
        } else {
            Ok(n)
        }
    })?;
    let mut tcp = *tcp_defaults;
    apply_tcp(entry, &mut tcp)?;
    check_tcp(
        &tcp,
        |key| {
            if entry.has(key) {
                entry.at(key)
            } else {
                join("tcp", key)
            }
        },
        &|key| entry.has(key),
    )?;
    Ok(FlowKind::Tcp { cc, bytes, tcp })
}

fn controller(path: &str, value: &Value) -> Result<CcSpec, Issue> {
    let names: Vec<&str> = CONTROLLERS.iter().map(|(n, _)| *n).collect();
    let (name, params) = match value {
        Value::String(name) => {
            if !names.contains(&name.as_str()) {
                return Err(Issue::new(
                    path,
                    format!("unknown controller '{name}' (known: {})", listing(&names)),
                ));
            }
            (name.as_str(), None)
        }
        Value::Table(table) => {
            let params = Fields::new(path, table);
            let name = params.kind("name", CONTROLLERS, "controller", "controllers", None)?;
            (name, Some(params))
        }
        other => {
            return Err(Issue::new(
                path,
                format!(
                    "expected a controller name such as \"reno\" or a table such as {{ name = \"cubic\", beta = 0.7 }}, got {}",
                    describe(other)
                ),
            ))
        }
    };
    let get =
        |key: &str, default: f64, check: fn(f64) -> Result<f64, String>| -> Result<f64, Issue> {
            match &params {
                Some(p) => Ok(p
                    .opt(key, |v| number_value(v).and_then(check))?
                    .unwrap_or(default)),
                None => Ok(default),
            }
        };
    let flag = |key: &str, default: bool| -> Result<bool, Issue> {
        match &params {
            Some(p) => Ok(p.opt(key, bool_value)?.unwrap_or(default)),
            None => Ok(default),
        }
    };
    let positive: fn(f64) -> Result<f64, String> = |x| {
        if x > 0.0 {
            Ok(x)
        } else {
            Err(format!("must be greater than zero, got {x}"))
        }
    };
    let decrease: fn(f64) -> Result<f64, String> = |x| {
        if x > 0.0 && x < 1.0 {
            Ok(x)
        } else {
            Err(format!("must be between 0 and 1 (exclusive), got {x}"))
        }
    };
    Ok(match name {
        "reno" => CcSpec::Reno,
        "cubic" => CcSpec::Cubic {
            c: get("c", CUBIC_DEFAULT_C, positive)?,
            beta: get("beta", CUBIC_DEFAULT_BETA, decrease)?,
            fast_convergence: flag("fast_convergence", CUBIC_DEFAULT_FAST_CONVERGENCE)?,
            tcp_friendliness: flag("tcp_friendliness", CUBIC_DEFAULT_TCP_FRIENDLINESS)?,
        },
        _ => CcSpec::Aimd {
            alpha: get("alpha", AIMD_DEFAULT_ALPHA, positive)?,
            beta: get("beta", AIMD_DEFAULT_BETA, decrease)?,
        },
    })
}

/// The required on or off period `key` of an on/off flow.
fn period(entry: &Fields, key: &str) -> Result<PeriodSpec, Issue> {
    let path = entry.at(key);
    let path = path.as_str();
    let Some(value) = entry.get(key) else {
        return Err(Issue::new(
            path,
            "missing required field (a period such as { exponential = \"500ms\" })",
        ));
    };
    let p = Fields::of(path, value)?;
    p.check_keys(&["exponential", "pareto", "shape"])?;
    let mean = |key: &str| p.opt(key, positive_duration);
    match (mean("exponential")?, mean("pareto")?) {
        (Some(_), Some(_)) => Err(Issue::new(path, "give exponential or pareto, not both")),
        (Some(mean), None) => {
            if p.has("shape") {
                return Err(Issue::new(p.at("shape"), "only for pareto periods"));
            }
            Ok(PeriodSpec::Exponential { mean })
        }
        (None, Some(mean)) => {
            let shape = p.req("shape", "a number greater than 1", |v| {
                let shape = number_value(v)?;
                if shape > 1.0 {
                    Ok(shape)
                } else {
                    Err(format!(
                        "must be greater than 1 for the mean to exist, got {shape}"
                    ))
                }
            })?;
            Ok(PeriodSpec::Pareto { mean, shape })
        }
        (None, None) => Err(Issue::new(
            path,
            format!(
                "expected a distribution ({}), e.g. {{ exponential = \"500ms\" }}",
                listing(PERIOD_KINDS)
            ),
        )),
    }
}
