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

from plait.cli.options import add_overrides, add_seed

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

    outputs = Outputs()
    json_target = outputs.file("--json", args.json)
    if args.pcap and args.out is None:
        print(
            "plait testbed: --pcap: needs --out DIR (the capture is DIR/LINK.pcap)", file=sys.stderr
        )
        return 2
    pcaps = tuple(dict.fromkeys(args.pcap))
    folder = outputs.folder("--out", args.out, FILES + tuple(f"{name}.pcap" for name in pcaps))
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
            plan = plan_scenario(canonical, args.seed)
            names = {d.name for d in plan.links}
            for name in pcaps:
                if name not in names:
                    raise Refusal(
                        f"--pcap: no link named {name!r} (links: {', '.join(sorted(names))})"
                    )
            result = run_plan(plan, {name: f"{staging}/{name}.pcap" for name in pcaps})
        except Refusal as e:
            print(f"plait testbed: {args.file}: {e}", file=sys.stderr)
            return 2
        finally:
            signal.signal(signal.SIGTERM, previous)
        return _write(args, outputs, json_target, folder, plan, result, pcaps, staging)
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _write(args, outputs, json_target, folder, plan, result, pcaps, staging) -> int:
    import json
    import shutil

    with outputs.writing() as tx:
        if folder is not None:
            for name in pcaps:
                tx.write_with(
                    folder.file(f"{name}.pcap"),
                    lambda p, src=f"{staging}/{name}.pcap": shutil.copyfile(src, p),
                )
        if folder is not None:
            import pandas as pd

            for file, rows in zip(FILES, (result.flows, result.links, result.flow_series)):
                frame = pd.DataFrame(rows).assign(seed=plan.seed)
                tx.write_with(folder.file(file), lambda p, f=frame: f.to_parquet(p, index=False))
        if json_target is not None:
            tx.write_text(json_target, json.dumps(result.summary, indent=2) + "\n")
    tb = result.summary["testbed"]
    out = sys.stderr if json_target is not None and json_target.is_stdout else sys.stdout
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
    return 0


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
