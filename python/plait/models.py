"""Closed-form models of the papers plait reproduces, vectorised over numpy arrays.

The formulas are evaluated in Rust (``crates/plait-core/src/model/``); this module broadcasts the
arguments like numpy, checks the domain (a value outside it raises ``ValueError`` naming the
argument) and reshapes the result. Scalars in give a ``float`` out; any array in gives an array of
the broadcast shape.

Units, everywhere: times in seconds (``rtt``, ``t0``, ``t_rto``, queueing delays), windows and
``alpha`` in packets, loss rates as probabilities. **Every rate is ``s`` times packets per
second**: bytes/s when the segment size ``s`` is given in bytes, packets/s with ``s = 1`` (the
default of the functions whose papers count packets: ``pftk*``, ``mpfast_equilibrium``).
Utilisations are fractions of the link capacity.

Two conventions for the multiplicative decrease coexist in the papers, so the parameter names
carry them:

* ``beta_keep`` — the fraction of the rate *kept* at a congestion signal (rate -> beta_keep * rate),
  Altman et al.'s beta; Reno has beta_keep = 0.5.
* ``beta_decrease`` — the fraction *removed* (W -> (1 - beta_decrease) * W), the beta of the AIMD
  equivalence alpha (2 - beta) / beta = 3 N^2 and of MulTCP's 1/(2N); Reno has beta_decrease = 0.5.

``beta_keep = 1 - beta_decrease``; they coincide only at 0.5.

Sources: Padhye et al. SIGCOMM'98 (PFTK); RFC 5348 section 3.1 (TFRC); Damjanovic & Welzl CCR 2009
and draft-irtf-iccrg-multfrc (MulTFRC); Crowcroft & Oechslin CCR 1998 (MulTCP); Altman et al.
INFOCOM 2006 (parallel TCP); the MPFAST paper, section III. See ``docs/models.md``.
"""

from __future__ import annotations

import math
from typing import Callable, Union

import numpy as np
from numpy.typing import ArrayLike

from plait import _core

_core.prepare_numpy()  # see plait._core.prepare_numpy

__all__ = [
    "MULTFRC_FORMS",
    "DEFAULT_MULTFRC_FORM",
    "pftk",
    "pftk_approx",
    "pftk_simple",
    "tfrc_rate",
    "multfrc_rate",
    "multfrc_affected_flows",
    "aimd_mean_window",
    "aimd_rate",
    "aimd_equivalent_flows",
    "multcp_alpha",
    "multcp_beta_decrease",
    "multcp_original",
    "altman_utilization",
    "synchronized_utilization",
    "multcp_utilization",
    "largest_rate_fixed_point",
    "largest_rate_second_moment",
    "beatdown_stationary_point",
    "mpfast_equilibrium",
    "mpfast_windows",
]

#: The two transcriptions of the MulTFRC equation ``multfrc_rate`` can evaluate.
MULTFRC_FORMS = ("draft", "ns2")
#: The default: draft-irtf-iccrg-multfrc section 2.1.
DEFAULT_MULTFRC_FORM = "draft"

Result = Union[float, np.ndarray]


class _Bound:
    """An interval constraint on an argument, with the words used in the error message."""

    def __init__(self, low=None, low_open=True, high=None, high_open=True, allow_inf=False):
        self.low, self.low_open = low, low_open
        self.high, self.high_open = high, high_open
        self.allow_inf = allow_inf

    def holds(self, a: np.ndarray) -> np.ndarray:
        ok = ~np.isnan(a) if self.allow_inf else np.isfinite(a)
        if self.low is not None:
            ok &= (a > self.low) if self.low_open else (a >= self.low)
        if self.high is not None:
            ok &= (a < self.high) if self.high_open else (a <= self.high)
        return ok

    def describe(self) -> str:
        kind = "a number" if self.allow_inf else "a finite number"
        if self.low is not None and self.high is not None:
            left = "(" if self.low_open else "["
            right = ")" if self.high_open else "]"
            return f"{kind} in {left}{self.low:g}, {self.high:g}{right}"
        if self.low is not None:
            return f"{kind} {'>' if self.low_open else '>='} {self.low:g}"
        return kind


