"""Every code block of README.md and docs/*.md is tested, so that an example cannot rot.

- ```toml blocks are whole scenarios, validated by `plait.validate` (and a `[sweep]` table's
  runs resolved as `plait sweep` does), unless the line before the block marks them:
  `<!-- fragment -->`: tables completed with the base scenario below (merged: its `[[flow]]`
  entries replace the base flows, other entries are added) and validated;
  `<!-- fragment: link -->`: each line is one key of a `[[link]]`, tried on the base scenario's
  `bottleneck` link. An unmarked block that is not a whole valid scenario fails.
- ```json blocks are whole scenarios, validated.
- ```python and ```sh blocks run, in the order of their page, in one temporary folder per page
  (with `experiments/` of the repository and the placeholder files of `PLACEHOLDERS`, which
  stand for the user's own scenarios), python blocks of a page sharing one namespace. A
  `plait` command runs in this process and must exit 0; commands that take minutes or need a
  cluster (`NOT_RUN`) are only parsed by plait's own parser, and `make` targets must exist.
- Examples are written to run in seconds as they stand (the multipath page's runs 10 s of its
  testbed, overriding the duration); the subcommands that take minutes are marked here
  (`NOT_RUN`) and only parsed.
- Blocks without a language are output, formulas and layouts: not run. One marked
  `<!-- output of: COMMAND ; COMMAND ... -->` is what those plait commands print: each of its
  lines must appear in their output (spaces as any run of white space, `...` as anything).

Links between the pages (`[text](file.md#anchor)`) must lead to a file and a heading that
exist. The whole module takes about 10 s on a loaded 2-core machine.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import plait
import pytest
from conftest import SCENARIO_TOML
from plait.cli import COMMANDS, build_parser, main
from plait.sweeps import spec as sweep_spec

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

#: Files the examples name as the user's own: small scenarios, so that the examples run in
#: seconds (`dumbbell.toml` is the repository's dumbbell).
_SMALL_SWEEP = '\n[sweep]\nseeds = 2\ngrid = { "flow.bulk.count" = [1, 2] }\n'
PLACEHOLDERS = {
    "scenario.toml": SCENARIO_TOML,
    "my-scenario.toml": SCENARIO_TOML,
    "big.toml": SCENARIO_TOML,
    "sweep.toml": SCENARIO_TOML + _SMALL_SWEEP,
    "dumbbell.toml": (REPO / "experiments" / "dumbbell" / "dumbbell.toml").read_text("utf-8"),
    "s.toml": (
        '[simulation]\nduration = "10s"\n\n'
        '[[link]]\nname = "l"\nfrom = "a"\nto = "b"\nrate = "10Mbps"\ndelay = "10ms"\n\n'
        '[[flow]]\nname = "f"\nkind = "tcp"\nsrc = "a"\ndst = "b"\n'
    ),
}

#: Subcommands only parsed, never run here, and why (each has its own tests in quick form).
NOT_RUN = {
    "bench": "a benchmark, measured alone (test_cli.py runs it short)",
    "reproduce": "minutes of runs (test_cli.py and the experiments' tests run it quick)",
    "testbed": "needs root and the real kernel's network namespaces (its own tests)",
}
#: Options that need a cluster: a command with one of them is only parsed.
CLUSTER_OPTIONS = ("--scheduler", "--slurm", "--pbs")

#: The scenario a fragment is completed with: every node and link name the pages' fragments
#: use (a, b, gateway, s, d, h1, h2 and the two paths a1-p1-b1 and a2-p2-b2 between h1 and
#: h2; links `bottleneck` and `right`) and one flow `bulk`.
BASE = {
    "simulation": {"duration": "60s"},
    "link": [
        {"name": "bottleneck", "from": "a", "to": "b", "rate": "100Mbps", "delay": "10ms"},
        {"name": "left", "from": "a", "to": "gateway", "rate": "100Mbps", "delay": "5ms"},
        {"name": "right", "from": "gateway", "to": "b", "rate": "100Mbps", "delay": "5ms"},
        {"name": "sd", "from": "s", "to": "d", "rate": "100Mbps", "delay": "10ms"},
        *(
            {"name": f"{x}{y}", "from": x, "to": y, "rate": "100Mbps", "delay": "5ms"}
            for x, y in [
                ("h1", "a1"),
                ("a1", "p1"),
                ("p1", "b1"),
                ("b1", "h2"),
                ("h1", "a2"),
                ("a2", "p2"),
                ("p2", "b2"),
                ("b2", "h2"),
            ]
        ),
    ],
    "flow": [{"name": "bulk", "kind": "tcp", "src": "a", "dst": "b"}],
}


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, from 1
    lang: str
    text: str
    marker: str  # the HTML comment on the line before the fence, without <!-- -->, or ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*(.*?)\s*-->\s*$")


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent = len(m.group(1))
        end = i + 1
        while end < len(lines) and not re.match(r"^\s*```\s*$", lines[end]):
            end += 1
        assert end < len(lines), f"{page.name}:{i + 1}: unclosed code block"
        marker = _MARKER.match(lines[i - 1]) if i > 0 else None
        body = "\n".join(line[indent:] for line in lines[i + 1 : end]) + "\n"
        out.append(Block(page, i + 1, m.group(2), body, marker.group(1) if marker else ""))
        i = end + 1
    return out


ALL = [b for page in PAGES for b in blocks(page)]
KNOWN = {"", "toml", "json", "python", "sh"}


def test_every_block_has_a_language_that_is_tested_or_none():
    unknown = [f"{b.where}: ```{b.lang}" for b in ALL if b.lang not in KNOWN]
    assert not unknown, unknown
    markers = [
        b
        for b in ALL
        if b.marker
        and not (b.marker in ("fragment", "fragment: link") and b.lang == "toml")
        and not (b.marker.startswith("output of:") and b.lang == "")
    ]
    assert not markers, [f"{b.where}: <!-- {b.marker} -->" for b in markers]
    # A block of plait commands is tagged so that it runs; an untagged one may only be a
    # synopsis (with [optional] parts) or output (`plait: error: ...`).
    untagged = [
        b.where
        for b in ALL
        if b.lang == "" and re.match(r"(\.venv/bin/)?plait ", b.text) and "[" not in b.text
    ]
    assert not untagged, f"commands in blocks without ```sh: {untagged}"
    # The pages have examples of every kind tested here.
    assert {b.lang for b in ALL} >= {"toml", "json", "python", "sh"}


# --- Scenarios ------------------------------------------------------------------------------


def merged(fragment: dict) -> dict:
    """The base scenario completed with a fragment's tables."""
    out = json.loads(json.dumps(BASE))
    for key, value in fragment.items():
        if key == "flow":
            out["flow"] = value
        elif isinstance(value, list):
            out.setdefault(key, []).extend(value)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key].update(value)
        else:
            out[key] = value
    return out


