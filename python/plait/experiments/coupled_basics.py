"""`plait reproduce coupled-basics`: what every coupled multipath controller must do
(reference `multipath_cc.md` §2 and §6; RFC 6356 §1's three goals), on plait's LIA, OLIA,
BALIA, wVegas and MPFAST against uncoupled subflows:

- **shared bottleneck** (`shared.toml`, reference §6 T2): a two-subflow connection takes about
  what one single-path flow of its ancestor takes (goodput ratio ≈ 1); uncoupled Reno ≈ 2;
- **disjoint paths** (`disjoint.toml`, T3 and T4): with path 2 shared by two Reno flows, the
  connection pools the paths (at least what one TCP gets on the better path, RFC 6356 goal 1)
  and moves traffic off the congested path (a smaller share there than uncoupled Reno);
- **Khalili et al.'s scenario A** (`khalili.toml`, reference §2.2 O3): upgrading the type-1
  users from TCP to MPTCP with LIA lowers the type-2 users' throughput; OLIA much less.

The references give properties, not measurements: every tolerance is ours unless the
reference states one (T2's [0.8, 1.25]).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from plait.experiments import Options, error_bars, sweep_all
from plait.experiments.framework import Declared, register_declared, save_figure
from plait.experiments.framework import spread as _spread
from plait.output import FolderTarget, Outputs
from plait.report import Claim, Figure, figure_png

EXPERIMENT_DIR = Path(__file__).resolve().parents[3] / "experiments" / "coupled-basics"
SHARED = EXPERIMENT_DIR / "shared.toml"
DISJOINT = EXPERIMENT_DIR / "disjoint.toml"
KHALILI = EXPERIMENT_DIR / "khalili.toml"

NAME = "coupled-basics"
TITLE = "Coupled multipath controllers: fairness, pooling and Pareto-optimality"
PAPER = (
    "RFC 6356 (LIA) §1 design goals; R. Khalili, N. Gast, M. Popovic, J.-Y. Le Boudec, "
    "“MPTCP is not Pareto-optimal: performance issues and a possible solution”, IEEE/ACM ToN "
    "2013 (OLIA, scenario A); properties as stated in reference multipath_cc.md §2 and §6."
)

#: The connection's controller and its single-path ancestor (reference §6 T1, T2).
PAIRS = {
    "lia": "uncoupled:reno",
    "olia": "uncoupled:reno",
    "balia": "uncoupled:reno",
    "wvegas": "wvegas",
    "mpfast": "uncoupled:fast",
    "uncoupled:reno": "uncoupled:reno",
}
COUPLED = ("lia", "olia", "balia", "wvegas", "mpfast")
#: Reference §6 T2's tolerance on the shared-bottleneck goodput ratio.
FAIR_RANGE = (0.8, 1.25)
#: Ours: uncoupled Reno with two subflows takes two shares.
UNCOUPLED_RANGE = (1.6, 2.5)
#: Ours: RFC 6356 goal 1, at least this fraction of what one TCP gets alone on path 1.
POOLING_FRACTION = 0.9
#: Disjoint paths: capacity of each (bit/s); payload over wire bytes of a full subflow segment:
#: an mss of 1460 with 40 header bytes, the 24-byte DSS option inside the mss (docs/multipath.md).
PATH_BPS = 10e6
PAYLOAD_RATIO = (1460 - 24) / 1500
#: Khalili scenario A: users of each type, X's rates (C1/C2 = 1 and 2), T's rate.
USERS = 5
X_RATES = {"10Mbps": 10e6, "20Mbps": 20e6}
T_BPS = 10e6
KHALILI_CCS = ("uncoupled:reno", "lia", "olia", "balia")
#: Ours: OLIA keeps the type-2 users within this relative drop; LIA's drop is "measurable"
#: above it.
PARETO_DROP = 0.05
TABLES = ("flows", "paths")


@dataclass(frozen=True)
class Settings:
    """Run length (s), warm-up discarded (s) and seeds; the defaults are the full version's."""

    duration: float = 120.0
    warmup: float = 20.0
    seeds: list[int] = field(default_factory=lambda: [1, 2, 3, 4, 5])


