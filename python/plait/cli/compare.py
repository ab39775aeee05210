"""`plait compare A B`: two results side by side, flow by flow and link by link.

A and B are each a folder of `plait run --out`, a sweep's store (`plait sweep --out`, or a
`plait reproduce` experiment's `runs` folder: the seeds of one scenario) or a JSON summary of
`plait run --json`. For each metric both have: the two values (means over seeds), B's relative
difference from A, each side's min and max over its seeds, and a verdict: inside (one side's
mean in the other's range), within tolerance (|B - A| <= tolerance x |A|) or differs; n/a when
one side has no value. See docs/compare.md.

Exit codes: 0 compared (whatever the verdicts), 2 a side that is not a result, two results with
no flow or link in common, or an unwritable destination (one line, nothing written).
"""

from __future__ import annotations

import argparse

#: Metrics shown on the terminal (all are in --out and --json).
TERMINAL_FLOW_METRICS = (
    "goodput_bps",
    "retransmissions",
    "timeouts",
    "rtt_mean_s",
    "rtt_p99_s",
)
TERMINAL_LINK_METRICS = ("utilization", "drops", "mean_queue_packets")


def _tolerance(text: str) -> float:
    """`0.1` or `10%`: a finite number >= 0."""
    from plait.cli.options import finite_float

    percent = text.strip().endswith("%")
    value = finite_float(text.strip().removesuffix("%")) / (100 if percent else 1)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="set two results (folders, sweep stores or JSON summaries) side by side",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("a", metavar="A", help="a result: run folder, sweep store or JSON summary")
    p.add_argument("b", metavar="B", help="the other result")
    p.add_argument(
        "--tolerance",
        type=_tolerance,
        default=0.1,
        metavar="X",
        help="relative difference accepted as 'within tolerance' (0.1 or 10%%)",
    )
    p.add_argument("--out", metavar="FILE", help="write an HTML report here (tables and figures)")
    p.add_argument(
        "--json", metavar="FILE", help="write the comparison as JSON here (- for stdout)"
    )
    p.add_argument("--quiet", action="store_true", help="print nothing but warnings")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from plait.comparison import compare
    from plait.output import Outputs

    outputs = Outputs()
    html_target = outputs.file("--out", args.out)
    json_target = outputs.file("--json", args.json)
    result = compare(args.a, args.b, tolerance=args.tolerance)
    from plait.cli.text import print_warnings

    print_warnings(result.warnings)
    html = result.html() if html_target is not None else None
    with outputs.writing() as tx:
        if html is not None:
            tx.write_text(html_target, html)
        if json_target is not None:
            tx.write_text(json_target, result.summary_json())
    if not args.quiet:
        from rich.console import Console

        to_stderr = json_target is not None and json_target.is_stdout
        print_comparison(result, Console(stderr=to_stderr))
    return 0


def print_comparison(result, console) -> None:
    """A compact table: the main metrics of each flow and link direction, and the counts."""
    from rich.table import Table
    from rich.text import Text

    from plait.cli.text import plain
    from plait.comparison import ONLY_A, ONLY_B, display_frame

    for frame, keys, metrics, title in (
        (result.flows, ["flow"], TERMINAL_FLOW_METRICS, "flows"),
        (result.links, ["link", "direction"], TERMINAL_LINK_METRICS, "links"),
    ):
        if frame.empty:
            continue
        shown = frame[frame["metric"].isin(metrics) | frame["verdict"].isin([ONLY_A, ONLY_B])]
        if shown.empty:
            continue
        table = Table(title=f"{title}: A {result.a.label} · B {result.b.label}")
        text = display_frame(shown, keys, ranges=False)
        for column in text.columns:
            left = column in (*keys, "metric", "verdict")
            table.add_column(column, justify="left" if left else "right")
        for row in text.itertuples(index=False):
            table.add_row(*(plain(v) for v in row))
        console.print(table)
    counts = ", ".join(f"{n} {v}" for v, n in result.counts().items())
    console.print(Text(f"tolerance {result.tolerance:.3g} · {counts} (all metrics; --out, --json)"))