def check_scenario(scenario: dict, where: str) -> None:
    try:
        plait.validate(scenario)
        if "sweep" in scenario:
            sweep_spec.load(scenario).runs()
    except ValueError as e:
        pytest.fail(f"{where}: {e}")


TOML = [b for b in ALL if b.lang == "toml"]


@pytest.mark.parametrize("block", TOML, ids=[b.where for b in TOML])
def test_toml_block(block: Block):
    if block.marker == "fragment: link":
        for line in block.text.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                scenario = merged({})
                scenario["link"][0].update(tomllib.loads(line))
                check_scenario(scenario, f"{block.where}: {line.strip()}")
        return
    try:
        data = tomllib.loads(block.text)
    except tomllib.TOMLDecodeError as e:
        pytest.fail(f"{block.where}: not TOML: {e}")
    if block.marker == "fragment":
        check_scenario(merged(data), block.where)
        return
    if "simulation" not in data:
        pytest.fail(
            f"{block.where}: not a whole scenario (no [simulation]); a fragment must be "
            "marked <!-- fragment --> on the line before the block"
        )
    check_scenario(data, block.where)


@pytest.mark.parametrize(
    ("marker", "text", "message"),
    [
        ("", '[[flow]]\nname = "f"\nkind = "tcp"\nsrc = "a"\ndst = "b"\n', "not a whole scenario"),
        ("fragment", '[[flow]]\nname = "f"\nkind = "tcpp"\nsrc = "a"\ndst = "b"\n', "tcpp"),
        ("fragment", "[[flow]]\nname = \n", "not TOML"),
        ("fragment: link", 'queue = { kind = "droptail", packets = 0 }\n', "packets"),
        ("fragment", '[sweep]\ngrid = { "flow.bulk.cnt" = [1, 2] }\n', "cnt"),
    ],
    ids=["unmarked-fragment", "bad-fragment", "not-toml", "bad-link-key", "bad-sweep"],
)
def test_a_broken_block_fails(marker, text, message):
    block = Block(REPO / "README.md", 1, "toml", text, marker)
    with pytest.raises(pytest.fail.Exception, match=message):
        test_toml_block(block)


