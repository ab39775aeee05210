//! Lateness of the emulator: for every delivered packet, the time it was actually written to
//! the destination's TUN device minus its ideal time (departure + delay from the link core).
//! Kept in an HDR histogram (hdrhistogram crate, 3 significant digits: quantiles within 0.1 %)
//! so that memory stays bounded over any run length.

#![forbid(unsafe_code)]

use hdrhistogram::Histogram;
use serde::Serialize;

/// The lateness quantiles of a run, in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LatenessSummary {
    pub packets: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    /// Packets at least 1 ms late.
    pub over_1ms: u64,
}

#[derive(Debug)]
pub struct Lateness {
    histogram: Histogram<u64>,
    over_1ms: u64,
}

impl Default for Lateness {
    fn default() -> Self {
        Self::new()
    }
}

impl Lateness {
    pub fn new() -> Self {
        Lateness {
            // 1 ns to 1 hour at 3 significant digits (a few hundred kB); longer saturates.
            histogram: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"),
            over_1ms: 0,
        }
    }

    /// Records one packet written at `actual` whose ideal time was `ideal` (ns on one clock);
    /// a packet written early (never, by construction) counts as 0.
    pub fn record(&mut self, ideal: u64, actual: u64) {
        let late = actual.saturating_sub(ideal);
        if late >= 1_000_000 {
            self.over_1ms += 1;
        }
        self.histogram.saturating_record(late);
    }

    pub fn summary(&self) -> LatenessSummary {
        let h = &self.histogram;
        if h.is_empty() {
            return LatenessSummary::default();
        }
        LatenessSummary {
            packets: h.len(),
            p50_ns: h.value_at_quantile(0.5),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
            over_1ms: self.over_1ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_a_known_sample() {
        let mut l = Lateness::new();
        // 1..=1000 us late: p50 = 500 us, p99 = 990 us, max = 1000 us (within 0.1 %).
        for us in 1..=1000u64 {
            l.record(10_000, 10_000 + us * 1000);
        }
        let s = l.summary();
        assert_eq!(s.packets, 1000);
        let close = |got: u64, want: u64| (got as f64 - want as f64).abs() <= want as f64 * 1e-3;
        assert!(close(s.p50_ns, 500_000), "{s:?}");
        assert!(close(s.p99_ns, 990_000), "{s:?}");
        assert!(close(s.max_ns, 1_000_000), "{s:?}");
        assert_eq!(s.over_1ms, 1);
    }

    #[test]
    fn empty_and_early_are_zero() {
        assert_eq!(Lateness::new().summary(), LatenessSummary::default());
        let mut l = Lateness::new();
        l.record(5, 3);
        assert_eq!(l.summary().max_ns, 0);
    }
}
