//! The bodies of the fuzz targets in `fuzz/` (`cargo fuzz run scenario_parse`, `cargo fuzz
//! run scenario_run`), here so that the targets are one-liners and the committed corpora can
//! be replayed by an ordinary test (`tests/fuzz_corpus.rs`) without cargo-fuzz or nightly.
//!
//! Both functions panic on a bug and return normally otherwise: a scenario that is rejected
//! with an error is a correct outcome, not a failure.
//!
//! - [`scenario_parse`] feeds arbitrary text to the scenario parser (TOML, JSON, or TOML with
//!   `--set` overrides) and builds every scenario it accepts. Nothing may panic, and every
//!   error must be one line.
//! - [`scenario_run`] draws a small *valid* scenario from the input bytes ([`render_scenario`]),
//!   runs it for a bounded number of events and checks the run's invariants: packets are
//!   conserved, TCP delivers no byte beyond what was sent and acknowledges none beyond what was
//!   delivered, and the result tables are consistent.

use std::fmt::Write as _;

use crate::registry::{ParamType, Value};
use crate::scenario::{format_duration, format_rate, format_size, Scenario};
use crate::sim::{build, Simulator};
use crate::time::{Rate, SimTime};
use crate::transport::cc::REGISTRY as CONTROLLERS;

/// Most events one [`scenario_run`] input processes, so that an input costs a bounded time.
/// With the fuzzing instrumentation an input costs about 0.4 ms at this budget, most of it
/// parsing the TOML; a smaller budget saves little (see `fuzz/README.md`).
pub const RUN_EVENT_BUDGET: u64 = 1_000;

/// Parses `data` as a scenario and builds it when it is accepted.
///
/// The first byte chooses the format (modulo 3): TOML text, JSON text, or TOML text followed
/// by a NUL byte and `--set` overrides, one `key=value` per line. The rest is decoded as UTF-8
/// (invalid sequences replaced).
pub fn scenario_parse(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let parsed = match mode % 3 {
        0 => Scenario::from_toml_str(&text, "fuzz.toml", &[]),
        1 => Scenario::from_json_str(&text, "fuzz.json", &[]),
        _ => {
            let (base, sets) = text.split_once('\0').unwrap_or((&text, ""));
            let overrides: Vec<(String, String)> = sets
                .split('\n')
                .filter(|line| !line.is_empty())
                .map(|line| {
                    let (key, value) = line.split_once('=').unwrap_or((line, ""));
                    (key.to_string(), value.to_string())
                })
                .collect();
            Scenario::from_toml_str(base, "fuzz.toml", &overrides)
        }
    };
    let error = match parsed {
        Ok(scenario) => match build(&scenario, None) {
            Ok(_) => return,
            Err(e) => e,
        },
        Err(e) => e,
    };
    let message = error.to_string();
    assert!(
        !message.contains('\n'),
        "error on several lines: {message:?}"
    );
}

/// Draws a scenario from `data` ([`render_scenario`]), runs it for at most
/// [`RUN_EVENT_BUDGET`] events and checks the invariants of the run. Returns whether the
/// scenario was valid (and so was run).
pub fn scenario_run(data: &[u8]) -> bool {
    let text = render_scenario(data);
    let Ok(scenario) = Scenario::from_toml_str(&text, "fuzz-run.toml", &[]) else {
        return false;
    };
    let Ok(mut sim) = build(&scenario, None) else {
        return false;
    };
    let duration = scenario.simulation.duration;
    sim.run_until_bounded(duration, RUN_EVENT_BUDGET);
    check_run(&sim, &scenario);
    true
}