JSON = [b for b in ALL if b.lang == "json"]


@pytest.mark.parametrize("block", JSON, ids=[b.where for b in JSON])
def test_json_block(block: Block):
    check_scenario(json.loads(block.text), block.where)


# --- Examples that run ----------------------------------------------------------------------


def commands(text: str) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments dropped."""
    return [
        words
        for line in text.replace("\\\n", " ").splitlines()
        if (words := shlex.split(line, comments=True))
    ]


def makefile_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return {m.group(1) for m in re.finditer(r"^([A-Za-z][\w.-]*)\s*:", text, re.M)}


def run_command(words: list[str], where: str) -> None:
    program, args = words[0], words[1:]
    if program == "make":
        missing = set(args) - makefile_targets()
        assert not missing, f"{where}: make has no target {sorted(missing)}"
        return
    assert program in ("plait", ".venv/bin/plait"), f"{where}: not a plait command: {words}"
    assert args and args[0] in COMMANDS, f"{where}: unknown subcommand: {words}"
    shown = shlex.join(words)
    try:
        with contextlib.redirect_stderr(io.StringIO()) as err:
            build_parser(args[0]).parse_args(args)
    except SystemExit:
        pytest.fail(f"{where}: `{shown}` does not parse: {err.getvalue().strip()}")
    if args[0] in NOT_RUN or any(a.split("=")[0] in CLUSTER_OPTIONS for a in args):
        return
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    assert code == 0, f"{where}: `{shown}` exited {code}: {err.getvalue().strip()[-2000:]}"


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "experiments").symlink_to(REPO / "experiments", target_is_directory=True)
    for name, text in PLACEHOLDERS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


RUNNABLE_PAGES = [p for p in PAGES if any(b.lang in ("python", "sh") for b in blocks(p))]


@pytest.mark.parametrize("page", RUNNABLE_PAGES, ids=[p.name for p in RUNNABLE_PAGES])
def test_examples_run(page: Path, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(workspace(tmp_path))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("COLUMNS", "200")
    text = page.read_text(encoding="utf-8")
    if "OUT/" in text:
        # The pages' name for a sweep's results folder: one stored table, as they say.
        assert main(["sweep", "sweep.toml", "--out", "OUT", "--quiet"]) == 0
    namespace: dict = {"__name__": "__main__"}
    for block in blocks(page):
        if block.lang == "python":
            code = compile(block.text, block.where, "exec")
            exec(code, namespace)  # noqa: S102 - the page's own example
        elif block.lang == "sh":
            for words in commands(block.text):
                run_command(words, block.where)
        capsys.readouterr()


OUTPUTS = [b for b in ALL if b.marker.startswith("output of:")]


@pytest.mark.parametrize("block", OUTPUTS, ids=[b.where for b in OUTPUTS])
def test_output_is_what_the_commands_print(block: Block, tmp_path, monkeypatch):
    monkeypatch.chdir(workspace(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")
    printed = []
    for command in block.marker.removeprefix("output of:").split(" ; "):
        words = shlex.split(command)
        assert words[0] == "plait", f"{block.where}: not a plait command: {command}"
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(words[1:])
        printed.append(out.getvalue() + err.getvalue())
    output = " ".join(" ".join(printed).split())
    for line in block.text.splitlines():
        if line.strip():
            pattern = r"\s+".join(
                ".*?".join(map(re.escape, word.split("..."))) for word in line.split()
            )
            assert re.search(pattern, output), f"{block.where}: not printed: {line.strip()}"


# --- Links ----------------------------------------------------------------------------------


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub makes them: lower case, punctuation other
    than `-` and `_` dropped, spaces as `-`."""
    out = set()
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        if not in_code and (m := re.match(r"^#+\s+(.*)$", line)):
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_links_lead_somewhere(page: Path):
    broken = []
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(f"{target}: no file {file}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not broken, f"{page.name}: {broken}"


# --- Facts the pages state that the code decides ----------------------------------------------


def test_flow_kinds_listed_are_the_registered_sources():
    from plait._core import catalog_json

    sources = {e["name"] for e in json.loads(catalog_json()) if e["category"] == "source"}
    text = (REPO / "docs" / "scenario.md").read_text(encoding="utf-8")
    row = next(
        line
        for line in text.splitlines()
        if line.startswith("| `kind` |") and "the protocol the flow runs" in line
    )
    # The row names the papers' protocols and points to the generated table of every one.
    assert "(#sources-kind)" in row.split("|")[2]
    assert set(re.findall(r'`"(\w+)"`', row.split("|")[2])) <= sources
    table = text[text.index("<!-- registry:sources -->") :]
    table = table[: table.index("<!-- /registry -->")]
    assert set(re.findall(r"^\*\*`(\w+)`\*\*:", table, re.M)) == sources


def test_batch_size_target_is_what_the_help_and_the_page_say(capsys):
    from plait.sweeps.engine import TARGET_TASK_SECONDS

    said = f"about {TARGET_TASK_SECONDS:g} s"
    with pytest.raises(SystemExit):
        build_parser("sweep").parse_args(["sweep", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"--batch N runs per task (default: sized so a task takes {said})" in help_text
    page = " ".join((REPO / "docs" / "sweeps.md").read_text(encoding="utf-8").split())
    assert f"each task carries {said} of work" in page


def test_sweep_tables_listed_are_the_result_tables():
    from plait.api import TABLES

    text = (REPO / "docs" / "sweeps.md").read_text(encoding="utf-8")
    item = text[text.index("- **`tables`**: any of") :].split("\n- ")[0]
    listed = [t for t in re.findall(r"`(\w+)`", item) if t != "tables"]
    assert [t for t in listed if t in TABLES] == list(TABLES)


def test_flow_drops_count_every_cause_as_the_page_says():
    # A TCP flow over one link that is down from 3 s to 5 s: its drops are the links' queue,
    # loss-model and link-down drops together.
    scenario = {
        "simulation": {"duration": "8s"},
        "link": [
            {
                "name": "l",
                "from": "a",
                "to": "b",
                "rate": "10Mbps",
                "delay": "10ms",
                "queue": {"packets": 100},
                "loss": {"kind": "periodic", "every": 500},
            }
        ],
        "flow": [{"name": "f", "kind": "tcp", "src": "a", "dst": "b"}],
        "event": [
            {"at": "3s", "link": "l", "action": "down"},
            {"at": "5s", "link": "l", "action": "up"},
        ],
    }
    r = plait.run(scenario)
    links = r.links[["drops", "loss_drops", "down_drops"]].sum()
    assert (links > 0).all(), links
    assert r.flows.drops.sum() == links.sum()
    text = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    row = next(
        line
        for line in text.splitlines()
        if line.startswith("| drops | packets | W | packets of the flow")
    )
    for cause in ("queue discipline", "loss model", "down"):
        assert cause in row
