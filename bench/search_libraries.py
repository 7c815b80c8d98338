"""Which full-text library for kg search: tantivy, SQLite FTS5, bm25s, measured side by side.

One corpus for all three: every real titled text in the bundled examples (4,535 paper
titles and the seeds' abstracts, 1,924 methods with their descriptions, 2,017 tasks) plus
generated papers (titles and abstracts drawn from that text, bench/search_corpus.py).

Measured per library, in one process, one after another on the same documents:
- index time (build + commit to disk) and disk size;
- warm query latency p50/p95 for one-word, three-word, phrase and prefix queries;
- ranking: known-item hit@1 (searching a real paper's exact title finds that paper first;
  a real method's name finds that method first), over the whole corpus.
FTS5 and tantivy are also measured with and without English stemming.

    .venv/bin/python bench/search_libraries.py [--generated 100000] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import random
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_corpus import EXAMPLES, Doc, chain, generated_papers, real_docs

TITLE_WEIGHT = 4.0
_TOKEN = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def disk_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# -- the three libraries, behind one small interface -------------------------------------
class Engine:
    name = ""

    def build(self, docs: list[Doc], where: Path) -> None: ...

    def search(self, query: str, kind: str, limit: int = 10) -> list[str]:
        """Keys ranked best first. `kind` is words | phrase | prefix."""
        raise NotImplementedError


class Fts5(Engine):
    def __init__(self, stem: bool) -> None:
        self.stem = stem
        self.name = "sqlite-fts5" + (" porter" if stem else "")

    def build(self, docs: list[Doc], where: Path) -> None:
        self.path = where / "fts.sqlite"
        con = sqlite3.connect(self.path)
        con.execute("PRAGMA journal_mode=WAL")
        tok = ("porter " if self.stem else "") + "unicode61 remove_diacritics 2"
        con.execute(
            f"CREATE VIRTUAL TABLE docs USING fts5(key UNINDEXED, kind UNINDEXED, title, body,"
            f" tokenize='{tok}', prefix='3')"
        )
        with con:
            con.executemany(
                "INSERT INTO docs VALUES (?, ?, ?, ?)",
                ((d.key, d.kind, d.title, d.body) for d in docs),
            )
        con.execute("INSERT INTO docs(docs) VALUES ('optimize')")
        con.commit()
        con.close()
        self.con = sqlite3.connect(self.path)

    def search(self, query: str, kind: str, limit: int = 10) -> list[str]:
        ws = words(query)
        if not ws:
            return []
        if kind == "phrase":
            match = '"' + " ".join(ws) + '"'
        elif kind == "prefix":
            match = " ".join(f'"{w}"' for w in ws[:-1]) + f' "{ws[-1]}"*'
        else:
            match = " ".join(f'"{w}"' for w in ws)
        rows = self.con.execute(
            f"SELECT key FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 0, 0, {TITLE_WEIGHT}, 1)"
            " LIMIT ?",
            (match, limit),
        )
        return [r[0] for r in rows]


class Tantivy(Engine):
    def __init__(self, stem: bool) -> None:
        self.stem = stem
        self.name = "tantivy" + (" en_stem" if stem else "")

    def build(self, docs: list[Doc], where: Path) -> None:
        import tantivy

        self.tantivy = tantivy
        self.path = where / "tantivy"
        self.path.mkdir()
        tok = "kg_stem" if self.stem else "kg_plain"
        sb = tantivy.SchemaBuilder()
        sb.add_text_field("key", stored=True, tokenizer_name="raw")
        sb.add_text_field("kind", stored=True, tokenizer_name="raw")
        sb.add_text_field("title", stored=True, tokenizer_name=tok)
        sb.add_text_field("body", stored=True, tokenizer_name=tok)
        schema = sb.build()
        self.index = tantivy.Index(schema, path=str(self.path))
        self._register(self.index)
        writer = self.index.writer(heap_size=200_000_000, num_threads=2)
        for d in docs:
            writer.add_document(
                tantivy.Document(key=d.key, kind=d.kind, title=d.title, body=d.body)
            )
        writer.commit()
        writer.wait_merging_threads()
        self.index = tantivy.Index.open(str(self.path))
        self._register(self.index)
        self.index.reload()
        self.searcher = self.index.searcher()

    def _register(self, index: object) -> None:
        t = self.tantivy
        for name, stem in (("kg_stem", True), ("kg_plain", False)):
            builder = (
                t.TextAnalyzerBuilder(t.Tokenizer.simple())
                .filter(t.Filter.lowercase())
                .filter(t.Filter.ascii_fold())
            )
            if stem:
                builder = builder.filter(t.Filter.stemmer("english"))
            index.register_tokenizer(name, builder.build())  # type: ignore[attr-defined]

    def search(self, query: str, kind: str, limit: int = 10) -> list[str]:
        ws = words(query)
        if not ws:
            return []
        if kind == "phrase":
            text = '"' + " ".join(ws) + '"'
        elif kind == "prefix":
            text = " ".join([*ws[:-1], ws[-1] + "*"])
        else:
            text = " ".join(ws)
        q = self.index.parse_query(
            text, ["title", "body"], field_boosts={"title": TITLE_WEIGHT},
            conjunction_by_default=True,
        )
        hits = self.searcher.search(q, limit, count=False).hits
        return [self.searcher.doc(addr)["key"][0] for _, addr in hits]


class Bm25s(Engine):
    name = "bm25s"

    def build(self, docs: list[Doc], where: Path) -> None:
        import bm25s
        import Stemmer

        self.bm25s = bm25s
        self.stemmer = Stemmer.Stemmer("english")
        self.path = where / "bm25s"
        # no fields: the title is repeated to weigh it (bm25s has no field boosts)
        corpus = [" ".join([d.title] * int(TITLE_WEIGHT) + [d.body]) for d in docs]
        tokens = bm25s.tokenize(corpus, stopwords="en", stemmer=self.stemmer, show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        retriever.save(str(self.path))
        self.keys = [d.key for d in docs]
        self.retriever = bm25s.BM25.load(str(self.path), mmap=True)

    def search(self, query: str, kind: str, limit: int = 10) -> list[str]:
        # no phrase or prefix support: the words are searched (OR semantics)
        tokens = self.bm25s.tokenize([query], stopwords="en", stemmer=self.stemmer,
                                     show_progress=False)
        if not tokens.vocab:
            return []
        try:
            ids, _ = self.retriever.retrieve(tokens, k=limit, show_progress=False, n_threads=1)
        except ValueError:
            return []
        return [self.keys[i] for i in ids[0]]


# -- measuring ------------------------------------------------------------------------------
def query_sets(docs: list[Doc], rng: random.Random) -> dict[str, list[str]]:
    vocab = [w for d in docs[:20000] for w in words(d.title) if len(w) > 3]
    bodies = [words(d.body) for d in docs if d.body][:20000]
    one = [rng.choice(vocab) for _ in range(200)]
    three = [" ".join(rng.sample(vocab, 3)) for _ in range(200)]
    phrase: list[str] = []
    while len(phrase) < 200:
        b = rng.choice(bodies)
        if len(b) > 4:
            i = rng.randrange(len(b) - 3)
            phrase.append(" ".join(b[i : i + 3]))
    prefix = [w[:4] + " " for w in one]
    return {"1-word": one, "3-word": three, "phrase": phrase, "prefix": [p.strip() for p in prefix]}


def searched(engine: Engine, mode: str, query: str) -> object:
    return engine.search(query, mode)


def latency(fn: Callable[[str], object], queries: list[str]) -> tuple[float, float]:
    for q in queries[:20]:
        fn(q)  # warm
    times = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * len(times)) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--generated", type=int, default=100_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    real = real_docs()
    model = chain()
    docs = real + list(generated_papers(args.generated, seed=1, model=model))
    rng = random.Random(7)
    queries = query_sets(docs[len(real):] or docs, rng)
    titles = [d for d in real if d.kind == "paper"]
    # a method is searched by its name alone (its document also holds the full name)
    with gzip.open(EXAMPLES / "pwc" / "methods.json.gz") as f:
        raw = json.loads(f.read())
    method_items = [(f"method:{m['url']}", m["name"]) for m in raw]
    print(f"corpus: {len(docs):,} documents ({len(real):,} real, {args.generated:,} generated)")
    results = []
    for engine in (Fts5(True), Fts5(False), Tantivy(True), Tantivy(False), Bm25s()):
        where = Path(tempfile.mkdtemp(prefix="kg-search-lib-"))
        try:
            t = time.perf_counter()
            engine.build(docs, where)
            seconds = time.perf_counter() - t
            row: dict[str, object] = {
                "library": engine.name,
                "index_s": round(seconds, 2),
                "disk_mb": round(disk_size(engine.path) / 1e6, 1),
            }
            for kind, qs in queries.items():
                mode = "phrase" if kind == "phrase" else "prefix" if kind == "prefix" else "words"
                p50, p95 = latency(functools.partial(searched, engine, mode), qs)
                row[f"{kind}_p50_ms"] = round(p50, 2)
                row[f"{kind}_p95_ms"] = round(p95, 2)
            hit = sum(engine.search(d.title, "words", 1)[:1] == [d.key] for d in titles)
            row["title_hit1"] = round(hit / len(titles), 4)
            hit = sum(engine.search(name, "words", 1)[:1] == [key] for key, name in method_items)
            row["method_hit1"] = round(hit / len(method_items), 4)
            results.append(row)
            print(json.dumps(row), flush=True)
        finally:
            shutil.rmtree(where, ignore_errors=True)
    if args.out:
        args.out.write_text(json.dumps({"documents": len(docs), "rows": results}, indent=2))
    cols = list(results[0])
    print("| " + " | ".join(cols) + " |")
    print("|" + " --- |" * len(cols))
    for row in results:
        print("| " + " | ".join(str(row[c]) for c in cols) + " |")


if __name__ == "__main__":
    main()
