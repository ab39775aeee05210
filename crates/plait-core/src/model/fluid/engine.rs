//! The event-driven integrator: exact between congestion times, allocation-free per event.
//!
//! Between two congestion times every rate is linear, eq. (2): `x_i(t) = x_i(T_n) +
//! eta_i (t - T_n)`. Each flow is therefore stored lazily as a base rate and the time it was
//! last set (`x_i(t) = base_rate_i + eta_i (t - base_time_i)`); a flow's segment is closed, and
//! its integrals `∫x` and `∫x²` added, only when it is signalled (or at the occasional clock
//! rebase). With one connection signalled per event the work per event is O(1) plus what the
//! policy needs to look at.
//!
//! After the decrease the aggregate is `c - d` with `d = sum over signalled (1 - beta_i) x_i`,
//! and it grows with slope `eta_bar = sum_i eta_i`, so the next congestion time is `d / eta_bar`
//! later (eq. (4)); over that interval `S` is linear from `c - d` to `c`:
//! `∫S = tau (c - d/2)` and `∫S² = tau (c² - c d + d²/3)`.

use super::flows::Flows;
use super::policy::{argmax_rate, Hit, Select};
use super::{FluidConfig, FluidError, FluidResult, SamplePath};
use crate::rng::{rng_from_seed, SimRng};

/// Events between clock rebases. Absolute times only grow, and `now - base_time` loses
/// relative precision as they do; rebasing folds every open segment and restarts the clock at
/// zero, which costs O(N) once per this many events.
const REBASE_EVERY: u64 = 4096;

/// Beatdown sub-events drawn in a recorded sample path stop once the decrease falls below this
/// fraction of the capacity (the accumulation point itself is reached in closed form).
const BEATDOWN_DRAW_FLOOR: f64 = 1e-4;
const BEATDOWN_DRAW_MAX: usize = 64;

/// Time integrals and event counts of the measured window.
struct Totals {
    flow_int_x: Vec<f64>,
    flow_int_x2: Vec<f64>,
    flow_hits: Vec<u64>,
    int_s: f64,
    int_s2: f64,
    hit_sum: f64,
    hit_sq_sum: f64,
    events: u64,
    /// Time folded in by rebases since the measurement started.
    elapsed: f64,
}

impl Totals {
    fn new(n: usize) -> Self {
        Totals {
            flow_int_x: vec![0.0; n],
            flow_int_x2: vec![0.0; n],
            flow_hits: vec![0; n],
            int_s: 0.0,
            int_s2: 0.0,
            hit_sum: 0.0,
            hit_sq_sum: 0.0,
            events: 0,
            elapsed: 0.0,
        }
    }

    fn clear(&mut self) {
        let n = self.flow_hits.len();
        *self = Totals::new(n);
    }
}

/// Sample-path recorder: the first `limit` congestion times of the measured window.
struct Recorder {
    limit: usize,
    armed: bool,
    path: SamplePath,
}

impl Recorder {
    #[inline]
    fn wants_row(&self) -> bool {
        self.armed && self.path.time.len() < self.limit
    }
}

pub(super) struct Engine {
    flows: Flows,
    capacity: f64,
    eta_total: f64,
    /// `1 / eta_bar`, so that the hot loop multiplies instead of dividing.
    inverse_eta_total: f64,
    now: f64,
    since_rebase: u64,
    rng: SimRng,
    totals: Totals,
    listed: Vec<usize>,
    /// `stamp[i] == stamp_now` marks flow `i` as already listed in the current event.
    stamp: Vec<u64>,
    stamp_now: u64,
    recorder: Recorder,
    warmup: u64,
    events: u64,
}

