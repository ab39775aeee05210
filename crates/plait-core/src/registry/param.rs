//! Parameters of an algorithm: their declaration ([`Param`]: type, unit, default, range, doc)
//! and their validated values ([`Params`]).
//!
//! A declaration is a `const`: the builder methods below are `const fn`, and a default is a
//! [`Scalar`] (plain data), so that `Param` is `Copy` and a whole algorithm declaration can be
//! a `const` item beside the algorithm.

use std::fmt;

use super::{Configured, ControllerKind};
use crate::time::{Rate, SimTime};

/// A controller as a parameter's value (`transport::cc::CcSpec`).
type CcSpec = Configured<ControllerKind>;

/// What a parameter holds, and so how a scenario writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// A finite real number.
    Number,
    /// A non-negative integer.
    Integer,
    Bool,
    /// A number of bytes: an integer or a size such as `"64KiB"`.
    Size,
    /// A duration such as `"40ms"`, or a number of seconds.
    Duration,
    /// A rate such as `"10Mbps"`, or a number of bit/s.
    Rate,
    /// A number in [0, 1].
    Probability,
    /// One of the listed strings.
    Choice(&'static [&'static str]),
    /// A number, or a size such as `"30KB"` (RED's thresholds, which are in bytes in byte mode).
    NumberOrSize,
    /// The distribution of a period: `{ exponential = MEAN }` or `{ pareto = MEAN, shape = K }`.
    Period,
    /// A congestion controller: a name, or a table `{ name = "...", <parameters> }`.
    Controller,
}

impl ParamType {
    /// The name of the type in listings (`plait list --json`) and in the documentation.
    pub fn name(self) -> &'static str {
        match self {
            ParamType::Number => "number",
            ParamType::Integer => "integer",
            ParamType::Bool => "bool",
            ParamType::Size => "size",
            ParamType::Duration => "duration",
            ParamType::Rate => "rate",
            ParamType::Probability => "probability",
            ParamType::Choice(_) => "choice",
            ParamType::NumberOrSize => "number or size",
            ParamType::Period => "period",
            ParamType::Controller => "controller",
        }
    }

    /// Whether a value of this type has a magnitude that a [`Range`] bounds.
    pub fn is_ordered(self) -> bool {
        matches!(
            self,
            ParamType::Number
                | ParamType::Integer
                | ParamType::Size
                | ParamType::Duration
                | ParamType::Rate
                | ParamType::Probability
                | ParamType::NumberOrSize
        )
    }
}

/// One end of a [`Range`], in the base unit of the parameter's type: bytes for sizes, seconds
/// for durations, bit/s for rates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    Unbounded,
    /// The bound itself is allowed (a closed end).
    Inclusive(f64),
    /// The bound itself is not allowed (an open end).
    Exclusive(f64),
}

impl Bound {
    /// The bound's value, if any.
    pub fn value(self) -> Option<f64> {
        match self {
            Bound::Unbounded => None,
            Bound::Inclusive(x) | Bound::Exclusive(x) => Some(x),
        }
    }

    pub fn is_inclusive(self) -> bool {
        matches!(self, Bound::Inclusive(_))
    }
}

/// The values a parameter allows, `min` to `max`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub min: Bound,
    pub max: Bound,
}

impl Range {
    /// No bound at all.
    pub const ANY: Range = Range {
        min: Bound::Unbounded,
        max: Bound::Unbounded,
    };

    pub fn contains(&self, x: f64) -> bool {
        let above = match self.min {
            Bound::Unbounded => true,
            Bound::Inclusive(m) => x >= m,
            Bound::Exclusive(m) => x > m,
        };
        let below = match self.max {
            Bound::Unbounded => true,
            Bound::Inclusive(m) => x <= m,
            Bound::Exclusive(m) => x < m,
        };
        above && below
    }

    pub fn is_unbounded(&self) -> bool {
        self.min == Bound::Unbounded && self.max == Bound::Unbounded
    }

