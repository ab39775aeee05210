"""`plait model`: tables of the closed-form models (see docs/models.md).

Value lists accept comma-separated numbers and inclusive ranges: ``1..10`` (step 1),
``0.5..2:0.5``, or a mix such as ``1..3,5,8``. The table has one row per combination.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import sys
from collections.abc import Sequence

from plait.cli.options import finite_float

#: Most values one option may list, and most rows (combinations) one table may have.
MAX_VALUES = 100_000
MAX_ROWS = 1_000_000


def parse_values(text: str) -> list[float]:
    """Parse ``"1..10"``, ``"0.5..2:0.5"``, ``"1e-4,1e-3"`` or a comma-separated mix."""
    values: list[float] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if ".." in item:
            bounds, _, step_text = item.partition(":")
            start_text, _, stop_text = bounds.partition("..")
            start, stop = float(start_text), float(stop_text)
            step = float(step_text) if step_text else 1.0
            if not all(math.isfinite(x) for x in (start, stop, step)):
                raise argparse.ArgumentTypeError(f"bad range {item!r}: expected finite numbers")
            if step <= 0 or stop < start:
                raise argparse.ArgumentTypeError(
                    f"bad range {item!r}: need start <= stop, step > 0"
                )
            span = (stop - start) / step
            if span + len(values) >= MAX_VALUES:
                raise argparse.ArgumentTypeError(
                    f"range {item!r} has too many values (at most {MAX_VALUES})"
                )
            count = math.floor(span + 1e-9) + 1
            values.extend(start + k * step for k in range(count))
        else:
            value = float(item)
            if not math.isfinite(value):
                raise argparse.ArgumentTypeError(f"expected a finite number, got {item!r}")
            values.append(value)
        if len(values) > MAX_VALUES:
            raise argparse.ArgumentTypeError(f"too many values (at most {MAX_VALUES})")
    if not values:
        raise argparse.ArgumentTypeError(f"no values in {text!r}")
    return values


def _values(text: str) -> list[float]:
    try:
        return parse_values(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _print(headers: Sequence[str], rows: list[Sequence[float]], title: str, as_csv: bool) -> None:
    if as_csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(headers)
        writer.writerows([[f"{v:.10g}" for v in row] for row in rows])
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for h in headers:
        table.add_column(h, justify="right")
    for row in rows:
        table.add_row(*(f"{v:.6g}" for v in row))
    Console().print(table)


#: Largest number of connections for the largest-rate fixed point (one rate per connection).
MAX_CONNECTIONS = 100_000


def _altman(args: argparse.Namespace) -> None:
    import numpy as np

    from plait import models

    n = np.asarray(args.n)
    if ((n < 1) | (n > MAX_CONNECTIONS) | (n != np.floor(n))).any():
        raise ValueError(f"--n: expected whole numbers in [1, {MAX_CONNECTIONS}]")
    one = models.altman_utilization(n, args.beta_keep)
    multcp = models.multcp_utilization(n, args.beta_keep)
    peak = np.array([models.largest_rate_fixed_point(int(k), args.beta_keep)[0] for k in n])
    rows = [
        (k, u1, models.synchronized_utilization(args.beta_keep), um, um / u1, x1)
        for k, u1, um, x1 in zip(n, one, multcp, peak)
    ]
    headers = ("N", "ONE E[S]/c", "ALL E[S]/c", "MulTCP E[S]/c", "MulTCP/ONE", "largest x1/c")
    title = f"Altman et al. parallel AIMD, beta_keep = {args.beta_keep:g}"
    _print(headers, rows, title, args.csv)


def _tfrc(args: argparse.Namespace) -> None:
    from plait import models

    rows = []
    for rtt, p in itertools.product(args.rtt, args.p):
        t_rto = 4.0 * rtt if args.t_rto is None else args.t_rto
        x = models.tfrc_rate(args.s, rtt, p, t_rto, args.b)
        rows.append((rtt, p, t_rto, x, x / args.s))
    headers = ("rtt s", "p", "t_RTO s", "X B/s", "X pkt/s")
    _print(headers, rows, f"TFRC (RFC 5348 3.1), s = {args.s:g} B, b = {args.b:g}", args.csv)


def _multfrc(args: argparse.Namespace) -> None:
    from plait import models

    rows = []
    for n, j, rtt, p in itertools.product(args.n, args.j, args.rtt, args.p):
        t_rto = 4.0 * rtt if args.t_rto is None else args.t_rto
        x = models.multfrc_rate(
            n, p, j, rtt, args.s, t_rto, args.b, form=args.form, refine=not args.no_refine
        )
        one = models.tfrc_rate(args.s, rtt, p, t_rto, args.b)
        # TFRC's rate underflows to 0 for extreme b or t_RTO: the ratio is then undefined.
        rows.append((n, j, rtt, p, x, x / args.s, x / one if one > 0 else float("nan")))
    headers = ("n", "j", "rtt s", "p", "X B/s", "X pkt/s", "X/TFRC")
    title = f"MulTFRC ({args.form} form), s = {args.s:g} B, b = {args.b:g}"
    _print(headers, rows, title, args.csv)


def _pftk(args: argparse.Namespace) -> None:
    from plait import models

    rows = []
    for rtt, p in itertools.product(args.rtt, args.p):
        full = models.pftk(rtt, p, args.t0, args.b, args.wmax, args.s)
        approx = models.pftk_approx(rtt, p, args.t0, args.b, args.wmax, args.s)
        simple = models.pftk_simple(rtt, p, args.b, args.s)
        rows.append((rtt, p, full, approx, simple))
    unit = "pkt/s" if args.s == 1 else "B/s"
    headers = ("rtt s", "p", f"full {unit}", f"approx {unit}", f"sqrt law {unit}")
    wmax = "none" if args.wmax is None else f"{args.wmax:g}"
    _print(headers, rows, f"PFTK, T0 = {args.t0:g} s, b = {args.b:g}, Wmax = {wmax}", args.csv)


def _multcp(args: argparse.Namespace) -> None:
    from plait import models

    rows = []
    for n in args.n:
        alpha, beta = models.multcp_original(n)
        ratio = models.aimd_equivalent_flows(alpha, beta) / n
        rows.append((n, alpha, beta, ratio, models.multcp_beta_decrease(n, n), n * n))
    headers = (
        "N",
        "alpha",
        "beta_decrease",
        "W/(N W_TCP)",
        "beta_dec for alpha=N",
        "alpha for beta_dec=1/2",
    )
    _print(headers, rows, "MulTCP and the N-TCP equivalence alpha(2-beta)/beta = 3N^2", args.csv)


_HANDLERS = {
    "altman": _altman,
    "tfrc": _tfrc,
    "multfrc": _multfrc,
    "pftk": _pftk,
    "multcp": _multcp,
}


def main(args: argparse.Namespace) -> int:
    rows = 1
    for name in ("n", "p", "j", "rtt"):
        rows *= len(getattr(args, name, None) or [0])
    if rows > MAX_ROWS:
        raise ValueError(f"model {args.model}: {rows} combinations of values (at most {MAX_ROWS})")
    _HANDLERS[args.model](args)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "model",
        help="print tables of the closed-form models",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(func=main)
    models = parser.add_subparsers(dest="model", required=True, metavar="MODEL")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--csv", action="store_true", help="print CSV instead of a table")

    p = models.add_parser("altman", help="parallel AIMD utilisation (Altman et al.)")
    p.add_argument("--n", type=_values, default=parse_values("1..10"), help="connections")
    p.add_argument(
        "--beta-keep", type=finite_float, default=0.5, help="fraction of the rate kept at a signal"
    )
    common(p)

    p = models.add_parser("tfrc", help="TFRC equation, RFC 5348 section 3.1")
    p.add_argument(
        "--p",
        type=_values,
        default=parse_values("1e-4,1e-3,0.01,0.05,0.1,0.2,0.5"),
        help="loss event rate(s)",
    )
    p.add_argument("--rtt", type=_values, default=[0.1], help="round-trip time(s), seconds")
    p.add_argument("--s", type=finite_float, default=1460.0, help="segment size, bytes")
    p.add_argument(
        "--t-rto", type=finite_float, default=None, help="timeout, seconds (default 4 rtt)"
    )
    p.add_argument("--b", type=finite_float, default=1.0, help="packets per ACK")
    common(p)

    p = models.add_parser("multfrc", help="MulTFRC equation (n emulated TCP flows)")
    p.add_argument("--n", type=_values, default=parse_values("0.5,1..4"), help="emulated flows")
    p.add_argument("--p", type=_values, default=[0.01], help="loss event rate(s)")
    p.add_argument("--j", type=_values, default=[1.0], help="packets lost per loss event")
    p.add_argument("--rtt", type=_values, default=[0.1], help="round-trip time(s), seconds")
    p.add_argument("--s", type=finite_float, default=1460.0, help="segment size, bytes")
    p.add_argument(
        "--t-rto", type=finite_float, default=None, help="timeout, seconds (default 4 rtt)"
    )
    p.add_argument("--b", type=finite_float, default=1.0, help="packets per ACK")
    p.add_argument("--form", choices=("draft", "ns2"), default="draft", help="equation form")
    p.add_argument("--no-refine", action="store_true", help="af = min(j, ceil n), no refinement")
    common(p)

    p = models.add_parser("pftk", help="Padhye et al. TCP model: full, approximate, sqrt law")
    p.add_argument(
        "--p",
        type=_values,
        default=parse_values("1e-3,0.01,0.05,0.1,0.3"),
        help="loss probability(ies)",
    )
    p.add_argument("--rtt", type=_values, default=[0.1], help="round-trip time(s), seconds")
    p.add_argument("--t0", type=finite_float, default=0.4, help="base timeout, seconds")
    p.add_argument("--b", type=finite_float, default=1.0, help="packets per ACK")
    p.add_argument("--wmax", type=finite_float, default=None, help="receiver window, packets")
    p.add_argument("--s", type=finite_float, default=1.0, help="segment size, bytes (1: packets/s)")
    common(p)

    p = models.add_parser("multcp", help="MulTCP parameters and their N-TCP equivalence")
    p.add_argument("--n", type=_values, default=parse_values("1..10"), help="emulated flows")
    common(p)
