//! From the parsed tree to a validated [`Scenario`].
//!
//! The tree is walked section by section; the first mistake is returned as an [`Issue`] whose
//! path uses the indices of the entries as written (`flow[0]`, not the index after `count`
//! expansion). Checks that relate entries to each other (names, nodes, routes, reachability)
//! run once every entry they need has been read.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use toml::{Table, Value};

use super::algorithm::{self, Section};
use super::schema::*;
use super::tree::{did_you_mean, index, join, listing, unknown_field, Fields, Issue};
use crate::protocol::{Paths, SourceKind};
use crate::transport::multipath::coupled::CoupledKind;
use crate::transport::multipath::scheduler::{SchedulerKind, SchedulerSpec, MAX_SUBFLOWS};
use crate::units::{
    bool_value, describe, duration_value, format_duration, format_number, name_value, number_value,
    rate_value, string_value, uint_value, EXPECT_DURATION, EXPECT_RATE,
};

/// The controller and scheduler of an MPTCP flow that names none.
const DEFAULT_COUPLED: &str = "lia";
const DEFAULT_SCHEDULER: &str = "min_rtt";
use crate::ids::{LinkId, NodeId};
use crate::net::loss::{LossKind, LossSpec};
use crate::net::queue::{QueueKind, QueueSpec};
use crate::net::routing::{path_from_nodes, shortest_path};
use crate::net::topology::{NodeRole, Topology as Graph};
use crate::registry::{find, Params};
use crate::time::SimTime;

/// Validates the whole tree.
pub(crate) fn scenario(root: &Table, source: &str) -> Result<Scenario, Issue> {
    let top = Fields::new("", root);
    for key in root.keys() {
        let sections = sections();
        if !sections.contains(&key.as_str()) {
            return Err(unknown_field(key, key, &sections, "section"));
        }
    }
    if let Some(sweep) = root.get(SWEEP_SECTION) {
        if !sweep.is_table() {
            return Err(Issue::new(
                SWEEP_SECTION,
                "expected a table ([sweep], read by `plait sweep`)",
            ));
        }
    }
    testbed(root)?;
    let simulation = simulation(&top)?;
    let sections = source_sections(&top)?;
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
    let mut warnings = Vec::new();
    // What each entry names, and the entry of each flow name (after `count` expansion).
    let mut namings: Vec<Naming> = Vec::with_capacity(flow_entries.len());
    let mut flow_names: BTreeMap<String, usize> = BTreeMap::new();
    for (e, (path, table)) in flow_entries.iter().enumerate() {
        let entry = Fields::new(path, table);
        let copies = flow(&entry, &simulation, &sections, &topology, &mut warnings)?;
        let naming = Naming {
            path: path.clone(),
            name: entry
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            count: copies.len(),
            applications: copies[0].shares.as_ref().map_or(0, Vec::len),
            first_flow: flows.len(),
        };
        for copy in copies {
            if let Some(&first) = flow_names.get(&copy.name) {
                return Err(Issue::new(
                    entry.at("name"),
                    format!(
                        "duplicate flow name '{}' ({}also {})",
                        copy.name,
                        naming
                            .copy_of(&copy.name)
                            .map_or(String::new(), |c| c + "; "),
                        namings[first].origin(&copy.name)
                    ),
                ));
            }
            flow_names.insert(copy.name.clone(), e);
            flows.push(copy);
        }
        namings.push(naming);
    }
    application_names(&flows, &namings, &flow_names)?;
    local_links(&entries_of_links(&top)?, &links, &flows)?;
    warnings.extend(super::buffers::warnings(
        &flows,
        &links,
        namings.iter().map(|n| (n.path.as_str(), n.first_flow)),
    ));
    let nodes = topology.node_specs(&flows);
    let events = events(&top, &links, &simulation)?;
    let loss_events = loss_events(&top, &links, &simulation)?;
    let flow_events = flow_events(&top, &flows, &simulation)?;
    Ok(Scenario {
        source: source.to_string(),
        simulation,
        nodes,
        links,
        flows,
        events,
        loss_events,
        flow_events,
        warnings: warnings
            .into_iter()
            .map(|Issue { path, message }| ScenarioWarning {
                file: source.to_string(),
                path,
                message,
            })
            .collect(),
    })
}

/// What one `[[flow]]` entry names: its flows (`name`, or `name.i` for the copies of
/// `count > 1`), and for an MPAT aggregate the application flows of each (`flow.k`, one per
/// share), which the results list beside the flows.
struct Naming {
    /// The entry (`flow[2]`).
    path: String,
    /// The name as written.
    name: String,
    count: usize,
    /// Application flows of each copy (the number of shares; 0 unless MPAT).
    applications: usize,
    /// Index of the entry's first flow after expansion.
    first_flow: usize,
}

