//! What a scenario can name, for `plait list` and for the reference page: the registry's
//! controllers, queues, sources and loss models (`crate::registry`), each with every field of
//! each parameter. Nothing here is written by hand: the listing and the generated tables of
//! `docs/scenario.md` ([`reference_block`]) are both read from the declarations, so they cannot
//! disagree with the parser, which reads the same declarations.

use serde::Serialize;

use crate::registry::{Category, Default, Entry, Param, ParamType, Scalar};
use crate::units::{format_duration, format_rate, format_size};

/// Shown as the default of a parameter that must be given.
pub const REQUIRED: &str = "required";
/// Shown as the default of an optional parameter that is unset unless given.
pub const UNSET: &str = "none";

/// One thing a scenario can name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CatalogEntry {
    /// `"controller"`, `"queue"`, `"source"` or `"loss"`.
    pub category: String,
    /// The name used in a scenario (`cc = "cubic"`, `kind = "red"`, ...).
    pub name: String,
    pub description: String,
    pub params: Vec<ParamInfo>,
}

/// One parameter of a catalog entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParamInfo {
    pub name: String,
    /// `number`, `integer`, `bool`, `size`, `duration`, `rate`, `probability`, `choice`,
    /// `number or size`, `period` or `controller`.
    #[serde(rename = "type")]
    pub ty: String,
    /// The unit of a number (`"MSS per RTT"`, `"packets"`); empty when the type says it.
    pub unit: String,
    /// The default as it would be written in a scenario, or [`REQUIRED`] / [`UNSET`].
    pub default: String,
    pub required: bool,
    /// For a parameter unset by default: what leaving it out means.
    pub when_unset: Option<String>,
    /// Allowed values, in the base unit of the type (bytes, seconds, bit/s); `None` when
    /// unbounded.
    pub range: Option<RangeInfo>,
    /// The range as the documentation writes it (`> 0`, `(0, 1]`); empty when unbounded.
    pub range_text: String,
    /// The allowed strings of a `choice`.
    pub choices: Option<Vec<String>>,
    /// The scenario section that may give this parameter a default for every entry (`tcp`).
    pub section: Option<String>,
    pub description: String,
}

/// Bounds of a parameter's range; a missing bound is `None`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RangeInfo {
    pub min: Option<f64>,
    pub min_inclusive: bool,
    pub max: Option<f64>,
    pub max_inclusive: bool,
}

/// The order of the categories in listings and in the reference page.
const CATEGORIES: [Category; 6] = [
    Category::Controller,
    Category::Coupled,
    Category::Scheduler,
    Category::Queue,
    Category::Source,
    Category::Loss,
];

/// The declarations of a category, sorted by name.
fn entries(category: Category) -> Vec<Entry> {
    let mut entries = category.entries();
    entries.sort_by_key(|e| e.name);
    entries
}

/// Everything a scenario can name, grouped by category and sorted by name within one.
pub fn catalog() -> Vec<CatalogEntry> {
    CATEGORIES
        .iter()
        .flat_map(|&c| entries(c))
        .map(|e| CatalogEntry {
            category: e.category.name().to_string(),
            name: e.name.to_string(),
            description: e.summary.to_string(),
            params: e.params.iter().map(|p| param_info(e, p)).collect(),
        })
        .collect()
}

fn param_info(entry: Entry, p: &Param) -> ParamInfo {
    ParamInfo {
        name: p.name.to_string(),
        ty: p.ty.name().to_string(),
        unit: p.unit.to_string(),
        default: match p.default {
            Default::Required => REQUIRED.to_string(),
            Default::Unset(_) => UNSET.to_string(),
            Default::Value(s) => scalar_text(s),
        },
        required: p.is_required(),
        when_unset: match p.default {
            Default::Unset(meaning) => Some(meaning.to_string()),
            _ => None,
        },
        range: (!p.range.is_unbounded()).then(|| RangeInfo {
            min: p.range.min.value(),
            min_inclusive: p.range.min.is_inclusive(),
            max: p.range.max.value(),
            max_inclusive: p.range.max.is_inclusive(),
        }),
        range_text: p.range.text().unwrap_or_default(),
        choices: match p.ty {
            ParamType::Choice(options) => Some(options.iter().map(|o| o.to_string()).collect()),
            _ => None,
        },
        section: p.in_section.then(|| section_of(entry.name).to_string()),
        description: p.doc.to_string(),
    }
}

/// The section that gives a source's `in_section` parameters their defaults (its protocol's).
fn section_of(source: &str) -> &'static str {
    crate::protocol::find(source)
        .and_then(|p| p.section)
        .expect("a source with parameters in a section names the section")
}

/// A size as a scenario would write it: a plain number of bytes, or with a binary unit when
/// that is exact (`64MiB`).
fn size_text(bytes: u64) -> String {
    let text = format_size(bytes);
    if text.ends_with("iB") {
        text
    } else {
        bytes.to_string()
    }
}

