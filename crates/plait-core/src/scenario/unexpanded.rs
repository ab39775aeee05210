//! A scenario read without expanding `count`: one flow per `[[flow]]` entry, with the entry's
//! count beside it. What the memory estimate needs (`sim::budget`), at the cost of a few flows
//! whatever the counts, so that a run of a million flows is refused without first building a
//! million flows.

use toml::{Table, Value};

use super::schema::{Scenario, MAX_COUNT};
use super::{overrides, parse_json, parse_toml, validate, ScenarioError};

impl Scenario {
    /// The scenario with every flow entry read once (its `count` set aside), and the counts,
    /// one per flow. Events are left out: they change no estimate, and a flow event may name a
    /// copy (`bulk.3`) that this reading does not make. When this reading fails where the full
    /// one might not (two entries that only differ after expansion: `a` with `count = 2` beside
    /// an `a`), the full reading decides: its error, or the expanded flows with counts of 1.
    pub fn unexpanded(
        text: &str,
        source: &str,
        json: bool,
        overrides: &[(String, String)],
    ) -> Result<(Scenario, Vec<u64>), ScenarioError> {
        let parsed = if json {
            parse_json(text)
        } else {
            parse_toml(text)
        };
        let root = parsed.map_err(|i| ScenarioError::new(source, i))?;
        let mut reduced = root.clone();
        if overrides::apply(&mut reduced, overrides).is_ok() {
            let counts = set_counts_aside(&mut reduced);
            if let Ok(scenario) = validate::scenario(&reduced, source) {
                if scenario.flows.len() == counts.len() {
                    return Ok((scenario, counts));
                }
            }
        }
        let scenario = Self::from_tree(root, source, overrides)?;
        let counts = vec![1; scenario.flows.len()];
        Ok((scenario, counts))
    }
}

/// Removes `count` from every flow entry where it is valid (1 to `MAX_COUNT`; an invalid one
/// stays for validation to name), and the events; returns each entry's count.
fn set_counts_aside(root: &mut Table) -> Vec<u64> {
    root.remove("event");
    let Some(Value::Array(entries)) = root.get_mut("flow") else {
        return Vec::new();
    };
    entries
        .iter_mut()
        .map(|entry| {
            let Value::Table(table) = entry else {
                return 1;
            };
            match table.get("count") {
                Some(&Value::Integer(n)) if n >= 1 && n as u64 <= MAX_COUNT => {
                    table.remove("count");
                    n as u64
                }
                _ => 1,
            }
        })
        .collect()
}
