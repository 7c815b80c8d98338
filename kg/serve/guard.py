"""Slow and greedy clients: connection caps and read timeouts for `kg serve` (issue 31).

uvicorn's HTTP/1.1 protocol (h11) times out only the idle wait between two requests of a
kept-alive connection. A client that opens a connection and trickles its headers (or sends
none) held it, and a file descriptor, for as long as it liked: 400 such connections made
`/health` time out under a descriptor limit of 256. `GuardedH11Protocol` adds:

* a header timeout: a connection whose request line and headers are not complete within
  `header_timeout` seconds of its opening (or of the first byte of its next request) is
  closed;
* a cap on open connections in total (kept below the process's descriptor limit) and per
  client address: a connection over the client's cap is closed at once, before it is
  read; at the total cap, the connection that has waited longest for its headers (or,
  kept alive, for its next request) is closed to make room (so half-open or idle
  connections from many addresses cannot lock the others out), and only when none waits
  is the new one refused.

The body is read by the application under its own deadline (kg.serve.app.read_body).
"""

from __future__ import annotations

import asyncio
import resource
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: How many connections the event loop accepts at one wake-up (uvicorn's `backlog`, also
#: the listen queue): a connection refused or evicted frees its descriptor only two turns
#: of the loop later, so the cap leaves room for two whole batches.
ACCEPT_BATCH = 64
#: Descriptors kept free for the store, the workers' pipes, logs and the listening socket,
#: and for two batches of accepted connections.
_RESERVED_FDS = 64 + 2 * ACCEPT_BATCH


@dataclass(frozen=True)
class ConnectionLimits:
    """How long a client may take to send its headers, and how many connections it holds."""

    header_timeout: float = 10.0
    max_connections: int = 1000
    max_per_client: int = 32

    def total(self) -> int:
        """The total cap, below the descriptor limit of this process."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return self.max_connections
        return max(8, min(self.max_connections, soft - _RESERVED_FDS))


@dataclass
class ConnectionStats:
    open: int = 0
    refused: int = 0
    timed_out: int = 0


def guarded_protocol(limits: ConnectionLimits) -> tuple[type[H11Protocol], ConnectionStats]:
    """An h11 protocol class for uvicorn (`Config(http=…)`) with these limits, and its counts."""
    stats = ConnectionStats()
    per_client: dict[str, int] = {}
    #: Connections waiting for their headers, oldest first (dicts keep insertion order).
    pending: dict[Any, None] = {}
    total = limits.total()

    class GuardedH11Protocol(H11Protocol):
        _counted: str | None = None
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            address = self.client[0] if self.client else ""
            within_share = per_client.get(address, 0) < limits.max_per_client
            if within_share and stats.open >= total and pending:
                oldest = next(iter(pending))
                oldest._disarm()
                oldest._uncount()  # now, not when the loop reports it closed
                stats.timed_out += 1
                oldest.transport.abort()
            if stats.open >= total or not within_share:
                stats.refused += 1
                transport.abort()  # frees the descriptor now; nothing was read
                return
            self._counted = address
            per_client[address] = per_client.get(address, 0) + 1
            stats.open += 1
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._uncount()
            super().connection_lost(exc)

        def _uncount(self) -> None:
            if self._counted is not None:
                stats.open -= 1
                left = per_client.get(self._counted, 1) - 1
                if left:
                    per_client[self._counted] = left
                else:
                    per_client.pop(self._counted, None)
                self._counted = None

        def data_received(self, data: bytes) -> None:
            if self._counted is None:
                return
            if self._header_timer is None and self.conn.their_state is h11.IDLE:
                self._arm()  # the first bytes of a kept-alive connection's next request
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()  # the headers are in

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._disarm()  # uvicorn's keep-alive timeout guards the idle wait
            if not self.transport.is_closing():
                pending[self] = None  # idle until its next request: evictable at the cap

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(limits.header_timeout, self._too_slow)
            pending[self] = None

        def _disarm(self) -> None:
            pending.pop(self, None)
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            pending.pop(self, None)
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                stats.timed_out += 1
                self.transport.close()

    return GuardedH11Protocol, stats
