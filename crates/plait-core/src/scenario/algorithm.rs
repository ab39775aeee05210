//! Reading an algorithm (a controller, queue, loss model or source) from the tree by its
//! registry declaration (`crate::registry`): the name, the keys allowed, each parameter's
//! type, unit and range, the defaults (and those a section such as `[tcp]` gives), and the
//! algorithm's own checks that relate its parameters. Nothing here knows a particular
//! algorithm.

use toml::Value as Toml;

use super::tree::{did_you_mean, join, listing, Fields, Issue};
use crate::registry::{
    find, names, AlgorithmSpec, Configured, Kind, Origin, Param, ParamType, Params, Period, Value,
};
use crate::time::SimTime;
use crate::transport::cc::{CcSpec, ControllerKind};
use crate::units::{
    bool_value, describe, duration_value, number_value, probability_value, rate_value, size_value,
    string_value, uint_value, EXPECT_DURATION, EXPECT_RATE, EXPECT_SIZE,
};

/// Defaults given by a section of the scenario (`[tcp]`) for the parameters of an algorithm
/// declared [`in_section`](Param::in_section).
pub(crate) struct Section<'a> {
    /// The section's path (`tcp`), where a problem with an inherited value is reported.
    pub path: &'a str,
    pub params: &'a Params,
}

/// The algorithm of category `K` that `table` names by its discriminator `key` (`kind`,
/// `name`), `default` when the key is absent, after checking every key of the table against
/// it: its parameters, `key` and the `common` keys every entry of the table's kind accepts.
/// `noun` names the discriminator in messages (`"queue kind"`) and `family` the algorithms
/// (`"queues"`).
pub(crate) fn choose<K: Kind>(
    table: &Fields,
    key: &str,
    noun: &str,
    family: &str,
    default: Option<&str>,
    common: &[&'static str],
) -> Result<&'static AlgorithmSpec<K>, Issue> {
    choose_with::<K>(table, key, noun, family, default, common, &[])
}

