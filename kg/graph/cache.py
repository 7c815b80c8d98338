"""The incidence matrix and similarity indexes, persisted beside the store.

Reading the paper–item links out of Oxigraph is most of the cost of `kg similar` on a large
store (80–150 s at archive size; the ranking takes milliseconds). So the first call writes
what it built into `<store>/.kg-cache/`, and later calls, in any process, load it:

* `incidence.npz` (+ `papers.txt`, `items.txt`): the matrix of all relations;
* `index-<relations>-<metric>[-v<version>].npz`: one `SimilarityIndex`'s arrays (weights,
  posting lists, mass bands), written the first time that combination is asked for. The
  metric's version is in the name, and `SimilarityIndex.restore` refuses weights that are
  not the metric's own, so an index written by an earlier kg is rebuilt, not misread.
* `suggest-v<version>.json`: the settings `kg suggest` tuned on the store's own links
  (kg.graph.suggest.train), written when the model is trained: by `kg suggest --train`,
  by `kg suggest`, or by a request (a paper page, `/suggest`, the MCP tool) on a store of
  at most `inline_training_limit()` papers with a link; a larger store's request never
  trains (ModelNotTrainedError says how to). `suggest-v<version>.training` holds the pid of
  a training under way, `suggest-v<version>.failed` why one failed, so that requests do not
  start it again on that version of the store;
* `content-v<version>.npz`: the items' names and their words' weights over all papers'
  texts (kg.graph.content.ContentIndex), written with it;
* `order-v<version>.npy`: each paper's place (a row of the matrix) in the order of the
  pages' lists, newest first (kg.graph.lists), written the first time a list is asked for.

The cache is keyed to the store's content: the publication a snapshot reads, or the names,
sizes and modification times of the files of a store without publications
(`GraphStore.signature`, kg.rdf.snapshots), which any write changes (a read does not). A record
ingested since makes the key differ, and the cache is rebuilt lazily, on the next question,
from the store; ingest knows nothing of it (imports point downward). A subset of relations
(`--by methods`) is cut out of the full matrix, giving exactly the matrix
`load_incidence(store, relations)` reads. A store directory that cannot be written (or a
memory store) works as before, building in memory.

In a long-lived process (a server worker) the loaded matrix and indexes are also kept in
memory, keyed the same way, so a warm question costs only the ranking.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

import numpy as np

from kg.config import SUGGEST_INLINE_ENV, SUGGEST_INLINE_PAPERS
from kg.errors import ModelNotTrainedError, UsageError
from kg.graph.content import VERSION as CONTENT_VERSION
from kg.graph.content import ContentIndex
from kg.graph.incidence import Incidence, load_incidence
from kg.graph.relations import ALL, relation_names
from kg.graph.scoring import metric_named
from kg.graph.similarity_index import SimilarityIndex
from kg.graph.suggest import VERSION as SUGGEST_VERSION
from kg.graph.suggest import Model, Trained, Votes, read_text, train
from kg.rdf.store import GraphStore

CACHE_DIR = ".kg-cache"
#: Bumped whenever the files' layout changes, so an older cache is never misread.
FORMAT = 1
_ALL = relation_names(ALL)


def content_key(store: GraphStore) -> str | None:
    """A key that changes with any write to the store (None for a memory store)."""
    if store.path is None:
        return None
    signature = store.signature()  # the version this snapshot holds, not a newer one
    if not signature:
        return None
    text = json.dumps([FORMAT, signature])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def select(full: Incidence, relations: Sequence[str]) -> Incidence:
    """The matrix of some relations, as `load_incidence(store, relations)` builds it.

    Columns follow `relations`' order (each relation's columns sorted by IRI, as in the full
    matrix); only papers with at least one of their items are rows (sorted by IRI).
    """
    relations = tuple(relations)
    if relations == full.relations:
        return full
    chosen = [full.relations.index(r) for r in relations]
    columns = np.concatenate(
        [np.flatnonzero(full.item_relation == r) for r in chosen] or [np.zeros(0, dtype=np.int64)]
    )
    sub = full.matrix[:, columns].tocsr()
    keep = np.flatnonzero(np.diff(sub.indptr) > 0)
    sub = sub[keep].tocsr()
    sub.sort_indices()
    item_relation = np.concatenate(
        [
            np.full(int((full.item_relation == r).sum()), i, dtype=np.int8)
            for i, r in enumerate(chosen)
        ]
        or [np.zeros(0, dtype=np.int8)]
    )
    return Incidence(
        _rows_of(full.papers, keep),
        _rows_of(full.items, columns),
        item_relation,
        relations,
        sub,
    )


@dataclass
class _Loaded:
    key: str | None
    full: Incidence
    parts: dict[tuple[str, ...], Incidence] = field(default_factory=dict)
    indexes: dict[tuple[tuple[str, ...], str], SimilarityIndex] = field(default_factory=dict)
    suggest: Model | None = None
    suggest_failed: str | None = None  # why this process's training of the model failed
    order: np.ndarray | None = None  # kg.graph.lists: each row's place, newest first
    order_refused: bool = False  # the store's dates or titles cannot be ordered in Python


#: What this process has loaded, per store directory (or id of a memory store).
_MEMORY: dict[str, _Loaded] = {}


def _where(store: GraphStore) -> str:
    return str(Path(store.path).resolve()) if store.path is not None else f"memory:{id(store)}"


def _write_atomically(directory: Path, name: str, write: object) -> None:
    """Write a file through a temporary name, so a reader never sees half of it."""
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.")
    os.close(fd)
    try:
        assert callable(write)
        write(tmp)
        os.replace(tmp, directory / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _save_incidence(directory: Path, inc: Incidence) -> None:
    def arrays(tmp: str) -> None:
        with open(tmp, "wb") as out:
            np.savez(
                out,
                indptr=inc.matrix.indptr,
                indices=inc.matrix.indices,
                item_relation=inc.item_relation,
            )

    _write_atomically(directory, "papers.txt", lambda t: Path(t).write_text("\n".join(inc.papers)))
    _write_atomically(directory, "items.txt", lambda t: Path(t).write_text("\n".join(inc.items)))
    _write_atomically(
        directory, "relations.json", lambda t: Path(t).write_text(json.dumps(inc.relations))
    )
    _write_atomically(directory, "incidence.npz", arrays)


class Lines(Sequence[str]):
    """The lines of a UTF-8 file, each decoded when asked for.

    A fresh `kg similar` asks for a few of the archive's 576,261 paper IRIs and 745,253 item
    IRIs; a list of them all took 0.3 s and 200 MB to build. Iteration and equality work as
    on the list.
    """

    def __init__(self, data: bytes, starts: np.ndarray, ends: np.ndarray) -> None:
        self._data, self._starts, self._ends = data, starts, ends

    @classmethod
    def of(cls, data: bytes) -> Lines:
        if not data:
            return cls(b"", np.zeros(0, np.int64), np.zeros(0, np.int64))
        breaks = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0x0A)
        return cls(data, np.concatenate(([0], breaks + 1)), np.append(breaks, len(data)))

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self._data[self._starts[i] : self._ends[i]].decode()

    def __iter__(self) -> Iterator[str]:
        data = self._data
        for start, end in zip(self._starts.tolist(), self._ends.tolist(), strict=True):
            yield data[start:end].decode()

    def take(self, rows: np.ndarray) -> Lines:
        """The lines at `rows`, without decoding them."""
        return Lines(self._data, self._starts[rows], self._ends[rows])

    def index(self, value: object, start: int = 0, stop: int | None = None) -> int:
        if isinstance(value, str) and "\n" not in value and len(self):
            encoded = value.encode()
            lengths = self._ends - self._starts
            if encoded:
                # every place the bytes stand as a whole line of the data; a `take` may have
                # reordered or repeated the rows, so the rows are then matched by offset
                data, size, at, offsets = self._data, len(encoded), 0, []
                while (at := data.find(encoded, at)) >= 0:
                    begins_line = at == 0 or data[at - 1] == 0x0A
                    ends_line = at + size == len(data) or data[at + size] == 0x0A
                    if begins_line and ends_line:
                        offsets.append(at)
                    at += 1
                matches = np.isin(self._starts, offsets) & (lengths == size)
            else:
                matches = lengths == 0
            rows = np.flatnonzero(matches[start:stop]) + range(len(self))[start:stop].start
            if len(rows):
                return int(rows[0])
        raise ValueError(f"{value!r} is not in the lines")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


def _read_lines(path: Path) -> Lines:
    return Lines.of(path.read_bytes())


def _rows_of(lines: Sequence[str], rows: np.ndarray) -> Sequence[str]:
    return lines.take(rows) if isinstance(lines, Lines) else [lines[i] for i in rows.tolist()]


def _load_incidence_file(directory: Path) -> Incidence | None:
    try:
        with np.load(directory / "incidence.npz") as z:
            indptr, indices, item_relation = z["indptr"], z["indices"], z["item_relation"]
        papers = _read_lines(directory / "papers.txt")
        items = _read_lines(directory / "items.txt")
        relations = tuple(json.loads((directory / "relations.json").read_text()))
    except (OSError, ValueError, KeyError):
        return None
    if len(indptr) != len(papers) + 1 or len(item_relation) != len(items):
        return None
    import scipy.sparse as sp

    matrix = sp.csr_matrix(
        (np.ones(len(indices), dtype=np.float64), indices, indptr),
        shape=(len(papers), len(items)),
    )
    return Incidence(papers, items, item_relation, relations, matrix)


def cache_directory(store: GraphStore, key: str | None) -> Path | None:
    if store.path is None or key is None:
        return None
    return Path(store.path) / CACHE_DIR / key


def _prepare(directory: Path) -> bool:
    """Create the cache directory and drop stale ones; False if the store is not writable."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    for old in directory.parent.iterdir():
        if old.is_dir() and old.name != directory.name:
            shutil.rmtree(old, ignore_errors=True)
    return True