def settings(options: Options) -> Settings:
    """120 s runs with a 20 s warm-up over the seeds given, or (quick) 40 s runs with 10 s of
    warm-up over the first two seeds."""
    if options.quick:
        return Settings(40.0, 10.0, list(options.seeds[:2]))
    return Settings(seeds=list(options.seeds))


def packet_runs(sc: Settings) -> int:
    cases = len(PAIRS) + len(PAIRS) + len(KHALILI_CCS) * len(X_RATES)
    return cases * len(sc.seeds)


def _length(sc: Settings) -> dict[str, list]:
    return {"simulation.duration": [f"{sc.duration:g}s"], "simulation.warmup": [f"{sc.warmup:g}s"]}


def _x_only() -> list[dict]:
    """The baseline type-1 user: one subflow, on X."""
    return [{"route": ["type1_host", "r0", "rx", "server_x", "server"]}]


# ---- Runs ----------------------------------------------------------------------------------


def _concat(results: list, table: str) -> pd.DataFrame:
    return pd.concat([r.table(table) for r in results], ignore_index=True)


def run_all(sc: Settings, out: Path, fresh: bool = False, progress=None, **where) -> dict:
    """The sweeps (one per single-path ancestor for the shared bottleneck, one for the disjoint
    paths, the baseline and the upgrade for scenario A); returns their results by case."""
    common = dict(seeds=sc.seeds, tables=TABLES, fresh=fresh, progress=progress, **where)
    shared = []
    for ancestor in dict.fromkeys(PAIRS.values()):
        ccs = [cc for cc, a in PAIRS.items() if a == ancestor]
        grid = {**_length(sc), "flow.mp.cc": ccs, "flow.single.cc": [ancestor]}
        folder = out / "shared" / ancestor.replace(":", "-")
        shared.append(sweep_all(NAME, SHARED, grid, out=folder, **common))
    disjoint = sweep_all(
        NAME, DISJOINT, {**_length(sc), "flow.mp.cc": list(PAIRS)}, out=out / "disjoint", **common
    )
    rates = {"link.x.rate": list(X_RATES)}
    baseline = {"flow.type1.cc": [KHALILI_CCS[0]], "flow.type1.subflows": [_x_only()]}
    khalili = [
        sweep_all(
            NAME, KHALILI, {**_length(sc), **rates, **baseline}, out=out / "khalili-tcp", **common
        ),
        sweep_all(
            NAME,
            KHALILI,
            {**_length(sc), **rates, "flow.type1.cc": list(KHALILI_CCS[1:])},
            out=out / "khalili-mptcp",
            **common,
        ),
    ]
    return {"shared": shared, "disjoint": [disjoint], "khalili": khalili}


def shared_rows(flows: pd.DataFrame) -> pd.DataFrame:
    """One row per run: controller, seed, the connection's and the single flow's goodput and
    their ratio."""
    wide = flows.pivot_table(
        index=["flow.mp.cc", "seed"], columns="name", values="goodput_bps", observed=True
    ).reset_index()
    return pd.DataFrame(
        {
            "cc": wide["flow.mp.cc"].astype(str),
            "seed": wide["seed"].astype("int64"),
            "mp_bps": wide["mp"],
            "single_bps": wide["single"],
            "ratio": wide["mp"] / wide["single"],
        }
    )


def disjoint_rows(flows: pd.DataFrame, paths: pd.DataFrame) -> pd.DataFrame:
    """One row per run: the connection's goodput, its data share on the congested path 2,
    and the cross flows' mean goodput."""
    mp = flows[flows["name"] == "mp"].set_index("run")
    cross = flows[flows["name"] != "mp"].groupby("run")["goodput_bps"].mean()
    share = paths[paths["path"] == 1].set_index("run")["data_share"]
    return pd.DataFrame(
        {
            "cc": mp["flow.mp.cc"].astype(str),
            "seed": mp["seed"].astype("int64"),
            "mp_bps": mp["goodput_bps"],
            "congested_share": share.reindex(mp.index),
            "cross_bps": cross.reindex(mp.index),
        }
    ).reset_index(drop=True)


