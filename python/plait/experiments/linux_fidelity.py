"""`plait reproduce linux-fidelity`: plait's `linux` and `rfc` TCP profiles (docs/linux.md)
side by side on N parallel bulk TCP flows through one DropTail bottleneck.

The grid is a testbed's: a 10 Mb/s bottleneck whose limit counts the packet in service (as a
Linux qdisc does), N = 1, 3, 6, 10 flows, buffers of 5, 20 and 100 packets, base RTTs of 20
and 100 ms, Reno and CUBIC, each with both profiles, over the seeds given (the full version
uses 10: 96 configurations x 10 seeds = 960 runs). Per setting it reports the aggregate
utilisation (goodput / capacity) over seeds, retransmission timeouts and fast retransmits per
second, and how many different results the seeds give.

The kernel side: `plait reproduce linux-fidelity --kernel` (root) runs the same grid, scenario
files, overrides and seeds on this machine's own kernel through `plait testbed`, one run at a
time, and stores each run (JSON, with the kernel release, the emulator's lateness and flag, the
date) in experiments/linux-fidelity/kernel/, which is committed. The report reads that store
without root: per setting the kernel's mean and range beside each profile's, or "not measured".
An MPTCP part (experiments/linux-fidelity/mptcp.toml: two disjoint paths of 10 and 100 packets,
with and without a TCP flow on the short-buffered one) runs in both profiles and on the kernel.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from plait.experiments import Options, error_bars
from plait.experiments.framework import Declared, register_declared, save_figure
from plait.output import FolderTarget, Outputs
from plait.report import Claim, Figure, figure_png
from plait.sweeps import ProgressSink, Summary
from plait.testbed.runner import RECOVERY_COUNTERS, TIMEOUT_COUNTERS, TIMING_COLUMNS

EXPERIMENT_DIR = Path(__file__).resolve().parents[3] / "experiments" / "linux-fidelity"
SCENARIO = EXPERIMENT_DIR / "scenario.toml"

NAME = "linux-fidelity"
TITLE = "TCP as Linux runs it: the linux and rfc profiles"
PAPER = (
    "No paper: plait's `linux` and `rfc` TCP profiles (docs/linux.md) against each other and "
    "against this project's own kernel runs of the same grid (`plait reproduce linux-fidelity "
    "--kernel`, stored in experiments/linux-fidelity/kernel/); the measurements of the study "
    "that motivated the comparison are not included."
)

#: The grid of the full experiment.
NS = (1, 3, 6, 10)
BUFFERS = (5, 20, 100)
RTTS_MS = (20, 100)
CCS = ("reno", "cubic")
PROFILES = ("linux", "rfc")
#: Bottleneck rate, bit/s.
CAPACITY_BPS = 10e6
#: One-way delay of each access link (the scenario's), ms.
ACCESS_DELAY_MS = 1
#: Buffers counted as small in the RTO claim (below the 83-packet bandwidth-delay product of
#: the 100 ms RTT, about that of the 20 ms one and below).
SMALL_BUFFERS = (5, 20)
#: Largest relative utilisation difference counted as "the same" in the utilisation claim.
SAME_UTILISATION = 0.03
#: Columns that name a setting (a configuration without the profile).
SETTING = ["buffer", "n", "rtt_ms", "cc"]
#: Result tables each run stores.
TABLES = ("flows", "links")

#: Greatest goodput / capacity with 1500-byte packets: payload / (payload + headers).
CEILING = {"linux": 1448 / 1500, "rfc": 1460 / 1500}


#: The MPTCP part's grid: the subflows' (uncoupled) controller, and whether the TCP flow "tcp"
#: (same controller, sharing the 10-packet path) runs (1) or is left out of the file (0).
MPTCP_CCS = ("uncoupled:reno", "uncoupled:cubic")
MPTCP_TCP = (0, 1)
#: The committed store of the kernel's runs (see "The kernel side" below).
KERNEL_DIR = EXPERIMENT_DIR / "kernel"


@dataclass(frozen=True)
class Settings:
    """The seeds, run length and grid of both parts (the dumbbell's and the MPTCP part's; the
    kernel side measures the same grid), and the store of kernel runs the report reads; the
    defaults are the full version's (10 seeds of 30 s runs, the first 5 s discarded). Tests
    pass smaller ones in (``EXPERIMENT.reproduce(options, settings)``)."""

    seeds: list[int] = field(default_factory=lambda: list(range(1, 11)))
    duration: float = 30.0
    warmup: float = 5.0
    ns: tuple[int, ...] = NS
    buffers: tuple[int, ...] = BUFFERS
    rtts_ms: tuple[float, ...] = RTTS_MS
    ccs: tuple[str, ...] = CCS
    mptcp_ccs: tuple[str, ...] = MPTCP_CCS
    mptcp_tcps: tuple[int, ...] = MPTCP_TCP
    #: The store of kernel runs: the report reads it, `--kernel` measures into it.
    kernel_store: Path = KERNEL_DIR
    #: What measures one kernel run (a :class:`KernelPoint` -> the testbed's JSON summary):
    #: None for the testbed itself (:func:`_run_on_kernel`); a test passes a stand-in.
    kernel_run: Callable[[KernelPoint], dict] | None = field(default=None, compare=False)


def settings(options: Options) -> Settings:
    """30 s runs with a 5 s warm-up over the seeds given, or (quick) 15 s runs over the first
    two seeds. The warm-up stays 5 s: the first loss episode of a flow that overshoots in slow
    start can hold out-of-order data that is delivered only seconds later, which would count
    in a window that starts earlier (goodput above the payload ceiling)."""
    if options.quick:
        return Settings(list(options.seeds[:2]), duration=15.0)
    return Settings(list(options.seeds))


def packet_runs(sc: Settings) -> int:
    """The dumbbell's packet-level runs: every setting with both profiles, once per seed."""
    grid_size = len(sc.ns) * len(sc.buffers) * len(sc.rtts_ms) * len(sc.ccs) * len(PROFILES)
    return grid_size * len(sc.seeds)


def mptcp_packet_runs(sc: Settings) -> int:
    """The MPTCP part's packet-level runs."""
    return len(sc.mptcp_ccs) * len(sc.mptcp_tcps) * len(PROFILES) * len(sc.seeds)


def bottleneck_delay_ms(rtt_ms: float) -> float:
    """The bottleneck's one-way delay that makes the base RTT `rtt_ms` (two access links of
    1 ms each way)."""
    return rtt_ms / 2 - 2 * ACCESS_DELAY_MS


def _delay(rtt_ms: float) -> str:
    return f"{bottleneck_delay_ms(rtt_ms):g}ms"


def grid(
    ns: Sequence[int] = NS,
    buffers: Sequence[int] = BUFFERS,
    rtts_ms: Sequence[float] = RTTS_MS,
    ccs: Sequence[str] = CCS,
    profiles: Sequence[str] = PROFILES,
    duration: float = 30.0,
    warmup: float = 5.0,
) -> dict[str, list]:
    """The sweep's grid (every combination), with the run length as one value each."""
    return {
        "tcp.profile": list(profiles),
        "flow.bulk.cc": list(ccs),
        "link.bottleneck.queue.packets": list(buffers),
        "link.bottleneck.delay": [_delay(r) for r in rtts_ms],
        "flow.bulk.count": list(ns),
        "simulation.duration": [f"{duration:g}s"],
        "simulation.warmup": [f"{warmup:g}s"],
    }


def sweep(
    ns: Sequence[int] = NS,
    buffers: Sequence[int] = BUFFERS,
    rtts_ms: Sequence[float] = RTTS_MS,
    ccs: Sequence[str] = CCS,
    profiles: Sequence[str] = PROFILES,
    duration: float = 30.0,
    warmup: float = 5.0,
    seeds: list[int] | int = 10,
    out: Path | None = None,
    fresh: bool = False,
    progress: ProgressSink | None = None,
    **where,
) -> tuple[pd.DataFrame, Summary]:
    """Runs every combination once per seed through :func:`plait.sweep` and returns one row
    per run (see :func:`rows`) with the sweep's summary. With `out`, runs are stored there and
    runs already stored are reused; `where` goes to :func:`plait.sweep` (``workers``,
    ``scheduler``, ``jobqueue``, ``client``, ``batch``)."""
    from plait.experiments import sweep_all

    result = sweep_all(
        NAME,
        SCENARIO,
        grid(ns, buffers, rtts_ms, ccs, profiles, duration, warmup),
        seeds=seeds,
        tables=TABLES,
        out=out,
        fresh=fresh,
        progress=progress,
        **where,
    )
    table = rows(result.table("flows"), result.table("links"), list(rtts_ms), duration - warmup)
    return table, result.summary