/// [`choose`], where the algorithms named in `more` accept their listed keys besides their
/// parameters (keys the scenario reader reads itself, such as an MPTCP flow's `subflows`).
pub(crate) fn choose_with<K: Kind>(
    table: &Fields,
    key: &str,
    noun: &str,
    family: &str,
    default: Option<&str>,
    common: &[&'static str],
    more: &[(&str, &[&'static str])],
) -> Result<&'static AlgorithmSpec<K>, Issue> {
    let keys: Vec<(&'static str, Vec<&str>)> = K::registry()
        .iter()
        .map(|spec| {
            let mut keys: Vec<&str> = Vec::new();
            if !common.contains(&key) {
                keys.push(key);
            }
            keys.extend_from_slice(common);
            keys.extend(spec.params.iter().map(|p| p.name));
            for (name, extra) in more {
                if *name == spec.name {
                    keys.extend(
                        extra
                            .iter()
                            .filter(|k| !spec.params.iter().any(|p| p.name == **k)),
                    );
                }
            }
            (spec.name, keys)
        })
        .collect();
    let kinds: Vec<(&'static str, &[&str])> =
        keys.iter().map(|(n, k)| (*n, k.as_slice())).collect();
    let name = table.kind(key, &kinds, noun, family, default)?;
    Ok(find::<K>(name).expect("a registered name"))
}

/// The parameters of `spec` read from `table` (whose keys [`choose`] has checked): each given
/// one parsed and checked against its declaration, the others inherited from `section` or
/// defaulted, then the algorithm's own checks.
pub(crate) fn read<K: Kind>(
    table: &Fields,
    spec: &'static AlgorithmSpec<K>,
    section: Option<&Section>,
) -> Result<Configured<K>, Issue> {
    let mut params = Params::defaults(spec.params);
    if let Some(section) = section {
        for p in spec.params.iter().filter(|p| p.in_section) {
            if let (true, Some(value)) =
                (section.params.is_given(p.name), section.params.get(p.name))
            {
                params
                    .put(p.name, value.clone(), Origin::Inherited)
                    .map_err(|m| Issue::new(join(section.path, p.name), m))?;
            }
        }
    }
    for p in spec.params {
        if let Some(value) = table.get(p.name) {
            let path = table.at(p.name);
            let value = parse(p, value, &path)?;
            params
                .put(p.name, value, Origin::Given)
                .map_err(|m| Issue::new(&path, m))?;
        }
    }
    if let Some(p) = params.missing() {
        return Err(Issue::new(
            table.at(p.name),
            format!("missing required field ({})", expectation(p)),
        ));
    }
    if let Some(finish) = spec.finish {
        if let Err(issue) = finish(&mut params) {
            let path = match (issue.param, section) {
                (None, _) => table.path.to_string(),
                (Some(name), Some(s)) if params.origin(name) == Origin::Inherited => {
                    join(s.path, name)
                }
                (Some(name), _) => table.at(name),
            };
            return Err(Issue::new(path, issue.message));
        }
    }
    Ok(Configured::from_parts(spec, params))
}

/// What a value of `param` looks like, for "missing required field (...)".
pub(crate) fn expectation(param: &Param) -> String {
    let range = match param.range.text() {
        None => String::new(),
        Some(text) if text.starts_with(['(', '[']) => format!(" in {text}"),
        Some(text) => format!(" {text}"),
    };
    match param.ty {
        ParamType::Number => format!("a number{range}"),
        ParamType::Integer if param.unit.is_empty() => format!("a non-negative integer{range}"),
        ParamType::Integer => format!("a number of {}{range}", param.unit),
        ParamType::Bool => "true or false".to_string(),
        ParamType::Size => EXPECT_SIZE.to_string(),
        ParamType::Duration => EXPECT_DURATION.to_string(),
        ParamType::Rate => EXPECT_RATE.to_string(),
        ParamType::Probability => "a probability between 0 and 1".to_string(),
        ParamType::Choice(options) => format!("one of: {}", options.join(", ")),
        ParamType::NumberOrSize => format!("a number or a size{range}"),
        ParamType::Period => "a period such as { exponential = \"500ms\" }".to_string(),
        ParamType::Controller => "a controller name such as \"reno\"".to_string(),
    }
}

/// Parses `value`, found at `path`, as a value of `param`'s type (its range is checked by
/// [`Params::put`]).
fn parse(param: &Param, value: &Toml, path: &str) -> Result<Value, Issue> {
    let at = |m: String| Issue::new(path, m);
    Ok(match param.ty {
        ParamType::Number => Value::Number(number_value(value).map_err(at)?),
        ParamType::Integer => Value::Integer(uint_value(value).map_err(at)?),
        ParamType::Bool => Value::Bool(bool_value(value).map_err(at)?),
        ParamType::Size => Value::Size(size_value(value).map_err(at)?),
        ParamType::Duration => Value::Duration(duration_value(value).map_err(at)?),
        ParamType::Rate => Value::Rate(rate_value(value).map_err(at)?),
        ParamType::Probability => Value::Number(probability_value(value).map_err(at)?),
        ParamType::Choice(options) => {
            let text = string_value(value).map_err(at)?;
            match options.iter().find(|o| **o == text) {
                Some(option) => Value::Choice(option),
                None => {
                    return Err(at(format!(
                        "unknown {} '{text}' (known: {}){}",
                        param.name,
                        listing(options),
                        did_you_mean(&text, options)
                    )))
                }
            }
        }
        ParamType::NumberOrSize => match value {
            Toml::String(_) => Value::Size(size_value(value).map_err(at)?),
            _ => Value::Number(number_value(value).map_err(at)?),
        },
        ParamType::Period => Value::Period(period(path, value)?),
        ParamType::Controller => Value::Controller(controller(path, value)?),
    })
}

/// A congestion controller: a registered name (with its defaults), or a table
/// `{ name = "...", <parameters> }`.
pub(crate) fn controller(path: &str, value: &Toml) -> Result<CcSpec, Issue> {
    match value {
        Toml::String(name) => {
            let Some(spec) = find::<ControllerKind>(name) else {
                return Err(Issue::new(
                    path,
                    format!(
                        "unknown controller '{name}' (known: {})",
                        names::<ControllerKind>().join(", ")
                    ),
                ));
            };
            if let Some(p) = spec.params.iter().find(|p| p.is_required()) {
                return Err(Issue::new(
                    path,
                    format!(
                        "controller '{name}' needs its parameter `{0}` ({1}): write \
                         {{ name = \"{name}\", {0} = ... }}",
                        p.name,
                        expectation(p)
                    ),
                ));
            }
            let params = spec.check(&[]).map_err(|e| Issue::new(path, e.message))?;
            Ok(Configured::from_parts(spec, params))
        }
        Toml::Table(table) => {
            let fields = Fields::new(path, table);
            let spec =
                choose::<ControllerKind>(&fields, "name", "controller", "controllers", None, &[])?;
            read(&fields, spec, None)
        }
        other => Err(Issue::new(
            path,
            format!(
                "expected a controller name such as \"reno\" or a table such as \
                 {{ name = \"cubic\", beta = 0.7 }}, got {}",
                describe(other)
            ),
        )),
    }
}

/// An algorithm of category `K` given as a registered name (with its defaults) or as a table
/// naming it by `key` with its parameters: `"min_rtt"`, `{ kind = "capacity", gamma = 0.5 }`.
pub(crate) fn named<K: Kind>(
    path: &str,
    value: &Toml,
    key: &str,
    noun: &str,
    family: &str,
) -> Result<Configured<K>, Issue> {
    match value {
        Toml::String(name) => {
            let Some(spec) = find::<K>(name) else {
                return Err(Issue::new(
                    path,
                    format!(
                        "unknown {noun} '{name}' (known: {}){}",
                        names::<K>().join(", "),
                        did_you_mean(name, &names::<K>())
                    ),
                ));
            };
            if let Some(p) = spec.params.iter().find(|p| p.is_required()) {
                return Err(Issue::new(
                    path,
                    format!(
                        "{noun} '{name}' needs its parameter `{0}` ({1}): write \
                         {{ {key} = \"{name}\", {0} = ... }}",
                        p.name,
                        expectation(p)
                    ),
                ));
            }
            let params = spec.check(&[]).map_err(|e| Issue::new(path, e.message))?;
            Ok(Configured::from_parts(spec, params))
        }
        Toml::Table(table) => {
            let fields = Fields::new(path, table);
            let spec = choose::<K>(&fields, key, noun, family, None, &[])?;
            read(&fields, spec, None)
        }
        other => Err(Issue::new(
            path,
            format!(
                "expected a {noun} name or a table such as {{ {key} = \"...\", <parameters> }}, got {}",
                describe(other)
            ),
        )),
    }
}

/// The distributions a period may have.
const PERIOD_KINDS: &[&str] = &["exponential", "pareto"];

/// A period distribution: `{ exponential = MEAN }` or `{ pareto = MEAN, shape = K }`, MEAN a
/// duration > 0 and K > 1 (so that the mean exists).
fn period(path: &str, value: &Toml) -> Result<Period, Issue> {
    let p = Fields::of(path, value)?;
    p.check_keys(&["exponential", "pareto", "shape"])?;
    let mean = |key: &str| {
        p.opt(key, |v| {
            let t = duration_value(v)?;
            if t == SimTime::ZERO {
                Err("must be greater than zero".to_string())
            } else {
                Ok(t)
            }
        })
    };
    match (mean("exponential")?, mean("pareto")?) {
        (Some(_), Some(_)) => Err(Issue::new(path, "give exponential or pareto, not both")),
        (Some(mean), None) => {
            if p.has("shape") {
                return Err(Issue::new(p.at("shape"), "only for pareto periods"));
            }
            Ok(Period::Exponential { mean })
        }
        (None, Some(mean)) => {
            let shape = p.req("shape", "a number greater than 1", |v| {
                let shape = number_value(v)?;
                if shape > 1.0 {
                    Ok(shape)
                } else {
                    Err(format!(
                        "must be greater than 1 for the mean to exist, got {}",
                        crate::units::format_number(shape)
                    ))
                }
            })?;
            Ok(Period::Pareto { mean, shape })
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
