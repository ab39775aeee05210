"""Parallel TCP sockets (Altman et al.): bottleneck utilisation against the number N of AIMD
connections, for the threshold-dropper, RED and DropTail, beside Theorem 1's
1 - 1/(1 + 3N) (beta = 1/2).

The paper (section V) finds good agreement with the threshold-dropper, which enforces one
congestion signal per congestion event (assumption ONE), and a shortfall with small DropTail
buffers, where the connections' windows synchronise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from plait.output import FolderTarget, Outputs
from plait.sweeps import ProgressSink, Summary

#: The experiment's scenario folder in the source tree (read only: results go elsewhere).
EXPERIMENT_DIR = Path(__file__).resolve().parents[3] / "experiments" / "parallel-tcp"


@dataclass(frozen=True)
class Queue:
    """A bottleneck queue configuration of the sweep."""

    label: str
    short: str
    toml: str


#: The threshold-dropper's hold tau in mean propagation round trips (section V.D: "a factor of
#: the mean round-trip time", the factor not given). A signalled connection learns of its loss
#: from the duplicate ACKs one round trip after the drop and cuts its sending over the round
#: trip after that; with tau = 1 RTT the dropper re-arms before the cut reaches the queue and
#: signals a second connection for the same congestion (README, "Threshold-dropper").
TD_HOLD_RTTS = 2


def queues() -> list[Queue]:
    """(a) threshold-dropper (both of the paper's policies; T_h = 3 as the paper's Fig. 12,
    tau = TD_HOLD_RTTS mean RTTs, re-armed when tau is over), (b) RED as in section V.A
    (min_th, max_th = 0.6, 0.8 of the buffer, max_p = 0.1, w_q = 0.001, wait on),
    (c) DropTail with 5, 10, 20 and 40 packets."""
    out = [
        Queue(
            "threshold-dropper, rate-independent",
            "TD-RI",
            '{kind="threshold_dropper", threshold=3, policy="rate_independent", '
            f"hold_rtts={TD_HOLD_RTTS}}}",
        ),
        Queue(
            "threshold-dropper, largest-rate",
            "TD-LR",
            '{kind="threshold_dropper", threshold=3, policy="largest_rate", '
            f"hold_rtts={TD_HOLD_RTTS}}}",
        ),
    ]
    for b in (20, 40):
        out.append(
            Queue(
                f"RED, buffer {b}",
                f"RED-{b}",
                f'{{kind="red", packets={b}, min_th={0.6 * b:g}, max_th={0.8 * b:g}, '
                f"max_p=0.1, w_q=0.001, wait=true, gentle=false}}",
            )
        )
    for b in (5, 10, 20, 40):
        out.append(Queue(f"DropTail, buffer {b}", f"DT-{b}", f'{{kind="droptail", packets={b}}}'))
    return out


def theorem1(n: int, beta: float = 0.5) -> float:
    """Altman et al. Theorem 1: mean aggregate rate / c = 1 - 1/(1 + N (1+beta)/(1-beta))."""
    return 1.0 - 1.0 / (1.0 + n * (1.0 + beta) / (1.0 - beta))


def grid(ns: list[int], duration: float, warmup: float) -> dict[str, list]:
    """The sweep's grid: every queue, every N, and the run length (one value each)."""
    return {
        "link.bottleneck.queue": [q.toml for q in queues()],
        "flow.tcp.count": list(ns),
        "simulation.duration": [f"{duration:g}s"],
        "simulation.warmup": [f"{warmup:g}s"],
    }


#: The result tables each run stores.
TABLES = ("links", "flows")


