//! Unit tests of the fluid simulator against results that follow from the paper's equations.

use super::*;

/// Theorem 1, eq. (5): `E[S]/c = 1 - 1 / (1 + N (1 + beta) / (1 - beta))`.
fn theorem1(n: usize, beta: f64) -> f64 {
    1.0 - 1.0 / (1.0 + n as f64 * (1.0 + beta) / (1.0 - beta))
}

fn run(config: &FluidConfig, policy: &Policy) -> FluidResult {
    simulate(config, policy).expect("valid configuration")
}

fn uniform() -> Policy {
    Policy::RateIndependent { weights: None }
}

#[test]
fn one_connection_is_the_classic_sawtooth_under_every_policy() {
    // N = 1: the rate sweeps [beta c, c] linearly, so E[X]/c = (1 + beta)/2 and
    // E[X²]/c² = (1 + beta + beta²)/3, whatever the policy.
    let beta = 0.3;
    let config = FluidConfig::new(1)
        .with_beta(beta)
        .with_events(50)
        .with_warmup(3);
    let policies = [
        uniform(),
        Policy::RateProportional,
        Policy::LargestRate,
        Policy::Beatdown,
        Policy::All,
    ];
    for policy in &policies {
        let r = run(&config, policy);
        assert!(
            (r.mean_aggregate - (1.0 + beta) / 2.0).abs() < 1e-12,
            "{policy:?}"
        );
        let m2 = (1.0 + beta + beta * beta) / 3.0;
        assert!(
            (r.per_flow_second_moment[0] - m2).abs() < 1e-12,
            "{policy:?}"
        );
        assert_eq!(r.events, 50);
    }
}

#[test]
fn synchronised_heterogeneous_flows_reach_the_all_fixed_point() {
    // Under ALL every rate is cut at every congestion time: x_i = beta_i x_i + eta_i tau at
    // the fixed point, so x_i = eta_i tau / (1 - beta_i) with tau = c / sum_j eta_j/(1-beta_j),
    // and each rate sweeps [beta_i x_i, x_i] uniformly in time.
    let config = FluidConfig {
        capacity: 2.0,
        eta: vec![1.0, 2.0, 0.5],
        beta: vec![0.3, 0.5, 0.8],
        events: 500,
        warmup: 2_000,
        ..FluidConfig::new(3)
    };
    let r = run(&config, &Policy::All);
    let c = config.capacity;
    let tau = c
        / (0..3)
            .map(|j| config.eta[j] / (1.0 - config.beta[j]))
            .sum::<f64>();
    let mut aggregate = 0.0;
    for i in 0..3 {
        let (eta, beta) = (config.eta[i], config.beta[i]);
        let peak = eta * tau / (1.0 - beta);
        let mean = (1.0 + beta) * peak / 2.0 / c;
        let second = peak * peak * (1.0 + beta + beta * beta) / 3.0 / (c * c);
        assert!((r.per_flow_mean[i] - mean).abs() < 1e-9, "flow {i}");
        assert!(
            (r.per_flow_second_moment[i] - second).abs() < 1e-9,
            "flow {i}"
        );
        aggregate += mean;
    }
    assert!((r.mean_aggregate - aggregate).abs() < 1e-9);
    assert_eq!(r.hit_fraction, vec![1.0; 3]);
}

#[test]
fn all_policy_homogeneous_matches_equation_6() {
    let config = FluidConfig::new(5).with_beta(0.6).with_events(100);
    let r = run(&config, &Policy::All);
    assert!((r.mean_aggregate - 0.8).abs() < 1e-12);
}