impl Engine {
    /// A validated configuration; the clock starts at the first congestion time.
    pub fn new(config: &FluidConfig) -> Self {
        let n = config.n();
        let capacity = config.capacity;
        let eta_total: f64 = config.eta.iter().sum();
        let initial = match &config.initial {
            Some(rates) => rates.clone(),
            None => vec![capacity / n as f64; n],
        };
        // If the initial rates leave headroom, they grow until the aggregate first meets c;
        // this happens before the warm-up and is never measured.
        let headroom = (capacity - initial.iter().sum::<f64>()).max(0.0);
        let now = headroom / eta_total;
        Engine {
            flows: Flows {
                eta: config.eta.clone(),
                beta: config.beta.clone(),
                base_rate: initial,
                base_time: vec![0.0; n],
            },
            capacity,
            eta_total,
            inverse_eta_total: 1.0 / eta_total,
            now,
            since_rebase: 0,
            rng: rng_from_seed(config.seed),
            totals: Totals::new(n),
            listed: Vec::with_capacity(n),
            stamp: vec![0; n],
            stamp_now: 0,
            recorder: Recorder {
                limit: config.record,
                armed: false,
                // Reserve for a modest path only; a longer one grows as it is recorded.
                path: SamplePath::with_capacity(n, config.record.min(1 << 16)),
            },
            warmup: config.warmup,
            events: config.events,
        }
    }

    /// Runs warm-up and measurement with a per-event policy.
    pub fn run<S: Select>(mut self, select: &mut S) -> Result<FluidResult, FluidError> {
        for _ in 0..self.warmup {
            self.step(select)?;
        }
        self.start_measurement();
        for _ in 0..self.events {
            self.step(select)?;
        }
        Ok(self.finish())
    }

    /// Runs warm-up and measurement under beatdown; an "event" is a whole beatdown phase.
    pub fn run_beatdown(mut self) -> FluidResult {
        for _ in 0..self.warmup {
            self.beatdown_phase();
        }
        self.start_measurement();
        for _ in 0..self.events {
            self.beatdown_phase();
        }
        self.finish()
    }

    /// Closes flow `i`'s open segment at `now`, adding `∫x` and `∫x²` over it:
    /// with `r` the base rate and `L` the length, `∫x = L (r + eta L / 2)` and
    /// `∫x² = L (r² + r eta L + (eta L)² / 3)`.
    #[inline]
    fn close_segment(&mut self, i: usize) {
        let len = self.now - self.flows.base_time[i];
        let r = self.flows.base_rate[i];
        let rise = self.flows.eta[i] * len;
        self.totals.flow_int_x[i] += len * (r + 0.5 * rise);
        self.totals.flow_int_x2[i] += len * (r * r + r * rise + rise * rise / 3.0);
    }

    /// Signals flow `i` at the current congestion time: its rate drops to `beta_i x_i`
    /// (eq. (3) with `z_i(n) = 1`). Returns the pre-decrease rate.
    #[inline]
    fn signal(&mut self, i: usize) -> f64 {
        let x = self.flows.rate(i, self.now);
        self.close_segment(i);
        self.flows.base_rate[i] = self.flows.beta[i] * x;
        self.flows.base_time[i] = self.now;
        self.totals.flow_hits[i] += 1;
        x
    }

    /// One congestion time with a per-event policy.
    #[inline]
    fn step<S: Select>(&mut self, select: &mut S) -> Result<(), FluidError> {
        let recording = self.recorder.wants_row();
        if recording {
            self.record_before();
        }
        self.listed.clear();
        let hit = select.select(&self.flows, self.now, &mut self.rng, &mut self.listed)?;
        // `decrease` is d = sum over signalled (1 - beta_i) x_i; `signalled` is Y = sum x_i.
        let (decrease, signalled) = match hit {
            Hit::One(v) => {
                let x = self.signal(v);
                ((1.0 - self.flows.beta[v]) * x, x)
            }
            Hit::All => {
                let (mut decrease, mut signalled) = (0.0, 0.0);
                for i in 0..self.flows.len() {
                    let x = self.signal(i);
                    decrease += (1.0 - self.flows.beta[i]) * x;
                    signalled += x;
                }
                (decrease, signalled)
            }
            Hit::Listed => self.signal_listed()?,
        };
        if recording {
            self.record_after(hit);
        }
        self.advance(decrease, signalled);
        Ok(())
    }

    /// Validates and applies a custom policy's list.
    fn signal_listed(&mut self) -> Result<(f64, f64), FluidError> {
        let n = self.flows.len();
        if self.listed.is_empty() {
            return Err(FluidError::InvalidSelection(
                "the policy signalled no connection at a congestion time".into(),
            ));
        }
        self.stamp_now += 1;
        for k in 0..self.listed.len() {
            let i = self.listed[k];
            if i >= n {
                return Err(FluidError::InvalidSelection(format!(
                    "connection index {i} out of range for {n} connections"
                )));
            }
            if self.stamp[i] == self.stamp_now {
                return Err(FluidError::InvalidSelection(format!(
                    "connection {i} signalled twice at one congestion time"
                )));
            }
            self.stamp[i] = self.stamp_now;
        }
        let (mut decrease, mut signalled) = (0.0, 0.0);
        for k in 0..self.listed.len() {
            let i = self.listed[k];
            let x = self.signal(i);
            decrease += (1.0 - self.flows.beta[i]) * x;
            signalled += x;
        }
        Ok((decrease, signalled))
    }

