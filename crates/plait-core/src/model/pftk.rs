//! The Padhye–Firoiu–Towsley–Kurose (PFTK) model of steady-state TCP Reno throughput.
//!
//! Source: J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP throughput: a simple model
//! and its empirical validation", SIGCOMM'98 (journal version: IEEE/ACM ToN 8(2), 2000), the
//! "full model" with triple-duplicate losses, timeouts with exponential back-off and the
//! receiver-window limit `Wmax`; its widely used approximation; and the square-root law that
//! both reduce to when neither timeouts nor the window limit matter. The transcription and the
//! test values follow `reference/ratebased_aggregate.md` §1.2.
//!
//! Symbols and units: `rtt_s` = round-trip time in seconds, `p` = loss event probability in
//! (0, 1), `t0_s` = base retransmission timeout in seconds, `b` = packets acknowledged per ACK,
//! `wmax_packets` = receiver window in packets (`f64::INFINITY` for none). Every rate returned
//! here is in **packets per second**; multiply by the segment size for bytes per second.
//!
//! Secondary sources sometimes write `Q̂` with the product `(1 + (1−p)³)·(1 − (1−p)^(w−3))`;
//! that form tends to 0 as p → 0. The correct one, used here, tends to `3/w` (a unit test pins it).

/// The timeout back-off series `f(p) = 1 + p + 2p² + 4p³ + 8p⁴ + 16p⁵ + 32p⁶`: the expected
/// duration of a sequence of timeouts, in units of `T0`, when the timer doubles up to 64·T0.
pub fn timeout_backoff_series(p: f64) -> f64 {
    // Horner form of 1 + p(1 + p(2 + p(4 + p(8 + p(16 + 32p))))).
    1.0 + p * (1.0 + p * (2.0 + p * (4.0 + p * (8.0 + p * (16.0 + 32.0 * p)))))
}

/// Expected unconstrained window at a loss indication (packets):
/// `E[W_u] = (2+b)/(3b) + sqrt( 8(1−p)/(3bp) + ((2+b)/(3b))² )`.
pub fn expected_window_unconstrained(p: f64, b: f64) -> f64 {
    let offset = (2.0 + b) / (3.0 * b);
    offset + (8.0 * (1.0 - p) / (3.0 * b * p) + offset * offset).sqrt()
}

/// `1 − (1−p)^k` without the cancellation that `1.0 - (1.0 - p).powf(k)` suffers for tiny p.
fn one_minus_survival(p: f64, k: f64) -> f64 {
    -(k * (-p).ln_1p()).exp_m1()
}

/// Probability that a loss in a window of `w` packets is detected by a timeout rather than by
/// three duplicate ACKs:
/// `Q̂(w) = min(1, (1 − (1−p)³)·(1 + (1−p)³·(1 − (1−p)^(w−3))) / (1 − (1−p)^w))`.
pub fn timeout_probability(p: f64, w: f64) -> f64 {
    let survive3 = (1.0 - p).powi(3);
    let value = one_minus_survival(p, 3.0) * (1.0 + survive3 * one_minus_survival(p, w - 3.0))
        / one_minus_survival(p, w);
    value.min(1.0)
}

/// The full PFTK model (packets/s).
///
/// If `E[W_u] < Wmax`:
/// `B = [(1−p)/p + E[W_u] + Q̂(E[W_u])/(1−p)] / [RTT·(b·E[W_u]/2 + 1) + Q̂(E[W_u])·T0·f(p)/(1−p)]`,
/// otherwise (window-limited):
/// `B = [(1−p)/p + Wmax + Q̂(Wmax)/(1−p)] / [RTT·(b·Wmax/8 + (1−p)/(p·Wmax) + 2) + Q̂(Wmax)·T0·f(p)/(1−p)]`.
///
/// The two branches do not join continuously at `E[W_u] = Wmax`: with b = 1, Wmax = 20,
/// RTT = 0.1 s, T0 = 0.4 s the switch is at p = 1/136 and the rate jumps from 129.6 to
/// 132.4 packets/s as p crosses it upwards. That is the published model, kept as it is.
pub fn full_rate(rtt_s: f64, p: f64, t0_s: f64, b: f64, wmax_packets: f64) -> f64 {
    let backoff = t0_s * timeout_backoff_series(p) / (1.0 - p);
    let window_unconstrained = expected_window_unconstrained(p, b);
    if window_unconstrained < wmax_packets {
        let w = window_unconstrained;
        let q = timeout_probability(p, w);
        ((1.0 - p) / p + w + q / (1.0 - p)) / (rtt_s * (b * w / 2.0 + 1.0) + q * backoff)
    } else {
        let w = wmax_packets;
        let q = timeout_probability(p, w);
        ((1.0 - p) / p + w + q / (1.0 - p))
            / (rtt_s * (b * w / 8.0 + (1.0 - p) / (p * w) + 2.0) + q * backoff)
    }
}

