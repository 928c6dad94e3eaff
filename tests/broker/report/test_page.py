"""The report page (:mod:`broker.report.page`) on a hand-made section: its HTML in full, its tables and numbers."""

from __future__ import annotations

import pandas as pd

from broker.report import page
from broker.report.model import Figure, Section


def page_section() -> Section:
    table = pd.DataFrame({"name": [f"r{i}" for i in range(27)],
                          "x": [999.9994, 1000.0, -1234.5, float("nan")] + [0.5] * 23})
    return Section("k1", "A & B", status="not applicable", why="no <waits>", summary="s & t",
                   recommendation="do <this>", figures=[Figure("f.svg", 'a "cap"', "<svg/>")],
                   tables={"tab": table, "tab_hourly": table.head(3)}, commands=[("one", "cmd --a"), ("two", "x<y")],
                   skipped_parts=["p1", "p<2"])


def test_a_section_on_the_page_in_full() -> None:
    html = page._section(page_section())
    parts = html.split("\n")
    assert parts[0] == ('<section id="k1"><h2>A &amp; B<span class="status not-applicable">not applicable</span>'
                        '</h2>')
    assert parts[1] == "<p><b>Did not run:</b> no &lt;waits&gt;</p>"
    assert parts[2] == "<p>s &amp; t</p>"
    assert parts[3] == "<p class=advice><b>Recommendation.</b> do &lt;this&gt;</p>"
    assert parts[4] == ('<figure><img alt="a &quot;cap&quot;" src="data:image/svg+xml;base64,PHN2Zy8+">'
                        '<figcaption>a &quot;cap&quot;</figcaption></figure>')
    assert '<table class="dataframe data">' in html
    assert "<td>999.999</td>" in html and "<td>1,000</td>" in html and "<td>-1,234</td>" in html
    assert "<td>-</td>" in html and "<td>r24</td>" in html and "<td>r25</td>" not in html
    assert "<p class=note>2 more rows in <code>tables/tab.parquet</code>.</p>" in html
    assert "<p class=note>The series: <code>tables/tab_hourly.parquet</code> (3 rows).</p>" in html
    assert "<p class=note>Left out: p1; p&lt;2</p>" in html
    assert ("<p class=note>The commands behind these numbers:</p><pre># one\ncmd --a\n# two\nx&lt;y</pre>\n"
            "</section>") in html
    assert html.endswith("</pre>\n</section>")


def test_an_empty_done_section_is_its_heading_only() -> None:
    assert page._section(Section("k", "T")) == ('<section id="k"><h2>T<span class="status done">done</span></h2>\n'
                                                "</section>")


def test_a_table_of_exactly_the_shown_rows_says_nothing_more() -> None:
    table = pd.DataFrame({"x": [1.0] * 25})
    text = page._table("t", table)
    assert text.count("<tr>") == 25 and "more rows" not in text and text.endswith("</table>")
    text = page._table("t", pd.DataFrame({"x": [1.0] * 1026}))
    assert text.endswith("<p class=note>1,001 more rows in <code>tables/t.parquet</code>.</p>")


def test_numbers_on_the_page_switch_to_whole_numbers_at_1000() -> None:
    assert page._number(999.9994) == "999.999" and page._number(-999.5) == "-999.500"
    assert page._number(1000.0) == "1,000" and page._number(-1000.0) == "-1,000" and page._number(1234.5) == "1,234"


def test_the_page_in_full() -> None:
    footer = {"budget_s": 90.0, "planned_s": 12.4, "wall_s": 3.5, "seed": 5, "skipped": ["a <b>", "c"]}
    text = page.render("T & U", "sub <x>", [page_section(), Section("k2", "Two")], footer)
    assert text.startswith("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><meta name=viewport "
                           "content='width=device-width, initial-scale=1'><link rel=icon href='data:,'>"
                           "<title>T &amp; U</title><style>\nbody { font: 15px/1.45 system-ui, sans-serif;")
    assert "\n.note { font-size: 0.85em; color: #555; }\n</style></head>\n" in text
    assert ("<body><main><h1>T &amp; U</h1><p>sub &lt;x&gt;</p><nav><a href=\"#k1\">A &amp; B</a> "
            "<a href=\"#k2\">Two</a></nav>\n<section id=\"k1\">") in text
    assert ('<section id="k2"><h2>Two<span class="status done">done</span></h2>\n</section>\n'
            "<h2 id=skipped>Left out to stay within the budget</h2><ul><li>a &lt;b&gt;</li><li>c</li></ul>\n"
            "<p class=note>Budget 2 min, planned 12 s from estimates, 4 s spent. Seed 5. Run the commands from this "
            "report's folder (they read <code>reservation_plan.json</code> and <code>cluster_grid.toml</code> "
            "beside this page).</p>\n<p class=note>Every figure is in <code>report.json</code>, every table in "
            "<code>tables/</code> (Parquet).</p></main></body></html>\n") in text
    assert '</section>\n<section id="k2">' in text  # one section per line block, in order
    del footer["skipped"]
    bare = page.render("T", "s", [], footer)
    assert "<nav></nav>\n\n\n<p class=note>Budget 2 min," in bare  # no sections, nothing left out


def test_a_table_on_the_page_has_no_index_column() -> None:
    assert page._table("t", pd.DataFrame({"a": [1.5]}, index=[7])) == (
        '<table class="dataframe data">\n  <thead>\n    <tr style="text-align: right;">\n      <th>a</th>\n'
        "    </tr>\n  </thead>\n  <tbody>\n    <tr>\n      <td>1.500</td>\n    </tr>\n  </tbody>\n</table>")
