"""Printing query results in the formats users ask for, row by row as they arrive.

Every format streams: json, xml, csv and tsv through kg's one results writer
(kg.rdf.stream over Oxigraph's serialisers), the table as text. On a pipe the table is
plain aligned text whose column widths come from its first rows, written batch by batch;
on a terminal it shows a screen's worth of rows (IRIs shortened with kg's prefixes, cells
wrapped at spaces, never inside a word: a word longer than the screen's line ends in "…";
a table wider than the screen one row per block of lines) and says how many rows it showed
of how many.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kg.errors import UsageError
from kg.rdf.formats import RESULTS_FORMATS, WRITABLE_RDF, find_rdf_format
from kg.rdf.results import (
    AskResult,
    GraphResult,
    QueryResult,
    Row,
    SelectStream,
    compact,
)
from kg.rdf.vocab import PREFIXES

TABULAR_FORMATS = ("table", *(f.name for f in RESULTS_FORMATS))
#: Rows whose cells set a piped table's column widths, and the widest column padded to.
WIDTH_SAMPLE = 100
MAX_COLUMN = 60
#: Fewest rows a terminal table shows, however small the screen.
MIN_SCREEN_ROWS = 10


def _check(result: QueryResult | SelectStream, fmt: str) -> str | None:
    """The RDF format a graph result is printed in (None for SELECT/ASK), or a UsageError."""
    if isinstance(result, GraphResult):
        spec = find_rdf_format("turtle" if fmt == "table" else fmt)
        if spec is None or spec.name not in WRITABLE_RDF:
            raise UsageError(
                f"--format {fmt} is for SELECT/ASK; a CONSTRUCT/DESCRIBE result takes "
                f"one of: {', '.join(WRITABLE_RDF)}"
            )
        return spec.name
    if fmt not in TABULAR_FORMATS:
        raise UsageError(
            f"--format {fmt} is for CONSTRUCT/DESCRIBE; a SELECT/ASK result takes "
            f"one of: {', '.join(TABULAR_FORMATS)}"
        )
    return None


def table_prefixes(base_iri: str = "") -> dict[str, str]:
    """The prefixes a table shortens IRIs with: kg's, and `:` for the base IRI."""
    return {"": base_iri, **PREFIXES} if base_iri else dict(PREFIXES)


def write_result(
    result: QueryResult | SelectStream,
    fmt: str,
    *,
    base_iri: str = "",
    console: Console | None = None,
) -> int | None:
    """Print `result` in `fmt` on standard output (rich `console` for a terminal table),
    rows as they come; returns the number of SELECT rows, None for other results."""
    rdf = _check(result, fmt)
    if rdf is not None or fmt != "table":
        from kg.library.results import write_answer

        sys.stdout.flush()
        return write_answer(result, rdf or fmt, sys.stdout.buffer)
    if isinstance(result, AskResult):
        _text("yes" if result.value else "no")
        return None
    assert not isinstance(result, GraphResult)
    rows: Iterable[Row] = result.rows
    if console is None:
        from kg.cli.app import out

        console = out
    prefixes = table_prefixes(base_iri)
    if console.is_terminal:
        count_rest = result.count_rest if isinstance(result, SelectStream) else None
        return screen_table(result.variables, iter(rows), prefixes, console, count_rest)
    return plain_table(result.variables, rows, prefixes, sys.stdout)


