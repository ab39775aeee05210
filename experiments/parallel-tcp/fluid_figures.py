"""Figures of Altman et al., "Parallel TCP sockets" (INFOCOM 2006), from the exact fluid simulator.

Writes, next to this script:

* ``fluid_utilization.png`` — utilisation E[S]/c against the number of connections N:
  Theorem 1 (eq. (5)) and the synchronised policy ALL (eq. (6)) beside fluid simulations of the
  rate-independent, rate-proportional, largest-rate, beatdown and ALL policies (the paper's
  Fig. 2 and, for the policies, Fig. 11); the lower panel shows simulation minus theory.
* ``example1_bias.png`` — Example 1 (Figs. 3 and 4): four connections, connection 1 or 2 is
  signalled with probability sigma/2 each, 3 or 4 with (1 - sigma)/2. The aggregate stays at
  Theorem 1's 12/13 while the two classes trade throughput; below, sample paths for
  sigma = 1/2 and sigma = 1/8.

Run from the repository root after ``maturin develop --release``:

    .venv/bin/python experiments/parallel-tcp/fluid_figures.py [--events 1e6]

Seeds are fixed, so the numbers (printed as the figures are made) are reproducible.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from plait import fluid, models  # noqa: E402

HERE = Path(__file__).resolve().parent
BETA = 0.5
POLICY_STYLE = {
    "rate_independent": dict(marker="o", color="tab:blue", label="rate-independent"),
    "rate_proportional": dict(marker="s", color="tab:orange", label="rate-proportional"),
    "largest_rate": dict(marker="^", color="tab:green", label="largest-rate"),
    "beatdown": dict(marker="D", color="tab:purple", label="beatdown"),
    "all": dict(marker="x", color="tab:red", label="ALL (synchronised)"),
}


def utilisation_figure(events: int, n_max: int, path: Path) -> None:
    ns = np.arange(1, n_max + 1)
    theory_one = np.asarray(models.altman_utilization(ns, BETA), dtype=float)
    theory_all = float(models.synchronized_utilization(BETA))
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(7.5, 6.5), sharex=True, gridspec_kw=dict(height_ratios=[3, 1.3])
    )
    top.plot(ns, theory_one, "k-", lw=1.2, label="Theorem 1, eq. (5)")
    top.plot(ns, np.full(len(ns), theory_all), "k--", lw=1.0, label="ALL, eq. (6)")
    offsets = np.linspace(-0.24, 0.24, len(POLICY_STYLE))
    print(f"utilisation E[S]/c, beta = {BETA}, {events:.0e} events per point")
    print(f"{'N':>3} {'Theorem 1':>10} " + " ".join(f"{p:>17}" for p in POLICY_STYLE))
    rows = {policy: [] for policy in POLICY_STYLE}
    for policy in POLICY_STYLE:
        for n in ns:
            r = fluid.simulate(int(n), policy, beta=BETA, events=events, seed=int(n))
            rows[policy].append(r.mean_aggregate)
    for k, n in enumerate(ns):
        cells = " ".join(f"{rows[p][k]:>17.7f}" for p in POLICY_STYLE)
        print(f"{n:>3} {theory_one[k]:>10.7f} {cells}")
    for offset, (policy, style) in zip(offsets, POLICY_STYLE.items()):
        simulated = np.array(rows[policy])
        top.plot(ns + offset, simulated, ls="none", mfc="none", ms=6, **style)
        reference = theory_all if policy == "all" else theory_one
        style = {k: v for k, v in style.items() if k != "label"}
        bottom.plot(ns + offset, (simulated - reference) * 1e6, ls="none", mfc="none", **style)
    top.set_ylabel("utilisation  E[S] / c")
    top.set_ylim(0.7, 1.0)
    top.grid(alpha=0.3)
    top.legend(loc="center right", fontsize="small", ncol=2)
    top.set_title(
        f"N AIMD connections, beta = {BETA}: exact fluid simulation ({events:.0e} events/point)"
    )
    bottom.axhline(0.0, color="k", lw=0.8)
    bottom.set_ylabel("simulated − theory\n(× 1e-6)")
    bottom.set_xlabel("number of connections N")
    bottom.set_xticks(ns)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    print(f"-> {path}")


def example1_figure(events: int, path: Path) -> None:
    sigmas = np.round(np.arange(0.05, 0.951, 0.05), 2)
    theory = float(models.altman_utilization(4, BETA))
    aggregate, class1, class2 = [], [], []
    for k, sigma in enumerate(sigmas):
        weights = [sigma, sigma, 1 - sigma, 1 - sigma]
        r = fluid.simulate(4, "rate_independent", weights=weights, events=events, seed=100 + k)
        aggregate.append(r.mean_aggregate)
        class1.append(r.per_flow_mean[:2].mean())
        class2.append(r.per_flow_mean[2:].mean())
    print(f"Example 1 (N = 4): Theorem 1 gives E[S]/c = {theory:.7f}")
    print(f"{'sigma':>6} {'E[S]/c':>10} {'conn 1,2':>10} {'conn 3,4':>10}")
    for row in zip(sigmas, aggregate, class1, class2):
        print("{:>6.2f} {:>10.7f} {:>10.5f} {:>10.5f}".format(*row))

    fig = plt.figure(figsize=(10, 7.5))
    grid = fig.add_gridspec(2, 2, height_ratios=[1.15, 1])
    ax = fig.add_subplot(grid[0, :])
    ax.axhline(theory, color="k", lw=1.0, label="Theorem 1: 12/13")
    ax.plot(sigmas, aggregate, "ko", mfc="none", label="aggregate (simulated)")
    ax.plot(sigmas, class1, "o-", color="tab:blue", label="connection 1 or 2 (each)")
    ax.plot(sigmas, class2, "s-", color="tab:orange", label="connection 3 or 4 (each)")
    ax.set_xlabel("bias sigma  (P[signal goes to connection 1 or 2] = sigma)")
    ax.set_ylabel("time-average rate / c")
    ax.set_title(
        "Example 1: the aggregate is insensitive to the bias while the classes trade throughput"
    )
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(loc="center right", fontsize="small")
    for column, sigma in enumerate((0.5, 0.125)):
        weights = [sigma, sigma, 1 - sigma, 1 - sigma]
        r = fluid.simulate(
            4, "rate_independent", weights=weights, events=60, warmup=2_000, seed=7, record=60
        )
        axis = fig.add_subplot(grid[1, column])
        r.path.plot(ax=axis)
        axis.set_ylim(0, 1.05)
        axis.set_title(f"sample path, sigma = {sigma:g}", fontsize="medium")
        if column == 0:
            axis.legend(loc="center right", fontsize="x-small")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    print(f"-> {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=float, default=1e6, help="events per simulated point")
    parser.add_argument("--n-max", type=int, default=20, help="largest N in the first figure")
    parser.add_argument("--out", type=Path, default=HERE, help="output directory")
    args = parser.parse_args()
    events = int(args.events)
    utilisation_figure(events, args.n_max, args.out / "fluid_utilization.png")
    example1_figure(events, args.out / "example1_bias.png")


if __name__ == "__main__":
    main()
