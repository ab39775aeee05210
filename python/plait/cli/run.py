"""`plait run FILE`: run a scenario, print its tables, write Parquet and JSON.

Output destinations are checked before the run starts; results are written all together
when it ends, or not at all (see docs/results.md). `--json -` writes the summary to standard
output (the tables then go to standard error).
"""

from __future__ import annotations

import argparse

from plait.cli.options import add_max_memory, add_overrides, add_seed


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run a scenario file",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", help="scenario file (.toml, or .json)")
    add_seed(p, "replace the scenario's seed (an integer in [0, 2^64))")
    add_overrides(p)
    p.add_argument(
        "--out",
        metavar="DIR",
        help="write the result tables (flows, links, paths, series) as .parquet here",
    )
    p.add_argument("--json", metavar="FILE", help="write the summary as JSON here (- for stdout)")
    add_max_memory(p)
    p.add_argument(
        "--quiet",
        action="store_true",
        help="print nothing on success but the scenario's warnings (no tables, no progress)",
    )
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from plait.api import PARQUET_FILES, Result, RunRows, _run_core
    from plait.cli.progress import LateProgress
    from plait.output import Outputs

    outputs = Outputs()
    json_target = outputs.file("--json", args.json)
    folder = outputs.folder("--out", args.out, PARQUET_FILES)
    bar = LateProgress(args.file, enabled=not args.quiet)
    try:
        raw, wall_seconds = _run_core(
            args.file,
            seed=args.seed,
            overrides=args.overrides,
            progress=bar,
            max_memory=args.max_memory,
        )
    finally:
        bar.close()
    from plait.cli.text import print_warnings

    print_warnings(raw["warnings"])
    if args.quiet and folder is None and json_target is None:
        # Nothing to print or write: no tables, no summary.
        return 0
    # The tables as DataFrames only for Parquet: the summary and the printed tables are the
    # same from plain rows, and pandas takes longer to import than a short run takes.
    result = (Result if folder is not None else RunRows)._from_core(raw, wall_seconds)
    with outputs.writing() as tx:
        if folder is not None:
            result.stage_parquet(tx, folder)
        if json_target is not None:
            # The summary only when it is written: it costs a row per flow and per path.
            tx.write_text(json_target, result.summary_json())
    if not args.quiet:
        from rich.console import Console

        from plait.cli.tables import print_result

        to_stderr = json_target is not None and json_target.is_stdout
        print_result(result, title=args.file, console=Console(stderr=to_stderr))
    return 0
