//! Scenarios: text (TOML, or JSON with the same schema) to a validated, typed [`Scenario`].
//!
//! The pipeline is: parse the text into a tree, apply `--set key=value` overrides to the tree
//! ([`overrides`]), then walk the tree once, converting units and checking every field and
//! every relation between entries ([`validate`]). The first mistake found is returned as a
//! [`ScenarioError`] naming the file, the field path as written (`link[2].queue.packets`) and
//! what was expected; nothing here panics on bad input. The schema is documented in
//! `docs/scenario.md`.

mod algorithm;
mod buffers;
mod catalog;
mod overrides;
mod schema;
mod tree;
mod unexpanded;
mod validate;

#[cfg(test)]
mod tests;

use std::fmt;
use std::path::Path;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use toml::{Table, Value};

pub use crate::units::{
    format_duration, format_number, format_rate, format_size, parse_duration, parse_rate,
    parse_size,
};
pub use catalog::{
    catalog, reference_block, regenerate_reference, CatalogEntry, ParamInfo, RangeInfo,
    REFERENCE_BLOCKS,
};
pub use schema::{
    CoupledChoice, FlowSpec, LinkEventSpec, LinkSpec, MultipathSpec, NodeKind, NodeSpec, PathSpec,
    Scenario, ScenarioWarning, SimulationSpec, StartSpec, SubflowSpec,
};

use tree::Issue;

/// A mistake in a scenario: `file: path: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file (or the label given for text input).
    pub file: String,
    /// The field path (`flow[0].cc`), `--set KEY` for a bad override, or empty for an error
    /// about the whole text (syntax errors give their line and column in the message).
    pub path: String,
    pub message: String,
}

impl ScenarioError {
    fn new(file: &str, issue: Issue) -> Self {
        ScenarioError {
            file: file.to_string(),
            path: issue.path,
            message: issue.message,
        }
    }
}

/// One line: `file: path: message`, with any control character in them (a newline in a key, a
/// name or a quoted value) escaped.
impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (file, message) = (tree::one_line(&self.file), tree::one_line(&self.message));
        if self.path.is_empty() {
            write!(f, "{file}: {message}")
        } else {
            write!(f, "{file}: {}: {message}", tree::one_line(&self.path))
        }
    }
}

impl std::error::Error for ScenarioError {}

/// One line, as a [`ScenarioError`]: `file: path: message`.
impl fmt::Display for ScenarioWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let as_error = ScenarioError {
            file: self.file.clone(),
            path: self.path.clone(),
            message: self.message.clone(),
        };
        as_error.fmt(f)
    }
}

/// 1-based line and column of a byte offset.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn parse_toml(text: &str) -> Result<Table, Issue> {
    text.parse::<Table>().map_err(|e| {
        let mut message = e.message().trim().replace('\n', "; ");
        match e.span() {
            Some(span) => {
                let (line, column) = line_column(text, span.start);
                // A number too large for TOML: show it as written.
                if let Some(rest) = text.get(span.start..) {
                    if let Some(m) = crate::units::toml_number_out_of_range(rest) {
                        message = m;
                    }
                }
                Issue::new(
                    "",
                    format!("TOML syntax error at line {line}, column {column}: {message}"),
                )
            }
            None => Issue::new("", format!("TOML syntax error: {message}")),
        }
    })
}

/// The members of one JSON object, in order and with any duplicates, their values unparsed.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'a> Deserialize<'a> for Members<'a> {
    fn deserialize<D: Deserializer<'a>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'a> Visitor<'a> for MembersVisitor {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Members<'a>, M::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