    /// The range as the documentation writes it: `> 0`, `≥ 1`, `(0, 1)`, `[1, 65535]`,
    /// `(0, 1]`; `None` when unbounded.
    pub fn text(&self) -> Option<String> {
        let bracket = |b: Bound, open: &'static str, closed: &'static str| {
            if b.is_inclusive() {
                closed
            } else {
                open
            }
        };
        match (self.min.value(), self.max.value()) {
            (None, None) => None,
            (Some(lo), None) => Some(format!("{} {lo}", bracket(self.min, ">", "≥"))),
            (None, Some(hi)) => Some(format!("{} {hi}", bracket(self.max, "<", "≤"))),
            (Some(lo), Some(hi)) => Some(format!(
                "{}{lo}, {hi}{}",
                bracket(self.min, "(", "["),
                bracket(self.max, ")", "]")
            )),
        }
    }

    /// Why `shown` (a value outside the range, as written in messages) is refused: `must be
    /// greater than zero, got -1`, `must be between 1 and 65535 bytes, got 0`.
    pub fn violation(&self, shown: &str, unit: &str) -> String {
        // " 1 packet", " 2 packets": the unit after a bound, singular after 1.
        let unit_after = |x: f64| match unit {
            "" => String::new(),
            _ if x == 1.0 => format!(" {}", unit.strip_suffix('s').unwrap_or(unit)),
            _ => format!(" {unit}"),
        };
        let requirement = match (self.min, self.max) {
            (Bound::Exclusive(0.0), Bound::Unbounded) => "be greater than zero".to_string(),
            (Bound::Exclusive(lo), Bound::Unbounded) => {
                format!("be greater than {lo}{}", unit_after(lo))
            }
            (Bound::Inclusive(0.0), Bound::Unbounded) => "not be negative".to_string(),
            (Bound::Inclusive(lo), Bound::Unbounded) => {
                format!("be at least {lo}{}", unit_after(lo))
            }
            (Bound::Unbounded, Bound::Exclusive(hi)) => {
                format!("be less than {hi}{}", unit_after(hi))
            }
            (Bound::Unbounded, Bound::Inclusive(hi)) => {
                format!("be at most {hi}{}", unit_after(hi))
            }
            (Bound::Inclusive(lo), Bound::Inclusive(hi)) => {
                format!("be between {lo} and {hi}{}", unit_after(hi))
            }
            (Bound::Exclusive(lo), Bound::Exclusive(hi)) => {
                format!("be between {lo} and {hi}{} (exclusive)", unit_after(hi))
            }
            _ => format!(
                "be in {}{}",
                self.text().unwrap_or_default(),
                unit_after(f64::NAN)
            ),
        };
        format!("must {requirement}, got {shown}")
    }
}

/// A parameter's default, as plain data so that declarations can be `const`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Number(f64),
    Integer(u64),
    Bool(bool),
    Size(u64),
    Duration(SimTime),
    Rate(Rate),
    /// A choice, or the name of a congestion controller (with its own defaults).
    Name(&'static str),
}

/// What a parameter is when a scenario leaves it out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Default {
    /// It must be given.
    Required,
    /// It has no value; the text says what that means (`"a long-lived flow"`).
    Unset(&'static str),
    Value(Scalar),
}

/// The declaration of one parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    /// The key a scenario uses.
    pub name: &'static str,
    pub ty: ParamType,
    /// The unit of a number (`"MSS per RTT"`, `"packets"`, `"bytes"`); empty when the type
    /// says it (durations, rates) or there is none.
    pub unit: &'static str,
    pub default: Default,
    /// Allowed values (for ordered types); [`Range::ANY`] otherwise.
    pub range: Range,
    /// One line: what the parameter does.
    pub doc: &'static str,
    /// A scenario section named after the algorithm (`[tcp]`) may give it a default for every
    /// entry of that algorithm.
    pub in_section: bool,
}

impl Param {
    /// A parameter of type `ty`, required until a default is given.
    pub const fn new(name: &'static str, ty: ParamType, doc: &'static str) -> Param {
        Param {
            name,
            ty,
            unit: "",
            default: Default::Required,
            range: Range::ANY,
            doc,
            in_section: false,
        }
    }

    pub const fn number(name: &'static str, doc: &'static str) -> Param {
        Param::new(name, ParamType::Number, doc)
    }

    pub const fn integer(name: &'static str, doc: &'static str) -> Param {
        Param::new(name, ParamType::Integer, doc)
    }

