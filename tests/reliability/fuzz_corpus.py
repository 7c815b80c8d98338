"""Malformed and hostile records for the fuzz tests: base records, mutations with what each
must do (be rejected naming a field, or land), hypothesis strategies, and a hand-made corpus
of lines no generator would write (bad bytes, broken JSON, bombs)."""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from kg.testing.records import records

SEEDS_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"
if not SEEDS_DIR.is_dir():
    SEEDS_DIR = Path(__file__).resolve().parents[2] / "examples" / "records"

Path_ = tuple[str | int, ...]

# What a value in a URL field may hold and still land: kg percent-encodes it.
FIXABLE_URLS = [
    "https://example.org/a b c",
    'https://example.org/<angle>/"quoted"/{curly}|pipe^caret`tick\\back',
    "https://例え.jp/パス?q=ü&r=ß#frag",
    "https://example.org/ctl\x01\x1f\x7f\x85end",
    "https://example.org/100%/and%zz",
    "http://[::1]:8080/ipv6",
    "https://example.org/emoji/🙂/ok",
    "  https://example.org/padded  ",
]
# What may never become an IRI: the record must be rejected, naming the field.
BROKEN_URLS = [
    "not a url",
    "arxiv.org/abs/1706.03762",
    "//no-scheme.example.org/x",
    "http://example.org:port/",
    "http://[::1/unclosed",
    "https://example.org/a#b#c",
    "https://example.org/private\ue000use",
    "https://example.org/non\ufffechar",
]
HOSTILE_TEXT = [
    "quotes \" and ' and \\ backslash",
    "new\nline\r\nand\ttab",
    "nul\x00and\x01control\x1b[31m",
    "[/red] [bold]rich markup[/bold]",
    "<script>alert('kg')</script> & amp;",
    "Zoë Ábel 李 王 العربية עברית",
    "\u202eright-to-left override",
    "emoji 🙂 and astral 𝔘",
    " ",
    "x" * 5000,
]
LONE_SURROGATES = ["\ud800", "a\udfffb", "\udbff\udbff"]


@dataclass(frozen=True)
class Case:
    """One record to feed in, and what kg must do with it.

    expect: "reject" (an error naming `field`, or the record itself when `field` is ""),
    "land" (its graph is stored), or "either" (rejected naming a field, or stored).
    """

    record: Any
    expect: str
    field: str = ""
    why: str = ""


def where(path: Path_) -> str:
    """A path as kg names fields: `a.b[0].c`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def put(record: Any, path: Path_, value: Any) -> Any:
    """A copy of `record` with `value` at `path`; None when an earlier mutation took the path."""
    record = copy.deepcopy(record)
    node = record
    try:
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        return None
    return record


def paths(value: Any, prefix: Path_ = ()) -> list[Path_]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += paths(item, (*prefix, i))
    return found


def full_record() -> dict[str, Any]:
    """A generated record with every optional part filled in (results, introduced, …)."""
    record = next(records(1, seed=99))
    record["code_links"] = record["code_links"] or [
        {"paper_slug": "x", "repo_url": "https://github.com/o/r", "is_official": 1}
    ]
    record["results"] = [
        {
            "task": "Image Classification",
            "dataset": "ImageNet",
            "metric": "Top-1",
            "value": "76.1%",
        },
        {"task": "Object Detection", "dataset": "COCO", "metrics": {"AP": 41.2, "AP50": "60.1"}},
    ]
    record["datasets_introduced"] = ["Fuzz Set", {"name": "Other Set", "url": "/dataset/other"}]
    record["methods_introduced"] = [{"method_name": "FuzzNet", "method_slug": "fuzznet"}]
    record["syntology"]["summary"] = {"ran_honours": 2, "unverified": 1}
    record["syntology"]["by_repo_kind"] = {"official": {"samples": 2, "ran": 1, "repositories": 1}}
    record["syntology"]["repo_kind_vocabulary"] = {"official": "the authors' own repository"}
    record["syntology"]["repos"] = [{"url": "https://github.com/o/r", "provenance": "listed"}]
    record["arxiv_metadata"] = {"categories": ["cs.LG"], "versions": [{"v": 1}]}
    return record


#: Placeholders for a case's own paper: `numbered` makes them unique per case.
SLUG, ARXIV = "fuzz-@", "2101.99999"


def placeholder(record: dict[str, Any]) -> dict[str, Any]:
    record = copy.deepcopy(record)
    record["url"] = f"/paper/{SLUG}"
    record["arxiv_id"] = ARXIV
    for link in record.get("code_links") or []:
        link["paper_slug"] = SLUG
    return record


@functools.cache
def base_records() -> tuple[dict[str, Any], ...]:
    """The records the mutations start from (callers copy before changing them)."""
    seeds = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(SEEDS_DIR.glob("*.json"))]
    return tuple(placeholder(r) for r in [*seeds, full_record(), *records(2, seed=5)])


def numbered(line: str, i: int) -> str:
    """A case's JSON line as paper `fuzz-<i>`, so that every case has its own graph."""
    return line.replace(SLUG, f"fuzz-{i}").replace(ARXIV, f"2101.{i % 100_000:05d}")