def khalili_rows(flows: pd.DataFrame) -> pd.DataFrame:
    """One row per run: type-1 and type-2 mean goodput normalised by C1 and C2."""
    kind = flows["name"].astype(str).str.split(".").str[0]
    per = flows.assign(kind=kind).pivot_table(
        index=["run", "flow.type1.cc", "link.x.rate", "seed"],
        columns="kind",
        values="goodput_bps",
        aggfunc="mean",
        observed=True,
    )
    per = per.reset_index()
    c1 = per["link.x.rate"].map(X_RATES) / USERS
    return pd.DataFrame(
        {
            "cc": per["flow.type1.cc"].astype(str),
            "c1_over_c2": (c1 / (T_BPS / USERS)).astype(float),
            "seed": per["seed"].astype("int64"),
            "type1": per["type1"] / c1,
            "type2": per["type2"] / (T_BPS / USERS),
        }
    )


# ---- Summaries and claims ------------------------------------------------------------------


#: Three decimals for the mean and the sd (see :func:`plait.experiments.framework.spread`).
spread = partial(_spread, fixed=True)


def summarize(frame: pd.DataFrame, by: list[str], values: list[str]) -> pd.DataFrame:
    """Mean, standard deviation, lowest and highest over seeds of each value column."""
    agg = {}
    for v in values:
        agg[f"{v}_mean"] = (v, "mean")
        agg[f"{v}_sd"] = (v, lambda x: float(x.std(ddof=1)) if len(x) > 1 else np.nan)
        agg[f"{v}_min"] = (v, "min")
        agg[f"{v}_max"] = (v, "max")
    return frame.groupby(by, sort=False).agg(seeds=("seed", "size"), **agg).reset_index()


def shared_claims(shared: pd.DataFrame) -> list[Claim]:
    """One claim per coupled controller (ratio in FAIR_RANGE) and one for uncoupled Reno."""
    out = []
    for cc in COUPLED:
        r = shared[shared.cc == cc].ratio
        if r.empty:
            continue
        lo, hi = FAIR_RANGE
        out.append(
            Claim(
                f"Shared bottleneck: a two-subflow {cc} connection takes about what one "
                f"single-path {PAIRS[cc]} flow takes",
                "RFC 6356 §1 goal 2; reference §6 T2",
                "goodput ratio MPTCP / single-path ≈ 1",
                spread(r),
                f"mean in [{lo}, {hi}] (reference T2)",
                bool(lo <= r.mean() <= hi),
                f"Seeds range {r.min():.3f} to {r.max():.3f}. The single-path flow is a "
                "one-subflow connection with the ancestor controller"
                + (" (wVegas with total_alpha 10)." if cc == "wvegas" else "."),
            )
        )
    r = shared[shared.cc == "uncoupled:reno"].ratio
    if not r.empty:
        lo, hi = UNCOUPLED_RANGE
        out.append(
            Claim(
                "Shared bottleneck: uncoupled Reno subflows take about two Reno shares",
                "reference §6 T2 (the contrast)",
                "goodput ratio ≈ 2",
                spread(r),
                f"mean in [{lo}, {hi}] (ours)",
                bool(lo <= r.mean() <= hi),
                "Two independent Reno subflows against one Reno flow: 2/3 against 1/3 of "
                "the bottleneck.",
            )
        )
    return out


