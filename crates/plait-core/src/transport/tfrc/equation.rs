//! The throughput equation a TFRC-family sender follows, and its inverse for the receiver's
//! first loss interval.
//!
//! * TFRC: the TCP equation of RFC 5348 §3.1 with b = 1 and t_RTO = 4·R
//!   (`crate::model::tfrc::rate`).
//! * MulTFRC: the n-flow equation (`crate::model::multfrc::rate`, the draft form by default)
//!   with the measured packets per loss event j.
//! * CP: n times the TCP equation, evaluated at the loss event rate of one flow share
//!   (Ott, Sparks, Mayer-Patel, INFOCOM 2004; the share filter lives in the receiver), or of
//!   the whole flow (`whole_flow`: the TFRC variant of MulTCP, Singh, Pradhan and Francis,
//!   ICNP 2004 §2, Table 2: "the throughput equation of mulTCP ... in conjunction with a TFRC
//!   rate adjustment loop", MulTCP's equation being N times a TCP flow's).

use crate::model::{multfrc, tfrc};

/// RFC 5348 §3.1: "b ... SHOULD be set to 1".
const PACKETS_PER_ACK: f64 = 1.0;

/// Which equation turns (s, R, p, j) into an allowed rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateEquation {
    /// One TCP flow (RFC 5348 §3.1).
    Tfrc,
    /// n TCP flows (MulTFRC), n a positive real.
    MulTfrc {
        flows: f64,
        options: multfrc::Options,
    },
    /// n flow shares (CP): n times the TCP equation; the loss event rate is one share's, or
    /// the whole flow's when `whole_flow` (the TFRC variant of MulTCP).
    Cp { flows: f64, whole_flow: bool },
}

impl RateEquation {
    /// The number of flows the sender stands for (1 for TFRC).
    pub fn flows(&self) -> f64 {
        match *self {
            RateEquation::Tfrc => 1.0,
            RateEquation::MulTfrc { flows, .. } | RateEquation::Cp { flows, .. } => flows,
        }
    }

    /// Replaces n (MulTFRC and CP); TFRC has none and ignores it.
    pub fn set_flows(&mut self, n: f64) {
        match self {
            RateEquation::Tfrc => {}
            RateEquation::MulTfrc { flows, .. } | RateEquation::Cp { flows, .. } => *flows = n,
        }
    }

    /// The allowed rate in bytes/s for segment size `s` (bytes), RTT `rtt_s`, loss event rate
    /// `p` in (0, 1) and packets lost per loss event `j` (≥ 1), with t_RTO = 4·R.
    pub fn rate(&self, s: f64, rtt_s: f64, p: f64, j: f64) -> f64 {
        let t_rto = tfrc::default_rto(rtt_s);
        match *self {
            RateEquation::Tfrc => tfrc::rate(s, rtt_s, p, t_rto, PACKETS_PER_ACK),
            RateEquation::Cp { flows, .. } => {
                flows * tfrc::rate(s, rtt_s, p, t_rto, PACKETS_PER_ACK)
            }
            RateEquation::MulTfrc { flows, options } => multfrc::rate(
                &multfrc::Inputs {
                    flows,
                    loss_event_rate: p,
                    packets_per_loss_event: j.max(1.0),
                    rtt_s,
                    segment_bytes: s,
                    t_rto_s: t_rto,
                    packets_per_ack: PACKETS_PER_ACK,
                },
                options,
            ),
        }
    }

    /// The loss event rate at which the equation allows `target` bytes/s (RFC 5348 §6.3.1,
    /// the first loss interval is 1/p of it). Found by bisection on log p, to a relative
    /// precision of 1e-9 in p; the equation is decreasing in p. Clamped to [1e-12, 1).
    pub fn invert(&self, target: f64, s: f64, rtt_s: f64, j: f64) -> f64 {
        const LOW: f64 = 1e-12;
        const HIGH: f64 = 1.0 - 1e-9;
        if target.is_nan() || target <= 0.0 || rtt_s.is_nan() || rtt_s <= 0.0 {
            return HIGH;
        }
        let (mut lo, mut hi) = (LOW.ln(), HIGH.ln());
        if self.rate(s, rtt_s, LOW, j) <= target {
            return LOW;
        }
        if self.rate(s, rtt_s, HIGH, j) >= target {
            return HIGH;
        }
        // The rate may be non-monotone in p near p = 1 (MulTFRC's timeout term); bisection
        // still converges to a crossing.
        while hi - lo > 1e-9 {
            let mid = 0.5 * (lo + hi);
            if self.rate(s, rtt_s, mid.exp(), j) > target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (0.5 * (lo + hi)).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn tfrc_matches_the_reference_vectors() {
        // reference/ratebased_aggregate.md §1.1 (s = 1460, R = 0.1 s).
        let e = RateEquation::Tfrc;
        assert!(close(e.rate(1460.0, 0.1, 0.01, 1.0), 164005.0, 5e-6));
        assert!(close(e.rate(1460.0, 0.1, 0.1, 1.0), 25843.5, 5e-6));
    }

    #[test]
    fn multfrc_matches_the_reference_vectors() {
        // §2.6, draft form: (p, j, n) -> X (B/s), s = 1460, R = 0.1, t_RTO = 0.4.
        for (p, j, n, x) in [
            (0.01, 1.0, 2.0, 345453.0),
            (0.01, 2.0, 2.0, 266148.0),
            (0.01, 3.0, 4.0, 411389.0),
            (0.001, 5.0, 10.0, 2.74267e6),
            (0.01, 1.0, 0.5, 82328.3),
        ] {
            let e = RateEquation::MulTfrc {
                flows: n,
                options: multfrc::Options::default(),
            };
            assert!(close(e.rate(1460.0, 0.1, p, j), x, 5e-6), "{p} {j} {n}");
        }
    }

    #[test]
    fn cp_is_n_times_tfrc() {
        let cp = RateEquation::Cp {
            flows: 4.0,
            whole_flow: false,
        };
        let x = RateEquation::Tfrc.rate(1000.0, 0.05, 0.02, 3.0);
        assert_eq!(cp.rate(1000.0, 0.05, 0.02, 3.0), 4.0 * x);
        assert_eq!(cp.flows(), 4.0);
    }

    #[test]
    fn inversion_recovers_the_loss_event_rate() {
        // §1.8 examples: X_target = 50, 100, 500 pkt/s at R = 0.1 -> p* = 0.034378,
        // 0.0121727, 5.9364e-4.
        let e = RateEquation::Tfrc;
        for (target, p) in [(50.0, 0.034378), (100.0, 0.0121727), (500.0, 5.9364e-4)] {
            assert!(close(e.invert(target, 1.0, 0.1, 1.0), p, 1e-4), "{target}");
        }
        let m = RateEquation::MulTfrc {
            flows: 3.0,
            options: multfrc::Options::default(),
        };
        let p = m.invert(200_000.0, 1460.0, 0.05, 2.0);
        assert!(close(m.rate(1460.0, 0.05, p, 2.0), 200_000.0, 1e-6));
    }

    #[test]
    fn setting_n_changes_the_multi_flow_equations_only() {
        let mut e = RateEquation::MulTfrc {
            flows: 2.0,
            options: multfrc::Options::default(),
        };
        e.set_flows(4.0);
        assert_eq!(e.flows(), 4.0);
        let mut t = RateEquation::Tfrc;
        t.set_flows(4.0);
        assert_eq!(t.flows(), 1.0);
    }
}
