"""The paper errors the reproductions record (issue 32), derived again here in exact arithmetic.

Each test derives the corrected value from the paper's own model or data with
:class:`fractions.Fraction`, checks it against the value the paper prints, and checks that the
experiment's claim records the difference with cause ``"paper"``. A wrong derivation fails:
the values are computed from the dynamics, the equations or the table, never written in.

- Altman, Barman, Tuffin, Vojnović (INFOCOM 2006), Theorem 2 and Section IV.B: the beatdown
  second moment is 28/111, not 1/3, and the stationary point lacks a factor 2
  (experiments/parallel-tcp/README.md, "Paper errors");
- Singh, Pradhan, Francis (MPAT, ICNP 2004), §2: "B1 + B2 keeps decreasing" against its own
  Table 1 (experiments/mpat/README.md);
- MPFAST (Trần et al.), §III.B: θ ≈ 1/2 does not follow from eq. (5), whose every split is a
  fixed point on a shared bottleneck (experiments/mpfast/README.md);
- Damjanovic and Welzl (MulTFRC, CCR 2009), Algorithm 1: the square term is (n − 2j)², not
  (n − j)² (experiments/multfrc/README.md).
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest
from plait import fluid, models
from plait.experiments import mpat as mp
from plait.experiments import mpfast as mf
from plait.experiments import parallel_tcp_claims as ptc

# --- Altman et al.: beatdown, Theorem 2 -----------------------------------------------------


def _beatdown_two_flows_closed(beta: F) -> tuple[F, F]:
    """Section IV.B with N = 2, c = eta = 1: (E[S]/c, E[X_i^2]/c^2) over one period of two
    phases, by summing the sub-events of a phase in closed form.

    A phase starts at a tagging time with the rates (a, 1 - a), a = 1. At every congestion time
    the tagged flow is multiplied by beta; both flows then grow at slope 1 until the link is
    full again, which takes (1 - beta) a / 2 and brings the tagged flow to rho a with
    rho = (1 + beta)/2. So a_k = rho^k, and sum_k a_k^m = 1/(1 - rho^m)."""
    rho = (1 + beta) / 2

    def geometric(m: int) -> F:
        return 1 / (1 - rho**m)

    half = (1 - beta) / 2  # a sub-event lasts half * a_k
    # Tagged flow: linear from beta a to rho a; the integral of x^2 over the sub-event is
    # duration * (u^2 + u v + v^2) / 3.
    tagged = half * (beta**2 + beta * rho + rho**2) / 3 * geometric(3)
    # The other flow grows linearly from 0 to 1 over the phase (length half * sum a_k = 1).
    length = half * geometric(1)
    assert length == 1
    growing = F(1, 3)
    # The aggregate: from 1 - (1 - beta) a_k back to 1, linearly, in each sub-event.
    aggregate = half * geometric(1) - half * (1 - beta) / 2 * geometric(2)
    second_moment = (tagged + growing) / (2 * length)
    return aggregate / length, second_moment


def _beatdown_two_flows_stepped(beta: F, sub_events: int) -> tuple[F, F, F]:
    """The same phase stepped event by event in exact arithmetic (no series): the time, the
    integral of the aggregate and of the tagged flow's square after `sub_events` events."""
    tagged, other = F(1), F(0)
    time = integral_s = integral_tagged = F(0)
    for _ in range(sub_events):
        tagged *= beta
        duration = (1 - tagged - other) / 2  # both grow at slope 1 until the sum is 1
        start, end = tagged, tagged + duration
        integral_tagged += duration * (start**2 + start * end + end**2) / 3
        integral_s += duration * ((tagged + other) + 1) / 2
        tagged, other = end, other + duration
        time += duration
        assert tagged + other == 1
    return time, integral_s, integral_tagged