#[test]
fn largest_rate_two_flows_matches_theorem_2() {
    // Proposition 1: the rates just before congestion converge to (4/7, 3/7) c; each rate
    // sweeps [2/7, 4/7] c uniformly, so E[X²]/c² = 4/21.
    let config = FluidConfig {
        initial: Some(vec![0.3, 0.7]),
        events: 1_000,
        warmup: 300,
        ..FluidConfig::new(2)
    };
    let r = run(&config, &Policy::LargestRate);
    for i in 0..2 {
        assert!((r.per_flow_second_moment[i] - 4.0 / 21.0).abs() < 1e-9);
        assert!((r.per_flow_mean[i] - 3.0 / 7.0).abs() < 1e-9);
    }
    assert!((r.mean_aggregate - 6.0 / 7.0).abs() < 1e-12);
}

#[test]
fn largest_rate_converges_to_proposition_1() {
    // eq. (9): x_1 = 2c / ((1+beta) N + 1 - beta), x_i = x_1 (1 - (1-beta)(i-1)/N).
    let (n, beta) = (3, 0.5);
    let config = FluidConfig {
        initial: Some(vec![0.05, 0.9, 0.05]),
        events: 9,
        warmup: 600,
        record: 9,
        ..FluidConfig::new(n)
    };
    let r = run(&config, &Policy::LargestRate);
    let top = 2.0 / ((1.0 + beta) * n as f64 + 1.0 - beta);
    for row in 0..r.path.rows() {
        let mut before = r.path.rates_before[row * n..(row + 1) * n].to_vec();
        before.sort_by(|a, b| b.partial_cmp(a).unwrap());
        for (k, x) in before.iter().enumerate() {
            let expected = top * (1.0 - (1.0 - beta) * k as f64 / n as f64);
            assert!((x - expected).abs() < 1e-9, "row {row}: {before:?}");
        }
    }
}

#[test]
fn beatdown_two_flows_is_exact() {
    // Section IV.B with N = 2: phases alternate between the tag-time states (c, 0) and (0, c).
    // Integrating the accumulating cycles exactly gives E[S]/c = 6/7 (Theorem 3) and
    // E[X_i²]/c² = (19/111 + 1/3)/2 = 28/111 (tagged half and growing half of the period).
    let config = FluidConfig::new(2).with_events(40).with_warmup(5);
    let r = run(&config, &Policy::Beatdown);
    assert!((r.mean_aggregate - 6.0 / 7.0).abs() < 1e-12);
    for i in 0..2 {
        assert!((r.per_flow_mean[i] - 3.0 / 7.0).abs() < 1e-12);
        assert!((r.per_flow_second_moment[i] - 28.0 / 111.0).abs() < 1e-12);
        assert!((r.hit_fraction[i] - 0.5).abs() < 1e-12);
    }
    // Each phase lasts c / eta, so 40 phases last 40 time units.
    assert!((r.duration - 40.0).abs() < 1e-9);
}

#[test]
fn beatdown_tag_times_reach_the_stationary_point() {
    // At tag times the sorted rates are (N - k)/(N - 1) * 2c/N, k = 1..N: (2/3, 1/3, 0) c.
    let config = FluidConfig::new(3)
        .with_events(30)
        .with_warmup(30)
        .with_record(1);
    let r = run(&config, &Policy::Beatdown);
    let mut before = r.path.rates_before[..3].to_vec();
    before.sort_by(|a, b| b.partial_cmp(a).unwrap());
    for (x, expected) in before.iter().zip([2.0 / 3.0, 1.0 / 3.0, 0.0]) {
        assert!((x - expected).abs() < 1e-9, "{before:?}");
    }
    assert!((r.mean_aggregate - theorem1(3, 0.5)).abs() < 1e-9);
}

#[test]
fn random_single_hit_policies_follow_theorem_1() {
    // A tolerance of 2e-4 is several standard deviations at 2e5 events.
    for (n, beta) in [(3, 0.5), (5, 0.8)] {
        let config = FluidConfig::new(n)
            .with_beta(beta)
            .with_events(200_000)
            .with_seed(7);
        for policy in [uniform(), Policy::RateProportional] {
            let r = run(&config, &policy);
            let expected = theorem1(n, beta);
            assert!(
                (r.mean_aggregate - expected).abs() < 2e-4,
                "{policy:?} n={n}: {} vs {expected}",
                r.mean_aggregate
            );
        }
    }
}

