"""`plait reproduce NAME|all`: run a paper's experiments and write an HTML report.

For each claim of the paper the report gives the paper's value, plait's value with its spread
over seeds, and a verdict: agrees within the stated tolerance, or differs and how; with the
figures and tables. Packet-level runs are a sweep (`plait sweep`): they use every core, or a
Dask cluster, and are stored under OUT/<experiment>/runs, so a second call reuses them and an
interrupted one resumes. Nothing is written into the source tree: by default everything goes
to results/reproduce under the current folder.

`plait reproduce linux-fidelity --kernel` (root) measures that experiment's grid on this
machine's kernel instead (plait testbed, one run at a time, into the committed store
experiments/linux-fidelity/kernel/; runs stored there are skipped; the estimated real time is
printed first; `--only SETTING=V[,V...]` selects settings) and writes no report.
`plait reproduce ns2-agreement` with ns-2 installed stores the ns-2 rows it had not stored before
in the committed store experiments/ns2-agreement/ns2/, which machines without ns-2 read.

Exit codes: 0 the report is written (whatever the verdicts), 1 some runs failed (each recorded;
the next call runs them again; no report), 2 a mistake in the command line (nothing written),
70 an internal error (a bug in plait: its traceback), 130 interrupted (finished runs kept).
"""

from __future__ import annotations

import argparse

from plait.cli.cluster import add_cluster_options, cluster_options


def register(sub: argparse._SubParsersAction) -> None:
    from plait.experiments import MODULES

    names = list(MODULES)
    p = sub.add_parser(
        "reproduce", help="reproduce a paper's claims and write an HTML report", description=__doc__
    )
    p.add_argument("name", choices=[*names, "all"], help="an experiment, or all of them")
    p.add_argument(
        "--out",
        metavar="DIR",
        default="results/reproduce",
        help="folder of the report (report.html) and of each experiment's stored runs",
    )
    p.add_argument(
        "--seeds",
        type=_seeds,
        default=[1, 2, 3, 4, 5],
        metavar="N|LIST",
        help="seeds of the packet-level runs: a count (5 for seeds 1..5) or a list (1,7,9)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a smaller version of every experiment (fewer N, shorter runs), for a first look",
    )
    p.add_argument("--fresh", action="store_true", help="remove stored runs first and start over")
    p.add_argument(
        "--kernel",
        action="store_true",
        help="linux-fidelity only, root: measure the grid on this machine's kernel (plait "
        "testbed), one run at a time, with the seeds and run length of --seeds/--quick, into "
        "experiments/linux-fidelity/kernel/ (runs stored there are skipped); prints the "
        "estimated real time first; no report",
    )
    p.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="SETTING=V[,V...]",
        help="with --kernel: measure only the settings with these values (part=dumbbell|mptcp, "
        "buffer, n, rtt_ms, cc, tcp); repeatable",
    )
    add_cluster_options(p)
    p.set_defaults(func=main)


def _seeds(text: str) -> list[int]:
    from plait.cli.options import seed_type

    parts = [x.strip() for x in text.split(",")]
    try:
        values = [seed_type(x) for x in parts]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected a count or a comma-separated list of seeds, got {text!r}"
        ) from None
    if len(values) == 1 and "," not in text:
        if not 1 <= values[0] <= 1000:
            raise argparse.ArgumentTypeError(f"expected a count in [1, 1000], got {text}")
        return list(range(1, values[0] + 1))
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"a seed appears twice in {text!r}")
    return values


class BarProgress:
    """Advances a rich progress task by one for every run that ends (a sweep's progress)."""

    def __init__(self, bar, task) -> None:
        self.bar = bar
        self.task = task

    def start(self, total: int, reused: int, cluster) -> None:
        self.bar.update(self.task, total=total, completed=reused)

    def advance(self, ok: bool) -> None:
        self.bar.advance(self.task)

    def stop(self) -> None:
        pass


def main(args: argparse.Namespace) -> int:
    import datetime
    import json
    import sys
    from pathlib import Path

    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from plait import __core_id__, __version__
    from plait.cli.text import plain, safe
    from plait.experiments import Options, RunsFailed, experiments
    from plait.output import Outputs
    from plait.report import claim_records, render

    if args.kernel or args.only:
        return _kernel(args)
    chosen = experiments()
    if args.name != "all":
        chosen = {args.name: chosen[args.name]}
    where = cluster_options(args)
    outputs = Outputs()
    folder = outputs.folder("--out", args.out, ("report.html",))
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    sections = []
    for name, experiment in chosen.items():
        options = Options(
            out=Path(folder.path) / name,
            seeds=args.seeds,
            quick=args.quick,
            fresh=args.fresh,
            where=where,
        )
        total = experiment.runs(options)
        with Progress(console=console, transient=True) as bar:
            task = bar.add_task(f"{name}: {total} packet-level runs", total=total)
            options.progress = BarProgress(bar, task)
            try:
                sections.append(experiment.reproduce(options))
            except RunsFailed as e:
                print(
                    f"plait: error: {safe(str(e))}; the runs that ended are stored, the next "
                    "call runs the failed ones again; no report written",
                    file=sys.stderr,
                )
                return 1
    generated = (
        f"plait {__version__} (core {__core_id__}), {datetime.date.today().isoformat()}"
        + (", quick version" if args.quick else "")
        + f", seeds {', '.join(str(s) for s in args.seeds)}"
    )
    html = render(sections, "plait: the papers' claims reproduced", generated)
    with outputs.writing() as tx:
        tx.write_text(folder.file("report.html"), html)
        # Each experiment's claims for programs: the records the report shows, with numbers
        # where the experiment gives them (docs/reproduce.md, "claims.json").
        for section in sections:
            records = {"generated": generated, "claims": claim_records(section)}
            text = json.dumps(records, indent=1, allow_nan=False) + "\n"
            tx.write_text(folder.file(f"{section.name}/claims.json"), text)
    out = Console(highlight=False, soft_wrap=True)
    for section in sections:
        table = Table(
            title=f"{section.title}: {sum(c.agrees for c in section.claims)} of "
            f"{len(section.claims)} claims agree"
        )
        table.add_column("verdict")
        table.add_column("claim")
        table.add_column("where")
        for c in section.claims:
            table.add_row("agrees" if c.agrees else "differs", c.claim, c.where)
        out.print(table)
    out.print(plain(f"report: {folder.path / 'report.html'}"))
    return 0


def _kernel(args: argparse.Namespace) -> int:
    """`--kernel`: the kernel side of linux-fidelity (plait.experiments.linux_fidelity)."""
    import sys
    from pathlib import Path

    if args.name != "linux-fidelity":
        print("plait reproduce: --kernel: only for linux-fidelity", file=sys.stderr)
        return 2
    if not args.kernel:
        print("plait reproduce: --only: only with --kernel", file=sys.stderr)
        return 2
    from plait.experiments import Options, experiments, linux_fidelity

    # The registered experiment's settings for these options: the simulated side's grid, run
    # length and seeds, and the store of kernel runs.
    options = Options(out=Path(args.out), seeds=args.seeds, quick=args.quick)
    settings = experiments()["linux-fidelity"].settings(options)
    return linux_fidelity.kernel_main(settings, args.only)
