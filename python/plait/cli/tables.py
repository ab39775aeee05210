"""Readable tables for the terminal (rich)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from plait.cli.text import plain


def _fmt(value: Any, unit: str = "") -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if unit == "bps":
            for scale, name in ((1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s")):
                if abs(value) >= scale:
                    return f"{value / scale:.2f} {name}"
            return f"{value:.0f} b/s"
        if unit == "ms":
            return f"{value * 1e3:.1f}"
        if unit == "%":
            return f"{100 * value:.1f}%"
        return f"{value:.3g}"
    return str(value)


def _rows(table: Any) -> Iterable[Any]:
    """The rows of a table, each with its columns as attributes: a DataFrame (of a
    :class:`plait.Result`) or a list of dicts (of a :class:`plait.api.RunRows`)."""
    if isinstance(table, list):
        return (SimpleNamespace(**row) for row in table)
    return table.itertuples(index=False)


def print_result(result, title: str = "", console: Console | None = None) -> None:
    """Prints the flows, the paths of multipath flows (when there are any) and the links of a
    :class:`plait.Result` or a :class:`plait.api.RunRows`."""
    console = console or Console()
    flows = Table(
        title=plain(f"{title} — flows over [{result.warmup_s:g}s, {result.duration_s:g}s]")
    )
    for col in ("flow", "goodput", "wire", "retx", "fast rtx", "RTOs", "RTT ms", "p99 ms"):
        flows.add_column(col, justify="left" if col == "flow" else "right")
    for r in _rows(result.flows):
        flows.add_row(
            plain(r.name),
            _fmt(r.goodput_bps, "bps"),
            _fmt(r.throughput_bps, "bps"),
            str(r.retransmissions),
            str(r.fast_retransmits),
            str(r.timeouts),
            _fmt(r.rtt_mean_s, "ms"),
            _fmt(r.rtt_p99_s, "ms"),
        )
    console.print(flows)
    paths = list(_rows(result.paths))
    if paths:
        console.print(_paths_table(paths))
    links = Table(title="links")
    for col in (
        "link",
        "direction",
        "utilisation",
        "drops",
        "loss drops",
        "down drops",
        "mean queue (pkts)",
    ):
        links.add_column(col, justify="left" if col in ("link", "direction") else "right")
    for r in _rows(result.links):
        links.add_row(
            plain(r.name),
            plain(r.direction),
            _fmt(r.utilization, "%"),
            str(r.drops),
            str(r.loss_drops),
            str(r.down_drops),
            f"{r.mean_queue_packets:.1f}",
        )
    console.print(links)
    console.print(
        Text(
            f"seed {result.seed}  ·  Jain fairness {_jain(result.jain_fairness)}  ·  "
            f"{result.events:,} events  ·  {result.wall_seconds:.2f} s wall"
        )
    )


def _paths_table(paths: list[Any]) -> Table:
    """One row per path of each multipath flow (an MPTCP subflow, an MPAT window): its route,
    what it carried and how it fared (the `paths` table, docs/results.md)."""
    table = Table(title="paths of multipath flows")
    columns = ("flow", "path", "route", "wire", "data share", "retx", "RTOs", "RTT ms", "cwnd KB")
    for col in columns:
        table.add_column(col, justify="left" if col in ("flow", "route") else "right")
    for r in paths:
        table.add_row(
            plain(r.flow),
            str(r.path),
            plain(r.route),
            _fmt(r.throughput_bps, "bps"),
            _fmt(r.data_share, "%"),
            str(r.retransmissions),
            str(r.timeouts),
            _fmt(r.rtt_mean_s, "ms"),
            "-" if math.isnan(r.cwnd_mean_bytes) else f"{r.cwnd_mean_bytes / 1e3:.1f}",
        )
    return table


def _jain(value: float) -> str:
    # Jain's index is NaN when no flow had goodput in the window (0/0, docs/results.md).
    if math.isnan(value):
        return "n/a (no goodput)"
    return f"{value:.4f}"
