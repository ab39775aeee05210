//! The registry of algorithms.
//!
//! Every congestion controller, queue discipline, loss model and traffic source declares
//! itself once, in its own file, as a `pub const SPEC: `[`AlgorithmSpec`]: its name, a one-line
//! summary, its parameters ([`Param`]: type, unit, default, allowed range with open or closed
//! bounds, one-line doc), an optional finishing step for the checks that relate parameters, and
//! its constructor (from the validated [`Params`] to the built object). Each category lists its
//! declarations, one line per algorithm, where it dispatches its built-ins:
//!
//! | Category | List | Built object |
//! |---|---|---|
//! | controller | [`crate::transport::cc::REGISTRY`] | [`Controller`](crate::transport::cc::Controller) |
//! | queue | [`crate::net::queue::REGISTRY`] | [`Queue`](crate::net::queue::Queue) |
//! | loss | [`crate::net::loss::REGISTRY`] | [`LossModel`](crate::net::loss::LossModel) |
//! | source | [`crate::protocol::REGISTRY`] | [`Built`](crate::protocol::Built) (the flow's transport) |
//! | coupled | [`crate::transport::multipath::coupled::REGISTRY`] | [`Coupled`](crate::transport::multipath::coupled::Coupled) |
//! | scheduler | [`crate::transport::multipath::scheduler::REGISTRY`] | [`Scheduler`](crate::transport::multipath::scheduler::Scheduler) |
//!
//! Everything else reads those declarations: scenario validation (names, keys, types, ranges,
//! defaults and their error messages), `plait list` and `plait list --json` (the scenario
//! catalog), the simulator builder ([`Configured::build`]) and the generated parameter tables of
//! `docs/scenario.md`. Adding an algorithm is one new file with its `SPEC` and one line in its
//! category's list.
//!
//! A validated choice of algorithm is a [`Configured`]: the declaration and the values of its
//! parameters (`CcSpec`, `QueueSpec`, `LossSpec` and `SourceSpec` are its four instances). It
//! is built from a scenario, or directly with [`Configured::new`].

use std::fmt;

mod param;

pub use param::{Bound, Default, Origin, Param, ParamType, Params, Period, Range, Scalar, Value};

/// The kinds of algorithm a scenario names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    Controller,
    Queue,
    Loss,
    Source,
    Coupled,
    Scheduler,
}

impl Category {
    pub const ALL: [Category; 6] = [
        Category::Controller,
        Category::Queue,
        Category::Loss,
        Category::Source,
        Category::Coupled,
        Category::Scheduler,
    ];

    /// `"controller"`, `"queue"`, `"loss"`, `"source"`.
    pub fn name(self) -> &'static str {
        match self {
            Category::Controller => "controller",
            Category::Queue => "queue",
            Category::Loss => "loss",
            Category::Source => "source",
            Category::Coupled => "coupled",
            Category::Scheduler => "scheduler",
        }
    }

    /// What one algorithm of the category is called in messages: `"loss model"`.
    pub fn noun(self) -> &'static str {
        match self {
            Category::Controller => "controller",
            Category::Queue => "queue discipline",
            Category::Loss => "loss model",
            Category::Source => "source",
            Category::Coupled => "multipath controller",
            Category::Scheduler => "scheduler",
        }
    }

    /// The declarations of the category, type-erased (for listings).
    pub fn entries(self) -> Vec<Entry> {
        fn erase<K: Kind>() -> Vec<Entry> {
            K::registry().iter().map(|s| s.entry()).collect()
        }
        match self {
            Category::Controller => erase::<ControllerKind>(),
            Category::Queue => erase::<QueueKind>(),
            Category::Loss => erase::<LossKind>(),
            Category::Source => erase::<SourceKind>(),
            Category::Coupled => erase::<CoupledKind>(),
            Category::Scheduler => erase::<SchedulerKind>(),
        }
    }
}

/// A category of algorithm as a type: what its constructors are given besides the parameters
/// and what they build, and where its declarations are listed.
pub trait Kind: Sized + 'static {
    const CATEGORY: Category;
    /// What the builder knows that the parameters do not (a connection's MSS, a link's rate).
    type Context;
    /// What the constructor builds.
    type Output;
    /// The declarations of the built-ins of this category.
    fn registry() -> &'static [&'static AlgorithmSpec<Self>];
}

// The categories as types, declared here and nowhere else. Each category's module registers
// into its type (`impl Kind for ControllerKind` in `transport::cc`: what its constructors are
// given and build, and its list of declarations), so the registry names no algorithm's module:
// it is a leaf that every algorithm imports, and no import runs back from it.

/// Congestion controllers as a registry category (registered by `transport::cc`).
#[derive(Debug)]
pub struct ControllerKind;

/// Queue disciplines as a registry category (registered by `net::queue`).
#[derive(Debug)]
pub struct QueueKind;

/// Loss models as a registry category (registered by `net::loss`).
#[derive(Debug)]
pub struct LossKind;

/// Flow kinds as a registry category: each protocol's source (registered by `protocol`).
#[derive(Debug)]
pub struct SourceKind;

/// Coupled controllers as a registry category (registered by `transport::multipath::coupled`).
#[derive(Debug)]
pub struct CoupledKind;

/// Schedulers as a registry category (registered by `transport::multipath::scheduler`).
#[derive(Debug)]
pub struct SchedulerKind;

/// A problem found by an algorithm's finishing step: the parameter to blame (`None` for the
/// table as a whole) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamIssue {
    pub param: Option<&'static str>,
    pub message: String,
}

impl ParamIssue {
    pub fn at(param: &'static str, message: impl Into<String>) -> ParamIssue {
        ParamIssue {
            param: Some(param),
            message: message.into(),
        }
    }