def _text(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def _cell(value: str) -> str:
    """A cell on one line: line breaks and tabs of a literal written as escapes."""
    if "\n" in value or "\r" in value or "\t" in value:
        value = value.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    return value


def _cells(rows: Iterable[Row], prefixes: Mapping[str, str]) -> Iterator[list[str]]:
    for row in rows:
        yield [_cell(compact(t, prefixes)) for t in row]


def _rows_word(n: int) -> str:
    return f"{n:,} row{'s' if n != 1 else ''}"


def plain_table(
    variables: list[str], rows: Iterable[Row], prefixes: Mapping[str, str], out: object
) -> int:
    """Aligned text, written batch by batch: widths from the first rows, nothing cut (a
    longer cell pushes the rest of its line over). Returns the number of rows."""
    from kg.rdf.stream import batches

    write = out.write  # type: ignore[attr-defined]
    flush = out.flush  # type: ignore[attr-defined]
    widths: list[int] = []
    n = 0

    def line(cells: list[str]) -> str:
        padded = [c.ljust(w) for c, w in zip(cells[:-1], widths, strict=False)]
        return "  ".join([*padded, cells[-1]]).rstrip() + "\n" if cells else "\n"

    for batch in batches(_cells(rows, prefixes), first=WIDTH_SAMPLE):
        if not widths:
            widths = [
                min(MAX_COLUMN, max([len(v), *(len(r[i]) for r in batch)]))
                for i, v in enumerate(variables)
            ]
            write(line(variables) + line(["-" * w for w in widths]))
        write("".join(line(r) for r in batch))
        flush()
        n += len(batch)
    if not widths:
        widths = [len(v) for v in variables]
        write(line(variables) + line(["-" * w for w in widths]))
    write(_rows_word(n) + "\n")
    flush()
    return n


def screen_table(
    variables: list[str],
    rows: Iterator[Row],
    prefixes: Mapping[str, str],
    console: Console,
    count_rest: Callable[[], int] | None = None,
) -> int:
    """A screen's worth of rows as a rich table on the terminal, then the count of all
    (`count_rest` counts the rows not read yet faster than reading them)."""
    width, height = console.size
    cells = _cells(rows, prefixes)
    natural = 0
    sample: list[list[str]] = []
    wide = False
    budget = max(MIN_SCREEN_ROWS, height - 7)
    for r in cells:
        sample.append(r)
        if len(sample) == 1:
            natural = sum(max(len(v), len(c)) + 3 for v, c in zip(variables, r, strict=True))
            wide = natural + 1 > width and len(variables) > 1
            if wide:  # one row per block of lines: variable names down the left
                budget = max(MIN_SCREEN_ROWS, (height - 3) // (len(variables) + 1))
        if len(sample) > budget:
            break
    shown = sample[:budget]
    if wide:
        _blocks(variables, shown, console)
    else:
        every = frozenset(range(len(variables)))
        console.print(fitted_table(variables, shown, width, wrap=every), soft_wrap=False)
    total = len(sample)
    if total > budget:
        with console.status("counting the rows"):
            total += count_rest() if count_rest is not None else sum(1 for _ in cells)
        console.print(
            f"{len(shown):,} of {_rows_word(total)} shown (a screen's worth); pipe the output "
            "or use --format tsv to see them all",
            highlight=False, soft_wrap=False,
        )
    else:
        console.print(_rows_word(total), highlight=False)
    return total


def _blocks(variables: list[str], rows: list[list[str]], console: Console) -> None:
    grid_width = max(len(v) for v in variables)
    for i, r in enumerate(rows, 1):
        console.rule(Text(f"row {i:,}"), align="left", style="dim")
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", width=grid_width, no_wrap=True)
        grid.add_column(overflow="ellipsis")  # wrapped at spaces; a longer word ends in …
        for v, c in zip(variables, r, strict=True):
            grid.add_row(v, Text(c))
        console.print(grid, soft_wrap=False)



# --- tables that fit the terminal -----------------------------------------------------------

#: What a fitted table's column takes besides its cells: a space of padding on each side and
#: the one-character rule between columns (box.SIMPLE_HEAD without its edge).
COLUMN_OVERHEAD = 3
#: The narrowest a wrapping column gets (a longer word in it ends in "…"), and the narrowest
#: a one-line column gets.
MIN_WRAP, MIN_LINE = 20, 12


def _longest_word(cells: Iterable[str]) -> int:
    return max((len(w) for c in cells for w in c.split()), default=0)


def fitted_widths(
    headers: list[str], rows: list[list[str]], width: int, *,
    priority: list[int] | None = None, wrap: frozenset[int] = frozenset(),
    droppable: list[int] | None = None, caps: Mapping[int, int] | None = None,
) -> list[tuple[int, int]]:
    """Which columns a table of `width` characters shows, and how wide: [(column, width)].

    Columns whose cells are all empty are dropped. Each column first gets its narrowest
    width that breaks no word: its longest word for the columns in `wrap` (they wrap at
    spaces; at most MIN_WRAP), else the whole cell (at most MIN_LINE: a longer one ends in
    "…"). While that is too wide, the columns in `droppable` go, last first. What is left
    goes to the columns in `priority` order (default: left to right), each up to its `caps`
    width, then up to its widest cell.
    """
    cols = [i for i in range(len(headers)) if any(r[i] for r in rows)]
    natural = {i: max([len(headers[i]), *(len(r[i]) for r in rows)]) for i in cols}

    def least(i: int) -> int:
        if i in wrap:
            word = min(_longest_word(r[i] for r in rows), MIN_WRAP)
            return max(len(headers[i]), min(natural[i], word))
        return max(len(headers[i]), min(natural[i], MIN_LINE))

    drop = [i for i in (droppable or []) if i in cols]
    while drop and sum(least(i) + COLUMN_OVERHEAD for i in cols) > width:
        cols.remove(drop.pop())
    sizes = {i: least(i) for i in cols}
    room = width + 1 - sum(sizes[i] + COLUMN_OVERHEAD for i in cols)  # no rule after the last
    order = [p for p in (priority or []) if p in cols]
    for limits, which in ((caps or {}, order), ({}, order + cols)):
        for i in which:
            cap = min(limits.get(i, natural[i]), natural[i])
            more = min(max(room, 0), max(0, cap - sizes[i]))
            sizes[i] += more
            room -= more
    return [(i, sizes[i]) for i in cols]


def fitted_table(
    headers: list[str], rows: list[list[str]], width: int, *,
    priority: list[int] | None = None, wrap: frozenset[int] = frozenset(),
    droppable: list[int] | None = None, right: frozenset[int] = frozenset(),
    caps: Mapping[int, int] | None = None, title: str | None = None,
    caption: str | None = None,
) -> Table:
    """A rich table of `rows` at most `width` wide (see `fitted_widths`) that never breaks a
    word: the columns in `wrap` wrap at spaces, the others stay on one line, and a word or
    cell longer than its column ends in "…"."""
    from rich import box

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, header_style="bold",
                  title=Text(title) if title else None, caption=caption)
    shown = fitted_widths(headers, rows, width, priority=priority, wrap=wrap,
                          droppable=droppable, caps=caps)
    for i, w in shown:
        table.add_column(headers[i], width=w, overflow="ellipsis", no_wrap=i not in wrap,
                         justify="right" if i in right else "left")
    for r in rows:
        table.add_row(*(Text(r[i]) for i, _ in shown))  # data, not markup
    return table


def wrapped(text: str, width: int, indent: str = "") -> str:
    """`text` wrapped at spaces to `width` columns, its second and later lines indented
    with `indent`; a word longer than a line ends in "…" instead of being split."""
    import textwrap

    room = max(8, width - len(indent))
    words = [w if len(w) <= room else w[: room - 1] + "…" for w in text.split(" ")]
    lead = len(text) - len(text.lstrip(" "))
    return textwrap.fill(" ".join(words).strip(" "), width=width, initial_indent=" " * lead,
                         subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)