@overload
def _loaded(store: GraphStore) -> _Loaded: ...
@overload
def _loaded(store: GraphStore, *, build: bool) -> _Loaded | None: ...
def _loaded(store: GraphStore, *, build: bool = True) -> _Loaded | None:
    """The store's matrix (and what was made of it) in this process, loaded from beside the
    store or read from the store; with `build=False`, None instead of reading the store."""
    where = _where(store)
    key = content_key(store)
    known = _MEMORY.get(where)
    if known is not None and key is not None and known.key == key:
        return known
    directory = cache_directory(store, key)
    full = _load_incidence_file(directory) if directory is not None else None
    if full is None:
        if not build:
            return None
        full = load_incidence(store, _ALL)
        if directory is not None and _prepare(directory):
            with contextlib.suppress(OSError):
                _save_incidence(directory, full)
    loaded = _Loaded(key, full)
    if key is not None:
        _MEMORY[where] = loaded
    return loaded


def incidence(store: GraphStore, by: str | Sequence[str] = ALL) -> Incidence:
    """The incidence matrix of `by`'s relations, from the cache when it is current."""
    relations = relation_names(by)
    if content_key(store) is None:
        return load_incidence(store, relations)
    loaded = _loaded(store)
    if relations not in loaded.parts:
        loaded.parts[relations] = select(loaded.full, relations)
    return loaded.parts[relations]


