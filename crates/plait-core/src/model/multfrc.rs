//! The MulTFRC throughput equation: the aggregate rate of n TCP flows, n a positive real.
//!
//! Sources: D. Damjanovic, M. Welzl, "MulTFRC: providing weighted fairness for multimedia
//! applications (and others too!)", CCR 39(3) 2009, §2 (Algorithm 1) and §3 (the refinement of j
//! and the ceil(n) cap); draft-irtf-iccrg-multfrc §2.1; and the authors' ns-2 code, as resolved in
//! `reference/ratebased_aggregate.md` §2.2–§2.6. Algorithm 1 as printed in the paper garbles the
//! square term; it is `(n − 2j)²` (the discriminant of the quadratic the algorithm solves, and
//! what both the ns-2 code and the draft transcription compute).
//!
//! Inputs: n (number of emulated flows, real, > 0), p (loss event rate of the aggregate, in
//! (0, 1)), j (packets lost per loss event, ≥ 1), R (round-trip time, s), s (segment size, bytes),
//! t_RTO (retransmission timeout, s), b (packets per ACK). The rate is in **bytes per second**
//! when s is in bytes (packets per second with s = 1).
//!
//! Two forms, chosen by [`Form`]:
//!
//! * [`Form::Draft`] (the default, the normative one):
//!   ```text
//!   af = n·(1 − (1 − 1/n)^j)  if 1 < n < 12 (the refinement),  j otherwise;  af = 1 if n ≤ 1
//!   af = max(min(af, ceil(n)), 1)
//!   x  = ( af·p·b·(2af − n) + sqrt( p·b·af·(24n² + p·b·af·(n − 2af)²) ) ) / (6n²p)
//!   z  = t_RTO·(1 + 32p²)/(1 − p)
//!   q  = min( 2·j·b·z / (R·(1 + 3n/j)·x²),  n·z/(x·R),  n )
//!   X  = ( (1 − q/n)/(p·x·R) + q/(z·(1 − p)) ) · s
//!   ```
//!   x is the number of rounds in a loss-event period, 1/(p·x·R) the aggregate rate without
//!   timeouts, z the mean duration of a timeout sequence, 1/(1 − p) the packets a flow sends
//!   during it, and q the mean number of flows in timeout. Only x uses the refined af; both j in
//!   q are the measured j.
//! * [`Form::Ns2`] (the authors' ns-2 `p_to_b`): n = 1 exactly is special-cased to the PFTK
//!   approximation `s / (R·sqrt(2bp/3) + min(1, 3·sqrt(3bp/8))·t_RTO·p·(1 + 32p²))` (j is then
//!   ignored); otherwise the refinement applies for n < 13, the aggregate window
//!   `w = n·x/(2b)·(1 + 3n/af)` uses the refined af, `z = t_RTO·f(p)/(1 − p)` with PFTK's full
//!   back-off series f(p) = 1 + p + 2p² + … + 32p⁶, and `q = min((j·n/w)·z/(x·R), n)` without the
//!   `n·z/(x·R)` term. The ns-2 safety limits (25·10⁶ B/s per flow, and returning that cap for
//!   p < 10⁻⁸) are not reproduced: they are simulator guards, not part of the model.
//!
//! For n ≤ 1 the refinement would raise a negative number to a real power; both forms set af = 1
//! there (the paper's "a flow with n < 1 is one less aggressive flow"), so no NaN arises anywhere
//! in the domain. x is evaluated in a scaled, cancellation-free form (see [`rounds_per_period`]).

/// Which transcription of the MulTFRC equation to evaluate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Form {
    /// draft-irtf-iccrg-multfrc §2.1 (the default).
    #[default]
    Draft,
    /// The authors' ns-2 implementation (`p_to_b` with the "mulTFRC edit" markers).
    Ns2,
}

impl Form {
    /// Parse `"draft"` or `"ns2"` (also `"ns-2"`).
    pub fn from_name(name: &str) -> Option<Form> {
        match name {
            "draft" => Some(Form::Draft),
            "ns2" | "ns-2" => Some(Form::Ns2),
            _ => None,
        }
    }

