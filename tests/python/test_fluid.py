"""The AIMD fluid simulator against Altman, Barman, Tuffin, Vojnović (INFOCOM 2006).

Tolerances come from the spread over 40 seeds (release build): the time-average aggregate has a
standard deviation of about 5e-7 at 2e5 events; the two-flow average of E[X^2]/c^2 at 2e6
events about 2.5e-5 (rate-independent) and 1.2e-5 (rate-proportional), and a single flow's
about 2e-4. Every tolerance below is roughly ten standard deviations, and far smaller than the
gaps between the values being told apart (for instance 5/24 - 679/3396 = 8.4e-3).
"""

from __future__ import annotations

import numpy as np
import pytest
from plait import fluid
from plait.cli import main as cli_main

SINGLE_HIT = ("rate_independent", "rate_proportional", "largest_rate", "beatdown")
RANDOM = ("rate_independent", "rate_proportional")


def theorem1(n: int, beta: float) -> float:
    """Theorem 1, eq. (5)."""
    return 1.0 - 1.0 / (1.0 + (1.0 + beta) / (1.0 - beta) * n)


# --- Theorem 1 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", SINGLE_HIT)
@pytest.mark.parametrize("n", range(1, 11))
def test_theorem1_mean_aggregate_for_every_single_hit_policy(policy, n):
    seeds = (1, 2, 3) if policy in RANDOM else (1,)
    for seed in seeds:
        r = fluid.simulate(n, policy, events=200_000, seed=seed)
        assert r.mean_aggregate == pytest.approx(theorem1(n, 0.5), abs=5e-6), (seed, policy)
        # Symmetric connections share the aggregate equally.
        assert r.per_flow_mean.sum() == pytest.approx(r.mean_aggregate, rel=1e-9)
        assert r.per_flow_mean == pytest.approx(np.full(n, r.mean_aggregate / n), abs=2e-3)


@pytest.mark.parametrize("beta", [0.2, 0.7, 0.9])
@pytest.mark.parametrize("policy", SINGLE_HIT)
def test_theorem1_for_other_decrease_factors(policy, beta):
    for n in (2, 5):
        r = fluid.simulate(n, policy, beta=beta, events=200_000, seed=4)
        assert r.mean_aggregate == pytest.approx(theorem1(n, beta), abs=1e-5), n


@pytest.mark.parametrize("n", [1, 2, 4, 10])
@pytest.mark.parametrize("beta", [0.3, 0.5, 0.8])
def test_synchronised_losses_follow_equation_6(n, beta):
    r = fluid.simulate(n, "all", beta=beta, events=1_000)
    assert r.mean_aggregate == pytest.approx((1 + beta) / 2, abs=1e-12)
    if n > 1:
        assert r.mean_aggregate < theorem1(n, beta)


def test_palm_identity_behind_theorem1():
    # Stationarity of sum x_i^2 at congestion times: E0[Y^2]/(c E0[Y]) = 2/(N(1+b) + 1-b).
    for policy in ("rate_independent", "rate_proportional", "largest_rate"):
        for n, beta in ((3, 0.5), (6, 0.25)):
            r = fluid.simulate(n, policy, beta=beta, events=200_000, seed=8)
            ratio = r.palm_hit_second_moment / r.palm_hit_mean
            assert ratio == pytest.approx(2 / (n * (1 + beta) + 1 - beta), abs=5e-4)


# --- Theorem 2 (N = 2, beta = 1/2): time-stationary E[X_1^2]/c^2 ------------------------------


@pytest.mark.parametrize(
    "policy, expected, tol_mean, tol_flow",
    [
        ("rate_independent", 5 / 24, 2.5e-4, 1.2e-3),
        ("rate_proportional", 679 / 3396, 1.2e-4, 1.2e-3),
    ],
)
def test_theorem2_random_policies(policy, expected, tol_mean, tol_flow):
    r = fluid.simulate(2, policy, events=2_000_000, seed=21)
    assert r.per_flow_second_moment.mean() == pytest.approx(expected, abs=tol_mean)
    assert r.per_flow_second_moment == pytest.approx([expected, expected], abs=tol_flow)


def test_theorem2_largest_rate_is_exact():
    r = fluid.simulate(2, "largest_rate", events=10_000, initial=[0.1, 0.6])
    assert r.per_flow_second_moment == pytest.approx([4 / 21, 4 / 21], abs=1e-9)


def test_theorem2_orders_the_policies():
    m2 = {
        p: fluid.simulate(2, p, events=1_000_000, seed=5).per_flow_second_moment.mean()
        for p in SINGLE_HIT
    }
    assert m2["largest_rate"] < m2["rate_proportional"] < m2["rate_independent"] < m2["beatdown"]