def disjoint_claims(disjoint: pd.DataFrame) -> list[Claim]:
    """Pooling (goal 1) over all coupled controllers; balancing (goal 3) per controller against
    uncoupled Reno's share of the congested path."""
    coupled = disjoint[disjoint.cc.isin(COUPLED)]
    floor = POOLING_FRACTION * PATH_BPS * PAYLOAD_RATIO
    per_cc = coupled.groupby("cc", sort=False).mp_bps.mean()
    low = per_cc[per_cc < floor]
    pooling = Claim(
        "Disjoint paths: a coupled connection does at least as well as one TCP on the better path",
        "RFC 6356 §1 goal 1; reference §6 T3",
        f"goodput ≥ one TCP alone on the idle 10 Mb/s path ({PATH_BPS * PAYLOAD_RATIO / 1e6:.2f} "
        "Mb/s of payload)",
        "; ".join(
            f"{cc} {spread(coupled[coupled.cc == cc].mp_bps / 1e6)} Mb/s" for cc in per_cc.index
        ),
        f"every controller's mean ≥ {POOLING_FRACTION:g} × that (ours)",
        bool(len(per_cc) > 0 and low.empty),
        "Path 2 carries two single-path Reno flows; path 1 is idle but for the connection."
        + (f" Below: {', '.join(low.index)}." if not low.empty else ""),
    )
    base = disjoint[disjoint.cc == "uncoupled:reno"].congested_share
    reference = float(base.mean()) if not base.empty else np.nan
    shares = coupled.groupby("cc", sort=False).congested_share.mean()
    above = shares[~(shares < reference)]
    balancing = Claim(
        "Disjoint paths: a coupled connection moves traffic off the congested path",
        "RFC 6356 §1 goal 3; reference §6 T4",
        "a smaller share of the data on the congested path than uncoupled subflows send",
        "; ".join(
            f"{cc} {spread(coupled[coupled.cc == cc].congested_share)}" for cc in shares.index
        )
        + f"; uncoupled Reno {spread(base) if not base.empty else 'n/a'}",
        "every coupled controller's mean share below uncoupled Reno's (ours)",
        bool(len(shares) > 0 and above.empty and not np.isnan(reference)),
        "Share = new data the path-2 subflow carried over the connection's new data."
        + (f" Not below: {', '.join(above.index)}." if not above.empty else ""),
    )
    return [pooling, balancing]


def khalili_table(khalili: pd.DataFrame) -> pd.DataFrame:
    """Per C1/C2 and controller: type-1 and type-2 normalised throughput (means) and the
    type-2 change from the single-path baseline."""
    means = khalili.groupby(["c1_over_c2", "cc"], sort=False)[["type1", "type2"]].mean()
    out = means.reset_index()
    base = out[out.cc == "uncoupled:reno"].set_index("c1_over_c2")
    out["type1_change"] = out.type1 / out.c1_over_c2.map(base.type1) - 1
    out["type2_change"] = out.type2 / out.c1_over_c2.map(base.type2) - 1
    order = out.cc.map({cc: i for i, cc in enumerate(KHALILI_CCS)})
    return out.assign(_o=order).sort_values(["c1_over_c2", "_o"]).drop(columns="_o")


def khalili_claims(khalili: pd.DataFrame) -> list[Claim]:
    """LIA lowers type 2 by more than PARETO_DROP; OLIA by less (each C1/C2)."""
    table = khalili_table(khalili)

    def changes(cc: str) -> str:
        rows = table[table.cc == cc]
        return "; ".join(
            f"C1/C2 = {r.c1_over_c2:g}: type 2 {100 * r.type2_change:+.1f} %, type 1 "
            f"{100 * r.type1_change:+.1f} %"
            for r in rows.itertuples()
        )

    lia = table[table.cc == "lia"].type2_change
    olia = table[table.cc == "olia"].type2_change
    return [
        Claim(
            "Scenario A: upgrading type-1 users to MPTCP with LIA lowers the type-2 users' "
            "throughput (problem P1)",
            "Khalili et al., scenario A; reference §2.2 O3",
            "type-2 throughput drops measurably",
            changes("lia"),
            f"type 2 lower by more than {100 * PARETO_DROP:g} % at every C1/C2 (ours)",
            bool(len(lia) > 0 and (lia < -PARETO_DROP).all()),
            "Change relative to the type-1 users running single-path Reno on X only.",
        ),
        Claim(
            "Scenario A: with OLIA the type-2 users keep their throughput (Pareto-optimal)",
            "Khalili et al., scenario A; reference §2.2 O3",
            "type-2 throughput within a few % of the baseline",
            changes("olia"),
            f"type 2 within {100 * PARETO_DROP:g} % of the baseline at every C1/C2 (ours)",
            bool(len(olia) > 0 and (olia.abs() <= PARETO_DROP).all()),
            "BALIA, for comparison: " + changes("balia") + ".",
        ),
    ]


