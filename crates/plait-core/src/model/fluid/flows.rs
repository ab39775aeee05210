//! The connections of the fluid model, stored lazily as structure of arrays: flow `i`'s rate
//! at time `t` is `base_rate_i + eta_i (t - base_time_i)` (linear between congestion times,
//! eq. (2)). The integrator (`engine`) moves them and the policies (`policy`) read them.

/// The connections, stored as structure of arrays.
pub(crate) struct Flows {
    pub eta: Vec<f64>,
    pub beta: Vec<f64>,
    pub base_rate: Vec<f64>,
    pub base_time: Vec<f64>,
}

impl Flows {
    #[inline]
    pub fn rate(&self, i: usize, now: f64) -> f64 {
        self.base_rate[i] + self.eta[i] * (now - self.base_time[i])
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.eta.len()
    }
}
