"""The store's version stamp: which version of kg's mapping and layout wrote a store.

A store answers with what the kg that wrote it mapped: its IRIs, its graphs, the triples it
derived, the files it keeps beside the data. An archive store built by an older kg would
answer differently from a fresh one, silently. So kg writes `STORE_VERSION` into every store
it creates (`VERSION_FILE`, before the store's own files) and refuses to open a store stamped
with another version, or with none, saying what to do. The store does not keep the records
it was built from, so an older store cannot be migrated in place: it is rebuilt by
ingesting the inputs again.
"""

from __future__ import annotations

import os
from pathlib import Path

from kg.errors import StoreError, StoreVersionError
from kg.rdf.snapshots import READERS_DIR

#: The version of kg's mapping and layout this kg writes, and the only one it reads. Bump it
#: with any change that makes a store written before answer differently (an IRI, a graph, a
#: derived triple, a file the store keeps), and add a line here saying why:
#: 1. every store written before stores recorded their version (they have no stamp);
#: 2. a table or paper cited by several evaluation entries is no longer copied into a
#:    `…/-/<n>` graph when one citation named the paper by its title fallback (issue 30);
#: 3. authorships and dump entries are no longer typed (`a kg:Authorship`, `a kg:DumpEntry,
#:    prov:Entity`): the property that reaches them says what they are (issue 35);
#: 4. a code link keeps its place in the list its source gives (`schema:position`), so that
#:    code is listed official first, then in the source's order (issue 56).
STORE_VERSION = 4

#: The stamp file in the store directory: the version as a decimal number on one line.
VERSION_FILE = ".kg-store-version"


def read_version(path: Path) -> int | None:
    """The version a store is stamped with; None when it has no stamp (written before
    stores recorded their version)."""
    try:
        text = (path / VERSION_FILE).read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreVersionError(
            f"cannot read the version stamp {path / VERSION_FILE} of the store at {path} "
            f"({exc}); rebuild the store: `kg --store NEW ingest FILES`"
        ) from None
    if not text.isdigit():
        raise StoreVersionError(
            f"the version stamp {path / VERSION_FILE} of the store at {path} says {text[:40]!r}, "
            f"not a version number; rebuild the store: `kg --store NEW ingest FILES`"
        )
    return int(text)


def check(path: Path) -> int:
    """The store's version, when this kg reads it; else a StoreVersionError that says what
    to do (rebuild an older store, upgrade kg for a newer one)."""
    found = read_version(path)
    if found == STORE_VERSION:
        return found
    if found is None and not any(path.glob("MANIFEST-*")):
        # RocksDB's CURRENT names a MANIFEST that every store, of any version, has
        raise StoreError(
            f"the store at {path} is broken: it has RocksDB's CURRENT but no MANIFEST file, "
            f"so its data cannot be read (files were lost or it was copied in part); remove "
            f"{path} and ingest your inputs again (`kg --store {path} ingest FILES`)"
        )
    if found is None or found < STORE_VERSION:
        which = "1, from before stores recorded their version" if found is None else found
        raise StoreVersionError(
            f"the store at {path} was written by an older kg (store version {which}; this kg "
            f"reads version {STORE_VERSION}) and would answer differently from what this kg "
            f"maps: re-ingest your inputs into a new store (`kg --store NEW ingest FILES`), "
            f"or remove {path} and ingest them again",
            found=found,
        )
    raise StoreVersionError(
        f"the store at {path} was written by a newer kg (store version {found}; this kg "
        f"reads version {STORE_VERSION}): upgrade kg (`pip install -U kg`) to open it, or "
        "use the kg that wrote it",
        found=found,
    )


def stamp(path: Path) -> None:
    """Stamp a store kg is creating with this kg's version (before its first file, so a
    crash cannot leave a store without a stamp). Written whole or not at all."""
    path.mkdir(parents=True, exist_ok=True)
    tmp = path / f"{VERSION_FILE}.tmp-{os.getpid()}"
    tmp.write_text(f"{STORE_VERSION}\n", encoding="ascii")
    os.replace(tmp, path / VERSION_FILE)


def size_on_disk(path: Path) -> int:
    """Bytes of every file in the store directory (the search index and caches beside the
    data included; not the readers' snapshot pins, which come and go), a file linked twice
    counted once."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for folder, folders, files in os.walk(path):
        if folder == str(path) and READERS_DIR in folders:
            folders.remove(READERS_DIR)
        for name in files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except FileNotFoundError:  # a writer or reader removed it meanwhile
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total