/// The invariants of a (possibly unfinished) run; panics with the reason when one fails.
fn check_run(sim: &Simulator, scenario: &Scenario) {
    let duration = scenario.simulation.duration;
    assert!(sim.now() <= duration, "time {:?} past the end", sim.now());
    assert!(sim.events_processed() <= RUN_EVENT_BUDGET + sim.budget_overrun());

    // Packet conservation: created = delivered + dropped + in flight.
    let c = sim.packet_counters();
    assert_eq!(
        c.created,
        c.delivered + c.dropped + sim.packets_in_flight(),
        "packet conservation: {c:?}, in flight {}",
        sim.packets_in_flight()
    );
    assert!(c.data_delivered <= c.delivered, "{c:?}");

    // TCP: nothing delivered beyond what was sent, nothing acknowledged beyond what was
    // delivered, a finished transfer delivered exactly its size.
    for f in sim.flows() {
        if let Some(tcp) = f.transport.as_tcp() {
            let (sender, receiver) = (tcp.sender(), tcp.receiver());
            let delivered = receiver.delivered_bytes();
            assert!(
                delivered <= sender.snd_nxt(),
                "flow {}: delivered {delivered} beyond snd_nxt {}",
                f.name,
                sender.snd_nxt()
            );
            assert!(
                sender.snd_una() <= delivered,
                "flow {}: acknowledged {} beyond delivered {delivered}",
                f.name,
                sender.snd_una()
            );
            if sender.is_finished() {
                assert_eq!(delivered, sender.snd_una(), "flow {}", f.name);
            }
        }
        if let Some(d) = f.transport.as_datagram() {
            let (next_seq, received_packets) = (d.sent_packets(), d.received_packets());
            assert!(
                received_packets <= next_seq && next_seq == f.meters.data_packets_sent,
                "flow {}: received {received_packets} of {next_seq} datagrams",
                f.name
            );
        }
    }
    // A finite transfer delivers at most its size.
    for (f, spec) in sim.flows().iter().zip(&scenario.flows) {
        assert_eq!(f.name, spec.name);
        let bytes = spec
            .kind
            .spec()
            .param("bytes")
            .and_then(|_| spec.kind.params().opt_size("bytes"));
        if let (Some(tcp), Some(bytes)) = (f.transport.as_tcp(), bytes) {
            let receiver = tcp.receiver();
            assert!(
                receiver.delivered_bytes() <= bytes,
                "flow {}: delivered {} of a {bytes} B transfer",
                f.name,
                receiver.delivered_bytes()
            );
        }
    }

    // The result tables: one row per flow and per link direction; rates over the window
    // simulated so far are finite and non-negative, NaN only while the window is empty.
    let r = sim.results();
    let window = sim
        .now()
        .min(duration)
        .saturating_sub(scenario.simulation.warmup);
    let rate_ok = |x: f64| {
        if window > SimTime::ZERO {
            x.is_finite() && x >= 0.0
        } else {
            x.is_nan()
        }
    };
    assert_eq!(r.flows.name.len(), sim.flows().len());
    assert_eq!(r.links.name.len(), sim.links().len());
    assert_eq!(r.events, sim.events_processed());
    assert_eq!(r.delivered_packets, c.data_delivered);
    for (i, name) in r.flows.name.iter().enumerate() {
        for (what, x) in [
            ("goodput", r.flows.goodput_bps[i]),
            ("throughput", r.flows.throughput_bps[i]),
        ] {
            assert!(rate_ok(x), "flow {name}: {what} {x}");
        }
        let completion = r.flows.completion_s[i];
        assert!(
            completion.is_nan() || (0.0..=duration.as_secs_f64()).contains(&completion),
            "flow {name}: completion at {completion} s"
        );
    }
    for (i, name) in r.links.name.iter().enumerate() {
        let utilization = r.links.utilization[i];
        assert!(
            rate_ok(utilization) && (utilization.is_nan() || utilization <= 1.0 + 1e-9),
            "link {name} {}: utilization {utilization}",
            r.links.direction[i]
        );
        for (what, x) in [
            ("mean queue (packets)", r.links.mean_queue_packets[i]),
            ("mean queue (bytes)", r.links.mean_queue_bytes[i]),
        ] {
            assert!(rate_ok(x), "link {name}: {what} {x}");
        }
    }
    // Jain's index is undefined (NaN) when no flow has goodput, and in [1/n, 1] otherwise.
    let any_goodput = r.flows.goodput_bps.iter().any(|&x| x > 0.0);
    assert!(
        window == SimTime::ZERO
            || (any_goodput && (0.0..=1.0 + 1e-9).contains(&r.jain_fairness))
            || (!any_goodput && r.jain_fairness.is_nan()),
        "Jain index {}",
        r.jain_fairness
    );
    for times in [&r.flow_series.time_s, &r.link_series.time_s] {
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "time series out of order"
        );
        assert!(times
            .last()
            .is_none_or(|&t| t <= duration.as_secs_f64() + 1e-9));
    }
    // Every table's columns have one length (what Python receives is rectangular).
    use crate::trace::table::Table;
    fn rectangular<T: Table>(t: &T) {
        let cols = t.columns();
        let n = t.rows();
        for (name, c) in &cols {
            assert_eq!(c.len(), n, "{}.{name}: {} rows, not {n}", T::NAME, c.len());
        }
    }
    rectangular(&r.flows);
    rectangular(&r.links);
    rectangular(&r.paths);
    rectangular(&r.flow_series);
    rectangular(&r.link_series);
    rectangular(&r.path_series);
}

