//! Exact event-driven simulation of N AIMD connections sharing a link (the fluid model).
//!
//! The model is that of Altman, Barman, Tuffin and Vojnović, "Parallel TCP sockets: simple
//! model, throughput and validation" (INFOCOM 2006), Section II.A, after Baccelli and Hong:
//! connection `i` increases its rate linearly with slope `eta_i` (eq. (2)); a *link congestion
//! time* is an instant at which the aggregate rate reaches the capacity, `sum_i X_i = c`; at
//! each such time a loss policy chooses the connections that multiply their rate by `beta_i`
//! (eq. (3)); and the next congestion time follows in closed form, eq. (4):
//!
//! ```text
//! T_{n+1} - T_n = (c - sum_j (1 - beta_j) z_j(n) X_j(T_n)) / eta_bar,   eta_bar = sum_j eta_j
//! ```
//!
//! counting from the post-decrease aggregate. There is no buffer and no time step: the
//! simulator jumps from one congestion time to the next and integrates the piecewise-linear
//! rates exactly, so its time averages carry only the statistical error of a finite run.
//!
//! What it measures (all time-stationary averages over the measured window, the quantity the
//! paper's Theorems 1 and 2 are about — not averages sampled at congestion times):
//!
//! * `mean_aggregate` = `E[sum_i X_i] / c`; Theorem 1, eq. (5), predicts
//!   `1 - 1 / (1 + N (1 + beta) / (1 - beta))` for every policy that signals exactly one
//!   identical connection per congestion time, and Theorem 3 extends it to beatdown;
//!   eq. (6) gives `(1 + beta) / 2` for the synchronised policy ALL;
//! * `per_flow_mean[i]` = `E[X_i] / c` and `per_flow_second_moment[i]` = `E[X_i²] / c²`; for
//!   N = 2 and beta = 1/2 Theorem 2 lists the latter for four policies (Section III);
//! * event (Palm) averages of the signalled rate `Y`, which satisfy the policy-free identity
//!   `E0[Y²] / (c E0[Y]) = 2 / (N (1 + beta) + 1 - beta)` behind Theorem 1.
//!
//! The loss policies are in [`policy`]. Beatdown makes congestion times accumulate
//! (Section IV.B), so a beatdown "event" is a whole phase from tagging a connection to its rate
//! reaching zero, integrated in closed form.

mod engine;
mod flows;
pub mod policy;

#[cfg(test)]
mod tests;

pub use policy::{CustomPolicy, Policy, PolicyError};

use engine::Engine;
use policy::{Custom, Everyone, Largest, Proportional, Uniform, Weighted};

/// Failures of the fluid simulator.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FluidError {
    #[error("invalid fluid-model parameter: {0}")]
    InvalidParameter(String),
    #[error("unknown loss policy {0}")]
    UnknownPolicy(String),
    #[error("invalid selection by the loss policy: {0}")]
    InvalidSelection(String),
    #[error("loss policy failed: {0}")]
    Policy(String),
}

/// One run of the fluid model.
#[derive(Clone, Debug, PartialEq)]
pub struct FluidConfig {
    /// Link capacity `c` (any unit; results are normalised by it).
    pub capacity: f64,
    /// Additive-increase slope `eta_i > 0` of each connection (rate per unit time).
    pub eta: Vec<f64>,
    /// Multiplicative-decrease factor `0 < beta_i < 1` of each connection.
    pub beta: Vec<f64>,
    /// Congestion times measured (beatdown: phases).
    pub events: u64,
    /// Congestion times simulated and discarded before measuring.
    pub warmup: u64,
    /// Seed of the random stream (policies that draw).
    pub seed: u64,
    /// Record the first `record` congestion times of the measured window as a sample path.
    pub record: usize,
    /// Rates at time zero (non-negative, summing to at most `c`); equal shares `c / N` if
    /// absent. The measured window always starts at a congestion time.
    pub initial: Option<Vec<f64>>,
}

impl FluidConfig {
    /// `n` identical TCP-like connections (`beta = 1/2`, `eta = 1`) on a unit-capacity link,
    /// a million measured events after a thousand of warm-up, seed 0, no sample path.
    pub fn new(n: usize) -> Self {
        FluidConfig {
            capacity: 1.0,
            eta: vec![1.0; n],
            beta: vec![0.5; n],
            events: 1_000_000,
            warmup: 1_000,
            seed: 0,
            record: 0,
            initial: None,
        }
    }

    /// Number of connections.
    pub fn n(&self) -> usize {
        self.eta.len()
    }

    /// Sets the same `beta` for every connection.
    pub fn with_beta(mut self, beta: f64) -> Self {
        self.beta = vec![beta; self.n()];
        self
    }

    /// Sets the same `eta` for every connection.
    pub fn with_eta(mut self, eta: f64) -> Self {
        self.eta = vec![eta; self.n()];
        self
    }

    pub fn with_events(mut self, events: u64) -> Self {
        self.events = events;
        self
    }

