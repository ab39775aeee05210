//! Random loss models applied on a link direction before the queue.
//!
//! A model is consulted once per packet ([`Loss::should_drop`]) and draws from the link
//! direction's own random stream. One model per file, each with its registry declaration
//! (`SPEC`, see [`crate::registry`]); the built-ins are listed once in [`REGISTRY`] and
//! dispatched through the [`LossModel`] enum:
//!
//! - [`bernoulli`]: independent losses with probability `p`;
//! - [`periodic`]: a deterministic pattern that draws nothing;
//! - [`gilbert_elliott`]: a two-state Markov chain (bursty losses).

use crate::registry::{AlgorithmSpec, Category, Configured, Kind};
// The category is the registry's; this module registers into it (`impl Kind` below).
pub use crate::registry::LossKind;
use crate::rng::SimRng;

pub mod bernoulli;
pub mod gilbert_elliott;
pub mod periodic;

pub use bernoulli::Bernoulli;
pub use gilbert_elliott::GilbertElliott;
pub use periodic::Periodic;

/// A loss process.
pub trait Loss {
    /// Whether the next packet is lost. Call exactly once per packet.
    fn should_drop(&mut self, rng: &mut SimRng) -> bool;
}

/// A loss model as named in a scenario, with its validated parameters
/// (`LossSpec::new("bernoulli", &[("p", Value::Number(0.01))])`); built by
/// [`Configured::build`] (with the context `()`).
pub type LossSpec = Configured<LossKind>;

impl Kind for LossKind {
    const CATEGORY: Category = Category::Loss;
    type Context = ();
    type Output = LossModel;

    fn registry() -> &'static [&'static AlgorithmSpec<Self>] {
        REGISTRY
    }
}

/// Generates, from one line `module::Type` per built-in model (its declaration is
/// `module::SPEC`): [`REGISTRY`], the [`LossModel`] enum with one variant per line, and its
/// static dispatch of [`Loss`].
macro_rules! builtin_losses {
    ($($module:ident :: $variant:ident),+ $(,)?) => {
        /// The declarations of the built-in loss models, sorted by name.
        pub const REGISTRY: &[&AlgorithmSpec<LossKind>] = &[$(&$module::SPEC),+];

        /// A loss model with its state.
        #[derive(Clone, Debug, PartialEq)]
        pub enum LossModel {
            $($variant($module::$variant),)+
        }

        impl LossModel {
            /// The scenario name of the model.
            pub fn kind_name(&self) -> &'static str {
                match self {
                    $(LossModel::$variant(_) => $module::SPEC.name,)+
                }
            }
        }

        $crate::dispatch::enum_dispatch! {
            impl LossModel [$($variant),+] {
                /// Whether the next packet is lost. Call exactly once per packet.
                #[inline]
                pub fn should_drop(&mut self, rng: &mut SimRng) -> bool;
            }
        }

        $(impl From<$module::$variant> for LossModel {
            fn from(m: $module::$variant) -> Self {
                LossModel::$variant(m)
            }
        })+
    };
}

// The registry of loss models: one line per built-in.
builtin_losses! {
    bernoulli::Bernoulli,
    gilbert_elliott::GilbertElliott,
    periodic::Periodic,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Value;
    use crate::rng::rng_from_seed;

    #[test]
    fn specs_build_their_models() {
        let build = |name: &str, given: &[(&str, Value)]| {
            LossSpec::new(name, given)
                .unwrap_or_else(|e| panic!("{e}"))
                .build(())
        };
        assert_eq!(
            build("bernoulli", &[("p", Value::Number(0.25))]),
            LossModel::Bernoulli(Bernoulli::new(0.25))
        );
        assert_eq!(
            build("periodic", &[("every", Value::Integer(3))]),
            LossModel::Periodic(Periodic::new(3, 0))
        );
        assert_eq!(
            build(
                "gilbert_elliott",
                &[
                    ("p_good_to_bad", Value::Number(0.1)),
                    ("p_bad_to_good", Value::Number(0.5)),
                ]
            ),
            LossModel::GilbertElliott(GilbertElliott::new(0.1, 0.5, 0.0, 1.0))
        );
        for spec in REGISTRY {
            let required: Vec<(&str, Value)> = spec
                .params
                .iter()
                .filter(|p| p.is_required())
                .map(|p| (p.name, p.draw(0.5)))
                .collect();
            let mut model = build(spec.name, &required);
            assert_eq!(model.kind_name(), spec.name);
            model.should_drop(&mut rng_from_seed(1));
        }
    }

    #[test]
    fn parameters_are_checked_against_the_declarations() {
        let err = |name: &str, given: &[(&str, Value)]| {
            LossSpec::new(name, given).unwrap_err().to_string()
        };
        assert_eq!(
            err("bernoulli", &[("p", Value::Number(1.5))]),
            "loss bernoulli: p: must be a probability between 0 and 1, got 1.5"
        );
        assert_eq!(
            err("bernoulli", &[]),
            "loss bernoulli: p: missing required parameter"
        );
        assert_eq!(
            err("periodic", &[("every", Value::Integer(0))]),
            "loss periodic: every: must be at least 1 packet, got 0"
        );
    }
}