// ---- Drawing a scenario from bytes ---------------------------------------------------------

/// Choices drawn from fuzz input bytes; once the bytes run out every draw is the smallest
/// value, so that any input, even an empty one, describes a scenario.
struct Draw<'a> {
    bytes: &'a [u8],
}

impl Draw<'_> {
    fn byte(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&b, rest)) => {
                self.bytes = rest;
                b
            }
            None => 0,
        }
    }

    /// A value in `lo..=hi`, from as many bytes as the span needs.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo <= hi);
        let span = hi - lo;
        let mut raw: u64 = 0;
        let mut covered: u64 = 0;
        while covered < span {
            raw = (raw << 8) | u64::from(self.byte());
            covered = (covered << 8) | 0xff;
        }
        lo + if span == u64::MAX {
            raw
        } else {
            raw % (span + 1)
        }
    }

    fn below(&mut self, n: usize) -> usize {
        self.range(0, n as u64 - 1) as usize
    }

    /// True with probability about `1 / n` (false once the bytes run out).
    fn one_in(&mut self, n: u64) -> bool {
        self.range(0, n - 1) == n - 1
    }

    fn pick<'t, T>(&mut self, items: &'t [T]) -> &'t T {
        &items[self.below(items.len())]
    }

    /// Roughly log-uniform in `lo..=hi` (`lo >= 1`): a decade, then a value inside it.
    fn log_range(&mut self, lo: u64, hi: u64) -> u64 {
        let decades = hi.ilog10() - lo.ilog10();
        let decade = self.range(0, u64::from(decades)) as u32;
        let start = (10u64.pow(lo.ilog10() + decade)).max(lo);
        let end = start.saturating_mul(10).min(hi);
        self.range(start, end)
    }

    /// A fraction in `lo..=hi` with three decimals.
    fn fraction(&mut self, lo: f64, hi: f64) -> f64 {
        let steps = self.range(0, 1000) as f64 / 1000.0;
        lo + (hi - lo) * steps
    }

    /// A duration in `lo..=hi` ns, often a round value.
    fn duration(&mut self, lo: u64, hi: u64) -> SimTime {
        let ns = match self.below(4) {
            0 => lo,
            1 => self.range(lo, hi),
            _ => self.log_range(lo.max(1), hi.max(1)).max(lo),
        };
        SimTime(ns.min(hi))
    }
}

/// A TOML string of a duration.
fn duration_text(t: SimTime) -> String {
    format!("\"{}\"", format_duration(t))
}