    pub const fn bool(name: &'static str, doc: &'static str) -> Param {
        Param::new(name, ParamType::Bool, doc)
    }

    pub const fn size(name: &'static str, doc: &'static str) -> Param {
        Param::new(name, ParamType::Size, doc).unit("bytes")
    }

    pub const fn duration(name: &'static str, doc: &'static str) -> Param {
        Param::new(name, ParamType::Duration, doc)
    }

    pub const fn rate(name: &'static str, doc: &'static str) -> Param {
        Param::new(name, ParamType::Rate, doc)
    }

    /// A number in [0, 1].
    pub const fn probability(name: &'static str, doc: &'static str) -> Param {
        Param::new(name, ParamType::Probability, doc)
            .range(Bound::Inclusive(0.0), Bound::Inclusive(1.0))
    }

    pub const fn choice(
        name: &'static str,
        options: &'static [&'static str],
        doc: &'static str,
    ) -> Param {
        Param::new(name, ParamType::Choice(options), doc)
    }

    /// A number, or a size string (see [`ParamType::NumberOrSize`]).
    pub const fn number_or_size(name: &'static str, doc: &'static str) -> Param {
        Param::new(name, ParamType::NumberOrSize, doc)
    }

    pub const fn period(name: &'static str, doc: &'static str) -> Param {
        Param::new(name, ParamType::Period, doc)
    }

    /// A congestion controller; its default is a controller's name
    /// (`.default(Scalar::Name("reno"))`), with that controller's own defaults.
    pub const fn controller(name: &'static str, doc: &'static str) -> Param {
        Param::new(name, ParamType::Controller, doc)
    }

    pub const fn unit(self, unit: &'static str) -> Param {
        Param { unit, ..self }
    }

    pub const fn default(self, value: Scalar) -> Param {
        Param {
            default: Default::Value(value),
            ..self
        }
    }

    /// Optional with no value when left out; `meaning` says what that means.
    pub const fn unset(self, meaning: &'static str) -> Param {
        Param {
            default: Default::Unset(meaning),
            ..self
        }
    }

    pub const fn range(self, min: Bound, max: Bound) -> Param {
        Param {
            range: Range { min, max },
            ..self
        }
    }

    /// `> min`.
    pub const fn greater_than(self, min: f64) -> Param {
        self.range(Bound::Exclusive(min), Bound::Unbounded)
    }

    /// `≥ min`.
    pub const fn at_least(self, min: f64) -> Param {
        self.range(Bound::Inclusive(min), Bound::Unbounded)
    }

    /// `[min, max]`.
    pub const fn between(self, min: f64, max: f64) -> Param {
        self.range(Bound::Inclusive(min), Bound::Inclusive(max))
    }

    /// See [`Param::in_section`].
    pub const fn in_section(self) -> Param {
        Param {
            in_section: true,
            ..self
        }
    }

    pub fn is_required(&self) -> bool {
        self.default == Default::Required
    }

    /// A valid value of this parameter drawn from `u` in [0, 1): spread over the declared
    /// range (over a modest span from the bound when the range is open-ended), for property
    /// tests and fuzzing. A controller parameter draws its default controller.
    pub fn draw(&self, u: f64) -> Value {
        let u = if (0.0..1.0).contains(&u) { u } else { 0.5 };
        // A real in the range; `span` is how far from a lone bound the draw may go.
        let real = |span: f64| {
            let (lo, hi) = (self.range.min.value(), self.range.max.value());
            let x = match (lo, hi) {
                (Some(lo), Some(hi)) => lo + u * (hi - lo),
                (Some(lo), None) => lo + span * u,
                (None, Some(hi)) => hi - span * u,
                (None, None) => span * (u - 0.5),
            };
            if self.range.contains(x) {
                x
            } else {
                // An open bound was hit: move inside by a small fraction of the span.
                match (lo, hi) {
                    (Some(lo), Some(hi)) => lo + (hi - lo) * (0.5 * u + 0.25),
                    (Some(lo), None) => lo + span * (u + 0.01),
                    (None, Some(hi)) => hi - span * (u + 0.01),
                    (None, None) => x,
                }
            }
        };
        // A whole number in the range.
        let whole = |span: f64| -> u64 {
            let x = real(span).round();
            let x = if self.range.contains(x) {
                x
            } else if self.range.contains(x + 1.0) {
                x + 1.0
            } else {
                x - 1.0
            };
            x.max(0.0) as u64
        };
        match self.ty {
            ParamType::Number | ParamType::NumberOrSize => Value::Number(real(10.0)),
            ParamType::Probability => Value::Number(u),
            ParamType::Integer => Value::Integer(whole(100.0)),
            ParamType::Size => Value::Size(whole(1_000_000.0)),
            ParamType::Bool => Value::Bool(u < 0.5),
            ParamType::Duration => Value::Duration(SimTime::from_secs_f64(real(2.0))),
            ParamType::Rate => Value::Rate(Rate(whole(1e9).max(1))),
            ParamType::Choice(options) => {
                Value::Choice(options[((u * options.len() as f64) as usize).min(options.len() - 1)])
            }
            ParamType::Period => Value::Period(Period::Exponential {
                mean: SimTime::from_secs_f64(0.001 + u),
            }),
            ParamType::Controller => {
                let name = match self.default {
                    Default::Value(Scalar::Name(name)) => name,
                    _ => "reno",
                };
                Value::Controller(CcSpec::new(name, &[]).expect("a registered controller"))
            }
        }
    }

    /// Checks that `value` has this parameter's type and lies in its range; the message is
    /// what a scenario error says after the field path.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        let matches = match (self.ty, value) {
            (ParamType::Number, Value::Number(x)) => x.is_finite(),
            (ParamType::Integer, Value::Integer(_))
            | (ParamType::Bool, Value::Bool(_))
            | (ParamType::Size, Value::Size(_))
            | (ParamType::Duration, Value::Duration(_))
            | (ParamType::Rate, Value::Rate(_))
            | (ParamType::Period, Value::Period(_))
            | (ParamType::Controller, Value::Controller(_))
            | (ParamType::NumberOrSize, Value::Size(_)) => true,
            (ParamType::Probability | ParamType::NumberOrSize, Value::Number(x)) => x.is_finite(),
            (ParamType::Choice(options), Value::Choice(c)) => options.contains(c),
            _ => false,
        };
        if !matches {
            return Err(format!("expected a {} value, got {value}", self.ty.name()));
        }
        match value.magnitude() {
            Some(x) if !self.range.contains(x) => {
                let mut message = if self.ty == ParamType::Probability {
                    format!("must be a probability between 0 and 1, got {value}")
                } else {
                    self.range.violation(&value.to_string(), self.unit)
                };
                if let Default::Unset(meaning) = self.default {
                    message.push_str(&format!(" (unset means {meaning})"));
                }
                Err(message)
            }
            _ => Ok(()),
        }
    }
}