# -- mutations with a known outcome -------------------------------------------------------------
def _first(record: dict[str, Any], key: str) -> bool:
    value = record.get(key)
    return isinstance(value, list) and bool(value) and isinstance(value[0], dict)


def known_cases(record: dict[str, Any]) -> list[tuple[Path_, Any, str, str]]:
    """(path, value, expect, field) for mutations whose outcome the issue fixes."""
    cases: list[tuple[Path_, Any, str, str]] = []

    def bad(path: Path_, value: Any, field: str | None = None) -> None:
        cases.append((path, value, "reject", where(path) if field is None else field))

    def good(path: Path_, value: Any) -> None:
        cases.append((path, value, "land", ""))

    for value in ("2020-13-45", "2020-02-30", "yesterday", "13/45/2020"):
        bad(("date",), value)
    for key in ("title", "abstract", "date", "proceeding", "url_abs"):  # numbers as strings
        for value in (12, 1.5, True, ["a"], {"a": 1}):
            bad((key,), value)
    bad(("arxiv_id",), 1706.03762)
    bad(("arxiv_id",), "12")
    bad(("authors",), "Alice and Bob")
    for value in (7, None, {"name": "x"}, ["nested"]):
        bad(("authors", 0), value)
    for key in ("url_abs", "url_pdf"):
        for url in BROKEN_URLS:
            bad((key,), url)
        for url in FIXABLE_URLS:
            good((key,), url)
    bad(("url",), 5)
    bad(("url",), "/method/not-a-paper")
    for key in ("title", "abstract", "proceeding", "date"):
        good((key,), None)  # null in an optional field reads as missing
    for key in ("code_links", "tasks", "methods", "syntology", "source", "about", "results"):
        good((key,), None)
    for text in HOSTILE_TEXT:
        good(("title",), text)
        good(("abstract",), text)
        if text.strip():
            good(("authors", 0), text)
    for text in LONE_SURROGATES:
        bad(("title",), text)
        bad(("authors", 0), text)
        bad(("arxiv_metadata",), {"note": text}, "arxiv_metadata.note")
        bad(("zz_unknown",), text)
        key = text.encode("utf-8", "backslashreplace").decode()
        bad(("syntology", "summary"), {text: 1}, f"syntology.summary.{key}")
    if _first(record, "code_links"):
        bad(("code_links", 0, "repo_url"), None)
        bad(("code_links", 0, "repo_url"), "not a repository")
        bad(("code_links", 0, "repo_url"), "http://[::1/x/y")
        bad(("code_links", 0, "repo_url"), 42)
        bad(("code_links", 0, "is_official"), "yes")
        bad(("code_links", 0, "is_official"), 2)
        good(("code_links", 0, "is_official"), 0)
        good(("code_links", 0, "repo_url"), "https://GitHub.com/Ünï/Cödé Repo.git/tree/main/a b")
        bad(("code_links", 0), "https://github.com/o/r", "code_links[0]")
    if _first(record, "tasks"):
        bad(("tasks", 0), "Segmentation")
        bad(("tasks", 0), {"task_slug": None, "task_name": None}, "tasks[0].task_slug")
        good(("tasks", 0), {"task_name": "Only A Name, With Punctuation!"})
    syn = record.get("syntology")
    if isinstance(syn, dict) and _first(syn, "samples"):
        sample = ("syntology", "samples", 0)
        bad((*sample, "verification_level"), "1")  # strings as numbers
        bad((*sample, "verification_level"), 1.5)
        good((*sample, "verification_level"), 2**70)
        bad((*sample, "repo"), "not a repo at all")
        bad((*sample, "file_url"), "http://example.org:bad/")
        good((*sample, "file_url"), FIXABLE_URLS[1])
    if isinstance(syn, dict) and isinstance(syn.get("summary"), dict) and syn["summary"]:
        status = next(iter(syn["summary"]))
        bad(("syntology", "summary", status), "3")
    if isinstance(record.get("results"), list) and record["results"]:
        bad(("results", 0, "value"), None)
        bad(("results", 0, "value"), True)
        good(("results", 0, "value"), "N/A")
        good(("results", 0, "value"), "1,024.5 %")
    good(("zz_unknown_key",), {"deep": [1, {"x": None}]})
    good(("arxiv_metadata",), {"nested": [[[[[[[[[[["ok"]]]]]]]]]]]})
    return cases


def known(record: dict[str, Any], path: Path_, value: Any, expect: str, field: str) -> Case:
    changed = put(record, path, value)
    assert changed is not None, path
    return Case(changed, expect, field, f"{where(path)} = {value!r}"[:120])


def all_known_cases() -> list[Case]:
    """Every known mutation of every base record, one at a time."""
    return [known(r, *c) for r in base_records() for c in known_cases(r)]


# -- hypothesis strategies -----------------------------------------------------------------------
text_any = st.text(
    alphabet=st.characters(codec=None, categories=None, exclude_categories=()), max_size=40
)
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(FIXABLE_URLS + BROKEN_URLS + HOSTILE_TEXT + LONE_SURROGATES),
    st.sampled_from(["2020-13-45", "12", "3.5", "-", "N/A", "true", "null", ""]),
    text_any,
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(text_any, inner, max_size=4)
    ),
    max_leaves=10,
)