/// A queue table: drop-tail, RED or threshold dropper with parameters drawn from `d`.
fn queue(d: &mut Draw) -> String {
    match d.below(3) {
        0 => {
            if d.one_in(3) {
                format!(
                    "{{ kind = \"droptail\", bytes = \"{}\" }}",
                    format_size(d.log_range(1, 4_000_000))
                )
            } else {
                format!(
                    "{{ kind = \"droptail\", packets = {} }}",
                    d.log_range(1, 2_000)
                )
            }
        }
        1 => {
            let byte_mode = d.one_in(3);
            let mean = d.range(40, 1500);
            let limit = d.log_range(2, 1_000);
            let max_th = d.range(1, limit);
            let min_th = d.range(0, max_th - 1);
            let (thresholds, limit) = if byte_mode {
                (
                    format!(
                        "mode = \"bytes\", mean_packet_size = {mean}, min_th = {}, max_th = {}",
                        min_th * mean,
                        max_th * mean
                    ),
                    format!("bytes = {}", limit * mean),
                )
            } else {
                (
                    format!("min_th = {min_th}, max_th = {max_th}"),
                    format!("packets = {limit}"),
                )
            };
            format!(
                "{{ kind = \"red\", {thresholds}, {limit}, max_p = {}, w_q = {}, gentle = {}, \
                 wait = {} }}",
                d.fraction(0.001, 1.0),
                d.fraction(0.001, 1.0),
                d.one_in(2),
                d.one_in(2)
            )
        }
        _ => {
            let hold = if d.one_in(2) {
                format!(", hold = {}", duration_text(d.duration(0, 500_000_000)))
            } else {
                String::new()
            };
            format!(
                "{{ kind = \"threshold_dropper\", threshold = {}, policy = \"{}\"{hold} }}",
                d.range(0, 200),
                d.pick(&["first_arrival", "rate_independent", "largest_rate"])
            )
        }
    }
}

/// A loss table.
fn loss(d: &mut Draw) -> String {
    match d.below(3) {
        0 => format!("{{ kind = \"bernoulli\", p = {} }}", d.fraction(0.0, 0.3)),
        1 => format!(
            "{{ kind = \"periodic\", every = {}, offset = {} }}",
            d.log_range(1, 1_000),
            d.range(0, 100)
        ),
        _ => format!(
            "{{ kind = \"gilbert_elliott\", p_good_to_bad = {}, p_bad_to_good = {}, \
             loss_good = {}, loss_bad = {} }}",
            d.fraction(0.0, 0.2),
            d.fraction(0.0, 1.0),
            d.fraction(0.0, 0.05),
            d.fraction(0.0, 1.0)
        ),
    }
}