def rows(
    flows: pd.DataFrame, links: pd.DataFrame, rtts_ms: Sequence[float], window_s: float
) -> pd.DataFrame:
    """One row per run: the setting, profile and seed; utilisation (the flows' goodput over
    the bottleneck's capacity), the bottleneck's busy fraction and drops, the payload bytes
    delivered, timeouts and fast retransmits (in all and per second of the measurement
    window, of `window_s` seconds)."""
    rtt = {_delay(r): r for r in rtts_ms}
    per_run = flows.groupby("run", sort=False).agg(
        profile=("tcp.profile", "first"),
        cc=("flow.bulk.cc", "first"),
        buffer=("link.bottleneck.queue.packets", "first"),
        delay=("link.bottleneck.delay", "first"),
        n=("flow.bulk.count", "first"),
        seed=("seed", "first"),
        flows=("name", "size"),
        goodput_bps=("goodput_bps", "sum"),
        bytes_delivered=("bytes_delivered", "sum"),
        timeouts=("timeouts", "sum"),
        fast_retransmits=("fast_retransmits", "sum"),
        rtt_mean_s=("rtt_mean_s", "mean"),
    )
    bottleneck = links[(links["name"] == "bottleneck") & (links["direction"] == "forward")]
    per_run = per_run.join(
        bottleneck.set_index("run")[["utilization", "drops"]].rename(
            columns={"utilization": "busy"}
        )
    )
    out = pd.DataFrame(
        {
            "profile": per_run["profile"].astype(str),
            "cc": per_run["cc"].astype(str),
            "buffer": per_run["buffer"].astype("int64"),
            "n": per_run["n"].astype("int64"),
            "rtt_ms": per_run["delay"].map(rtt).astype(float),
            "seed": per_run["seed"].astype("int64"),
            "utilization": per_run["goodput_bps"].astype(float) / CAPACITY_BPS,
            "busy": per_run["busy"].astype(float),
            "drops": per_run["drops"].astype("int64"),
            "bytes_delivered": per_run["bytes_delivered"].astype("int64"),
            "timeouts": per_run["timeouts"].astype("int64"),
            "fast_retransmits": per_run["fast_retransmits"].astype("int64"),
            "rto_per_s": per_run["timeouts"] / window_s,
            "fr_per_s": per_run["fast_retransmits"] / window_s,
        }
    )
    # A run's result as a whole: what it delivered, dropped and repaired, and the RTT its
    # flows measured (one flow filling a large buffer delivers the link's capacity, without a
    # loss, whatever the seed; the host jitter still moves its RTT samples). Two seeds gave
    # the same result when all of these agree.
    out["result"] = (
        out["bytes_delivered"].astype(str)
        + "/"
        + out["drops"].astype(str)
        + "/"
        + out["fast_retransmits"].astype(str)
        + "/"
        + out["timeouts"].astype(str)
        + "/"
        + per_run["rtt_mean_s"].map(lambda x: f"{x:.9f}").to_numpy()
    )
    if (per_run["flows"] != per_run["n"]).any():
        raise ValueError(f"{NAME}: a run's flows table does not have its N flows")
    return _ordered(out.reset_index(drop=True), [*SETTING, "profile", "seed"])