    /// The refinement `af = n(1 − (1 − 1/n)^j)` is applied for `1 < n <` this bound.
    pub fn refinement_bound(self) -> f64 {
        match self {
            Form::Draft => 12.0,
            Form::Ns2 => 13.0,
        }
    }
}

/// The inputs of the equation (units in the names).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inputs {
    /// Number of emulated TCP flows n (> 0, real).
    pub flows: f64,
    /// Loss event rate p of the aggregate, in (0, 1).
    pub loss_event_rate: f64,
    /// Mean number of packets lost per loss event j (≥ 1).
    pub packets_per_loss_event: f64,
    /// Round-trip time R in seconds.
    pub rtt_s: f64,
    /// Segment size s (bytes; 1 for packets per second).
    pub segment_bytes: f64,
    /// Retransmission timeout t_RTO in seconds.
    pub t_rto_s: f64,
    /// Packets acknowledged per ACK, b.
    pub packets_per_ack: f64,
}

/// Form and refinement switch. `refine = false` uses `af = min(j, ceil(n))` everywhere, the
/// "old calculation of j" of the CCR paper (Fig. 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub form: Form,
    pub refine: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            form: Form::Draft,
            refine: true,
        }
    }
}

/// The number of emulated flows hit by a loss event of j packets, `af ∈ [1, ceil(n)]`.
///
/// "Balls into bins" (CCR 2009 §3): if each lost packet belongs to any of n flows with
/// probability 1/n, a flow escapes with probability (1 − 1/n)^j, so n·(1 − (1 − 1/n)^j) flows
/// are affected. The result is capped by ceil(n) and floored at 1; for n ≤ 1 it is 1.
pub fn affected_flows(flows: f64, packets_per_loss_event: f64, options: Options) -> f64 {
    let n = flows;
    let j = packets_per_loss_event.max(1.0);
    if n <= 1.0 {
        return 1.0;
    }
    let refined = if options.refine && n < options.form.refinement_bound() {
        // (1 − 1/n)^j, with 1 − 1/n in (0, 1) because n > 1 here.
        n * -(j * (-1.0 / n).ln_1p()).exp_m1()
    } else {
        j
    };
    refined.min(n.ceil()).max(1.0)
}

/// Rounds per loss-event period, the positive root of `3n²p·x² − af·p·b·(2af − n)·x − 2·b·af = 0`:
/// `x = ( af·p·b·(2af − n) + sqrt( p·b·af·(24n² + p·b·af·(n − 2af)²) ) ) / (6n²p)`.
///
/// Evaluated with u = af/n (dividing the quadratic by n²), which cannot overflow for large n:
/// `x = (B + sqrt(D)) / (6p)` with `B = p·b·u·(2u − 1)`, `D = B² + 24·p·b·u/n`; when B < 0 the
/// equivalent `x = 4·b·u / (n·(sqrt(D) − B))` avoids cancellation.
pub fn rounds_per_period(flows: f64, p: f64, affected: f64, b: f64) -> f64 {
    let n = flows;
    let u = affected / n;
    let linear = p * b * u * (2.0 * u - 1.0);
    let root = (linear * linear + 24.0 * p * b * u / n).sqrt();
    if linear >= 0.0 {
        (linear + root) / (6.0 * p)
    } else {
        4.0 * b * u / (n * (root - linear))
    }
}

/// The MulTFRC rate (bytes/s for `segment_bytes` in bytes).
pub fn rate(inputs: &Inputs, options: Options) -> f64 {
    match options.form {
        Form::Draft => rate_draft(inputs, options.refine),
        Form::Ns2 => rate_ns2(inputs, options.refine),
    }
}