#[test]
fn palm_identity_holds_for_every_single_hit_policy() {
    // Stationarity of sum_i x_i² at congestion times gives, for any single-hit policy with
    // identical connections, E0[Y²] / (c E0[Y]) = 2 / (N (1 + beta) + 1 - beta).
    let (n, beta) = (4, 0.7);
    let expected = 2.0 / (n as f64 * (1.0 + beta) + 1.0 - beta);
    let config = FluidConfig::new(n)
        .with_beta(beta)
        .with_events(100_000)
        .with_seed(3);
    for policy in [uniform(), Policy::RateProportional, Policy::LargestRate] {
        let r = run(&config, &policy);
        let ratio = r.palm_hit_second_moment / r.palm_hit_mean;
        assert!(
            (ratio - expected).abs() < 1e-3,
            "{policy:?}: {ratio} vs {expected}"
        );
    }
}

#[test]
fn same_seed_same_run_other_seed_other_run() {
    let config = FluidConfig::new(4)
        .with_events(20_000)
        .with_record(50)
        .with_seed(11);
    for policy in [uniform(), Policy::RateProportional] {
        let a = run(&config, &policy);
        let b = run(&config, &policy);
        assert_eq!(a, b);
        let c = run(&config.clone().with_seed(12), &policy);
        assert_ne!(a.per_flow_mean, c.per_flow_mean);
    }
}

#[test]
fn flow_integrals_add_up_to_the_aggregate_across_rebases() {
    // The lazy per-flow segments and the per-event aggregate integral are computed
    // independently; they must agree, including across clock rebases.
    let config = FluidConfig {
        eta: vec![0.5, 1.0, 2.0, 4.0],
        beta: vec![0.2, 0.5, 0.7, 0.9],
        events: 50_000,
        ..FluidConfig::new(4)
    };
    for policy in [
        uniform(),
        Policy::RateProportional,
        Policy::LargestRate,
        Policy::Beatdown,
    ] {
        let r = run(&config, &policy);
        let sum: f64 = r.per_flow_mean.iter().sum();
        assert!((sum - r.mean_aggregate).abs() < 1e-9, "{policy:?}");
    }
}

#[test]
fn results_do_not_depend_on_units() {
    // Scaling eta (time unit) or c together with eta (rate unit) leaves the normalised
    // moments unchanged: the event sequence is the same, only time is rescaled.
    let base = FluidConfig::new(3).with_events(10_000).with_seed(5);
    let a = run(&base, &uniform());
    let faster = FluidConfig {
        eta: vec![37.0; 3],
        ..base.clone()
    };
    let bigger = FluidConfig {
        eta: vec![1e6; 3],
        capacity: 1e6,
        ..base.clone()
    };
    for other in [run(&faster, &uniform()), run(&bigger, &uniform())] {
        assert!((a.mean_aggregate - other.mean_aggregate).abs() < 1e-9);
        for i in 0..3 {
            assert!((a.per_flow_second_moment[i] - other.per_flow_second_moment[i]).abs() < 1e-9);
        }
    }
}

#[test]
fn biased_rate_independent_policy_keeps_the_aggregate() {
    // Example 1: probabilities (sigma, sigma, 1-sigma, 1-sigma)/2.
    let sigma = 0.2;
    let policy = Policy::RateIndependent {
        weights: Some(vec![sigma, sigma, 1.0 - sigma, 1.0 - sigma]),
    };
    let r = run(
        &FluidConfig::new(4).with_events(200_000).with_seed(2),
        &policy,
    );
    assert!((r.mean_aggregate - 12.0 / 13.0).abs() < 2e-4);
    assert!(r.per_flow_mean[0] > r.per_flow_mean[2] + 0.05);
    assert!((r.hit_fraction[0] - sigma / 2.0).abs() < 5e-3);
}

