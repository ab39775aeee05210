//! Round-trip time estimation and the retransmission timeout (RFC 6298).
//!
//! [`RttEstimator`] keeps the smoothed RTT and its variation as RFC 6298 §2 defines them, the
//! smallest RTT seen, and the current retransmission timeout with the exponential backoff of
//! §5.5. It is sans-IO: the sender hands it samples (already filtered by Karn's rule, §3) and
//! asks it for the timeout; it never reads a clock.
//!
//! Arithmetic is in integer nanoseconds. Each update divides once and rounds down:
//!
//! - first sample R (§2.2): `SRTT = R`, `RTTVAR = floor(R / 2)`;
//! - later samples R' (§2.3, α = 1/8, β = 1/4):
//!   `RTTVAR = floor((3·RTTVAR + |SRTT − R'|) / 4)`, then `SRTT = floor((7·SRTT + R') / 8)`
//!   (RTTVAR is updated with the SRTT from before this sample, as §2.3 orders it);
//! - `RTO = SRTT + max(G, 4·RTTVAR)`, then clamped to `[min_rto, max_rto]` (§2.4 lower bound,
//!   §2.5 upper bound).
//!
//! The clock granularity `G` defaults to [`DEFAULT_CLOCK_GRANULARITY`] = 1 ns, the resolution of
//! [`SimTime`], so the `max` only matters once RTTVAR has decayed to almost nothing;
//! [`RttEstimator::with_clock_granularity`] sets a coarser value.
//!
//! **Linux's formula** ([`RtoFormula::Linux`], the `linux` profile's): Linux keeps the RTT
//! variation term at least `min_rto` (`tcp_rtt_estimator` floors `mdev_max_us` and `rttvar_us`
//! at `tcp_rto_min_us`; `__tcp_set_rto` returns `srtt + rttvar`), so its timeout is
//! `SRTT + max(4·RTTVAR, min_rto)`: 200 ms above the smoothed RTT, not a floor of 200 ms.
//! Here that floor is applied to the RFC's `4·RTTVAR`; Linux's per-round maximum of the
//! deviation (`mdev_max_us`), which only makes its variation rise faster, is not modelled.
//!
//! Before the first sample the timeout is the configured initial RTO (§2.1: 1 s), clamped to the
//! same bounds. On expiry of the timer the sender calls [`RttEstimator::back_off`], which doubles
//! the timeout up to `max_rto` (§5.5); the next valid sample recomputes it from SRTT and RTTVAR,
//! which collapses the backoff (§5.7 note: "a new RTT measurement ... recomputes RTO").

use crate::time::SimTime;
use crate::transport::tcp::config::{RtoFormula, TcpConfig};

/// Clock granularity `G` used unless [`RttEstimator::with_clock_granularity`] says otherwise:
/// one nanosecond, the tick of [`SimTime`].
pub const DEFAULT_CLOCK_GRANULARITY: SimTime = SimTime(1);

/// RFC 6298 estimator of SRTT, RTTVAR and RTO, with min-RTT tracking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RttEstimator {
    srtt_ns: u64,
    rttvar_ns: u64,
    latest_rtt: SimTime,
    min_rtt: SimTime,
    has_sample: bool,
    /// Current timeout, backoff included.
    rto: SimTime,
    /// Number of doublings since the last sample.
    backoff_count: u32,
    min_rto: SimTime,
    max_rto: SimTime,
    granularity: SimTime,
    formula: RtoFormula,
}

impl RttEstimator {
    /// An estimator with no sample yet: the timeout is `initial_rto` (RFC 6298 §2.1), kept
    /// within `[min_rto, max_rto]`.
    pub fn new(initial_rto: SimTime, min_rto: SimTime, max_rto: SimTime) -> Self {
        RttEstimator {
            srtt_ns: 0,
            rttvar_ns: 0,
            latest_rtt: SimTime::ZERO,
            min_rtt: SimTime::ZERO,
            has_sample: false,
            rto: bound(initial_rto, min_rto, max_rto),
            backoff_count: 0,
            min_rto,
            max_rto,
            granularity: DEFAULT_CLOCK_GRANULARITY,
            formula: RtoFormula::Rfc6298,
        }
    }

    /// An estimator with the initial, minimum and maximum RTO of a TCP configuration.
    pub fn from_config(config: &TcpConfig) -> Self {
        let mut estimator = Self::new(config.initial_rto, config.min_rto, config.max_rto);
        estimator.formula = config.rto_formula;
        estimator
    }

    /// Sets the clock granularity `G` of `RTO = SRTT + max(G, 4·RTTVAR)`.
    pub fn with_clock_granularity(mut self, granularity: SimTime) -> Self {
        self.granularity = granularity;
        if self.has_sample {
            self.rto = self.computed_rto();
        }
        self
    }