impl Naming {
    /// `copy 1 of 'f', count = 2` when `flow` is a copy, else `None`.
    fn copy_of(&self, flow: &str) -> Option<String> {
        (self.count > 1).then(|| {
            let i = flow.rsplit_once('.').map_or("", |(_, i)| i);
            format!("copy {i} of '{}', count = {}", self.name, self.count)
        })
    }

    /// Where the flow name `flow` of this entry comes from: `flow[0]`, or `flow[0]: copy 1 of
    /// 'f', count = 2`.
    fn origin(&self, flow: &str) -> String {
        match self.copy_of(flow) {
            Some(copy) => format!("{}: {copy}", self.path),
            None => self.path.clone(),
        }
    }
}

/// `k` when `text` is a whole number written as the results write indices (`0`, `12`; not
/// `01` or `+1`).
fn index_suffix(text: &str) -> Option<usize> {
    let k: usize = text.parse().ok()?;
    (k.to_string() == text).then_some(k)
}

/// Refuses a flow named like an application flow of an MPAT aggregate (`agg.0` beside an
/// aggregate `agg` with two shares): the `flows` table would have two rows of that name and
/// the series of both would be merged. Flow names are unique already, and two application
/// flows cannot share a name (`a.k` = `b.j` only if `a` = `b` and `k` = `j`), so a flow name
/// is the only thing an application flow's name can collide with.
fn application_names(
    flows: &[FlowSpec],
    namings: &[Naming],
    flow_names: &BTreeMap<String, usize>,
) -> Result<(), Issue> {
    if namings.iter().all(|n| n.applications == 0) {
        return Ok(());
    }
    for (e, naming) in namings.iter().enumerate() {
        let own = &flows[naming.first_flow..naming.first_flow + naming.count];
        for flow in own {
            let Some((aggregate, k)) = flow.name.rsplit_once('.') else {
                continue;
            };
            let (Some(k), Some(&a)) = (index_suffix(k), flow_names.get(aggregate)) else {
                continue;
            };
            let owner = &namings[a];
            if k >= owner.applications {
                continue;
            }
            let application = |owner_path: &str| {
                format!(
                    "application flow {k} of the mpat flow '{aggregate}' at {owner_path}, one per \
                     share"
                )
            };
            // Reported at the entry written last.
            let (at, message) = if e > a {
                let copy = naming
                    .copy_of(&flow.name)
                    .map_or(String::new(), |c| c + "; ");
                (
                    join(&naming.path, "name"),
                    format!("{copy}also {}", application(&owner.origin(aggregate))),
                )
            } else {
                (
                    join(&owner.path, "name"),
                    format!(
                        "{}; also {}",
                        application(&owner.origin(aggregate)),
                        naming.origin(&flow.name)
                    ),
                )
            };
            return Err(Issue::new(
                at,
                format!(
                    "duplicate flow name '{}' ({message}); names must differ from the generated \
                     ones (NAME.K for the application flows of an mpat flow)",
                    flow.name
                ),
            ));
        }
    }
    Ok(())
}

/// An event's `at`: a time within the run.
fn event_time(entry: &Fields, sim: &SimulationSpec) -> Result<SimTime, Issue> {
    let at = entry.req("at", EXPECT_DURATION, duration_value)?;
    if at > sim.duration {
        return Err(Issue::new(
            entry.at("at"),
            format!(
                "must be at most the duration ({}), got {}",
                format_duration(sim.duration),
                format_duration(at)
            ),
        ));
    }
    Ok(at)
}

/// An event's `link`: a declared link's name.
fn event_link(entry: &Fields, links: &[LinkSpec]) -> Result<String, Issue> {
    let link = entry.req("link", "a link name", name_value)?;
    if !links.iter().any(|l| l.name == link) {
        let names: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
        return Err(Issue::new(
            entry.at("link"),
            format!(
                "unknown link '{link}' (known: {}){}",
                listing(&names),
                did_you_mean(&link, &names)
            ),
        ));
    }
    Ok(link)
}

/// The `[[event]]` tables, in time order (file order at equal times). Each names a declared
/// link, a time within the run and an action that changes the link's state: links start up,
/// and a link is not taken down while down nor brought up while up.
fn events(
    top: &Fields,
    links: &[LinkSpec],
    sim: &SimulationSpec,
) -> Result<Vec<LinkEventSpec>, Issue> {
    let mut events: Vec<(LinkEventSpec, String)> = Vec::new();
    for (path, table) in &top.array_of_tables("event")? {
        let entry = Fields::new(path, table);
        entry.check_keys(&event_keys())?;
        if entry.has("flow") || entry.has("loss") {
            continue;
        }
        entry.check_keys(LINK_EVENT_KEYS)?;
        let at = event_time(&entry, sim)?;
        let link = event_link(&entry, links)?;
        let expected = "\"down\" or \"up\"";
        let up = match entry.req("action", expected, string_value)?.as_str() {
            "down" => false,
            "up" => true,
            other => {
                return Err(Issue::new(
                    entry.at("action"),
                    format!("expected {expected}, got '{other}'"),
                ))
            }
        };
        events.push((LinkEventSpec { at, link, up }, entry.at("action")));
    }
    events.sort_by_key(|(e, _)| e.at);
    // Each link's state after the events so far: down since (time), or up.
    let mut down_since: BTreeMap<&str, SimTime> = BTreeMap::new();
    for (e, action_path) in &events {
        let was = down_since.get(e.link.as_str()).copied();
        let problem = match (was, e.up) {
            (Some(since), false) => Some(format!(
                "link '{}' is already down at {} (down since {})",
                e.link,
                format_duration(e.at),
                format_duration(since)
            )),
            (None, true) => Some(format!(
                "link '{}' is already up at {} (links start up; take it down first)",
                e.link,
                format_duration(e.at)
            )),
            _ => None,
        };
        if let Some(message) = problem {
            return Err(Issue::new(action_path, message));
        }
        if e.up {
            down_since.remove(e.link.as_str());
        } else {
            down_since.insert(&e.link, e.at);
        }
    }
    Ok(events.into_iter().map(|(e, _)| e).collect())
}

