"""`plait fluid`: the AIMD fluid model of parallel connections, simulated exactly.

Prints the time-average moments of each connection and of the aggregate, compares the
aggregate with Theorem 1 of Altman et al. (or eq. (6) for the policy ALL), and, for two
identical connections with beta = 1/2, the per-connection second moment with Theorem 2.
With --plot it draws the first congestion times of the sample path (see docs/fluid.md).

Example: plait fluid --n 4 --policy rate_proportional --events 1e6 --plot paths.png
"""

from __future__ import annotations

import argparse
import sys
import time

# Theorem 2 of the paper (N = 2, beta = 1/2): time-stationary E[X_1^2]/c^2 per policy.
_THEOREM2 = {
    "beatdown": 1 / 3,
    "rate_independent": 5 / 24,
    "rate_proportional": 679 / 3396,
    "largest_rate": 4 / 21,
}


def _numbers(text: str) -> list[float]:
    try:
        values = [float(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers, got {text!r}"
        ) from None
    if not values:
        raise argparse.ArgumentTypeError(f"no numbers in {text!r}")
    return values


def _whole(text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value.is_integer() or value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole non-negative number, got {text!r}")
    return int(value)


def _one_or_n(values: list[float], n: int, name: str) -> float | list[float]:
    if len(values) == 1:
        return values[0]
    if len(values) != n:
        raise ValueError(f"--{name} needs one value or {n} values, got {len(values)}")
    return values


def _theory_lines(result, beta: list[float], eta: list[float]) -> list[str]:
    """Reference values from the paper when its hypotheses hold (identical connections)."""
    if len(set(beta)) != 1 or len(set(eta)) != 1:
        return ["(connections differ: Theorems 1 and 2 assume identical connections)"]
    from plait import models

    b = beta[0]
    lines = []
    if result.policy == "all":
        expected = float(models.synchronized_utilization(b))
        lines.append(f"{'eq. (6), policy ALL:':<21} E[S]/c = {expected:.6f}")
    elif result.policy in _THEOREM2:
        expected = float(models.altman_utilization(result.n, b))
        # Beatdown violates Theorem 1's hypotheses (congestion times accumulate); Theorem 3
        # extends the same formula to it.
        label = "Theorem 3, eq. (5):" if result.policy == "beatdown" else "Theorem 1, eq. (5):"
        lines.append(f"{label:<21} E[S]/c = {expected:.6f}")
    else:
        return lines
    lines[-1] += f"   (simulated - theory = {result.mean_aggregate - expected:+.2e})"
    if result.n == 2 and b == 0.5 and result.policy in _THEOREM2:
        paper = _THEOREM2[result.policy]
        lines.append(
            f"{'Theorem 2 (paper):':<21} E[X^2]/c^2 = {paper:.6f}   "
            f"(simulated mean over flows = {result.per_flow_second_moment.mean():.6f})"
        )
    return lines


def main(args: argparse.Namespace) -> int:
    from plait import fluid

    try:
        beta = _one_or_n(args.beta, args.n, "beta")
        eta = _one_or_n(args.eta, args.n, "eta")
        record = args.record if args.record is not None else (60 if args.plot else 0)
        started = time.perf_counter()
        result = fluid.simulate(
            args.n,
            args.policy,
            beta=beta,
            eta=eta,
            capacity=args.capacity,
            events=args.events,
            seed=args.seed,
            weights=args.weights,
            warmup=args.warmup,
            record=record,
        )
        wall = time.perf_counter() - started
    except ValueError as e:
        print(f"plait fluid: error: {e}", file=sys.stderr)
        return 2
    print(result.summary())
    for line in _theory_lines(result, list(result.beta), list(result.eta)):
        print(line)
    unit = "beatdown phases" if result.policy == "beatdown" else "congestion events"
    simulated = result.events + result.warmup
    print(f"{simulated} {unit} in {wall:.3f} s wall ({simulated / max(wall, 1e-9):.3g} per s)")
    if args.plot:
        _plot(result, args.plot)
        print(f"sample path of the first {len(result.path)} congestion times -> {args.plot}")
    return 0


def _plot(result, filename: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9.5, 4.5))
    result.path.plot(ax=ax)
    ax.set_title(
        f"AIMD fluid model, N = {result.n}, policy {result.policy}: "
        f"E[S]/c = {result.mean_aggregate:.4f}"
    )
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    fig.tight_layout()
    fig.savefig(filename, dpi=120)
    plt.close(fig)


def register(sub: argparse._SubParsersAction) -> None:
    from plait.fluid import POLICIES

    parser = sub.add_parser(
        "fluid",
        help="simulate the AIMD fluid model (Altman et al.) exactly",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(func=main)
    parser.add_argument("--n", type=int, default=2, help="number of connections")
    parser.add_argument(
        "--policy",
        default="rate_independent",
        choices=POLICIES,
        help="loss policy: who is signalled at a congestion time",
    )
    parser.add_argument(
        "--beta", type=_numbers, default=[0.5], help="decrease factor(s): one, or one per flow"
    )
    parser.add_argument(
        "--eta", type=_numbers, default=[1.0], help="increase slope(s): one, or one per flow"
    )
    parser.add_argument("--capacity", type=float, default=1.0, help="link capacity")
    parser.add_argument("--events", type=_whole, default=1_000_000, help="measured events")
    parser.add_argument("--warmup", type=_whole, default=1_000, help="discarded events")
    parser.add_argument("--seed", type=_whole, default=0, help="random seed")
    parser.add_argument(
        "--weights",
        type=_numbers,
        default=None,
        help="rate_independent selection weights, one per flow (Example 1: s,s,1-s,1-s)",
    )
    parser.add_argument("--plot", metavar="FILE.png", help="draw the sample path to this file")
    parser.add_argument(
        "--record", type=_whole, default=None, help="congestion times drawn (default 60)"
    )
