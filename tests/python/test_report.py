"""The HTML report of reproduced claims (plait.report): escaping, links, images, counts."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from plait.report import PNG_SIGNATURE, Claim, Figure, Section, figure_png, render  # noqa: E402

HOSTILE = "N < 3 && \"quoted\" 'single' <script>alert(1)</script>"


def claim(agrees: bool, text: str = "Utilisation is 1 - 1/(1+3N)") -> Claim:
    return Claim(
        claim=text,
        where="Theorem 1",
        paper="0.917",
        plait="0.921 ± 0.003 (5 seeds)",
        tolerance="±0.02 absolute",
        agrees=agrees,
        detail="Within tolerance for every N." if agrees else "Lower by 0.05 at N = 2.",
    )


def png() -> bytes:
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 2, 3], [0.75, 0.86, 0.9])
    return figure_png(fig)


def section(name: str, claims: list[Claim], figures: list[Figure] | None = None) -> Section:
    return Section(
        name=name,
        title=f"Experiment {name}",
        paper="Altman et al., Parallel TCP sockets, 2006",
        setup="N AIMD connections over one bottleneck.\n\nFive seeds per point.",
        claims=claims,
        figures=figures or [],
        tables=[("Utilisation", pd.DataFrame({"n": [1, 2], "utilization": [0.75, 0.857142]}))],
        runs={"runs": 400, "reused": 0, "failed": 0, "seeds": 5, "wall time": "82 s"},
    )


class Page(HTMLParser):
    """The tags of a page, with their attributes, and its text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for t, attrs in self.tags if t == tag]


def test_page_is_self_contained_html5():
    text = render([section("a", [claim(True)], [Figure("Fig", "cap", png())])], "T", "plait 1")
    assert text.startswith("<!doctype html>\n")
    page = Page(text)
    assert page.all("html") == [{"lang": "en"}]
    assert {"charset": "utf-8"} in page.all("meta")
    assert any(m.get("name") == "viewport" for m in page.all("meta"))
    assert page.all("script") == [] and page.all("link") == []
    assert len(page.all("style")) == 1
    # No address outside the page: links are fragments, images data URIs.
    outside = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", text)
    assert not re.search(r"https?:|//|url\(|@import", outside)
    for a in page.all("a"):
        assert a["href"].startswith("#")


def test_every_text_is_escaped():
    hostile_claim = Claim(HOSTILE, HOSTILE, HOSTILE, HOSTILE, HOSTILE, False, HOSTILE)
    s = Section(
        name="x",
        title=HOSTILE,
        paper=HOSTILE,
        setup=HOSTILE,
        claims=[hostile_claim],
        figures=[Figure(HOSTILE, HOSTILE, png())],
        tables=[(HOSTILE, pd.DataFrame({HOSTILE: [HOSTILE, 1.5]}))],
        runs={HOSTILE: HOSTILE},
    )
    text = render([s], HOSTILE, HOSTILE)
    assert "<script>" not in text and "</script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    page = Page(text)
    assert page.all("script") == []
    # Every occurrence comes back whole in the text or in an attribute (the <img alt>).
    assert "".join(page.text).count(HOSTILE) >= 13
    assert [img["alt"] for img in page.all("img")] == [HOSTILE]


def test_every_in_page_link_has_its_target():
    sections = [
        section("parallel-tcp", [claim(True)]),
        section("with space", [claim(False)]),
        section("parallel-tcp", []),  # the same name twice
        section("overview", []),  # the page's own id
        section("", []),
    ]
    page = Page(render(sections, "Report", "today"))
    ids = [attrs["id"] for _, attrs in page.tags if "id" in attrs]
    assert len(ids) == len(set(ids)), ids
    hrefs = [a["href"] for a in page.all("a")]
    assert "#parallel-tcp" in hrefs
    for href in hrefs:
        assert href.startswith("#") and href[1:] in ids, href
        assert " " not in href
    # One link per section from the overview, plus one back to it per section.
    assert len(hrefs) == 2 * len(sections)


def test_images_are_png_data_uris():
    figures = [Figure("One", "first", png()), Figure("Two", "second", png())]
    page = Page(render([section("a", [], figures)], "Report", "today"))
    images = page.all("img")
    assert [img["alt"] for img in images] == ["One", "Two"]
    for img in images:
        prefix = "data:image/png;base64,"
        assert img["src"].startswith(prefix)
        data = base64.b64decode(img["src"][len(prefix) :], validate=True)
        assert data.startswith(PNG_SIGNATURE)
        # The declared size is the image's own (no layout shift, no upscaling).
        assert int(img["width"]) == int.from_bytes(data[16:20], "big")
        assert int(img["height"]) == int.from_bytes(data[20:24], "big")
    assert len(page.all("figure")) == 2 and len(page.all("figcaption")) == 2


def overview_counts(text: str) -> list[tuple[int, int]]:
    page = Page(text)
    return [
        (int(td["data-agree"]), int(td["data-total"]))
        for td in page.all("td")
        if "count" in (td.get("class") or "").split()
    ]


def test_overview_counts_agreeing_claims():
    sections = [
        section("a", [claim(True), claim(False), claim(True)]),
        section("b", [claim(False)]),
        section("c", []),
    ]
    text = render(sections, "Report", "today")
    # One row per section, then the total.
    assert overview_counts(text) == [(2, 3), (0, 1), (0, 0), (2, 4)]
    assert ">2 / 3<" in text and ">2 / 4<" in text
    assert "<strong>2 of 4 claims</strong> agree" in text
    badges = re.findall(r'<span class="badge (agrees|differs)">(\w+)</span>', text)
    assert badges.count(("agrees", "agrees")) == 2
    assert badges.count(("differs", "differs")) == 2