def _ordered(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Sorted by the grid's order (cc and profile in the order declared, not alphabetical)."""
    keys = {
        "cc": lambda s: s.map({c: i for i, c in enumerate(CCS)}).fillna(len(CCS)),
        "profile": lambda s: s.map({p: i for i, p in enumerate(PROFILES)}).fillna(len(PROFILES)),
    }
    return frame.sort_values(
        by, key=lambda s: keys[s.name](s) if s.name in keys else s, kind="stable"
    ).reset_index(drop=True)


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per setting and profile: utilisation mean, standard deviation, lowest and
    highest over seeds; RTOs and fast retransmits per second (means over seeds); the number of
    seeds and of distinct results among them (runs that differ in payload bytes delivered,
    drops, fast retransmits or timeouts)."""
    by = runs.groupby([*SETTING, "profile"], sort=False)
    out = by.agg(
        seeds=("seed", "size"),
        util_mean=("utilization", "mean"),
        util_sd=("utilization", lambda x: float(x.std(ddof=1)) if len(x) > 1 else math.nan),
        util_min=("utilization", "min"),
        util_max=("utilization", "max"),
        busy_mean=("busy", "mean"),
        rto_per_s=("rto_per_s", "mean"),
        fr_per_s=("fr_per_s", "mean"),
        distinct=("result", "nunique"),
    ).reset_index()
    return _ordered(out, [*SETTING, "profile"])


def side_by_side(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per setting: each measure for the linux and the rfc profile beside each other,
    and the relative utilisation difference (linux / rfc - 1)."""
    wide = summary.pivot_table(
        index=SETTING,
        columns="profile",
        values=["util_mean", "util_sd", "rto_per_s", "fr_per_s", "distinct", "seeds"],
        aggfunc="first",
        sort=False,
    )
    out = pd.DataFrame(index=wide.index)
    for measure in ("util_mean", "util_sd", "rto_per_s", "fr_per_s", "distinct"):
        for profile in PROFILES:
            if (measure, profile) in wide.columns:
                out[f"{measure}_{profile}"] = wide[(measure, profile)]
    if {"util_mean_linux", "util_mean_rfc"} <= set(out.columns):
        out["util_diff"] = out["util_mean_linux"] / out["util_mean_rfc"] - 1
    for profile in PROFILES:
        if f"distinct_{profile}" in out.columns:
            out[f"distinct_{profile}"] = out[f"distinct_{profile}"].astype("int64")
    out["seeds"] = wide["seeds"].max(axis=1).astype("int64")
    return _ordered(out.reset_index(), SETTING)


def markdown(side: pd.DataFrame) -> str:
    """The side-by-side table as GitHub-flavoured Markdown."""
    header = [
        "buffer (pkts)",
        "N",
        "RTT (ms)",
        "cc",
        "util linux",
        "util rfc",
        "linux/rfc − 1",
        "RTO/s linux",
        "RTO/s rfc",
        "FR/s linux",
        "FR/s rfc",
        "distinct linux",
        "distinct rfc",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def util(mean: float, sd: float) -> str:
        return f"{mean:.3f}" if math.isnan(sd) else f"{mean:.3f} ± {sd:.3f}"

    for r in side.itertuples(index=False):
        cells = [
            str(r.buffer),
            str(r.n),
            f"{r.rtt_ms:g}",
            r.cc,
            util(r.util_mean_linux, r.util_sd_linux),
            util(r.util_mean_rfc, r.util_sd_rfc),
            f"{100 * r.util_diff:+.1f} %",
            f"{r.rto_per_s_linux:.3f}",
            f"{r.rto_per_s_rfc:.3f}",
            f"{r.fr_per_s_linux:.2f}",
            f"{r.fr_per_s_rfc:.2f}",
            f"{r.distinct_linux}/{r.seeds}",
            f"{r.distinct_rfc}/{r.seeds}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def report_table(side: pd.DataFrame) -> pd.DataFrame:
    """The side-by-side table with readable column names, for the HTML report."""
    names = {
        "buffer": "buffer (pkts)",
        "n": "N",
        "rtt_ms": "RTT (ms)",
        "cc": "cc",
        "util_mean_linux": "util linux",
        "util_sd_linux": "sd linux",
        "util_mean_rfc": "util rfc",
        "util_sd_rfc": "sd rfc",
        "util_diff": "linux/rfc − 1",
        "rto_per_s_linux": "RTO/s linux",
        "rto_per_s_rfc": "RTO/s rfc",
        "fr_per_s_linux": "FR/s linux",
        "fr_per_s_rfc": "FR/s rfc",
        "distinct_linux": "distinct linux",
        "distinct_rfc": "distinct rfc",
        "seeds": "seeds",
    }
    return side[[c for c in names if c in side.columns]].rename(columns=names)


# ---- Claims --------------------------------------------------------------------------------


def _label(row) -> str:
    return f"{row.cc}, N = {row.n}, {row.buffer} pkts, {row.rtt_ms:g} ms"


def claims(summary: pd.DataFrame) -> list[Claim]:
    """The claims with verdicts computed from the per-setting summary."""
    side = side_by_side(summary)
    seeds = int(side.seeds.max())
    total = len(side)
    out = []

    # (1) Seeds vary the result under the linux profile.
    short = side[side.distinct_linux < side.seeds]
    rfc_all = int((side.distinct_rfc == side.seeds).sum())
    rfc_one = int((side.distinct_rfc == 1).sum())
    worst = ", ".join(
        f"{_label(r)}: {r.distinct_linux} of {r.seeds}"
        for r in short.sort_values("distinct_linux").head(4).itertuples()
    )
    out.append(
        Claim(
            "With the linux profile, different seeds give different results in every setting",
            "docs/linux.md, “Timing noise”",
            f"{seeds} distinct results of {seeds} seeds in all {total} settings",
            f"every seed distinct in {total - len(short)} of {total} settings"
            + (f"; fewer in {len(short)} ({worst})" if len(short) else "")
            + f". rfc profile: every seed distinct in {rfc_all} of {total}, a single result "
            f"in {rfc_one}",
            "every seed distinct in every setting (payload bytes delivered, drops, repairs, "
            "mean RTT)",
            seeds > 1 and len(short) == 0,
            "Two runs count as the same result when their flows delivered the same number of "
            "payload bytes in the window, with the same drops, repairs and mean RTT. Both "
            "profiles draw the flows' start times from the seed; the rfc profile adds send "
            "jitter, the linux profile up to 50 us of host jitter per packet at each end.",
        )
    )

    # (2) RTOs per second in small buffers.
    small = side[side.buffer.isin(SMALL_BUFFERS)]
    groups = small.groupby(["buffer", "cc"], sort=False)[["rto_per_s_linux", "rto_per_s_rfc"]]
    means = groups.mean()
    lower = int((small.rto_per_s_linux < small.rto_per_s_rfc).sum())
    higher = int((small.rto_per_s_linux > small.rto_per_s_rfc).sum())
    ties = len(small) - lower - higher
    per_group = "; ".join(
        f"{b} pkts {cc}: {m.rto_per_s_linux:.3f} vs {m.rto_per_s_rfc:.3f}"
        for (b, cc), m in means.iterrows()
    )
    out.append(
        Claim(
            "The linux profile takes fewer retransmission timeouts per second than the rfc "
            "profile in small buffers",
            f"DropTail buffers of {' and '.join(map(str, SMALL_BUFFERS))} packets",
            "fewer RTO/s with linux",
            f"RTO/s linux vs rfc, mean over N and RTT: {per_group}. Linux lower in {lower} of "
            f"{len(small)} settings, higher in {higher}, equal in {ties}",
            "linux's mean lower for every buffer and cc",
            bool((means.rto_per_s_linux < means.rto_per_s_rfc).all()),
            "The expectation rests on RACK-TLP (RFC 8985) in the linux profile, which detects "
            "lost retransmissions and tail losses without the retransmission timer; both "
            "profiles keep a 200 ms minimum RTO. The profile also brings delayed ACKs, PRR and "
            "ssthresh from cwnd, which change how small windows recover.",
        )
    )

    # (3) Utilisation side by side.
    apart = side[side.util_diff.abs() > SAME_UTILISATION]
    largest = side.loc[side.util_diff.abs().idxmax()]
    listed = ", ".join(
        f"{_label(r)}: {r.util_mean_linux:.3f} vs {r.util_mean_rfc:.3f}"
        for r in apart.reindex(apart.util_diff.abs().sort_values(ascending=False).index)
        .head(6)
        .itertuples()
    )
    out.append(
        Claim(
            "The two profiles give the same aggregate utilisation (goodput / capacity)",
            "every setting of the grid",
            f"within {100 * SAME_UTILISATION:g} % (relative) of each other",
            f"mean over all settings linux {side.util_mean_linux.mean():.3f}, rfc "
            f"{side.util_mean_rfc.mean():.3f}; more than {100 * SAME_UTILISATION:g} % apart "
            f"in {len(apart)} of {total} settings"
            + (f" ({listed}{', …' if len(apart) > 6 else ''})" if len(apart) else "")
            + f"; largest difference {100 * largest.util_diff:+.1f} % ({_label(largest)})",
            f"±{100 * SAME_UTILISATION:g} % relative in every setting",
            len(apart) == 0,
            "Goodput counts payload only: with 1500-byte packets linux (1448 + 52 header bytes) "
            f"can reach at most {CEILING['linux']:.4f} of capacity and rfc (1460 + 40) "
            f"{CEILING['rfc']:.4f}, a 0.8 % difference before any behaviour differs. "
            + _ceiling_note(summary),
        )
    )
    return out


def _ceiling_note(summary: pd.DataFrame) -> str:
    """Whether any run's goodput exceeded its profile's payload ceiling (data that arrived out
    of order before the measurement window and was released in it)."""
    over = summary[summary.util_max > summary.profile.map(CEILING)]
    if over.empty:
        return "No run exceeds its profile's ceiling."
    worst = over.loc[over.util_max.idxmax()]
    return (
        f"In {len(over)} setting(s) a run exceeds its profile's ceiling (at most "
        f"{worst.util_max:.3f}, {worst.profile}, {_label(worst)}): data the receiver held "
        "out of order behind a hole before the window was delivered in it, so utilisation "
        "there overstates what the link carried in the window (the CSV's busy column is the "
        "link's busy fraction)."
    )


# ---- Figures -------------------------------------------------------------------------------


def _panels(summary: pd.DataFrame, value: str, low: str | None, high: str | None, ylabel: str):
    """A figure of `value` against N, one panel per (RTT, cc), one colour per buffer; the linux
    profile solid with filled markers, rfc dashed with open ones; bars from `low` to `high`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rtts = sorted(summary.rtt_ms.unique())
    ccs = [c for c in CCS if c in set(summary.cc)]
    buffers = sorted(summary.buffer.unique())
    ns = sorted(summary.n.unique())
    fig, axes = plt.subplots(
        len(rtts), len(ccs), figsize=(5.2 * len(ccs), 3.6 * len(rtts)), squeeze=False, sharey=True
    )
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, rtt in enumerate(rtts):
        for j, cc in enumerate(ccs):
            ax = axes[i][j]
            for k, b in enumerate(buffers):
                for p, profile in enumerate(PROFILES):
                    sub = summary[
                        (summary.rtt_ms == rtt)
                        & (summary.cc == cc)
                        & (summary.buffer == b)
                        & (summary.profile == profile)
                    ].sort_values("n")
                    if sub.empty:
                        continue
                    x = sub.n.to_numpy(dtype=float) + (p - 0.5) * 0.18
                    y = sub[value].to_numpy(dtype=float)
                    yerr = None
                    if low and high:
                        yerr = error_bars(y, sub[low], sub[high])
                    ax.errorbar(
                        x,
                        y,
                        yerr=yerr,
                        color=colours[k % len(colours)],
                        marker="os^D"[k % 4],
                        mfc=colours[k % len(colours)] if profile == "linux" else "white",
                        ls="-" if profile == "linux" else "--",
                        capsize=2,
                        label=f"{profile}, {b} pkts",
                    )
            ax.set_title(f"{cc}, base RTT {rtt:g} ms", fontsize=10)
            ax.set_xticks(ns)
            ax.grid(alpha=0.3)
            if i == len(rtts) - 1:
                ax.set_xlabel("number of flows N")
            if j == 0:
                ax.set_ylabel(ylabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8)
    return fig


def utilization_figure(summary: pd.DataFrame):
    """Utilisation against N per (RTT, cc): linux solid, rfc dashed; bars over seeds."""
    fig = _panels(summary, "util_mean", "util_min", "util_max", "goodput / capacity")
    fig.suptitle("linux (solid) and rfc (dashed) profiles, 10 Mb/s DropTail bottleneck", y=1.01)
    return fig


def rto_figure(summary: pd.DataFrame):
    """Retransmission timeouts per second against N per (RTT, cc)."""
    fig = _panels(summary, "rto_per_s", None, None, "RTOs per second (all flows)")
    fig.suptitle("Retransmission timeouts: linux (solid) and rfc (dashed)", y=1.01)
    return fig


def scatter_figure(summary: pd.DataFrame):
    """Each setting's utilisation with the linux profile against the rfc profile, with the
    diagonal and the ±3 % band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    side = side_by_side(summary)
    fig, ax = plt.subplots(figsize=(5.6, 5.2))
    lo = min(side.util_mean_rfc.min(), side.util_mean_linux.min()) - 0.02
    line = np.linspace(lo, 1.0, 50)
    ax.plot(line, line, "k-", lw=1, label="equal")
    ax.fill_between(
        line,
        line * (1 - SAME_UTILISATION),
        line * (1 + SAME_UTILISATION),
        color="0.85",
        label=f"±{100 * SAME_UTILISATION:g} %",
    )
    markers = {b: m for b, m in zip(sorted(side.buffer.unique()), "os^D")}
    for (b, cc), sub in side.groupby(["buffer", "cc"], sort=True):
        ax.plot(
            sub.util_mean_rfc,
            sub.util_mean_linux,
            markers[b],
            mfc="none" if cc == "reno" else None,
            ls="none",
            label=f"{b} pkts, {cc}",
        )
    ax.set_xlim(lo, 1.0)
    ax.set_ylim(lo, 1.0)
    ax.set_xlabel("utilisation, rfc profile")
    ax.set_ylabel("utilisation, linux profile")
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("One point per setting (mean over seeds)", fontsize=10)
    fig.tight_layout()
    return fig


#: The files :func:`write_outputs` writes, by kind.
OUTPUT_FILES = {
    "runs": "runs.csv",
    "csv": "settings.csv",
    "markdown": "linux_vs_rfc.md",
    "png": "utilization.png",
    "rto": "rto.png",
}


def write_outputs(
    runs: pd.DataFrame, summary: pd.DataFrame, out_dir: Path | FolderTarget
) -> dict[str, Path]:
    """Writes the per-run and per-setting CSVs, the side-by-side Markdown table and the
    utilisation and RTO figures into `out_dir`, all or none."""
    outputs = Outputs()
    folder = (
        out_dir
        if isinstance(out_dir, FolderTarget)
        else outputs.folder("--out", out_dir, tuple(OUTPUT_FILES.values()))
    )
    names = OUTPUT_FILES
    with outputs.writing() as tx:
        tx.write_bytes(folder.file(names["runs"]), runs.to_csv(index=False).encode())
        tx.write_bytes(folder.file(names["csv"]), summary.to_csv(index=False).encode())
        tx.write_text(folder.file(names["markdown"]), markdown(side_by_side(summary)))
        tx.write_with(
            folder.file(names["png"]), lambda p: save_figure(utilization_figure(summary), p)
        )
        tx.write_with(folder.file(names["rto"]), lambda p: save_figure(rto_figure(summary), p))
    return {kind: folder.path / name for kind, name in names.items()}


# ---- The kernel side -----------------------------------------------------------------------
#
# The same grid, scenario files, overrides and seeds on this machine's own kernel through
# `plait testbed` (docs/testbed.md), one run at a time, each stored as one JSON file under
# experiments/linux-fidelity/kernel/runs/ (committed, so that the report and the tests read
# them on machines without root). The kernel has no profile: one kernel run per setting and
# seed stands beside both profiles' runs of that setting and seed.

#: The MPTCP part's scenario: two disjoint paths a > r1 > b (10 packets) and a > r2 > b (100).
MPTCP_SCENARIO = EXPERIMENT_DIR / "mptcp.toml"
MPTCP_SETTING = ["cc", "tcp"]
#: The MPTCP scenario's bottleneck links, by subflow.
MPTCP_BOTTLENECKS = ("p1", "p2")
#: Capacity of each MPTCP path, bit/s.
MPTCP_PATH_BPS = 10e6
#: The parts of the kernel grid.
PARTS = ("dumbbell", "mptcp")
#: Real time a kernel run takes beyond its duration: set-up, the 2 s start margin of
#: `plait testbed`, the end and clean-up (measured: a 3 s run of the dumbbell takes 5.5 s).
KERNEL_OVERHEAD_S = 3.0
#: A profile's mean utilisation counts as matching the kernel inside the kernel's range over
#: seeds or within this relative distance of the kernel's mean (as SAME_UTILISATION).
KERNEL_UTILISATION_TOLERANCE = SAME_UTILISATION
#: MPTCP: a subflow's share of the connection's bytes matches within this absolute distance,
#: the TCP flow's and the connection's goodput within this relative distance.
SHARE_TOLERANCE = 0.05
GOODPUT_TOLERANCE = 0.10
#: Measures of the dumbbell compared with the kernel, per run.
KERNEL_MEASURES = ("utilization", "busy", "drops", "rto_per_s", "fr_per_s")
#: Measures of the MPTCP part, per run.
MPTCP_MEASURES = (
    "mp_goodput_mbps",
    "tcp_goodput_mbps",
    "share_0",
    "share_1",
    "drops_p1",
    "drops_p2",
)
# The kernel's counters of a sender's namespace (the testbed summary's `testbed.nstat`, host
# -> {counter: growth over the window}, as plait.testbed.runner reads them): TIMEOUT_COUNTERS,
# retransmission timeouts that fired, and RECOVERY_COUNTERS, loss-recovery episodes entered on
# duplicate ACKs or SACK (the simulator's fast retransmits), both the runner's. Every sender of
# the dumbbell is in the host `src`, and only its flows' senders, so the namespace's counts are
# the flows' total.


class KernelUsage(ValueError):
    """A mistake in what to measure on the kernel (one line; exit 2)."""


@dataclass(frozen=True)
class KernelPoint:
    """One kernel run to make: a part of the grid, its setting, the seed and the run length."""

    part: str
    setting: tuple[tuple[str, object], ...]
    seed: int
    duration: float
    warmup: float

    @property
    def values(self) -> dict[str, object]:
        return dict(self.setting)

    def overrides(self) -> dict[str, str]:
        """The simulator's overrides for this setting (those of the simulated side)."""
        v = self.values
        window = {
            "simulation.duration": f"{self.duration:g}s",
            "simulation.warmup": f"{self.warmup:g}s",
        }
        if self.part == "dumbbell":
            return {
                "flow.bulk.cc": str(v["cc"]),
                "link.bottleneck.queue.packets": str(v["buffer"]),
                "link.bottleneck.delay": _delay(float(v["rtt_ms"])),
                "flow.bulk.count": str(v["n"]),
                **window,
            }
        cc = str(v["cc"])
        out = {"flow.mp.cc": cc, **window}
        if v["tcp"]:
            out["flow.tcp.cc"] = cc.split(":", 1)[1]
        return out

    def name(self) -> str:
        """The stored file's name: part, setting, run length and seed."""
        v = self.values
        if self.part == "dumbbell":
            setting = f"{v['cc']}_n{v['n']}_b{v['buffer']}_rtt{v['rtt_ms']:g}"
        else:
            setting = f"{str(v['cc']).replace(':', '-')}_tcp{v['tcp']}"
        return f"{self.part}_{setting}_{self.duration:g}s-{self.warmup:g}s_seed{self.seed}.json"


def mptcp_scenario(tcp: int) -> dict:
    """The MPTCP part's scenario as a dict: the file, without the flow "tcp" when `tcp` is 0."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.9 and 3.10
        import tomli as tomllib

    scenario = tomllib.loads(MPTCP_SCENARIO.read_text())
    if not tcp:
        scenario["flow"] = [f for f in scenario["flow"] if f["name"] != "tcp"]
    return scenario


def _scenario_of(point: KernelPoint):
    return SCENARIO if point.part == "dumbbell" else mptcp_scenario(int(point.values["tcp"]))


def kernel_points(
    sc: Settings, only: dict[str, list[str]] | None = None, parts: Sequence[str] = PARTS
) -> list[KernelPoint]:
    """Every kernel run of the grid of `sc` at its run length over its seeds, in the grid's
    order; with `only` (setting name -> values as text: `{"n": ["1", "3"], "part":
    ["mptcp"]}`), those whose setting has each named key with one of its values."""
    grid_points: list[tuple[str, dict[str, object]]] = []
    if "dumbbell" in parts:
        for cc in sc.ccs:
            for buffer in sc.buffers:
                for n in sc.ns:
                    for rtt in sc.rtts_ms:
                        grid_points.append(
                            ("dumbbell", {"buffer": buffer, "n": n, "rtt_ms": rtt, "cc": cc})
                        )
    if "mptcp" in parts:
        for cc in sc.mptcp_ccs:
            for tcp in sc.mptcp_tcps:
                grid_points.append(("mptcp", {"cc": cc, "tcp": tcp}))
    only = only or {}
    known = {"part", *SETTING, *MPTCP_SETTING}
    for key in only:
        if key not in known:
            raise KernelUsage(
                f"--only: no setting {key!r} (expected one of {', '.join(sorted(known))})"
            )

    def matches(part: str, values: dict[str, object], key: str, wanted: list[str]) -> bool:
        value = part if key == "part" else values.get(key)
        if value is None:
            return False
        for w in wanted:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                try:
                    if float(w) == float(value):
                        return True
                except ValueError:
                    continue
            elif str(value) == w or str(value).split(":")[-1] == w:
                return True
        return False

    out = []
    for part, values in grid_points:
        if all(matches(part, values, k, w) for k, w in only.items()):
            for seed in sc.seeds:
                out.append(
                    KernelPoint(part, tuple(values.items()), int(seed), sc.duration, sc.warmup)
                )
    return out


def parse_only(items: Sequence[str]) -> dict[str, list[str]]:
    """`["n=1,3", "cc=reno"]` -> `{"n": ["1", "3"], "cc": ["reno"]}` (KernelUsage if malformed)."""
    out: dict[str, list[str]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        wanted = [v.strip() for v in values.split(",") if v.strip()]
        if not sep or not key.strip() or not wanted:
            raise KernelUsage(f"--only: expected SETTING=VALUE[,VALUE...], got {item!r}")
        out.setdefault(key.strip(), []).extend(wanted)
    return out


def estimate_seconds(points: Sequence[KernelPoint]) -> float:
    """Real time the kernel runs `points` take, one after the other."""
    return sum(p.duration + KERNEL_OVERHEAD_S for p in points)


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    return f"{h} h {rest // 60:02d} min" if h else f"{rest // 60} min {rest % 60:02d} s"


def _write_atomically(path: Path, data: bytes) -> None:
    """Writes `path` whole or not at all: a temporary file in the same folder, flushed to the
    disk, then renamed over it (an interrupt leaves no partial file)."""
    import os
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; the store is read by everyone
        os.replace(tmp, path)
        tmp = None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def kernel_record(point: KernelPoint, summary: dict, date: str) -> dict:
    """The stored form of one kernel run: what was run (part, setting, seed, scenario file,
    overrides, run length), the kernel release, the emulator's lateness and flag, the date, and
    the testbed's JSON summary (its rows without the timing columns each repeats from the
    summary's `testbed` object, kept once there; its namespace counters without those that did
    not grow)."""
    tb = summary["testbed"]
    slim = dict(summary)
    for table in ("flows", "links", "paths"):
        slim[table] = [
            {k: v for k, v in row.items() if k not in TIMING_COLUMNS}
            for row in summary.get(table) or []
        ]
    nstat = (summary.get("testbed") or {}).get("nstat")
    if isinstance(nstat, dict):
        # Of the ~220 counters per namespace, the few that grew (a missing one grew by 0).
        slim["testbed"] = {
            **summary["testbed"],
            "nstat": {host: {k: v for k, v in c.items() if v} for host, c in nstat.items()},
        }
    scenario = SCENARIO if point.part == "dumbbell" else MPTCP_SCENARIO
    return {
        "experiment": NAME,
        "part": point.part,
        "setting": point.values,
        "seed": point.seed,
        "duration_s": point.duration,
        "warmup_s": point.warmup,
        "scenario": scenario.name,
        "without_flows": ["tcp"] if point.part == "mptcp" and not point.values["tcp"] else [],
        "overrides": point.overrides(),
        "kernel": tb["kernel"],
        "date": date,
        "lateness_us": {
            "p50": tb["lateness_p50_us"],
            "p99": tb["lateness_p99_us"],
            "max": tb["lateness_max_us"],
        },
        "timing_flagged": bool(tb["timing_flagged"]),
        "summary": slim,
    }


def _run_on_kernel(point: KernelPoint) -> dict:
    """One kernel run of `point` through plait testbed; its JSON summary. Every flow starts
    when the simulator drew it for the same seed (as `plait testbed run --compare`): the
    simulation of the same file and overrides is run first (its draws of the start times do
    not depend on the profile or the setting, only on the seed)."""
    import json

    import plait
    from plait import _core
    from plait.api import _load, _override_pairs
    from plait.testbed import plan_scenario, run_plan
    from plait.testbed.compare import simulated_starts, with_starts

    scenario = _scenario_of(point)
    text, source, fmt = _load(scenario)
    canonical = json.loads(
        _core.canonical_scenario(text, source, fmt, _override_pairs(point.overrides()))
    )
    plan = plan_scenario(canonical, point.seed)  # refuses before anything runs
    simulation = plait.run(scenario, seed=point.seed, overrides=point.overrides())
    return run_plan(with_starts(plan, simulated_starts(simulation.flows))).summary


def _run_waiting_for_lock(point: KernelPoint, say, run, wait_s: float = 1800.0) -> dict:
    """`run(point)`, waiting (up to `wait_s`) while another testbed run holds the lock."""
    from plait.testbed import Refusal

    deadline = time.monotonic() + wait_s
    told = False
    while True:
        try:
            return run(point)
        except Refusal as e:
            if "in progress" not in str(e) or time.monotonic() > deadline:
                raise
            if not told:
                say("another testbed run holds the machine: waiting for it")
                told = True
            time.sleep(2.0)


def measure_kernel(
    points: Sequence[KernelPoint],
    store: Path = KERNEL_DIR,
    say=print,
    run=None,
) -> dict[str, int]:
    """Runs every point not yet stored in `store` on the kernel, one at a time, and writes each
    run to `store/runs/<point.name()>` as soon as it ends (temporary file, then rename), then
    rebuilds `store/index.csv`. Prints the estimate of the real time first. Returns the counts
    `{"measured": ..., "stored": ..., "flagged": ...}`. KeyboardInterrupt leaves the runs that
    ended stored and nothing half-written. `run` (a point -> summary function) replaces the
    testbed, for tests."""
    import datetime
    import json

    run = run or _run_on_kernel
    runs_dir = store / "runs"
    todo = [p for p in points if not (runs_dir / p.name()).exists()]
    stored = len(points) - len(todo)
    say(
        f"{len(points)} kernel runs selected, {stored} stored already, {len(todo)} to measure: "
        f"about {_hms(estimate_seconds(todo))} of real time (each run its "
        f"{todo[0].duration:g} s plus ~{KERNEL_OVERHEAD_S:g} s of set-up), one at a time"
        if todo
        else f"{len(points)} kernel runs selected, all stored already in {runs_dir}"
    )
    flagged = measured = 0
    started = time.monotonic()
    try:
        for i, point in enumerate(todo, start=1):
            summary = _run_waiting_for_lock(point, say, run)
            date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            record = kernel_record(point, summary, date)
            data = (json.dumps(record, indent=1, sort_keys=True) + "\n").encode()
            _write_atomically(runs_dir / point.name(), data)
            measured += 1
            flagged += record["timing_flagged"]
            left = (time.monotonic() - started) / i * (len(todo) - i)
            say(
                f"[{i}/{len(todo)}] {point.name()}: "
                + _one_line(record)
                + (" [FLAGGED: emulator late]" if record["timing_flagged"] else "")
                + (f"; about {_hms(left)} left" if i < len(todo) else "")
            )
    finally:
        # The index follows the runs stored, also after an interrupt (or a file removed).
        if runs_dir.is_dir():
            write_index(store)
    return {"measured": measured, "stored": stored, "flagged": flagged}


def _one_line(record: dict) -> str:
    row = kernel_row(record)
    lat = record["lateness_us"]
    if record["part"] == "dumbbell":
        what = f"utilisation {row['utilization']:.3f}, drops {row['drops']}"
    else:
        what = (
            f"mptcp {row['mp_goodput_mbps']:.2f} Mb/s (shares {row['share_0']:.2f}/"
            f"{row['share_1']:.2f})"
            + (f", tcp {row['tcp_goodput_mbps']:.2f} Mb/s" if row["tcp"] else "")
        )
    return f"{what}; kernel {record['kernel']}, lateness p99 {lat['p99']:.1f} us"


def load_kernel(store: Path = KERNEL_DIR) -> list[dict]:
    """Every kernel run stored in `store/runs`, in name order (an unreadable file is an error
    naming it)."""
    import json

    out = []
    for path in sorted((store / "runs").glob("*.json")):
        try:
            record = json.loads(path.read_text())
            if record.get("experiment") != NAME or record.get("part") not in PARTS:
                raise ValueError("not a linux-fidelity kernel run")
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        record["file"] = path.name
        out.append(record)
    return out


def _counters(summary: dict, host: str) -> dict | None:
    """The kernel's counters of `host`'s namespace over the window (`testbed.nstat[host]`:
    counter name -> growth from the warm-up's end to the run's end, as nstat names them), or
    None when the testbed summary has none (runs stored before it gave them)."""
    nstat = (summary.get("testbed") or {}).get("nstat")
    if isinstance(nstat, dict) and isinstance(nstat.get(host), dict):
        return nstat[host]
    return None


def _sum_counters(counters: dict | None, names: Sequence[str]) -> int | None:
    if counters is None:
        return None
    present = [counters[n] for n in names if counters.get(n) is not None]
    return int(sum(present)) if present else 0


def kernel_row(record: dict) -> dict:
    """One stored kernel run as a row like :func:`rows`' (dumbbell) or :func:`mptcp_rows`'
    (MPTCP), with `profile` "kernel"; RTO/s and FR/s are null where the testbed gave no
    per-namespace counters."""
    s = record["summary"]
    window = record["duration_s"] - record["warmup_s"]
    links = {(link["name"], link["direction"]): link for link in s["links"]}
    flows = s["flows"]
    common = {
        "profile": "kernel",
        "seed": int(record["seed"]),
        "kernel": record["kernel"],
        "timing_flagged": bool(record["timing_flagged"]),
        "lateness_p99_us": record["lateness_us"]["p99"],
        "duration_s": record["duration_s"],
        "warmup_s": record["warmup_s"],
        "date": record["date"],
        "file": record.get("file"),
    }
    v = record["setting"]
    if record["part"] == "dumbbell":
        senders = sorted({f["src"] for f in flows})
        counters = [_counters(s, h) for h in senders]
        have = all(c is not None for c in counters)
        timeouts = sum(_sum_counters(c, TIMEOUT_COUNTERS) for c in counters) if have else None
        recoveries = sum(_sum_counters(c, RECOVERY_COUNTERS) for c in counters) if have else None
        bottleneck = links[("bottleneck", "forward")]
        return {
            "part": "dumbbell",
            "buffer": int(v["buffer"]),
            "n": int(v["n"]),
            "rtt_ms": float(v["rtt_ms"]),
            "cc": str(v["cc"]),
            **common,
            "utilization": sum(f["goodput_bps"] or 0 for f in flows) / CAPACITY_BPS,
            "busy": float(bottleneck["utilization"]),
            "drops": int(bottleneck["drops"]),
            "bytes_delivered": int(sum(f["bytes_delivered"] or 0 for f in flows)),
            "timeouts": timeouts,
            "fast_retransmits": recoveries,
            "rto_per_s": timeouts / window if timeouts is not None else None,
            "fr_per_s": recoveries / window if recoveries is not None else None,
        }
    by_name = {f["name"]: f for f in flows}
    paths = sorted((p for p in s.get("paths") or [] if p["flow"] == "mp"), key=lambda p: p["path"])
    shares = [p.get("wire_share") for p in paths]
    mp_sender = by_name["mp"]["src"]
    c = _counters(s, mp_sender)
    return {
        "part": "mptcp",
        "cc": str(v["cc"]),
        "tcp": int(v["tcp"]),
        **common,
        "mp_goodput_mbps": by_name["mp"]["goodput_bps"] / 1e6,
        "tcp_goodput_mbps": by_name["tcp"]["goodput_bps"] / 1e6 if "tcp" in by_name else None,
        "share_0": shares[0] if len(shares) > 0 else None,
        "share_1": shares[1] if len(shares) > 1 else None,
        "drops_p1": int(links[("p1", "forward")]["drops"]),
        "drops_p2": int(links[("p2", "forward")]["drops"]),
        "mp_timeouts": _sum_counters(c, TIMEOUT_COUNTERS),
    }


def kernel_frames(records: Sequence[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The stored kernel runs as two frames of rows: the dumbbell's and the MPTCP part's."""
    rows_ = [kernel_row(r) for r in records]
    dumbbell = pd.DataFrame([r for r in rows_ if r["part"] == "dumbbell"])
    mptcp = pd.DataFrame([r for r in rows_ if r["part"] == "mptcp"])
    return dumbbell, mptcp


def write_index(store: Path = KERNEL_DIR) -> Path:
    """`store/index.csv`: one row per stored kernel run (both parts), built from the JSON
    files, written atomically."""
    rows_ = [kernel_row(r) for r in load_kernel(store)]
    frame = pd.DataFrame(rows_)
    path = store / "index.csv"
    _write_atomically(path, frame.to_csv(index=False).encode())
    return path


def _window_of(frame: pd.DataFrame, sc: Settings) -> pd.DataFrame:
    if frame.empty:
        return frame
    return frame[(frame.duration_s == sc.duration) & (frame.warmup_s == sc.warmup)]


def _stats(values: pd.Series) -> tuple[float, float, float]:
    x = pd.to_numeric(values, errors="coerce").dropna()
    if x.empty:
        return (math.nan, math.nan, math.nan)
    return (float(x.mean()), float(x.min()), float(x.max()))


def versus_kernel(
    sim: pd.DataFrame,
    kernel: pd.DataFrame,
    setting: Sequence[str] = SETTING,
    measures: Sequence[str] = KERNEL_MEASURES,
) -> pd.DataFrame:
    """One row per setting of the simulated runs `sim` (:func:`rows` or :func:`mptcp_rows`):
    for the kernel (its runs that kept time), the linux and the rfc profile, each measure's
    mean, lowest and highest over seeds (`<measure>_<source>_mean|min|max`), the number of
    kernel runs (`kernel_runs`) and of flagged ones left out (`kernel_flagged`), and
    `kernel_status` ("measured" or "not measured")."""
    setting = list(setting)
    good = kernel[~kernel.timing_flagged.astype(bool)] if not kernel.empty else kernel
    out = []
    for key, group in sim.groupby(setting, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(setting, key))

        def of(frame: pd.DataFrame, row=row) -> pd.DataFrame:
            if frame.empty:
                return frame
            mask = pd.Series(True, index=frame.index)
            for k, value in row.items():
                mask &= frame[k] == value
            return frame[mask]

        kg, kall = of(good), of(kernel)
        row["kernel_runs"] = len(kg)
        row["kernel_flagged"] = len(kall) - len(kg)
        row["kernel_status"] = "measured" if len(kg) else "not measured"
        row["kernel_release"] = ", ".join(sorted(set(kg.kernel))) if len(kg) else ""
        for measure in measures:
            sources = {"kernel": kg, **{p: group[group.profile == p] for p in PROFILES}}
            for source, frame in sources.items():
                values = frame[measure] if measure in frame.columns else pd.Series(dtype=float)
                mean, lo, hi = _stats(values)
                row[f"{measure}_{source}_mean"] = mean
                row[f"{measure}_{source}_min"] = lo
                row[f"{measure}_{source}_max"] = hi
        out.append(row)
    return pd.DataFrame(out)


def _cell(mean: float, lo: float, hi: float, digits: int) -> str:
    if math.isnan(mean):
        return "—"
    return f"{mean:.{digits}f} [{lo:.{digits}f}–{hi:.{digits}f}]"


#: Column names of the settings in the kernel tables.
SETTING_LABELS = {"buffer": "buffer (pkts)", "n": "N", "rtt_ms": "RTT (ms)", "tcp": "TCP flow"}


def kernel_table(vs: pd.DataFrame, setting: Sequence[str], measures: dict[str, tuple[str, int]]):
    """The comparison with the kernel as text cells: per setting and measure, `mean [min–max]`
    of the kernel, linux and rfc; "not measured" where the kernel has no runs."""
    out = []
    for r in vs.to_dict("records"):
        row = {
            SETTING_LABELS.get(k, k): f"{r[k]:g}" if isinstance(r[k], float) else r[k]
            for k in setting
        }
        row["kernel runs"] = f"{r['kernel_runs']}" + (
            f" (+{r['kernel_flagged']} flagged)" if r["kernel_flagged"] else ""
        )
        for measure, (label, digits) in measures.items():
            for source in ("kernel", *PROFILES):
                if source == "kernel" and r["kernel_status"] != "measured":
                    text = "not measured"
                else:
                    text = _cell(
                        r[f"{measure}_{source}_mean"],
                        r[f"{measure}_{source}_min"],
                        r[f"{measure}_{source}_max"],
                        digits,
                    )
                row[f"{label} {source}"] = text
        out.append(row)
    return pd.DataFrame(out)


#: The dumbbell's measures in the kernel table: label and decimals.
KERNEL_TABLE_MEASURES = {
    "utilization": ("util", 3),
    "busy": ("busy", 3),
    "drops": ("drops", 1),
    "rto_per_s": ("RTO/s", 3),
    "fr_per_s": ("FR/s", 2),
}
#: The MPTCP part's measures in its table.
MPTCP_TABLE_MEASURES = {
    "mp_goodput_mbps": ("MPTCP Mb/s", 2),
    "share_0": ("share p1 (10 pkts)", 3),
    "share_1": ("share p2 (100 pkts)", 3),
    "tcp_goodput_mbps": ("TCP Mb/s", 2),
}


def kernel_markdown(table: pd.DataFrame) -> str:
    """A text table (:func:`kernel_table`) as GitHub-flavoured Markdown."""
    header = [str(c) for c in table.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in table.itertuples(index=False):
        lines.append(
            "| " + " | ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in r) + " |"
        )
    return "\n".join(lines) + "\n"


def _matches(mean: float, lo: float, hi: float, k_mean: float, tol: float, relative: bool) -> bool:
    """A profile's mean inside the kernel's range [lo, hi], or within `tol` of its mean."""
    if lo <= mean <= hi:
        return True
    return abs(mean - k_mean) <= (tol * abs(k_mean) if relative else tol)


def kernel_claims(vs: pd.DataFrame, mp: pd.DataFrame | None = None) -> list[Claim]:
    """The claims against the kernel, computed from the stored runs (none when no setting
    was measured): per profile, in how many settings its mean utilisation is inside the
    kernel's range or within the tolerance of its mean; in how many settings the linux
    profile is closer to the kernel than rfc (utilisation, drops, RTO/s and FR/s where the
    kernel's counters exist); for the MPTCP part, the subflows' shares and the goodputs."""
    out: list[Claim] = []
    measured = vs[vs.kernel_status == "measured"] if not vs.empty else vs
    m = len(measured)
    if m:
        tol = KERNEL_UTILISATION_TOLERANCE
        inside = {}
        for p in PROFILES:
            inside[p] = sum(
                _matches(
                    r[f"utilization_{p}_mean"],
                    r["utilization_kernel_min"],
                    r["utilization_kernel_max"],
                    r["utilization_kernel_mean"],
                    tol,
                    True,
                )
                for r in measured.to_dict("records")
            )
        strictly = {
            p: int(
                (
                    (measured[f"utilization_{p}_mean"] >= measured.utilization_kernel_min)
                    & (measured[f"utilization_{p}_mean"] <= measured.utilization_kernel_max)
                ).sum()
            )
            for p in PROFILES
        }
        releases = ", ".join(
            sorted({x for r in measured.kernel_release for x in r.split(", ") if x})
        )
        out.append(
            Claim(
                "The linux profile's utilisation matches the kernel's in every measured setting",
                f"the dumbbell grid on Linux {releases} ({m} settings measured of {len(vs)})",
                "the kernel's mean and range over its seeds",
                f"linux: inside or within {100 * tol:g} % in {inside['linux']} of {m} settings "
                f"({strictly['linux']} inside the kernel's range); rfc: inside or within "
                f"{100 * tol:g} % in {inside['rfc']} of {m} ({strictly['rfc']} inside the range)",
                f"inside the kernel's [min, max] or within {100 * tol:g} % (relative) of its mean",
                inside["linux"] == m,
                "Each profile's mean over its seeds against the kernel's runs of the same "
                "setting and seeds (runs whose emulator did not keep time left out). The "
                "kernel's payload ceiling is the linux profile's (1448 of 1500 bytes).",
            )
        )
        closer = []
        won_util = None
        for measure, label in (
            ("utilization", "utilisation"),
            ("drops", "bottleneck drops"),
            ("rto_per_s", "RTO/s"),
            ("fr_per_s", "FR/s"),
        ):
            k = measured[f"{measure}_kernel_mean"]
            usable = k.notna()
            if not usable.any():
                closer.append(f"{label}: no kernel counters")
                continue
            dl = (measured[f"{measure}_linux_mean"] - k).abs()[usable]
            dr = (measured[f"{measure}_rfc_mean"] - k).abs()[usable]
            wins, ties = int((dl < dr).sum()), int((dl == dr).sum())
            closer.append(
                f"{label}: {wins} of {int(usable.sum())}" + (f" ({ties} ties)" if ties else "")
            )
            if measure == "utilization":
                won_util = (wins, int(usable.sum()))
        assert won_util is not None
        out.append(
            Claim(
                "The linux profile is closer to the kernel than the rfc profile",
                f"the measured settings of the dumbbell grid ({m})",
                "closer in most settings",
                "linux profile closer to the kernel than rfc in " + "; ".join(closer),
                "distance of the means; utilisation decides the verdict (more than half)",
                2 * won_util[0] > won_util[1],
                "Closer: the absolute difference between the profile's mean and the kernel's "
                "mean over seeds is smaller; equal distances count for neither.",
            )
        )
    if mp is not None and not mp.empty:
        mm = mp[mp.kernel_status == "measured"]
        if len(mm):
            parts = []
            all_linux = True
            for p in PROFILES:
                share_ok = sum(
                    _matches(
                        r[f"share_0_{p}_mean"],
                        r["share_0_kernel_min"],
                        r["share_0_kernel_max"],
                        r["share_0_kernel_mean"],
                        SHARE_TOLERANCE,
                        False,
                    )
                    for r in mm.to_dict("records")
                )
                mp_ok = sum(
                    _matches(
                        r[f"mp_goodput_mbps_{p}_mean"],
                        r["mp_goodput_mbps_kernel_min"],
                        r["mp_goodput_mbps_kernel_max"],
                        r["mp_goodput_mbps_kernel_mean"],
                        GOODPUT_TOLERANCE,
                        True,
                    )
                    for r in mm.to_dict("records")
                )
                with_tcp = mm[mm.tcp == 1]
                tcp_ok = sum(
                    _matches(
                        r[f"tcp_goodput_mbps_{p}_mean"],
                        r["tcp_goodput_mbps_kernel_min"],
                        r["tcp_goodput_mbps_kernel_max"],
                        r["tcp_goodput_mbps_kernel_mean"],
                        GOODPUT_TOLERANCE,
                        True,
                    )
                    for r in with_tcp.to_dict("records")
                )
                parts.append(
                    f"{p}: subflow shares in {share_ok} of {len(mm)}, MPTCP goodput in "
                    f"{mp_ok} of {len(mm)}, TCP goodput in {tcp_ok} of {len(with_tcp)}"
                )
                if p == "linux":
                    all_linux = share_ok == len(mm) and mp_ok == len(mm) and tcp_ok == len(with_tcp)
            out.append(
                Claim(
                    "MPTCP over two paths of different buffers, alone and beside a TCP flow: "
                    "the linux profile matches the kernel",
                    f"experiments/linux-fidelity/mptcp.toml ({len(mm)} settings measured of "
                    f"{len(mp)})",
                    "the kernel's per-subflow shares, MPTCP and TCP goodput",
                    "; ".join(parts),
                    f"inside the kernel's range, or within ±{SHARE_TOLERANCE:g} (share) and "
                    f"±{100 * GOODPUT_TOLERANCE:g} % (goodput) of its mean",
                    all_linux,
                    "A subflow's share is its part of the connection's bytes: on the kernel "
                    "the packets the emulator delivered per subflow address pair (wire_share), "
                    "in the simulator each path's throughput over the connection's.",
                )
            )
    return out


def kernel_utilization_figure(vs: pd.DataFrame):
    """Per measured setting: each profile's mean utilisation (bars: lowest to highest seed)
    against the kernel's mean (bars: its range), with the diagonal and the tolerance band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = vs[vs.kernel_status == "measured"]
    fig, ax = plt.subplots(figsize=(5.8, 5.4))
    if measured.empty:
        ax.text(0.5, 0.5, "no kernel runs stored", ha="center", va="center")
        ax.set_axis_off()
        return fig
    cols = [
        c
        for c in measured.columns
        if c.startswith("utilization_") and c.endswith(("_min", "_mean", "_max"))
    ]
    lo = float(np.nanmin(measured[cols].to_numpy(dtype=float))) - 0.02
    hi = max(1.0, float(np.nanmax(measured[cols].to_numpy(dtype=float))) + 0.01)
    line = np.linspace(lo, hi, 50)
    tol = KERNEL_UTILISATION_TOLERANCE
    ax.plot(line, line, "k-", lw=1, label="equal")
    ax.fill_between(
        line, line * (1 - tol), line * (1 + tol), color="0.88", label=f"±{100 * tol:g} %"
    )
    x = measured.utilization_kernel_mean.to_numpy(dtype=float)
    xerr = error_bars(x, measured.utilization_kernel_min, measured.utilization_kernel_max)
    for profile, style in (("linux", dict(marker="o")), ("rfc", dict(marker="s", mfc="white"))):
        y = measured[f"utilization_{profile}_mean"].to_numpy(dtype=float)
        yerr = error_bars(
            y, measured[f"utilization_{profile}_min"], measured[f"utilization_{profile}_max"]
        )
        ax.errorbar(
            x, y, xerr=xerr, yerr=yerr, ls="none", capsize=2, label=f"{profile} profile", **style
        )
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("utilisation, Linux kernel (mean, range over seeds)")
    ax.set_ylabel("utilisation, plait profile (mean, range)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(f"One point per measured setting ({len(measured)})", fontsize=10)
    fig.tight_layout()
    return fig


# ---- The MPTCP part, simulated -------------------------------------------------------------


def mptcp_sweep(
    ccs: Sequence[str] = MPTCP_CCS,
    tcps: Sequence[int] = MPTCP_TCP,
    profiles: Sequence[str] = PROFILES,
    duration: float = 30.0,
    warmup: float = 5.0,
    seeds: list[int] | int = 10,
    out: Path | None = None,
    fresh: bool = False,
    progress: ProgressSink | None = None,
    **where,
) -> tuple[pd.DataFrame, list[Summary]]:
    """The MPTCP part in the simulator: one sweep with the TCP flow, one without (the file
    without the flow "tcp"), over the controllers and profiles; one row per run
    (:func:`mptcp_rows`) and the sweeps' summaries."""
    from plait.experiments import sweep_all

    frames, summaries = [], []
    for tcp in tcps:
        zipped = {"flow.mp.cc": list(ccs)}
        if tcp:
            zipped["flow.tcp.cc"] = [cc.split(":", 1)[1] for cc in ccs]
        result = sweep_all(
            f"{NAME} (MPTCP)",
            mptcp_scenario(tcp),
            {
                "tcp.profile": list(profiles),
                "simulation.duration": [f"{duration:g}s"],
                "simulation.warmup": [f"{warmup:g}s"],
            },
            zip=zipped,
            seeds=seeds,
            tables=("flows", "links", "paths"),
            out=None if out is None else out / f"tcp{tcp}",
            fresh=fresh,
            progress=progress,
            **where,
        )
        frames.append(
            mptcp_rows(result.table("flows"), result.table("links"), result.table("paths"), tcp)
        )
        summaries.append(result.summary)
    return pd.concat(frames, ignore_index=True), summaries


def mptcp_rows(
    flows: pd.DataFrame, links: pd.DataFrame, paths: pd.DataFrame, tcp: int
) -> pd.DataFrame:
    """One row per simulated MPTCP run: profile, cc, tcp, seed; the connection's and the TCP
    flow's goodput (Mb/s), each subflow's share of the connection's throughput, and the drops
    at each bottleneck."""
    out = []
    for run, f in flows.groupby("run", sort=False):
        by = f.set_index("name")
        p = paths[(paths.run == run) & (paths.flow == "mp")].sort_values("path")
        total = float(p.throughput_bps.sum())
        shares = (p.throughput_bps / total).tolist() if total > 0 else [math.nan, math.nan]
        lk = links[(links.run == run) & (links.direction == "forward")].set_index("name")
        out.append(
            {
                "part": "mptcp",
                "profile": str(by["tcp.profile"].iloc[0]),
                "cc": str(by["flow.mp.cc"].iloc[0]),
                "tcp": int(tcp),
                "seed": int(by["seed"].iloc[0]),
                "mp_goodput_mbps": float(by.loc["mp", "goodput_bps"]) / 1e6,
                "tcp_goodput_mbps": float(by.loc["tcp", "goodput_bps"]) / 1e6 if tcp else math.nan,
                "share_0": shares[0],
                "share_1": shares[1],
                "drops_p1": int(lk.loc["p1", "drops"]),
                "drops_p2": int(lk.loc["p2", "drops"]),
            }
        )
    frame = pd.DataFrame(out)
    return _ordered_mptcp(frame)


def _ordered_mptcp(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return frame
    keys = {
        "cc": lambda s: s.map({c: i for i, c in enumerate(MPTCP_CCS)}).fillna(len(MPTCP_CCS)),
        "profile": lambda s: s.map({p: i for i, p in enumerate(PROFILES)}).fillna(len(PROFILES)),
    }
    by = [c for c in ("cc", "tcp", "profile", "seed") if c in frame.columns]
    return frame.sort_values(
        by, key=lambda s: keys[s.name](s) if s.name in keys else s, kind="stable"
    ).reset_index(drop=True)


#: The files :func:`write_kernel_outputs` writes.
KERNEL_OUTPUT_FILES = {
    "csv": "vs_kernel.csv",
    "markdown": "vs_kernel.md",
    "png": "kernel_utilization.png",
    "mptcp_runs": "mptcp_runs.csv",
    "mptcp_csv": "mptcp_vs_kernel.csv",
    "mptcp_markdown": "mptcp_vs_kernel.md",
}


def write_kernel_outputs(
    vs: pd.DataFrame, mp_runs: pd.DataFrame, mp_vs: pd.DataFrame, out_dir: Path
):
    """The comparison with the kernel: per-setting CSV and Markdown of the dumbbell and the
    MPTCP part, the MPTCP runs, and the utilisation figure; all or none."""
    outputs = Outputs()
    folder = outputs.folder("--out", out_dir, tuple(KERNEL_OUTPUT_FILES.values()))
    names = KERNEL_OUTPUT_FILES
    with outputs.writing() as tx:
        tx.write_bytes(folder.file(names["csv"]), vs.to_csv(index=False).encode())
        tx.write_text(
            folder.file(names["markdown"]),
            kernel_markdown(kernel_table(vs, SETTING, KERNEL_TABLE_MEASURES)),
        )
        tx.write_with(
            folder.file(names["png"]), lambda p: save_figure(kernel_utilization_figure(vs), p)
        )
        tx.write_bytes(folder.file(names["mptcp_runs"]), mp_runs.to_csv(index=False).encode())
        tx.write_bytes(folder.file(names["mptcp_csv"]), mp_vs.to_csv(index=False).encode())
        tx.write_text(
            folder.file(names["mptcp_markdown"]),
            kernel_markdown(kernel_table(mp_vs, MPTCP_SETTING, MPTCP_TABLE_MEASURES)),
        )
    return {kind: folder.path / name for kind, name in names.items()}


def kernel_main(sc: Settings, only: Sequence[str] = (), say=print) -> int:
    """`plait reproduce linux-fidelity --kernel`: the kernel side of the grid of `sc` at its
    run length and seeds (the simulated side's settings), parts chosen by `only`, into its
    store (`sc.kernel_store`, the committed one by default). Returns the exit code (2 with one
    line when not root or a bad --only)."""
    import os
    import sys as _sys

    from plait.testbed import Refusal

    try:
        points = kernel_points(sc, parse_only(only))
    except KernelUsage as e:
        print(f"plait reproduce: {e}", file=_sys.stderr)
        return 2
    if os.geteuid() != 0:
        print(
            "plait reproduce: --kernel runs the grid on this machine's kernel and needs root "
            "(network namespaces, TUN devices); the report reads the stored runs without it",
            file=_sys.stderr,
        )
        return 2
    if not points:
        print("plait reproduce: --only: no setting of the grid matches", file=_sys.stderr)
        return 2
    store = sc.kernel_store
    try:
        counts = measure_kernel(points, store, say=say, run=sc.kernel_run)
    except Refusal as e:
        print(f"plait reproduce: {e}", file=_sys.stderr)
        return 2
    except KeyboardInterrupt:
        # The runs that ended are stored whole; the one in progress was cleaned up by the
        # testbed and nothing of it written. 130 = 128 + SIGINT, as every plait command.
        print(
            "plait reproduce: interrupted; the kernel runs that ended are stored in "
            f"{store / 'runs'}, the next call measures the others",
            file=_sys.stderr,
        )
        return 130
    say(
        f"{counts['measured']} kernel runs measured ({counts['flagged']} flagged), "
        f"{counts['stored']} stored earlier: {store / 'runs'}"
    )
    return 0


# ---- The experiment ------------------------------------------------------------------------


def measure(sc: Settings, out: Path, fresh: bool = False, progress=None, **where):
    """Both parts' sweeps (the dumbbell's stored in `out`, the MPTCP part's beside it in
    `out`'s sibling runs-mptcp) and the kernel runs of the same run length read from
    `sc.kernel_store`; the data by name and the sweeps' summaries by name."""
    common = dict(
        duration=sc.duration,
        warmup=sc.warmup,
        seeds=sc.seeds,
        fresh=fresh,
        progress=progress,
        **where,
    )
    runs, dumbbell = sweep(sc.ns, sc.buffers, sc.rtts_ms, sc.ccs, PROFILES, out=out, **common)
    kernel_runs, kernel_mptcp = kernel_frames(load_kernel(sc.kernel_store))
    windows = sorted(
        {
            (r.duration_s, r.warmup_s)
            for f in (kernel_runs, kernel_mptcp)
            if not f.empty
            for r in f.itertuples()
        }
    )
    kernel_runs, kernel_mptcp = _window_of(kernel_runs, sc), _window_of(kernel_mptcp, sc)
    mp_runs, mp_summaries = mptcp_sweep(
        sc.mptcp_ccs, sc.mptcp_tcps, PROFILES, out=out.parent / "runs-mptcp", **common
    )
    data = {
        "runs": runs,
        "summary": summarize(runs),
        "kernel_runs": kernel_runs,
        "kernel_mptcp": kernel_mptcp,
        "windows": windows,
        "vs": versus_kernel(runs, kernel_runs),
        "mp_runs": mp_runs,
        "mp_vs": versus_kernel(mp_runs, kernel_mptcp, MPTCP_SETTING, MPTCP_MEASURES),
    }
    summaries = {"dumbbell": dumbbell}
    for tcp, summary in zip(sc.mptcp_tcps, mp_summaries):
        summaries[f"mptcp tcp{tcp}"] = summary
    return data, summaries


def write(data: dict, sc: Settings, out: Path) -> dict[str, Path]:
    """The dumbbell's files (:func:`write_outputs`), then the comparison with the kernel
    (:func:`write_kernel_outputs`, as `kernel_<kind>`)."""
    files = write_outputs(data["runs"], data["summary"], out)
    kernel_files = write_kernel_outputs(data["vs"], data["mp_runs"], data["mp_vs"], out)
    files.update({f"kernel_{kind}": path for kind, path in kernel_files.items()})
    return files


def _measured(vs: pd.DataFrame) -> int:
    return int((vs.kernel_status == "measured").sum())


def figures(data: dict, sc: Settings) -> list[Figure]:
    summary, vs = data["summary"], data["vs"]
    out = [
        Figure(
            "Utilisation against N, linux and rfc",
            "Aggregate goodput over the 10 Mb/s capacity, per base RTT and congestion "
            "controller, for each buffer (colour); linux profile solid with filled markers, "
            "rfc dashed with open ones; markers are means over seeds, bars run from the lowest "
            "to the highest seed.",
            figure_png(utilization_figure(summary)),
        ),
        Figure(
            "Utilisation, linux against rfc",
            "One point per setting (buffer, N, RTT, cc): mean utilisation with the linux "
            f"profile against the rfc profile; the band is ±{100 * SAME_UTILISATION:g} %.",
            figure_png(scatter_figure(summary)),
        ),
        Figure(
            "Retransmission timeouts per second",
            "Timeouts of all flows per second of the measurement window (mean over seeds); "
            "linux solid, rfc dashed.",
            figure_png(rto_figure(summary)),
        ),
    ]
    if _measured(vs):
        out.insert(
            0,
            Figure(
                "Utilisation: the kernel against the two profiles",
                "One point per measured setting: each profile's mean utilisation (bars: its "
                "lowest to highest seed) against the kernel's mean (bars: the kernel's range "
                f"over its runs); the band is ±{100 * KERNEL_UTILISATION_TOLERANCE:g} %.",
                figure_png(kernel_utilization_figure(vs)),
            ),
        )
    return out


def tables(data: dict, sc: Settings) -> list:
    return [
        (
            "The kernel beside the linux and rfc profiles per setting: mean [lowest–highest] "
            "over seeds",
            kernel_table(data["vs"], SETTING, KERNEL_TABLE_MEASURES),
        ),
        (
            "MPTCP over two paths (p1 10 packets, p2 100), alone (tcp 0) and beside a TCP "
            "flow on p1 (tcp 1): mean [lowest–highest] over seeds",
            kernel_table(data["mp_vs"], MPTCP_SETTING, MPTCP_TABLE_MEASURES),
        ),
        (
            "linux and rfc profiles per setting (means over seeds)",
            report_table(side_by_side(data["summary"])),
        ),
    ]


def setup(data: dict, sc: Settings) -> str:
    vs, mp_vs, windows = data["vs"], data["mp_vs"], data["windows"]
    stored_windows = (
        ", ".join(f"{d:g} s with {w:g} s warm-up" for d, w in windows) if windows else "none"
    )
    return (
        "Packet level (plait's simulator, scenario experiments/linux-fidelity/scenario.toml): "
        f"N = {', '.join(map(str, sc.ns))} bulk TCP flows from one host to another through a "
        "dumbbell: 100 Mb/s access links of 1 ms and a 10 Mb/s bottleneck whose delay makes a "
        f"base RTT of {' or '.join(f'{r:g}' for r in sc.rtts_ms)} ms. The bottleneck is a "
        f"DropTail FIFO of {', '.join(map(str, sc.buffers))} packets whose limit counts the "
        "packet in service, as a Linux qdisc does (limit_includes_service = true). Flows start "
        "uniformly within the first 100 ms. Congestion control Reno or CUBIC, set explicitly "
        "in every run; everything else comes from the TCP profile: rfc (the RFC defaults: mss "
        "1460 with 40 header bytes, no delayed ACKs, RFC 6675 recovery, no jitter) or linux "
        "(mss 1448 with 52 header bytes, ssthresh from cwnd, PRR, RACK-TLP, Linux delayed "
        "ACKs with SACK compression, up to 50 us of host jitter per packet, HyStart with "
        "CUBIC); both have a 200 ms minimum RTO.\n\n"
        f"Runs of {sc.duration:g} s, the first {sc.warmup:g} s discarded, over "
        f"{len(sc.seeds)} seeds: {packet_runs(sc)} runs. Utilisation is the flows' "
        "goodput (payload delivered in order) over the capacity; RTOs and fast retransmits "
        "are counted over all flows per second of the measurement window; distinct is the "
        "number of different results (payload bytes delivered) among the seeds.\n\n"
        "The kernel: the same scenario files, overrides and seeds run on Linux through "
        "`plait testbed` (`plait reproduce linux-fidelity --kernel`, root), one run per setting "
        "and seed (the kernel has no profile), stored in experiments/linux-fidelity/kernel/. "
        f"Runs of this length stored: {len(data['kernel_runs'])} of the dumbbell "
        f"({_measured(vs)} of {len(vs)} settings measured), {len(data['kernel_mptcp'])} of the "
        f"MPTCP part ({_measured(mp_vs)} of {len(mp_vs)}); run lengths stored: "
        f"{stored_windows}. A setting without kernel "
        "runs says “not measured”, and the claims against the kernel appear only when some "
        "setting was measured. Runs whose emulator did not keep time (p99 lateness above a "
        "tenth of a packet time) are counted but left out. The kernel's RTO/s and FR/s come "
        "from its per-namespace counters where the testbed gives them (else —).\n\n"
        "MPTCP part (experiments/linux-fidelity/mptcp.toml): one MPTCP connection over two "
        "disjoint 10 Mb/s paths of 20 ms base RTT whose DropTail buffers are 10 (p1) and 100 "
        "(p2) packets, subflows uncoupled Reno or CUBIC (the kernel has no coupled "
        "controller), with and without one TCP flow of the same controller sharing p1; per "
        "setting the connection's goodput, each subflow's share of its bytes and the TCP "
        "flow's goodput. The first three claims compare the two profiles with each other; "
        "the “expected” column states the expectation under test. The Linux testbed numbers "
        "of the study that motivated this comparison are not included."
    )


def runs_extra(data: dict, summaries: dict) -> dict:
    mp = [s for name, s in summaries.items() if name.startswith("mptcp")]
    return {
        "MPTCP packet runs (run now, stored earlier)": (
            f"{sum(m.total for m in mp)} ({sum(m.done for m in mp)}, {sum(m.reused for m in mp)})"
        ),
        "kernel runs (this run length)": (
            f"{len(data['kernel_runs'])} dumbbell, {len(data['kernel_mptcp'])} MPTCP"
        ),
        "where": summaries["dumbbell"].cluster or "nothing to run",
    }


DECLARED = Declared(
    name=NAME,
    title=TITLE,
    paper=PAPER,
    settings=settings,
    runs=lambda sc: packet_runs(sc) + mptcp_packet_runs(sc),
    measure=measure,
    write=write,
    claims=(
        lambda data, sc: claims(data["summary"]),
        lambda data, sc: kernel_claims(data["vs"], data["mp_vs"]),
    ),
    figures=figures,
    tables=tables,
    setup=setup,
    runs_extra=runs_extra,
)

EXPERIMENT = register_declared(DECLARED)
