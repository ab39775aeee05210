"""`plait bench dumbbell`: simulated packets per wall second and peak memory.

The benchmark runs in a fresh interpreter that imports only the compiled core, so the peak
resident set it reports is the simulator's and not that of pandas or matplotlib.
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
        choices=["dumbbell"],
        help="dumbbell: N bulk TCP flows over a 100 Mb/s bottleneck "
        "(experiments/dumbbell/dumbbell.toml)",
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
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    code = (
        "import sys, plait._core as c\n"
        "try:\n"
        f"    sys.stdout.write(c.bench_dumbbell({args.flows}, {args.duration!r}))\n"
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
        print(
            f"dumbbell, {report['flows']} flows, {report['duration_s']:g} s simulated: "
            f"{report['delivered_packets']:,} packets delivered, {report['events']:,} events in "
            f"{report['wall_seconds']:.2f} s wall -> "
            f"{report['delivered_packets_per_second'] / 1e6:.2f} M packets/s, "
            f"{report['events_per_second'] / 1e6:.2f} M events/s, "
            f"peak RSS {report['peak_rss_bytes'] / 2**20:.1f} MiB"
        )
    return 0