def test_beatdown_second_moment_from_section_IV_B():
    # Integrating the accumulating cycles of Section IV.B exactly gives 28/111 per flow
    # (0.2523), not the 1/3 printed in Theorem 2; 1/3 is what a rate falling linearly from c
    # to 0 would give, which would also make the aggregate c instead of 6c/7 (Theorem 3).
    r = fluid.simulate(2, "beatdown", events=1_000)
    assert r.per_flow_second_moment == pytest.approx([28 / 111, 28 / 111], abs=1e-12)
    assert r.mean_aggregate == pytest.approx(6 / 7, abs=1e-12)
    assert abs(r.per_flow_second_moment[0] - 1 / 3) > 0.08


def test_second_moments_are_time_averages_not_event_averages():
    # Rate-independent, N = 2: at congestion times E0[x_1^2]/c^2 = 2/7 exactly (stationarity of
    # sum x_i^2 with E0[Y] = c/2), while the time average is 5/24. The path records the rates
    # just before each congestion time, from which the event average is taken.
    r = fluid.simulate(2, "rate_independent", events=400_000, seed=13, record=400_000)
    event_average = np.mean(r.path.rates_before**2)
    assert event_average == pytest.approx(2 / 7, abs=1e-3)
    assert r.per_flow_second_moment.mean() == pytest.approx(5 / 24, abs=5e-4)


# --- Example 1: biased rate-independent policy --------------------------------------------------


def test_example1_aggregate_is_insensitive_to_the_bias():
    sigmas = (0.1, 0.25, 0.5, 0.75, 0.9)
    class1, class2 = [], []
    for sigma in sigmas:
        weights = [sigma, sigma, 1 - sigma, 1 - sigma]
        r = fluid.simulate(4, "rate_independent", weights=weights, events=1_000_000, seed=3)
        assert r.mean_aggregate == pytest.approx(12 / 13, abs=2e-5), sigma
        assert r.hit_fraction == pytest.approx(np.array(weights) / 2, abs=5e-3)
        # Within a class the connections are exchangeable; a single connection's mean varies
        # more than the aggregate's (sd up to 2e-3 at 1e6 events when sigma = 0.1).
        assert r.per_flow_mean[0] == pytest.approx(r.per_flow_mean[1], abs=1.5e-2)
        assert r.per_flow_mean[2] == pytest.approx(r.per_flow_mean[3], abs=1.5e-2)
        class1.append(r.per_flow_mean[:2].sum())
        class2.append(r.per_flow_mean[2:].sum())
    # The class hit more often gets less: connections 1, 2 lose throughput as sigma grows.
    assert np.all(np.diff(class1) < -0.01)
    assert np.all(np.diff(class2) > 0.01)
    assert class1[2] == pytest.approx(class2[2], abs=6e-3)  # sd 8.5e-4 at sigma = 1/2


# --- heterogeneous connections ---------------------------------------------------------------


def test_heterogeneous_synchronised_fixed_point():
    # ALL: at the fixed point x_i = eta_i tau/(1 - beta_i), tau = c / sum eta_j/(1 - beta_j);
    # each rate sweeps [beta_i x_i, x_i] uniformly in time.
    beta = np.array([0.3, 0.5, 0.8, 0.6])
    eta = np.array([1.0, 2.0, 0.5, 3.0])
    c = 5.0
    r = fluid.simulate(4, "all", beta=beta, eta=eta, capacity=c, events=1_000, warmup=3_000)
    peak = eta * (c / np.sum(eta / (1 - beta))) / (1 - beta)
    assert r.per_flow_mean == pytest.approx((1 + beta) * peak / 2 / c, abs=1e-9)
    assert r.per_flow_second_moment == pytest.approx(
        peak**2 * (1 + beta + beta**2) / 3 / c**2, abs=1e-9
    )


@pytest.mark.parametrize("policy", ["rate_independent", "rate_proportional", "largest_rate"])
def test_heterogeneous_connections_share_unequally(policy):
    # A larger increase slope earns a larger share; the flow moments add up to the aggregate.
    r = fluid.simulate(3, policy, beta=[0.5, 0.5, 0.7], eta=[1.0, 4.0, 1.0], events=100_000, seed=6)
    assert r.per_flow_mean.sum() == pytest.approx(r.mean_aggregate, rel=1e-9)
    assert r.per_flow_mean[1] > r.per_flow_mean[0] + 0.01
    assert np.all(r.per_flow_second_moment >= r.per_flow_mean**2 - 1e-12)


