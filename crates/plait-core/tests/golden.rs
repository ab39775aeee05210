//! Golden results: every deterministic field of the JSON summary of each scenario in
//! `tests/golden/*.toml`, compared exactly with `tests/golden/*.json`.
//!
//! A change that alters a simulation result on purpose regenerates them with
//!
//! ```text
//! make golden        # PLAIT_BLESS=1 cargo test --release -p plait-core --test golden
//! ```
//!
//! and says why in its note. The Python suite (`tests/python/test_golden.py`) compares the
//! summary `plait run --json` prints with the same files, so a column lost on its way to
//! Python fails too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plait_core::scenario::Scenario;
use plait_core::sim::build;
use serde_json::{Map, Value};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

fn scenarios() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .expect("tests/golden exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    out.sort();
    out
}

/// A table of columns (`{"name": [..], "goodput_bps": [..]}`) as records, one per row, the way
/// the JSON summary writes it.
fn records(columns: &Value) -> Value {
    let cols = columns
        .as_object()
        .expect("a result table is an object of columns");
    let rows = cols
        .values()
        .next()
        .map_or(0, |c| c.as_array().map_or(0, Vec::len));
    let mut out = Vec::with_capacity(rows);
    for i in 0..rows {
        let mut row = Map::new();
        for (k, v) in cols {
            let col = v.as_array().expect("a column is an array");
            assert_eq!(
                col.len(),
                rows,
                "column {k} has {} rows, not {rows}",
                col.len()
            );
            row.insert(k.clone(), col[i].clone());
        }
        out.push(Value::Object(row));
    }
    Value::Array(out)
}

/// The JSON summary of a run (as `plait run --json` writes it, without `wall_seconds`).
pub fn summary(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("readable scenario");
    let scenario = Scenario::from_toml_str(&text, &path.display().to_string(), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario, None).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    let result = serde_json::to_value(sim.results()).expect("results serialise");
    let flow_names = result["flows"]["name"].clone();
    let mut out = Map::new();
    for (k, v) in result.as_object().expect("an object") {
        match k.as_str() {
            "flow_series" | "link_series" | "path_series" | "picks" | "drops" => {}
            "flows" | "links" => {
                out.insert(k.clone(), records(v));
            }
            "paths" => {
                // The summary names a path's flow, as the Python tables do.
                let mut rows = records(v);
                for row in rows.as_array_mut().expect("records") {
                    let i = row["flow"].as_u64().expect("a flow index") as usize;
                    row["flow"] = flow_names[i].clone();
                }
                out.insert(k.clone(), rows);
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// Every leaf of a summary by a readable path: `flows[bulk.3].goodput_bps`.
fn leaves(v: &Value, prefix: String, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let label = x
                    .get("name")
                    .and_then(Value::as_str)
                    .map(|n| match x.get("direction").and_then(Value::as_str) {
                        Some(d) => format!("{n}:{d}"),
                        None => n.to_string(),
                    })
                    .unwrap_or_else(|| i.to_string());
                leaves(x, format!("{prefix}[{label}]"), out);
            }
        }
        _ => {
            out.insert(prefix, v.clone());
        }
    }
}

/// The fields that differ, one line each; empty when identical.
fn diff(expected: &Value, actual: &Value) -> Vec<String> {
    let (mut e, mut a) = (BTreeMap::new(), BTreeMap::new());
    leaves(expected, String::new(), &mut e);
    leaves(actual, String::new(), &mut a);
    let mut out = Vec::new();
    for (k, ev) in &e {
        match a.get(k) {
            None => out.push(format!("  {k}: {ev} -> (missing)")),
            Some(av) if av != ev => out.push(format!("  {k}: {ev} -> {av}")),
            _ => {}
        }
    }
    for (k, av) in &a {
        if !e.contains_key(k) {
            out.push(format!("  {k}: (new) -> {av}"));
        }
    }
    out
}

#[test]
fn golden_results_unchanged() {
    let bless = std::env::var_os("PLAIT_BLESS").is_some_and(|v| v == "1");
    let files = scenarios();
    assert!(files.len() >= 9, "golden scenarios missing: {files:?}");
    let mut failures = Vec::new();
    for toml in &files {
        let json = toml.with_extension("json");
        let actual = summary(toml);
        if bless {
            let text = serde_json::to_string_pretty(&actual).expect("serialises") + "\n";
            std::fs::write(&json, text).expect("golden file written");
            continue;
        }
        let expected: Value = match std::fs::read_to_string(&json) {
            Ok(t) => serde_json::from_str(&t).expect("golden file is JSON"),
            Err(e) => {
                failures.push(format!("{}: {e} (run `make golden`)", json.display()));
                continue;
            }
        };
        let d = diff(&expected, &actual);
        if !d.is_empty() {
            let name = toml.file_stem().unwrap().to_string_lossy();
            failures.push(format!(
                "{name}: {} field(s) changed\n{}",
                d.len(),
                d.join("\n")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "golden results changed (regenerate on purpose with `make golden` and say why):\n{}",
        failures.join("\n")
    );
}

#[test]
fn diff_names_changed_missing_and_new_fields() {
    let e: Value = serde_json::json!({"flows": [{"name": "a", "x": 1.5, "y": 2}], "events": 3});
    let a: Value = serde_json::json!({"flows": [{"name": "a", "x": 1.25, "z": 0}], "events": 3});
    let d = diff(&e, &a);
    assert_eq!(
        d,
        vec![
            "  flows[a].x: 1.5 -> 1.25".to_string(),
            "  flows[a].y: 2 -> (missing)".to_string(),
            "  flows[a].z: (new) -> 0".to_string(),
        ]
    );
    assert!(diff(&e, &e).is_empty());
}