def kept(store: GraphStore) -> _Loaded | None:
    """The store's current matrix if it is kept (in this process or beside the store), for
    a request that must not wait for reading every link (minutes at archive size): None
    otherwise, and for a memory store."""
    if content_key(store) is None:
        return None
    return _loaded(store, build=False)


ORDER_VERSION = 1


def keep_order(
    store: GraphStore, loaded: _Loaded, make: Callable[[Incidence], np.ndarray | None]
) -> np.ndarray | None:
    """Each paper's place in the lists' order (kg.graph.lists), loaded from beside the store
    or made by `make` (and then kept); None if `make` cannot order this store."""
    if loaded.order is not None or loaded.order_refused:
        return loaded.order
    directory = cache_directory(store, loaded.key)
    name = f"order-v{ORDER_VERSION}.npy"
    order: np.ndarray | None = None
    if directory is not None:
        with contextlib.suppress(OSError, ValueError):
            order = np.load(directory / name)
        if order is not None and order.shape != (len(loaded.full.papers),):
            order = None
    if order is None:
        order = make(loaded.full)
        if order is None:
            loaded.order_refused = True
            return None
        if directory is not None and directory.is_dir():
            made = order

            def array(tmp: str) -> None:
                with open(tmp, "wb") as out:
                    np.save(out, made)

            with contextlib.suppress(OSError):
                _write_atomically(directory, name, array)
    loaded.order = order
    return order


def _index_name(relations: tuple[str, ...], metric: str) -> str:
    """`index-<relations>-<metric>[-v<version>].npz`: a metric whose weights or score change
    gets a new version, so an index written by an earlier kg is never read as its own."""
    name = "all" if relations == _ALL else "+".join(relations)
    version = metric_named(metric).version
    return f"index-{name}-{metric}{f'-v{version}' if version > 1 else ''}.npz"