    /// Feeds one RTT measurement (the caller applies Karn's rule, RFC 6298 §3).
    #[inline(always)]
    pub fn on_sample(&mut self, rtt: SimTime) {
        let r = rtt.as_nanos();
        if self.has_sample {
            // §2.3: "RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|" with beta = 1/4,
            // computed before "SRTT <- (1 - alpha) * SRTT + alpha * R'" with alpha = 1/8.
            let deviation = self.srtt_ns.abs_diff(r);
            self.rttvar_ns = mul_add_shift(self.rttvar_ns, 3, deviation, 2);
            self.srtt_ns = mul_add_shift(self.srtt_ns, 7, r, 3);
            self.min_rtt = self.min_rtt.min(rtt);
        } else {
            // §2.2: "SRTT <- R, RTTVAR <- R/2".
            self.srtt_ns = r;
            self.rttvar_ns = r / 2;
            self.min_rtt = rtt;
            self.has_sample = true;
        }
        self.latest_rtt = rtt;
        self.backoff_count = 0;
        self.rto = self.computed_rto();
    }

    /// The timer expired: "set RTO <- RTO * 2 ('back off the timer')", bounded by `max_rto`
    /// (RFC 6298 §5.5, §2.5).
    pub fn back_off(&mut self) {
        self.rto = self.rto.saturating_mul(2).min(self.max_rto);
        self.backoff_count = self.backoff_count.saturating_add(1);
    }

    /// The retransmission timeout to arm now, backoff included.
    pub fn rto(&self) -> SimTime {
        self.rto
    }

    /// Smoothed RTT, or zero before the first sample.
    pub fn srtt(&self) -> SimTime {
        SimTime(self.srtt_ns)
    }

    /// RTT variation, or zero before the first sample.
    pub fn rttvar(&self) -> SimTime {
        SimTime(self.rttvar_ns)
    }

    /// Smallest sample seen, or zero before the first sample.
    pub fn min_rtt(&self) -> SimTime {
        self.min_rtt
    }

    /// Most recent sample, or zero before the first sample.
    pub fn latest_rtt(&self) -> SimTime {
        self.latest_rtt
    }

    pub fn has_sample(&self) -> bool {
        self.has_sample
    }

    /// Doublings applied since the last sample.
    pub fn backoff_count(&self) -> u32 {
        self.backoff_count
    }

    pub fn clock_granularity(&self) -> SimTime {
        self.granularity
    }

    /// `SRTT + max(G, K·RTTVAR)` with K = 4, within the bounds (§2.2–§2.5).
    fn computed_rto(&self) -> SimTime {
        let floor = match self.formula {
            RtoFormula::Rfc6298 => self.granularity,
            RtoFormula::Linux => self.min_rto.max(self.granularity),
        };
        let variation = self.rttvar_ns.saturating_mul(4).max(floor.as_nanos());
        bound(
            SimTime(self.srtt_ns.saturating_add(variation)),
            self.min_rto,
            self.max_rto,
        )
    }
}

/// `floor((a·k + b) / 2^shift)` without intermediate overflow (a shift, not a 128-bit
/// division: this runs on every ACK).
#[inline]
fn mul_add_shift(a: u64, k: u64, b: u64, shift: u32) -> u64 {
    ((a as u128 * k as u128 + b as u128) >> shift) as u64
}