def test_beatdown_second_moment_is_28_over_111_not_one_third():
    half = F(1, 2)
    mean, second = _beatdown_two_flows_closed(half)
    assert mean == F(6, 7)  # Theorem 3 (and Theorem 1 with N = 2): 1 - 1/(1 + 3N)
    assert second == F(28, 111)
    assert second != F(1, 3)  # Theorem 2 as printed
    assert float(F(1, 3) - second) == pytest.approx(0.0811, abs=1e-4)
    # Its parts: the tagged half 19/111, the growing half 1/3.
    assert 2 * second - F(1, 3) == F(19, 111)

    # Stepping the dynamics event by event converges to the closed form from below.
    time, integral_s, integral_tagged = _beatdown_two_flows_stepped(half, 60)
    rest = F(3, 4) ** 60
    assert 1 - rest <= time < 1
    assert 0 < F(19, 111) - integral_tagged < rest
    assert 0 < F(6, 7) - integral_s < rest

    # The paper's 1/3: each rate linear from c to 0 (and 0 to c) over a phase, i.e. the
    # aggregate held at c; its mean would then be c, contradicting E[S] = 6c/7.
    linear_second = F(1, 3)  # integral of t^2 over [0, 1]
    linear_mean = F(1)  # (1 - t) + t
    assert (linear_second + linear_second) / 2 == F(1, 3) and linear_mean != F(6, 7)


def test_beatdown_second_moment_in_plait_and_its_claim():
    r = fluid.simulate(2, "beatdown", beta=0.5, events=40, warmup=20)
    assert r.mean_aggregate == pytest.approx(6 / 7, abs=1e-12)
    assert r.per_flow_second_moment == pytest.approx([28 / 111] * 2, abs=1e-12)

    moment, middle = ptc.beatdown_claims(ptc.beatdown_runs())
    assert not moment.agrees and moment.cause == "paper"
    assert moment.paper_value == pytest.approx(1 / 3)
    assert moment.plait_mean == pytest.approx(28 / 111, abs=1e-12)
    assert "28/111" in moment.detail and "6c/7" in moment.detail
    assert not middle.agrees and middle.cause == "paper"
    assert middle.paper_value == pytest.approx(1 / 6) and middle.plait_mean == pytest.approx(1 / 3)
    # Were the paper's values what the dynamics give, the claims would agree with no cause.
    agree = ptc.beatdown_claims(
        {"second_moment": 1 / 3, "mean_aggregate": 6 / 7, "tag_rates": [2 / 3, 1 / 6, 0.0]}
    )
    assert all(c.agrees and c.cause is None for c in agree)


# --- Altman et al.: beatdown's stationary point, Section IV.B ---------------------------------


def _beatdown_map(sorted_rates: list[F]) -> list[F]:
    """One tagging step on rates sorted decreasing: the largest is beaten down to 0 and every
    other flow gains y_1/(N - 1) (Section IV.B); the result sorted decreasing."""
    n = len(sorted_rates)
    top = sorted_rates[0]
    return sorted([y + top / (n - 1) for y in sorted_rates[1:]] + [F(0)], reverse=True)


def _beatdown_fixed_point(n: int) -> list[F]:
    """Back-substitution of y_k = y_{k+1} + y_1/(N - 1), y_N = 0 with y_1 = N - 1 (the step
    y_1/(N - 1) set to 1), then normalised to sum to c = 1."""
    y = [F(0)]
    for _ in range(n - 1):
        y.insert(0, y[0] + 1)
    assert y[0] == n - 1  # consistent: the step is y_1/(N - 1)
    total = sum(y)
    return [v / total for v in y]


def _beatdown_printed(n: int) -> list[F]:
    """The paper's summary: 2/N for i = 1, (1 - i/N)/(N - 1) for 1 < i < N, 0 for i = N."""
    return [F(2, n)] + [(1 - F(i, n)) / (n - 1) for i in range(2, n)] + [F(0)]


@pytest.mark.parametrize("n", range(3, 9))
def test_beatdown_stationary_point_has_the_factor_two(n):
    y = _beatdown_fixed_point(n)
    assert _beatdown_map(y) == y and sum(y) == 1
    assert y == [F(2 * (n - k), n * (n - 1)) for k in range(1, n + 1)]
    assert y[0] == F(2, n)
    printed = _beatdown_printed(n)
    # The printed middle terms are half the stationary ones, so they do not sum to c ...
    assert all(p * 2 == v for p, v in zip(printed[1:-1], y[1:-1]))
    assert sum(printed) != 1
    assert sum(printed) == F(2, n) + F(1, 2) * (1 - y[0])
    # ... and they are not a fixed point of the dynamics.
    assert _beatdown_map(printed) != printed
    # plait's closed form and its fluid simulation (rates at a tagging time) give the corrected
    # point.
    assert models.beatdown_stationary_point(n) == pytest.approx([float(v) for v in y], abs=1e-12)
    r = fluid.simulate(n, "beatdown", events=40, warmup=40 * n, record=1)
    got = sorted(r.path.rates_before[0], reverse=True)
    assert got == pytest.approx([float(v) for v in y], abs=1e-9)