fn rate_draft(inputs: &Inputs, refine: bool) -> f64 {
    let n = inputs.flows;
    let p = inputs.loss_event_rate;
    let j = inputs.packets_per_loss_event;
    let r = inputs.rtt_s;
    let b = inputs.packets_per_ack;
    let af = affected_flows(
        n,
        j,
        Options {
            form: Form::Draft,
            refine,
        },
    );
    let x = rounds_per_period(n, p, af, b);
    // z = t_RTO·(1 + 32p²)/(1 − p)
    let z = inputs.t_rto_s * (1.0 + 32.0 * p * p) / (1.0 - p);
    // q = min( 2jbz / (R(1 + 3n/j)x²), nz/(xR), n )
    let timeout_share = 2.0 * j * b * z / (r * (1.0 + 3.0 * n / j) * x * x);
    let q = timeout_share.min(n * z / (x * r)).min(n);
    // X = ((1 − q/n)/(p·x·R) + q/(z(1 − p)))·s
    ((1.0 - q / n) / (p * x * r) + q / (z * (1.0 - p))) * inputs.segment_bytes
}

fn rate_ns2(inputs: &Inputs, refine: bool) -> f64 {
    let n = inputs.flows;
    let p = inputs.loss_event_rate;
    let j = inputs.packets_per_loss_event;
    let r = inputs.rtt_s;
    let b = inputs.packets_per_ack;
    let t_rto = inputs.t_rto_s;
    if n == 1.0 {
        // ns-2 evaluates the single-flow PFTK approximation for n == 1 exactly.
        return inputs.segment_bytes
            / (r * (2.0 * b * p / 3.0).sqrt()
                + (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * t_rto * p * (1.0 + 32.0 * p * p));
    }
    let af = affected_flows(
        n,
        j,
        Options {
            form: Form::Ns2,
            refine,
        },
    );
    let x = rounds_per_period(n, p, af, b);
    // w = n·x/(2b) + 3n²·x/(2b·af): the aggregate window at the end of a period.
    let window = n * x / (2.0 * b) * (1.0 + 3.0 * n / af);
    // z = t_RTO·f(p)/(1 − p) with the full back-off series of PFTK.
    let z = t_rto * super::pftk::timeout_backoff_series(p) / (1.0 - p);
    // q = min( (j·n/w)·z/(x·R), n )
    let q = (j * n / window * z / (x * r)).min(n);
    ((1.0 - q / n) / (p * x * r) + q / (z * (1.0 - p))) * inputs.segment_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    fn inputs(n: f64, p: f64, j: f64) -> Inputs {
        Inputs {
            flows: n,
            loss_event_rate: p,
            packets_per_loss_event: j,
            rtt_s: 0.1,
            segment_bytes: 1460.0,
            t_rto_s: 0.4,
            packets_per_ack: 1.0,
        }
    }

    #[test]
    fn reference_vectors_draft_form() {
        // reference/ratebased_aggregate.md §2.6 (s = 1460, R = 0.1, b = 1, t_RTO = 0.4).
        let table = [
            (0.01, 1.0, 1.0, 170193.0),
            (0.01, 1.0, 2.0, 345453.0),
            (0.01, 2.0, 2.0, 266148.0),
            (0.01, 1.0, 4.0, 695551.0),
            (0.01, 3.0, 4.0, 411389.0),
            (0.01, 4.0, 4.0, 355607.0),
            (0.01, 1.0, 0.5, 82328.3),
            (0.01, 1.0, 2.5, 433004.0),
            (0.001, 1.0, 10.0, 5.66172e6),
            (0.001, 5.0, 10.0, 2.74267e6),
            (0.05, 2.0, 3.0, 107730.0),
        ];
        for (p, j, n, expected) in table {
            let x = rate(&inputs(n, p, j), Options::default());
            assert!(close(x, expected, 3e-6), "p={p} j={j} n={n}: {x}");
        }
    }

    #[test]
    fn affected_flows_by_hand() {
        let opts = Options::default();
        // n = 2, j = 2: 2·(1 − 1/4) = 1.5.
        assert!(close(affected_flows(2.0, 2.0, opts), 1.5, 1e-15));
        // n = 4, j = 3: 4·(1 − 27/64) = 37/16.
        assert!(close(affected_flows(4.0, 3.0, opts), 37.0 / 16.0, 1e-15));
        // n ≤ 1 forces one flow, whatever j.
        assert_eq!(affected_flows(0.3, 7.5, opts), 1.0);
        // above the refinement bound af = j, capped by ceil(n).
        assert_eq!(affected_flows(20.0, 5.0, opts), 5.0);
        assert_eq!(affected_flows(12.5, 40.0, opts), 13.0);
        // between 12 and 13 only the ns-2 form refines.
        let ns2 = Options {
            form: Form::Ns2,
            refine: true,
        };
        let twelve_and_a_half = 12.5 * (1.0 - (1.0 - 1.0 / 12.5f64).powf(2.0));
        assert!(close(
            affected_flows(12.5, 2.0, ns2),
            twelve_and_a_half,
            1e-14
        ));
        // without the refinement: min(j, ceil(n)).
        let plain = Options {
            form: Form::Draft,
            refine: false,
        };
        assert_eq!(affected_flows(2.5, 2.5, plain), 2.5);
        assert_eq!(affected_flows(2.5, 4.0, plain), 3.0);
    }

    #[test]
    fn rounds_match_the_textbook_root() {
        for &(n, p, af, b) in &[
            (2.0f64, 0.01f64, 1.5f64, 1.0f64),
            (40.0, 0.3, 3.0, 2.0),
            (0.5, 0.2, 1.0, 1.0),
        ] {
            let naive = (af * p * b * (2.0 * af - n)
                + (p * b * af * (24.0 * n * n + p * b * af * (n - 2.0 * af).powi(2))).sqrt())
                / (6.0 * n * n * p);
            assert!(close(rounds_per_period(n, p, af, b), naive, 1e-12));
        }
    }

    #[test]
    fn single_flow_rounds_reduce_to_pftk() {
        // n = j = 1: x = (pb + sqrt(24pb + p²b²))/(6p) → sqrt(2b/(3p)).
        let p = 1e-10;
        assert!(close(
            rounds_per_period(1.0, p, 1.0, 1.0),
            (2.0 / (3.0 * p)).sqrt(),
            1e-4
        ));
    }

    #[test]
    fn synchronised_identity_holds_for_the_no_timeout_part() {
        // j = n: 1/(p·x_n(p)) = n/(n·p·x_1(n·p)), i.e. x_n(p) = x_1(n·p).
        for &n in &[2.0, 3.0, 5.0, 8.0] {
            let p = 0.003;
            let x_n = rounds_per_period(n, p, n, 1.0);
            let x_1 = rounds_per_period(1.0, n * p, 1.0, 1.0);
            assert!(close(x_n, x_1, 1e-9), "n = {n}");
        }
    }

    #[test]
    fn ns2_form_special_cases_one_flow() {
        let opts = Options {
            form: Form::Ns2,
            refine: true,
        };
        let i = inputs(1.0, 0.01, 3.0);
        let tfrc_like = 1460.0
            / (0.1 * (0.02f64 / 3.0).sqrt() + 0.4 * 3.0 * (0.03f64 / 8.0).sqrt() * 0.01 * 1.0032);
        assert!(close(rate(&i, opts), tfrc_like, 1e-12));
    }

    #[test]
    fn no_nan_for_fractional_n_below_one() {
        for &n in &[1e-6, 0.1, 0.5, 0.999999] {
            for &j in &[1.0, 1.5, 2.7, 100.0] {
                for form in [Form::Draft, Form::Ns2] {
                    let x = rate(&inputs(n, 0.05, j), Options { form, refine: true });
                    assert!(x.is_finite() && x > 0.0, "n={n} j={j} {form:?}: {x}");
                }
            }
        }
    }

    #[test]
    fn form_names_parse() {
        assert_eq!(Form::from_name("draft"), Some(Form::Draft));
        assert_eq!(Form::from_name("ns-2"), Some(Form::Ns2));
        assert_eq!(Form::from_name("rfc"), None);
    }
}