/// The `[[event]]` tables that give a link a new loss model (`loss`, for its forward
/// direction), in time order (file order at equal times).
fn loss_events(
    top: &Fields,
    links: &[LinkSpec],
    sim: &SimulationSpec,
) -> Result<Vec<LossEventSpec>, Issue> {
    let mut events = Vec::new();
    for (path, table) in &top.array_of_tables("event")? {
        let entry = Fields::new(path, table);
        if entry.has("flow") || !entry.has("loss") {
            continue;
        }
        if entry.has("action") {
            return Err(Issue::new(
                entry.at("action"),
                "an event takes a link down or up (action) or changes its loss model (loss), \
                 not both",
            ));
        }
        entry.check_keys(LOSS_EVENT_KEYS)?;
        let at = event_time(&entry, sim)?;
        let link = event_link(&entry, links)?;
        let value = entry.get("loss").expect("checked above");
        let loss = loss(&entry.at("loss"), value)?;
        events.push(LossEventSpec { at, link, loss });
    }
    events.sort_by_key(|e| e.at);
    Ok(events)
}

/// The `[[event]]` tables that name a flow, in time order (file order at equal times): a
/// declared flow (after `count` expansion), a time within the run, and a setting the flow's
/// kind can change: `n` of a `multfrc` (n > 0) or `cp` (n ≥ 1) flow.
fn flow_events(
    top: &Fields,
    flows: &[FlowSpec],
    sim: &SimulationSpec,
) -> Result<Vec<FlowEventSpec>, Issue> {
    let mut events = Vec::new();
    for (path, table) in &top.array_of_tables("event")? {
        let entry = Fields::new(path, table);
        if !entry.has("flow") {
            continue;
        }
        for key in ["link", "action", "loss"] {
            if entry.has(key) {
                return Err(Issue::new(
                    entry.at(key),
                    format!(
                        "an event changes a link (at, link, action) or a flow's setting (at, \
                         flow, {}), not both",
                        crate::protocol::setting_keys().join(" or ")
                    ),
                ));
            }
        }
        entry.check_keys(&flow_event_keys())?;
        let at = event_time(&entry, sim)?;
        let name = entry.req("flow", "a flow name", name_value)?;
        let Some(flow) = flows.iter().find(|f| f.name == name) else {
            let names: Vec<&str> = flows.iter().map(|f| f.name.as_str()).collect();
            return Err(Issue::new(
                entry.at("flow"),
                format!(
                    "unknown flow '{name}' (known: {}){}",
                    listing(&names),
                    did_you_mean(&name, &names)
                ),
            ));
        };
        let kind = flow.kind.name();
        let protocol = crate::protocol::of(&flow.kind);
        let keys = crate::protocol::setting_keys();
        let given: Vec<&'static str> = keys.iter().copied().filter(|k| entry.has(k)).collect();
        let Some(&key) = given.first() else {
            let needs: Vec<String> = keys
                .iter()
                .map(|k| format!("{k} for {} flows", protocol_names(k)))
                .collect();
            return Err(Issue::new(
                path,
                format!(
                    "a flow event needs the setting it changes ({})",
                    needs.join(", ")
                ),
            ));
        };
        if given.len() > 1 {
            return Err(Issue::new(
                entry.at(key),
                format!(
                    "a flow event changes one setting: {}, not {}",
                    given.join(" or "),
                    if given.len() == 2 { "both" } else { "several" }
                ),
            ));
        }
        if !protocol.settings.contains(&key) {
            return Err(Issue::new(
                entry.at(key),
                format!(
                    "flow '{name}' is a {kind} flow; {key} can change only for {} flows",
                    protocol_names(key)
                ),
            ));
        }
        let change = if protocol.paths == Paths::Shares && key == "shares" {
            let current = flow.shares.as_ref().map_or(0, Vec::len);
            let shares = shares(&entry, key)?;
            if shares.len() != current {
                return Err(Issue::new(
                    entry.at(key),
                    format!(
                        "flow '{name}' has {current} application flows; give {current} shares, \
                         got {}",
                        shares.len()
                    ),
                ));
            }
            crate::transport::FlowChange::numbers(key, shares)
        } else {
            let range = protocol
                .source
                .param(key)
                .expect("a number setting is a declared parameter")
                .range;
            let Some(n) = entry.opt(key, number_value)? else {
                unreachable!("the key is given");
            };
            if !n.is_finite() || !range.contains(n) {
                return Err(Issue::new(
                    entry.at(key),
                    format!(
                        "must be {} for a {kind} flow, got {}",
                        bound_text(&range, n),
                        format_number(n)
                    ),
                ));
            }
            crate::transport::FlowChange::number(key, n)
        };
        events.push(FlowEventSpec {
            at,
            flow: name,
            change,
        });
    }
    events.sort_by_key(|e| e.at);
    Ok(events)
}