    /// Moves to the next congestion time after a decrease `d` (eq. (4)):
    /// `S_n = d / eta_bar`, with the aggregate linear from `c - d` to `c`.
    #[inline]
    fn advance(&mut self, decrease: f64, signalled: f64) {
        let c = self.capacity;
        let tau = decrease * self.inverse_eta_total;
        self.totals.int_s += tau * (c - 0.5 * decrease);
        self.totals.int_s2 += tau * (c * c - c * decrease + decrease * decrease / 3.0);
        self.totals.hit_sum += signalled;
        self.totals.hit_sq_sum += signalled * signalled;
        self.totals.events += 1;
        self.now += tau;
        self.since_rebase += 1;
        if self.since_rebase >= REBASE_EVERY {
            self.rebase();
        }
    }

    /// Folds every open segment into the totals and restarts the clock at zero.
    fn rebase(&mut self) {
        for i in 0..self.flows.len() {
            let x = self.flows.rate(i, self.now);
            self.close_segment(i);
            self.flows.base_rate[i] = x;
            self.flows.base_time[i] = 0.0;
        }
        self.totals.elapsed += self.now;
        self.now = 0.0;
        self.since_rebase = 0;
    }

    fn start_measurement(&mut self) {
        self.rebase();
        self.totals.clear();
        self.recorder.armed = true;
    }

    fn finish(mut self) -> FluidResult {
        self.rebase();
        let t = self.totals;
        let c = self.capacity;
        let duration = t.elapsed;
        let events = t.events as f64;
        FluidResult {
            n: self.flows.len(),
            capacity: c,
            events: t.events,
            duration,
            mean_aggregate: t.int_s / (duration * c),
            aggregate_second_moment: t.int_s2 / (duration * c * c),
            per_flow_mean: t.flow_int_x.iter().map(|v| v / (duration * c)).collect(),
            per_flow_second_moment: t
                .flow_int_x2
                .iter()
                .map(|v| v / (duration * c * c))
                .collect(),
            hit_fraction: t.flow_hits.iter().map(|&h| h as f64 / events).collect(),
            palm_hit_mean: t.hit_sum / (events * c),
            palm_hit_second_moment: t.hit_sq_sum / (events * c * c),
            path: self.recorder.path,
        }
    }

    fn record_before(&mut self) {
        let time = self.totals.elapsed + self.now;
        let path = &mut self.recorder.path;
        path.time.push(time);
        for i in 0..self.flows.len() {
            path.rates_before.push(self.flows.rate(i, self.now));
        }
    }

    fn record_after(&mut self, hit: Hit) {
        let n = self.flows.len();
        let path = &mut self.recorder.path;
        for i in 0..n {
            path.rates_after.push(self.flows.rate(i, self.now));
        }
        let row = path.hits.len();
        path.hits.resize(row + n, false);
        match hit {
            Hit::One(v) => path.hits[row + v] = true,
            Hit::All => path.hits[row..].fill(true),
            Hit::Listed => {
                for &i in &self.listed {
                    path.hits[row + i] = true;
                }
            }
        }
    }