    pub fn whole(message: impl Into<String>) -> ParamIssue {
        ParamIssue {
            param: None,
            message: message.into(),
        }
    }
}

/// An algorithm's finishing step ([`AlgorithmSpec::finish`]).
pub type Finish = fn(&mut Params) -> Result<(), ParamIssue>;

/// The declaration of one algorithm.
pub struct AlgorithmSpec<K: Kind> {
    /// The name a scenario uses (`cc = "cubic"`, `kind = "red"`).
    pub name: &'static str,
    /// One line: what it is, with its reference.
    pub summary: &'static str,
    pub params: &'static [Param],
    /// Checks that relate parameters to each other, and defaults that depend on other
    /// parameters; runs once every parameter has passed its own type and range check.
    pub finish: Option<Finish>,
    /// Builds the algorithm from validated parameters.
    pub build: fn(&Params, K::Context) -> K::Output,
}

impl<K: Kind> fmt::Debug for AlgorithmSpec<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlgorithmSpec")
            .field("category", &K::CATEGORY)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<K: Kind> AlgorithmSpec<K> {
    /// The declared parameter `name`, if any.
    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The declaration without its constructor, for listings.
    pub fn entry(&self) -> Entry {
        Entry {
            category: K::CATEGORY,
            name: self.name,
            summary: self.summary,
            params: self.params,
        }
    }

    /// Validates parameter values given in code (each of its parameter's type) on top of the
    /// defaults, as a scenario entry would be; `check(&[])` checks the defaults alone.
    pub fn check(&self, given: &[(&str, Value)]) -> Result<Params, ParamError> {
        let error = |param: Option<&str>, message: String| ParamError {
            category: K::CATEGORY,
            algorithm: self.name.to_string(),
            param: param.map(str::to_string),
            message,
        };
        let mut params = Params::defaults(self.params);
        for (name, value) in given {
            if self.param(name).is_none() {
                let known: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                return Err(error(
                    Some(name),
                    format!(
                        "unknown parameter (expected one of: {})",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            }
            params
                .put(name, value.clone(), Origin::Given)
                .map_err(|m| error(Some(name), m))?;
        }
        if let Some(p) = params.missing() {
            return Err(error(
                Some(p.name),
                "missing required parameter".to_string(),
            ));
        }
        if let Some(finish) = self.finish {
            finish(&mut params).map_err(|i| error(i.param, i.message))?;
        }
        Ok(params)
    }
}

/// The declaration of an algorithm of any category, without its constructor: what listings
/// and documentation show.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    pub category: Category,
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [Param],
}

/// The declaration of the algorithm of category `K` called `name`.
pub fn find<K: Kind>(name: &str) -> Option<&'static AlgorithmSpec<K>> {
    K::registry().iter().copied().find(|s| s.name == name)
}

/// The names of the algorithms of category `K`, sorted.
pub fn names<K: Kind>() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = K::registry().iter().map(|s| s.name).collect();
    names.sort_unstable();
    names
}

/// Parameters refused when an algorithm is configured in code ([`Configured::new`],
/// [`AlgorithmSpec::check`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ParamError {
    pub category: Category,
    pub algorithm: String,
    /// The parameter at fault; `None` for an unknown algorithm or a problem of the whole set.
    pub param: Option<String>,
    pub message: String,
}

/// `controller aimd: alpha: must be greater than zero, got -1`
impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: ", self.category.name(), self.algorithm)?;
        if let Some(p) = &self.param {
            write!(f, "{p}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// A validated choice of algorithm: its declaration and the values of its parameters.
pub struct Configured<K: Kind> {
    spec: &'static AlgorithmSpec<K>,
    params: Params,
}

impl<K: Kind> Configured<K> {
    /// The algorithm `name` of category `K` with the parameters `given` (the others take their
    /// defaults), validated as a scenario would be.
    pub fn new(name: &str, given: &[(&str, Value)]) -> Result<Self, ParamError> {
        let spec = find::<K>(name).ok_or_else(|| ParamError {
            category: K::CATEGORY,
            algorithm: name.to_string(),
            param: None,
            message: format!(
                "unknown {} (known: {})",
                K::CATEGORY.noun(),
                names::<K>().join(", ")
            ),
        })?;
        Ok(Configured {
            spec,
            params: spec.check(given)?,
        })
    }

    /// From parameters validated against `spec` (by [`AlgorithmSpec::check`] or the scenario
    /// reader).
    pub(crate) fn from_parts(spec: &'static AlgorithmSpec<K>, params: Params) -> Self {
        Configured { spec, params }
    }

    pub fn name(&self) -> &'static str {
        self.spec.name
    }

    pub fn spec(&self) -> &'static AlgorithmSpec<K> {
        self.spec
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Builds the algorithm.
    pub fn build(&self, context: K::Context) -> K::Output {
        (self.spec.build)(&self.params, context)
    }
}

impl<K: Kind> Clone for Configured<K> {
    fn clone(&self) -> Self {
        Configured {
            spec: self.spec,
            params: self.params.clone(),
        }
    }
}

impl<K: Kind> PartialEq for Configured<K> {
    fn eq(&self, other: &Self) -> bool {
        self.spec.name == other.spec.name && self.params == other.params
    }
}

/// `cubic { c: 0.4, beta: 0.7, ... }`
impl<K: Kind> fmt::Debug for Configured<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct(self.spec.name);
        for (p, v) in self.params.iter() {
            match v {
                Some(v) => s.field(p.name, &format_args!("{v}")),
                None => s.field(p.name, &format_args!("unset")),
            };
        }
        s.finish()
    }
}

#[cfg(test)]
mod tests;
