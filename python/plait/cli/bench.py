"""`plait bench dumbbell`: simulated packets per wall second and peak memory.
`plait bench mptcp`: the same for MPTCP connections (LIA, min_rtt) over two disjoint 100 Mb/s
paths.
`plait bench sweep`: runs per second of a sweep of short runs against running them one after
another, and the sweep engine's cost per run.

The dumbbell and MPTCP benchmarks run in a fresh interpreter that imports only the compiled
core, so the peak resident set reported is the simulator's and not that of pandas or
matplotlib.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from plait.cli.options import bounded_float, bounded_int

#: Simulated seconds by default: about 5 million delivered packets, one to a few wall seconds.
DEFAULT_DURATION_S = 600.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="run a benchmark",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "scenario",
        choices=["dumbbell", "mptcp", "sweep"],
        help="dumbbell: N bulk TCP flows over a 100 Mb/s bottleneck "
        "(experiments/dumbbell/dumbbell.toml); mptcp: --connections MPTCP connections of "
        "--subflows subflows over two disjoint 100 Mb/s paths; sweep: --runs short dumbbell "
        "runs, one after another and as a sweep",
    )
    p.add_argument(
        "--connections",
        type=bounded_int(1, 100_000, allow_float_syntax=True),
        default=10,
        help="mptcp: number of MPTCP connections (default: 10)",
    )
    p.add_argument(
        "--subflows",
        type=bounded_int(1, 32),
        default=2,
        help="mptcp: subflows per connection, alternately on the two paths (default: 2)",
    )
    p.add_argument(
        "--runs",
        type=bounded_int(1, 100_000),
        default=200,
        help="sweep: number of runs (one seed each)",
    )
    p.add_argument(
        "--workers",
        type=bounded_int(1, 4096),
        default=None,
        help="sweep: worker processes (default: the number of cores)",
    )
    p.add_argument(
        "--flows",
        type=bounded_int(1, 100_000, allow_float_syntax=True),
        default=10,
        help="number of TCP flows (default: 10)",
    )
    p.add_argument(
        "--duration",
        type=bounded_float(0.0, 1e6, low_open=True),
        default=DEFAULT_DURATION_S,
        help=f"simulated seconds (default: {DEFAULT_DURATION_S:g})",
    )
    p.add_argument(
        "--kind",
        choices=["tcp", "tfrc", "multfrc", "cp", "mpat"],
        default="tcp",
        help="dumbbell: the flows' kind: Reno TCP (default); TFRC, MulTFRC or CP with n = 1; "
        "or mpat: one aggregate of --flows flows with equal shares",
    )
    p.add_argument(
        "--exact",
        action="store_true",
        help="dumbbell, mptcp: exact timing (tcp.exact_timing: no send jitter), for the cost of "
        "the default's send jitter (docs/phase.md)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.scenario == "sweep":
        return _sweep(args)
    if args.scenario == "mptcp":
        call = (
            f"c.bench_mptcp({args.connections}, {args.subflows}, {args.duration!r}, {args.exact!r})"
        )
    else:
        call = f"c.bench_dumbbell({args.flows}, {args.duration!r}, {args.kind!r}, {args.exact!r})"
    code = (
        "import sys, plait._core as c\n"
        "try:\n"
        f"    sys.stdout.write({call})\n"
        "except c.ScenarioError as e:\n"
        "    sys.stderr.write(f'plait: error: {e}\\n')\n"
        "    sys.exit(2)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        return 2 if out.returncode == 2 else 1
    report = json.loads(out.stdout)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        what = (
            f"mptcp, {report['flows']} connections of {report['subflows']} subflows"
            if args.scenario == "mptcp"
            else f"dumbbell, {report['flows']} {args.kind} flows"
        ) + (", exact timing" if args.exact else "")
        print(
            f"{what}, {report['duration_s']:g} s simulated: "
            f"{report['delivered_packets']:,} packets delivered, {report['events']:,} events in "
            f"{report['wall_seconds']:.2f} s wall -> "
            f"{report['delivered_packets_per_second'] / 1e6:.2f} M packets/s, "
            f"{report['events_per_second'] / 1e6:.2f} M events/s, "
            f"peak RSS {report['peak_rss_bytes'] / 2**20:.1f} MiB"
        )
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from plait.sweeps.bench import bench_sweep

    duration = args.duration if args.duration != DEFAULT_DURATION_S else 2.0
    r = bench_sweep(args.runs, duration, args.flows, args.workers)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(
        f"{r['runs']} runs of {r['simulated_seconds_per_run']:g} s simulated, {r['flows']} flows "
        f"(mean {r['mean_run_seconds'] * 1e3:.0f} ms of simulation each):\n"
        f"  one after another: {r['sequential_seconds']:.2f} s, "
        f"{r['sequential_runs_per_second']:.1f} runs/s, each run's table stored as a sweep "
        f"stores it (the simulations alone: {r['simulations_seconds']:.2f} s)\n"
        f"  sweep, {r['workers']} workers, batched: {r['sweep_auto_seconds']:.2f} s, "
        f"{r['sweep_auto_runs_per_second']:.1f} runs/s ({r['sweep_auto_speedup']:.2f}x; "
        f"{r['sweep_auto_speedup_over_simulations']:.2f}x the simulations alone), "
        f"engine cost {r['sweep_auto_overhead_ms_per_run']:.1f} ms per run\n"
        f"  sweep, one run per task: {r['sweep_one_per_task_seconds']:.2f} s, "
        f"{r['sweep_one_per_task_runs_per_second']:.1f} runs/s "
        f"({r['sweep_one_per_task_speedup']:.2f}x; "
        f"{r['sweep_one_per_task_speedup_over_simulations']:.2f}x the simulations alone), "
        f"engine cost {r['sweep_one_per_task_overhead_ms_per_run']:.1f} ms per run\n"
        f"  (importing Dask, not in the sweeps' times: {r['dask_import_seconds']:.2f} s)"
    )
    return 0
