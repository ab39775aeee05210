"""Run a scenario on the real Linux kernel: every host a network namespace, every link plait's
userspace link emulator, traffic from kernel TCP sockets (docs/testbed.md).

`plait testbed run SCENARIO` writes the same `flows` and `links` tables and JSON summary as
`plait run` (columns the kernel cannot give are null), each with the kernel version and the
emulator's lateness; `plait testbed clean` removes what a killed run left behind. Needs root.
"""

from __future__ import annotations

import argparse
import signal
import sys

from plait.cli.options import add_overrides, add_seed, seed_type

#: The tables `plait testbed run --out` writes.
FILES = ("flows.parquet", "links.parquet", "flow_series.parquet")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "testbed",
        help="run a scenario on the real Linux kernel",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tsub = p.add_subparsers(dest="testbed_command", required=True, metavar="ACTION")
    r = tsub.add_parser("run", help="run a scenario on the kernel (root)")
    r.add_argument("file", help="scenario file (.toml, or .json)")
    add_seed(r, "replace the scenario's seed (an integer in [0, 2^64))")
    add_overrides(r)
    r.add_argument("--out", metavar="DIR", help="write the result tables as .parquet here")
    r.add_argument("--json", metavar="FILE", help="write the summary as JSON here (- for stdout)")
    r.add_argument(
        "--pcap",
        metavar="LINK",
        action="append",
        default=[],
        help="write what crossed LINK (both directions) to DIR/LINK.pcap (needs --out); repeatable",
    )
    r.add_argument(
        "--compare",
        action="store_true",
        help="also simulate the scenario (same overrides and seeds; flows start when the "
        "simulator draws) and print the comparison, kernel as A, simulation as B; with --out, "
        "DIR/comparison.html and DIR/comparison.json",
    )
    r.add_argument(
        "--seeds",
        type=seed_type,
        nargs="+",
        metavar="N",
        help="with --compare: run these seeds, one after the other, on both sides",
    )
    r.set_defaults(func=main_run)
    c = tsub.add_parser("clean", help="remove what killed testbed runs left (root)")
    c.set_defaults(func=main_clean)


def _terminate(signum, frame):  # noqa: ARG001
    # Unwinds through the runner's `finally` (clean-up), then exits 128 + the signal.
    raise SystemExit(128 + signum)


def main_run(args: argparse.Namespace) -> int:
    from plait import _core
    from plait.api import _load, _override_pairs
    from plait.output import Outputs
    from plait.testbed import Refusal, plan_scenario, run_plan
    from plait.testbed.compare import FILES as COMPARISON_FILES

    outputs = Outputs()
    json_target = outputs.file("--json", args.json)
    if args.pcap and args.out is None:
        print(
            "plait testbed: --pcap: needs --out DIR (the capture is DIR/LINK.pcap)", file=sys.stderr
        )
        return 2
    usage = _seeds_usage(args)
    if usage is not None:
        print(f"plait testbed: {usage}", file=sys.stderr)
        return 2
    seeds = list(dict.fromkeys(args.seeds)) if args.seeds else [args.seed]
    pcaps = tuple(dict.fromkeys(args.pcap))
    names = FILES + tuple(f"{name}.pcap" for name in pcaps)
    folder = outputs.folder("--out", args.out, names + (COMPARISON_FILES if args.compare else ()))
    text, source, fmt = _load(args.file)
    import json

    canonical = json.loads(
        _core.canonical_scenario(text, source, fmt, _override_pairs(args.overrides))
    )
    import shutil
    import tempfile

    previous = signal.signal(signal.SIGTERM, _terminate)
    staging = tempfile.mkdtemp(prefix="plait-testbed-pcap-") if pcaps else None
    try:
        try:
            plans = [plan_scenario(canonical, seed) for seed in seeds]
            links = {d.name for d in plans[0].links}
            for name in pcaps:
                if name not in links:
                    raise Refusal(
                        f"--pcap: no link named {name!r} (links: {', '.join(sorted(links))})"
                    )
            simulations = []
            if args.compare:
                plans, simulations = _simulate(args, plans)
            results = [
                run_plan(plan, {name: f"{staging}/{name}.pcap" for name in pcaps}) for plan in plans
            ]
        except Refusal as e:
            print(f"plait testbed: {args.file}: {e}", file=sys.stderr)
            return 2
        finally:
            signal.signal(signal.SIGTERM, previous)
        comparison = None
        if args.compare:
            from plait.testbed.compare import kernel_vs_simulation

            comparison = kernel_vs_simulation(plans, results, simulations)
        return _write(
            args, outputs, json_target, folder, plans, results, pcaps, staging, comparison
        )
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _seeds_usage(args: argparse.Namespace) -> str | None:
    """What is wrong with --seeds in `args` (one line), or None."""
    if not args.seeds:
        return None
    if not args.compare:
        return "--seeds: only with --compare (a single kernel run takes --seed)"
    if args.seed is not None:
        return "--seeds: give either --seed or --seeds"
    if len(set(args.seeds)) > 1 and args.json is not None:
        return "--json: one seed only (the comparison of several is DIR/comparison.json, --out)"
    if len(set(args.seeds)) > 1 and args.pcap:
        return "--pcap: one seed only (each run would overwrite the capture)"
    return None