/// The distribution of a period's length, the value of a [`ParamType::Period`] (the on/off
/// source draws its on and off periods from it: `app::onoff`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Period {
    Exponential { mean: SimTime },
    Pareto { mean: SimTime, shape: f64 },
}

/// A validated parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Number(f64),
    Integer(u64),
    Bool(bool),
    /// Bytes.
    Size(u64),
    Duration(SimTime),
    Rate(Rate),
    /// One of the options of a [`ParamType::Choice`].
    Choice(&'static str),
    Period(Period),
    Controller(CcSpec),
}

impl Value {
    /// The value in the base unit of its type (bytes, seconds, bit/s), for range checks.
    pub fn magnitude(&self) -> Option<f64> {
        match *self {
            Value::Number(x) => Some(x),
            Value::Integer(n) | Value::Size(n) => Some(n as f64),
            Value::Duration(t) => Some(t.as_secs_f64()),
            Value::Rate(r) => Some(r.bps() as f64),
            _ => None,
        }
    }
}

impl From<Scalar> for Value {
    fn from(s: Scalar) -> Value {
        match s {
            Scalar::Number(x) => Value::Number(x),
            Scalar::Integer(n) => Value::Integer(n),
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::Size(n) => Value::Size(n),
            Scalar::Duration(t) => Value::Duration(t),
            Scalar::Rate(r) => Value::Rate(r),
            Scalar::Name(n) => Value::Choice(n),
        }
    }
}

