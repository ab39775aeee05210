//! Gilbert–Elliott loss: E. N. Gilbert, "Capacity of a burst-noise channel", Bell System
//! Technical Journal 39, 1960, and E. O. Elliott, "Estimates of error rates for codes on
//! burst-noise channels", BSTJ 42, 1963: a two-state Markov chain stepped once per packet. With
//! `p_gb = p_good_to_bad` and `p_bg = p_bad_to_good`, the chain spends the fraction
//! `pi_b = p_gb / (p_gb + p_bg)` of packets in the bad state, the long-run loss rate is
//! `pi_g loss_good + pi_b loss_bad`, and a stay in the bad state lasts `1 / p_bg` packets on
//! average (geometric).
//!
//! Each packet is judged in the current state, then the chain moves; the first packet is judged
//! in the good state. Every packet takes two uniform draws (the loss, then the move) whatever
//! the outcome, so a stream's use does not depend on the parameters' values.

use rand::Rng;

use super::{Loss, LossKind};
use crate::registry::{AlgorithmSpec, Param, Scalar};
use crate::rng::SimRng;

/// The registry declaration of Gilbert–Elliott loss.
pub const SPEC: AlgorithmSpec<LossKind> = AlgorithmSpec {
    name: "gilbert_elliott",
    summary: "two-state Markov loss (bursty), starting in the good state",
    params: &[
        Param::probability(
            "p_good_to_bad",
            "per-packet probability of moving to the bad state",
        ),
        Param::probability("p_bad_to_good", "per-packet probability of moving back"),
        Param::probability("loss_good", "loss probability in the good state")
            .default(Scalar::Number(0.0)),
        Param::probability("loss_bad", "loss probability in the bad state")
            .default(Scalar::Number(1.0)),
    ],
    finish: None,
    build: |params, ()| {
        GilbertElliott::new(
            params.probability("p_good_to_bad"),
            params.probability("p_bad_to_good"),
            params.probability("loss_good"),
            params.probability("loss_bad"),
        )
        .into()
    },
};

/// A Gilbert–Elliott chain with its current state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GilbertElliott {
    p_good_to_bad: f64,
    p_bad_to_good: f64,
    loss_good: f64,
    loss_bad: f64,
    is_bad: bool,
}

impl GilbertElliott {
    /// A chain in the good state.
    pub fn new(p_good_to_bad: f64, p_bad_to_good: f64, loss_good: f64, loss_bad: f64) -> Self {
        GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_good,
            loss_bad,
            is_bad: false,
        }
    }

    /// Whether the chain is in its bad state.
    pub fn is_bad(&self) -> bool {
        self.is_bad
    }
}

impl Loss for GilbertElliott {
    #[inline]
    fn should_drop(&mut self, rng: &mut SimRng) -> bool {
        let loss = if self.is_bad {
            self.loss_bad
        } else {
            self.loss_good
        };
        let lost = rng.gen::<f64>() < loss;
        let leave = if self.is_bad {
            self.p_bad_to_good
        } else {
            self.p_good_to_bad
        };
        if rng.gen::<f64>() < leave {
            self.is_bad = !self.is_bad;
        }
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;

    #[test]
    fn starts_good_and_follows_the_chain() {
        // Deterministic chain: always switch, lose only in the bad state.
        let mut model = GilbertElliott::new(1.0, 1.0, 0.0, 1.0);
        let mut rng = rng_from_seed(5);
        assert!(!model.is_bad());
        let pattern: Vec<bool> = (0..8).map(|_| model.should_drop(&mut rng)).collect();
        assert_eq!(
            pattern,
            vec![false, true, false, true, false, true, false, true]
        );
    }

    #[test]
    fn stationary_rate_and_burst_length() {
        let (p_gb, p_bg, loss_good, loss_bad) = (0.01, 0.2, 0.001, 0.6);
        let mut model = GilbertElliott::new(p_gb, p_bg, loss_good, loss_bad);
        let mut rng = rng_from_seed(6);
        let n = 2_000_000u64;
        let (mut lost, mut bad_packets, mut bad_runs) = (0u64, 0u64, 0u64);
        let mut was_bad = false;
        for _ in 0..n {
            let bad = model.is_bad();
            if bad {
                bad_packets += 1;
                if !was_bad {
                    bad_runs += 1;
                }
            }
            was_bad = bad;
            if model.should_drop(&mut rng) {
                lost += 1;
            }
        }
        let pi_b = p_gb / (p_gb + p_bg);
        let expected = (1.0 - pi_b) * loss_good + pi_b * loss_bad;
        let rate = lost as f64 / n as f64;
        // ~210 sojourns in each state per 10^4 packets: the rate is within a few percent.
        assert!(
            (rate - expected).abs() < 0.05 * expected,
            "rate {rate}, expected {expected}"
        );
        assert!((bad_packets as f64 / n as f64 - pi_b).abs() < 0.05 * pi_b);
        let mean_burst = bad_packets as f64 / bad_runs as f64;
        assert!(
            (mean_burst - 1.0 / p_bg).abs() < 0.05 / p_bg,
            "mean burst {mean_burst}"
        );
    }

    #[test]
    fn loss_bursts_have_mean_one_over_p_bg() {
        // With loss only (and always) in the bad state, runs of losses are the bad sojourns.
        let p_bg = 0.25;
        let mut model = GilbertElliott::new(0.02, p_bg, 0.0, 1.0);
        let mut rng = rng_from_seed(7);
        let (mut losses, mut bursts, mut previous) = (0u64, 0u64, false);
        for _ in 0..2_000_000 {
            let lost = model.should_drop(&mut rng);
            if lost {
                losses += 1;
                if !previous {
                    bursts += 1;
                }
            }
            previous = lost;
        }
        let mean = losses as f64 / bursts as f64;
        assert!((mean - 4.0).abs() < 0.1, "mean burst {mean}");
        let rate = losses as f64 / 2_000_000.0;
        let pi_b = 0.02 / (0.02 + p_bg);
        assert!((rate - pi_b).abs() < 0.05 * pi_b, "rate {rate}");
    }
}