/// The protocols whose flows may change setting `key`, as a message names them: `multfrc and
/// cp`.
fn protocol_names(key: &str) -> String {
    let names: Vec<&str> = crate::protocol::changing(key)
        .iter()
        .map(|p| p.name())
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// The bound of `range` that `x` is outside, as a message says it: `at least 1`, `greater than
/// 0` (the lower one for a value that is not a number).
fn bound_text(range: &crate::registry::Range, x: f64) -> String {
    use crate::registry::Bound;
    let below = x.is_nan()
        || match range.min {
            Bound::Inclusive(m) => x < m,
            Bound::Exclusive(m) => x <= m,
            Bound::Unbounded => false,
        };
    let (bound, inclusive, exclusive) = if below || range.max == Bound::Unbounded {
        (range.min, "at least", "greater than")
    } else {
        (range.max, "at most", "less than")
    };
    match bound {
        Bound::Inclusive(m) => format!("{inclusive} {}", format_number(m)),
        Bound::Exclusive(m) => format!("{exclusive} {}", format_number(m)),
        Bound::Unbounded => "a number".to_string(),
    }
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
    let trace_drops = sim.opt("trace_drops", bool_value)?.unwrap_or(false);
    let lookahead = sim.opt("lookahead", bool_value)?.unwrap_or(true);
    Ok(SimulationSpec {
        duration,
        warmup,
        seed,
        sample_interval,
        trace_drops,
        lookahead,
    })
}

// ---- Source sections ([tcp]) ---------------------------------------------------------------

/// The sections the protocols name for their settings (`[tcp]`, named after the protocol that
/// declares them): for each, the defaults it gives for the parameters declared `in_section`,
/// read and checked like a flow's.
fn source_sections(top: &Fields) -> Result<Vec<(&'static str, Params)>, Issue> {
    let mut sections = Vec::new();
    for name in crate::protocol::sections() {
        let spec = find::<SourceKind>(name).expect("a section is named after a protocol");
        let keys: Vec<&str> = spec
            .params
            .iter()
            .filter(|p| p.in_section)
            .map(|p| p.name)
            .collect();
        let params = match top.get(name) {
            None => spec.check(&[]).expect("the declared defaults are valid"),
            Some(value) => {
                let fields = Fields::of(name, value)?;
                fields.check_keys(&keys)?;
                algorithm::read(&fields, spec, None)?.params().clone()
            }
        };
        sections.push((name, params));
    }
    Ok(sections)
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
            None => default_queue(),
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
        let local = link.opt("local", bool_value)?.unwrap_or(false);
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
            local,
        });
    }
    Ok(links)
}

/// The paths of the `[[link]]` entries, in order.
fn entries_of_links(top: &Fields) -> Result<Vec<String>, Issue> {
    Ok(top
        .array_of_tables("link")?
        .into_iter()
        .map(|(path, _)| path)
        .collect())
}

/// `local = true` marks the sending host's own interface queue: only on a link whose `from`
/// node is where a flow starts (its `src`), with a drop-tail queue limited in packets (Linux's
/// `txqueuelen`), which is what the refusal reads.
fn local_links(paths: &[String], links: &[LinkSpec], flows: &[FlowSpec]) -> Result<(), Issue> {
    for (path, l) in paths.iter().zip(links) {
        if !l.local {
            continue;
        }
        let at = join(path, "local");
        if !flows.iter().any(|f| f.src == l.from) {
            return Err(Issue::new(
                at,
                format!(
                    "link '{}': local = true marks the sending host's interface queue, but no \
                     flow starts at its from node '{}'",
                    l.name, l.from
                ),
            ));
        }
        let packets =
            l.queue.name() == "droptail" && l.queue.params().opt_integer("packets").is_some();
        if !packets {
            return Err(Issue::new(
                at,
                format!(
                    "link '{}': local = true needs a drop-tail queue limited in packets \
                     (queue = {{ kind = \"droptail\", packets = N }}, Linux's txqueuelen)",
                    l.name
                ),
            ));
        }
    }
    Ok(())
}

