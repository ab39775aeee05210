//! Random loss models applied on a link direction before the queue.

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
    GilbertElliott { p_good_to_bad: f64, p_bad_to_good: f64, loss_good: f64, loss_bad: f64 },
}
