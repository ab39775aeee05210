//! Random loss models applied on a link direction before the queue.
//!
//! - Bernoulli: independent losses with probability `p`.
//! - Periodic: a deterministic pattern (as ns-2's `ErrorModel/Periodic` in packet units); it
//!   never draws from the random stream, so adding it to a link perturbs nothing else.
//! - Gilbert–Elliott: E. N. Gilbert, "Capacity of a burst-noise channel", Bell System Technical
//!   Journal 39, 1960, and E. O. Elliott, "Estimates of error rates for codes on burst-noise
//!   channels", BSTJ 42, 1963: a two-state Markov chain stepped once per packet. With
//!   `p_gb = p_good_to_bad` and `p_bg = p_bad_to_good`, the chain spends the fraction
//!   `pi_b = p_gb / (p_gb + p_bg)` of packets in the bad state, the long-run loss rate is
//!   `pi_g loss_good + pi_b loss_bad`, and a stay in the bad state lasts `1 / p_bg` packets on
//!   average (geometric).
//!
//! Each packet is judged in the current state, then the chain moves; the first packet is judged
//! in the good state. Every call draws the same number of random numbers whatever the
//! outcome (one for Bernoulli, two for Gilbert–Elliott), so a stream's use does not depend on
//! the parameters' values.

use rand::Rng;

use crate::rng::SimRng;

/// A loss model as named in a scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossSpec {
    /// Each packet is lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Every `every`-th packet is lost (the `every`-th, `2 every`-th, ...), counting from
    /// `offset` packets already seen.
    Periodic { every: u64, offset: u64 },
    /// Two-state Markov chain (Gilbert–Elliott): `p_good_to_bad`, `p_bad_to_good` per packet,
    /// loss probability `loss_good` / `loss_bad` in each state. Starts in the good state.
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        loss_good: f64,
        loss_bad: f64,
    },
}

impl LossSpec {
    /// The model in its initial state.
    pub fn build(&self) -> LossModel {
        match *self {
            LossSpec::Bernoulli { p } => LossModel::Bernoulli { p },
            LossSpec::Periodic { every, offset } => LossModel::Periodic {
                every,
                seen: offset,
            },
            LossSpec::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
                is_bad: false,
            },
        }
    }
}

/// A loss model with its state, consulted once per packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossModel {
    Bernoulli {
        p: f64,
    },
    /// `seen` counts the packets so far, starting from the spec's `offset`; a packet is lost
    /// when the count including it is a multiple of `every`. `every == 0` never loses.
    Periodic {
        every: u64,
        seen: u64,
    },
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        loss_good: f64,
        loss_bad: f64,
        /// Current state of the chain.
        is_bad: bool,
    },
}

impl LossModel {
    /// Whether the next packet is lost. Call exactly once per packet.
    pub fn should_drop(&mut self, rng: &mut SimRng) -> bool {
        match self {
            LossModel::Bernoulli { p } => rng.gen::<f64>() < *p,
            LossModel::Periodic { every, seen } => {
                *seen += 1;
                *every != 0 && *seen % *every == 0
            }
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
                is_bad,
            } => {
                let loss = if *is_bad { *loss_bad } else { *loss_good };
                let lost = rng.gen::<f64>() < loss;
                let leave = if *is_bad {
                    *p_bad_to_good
                } else {
                    *p_good_to_bad
                };
                if rng.gen::<f64>() < leave {
                    *is_bad = !*is_bad;
                }
                lost
            }
        }
    }

    /// Whether a Gilbert–Elliott chain is in its bad state (false for the other models).
    pub fn is_bad(&self) -> bool {
        matches!(self, LossModel::GilbertElliott { is_bad: true, .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;
    use rand::RngCore;

    #[test]
    fn bernoulli_empirical_rate() {
        let mut model = LossSpec::Bernoulli { p: 0.03 }.build();
        let mut rng = rng_from_seed(1);
        let n = 200_000;
        let lost = (0..n).filter(|_| model.should_drop(&mut rng)).count();
        // sd = sqrt(n p (1 - p)) = 76; allow 5 sd.
        assert!((lost as f64 - 6000.0).abs() < 380.0, "lost {lost}");
    }

    #[test]
    fn bernoulli_extremes() {
        let mut rng = rng_from_seed(2);
        let mut never = LossSpec::Bernoulli { p: 0.0 }.build();
        let mut always = LossSpec::Bernoulli { p: 1.0 }.build();
        for _ in 0..10_000 {
            assert!(!never.should_drop(&mut rng));
            assert!(always.should_drop(&mut rng));
        }
    }

    #[test]
    fn periodic_pattern_with_offset() {
        let mut rng = rng_from_seed(3);
        // The 1-based indices, among packets 1..=12, of the packets lost.
        let indices = |every, offset, rng: &mut SimRng| {
            let mut model = LossSpec::Periodic { every, offset }.build();
            let mut out = Vec::new();
            for k in 1..=12u64 {
                if model.should_drop(rng) {
                    out.push(k);
                }
            }
            out
        };
        assert_eq!(indices(3, 0, &mut rng), vec![3, 6, 9, 12]);
        assert_eq!(indices(3, 1, &mut rng), vec![2, 5, 8, 11]);
        assert_eq!(indices(3, 2, &mut rng), vec![1, 4, 7, 10]);
        assert_eq!(indices(3, 3, &mut rng), vec![3, 6, 9, 12]);
        assert_eq!(indices(1, 5, &mut rng), (1..=12).collect::<Vec<_>>());
        assert_eq!(indices(5, 7, &mut rng), vec![3, 8]);
        assert_eq!(indices(0, 0, &mut rng), Vec::<u64>::new());
    }

    #[test]
    fn periodic_consumes_no_randomness() {
        let mut rng = rng_from_seed(4);
        let mut model = LossSpec::Periodic {
            every: 2,
            offset: 0,
        }
        .build();
        for _ in 0..1000 {
            model.should_drop(&mut rng);
        }
        assert_eq!(rng.next_u64(), rng_from_seed(4).next_u64());
    }

    #[test]
    fn gilbert_elliott_starts_good_and_follows_the_chain() {
        // Deterministic chain: always switch, lose only in the bad state.
        let spec = LossSpec::GilbertElliott {
            p_good_to_bad: 1.0,
            p_bad_to_good: 1.0,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let mut model = spec.build();
        let mut rng = rng_from_seed(5);
        assert!(!model.is_bad());
        let pattern: Vec<bool> = (0..8).map(|_| model.should_drop(&mut rng)).collect();
        assert_eq!(
            pattern,
            vec![false, true, false, true, false, true, false, true]
        );
    }

    #[test]
    fn gilbert_elliott_stationary_rate_and_burst_length() {
        let (p_gb, p_bg, loss_good, loss_bad) = (0.01, 0.2, 0.001, 0.6);
        let spec = LossSpec::GilbertElliott {
            p_good_to_bad: p_gb,
            p_bad_to_good: p_bg,
            loss_good,
            loss_bad,
        };
        let mut model = spec.build();
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
    fn gilbert_elliott_loss_bursts_have_mean_one_over_p_bg() {
        // With loss only (and always) in the bad state, runs of losses are the bad sojourns.
        let p_bg = 0.25;
        let spec = LossSpec::GilbertElliott {
            p_good_to_bad: 0.02,
            p_bad_to_good: p_bg,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let mut model = spec.build();
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
