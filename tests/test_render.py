"""The page templates' foundation (kg.serve.render): autoescaping, Markdown rendered and
sanitised, plain-text snippets, and the footer every page carries."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from kg.serve.render import environment, markdown, marked, plain, render, snippet

HOSTILE = [
    "<script>alert(1)</script>",
    "[click](javascript:alert(1))",
    '<a href="javascript:alert(1)">x</a>',
    "<img src=x onerror=alert(1)>",
    '<div onmouseover="alert(1)">x</div>',
    "[x](JaVaScRiPt:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    "<svg onload=alert(1)>",
    "`<script>` **b**",
]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _tags(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_renders_hostile_text_inert(text: str) -> None:
    for tag, attrs in _tags(str(markdown(text))):
        assert tag not in {"script", "img", "svg", "iframe", "div"}
        for name, value in attrs:
            assert not name.startswith("on")
            if name == "href":
                assert (value or "").startswith(("http://", "https://", "mailto:"))


def test_markdown_keeps_what_descriptions_use() -> None:
    html = str(markdown("**Adam** is an *optimizer*; see [the paper](https://arxiv.org/abs/1412.6980).\n\n- a\n- b"))
    assert "<strong>Adam</strong>" in html and "<em>optimizer</em>" in html
    assert '<a href="https://arxiv.org/abs/1412.6980" rel="nofollow noopener noreferrer">' in html
    assert "<ul>" in html and "**" not in html


def test_plain_and_snippet_have_no_markup() -> None:
    text = "**Attention Dropout** is a type of [dropout](https://paperswithcode.com/method/dropout) used in `attention`"
    assert plain(text) == "Attention Dropout is a type of dropout used in attention"
    assert plain("<b>x</b> &amp; <script>y</script>") == "x &"  # text: escaped where shown
    short = snippet(text, 40)
    assert len(short) <= 40 and short.endswith("…") and "*" not in short and "](" not in short


def test_marked_escapes_and_marks() -> None:
    assert str(marked("<b>attention</b>", [(3, 12)])) == "&lt;b&gt;<mark>attention</mark>&lt;/b&gt;"
    assert str(marked("abc", [(2, 99)])) == "abc"  # a range past the text is ignored


def test_templates_autoescape_and_the_footer_names_the_licence() -> None:
    assert environment().autoescape is True
    page = render(
        "base.html",
        title="<script>alert(1)</script>",
        sources=[
            {
                "label": "evaluation-tables",
                "href": "/dump/evaluation-tables/2020-08-28",
                "snapshot": "2020-08-28",
                "licence": "https://creativecommons.org/licenses/by-sa/4.0/",
                "attribution": "https://paperswithcode.com/",
            },
            {"label": "x", "href": None, "snapshot": None, "licence": "javascript:alert(1)"},
        ],
    )
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert "Data as of <strong>2020-08-28</strong>" in page
    assert "CC BY-SA 4.0" in page and ">Papers with Code</a>" in page
    assert 'href="javascript:' not in page
