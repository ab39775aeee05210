#!/usr/bin/env python3
"""Proves that two revisions of the simulator give the same results on every scenario in the
repository: `scripts/same_results.sh OLD_REV [NEW_REV]` (NEW_REV defaults to HEAD).

Both revisions are checked out as git worktrees under --workdir (default /tmp/same_results),
each built in release mode with its own CARGO_TARGET_DIR (crates/plait-core/examples/
run_summary.rs is copied into a revision that lacks it), and every run below is made with
both; their JSON lines (the golden summary, event counts and packet counters included, plus
digests of the time series, picks and drops) must be identical byte for byte.

The runs: every plain scenario TOML of the repository (tests/golden, experiments/**, examples/**
and the complete scenarios in the ```toml blocks of docs/*.md and README.md) x seeds 1 and 2
with lookahead on, the golden ones with lookahead off too, and every packet scheduler x coupled
controller on tests/golden/mptcp_outage.toml (the matrix of earlier performance work). Runs are
whole, or cut to --cut of simulated time where the scenario allows it; a run over --cap
seconds of wall time is skipped and listed; a scenario the old revision refuses is skipped with
its message. Prints a table and exits 1 if any run differs (2 on bad arguments or a failed
build). Only the standard library is used.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = Path("crates/plait-core/examples/run_summary.rs")
SEEDS = (1, 2)
SCHEDULERS = ("blest", "capacity", "ecf", "linux", "min_rtt", "redundant", "round_robin")
COUPLED = ("balia", "lia", "mpfast", "olia", "wvegas", "uncoupled:reno")
MATRIX_SCENARIO = "tests/golden/mptcp_outage.toml"
MATRIX_FLOWS = ("lia", "olia", "balia")


def git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@dataclass
class Case:
    """One run, made with both revisions."""

    label: str  # scenario (and matrix cell)
    path: str  # relative to a worktree, or absolute (docs blocks)
    seed: int
    lookahead: str
    sets: list[str] = field(default_factory=list)
    status: str = ""  # identical | DIFFERS | skipped
    detail: str = ""


def worktree(rev: str, sha: str, workdir: Path) -> Path:
    """A worktree of `sha` under workdir, made once and reused."""
    path = workdir / f"wt-{sha[:12]}"
    if path.exists():
        if git("rev-parse", "HEAD", cwd=path) == sha:
            return path
        shutil.rmtree(path)
        git("worktree", "prune")
    git("worktree", "add", "--detach", str(path), sha)
    print(f"worktree of {rev} ({sha[:12]}) at {path}", flush=True)
    return path


def build(tree: Path, sha: str, workdir: Path) -> Path:
    """Builds run_summary in release mode with the revision's own target directory."""
    example = tree / EXAMPLE
    if not example.exists():
        shutil.copy(REPO / EXAMPLE, example)
        print(f"copied {EXAMPLE} into {tree.name}", flush=True)
    target = workdir / f"target-{sha[:12]}"
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    cmd = ["nice", "cargo", "build", "--release", "-q", "-p", "plait-core"]
    cmd += ["--example", "run_summary"]
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit(f"same_results: the build of {sha[:12]} failed (above)")
    print(f"built {sha[:12]} in {time.monotonic() - t0:.0f} s", flush=True)
    return target / "release" / "examples" / "run_summary"


def is_plain_scenario(text: str) -> bool:
    """A scenario file (links and flows), not a sweep, testbed or partial example."""
    heads = set(re.findall(r"^\s*\[\[?\s*([A-Za-z_.]+)\s*\]\]?", text, re.M))
    return {"link", "flow"} <= heads and not heads & {"sweep", "base", "grid", "testbed"}


