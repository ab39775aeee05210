"""`plait reproduce linux-fidelity`: plait's `linux` and `rfc` TCP profiles (docs/linux.md)
side by side on N parallel bulk TCP flows through one DropTail bottleneck.

The grid is a testbed's: a 10 Mb/s bottleneck whose limit counts the packet in service (as a
Linux qdisc does), N = 1, 3, 6, 10 flows, buffers of 5, 20 and 100 packets, base RTTs of 20
and 100 ms, Reno and CUBIC, each with both profiles, over the seeds given (the full version
uses 10: 96 configurations x 10 seeds = 960 runs). Per setting it reports the aggregate
utilisation (goodput / capacity) over seeds, retransmission timeouts and fast retransmits per
second, and how many different results the seeds give.

There is no measured Linux data in this repository: the claims compare the two profiles with
each other. The Linux testbed numbers of the study that motivated this comparison are not
included, and no value here stands in for them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from plait.experiments import Experiment, Options, error_bars, register
from plait.output import FolderTarget, Outputs
from plait.report import Claim, Figure, Section, figure_png
from plait.sweeps import ProgressSink, Summary

EXPERIMENT_DIR = Path(__file__).resolve().parents[3] / "experiments" / "linux-fidelity"
SCENARIO = EXPERIMENT_DIR / "scenario.toml"

NAME = "linux-fidelity"
TITLE = "TCP as Linux runs it: the linux and rfc profiles"
PAPER = (
    "No paper: plait's `linux` TCP profile against its `rfc` profile (docs/linux.md). The "
    "Linux testbed measurements of the study that motivated this comparison are not included "
    "in this repository; nothing here is a measured Linux value."
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


@dataclass(frozen=True)
class Scale:
    """Run length and seeds of one version of the experiment."""

    duration: float
    warmup: float
    seeds: list[int]


def scale(options: Options) -> Scale:
    """30 s runs with a 5 s warm-up over the seeds given, or (quick) 15 s runs over the first
    two seeds. The warm-up stays 5 s: the first loss episode of a flow that overshoots in slow
    start can hold out-of-order data that is delivered only seconds later, which would count
    in a window that starts earlier (goodput above the payload ceiling)."""
    if options.quick:
        return Scale(15.0, 5.0, list(options.seeds[:2]))
    return Scale(30.0, 5.0, list(options.seeds))


def packet_runs(options: Options) -> int:
    settings = len(NS) * len(BUFFERS) * len(RTTS_MS) * len(CCS) * len(PROFILES)
    return settings * len(scale(options).seeds)


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
    # A run's result as a whole: what it delivered, dropped and repaired. Two seeds gave the
    # same result when all of these agree.
    out["result"] = (
        out["bytes_delivered"].astype(str)
        + "/"
        + out["drops"].astype(str)
        + "/"
        + out["fast_retransmits"].astype(str)
        + "/"
        + out["timeouts"].astype(str)
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
            "every seed distinct in every setting (payload bytes delivered)",
            seeds > 1 and len(short) == 0,
            "Two runs count as the same result when their flows delivered the same number of "
            "payload bytes in the window. Both profiles draw the flows' start times from the "
            "seed; the linux profile adds up to 5 us of host jitter per packet.",
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


def _save(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110, format="png", bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)


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
        tx.write_with(folder.file(names["png"]), lambda p: _save(utilization_figure(summary), p))
        tx.write_with(folder.file(names["rto"]), lambda p: _save(rto_figure(summary), p))
    return {kind: folder.path / name for kind, name in names.items()}


# ---- The experiment ------------------------------------------------------------------------


def reproduce(options: Options) -> Section:
    sc = scale(options)
    started = time.perf_counter()
    runs, summary_of_sweep = sweep(
        NS,
        BUFFERS,
        RTTS_MS,
        CCS,
        PROFILES,
        duration=sc.duration,
        warmup=sc.warmup,
        seeds=sc.seeds,
        out=options.out / "runs",
        fresh=options.fresh,
        progress=options.progress,
        **options.where,
    )
    summary = summarize(runs)
    files = write_outputs(runs, summary, options.out)
    side = side_by_side(summary)
    figures = [
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
    setup = (
        "Packet level (plait's simulator, scenario experiments/linux-fidelity/scenario.toml): "
        f"N = {', '.join(map(str, NS))} bulk TCP flows from one host to another through a "
        "dumbbell: 100 Mb/s access links of 1 ms and a 10 Mb/s bottleneck whose delay makes a "
        f"base RTT of {' or '.join(f'{r:g}' for r in RTTS_MS)} ms. The bottleneck is a "
        f"DropTail FIFO of {', '.join(map(str, BUFFERS))} packets whose limit counts the "
        "packet in service, as a Linux qdisc does (limit_includes_service = true). Flows start "
        "uniformly within the first 100 ms. Congestion control Reno or CUBIC, set explicitly "
        "in every run; everything else comes from the TCP profile: rfc (the RFC defaults: mss "
        "1460 with 40 header bytes, no delayed ACKs, RFC 6675 recovery, no jitter) or linux "
        "(mss 1448 with 52 header bytes, ssthresh from cwnd, PRR, RACK-TLP, Linux delayed "
        "ACKs with SACK compression, up to 5 us of host jitter per packet, HyStart with "
        "CUBIC); both have a 200 ms minimum RTO.\n\n"
        f"Runs of {sc.duration:g} s, the first {sc.warmup:g} s discarded, over "
        f"{len(sc.seeds)} seeds: {packet_runs(options)} runs. Utilisation is the flows' "
        "goodput (payload delivered in order) over the capacity; RTOs and fast retransmits "
        "are counted over all flows per second of the measurement window; distinct is the "
        "number of different results (payload bytes delivered) among the seeds.\n\n"
        "There is no measured Linux data in this repository. The claims compare the two "
        "profiles with each other; the Linux testbed numbers of the study that motivated "
        "this comparison are not included, and the “expected” column states the "
        "expectation under test, not a measurement."
    )
    return Section(
        name=NAME,
        title=TITLE,
        paper=PAPER,
        setup=setup,
        claims=claims(summary),
        figures=figures,
        tables=[("linux and rfc profiles per setting (means over seeds)", report_table(side))],
        runs={
            "packet runs": summary_of_sweep.total,
            "run now": summary_of_sweep.done,
            "stored earlier": summary_of_sweep.reused,
            "failed": summary_of_sweep.failed,
            "seeds": ", ".join(str(s) for s in sc.seeds),
            "where": summary_of_sweep.cluster or "nothing to run",
            "wall time": f"{time.perf_counter() - started:.0f} s",
            "results": str(options.out / "runs"),
            "tables and figures": ", ".join(str(p) for p in files.values()),
        },
    )


EXPERIMENT = register(
    Experiment(
        name=NAME,
        title=TITLE,
        paper=PAPER,
        reproduce=reproduce,
        runs=packet_runs,
    )
)