/// As in messages: numbers as Rust writes them (with an exponent when very large or small), sizes in bytes, durations and rates with their
/// unit (`40ms`, `10Mbps`).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Number(x) => f.write_str(&crate::units::format_number(*x)),
            Value::Integer(n) | Value::Size(n) => write!(f, "{n}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Duration(t) => f.write_str(&crate::units::format_duration(*t)),
            Value::Rate(r) => f.write_str(&crate::units::format_rate(*r)),
            Value::Choice(c) => write!(f, "\"{c}\""),
            Value::Period(p) => write!(f, "{p:?}"),
            Value::Controller(c) => write!(f, "\"{}\"", c.name()),
        }
    }
}

/// Where a validated value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Written in the entry itself.
    Given,
    /// Taken from the section named after the algorithm (`[tcp]`).
    Inherited,
    /// The declared default (or unset).
    Default,
}

/// The validated parameters of one algorithm: a value (or none, for an unset optional one) for
/// each declared parameter, in declaration order, with where it came from.
///
/// The typed getters panic when the name is not declared or the value has another type: both
/// are mistakes in a declaration, which the registry tests catch by building every algorithm.
#[derive(Clone, Debug)]
pub struct Params {
    declared: &'static [Param],
    values: Vec<Option<Value>>,
    origins: Vec<Origin>,
}

/// Two parameter sets are equal when they hold the same values, wherever they came from.
impl PartialEq for Params {
    fn eq(&self, other: &Params) -> bool {
        self.values == other.values
            && self
                .declared
                .iter()
                .map(|p| p.name)
                .eq(other.declared.iter().map(|p| p.name))
    }
}

impl Params {
    /// The declared defaults (nothing yet for the required parameters, which
    /// [`Params::missing`] then reports).
    pub(crate) fn defaults(declared: &'static [Param]) -> Params {
        let values = declared
            .iter()
            .map(|p| match p.default {
                Default::Value(Scalar::Name(name)) if p.ty == ParamType::Controller => {
                    let cc = CcSpec::new(name, &[])
                        .unwrap_or_else(|e| panic!("default of `{}`: {e}", p.name));
                    Some(Value::Controller(cc))
                }
                Default::Value(s) => Some(Value::from(s)),
                Default::Required | Default::Unset(_) => None,
            })
            .collect();
        Params {
            declared,
            values,
            origins: vec![Origin::Default; declared.len()],
        }
    }