/// A registered controller, by name or as a table with some of its parameters, each drawn from
/// its declared range (required ones always given).
fn controller(d: &mut Draw) -> String {
    let spec = *d.pick(CONTROLLERS);
    let required = spec.params.iter().any(|p| p.is_required());
    if spec.params.is_empty() || (!required && d.one_in(3)) {
        return format!("\"{}\"", spec.name);
    }
    let mut table = format!("{{ name = \"{}\"", spec.name);
    for p in spec.params {
        if !p.is_required() && d.one_in(2) {
            continue;
        }
        let value = match p.draw(d.fraction(0.0, 1.0)) {
            Value::Number(x) => format!("{x:?}"),
            Value::Integer(n) | Value::Size(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Choice(c) => format!("\"{c}\""),
            Value::Duration(t) => duration_text(t),
            other => unreachable!("a controller parameter of type {}: {other}", p.ty.name()),
        };
        let _ = write!(table, ", {} = {value}", p.name);
    }
    table.push_str(" }");
    debug_assert!(spec.params.iter().all(|p| p.ty != ParamType::Controller));
    table
}

/// A period distribution of an on/off source.
fn period(d: &mut Draw) -> String {
    let mean = duration_text(d.duration(1_000, 1_000_000_000));
    if d.one_in(2) {
        format!("{{ exponential = {mean} }}")
    } else {
        format!("{{ pareto = {mean}, shape = {} }}", d.fraction(1.05, 3.0))
    }
}

/// A small scenario drawn from `data`, as TOML: a chain of 2 to 5 nodes (sometimes with two
/// parallel links) or a dumbbell (one or two hosts a side), links of 1 kbps to 100 Gbps and
/// 0 to 100 ms with random queues and loss,
/// and 1 to 4 TCP (any catalog controller), CBR or on/off flows, over at most 10 s. The draws
/// keep the values in their valid ranges, so most inputs give a valid scenario.
pub fn render_scenario(data: &[u8]) -> String {
    let d = &mut Draw { bytes: data };
    let mut out = String::new();

    let duration = d.duration(1_000_000, 10_000_000_000);
    let _ = writeln!(
        out,
        "[simulation]\nduration = {}\nseed = {}",
        duration_text(duration),
        d.range(0, u64::from(u32::MAX))
    );
    if d.one_in(4) {
        let warmup = d.duration(0, duration.as_nanos() - 1);
        let _ = writeln!(out, "warmup = {}", duration_text(warmup));
    }
    if d.one_in(3) {
        let interval = d.duration(duration.as_nanos() / 100 + 1, duration.as_nanos());
        let _ = writeln!(out, "sample_interval = {}", duration_text(interval));
    }

    // Topology: (from, to) pairs over named nodes.
    let mut pairs: Vec<(String, String)> = Vec::new();
    let chain = d.one_in(2);
    let hosts: Vec<String> = if chain {
        let n = 2 + d.below(4);
        let names: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
        for w in names.windows(2) {
            pairs.push((w[0].clone(), w[1].clone()));
        }
        if d.one_in(8) {
            // A second link beside the first: routes choose by delay.
            pairs.push((names[0].clone(), names[1].clone()));
        }
        names
    } else {
        let side = 1 + d.below(2);
        pairs.push(("left".into(), "right".into()));
        let mut h = Vec::new();
        for i in 0..side {
            pairs.push((format!("s{i}"), "left".into()));
            pairs.push(("right".into(), format!("d{i}")));
            h.push(format!("s{i}"));
            h.push(format!("d{i}"));
        }
        h
    };
    for (i, (from, to)) in pairs.iter().enumerate() {
        let rate = Rate(d.log_range(1_000, 100_000_000_000));
        let delay = d.duration(0, 100_000_000);
        let _ = writeln!(
            out,
            "\n[[link]]\nname = \"l{i}\"\nfrom = \"{from}\"\nto = \"{to}\"\nrate = \"{}\"\n\
             delay = {}",
            format_rate(rate),
            duration_text(delay)
        );
        // A one-way link often leaves a flow without a path (an invalid scenario): rarely.
        let duplex = !d.one_in(32);
        if !duplex {
            out.push_str("duplex = false\n");
        }
        if !d.one_in(3) {
            let _ = writeln!(out, "queue = {}", queue(d));
        }
        if duplex && d.one_in(4) {
            let _ = writeln!(out, "reverse_queue = {}", queue(d));
        }
        if d.one_in(4) {
            let _ = writeln!(out, "loss = {}", loss(d));
        }
        if duplex && d.one_in(8) {
            let _ = writeln!(out, "reverse_loss = {}", loss(d));
        }
    }

    if d.one_in(8) {
        let _ = writeln!(out, "\n[[node]]\nname = \"{}\"\nkind = \"host\"", hosts[0]);
    }

    if d.one_in(4) {
        let min_rto = d.duration(1_000_000, 1_000_000_000);
        let _ = writeln!(
            out,
            "\n[tcp]\nmss = {}\ninitial_window = {}\nsack = {}\ndelayed_ack = {}\n\
             min_rto = {}\nmax_rto = {}\ndelayed_ack_timeout = {}",
            d.log_range(100, 9_000),
            d.log_range(1, 100),
            !d.one_in(3),
            d.one_in(3),
            duration_text(min_rto),
            duration_text(SimTime(min_rto.as_nanos() * (1 + d.range(0, 100)))),
            duration_text(d.duration(1_000, 500_000_000))
        );
    }

    let flows = 1 + d.below(4);
    for i in 0..flows {
        let src = d.below(hosts.len());
        let dst = (src + 1 + d.below(hosts.len() - 1)) % hosts.len();
        let kind = *d.pick(&["tcp", "cbr", "onoff"]);
        let _ = writeln!(
            out,
            "\n[[flow]]\nname = \"f{i}\"\nkind = \"{kind}\"\nsrc = \"{}\"\ndst = \"{}\"",
            hosts[src], hosts[dst]
        );
        if d.one_in(4) {
            let _ = writeln!(out, "count = {}", 2 + d.below(2));
        }
        if chain && d.one_in(4) {
            // The chain's only path, written out.
            let path: Vec<String> = if src < dst {
                hosts[src..=dst]
                    .iter()
                    .map(|h| format!("\"{h}\""))
                    .collect()
            } else {
                hosts[dst..=src]
                    .iter()
                    .rev()
                    .map(|h| format!("\"{h}\""))
                    .collect()
            };
            let _ = writeln!(out, "route = [{}]", path.join(", "));
        }
        let start = if d.one_in(2) {
            SimTime::ZERO
        } else {
            d.duration(0, duration.as_nanos() / 2)
        };
        if d.one_in(4) {
            let _ = writeln!(
                out,
                "start = {{ uniform = [{}, {}] }}",
                duration_text(start),
                duration_text(SimTime(duration.as_nanos() / 2))
            );
        } else {
            let _ = writeln!(out, "start = {}", duration_text(start));
        }
        if d.one_in(4) {
            let stop = d.duration(duration.as_nanos() / 2 + 1, duration.as_nanos());
            let _ = writeln!(out, "stop = {}", duration_text(stop));
        }
        match kind {
            "tcp" => {
                let _ = writeln!(out, "cc = {}", controller(d));
                if d.one_in(2) {
                    let _ = writeln!(out, "bytes = {}", d.log_range(1, 10_000_000));
                }
                if d.one_in(4) {
                    let _ = writeln!(
                        out,
                        "mss = {}\nsack = {}\ndelayed_ack = {}\ndupack_threshold = {}",
                        d.log_range(1, 9_000),
                        d.one_in(2),
                        d.one_in(2),
                        d.range(1, 5)
                    );
                }
                if d.one_in(8) {
                    let _ = writeln!(
                        out,
                        "receive_buffer = {}\ninitial_rto = {}",
                        d.log_range(9_000, 10_000_000),
                        duration_text(d.duration(1_000, 3_000_000_000))
                    );
                }
            }
            _ => {
                let _ = writeln!(
                    out,
                    "rate = \"{}\"\npacket_size = {}",
                    format_rate(Rate(d.log_range(1_000, 10_000_000_000))),
                    if d.one_in(2) {
                        d.range(1, 65_535)
                    } else {
                        d.range(40, 1_500)
                    }
                );
                if kind == "onoff" {
                    let _ = writeln!(out, "on = {}\noff = {}", period(d), period(d));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_in_range_and_default_to_the_minimum() {
        let d = &mut Draw { bytes: &[] };
        assert_eq!(d.range(3, 9), 3);
        assert_eq!(d.log_range(1_000, 100_000_000_000), 1_000);
        let d = &mut Draw { bytes: &[0xff; 64] };
        assert!((3..=9).contains(&d.range(3, 9)));
        assert!((1_000..=100_000_000_000).contains(&d.log_range(1_000, 100_000_000_000)));
        assert_eq!(d.range(0, u64::MAX), u64::MAX);
    }

    #[test]
    fn the_empty_input_is_a_valid_scenario() {
        let text = render_scenario(&[]);
        Scenario::from_toml_str(&text, "empty", &[]).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert!(scenario_run(&[]));
    }
}