_POSITIVE = _Bound(low=0.0)
_PROBABILITY_OPEN = _Bound(low=0.0, high=1.0)
_PROBABILITY_HALF_OPEN = _Bound(low=0.0, high=1.0, high_open=False)
_FRACTION = _Bound(low=0.0, high=1.0)
_AT_LEAST_ONE = _Bound(low=1.0, low_open=False)
_WINDOW = _Bound(low=0.0, allow_inf=True)


def _check(name: str, value: np.ndarray, bound: _Bound) -> None:
    ok = bound.holds(value)
    if not np.all(ok):
        bad = float(value[~ok].flat[0] if value.ndim else value.item())
        raise ValueError(f"{name} must be {bound.describe()}, got {bad!r}")


def _columns(**named: tuple[ArrayLike, _Bound]) -> tuple[tuple[int, ...], bool, list[np.ndarray]]:
    """Convert, validate and broadcast the named arguments into flat float64 columns."""
    arrays = []
    for name, (value, bound) in named.items():
        try:
            a = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numeric, got {value!r}") from None
        _check(name, a, bound)
        arrays.append(a)
    scalar = all(a.ndim == 0 for a in arrays)
    try:
        broadcast = np.broadcast_arrays(*arrays)
    except ValueError:
        shapes = ", ".join(f"{n}{a.shape}" for n, a in zip(named, arrays))
        raise ValueError(f"arguments cannot be broadcast together: {shapes}") from None
    shape = broadcast[0].shape
    return shape, scalar, [np.ascontiguousarray(b.ravel()) for b in broadcast]


def _finish(values: np.ndarray, shape: tuple[int, ...], scalar: bool) -> Result:
    if scalar:
        return float(values[0])
    return values.reshape(shape)


def _evaluate(formula: Callable[..., np.ndarray], **named: tuple[ArrayLike, _Bound]) -> Result:
    """Validate and broadcast the named arguments (see :func:`_columns`), apply ``formula`` to
    their flat columns in the order given, and reshape the result like the arguments."""
    shape, scalar, cols = _columns(**named)
    return _finish(formula(*cols), shape, scalar)


def _form(form: str) -> str:
    if form not in MULTFRC_FORMS:
        raise ValueError(f"form must be one of {MULTFRC_FORMS}, got {form!r}")
    return form


def _count(name: str, n, minimum: int) -> int:
    try:
        whole = not isinstance(n, bool) and float(n).is_integer()
    except (TypeError, ValueError):
        whole = False
    if not whole or int(n) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {n!r}")
    return int(n)


# --- PFTK ------------------------------------------------------------------------------------


def _pftk(kernel: Callable[..., np.ndarray], p_bound: _Bound, rtt, p, t0, b, wmax, s) -> Result:
    """``s`` times ``kernel(rtt, p, t0, b, wmax)`` (packets/s), with ``p`` in ``p_bound``."""
    return _evaluate(
        lambda rtt_c, p_c, t0_c, b_c, wmax_c, s_c: kernel(rtt_c, p_c, t0_c, b_c, wmax_c) * s_c,
        rtt=(rtt, _POSITIVE),
        p=(p, p_bound),
        t0=(t0, _POSITIVE),
        b=(b, _POSITIVE),
        wmax=(math.inf if wmax is None else wmax, _WINDOW),
        s=(s, _POSITIVE),
    )