def sweep(
    ns: list[int],
    duration: float = 2000.0,
    warmup: float = 1000.0,
    seeds: list[int] | int = 1,
    out: Path | None = None,
    fresh: bool = False,
    progress: ProgressSink | None = None,
    **where,
) -> pd.DataFrame:
    """Runs every (queue, N, seed) as a sweep (:func:`plait.sweep`) and returns one row per
    run: queue, N, bottleneck utilisation, Theorem 1, drops, timeouts, fast retransmits,
    Jain's index of the flows' goodputs and the seed. `seeds` is a list, or a count n for
    seeds 1..n.

    With `out`, runs are stored there (see :mod:`plait.sweeps.store`) and runs already stored
    are not run again: an interrupted sweep resumes where it stopped. `where` goes to
    :func:`plait.sweep` (``workers``, ``scheduler``, ``jobqueue``, ``client``, ``batch``).
    """
    return sweep_with_summary(ns, duration, warmup, seeds, out, fresh, progress, **where)[0]


def sweep_with_summary(
    ns: list[int],
    duration: float,
    warmup: float,
    seeds: list[int] | int,
    out: Path | None,
    fresh: bool = False,
    progress: ProgressSink | None = None,
    scenario: Path | None = None,
    **where,
) -> tuple[pd.DataFrame, Summary]:
    """As :func:`sweep`, with the sweep's :class:`plait.sweeps.Summary`; `scenario`: the
    scenario file (experiments/parallel-tcp/scenario.toml by default)."""
    from plait.experiments import sweep_all

    result = sweep_all(
        "parallel-tcp",
        scenario or EXPERIMENT_DIR / "scenario.toml",
        grid(ns, duration, warmup),
        seeds=seeds,
        tables=TABLES,
        out=out,
        fresh=fresh,
        progress=progress,
        **where,
    )
    return rows(result.table("links"), result.table("flows")), result.summary


def rows(links: pd.DataFrame, flows: pd.DataFrame) -> pd.DataFrame:
    """One row per run from the stored tables of a sweep (see :func:`sweep`)."""
    label = {q.toml: q.label for q in queues()}
    order = {q.label: i for i, q in enumerate(queues())}
    bottleneck = links[(links["name"] == "bottleneck") & (links["direction"] == "forward")]
    per_run = flows.groupby("run", sort=False).agg(
        timeouts=("timeouts", "sum"),
        fast_retransmits=("fast_retransmits", "sum"),
        jain=("goodput_bps", _jain),
    )
    out = pd.DataFrame(
        {
            "queue": bottleneck["link.bottleneck.queue"].map(label),
            "n": bottleneck["flow.tcp.count"].astype("int64"),
            "utilization": bottleneck["utilization"].astype(float),
            "drops": bottleneck["drops"].astype("int64"),
            "run": bottleneck["run"],
            "seed": bottleneck["seed"].astype("int64"),
        }
    )
    out["theorem1"] = [theorem1(n) for n in out.n]
    out = out.join(per_run, on="run")
    out["order"] = out.queue.map(order)
    out = out.sort_values(["order", "n", "seed"]).reset_index(drop=True)
    columns = ["queue", "n", "utilization", "theorem1", "drops", "timeouts"]
    columns += ["fast_retransmits", "jain", "seed"]
    return out[columns]


