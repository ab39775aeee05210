//! Loss policies of the AIMD fluid model: who is signalled at a link congestion time.
//!
//! Altman, Barman, Tuffin, Vojnović, "Parallel TCP sockets: simple model, throughput and
//! validation" (INFOCOM 2006), Section I lists the policies studied in the paper:
//!
//! * rate-independent: "a connection is chosen with fixed probability" (Example 1 biases these
//!   probabilities per flow, so this policy carries optional weights);
//! * rate-proportional: "a connection is chosen with probability proportional to its send rate
//!   just before the congestion event", i.e. probability `x_i / c` since the rates sum to `c`;
//! * largest-rate: "a connection with largest rate just before the congestion event is chosen"
//!   (Section IV.A; ties go to the lowest index here);
//! * beatdown: "a connection is chosen as long as permitted by link capacity" (Section IV.B):
//!   the tagged connection is signalled at every congestion time until its rate reaches zero,
//!   then the connection with the largest rate is tagged. Congestion times accumulate, so the
//!   engine integrates a whole beatdown phase in closed form instead of stepping through it;
//! * ALL: every connection is signalled (synchronised losses, Section II.B.3, eq. (6)).
//!
//! Anything else is a [`CustomPolicy`], which sees the rates just before each congestion time
//! and names the connections to signal.

use super::flows::Flows;
use super::FluidError;
use crate::rng::SimRng;
use rand::Rng;

/// A built-in loss policy.
#[derive(Clone, Debug, PartialEq)]
pub enum Policy {
    /// One connection per congestion time, drawn independently of the rates with probability
    /// `weights[i] / sum(weights)`; `None` means uniformly.
    RateIndependent { weights: Option<Vec<f64>> },
    /// One connection per congestion time, connection `i` with probability `x_i / c`.
    RateProportional,
    /// The connection with the largest rate (lowest index among equals).
    LargestRate,
    /// The largest connection is tagged and signalled at every congestion time until its rate
    /// is beaten down to zero; then the next largest is tagged.
    Beatdown,
    /// Every connection at every congestion time.
    All,
}

impl Policy {
    /// The names accepted by [`Policy::parse`], in the order of the paper's list.
    pub const NAMES: [&'static str; 5] = [
        "rate_independent",
        "rate_proportional",
        "largest_rate",
        "beatdown",
        "all",
    ];

    /// Builds a policy from its name (`-` and `_` are interchangeable, case is ignored).
    /// `weights` are only meaningful for the rate-independent policy.
    pub fn parse(name: &str, weights: Option<Vec<f64>>) -> Result<Policy, FluidError> {
        let key = name.trim().to_ascii_lowercase().replace('-', "_");
        let policy = match key.as_str() {
            "rate_independent" => return Ok(Policy::RateIndependent { weights }),
            "rate_proportional" => Policy::RateProportional,
            "largest_rate" => Policy::LargestRate,
            "beatdown" => Policy::Beatdown,
            "all" => Policy::All,
            _ => {
                return Err(FluidError::UnknownPolicy(format!(
                    "{name:?}; expected one of {}",
                    Policy::NAMES.join(", ")
                )))
            }
        };
        if weights.is_some() {
            return Err(FluidError::InvalidParameter(format!(
                "weights apply to the rate_independent policy only, not to {key}"
            )));
        }
        Ok(policy)
    }

    /// The canonical name of the policy.
    pub fn name(&self) -> &'static str {
        match self {
            Policy::RateIndependent { .. } => "rate_independent",
            Policy::RateProportional => "rate_proportional",
            Policy::LargestRate => "largest_rate",
            Policy::Beatdown => "beatdown",
            Policy::All => "all",
        }
    }

    /// True when exactly one connection is signalled per congestion time (assumption (ONE)
    /// of the paper), which is what Theorem 1 (and Theorem 3 for beatdown) needs.
    pub fn is_single_hit(&self) -> bool {
        !matches!(self, Policy::All)
    }
}

/// The reason a custom policy gave up; the simulation stops with [`FluidError::Policy`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError(pub String);

/// A user-defined loss policy.
///
/// At every congestion time `select` receives the rates just before the decrease (they sum to
/// the capacity) and pushes the indices of the connections to signal into `hits`, which the
/// engine has emptied. At least one index, each at most once.
pub trait CustomPolicy {
    fn select(&mut self, rates: &[f64], hits: &mut Vec<usize>) -> Result<(), PolicyError>;
}

impl<F> CustomPolicy for F
where
    F: FnMut(&[f64], &mut Vec<usize>) -> Result<(), PolicyError>,
{
    fn select(&mut self, rates: &[f64], hits: &mut Vec<usize>) -> Result<(), PolicyError> {
        self(rates, hits)
    }
}

/// What a selector decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Hit {
    /// One connection.
    One(usize),
    /// Every connection.
    All,
    /// The connections listed in the engine's `listed` buffer (to be validated).
    Listed,
}