def pftk(
    rtt: ArrayLike,
    p: ArrayLike,
    t0: ArrayLike,
    b: ArrayLike = 1.0,
    wmax: ArrayLike | None = None,
    s: ArrayLike = 1.0,
) -> Result:
    """Full Padhye et al. model: triple-duplicate losses, timeouts, receiver window.

    Rate ``s * B`` with B in packets/s (bytes/s if ``s`` is the segment size in bytes)::

        E[W_u] = (2+b)/(3b) + sqrt(8(1-p)/(3bp) + ((2+b)/(3b))^2)
        B = [(1-p)/p + W + Q(W)/(1-p)] / [RTT (bW/2 + 1) + Q(W) T0 f(p)/(1-p)]     if E[W_u] < Wmax
        B = [(1-p)/p + Wmax + Q(Wmax)/(1-p)]
            / [RTT (b Wmax/8 + (1-p)/(p Wmax) + 2) + Q(Wmax) T0 f(p)/(1-p)]           otherwise

    with Q the timeout probability and f(p) = 1 + p + 2p^2 + ... + 32p^6.

    Args:
        rtt: round-trip time (s), > 0.
        p: loss event probability, in (0, 1).
        t0: base retransmission timeout (s), > 0.
        b: packets acknowledged per ACK, > 0.
        wmax: receiver window (packets), > 0; ``None`` for no limit.
        s: segment size (bytes), or 1 for packets/s.
    """
    return _pftk(_core.pftk_full_rate, _PROBABILITY_OPEN, rtt, p, t0, b, wmax, s)


def pftk_approx(
    rtt: ArrayLike,
    p: ArrayLike,
    t0: ArrayLike,
    b: ArrayLike = 1.0,
    wmax: ArrayLike | None = None,
    s: ArrayLike = 1.0,
) -> Result:
    """The PFTK approximation (what TFRC builds on), ``s`` times packets/s::

        B = min(Wmax/RTT, 1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32p^2)))

    Arguments as for :func:`pftk`, except that ``p`` may be 1.
    """
    return _pftk(_core.pftk_approximate_rate, _PROBABILITY_HALF_OPEN, rtt, p, t0, b, wmax, s)


def pftk_simple(rtt: ArrayLike, p: ArrayLike, b: ArrayLike = 1.0, s: ArrayLike = 1.0) -> Result:
    """The square-root law ``s / (RTT sqrt(2bp/3))`` (``s`` times packets/s).

    Args:
        rtt: round-trip time (s), > 0.
        p: loss event probability, in (0, 1].
        b: packets acknowledged per ACK, > 0.
        s: segment size (bytes), or 1 for packets/s.
    """
    return _evaluate(
        lambda rtt_c, p_c, b_c, s_c: _core.pftk_square_root_rate(rtt_c, p_c, b_c) * s_c,
        rtt=(rtt, _POSITIVE),
        p=(p, _PROBABILITY_HALF_OPEN),
        b=(b, _POSITIVE),
        s=(s, _POSITIVE),
    )


# --- TFRC ------------------------------------------------------------------------------------


def tfrc_rate(
    s: ArrayLike,
    rtt: ArrayLike,
    p: ArrayLike,
    t_rto: ArrayLike | None = None,
    b: ArrayLike = 1.0,
) -> Result:
    """The TCP throughput equation of RFC 5348 section 3.1, in bytes/s (``s`` in bytes)::

        X = s / (R sqrt(2bp/3) + t_RTO (3 sqrt(3bp/8)) p (1 + 32p^2))

    Args:
        s: segment size (bytes), > 0; 1 gives packets/s.
        rtt: round-trip time R (s), > 0.
        p: loss event rate, in (0, 1].
        t_rto: retransmission timeout (s), > 0; ``None`` for the RFC default 4 R.
        b: packets acknowledged per ACK, > 0 (the RFC recommends 1).
    """
    shape, scalar, cols = _columns(
        s=(s, _POSITIVE),
        rtt=(rtt, _POSITIVE),
        p=(p, _PROBABILITY_HALF_OPEN),
        t_rto=(1.0 if t_rto is None else t_rto, _POSITIVE),
        b=(b, _POSITIVE),
    )
    s_c, rtt_c, p_c, t_rto_c, b_c = cols
    if t_rto is None:
        # RFC 5348 section 3.1: t_RTO = 4 R.
        t_rto_c = 4.0 * rtt_c
    return _finish(_core.tfrc_rate(s_c, rtt_c, p_c, t_rto_c, b_c), shape, scalar)


