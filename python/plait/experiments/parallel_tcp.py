"""Parallel TCP sockets (Altman et al.): bottleneck utilisation against the number N of AIMD
connections, for the threshold-dropper, RED and DropTail, beside Theorem 1's
1 - 1/(1 + 3N) (beta = 1/2).

The paper (section V) finds good agreement with the threshold-dropper, which enforces one
congestion signal per congestion event (assumption ONE), and a shortfall with small DropTail
buffers, where the connections' windows synchronise.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from plait import __version__, _core
from plait.api import run, write_atomic
from plait.output import FolderTarget, Outputs

EXPERIMENT_DIR = Path(__file__).resolve().parents[3] / "experiments" / "parallel-tcp"


@dataclass(frozen=True)
class Queue:
    """A bottleneck queue configuration of the sweep."""

    label: str
    short: str
    toml: str


def queues() -> list[Queue]:
    """(a) threshold-dropper (both of the paper's policies), (b) RED as in section V.A
    (min_th, max_th = 0.6, 0.8 of the buffer, max_p = 0.1, w_q = 0.001, wait on),
    (c) DropTail with 5, 10, 20 and 40 packets."""
    out = [
        Queue(
            "threshold-dropper, rate-independent",
            "TD-RI",
            '{kind="threshold_dropper", threshold=3, policy="rate_independent"}',
        ),
        Queue(
            "threshold-dropper, largest-rate",
            "TD-LR",
            '{kind="threshold_dropper", threshold=3, policy="largest_rate"}',
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


def _overrides(queue: Queue, n: int, duration: float, warmup: float) -> dict[str, object]:
    return {
        "flow.tcp.count": n,
        "link.bottleneck.queue": queue.toml,
        "simulation.duration": f"{duration}s",
        "simulation.warmup": f"{warmup}s",
    }


#: Bumped whenever the meaning of a result column changes without a version change (2: link
#: utilisation counts busy time inside the window), so that saved runs are not mixed in.
RESULTS_REVISION = 2


def run_key(queue: Queue, n: int, duration: float, warmup: float, seed: int) -> str:
    """Identifies a run: the scenario text, the overrides, the seed and plait's version.
    Any change to one of them gives a new key, so a cached result is never reused wrongly."""
    identity = {
        "scenario": (EXPERIMENT_DIR / "scenario.toml").read_text(encoding="utf-8"),
        "overrides": _overrides(queue, n, duration, warmup),
        "seed": seed,
        "version": __version__,
        "results": RESULTS_REVISION,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]


def run_one(queue: Queue, n: int, duration: float, warmup: float, seed: int, cancel=None) -> dict:
    result = run(
        EXPERIMENT_DIR / "scenario.toml",
        seed=seed,
        overrides=_overrides(queue, n, duration, warmup),
        cancel=cancel,
    )
    links = result.links
    bottleneck = links[(links.name == "bottleneck") & (links.direction == "forward")].iloc[0]
    flows = result.flows
    return {
        "queue": queue.label,
        "n": n,
        "utilization": float(bottleneck.utilization),
        "theorem1": theorem1(n),
        "drops": int(bottleneck.drops),
        "timeouts": int(flows.timeouts.sum()),
        "fast_retransmits": int(flows.fast_retransmits.sum()),
        "jain": result.jain_fairness,
        "seed": result.seed,
    }


def sweep(
    ns: list[int],
    duration: float = 1000.0,
    warmup: float = 200.0,
    seed: int = 1,
    jobs: int | None = None,
    progress=None,
    cache_dir: Path | None = None,
) -> pd.DataFrame:
    """Runs every (queue, N) pair; returns one row per run.

    With `cache_dir`, each finished run is saved there at once (atomically, one small JSON
    file named by :func:`run_key`), and runs already saved are not run again: an interrupted
    sweep resumes where it stopped.
    """
    tasks = [(q, n) for q in queues() for n in ns]
    jobs = jobs or min(len(tasks), os.cpu_count() or 1)
    # Ctrl-C cancels every run in progress at its next slice, and the runs not started.
    cancel = _core.CancelToken()

    def cached(q: Queue, n: int) -> dict:
        if cache_dir is None:
            return run_one(q, n, duration, warmup, seed, cancel)
        path = Path(cache_dir) / f"{run_key(q, n, duration, warmup, seed)}.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
        row = run_one(q, n, duration, warmup, seed, cancel)
        write_atomic(path, json.dumps(row).encode())
        return row

    rows = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(cached, q, n) for q, n in tasks]
        try:
            for fut in futures:
                rows.append(fut.result())
                if progress is not None:
                    progress()
        except BaseException:
            cancel.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return pd.DataFrame(rows)


def table(rows: pd.DataFrame) -> pd.DataFrame:
    """Utilisation as a table: one row per N, one column per queue, plus Theorem 1."""
    wide = rows.pivot(index="n", columns="queue", values="utilization")
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


def plot(rows: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    ns = sorted(rows.n.unique())
    fine = [1 + i * (max(ns) - 1) / 200 for i in range(201)]
    ax.plot(fine, [theorem1(x) for x in fine], "k-", lw=2, label="Theorem 1: 1 - 1/(1+3N)")
    markers = "os^vD<>ph*"
    for i, q in enumerate(queues()):
        sub = rows[rows.queue == q.label].sort_values("n")
        if len(sub):
            ax.plot(
                sub.n, sub.utilization, marker=markers[i % len(markers)], ls="--", label=q.label
            )
    ax.set_xlabel("number of connections N")
    ax.set_ylabel("bottleneck utilisation")
    ax.set_ylim(0.6, 1.02)
    ax.set_xticks(ns)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("Parallel AIMD(1, 1/2) TCP over a 10 Mb/s, 120 ms bottleneck")
    fig.tight_layout()
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
