//! Equilibrium of MPFAST, the multipath extension of FAST TCP (Trần, Lê, Trần, Huỳnh, "Một thiết
//! kế Multipath TCP dựa trên độ trễ" — "A delay-based Multipath TCP design", §III).
//!
//! Subflow r of source s updates its window as (eq. 5)
//! `w_r(t+1) = γ·( d_r·w_r(t)/(d_r + q_r(t)) + θ_r·α_s ) + (1 − γ)·w_r(t)`,
//! with d_r the base RTT, q_r the queueing delay, α_s the source's target backlog in packets and
//! θ_r ∈ [0, 1], Σ_r θ_r = 1, the share of that backlog given to path r. At a fixed point
//! `w_r·q_r/(d_r + q_r) = θ_r·α_s`, i.e. with `x_r = w_r/(d_r + q_r)`:
//!
//! * eq. 6: `x_r = θ_r·α_s / q_r` (packets/s), the FAST equilibrium `x = α/q` (eq. 4) scaled by θ_r;
//! * eq. 7: the aggregate `y_s = Σ_r x_r = α_s·Σ_r θ_r/q_r`, which is `α_s/q` when all paths see
//!   the same queueing delay q (eq. 8) — the rate of one FAST flow with the same α;
//! * eq. 10: with the self-consistent weights `θ_r = x_r/y_s` every used path has the same
//!   queueing delay `q_r = α_s/y_s`, and the source keeps `Σ_r x_r·q_r = α_s` packets queued.
//!
//! Units: α in packets, delays in seconds, rates in packets per second (times the segment size in
//! the Python layer), windows in packets.

/// FAST TCP equilibrium rate (eq. 4): `x = α/q` (packets/s).
pub fn fast_rate(alpha_packets: f64, queueing_delay_s: f64) -> f64 {
    alpha_packets / queueing_delay_s
}

/// MPFAST equilibrium rate of every path (eq. 6): `x_r = θ_r·α_s/q_r` (packets/s).
pub fn equilibrium_rates(
    alpha_packets: f64,
    queueing_delay_s: &[f64],
    weights: &[f64],
) -> Vec<f64> {
    queueing_delay_s
        .iter()
        .zip(weights)
        .map(|(&q, &theta)| theta * alpha_packets / q)
        .collect()
}

/// Equilibrium windows (packets): `w_r = x_r·(d_r + q_r)`, the fixed point of eq. 5.
pub fn equilibrium_windows(
    alpha_packets: f64,
    base_rtt_s: &[f64],
    queueing_delay_s: &[f64],
    weights: &[f64],
) -> Vec<f64> {
    equilibrium_rates(alpha_packets, queueing_delay_s, weights)
        .iter()
        .zip(base_rtt_s.iter().zip(queueing_delay_s))
        .map(|(x, (d, q))| x * (d + q))
        .collect()
}

/// The weights implied by a rate vector (eq. 10): `θ_r = x_r / Σ x`.
pub fn weights_from_rates(rates: &[f64]) -> Vec<f64> {
    let total: f64 = rates.iter().sum();
    rates.iter().map(|x| x / total).collect()
}

/// One step of the window update (eq. 5).
pub fn window_update(
    window_packets: f64,
    base_rtt_s: f64,
    queueing_delay_s: f64,
    weight: f64,
    alpha_packets: f64,
    gamma: f64,
) -> f64 {
    let target =
        base_rtt_s * window_packets / (base_rtt_s + queueing_delay_s) + weight * alpha_packets;
    gamma * target + (1.0 - gamma) * window_packets
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn equal_delays_give_one_fast_flow() {
        // θ = (0.2, 0.3, 0.5), q = 5 ms on every path, α = 20: y = α/q = 4000 packets/s.
        let rates = equilibrium_rates(20.0, &[0.005; 3], &[0.2, 0.3, 0.5]);
        assert!(close(
            rates.iter().sum::<f64>(),
            fast_rate(20.0, 0.005),
            1e-14
        ));
        assert!(close(rates[0], 800.0, 1e-14));
        for (theta, back) in [0.2, 0.3, 0.5].iter().zip(weights_from_rates(&rates)) {
            assert!(close(back, *theta, 1e-14));
        }
    }

    #[test]
    fn window_iteration_reaches_the_equilibrium() {
        // Fixed queueing delays, iterate eq. 5 and compare with x_r·(d_r + q_r).
        let (alpha, gamma) = (30.0, 0.5);
        let base = [0.04, 0.1];
        let queue = [0.01, 0.02];
        let weights = [0.25, 0.75];
        let mut w = [1.0, 1.0];
        for _ in 0..2000 {
            for r in 0..2 {
                w[r] = window_update(w[r], base[r], queue[r], weights[r], alpha, gamma);
            }
        }
        let expected = equilibrium_windows(alpha, &base, &queue, &weights);
        for r in 0..2 {
            assert!(
                close(w[r], expected[r], 1e-10),
                "path {r}: {} vs {}",
                w[r],
                expected[r]
            );
        }
        // Backlog of the source: Σ x_r·q_r = α.
        let rates = equilibrium_rates(alpha, &queue, &weights);
        let backlog: f64 = rates.iter().zip(&queue).map(|(x, q)| x * q).sum();
        assert!(close(backlog, alpha, 1e-14));
    }
}