# --- MulTFRC ---------------------------------------------------------------------------------


def multfrc_rate(
    n: ArrayLike,
    p: ArrayLike,
    j: ArrayLike,
    rtt: ArrayLike,
    s: ArrayLike,
    t_rto: ArrayLike | None = None,
    b: ArrayLike = 1.0,
    *,
    form: str = DEFAULT_MULTFRC_FORM,
    refine: bool = True,
) -> Result:
    """MulTFRC: the aggregate rate of ``n`` TCP flows (n real, > 0), in bytes/s (``s`` in bytes).

    ``form="draft"`` (default) evaluates draft-irtf-iccrg-multfrc section 2.1::

        af = n (1 - (1 - 1/n)^j) if 1 < n < 12 else j;  af = 1 if n <= 1
        af = max(min(af, ceil(n)), 1)
        x  = (af p b (2af - n) + sqrt(p b af (24 n^2 + p b af (n - 2af)^2))) / (6 n^2 p)
        z  = t_RTO (1 + 32p^2) / (1 - p)
        q  = min(2 j b z / (R (1 + 3n/j) x^2), n z / (x R), n)
        X  = ((1 - q/n) / (p x R) + q / (z (1 - p))) s

    ``form="ns2"`` evaluates the authors' ns-2 code instead: n == 1 is the single-flow PFTK
    approximation, the refinement applies for n < 13, z uses the full back-off series
    1 + p + 2p^2 + ... + 32p^6, and q = min((j n / w) z / (x R), n) with w = n x (1 + 3n/af)/(2b).

    Args:
        n: number of emulated flows, > 0 (need not be an integer).
        p: loss event rate of the aggregate, in (0, 1).
        j: mean number of packets lost per loss event, >= 1.
        rtt: round-trip time (s), > 0.
        s: segment size (bytes), > 0; 1 gives packets/s.
        t_rto: retransmission timeout (s), > 0; ``None`` for 4 rtt as in RFC 5348.
        b: packets acknowledged per ACK, > 0.
        form: ``"draft"`` or ``"ns2"``.
        refine: apply the refinement af = n (1 - (1 - 1/n)^j); ``False`` gives af = min(j, ceil n).
    """
    form = _form(form)
    shape, scalar, cols = _columns(
        n=(n, _POSITIVE),
        p=(p, _PROBABILITY_OPEN),
        j=(j, _AT_LEAST_ONE),
        rtt=(rtt, _POSITIVE),
        s=(s, _POSITIVE),
        t_rto=(1.0 if t_rto is None else t_rto, _POSITIVE),
        b=(b, _POSITIVE),
    )
    if t_rto is None:
        cols[5] = 4.0 * cols[3]  # t_RTO = 4 R, as in RFC 5348 section 3.1
    values = _core.multfrc_rate(tuple(cols), form, bool(refine))
    return _finish(values, shape, scalar)


def multfrc_affected_flows(
    n: ArrayLike, j: ArrayLike, *, form: str = DEFAULT_MULTFRC_FORM, refine: bool = True
) -> Result:
    """Emulated flows hit by a loss event of ``j`` packets: ``n (1 - (1 - 1/n)^j)`` in
    [1, ceil(n)] (1 for n <= 1; j itself above the form's refinement bound, 12 or 13)."""
    form = _form(form)
    return _evaluate(
        lambda n_c, j_c: _core.multfrc_affected_flows(n_c, j_c, form, bool(refine)),
        n=(n, _POSITIVE),
        j=(j, _AT_LEAST_ONE),
    )


# --- AIMD and MulTCP -------------------------------------------------------------------------