# --- MPAT: "B1 + B2 keeps decreasing" against Table 1 -------------------------------------

#: Table 1 of the paper, transcribed again: (N1, N2) -> (B1, B2) in KB/s.
TABLE1 = {
    (4, 1): (3990, 498),
    (9, 1): (5519, 392),
    (16, 1): (6091, 307),
    (25, 1): (5907, 280),
    (9, 4): (4876, 1795),
    (16, 4): (5156, 1320),
    (16, 9): (4340, 2833),
    (25, 4): (5596, 1171),
    (25, 9): (4082, 2618),
    (25, 16): (2925, 2264),
}


def _pairs_frame(sums: dict[tuple[int, int], float], seed: int = 1) -> pd.DataFrame:
    return pd.DataFrame(
        [{"n1": a, "n2": b, "seed": seed, "sum_kBps": s} for (a, b), s in sums.items()]
    )


def test_mpat_table1_does_not_keep_decreasing():
    assert mp.PAIRS == TABLE1
    sums = {k: b1 + b2 for k, (b1, b2) in TABLE1.items()}
    larger = [(p, q) for p in sums for q in sums if p != q and p[0] <= q[0] and p[1] <= q[1]]
    falls = [(p, q) for p, q in larger if sums[q] < sums[p]]
    assert (len(falls), len(larger)) == (12, 40)
    assert mp._decreasing_steps(sums) == (12, 40)
    # The first pair's sum is the smallest, and every other pair is larger than it.
    assert min(sums, key=sums.get) == (4, 1) and max(sums, key=sums.get) == (16, 9)
    assert sums[(25, 16)] > sums[(4, 1)]  # even the last is above the first

    claim = mp._pair_sum_claim(_pairs_frame(sums))
    assert not claim.agrees and claim.cause == "paper"
    assert claim.paper_value == 1.0 and claim.plait_mean == pytest.approx(12 / 40)
    assert "12 of the 40" in claim.detail


def test_mpat_pair_sum_claim_follows_the_data():
    # Table 1's order is a linear extension of the componentwise order: sums falling along it
    # fall in every comparison, and the claim agrees with no cause.
    falling = dict(zip(TABLE1, np.linspace(10000, 7000, len(TABLE1))))
    claim = mp._pair_sum_claim(_pairs_frame(falling))
    assert claim.agrees and claim.cause is None and claim.plait_mean == 1.0
    # Where the paper's own table does fall (16:9, 25:9, 25:16: 7173, 6700, 5189), a
    # reproduction that does not is not the paper's fault: no cause.
    tail = {(16, 9): 7000.0, (25, 9): 7100.0, (25, 16): 7200.0}
    claim = mp._pair_sum_claim(_pairs_frame(tail))
    assert not claim.agrees and claim.cause is None


# --- MPFAST: every split is a fixed point of eq. (5) on a shared bottleneck -----------------


def _mpfast_step(windows: list[F], fast: F, d: F, capacity: F, alpha: F, gamma: F):
    """One synchronous update of eq. (5) for the MPFAST subflows (theta_r = x_r / y, eq. (10))
    and of FAST's eq. (1) for the competing flow, all through one bottleneck of `capacity`
    packets/s and base RTT d: the queueing delay is the backlog over the capacity."""
    backlog = sum(windows) + fast - capacity * d
    q = max(backlog / capacity, F(0))
    rtt = d + q
    rates = [w / rtt for w in windows]
    y = sum(rates)
    new = [
        gamma * (d * w / rtt + (x / y) * alpha) + (1 - gamma) * w for w, x in zip(windows, rates)
    ]
    new_fast = gamma * (d * fast / rtt + alpha) + (1 - gamma) * fast
    return new, new_fast, q