def doc_blocks(tree: Path, out: Path) -> list[tuple[str, Path]]:
    """The complete scenarios in ```toml blocks of the docs, each written to a file."""
    out.mkdir(parents=True, exist_ok=True)
    found = []
    for md in sorted([*tree.glob("docs/**/*.md"), tree / "README.md"]):
        if not md.exists():
            continue
        blocks = re.findall(r"^```toml\n(.*?)^```", md.read_text(), re.M | re.S)
        for i, block in enumerate(blocks):
            if is_plain_scenario(block):
                rel = md.relative_to(tree)
                f = out / f"{str(rel).replace('/', '_')}.{i}.toml"
                f.write_text(block)
                found.append((f"{rel}#{i}", f))
    return found


def cases(trees: list[Path], workdir: Path) -> list[Case]:
    """Every run to compare. A scenario file is the new revision's (the first tree), or the old
    one's if the new revision removed it; both revisions run the same file (one the old
    revision does not know is then skipped with its message)."""
    files: dict[str, str] = {}
    for tree in trees:
        for pattern in ("tests/golden/*.toml", "experiments/**/*.toml", "examples/**/*.toml"):
            for p in sorted(tree.glob(pattern)):
                rel = str(p.relative_to(tree))
                if rel not in files and p.name not in ("Cargo.toml", "pyproject.toml"):
                    if is_plain_scenario(p.read_text()):
                        files[rel] = str(p)
        for label, p in doc_blocks(tree, workdir / f"docs-{tree.name}"):
            files.setdefault(label, str(p))
    tree = trees[0]
    out = []
    for label, path in sorted(files.items(), key=lambda f: (not f[0].startswith("tests/"), f[0])):
        golden = label.startswith("tests/golden/")
        for look in ("on", "off") if golden else ("on",):
            out += [Case(label, path, s, look) for s in SEEDS]
    for sched in SCHEDULERS:
        for cc in COUPLED:
            sets = [
                f"flow.{f}.{k}={v}"
                for f in MATRIX_FLOWS
                for k, v in (("cc", cc), ("scheduler", sched))
            ]
            label = f"{MATRIX_SCENARIO} [{sched} x {cc}]"
            out += [Case(label, str(tree / MATRIX_SCENARIO), s, "on", sets) for s in SEEDS]
    return out


def run(binary: Path, tree: Path, case: Case, sets: list[str], cap: float):
    """(returncode, stdout line or stderr line); returncode None when over the cap."""
    cmd = ["nice", str(binary), case.path, "--seed", str(case.seed)]
    cmd += ["--lookahead", case.lookahead]
    for s in sets:
        cmd += ["--set", s]
    try:
        r = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=cap)
    except subprocess.TimeoutExpired:
        return None, f"over {cap:.0f} s"
    if r.returncode != 0:
        return r.returncode, (r.stderr.strip().splitlines() or ["(no message)"])[-1]
    return 0, r.stdout.strip()