# ---- Figure and files ----------------------------------------------------------------------


def figure(shared: pd.DataFrame, disjoint: pd.DataFrame, khalili: pd.DataFrame):
    """Three bar charts: the shared-bottleneck ratio, the congested-path share, and the
    type-2 throughput of scenario A; bars are means, whiskers lowest to highest seed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))

    def bars(ax, frame, value, labels):
        g = frame.groupby("cc", sort=False)[value]
        mean, lo, hi = g.mean().reindex(labels), g.min().reindex(labels), g.max().reindex(labels)
        x = np.arange(len(labels))
        ax.bar(x, mean, color=["C0" if c in COUPLED else "C3" for c in labels])
        ax.errorbar(x, mean, yerr=error_bars(mean, lo, hi), fmt="none", ecolor="k", capsize=3)
        ax.set_xticks(x)
        ax.set_xticklabels([c.replace("uncoupled:", "unc. ") for c in labels], rotation=20)
        ax.grid(axis="y", alpha=0.3)

    labels = list(PAIRS)
    bars(axes[0], shared, "ratio", labels)
    axes[0].axhspan(*FAIR_RANGE, color="0.9", zorder=0)
    axes[0].axhline(1, color="k", lw=0.8)
    axes[0].set_ylabel("MPTCP goodput / single-path goodput")
    axes[0].set_title("Shared bottleneck (ideal ≈ 1; uncoupled ≈ 2)", fontsize=10)
    bars(axes[1], disjoint, "congested_share", labels)
    axes[1].set_ylabel("share of data on the congested path")
    axes[1].set_title("Disjoint paths, path 2 shared with 2 Reno flows", fontsize=10)
    table = khalili_table(khalili)
    ratios = sorted(table.c1_over_c2.unique())
    width = 0.8 / max(len(ratios), 1)
    for i, ratio in enumerate(ratios):
        sub = table[table.c1_over_c2 == ratio].set_index("cc").reindex(list(KHALILI_CCS))
        axes[2].bar(
            np.arange(len(KHALILI_CCS)) + i * width, sub.type2, width, label=f"C1/C2 = {ratio:g}"
        )
    axes[2].set_xticks(np.arange(len(KHALILI_CCS)) + width * (len(ratios) - 1) / 2)
    axes[2].set_xticklabels(["TCP (baseline)", "LIA", "OLIA", "BALIA"])
    axes[2].set_ylabel("type-2 goodput / C2")
    axes[2].set_title("Khalili et al. scenario A: the type-2 users", fontsize=10)
    axes[2].legend(fontsize=8)
    axes[2].grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


OUTPUT_FILES = {
    "shared": "shared.csv",
    "disjoint": "disjoint.csv",
    "khalili": "khalili.csv",
    "png": "coupled_basics.png",
}


def write_outputs(
    shared: pd.DataFrame, disjoint: pd.DataFrame, khalili: pd.DataFrame, out_dir: Path
) -> dict[str, Path]:
    """The per-run CSVs and the figure, all or none."""
    outputs = Outputs()
    folder = (
        out_dir
        if isinstance(out_dir, FolderTarget)
        else outputs.folder("--out", out_dir, tuple(OUTPUT_FILES.values()))
    )
    frames = {"shared": shared, "disjoint": disjoint, "khalili": khalili}
    with outputs.writing() as tx:
        for kind, frame in frames.items():
            tx.write_bytes(folder.file(OUTPUT_FILES[kind]), frame.to_csv(index=False).encode())
        tx.write_with(
            folder.file(OUTPUT_FILES["png"]),
            lambda p: save_figure(figure(shared, disjoint, khalili), p),
        )
    return {kind: folder.path / name for kind, name in OUTPUT_FILES.items()}


# ---- The experiment ------------------------------------------------------------------------


def measure(sc: Settings, out: Path, fresh: bool = False, progress=None, **where):
    """Runs the sweeps and returns the per-run tables (shared, disjoint, khalili) and the
    sweeps' summaries."""
    results = run_all(sc, out, fresh=fresh, progress=progress, **where)
    data = {
        "shared": shared_rows(_concat(results["shared"], "flows")),
        "disjoint": disjoint_rows(
            _concat(results["disjoint"], "flows"), _concat(results["disjoint"], "paths")
        ),
        "khalili": khalili_rows(_concat(results["khalili"], "flows")),
    }
    summaries = {f"{k} {i}": r.summary for k, rs in results.items() for i, r in enumerate(rs)}
    return data, summaries