@pytest.mark.parametrize("theta", [F(1, 10), F(1, 2), F(9, 10)])
def test_mpfast_every_split_is_a_fixed_point(theta):
    alpha, d, capacity, gamma = F(10), F(1, 10), F(1000), F(1, 2)
    # At a fixed point every flow keeps its alpha (FAST) or theta_r alpha (a subflow) queued:
    # the total backlog 2 alpha = capacity q.
    q = 2 * alpha / capacity
    fast = alpha * (d + q) / q
    windows = [theta * alpha * (d + q) / q, (1 - theta) * alpha * (d + q) / q]
    new, new_fast, q_now = _mpfast_step(windows, fast, d, capacity, alpha, gamma)
    assert q_now == q and new == windows and new_fast == fast
    # The aggregate equals FAST's rate (eq. (8): y = alpha / q, the paper's conclusion that
    # holds), but each subflow is theta of it: theta = 1/2 is one fixed point among all.
    rates = [w / (d + q) for w in windows]
    assert sum(rates) == fast / (d + q) == alpha / q
    assert rates[0] / sum(rates) == theta


def test_mpfast_split_never_moves_and_eq2_pushes_it_away():
    alpha, d, capacity, gamma = F(10), F(1, 10), F(1000), F(1, 2)
    windows, fast = [F(90), F(10)], F(50)  # a 9:1 split; backlog 50 packets, so q > 0
    for _ in range(5):
        new, fast, q = _mpfast_step(windows, fast, d, capacity, alpha, gamma)
        assert q > 0
        # Both subflows see the same d and q, so eq. (5) with theta = x/y multiplies every
        # subflow's window by the same factor: the split is whatever it was at the start.
        assert new[0] / windows[0] == new[1] / windows[1]
        assert new[0] / new[1] == 9
        windows = new
    # Eq. (2): while nothing queues a subflow's increase is theta_r alpha w_r, so
    # w_r <- w_r (1 + gamma theta_r alpha): the larger subflow grows by the larger factor, and a
    # split near 1/2 moves away from it.
    w = [F(11), F(9)]
    for _ in range(3):
        y = sum(w)
        w = [v * (1 + gamma * (v / y) * alpha) for v in w]
    assert w[0] / sum(w) > F(11, 20)


def _fair(share0: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "seed": [1, 2],
            "mp_mbps": [50.0, 50.0],
            "fast_mbps": [50.0, 50.0],
            "ratio": [1.0, 1.0],
            "share0": [share0, share0],
            "share1": [1 - share0, 1 - share0],
        }
    )


def test_mpfast_half_split_claim_carries_the_paper_cause():
    together, split = mf.fairness_claims(_fair(0.88))
    assert together.agrees and together.cause is None
    assert not split.agrees and split.cause == "paper"
    assert "fixed point" in split.detail and "same factor" in split.detail
    assert split.paper_value == 0.5 and split.plait_mean == pytest.approx(0.88)
    _, even = mf.fairness_claims(_fair(0.5))
    assert even.agrees and even.cause is None


# --- MulTFRC: Algorithm 1's square term ------------------------------------------------------


def _quadratic(n, j, p, b):
    """Algorithm 1's x as the positive root of A x^2 - B x - C = 0: the denominator 6n^2 p is
    2A, the term outside the root is B, and the root's constant 24 n^2 p b j is 4AC."""
    a = 3 * n * n * p
    lin = j * p * b * (2 * j - n)
    c = 2 * b * j
    return a, lin, c


def _radicand(n, j, p, b, square):
    return p * b * j * (24 * n * n + p * b * j * square**2)


GRID = [
    (F(n), F(j), p, b)
    for n in (1, 2, 3, 4, 7, 10, 64)
    for j in (1, 2, 3, 5, 10)
    if j <= n
    for p in (F(1, 1000), F(1, 50), F(3, 10))
    for b in (F(1), F(2))
]


