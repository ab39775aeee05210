"""A paper's reproduced claims as one self-contained HTML file.

``plait reproduce NAME`` runs a paper's experiments and describes each one as a :class:`Section`:
the set-up, the paper's claims beside plait's values (:class:`Claim`), the figures
(:class:`Figure`, PNG bytes; :func:`figure_png` turns a matplotlib figure into them), tables and
the run bookkeeping. :func:`render` turns the sections into the text of one HTML page:

- self-contained: the style sheet is inline and the figures are ``data:`` URIs, so the file can
  be mailed, archived or opened offline; there is no script and no external address;
- every piece of text given by the caller is escaped, so a claim may contain ``<``, ``&`` or
  quotes;
- an overview at the top counts, per experiment, the claims that agree and links to it; each
  experiment then shows its claims with a verdict ("agrees" within the stated tolerance, or
  "differs", with the detail beneath), its figures, tables and runs.

The page prints well (no colours are needed to read a verdict, figures and rows are not split
across pages).
"""

from __future__ import annotations

import base64
import html
import io
import math
import numbers
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas
    from matplotlib.figure import Figure as MplFigure

__all__ = ["CAUSES", "Claim", "Figure", "Section", "claim_records", "figure_png", "render"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: Ids the page uses itself; a section whose name is one of them gets a suffixed id.
_RESERVED_IDS = ("overview",)


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, beside plait's value and the verdict."""

    claim: str
    """The paper's statement, short ("Utilisation is 1 - 1/(1+3N) with a threshold-dropper")."""
    where: str
    """Where the paper says it ("Theorem 1", "Section V.D, Fig. 6")."""
    paper: str
    """The paper's value, as text."""
    plait: str
    """plait's value with its spread over seeds, as text ("0.932 ± 0.004 (5 seeds)")."""
    tolerance: str
    """The tolerance the verdict uses, as text ("±0.02 absolute")."""
    agrees: bool
    """Whether plait's value is within the tolerance of the paper's."""
    detail: str
    """One or two sentences: how it differs, or what the agreement rests on."""
    cause: str | None = None
    """Why a claim differs, one of :data:`CAUSES`: ``"paper"`` (the paper is inconsistent or
    misprinted, with the derivation in `detail`), ``"physics"`` (the set-up the paper describes
    cannot give its number, shown in `detail`) or ``"unknown"`` (an open question, said so).
    None for a claim that agrees, or one whose experiment has not classified it yet."""
    paper_value: float | None = None
    """The paper's value as a number, when it is one."""
    plait_mean: float | None = None
    """plait's value over its seeds as numbers (mean, lowest, highest), when it is one."""
    plait_min: float | None = None
    plait_max: float | None = None
    seeds: int | None = None
    """How many seeds `plait_mean` is over."""

    def __post_init__(self) -> None:
        if self.cause is not None and self.cause not in CAUSES:
            raise ValueError(
                f"claim {self.claim!r}: cause must be one of {', '.join(CAUSES)}, "
                f"not {self.cause!r}"
            )
        if self.cause is not None and self.agrees:
            raise ValueError(f"claim {self.claim!r}: a claim that agrees has no cause")

    def record(self, experiment: str, index: int) -> dict[str, Any]:
        """The claim as one record of ``claims.json`` (:func:`claim_records`); a number that
        is not finite (a mean over no runs) is null, as JSON has no NaN."""

        def number(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            "id": f"{experiment}.{index + 1}",
            "experiment": experiment,
            "claim": self.claim,
            "where": self.where,
            "paper": self.paper,
            "paper_value": number(self.paper_value),
            "plait": self.plait,
            "plait_mean": number(self.plait_mean),
            "plait_min": number(self.plait_min),
            "plait_max": number(self.plait_max),
            "seeds": self.seeds,
            "tolerance": self.tolerance,
            "verdict": "agrees" if self.agrees else "differs",
            "cause": self.cause,
            "detail": self.detail,
        }


#: The classes of cause a claim that differs may carry (:attr:`Claim.cause`).
CAUSES = ("paper", "physics", "unknown")


def claim_records(section: Section) -> list[dict[str, Any]]:
    """The claims of one experiment as the records ``plait reproduce`` writes to
    ``DIR/NAME/claims.json``: one per claim, in the report's order, with an id
    (``NAME.1``, ``NAME.2``, ...), the texts the report shows, the numbers where the experiment
    gives them (null otherwise), the verdict and the cause of a difference."""
    return [c.record(section.name, i) for i, c in enumerate(section.claims)]


def claims_overview(files: list[Any]) -> str:
    """A Markdown table of the committed verdicts: one row per experiment's ``claims.json``
    (as ``plait reproduce`` writes it, :func:`claim_records`) with the number of claims, how
    many agree, how many differ by cause (paper, physics, unknown, and none given) and the
    version and seeds the file records (docs/reproductions.md holds it)."""
    import json
    from pathlib import Path

    lines = [
        "| experiment | claims | agree | differ: paper | physics | unknown | no cause | made by |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for f in sorted(Path(x) for x in files):
        data = json.loads(f.read_text())
        records = data["claims"]
        name = records[0]["experiment"] if records else f.parent.parent.name
        agree = sum(r["verdict"] == "agrees" for r in records)
        differ = [r for r in records if r["verdict"] != "agrees"]
        by = {c: sum(r["cause"] == c for r in differ) for c in (*CAUSES, None)}
        lines.append(
            f"| {name} | {len(records)} | {agree} | {by['paper']} | {by['physics']} | "
            f"{by['unknown']} | {by[None]} | {data['generated']} |"
        )
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Figure:
    """A figure of the report: a PNG image with a title (its alt text) and a caption."""

    title: str
    caption: str
    png: bytes
    """The PNG image (:func:`figure_png` makes it from a matplotlib figure)."""

    def __post_init__(self) -> None:
        if not isinstance(self.png, (bytes, bytearray, memoryview)):
            raise TypeError(
                f"figure {self.title!r}: png must be bytes, not {type(self.png).__name__}"
            )
        if not bytes(self.png[:8]) == PNG_SIGNATURE:
            raise ValueError(f"figure {self.title!r}: png is not a PNG image")


@dataclass
class Section:
    """One experiment of one paper."""

    name: str
    """Short name, also the section's anchor ("parallel-tcp")."""
    title: str
    """Heading ("Parallel TCP sockets")."""
    paper: str
    """Citation text."""
    setup: str
    """The set-up, plain text; blank lines separate paragraphs."""
    claims: list[Claim]
    figures: list[Figure]
    tables: list[tuple[str, pandas.DataFrame]]
    """(caption, table) pairs, shown as HTML tables with floats to 3 decimals."""
    runs: dict[str, object]
    """Run bookkeeping shown as a definition list ({"runs": 400, "failed": 0, "seeds": 5, ...})."""


def figure_png(fig: MplFigure, dpi: int = 110) -> bytes:
    """Returns a matplotlib figure as PNG bytes (tight bounding box) and closes the figure.

    The PNG carries no software version, so the same figure gives the same bytes whichever
    matplotlib drew it.
    """
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    finally:
        # A figure can only be registered with pyplot if pyplot has been imported.
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.close(fig)
    return buffer.getvalue()


def render(sections: list[Section], title: str, generated: str) -> str:
    """Returns the text of a self-contained HTML page reporting `sections`.

    `title` is the page's title and heading; `generated` is a line such as
    "plait 0.4.0, 2024-05-01 14:03" shown under it.
    """
    ids = _section_ids(sections)
    agree = sum(c.agrees for s in sections for c in s.claims)
    total = sum(len(s.claims) for s in sections)
    parts = [
        *page_start(title, generated),
        f'<p class="summary">{_summary(agree, total, len(sections))}</p>',
        _overview(sections, ids),
        "</header>",
    ]
    parts += [_section(s, id_) for s, id_ in zip(sections, ids)]
    parts += ["</main>", "</body>", "</html>", ""]
    return "\n".join(parts)


def page_start(title: str, generated: str) -> list[str]:
    """The lines of a plait page up to its overview's heading and the line saying what
    generated it: the document head with the style sheet, `<main>` and the open
    `<header id="overview">` (the caller closes it)."""
    return [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light">',
        '<meta name="generator" content="plait">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<main>",
        '<header id="overview">',
        f"<h1>{_e(title)}</h1>",
        f'<p class="generated">{_e(generated)}</p>',
    ]


def _e(text: object) -> str:
    """`text` escaped for HTML. The page is UTF-8: bytes of a file name that are not UTF-8
    (decoded with surrogate escapes, as `--out $'\\xff'` is) are shown as `\\xff`."""
    text = str(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate that is not an escaped byte
            raw = text.encode("utf-8", "backslashreplace")
        text = raw.decode("utf-8", "backslashreplace")
    return html.escape(text, quote=True)


def _section_ids(sections: list[Section]) -> list[str]:
    """The sections' anchors: their names with spaces as dashes, each one unique."""
    used = set(_RESERVED_IDS)
    ids = []
    for i, section in enumerate(sections, start=1):
        base = re.sub(r"\s+", "-", section.name.strip()) or f"section-{i}"
        candidate, n = base, 1
        while candidate in used:
            n += 1
            candidate = f"{base}-{n}"
        used.add(candidate)
        ids.append(candidate)
    return ids


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _summary(agree: int, total: int, n_sections: int) -> str:
    if n_sections == 0:
        return "No experiments."
    where = _plural(n_sections, "experiment")
    if total == 0:
        return f"No claims in {where}."
    return (
        f"<strong>{agree} of {_plural(total, 'claim')}</strong> agree{'s' if agree == 1 else ''}"
        f" with the paper within the stated tolerance, in {where}."
    )


def _status(agree: int, total: int) -> str:
    if total == 0:
        return '<span class="badge none">no claims</span>'
    if agree == total:
        return '<span class="badge agrees">all agree</span>'
    differ = total - agree
    return f'<span class="badge differs">{differ} differ{"s" if differ == 1 else ""}</span>'


def _overview(sections: list[Section], ids: list[str]) -> str:
    if not sections:
        return ""
    rows = []
    for section, id_ in zip(sections, ids):
        agree = sum(c.agrees for c in section.claims)
        total = len(section.claims)
        rows.append(
            "<tr>"
            f'<td><a href="#{_e(id_)}">{_e(section.title)}</a>'
            f' <span class="name">{_e(section.name)}</span></td>'
            f'<td class="cite">{_e(section.paper)}</td>'
            f'<td class="num count" data-agree="{agree}" data-total="{total}">'
            f"{agree} / {total}</td>"
            f"<td>{_status(agree, total)}</td>"
            "</tr>"
        )
    agree = sum(c.agrees for s in sections for c in s.claims)
    total = sum(len(s.claims) for s in sections)
    return (
        '<div class="scroll"><table class="overview">'
        "<caption>Experiments and their claims</caption>"
        "<thead><tr><th>Experiment</th><th>Paper</th>"
        '<th class="num">Claims agreeing</th><th>Verdict</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody>"
        f'<tfoot><tr><th colspan="2">All experiments</th>'
        f'<td class="num count" data-agree="{agree}" data-total="{total}">{agree} / {total}</td>'
        f"<td>{_status(agree, total)}</td></tr></tfoot>"
        "</table></div>"
    )


def _paragraphs(text: str) -> str:
    paragraphs = [p.strip() for p in re.split(r"\n[ \t]*\n", text) if p.strip()]
    return "".join(f"<p>{_e(' '.join(p.split()))}</p>" for p in paragraphs)


def _section(section: Section, id_: str) -> str:
    agree = sum(c.agrees for c in section.claims)
    total = len(section.claims)
    setup = _paragraphs(section.setup) or '<p class="empty">No set-up given.</p>'
    return "\n".join(
        [
            f'<section class="experiment" aria-labelledby="{_e(id_)}">',
            f'<h2 id="{_e(id_)}">{_e(section.title)} <span class="name">{_e(section.name)}</span>'
            f"{_status(agree, total)}</h2>",
            f'<p class="cite">{_e(section.paper)}</p>',
            f'<div class="setup">{setup}</div>',
            "<h3>Claims</h3>",
            _claims(section.claims),
            "<h3>Figures</h3>",
            _figures(section.figures),
            "<h3>Tables</h3>",
            _tables(section.tables),
            "<h3>Runs</h3>",
            _runs(section.runs),
            '<p class="back"><a href="#overview">↑ Overview</a></p>',
            "</section>",
        ]
    )


def _claims(claims: list[Claim]) -> str:
    if not claims:
        return '<p class="empty">No claims.</p>'
    rows = []
    for c in claims:
        verdict = "agrees" if c.agrees else "differs"
        rows.append(
            f'<tr class="{verdict}">'
            f'<td class="claim">{_e(c.claim)}</td>'
            f"<td>{_e(c.where)}</td>"
            f'<td class="value">{_e(c.paper)}</td>'
            f'<td class="value">{_e(c.plait)}</td>'
            f'<td class="value">{_e(c.tolerance)}</td>'
            f'<td class="verdict"><span class="badge {verdict}">{verdict}</span>'
            + (f'<p class="cause">cause: {_e(c.cause)}</p>' if c.cause else "")
            + f'<p class="detail">{_e(c.detail)}</p></td>'
            "</tr>"
        )
    return (
        '<div class="scroll"><table class="claims">'
        '<colgroup><col class="c-claim"><col class="c-where"><col class="c-value">'
        '<col class="c-value"><col class="c-tol"><col class="c-verdict"></colgroup>'
        "<thead><tr><th>Claim</th><th>Where</th><th>Paper</th><th>plait</th>"
        "<th>Tolerance</th><th>Verdict</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _png_size(png: bytes) -> tuple[int, int] | None:
    """The width and height in pixels from a PNG's IHDR chunk, if it has one."""
    if len(png) >= 24 and png[12:16] == b"IHDR":
        return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    return None


def _figures(figures: list[Figure]) -> str:
    if not figures:
        return '<p class="empty">No figures.</p>'
    items = []
    for figure in figures:
        data = base64.b64encode(bytes(figure.png)).decode("ascii")
        size = _png_size(bytes(figure.png[:24]))
        dims = f' width="{size[0]}" height="{size[1]}"' if size else ""
        caption = f"<strong>{_e(figure.title)}.</strong> {_e(figure.caption)}".rstrip()
        items.append(
            f'<figure><img src="data:image/png;base64,{data}" alt="{_e(figure.title)}"{dims}>'
            f"<figcaption>{caption}</figcaption></figure>"
        )
    return f'<div class="figures">{"".join(items)}</div>'


def _cell(value: Any) -> tuple[str, bool]:
    """A table value as escaped text, and whether it is a number (right-aligned)."""
    if isinstance(value, bool) or value is None:
        return _e("—" if value is None else value), False
    if isinstance(value, numbers.Integral):
        return _e(value), True
    if isinstance(value, numbers.Real):
        value = float(value)
        return ("—" if value != value else _e(f"{value:.3f}")), True
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return "—", False
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    return _e(value), False


def _labels(index: Iterable[Any]) -> list[str]:
    return [" / ".join(map(str, x)) if isinstance(x, tuple) else str(x) for x in index]


def _table(caption: str, frame: pandas.DataFrame) -> str:
    index_names = [str(n) for n in frame.index.names if n is not None]
    show_index = bool(index_names) or not _is_default_index(frame.index)
    head = [f'<th scope="col">{_e(" / ".join(index_names))}</th>'] if show_index else []
    for i, label in enumerate(_labels(frame.columns)):
        numeric = _numeric(frame.iloc[:, i])
        head.append(f'<th scope="col"{_NUM if numeric else ""}>{_e(label)}</th>')
    body = []
    for label, row in zip(_labels(frame.index), frame.itertuples(index=False, name=None)):
        cells = [f'<th scope="row">{_e(label)}</th>'] if show_index else []
        for value in row:
            text, numeric = _cell(value)
            cells.append(f"<td{_NUM if numeric else ''}>{text}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    if not body:
        span = max(len(head), 1)
        body.append(f'<tr><td colspan="{span}" class="empty">No rows.</td></tr>')
    return (
        '<div class="scroll"><table class="data">'
        f"<caption>{_e(caption)}</caption>"
        f"<thead><tr>{''.join(head)}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


_NUM = ' class="num"'


def _is_default_index(index: Any) -> bool:
    """Whether the index is 0, 1, 2, ... (not worth showing)."""
    try:
        return index.nlevels == 1 and list(index) == list(range(len(index)))
    except TypeError:  # pragma: no cover - exotic index types
        return False


def _numeric(column: Any) -> bool:
    """Whether a column holds numbers (its header is right-aligned like its values)."""
    return getattr(getattr(column, "dtype", None), "kind", "") in ("i", "u", "f")


def _tables(tables: list[tuple[str, pandas.DataFrame]]) -> str:
    if not tables:
        return '<p class="empty">No tables.</p>'
    return "".join(_table(caption, frame) for caption, frame in tables)


def _runs(runs: Mapping[str, object]) -> str:
    if not runs:
        return '<p class="empty">No runs recorded.</p>'
    items = "".join(
        f"<div><dt>{_e(key)}</dt><dd>{_cell(value)[0]}</dd></div>" for key, value in runs.items()
    )
    return f'<dl class="runs">{items}</dl>'


_CSS = """
:root {
  --ink: #1f2328; --muted: #59636e; --rule: #d1d9e0; --faint: #f6f8fa;
  --link: #0550ae; --agree: #1a7f37; --agree-bg: #dafbe1; --differ: #9a6700;
  --differ-bg: #fff8c5; --differ-rule: #d4a72c;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; color: var(--ink); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
    "Noto Sans", sans-serif;
}
main { max-width: 1100px; margin: 0 auto; padding: 2rem 1.5rem 4rem; }
h1 { font-size: 1.9rem; line-height: 1.2; margin: 0 0 .25rem; }
h2 {
  font-size: 1.45rem; line-height: 1.25; margin: 0 0 .25rem; display: flex; flex-wrap: wrap;
  align-items: baseline; gap: .2rem .6rem;
}
h2 .badge { font-size: .8rem; }
h3 {
  font-size: .8rem; text-transform: uppercase; letter-spacing: .06em; color: var(--muted);
  margin: 1.6rem 0 .5rem;
}
a { color: var(--link); text-decoration: none; }
a:hover { text-decoration: underline; }
p { margin: 0 0 .7rem; }
.generated { color: var(--muted); font-size: .9rem; margin-bottom: 1rem; }
.summary { font-size: 1.05rem; }
.name {
  font: .8rem ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  color: var(--muted); font-weight: normal;
}
.cite { color: var(--muted); font-style: italic; }
.setup { max-width: 75ch; }
.empty { color: var(--muted); font-style: italic; }
section.experiment { border-top: 2px solid var(--ink); margin-top: 2.5rem; padding-top: 1.2rem; }
.scroll { overflow-x: auto; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
caption {
  caption-side: top; text-align: left; font-weight: 600; padding: 0 0 .4rem; color: var(--ink);
}
th, td { padding: .45rem .6rem; text-align: left; vertical-align: top; }
thead th {
  border-bottom: 2px solid var(--rule); font-size: .8rem; color: var(--muted); font-weight: 600;
  white-space: nowrap;
}
tbody tr { border-bottom: 1px solid var(--rule); }
tfoot th, tfoot td { border-top: 2px solid var(--rule); font-weight: 600; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.overview td.cite { font-size: .85rem; }
table.overview td:first-child { min-width: 13rem; }
table.overview .name { display: block; }
table.claims { min-width: 760px; }
table.data { width: auto; }
table.data th, table.data td { padding-left: 1rem; padding-right: 1rem; }
table.data tbody tr:nth-child(even) { background: var(--faint); }
table.data tbody th { font-weight: 600; }
table.claims col.c-claim { width: 25%; }
table.claims col.c-where { width: 11%; }
table.claims col.c-value { width: 12%; }
table.claims col.c-tol { width: 10%; }
table.claims col.c-verdict { width: 30%; }
table.claims td.value { font-variant-numeric: tabular-nums; }
table.claims tr.agrees td:first-child { box-shadow: inset 3px 0 0 var(--agree); }
table.claims tr.differs td:first-child { box-shadow: inset 3px 0 0 var(--differ-rule); }
table.claims tr.differs { background: #fffdf0; }
.detail { margin: .35rem 0 0; color: var(--muted); font-size: .85rem; }
.cause { margin: .35rem 0 0; font-size: .85rem; font-weight: 600; }
.badge {
  display: inline-block; padding: .05rem .5rem; border-radius: 1rem; border: 1px solid;
  font-size: .78rem; font-weight: 600; line-height: 1.5; white-space: nowrap;
}
.badge.agrees { color: var(--agree); background: var(--agree-bg); border-color: var(--agree); }
.badge.differs {
  color: var(--differ); background: var(--differ-bg); border-color: var(--differ-rule);
}
.badge.none { color: var(--muted); background: var(--faint); border-color: var(--rule); }
.figures {
  display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 460px), 1fr));
  gap: 1.2rem;
}
figure { margin: 0; border: 1px solid var(--rule); border-radius: 6px; padding: .75rem; }
figure img { display: block; max-width: 100%; height: auto; margin: 0 auto; }
figcaption { font-size: .85rem; color: var(--muted); margin-top: .5rem; }
figcaption strong { color: var(--ink); }
dl.runs { display: flex; flex-wrap: wrap; gap: .4rem 1.8rem; margin: 0; font-size: .9rem; }
dl.runs div { display: flex; gap: .4rem; align-items: baseline; }
dl.runs dt { color: var(--muted); }
dl.runs dt::after { content: ":"; }
dl.runs dd { margin: 0; font-variant-numeric: tabular-nums; font-weight: 600; }
.back { margin-top: 1.5rem; font-size: .85rem; }
@media print {
  body { font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  a { color: inherit; }
  .back { display: none; }
  .scroll { overflow: visible; }
  table.claims { min-width: 0; }
  .figures { grid-template-columns: repeat(auto-fit, minmax(min(100%, 300px), 1fr)); }
  section.experiment { break-before: page; margin-top: 0; }
  tr, figure, dl.runs, caption { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  thead { display: table-header-group; }
}
"""
