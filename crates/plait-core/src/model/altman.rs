//! The parallel-TCP fluid model of Altman, Barman, Tuffin and Vojnović ("Parallel TCP sockets:
//! simple model, throughput and validation", INFOCOM 2006 / MSR-TR-2005-130).
//!
//! N AIMD connections share a link of capacity c with no buffer; a link congestion event happens
//! when the aggregate rate reaches c. **β here is the fraction of the rate a signalled connection
//! keeps** (`rate → β_keep·rate`, β_keep = ½ for Reno), as in the paper; the AIMD/MulTCP module
//! (`model::aimd`) uses the fraction removed instead.
//!
//! * Theorem 1 (§II-A, eq. 5), one connection signalled per event (assumption ONE), any
//!   stationary loss policy: `E[S]/c = 1 − 1/(1 + N·(1 + β)/(1 − β))` (β = ½: 3N/(3N + 1)).
//! * Policy ALL (§II-B.3, eq. 6), every connection signalled (synchronised losses):
//!   `E[S]/c = (1 + β)/2`, whatever N.
//! * MulTCP (§II-B.4): one AIMD connection keeping `1 − (1 − β)/N` of its rate, hence by eq. 6
//!   `E[S]/c = 1 − (1 − β)/(2N)`, which is the paper's `1 − 1/(4N)` at β = ½. (The paper's text
//!   writes the kept fraction as "1 − N/2"; 1 − 1/(2N) is meant.)
//! * Proposition 1 (§IV-A, eq. 9), largest-rate policy: rates just before a congestion event,
//!   sorted, `x_1 = 2c/((1 + β)N + (1 − β))`, `x_i = x_1·(1 − (1 − β)(i − 1)/N)`.
//!   Over the resulting N-periodic cycle every connection sweeps [β·x_1, x_1] linearly in time,
//!   so `E[X_i²] = x_1²(1 + β + β²)/3` (N = 2, β = ½: 4/21·c², Theorem 2.4).
//! * §IV-B, beatdown policy (the tagged connection is signalled at every congestion event until
//!   its rate has vanished): rates at tagging times, sorted, `ỹ_k = 2c(N − k)/(N(N − 1))`, from
//!   `ỹ_k = ỹ_{k+1} + ỹ_1/(N − 1)` and `Σ ỹ_k = c`. The paper prints the middle terms as
//!   `(1 − k/N)/(N − 1)`, which lacks the factor 2 and does not sum to 1 (N = 3: 2/3 + 1/6 + 0).

/// Theorem 1: time-average utilisation `E[S]/c = 1 − 1/(1 + N(1 + β)/(1 − β))`.
pub fn utilization_one_per_event(connections: f64, beta_keep: f64) -> f64 {
    1.0 - 1.0 / (1.0 + connections * (1.0 + beta_keep) / (1.0 - beta_keep))
}

/// Policy ALL (synchronised losses): `E[S]/c = (1 + β)/2`.
pub fn utilization_synchronized(beta_keep: f64) -> f64 {
    (1.0 + beta_keep) / 2.0
}

/// MulTCP emulating N flows, seen as one AIMD connection that keeps `1 − (1 − β)/N`:
/// `E[S]/c = 1 − (1 − β)/(2N)` (β = ½: `1 − 1/(4N)`).
pub fn utilization_multcp(flows: f64, beta_keep: f64) -> f64 {
    1.0 - (1.0 - beta_keep) / (2.0 * flows)
}

/// Proposition 1: the largest rate at the fixed point, `x_1 = 2c/((1 + β)N + (1 − β))`.
pub fn largest_rate_peak(connections: f64, beta_keep: f64, capacity: f64) -> f64 {
    2.0 * capacity / ((1.0 + beta_keep) * connections + (1.0 - beta_keep))
}

/// Proposition 1: the sorted rates just before a congestion event at the largest-rate fixed
/// point, `x_i = x_1·(1 − (1 − β)(i − 1)/N)`, i = 1..N (they sum to c).
pub fn largest_rate_fixed_point(connections: usize, beta_keep: f64, capacity: f64) -> Vec<f64> {
    let n = connections as f64;
    let peak = largest_rate_peak(n, beta_keep, capacity);
    (0..connections)
        .map(|k| peak * (1.0 - (1.0 - beta_keep) * k as f64 / n))
        .collect()
}

/// Time-stationary second moment of one connection's rate under the largest-rate policy,
/// normalised by c²: `x_1²(1 + β + β²)/(3c²)` (N = 2, β = ½: 4/21).
pub fn largest_rate_second_moment(connections: f64, beta_keep: f64) -> f64 {
    let peak = largest_rate_peak(connections, beta_keep, 1.0);
    peak * peak * (1.0 + beta_keep + beta_keep * beta_keep) / 3.0
}