@st.composite
def hostile_case(draw: st.DrawFn) -> Case:
    """A base record with one to three mutations: known ones, or any JSON at any path."""
    bases = base_records()
    record: Any = bases[draw(st.integers(0, len(bases) - 1))]
    case = Case(record, "land")
    for _ in range(draw(st.integers(1, 3))):
        record = case.record
        if draw(st.booleans()):
            path, value, expect, field = draw(st.sampled_from(known_cases(record)))
        else:
            path, value, expect, field = draw(st.sampled_from(paths(record))), None, "either", ""
            value = draw(json_value)
        changed = put(record, path, value)
        if changed is None:  # an earlier mutation replaced what this path went through
            continue
        new = Case(changed, expect, field, f"{where(path)} = {value!r}"[:120])
        if case.expect != "land":  # after an earlier mutation, another error may come first
            new = Case(new.record, "either", why=f"{case.why}; {new.why}")
        case = new
    return case


# -- hand-made lines ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Line:
    """One raw line of a JSON Lines file and what kg must do with it."""

    raw: bytes
    expect: str  # "reject" (naming the line) or "land"
    message: str = ""  # a fragment the error must contain
    why: str = ""


def hand_made_lines(good: dict[str, Any]) -> list[Line]:
    def rec(i: int, **changes: Any) -> bytes:
        return numbered(json.dumps({**placeholder(good), **changes}), 90_000 + i).encode()

    deep = 100_000
    lines = [
        Line(b"\xff\xfe\x00{not utf-8}", "reject", "not valid UTF-8", "non-UTF-8 bytes"),
        Line(rec(1).replace(b'"title": "', b'"title": "caf\xe9 '), "reject", "not valid UTF-8"),
        Line(b'{"url": "/paper/broken", ', "reject", "malformed JSON", "truncated object"),
        Line(b'{"url": "/paper/x" "title": "y"}', "reject", "malformed JSON", "missing comma"),
        Line(b"{'url': '/paper/single-quotes'}", "reject", "malformed JSON", "single quotes"),
        Line(b'{"url": "/paper/x", "title": "unterminated}', "reject", "malformed JSON"),
        Line(b"[1, 2, 3]", "reject", "must be a JSON object", "an array record"),
        Line(b'"just a string"', "reject", "must be a JSON object", "a string record"),
        Line(b"42", "reject", "must be a JSON object", "a number record"),
        Line(b"null", "reject", "must be a JSON object", "null record"),
        Line(b"{}", "reject", "names no paper", "empty object"),
        Line(b'{"unknown": 1}', "reject", "names no paper", "only unknown keys"),
        Line(b"[" * deep + b"]" * deep, "reject", "nested too deeply", "100k nested arrays"),
        Line(b'{"a":' * deep + b"1" + b"}" * deep, "reject", "nested too deeply", "100k objects"),
        Line(rec(2, arxiv_metadata=json.loads("[" * 400 + "]" * 400)), "land", why="400 deep"),
        Line(rec(3, title="\ud800"), "reject", "lone surrogate", "escaped lone surrogate"),
        Line(rec(4).replace(b'"title": "', b'"title": "\x00\x1f raw controls '), "reject"),
        Line(
            rec(5, url="/paper/" + "a" * 10_000, code_links=[]), "land", why="a 10k-character slug"
        ),
        Line(rec(6, title="t" * 1_000_001), "reject", "longer than the limit", "over-long field"),
        Line(rec(7, authors=[f"Author {i}" for i in range(5000)]), "land", why="5000 authors"),
        Line(rec(8, date="2020-13-45"), "reject", "'date'", "2020-13-45"),
        Line(rec(9, date="2020-02-29"), "land", why="a leap day"),
        Line(rec(10, url_abs="http://example.org:port/"), "reject", "'url_abs'"),
        Line(rec(11, url_abs=FIXABLE_URLS[1]), "land", why="angle brackets and quotes"),
        Line(rec(12, title=12345), "reject", "expected a string, got number"),
        Line(rec(13, **{"syntology": {"samples": [{"verification_level": "3"}]}}), "reject"),
        Line(b"\xef\xbb\xbf" + rec(14), "reject", why="a byte order mark mid-file"),
        Line(rec(15).replace(b"{", b"{ \t ", 1), "land", why="odd whitespace"),
        Line(rec(16, title=None, abstract=None, date=None, authors=None), "land", why="nulls"),
        Line(rec(17, **{"zz\u0000key": 1, "[/red]": "x"}), "land", why="hostile unknown keys"),
        Line(
            numbered(
                json.dumps({**placeholder(good), "title": "Zoë 李 🙂"}, ensure_ascii=False), 90_018
            ).encode(),
            "land",
            why="raw UTF-8, not escapes",
        ),
    ]
    return lines


RESULT_LINE = re.compile(
    r"^rejected (?P<source>.+?):(?P<locator>line \d+|item \d+|value \d+|value):"
    r"(?: field (?P<field>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"):)? (?P<message>.*)$"
)