    /// The declarations these values are for.
    pub fn declared(&self) -> &'static [Param] {
        self.declared
    }

    fn index(&self, name: &str) -> usize {
        self.declared
            .iter()
            .position(|p| p.name == name)
            .unwrap_or_else(|| panic!("no parameter `{name}` is declared"))
    }

    /// Sets a parameter after checking its type and range ([`Param::check`]).
    pub(crate) fn put(&mut self, name: &str, value: Value, origin: Origin) -> Result<(), String> {
        let i = self.index(name);
        self.declared[i].check(&value)?;
        self.values[i] = Some(value);
        self.origins[i] = origin;
        Ok(())
    }

    /// Replaces a value, keeping its origin: for the finishing step of an algorithm, which
    /// settles defaults that depend on other parameters (RED's thresholds in byte mode).
    pub fn set(&mut self, name: &str, value: Option<Value>) {
        let i = self.index(name);
        self.values[i] = value;
    }

    /// The first required parameter that has no value.
    pub(crate) fn missing(&self) -> Option<&'static Param> {
        self.declared
            .iter()
            .zip(&self.values)
            .find(|(p, v)| p.is_required() && v.is_none())
            .map(|(p, _)| p)
    }

    /// The value of `name`, or `None` when it is unset.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values[self.index(name)].as_ref()
    }

    pub fn origin(&self, name: &str) -> Origin {
        self.origins[self.index(name)]
    }

    /// Whether the entry itself gave `name`.
    pub fn is_given(&self, name: &str) -> bool {
        self.origin(name) == Origin::Given
    }

    /// Every parameter with its value, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static Param, Option<&Value>)> + '_ {
        self.declared
            .iter()
            .zip(self.values.iter().map(Option::as_ref))
    }

    fn wrong(&self, name: &str, wanted: &str) -> ! {
        panic!(
            "parameter `{name}` is not {wanted}: {:?}",
            self.values[self.index(name)]
        )
    }

    pub fn number(&self, name: &str) -> f64 {
        match self.get(name) {
            Some(Value::Number(x)) => *x,
            _ => self.wrong(name, "a number"),
        }
    }

    pub fn integer(&self, name: &str) -> u64 {
        self.opt_integer(name)
            .unwrap_or_else(|| self.wrong(name, "an integer"))
    }

    pub fn opt_integer(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            Some(Value::Integer(n)) => Some(*n),
            None => None,
            _ => self.wrong(name, "an integer"),
        }
    }

    pub fn bool(&self, name: &str) -> bool {
        match self.get(name) {
            Some(Value::Bool(b)) => *b,
            _ => self.wrong(name, "a bool"),
        }
    }

    pub fn size(&self, name: &str) -> u64 {
        self.opt_size(name)
            .unwrap_or_else(|| self.wrong(name, "a size"))
    }

    pub fn opt_size(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            Some(Value::Size(n)) => Some(*n),
            None => None,
            _ => self.wrong(name, "a size"),
        }
    }

    pub fn duration(&self, name: &str) -> SimTime {
        self.opt_duration(name)
            .unwrap_or_else(|| self.wrong(name, "a duration"))
    }

    pub fn opt_duration(&self, name: &str) -> Option<SimTime> {
        match self.get(name) {
            Some(Value::Duration(t)) => Some(*t),
            None => None,
            _ => self.wrong(name, "a duration"),
        }
    }

    pub fn rate(&self, name: &str) -> Rate {
        match self.get(name) {
            Some(Value::Rate(r)) => *r,
            _ => self.wrong(name, "a rate"),
        }
    }

    /// A probability.
    pub fn probability(&self, name: &str) -> f64 {
        self.number(name)
    }

    pub fn choice(&self, name: &str) -> &'static str {
        match self.get(name) {
            Some(Value::Choice(c)) => c,
            _ => self.wrong(name, "a choice"),
        }
    }

    /// A [`ParamType::NumberOrSize`] value as a number (a size counts its bytes).
    pub fn number_or_size(&self, name: &str) -> f64 {
        match self.get(name) {
            Some(Value::Number(x)) => *x,
            Some(Value::Size(n)) => *n as f64,
            _ => self.wrong(name, "a number or a size"),
        }
    }

    pub fn period(&self, name: &str) -> Period {
        match self.get(name) {
            Some(Value::Period(p)) => *p,
            _ => self.wrong(name, "a period"),
        }
    }

    pub fn controller(&self, name: &str) -> &CcSpec {
        match self.get(name) {
            Some(Value::Controller(c)) => c,
            _ => self.wrong(name, "a controller"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_text_and_membership() {
        let r = |min, max| Range { min, max };
        use Bound::*;
        assert_eq!(r(Exclusive(0.0), Unbounded).text().unwrap(), "> 0");
        assert_eq!(r(Inclusive(1.0), Unbounded).text().unwrap(), "≥ 1");
        assert_eq!(r(Unbounded, Exclusive(2.5)).text().unwrap(), "< 2.5");
        assert_eq!(r(Exclusive(0.0), Exclusive(1.0)).text().unwrap(), "(0, 1)");
        assert_eq!(r(Exclusive(0.0), Inclusive(1.0)).text().unwrap(), "(0, 1]");
        assert_eq!(
            r(Inclusive(1.0), Inclusive(65535.0)).text().unwrap(),
            "[1, 65535]"
        );
        assert_eq!(Range::ANY.text(), None);
        let open = r(Exclusive(0.0), Exclusive(1.0));
        assert!(open.contains(0.5) && !open.contains(0.0) && !open.contains(1.0));
        assert!(!open.contains(f64::NAN));
        let closed = r(Inclusive(0.0), Inclusive(1.0));
        assert!(closed.contains(0.0) && closed.contains(1.0) && !closed.contains(1.5));
        assert!(Range::ANY.contains(-1e300));
    }

    #[test]
    fn violations_read_as_sentences() {
        use Bound::*;
        let r = |min, max| Range { min, max };
        assert_eq!(
            r(Exclusive(0.0), Unbounded).violation("-1", ""),
            "must be greater than zero, got -1"
        );
        assert_eq!(
            r(Inclusive(0.0), Unbounded).violation("-1", ""),
            "must not be negative, got -1"
        );
        assert_eq!(
            r(Inclusive(1.0), Unbounded).violation("0", "packets"),
            "must be at least 1 packet, got 0"
        );
        assert_eq!(
            r(Inclusive(1.0), Inclusive(65535.0)).violation("0", "bytes"),
            "must be between 1 and 65535 bytes, got 0"
        );
        assert_eq!(
            r(Exclusive(0.0), Exclusive(1.0)).violation("1.5", ""),
            "must be between 0 and 1 (exclusive), got 1.5"
        );
        assert_eq!(
            r(Exclusive(0.0), Inclusive(1.0)).violation("0", ""),
            "must be in (0, 1], got 0"
        );
        assert_eq!(
            r(Unbounded, Inclusive(3.0)).violation("4", ""),
            "must be at most 3, got 4"
        );
    }

    #[test]
    fn check_tests_type_then_range() {
        let beta =
            Param::number("beta", "kept").range(Bound::Exclusive(0.0), Bound::Exclusive(1.0));
        assert_eq!(beta.check(&Value::Number(0.5)), Ok(()));
        assert_eq!(
            beta.check(&Value::Number(1.0)).unwrap_err(),
            "must be between 0 and 1 (exclusive), got 1"
        );
        assert!(beta.check(&Value::Number(f64::NAN)).is_err());
        assert_eq!(
            beta.check(&Value::Bool(true)).unwrap_err(),
            "expected a number value, got true"
        );
        let p = Param::probability("p", "loss");
        assert_eq!(
            p.check(&Value::Number(1.5)).unwrap_err(),
            "must be a probability between 0 and 1, got 1.5"
        );
        let policy = Param::choice("policy", &["a", "b"], "which");
        assert!(policy.check(&Value::Choice("a")).is_ok());
        assert!(policy.check(&Value::Choice("c")).is_err());
        let threshold = Param::new("th", ParamType::NumberOrSize, "t").at_least(0.0);
        assert!(threshold.check(&Value::Size(3000)).is_ok());
        assert!(threshold.check(&Value::Number(-1.0)).is_err());
        let mss = Param::size("mss", "segment").between(1.0, 65535.0);
        assert_eq!(
            mss.check(&Value::Size(0)).unwrap_err(),
            "must be between 1 and 65535 bytes, got 0"
        );
    }

    const DECLARED: &[Param] = &[
        Param::number("alpha", "a").default(Scalar::Number(1.0)),
        Param::integer("n", "n").greater_than(0.0),
        Param::duration("hold", "h").unset("one RTT"),
        Param::controller("cc", "cc").default(Scalar::Name("reno")),
    ];

    #[test]
    fn params_fill_defaults_and_report_the_missing() {
        let mut p = Params::defaults(DECLARED);
        assert_eq!(p.number("alpha"), 1.0);
        assert_eq!(p.opt_duration("hold"), None);
        assert_eq!(p.controller("cc").name(), "reno");
        assert_eq!(p.missing().map(|m| m.name), Some("n"));
        assert_eq!(
            p.put("n", Value::Integer(0), Origin::Given).unwrap_err(),
            "must be greater than zero, got 0"
        );
        p.put("n", Value::Integer(3), Origin::Given).unwrap();
        assert_eq!(p.missing(), None);
        assert_eq!(p.integer("n"), 3);
        assert!(p.is_given("n") && !p.is_given("alpha"));
        // Equality ignores where values came from.
        let mut q = Params::defaults(DECLARED);
        q.put("n", Value::Integer(3), Origin::Inherited).unwrap();
        assert_eq!(p, q);
        q.put("alpha", Value::Number(2.0), Origin::Given).unwrap();
        assert_ne!(p, q);
    }

    #[test]
    #[should_panic(expected = "no parameter `beta` is declared")]
    fn an_undeclared_name_is_a_bug() {
        Params::defaults(DECLARED).number("beta");
    }

    #[test]
    #[should_panic(expected = "parameter `alpha` is not a size")]
    fn a_mistyped_getter_is_a_bug() {
        Params::defaults(DECLARED).size("alpha");
    }
}