def aimd_mean_window(alpha: ArrayLike, beta_decrease: ArrayLike, p: ArrayLike) -> Result:
    """Mean window (packets) of AIMD(alpha, beta_decrease) under periodic losses at rate p::

    W = sqrt(alpha (2 - beta_decrease) / (2 beta_decrease p))
    """
    return _evaluate(
        _core.aimd_mean_window,
        alpha=(alpha, _POSITIVE),
        beta_decrease=(beta_decrease, _FRACTION),
        p=(p, _PROBABILITY_HALF_OPEN),
    )


def aimd_rate(
    alpha: ArrayLike,
    beta_decrease: ArrayLike | None = None,
    rtt: ArrayLike | None = None,
    p: ArrayLike | None = None,
    s: ArrayLike | None = None,
    *,
    beta: ArrayLike | None = None,
) -> Result:
    """Mean rate ``s W / rtt`` of AIMD(alpha, beta_decrease) (bytes/s for ``s`` in bytes).

    Args:
        alpha: additive increase per round-trip (packets), > 0.
        beta_decrease: fraction of the window removed at a loss event, in (0, 1)
            (W -> (1 - beta_decrease) W; TCP: 0.5, MulTCP: 1/(2N)); also accepted as
            ``beta=``, the name of the MulTCP literature (alpha (2 - beta) / beta = 3 N^2).
        rtt: round-trip time (s), > 0.
        p: loss event rate, in (0, 1].
        s: segment size (bytes), or 1 for packets/s.
    """
    beta_decrease = _beta("beta_decrease", beta_decrease, beta)
    if rtt is None or p is None or s is None:
        raise TypeError("aimd_rate needs alpha, beta_decrease (or beta), rtt, p and s")
    return _evaluate(
        _core.aimd_rate,
        alpha=(alpha, _POSITIVE),
        beta_decrease=(beta_decrease, _FRACTION),
        rtt=(rtt, _POSITIVE),
        p=(p, _PROBABILITY_HALF_OPEN),
        s=(s, _POSITIVE),
    )


def aimd_equivalent_flows(alpha: ArrayLike, beta_decrease: ArrayLike) -> Result:
    """The N that AIMD(alpha, beta_decrease) emulates: ``sqrt(alpha (2 - beta) / (3 beta))``."""
    return _evaluate(
        _core.aimd_equivalent_flows,
        alpha=(alpha, _POSITIVE),
        beta_decrease=(beta_decrease, _FRACTION),
    )


def multcp_alpha(n: ArrayLike, beta_decrease: ArrayLike = 0.5) -> Result:
    """Increase making AIMD(alpha, beta_decrease) worth n TCP flows:
    ``alpha = 3 n^2 beta / (2 - beta)`` (n^2 for beta_decrease = 0.5)."""
    return _evaluate(
        _core.aimd_equivalent_alpha, n=(n, _POSITIVE), beta_decrease=(beta_decrease, _FRACTION)
    )


def multcp_beta_decrease(n: ArrayLike, alpha: ArrayLike) -> Result:
    """Decrease fraction making AIMD(alpha, beta) worth n TCP flows:
    ``beta_decrease = 2 alpha / (3 n^2 + alpha)`` (2/(3n + 1) for alpha = n)."""
    return _evaluate(
        _core.aimd_equivalent_beta_decrease, n=(n, _POSITIVE), alpha=(alpha, _POSITIVE)
    )


def multcp_original(n: ArrayLike) -> tuple[Result, Result]:
    """The original MulTCP parameters ``(alpha, beta_decrease) = (n, 1/(2n))``.

    They give ``aimd_equivalent_flows(n, 1/(2n)) / n = sqrt((2 - 1/(2n)) / 1.5)``: up to 15.5 %
    more than n flows (1.080 at n = 2, 1.140 at n = 10).
    """
    shape, scalar, (n_c,) = _columns(n=(n, _POSITIVE))
    return _finish(n_c.copy(), shape, scalar), _finish(0.5 / n_c, shape, scalar)