/// Clamps to `[low, high]`; if the bounds are inverted the upper one wins.
fn bound(value: SimTime, low: SimTime, high: SimTime) -> SimTime {
    value.max(low).min(high)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimator() -> RttEstimator {
        // Bounds wide enough not to interfere with the arithmetic under test.
        RttEstimator::new(SimTime::from_secs(1), SimTime(1), SimTime::from_secs(60))
    }

    #[test]
    fn initial_rto_before_any_sample() {
        let e = estimator();
        assert!(!e.has_sample());
        assert_eq!(e.rto(), SimTime::from_secs(1));
        assert_eq!(e.srtt(), SimTime::ZERO);
        assert_eq!(e.min_rtt(), SimTime::ZERO);
        let clamped = RttEstimator::new(
            SimTime::from_millis(10),
            SimTime::from_millis(200),
            SimTime::from_secs(60),
        );
        assert_eq!(clamped.rto(), SimTime::from_millis(200));
    }

    #[test]
    fn first_sample_sets_srtt_and_half_variation() {
        let mut e = estimator();
        e.on_sample(SimTime(100_000_001));
        assert_eq!(e.srtt(), SimTime(100_000_001));
        assert_eq!(e.rttvar(), SimTime(50_000_000)); // floor(R / 2)
                                                     // RTO = SRTT + 4 * RTTVAR = 100_000_001 + 200_000_000
        assert_eq!(e.rto(), SimTime(300_000_001));
        assert_eq!(e.min_rtt(), SimTime(100_000_001));
    }

    #[test]
    fn later_samples_follow_the_rfc_filters_with_floor() {
        let mut e = estimator();
        e.on_sample(SimTime(100));
        // RTTVAR = floor((3*50 + |100 - 180|) / 4) = floor(230 / 4) = 57
        // SRTT   = floor((7*100 + 180) / 8)      = floor(880 / 8) = 110
        e.on_sample(SimTime(180));
        assert_eq!(e.rttvar(), SimTime(57));
        assert_eq!(e.srtt(), SimTime(110));
        assert_eq!(e.rto(), SimTime(110 + 4 * 57));
        // RTTVAR = floor((3*57 + |110 - 60|) / 4) = floor(221 / 4) = 55
        // SRTT   = floor((7*110 + 60) / 8)       = floor(830 / 8) = 103
        e.on_sample(SimTime(60));
        assert_eq!(e.rttvar(), SimTime(55));
        assert_eq!(e.srtt(), SimTime(103));
        assert_eq!(e.rto(), SimTime(103 + 220));
        assert_eq!(e.min_rtt(), SimTime(60));
        assert_eq!(e.latest_rtt(), SimTime(60));
    }

    #[test]
    fn granularity_floor_applies_when_variation_is_small() {
        let mut e = estimator().with_clock_granularity(SimTime(1_000));
        // Constant samples drive RTTVAR towards zero: 4*RTTVAR ends below G.
        for _ in 0..40 {
            e.on_sample(SimTime(500));
        }
        assert_eq!(e.srtt(), SimTime(500));
        assert_eq!(e.rttvar(), SimTime(0));
        assert_eq!(e.rto(), SimTime(1_500));
        // With the default G of 1 ns the same history gives SRTT + 1.
        let mut d = estimator();
        for _ in 0..40 {
            d.on_sample(SimTime(500));
        }
        assert_eq!(d.rto(), SimTime(501));
    }

    #[test]
    fn rto_is_clamped_to_min_and_max() {
        let mut e = RttEstimator::new(
            SimTime::from_secs(1),
            SimTime::from_millis(200),
            SimTime::from_secs(2),
        );
        e.on_sample(SimTime::from_millis(10)); // 10 + 20 ms = 30 ms, below the floor
        assert_eq!(e.rto(), SimTime::from_millis(200));
        let mut e = RttEstimator::new(
            SimTime::from_secs(1),
            SimTime::from_millis(200),
            SimTime::from_secs(2),
        );
        e.on_sample(SimTime::from_secs(1)); // 1 s + 2 s = 3 s, above the ceiling
        assert_eq!(e.rto(), SimTime::from_secs(2));
    }

    #[test]
    fn backoff_doubles_up_to_max_and_a_sample_resets_it() {
        let mut e = RttEstimator::new(
            SimTime::from_secs(1),
            SimTime::from_millis(200),
            SimTime::from_secs(5),
        );
        e.on_sample(SimTime::from_millis(100)); // RTO = 100 + 200 = 300 ms
        assert_eq!(e.rto(), SimTime::from_millis(300));
        e.back_off();
        assert_eq!(e.rto(), SimTime::from_millis(600));
        e.back_off();
        assert_eq!(e.rto(), SimTime::from_millis(1_200));
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), SimTime::from_millis(4_800));
        e.back_off();
        assert_eq!(e.rto(), SimTime::from_secs(5));
        e.back_off();
        assert_eq!(e.rto(), SimTime::from_secs(5));
        assert_eq!(e.backoff_count(), 6);
        // Same sample again: RTTVAR = (3*50 ms + 0) / 4 = 37.5 ms, SRTT = 100 ms.
        e.on_sample(SimTime::from_millis(100));
        assert_eq!(e.backoff_count(), 0);
        assert_eq!(e.rttvar(), SimTime(37_500_000));
        assert_eq!(e.rto(), SimTime::from_millis(250));
    }

    #[test]
    fn backoff_before_first_sample_starts_from_initial_rto() {
        let mut e = RttEstimator::new(
            SimTime::from_secs(1),
            SimTime::from_millis(200),
            SimTime::from_secs(60),
        );
        e.back_off();
        assert_eq!(e.rto(), SimTime::from_secs(2));
        assert_eq!(e.srtt(), SimTime::ZERO);
    }

    #[test]
    fn from_config_uses_the_configured_bounds() {
        let config = TcpConfig::default();
        let e = RttEstimator::from_config(&config);
        assert_eq!(e.rto(), config.initial_rto);
        assert_eq!(e.clock_granularity(), DEFAULT_CLOCK_GRANULARITY);
    }

    #[test]
    fn linux_formula_puts_min_rto_above_srtt() {
        let config = TcpConfig {
            rto_formula: RtoFormula::Linux,
            ..TcpConfig::default()
        };
        let mut linux = RttEstimator::from_config(&config);
        let mut rfc = RttEstimator::from_config(&TcpConfig::default());
        // A steady 100 ms path: RTTVAR decays to nothing.
        for _ in 0..200 {
            linux.on_sample(SimTime::from_millis(100));
            rfc.on_sample(SimTime::from_millis(100));
        }
        assert_eq!(
            rfc.rto(),
            SimTime::from_millis(200),
            "RFC 6298: the 200 ms floor"
        );
        assert_eq!(
            linux.rto(),
            SimTime::from_millis(300),
            "Linux: srtt + 200 ms"
        );
        // A large variation is used as it is by both.
        let mut linux = RttEstimator::from_config(&config);
        linux.on_sample(SimTime::from_millis(1_000));
        assert_eq!(linux.rto(), SimTime::from_millis(3_000));
    }
}
