//! Bernoulli loss: each packet is lost independently with probability `p`. One uniform draw per
//! packet, whatever the outcome.

use rand::Rng;

use super::{Loss, LossKind};
use crate::registry::{AlgorithmSpec, Param};
use crate::rng::SimRng;

/// The registry declaration of Bernoulli loss.
pub const SPEC: AlgorithmSpec<LossKind> = AlgorithmSpec {
    name: "bernoulli",
    summary: "each packet lost independently",
    params: &[Param::probability("p", "loss probability")],
    finish: None,
    build: |params, ()| Bernoulli::new(params.probability("p")).into(),
};

/// Independent losses with probability `p`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bernoulli {
    p: f64,
}

impl Bernoulli {
    pub fn new(p: f64) -> Self {
        Bernoulli { p }
    }

    pub fn p(&self) -> f64 {
        self.p
    }
}

impl Loss for Bernoulli {
    #[inline]
    fn should_drop(&mut self, rng: &mut SimRng) -> bool {
        rng.gen::<f64>() < self.p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;

    #[test]
    fn empirical_rate() {
        let mut model = Bernoulli::new(0.03);
        let mut rng = rng_from_seed(1);
        let n = 200_000;
        let lost = (0..n).filter(|_| model.should_drop(&mut rng)).count();
        // sd = sqrt(n p (1 - p)) = 76; allow 5 sd.
        assert!((lost as f64 - 6000.0).abs() < 380.0, "lost {lost}");
    }

    #[test]
    fn extremes() {
        let mut rng = rng_from_seed(2);
        let mut never = Bernoulli::new(0.0);
        let mut always = Bernoulli::new(1.0);
        for _ in 0..10_000 {
            assert!(!never.should_drop(&mut rng));
            assert!(always.should_drop(&mut rng));
        }
    }
}