def _beatdown_by_brute_force(beta, eta, phases):
    """Steps through every congestion time of each beatdown phase (eqs. (2)-(4)) until the
    tagged rate is negligible, integrating the linear pieces; returns E[X_i]/c, E[X_i^2]/c^2
    and E[S]/c for c = 1, starting from equal shares."""
    n = len(beta)
    x = [1.0 / n] * n
    eta_bar = sum(eta)
    int_x, int_x2, int_s, total = [0.0] * n, [0.0] * n, 0.0, 0.0
    for _ in range(phases):
        m = max(range(n), key=lambda i: (x[i], -i))
        while x[m] > 1e-15:
            decrease = (1 - beta[m]) * x[m]
            x[m] *= beta[m]
            tau = decrease / eta_bar
            for i in range(n):
                a, b = x[i], x[i] + eta[i] * tau
                int_x[i] += tau * (a + b) / 2
                int_x2[i] += tau * (a * a + a * b + b * b) / 3
                x[i] = b
            int_s += tau * (1 - decrease / 2)
            total += tau
        # The accumulation point: the tagged rate is zero, the others have absorbed the rest.
        residue = x[m]
        x[m] = 0.0
        others = eta_bar - eta[m]
        for i in range(n):
            if i != m:
                x[i] += eta[i] / others * residue
    return np.array(int_x) / total, np.array(int_x2) / total, int_s / total


def test_beatdown_closed_form_equals_stepping_through_the_cycles():
    # Heterogeneous connections: a fast-growing connection is tagged more often and spends
    # long phases being beaten down, so under beatdown it earns less, not more.
    beta, eta = [0.5, 0.5, 0.7], [1.0, 4.0, 1.0]
    mean, second, aggregate = _beatdown_by_brute_force(beta, eta, phases=30)
    r = fluid.simulate(3, "beatdown", beta=beta, eta=eta, events=30, warmup=0)
    assert r.per_flow_mean == pytest.approx(mean, abs=1e-10)
    assert r.per_flow_second_moment == pytest.approx(second, abs=1e-10)
    assert r.mean_aggregate == pytest.approx(aggregate, abs=1e-10)
    assert r.per_flow_mean[1] < r.per_flow_mean[0]


def test_time_and_rate_units_do_not_matter():
    a = fluid.simulate(3, "rate_proportional", events=50_000, seed=2)
    b = fluid.simulate(3, "rate_proportional", events=50_000, seed=2, eta=1e3, capacity=1e3)
    assert b.mean_aggregate == pytest.approx(a.mean_aggregate, abs=1e-9)
    assert b.per_flow_second_moment == pytest.approx(a.per_flow_second_moment, abs=1e-9)
    assert b.duration == pytest.approx(a.duration, rel=1e-9)


# --- determinism -------------------------------------------------------------------------------


def _same(a: fluid.FluidResult, b: fluid.FluidResult) -> bool:
    arrays = ("per_flow_mean", "per_flow_second_moment", "hit_fraction")
    path = ("time", "rates_before", "rates_after", "hits")
    return (
        a.mean_aggregate == b.mean_aggregate
        and a.duration == b.duration
        and all(np.array_equal(getattr(a, k), getattr(b, k)) for k in arrays)
        and all(np.array_equal(getattr(a.path, k), getattr(b.path, k)) for k in path)
    )


@pytest.mark.parametrize("policy", ["rate_independent", "rate_proportional"])
def test_same_seed_gives_the_same_run(policy):
    kwargs = dict(events=100_000, record=500, weights=None)
    a = fluid.simulate(5, policy, seed=42, **kwargs)
    b = fluid.simulate(5, policy, seed=42, **kwargs)
    c = fluid.simulate(5, policy, seed=43, **kwargs)
    assert _same(a, b)
    assert not _same(a, c)
    assert not np.array_equal(a.per_flow_mean, c.per_flow_mean)


def test_weighted_runs_are_deterministic():
    kwargs = dict(events=50_000, record=100, weights=[1, 2, 3])
    a = fluid.simulate(3, "rate_independent", seed=7, **kwargs)
    b = fluid.simulate(3, "rate_independent", seed=7, **kwargs)
    assert _same(a, b)


# --- custom policies ---------------------------------------------------------------------------


def test_python_policy_rate_independent_matches_theorem1():
    rng = np.random.default_rng(0)

    def uniform(rates):
        return int(rng.integers(len(rates)))

    r = fluid.simulate(3, uniform, events=20_000, seed=0)
    assert r.policy == "uniform"
    assert r.mean_aggregate == pytest.approx(theorem1(3, 0.5), abs=3e-5)
    assert r.hit_fraction == pytest.approx([1 / 3] * 3, abs=0.02)


def test_python_policy_largest_equals_builtin():
    def largest(rates):
        return int(np.argmax(rates))

    built_in = fluid.simulate(4, "largest_rate", events=2_000, record=50)
    custom = fluid.simulate(4, largest, events=2_000, record=50)
    assert custom.mean_aggregate == pytest.approx(built_in.mean_aggregate, abs=1e-12)
    assert custom.per_flow_second_moment == pytest.approx(
        built_in.per_flow_second_moment, abs=1e-12
    )
    assert np.array_equal(custom.path.hits, built_in.path.hits)


