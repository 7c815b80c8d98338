"""Downloads that resume, verify and never leave a half-written file under its final name.

`Downloader.fetch(name, into)` brings one file of a folder URL (or a local folder) into a
directory, the way huggingface_hub's `file_download.py` does it:

* the bytes go to `NAME.incomplete`; an interrupted download resumes from its end with an
  HTTP `Range: bytes=N-` request (a host that answers 200 instead of 206 starts it again);
* the host's word on the file comes from a HEAD request that does not follow redirects: the
  Hub answers `/resolve/` with a redirect to its storage whose headers `X-Linked-Size` and
  `X-Linked-Etag` carry the size and the SHA-256 of an LFS file; elsewhere `Content-Length`
  and an `ETag` of 64 hex digits do;
* the file is renamed to its final name only when its size (and SHA-256, where known) is
  right; a wrong checksum removes the partial file, since resuming it cannot mend it;
* a file already complete and verified (its manifest agrees with the host) is skipped;
* failures are `FetchError`s of one line: not found (404), refused (401/403), rate limited
  (429/503, after honouring `Retry-After` a few times), TLS, a connection that keeps dropping,
  a full disk. A dropped connection is retried from where it stopped.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import os
import re
import shutil
import ssl
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urljoin, urlsplit

import httpx

from kg.errors import FetchError
from kg.ingest.manifest import Manifest, read_manifest, write_manifest
from kg.sources.http import retry_after

INCOMPLETE = ".incomplete"
CHUNK = 1 << 20
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

#: (file name, bytes done, bytes in all or None)
Progress = Callable[[str, int, int | None], None]


@dataclass(frozen=True)
class Expected:
    """What is known of a file before asking the host (a catalogue's size and checksum)."""

    size: int | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class Terms:
    """What the manifest says beyond the bytes: snapshot, licence, attribution, kind."""

    snapshot: str | None = None
    licence: str | None = None
    attribution: str | None = None
    archive: str | None = None
    kind: str | None = None


@dataclass
class Fetched:
    """One file's outcome."""

    name: str
    path: Path
    status: str  # fetched, resumed, present
    size: int
    sha256: str
    verified_by_host: bool
    seconds: float = 0.0
    bytes_transferred: int = 0


@dataclass
class _Remote:
    url: str
    size: int | None = None
    sha256: str | None = None
    details: dict[str, str] = field(default_factory=dict)


def is_local(base: str) -> bool:
    """Whether a base URL names a local folder (a path, or a file:// URL)."""
    return base.startswith("file://") or "://" not in base


def _local_folder(base: str) -> Path:
    return Path(unquote(urlsplit(base).path)) if base.startswith("file://") else Path(base)


def folder_url(base: str) -> str:
    """The base as a folder URL that names are appended to (a trailing slash added)."""
    if is_local(base):
        return _local_folder(base).resolve().as_uri() + "/"
    return base if base.endswith("/") else base + "/"


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _etag_sha256(value: str | None) -> str | None:
    """A SHA-256 in an ETag (the Hub's `X-Linked-Etag` of an LFS file), else None: a git
    blob's ETag is a SHA-1 and other hosts' ETags are opaque."""
    if not value:
        return None
    tag = value.strip().removeprefix("W/").strip('"').lower()
    return tag if _SHA256.match(tag) else None


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _tls_failure(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError) or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class Downloader:
    """Fetches files of one folder URL (or local folder) into a directory."""

    def __init__(
        self,
        base_url: str,
        *,
        user_agent: str = "kg",
        timeout: float = 30.0,
        retries: int = 5,
        max_wait: float = 120.0,
        on_progress: Progress | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base = folder_url(base_url)
        self.local = _local_folder(base_url) if is_local(base_url) else None
        self.retries = retries
        self.max_wait = max_wait
        self.on_progress = on_progress
        self.sleep = sleep
        self.client = (
            None
            if self.local is not None
            else httpx.Client(
                timeout=httpx.Timeout(timeout),
                headers={"User-Agent": user_agent, "Accept-Encoding": "identity"},
            )
        )

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    def __enter__(self) -> Downloader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def url(self, name: str) -> str:
        return urljoin(self.base, name)

    # -- one file ---------------------------------------------------------------------------
    def fetch(
        self, name: str, into: Path, *, expected: Expected | None = None, terms: Terms | None = None
    ) -> Fetched:
        """Bring `name` into `into`: resumed, verified, renamed when whole; its manifest
        written. Raises FetchError (one line) when it cannot."""
        started = time.monotonic()
        into.mkdir(parents=True, exist_ok=True)
        final, partial = into / name, into / (name + INCOMPLETE)
        remote = self._remote(name)
        want_size = remote.size if remote.size is not None else (
            expected.size if expected else None
        )
        want_sha = remote.sha256 or (expected.sha256 if expected else None)
        present = self._present(final, want_size, want_sha)
        if present is not None:
            return Fetched(name, final, "present", final.stat().st_size, present,
                           remote.sha256 is not None)
        resumed = partial.exists() and partial.stat().st_size > 0
        transferred = self._download(name, remote, partial, want_size)
        size = partial.stat().st_size
        if want_size is not None and size != want_size:
            raise FetchError(
                f"got {size:,} bytes, the host says {want_size:,}; the partial file is kept: "
                "run kg fetch again to resume",
                name=name, kind="size",
            )
        sha = _sha256_of(partial)
        if want_sha is not None and sha != want_sha:
            partial.unlink(missing_ok=True)
            raise FetchError(
                f"SHA-256 {sha[:16]}… does not match the expected {want_sha[:16]}…; the "
                "download was removed (the mirror's copy differs or was corrupted): run kg "
                "fetch again, or use another --base-url",
                name=name, kind="checksum",
            )
        self._sync(partial)
        os.replace(partial, final)
        self._sync_dir(into)
        t = terms or Terms()
        now = dt.datetime.now(dt.UTC).replace(microsecond=0)
        write_manifest(final, Manifest(
            file=name, url=remote.url, size=size, sha256=sha,
            fetched=now.isoformat().replace("+00:00", "Z"),
            snapshot=t.snapshot, licence=t.licence, attribution=t.attribution,
            archive=t.archive, kind=t.kind, sha256_from_host=remote.sha256 is not None,
        ))
        return Fetched(name, final, "resumed" if resumed else "fetched", size, sha,
                       remote.sha256 is not None, time.monotonic() - started, transferred)

    def _present(self, final: Path, size: int | None, sha: str | None) -> str | None:
        """The checksum of a file already complete and verified under its final name, else
        None. Its manifest spares hashing it again when it agrees with the host."""
        if not final.is_file():
            return None
        actual = final.stat().st_size
        if size is not None and actual != size:
            return None
        manifest = read_manifest(final)
        if manifest is not None and (sha is None or manifest.sha256 == sha):
            return manifest.sha256
        if sha is None:  # nothing to verify it against: fetch it again
            return None
        digest = _sha256_of(final)
        return digest if digest == sha else None

    # -- the host's word ----------------------------------------------------------------------
    def _remote(self, name: str) -> _Remote:
        url = self.url(name)
        if self.local is not None:
            path = self.local / name
            if not path.is_file():
                raise FetchError(f"not found in {self.local}", name=name, kind="not-found")
            return _Remote(url, path.stat().st_size, _sha256_of(path))  # a local source
        assert self.client is not None
        remote = _Remote(url)
        for _ in range(10):  # redirects, read one by one: the Hub's first answer says most
            response = self._request("HEAD", url, name, tolerate=(405, 501))
            if response.status_code in (405, 501):  # a host without HEAD: the bytes only
                return remote
            headers = response.headers
            remote.sha256 = remote.sha256 or _etag_sha256(
                headers.get("X-Linked-Etag") or headers.get("ETag")
            )
            if remote.size is None:
                remote.size = _int(headers.get("X-Linked-Size"))
            if response.is_redirect and "Location" in headers:
                url = urljoin(url, headers["Location"])
                continue
            if remote.size is None:
                remote.size = _int(headers.get("Content-Length"))
            return remote
        raise FetchError(f"too many redirects from {self.url(name)}", name=name, kind="redirect")

    def _request(
        self,
        method: str,
        url: str,
        name: str,
        headers: dict[str, str] | None = None,
        *,
        tolerate: tuple[int, ...] = (),
    ) -> httpx.Response:
        """One request, waiting out 429/503 as `Retry-After` asks (a few times)."""
        assert self.client is not None
        for attempt in range(self.retries + 1):
            response = self._send(method, url, name, headers, stream=False)
            if response.status_code not in (429, 503):
                if response.status_code not in tolerate:
                    self._check_status(response, name)
                return response
            wait = retry_after(response.headers.get("Retry-After"), time.time())
            if attempt == self.retries or (wait is not None and wait > self.max_wait):
                asked = f"; it asks to wait {wait:.0f} s" if wait is not None else ""
                raise FetchError(
                    f"rate limited by {urlsplit(url).netloc} ({response.status_code}){asked}: "
                    "run kg fetch again later (finished files are kept)",
                    name=name, kind="rate-limited",
                )
            self.sleep(wait if wait is not None else min(self.max_wait, 2.0**attempt))
        raise AssertionError("unreachable")

    def _send(
        self, method: str, url: str, name: str, headers: dict[str, str] | None, *, stream: bool
    ) -> httpx.Response:
        assert self.client is not None
        try:
            request = self.client.build_request(method, url, headers=headers)
            return self.client.send(request, stream=stream, follow_redirects=method != "HEAD")
        except httpx.TransportError as exc:
            raise self._transport_error(exc, url, name) from None

    def _transport_error(self, exc: httpx.TransportError, url: str, name: str) -> FetchError:
        host = urlsplit(url).netloc
        if _tls_failure(exc):
            return FetchError(
                f"TLS failed with {host} ({exc}): check the system's certificates or the "
                "--base-url", name=name, kind="tls",
            )
        if isinstance(exc, httpx.ConnectError):
            return FetchError(
                f"cannot connect to {host} ({exc or type(exc).__name__}): check the network "
                "or the --base-url", name=name, kind="connection",
            )
        return FetchError(
            f"the connection to {host} failed ({exc or type(exc).__name__})",
            name=name, kind="connection",
        )

    @staticmethod
    def _check_status(response: httpx.Response, name: str) -> None:
        code = response.status_code
        if code < 400 or code == 416:
            return
        url = str(response.request.url)
        if code == 404:
            raise FetchError(f"not found at {url} (404): check --base-url", name=name,
                             kind="not-found")
        if code in (401, 403):
            raise FetchError(f"the host refuses {url} ({code}): the file may be private or "
                             "moved", name=name, kind="forbidden")
        raise FetchError(f"the host answered {code} for {url}", name=name, kind="http")

    # -- the bytes ----------------------------------------------------------------------------
    def _download(self, name: str, remote: _Remote, partial: Path, size: int | None) -> int:
        """Append the missing bytes to `partial`, resuming after a dropped connection.
        Returns the bytes transferred."""
        transferred = 0
        failures = 0
        while True:
            offset = partial.stat().st_size if partial.exists() else 0
            if size is not None and offset > size:  # not this file's beginning
                partial.unlink()
                offset = 0
            if size is not None and offset == size:
                return transferred
            try:
                transferred += self._append(name, remote, partial, offset, size)
                return transferred
            except FetchError as exc:
                if exc.kind != "connection" or failures >= self.retries:
                    if exc.kind == "connection":
                        done = partial.stat().st_size if partial.exists() else 0
                        of = f" of {size:,}" if size is not None else ""
                        kept = (
                            f"{done:,} bytes{of} are kept in {partial.name}: run kg fetch "
                            "again to resume"
                            if done
                            else "nothing was written: run kg fetch again"
                        )
                        raise FetchError(
                            f"{exc.args[0].split(': ', 1)[-1]}; {kept}",
                            name=name, kind="connection",
                        ) from None
                    raise
                failures += 1
                self.sleep(min(self.max_wait, 0.5 * 2.0 ** (failures - 1)))

    def _append(
        self, name: str, remote: _Remote, partial: Path, offset: int, size: int | None
    ) -> int:
        if self.local is not None:
            with open(self.local / name, "rb") as source:
                source.seek(offset)
                chunks = iter(lambda: source.read(CHUNK), b"")
                return self._write(name, partial, offset, size, chunks)
        headers = {"Range": f"bytes={offset}-"} if offset else None
        for attempt in range(self.retries + 1):
            response = self._send("GET", remote.url, name, headers, stream=True)
            if response.status_code not in (429, 503):
                break
            response.close()
            wait = retry_after(response.headers.get("Retry-After"), time.time())
            if attempt == self.retries or (wait is not None and wait > self.max_wait):
                raise FetchError(
                    f"rate limited ({response.status_code}): run kg fetch again later",
                    name=name, kind="rate-limited",
                )
            self.sleep(wait if wait is not None else min(self.max_wait, 2.0**attempt))
        try:
            self._check_status(response, name)
            if response.status_code == 416:  # the partial file is longer than the file
                partial.unlink(missing_ok=True)
                raise FetchError("the range was refused", name=name, kind="connection")
            if offset and response.status_code != 206:  # the host ignored Range: start again
                offset = 0
            try:
                return self._write(name, partial, offset, size, response.iter_raw())
            except httpx.TransportError as exc:
                raise self._transport_error(exc, remote.url, name) from None
        finally:
            response.close()

    def _write(
        self, name: str, partial: Path, offset: int, size: int | None, chunks: Iterator[bytes]
    ) -> int:
        written = 0
        handle: IO[bytes]
        try:
            resuming = bool(offset) and partial.exists()
            handle = open(partial, "r+b" if resuming else "wb")  # noqa: SIM115
            with handle:
                if resuming:  # drop anything past the offset the host resumes from
                    handle.seek(offset)
                    handle.truncate()
                if self.on_progress:
                    self.on_progress(name, offset, size)
                for chunk in chunks:
                    handle.write(chunk)
                    written += len(chunk)
                    if self.on_progress:
                        self.on_progress(name, offset + written, size)
                handle.flush()
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                free = shutil.disk_usage(partial.parent).free
                need = f"; {size - offset - written:,} more bytes are needed" if size else ""
                raise FetchError(
                    f"disk full writing {partial} ({free:,} bytes free{need}): free some "
                    "space and run kg fetch again to resume",
                    name=name, kind="disk",
                ) from None
            raise FetchError(f"cannot write {partial}: {exc.strerror}", name=name,
                             kind="disk") from None
        return written

    @staticmethod
    def _sync(path: Path) -> None:
        with open(path, "rb") as handle:
            os.fsync(handle.fileno())

    @staticmethod
    def _sync_dir(path: Path) -> None:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