/// JSON (already checked to be well formed) to the TOML tree. `null` in an object means "not
/// given", so that a Python `None` leaves a field at its default; `null` elsewhere is an
/// error. Objects are read member by member so that a duplicate key is an error (serde_json
/// would keep the last one), and numbers from their text so that one out of range is shown
/// as written.
fn json_to_toml(raw: &RawValue, path: &str) -> Result<Option<Value>, Issue> {
    let text = raw.get().trim();
    // The whole text was parsed once already; a nested parse cannot fail on syntax.
    let nested = |e: serde_json::Error| Issue::new(path, format!("invalid JSON: {e}"));
    Ok(Some(match text.as_bytes().first() {
        Some(b'{') => {
            let Members(members) = serde_json::from_str(text).map_err(nested)?;
            let mut table = Table::new();
            let mut seen = std::collections::BTreeSet::new();
            for (key, item) in members {
                let item_path = tree::join(path, &key);
                if !seen.insert(key.clone()) {
                    return Err(Issue::new(item_path, "duplicate key"));
                }
                if let Some(v) = json_to_toml(item, &item_path)? {
                    table.insert(key, v);
                }
            }
            Value::Table(table)
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text).map_err(nested)?;
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                let item_path = tree::index(path, i);
                match json_to_toml(item, &item_path)? {
                    Some(v) => out.push(v),
                    None => return Err(Issue::new(item_path, "null is not allowed in a list")),
                }
            }
            Value::Array(out)
        }
        Some(b'"') => Value::String(serde_json::from_str(text).map_err(nested)?),
        Some(b'n') => return Ok(None),
        Some(b't') => Value::Boolean(true),
        Some(b'f') => Value::Boolean(false),
        _ if !text.contains(['.', 'e', 'E']) => match text.parse::<i64>() {
            Ok(i) => Value::Integer(i),
            Err(_) => return Err(Issue::new(path, crate::units::integer_out_of_range(text))),
        },
        _ => match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Value::Float(f),
            _ => return Err(Issue::new(path, crate::units::float_out_of_range(text))),
        },
    }))
}

/// Deepest nesting of JSON arrays and objects accepted. A scenario nests a few levels (a
/// queue's table in a link in the list of links); [`json_to_toml`] recurses once per level,
/// so without a cap a file of 15,000 `[` overflows the stack (the process dies with SIGSEGV)
/// and, parsing each level's text again, takes seconds first. 128 is serde_json's own
/// recursion limit, which skipping over a [`RawValue`] does not count.
const MAX_JSON_DEPTH: usize = 128;

/// The byte offset of the first `[` or `{` (outside strings) that opens a level deeper than
/// [`MAX_JSON_DEPTH`]: one pass over the bytes, without recursion.
fn json_too_deep(text: &str) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

fn parse_json(text: &str) -> Result<Table, Issue> {
    if let Some(offset) = json_too_deep(text) {
        let (line, column) = line_column(text, offset);
        return Err(Issue::new(
            "",
            format!(
                "JSON nested deeper than {MAX_JSON_DEPTH} levels at line {line}, column \
                 {column}; a scenario needs a few"
            ),
        ));
    }
    let value: &RawValue = serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        let message = full.split(" at line ").next().unwrap_or(&full);
        Issue::new(
            "",
            format!(
                "JSON syntax error at line {}, column {}: {message}",
                e.line(),
                e.column()
            ),
        )
    })?;
    if !value.get().trim_start().starts_with('{') {
        return Err(Issue::new("", "expected a JSON object at the top level"));
    }
    match json_to_toml(value, "")? {
        Some(Value::Table(table)) => Ok(table),
        _ => Err(Issue::new("", "expected a JSON object at the top level")),
    }
}

impl Scenario {
    /// Parses and validates a TOML scenario. `source` names it in errors (usually the file
    /// name); `overrides` are `(key.path, value)` pairs applied before validation.
    pub fn from_toml_str(
        text: &str,
        source: &str,
        overrides: &[(String, String)],
    ) -> Result<Scenario, ScenarioError> {
        let root = parse_toml(text).map_err(|i| ScenarioError::new(source, i))?;
        Self::from_tree(root, source, overrides)
    }

    /// As [`Scenario::from_toml_str`], for the same schema written as JSON (what a Python dict
    /// serialises to). A `null` field counts as absent.
    pub fn from_json_str(
        text: &str,
        source: &str,
        overrides: &[(String, String)],
    ) -> Result<Scenario, ScenarioError> {
        let root = parse_json(text).map_err(|i| ScenarioError::new(source, i))?;
        Self::from_tree(root, source, overrides)
    }

