//! Reading the parsed TOML tree with field paths: typed getters, unknown-key checks with a
//! "did you mean" hint, and the `kind = "..."` tables whose allowed keys depend on the kind.

use toml::{Table, Value};

use crate::units::describe;

/// One mistake found in the tree: the field path (`link[2].queue.packets`) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Issue {
    pub path: String,
    pub message: String,
}

impl Issue {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Issue {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// `path.key`, or `key` at the top level.
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// Whether `c` changes how the text around it is shown rather than showing itself: the
/// bidirectional controls (embeddings, overrides, isolates and marks, which can reorder a
/// message: "Trojan Source", CVE-2021-42574) and the line and paragraph separators.
pub(crate) fn is_invisible_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// `text` with control characters (newlines, tabs) and bidirectional controls escaped, so that
/// an error quoting user text stays on one line and reads in the order it was written.
pub(crate) fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() || is_invisible_control(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
pub(crate) fn closest<'c>(word: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let limit = match word.chars().count() {
        0..=3 => 1,
        4..=6 => 2,
        _ => 3,
    };
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `" (did you mean 'x'?)"` when a close candidate exists, else nothing.
pub(crate) fn did_you_mean(word: &str, candidates: &[&str]) -> String {
    match closest(word, candidates) {
        Some(c) => format!("; did you mean '{c}'?"),
        None => String::new(),
    }
}

/// A sorted, comma-separated list of names.
pub(crate) fn listing(names: &[&str]) -> String {
    let mut names = names.to_vec();
    names.sort_unstable();
    names.dedup();
    names.join(", ")
}

/// A table of the tree together with its path.
#[derive(Clone, Copy)]
pub(crate) struct Fields<'a> {
    pub path: &'a str,
    pub table: &'a Table,
}

impl<'a> Fields<'a> {
    pub fn new(path: &'a str, table: &'a Table) -> Self {
        Fields { path, table }
    }

    /// The table at `value`, or an error naming `path`.
    pub fn of(path: &'a str, value: &'a Value) -> Result<Self, Issue> {
        match value {
            Value::Table(table) => Ok(Fields { path, table }),
            other => Err(Issue::new(
                path,
                format!("expected a table, got {}", describe(other)),
            )),
        }
    }

    pub fn at(&self, key: &str) -> String {
        join(self.path, key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.table.contains_key(key)
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.table.get(key)
    }

    /// Rejects any key not in `allowed`, suggesting the closest allowed one.
    pub fn check_keys(&self, allowed: &[&str]) -> Result<(), Issue> {
        for key in self.table.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(unknown_field(&self.at(key), key, allowed, "field"));
            }
        }
        Ok(())
    }

    /// The value at `key` parsed by `parse`, or `None` when absent.
    pub fn opt<T>(
        &self,
        key: &str,
        parse: impl FnOnce(&Value) -> Result<T, String>,
    ) -> Result<Option<T>, Issue> {
        match self.table.get(key) {
            None => Ok(None),
            Some(value) => parse(value)
                .map(Some)
                .map_err(|m| Issue::new(self.at(key), m)),
        }
    }

    /// The value at `key` parsed by `parse`; `expected` describes it when it is missing.
    pub fn req<T>(
        &self,
        key: &str,
        expected: &str,
        parse: impl FnOnce(&Value) -> Result<T, String>,
    ) -> Result<T, Issue> {
        match self.opt(key, parse)? {
            Some(v) => Ok(v),
            None => Err(Issue::new(
                self.at(key),
                format!("missing required field ({expected})"),
            )),
        }
    }