/// The engine's view of a policy: monomorphised per built-in so the hot loop has no dynamic
/// dispatch and allocates nothing.
pub(super) trait Select {
    fn select(
        &mut self,
        flows: &Flows,
        now: f64,
        rng: &mut SimRng,
        listed: &mut Vec<usize>,
    ) -> Result<Hit, FluidError>;
}

/// Rate-independent, equal probabilities.
pub(super) struct Uniform {
    pub n: usize,
}

impl Select for Uniform {
    #[inline]
    fn select(
        &mut self,
        _: &Flows,
        _: f64,
        rng: &mut SimRng,
        _: &mut Vec<usize>,
    ) -> Result<Hit, FluidError> {
        Ok(Hit::One(rng.gen_range(0..self.n)))
    }
}

/// Rate-independent with probabilities proportional to fixed weights: inverse transform over
/// the cumulative weights.
pub(super) struct Weighted {
    cumulative: Vec<f64>,
    total: f64,
    last_positive: usize,
}

impl Weighted {
    pub fn new(weights: &[f64]) -> Self {
        let mut cumulative = Vec::with_capacity(weights.len());
        let mut total = 0.0;
        let mut last_positive = 0;
        for (i, &w) in weights.iter().enumerate() {
            total += w;
            cumulative.push(total);
            if w > 0.0 {
                last_positive = i;
            }
        }
        Weighted {
            cumulative,
            total,
            last_positive,
        }
    }
}

impl Select for Weighted {
    #[inline]
    fn select(
        &mut self,
        _: &Flows,
        _: f64,
        rng: &mut SimRng,
        _: &mut Vec<usize>,
    ) -> Result<Hit, FluidError> {
        let u = rng.gen::<f64>() * self.total;
        // First i with cumulative[i] > u; zero-weight flows have cumulative equal to their
        // predecessor and are skipped. Rounding can put u at the very top: clamp.
        let i = self.cumulative.partition_point(|&c| c <= u);
        Ok(Hit::One(i.min(self.last_positive)))
    }
}

/// Rate-proportional: inverse transform over the rates just before the event, in one pass.
pub(super) struct Proportional {
    /// The capacity `c`, which the rates sum to at a congestion time.
    pub capacity: f64,
}

impl Select for Proportional {
    #[inline]
    fn select(
        &mut self,
        flows: &Flows,
        now: f64,
        rng: &mut SimRng,
        _: &mut Vec<usize>,
    ) -> Result<Hit, FluidError> {
        // P(i) = x_i / c: the first i whose running sum of rates exceeds u c. The rates sum to c
        // up to rounding; a draw in that last sliver goes to the last connection with a
        // positive rate.
        let target = rng.gen::<f64>() * self.capacity;
        let mut running = 0.0;
        let mut last_positive = 0;
        for i in 0..flows.len() {
            let x = flows.rate(i, now);
            running += x;
            if running > target {
                return Ok(Hit::One(i));
            }
            if x > 0.0 {
                last_positive = i;
            }
        }
        Ok(Hit::One(last_positive))
    }
}

/// Largest-rate, lowest index among equals.
pub(super) struct Largest;

/// Index of the largest current rate (lowest index among equals).
#[inline]
pub(super) fn argmax_rate(flows: &Flows, now: f64) -> usize {
    let mut best = 0;
    let mut best_rate = flows.rate(0, now);
    for i in 1..flows.len() {
        let x = flows.rate(i, now);
        if x > best_rate {
            best = i;
            best_rate = x;
        }
    }
    best
}

impl Select for Largest {
    #[inline]
    fn select(
        &mut self,
        flows: &Flows,
        now: f64,
        _: &mut SimRng,
        _: &mut Vec<usize>,
    ) -> Result<Hit, FluidError> {
        Ok(Hit::One(argmax_rate(flows, now)))
    }
}

/// ALL: synchronised decrease.
pub(super) struct Everyone;

impl Select for Everyone {
    #[inline]
    fn select(
        &mut self,
        _: &Flows,
        _: f64,
        _: &mut SimRng,
        _: &mut Vec<usize>,
    ) -> Result<Hit, FluidError> {
        Ok(Hit::All)
    }
}

/// Adapter from a [`CustomPolicy`] to the engine: materialises the rates, asks the policy.
pub(super) struct Custom<'a, P: CustomPolicy + ?Sized> {
    pub policy: &'a mut P,
    pub rates: Vec<f64>,
}

impl<P: CustomPolicy + ?Sized> Select for Custom<'_, P> {
    fn select(
        &mut self,
        flows: &Flows,
        now: f64,
        _: &mut SimRng,
        listed: &mut Vec<usize>,
    ) -> Result<Hit, FluidError> {
        for (i, slot) in self.rates.iter_mut().enumerate() {
            *slot = flows.rate(i, now);
        }
        self.policy
            .select(&self.rates, listed)
            .map_err(|PolicyError(message)| FluidError::Policy(message))?;
        Ok(Hit::Listed)
    }
}
