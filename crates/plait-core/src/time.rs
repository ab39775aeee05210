//! Integer simulated time and link rates.
//!
//! `SimTime` counts nanoseconds since the start of a run and is used both for instants and for
//! durations. `Rate` is in bits per second. Serialisation times are computed with integer
//! arithmetic; [`Rate::tx_time`] returns the remainder so that a link can carry fractional
//! nanoseconds from one packet to the next instead of rounding them away per packet.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// Nanoseconds since the start of the run (or a duration in nanoseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimTime(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimTime(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative or NaN inputs give zero.
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            SimTime(0)
        } else if s >= u64::MAX as f64 / 1e9 {
            SimTime::MAX
        } else {
            SimTime((s * 1e9).round() as u64)
        }
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds, correctly rounded (division, not multiplication by 1e-9, so that
    /// 300 ms reads back as exactly 0.3).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
    pub fn saturating_add(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(other.0))
    }
    /// Multiplies a duration by an integer factor, saturating.
    pub fn saturating_mul(self, k: u64) -> SimTime {
        SimTime(self.0.saturating_mul(k))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 + rhs.0)
    }
}
impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 += rhs.0;
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}
impl SubAssign for SimTime {
    fn sub_assign(&mut self, rhs: SimTime) {
        self.0 -= rhs.0;
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s", self.as_secs_f64())
    }
}

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn from_bps(bps: u64) -> Self {
        Rate(bps)
    }
    pub const fn from_mbps(mbps: u64) -> Self {
        Rate(mbps * 1_000_000)
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }

    /// Time to serialise `bytes` at this rate, as whole nanoseconds plus a remainder.
    ///
    /// `8 * bytes * 1e9 / rate` nanoseconds; the returned remainder is in units of
    /// 1/rate ns (i.e. the numerator left over), to be added to the next computation with
    /// [`Rate::tx_time_carry`]. A zero rate is treated as infinitely slow (`SimTime::MAX`).
    pub fn tx_time(self, bytes: u64) -> SimTime {
        let mut carry = 0;
        self.tx_time_carry(bytes, &mut carry)
    }

    /// As [`Rate::tx_time`], carrying the fractional remainder in `carry` across calls so that
    /// the sum of serialisation times of many packets is exact.
    pub fn tx_time_carry(self, bytes: u64, carry: &mut u64) -> SimTime {
        if self.0 == 0 {
            return SimTime::MAX;
        }
        // 64-bit arithmetic when it cannot overflow (any packet below 2 GB): 128-bit division
        // is a library call and this runs once per packet per hop.
        if bytes < (1 << 31) {
            if let Some(numerator) = (bytes * 8_000_000_000).checked_add(*carry) {
                *carry = numerator % self.0;
                return SimTime(numerator / self.0);
            }
        }
        let numerator = bytes as u128 * 8 * 1_000_000_000 + *carry as u128;
        let rate = self.0 as u128;
        *carry = (numerator % rate) as u64;
        SimTime((numerator / rate) as u64)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}bps", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_exact() {
        // 1500 B at 100 Mb/s = 120 us exactly.
        assert_eq!(
            Rate::from_mbps(100).tx_time(1500),
            SimTime::from_micros(120)
        );
        // 40 B at 1 Gb/s = 320 ns.
        assert_eq!(Rate::from_mbps(1000).tx_time(40), SimTime(320));
    }

    #[test]
    fn carried_remainder_sums_exactly() {
        // 1 byte at 3 bit/s = 8/3 s; three packets must total exactly 8 s.
        let r = Rate(3);
        let mut carry = 0;
        let total: u64 = (0..3).map(|_| r.tx_time_carry(1, &mut carry).0).sum();
        assert_eq!(total, 8_000_000_000);
        assert_eq!(carry, 0);
    }

    #[test]
    fn wide_and_narrow_paths_agree() {
        let r = Rate(7_000_000_001);
        let (mut a, mut b) = (0, 0);
        for bytes in [1u64, 1500, 65_535, (1 << 31) - 1] {
            let narrow = r.tx_time_carry(bytes, &mut a);
            let n = bytes as u128 * 8_000_000_000 + b as u128;
            b = (n % r.0 as u128) as u64;
            assert_eq!(narrow.0 as u128, n / r.0 as u128);
            assert_eq!(a, b);
        }
        // Huge sizes take the 128-bit path: 2^40 bytes at 8 Gb/s take 2^40 ns.
        assert_eq!(Rate(8_000_000_000).tx_time(1 << 40), SimTime(1 << 40));
    }

    #[test]
    fn secs_conversion() {
        assert_eq!(SimTime::from_secs_f64(0.0495), SimTime::from_micros(49_500));
        assert_eq!(SimTime::from_secs_f64(-1.0), SimTime::ZERO);
        assert_eq!(SimTime::from_secs(2).as_secs_f64(), 2.0);
        assert_eq!(SimTime::from_millis(300).as_secs_f64(), 0.3);
        assert_eq!(SimTime::from_secs(60).as_secs_f64(), 60.0);
    }
}