def test_multfrc_square_term_is_n_minus_2j():
    for n, j, p, b in GRID:
        a, lin, c = _quadratic(n, j, p, b)
        # The corrected root's discriminant is exactly B^2 + 4AC ...
        assert _radicand(n, j, p, b, n - 2 * j) == lin**2 + 4 * a * c
        # ... the printed one is off by p^2 b^2 j^3 (2n - 3j): zero only where 2n = 3j.
        printed = _radicand(n, j, p, b, n - j)
        assert printed - (lin**2 + 4 * a * c) == p**2 * b**2 * j**3 * (2 * n - 3 * j)
        if 2 * n != 3 * j:
            assert printed != lin**2 + 4 * a * c


def test_multfrc_corrected_equation_reduces_to_single_flows():
    for n in (F(2), F(3), F(5), F(8)):
        for p in (F(1, 1000), F(1, 20)):
            b = F(1)
            # j = n: every flow is hit in every loss event, so each of the n flows sees the loss
            # event rate n p: x_n(p) = x_1(n p) exactly (rational and irrational parts).
            a, lin, c = _quadratic(n, n, p, b)
            a1, lin1, c1 = _quadratic(F(1), F(1), n * p, b)
            assert lin / (2 * a) == lin1 / (2 * a1)
            assert (lin**2 + 4 * a * c) / (2 * a) ** 2 == (lin1**2 + 4 * a1 * c1) / (2 * a1) ** 2
    # n = j = 1: the square-root law, x -> sqrt(2b/(3p)) (PFTK's E[X]) as p -> 0.
    for b in (1.0, 2.0):
        p = 1e-10
        a, lin, c = (float(v) for v in _quadratic(1, 1, p, b))
        x = (lin + math.sqrt(lin**2 + 4 * a * c)) / (2 * a)
        assert x * math.sqrt(p) == pytest.approx(math.sqrt(2 * b / 3), rel=1e-4)


def _draft_rate(n, p, j, rtt, square_of):
    """The draft form of plait.models.multfrc_rate (refine=False, b = 1, t_RTO = 4 R, s = 1)
    with the square term given."""
    b, t_rto = 1.0, 4 * rtt
    af = max(min(j, math.ceil(n)), 1.0)
    x = (
        af * p * b * (2 * af - n)
        + math.sqrt(p * b * af * (24 * n**2 + p * b * af * square_of(n, af) ** 2))
    ) / (6 * n**2 * p)
    z = t_rto * (1 + 32 * p**2) / (1 - p)
    q = min(2 * j * b * z / (rtt * (1 + 3 * n / j) * x**2), n * z / (x * rtt), n)
    return (1 - q / n) / (p * x * rtt) + q / (z * (1 - p))


def test_multfrc_plait_evaluates_the_corrected_square_term():
    for n, p, j in ((4.0, 0.05, 4.0), (10.0, 0.02, 10.0), (2.0, 0.05, 1.0), (64.0, 0.15, 20.0)):
        got = float(models.multfrc_rate(n, p, j, 0.1, 1.0, refine=False))
        right = _draft_rate(n, p, j, 0.1, lambda n_, j_: n_ - 2 * j_)
        printed = _draft_rate(n, p, j, 0.1, lambda n_, j_: n_ - j_)
        assert got == pytest.approx(right, rel=1e-9)
        if abs(printed / right - 1) > 1e-3:
            assert got != pytest.approx(printed, rel=1e-4)
    # Where it shows: n = j = 4, p = 0.05 (x = 2 rounds exactly, printed 1.9925) the printed term
    # changes the rate by about -0.5 % (the timeout term hides x once q reaches n).
    right = _draft_rate(4.0, 0.05, 4.0, 0.1, lambda n_, j_: n_ - 2 * j_)
    printed = _draft_rate(4.0, 0.05, 4.0, 0.1, lambda n_, j_: n_ - j_)
    assert printed / right - 1 < -0.004