    pub fn with_warmup(mut self, warmup: u64) -> Self {
        self.warmup = warmup;
        self
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    pub fn with_record(mut self, record: usize) -> Self {
        self.record = record;
        self
    }

    /// Checks every parameter, with a message naming the offending one.
    pub fn validate(&self) -> Result<(), FluidError> {
        let bad = |message: String| Err(FluidError::InvalidParameter(message));
        let n = self.n();
        if n == 0 {
            return bad("at least one connection is needed".into());
        }
        if !(self.capacity.is_finite() && self.capacity > 0.0) {
            return bad(format!(
                "capacity = {} must be finite and positive",
                self.capacity
            ));
        }
        if self.beta.len() != n {
            return bad(format!(
                "{} values of beta for {n} connections",
                self.beta.len()
            ));
        }
        for (i, &eta) in self.eta.iter().enumerate() {
            if !(eta.is_finite() && eta > 0.0) {
                return bad(format!("eta[{i}] = {eta} must be finite and positive"));
            }
        }
        for (i, &beta) in self.beta.iter().enumerate() {
            if !(beta > 0.0 && beta < 1.0) {
                return bad(format!(
                    "beta[{i}] = {beta} must lie strictly between 0 and 1"
                ));
            }
        }
        if self.events == 0 {
            return bad("at least one measured event is needed".into());
        }
        if let Some(initial) = &self.initial {
            if initial.len() != n {
                return bad(format!(
                    "{} initial rates for {n} connections",
                    initial.len()
                ));
            }
            for (i, &x) in initial.iter().enumerate() {
                if !(x.is_finite() && x >= 0.0) {
                    return bad(format!(
                        "initial rate [{i}] = {x} must be finite and non-negative"
                    ));
                }
            }
            let total: f64 = initial.iter().sum();
            if total > self.capacity * (1.0 + 1e-12) {
                return bad(format!(
                    "initial rates sum to {total}, above the capacity {}",
                    self.capacity
                ));
            }
        }
        Ok(())
    }
}

/// The first congestion times of a run, as columns. Row `k` is the congestion time
/// `time[k]` (measured from the start of the window); `rates_before` and `rates_after` are
/// row-major `rows x n` (rates just before and just after the decrease), `hits` marks the
/// signalled connections. Under beatdown the rows are the visible cycles of each phase.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SamplePath {
    pub n: usize,
    pub time: Vec<f64>,
    pub rates_before: Vec<f64>,
    pub rates_after: Vec<f64>,
    pub hits: Vec<bool>,
}

impl SamplePath {
    fn with_capacity(n: usize, rows: usize) -> Self {
        SamplePath {
            n,
            time: Vec::with_capacity(rows),
            rates_before: Vec::with_capacity(rows * n),
            rates_after: Vec::with_capacity(rows * n),
            hits: Vec::with_capacity(rows * n),
        }
    }

    /// Number of recorded congestion times.
    pub fn rows(&self) -> usize {
        self.time.len()
    }
}

/// Time averages of one run, normalised by the capacity (first moments) or its square.
#[derive(Clone, Debug, PartialEq)]
pub struct FluidResult {
    pub n: usize,
    pub capacity: f64,
    /// Measured congestion times (beatdown: phases).
    pub events: u64,
    /// Length of the measured window (time units of `1 / eta`).
    pub duration: f64,
    /// `E[S] / c`, S the aggregate rate.
    pub mean_aggregate: f64,
    /// `E[S²] / c²`.
    pub aggregate_second_moment: f64,
    /// `E[X_i] / c`.
    pub per_flow_mean: Vec<f64>,
    /// `E[X_i²] / c²`.
    pub per_flow_second_moment: Vec<f64>,
    /// Fraction of the measured events at which connection `i` was signalled.
    pub hit_fraction: Vec<f64>,
    /// `E0[Y] / c`: event average of the summed pre-decrease rate of the signalled connections.
    pub palm_hit_mean: f64,
    /// `E0[Y²] / c²`.
    pub palm_hit_second_moment: f64,
    /// Sample path (empty unless `record > 0`).
    pub path: SamplePath,
}

/// Simulates the fluid model under a built-in policy.
pub fn simulate(config: &FluidConfig, policy: &Policy) -> Result<FluidResult, FluidError> {
    config.validate()?;
    let n = config.n();
    let engine = Engine::new(config);
    match policy {
        Policy::RateIndependent { weights: None } => engine.run(&mut Uniform { n }),
        Policy::RateIndependent {
            weights: Some(weights),
        } => {
            validate_weights(weights, n)?;
            engine.run(&mut Weighted::new(weights))
        }
        Policy::RateProportional => engine.run(&mut Proportional {
            capacity: config.capacity,
        }),
        Policy::LargestRate => engine.run(&mut Largest),
        Policy::Beatdown => Ok(engine.run_beatdown()),
        Policy::All => engine.run(&mut Everyone),
    }
}

/// Simulates the fluid model under a user-defined policy.
pub fn simulate_custom<P: CustomPolicy + ?Sized>(
    config: &FluidConfig,
    policy: &mut P,
) -> Result<FluidResult, FluidError> {
    config.validate()?;
    let mut select = Custom {
        policy,
        rates: vec![0.0; config.n()],
    };
    Engine::new(config).run(&mut select)
}

fn validate_weights(weights: &[f64], n: usize) -> Result<(), FluidError> {
    let bad = |message: String| Err(FluidError::InvalidParameter(message));
    if weights.len() != n {
        return bad(format!("{} weights for {n} connections", weights.len()));
    }
    for (i, &w) in weights.iter().enumerate() {
        if !(w.is_finite() && w >= 0.0) {
            return bad(format!("weight[{i}] = {w} must be finite and non-negative"));
        }
    }
    if weights.iter().sum::<f64>() <= 0.0 {
        return bad("the weights must not all be zero".into());
    }
    Ok(())
}
