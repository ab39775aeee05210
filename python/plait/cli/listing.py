"""`plait list`: the congestion controllers (single-path and coupled), packet schedulers, queues,
sources and loss models a scenario can name, with every parameter's type, unit, default and
allowed range. Both the table and `--json` print the registry the scenario parser itself
reads."""

from __future__ import annotations

import argparse
import json

# Category, and the title of its table.
TITLES = {
    "controller": "congestion controllers (flow cc)",
    "coupled": "coupled controllers (mptcp flow cc; or uncoupled:<controller>)",
    "scheduler": "packet schedulers (mptcp flow scheduler)",
    "queue": "queues (link queue)",
    "source": "sources (flow kind)",
    "loss": "loss models (link loss)",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "list",
        help="list controllers, coupled controllers, schedulers, queues, sources, loss models",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the registry as JSON: every parameter's type, unit, default and range",
    )
    p.description = __doc__
    p.set_defaults(func=main)


def describe_param(p: dict) -> str:
    """One line: `beta = 0.7  number in (0, 1)`, `n  number > 0, required`,
    `hold  duration; unset: one mean RTT`."""
    kind = p["type"] if not p["unit"] else f"{p['type']} ({p['unit']})"
    if p["choices"]:
        kind = " | ".join(p["choices"])
    elif p["range_text"]:
        text = p["range_text"]
        kind += f" in {text}" if text[0] in "([" else f" {text}"
    if p["required"]:
        return f"{p['name']}  {kind}, required"
    if p["when_unset"] is not None:
        return f"{p['name']}  {kind}; unset: {p['when_unset']}"
    section = f"  (also [{p['section']}])" if p["section"] else ""
    return f"{p['name']} = {p['default']}  {kind}{section}"


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from plait._core import catalog_json
    from plait.cli.text import plain

    entries = json.loads(catalog_json())
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    # Every category of the registry has a table: one added to the registry and not here
    # gets its own name as the title rather than going missing.
    titles = dict(TITLES)
    for e in entries:
        titles.setdefault(e["category"], e["category"])
    console = Console()
    for category, title in titles.items():
        table = Table(title=title, show_lines=True)
        table.add_column("name")
        table.add_column("parameters: name = default, type, range")
        table.add_column("description")
        for e in entries:
            if e["category"] != category:
                continue
            params = "\n".join(describe_param(p) for p in e["params"]) or "-"
            table.add_row(plain(e["name"]), plain(params), plain(e["description"]))
        console.print(table)
    return 0