def _remove_other_versions(directory: Path, relations: tuple[str, ...], metric: str) -> None:
    """Delete the files an earlier version of the metric left for the same relations."""
    name = "all" if relations == _ALL else "+".join(relations)
    pattern = re.compile(rf"index-{re.escape(name)}-{re.escape(metric)}(-v\d+)?\.npz")
    keep = _index_name(relations, metric)
    for path in directory.iterdir():
        if path.name != keep and pattern.fullmatch(path.name):
            with contextlib.suppress(OSError):
                path.unlink()


def similarity_index(store: GraphStore, by: str | Sequence[str], metric: str) -> SimilarityIndex:
    """The similarity index of `by` and `metric`, loaded or built (and then kept)."""
    chosen = metric_named(metric)
    relations = relation_names(by)
    if content_key(store) is None:
        return SimilarityIndex(load_incidence(store, relations), chosen)
    loaded = _loaded(store)
    wanted = (relations, chosen.name)
    if wanted in loaded.indexes:
        return loaded.indexes[wanted]
    inc = incidence(store, relations)
    directory = cache_directory(store, loaded.key)
    index: SimilarityIndex | None = None
    if directory is not None:
        path = directory / _index_name(relations, chosen.name)
        with contextlib.suppress(OSError, ValueError, KeyError), np.load(path) as z:
            index = SimilarityIndex.restore(inc, chosen, {k: z[k] for k in z.files})
    if index is None:
        index = SimilarityIndex(inc, chosen)
        if directory is not None and directory.is_dir():
            state = index.state()

            def arrays(tmp: str) -> None:
                with open(tmp, "wb") as out:
                    np.savez(out, **state)  # type: ignore[arg-type]

            with contextlib.suppress(OSError):
                _write_atomically(directory, _index_name(relations, chosen.name), arrays)
                _remove_other_versions(directory, relations, chosen.name)
    loaded.indexes[wanted] = index
    return index


def inline_training_limit() -> int:
    """The most papers with a link a store may have for a request to train its suggestion
    model itself (kg.config.SUGGEST_INLINE_PAPERS, or the environment's override)."""
    text = os.environ.get(SUGGEST_INLINE_ENV)
    if text is None or not text.strip():
        return SUGGEST_INLINE_PAPERS
    try:
        value = int(text.strip().replace("_", ""))
    except ValueError:
        value = -1
    if value < 0:
        raise UsageError(
            f"the environment variable {SUGGEST_INLINE_ENV} must be a number of papers "
            f"(0 or more), not {text!r}"
        )
    return value


_TRAIN_HOW = "run `kg suggest --train` on the store to train and keep it"


def _model_files() -> tuple[str, str, str, str]:
    base = f"suggest-v{SUGGEST_VERSION}"
    return f"{base}.json", f"content-v{CONTENT_VERSION}.npz", f"{base}.training", f"{base}.failed"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _training_refused(directory: Path | None, loaded: _Loaded | None) -> str | None:
    """Why a request must not train this version of the store's model: an earlier training
    failed (in this process, or as recorded beside the store), or one is under way or died
    before it finished. None when nothing stands in the way."""
    if loaded is not None and loaded.suggest_failed:
        return loaded.suggest_failed
    if directory is None:
        return None
    _, _, training, failed = _model_files()
    with contextlib.suppress(OSError):
        reason = (directory / failed).read_text().strip()
        return f"its training failed on this version of the store ({reason or 'no reason kept'})"
    try:
        pid = int((directory / training).read_text().strip() or "0")
    except (OSError, ValueError):
        return None
    if pid and pid != os.getpid() and _pid_alive(pid):
        return f"it is being trained (process {pid})"
    return f"its training stopped before it finished (process {pid} ended, out of memory?)"


def _saved_model(directory: Path | None) -> tuple[Trained, ContentIndex] | None:
    if directory is None:
        return None
    name, content_name, _, _ = _model_files()
    trained: Trained | None = None
    content: ContentIndex | None = None
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        trained = Trained.from_dict(json.loads((directory / name).read_text()))
    if trained is None:
        return None
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError), np.load(
        directory / content_name
    ) as z:
        content = ContentIndex.restore({k: z[k] for k in z.files})
    return None if content is None else (trained, content)


