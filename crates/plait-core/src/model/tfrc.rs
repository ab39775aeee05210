//! The TCP throughput equation of TFRC, RFC 5348 §3.1.
//!
//! `X_Bps = s / ( R·sqrt(2·b·p/3) + t_RTO·(3·sqrt(3·b·p/8))·p·(1 + 32·p²) )`
//!
//! with s the segment size in bytes, R the round-trip time in seconds, p the loss event rate,
//! b the packets acknowledged per ACK (RFC 5348 recommends b = 1) and t_RTO the retransmission
//! timeout in seconds (RFC 5348 recommends t_RTO = 4·R). The result is in **bytes per second**
//! when s is in bytes; with s = 1 it is in packets per second.
//!
//! Unlike the PFTK approximation (`model::pftk::approximate_rate`) the RFC equation has no
//! `min(1, ·)` around `3·sqrt(3bp/8)`; the two differ only for p above 8/27 ≈ 0.296.
//! Test values: `reference/ratebased_aggregate.md` §1.1.

/// RFC 5348 §3.1: "t_RTO = 4*R" when no better estimate is used.
pub const DEFAULT_RTO_RTT_FACTOR: f64 = 4.0;

/// The default retransmission timeout of RFC 5348 §3.1, `t_RTO = 4·R` (seconds).
pub fn default_rto(rtt_s: f64) -> f64 {
    DEFAULT_RTO_RTT_FACTOR * rtt_s
}

/// The denominator of the equation per byte, `R·sqrt(2bp/3) + t_RTO·3·sqrt(3bp/8)·p·(1+32p²)`:
/// the time (seconds) the equation allots to one segment.
pub fn seconds_per_segment(rtt_s: f64, p: f64, t_rto_s: f64, b: f64) -> f64 {
    rtt_s * (2.0 * b * p / 3.0).sqrt()
        + t_rto_s * 3.0 * (3.0 * b * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p)
}

/// The allowed sending rate `X_Bps` of RFC 5348 §3.1 (bytes/s for `segment_bytes` in bytes).
pub fn rate(segment_bytes: f64, rtt_s: f64, p: f64, t_rto_s: f64, b: f64) -> f64 {
    segment_bytes / seconds_per_segment(rtt_s, p, t_rto_s, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn reference_vectors() {
        // reference/ratebased_aggregate.md §1.1: b = 1, t_RTO = 4R, R = 0.1 s.
        let table = [
            (1e-4, 1223.64, 1.78652e6),
            (1e-3, 383.844, 560412.0),
            (0.01, 112.332, 164005.0),
            (0.05, 36.8589, 53813.9),
            (0.1, 17.7010, 25843.5),
            (0.2, 5.36562, 7833.81),
            (0.5, 0.417362, 609.348),
        ];
        for (p, packets, bytes) in table {
            assert!(close(
                rate(1.0, 0.1, p, default_rto(0.1), 1.0),
                packets,
                5e-6
            ));
            assert!(close(
                rate(1460.0, 0.1, p, default_rto(0.1), 1.0),
                bytes,
                5e-6
            ));
        }
    }

    #[test]
    fn worked_by_hand_at_p_one_eighth_and_b_three() {
        // b·p = 3/8: sqrt(2bp/3) = 1/2 and 3·sqrt(3bp/8) = 3·(3/8) = 9/8; with R = 1, t_RTO = 4,
        // p = 1/8: 1/2 + 4·(9/8)·(1/8)·(1 + 32/64) = 1/2 + 27/32 = 43/32.
        let x = rate(43.0, 1.0, 0.125, 4.0, 3.0);
        assert!(close(x, 32.0, 1e-14), "{x}");
    }

    #[test]
    fn rate_times_rtt_does_not_depend_on_rtt_with_the_default_timeout() {
        let a = rate(1000.0, 0.05, 0.02, default_rto(0.05), 1.0) * 0.05;
        let b = rate(1000.0, 0.7, 0.02, default_rto(0.7), 1.0) * 0.7;
        assert!(close(a, b, 1e-12));
    }

    #[test]
    fn small_p_limit_is_the_square_root_law() {
        // X·R·sqrt(p) → sqrt(3/2) (packets) as p → 0.
        let p = 1e-8;
        let x = rate(1.0, 0.3, p, default_rto(0.3), 1.0);
        assert!(close(x * 0.3 * p.sqrt(), 1.5f64.sqrt(), 1e-3));
    }
}