/// A default as it would be written on the command line (`--set key=value`): `0.5`, `40ms`,
/// `first_arrival`.
fn scalar_text(s: Scalar) -> String {
    match s {
        Scalar::Number(x) => x.to_string(),
        Scalar::Integer(n) => n.to_string(),
        Scalar::Bool(b) => b.to_string(),
        Scalar::Size(n) => size_text(n),
        Scalar::Duration(t) => format_duration(t),
        Scalar::Rate(r) => format_rate(r),
        Scalar::Name(n) => n.to_string(),
    }
}

/// A default as a TOML file writes it, strings quoted: `0.5`, `"40ms"`, `"first_arrival"`.
fn scalar_toml(s: Scalar) -> String {
    match s {
        Scalar::Duration(_) | Scalar::Rate(_) | Scalar::Name(_) => {
            format!("\"{}\"", scalar_text(s))
        }
        Scalar::Size(n) if !size_text(n).chars().all(|c| c.is_ascii_digit()) => {
            format!("\"{}\"", size_text(n))
        }
        _ => scalar_text(s),
    }
}

// ---- The reference page --------------------------------------------------------------------

/// The blocks of `docs/scenario.md` generated from the registry, by marker name: each sits
/// between `<!-- registry:NAME -->` and `<!-- /registry -->`.
pub const REFERENCE_BLOCKS: &[&str] = &[
    "controllers",
    "coupled",
    "schedulers",
    "queues",
    "losses",
    "sources",
    "tcp",
];

/// The text of the generated block `name` of the reference page (one of
/// [`REFERENCE_BLOCKS`]), without its markers.
pub fn reference_block(name: &str) -> Option<String> {
    let category = match name {
        "controllers" => Category::Controller,
        "coupled" => Category::Coupled,
        "schedulers" => Category::Scheduler,
        "queues" => Category::Queue,
        "losses" => Category::Loss,
        "sources" => Category::Source,
        "tcp" => {
            let tcp = entries(Category::Source)
                .into_iter()
                .find(|e| e.name == "tcp")?;
            let settings: Vec<&Param> = tcp.params.iter().filter(|p| p.in_section).collect();
            return Some(table(&settings));
        }
        _ => return None,
    };
    let mut out = String::new();
    for entry in entries(category) {
        out.push_str(&format!("**`{}`**: {}.", entry.name, entry.summary));
        let own: Vec<&Param> = entry.params.iter().filter(|p| !p.in_section).collect();
        let shared = entry.params.len() - own.len();
        if own.is_empty() && shared == 0 {
            out.push_str(" No parameters.\n\n");
            continue;
        }
        out.push_str("\n\n");
        out.push_str(&table(&own));
        if shared > 0 {
            out.push_str(&format!(
                "\nAnd every key of [`[{0}]`](#{0}-optional) ({shared} settings), which overrides \
                 the section for this flow.\n",
                section_of(entry.name)
            ));
        }
        out.push('\n');
    }
    Some(out.trim_end().to_string() + "\n")
}

/// A Markdown table of parameters: key, type (with unit), default, range, meaning.
fn table(params: &[&Param]) -> String {
    let mut out =
        String::from("| Key | Type | Default | Range | Meaning |\n|---|---|---|---|---|\n");
    for p in params {
        let ty = match p.ty {
            ParamType::Choice(options) => {
                let quoted: Vec<String> = options.iter().map(|o| format!("`\"{o}\"`")).collect();
                quoted.join(" or ")
            }
            _ if p.unit.is_empty() => p.ty.name().to_string(),
            _ => format!("{} ({})", p.ty.name(), p.unit),
        };
        let default = match p.default {
            Default::Required => REQUIRED.to_string(),
            Default::Unset(meaning) => format!("unset: {meaning}"),
            Default::Value(s) => format!("`{}`", scalar_toml(s)),
        };
        let range = p.range.text().unwrap_or_default();
        out.push_str(&format!(
            "| `{}` | {ty} | {default} | {range} | {} |\n",
            p.name, p.doc
        ));
    }
    out
}

/// `text` with every generated block replaced by what the registry gives now. Errors name a
/// block whose markers are missing or unbalanced.
pub fn regenerate_reference(text: &str) -> Result<String, String> {
    let mut out = text.to_string();
    for name in REFERENCE_BLOCKS {
        let open = format!("<!-- registry:{name} -->\n");
        let close = "<!-- /registry -->";
        let start = out
            .find(&open)
            .ok_or_else(|| format!("no `{}` marker", open.trim_end()))?
            + open.len();
        let end = out[start..]
            .find(close)
            .ok_or_else(|| format!("no `{close}` after `{}`", open.trim_end()))?
            + start;
        let block = reference_block(name).expect("a known block");
        out.replace_range(start..end, &block);
    }
    Ok(out)
}