def test_python_policy_may_signal_several_connections():
    def everyone(rates):
        return range(len(rates))

    def two_largest(rates):
        return list(np.argsort(rates)[-2:])

    assert fluid.simulate(3, everyone, events=500).mean_aggregate == pytest.approx(0.75, abs=1e-12)
    r = fluid.simulate(4, two_largest, events=5_000, record=10)
    assert np.all(r.path.hits.sum(axis=1) == 2)
    assert (1 + 0.5) / 2 < r.mean_aggregate < theorem1(4, 0.5)


def test_python_policy_errors_surface():
    class Boom(RuntimeError):
        pass

    def broken(rates):
        raise Boom("policy failed")

    with pytest.raises(Boom, match="policy failed"):
        fluid.simulate(2, broken, events=10)
    with pytest.raises(ValueError, match="out of range"):
        fluid.simulate(2, lambda rates: 5, events=10)
    with pytest.raises(ValueError, match="negative"):
        fluid.simulate(2, lambda rates: -1, events=10)
    with pytest.raises(ValueError, match="no connection"):
        fluid.simulate(2, lambda rates: [], events=10)
    with pytest.raises(ValueError, match="twice"):
        fluid.simulate(2, lambda rates: [0, 0], events=10)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(policy="random"), "unknown loss policy"),
        (dict(policy="largest_rate", weights=[1, 1]), "rate_independent"),
        (dict(policy="all", beta=1.0), "beta"),
        (dict(policy="all", eta=[1.0, -1.0]), "eta"),
        (dict(policy="all", beta=[0.5, 0.5, 0.5]), "beta"),
        (dict(policy="rate_independent", weights=[0, 0]), "weights"),
        (dict(policy="all", events=1.5), "events"),
        (dict(policy="all", initial=[0.9, 0.9]), "initial"),
        (dict(policy=3.0), "policy"),
    ],
)
def test_invalid_arguments_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        fluid.simulate(2, **{"events": 100, **kwargs})


# --- sample paths ------------------------------------------------------------------------------


def test_sample_path_is_consistent():
    r = fluid.simulate(4, "rate_proportional", events=1_000, record=200, seed=1, capacity=2.0)
    p = r.path
    assert len(p) == 200 and p.rates_before.shape == (200, 4) and p.hits.shape == (200, 4)
    assert p.rates_before.sum(axis=1) == pytest.approx(np.full(200, 2.0), abs=1e-9)
    expected_after = np.where(p.hits, 0.5 * p.rates_before, p.rates_before)
    assert p.rates_after == pytest.approx(expected_after, abs=1e-12)
    # Between congestion times each rate grows with slope eta = 1.
    gaps = np.diff(p.time)
    assert np.all(gaps > 0)
    assert p.rates_before[1:] == pytest.approx(p.rates_after[:-1] + gaps[:, None], abs=1e-9)
    t, x = p.polyline()
    assert t.shape == (400,) and x.shape == (400, 4)
    assert fluid.simulate(4, "rate_proportional", events=100).path is None


def test_beatdown_sample_path_shows_the_accumulating_cycles():
    r = fluid.simulate(2, "beatdown", events=4, record=1_000)
    p = r.path
    tagged = np.argmax(p.hits, axis=1)
    # One connection is signalled again and again, its pre-decrease rate shrinking by
    # a = beta + (1 - beta)/2 = 3/4 per cycle, until the phase ends and the other is tagged.
    first = tagged == tagged[0]
    run = int(np.argmin(first)) if not first.all() else len(first)
    ratios = p.rates_before[1:run, tagged[0]] / p.rates_before[: run - 1, tagged[0]]
    assert run > 10
    assert ratios == pytest.approx(np.full(run - 1, 0.75), abs=1e-12)
    assert tagged[run] != tagged[0]


# --- command line ------------------------------------------------------------------------------


def test_cli_prints_the_moments(capsys):
    assert cli_main(["fluid", "--n", "2", "--policy", "largest_rate", "--events", "1e4"]) == 0
    out = capsys.readouterr().out
    assert "0.190476" in out  # 4/21
    assert "Theorem 1" in out and "0.857143" in out


def test_cli_draws_the_sample_path(tmp_path, capsys):
    png = tmp_path / "paths.png"
    argv = ["fluid", "--n", "4", "--policy", "rate_proportional", "--events", "1e4"]
    assert cli_main([*argv, "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "sample path" in capsys.readouterr().out


def test_cli_rejects_bad_lengths(capsys):
    assert cli_main(["fluid", "--n", "3", "--beta", "0.5,0.5", "--events", "100"]) == 2
    assert "--beta" in capsys.readouterr().err