/// The PFTK approximation (packets/s):
/// `B ≈ min( Wmax/RTT, 1 / (RTT·sqrt(2bp/3) + T0·min(1, 3·sqrt(3bp/8))·p·(1 + 32p²)) )`.
pub fn approximate_rate(rtt_s: f64, p: f64, t0_s: f64, b: f64, wmax_packets: f64) -> f64 {
    let timeout_factor = (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0);
    let rate = 1.0
        / (rtt_s * (2.0 * b * p / 3.0).sqrt() + t0_s * timeout_factor * p * (1.0 + 32.0 * p * p));
    rate.min(wmax_packets / rtt_s)
}

/// The square-root law (packets/s): `B = 1 / (RTT·sqrt(2bp/3))`, i.e. `sqrt(3/(2bp))/RTT`.
pub fn square_root_rate(rtt_s: f64, p: f64, b: f64) -> f64 {
    1.0 / (rtt_s * (2.0 * b * p / 3.0).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn backoff_series_matches_its_terms() {
        // f(0.5) = 1 + 0.5 + 0.5 + 0.5 + 0.5 + 0.5 + 0.5 = 4.
        assert_eq!(timeout_backoff_series(0.5), 4.0);
        assert_eq!(timeout_backoff_series(0.0), 1.0);
    }

    #[test]
    fn window_with_delayed_acks_has_the_closed_form() {
        // b = 2: E[W_u] = (2/3)(1 + sqrt(3(1−p)/p + 1)).
        for p in [1e-4f64, 0.01, 0.2] {
            let expected = 2.0 / 3.0 * (1.0 + (3.0 * (1.0 - p) / p + 1.0).sqrt());
            assert!(close(
                expected_window_unconstrained(p, 2.0),
                expected,
                1e-12
            ));
        }
    }

    #[test]
    fn timeout_probability_tends_to_three_over_w() {
        for &w in &[4.0, 10.0, 57.5] {
            let q = timeout_probability(1e-9, w);
            assert!(close(q * w, 3.0, 1e-6), "w = {w}: Q·w = {}", q * w);
        }
        // For windows below 3 the raw expression can exceed 1 (p = ½, w = 2: 49/48); it is capped.
        assert_eq!(timeout_probability(0.5, 2.0), 1.0);
    }

    #[test]
    fn reference_vectors() {
        // reference/ratebased_aggregate.md §1.2: RTT = 0.1 s, T0 = 0.4 s, b = 1.
        let inf = f64::INFINITY;
        let table = [
            (0.001, 381.635, 383.844, 185.077, 200.000),
            (0.01, 110.960, 112.332, 110.960, 112.332),
            (0.05, 37.8981, 36.8589, 37.8981, 36.8589),
            (0.1, 21.1300, 17.7010, 21.1300, 17.7010),
            (0.3, 6.01522, 1.95955, 6.01522, 1.95955),
        ];
        for (p, full, approx, full20, approx20) in table {
            assert!(
                close(full_rate(0.1, p, 0.4, 1.0, inf), full, 5e-6),
                "p = {p}"
            );
            assert!(close(approximate_rate(0.1, p, 0.4, 1.0, inf), approx, 5e-6));
            assert!(close(full_rate(0.1, p, 0.4, 1.0, 20.0), full20, 5e-6));
            assert!(close(
                approximate_rate(0.1, p, 0.4, 1.0, 20.0),
                approx20,
                5e-6
            ));
        }
    }

    #[test]
    fn window_branch_switches_where_the_window_reaches_wmax() {
        // b = 1: E[W_u] = 20 exactly at p = 8/1088 = 1/136.
        let p_switch = 1.0 / 136.0;
        assert!(close(
            expected_window_unconstrained(p_switch, 1.0),
            20.0,
            1e-12
        ));
        let below = full_rate(0.1, p_switch * (1.0 - 1e-9), 0.4, 1.0, 20.0);
        let above = full_rate(0.1, p_switch * (1.0 + 1e-9), 0.4, 1.0, 20.0);
        assert!(close(below, 129.613, 1e-5), "{below}");
        assert!(close(above, 132.377, 1e-5), "{above}");
    }

    #[test]
    fn square_root_law_is_the_small_p_limit() {
        let p = 1e-7;
        let full = full_rate(0.2, p, 1.0, 1.0, f64::INFINITY);
        assert!(close(full, square_root_rate(0.2, p, 1.0), 2e-3));
        assert_eq!(square_root_rate(1.0, 1.5, 1.0), 1.0);
    }
}
