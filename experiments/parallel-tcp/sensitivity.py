"""Sensitivity runs behind experiments/parallel-tcp/README.md (not part of `plait reproduce`).

    python experiments/parallel-tcp/sensitivity.py rearm     STORE   # re-arm rule and tau
    python experiments/parallel-tcp/sensitivity.py min-rto   STORE   # 200 ms against 1 s
    python experiments/parallel-tcp/sensitivity.py threshold STORE   # T_h = 3, 6, 12; RED 150, 300
    python experiments/parallel-tcp/sensitivity.py rto-cause STORE   # exact timing, rack_tlp
    python experiments/parallel-tcp/sensitivity.py red-ns2   OUT     # RED in plait and ns-2.35
    python experiments/parallel-tcp/sensitivity.py rto-ns2   OUT     # timeouts in plait and ns-2
    python experiments/parallel-tcp/sensitivity.py td-levels -       # windows summed at drops
    python experiments/parallel-tcp/sensitivity.py dt-sync   OUT     # flows hit per event; ns-2
    python experiments/parallel-tcp/sensitivity.py loss-policy STORE # Figs. 13-14's counts

loss-policy runs the reproduction's own Figs. 13-14 sweep (2000 s, 1000 s discarded, seeds 1-5);
with STORE = OUT/parallel-tcp/runs-loss-policy of `plait reproduce parallel-tcp --out OUT` it
only reads the stored runs.

Each writes results/<name>.csv beside this file (one row per run) and prints the mean table.
STORE is a sweep store (runs already there are reused). red-ns2 needs Debian's ns-2 (`ns`) and
runs `python -m plait.ns2` on ns2_red.toml (Reno, exact timing, as ns-2's agents), writing its
CSVs under OUT. Runs are 600 s with 200 s discarded, seeds 1-3 (rearm: 400 s, 100 s; rto-cause:
300 s, 100 s, seeds 1-2): enough to rank the settings, not the committed experiment's 2000 s.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import plait
from plait.experiments import parallel_tcp as exp

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
NS = [1, 2, 3, 4, 6, 8, 10]


def td(threshold: int, policy: str) -> str:
    return (
        f'{{kind="threshold_dropper", threshold={threshold}, policy="{policy}", '
        f"hold_rtts={exp.TD_HOLD_RTTS}}}"
    )


def red(b: int) -> str:
    return (
        f'{{kind="red", packets={b}, min_th={0.6 * b:g}, max_th={0.8 * b:g}, max_p=0.1, '
        "w_q=0.001, wait=true, gentle=false}"
    )


def run(queues, ns, duration, warmup, seeds, store, extra=None) -> pd.DataFrame:
    grid = {
        "link.bottleneck.queue": queues,
        "flow.tcp.count": ns,
        "simulation.duration": [f"{duration:g}s"],
        "simulation.warmup": [f"{warmup:g}s"],
        **(extra or {}),
    }
    res = plait.sweep(
        HERE / "scenario.toml", grid, seeds=seeds, out=store, tables=["links", "flows"]
    )
    links, flows = res.table("links"), res.table("flows")
    b = links[(links.name == "bottleneck") & (links.direction == "forward")].copy()
    per = flows.groupby("run").agg(
        timeouts=("timeouts", "sum"), fast_retransmits=("fast_retransmits", "sum")
    )
    b = b.join(per, on="run")
    keep = ["link.bottleneck.queue", "flow.tcp.count", *(extra or {}), "seed"]
    keep += ["utilization", "drops", "mean_queue_packets", "max_queue_packets"]
    return b[keep + ["timeouts", "fast_retransmits"]].rename(
        columns={"link.bottleneck.queue": "queue", "flow.tcp.count": "n"}
    )


def one(queue: str, n: int, duration: float, warmup: float, trace=False, sample=None):
    """One run of the scenario (seed 1) with drops traced and, with `sample`, time series."""
    over = {
        "link.bottleneck.queue": queue,
        "flow.tcp.count": n,
        "simulation.duration": f"{duration:g}s",
        "simulation.warmup": f"{warmup:g}s",
        "simulation.trace_drops": trace,
    }
    if sample:
        over["simulation.sample_interval"] = sample
    return plait.run(HERE / "scenario.toml", overrides=over)


def util(r) -> float:
    links = r.links
    return float(
        links[(links.name == "bottleneck") & (links.direction == "forward")].utilization.iloc[0]
    )


def report_rows(rows: pd.DataFrame, name: str) -> None:
    RESULTS.mkdir(exist_ok=True)
    rows.to_csv(RESULTS / f"{name}.csv", index=False)
    print(rows.round(3).to_string())


def report(rows: pd.DataFrame, name: str, index: list[str]) -> None:
    RESULTS.mkdir(exist_ok=True)
    rows.sort_values([*index, "seed"]).to_csv(RESULTS / f"{name}.csv", index=False)
    table = rows.groupby(index)[["utilization", "drops", "timeouts", "mean_queue_packets"]]
    pd.set_option("display.width", 250)
    pd.set_option("display.max_colwidth", 110)
    print(table.mean().round(3).to_string())


def main(argv: list[str]) -> int:
    what, where = argv[1], Path(argv[2])
    if what == "rearm":
        queues = []
        for rearm, rtts in (("threshold", 1), ("hold", 1), ("hold", 2)) + (
            ("threshold_or_growth", 1),
            ("threshold_or_growth", 2),
        ):
            for policy in ("rate_independent", "largest_rate"):
                tail = "" if rtts == 1 else f", hold_rtts={rtts}"
                queues.append(
                    f'{{kind="threshold_dropper", threshold=3, policy="{policy}", '
                    f'rearm="{rearm}"{tail}}}'
                )
        rows = run(queues, NS, 400, 100, [1, 2, 3], where)
        report(rows, "td_rearm", ["queue", "n"])
    elif what == "min-rto":
        queues = [q.toml for q in exp.queues()]
        extra = {"tcp.min_rto": ["200ms", "1s"]}
        rows = run(queues, [1, 2, 4, 6, 8, 10], 600, 200, [1, 2, 3], where, extra)
        label = {q.toml: q.short for q in exp.queues()}
        rows["queue"] = rows["queue"].map(label)
        report(rows, "min_rto", ["tcp.min_rto", "queue", "n"])
    elif what == "threshold":
        queues = [td(t, p) for t in (3, 6, 12) for p in ("rate_independent", "largest_rate")]
        rows = run(queues + [red(150), red(300)], NS, 600, 200, [1, 2, 3], where)
        report(rows, "td_threshold", ["queue", "n"])
    elif what == "rto-cause":
        queues = [td(3, "rate_independent"), '{kind="droptail", packets=10}']
        extra = {
            "tcp.min_rto": ["200ms"],
            "tcp.exact_timing": [False, True],
            "tcp.rack_tlp": [False, True],
        }
        rows = run(queues, [2, 4, 8], 300, 100, [1, 2], where, extra)
        report(rows, "rto_cause", ["queue", "tcp.exact_timing", "tcp.rack_tlp", "n"])
    elif what == "red-ns2":
        out = []
        for b in (20, 40):
            for n in (1, 2, 4, 6, 8, 10):
                name = f"red{b}_n{n}"
                if not (where / f"{name}_summary.csv").exists():
                    subprocess.run(
                        [sys.executable, "-m", "plait.ns2", str(HERE / "ns2_red.toml")]
                        + ["--seeds", "1..3", "--set", f"flow.tcp.count={n}"]
                        + ["--set", f"link.bottleneck.queue={red(b)}"]
                        + ["--out", str(where), "--name", name],
                        check=True,
                    )
                s = pd.read_csv(where / f"{name}_summary.csv")
                s.insert(0, "n", n)
                s.insert(0, "queue", f"RED-{b}")
                out.append(s)
        rows = pd.concat(out)[
            ["queue", "n", "simulator", "seed", "utilization", "drop_percent", "reno_timeouts"]
        ]
        RESULTS.mkdir(exist_ok=True)
        rows.to_csv(RESULTS / "red_ns2.csv", index=False)
        print(
            rows.pivot_table(index=["queue", "n"], columns="simulator", values="utilization")
            .round(3)
            .to_string()
        )
    elif what == "loss-policy":
        bins, _ = exp.loss_policy_sweep(2000.0, 1000.0, [1, 2, 3, 4, 5], where)
        RESULTS.mkdir(exist_ok=True)
        bins.to_csv(RESULTS / "loss_policy.csv", index=False)
        from plait.experiments.parallel_tcp_claims import loss_policy_figure

        loss_policy_figure(bins).savefig(RESULTS / "loss_policy.png", dpi=110)
        pooled = bins.groupby(["queue", "w"], sort=False)[["bins", "signalled"]].sum()
        for queue, g in pooled.groupby(level=0, sort=False):
            g = g.droplevel(0)
            g = g[g.bins >= 30]
            zbar = ", ".join(f"{w}: {r.signalled / r.bins:.3f}" for w, r in g.iloc[::3].iterrows())
            print(f"{queue}: z(w) {zbar}")
    elif what == "rto-ns2":
        out = []
        queues = [("dt10", '{kind="droptail", packets=10}'), ("red20", red(20))]
        cells = [
            (q, spec, rto, n) for q, spec in queues for rto in ("200ms", "1s") for n in (2, 5, 10)
        ]
        for q, spec, rto, n in cells:
            name = f"rto_{q}_{rto}_n{n}"
            if not (where / f"{name}_summary.csv").exists():
                subprocess.run(
                    [sys.executable, "-m", "plait.ns2", str(HERE / "ns2_red.toml")]
                    + ["--seeds", "1..3", "--set", f"flow.tcp.count={n}"]
                    + ["--set", f"tcp.min_rto={rto}", "--set", f"link.bottleneck.queue={spec}"]
                    + ["--out", str(where), "--name", name],
                    check=True,
                )
            r = pd.read_csv(where / f"{name}_summary.csv")
            r.insert(0, "min_rto", rto)
            r.insert(0, "n", n)
            r.insert(0, "queue", q)
            out.append(r)
        rows = pd.concat(out)[
            ["queue", "n", "min_rto", "simulator", "seed", "utilization", "reno_timeouts"]
        ]
        report_rows(rows, "rto_ns2")
    elif what == "td-levels":
        out = []
        for threshold in (3, 6):
            for policy in ("rate_independent", "largest_rate"):
                r = one(td(threshold, policy), 4, 300, 100, trace=True, sample="10ms")
                windows = r.flow_series.pivot_table(
                    index="time_s", columns="flow", values="cwnd_bytes", observed=True
                ).sum(axis=1)
                t = r.drops[r.drops.time_s > 100].time_s.to_numpy()
                at = windows.to_numpy()[windows.index.searchsorted(t) - 1] / 1000
                out.append(
                    {"threshold": threshold, "policy": policy, "utilization": util(r)}
                    | {"drops": len(t), "window_sum_mean": at.mean()}
                    | {"window_sum_p10": pd.Series(at).quantile(0.1)}
                )
        report_rows(pd.DataFrame(out), "td_levels")
    elif what == "dt-sync":
        out = []
        for b in (5, 10, 40):
            for n in (4, 8):
                r = one(f'{{kind="droptail", packets={b}}}', n, 600, 200, trace=True)
                d = r.drops[r.drops.time_s > 200].sort_values("time_s")
                hit, start = [], None
                for t, flow in zip(d.time_s, d.flow.astype(str)):
                    if start is None or t - start > 0.24:  # drops within 2 RTTs: one event
                        hit.append(set())
                        start = t
                    hit[-1].add(flow)
                k = pd.Series([len(h) for h in hit], dtype=float)
                out.append(
                    {"buffer": b, "n": n, "utilization": util(r), "events": len(k)}
                    | {"flows_per_event": k.mean(), "share_of_flows": k.mean() / n}
                )
        for b in (5, 10):
            name = f"dt{b}_n8"
            if not (where / f"{name}_summary.csv").exists():
                subprocess.run(
                    [sys.executable, "-m", "plait.ns2", str(HERE / "ns2_red.toml")]
                    + ["--seeds", "1..2", "--set", "flow.tcp.count=8"]
                    + ["--set", "simulation.duration=600s", "--set", "simulation.warmup=200s"]
                    + ["--set", f'link.bottleneck.queue={{kind="droptail", packets={b}}}']
                    + ["--out", str(where), "--name", name],
                    check=True,
                )
            s = pd.read_csv(where / f"{name}_summary.csv")
            for sim, g in s.groupby("simulator"):
                out.append(
                    {"buffer": b, "n": 8, "simulator": sim, "utilization": g.utilization.mean()}
                )
        report_rows(pd.DataFrame(out), "dt_sync")
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
