"""Pages from templates: the one Jinja2 environment of the server, and its filters.

The templates are package data in `kg/serve/templates/` (one per page kind, over `base.html`;
the `_`-prefixed ones are partials shared by several pages, as in datasette). Autoescaping is
on for every template: a value from the store reaches the page escaped unless a filter here
made it safe. The views only gather data into a context dict and call `render`.

Markdown (the descriptions in the Papers-with-Code dumps) is rendered by markdown-it-py, and
its output (raw HTML in the source included) is sanitised by nh3 (only text-level tags, and
links to http, https and mailto, marked `rel="nofollow noopener noreferrer"`). The `snippet`
filter gives a description as plain text (the Markdown's text, no markup) cut at a word.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from markupsafe import Markup, escape
from starlette.responses import JSONResponse

from kg.library.results import json_text

if TYPE_CHECKING:
    import jinja2
    from markdown_it import MarkdownIt

#: The tags a rendered description may keep (what CommonMark makes, less images and raw HTML).
_ALLOWED_TAGS = frozenset(
    {
        "a", "abbr", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4",
        "h5", "h6", "hr", "i", "li", "ol", "p", "pre", "s", "strong", "sub", "sup", "table",
        "tbody", "td", "th", "thead", "tr", "ul",
    }
)  # fmt: skip
#: MathML (what latex2mathml writes for the descriptions' `$…$`), shown natively by browsers.
_MATH_TAGS = frozenset(
    {
        "math", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "mfrac", "msqrt", "mroot",
        "msub", "msup", "msubsup", "munder", "mover", "munderover", "mtable", "mtr", "mtd",
        "mstyle", "mpadded", "mphantom", "menclose", "semantics", "annotation",
    }
)  # fmt: skip
_ALLOWED_TAGS = _ALLOWED_TAGS | _MATH_TAGS
_ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "td": {"align"},
    "th": {"align"},
    "math": {"display", "xmlns"},
    "mi": {"mathvariant"},
    "mo": {"stretchy", "fence", "separator", "form", "largeop", "movablelimits", "accent"},
    "mstyle": {"displaystyle", "scriptlevel", "mathvariant"},
    "mover": {"accent"},
    "munder": {"accentunder"},
    "mfrac": {"linethickness"},
    "mspace": {"width"},
    "mtable": {"columnalign", "rowspacing", "columnspacing"},
    "mtd": {"columnalign", "columnspan", "rowspan"},
    "menclose": {"notation"},
    "annotation": {"encoding"},
}
_URL_SCHEMES = frozenset({"http", "https", "mailto"})
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    # The dumps' descriptions hold some raw HTML (`<span class="description-source">`): it
    # passes through markdown-it, and the sanitiser keeps only the allowed tags' text.
    # Their TeX (`$\mathcal{H}(x)$`, `$$…$$`) becomes MathML; a `$` with a space or a digit
    # beside it (prices, "$5 and $10") stays text.
    md = MarkdownIt("commonmark", {"html": True, "linkify": False}).enable("table")
    return md.use(dollarmath_plugin, **_DOLLARMATH, renderer=math)


#: How `$…$` is read, in descriptions and in plain text alike.
_DOLLARMATH: dict[str, Any] = {
    "allow_labels": False,
    "allow_space": False,
    "allow_digits": False,
    "double_inline": True,
}


#: `$\cmd…$`: TeX for sure (no price starts with a backslash), even where the plugin's
#: rules would read a price: beside a digit (`3$\times$3`), a space before its end.
_TEX_SPAN = re.compile(r"(?<!\$)(\d?)\$(\\[A-Za-z][^$\n]*?)\s*\$(?!\$)(\d?)")
_JOINER = "\u2060"  # WORD JOINER: invisible, and not a digit beside the `$`


def _tex_spans(text: str) -> str:
    r"""Each `$\cmd…$` as the math plugin reads it: no space before its closing `$`, and
    a digit beside it kept apart by an invisible joiner.

    >>> _tex_spans("a 3$\\times$3 conv, $\\nabla L<0 $ and $5 or $10").replace(_JOINER, "|")
    'a 3|$\\times$|3 conv, $\\nabla L<0$ and $5 or $10'
    """
    if "$\\" not in text:
        return text

    def joined(m: re.Match[str]) -> str:
        before, tex, after = m.groups()
        return f"{before}{_JOINER if before else ''}${tex}${_JOINER if after else ''}{after}"

    return _TEX_SPAN.sub(joined, text)


@lru_cache(maxsize=1)
def _math_only() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    # no Markdown at all (no emphasis, escapes or HTML): text, and the descriptions' math
    return MarkdownIt("zero").use(dollarmath_plugin, **_DOLLARMATH, renderer=math)


def math_text(text: str | None) -> Markup:
    r"""Plain text (a title, a stored literal) with its `$…$` TeX as MathML, read as the
    descriptions' is; the rest escaped as it is, Markdown and HTML included.

    >>> str(math_text("Merging $K$-means <b>*fast*</b> for $5"))  # doctest: +ELLIPSIS
    'Merging <math ...><mrow><mi>K</mi></mrow></math>-means &lt;b&gt;*fast*&lt;/b&gt; for $5'
    """
    value = "" if text is None else str(text)
    if "$" not in value:
        return Markup(escape(value))
    return Markup(_sanitise(_math_only().renderInline(_tex_spans(value)), _MATH_TAGS))


#: TeX's font commands, whose argument keeps its letters in that font.
_FONTS = (
    "mathcal|mathscr|mathbb|mathbf|mathfrak|mathsf|mathit|mathrm|boldsymbol|bm|"
    "text|textbf|textit|textrm|operatorname"
)
_TEX_FONT = re.compile(rf"\\({_FONTS})\s*\{{([^{{}}$]*)(?:\}}|$)")  # a snippet may end inside
#: a snippet that starts just after the backslash of a font command
_CUT_FONT = re.compile(rf"^({_FONTS})(?=\{{)")
_TEX_SIZING = re.compile(r"\\(left|right|[bB]igg?[lr]?|middle|displaystyle|limits)\b\s*")
_TEX_COMMAND = re.compile(r"\\([A-Za-z]+)\s?|\\([^A-Za-z])")
_TEX_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
#: A `$` that is TeX's, not a price's (a price: `$` then a digit, after a space or bracket)
_TEX_DOLLARS = re.compile(r"\$+(?!\d)|(?<=[^\s(\[])\$+")
_TEX_SCRIPT = re.compile(r"([_^])\{([^{}]*)\}")
_SUPERSCRIPT = str.maketrans("0123456789+-=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ")
_SUBSCRIPT = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")
_BRACES = {"{": "\ue000", "}": "\ue001"}  # an escaped brace, kept while the others go
_TEX_SPACES = {",": " ", ";": " ", ":": " ", "!": "", " ": " ", "\\": " "}


def tex_text(text: str | None) -> str:
    r"""Text holding TeX, even cut short (a search snippet), as readable text: commands as
    their symbols (`\alpha` α, `\mathcal{X}` 𝒳), no `$` before a letter or backslash,
    no braces or backslashes. Text without TeX stays as it is.

    >>> tex_text(r"the loss $\mathcal{L}_{i} = \sum \left(x^{2}\right)$ and $K$-means")
    'the loss ℒ_i = ∑(x²) and K-means'
    >>> tex_text("cost $5 and $10, {braces} kept")
    'cost $5 and $10, {braces} kept'
    """
    value = "" if text is None else str(text)
    if not re.search(r"\\[A-Za-z]|\$[^\s\d$]", value):
        return value
    from latex2mathml.symbols_parser import convert_symbol

    def font(m: re.Match[str]) -> str:
        if m.group(1).startswith(("text", "operatorname", "mathrm")):
            return m.group(2)
        made = math(m.group(0))
        if made.startswith("<code>"):  # TeX latex2mathml cannot read: its letters
            return m.group(2)
        return html.unescape(re.sub("<[^>]+>", "", made))

    def command(m: re.Match[str]) -> str:
        if m.group(2) is not None:  # \{ \, \\ …
            return _TEX_SPACES.get(m.group(2), _BRACES.get(m.group(2), m.group(2)))
        code = convert_symbol("\\" + m.group(1))
        if code:
            return chr(int(code, 16))
        return "" if re.fullmatch(_FONTS, m.group(1)) else m.group(1) + " "  # \log x

    def script(m: re.Match[str]) -> str:
        mark, inner = m.groups()
        table = _SUPERSCRIPT if mark == "^" else _SUBSCRIPT
        turned = inner.translate(table)
        if all(c != o for c, o in zip(turned, inner, strict=True)):
            return turned
        return f"{mark}{inner}" if len(inner) <= 1 else f"{mark}({inner})"

    def fraction(m: re.Match[str]) -> str:
        return "/".join(p if len(p) <= 1 else f"({p})" for p in m.groups())

    value = _TEX_FONT.sub(font, _CUT_FONT.sub(r"\\\1", value))
    value = _TEX_SIZING.sub("", value)
    value = _TEX_FRAC.sub(fraction, value)
    value = _TEX_COMMAND.sub(command, value)
    value = _TEX_SCRIPT.sub(script, value)
    value = _TEX_DOLLARS.sub("", value).replace("{", "").replace("}", "")
    value = value.replace(_BRACES["{"], "{").replace(_BRACES["}"], "}")
    return _SPACE.sub(" ", value).strip()


def math(tex: str, options: Mapping[str, Any] | None = None) -> str:
    r"""TeX as MathML (inline, or a block when `options` says `display_mode`); TeX that
    latex2mathml cannot read stays as its text, escaped, in `<code>`.

    >>> math("K").removeprefix("<math xmlns=\"http://www.w3.org/1998/Math/MathML\" ")
    'display="inline"><mrow><mi>K</mi></mrow></math>'
    >>> math("\\frac")
    '<code>\\frac</code>'
    """
    from latex2mathml.converter import convert

    display = "block" if (options or {}).get("display_mode") else "inline"
    try:
        return str(convert(tex, display=display))
    except Exception:  # any TeX it cannot read (its errors have no common base)
        return f"<code>{escape(tex)}</code>"


def _sanitise(fragment: str, tags: frozenset[str] = _ALLOWED_TAGS) -> str:
    import nh3

    return nh3.clean(
        fragment,
        tags=set(tags),
        attributes={k: set(v) for k, v in _ALLOWED_ATTRIBUTES.items() if k in tags},
        url_schemes=set(_URL_SCHEMES),
        link_rel="nofollow noopener noreferrer",
        strip_comments=True,
    )


def markdown(text: str | None) -> Markup:
    """Markdown rendered to sanitised HTML (safe to put on a page as it is).

    >>> str(markdown("**Adam** [paper](https://arxiv.org/abs/1412.6980) <script>x</script>"))
    '<p><strong>Adam</strong> <a href="https://arxiv.org/abs/1412.6980" \
rel="nofollow noopener noreferrer">paper</a> </p>'
    >>> str(markdown("[x](javascript:alert(1)) <span onclick='x()'>y</span>"))
    '<p>[x](javascript:alert(1)) y</p>'
    """
    if not text:
        return Markup("")
    return Markup(_sanitise(_markdown().render(_tex_spans(str(text)))).strip())


def plain(text: str | None) -> str:
    """Markdown as plain text: the words a reader sees, markup and links' targets gone.

    >>> plain("**Attention Dropout** uses [dropout](https://x.org/d) on `a`")
    'Attention Dropout uses dropout on a'
    """
    from kg.search.text import plain_text  # the one Markdown-to-text reading (search's too)

    return plain_text(str(text)) if text else ""


def snippet(text: str | None, length: int = 240) -> str:
    """A description as a plain-text snippet of at most `length` characters, cut at a word.

    >>> snippet("**Batch Normalization** aims to reduce internal covariate shift", 30)
    'Batch Normalization aims to…'
    """
    words = tex_text(plain(text))
    if len(words) <= length:
        return words
    cut = words[: length - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > length // 2 else cut).rstrip(" ,;:.") + "…"


def marked(text: str | None, marks: Sequence[Sequence[int]] | None = None) -> Markup:
    """Plain text with the character ranges `marks` (a search hit's) in `<mark>`, escaped.

    >>> str(marked("a <b> attention", [(6, 15)]))
    'a &lt;b&gt; <mark>attention</mark>'
    """
    from kg.search.query import mark

    value = "" if text is None else str(text)
    spans = [(int(a), int(b)) for a, b in (marks or []) if 0 <= int(a) <= int(b) <= len(value)]
    return Markup(mark(value, spans, "<mark>", "</mark>", lambda s: str(escape(s))))


def marked_plain(text: str | None, marks: Sequence[Sequence[int]] | None = None) -> Markup:
    """A search snippet as plain text (any Markdown in it rendered to its words) with the
    words its marks cover marked wherever they occur, escaped.

    >>> str(marked_plain("**Attention Dropout** is [dropout](https://x.org)", [(2, 11)]))
    '<mark>Attention</mark> Dropout is dropout'
    """
    value = "" if text is None else str(text)
    words = {
        value[int(a) : int(b)].strip().lower()
        for a, b in (marks or [])
        if 0 <= int(a) < int(b) <= len(value)
    }
    words.discard("")
    shown = tex_text(plain(value))
    if not words:
        return Markup(escape(shown))
    pattern = re.compile(
        "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.IGNORECASE
    )
    return marked(shown, [m.span() for m in pattern.finditer(shown)])


def safe_href(url: str | None) -> str | None:
    """A link target a page may carry: a path on this server, or an http(s) URL; else None.

    >>> safe_href("https://github.com/a/b"), safe_href("/paper/x"), safe_href("javascript:x")
    ('https://github.com/a/b', '/paper/x', None)
    >>> safe_href("//evil.example/x") is None, safe_href(" JavaScript:x") is None
    (True, True)
    """
    if not url:
        return None
    value = str(url)
    if value.startswith("/") and not value.startswith("//"):
        return value
    if value.lower().startswith(("http://", "https://")) and not _SPACE.search(value):
        return value
    return None


def query_string(params: Mapping[str, Any]) -> str:
    """`?a=1&b=2` from the non-empty parameters, each percent-encoded.

    >>> query_string({"page": 2, "q": "a b&c", "type": None})
    '?page=2&q=a%20b%26c'
    """
    pairs = [
        f"{quote(str(k))}={quote(str(v), safe='')}"
        for k, v in params.items()
        if v not in (None, "")
    ]
    return "?" + "&".join(pairs) if pairs else ""


def with_page(params: Mapping[str, Any] | None, number: int) -> dict[str, Any]:
    """The parameters of a paged list's page `number` (page 0 is left out of the URL)."""
    return {**(params or {}), "page": number or None}


#: Names of the licences the sources carry, by IRI (others are shown as their IRI).
LICENCE_NAMES = {
    "https://creativecommons.org/licenses/by-sa/4.0/": "CC BY-SA 4.0",
    "https://creativecommons.org/licenses/by/4.0/": "CC BY 4.0",
    "https://creativecommons.org/publicdomain/zero/1.0/": "CC0 1.0",
}
#: Names of the attributions the sources ask for, by IRI.
ATTRIBUTION_NAMES = {
    "https://paperswithcode.com/": "Papers with Code",
    "https://github.com/paperswithcode/paperswithcode-data/": "Papers with Code",
    "https://codewithpapers.app/attribution/": "Code with Papers",
}


def licence_name(iri: str | None) -> str:
    """A licence's short name, from its IRI (the IRI itself when kg knows no name).

    >>> licence_name("https://creativecommons.org/licenses/by-sa/4.0/")
    'CC BY-SA 4.0'
    """
    if not iri:
        return ""
    return LICENCE_NAMES.get(str(iri), str(iri))


def attribution_name(iri: str | None) -> str:
    """Who an attribution IRI names (Papers with Code for theirs; else the IRI)."""
    if not iri:
        return ""
    return ATTRIBUTION_NAMES.get(str(iri).rstrip("/") + "/", str(iri))


def licences(sources: Sequence[Mapping[str, Any]] | None) -> list[tuple[str, str | None]]:
    """The distinct (licence, attribution) pairs of a page's sources, in their order.

    >>> licences([{"licence": "L", "attribution": "A"}, {"licence": "L", "attribution": "B"},
    ...           {"licence": "L", "attribution": "A"}, {"licence": None}])
    [('L', 'A'), ('L', 'B')]
    """
    out: list[tuple[str, str | None]] = []
    for s in sources or []:
        licence, attribution = s.get("licence"), s.get("attribution")
        pair = (str(licence), str(attribution) if attribution else None)
        if licence and pair not in out:
            out.append(pair)
    return out


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(value: Any) -> str:
    """Text an XML 1.0 document may hold: the characters XML forbids even escaped (control
    characters but tab and line ends, lone surrogates, U+FFFE and U+FFFF) dropped. Escaping
    stays autoescape's.

    >>> xml_text("a\x00b\x1b]]>c"), xml_text(None)
    ('ab]]>c', '')
    """
    return "" if value is None else _NOT_XML.sub("", str(value))


def _number(value: Any) -> str:
    """Thousands separated: `{{ n|number }}`."""
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return str(value)


def _plural(count: Any, one: str, many: str | None = None) -> str:
    """`{{ n|plural("paper") }}` -> '1 paper', '2,431 papers'."""
    n = int(count or 0)
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The server's one template environment (built once; templates are cached compiled)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("kg.serve", "templates"),
        autoescape=True,  # every template, whatever its name
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters.update(
        markdown=markdown,
        plain=plain,
        snippet=snippet,
        marked=marked,
        marked_plain=marked_plain,
        math_text=math_text,
        tex_text=tex_text,
        safe_href=safe_href,
        number=_number,
        plural=_plural,
        qs=query_string,
        combine_page=with_page,
        licence_name=licence_name,
        licences=licences,
        attribution_name=attribution_name,
        xml=xml_text,
    )
    from kg.search.documents import CLASSES

    env.globals.update(search_classes=tuple(CLASSES))
    return env


def render(template: str, context: Mapping[str, Any] | None = None, /, **more: Any) -> str:
    """The page `template` (a file in kg/serve/templates/) rendered with the context."""
    return environment().get_template(template).render({**(context or {}), **more})


class JsonResponse(JSONResponse):
    """Every JSON answer of the server: standard JSON (`json_text`), so a value beyond float
    range is `null`, never a bare `Infinity` a client's parser rejects."""

    def render(self, content: Any) -> bytes:
        return json_text(content).encode("utf-8")