def has_suggest_model(store: GraphStore) -> bool:
    """Whether a trained suggestion model of the store's current content is kept (beside
    the store, or in this process), so a suggestion needs no training."""
    key = content_key(store)
    known = _MEMORY.get(_where(store))
    if known is not None and key is not None and known.key == key and known.suggest is not None:
        return True
    return _saved_model(cache_directory(store, key)) is not None


def suggest_model(store: GraphStore, *, on_request: bool = False) -> Model:
    """The suggestion model of the store: its similarity index (all relations, idf), the
    items' names (kg.graph.content) and the settings tuned on its links, loaded or trained
    (and then kept).

    `on_request`: the model is for a request (a paper page, `/suggest`, the MCP tool), which
    must not wait for a long training. It trains only a store of at most
    `inline_training_limit()` papers with a link, and never one whose training failed or
    is under way (a failure is kept beside the store, for that version of it); otherwise
    it raises ModelNotTrainedError saying how to train the model ahead."""
    index = similarity_index(store, ALL, "idf")
    if content_key(store) is None:
        if on_request:
            _check_inline(index.incidence, None)
        names, words = read_text(store, index.incidence)
        return Model(Votes(index, names), train(store, index.incidence, text=(names, words)))
    loaded = _loaded(store)
    if loaded.suggest is not None:
        return loaded.suggest
    directory = cache_directory(store, loaded.key)
    saved = _saved_model(directory)
    if saved is not None:
        trained, content = saved
    else:
        if on_request:
            _check_inline(index.incidence, _training_refused(directory, loaded))
        trained, content = _train_and_keep(store, index, directory, loaded)
    loaded.suggest = Model(Votes(index, content), trained)
    return loaded.suggest


def _check_inline(inc: Incidence, refused: str | None) -> None:
    limit = inline_training_limit()
    papers = len(inc.papers)
    if refused is None and papers <= limit:
        return
    why = refused or (
        f"{papers:,} papers with a link, and a request trains it only up to {limit:,}"
        if limit
        else f"{SUGGEST_INLINE_ENV}=0: a request never trains it"
    )
    raise ModelNotTrainedError(
        f"the suggestion model of this store is not trained ({why}); {_TRAIN_HOW}"
    )


def _train_and_keep(
    store: GraphStore, index: SimilarityIndex, directory: Path | None, loaded: _Loaded
) -> tuple[Trained, ContentIndex]:
    """Train the model and keep it; a failure is remembered (in this process and beside the
    store), so requests do not start the same training again."""
    name, content_name, training, failed = _model_files()
    writable = directory is not None and directory.is_dir()
    if writable:
        assert directory is not None
        with contextlib.suppress(OSError):
            _write_atomically(directory, training, lambda t: Path(t).write_text(str(os.getpid())))
    try:
        content, words = read_text(store, index.incidence)
        trained = train(store, index.incidence, text=(content, words))
    except BaseException as exc:
        reason = "over the memory limit" if isinstance(exc, MemoryError) else type(exc).__name__
        if isinstance(exc, Exception):  # MemoryError too; not an interrupt
            loaded.suggest_failed = f"its training failed in this process ({reason})"
            if writable:
                assert directory is not None
                with contextlib.suppress(OSError):
                    _write_atomically(directory, failed, lambda t: Path(t).write_text(reason))
        if writable:
            assert directory is not None
            with contextlib.suppress(OSError):
                (directory / training).unlink()
        raise
    if writable:
        assert directory is not None
        text = json.dumps(trained.as_dict(), indent=1)
        state = content.state()

        def arrays(tmp: str) -> None:
            with open(tmp, "wb") as out:
                np.savez(out, **state)  # type: ignore[arg-type]

        with contextlib.suppress(OSError):
            _write_atomically(directory, content_name, arrays)
            _write_atomically(directory, name, lambda t: Path(t).write_text(text))
        for done in (training, failed):
            with contextlib.suppress(OSError):
                (directory / done).unlink()
    loaded.suggest_failed = None
    return trained, content


def clear(store: GraphStore) -> None:
    """Forget the cache of a store, on disk and in this process."""
    _MEMORY.pop(_where(store), None)
    if store.path is not None:
        shutil.rmtree(Path(store.path) / CACHE_DIR, ignore_errors=True)
