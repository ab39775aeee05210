//! Periodic loss: a deterministic pattern, as ns-2's `ErrorModel/Periodic` in packet units.
//! Every `every`-th packet is lost (the `every`-th, `2 every`-th, ...), counting from `offset`
//! packets already seen. It never draws from the random stream, so adding it to a link perturbs
//! nothing else.

use super::{Loss, LossKind};
use crate::registry::{AlgorithmSpec, Param, Scalar};
use crate::rng::SimRng;

/// The registry declaration of periodic loss.
pub const SPEC: AlgorithmSpec<LossKind> = AlgorithmSpec {
    name: "periodic",
    summary: "every n-th packet lost",
    params: &[
        Param::integer("every", "period")
            .unit("packets")
            .at_least(1.0),
        Param::integer("offset", "packets counted as already seen at the start")
            .unit("packets")
            .default(Scalar::Integer(0)),
    ],
    finish: None,
    build: |params, ()| Periodic::new(params.integer("every"), params.integer("offset")).into(),
};

/// Every `every`-th packet lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Periodic {
    every: u64,
    /// Packets so far, starting from the offset; a packet is lost when the count including it
    /// is a multiple of `every`. `every == 0` never loses.
    seen: u64,
}

impl Periodic {
    pub fn new(every: u64, offset: u64) -> Self {
        Periodic {
            every,
            seen: offset,
        }
    }
}

impl Loss for Periodic {
    #[inline]
    fn should_drop(&mut self, _rng: &mut SimRng) -> bool {
        self.seen += 1;
        self.every != 0 && self.seen % self.every == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;
    use rand::RngCore;

    #[test]
    fn pattern_with_offset() {
        let mut rng = rng_from_seed(3);
        // The 1-based indices, among packets 1..=12, of the packets lost.
        let indices = |every, offset, rng: &mut SimRng| {
            let mut model = Periodic::new(every, offset);
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
    fn consumes_no_randomness() {
        let mut rng = rng_from_seed(4);
        let mut model = Periodic::new(2, 0);
        for _ in 0..1000 {
            model.should_drop(&mut rng);
        }
        assert_eq!(rng.next_u64(), rng_from_seed(4).next_u64());
    }
}
