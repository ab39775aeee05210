"""`plait fluid`: the AIMD fluid model of parallel connections, simulated exactly.

Prints the time-average moments of each connection and of the aggregate, compares the
aggregate with Theorem 1 of Altman et al. (or eq. (6) for the policy ALL), and, for two
identical connections with beta = 1/2, the per-connection second moment with Theorem 2.
With --plot it draws the first congestion times of the sample path (see docs/fluid.md).

Example: plait fluid --n 4 --policy rate_proportional --events 1e6 --plot paths.png
"""

from __future__ import annotations

import argparse
import time

from plait.cli.options import bounded_int, finite_float
from plait.cli.text import safe

#: Largest number of connections, and of measured events (about ten minutes of one core).
MAX_N = 100_000
MAX_EVENTS = 10**10
MAX_RECORD = 10**6
#: Most rates a recorded sample path may hold (one per connection per congestion time).
MAX_RECORDED_RATES = 10**7

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
    from plait import _interrupt, fluid
    from plait.output import Outputs

    outputs = Outputs()
    plot_target = outputs.file("--plot", args.plot)
    beta = _one_or_n(args.beta, args.n, "beta")
    eta = _one_or_n(args.eta, args.n, "eta")
    record = args.record if args.record is not None else (60 if args.plot else 0)
    if args.plot and record == 0:
        raise ValueError("--plot needs --record of at least 1 (the congestion times drawn)")
    if record * args.n > MAX_RECORDED_RATES:
        raise ValueError(
            f"--record {record} x --n {args.n} rates to record: at most {MAX_RECORDED_RATES}"
        )
    started = time.perf_counter()
    result = _interrupt.call(
        lambda: fluid.simulate(
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
    )
    wall = time.perf_counter() - started
    print(result.summary())
    for line in _theory_lines(result, list(result.beta), list(result.eta)):
        print(line)
    unit = "beatdown phases" if result.policy == "beatdown" else "congestion events"
    simulated = result.events + result.warmup
    print(f"{simulated} {unit} in {wall:.3f} s wall ({simulated / max(wall, 1e-9):.3g} per s)")
    if plot_target is not None:
        with outputs.writing() as tx:
            tx.write_with(plot_target, lambda path: _plot(result, path))
        print(f"sample path of the first {len(result.path)} congestion times -> {safe(args.plot)}")
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
    fig.savefig(filename, dpi=120, format="png")
    plt.close(fig)


def register(sub: argparse._SubParsersAction) -> None:
    # The names plait.fluid.POLICIES lists, without importing it (and numpy) for every command.
    from plait._core import FLUID_POLICIES

    policies = tuple(FLUID_POLICIES)

    parser = sub.add_parser(
        "fluid",
        help="simulate the AIMD fluid model (Altman et al.) exactly",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(func=main)
    parser.add_argument(
        "--n",
        type=bounded_int(1, MAX_N, allow_float_syntax=True),
        default=2,
        help="number of connections",
    )
    parser.add_argument(
        "--policy",
        default="rate_independent",
        choices=policies,
        help="loss policy: who is signalled at a congestion time",
    )
    parser.add_argument(
        "--beta", type=_numbers, default=[0.5], help="decrease factor(s): one, or one per flow"
    )
    parser.add_argument(
        "--eta", type=_numbers, default=[1.0], help="increase slope(s): one, or one per flow"
    )
    parser.add_argument("--capacity", type=finite_float, default=1.0, help="link capacity")
    parser.add_argument(
        "--events",
        type=bounded_int(1, MAX_EVENTS, allow_float_syntax=True),
        default=1_000_000,
        help="measured events",
    )
    parser.add_argument(
        "--warmup",
        type=bounded_int(0, MAX_EVENTS, allow_float_syntax=True),
        default=1_000,
        help="discarded events",
    )
    parser.add_argument("--seed", type=bounded_int(0, 2**64 - 1), default=0, help="random seed")
    parser.add_argument(
        "--weights",
        type=_numbers,
        default=None,
        help="rate_independent selection weights, one per flow (Example 1: s,s,1-s,1-s)",
    )
    parser.add_argument("--plot", metavar="FILE.png", help="draw the sample path to this file")
    parser.add_argument(
        "--record",
        type=bounded_int(0, MAX_RECORD, allow_float_syntax=True),
        default=None,
        help="congestion times drawn (default: 60 with --plot, else 0)",
    )