/// A queue table; `kind` defaults to `droptail`.
fn queue(path: &str, value: &Value) -> Result<QueueSpec, Issue> {
    let q = Fields::of(path, value)?;
    let spec =
        algorithm::choose::<QueueKind>(&q, "kind", "queue kind", "queues", Some("droptail"), &[])?;
    algorithm::read(&q, spec, None)
}

/// A loss table; `kind` is required.
fn loss(path: &str, value: &Value) -> Result<LossSpec, Issue> {
    let l = Fields::of(path, value)?;
    let spec = algorithm::choose::<LossKind>(&l, "kind", "loss model", "loss models", None, &[])?;
    algorithm::read(&l, spec, None)
}

/// A path as link directions, `None` when there is none.
type Route = Option<Vec<LinkId>>;

/// Node names, their declared kinds, which directed hops the links allow, and the directed
/// link graph the simulator routes over (the same one: `build` takes the paths resolved here
/// and resolves nothing again).
struct Topology {
    /// The link directions, numbered as the simulator numbers them.
    graph: Graph,
    /// Shortest paths already found, per (from, to) node pair (copies share their ends).
    shortest: RefCell<BTreeMap<(usize, usize), Route>>,
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
            graph: Graph::default(),
            shortest: RefCell::new(BTreeMap::new()),
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
            let delay = link.delay.as_nanos();
            topology
                .graph
                .add_link(NodeId::from_index(a), NodeId::from_index(b), delay);
            if link.duplex {
                topology.hops[b].push(a);
                topology
                    .graph
                    .add_link(NodeId::from_index(b), NodeId::from_index(a), delay);
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
        // Roles do not matter to routing (every node forwards); `node_specs` decides them.
        self.graph.add_node(name, NodeRole::Router);
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

    /// The shortest path (by delay, then hops) between two nodes, found once per pair.
    fn shortest_path(&self, from: usize, to: usize) -> Route {
        self.shortest
            .borrow_mut()
            .entry((from, to))
            .or_insert_with(|| {
                shortest_path(
                    &self.graph,
                    NodeId::from_index(from),
                    NodeId::from_index(to),
                )
            })
            .clone()
    }

    /// The links joining consecutive nodes of a validated route (the first declared link for
    /// each pair).
    fn links_along(&self, ids: &[usize]) -> Option<Vec<LinkId>> {
        let nodes: Vec<NodeId> = ids.iter().map(|&i| NodeId::from_index(i)).collect();
        path_from_nodes(&self.graph, &nodes).ok()
    }

    /// The nodes of a path from `src` over the link directions `links`.
    fn nodes_along(&self, src: usize, links: &[LinkId]) -> Vec<usize> {
        let mut nodes = vec![src];
        nodes.extend(links.iter().map(|l| self.graph.ends[l.index()].1.index()));
        nodes
    }

    /// Whether a route other than `nodes` leads from `src` to `dst`: one that leaves out some
    /// hop of `nodes` (a route that takes every hop of a loop-free path from `src` to `dst`
    /// is that path), so, whether `dst` stays reachable without one of them.
    fn has_other_path(&self, src: usize, dst: usize, nodes: &[usize]) -> bool {
        nodes.windows(2).any(|hop| {
            let mut seen = vec![false; self.names.len()];
            let mut stack = vec![src];
            seen[src] = true;
            while let Some(a) = stack.pop() {
                if a == dst {
                    return true;
                }
                for &b in &self.hops[a] {
                    if !seen[b] && (a, b) != (hop[0], hop[1]) {
                        seen[b] = true;
                        stack.push(b);
                    }
                }
            }
            false
        })
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
    sections: &[(&'static str, Params)],
    topology: &Topology,
    warnings: &mut Vec<Issue>,
) -> Result<Vec<FlowSpec>, Issue> {
    let more: Vec<(&str, &[&'static str])> = crate::protocol::PROTOCOLS
        .iter()
        .map(|p| (p.name(), p.paths.keys()))
        .collect();
    let source = algorithm::choose_with::<SourceKind>(
        entry,
        "kind",
        "flow kind",
        "flows",
        None,
        FLOW_COMMON_KEYS,
        &more,
    )?;
    let protocol = crate::protocol::find(source.name).expect("every source is a protocol's");
    let shares = if protocol.paths == Paths::Shares {
        Some(shares(entry, "shares")?)
    } else {
        None
    };
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
    if protocol.paths == Paths::Subflows && entry.has("route") {
        return Err(Issue::new(
            entry.at("route"),
            format!(
                "an {} flow gives a route per subflow: subflows = [{{ route = [...] }}, ...]",
                source.name
            ),
        ));
    }
    let route = route(entry, topology, src_id, dst_id)?;
    // The section the protocol names gives its settings their defaults (`[tcp]`, for MPTCP's
    // subflows and MPAT's windows too: they are TCP connections).
    let section = protocol.section.and_then(|wanted| {
        sections
            .iter()
            .find(|(name, _)| *name == wanted)
            .map(|(name, params)| Section { path: name, params })
    });
    let kind = algorithm::read(entry, source, section.as_ref())?;
    if protocol.paths == Paths::Subflows {
        let ends = Ends {
            src: &src,
            dst: &dst,
            src_id,
            dst_id,
        };
        let window = Window {
            sim,
            start: start.latest(),
            stop,
        };
        let (multipath, paths) = multipath(entry, topology, &ends, &window, warnings)?;
        let names: Vec<String> = if count == 1 {
            vec![name]
        } else {
            (0..count).map(|i| format!("{name}.{i}")).collect()
        };
        return Ok(names
            .into_iter()
            .map(|name| FlowSpec {
                name,
                kind: kind.clone(),
                src: src.clone(),
                dst: dst.clone(),
                start: start.clone(),
                stop,
                route: None,
                paths: paths.clone(),
                multipath: Some(multipath.clone()),
                shares: None,
            })
            .collect());
    }
    let forward = match &route {
        Some(ids) => topology.links_along(ids),
        None => topology.shortest_path(src_id, dst_id),
    };
    let Some(forward) = forward else {
        return Err(Issue::new(
            entry.at("dst"),
            format!("no path from '{src}' to '{dst}' over the links"),
        ));
    };
    let back = match &route {
        Some(ids) => topology.links_along(&ids.iter().rev().copied().collect::<Vec<_>>()),
        None => topology.shortest_path(dst_id, src_id),
    };
    // A protocol whose receiving end answers (ACKs, feedback reports) needs a way back.
    let reverse = match back {
        Some(links) => links,
        None if !protocol.feedback => Vec::new(),
        None => {
            let message = match &route {
                Some(_) => format!(
                    "the ACKs need the route backwards, from '{dst}' to '{src}' (check the duplex = false links)"
                ),
                None => format!(
                    "no path back from '{dst}' to '{src}' for the ACKs (check the duplex = false links)"
                ),
            };
            return Err(Issue::new(
                entry.at(if route.is_some() { "route" } else { "dst" }),
                message,
            ));
        }
    };
    // An aggregate's windows are paths of their own, all on the flow's route.
    let windows = shares.as_ref().map_or(1, Vec::len);
    let paths = vec![PathSpec { forward, reverse }; windows];
    let route = route.map(|ids| ids.iter().map(|&id| topology.names[id].clone()).collect());
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
            paths: paths.clone(),
            multipath: None,
            shares: shares.clone(),
        })
        .collect())
}

/// The weights of a flow of [`Paths::Shares`] (an MPAT aggregate) at `key`: 1 to
/// `MAX_SHARES` positive, finite weights.
fn shares(entry: &Fields, key: &str) -> Result<Vec<f64>, Issue> {
    let expected = "a list of positive weights, one per application flow (e.g. [1, 2, 3])";
    let Some(value) = entry.get(key) else {
        return Err(Issue::new(
            entry.at(key),
            format!("missing required field ({expected})"),
        ));
    };
    let Value::Array(items) = value else {
        return Err(Issue::new(
            entry.at(key),
            format!("expected {expected}, got {}", describe(value)),
        ));
    };
    let max = crate::protocol::MAX_SHARES;
    if items.is_empty() || items.len() > max {
        return Err(Issue::new(
            entry.at(key),
            format!("must have 1 to {max} weights, got {}", items.len()),
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = index(&entry.at(key), i);
        let x = number_value(item).map_err(|m| Issue::new(&path, m))?;
        if !(x.is_finite() && x > 0.0) {
            return Err(Issue::new(
                &path,
                format!("must be a positive number, got {}", format_number(x)),
            ));
        }
        out.push(x);
    }
    // Shares are relative: the smallest must stay representable against the largest.
    let max = out.iter().copied().fold(0.0, f64::max);
    let min = out.iter().copied().fold(f64::INFINITY, f64::min);
    if min < max * crate::transport::aggregate::mpat::MIN_SHARE_RATIO {
        return Err(Issue::new(
            entry.at(key),
            format!(
                "the smallest weight must be at least {:e} of the largest, got {} and {}",
                crate::transport::aggregate::mpat::MIN_SHARE_RATIO,
                format_number(min),
                format_number(max)
            ),
        ));
    }
    Ok(out)
}

/// The keys of one entry of `subflows`.
const SUBFLOW_KEYS: &[&str] = &["route", "start", "backup"];

/// The two ends of a flow, by name and by node id.
struct Ends<'a> {
    src: &'a str,
    dst: &'a str,
    src_id: usize,
    dst_id: usize,
}

/// When a flow may send: the run, the latest start of its copies, and its stop if any.
struct Window<'a> {
    sim: &'a SimulationSpec,
    start: SimTime,
    stop: Option<SimTime>,
}

/// The prefix of an uncoupled controller's name: `uncoupled:cubic` runs a `cubic` per subflow.
const UNCOUPLED: &str = "uncoupled:";

/// An MPTCP flow's controller, scheduler and subflows, with one path per subflow. Subflows
/// without a route that share one path while the topology offers another are reported in
/// `warnings`.
fn multipath(
    entry: &Fields,
    topology: &Topology,
    ends: &Ends,
    window: &Window,
    warnings: &mut Vec<Issue>,
) -> Result<(MultipathSpec, Vec<PathSpec>), Issue> {
    let &Ends {
        src,
        dst,
        src_id,
        dst_id,
    } = ends;
    let default_cc = Value::String(DEFAULT_COUPLED.to_string());
    let cc = match entry.get("cc").unwrap_or(&default_cc) {
        Value::String(text) if text.starts_with(UNCOUPLED) => {
            let inner = Value::String(text[UNCOUPLED.len()..].to_string());
            CoupledChoice::Uncoupled(algorithm::controller(&entry.at("cc"), &inner)?)
        }
        // `{ name = "uncoupled:cubic", beta = 0.8 }`: the parameters are the per-subflow
        // controller's, read and checked as a single-path flow's `cc` table.
        Value::Table(table)
            if table
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|name| name.starts_with(UNCOUPLED)) =>
        {
            let mut inner = table.clone();
            let name =
                inner["name"].as_str().expect("checked above")[UNCOUPLED.len()..].to_string();
            inner.insert("name".to_string(), Value::String(name));
            CoupledChoice::Uncoupled(algorithm::controller(
                &entry.at("cc"),
                &Value::Table(inner),
            )?)
        }
        value => CoupledChoice::Coupled(algorithm::named::<CoupledKind>(
            &entry.at("cc"),
            value,
            "name",
            "coupled controller",
            "coupled controllers",
        )?),
    };
    let scheduler = match entry.get("scheduler") {
        None => SchedulerSpec::new(DEFAULT_SCHEDULER, &[]).expect("the default scheduler"),
        Some(value) => algorithm::named::<SchedulerKind>(
            &entry.at("scheduler"),
            value,
            "kind",
            "scheduler",
            "schedulers",
        )?,
    };
    let path = entry.at("subflows");
    let items = match entry.get("subflows") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(Value::Array(_)) => {
            return Err(Issue::new(path, "an mptcp flow needs at least one subflow"));
        }
        Some(other) => {
            return Err(Issue::new(
                path,
                format!(
                    "expected a list of subflows such as [{{ route = [\"{src}\", \"r1\", \"{dst}\"] }}], got {}",
                    describe(other)
                ),
            ))
        }
        None => {
            return Err(Issue::new(
                path,
                format!(
                    "missing required field (a list of subflows such as [{{ route = [\"{src}\", \"r1\", \"{dst}\"] }}])"
                ),
            ))
        }
    };
    if items.len() > MAX_SUBFLOWS {
        return Err(Issue::new(
            path,
            format!("at most {MAX_SUBFLOWS} subflows, got {}", items.len()),
        ));
    }
    let mut subflows = Vec::with_capacity(items.len());
    let mut paths = Vec::with_capacity(items.len());
    for (k, item) in items.iter().enumerate() {
        let at = index(&path, k);
        let sub = Fields::of(&at, item)?;
        sub.check_keys(SUBFLOW_KEYS)?;
        let start = sub.opt("start", duration_value)?.unwrap_or(SimTime::ZERO);
        // A subflow joins `start` after its connection starts; one that would join after the
        // run (or the flow's stop) would never send, as a flow starting after the end.
        let joins = window.start.saturating_add(start);
        let (end, what) = match window.stop {
            Some(stop) if stop < window.sim.duration => (stop, "the flow's stop"),
            _ => (window.sim.duration, "the end of the simulation"),
        };
        if joins >= end {
            return Err(Issue::new(
                sub.at("start"),
                format!(
                    "the subflow would join at {} (the flow starts at {}, the subflow {} later), \
                     not before {what} ({})",
                    format_duration(joins),
                    format_duration(window.start),
                    format_duration(start),
                    format_duration(end)
                ),
            ));
        }
        let backup = sub.opt("backup", bool_value)?.unwrap_or(false);
        let ids = match sub.get("route") {
            None => None,
            Some(value) => Some(route_ids(
                &sub.at("route"),
                value,
                topology,
                src_id,
                dst_id,
                true,
            )?),
        };
        let forward = match &ids {
            Some(ids) => topology.links_along(ids),
            None => topology.shortest_path(src_id, dst_id),
        };
        let Some(forward) = forward else {
            return Err(Issue::new(
                sub.at("route"),
                format!("no path from '{src}' to '{dst}' over the links"),
            ));
        };
        let back = match &ids {
            Some(ids) => topology.links_along(&ids.iter().rev().copied().collect::<Vec<_>>()),
            None => topology.shortest_path(dst_id, src_id),
        };
        let Some(reverse) = back else {
            return Err(Issue::new(
                sub.at("route"),
                format!(
                    "the ACKs need the route backwards, from '{dst}' to '{src}' (check the duplex = false links)"
                ),
            ));
        };
        paths.push(PathSpec { forward, reverse });
        subflows.push(SubflowSpec {
            route: ids.map(|ids| ids.iter().map(|&id| topology.names[id].clone()).collect()),
            start,
            backup,
        });
    }
    if let Some(warning) = shared_path(&path, &subflows, &paths, topology, src_id, dst_id) {
        warnings.push(warning);
    }
    Ok((
        MultipathSpec {
            cc,
            scheduler,
            subflows,
        },
        paths,
    ))
}

/// A warning when subflows without a route take the same path as another subflow (all
/// route-less subflows take the one shortest path) while the topology offers another path from
/// `src` to `dst`: most likely the subflows were meant to spread over the paths. Subflows that
/// share a path by explicit routes are meant to.
fn shared_path(
    at: &str,
    subflows: &[SubflowSpec],
    paths: &[PathSpec],
    topology: &Topology,
    src: usize,
    dst: usize,
) -> Option<Issue> {
    let routeless = subflows.iter().position(|s| s.route.is_none())?;
    let shortest = &paths[routeless].forward;
    let sharing: Vec<usize> = (0..subflows.len())
        .filter(|&k| paths[k].forward == *shortest)
        .collect();
    if sharing.len() < 2 {
        return None;
    }
    let nodes = topology.nodes_along(src, shortest);
    if !topology.has_other_path(src, dst, &nodes) {
        return None;
    }
    let listed: Vec<String> = sharing.iter().map(usize::to_string).collect();
    let route: Vec<&str> = nodes.iter().map(|&n| topology.names[n].as_str()).collect();
    let delay_ns: u64 = shortest
        .iter()
        .map(|l| topology.graph.delay_ns[l.index()])
        .sum();
    Some(Issue::new(
        at,
        format!(
            "subflows {} all take the path {} (a subflow without a route takes the path of least \
             propagation delay, here {}), though the topology has other paths from '{}' to '{}'; \
             give the subflows routes to spread them, or the same route to share the path on \
             purpose",
            listed.join(", "),
            route.join(" -> "),
            format_duration(SimTime(delay_ns)),
            topology.names[src],
            topology.names[dst],
        ),
    ))
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
) -> Result<Option<Vec<usize>>, Issue> {
    let Some(value) = entry.get("route") else {
        return Ok(None);
    };
    route_ids(&entry.at("route"), value, topology, src, dst, false).map(Some)
}

/// The nodes of a route written at `path`: node names from `src` to `dst` (which may be left
/// out when `ends_implied`), each joined to the next by a link, without loops.
fn route_ids(
    path: &str,
    value: &Value,
    topology: &Topology,
    src: usize,
    dst: usize,
    ends_implied: bool,
) -> Result<Vec<usize>, Issue> {
    let path = path.to_string();
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
    if ends_implied {
        if ids.first() != Some(&src) {
            ids.insert(0, src);
        }
        if ids.last() != Some(&dst) {
            ids.push(dst);
        }
    }
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
    Ok(ids)
}

/// `[testbed]`, read by `plait testbed` and otherwise ignored: `sim_only`, a list of keys of
/// this scenario (override paths, `tcp.host_jitter`, `flow.bulk.send_buffer`) that only the
/// simulator has and the kernel testbed leaves out. Each must be set in the scenario.
fn testbed(root: &Table) -> Result<(), Issue> {
    let Some(section) = root.get(TESTBED_SECTION) else {
        return Ok(());
    };
    let Some(table) = section.as_table() else {
        return Err(Issue::new(
            TESTBED_SECTION,
            "expected a table ([testbed], read by `plait testbed`)",
        ));
    };
    for key in table.keys() {
        if !TESTBED_KEYS.contains(&key.as_str()) {
            return Err(unknown_field(
                &join(TESTBED_SECTION, key),
                key,
                TESTBED_KEYS,
                "key",
            ));
        }
    }
    let Some(list) = table.get("sim_only") else {
        return Ok(());
    };
    let path = join(TESTBED_SECTION, "sim_only");
    let Some(entries) = list.as_array() else {
        return Err(Issue::new(path, "expected a list of scenario keys"));
    };
    for (i, entry) in entries.iter().enumerate() {
        let at = index(&path, i);
        let Some(key) = entry.as_str() else {
            return Err(Issue::new(
                at,
                "expected a scenario key such as \"tcp.host_jitter\"",
            ));
        };
        if key.split(['.', '[']).next() == Some(TESTBED_SECTION) {
            return Err(Issue::new(
                at,
                format!("`{key}` is not a key of the simulation"),
            ));
        }
        super::overrides::find(root, key).map_err(|m| Issue::new(at, format!("`{key}`: {m}")))?;
    }
    Ok(())
}