def _jain(x: pd.Series) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2); 1 for a single flow."""
    total = float((x * x).sum())
    return float(x.sum()) ** 2 / (len(x) * total) if total > 0 else math.nan


def table(rows: pd.DataFrame) -> pd.DataFrame:
    """Utilisation as a table: one row per N, one column per queue (the mean over seeds),
    plus Theorem 1."""
    wide = rows.pivot_table(index="n", columns="queue", values="utilization", aggfunc="mean")
    wide = wide[[q.label for q in queues() if q.label in wide.columns]]
    wide.insert(0, "theorem 1", [theorem1(n) for n in wide.index])
    return wide


def markdown(wide: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of the wide utilisation table."""
    header = ["N", *wide.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for n, row in wide.iterrows():
        cells = ["-" if math.isnan(v) else f"{v:.3f}" for v in row]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def utilization_figure(rows: pd.DataFrame):
    """Utilisation against N per queue (mean over seeds; bars from the lowest to the highest
    seed when there are several) beside Theorem 1: a matplotlib Figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from plait.experiments import error_bars

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    ns = sorted(rows.n.unique())
    fine = [1 + i * (max(ns) - 1) / 200 for i in range(201)]
    ax.plot(fine, [theorem1(x) for x in fine], "k-", lw=2, label="Theorem 1: 1 - 1/(1+3N)")
    markers = "os^vD<>ph*"
    for i, q in enumerate(queues()):
        sub = rows[rows.queue == q.label].groupby("n").utilization.agg(["mean", "min", "max"])
        if len(sub):
            ax.errorbar(
                sub.index,
                sub["mean"],
                yerr=error_bars(sub["mean"], sub["min"], sub["max"]),
                marker=markers[i % len(markers)],
                ls="--",
                capsize=2,
                label=q.label,
            )
    ax.set_xlabel("number of connections N")
    ax.set_ylabel("bottleneck utilisation")
    ax.set_ylim(0.6, 1.02)
    ax.set_xticks(ns)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("Parallel AIMD(1, 1/2) TCP over a 10 Mb/s, 120 ms bottleneck")
    fig.tight_layout()
    return fig


def plot(rows: pd.DataFrame, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig = utilization_figure(rows)
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)


#: The files :func:`write_outputs` writes, by kind.
OUTPUT_FILES = {"csv": "utilization.csv", "markdown": "utilization.md", "png": "utilization.png"}


def write_outputs(rows: pd.DataFrame, out_dir: Path | FolderTarget) -> dict[str, Path]:
    """Writes utilization.csv, .md and .png into `out_dir`, all three or none."""
    outputs = Outputs()
    folder = (
        out_dir
        if isinstance(out_dir, FolderTarget)
        else outputs.folder("--out", out_dir, tuple(OUTPUT_FILES.values()))
    )
    names = OUTPUT_FILES
    with outputs.writing() as tx:
        tx.write_bytes(folder.file(names["csv"]), rows.to_csv(index=False).encode())
        tx.write_text(folder.file(names["markdown"]), markdown(table(rows)))
        tx.write_with(folder.file(names["png"]), lambda path: plot(rows, path))
    return {kind: folder.path / name for kind, name in names.items()}


# ---- Figs. 13-14: which loss policy emerges under DropTail and RED (section V.D.1) ----------

#: The paper's set-up of Figs. 13 and 14: N = 10 connections over the 120 ms round trip, DropTail
#: (Fig. 13) and RED (Fig. 14, thresholds 0.6 and 0.8 of the buffer as section V.A) with buffers
#: of 5, 10, 15 and 20 packets.
LOSS_POLICY_N = 10
LOSS_POLICY_BUFFERS = (5, 10, 15, 20)
#: The bin length T (the paper does not give it): one propagation round trip, the time a window
#: takes to be sent. A connection's window in a bin is its congestion window at the bin's start.
LOSS_POLICY_BIN_S = 0.12


def loss_policy_queues() -> list[Queue]:
    """DropTail and RED (section V.A's settings) with each buffer of Figs. 13 and 14."""
    out = [
        Queue(f"DropTail, buffer {b}", f"DT-{b}", f'{{kind="droptail", packets={b}}}')
        for b in LOSS_POLICY_BUFFERS
    ]
    out += [
        Queue(
            f"RED, buffer {b}",
            f"RED-{b}",
            f'{{kind="red", packets={b}, min_th={0.6 * b:g}, max_th={0.8 * b:g}, '
            f"max_p=0.1, w_q=0.001, wait=true, gentle=false}}",
        )
        for b in LOSS_POLICY_BUFFERS
    ]
    return out


def loss_policy_sweep(
    duration: float,
    warmup: float,
    seeds: list[int] | int,
    out: Path | None,
    fresh: bool = False,
    progress: ProgressSink | None = None,
    scenario: Path | None = None,
    **where,
) -> tuple[pd.DataFrame, Summary]:
    """Runs Figs. 13-14's set-up (drops traced, windows sampled every bin) and returns, per
    queue, seed and window w (whole packets), the number of (connection, bin) pairs with that
    window and how many of them saw at least one drop (:func:`loss_policy_bins`)."""
    from plait.experiments import sweep_all

    grid = {
        "link.bottleneck.queue": [q.toml for q in loss_policy_queues()],
        "flow.tcp.count": [LOSS_POLICY_N],
        "simulation.duration": [f"{duration:g}s"],
        "simulation.warmup": [f"{warmup:g}s"],
        "simulation.trace_drops": [True],
        "simulation.sample_interval": [f"{LOSS_POLICY_BIN_S * 1000:g}ms"],
    }
    result = sweep_all(
        "parallel-tcp (Figs. 13-14)",
        scenario or EXPERIMENT_DIR / "scenario.toml",
        grid,
        seeds=seeds,
        tables=("flow_series", "drops"),
        out=out,
        fresh=fresh,
        progress=progress,
        **where,
    )
    label = {q.toml: q.label for q in loss_policy_queues()}
    series, drops = result.table("flow_series"), result.table("drops")
    rows = []
    for run, s in series.groupby("run", sort=False):
        d = drops[drops["run"] == run]
        bins = loss_policy_bins(s, d, warmup, duration)
        bins.insert(0, "seed", int(s["seed"].iloc[0]))
        bins.insert(0, "queue", label[s["link.bottleneck.queue"].iloc[0]])
        rows.append(bins)
    return pd.concat(rows, ignore_index=True), result.summary


def loss_policy_bins(
    series: pd.DataFrame, drops: pd.DataFrame, warmup: float, duration: float, mss: int = 1000
) -> pd.DataFrame:
    """Section V.D.1's estimator for one run: time cut into bins of T = LOSS_POLICY_BIN_S from
    the samples of `series` (one per bin start, time_s = nT); connection i in bin n has window
    w_i(n) (its congestion window at nT, in whole `mss` segments) and z_i(n) = 1 if it lost a
    packet in [nT, (n + 1)T). Returns one row per window w: `bins` (pairs (i, n) with
    w_i(n) = w) and `signalled` (those with z_i(n) = 1), over the bins inside
    [warmup, duration). z̄(w) = signalled / bins."""
    t = LOSS_POLICY_BIN_S
    s = series[(series.time_s >= warmup) & (series.time_s + t <= duration + 1e-9)]
    n = (s.time_s / t).round().astype("int64")
    key = pd.DataFrame({"flow": s.flow.astype(str).to_numpy(), "bin": n.to_numpy()})
    key["w"] = (s.cwnd_bytes.to_numpy() / mss).round().astype("int64")
    hit = set(zip(drops.flow.astype(str), (drops.time_s / t + 1e-9).astype("int64")))
    key["signalled"] = [(f, b) in hit for f, b in zip(key.flow, key.bin)]
    out = key.groupby("w").agg(bins=("signalled", "size"), signalled=("signalled", "sum"))
    return out.reset_index()


def window_signal_correlation(bins: pd.DataFrame) -> float:
    """The correlation between a connection's window w_i(n) and its indicator z_i(n) over all
    (connection, bin) pairs, from the counts of :func:`loss_policy_bins` (point-biserial:
    positive when larger windows are signalled more often)."""
    import numpy as np

    w = bins.w.to_numpy(dtype=float)
    n = bins.bins.to_numpy(dtype=float)
    k = bins.signalled.to_numpy(dtype=float)
    total = n.sum()
    if total == 0:
        return math.nan
    mean_w, mean_z = (n * w).sum() / total, k.sum() / total
    cov = (k * w).sum() / total - mean_w * mean_z
    var_w = (n * w * w).sum() / total - mean_w**2
    var_z = mean_z * (1 - mean_z)
    return float(cov / np.sqrt(var_w * var_z)) if var_w > 0 and var_z > 0 else math.nan