/// §IV-B: the sorted rates at tagging times under the beatdown policy,
/// `ỹ_k = 2c(N − k)/(N(N − 1))`, k = 1..N (N ≥ 2; the smallest is the connection just beaten
/// down to zero).
pub fn beatdown_stationary_point(connections: usize, capacity: f64) -> Vec<f64> {
    let n = connections as f64;
    (1..=connections)
        .map(|k| 2.0 * capacity * (n - k as f64) / (n * (n - 1.0)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn theorem_one_by_hand() {
        // β = ½: 3/4, 6/7, 9/10, 12/13 for N = 1..4.
        for (n, value) in [
            (1.0, 0.75),
            (2.0, 6.0 / 7.0),
            (3.0, 0.9),
            (4.0, 12.0 / 13.0),
        ] {
            assert!(close(utilization_one_per_event(n, 0.5), value, 1e-15));
        }
        // β = 0.8, N = 2: 1 − 1/(1 + 18) = 18/19.
        assert!(close(
            utilization_one_per_event(2.0, 0.8),
            18.0 / 19.0,
            1e-15
        ));
        // N = 1 coincides with ALL.
        assert!(close(
            utilization_one_per_event(1.0, 0.3),
            utilization_synchronized(0.3),
            1e-15
        ));
    }

    #[test]
    fn multcp_is_within_two_and_a_half_percent_of_n_flows() {
        // The paper: "less than 1.025 of the mean aggregate throughput of N TCP-like connections".
        assert!(close(utilization_multcp(1.0, 0.5), 0.75, 1e-15));
        assert!(close(utilization_multcp(2.0, 0.5), 7.0 / 8.0, 1e-15));
        for n in 1..200 {
            let n = n as f64;
            let ratio = utilization_multcp(n, 0.5) / utilization_one_per_event(n, 0.5);
            assert!((1.0..1.025).contains(&ratio), "N = {n}: {ratio}");
        }
    }

    #[test]
    fn largest_rate_fixed_point_by_hand() {
        let two = largest_rate_fixed_point(2, 0.5, 1.0);
        assert!(close(two[0], 4.0 / 7.0, 1e-15) && close(two[1], 3.0 / 7.0, 1e-15));
        let three = largest_rate_fixed_point(3, 0.5, 1.0);
        for (got, want) in three.iter().zip([0.4, 1.0 / 3.0, 4.0 / 15.0]) {
            assert!(close(*got, want, 1e-15));
        }
        // The fixed point sums to c, and its mean over the sweep gives Theorem 1 back.
        for n in 1..12 {
            let x = largest_rate_fixed_point(n, 0.3, 5.0);
            assert!(close(x.iter().sum::<f64>(), 5.0, 1e-12));
            let mean = n as f64 * (1.0 + 0.3) * x[0] / 2.0 / 5.0;
            assert!(close(mean, utilization_one_per_event(n as f64, 0.3), 1e-12));
        }
        assert!(close(
            largest_rate_second_moment(2.0, 0.5),
            4.0 / 21.0,
            1e-15
        ));
        assert!(close(
            largest_rate_second_moment(3.0, 0.5),
            7.0 / 75.0,
            1e-15
        ));
        assert!(close(
            largest_rate_second_moment(4.0, 0.5),
            28.0 / 507.0,
            1e-15
        ));
    }

    #[test]
    fn largest_rate_dynamics_converge_to_the_fixed_point() {
        // Event-driven fluid model (c = 1, slope 1), largest-rate policy, from (0.3, 0.7).
        let mut x = vec![0.3, 0.7];
        for _ in 0..400 {
            let (victim, _) =
                x.iter().enumerate().fold(
                    (0, f64::MIN),
                    |best, (i, &v)| if v > best.1 { (i, v) } else { best },
                );
            x[victim] *= 0.5;
            let gap = (1.0 - x.iter().sum::<f64>()) / x.len() as f64;
            x.iter_mut().for_each(|v| *v += gap);
        }
        let mut sorted = x.clone();
        sorted.sort_by(|a, b| b.partial_cmp(a).unwrap());
        let fixed = largest_rate_fixed_point(2, 0.5, 1.0);
        for (a, b) in sorted.iter().zip(&fixed) {
            assert!((a - b).abs() < 1e-9, "{sorted:?} vs {fixed:?}");
        }
    }

    #[test]
    fn beatdown_point_solves_its_recursion() {
        for n in 2..10 {
            let y = beatdown_stationary_point(n, 1.0);
            assert!(close(y.iter().sum::<f64>(), 1.0, 1e-12));
            assert!(close(y[0], 2.0 / n as f64, 1e-15));
            assert_eq!(y[n - 1], 0.0);
            for k in 0..n - 1 {
                assert!(close(y[k], y[k + 1] + y[0] / (n as f64 - 1.0), 1e-12));
            }
        }
        let three = beatdown_stationary_point(3, 1.0);
        assert!(close(three[1], 1.0 / 3.0, 1e-15));
    }
}