# --- Altman et al. ---------------------------------------------------------------------------


def _beta(primary: str, value: ArrayLike | None, alias: ArrayLike | None, default=None):
    """`value` given as `primary=` or under the short name `beta=` (the name the papers and the
    issue tracker use), not both."""
    if value is not None and alias is not None:
        raise TypeError(f"give either {primary}= or beta=, not both")
    if value is None:
        value = alias
    if value is None:
        if default is None:
            raise TypeError(f"missing argument: {primary} (or beta)")
        value = default
    return value


def _altman(formula: Callable[..., np.ndarray], n: ArrayLike, beta_keep: ArrayLike) -> Result:
    """``formula(n, beta_keep)`` for n >= 1 connections keeping ``beta_keep`` in (0, 1)."""
    return _evaluate(formula, n=(n, _AT_LEAST_ONE), beta_keep=(beta_keep, _FRACTION))


def altman_utilization(
    n: ArrayLike, beta_keep: ArrayLike | None = None, *, beta: ArrayLike | None = None
) -> Result:
    """Theorem 1 of Altman et al.: mean utilisation of N AIMD connections when one connection
    is signalled per congestion event (any stationary loss policy)::

        E[S]/c = 1 - 1 / (1 + N (1 + beta_keep) / (1 - beta_keep))    (beta_keep = 0.5: 3N/(3N+1))

    Args:
        n: number of connections, >= 1.
        beta_keep: fraction of its rate a signalled connection keeps, in (0, 1), default 0.5;
            also accepted as ``beta=``, the paper's name.
    """
    return _altman(_core.altman_utilization, n, _beta("beta_keep", beta_keep, beta, 0.5))


def synchronized_utilization(
    beta_keep: ArrayLike | None = None, *, beta: ArrayLike | None = None
) -> Result:
    """Policy ALL (every connection signalled at every event): ``(1 + beta_keep) / 2``
    (``beta_keep`` default 0.5, also accepted as ``beta=``)."""
    beta_keep = _beta("beta_keep", beta_keep, beta, 0.5)
    return _evaluate(_core.altman_synchronized_utilization, beta_keep=(beta_keep, _FRACTION))


def multcp_utilization(n: ArrayLike, beta_keep: ArrayLike = 0.5) -> Result:
    """MulTCP emulating n flows in the Altman et al. model: ``1 - (1 - beta_keep) / (2n)``,
    i.e. ``1 - 1/(4n)`` for TCP (a single AIMD connection keeping 1 - (1 - beta_keep)/n)."""
    return _altman(_core.altman_multcp_utilization, n, beta_keep)


def largest_rate_fixed_point(n: int, beta_keep: float = 0.5, c: float = 1.0) -> np.ndarray:
    """Proposition 1: rates just before a congestion event at the largest-rate fixed point,
    sorted decreasing: ``x_1 = 2c / ((1 + beta) n + (1 - beta))``,
    ``x_i = x_1 (1 - (1 - beta)(i - 1)/n)``. Same unit as ``c``."""
    n = _count("n", n, 1)
    _, _, (beta_c, c_c) = _columns(beta_keep=(beta_keep, _FRACTION), c=(c, _POSITIVE))
    return _core.altman_largest_rate_fixed_point(n, float(beta_c[0]), float(c_c[0]))


def largest_rate_second_moment(n: ArrayLike, beta_keep: ArrayLike = 0.5) -> Result:
    """Time-stationary ``E[X_i^2]/c^2`` of one connection under the largest-rate policy:
    ``x_1^2 (1 + beta + beta^2) / 3`` with x_1 of Proposition 1 (n = 2, beta = 0.5: 4/21)."""
    return _altman(_core.altman_largest_rate_second_moment, n, beta_keep)