def test_multfrc_grouping_as_in_our_copy_loses_the_square_root_law():
    # Our text of the paper divides only the root's argument by 6 n^2 p_e. With n = j = 1 that
    # reads x = p_e b + sqrt(4b): the rounds per loss period would not grow as p_e falls, and
    # the rate 1/(p_e x R) would go as 1/p_e instead of 1/sqrt(p_e).
    def literal(p, b=F(1)):
        return p * b, 24 * p * b / (6 * p)  # the term outside, and the root's argument

    for p in (F(1, 100), F(1, 10000)):
        outside, under = literal(p)
        assert under == 4  # independent of p

    def corrected_x(p, b=1.0):
        a, lin, c = (float(v) for v in _quadratic(1, 1, p, b))
        return (lin + math.sqrt(lin**2 + 4 * a * c)) / (2 * a)

    assert corrected_x(1e-6) / corrected_x(1e-4) == pytest.approx(10, rel=0.005)


# --- MPAT: 95:1 between three flows needs the small ones under one packet per RTT -----------


def test_mpat_95_to_1_is_below_the_papers_own_minimum():
    # §4.2: a TCP flow 400 KB/s over "RTT approximately 70 msec", MSS 1460: 19.18 packets.
    window, smallest = mp.extreme_split_window()
    assert window == pytest.approx(3 * 400_000 * 0.070 / 1460)
    assert smallest == pytest.approx(window / 97) and smallest < 1
    # One packet per RTT each for the two small flows leaves the big one window - 2: 55.5:1.
    assert mp.whole_packet_ratio(window, 1) == pytest.approx(window - 2)
    assert mp.whole_packet_ratio(window, 2) == pytest.approx((window - 4) / 2)
    claims = mp.shares_claims(_mpat_shares(ratio=62.0))
    assert not claims[1].agrees and claims[1].cause == "physics"
    assert "0.59 packets per RTT" in claims[1].detail
    assert mp.shares_claims(_mpat_shares(ratio=90.0))[1].cause is None


def _mpat_shares(ratio: float) -> pd.DataFrame:
    rows = [
        {
            "seed": seed,
            "minute": minute,
            "target": ":".join(str(x) for x in s),
            "max_error": 0.05,
            "ratio_1_2": ratio,
            "ratio_1_3": ratio,
            "share1": 0.97,
            "share2": 0.015,
            "share3": 0.015,
            "smallest_window_pkts": 0.95,
            "adapt_s": 0.5 if minute else np.nan,
        }
        for seed in (1, 2)
        for minute, s in enumerate(mp.SHARE_SEQUENCE)
    ]
    return pd.DataFrame(rows)


# --- MPAT: Table 1's own pairs are mostly within 25 % of N1/N2 ------------------------------


def test_mpat_table1_ratios_are_mostly_near_n1_over_n2():
    dev = mp.pair_deviations()
    exact = {k: abs(F(b1, b2) / F(k[0], k[1]) - 1) for k, (b1, b2) in TABLE1.items()}
    assert dev == {k: pytest.approx(float(v)) for k, v in exact.items()}
    assert sorted(k for k, v in exact.items() if v > F(1, 4)) == [(4, 1), (9, 1), (25, 9)]


def test_mpat_pair_ratio_claim_carries_the_paper_cause():
    from test_mpat import _scaling  # the scaling frame the verdict tests use

    frame, pairs = _scaling(lambda n: 2.0 * n, lambda n: 0.5, lambda n: float(n), lambda n: 0.9)
    near = pairs.assign(ratio=pairs["ideal"] * 1.1, sum_kBps=np.linspace(10000, 7000, 10))
    claim = mp.scaling_claims(frame, near)[5]
    assert not claim.agrees and claim.cause == "paper"
    assert claim.paper_value == pytest.approx(0.3) and "in 3 of these 10 pairs" in claim.detail
    far = near.assign(ratio=near["ideal"] * 2)
    assert mp.scaling_claims(frame, far)[5].agrees


def test_mpat_timeout_share_difference_is_open():
    from test_mpat import _scaling

    frame, pairs = _scaling(
        lambda n: 2.0 * n, lambda n: 0.05 if n <= 4 else 0.2, lambda n: float(n), lambda n: 0.9
    )
    pairs = pairs.assign(ratio=pairs["ideal"] * 2, sum_kBps=np.linspace(10000, 7000, 10))
    claim = mp.scaling_claims(frame, pairs)[2]
    assert not claim.agrees and claim.cause == "unknown" and "ssthresh" in claim.detail
