"""AIMD fluid model of parallel connections on one link, simulated exactly.

The model is that of Altman, Barman, Tuffin and Vojnović, "Parallel TCP sockets: simple model,
throughput and validation" (INFOCOM 2006), Section II.A: ``N`` connections increase their rates
linearly (slopes ``eta_i``); whenever the aggregate rate reaches the capacity ``c`` (a *link
congestion time*) a loss policy picks the connection(s) whose rate drops to ``beta_i`` times its
value. The simulation jumps from one congestion time to the next in closed form (eq. (4)) and
integrates the piecewise-linear rates exactly; the engine is ``plait_core::model::fluid``.

Every moment returned is a *time-stationary* average over the measured window (what Theorems 1
and 2 of the paper are about), normalised by ``c`` or ``c**2``. Averages taken at congestion
times (Palm averages) differ and are reported separately for the signalled rate only.

>>> r = simulate(2, "largest_rate", events=1_000)
>>> round(r.mean_aggregate, 9), round(float(r.per_flow_second_moment[0]), 9)  # 6/7, 4/21
(0.857142857, 0.19047619)
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable, Union

import numpy as np

from plait import _core

_core.prepare_numpy()  # see plait._core.prepare_numpy

#: Names of the built-in loss policies (``-`` may be used for ``_``).
POLICIES: tuple[str, ...] = tuple(_core.FLUID_POLICIES)

#: A loss policy: a name from :data:`POLICIES`, or ``callable(rates) -> int | iterable of int``
#: receiving the rates just before a congestion time (a fresh float64 array summing to the
#: capacity) and returning the index or indices of the connections to signal.
PolicyLike = Union[str, Callable[[np.ndarray], Union[int, Sequence[int]]]]


@dataclass(frozen=True)
class SamplePath:
    """The first congestion times of the measured window.

    Row ``k`` is the congestion time ``time[k]`` (from the start of the window):
    ``rates_before[k]`` and ``rates_after[k]`` are the rates just before and after the
    decrease, ``hits[k]`` marks the signalled connections. Between rows every rate is linear.
    Under beatdown the rows are the visible cycles of each beatdown phase (those whose
    decrease exceeds 1e-4 of the capacity); the phase ends when the tagged rate reaches zero.
    """

    time: np.ndarray
    rates_before: np.ndarray
    rates_after: np.ndarray
    hits: np.ndarray
    capacity: float

    def __len__(self) -> int:
        return len(self.time)

    def polyline(self) -> tuple[np.ndarray, np.ndarray]:
        """Corner points of the piecewise-linear rates: times ``(2K,)`` and rates ``(2K, N)``.

        Each congestion time contributes the point before and the point after the decrease,
        so ``plt.plot(*path.polyline())`` draws the exact sample path.
        """
        times = np.repeat(self.time, 2)
        rates = np.empty((2 * len(self.time), self.rates_before.shape[1]))
        rates[0::2] = self.rates_before
        rates[1::2] = self.rates_after
        return times, rates

    def plot(self, ax=None, aggregate: bool = True, normalise: bool = True):
        """Draws the rates (and their sum) against time on a matplotlib axis; returns the axis."""
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(8, 4))
        times, rates = self.polyline()
        scale = self.capacity if normalise else 1.0
        for i in range(rates.shape[1]):
            ax.plot(times, rates[:, i] / scale, lw=1.0, label=f"connection {i + 1}")
        if aggregate:
            ax.plot(times, rates.sum(axis=1) / scale, color="black", lw=1.2, label="aggregate")
        ax.axhline(1.0 if normalise else self.capacity, color="grey", ls=":", lw=0.8)
        ax.set_xlabel("time")
        ax.set_ylabel("rate / capacity" if normalise else "rate")
        return ax


@dataclass(frozen=True)
class FluidResult:
    """Time averages of one fluid run (first moments over ``c``, second over ``c**2``)."""

    n: int
    policy: str
    beta: np.ndarray
    eta: np.ndarray
    capacity: float
    seed: int
    warmup: int
    #: Measured congestion times (beatdown: measured beatdown phases).
    events: int
    #: Length of the measured window.
    duration: float
    #: ``E[sum_i X_i] / c`` (Theorem 1).
    mean_aggregate: float
    #: ``E[(sum_i X_i)^2] / c^2``.
    aggregate_second_moment: float
    #: ``E[X_i] / c``.
    per_flow_mean: np.ndarray
    #: ``E[X_i^2] / c^2`` (Theorem 2).
    per_flow_second_moment: np.ndarray
    #: Share of the measured events at which connection ``i`` was signalled.
    hit_fraction: np.ndarray
    #: Event (Palm) average of the summed pre-decrease rate ``Y`` of the signalled connections,
    #: ``E0[Y] / c``.
    palm_hit_mean: float
    #: ``E0[Y^2] / c^2``.
    palm_hit_second_moment: float
    path: SamplePath | None = field(default=None, repr=False)

    @property
    def per_flow_variance(self) -> np.ndarray:
        """``Var[X_i] / c^2``."""
        return self.per_flow_second_moment - self.per_flow_mean**2

    def summary(self) -> str:
        """A plain-text table of the moments."""
        lines = [
            f"fluid model: N={self.n}, policy={self.policy}, events={self.events}, "
            f"warmup={self.warmup}, seed={self.seed}",
            f"{'flow':>5} {'beta':>7} {'eta':>9} {'E[X]/c':>10} {'E[X^2]/c^2':>12} "
            f"{'hit share':>10}",
        ]
        for i in range(self.n):
            lines.append(
                f"{i + 1:>5} {self.beta[i]:>7.4g} {self.eta[i]:>9.4g} "
                f"{self.per_flow_mean[i]:>10.6f} {self.per_flow_second_moment[i]:>12.6f} "
                f"{self.hit_fraction[i]:>10.4f}"
            )
        lines.append(f"aggregate E[S]/c     = {self.mean_aggregate:.6f}")
        lines.append(f"aggregate E[S^2]/c^2 = {self.aggregate_second_moment:.6f}")
        return "\n".join(lines)


def _per_flow(name: str, value, n: int) -> list[float]:
    array = np.asarray(value, dtype=float)
    if array.ndim == 0:
        return [float(array)] * n
    if array.shape != (n,):
        raise ValueError(f"{name} must be one number or {n} numbers, got shape {array.shape}")
    return [float(v) for v in array]


def _count(name: str, value) -> int:
    """Accepts integers and integral floats such as ``1e6``."""
    if isinstance(value, numbers.Integral):
        count = int(value)
    elif isinstance(value, numbers.Real) and float(value).is_integer():
        count = int(value)
    else:
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if count < 0:
        raise ValueError(f"{name} must not be negative, got {count}")
    return count


def simulate(
    n: int,
    policy: PolicyLike,
    beta: float | Sequence[float] = 0.5,
    eta: float | Sequence[float] = 1.0,
    capacity: float = 1.0,
    events: int | float = 1_000_000,
    seed: int = 0,
    weights: Sequence[float] | None = None,
    *,
    warmup: int | float = 1_000,
    record: int = 0,
    initial: Sequence[float] | None = None,
) -> FluidResult:
    """Simulates ``n`` AIMD connections on a link of capacity ``capacity``.

    Parameters
    ----------
    n:
        Number of connections.
    policy:
        ``"rate_independent"`` (one connection drawn with fixed probabilities, uniform unless
        ``weights`` are given), ``"rate_proportional"`` (connection ``i`` with probability
        ``x_i / c``), ``"largest_rate"``, ``"beatdown"`` (the largest connection is signalled
        at every congestion time until its rate reaches zero; an *event* is then one such
        phase), ``"all"`` (synchronised), or a callable ``policy(rates)`` returning the
        index or indices to signal.
    beta, eta:
        Multiplicative-decrease factor(s) in (0, 1) and additive-increase slope(s) > 0, one
        value for all connections or one per connection.
    events:
        Congestion times measured after the warm-up.
    seed:
        Seed of the random stream; the same seed gives the same run, bit for bit.
    weights:
        Selection weights of the rate-independent policy (Example 1 of the paper uses
        ``[s, s, 1 - s, 1 - s]``); probabilities are ``weights / sum(weights)``.
    warmup:
        Congestion times simulated and discarded first.
    record:
        Record the first ``record`` congestion times of the measured window as
        :class:`SamplePath` (off by default: recording is kept off the fast path).
    initial:
        Rates at time zero (default: equal shares ``c / n``), summing to at most ``c``.
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    n = int(n)
    beta_list = _per_flow("beta", beta, n)
    eta_list = _per_flow("eta", eta, n)
    weights_list = None if weights is None else _per_flow("weights", weights, n)
    initial_list = None if initial is None else _per_flow("initial", initial, n)
    events_count = _count("events", events)
    warmup_count = _count("warmup", warmup)
    record_count = _count("record", record)
    seed = _count("seed", seed)
    raw = _core.fluid_simulate(
        n,
        policy,
        beta_list,
        eta_list,
        float(capacity),
        events_count,
        warmup_count,
        seed,
        weights=weights_list,
        record=record_count,
        initial=initial_list,
    )
    path = None
    if record_count > 0:
        path = SamplePath(
            time=raw["path_time"],
            rates_before=raw["path_rates_before"],
            rates_after=raw["path_rates_after"],
            hits=raw["path_hits"],
            capacity=float(capacity),
        )
    if isinstance(policy, str):
        policy_name = policy.strip().lower().replace("-", "_")
    else:
        policy_name = getattr(policy, "__name__", type(policy).__name__)
    return FluidResult(
        n=n,
        policy=policy_name,
        beta=np.asarray(beta_list),
        eta=np.asarray(eta_list),
        capacity=float(capacity),
        seed=seed,
        warmup=warmup_count,
        events=int(raw["events"]),
        duration=float(raw["duration"]),
        mean_aggregate=float(raw["mean_aggregate"]),
        aggregate_second_moment=float(raw["aggregate_second_moment"]),
        per_flow_mean=raw["per_flow_mean"],
        per_flow_second_moment=raw["per_flow_second_moment"],
        hit_fraction=raw["hit_fraction"],
        palm_hit_mean=float(raw["palm_hit_mean"]),
        palm_hit_second_moment=float(raw["palm_hit_second_moment"]),
        path=path,
    )


__all__ = [
    "POLICIES",
    "FluidResult",
    "PolicyLike",
    "SamplePath",
    "simulate",
]