    /// Reads a `kind`-like discriminator and checks the keys of the table against the kind.
    ///
    /// `kinds` lists each kind with the keys it accepts. Keys are checked before a missing
    /// discriminator is reported, so that a misspelt discriminator key gets a hint rather than
    /// a "missing" error. `default` is the kind of a table without a discriminator (its keys are
    /// then checked against that kind); without a default the discriminator is required. `noun`
    /// names the discriminator in messages (`"queue kind"`, `"controller"`)
    /// and `family` the things being described (`"queues"`).
    pub fn kind<'k>(
        &self,
        key: &str,
        kinds: &[(&'k str, &[&str])],
        noun: &str,
        family: &str,
        default: Option<&'k str>,
    ) -> Result<&'k str, Issue> {
        let names: Vec<&str> = kinds.iter().map(|(name, _)| *name).collect();
        let chosen = match self.table.get(key) {
            None => default.and_then(|d| kinds.iter().find(|(name, _)| *name == d)),
            Some(Value::String(s)) => match kinds.iter().find(|(name, _)| name == s) {
                Some(entry) => Some(entry),
                None => {
                    return Err(Issue::new(
                        self.at(key),
                        format!("unknown {noun} '{s}' (known: {})", listing(&names)),
                    ))
                }
            },
            Some(other) => {
                return Err(Issue::new(
                    self.at(key),
                    format!(
                        "expected one of {}, got {}",
                        listing(&names),
                        describe(other)
                    ),
                ))
            }
        };
        let mut all: Vec<&str> = kinds
            .iter()
            .flat_map(|(_, keys)| keys.iter().copied())
            .collect();
        all.sort_unstable();
        all.dedup();
        for field in self.table.keys() {
            let field = field.as_str();
            match chosen {
                Some((name, keys)) if !keys.contains(&field) => {
                    if all.contains(&field) {
                        let owners: Vec<&str> = kinds
                            .iter()
                            .filter(|(_, keys)| keys.contains(&field))
                            .map(|(name, _)| *name)
                            .collect();
                        return Err(Issue::new(
                            self.at(field),
                            format!(
                                "not a field of {name} {family} (used by: {})",
                                listing(&owners)
                            ),
                        ));
                    }
                    return Err(unknown_field(&self.at(field), field, keys, "field"));
                }
                None if !all.contains(&field) => {
                    return Err(unknown_field(&self.at(field), field, &all, "field"));
                }
                _ => {}
            }
        }
        match chosen {
            Some((name, _)) => Ok(name),
            None => Err(Issue::new(
                self.at(key),
                format!("missing required field (one of: {})", listing(&names)),
            )),
        }
    }

    /// The entries of an array of tables at `key` (empty when absent), each with its path.
    pub fn array_of_tables(&self, key: &str) -> Result<Vec<(String, &'a Table)>, Issue> {
        match self.table.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let path = index(&self.at(key), i);
                    match item {
                        Value::Table(table) => Ok((path, table)),
                        other => Err(Issue::new(
                            path,
                            format!("expected a table, got {}", describe(other)),
                        )),
                    }
                })
                .collect(),
            Some(Value::Table(_)) => Err(Issue::new(
                self.at(key),
                format!("expected a list of tables: write [[{key}]] for each entry, not [{key}]"),
            )),
            Some(other) => Err(Issue::new(
                self.at(key),
                format!(
                    "expected a list of tables ([[{key}]]), got {}",
                    describe(other)
                ),
            )),
        }
    }
}

/// `path: unknown field (expected one of: ...); did you mean '...'?`
pub(crate) fn unknown_field(path: &str, key: &str, allowed: &[&str], noun: &str) -> Issue {
    Issue::new(
        path,
        format!(
            "unknown {noun} (expected one of: {}){}",
            allowed.join(", "),
            did_you_mean(key, allowed)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("qeue", "queue"), 1);
        assert_eq!(edit_distance("rate", "rate"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn closest_only_suggests_plausible_typos() {
        let keys = ["name", "from", "to", "rate", "delay", "queue"];
        assert_eq!(closest("qeue", &keys), Some("queue"));
        assert_eq!(closest("rat", &keys), Some("rate"));
        // Short words only match a single edit away.
        assert_eq!(closest("rat", &["dst"]), None);
        assert_eq!(closest("bandwidth", &keys), None);
    }
}
