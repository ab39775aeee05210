//! One scenario's results as one JSON line, for comparing two revisions of the simulator
//! (`scripts/same_results.sh`):
//!
//! ```text
//! cargo run --release -p plait-core --example run_summary -- SCENARIO.toml \
//!     [--seed N] [--lookahead on|off] [--set KEY=VALUE ...]
//! ```
//!
//! The line is the summary the golden test compares (`tests/golden.rs`: every result column,
//! `events`, `delivered_packets`; the flows, links and paths as records), plus `digests`: an
//! FNV-1a hash of the compact JSON of each table the summary leaves out (the time series,
//! `picks`, `drops`), so that a change there shows too. It uses only `Scenario::from_toml_str`,
//! `sim::build`, `run` and `results`, which every revision since the outbox work has.

use std::process::ExitCode;

use plait_core::scenario::Scenario;
use plait_core::sim::build;
use serde_json::{Map, Value};

/// The tables the golden summary leaves out; hashed instead.
const DIGESTED: [&str; 5] = [
    "flow_series",
    "link_series",
    "path_series",
    "picks",
    "drops",
];

/// FNV-1a, 64 bits (Fowler, Noll & Vo; offset basis 0xcbf29ce484222325, prime 0x100000001b3).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A table of columns (`{"name": [..], ..}`) as records, one per row (as `tests/golden.rs`).
fn records(columns: &Value) -> Value {
    let Some(cols) = columns.as_object() else {
        return columns.clone();
    };
    let rows = cols
        .values()
        .next()
        .map_or(0, |c| c.as_array().map_or(0, Vec::len));
    let out = (0..rows)
        .map(|i| {
            let row: Map<String, Value> = cols
                .iter()
                .map(|(k, v)| (k.clone(), v.get(i).cloned().unwrap_or(Value::Null)))
                .collect();
            Value::Object(row)
        })
        .collect();
    Value::Array(out)
}

/// The golden summary of a result, plus the digests of the tables it leaves out.
fn summary(result: &Value) -> Value {
    let flow_names = result["flows"]["name"].clone();
    let mut out = Map::new();
    let mut digests = Map::new();
    for (k, v) in result.as_object().into_iter().flatten() {
        match k.as_str() {
            k if DIGESTED.contains(&k) => {
                let text = serde_json::to_string(v).unwrap_or_default();
                digests.insert(
                    k.to_string(),
                    format!("{:016x}", fnv1a(text.as_bytes())).into(),
                );
            }
            "flows" | "links" => {
                out.insert(k.clone(), records(v));
            }
            "paths" => {
                // The summary names a path's flow, as the Python tables do.
                let mut rows = records(v);
                for row in rows.as_array_mut().into_iter().flatten() {
                    if let Some(i) = row["flow"].as_u64() {
                        row["flow"] = flow_names[i as usize].clone();
                    }
                }
                out.insert(k.clone(), rows);
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out.insert("digests".to_string(), Value::Object(digests));
    Value::Object(out)
}

struct Args {
    path: String,
    seed: Option<u64>,
    lookahead: Option<bool>,
    sets: Vec<(String, String)>,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    const USAGE: &str =
        "usage: run_summary SCENARIO.toml [--seed N] [--lookahead on|off] [--set KEY=VALUE ...]";
    let mut path = None;
    let (mut seed, mut lookahead, mut sets) = (None, None, Vec::new());
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value; {USAGE}"));
        match a.as_str() {
            "--seed" => {
                let v = value("--seed")?;
                seed =
                    Some(v.parse().map_err(|_| {
                        format!("--seed: expected a non-negative integer, got '{v}'")
                    })?);
            }
            "--lookahead" => {
                lookahead = Some(match value("--lookahead")?.as_str() {
                    "on" => true,
                    "off" => false,
                    v => return Err(format!("--lookahead: expected on or off, got '{v}'")),
                });
            }
            "--set" => {
                let v = value("--set")?;
                let (k, x) = v
                    .split_once('=')
                    .ok_or(format!("--set: expected KEY=VALUE, got '{v}'"))?;
                sets.push((k.to_string(), x.to_string()));
            }
            _ if a.starts_with("--") => return Err(format!("unknown option '{a}'; {USAGE}")),
            _ if path.is_none() => path = Some(a),
            _ => return Err(format!("one scenario only, got a second: '{a}'; {USAGE}")),
        }
    }
    Ok(Args {
        path: path.ok_or(USAGE.to_string())?,
        seed,
        lookahead,
        sets,
    })
}

fn run(args: &Args) -> Result<Value, String> {
    let text = std::fs::read_to_string(&args.path).map_err(|e| format!("{}: {e}", args.path))?;
    let mut scenario =
        Scenario::from_toml_str(&text, &args.path, &args.sets).map_err(|e| e.to_string())?;
    if let Some(on) = args.lookahead {
        scenario.simulation.lookahead = on;
    }
    let mut sim = build(&scenario, args.seed).map_err(|e| e.to_string())?;
    sim.run();
    let result = serde_json::to_value(sim.results()).map_err(|e| e.to_string())?;
    Ok(summary(&result))
}

fn main() -> ExitCode {
    match parse_args(std::env::args().skip(1)).and_then(|a| run(&a)) {
        Ok(v) => {
            println!("{v}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("run_summary: {}", e.lines().next().unwrap_or(""));
            ExitCode::from(2)
        }
    }
}