def _simulate(args: argparse.Namespace, plans: list) -> tuple[list, list]:
    """The simulation of each plan's seed (same file and overrides), and the plans with the
    simulator's drawn start times (docs/testbed.md, "Seeds")."""
    import plait
    from plait.testbed.compare import simulated_starts, with_starts

    simulations = [plait.run(args.file, seed=p.seed, overrides=args.overrides) for p in plans]
    plans = [with_starts(p, simulated_starts(s.flows)) for p, s in zip(plans, simulations)]
    return plans, simulations


def _write(args, outputs, json_target, folder, plans, results, pcaps, staging, comparison) -> int:
    import json
    import shutil

    html = comparison.html() if comparison is not None and folder is not None else None
    with outputs.writing() as tx:
        if folder is not None:
            for name in pcaps:
                tx.write_with(
                    folder.file(f"{name}.pcap"),
                    lambda p, src=f"{staging}/{name}.pcap": shutil.copyfile(src, p),
                )
        if folder is not None:
            import pandas as pd

            for i, file in enumerate(FILES):
                frames = [
                    pd.DataFrame((r.flows, r.links, r.flow_series)[i]).assign(seed=p.seed)
                    for p, r in zip(plans, results)
                ]
                frame = pd.concat(frames, ignore_index=True)
                tx.write_with(folder.file(file), lambda p, f=frame: f.to_parquet(p, index=False))
            if html is not None:
                tx.write_text(folder.file("comparison.html"), html)
                tx.write_text(folder.file("comparison.json"), comparison.summary_json())
        if json_target is not None:
            tx.write_text(json_target, json.dumps(results[0].summary, indent=2) + "\n")
    out = sys.stderr if json_target is not None and json_target.is_stdout else sys.stdout
    for plan, result in zip(plans, results):
        if len(plans) > 1:
            print(f"seed {plan.seed}:", file=out)
        _print_run(result, out)
    if comparison is not None:
        from rich.console import Console

        from plait.cli.compare import print_comparison
        from plait.cli.text import print_warnings

        print_warnings(comparison.warnings)
        print_comparison(comparison, Console(file=out))
    return 0


def _print_run(result, out) -> None:
    tb = result.summary["testbed"]
    for f in result.flows:
        gp = f["goodput_bps"]
        print(
            f"flow {f['name']}: goodput {gp / 1e6:.3f} Mbps" if gp is not None else f["name"],
            file=out,
        )
    for link in result.links:
        print(
            f"link {link['name']} {link['direction']}: utilization {link['utilization']:.3f}, "
            f"drops {link['drops']}, mean queue {link['mean_queue_packets']:.1f} packets",
            file=out,
        )
    print(
        f"kernel {tb['kernel']}; emulator lateness p50 {tb['lateness_p50_us']:.1f} us, "
        f"p99 {tb['lateness_p99_us']:.1f} us, max {tb['lateness_max_us']:.1f} us"
        + ("  [FLAGGED: p99 above a tenth of a packet time]" if tb["timing_flagged"] else ""),
        file=out,
    )


def main_clean(args: argparse.Namespace) -> int:  # noqa: ARG001
    import os

    from plait.testbed import clean_leftovers

    if os.geteuid() != 0:
        print("plait testbed: clean needs root", file=sys.stderr)
        return 2
    removed = clean_leftovers()
    print(
        f"removed {len(removed)} namespace(s) of dead runs"
        + (": " + ", ".join(removed) if removed else "")
    )
    return 0
