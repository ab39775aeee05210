//! Command-line overrides (`--set key.path=value`) applied to the parsed tree before
//! validation, so an overridden value is checked exactly like one written in the file.
//!
//! A key is a dotted path with optional `[i]` indices: `simulation.seed`, `flow[0].cc`,
//! `link[1].queue.packets`, `flow[0].start.uniform[1]`. Right after `link`, `flow` or `node`, a
//! plain segment selects the entry with that name: `link.bottleneck.rate`, `flow.bulk.count`.
//! A segment may be quoted to contain dots: `link."a.b".rate`. Missing tables along the path
//! are created; missing list entries are an error.

use toml::{Table, Value};

use super::line_column;
use super::tree::{index, join, Issue};
use crate::units::{describe, toml_number_out_of_range};

/// An override that was applied: what the user wrote and the path it resolved to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Applied {
    pub key: String,
    pub value: String,
    /// The path with name selectors resolved to indices (`link[1].rate`).
    pub path: String,
}

impl Applied {
    /// True if an error at `path` is about this override's value (or something inside it).
    pub fn covers(&self, path: &str) -> bool {
        path == self.path
            || path
                .strip_prefix(self.path.as_str())
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Sections whose entries can be selected by name.
const NAMED_SECTIONS: &[(&str, &str)] = &[("link", "links"), ("flow", "flows"), ("node", "nodes")];

fn parse_key(key: &str) -> Result<Vec<Segment>, String> {
    let chars: Vec<char> = key.trim().chars().collect();
    if chars.is_empty() {
        return Err("empty key".to_string());
    }
    let mut segments = Vec::new();
    let mut i = 0;
    loop {
        // One key segment, bare or quoted.
        if chars.get(i) == Some(&'"') {
            let end = chars[i + 1..]
                .iter()
                .position(|&c| c == '"')
                .ok_or("unterminated quote")?;
            segments.push(Segment::Key(chars[i + 1..i + 1 + end].iter().collect()));
            i += end + 2;
        } else {
            let start = i;
            while i < chars.len() && !matches!(chars[i], '.' | '[' | ']' | '"') {
                i += 1;
            }
            if i == start {
                return Err("empty segment".to_string());
            }
            segments.push(Segment::Key(
                chars[start..i]
                    .iter()
                    .collect::<String>()
                    .trim()
                    .to_string(),
            ));
        }
        // Any number of [i] indices.
        while chars.get(i) == Some(&'[') {
            let end = chars[i + 1..]
                .iter()
                .position(|&c| c == ']')
                .ok_or("unclosed '['")?;
            let text: String = chars[i + 1..i + 1 + end].iter().collect();
            let n = text
                .trim()
                .parse::<usize>()
                .map_err(|_| format!("index [{text}] is not a non-negative integer"))?;
            segments.push(Segment::Index(n));
            i += end + 2;
        }
        match chars.get(i) {
            None => return Ok(segments),
            Some('.') => i += 1,
            Some(c) => return Err(format!("unexpected '{c}'")),
        }
    }
}

/// The value of an override: a TOML value when the text is one (`3`, `true`, `"x"`,
/// `{ kind = "red" }`, `["0s", "4s"]`), else the text itself as a string (`10Mbps`, `cubic`).
/// Text that starts like a table, list or quoted string but does not parse is an error (with
/// the position), as is a number out of range, rather than being taken as a string.
pub(crate) fn parse_value(text: &str) -> Result<Value, String> {
    use serde::Deserialize;
    let text = text.trim();
    let error = match Value::deserialize(toml::de::ValueDeserializer::new(text)) {
        Ok(value) => return Ok(value),
        Err(error) => error,
    };
    let at = error.span().map_or(0, |span| span.start).min(text.len());
    if let Some(message) = text.get(at..).and_then(toml_number_out_of_range) {
        return Err(message);
    }
    if !text.starts_with(['{', '[', '"', '\'']) {
        return Ok(Value::String(text.to_string()));
    }
    let message = error.message().trim();
    let at_end = at >= text.len();
    let what = match message.lines().next().unwrap_or("") {
        "invalid inline table" if at_end => "unterminated inline table".to_string(),
        "invalid array" if at_end => "unterminated list".to_string(),
        first if at_end && first.ends_with(" string") => "unterminated string".to_string(),
        "" if at_end => "unexpected end".to_string(),
        "" => "unexpected text after the value".to_string(),
        _ => message.replace('\n', ", "),
    };
    let (line, column) = line_column(text, at);
    let position = if line == 1 {
        format!("column {column}")
    } else {
        format!("line {line}, column {column}")
    };
    Err(format!(
        "value '{text}' does not parse: {what} at {position}"
    ))
}

/// Resolves `key` (an override path) in `root` without changing it: the resolved path when a
/// value is set there, else why not.
pub(crate) fn find(root: &Table, key: &str) -> Result<String, String> {
    let segments = parse_key(key).map_err(|m| format!("bad key: {m}"))?;
    let Some(Segment::Key(first)) = segments.first() else {
        return Err("a key starts with a name, not an index".to_string());
    };
    let mut current = root.get(first).ok_or("is not set in the scenario")?;
    let mut path = first.clone();
    let mut rest = &segments[1..];
    if let (Some(_), Some(Segment::Key(name)), Value::Array(entries)) = (
        NAMED_SECTIONS.iter().find(|(s, _)| s == first),
        rest.first(),
        current,
    ) {
        let i = entries
            .iter()
            .position(|e| e.get("name").and_then(Value::as_str) == Some(name.as_str()))
            .ok_or_else(|| format!("there is no {first} named '{name}'"))?;
        path = index(first, i);
        current = &entries[i];
        rest = &rest[1..];
    }
    for segment in rest {
        current = match (segment, current) {
            (Segment::Key(k), Value::Table(t)) => {
                path = join(&path, k);
                t.get(k)
            }
            (Segment::Index(i), Value::Array(items)) => {
                path = index(&path, *i);
                items.get(*i)
            }
            _ => None,
        }
        .ok_or("is not set in the scenario")?;
    }
    Ok(path)
}

/// Applies `overrides` in order (a later one wins over an earlier one on the same key).
pub(crate) fn apply(
    root: &mut Table,
    overrides: &[(String, String)],
) -> Result<Vec<Applied>, Issue> {
    let mut applied = Vec::with_capacity(overrides.len());
    for (key, text) in overrides {
        let fail = |message: String| Issue::new(format!("--set {key}"), message);
        let segments = parse_key(key).map_err(|m| fail(format!("bad key: {m}")))?;
        let value = parse_value(text).map_err(&fail)?;
        let path = set(root, &segments, value).map_err(fail)?;
        applied.push(Applied {
            key: key.clone(),
            value: text.clone(),
            path,
        });
    }
    Ok(applied)
}

/// Sets `value` at `segments` and returns the resolved path.
fn set(root: &mut Table, segments: &[Segment], value: Value) -> Result<String, String> {
    let Some(Segment::Key(first)) = segments.first() else {
        return Err("a key starts with a name, not an index".to_string());
    };
    let mut path = first.clone();
    let mut rest = &segments[1..];
    let mut current: &mut Value;
    // Top level: resolve `section.name` selectors before walking generically.
    if let Some((_, plural)) = NAMED_SECTIONS.iter().find(|(s, _)| s == first) {
        match rest.first() {
            Some(Segment::Key(name)) => {
                let entries = match root.get_mut(first) {
                    Some(Value::Array(entries)) => entries,
                    _ => return Err(format!("there is no {first} named '{name}' (0 {plural})")),
                };
                let matches: Vec<usize> = entries
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.get("name").and_then(Value::as_str) == Some(name.as_str()))
                    .map(|(i, _)| i)
                    .collect();
                let i = match matches.as_slice() {
                    [i] => *i,
                    [] => {
                        let names: Vec<&str> = entries
                            .iter()
                            .filter_map(|e| e.get("name")?.as_str())
                            .collect();
                        return Err(format!(
                            "there is no {first} named '{name}' (names: {})",
                            if names.is_empty() {
                                "none".to_string()
                            } else {
                                names.join(", ")
                            }
                        ));
                    }
                    several => {
                        return Err(format!(
                            "{} {plural} are named '{name}'; select one with {first}[i]",
                            several.len()
                        ))
                    }
                };
                path = index(first, i);
                rest = &rest[1..];
                current = &mut entries[i];
            }
            Some(Segment::Index(i)) => match root.get_mut(first) {
                Some(Value::Array(entries)) if *i < entries.len() => {
                    path = index(first, *i);
                    rest = &rest[1..];
                    current = &mut entries[*i];
                }
                other => {
                    let count = match other {
                        Some(Value::Array(entries)) => entries.len(),
                        _ => 0,
                    };
                    let noun = if count == 1 { first.as_str() } else { *plural };
                    return Err(format!("there is no {first}[{i}] ({count} {noun})"));
                }
            },
            None => {
                root.insert(first.clone(), value);
                return Ok(path);
            }
        }
    } else if rest.is_empty() {
        root.insert(first.clone(), value);
        return Ok(path);
    } else {
        current = root
            .entry(first.clone())
            .or_insert_with(|| Value::Table(Table::new()));
    }
    // Generic walk below the first level.
    while let Some((segment, tail)) = rest.split_first() {
        let is_last = tail.is_empty();
        current = match (segment, current) {
            (Segment::Key(key), Value::Table(table)) => {
                path = join(&path, key);
                if is_last {
                    table.insert(key.clone(), value);
                    return Ok(path);
                }
                if !table.contains_key(key) && matches!(tail.first(), Some(Segment::Index(_))) {
                    return Err(format!("there is no {path} to index"));
                }
                table
                    .entry(key.clone())
                    .or_insert_with(|| Value::Table(Table::new()))
            }
            (Segment::Index(i), Value::Array(items)) => {
                if *i >= items.len() {
                    return Err(format!(
                        "there is no {} (the list has {} entries)",
                        index(&path, *i),
                        items.len()
                    ));
                }
                path = index(&path, *i);
                if is_last {
                    items[*i] = value;
                    return Ok(path);
                }
                &mut items[*i]
            }
            (Segment::Key(_), other) => {
                return Err(format!("{path} is {}, not a table", describe(other)));
            }
            (Segment::Index(_), other) => {
                return Err(format!("{path} is {}, not a list", describe(other)));
            }
        };
        rest = tail;
    }
    *current = value;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_into_segments() {
        use Segment::{Index as I, Key as K};
        let k = |s: &str| K(s.to_string());
        assert_eq!(
            parse_key("simulation.seed").unwrap(),
            vec![k("simulation"), k("seed")]
        );
        assert_eq!(
            parse_key("flow[0].cc").unwrap(),
            vec![k("flow"), I(0), k("cc")]
        );
        assert_eq!(
            parse_key("flow[1].start.uniform[1]").unwrap(),
            vec![k("flow"), I(1), k("start"), k("uniform"), I(1)]
        );
        assert_eq!(
            parse_key("link.\"a.b\".rate").unwrap(),
            vec![k("link"), k("a.b"), k("rate")]
        );
        assert!(parse_key("").unwrap_err().contains("empty key"));
        assert!(parse_key("flow..cc").unwrap_err().contains("empty segment"));
        assert!(parse_key("flow[x].cc").unwrap_err().contains("[x]"));
        assert!(parse_key("flow[0.cc").unwrap_err().contains("unclosed"));
        assert!(parse_key("link.\"a").unwrap_err().contains("unterminated"));
        assert!(parse_key("flow[0]cc")
            .unwrap_err()
            .contains("unexpected 'c'"));
    }

    #[test]
    fn values_are_toml_when_possible() {
        let parse_value = |text| parse_value(text).unwrap();
        assert_eq!(parse_value("3"), Value::Integer(3));
        assert_eq!(parse_value(" 3 "), Value::Integer(3));
        assert_eq!(parse_value("true"), Value::Boolean(true));
        assert_eq!(parse_value("\"x y\""), Value::String("x y".into()));
        assert_eq!(parse_value("cubic"), Value::String("cubic".into()));
        assert_eq!(parse_value("10Mbps"), Value::String("10Mbps".into()));
        assert_eq!(parse_value("1e30s"), Value::String("1e30s".into()));
        assert_eq!(
            parse_value("99999999999999999999999ms"),
            Value::String("99999999999999999999999ms".into())
        );
        assert!(
            matches!(parse_value("{ kind = \"red\" }"), Value::Table(t) if t["kind"].as_str() == Some("red"))
        );
        // Text that would smuggle in a second key is taken literally.
        assert_eq!(
            parse_value("1\nother = 2"),
            Value::String("1\nother = 2".into())
        );
    }

    #[test]
    fn values_that_start_like_toml_must_parse() {
        assert_eq!(
            parse_value("{a = 1}\nb = 2").unwrap_err(),
            "value '{a = 1}\nb = 2' does not parse: unexpected text after the value at column 8"
        );
        assert_eq!(
            parse_value("[1,\n2").unwrap_err(),
            "value '[1,\n2' does not parse: unterminated list at line 2, column 2"
        );
        assert_eq!(
            parse_value("1e400").unwrap_err(),
            "1e400 is out of range (at most 1.7976931348623157e308)"
        );
        assert_eq!(
            parse_value("-10_000_000_000_000_000_000").unwrap_err(),
            "-10_000_000_000_000_000_000 is out of range (at least -9223372036854775808)"
        );
    }

    #[test]
    fn covers_only_the_overridden_subtree() {
        let a = Applied {
            key: "k".into(),
            value: "v".into(),
            path: "link[1].queue".into(),
        };
        assert!(a.covers("link[1].queue"));
        assert!(a.covers("link[1].queue.packets"));
        assert!(!a.covers("link[1].queue_x"));
        assert!(!a.covers("link[1]"));
        let b = Applied {
            key: "k".into(),
            value: "v".into(),
            path: "flow[1]".into(),
        };
        assert!(!b.covers("flow[10].cc"));
        assert!(b.covers("flow[1].cc"));
    }
}