def setup(data: dict, sc: Settings) -> str:
    return (
        "Packet level, scenarios in experiments/coupled-basics/. shared.toml: a two-subflow "
        "connection and one single-path flow of its ancestor controller through a 20 Mb/s "
        "RED bottleneck of 44 ms base RTT. disjoint.toml: a two-subflow connection over two "
        "disjoint 10 Mb/s paths, path 2 shared with two Reno flows. khalili.toml: Khalili et "
        "al.'s scenario A with 5 type-1 users (private link X of 10 or 20 Mb/s, and T) and 5 "
        "type-2 users on T (10 Mb/s). Every single-path flow is a one-subflow MPTCP connection "
        "(the same TCP, the same 1500-byte data packets); queues are RED, because a "
        "deterministic DropTail queue's phase effects favour slowly growing windows (see the "
        f"README).\n\nRuns of {sc.duration:g} s, the first {sc.warmup:g} s discarded, over "
        f"{len(sc.seeds)} seeds (flows start uniformly within the first second)."
    )


def figures(data: dict, sc: Settings) -> list[Figure]:
    return [
        Figure(
            "Shared bottleneck, disjoint paths, scenario A",
            "Left: MPTCP / single-path goodput at a shared bottleneck (band: reference "
            "T2's [0.8, 1.25]). Middle: the share of the connection's data on the "
            "congested path. Right: type-2 goodput over C2 in Khalili et al.'s scenario "
            "A. Bars are means over seeds; whiskers the lowest and highest seed.",
            figure_png(figure(data["shared"], data["disjoint"], data["khalili"])),
        )
    ]


def tables(data: dict, sc: Settings) -> list:
    return [
        ("Shared bottleneck (per controller)", summarize(data["shared"], ["cc"], ["ratio"])),
        (
            "Disjoint paths (per controller)",
            summarize(data["disjoint"], ["cc"], ["mp_bps", "congested_share", "cross_bps"]),
        ),
        ("Khalili et al. scenario A (means over seeds)", khalili_table(data["khalili"])),
    ]


DECLARED = Declared(
    name=NAME,
    title=TITLE,
    paper=PAPER,
    settings=settings,
    runs=packet_runs,
    measure=measure,
    write=lambda data, sc, out: write_outputs(
        data["shared"], data["disjoint"], data["khalili"], out
    ),
    claims=(
        lambda data, sc: shared_claims(data["shared"]),
        lambda data, sc: disjoint_claims(data["disjoint"]),
        lambda data, sc: khalili_claims(data["khalili"]),
    ),
    figures=figures,
    tables=tables,
    setup=setup,
)

EXPERIMENT = register_declared(DECLARED)