def leaves(v, prefix: str, out: dict) -> None:
    """Every leaf of a summary by a readable path (`flows[bulk.3].goodput_bps`)."""
    if isinstance(v, dict):
        for k in sorted(v):
            leaves(v[k], f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            label = str(i)
            if isinstance(x, dict) and isinstance(x.get("name"), str):
                label = x["name"] + (f":{x['direction']}" if "direction" in x else "")
            leaves(x, f"{prefix}[{label}]", out)
    else:
        out[prefix] = v


def first_difference(old: str, new: str) -> str:
    """The first field (in path order) whose value differs, and the count of such fields."""
    try:
        a, b = {}, {}
        leaves(json.loads(old), "", a)
        leaves(json.loads(new), "", b)
    except json.JSONDecodeError:
        return "output is not JSON"
    keys = sorted(set(a) | set(b))
    diff = [k for k in keys if a.get(k, "(missing)") != b.get(k, "(missing)")]
    if not diff:
        return "same values, different text"
    k = diff[0]
    return f"{k}: {a.get(k, '(missing)')} -> {b.get(k, '(missing)')} ({len(diff)} fields differ)"


def compare(
    case: Case, old: tuple[Path, Path], new: tuple[Path, Path], cut: str | None, cap: float
) -> Case:
    # With --cut: the cut alone, else with a 1 s warm-up (the scenario's is longer), else the
    # whole run (an event or a start lies beyond the cut).
    tries = [[f"simulation.duration={cut}"], [f"simulation.duration={cut}", "simulation.warmup=1s"]]
    tries = (tries if cut else []) + [[]]
    for extra in tries:
        sets = case.sets + extra
        rc, out_old = run(old[0], old[1], case, sets, cap)
        if rc != 2:
            break
    if rc != 0:
        case.status = "skipped"
        case.detail = ("old revision " if rc is None else "old revision refuses it: ") + out_old
        return case
    rc, out_new = run(new[0], new[1], case, sets, cap)
    if rc is None:
        case.status, case.detail = "skipped", f"new revision {out_new} (old within)"
    elif rc != 0:
        case.status, case.detail = "DIFFERS", f"new revision fails: {out_new}"
    elif out_new == out_old:
        case.status = "identical"
        case.detail = "whole run" if cut and not extra else ""
    else:
        case.status, case.detail = "DIFFERS", first_difference(out_old, out_new)
    if case.status != "identical":
        print(
            f"{case.label} seed {case.seed} lookahead {case.lookahead}:",
            f"{case.status}: {case.detail}",
            flush=True,
        )
    return case


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old_rev")
    ap.add_argument("new_rev", nargs="?", default="HEAD")
    ap.add_argument("--cap", type=float, default=120.0, help="wall seconds per run (120)")
    ap.add_argument(
        "--cut",
        default="none",
        help="simulated time per run where the scenario allows it (e.g. 4s); none: whole runs",
    )
    ap.add_argument(
        "--only", default=None, help="regex: only the runs whose scenario label matches"
    )
    ap.add_argument("--jobs", type=int, default=1, help="runs at a time (1)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/same_results"))
    a = ap.parse_args()
    if a.cap <= 0 or a.jobs < 1:
        print("same_results: --cap must be > 0 and --jobs >= 1", file=sys.stderr)
        return 2
    cut = None if a.cut == "none" else a.cut
    try:
        old_sha = git("rev-parse", "--verify", a.old_rev + "^{commit}")
        new_sha = git("rev-parse", "--verify", a.new_rev + "^{commit}")
    except subprocess.CalledProcessError as e:
        print(f"same_results: not a revision: {e.stderr.strip()}", file=sys.stderr)
        return 2
    a.workdir.mkdir(parents=True, exist_ok=True)
    trees = {
        sha: worktree(rev, sha, a.workdir)
        for rev, sha in ((a.old_rev, old_sha), (a.new_rev, new_sha))
    }
    bins = {sha: build(trees[sha], sha, a.workdir) for sha in trees}
    old, new = (bins[old_sha], trees[old_sha]), (bins[new_sha], trees[new_sha])
    todo = [
        c
        for c in cases([trees[new_sha], trees[old_sha]], a.workdir)
        if not a.only or re.search(a.only, c.label)
    ]
    print(
        f"{len(todo)} runs, {old_sha[:12]} against {new_sha[:12]}, cut {a.cut}, cap {a.cap:.0f} s",
        flush=True,
    )
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        done = list(pool.map(lambda c: compare(c, old, new, cut, a.cap), todo))
    width = max(len(c.label) for c in done) if done else 10
    print(f"\n{'scenario':<{width}}  seed  look  identical  first difference / note")
    for c in done:
        same = {"identical": "yes", "DIFFERS": "NO", "skipped": "skip"}[c.status]
        print(f"{c.label:<{width}}  {c.seed:>4}  {c.lookahead:<4}  {same:<9}  {c.detail}")
    counts = {s: sum(c.status == s for c in done) for s in ("identical", "DIFFERS", "skipped")}
    print(
        f"\n{len(done)} runs: {counts['identical']} identical, {counts['DIFFERS']} differ, "
        f"{counts['skipped']} skipped ({time.monotonic() - t0:.0f} s; "
        f"{old_sha[:12]} -> {new_sha[:12]})"
    )
    return 1 if counts["DIFFERS"] else 0


if __name__ == "__main__":
    sys.exit(main())