    /// Reads a scenario file: JSON if the name ends in `.json`, TOML otherwise.
    pub fn from_file(
        path: &Path,
        overrides: &[(String, String)],
    ) -> Result<Scenario, ScenarioError> {
        let source = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: source.clone(),
            path: String::new(),
            message: format!("cannot read the scenario file: {e}"),
        })?;
        let is_json = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
        if is_json {
            Self::from_json_str(&text, &source, overrides)
        } else {
            Self::from_toml_str(&text, &source, overrides)
        }
    }

    /// The scenario after `overrides`, validated, in a canonical form: compact JSON with the
    /// keys of every table sorted and without the `[sweep]` section (which changes no run).
    /// Inputs with the same canonical form run identically for a given seed, however they were
    /// written (TOML or JSON, in the file or by override); the sweep runner keys stored results
    /// by its hash. `json` selects the input format. Returns the validated scenario too.
    pub fn canonical_json(
        text: &str,
        source: &str,
        json: bool,
        overrides: &[(String, String)],
    ) -> Result<(Scenario, String), ScenarioError> {
        let parsed = if json {
            parse_json(text)
        } else {
            parse_toml(text)
        };
        let mut root = parsed.map_err(|i| ScenarioError::new(source, i))?;
        let scenario = Self::apply_and_validate(&mut root, source, overrides)?;
        root.remove(schema::SWEEP_SECTION);
        let canonical = serde_json::to_string(&root).map_err(|e| ScenarioError {
            file: source.to_string(),
            path: String::new(),
            message: format!("cannot write the scenario as JSON: {e}"),
        })?;
        Ok((scenario, canonical))
    }

    /// The canonical form of [`Scenario::canonical_json`] without validating or expanding the
    /// scenario: the same string for a valid one. For a sweep point too large to make (its
    /// run is refused for memory, cheaply, where it runs).
    pub fn canonical_json_unchecked(
        text: &str,
        source: &str,
        json: bool,
        overrides: &[(String, String)],
    ) -> Result<String, ScenarioError> {
        let parsed = if json {
            parse_json(text)
        } else {
            parse_toml(text)
        };
        let mut root = parsed.map_err(|i| ScenarioError::new(source, i))?;
        overrides::apply(&mut root, overrides).map_err(|i| ScenarioError::new(source, i))?;
        root.remove(schema::SWEEP_SECTION);
        serde_json::to_string(&root).map_err(|e| ScenarioError {
            file: source.to_string(),
            path: String::new(),
            message: format!("cannot write the scenario as JSON: {e}"),
        })
    }

    fn from_tree(
        mut root: Table,
        source: &str,
        overrides: &[(String, String)],
    ) -> Result<Scenario, ScenarioError> {
        Self::apply_and_validate(&mut root, source, overrides)
    }

    fn apply_and_validate(
        root: &mut Table,
        source: &str,
        overrides: &[(String, String)],
    ) -> Result<Scenario, ScenarioError> {
        let applied =
            overrides::apply(root, overrides).map_err(|i| ScenarioError::new(source, i))?;
        validate::scenario(root, source).map_err(|mut issue| {
            // Point at the override when the bad value came from one.
            if let Some(o) = applied.iter().rev().find(|o| o.covers(&issue.path)) {
                issue.message = format!("{} (from --set {}={})", issue.message, o.key, o.value);
            }
            ScenarioError::new(source, issue)
        })
    }

    /// The flow named `name` (after `count` expansion), if any.
    pub fn flow(&self, name: &str) -> Option<&FlowSpec> {
        self.flows.iter().find(|f| f.name == name)
    }

    /// The link named `name`, if any.
    pub fn link(&self, name: &str) -> Option<&LinkSpec> {
        self.links.iter().find(|l| l.name == name)
    }

    /// The node named `name`, if any.
    pub fn node(&self, name: &str) -> Option<&NodeSpec> {
        self.nodes.iter().find(|n| n.name == name)
    }
}
