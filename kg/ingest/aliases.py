"""One node per paper across sources: the alias index of slugs, arXiv ids and titles.

The identity rule (docs/identity.md) names a paper by its Papers-with-Code slug, else its
arXiv id, else its title and year. A source that gives only an arXiv id or a title (an
evaluation-table row, a record without `url`) would get a fallback IRI
(`paper/arxiv/<id>`, `paper/title/<hash>`) although another source may name the same paper
by slug. Two mechanisms make it one node whatever the order of loading:

* **lookup**: a reference by arXiv id (or title and year) resolves to the slug paper that
  the store or the current batch already knows (`kg:arxivId` / `dcterms:title` +
  `dcterms:issued` on a `paper/<slug>` node);
* **rename**: when a source teaches an alias (a slug with an arXiv id or title) and a
  fallback IRI for it was already written, that IRI and the nodes minted beneath it
  (`…/result/…`, `…/code/…`) are rewritten to the slug IRI in every graph, in one atomic
  update, after the batch that taught the alias is written.

A first ingest into an empty store streams every batch into one bulk load that the store
sees only at its end (kg.rdf.first_load): there the index is `deferred`. What a batch taught
is kept in memory once it is streamed (the store cannot be asked yet), and renames are not
applied to the store: the ingest holds back every unit that names a fallback IRI and streams
it last, rewritten with the final renames (`settled_text`), so the load holds final IRIs only.

Memory is bounded by the batches in flight and by the number of fallback papers, not by the
inputs: what is learnt lives in the store and is looked up there through its indexes. Aliases
taught by a batch stay in memory from the time it is mapped until it is written (`seal` when
it is handed to the writer, `written` when the writer is done).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kg.ingest.identity import Iris, title_key
from kg.rdf.results import SelectResult
from kg.rdf.store import GraphStore
from kg.rdf.terms import renamed_iri
from kg.rdf.vocab import KG, STD

_ARXIV_ID = KG.arxivId[1:-1]
_TITLE = STD.title[1:-1]
_ISSUED = STD.issued[1:-1]
_CACHE_LIMIT = 200_000


def _followed(renames: dict[str, str]) -> dict[str, str]:
    """Each old IRI to the end of its chain of renames (title -> arXiv -> slug)."""
    final = {}
    for old, new in renames.items():
        seen = {old}
        while new in renames and new not in seen:
            seen.add(new)
            new = renames[new]
        final[old] = new
    return final


class PaperAliases:
    """The alias index of one ingest pass (see the module docstring)."""

    def __init__(self, store: GraphStore, iris: Iris, *, deferred: bool = False) -> None:
        self.store = store
        self.iris = iris
        #: the store sees this pass's writes only at its end (a first load): look up and
        #: rename in memory only (see the module docstring)
        self.deferred = deferred
        self._arxiv_written: dict[str, str] = {}  # arXiv id -> slug IRI, streamed (deferred)
        self._papers = iris.base + "paper/"
        self._by_arxiv_prefix = iris.paper_by_arxiv("")
        self._by_title_prefix = iris.base + "paper/title/"
        #: fallback paper IRIs that exist (stored, or minted in this pass): rename candidates
        self.fallback: set[str] = set() if deferred else self._stored_fallbacks()
        self._arxiv: dict[str, str] = {}  # arXiv id -> slug IRI, taught by the open batch
        self._title: dict[str, str] = {}  # title key -> best IRI, taught by the open batch
        self.renames: dict[str, str] = {}  # fallback IRI -> better IRI, found in the open batch
        # the same three for each batch handed to the writer but not yet written, oldest first
        self._sealed: list[tuple[dict[str, str], dict[str, str], dict[str, str]]] = []
        self._cache: dict[str, str | None] = {}  # store lookups
        #: title key -> best IRI, taught by the batches of this pass already written. The
        #: store is looked up by exact title, the batches in memory by title key (case,
        #: punctuation and spacing aside): without this, a variant title found its paper only
        #: while the batch that taught it was in memory, so the graph hung on the batch size.
        self._titles_written: dict[str, str] = {}
        self.renamed = 0  # fallback IRIs rewritten so far
        #: every rename this pass applied (old -> final): a unit mapped before its alias was
        #: taught but written after the rename (a large entry's units span batches) is
        #: rewritten before it is written (`rewrite`), else the old IRI came back
        self._applied: dict[str, str] = {}
        #: an IRI at or beneath a fallback paper IRI (an old-style arXiv id holds a "/")
        self._fallback_iri = re.compile(
            "<((?:" + re.escape(self._by_arxiv_prefix) + "|" + re.escape(self._by_title_prefix)
            + ")[^>]*)>"
        )
        #: what a line naming a fallback IRI holds (`names_fallback`)
        self.fallback_prefixes = ("<" + self._by_arxiv_prefix, "<" + self._by_title_prefix)
        self.last_renames: dict[str, str] = {}  # what the latest `written` rewrote (old -> new)

    def _stored_fallbacks(self) -> set[str]:
        result = self.store.query(
            f"""SELECT DISTINCT ?p WHERE {{ ?p a {KG.Paper}
                FILTER (STRSTARTS(STR(?p), "{self._by_arxiv_prefix}")
                        || STRSTARTS(STR(?p), "{self._by_title_prefix}")) }}"""
        )
        assert isinstance(result, SelectResult)
        return {row[0].value for row in result.rows if row[0] is not None}

    def is_slug_iri(self, value: str) -> bool:
        return value.startswith(self._papers) and "/" not in value[len(self._papers) :]

    def _rank(self, value: str) -> tuple[int, str]:
        """Slug IRIs beat arXiv IRIs beat title IRIs; ties go to the smallest (deterministic)."""
        if self.is_slug_iri(value):
            return (0, value)
        return (1 if value.startswith(self._by_arxiv_prefix) else 2, value)

    # -- resolving -----------------------------------------------------------------------
    def paper(
        self,
        *,
        slug: str | None = None,
        arxiv: str | None = None,
        title: str | None = None,
        year: str | None = None,
    ) -> str:
        """The paper's IRI; what the reference links (slug with arXiv id, …) is learnt."""
        if slug:
            target = self.iris.paper(slug)
            if arxiv:
                self._teach_arxiv(arxiv, target)
        elif arxiv:
            found = self._lookup_arxiv(arxiv)
            if found is None:
                found = self.iris.paper_by_arxiv(arxiv)
                self.fallback.add(found)
            target = found
        elif title:
            found = self._lookup_title(title, year)
            if found is None:
                found = self.iris.paper_by_title(title, year)
                self.fallback.add(found)
            return found
        else:
            raise ValueError("a paper reference needs a slug, an arXiv id or a title")
        if title and year:
            self._teach_title(title, year, target)
        return target

    def _lookup_arxiv(self, arxiv: str) -> str | None:
        hits = [t[arxiv] for t, _, _ in self._open() if arxiv in t]
        if self.deferred:
            streamed = self._arxiv_written.get(arxiv)
            return min([*hits, streamed]) if streamed is not None else min(hits, default=None)
        key = "a:" + arxiv
        if key not in self._cache:
            stored = [s for s in self.store.subjects_with(_ARXIV_ID, arxiv) if self.is_slug_iri(s)]
            self._remember(key, stored[0] if stored else None)
        cached = self._cache[key]
        if cached is not None:
            hits.append(cached)
        return min(hits) if hits else None

    def _lookup_title(self, title: str, year: str | None) -> str | None:
        """Title references match only with a year: a title alone is not an identity."""
        if not year:
            return None
        k = title_key(title, year)
        hits = [t[k] for _, t, _ in self._open() if k in t]
        if k in self._titles_written:
            hits.append(self._titles_written[k])
        if self.deferred:
            return min(hits, key=self._rank) if hits else None
        key = f"t:{year}:{title}"
        if key not in self._cache:
            stored = [
                s
                for s in self.store.subjects_with(_TITLE, title)
                if not s.startswith(self._by_title_prefix)
                and s.startswith(self._papers)
                and any(v[:4] == year for v in self.store.literal_values(s, _ISSUED))
            ]
            self._remember(key, min(stored, key=self._rank) if stored else None)
        cached = self._cache[key]
        if cached is not None:
            hits.append(cached)
        return min(hits, key=self._rank) if hits else None

    def _open(self) -> list[tuple[dict[str, str], dict[str, str], dict[str, str]]]:
        return [(self._arxiv, self._title, self.renames), *self._sealed]

    def _remember(self, key: str, value: str | None) -> None:
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = value

    # -- learning ------------------------------------------------------------------------
    def _teach_arxiv(self, arxiv: str, target: str) -> None:
        known = self._arxiv.get(arxiv)
        self._arxiv[arxiv] = target if known is None else min(known, target)
        self._cache.pop("a:" + arxiv, None)
        old = self.iris.paper_by_arxiv(arxiv)
        if old in self.fallback:
            self._rename(old, self._lookup_arxiv(arxiv) or target)

    def _teach_title(self, title: str, year: str, target: str) -> None:
        key = title_key(title, year)
        known = self._title.get(key)
        self._title[key] = target if known is None else min(known, target, key=self._rank)
        self._cache.pop(f"t:{year}:{title}", None)
        old = self.iris.paper_by_title(title, year)
        if old in self.fallback and old != self._title[key]:
            self._rename(old, self._title[key])

    def _rename(self, old: str, new: str) -> None:
        self.renames[old] = new
        self.fallback.discard(old)

    def rewrite(self, lines: list[str]) -> list[str]:
        """N-Triples `lines` with the fallback IRIs this pass renamed (and the nodes minted
        beneath them) rewritten to their final IRIs."""
        return self._moved(lines, self._applied)

    def settled(self, lines: list[str]) -> list[str]:
        """`lines` with every fallback IRI this pass knows a better IRI for rewritten to it:
        the renames applied, and those taught by batches not yet written. Two copies of one
        part mapped before and after its alias was taught then compare equal, as they do
        when a rerun finds the alias in the store (else the first run kept a copy graph the
        rerun never maps)."""
        known = dict(self._applied)
        for _, _, renames in [*self._sealed, (self._arxiv, self._title, self.renames)]:
            known.update(renames)
        return self._moved(lines, _followed(known))

    def settled_text(self, text: str) -> str:
        """N-Quads or N-Triples `text` with every renamed fallback IRI (and the nodes minted
        beneath it) rewritten to its final IRI: the units a first load held back."""
        if not self._applied:
            return text
        return self._fallback_iri.sub(self._mover(self._applied), text)

    def names_fallback(self, text: str) -> bool:
        """Whether `text` (N-Quads) names a fallback paper IRI, which a rename may move."""
        arxiv, title = self.fallback_prefixes
        return arxiv in text or title in text

    @staticmethod
    def _mover(renames: dict[str, str]) -> Callable[[re.Match[str]], str]:
        def moved(match: re.Match[str]) -> str:
            # as GraphStore.rename_iris moves it
            new = renamed_iri(match.group(1), renames)
            return match.group(0) if new is None else f"<{new}>"

        return moved

    def _moved(self, lines: list[str], renames: dict[str, str]) -> list[str]:
        if not renames:
            return lines
        moved = self._mover(renames)
        return [self._fallback_iri.sub(moved, line) if "/paper/" in line else line
                for line in lines]  # fmt: skip

    # -- batches -------------------------------------------------------------------------
    def seal(self) -> None:
        """The open batch goes to the writer: keep what it taught until it is written."""
        self._sealed.append((self._arxiv, self._title, self.renames))
        self._arxiv, self._title, self.renames = {}, {}, {}

    def written(self) -> int:
        """The oldest sealed batch is in the store: apply the renames it taught. Returns how
        many quads were rewritten."""
        arxivs, titles, renames = self._sealed.pop(0)
        # what the batch taught is in the store now: a lookup cached as a miss is stale
        for arxiv in arxivs:
            self._cache.pop("a:" + arxiv, None)
            if self.deferred:  # the store cannot be asked until the load ends
                known = self._arxiv_written.get(arxiv)
                target = arxivs[arxiv]
                self._arxiv_written[arxiv] = target if known is None else min(known, target)
        for key, target in titles.items():
            known = self._titles_written.get(key)
            self._titles_written[key] = target if known is None else min(
                known, target, key=self._rank
            )
        self.last_renames = {}
        if not renames:
            return 0
        final = _followed(renames)
        self._cache.clear()  # cached lookups may name a renamed IRI
        for old, new in self._applied.items():  # an earlier rename's target renamed now
            if new in final:
                self._applied[old] = final[new]
        self._applied.update(final)
        self.renamed += len(final)
        self.last_renames = final
        if self.deferred:  # the held-back units are rewritten instead (`settled_text`)
            return 0
        return self.store.rename_iris(final)