    /// One beatdown phase (Section IV.B), integrated in closed form.
    ///
    /// The largest connection `m` (rate `x` at a congestion time) is tagged and signalled at
    /// every following congestion time. Each cycle multiplies its pre-event rate by
    /// `a = beta_m + (1 - beta_m) eta_m / eta_bar` (it drops to `beta_m x`, then grows for
    /// `(1 - beta_m) x / eta_bar`), so the decreases `d_k = (1 - beta_m) a^k x` and the cycle
    /// lengths `d_k / eta_bar` are geometric and the congestion times accumulate at
    /// `T = x / (eta_bar - eta_m)` (eq. (11)), where the tagged rate reaches zero (eq. (10)).
    /// Summing the per-cycle integrals:
    /// * tagged flow, linear from `beta_m a^k x` to `a^{k+1} x` in cycle k:
    ///   `∫x = (1-beta)(beta+a) x² / (2 eta_bar (1-a²))`,
    ///   `∫x² = (1-beta)(beta²+beta a+a²) x³ / (3 eta_bar (1-a³))`;
    /// * aggregate: `∫S = c T - sum d_k² / (2 eta_bar)`,
    ///   `∫S² = c² T - c sum d_k² / eta_bar + sum d_k³ / (3 eta_bar)`;
    /// * untagged flows grow linearly throughout and need nothing (lazy segments).
    ///
    /// With a single connection there is nobody to take over (`eta_bar = eta_m`): every
    /// policy coincides and the phase is one ordinary decrease.
    fn beatdown_phase(&mut self) {
        let m = argmax_rate(&self.flows, self.now);
        let others = self.eta_total - self.flows.eta[m];
        if others <= 0.0 {
            let recording = self.recorder.wants_row();
            if recording {
                self.record_before();
            }
            let x = self.signal(m);
            if recording {
                self.record_after(Hit::One(m));
            }
            self.advance((1.0 - self.flows.beta[m]) * x, x);
            return;
        }
        if self.recorder.wants_row() {
            self.record_beatdown_cycles(m);
        }
        let c = self.capacity;
        let eta_bar = self.eta_total;
        let beta = self.flows.beta[m];
        let x = self.flows.rate(m, self.now);
        self.close_segment(m);
        // 1 - a = (1 - beta)(eta_bar - eta_m) / eta_bar, computed without cancellation.
        let one_minus_a = (1.0 - beta) * others / eta_bar;
        let a = 1.0 - one_minus_a;
        let geometric2 = one_minus_a * (1.0 + a); // 1 - a²
        let geometric3 = one_minus_a * (1.0 + a + a * a); // 1 - a³
        let d0 = (1.0 - beta) * x;
        let duration = x / others;
        let sum_d2 = d0 * d0 / geometric2;
        let sum_d3 = d0 * d0 * d0 / geometric3;
        self.totals.flow_int_x[m] += d0 * x * (beta + a) / (2.0 * eta_bar * geometric2);
        self.totals.flow_int_x2[m] +=
            d0 * x * x * (beta * beta + beta * a + a * a) / (3.0 * eta_bar * geometric3);
        self.totals.int_s += c * duration - sum_d2 / (2.0 * eta_bar);
        self.totals.int_s2 += c * c * duration - c * sum_d2 / eta_bar + sum_d3 / (3.0 * eta_bar);
        self.totals.flow_hits[m] += 1;
        self.totals.hit_sum += x;
        self.totals.hit_sq_sum += x * x;
        self.totals.events += 1;
        self.now += duration;
        self.flows.base_rate[m] = 0.0;
        self.flows.base_time[m] = self.now;
        self.since_rebase += 1;
        if self.since_rebase >= REBASE_EVERY {
            self.rebase();
        }
    }

    /// Draws the first cycles of a beatdown phase into the sample path (sub-events whose
    /// decrease exceeds `BEATDOWN_DRAW_FLOOR c`), without touching the state.
    fn record_beatdown_cycles(&mut self, m: usize) {
        let n = self.flows.len();
        let eta_bar = self.eta_total;
        let beta = self.flows.beta[m];
        let start = self.totals.elapsed + self.now;
        let mut offset = 0.0;
        let mut tagged = self.flows.rate(m, self.now);
        let path = &mut self.recorder.path;
        for _ in 0..BEATDOWN_DRAW_MAX {
            let decrease = (1.0 - beta) * tagged;
            if path.time.len() >= self.recorder.limit
                || decrease <= BEATDOWN_DRAW_FLOOR * self.capacity
            {
                break;
            }
            path.time.push(start + offset);
            for i in 0..n {
                let x = if i == m {
                    tagged
                } else {
                    self.flows.rate(i, self.now + offset)
                };
                path.rates_before.push(x);
            }
            for i in 0..n {
                let x = if i == m {
                    beta * tagged
                } else {
                    self.flows.rate(i, self.now + offset)
                };
                path.rates_after.push(x);
                path.hits.push(i == m);
            }
            let tau = decrease / eta_bar;
            tagged = beta * tagged + self.flows.eta[m] * tau;
            offset += tau;
        }
    }
}