#[test]
fn custom_policy_signalling_everyone_equals_all() {
    let config = FluidConfig::new(3).with_events(200).with_record(5);
    let mut everyone = |rates: &[f64], hits: &mut Vec<usize>| -> Result<(), PolicyError> {
        hits.extend(0..rates.len());
        Ok(())
    };
    let custom = simulate_custom(&config, &mut everyone).unwrap();
    assert_eq!(custom, run(&config, &Policy::All));
}

#[test]
fn custom_policy_errors_are_reported() {
    let config = FluidConfig::new(2).with_events(10);
    let cases: [(Vec<usize>, &str); 3] = [
        (vec![], "no connection"),
        (vec![2], "out of range"),
        (vec![1, 1], "twice"),
    ];
    for (listed, message) in cases {
        let mut policy = |_: &[f64], hits: &mut Vec<usize>| -> Result<(), PolicyError> {
            hits.extend_from_slice(&listed);
            Ok(())
        };
        let err = simulate_custom(&config, &mut policy).unwrap_err();
        assert!(
            matches!(&err, FluidError::InvalidSelection(m) if m.contains(message)),
            "{err}"
        );
    }
    let mut failing = |_: &[f64], _: &mut Vec<usize>| Err(PolicyError("nope".into()));
    assert_eq!(
        simulate_custom(&config, &mut failing).unwrap_err(),
        FluidError::Policy("nope".into())
    );
}

#[test]
fn invalid_parameters_are_rejected() {
    let ok = FluidConfig::new(2);
    let cases = [
        FluidConfig {
            beta: vec![0.5, 1.0],
            ..ok.clone()
        },
        FluidConfig {
            eta: vec![1.0, 0.0],
            ..ok.clone()
        },
        FluidConfig {
            beta: vec![0.5],
            ..ok.clone()
        },
        FluidConfig {
            capacity: f64::NAN,
            ..ok.clone()
        },
        FluidConfig {
            events: 0,
            ..ok.clone()
        },
        FluidConfig {
            initial: Some(vec![0.8, 0.8]),
            ..ok.clone()
        },
        FluidConfig::new(0),
    ];
    for config in &cases {
        assert!(matches!(
            simulate(config, &uniform()),
            Err(FluidError::InvalidParameter(_))
        ));
    }
    let zero_weights = Policy::RateIndependent {
        weights: Some(vec![0.0, 0.0]),
    };
    assert!(simulate(&ok, &zero_weights).is_err());
    assert!(matches!(
        Policy::parse("random", None),
        Err(FluidError::UnknownPolicy(_))
    ));
    assert!(Policy::parse("largest-rate", Some(vec![1.0, 1.0])).is_err());
    assert_eq!(
        Policy::parse("Rate-Proportional", None).unwrap(),
        Policy::RateProportional
    );
    for name in Policy::NAMES {
        assert_eq!(Policy::parse(name, None).unwrap().name(), name);
    }
}

#[test]
fn sample_path_rows_are_congestion_times() {
    let n = 4;
    let beta = 0.5;
    let config = FluidConfig::new(n)
        .with_events(1_000)
        .with_record(100)
        .with_seed(9);
    let r = run(&config, &Policy::RateProportional);
    let path = &r.path;
    assert_eq!(path.rows(), 100);
    assert_eq!(path.rates_before.len(), 100 * n);
    for row in 0..path.rows() {
        let span = row * n..(row + 1) * n;
        let before = &path.rates_before[span.clone()];
        let after = &path.rates_after[span.clone()];
        let hits = &path.hits[span];
        assert!((before.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert_eq!(hits.iter().filter(|&&h| h).count(), 1);
        for i in 0..n {
            let expected = if hits[i] { beta * before[i] } else { before[i] };
            assert!((after[i] - expected).abs() < 1e-12);
        }
        if row > 0 {
            assert!(path.time[row] > path.time[row - 1]);
        }
    }
}
