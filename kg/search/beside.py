"""The search index of a first ingest, built in a second process beside the load.

A first ingest (an empty store, an empty index) used to read every searchable entity back
from the store once the load was done, on the ingest's own interpreter: 23-44 % of the
command's wall time. Here each written batch's N-Quads (the very bytes the store loaded)
go down a pipe to a child process, which picks the text lines out of them (`LineDocuments`),
makes the documents of the entities the batch gave text, a class or a graph, and adds them
to the index while the ingest maps and loads the next batch, committing as it goes. At
the end only the child's last commit is left.

- The documents are those a rebuild makes from the store (`kg.search.documents.document`
  is canonical: the same texts in any order give the same document).
- The index is marked clean only by the child's last commit, after the parent sent the end;
  the parent holds `<store>/search.lock` throughout. A child that fails fails the ingest
  (`StoreError` with the child's last words); a parent that dies closes the pipe, and a
  child that reads the pipe's end without the end frame exits without its last commit:
  the index stays dirty (the child commits every COMMIT_EVERY documents on the way, each
  of those leaving it marked dirty), and the next reader rebuilds it.
- Frames: one byte of kind, eight of length (big-endian), the payload. `D` N-Quads bytes;
  `R` renames (JSON, old -> new); `T` the batch is whole (make its documents); `E` the end
  (commit clean, answer `{"indexed": n}` on stdout); `F` a file of a batch's frames (its
  path), which the child reads and removes.
- The child runs at the lowest CPU priority, so it indexes in the time the mapping and the
  load leave: on 2 cores little during the batches, and most at the run's end, beside the
  compaction, which runs on one core (docs/performance.md, "The index in the time the load
  leaves"). Meanwhile the batches it has not read wait in files in the temporary folder
  (`tempfile`, TMPDIR), not in memory, up to BEHIND bytes (less in a small folder:
  `spool_room`); past that the ingest waits. A batch the folder cannot take goes down the
  pipe itself (its frames, as the end's do). A child whose parent is gone removes that
  folder; one whose child is gone too is removed by a later ingest (`sweep_orphans`).
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import queue
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from kg.errors import StoreError
from kg.rdf.limits import rare_full_collections
from kg.rdf.vocab import STD
from kg.search.documents import (
    _ESCAPE,
    _ROLE,
    CLASSES,
    _unescape,
    document,
)
from kg.search.index import Document, Index, Writer
from kg.search.text import DOI_IRI

if TYPE_CHECKING:
    import numpy as np

#: N-Triples predicate -> role, for reading text from lines.
_LINE_ROLE = {f"<{p}>": role for p, role in _ROLE.items()}
_CLASS_RANK = {f"<{iri}>": (rank, name) for rank, (name, iri) in enumerate(CLASSES.items())}
#: What to look for in a batch's bytes: a subject's end and a predicate whose lines carry
#: text or a class. One scan for all of them, instead of splitting every line (eleven
#: `bytes.find` scans: 2.75 against 2.3 CPU-s at archive scale 0.1).
_NEEDLE = re.compile(
    b"> (" + b"|".join(re.escape(p.encode()) for p in (*_LINE_ROLE, STD.type)) + b") "
)
_HEADER = 9
#: Bytes of batches handed to the child and not yet read by it, at most (in files, see the
#: module docstring); past them the ingest waits for the child. On 2 cores the child, at
#: the lowest priority, fell behind by 351 MB at 20,000 records and 502 MB at a tenth of the
#: archive, and caught up beside the compaction; at the archive's scale it stays that far
#: behind the whole load long, and 4 GiB gained nothing there (docs/performance.md). Never
#: more than half what the temporary folder has room for (`spool_room`): a small one (a
#: tmpfs of 64 MB) filled, and failed the ingest; a batch it cannot take at all goes down
#: the pipe instead, which the child reads at its own pace (the ingest waits for it).
BEHIND = 1 << 30
#: The child's nice value: the lowest priority (the compaction's threads run at 10, so in
#: the run's last seconds the compaction, which the command waits on, comes first).
CHILD_NICENESS = 19
#: Entities the child keeps in memory between batches; past it, what it knows of them goes
#: to a spill file (SQLite, in the temporary folder) and is read back when a later batch
#: names one again. Unbounded, the child held the whole store's text (as a rebuild does).
KEPT = 100_000
#: Documents the child adds (or replaces) between two commits of its own. Tantivy holds what
#: it has not committed (each segment's deletes to apply, the queue of deleted keys): one
#: commit at the end let the child grow to 975 MB at the archive's scale, and a synthetic
#: 600,000 documents took 151 s and 517 MB at the end against 60 s and 351 MB committed
#: every 100,000. The index stays marked dirty until the last commit (`serve`).
COMMIT_EVERY = 100_000
#: The child's indexing memory (Tantivy's writer heap; 200 MB elsewhere): committing every
#: COMMIT_EVERY documents, a synthetic 600,000 took 47.1 s with 200 MB, 44.6 s with 100 MB
#: and 49.0 s with 50 MB, the child's resident set 345, 232 and 133 MB.
HEAP = 50_000_000
#: The temporary folders of a parent's batches and of a child's spill file, each named with
#: its process's id: a killed ingest cannot remove them, the next one does (`sweep_orphans`).
FEED_PREFIX, SPILL_PREFIX = "kg-search-feed-", "kg-search-spill-"
#: ...once untouched this long: a batch or a spill writes to its folder every few seconds.
ORPHAN_IDLE = 15 * 60.0
_ORPHAN = re.compile(rf"(?:{FEED_PREFIX}|{SPILL_PREFIX})(\d+)-")


class LineDocuments:
    """Documents made from the N-Quads lines a first ingest writes, batch by batch.

    They equal what `kg.search.documents.all_documents` reads from the store once the same
    lines are in it: the same texts by role, stripped, each value once; the same graphs; the
    same class (the last of CLASSES when a subject has two). What is kept is what a rebuild
    keeps while it reads: each subject's texts by role and its graphs; past `kept`
    entities, in a spill file (`spill`)."""

    def __init__(self, kept: int = KEPT) -> None:
        self.parts: dict[str, dict[str, dict[str, None]]] = {}
        self.graphs: dict[str, set[str]] = {}
        self.types: dict[str, tuple[int, str]] = {}
        self.emitted: set[str] = set()  # of the entities in memory
        self.made = 0  # documents made (each entity once)
        self.remade = 0  # documents made again (their entity gained text, a graph or a class)
        self.spilled = 0  # times the entities in memory went to the spill file
        self.kept = kept
        self._changed: set[str] = set()
        self._names: dict[str, str] = {}  # one string per graph name
        self._spill: sqlite3.Connection | None = None
        self._spill_dir: tempfile.TemporaryDirectory[str] | None = None
        self._looked: set[str] = set()  # looked up in the spill file since it was last written
        # the spilled keys' hashes, sorted (numpy's, made at the first spill: most ingests
        # never spill, and the ingest's own process only feeds the child)
        self._spilled: np.ndarray[Any, np.dtype[np.int64]] | None = None

    def _touch(self, s: str) -> None:
        """Bring back what the spill file knows of `s`, if it went there."""
        if self._spill is None or s in self._looked:
            return
        self._looked.add(s)
        if s in self.parts or s in self.types or s in self.graphs:
            return
        if not self._may_be_spilled(s):  # most are new: no lookup for them
            return
        row = self._spill.execute("SELECT v FROM e WHERE k = ?", (s,)).fetchone()
        if row is None:
            return
        roles, graphs, kind, emitted = marshal.loads(row[0])
        if roles:
            self.parts[s] = roles
        if graphs:
            self.graphs[s] = {self._names.setdefault(g, g) for g in graphs}
        if kind:
            self.types[s] = kind
        if emitted:
            self.emitted.add(s)

    def _may_be_spilled(self, s: str) -> bool:
        """Whether `s`'s hash is among those of the keys spilled (a false yes costs a lookup)."""
        hashes = self._spilled
        if hashes is None:
            return False
        at = int(hashes.searchsorted(hash(s)))
        return at < len(hashes) and int(hashes[at]) == hash(s)

    def spill(self, keep: set[str] | frozenset[str] = frozenset()) -> None:
        """Move the entities in memory to the spill file, but those in `keep` (the last
        batch's: a shared entity named there is likely named again in the next one, and
        spilling them all re-read them one by one, 6 of the child's 21 CPU-s at 20,000
        records). The values are `marshal`'s bytes (this process's own, read back by it);
        the keys' hashes stay in memory, sorted (8 bytes a key), so that an entity never
        spilled is not looked up."""
        if self._spill is None:
            self._spill_dir = tempfile.TemporaryDirectory(prefix=f"{SPILL_PREFIX}{os.getpid()}-")
            self._spill = sqlite3.connect(Path(self._spill_dir.name) / "entities.db")
            self._spill.execute("PRAGMA journal_mode = OFF")
            self._spill.execute("PRAGMA synchronous = OFF")
            self._spill.execute("PRAGMA locking_mode = EXCLUSIVE")  # no lock a statement
            self._spill.execute("CREATE TABLE e (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID")
        import numpy as np

        keys = (self.parts.keys() | self.types.keys() | self.graphs.keys()) - keep
        try:
            self._spill.executemany(
                "INSERT OR REPLACE INTO e VALUES (?, ?)",
                ((s, marshal.dumps((self.parts.get(s), self.graphs.get(s), self.types.get(s),
                                    s in self.emitted)))
                 for s in sorted(keys)),  # in key order: the table's pages fill one by one
            )
            self._spill.commit()
        except sqlite3.OperationalError as exc:  # a full disk, mostly
            raise OSError(
                f"the search index's spill file in {Path(tempfile.gettempdir())} could not be "
                f"written ({exc}): give the temporary folder (TMPDIR) more room"
            ) from None
        added = np.sort(np.fromiter((hash(s) for s in keys), dtype=np.int64, count=len(keys)))
        merged = added if self._spilled is None else np.concatenate((self._spilled, added))
        merged.sort(kind="stable")  # two sorted runs: timsort merges them in one pass
        self._spilled = merged[np.concatenate(([True], merged[1:] != merged[:-1]))]
        for key in keys:
            self.parts.pop(key, None)
            self.graphs.pop(key, None)
            self.types.pop(key, None)
        self.emitted -= keys
        # the graph names of the entities still in memory (all a run's graphs were ~140 MB)
        self._names = {g: g for graphs in self.graphs.values() for g in graphs}
        self._looked = set()
        self.spilled += 1

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None
        if self._spill_dir is not None:
            self._spill_dir.cleanup()
            self._spill_dir = None

    def feed_nquads(self, data: bytes) -> None:
        """The N-Quads lines of `data` the store now holds (other lines are skipped fast)."""
        search = _NEEDLE.search
        found = search(data)
        while found is not None:
            at = found.start()
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            if end < 0:
                end = len(data)
            line = data[start:end].decode("utf-8")
            # a needle may sit inside a literal: the line's own predicate decides (a line's
            # first match is its subject's end when its predicate is one of them)
            if line.split(" ", 2)[1:2] == [found.group(1).decode()]:
                head, graph, _dot = line.rsplit(" ", 2)
                self.feed_line(head, _iri(graph))
            found = search(data, end)

    def feed_line(self, line: str, graph: str) -> None:
        """One N-Triples line (without the final " .") the store now holds in `graph`."""
        bits = line.split(" ", 2)
        if len(bits) < 3 or not bits[0].startswith("<"):
            return
        p, o = bits[1], bits[2]
        role = _LINE_ROLE.get(p)
        if role is None:
            if p == STD.type and o in _CLASS_RANK:
                s = _iri(bits[0])
                self._touch(s)
                kind = _CLASS_RANK[o]
                if self.types.get(s, (-1, ""))[0] < kind[0]:
                    self.types[s] = kind
                    self._changed.add(s)
            return
        if o.startswith('"'):
            end = o.rfind('"')
            if end <= 0:
                return
            text = o[1:end]
            if "\\" in text:
                text = _ESCAPE.sub(_unescape, text)
        elif role == "doi" and o.startswith("<"):
            text = _iri(o)
        else:
            return  # text predicates are read for literals only
        if role == "doi" and not text.startswith(DOI_IRI):
            return
        s = _iri(bits[0])
        self._touch(s)
        values = self.parts.setdefault(s, {}).setdefault(role, {})
        text = text.strip()
        if text not in values:
            values[text] = None
            self._changed.add(s)
        in_graphs = self.graphs.setdefault(s, set())
        if graph not in in_graphs:
            in_graphs.add(self._names.setdefault(graph, graph))
            self._changed.add(s)

    def rename(self, renames: Mapping[str, str]) -> set[str]:
        """The store renamed each `old` IRI to `new` (kg.rdf.store.GraphStore.rename_iris):
        `old`'s texts, graphs and class are `new`'s now. Returns the keys whose documents
        are gone."""
        gone: set[str] = set()
        for old, new in renames.items():
            self._touch(old)
            self._touch(new)
            roles, graphs = self.parts.pop(old, None), self.graphs.pop(old, None)
            kind = self.types.pop(old, None)
            self._changed.discard(old)
            if old in self.emitted:
                self.emitted.discard(old)
                self.made -= 1
                gone.add(old)
            if self._spill is not None:
                self._spill.execute("DELETE FROM e WHERE k = ?", (old,))
            if roles is None and graphs is None and kind is None:
                continue
            target = self.parts.setdefault(new, {})
            for role, values in (roles or {}).items():
                target.setdefault(role, {}).update(values)
            self.graphs.setdefault(new, set()).update(graphs or ())
            if kind is not None and self.types.get(new, (-1, ""))[0] < kind[0]:
                self.types[new] = kind
            self._changed.add(new)
        return gone

    def take(self) -> tuple[list[Document], list[Document]]:
        """The documents made since the last call: new ones, and ones that replace a
        document made earlier (their entity gained text, a graph or its class)."""
        new: list[Document] = []
        replaced: list[Document] = []
        for s in sorted(self._changed):
            kind = self.types.get(s)
            roles = self.parts.get(s)
            if kind is None or roles is None:
                continue
            doc = document(s, kind[1], roles, set(self.graphs.get(s, ())))
            if doc is None:
                continue
            if s in self.emitted:
                replaced.append(doc)
                self.remade += 1
            else:
                new.append(doc)
                self.emitted.add(s)
                self.made += 1
        changed, self._changed = self._changed, set()
        if len(self.parts) + len(self.types) > self.kept:
            self.spill(changed if len(changed) < self.kept // 2 else frozenset())
        return new, replaced


def _iri(term: str) -> str:
    iri = term[1:-1]
    return _ESCAPE.sub(_unescape, iri) if "\\" in iri else iri


# -- the child -----------------------------------------------------------------------------
def _frames(stream: IO[bytes]) -> Iterator[tuple[bytes, bytes]]:
    """(kind, payload) frames until the end of the stream (a truncated frame ends it)."""
    while True:
        header = stream.read(_HEADER)
        if len(header) < _HEADER:
            return
        size = int.from_bytes(header[1:], "big")
        payload = stream.read(size)
        if len(payload) < size:
            return
        yield header[:1], payload


def _frame(kind: bytes, payload: bytes) -> bytes:
    return kind + len(payload).to_bytes(_HEADER - 1, "big")


def _unspooled(frames: Iterator[tuple[bytes, bytes]]) -> Iterator[tuple[bytes, bytes]]:
    """`frames`, each `F` frame replaced by the frames of the file it names, which is then
    removed (the parent counts a batch read once its file is gone)."""
    for kind, payload in frames:
        if kind != b"F":
            yield kind, payload
            continue
        spooled = Path(payload.decode("utf-8"))
        with spooled.open("rb") as f:
            yield from _frames(f)
        spooled.unlink(missing_ok=True)


def serve(
    index_dir: Path,
    stream: IO[bytes],
    out: IO[bytes],
    kept: int = KEPT,
    commit_every: int = COMMIT_EVERY,
) -> int:
    """The child's loop: documents from the frames of `stream` into the index at
    `index_dir`, committed every `commit_every` documents (the index still marked dirty) and
    marked clean only on the end frame. Returns the exit status. Its answer
    says how many documents it made, how many again, and its seconds by step."""
    index = Index.open(index_dir)
    # one indexing thread: the ingest's other threads hold the cores (two took 0.6 CPU-s
    # more at archive scale 0.1, for no time saved)
    writer = Writer(index, threads=1, heap=HEAP)
    lines = LineDocuments(kept)
    uncommitted = 0  # documents added or replaced since the child's last commit
    seconds = dict.fromkeys(("reading", "commit"), 0.0)
    clock = time.perf_counter()
    for kind, payload in _unspooled(_frames(stream)):
        if kind == b"D":
            lines.feed_nquads(payload)
        elif kind == b"R":
            writer.delete(lines.rename(json.loads(payload)))
        elif kind == b"T":
            new, changed = lines.take()
            uncommitted += writer.add(new) + writer.replace(changed)
            if uncommitted >= commit_every:  # still marked dirty: readers rebuild if we die
                writer.commit()
                uncommitted = 0
        elif kind == b"E":
            seconds["reading"] = time.perf_counter() - clock
            writer.finish()
            writer.close()
            seconds["commit"] = time.perf_counter() - clock - seconds["reading"]
            usage = resource.getrusage(resource.RUSAGE_SELF)
            peak = next((int(ln.split()[1]) for ln in _status() if ln.startswith("VmHWM:")), 0)
            lines.close()
            answer = {"indexed": lines.made, "remade": lines.remade, "spilled": lines.spilled,
                      "seconds": {k: round(v, 3) for k, v in seconds.items()},
                      "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
                      "peak_rss_mb": round(peak / 1024)}
            out.write(json.dumps(answer).encode() + b"\n")
            out.flush()
            return 0
    return 3  # the parent went away without the end: nothing committed, the index stays dirty


def _status() -> list[str]:
    """This process's /proc status lines (none where there is no /proc)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            return f.readlines()
    except OSError:
        return []


def main() -> None:
    with contextlib.suppress(AttributeError, OSError):  # no os.nice on this platform: as is
        os.nice(CHILD_NICENESS)  # its threads (Tantivy's) start later and inherit it
    with rare_full_collections():  # its own process: the spill's maps live to its end
        status = serve(Path(sys.argv[1]), sys.stdin.buffer, sys.stdout.buffer,
                       int(sys.argv[2]), int(sys.argv[3]))
    if status and len(sys.argv) > 4:  # the parent went away: no one else removes its batches
        shutil.rmtree(sys.argv[4], ignore_errors=True)
    sys.exit(status)


def sweep_orphans(folder: Path, idle: float = ORPHAN_IDLE) -> None:
    """Remove the folders of batches and spills (FEED_PREFIX, SPILL_PREFIX) in `folder` whose
    process is gone (killed, it could not). A folder's name holds its process's id; a live
    process of that id, one not ours, or a folder written to in the last `idle` seconds (a
    process in another PID namespace sharing the folder) keeps it."""
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            owner = _ORPHAN.match(entry.name)
            if owner and not _alive(int(owner.group(1))) and not _written_within(entry, idle):
                shutil.rmtree(entry, ignore_errors=True)


def _written_within(folder: Path, seconds: float) -> bool:
    """Whether `folder` or a file in it changed in the last `seconds` (or cannot be told)."""
    try:
        changed = max([folder.stat().st_mtime, *(f.stat().st_mtime for f in folder.iterdir())])
    except OSError:
        return True
    return time.time() - changed < seconds


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        pass
    return True


def spool_room(folder: Path, unread: int) -> int:
    """Bytes of batches that may wait unread in `folder`, where `unread` bytes of them are:
    BEHIND, or half of what the folder has for them (its free space and theirs) if less."""
    try:
        return min(BEHIND, (shutil.disk_usage(folder).free + unread) // 2)
    except OSError:
        return BEHIND


def _spooled(batch: Path, frames: list[tuple[bytes, bytes]]) -> bool:
    """Write a batch's frames to the file `batch`; False, and no file, if the temporary
    folder cannot take it (full, gone, not writable)."""
    try:
        with batch.open("wb") as f:
            for kind, payload in frames:
                f.write(_frame(kind, payload))
                f.write(payload)
    except OSError:
        with contextlib.suppress(OSError):
            batch.unlink(missing_ok=True)
        return False
    return True


# -- the parent ----------------------------------------------------------------------------
#: The line that ends a Python traceback: "OSError: …", "sqlite3.OperationalError: …".
_RAISED = re.compile(r"[\w.]+(?:Error|Exception|Interrupt): ")


class BesideBuilder:
    """The parent's side: a child process building the index at `index_dir`, fed batch by
    batch through a bounded queue and a sender thread (the ingest's thread only queues)."""

    def __init__(self, index_dir: Path) -> None:
        sweep_orphans(Path(tempfile.gettempdir()))  # what killed ingests left
        self._spool = tempfile.TemporaryDirectory(
            prefix=f"{FEED_PREFIX}{os.getpid()}-", ignore_cleanup_errors=True
        )
        self.proc = subprocess.Popen(
            # not `-m`: kg.search imports this module, and runpy warns of it on stderr
            [sys.executable, "-c", "from kg.search.beside import main; main()",
             str(index_dir), str(KEPT), str(COMMIT_EVERY), self._spool.name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        # the child's last words, kept in memory: a full temporary folder must not lose them
        self._words: deque[str] = deque(maxlen=5)
        self._listener = threading.Thread(target=self._listen, name="kg-index-log", daemon=True)
        self._listener.start()
        # one batch handed over at a time: the sender writes it to a file in `_spool`
        self._queue: queue.Queue[list[tuple[bytes, bytes]] | None] = queue.Queue(1)
        self.spool = Path(self._spool.name)  # the batches the child has not read yet
        self.error: BaseException | None = None
        self._sender = threading.Thread(target=self._send, name="kg-index-feed", daemon=True)
        self._sender.start()

    def _send(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        unread: deque[tuple[Path, int]] = deque()  # batch files the child has not removed
        behind = 0  # their bytes
        written = 0
        try:
            while (frames := self._queue.get()) is not None:
                end = any(kind == b"E" for kind, _ in frames)  # straight down the pipe
                size = sum(_HEADER + len(payload) for _, payload in frames)
                while unread and not end:
                    if not unread[0][0].exists():  # read: the child removes it
                        behind -= unread.popleft()[1]
                    elif behind + size > spool_room(self.spool, behind) and self.alive():
                        time.sleep(0.05)
                    else:
                        break
                batch = self.spool / f"{written:08d}"
                if not end and _spooled(batch, frames):
                    written += 1
                    name = str(batch).encode("utf-8")
                    stdin.write(_frame(b"F", name) + name)
                    unread.append((batch, size))
                    behind += size
                else:  # the end, or no room in the temporary folder: at the child's pace
                    stdin.writelines(_frame(kind, payload) + payload for kind, payload in frames)
                stdin.flush()
            stdin.close()
        except BaseException as exc:  # the child died: the ingest hears of it at its next batch
            self.error = exc
            while self._queue.get() is not None:  # let the ingest's puts through
                pass

    def _listen(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:  # until the child exits
            if text := line.decode("utf-8", "replace").strip():
                self._words.append(text[:500])

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _check(self) -> None:
        if self.error is not None or not self.alive():
            raise self._failure()

    def _failure(self) -> StoreError:
        self.proc.kill()
        self.proc.wait()
        self._spool.cleanup()
        self._listener.join()
        words = list(self._words)
        if self.error is not None and not isinstance(self.error, BrokenPipeError):
            why = f"handing it a batch failed: {self.error}"  # the child was alive
        else:
            raised = [w for w in words if _RAISED.match(w)]  # a traceback's last line says it
            why = (raised[-1] if raised else "; ".join(words)) or (
                f"it exited with status {self.proc.returncode}"
            )
        return StoreError(
            f"the search index could not be built beside the load ({why}); nothing was "
            "published for search: run the ingest again, or `kg search` rebuilds the index "
            "from the store"
        )

    def batch(self, nquads: Iterable[bytes], renamed: Mapping[str, str]) -> None:
        """A whole batch is in the store: its bytes, then the renames applied after it."""
        self._check()
        frames = [(b"D", part) for part in nquads]
        if renamed:
            frames.append((b"R", json.dumps(dict(renamed)).encode()))
        frames.append((b"T", b""))
        self._queue.put(frames)

    def finish(self) -> dict[str, Any]:
        """Send the end, wait for the child's commit; its counts. Raises StoreError if it failed."""
        self._check()
        self._queue.put([(b"E", b"")])
        self._queue.put(None)
        self._sender.join()
        assert self.proc.stdout is not None
        answer = self.proc.stdout.read()
        status = self.proc.wait()
        if self.error is not None or status != 0:
            raise self._failure()
        self._listener.join()
        self._spool.cleanup()
        result: dict[str, Any] = json.loads(answer)
        return result

    def abort(self) -> None:
        """Stop the child without its commit (the index stays dirty)."""
        self.proc.kill()
        self.proc.wait()
        with contextlib.suppress(queue.Full):  # the sender, stopped by the broken pipe
            self._queue.put_nowait(None)
        self._listener.join()
        self._spool.cleanup()


if __name__ == "__main__":
    main()