def test_claims_table_columns_and_verdict_detail():
    text = render([section("a", [claim(True), claim(False)])], "Report", "today")
    head = re.search(r'<table class="claims">.*?<thead>(.*?)</thead>', text).group(1)
    assert re.findall(r"<th>(.*?)</th>", head) == [
        "Claim",
        "Where",
        "Paper",
        "plait",
        "Tolerance",
        "Verdict",
    ]
    assert "Within tolerance for every N." in text and "Lower by 0.05 at N = 2." in text
    assert "0.921 ± 0.003 (5 seeds)" in text


def test_tables_show_floats_with_three_decimals():
    frame = pd.DataFrame(
        {"queue": ["red", "droptail"], "n": [1, 2], "u": [0.857142, float("nan")]}
    ).set_index("queue")
    s = section("a", [])
    s.tables = [("By queue", frame)]
    text = render([s], "Report", "today")
    assert "<caption>By queue</caption>" in text
    assert ">0.857<" in text and "0.857142" not in text
    assert '<td class="num">1</td>' in text  # integers stay integers
    assert '<th scope="row">droptail</th>' in text  # a named index is shown
    assert '<td class="num">—</td>' in text  # NaN


def test_setup_paragraphs_and_runs():
    text = render([section("a", [])], "Report", "today")
    assert "<p>N AIMD connections over one bottleneck.</p><p>Five seeds per point.</p>" in text
    assert "<dt>wall time</dt><dd>82 s</dd>" in text
    assert "<dt>runs</dt><dd>400</dd>" in text


def test_paths_that_are_not_utf8_show_their_bytes():
    """Regression: `plait reproduce --out $'\\xff'` ran every run, then failed to write the
    report ("'utf-8' codec can't encode character '\\udcff'"): the folder's name, decoded with
    a surrogate escape, was in the page."""
    s = Section("a", "T", "P", "", [], [], [], {"results": "out\udcff/runs", "odd": "x\ud800"})
    text = render([s], "Report", "today")
    text.encode("utf-8")
    assert "<dt>results</dt><dd>out\\xff/runs</dd>" in text
    assert "<dt>odd</dt><dd>x\\ud800</dd>" in text


def test_empty_section_and_empty_report():
    empty = Section("empty", "Nothing here", "A paper", "", [], [], [], {})
    text = render([empty], "Report", "today")
    for phrase in ("No claims.", "No figures.", "No tables.", "No runs recorded.", "No claims in"):
        assert phrase in text
    assert "<img" not in text
    Page(text)
    text = render([], "Nothing", "today")
    assert "No experiments." in text and "<title>Nothing</title>" in text


def test_figure_png_returns_png_and_closes_the_figure():
    plt.close("all")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    data = figure_png(fig)
    assert data.startswith(PNG_SIGNATURE)
    assert plt.get_fignums() == []
    # Deterministic: the same drawing gives the same bytes (no version or date inside).
    assert png() == png()


def test_figure_rejects_what_is_not_a_png():
    with pytest.raises(ValueError, match="not a PNG"):
        Figure("bad", "", b"GIF89a....")
    with pytest.raises(TypeError, match="must be bytes"):
        Figure("bad", "", "\x89PNG\r\n\x1a\n")  # type: ignore[arg-type]


def test_claim_records_carry_ids_numbers_verdicts_and_causes():
    from plait.report import claim_records

    agrees = Claim(
        "u",
        "Thm 1",
        "0.93",
        "0.932",
        "±0.02",
        True,
        "ok",
        paper_value=0.93,
        plait_mean=0.932,
        plait_min=0.93,
        plait_max=0.935,
        seeds=5,
    )
    differs = Claim("v", "Fig. 2", "1/3", "0.25", "±0.02", False, "misprint", cause="paper")
    section = Section("altman", "Altman", "p", "s", [agrees, differs], [], [], {})
    records = claim_records(section)
    assert [r["id"] for r in records] == ["altman.1", "altman.2"]
    assert records[0]["verdict"] == "agrees" and records[0]["cause"] is None
    assert (records[0]["paper_value"], records[0]["plait_mean"], records[0]["seeds"]) == (
        0.93,
        0.932,
        5,
    )
    assert records[1]["verdict"] == "differs" and records[1]["cause"] == "paper"
    assert records[1]["plait_mean"] is None
    html = render([section], "t", "g")
    assert '<p class="cause">cause: paper</p>' in html
    # A mean over no runs is NaN: null in the records, which JSON can carry.
    empty = Claim("w", "x", "1", "-", "t", False, "no runs", plait_mean=float("nan"))
    import json

    record = claim_records(Section("e", "E", "p", "s", [empty], [], [], {}))[0]
    assert record["plait_mean"] is None
    json.dumps(record, allow_nan=False)


def test_a_claim_cause_must_be_a_known_class_and_only_on_a_difference():
    with pytest.raises(ValueError, match="cause must be one of paper, physics, unknown"):
        Claim("v", "w", "1", "2", "t", False, "d", cause="bug")
    with pytest.raises(ValueError, match="a claim that agrees has no cause"):
        Claim("v", "w", "1", "1", "t", True, "d", cause="physics")
