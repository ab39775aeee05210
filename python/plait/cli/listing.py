"""`plait list`: the controllers, queues, sources and loss models a scenario can name."""

from __future__ import annotations

import argparse
import json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="list controllers, queues, sources, loss models")
    p.add_argument("--json", action="store_true", help="print the catalogue as JSON")
    p.description = __doc__
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from plait._core import catalog_json

    entries = json.loads(catalog_json())
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    console = Console()
    titles = {
        "controller": "congestion controllers (flow cc)",
        "queue": "queues (link queue)",
        "source": "sources (flow kind)",
        "loss": "loss models (link loss)",
    }
    for category, title in titles.items():
        table = Table(title=title, show_lines=False)
        table.add_column("name")
        table.add_column("parameters (default)")
        table.add_column("description")
        for e in entries:
            if e["category"] != category:
                continue
            params = ", ".join(f"{p['name']}={p['default']}" for p in e["params"]) or "-"
            table.add_row(e["name"], params, e["description"])
        console.print(table)
    return 0
