"""A polite JSON client of one HTTP API (docs/live.md, "Politeness").

It asks only below its base URL (a redirect elsewhere is refused), at most `rate` requests a
second, with a `kg/<version>` User-Agent; it honours 429 `Retry-After`, retries transient
failures (5xx, resets, timeouts, a body cut short) with exponential backoff, reads at most
`max_bytes` of a body, and after `attempts` failures in a row stops with one `SourceError`
line. A 404 is `Missing`: the caller counts it and goes on. `max_requests` bounds a run.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from kg.errors import SourceError

#: pwc-cli's own bound on a response (standalone_cli/src/pwc_cli/transport.py).
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
#: Statuses worth another try: the server is busy or briefly broken.
TRANSIENT = frozenset({408, 425, 429, 500, 502, 503, 504})


def user_agent() -> str:
    """`kg/<version>`, then where kg lives, as the API's operators may want to know."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        own = version("kg")
    except PackageNotFoundError:  # a checkout that was never installed
        own = "0.0.0+unknown"
    return f"kg/{own} (+https://w3id.org/kg; kg pull)"


class Missing(Exception):  # an answer, not a failure: the caller counts it and skips it
    """The API has no such resource (404)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


class BudgetSpent(Exception):
    """`max_requests` were sent: the run stops here, keeping what it pulled."""


class _Retry(Exception):
    def __init__(self, why: str, wait: float | None = None) -> None:
        super().__init__(why)
        self.why = why
        self.wait = wait


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only below the base URL; anything else is refused."""

    def __init__(self, base: str) -> None:
        self.base = base

    def redirect_request(  # type: ignore[no-untyped-def]
        self, req, fp, code, msg, headers, newurl
    ):
        target = urllib.parse.urljoin(req.full_url, newurl)
        if not target.startswith(self.base + "/") and target != self.base:
            raise SourceError(
                f"{req.full_url} redirected to {target}, outside {self.base}: kg pull sends "
                "requests only below --base-url (give the API's own URL)"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds a `Retry-After` header asks to wait (delta seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT, even where it says -0000
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, when.timestamp() - now)


class PoliteClient:
    """GETs JSON below `base_url`, one request at a time, politely (see the module)."""

    def __init__(
        self,
        base_url: str,
        *,
        rate: float = 1.0,
        attempts: int = 5,
        backoff: float = 2.0,
        max_wait: float = 600.0,
        timeout: float = 30.0,
        max_bytes: int = MAX_RESPONSE_BYTES,
        max_requests: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise SourceError(f"--base-url {base_url!r} is not an http(s) URL")
        self.base_url = base_url.rstrip("/")
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self.max_wait = max_wait
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_requests = max_requests
        self.sleep = sleep
        self.requests = 0  # sent, retries included
        self.retries = 0
        self.user_agent = user_agent()
        self._next = 0.0  # monotonic time before which no request starts
        self._lock = threading.Lock()
        self._opener = urllib.request.build_opener(_SameOrigin(self.base_url))

    def url(self, path: str, params: Mapping[str, object | None] | None = None) -> str:
        """The full URL of `path` below the base, with the non-None `params` (booleans as
        `true`/`false`, as pwc-cli sends them)."""
        query = urllib.parse.urlencode(
            {
                k: str(v).lower() if isinstance(v, bool) else v
                for k, v in (params or {}).items()
                if v is not None
            }
        )
        quoted = "/".join(urllib.parse.quote(part, safe="") for part in path.split("/"))
        return f"{self.base_url}/{quoted.lstrip('/')}" + (f"?{query}" if query else "")

    def get_json(self, path: str, params: Mapping[str, object | None] | None = None) -> Any:
        """The parsed JSON at `path`; raises `Missing` on 404, `BudgetSpent` when the run's
        request budget is spent, `SourceError` after `attempts` failures in a row."""
        url = self.url(path, params)
        last = ""
        for attempt in range(self.attempts):
            try:
                return self._once(url)
            except _Retry as again:
                last = again.why
                if attempt + 1 >= self.attempts:
                    break
                wait = again.wait if again.wait is not None else self.backoff * 2**attempt
                if wait > self.max_wait:
                    raise SourceError(
                        f"{url}: the API asks to wait {wait:.0f} s ({last}); stopped, keeping "
                        "everything pulled so far: run kg pull again later"
                    ) from None
                self.retries += 1
                self.sleep(wait)
        raise SourceError(
            f"{url}: {last}, {self.attempts} times in a row; stopped, keeping everything "
            "pulled so far: run kg pull again to resume"
        )

    def _wait_turn(self) -> None:
        with self._lock:
            if self.max_requests is not None and self.requests >= self.max_requests:
                raise BudgetSpent
            now = time.monotonic()
            if now < self._next:
                self.sleep(self._next - now)
                now = time.monotonic()
            self._next = now + self.interval
            self.requests += 1

    def _once(self, url: str) -> Any:
        self._wait_turn()
        request = urllib.request.Request(
            url, headers={"Accept": "application/json", "User-Agent": self.user_agent}
        )
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                body = self._read(response)
        except urllib.error.HTTPError as exc:
            status = exc.code
            exc.close()
            if status == 404:
                raise Missing(url) from None
            if status in TRANSIENT:
                wait = retry_after(exc.headers.get("Retry-After"), time.time())
                raise _Retry(f"HTTP {status}", wait) from None
            raise SourceError(f"{url}: HTTP {status}; the API refused the request") from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, SourceError):
                raise reason from None
            if isinstance(exc, http.client.IncompleteRead):
                raise _Retry("the response was cut short") from None
            kind = "timed out" if isinstance(reason, socket.timeout | TimeoutError) else reason
            raise _Retry(f"no answer ({kind})") from None
        try:
            return json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise _Retry("the response is not JSON (cut short?)") from None

    def _read(self, response: Any) -> bytes:
        length = response.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > self.max_bytes:
            raise SourceError(
                f"{response.url}: a response of {int(length):,} bytes is over the "
                f"{self.max_bytes:,}-byte bound; ask for smaller pages"
            )
        body: bytes = response.read(self.max_bytes + 1)
        if len(body) > self.max_bytes:
            raise SourceError(
                f"{response.url}: the response is over the {self.max_bytes:,}-byte bound; "
                "ask for smaller pages"
            )
        if length and length.isdigit() and len(body) != int(length):
            raise http.client.IncompleteRead(body, int(length) - len(body))
        return body
