//! Steady-state throughput of a general AIMD(α, β) window and the N-TCP equivalence of MulTCP.
//!
//! An AIMD window grows by α packets per round-trip and, at each loss event, loses the fraction
//! β of itself (`W → (1 − β)·W`). **Here β is the decrease fraction**, as in MulTCP's
//! `cwnd → cwnd − cwnd/(2N)` (β = 1/(2N)); the Altman et al. model (`model::altman`) uses the
//! fraction *kept*, `rate → β_keep·rate`, i.e. `β_keep = 1 − β_decrease`. The two agree only at ½.
//!
//! Under periodic loss events at rate p (the deterministic saw-tooth of the square-root law) the
//! window oscillates between (1 − β)·W_m and W_m; one period lasts β·W_m/α rounds and carries
//! 1/p packets, so `1/p = (1 − β/2)·W_m · β·W_m/α` and the mean window is
//!
//! `W_mean = sqrt( α·(2 − β) / (2·β·p) )`  (packets; TCP, α = 1 and β = ½: sqrt(3/(2p))).
//!
//! Hence AIMD(α, β) behaves like N TCP flows when `α·(2 − β)/β = 3·N²`; the original MulTCP
//! choice (Crowcroft & Oechslin, CCR 28(3) 1998) α = N, β = 1/(2N) gives
//! `W/(N·W_TCP) = sqrt((2 − 1/(2N))/1.5)`, up to 15.5 % more than N flows.
//! Sources: `reference/ratebased_aggregate.md` §3.1–§3.2; Altman et al. §II-B.4.

/// Mean window (packets) of AIMD(α, β_decrease) under periodic losses at rate p:
/// `W = sqrt(α(2 − β)/(2βp))`.
pub fn mean_window(alpha_packets: f64, beta_decrease: f64, p: f64) -> f64 {
    (alpha_packets * (2.0 - beta_decrease) / (2.0 * beta_decrease * p)).sqrt()
}

/// Mean sending rate `s·W/RTT` (bytes/s for `segment_bytes` in bytes, packets/s with 1).
pub fn rate(alpha_packets: f64, beta_decrease: f64, rtt_s: f64, p: f64, segment_bytes: f64) -> f64 {
    segment_bytes * mean_window(alpha_packets, beta_decrease, p) / rtt_s
}

/// The number of TCP flows AIMD(α, β_decrease) is equivalent to: `N = sqrt(α(2 − β)/(3β))`,
/// from `α(2 − β)/β = 3N²`.
pub fn equivalent_flows(alpha_packets: f64, beta_decrease: f64) -> f64 {
    (alpha_packets * (2.0 - beta_decrease) / (3.0 * beta_decrease)).sqrt()
}

/// The increase α that makes AIMD(α, β_decrease) equivalent to N flows: `α = 3N²β/(2 − β)`
/// (β = ½ gives α = N²).
pub fn equivalent_alpha(flows: f64, beta_decrease: f64) -> f64 {
    3.0 * flows * flows * beta_decrease / (2.0 - beta_decrease)
}

/// The decrease fraction β that makes AIMD(α, β) equivalent to N flows: `β = 2α/(3N² + α)`
/// (α = N gives β = 2/(3N + 1)).
pub fn equivalent_beta_decrease(flows: f64, alpha_packets: f64) -> f64 {
    2.0 * alpha_packets / (3.0 * flows * flows + alpha_packets)
}

/// The original MulTCP parameters `(α, β_decrease) = (N, 1/(2N))`.
pub fn multcp_original(flows: f64) -> (f64, f64) {
    (flows, 1.0 / (2.0 * flows))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn tcp_is_the_square_root_law() {
        // α = 1, β = ½: W = sqrt(1.5/p); p = 1/150 → W = 15.
        assert!(close(mean_window(1.0, 0.5, 1.0 / 150.0), 15.0, 1e-14));
        assert!(close(
            rate(1.0, 0.5, 0.1, 1.0 / 150.0, 1000.0),
            150_000.0,
            1e-14
        ));
        assert!(close(equivalent_flows(1.0, 0.5), 1.0, 1e-15));
    }

    #[test]
    fn mean_window_matches_a_simulated_sawtooth() {
        // Deterministic saw-tooth: +α per round, ×(1 − β) every 1/p packets.
        let (alpha, beta, p) = (3.0f64, 0.2f64, 1e-3f64);
        let w_max = (2.0 * alpha / (p * beta * (2.0 - beta))).sqrt();
        let mut w = (1.0 - beta) * w_max;
        let (mut packets, mut rounds) = (0.0, 0.0);
        let steps = 100_000;
        let dw = beta * w_max / steps as f64;
        for _ in 0..steps {
            // one increase step of dw takes dw/α rounds at window ≈ w + dw/2.
            packets += (w + dw / 2.0) * dw / alpha;
            rounds += dw / alpha;
            w += dw;
        }
        assert!(
            close(packets, 1.0 / p, 1e-9),
            "packets per period {packets}"
        );
        assert!(close(packets / rounds, mean_window(alpha, beta, p), 1e-9));
    }

    #[test]
    fn equivalence_examples() {
        // α = N² with β = ½ is exact; α = N needs β = 2/(3N + 1).
        for n in [1.0, 2.0, 7.0] {
            assert!(close(equivalent_alpha(n, 0.5), n * n, 1e-14));
            let beta = equivalent_beta_decrease(n, n);
            assert!(close(beta, 2.0 / (3.0 * n + 1.0), 1e-14));
            assert!(close(equivalent_flows(n, beta), n, 1e-14));
        }
        assert!(close(equivalent_beta_decrease(10.0, 10.0), 0.0645161, 1e-5));
    }

    #[test]
    fn original_multcp_overshoots() {
        // W/(N·W_TCP) = sqrt((2 − 1/(2N))/1.5): 1.000, 1.080, 1.106, 1.125, 1.140 for N = 1,2,3,5,10.
        for (n, ratio) in [
            (1.0, 1.0),
            (2.0, 1.0801),
            (3.0, 1.1055),
            (5.0, 1.1255),
            (10.0, 1.1402),
        ] {
            let (alpha, beta) = multcp_original(n);
            assert!(
                close(equivalent_flows(alpha, beta) / n, ratio, 1e-4),
                "N = {n}"
            );
        }
    }
}