def beatdown_stationary_point(n: int, c: float = 1.0) -> np.ndarray:
    """Section IV-B: rates at tagging times under the beatdown policy, sorted decreasing,
    ``y_k = 2c (n - k) / (n (n - 1))`` for k = 1..n (n >= 2). Same unit as ``c``."""
    n = _count("n", n, 2)
    _, _, (c_c,) = _columns(c=(c, _POSITIVE))
    return _core.altman_beatdown_stationary_point(n, float(c_c[0]))


# --- MPFAST ----------------------------------------------------------------------------------


def _paths(queueing_delay: ArrayLike, weights: ArrayLike | None) -> tuple[np.ndarray, ...]:
    q = np.ascontiguousarray(np.atleast_1d(np.asarray(queueing_delay, dtype=np.float64)))
    if q.ndim != 1 or q.size == 0:
        raise ValueError("queueing_delay must be a non-empty 1-D sequence (one value per path)")
    _check("queueing_delay", q, _POSITIVE)
    if weights is None:
        theta = np.full(q.size, 1.0 / q.size)
    else:
        theta = np.ascontiguousarray(np.atleast_1d(np.asarray(weights, dtype=np.float64)))
        if theta.shape != q.shape:
            raise ValueError(f"weights must have one value per path ({q.size}), got {theta.shape}")
        _check("weights", theta, _Bound(low=0.0, low_open=False, high=1.0, high_open=False))
        if not math.isclose(float(theta.sum()), 1.0, rel_tol=0.0, abs_tol=1e-9):
            raise ValueError(f"weights must sum to 1, got {theta.sum()!r}")
    return q, theta


def mpfast_equilibrium(
    alpha: float,
    queueing_delay: ArrayLike,
    weights: ArrayLike | None = None,
    s: float = 1.0,
) -> np.ndarray:
    """MPFAST per-path equilibrium rates (eq. 6 of the MPFAST paper): ``x_r = theta_r alpha / q_r``.

    Their sum is ``alpha / q`` when every path has the same queueing delay q (eq. 8): the rate of
    one FAST TCP flow with the same alpha.

    Args:
        alpha: the source's target backlog alpha_s (packets), > 0.
        queueing_delay: equilibrium queueing delay q_r of each path (s), > 0.
        weights: theta_r in [0, 1], summing to 1; ``None`` for equal shares.
        s: segment size (bytes), or 1 for packets/s.
    Returns:
        One rate per path, ``s`` times packets/s.
    """
    _check("alpha", np.asarray(alpha, dtype=np.float64), _POSITIVE)
    _check("s", np.asarray(s, dtype=np.float64), _POSITIVE)
    q, theta = _paths(queueing_delay, weights)
    return _core.mpfast_equilibrium_rates(float(alpha), q, theta) * float(s)


def mpfast_windows(
    alpha: float,
    base_rtt: ArrayLike,
    queueing_delay: ArrayLike,
    weights: ArrayLike | None = None,
) -> np.ndarray:
    """MPFAST per-path equilibrium windows (packets), the fixed point of the window update
    (eq. 5): ``w_r = x_r (d_r + q_r)`` with ``x_r = theta_r alpha / q_r``.

    Args:
        alpha: target backlog (packets), > 0.
        base_rtt: propagation round-trip time d_r of each path (s), > 0.
        queueing_delay: queueing delay q_r of each path (s), > 0.
        weights: theta_r, as for :func:`mpfast_equilibrium`.
    """
    _check("alpha", np.asarray(alpha, dtype=np.float64), _POSITIVE)
    q, theta = _paths(queueing_delay, weights)
    d = np.ascontiguousarray(np.atleast_1d(np.asarray(base_rtt, dtype=np.float64)))
    if d.shape != q.shape:
        raise ValueError(f"base_rtt must have one value per path ({q.size}), got {d.shape}")
    _check("base_rtt", d, _POSITIVE)
    return _core.mpfast_equilibrium_windows(float(alpha), d, q, theta)
