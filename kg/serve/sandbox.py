"""An operating-system guarantee that a query worker contacts no other host.

SPARQL's `SERVICE` and `LOAD` make Oxigraph open HTTP connections. Deciding from the query
text which hosts a query will call means reading the text exactly as Oxigraph's parser
does (escapes, comments, `BASE`, prefixes, variables…), and one disagreement is an SSRF:
a `\\u` escape inside an IRI once hid a `SERVICE` from kg's own scanner. So the text check
(kg.rdf.sparql_scan) only words a refusal early; the guarantee is enforced where the engine
acts. A worker of a server started without `--allow-service` installs a seccomp filter
before it opens the store: the kernel then refuses every `socket()` call that is not a Unix
socket (the worker talks to the server over one it inherited), and `io_uring_setup` (which
could open sockets past the filter). Oxigraph's HTTP client gets EACCES before any name is
looked up or any packet leaves, whatever the query says. The filter cannot be lifted by
the process, and it holds for every thread the worker starts.

With `--allow-service HOST…` (not '*') a worker may open Internet sockets, but every
`connect()` (and every send that names its own destination: `sendto` with an address,
`sendmsg`, `sendmmsg`) stops in the kernel until the server process has looked at the
address the engine is really connecting to (seccomp user notification; the server holds
the listener, `Supervisor`). The server lets it through only for an address an allowed
host resolves to (or the system's name servers, port 53, when an allowed host is a
name), and answers EACCES otherwise. The query text plays no part: `\\u` escapes,
prefixes, BASE or a computed IRI all end in the same `connect()`. If the server process
goes away, the kernel fails every such call (fail closed).
"""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import os
import platform
import select
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterable

from kg.errors import ForbiddenError, StoreError

#: Per architecture: (AUDIT_ARCH value, socket, io_uring_setup, seccomp) system call numbers.
_ARCHES = {
    "x86_64": (0xC000003E, 41, 425, 317),
    "aarch64": (0xC00000B7, 198, 425, 277),
}
#: Per architecture: connect, sendto, sendmsg, sendmmsg.
_SENDS = {
    "x86_64": (42, 44, 46, 307),
    "aarch64": (203, 206, 211, 269),
}
_PIDFD_OPEN, _PIDFD_GETFD = 434, 438  # the same on both architectures
_RET_USER_NOTIF = 0x7FC00000
_SECCOMP_FILTER_FLAG_NEW_LISTENER = 8
_SECCOMP_FILTER_FLAG_TSYNC_ESRCH = 16
_NOTIF_RECV = 0xC0502100  # _IOWR('!', 0, struct seccomp_notif)  (80 bytes)
_NOTIF_SEND = 0xC0182101  # _IOWR('!', 1, struct seccomp_notif_resp)  (24 bytes)
_NOTIF_ID_VALID = 0x40082102  # _IOW('!', 2, __u64)
_USER_NOTIF_FLAG_CONTINUE = 1
_AF_INET, _AF_INET6 = 2, 10
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
_RET_ALLOW = 0x7FFF0000
_RET_EACCES = 0x00050000 | 13
_AF_UNIX = 1
# classic BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
#: x32 system calls have this bit set; a filter must refuse them or they bypass it.
_X32_BIT = 0x40000000

#: The message a query gets when it tried to call another host from a guarded worker.
REFUSED = (
    "the query tried to call another host (SERVICE or LOAD): this endpoint does not call "
    "other hosts unless started with --allow-service HOST (or '*')"
)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _filter(arch: int, nr_socket: int, nr_uring: int) -> list[tuple[int, int, int, int]]:
    # seccomp_data: nr at 0, arch at 4, args[0] (low word on little endian) at 16
    return [
        (_LD_W_ABS, 0, 0, 4),
        (_JEQ_K, 1, 0, arch),  # another ABI (i386 on x86_64): refuse
        (_RET_K, 0, 0, _RET_EACCES),
        (_LD_W_ABS, 0, 0, 0),
        (_JGE_K, 0, 1, _X32_BIT),
        (_RET_K, 0, 0, _RET_EACCES),
        (_JEQ_K, 0, 1, nr_uring),
        (_RET_K, 0, 0, _RET_EACCES),
        (_JEQ_K, 0, 3, nr_socket),
        (_LD_W_ABS, 0, 0, 16),
        (_JEQ_K, 1, 0, _AF_UNIX),
        (_RET_K, 0, 0, _RET_EACCES),
        (_RET_K, 0, 0, _RET_ALLOW),
    ]


def _supervised_filter(
    arch: int, nr_socket: int, nr_uring: int, sends: tuple[int, int, int, int]
) -> list[tuple[int, int, int, int]]:
    """Sockets of Unix and Internet families only; connect and addressed sends notify."""
    nr_connect, nr_sendto, nr_sendmsg, nr_sendmmsg = sends
    return [
        (_LD_W_ABS, 0, 0, 4),
        (_JEQ_K, 1, 0, arch),
        (_RET_K, 0, 0, _RET_EACCES),
        (_LD_W_ABS, 0, 0, 0),
        (_JGE_K, 0, 1, _X32_BIT),
        (_RET_K, 0, 0, _RET_EACCES),
        (_JEQ_K, 0, 1, nr_uring),
        (_RET_K, 0, 0, _RET_EACCES),
        (_JEQ_K, 0, 6, nr_socket),  # not socket(): to connect
        (_LD_W_ABS, 0, 0, 16),
        (_JEQ_K, 2, 0, _AF_UNIX),
        (_JEQ_K, 1, 0, _AF_INET),
        (_JEQ_K, 0, 1, _AF_INET6),
        (_RET_K, 0, 0, _RET_ALLOW),
        (_RET_K, 0, 0, _RET_EACCES),
        (_JEQ_K, 2, 0, nr_connect),  # connect: ask the server
        (_JEQ_K, 1, 0, nr_sendmsg),
        (_JEQ_K, 0, 1, nr_sendmmsg),
        (_RET_K, 0, 0, _RET_USER_NOTIF),
        (_JEQ_K, 0, 5, nr_sendto),
        (_LD_W_ABS, 0, 0, 48),  # sendto's address (args[4]): NULL is a connected send
        (_JEQ_K, 0, 2, 0),
        (_LD_W_ABS, 0, 0, 52),
        (_JEQ_K, 1, 0, 0),
        (_RET_K, 0, 0, _RET_USER_NOTIF),
        (_RET_K, 0, 0, _RET_ALLOW),
    ]


def _install(program: list[tuple[int, int, int, int]], nr_seccomp: int, flags: int) -> int:
    code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *op) for op in program))
    prog = _Program(len(program), ctypes.cast(code, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise StoreError(f"cannot guard the query workers: prctl failed (errno {errno})")
    found = int(libc.syscall(nr_seccomp, _SECCOMP_SET_MODE_FILTER, flags, ctypes.byref(prog)))
    if found < 0:
        raise StoreError(
            f"cannot guard the query workers: the kernel refused a seccomp filter (errno "
            f"{ctypes.get_errno()}); start kg serve with --allow-service '*' to run unguarded"
        )
    return found


def supervise_network() -> int:
    """From now on this process's connects wait for the server's verdict (`Supervisor`).

    Returns the notification listener's descriptor; the server takes a copy of it
    (pidfd_getfd) and the worker then closes its own.
    """
    machine = platform.machine()
    if machine not in _ARCHES:
        raise StoreError(
            f"cannot guard the query workers on {machine}: kg's network filter supports "
            f"{', '.join(_ARCHES)}; start kg serve with --allow-service '*' to run unguarded"
        )
    arch, nr_socket, nr_uring, nr_seccomp = _ARCHES[machine]
    program = _supervised_filter(arch, nr_socket, nr_uring, _SENDS[machine])
    flags = (
        _SECCOMP_FILTER_FLAG_TSYNC
        | _SECCOMP_FILTER_FLAG_TSYNC_ESRCH
        | _SECCOMP_FILTER_FLAG_NEW_LISTENER
    )
    return _install(program, nr_seccomp, flags)


def forbid_network() -> None:
    """From now on this process (all its threads) can open no socket but a Unix one.

    Raises StoreError where the kernel or the architecture offers no seccomp filter: a
    server that promised not to call other hosts must not start without the guarantee.
    """
    machine = platform.machine()
    if machine not in _ARCHES:
        raise StoreError(
            f"cannot guard the query workers on {machine}: kg's network filter supports "
            f"{', '.join(_ARCHES)}; start kg serve with --allow-service '*' to run unguarded"
        )
    arch, nr_socket, nr_uring, nr_seccomp = _ARCHES[machine]
    _install(_filter(arch, nr_socket, nr_uring), nr_seccomp, _SECCOMP_FILTER_FLAG_TSYNC)


def outbound_error(exc: OSError, guarded: bool) -> ForbiddenError | StoreError:
    """The error a client sees for an engine OSError: no other host's port, name or body.

    Oxigraph's messages for a failed SERVICE or LOAD repeat the remote answer's body and
    differ by port (refused, not allowed, no such host): a port scanner and a proxy. The
    client gets one fixed text; the details stay in the server's log.
    """
    if guarded and (exc.errno == 13 or "os error 13" in str(exc)):
        return ForbiddenError(REFUSED)
    return StoreError(
        "the query failed while reading the store or calling another endpoint "
        "(details are in the server's log)"
    )


# --- the server side: deciding each connect --------------------------------------------------


def take_listener(pid: int, fd: int) -> int:
    """A copy, in this process, of descriptor `fd` of process `pid` (its seccomp listener)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = int(libc.syscall(_PIDFD_OPEN, pid, 0))
    if pidfd < 0:
        raise StoreError(f"cannot supervise query worker {pid} (errno {ctypes.get_errno()})")
    try:
        copy = int(libc.syscall(_PIDFD_GETFD, pidfd, fd, 0))
    finally:
        os.close(pidfd)
    if copy < 0:
        raise StoreError(f"cannot supervise query worker {pid} (errno {ctypes.get_errno()})")
    return copy


def _name_servers() -> set[str]:
    found: set[str] = set()
    with (
        contextlib.suppress(OSError),
        open("/etc/resolv.conf", encoding="utf-8", errors="replace") as f,
    ):
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[0] == "nameserver":
                found.add(parts[1].split("%")[0])
    return found


def _normal(address: str) -> str:
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip)


class AllowList:
    """The addresses the allowed hosts resolve to, looked up again when an address is new."""

    _AGAIN_S = 1.0

    def __init__(self, hosts: Iterable[str]) -> None:
        self.hosts = sorted({h.strip("[]").lower() for h in hosts if h and h != "*"})
        self.named = any(not _is_ip(h) for h in self.hosts)
        self._addresses: set[str] = set()
        self._resolved = 0.0
        self._lock = threading.Lock()
        self._resolve()

    def _resolve(self) -> None:
        found: set[str] = set()
        for host in self.hosts:
            if _is_ip(host):
                found.add(_normal(host))
                continue
            with contextlib.suppress(OSError, UnicodeError):
                for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM):
                    found.add(_normal(str(info[4][0])))
        self._addresses = found
        self._resolved = time.monotonic()

    def allows(self, address: str, port: int) -> bool:
        try:
            ip = _normal(address)
        except ValueError:
            return False
        if self.named and port == 53 and ip in {_normal(n) for n in _name_servers()}:
            return True  # the worker looks the allowed names up itself
        with self._lock:
            if ip in self._addresses:
                return True
            if time.monotonic() - self._resolved > self._AGAIN_S:
                self._resolve()
            return ip in self._addresses


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class _Notif(ctypes.Structure):
    _fields_ = [
        ("id", ctypes.c_uint64),
        ("pid", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("nr", ctypes.c_int32),
        ("arch", ctypes.c_uint32),
        ("ip", ctypes.c_uint64),
        ("args", ctypes.c_uint64 * 6),
    ]


class _Resp(ctypes.Structure):
    _fields_ = [
        ("id", ctypes.c_uint64),
        ("val", ctypes.c_int64),
        ("error", ctypes.c_int32),
        ("flags", ctypes.c_uint32),
    ]


def parse_sockaddr(raw: bytes) -> tuple[int, str, int]:
    """(family, address, port) of a struct sockaddr; address '' for other families."""
    if len(raw) < 2:
        return (-1, "", 0)
    family = struct.unpack_from("H", raw)[0]
    port = struct.unpack(">H", raw[2:4])[0] if len(raw) >= 4 else 0
    if family == _AF_INET and len(raw) >= 8:
        return (family, socket.inet_ntop(socket.AF_INET, raw[4:8]), port)
    if family == _AF_INET6 and len(raw) >= 24:
        return (family, socket.inet_ntop(socket.AF_INET6, raw[8:24]), port)
    return (family, "", 0)


class Supervisor:
    """Answers one worker's connect notifications on a thread of the server process.

    Every decision and refusal is counted (`allowed`, `refused`), and a refusal is logged
    on stderr with the address, so an operator sees what a query tried.
    """

    def __init__(self, listener: int, pid: int, allow: AllowList) -> None:
        self.listener = listener
        self.pid = pid
        self.allow = allow
        self.allowed = 0
        self.refused = 0
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._stop = False
        self._thread = threading.Thread(target=self._run, name=f"kg-supervise-{pid}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop = True

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self.listener, select.POLLIN)
        try:
            while not self._stop:
                events = poller.poll(500)
                if any(mask & (select.POLLHUP | select.POLLERR) for _, mask in events):
                    return  # the worker is gone
                if events:
                    self._one()
        finally:
            with contextlib.suppress(OSError):
                os.close(self.listener)

    def _read(self, pid: int, address: int, size: int) -> bytes:
        if not address or size <= 0:
            return b""
        try:
            fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
        except OSError:
            return b""
        try:
            return os.pread(fd, min(size, 4096), address)
        except OSError:
            return b""
        finally:
            os.close(fd)

    def _targets(self, notif: _Notif) -> list[bytes] | None:
        """The addresses a call names (None: unreadable, refuse)."""
        nr, args, pid = notif.nr, notif.args, notif.pid
        connect, sendto, sendmsg, sendmmsg = _SENDS[platform.machine()]
        if nr == connect:
            raw = self._read(pid, args[1], int(args[2]) & 0xFFFFFFFF)
            return [raw] if raw else None
        if nr == sendto:
            raw = self._read(pid, args[4], int(args[5]) & 0xFFFFFFFF)
            return [raw] if raw else None
        if nr in (sendmsg, sendmmsg):
            count = 1 if nr == sendmsg else min(int(args[2]) & 0xFFFFFFFF, 1024)
            stride = 56 if nr == sendmsg else 64  # struct msghdr; struct mmsghdr
            table = self._read(pid, args[1], stride * count)
            if len(table) < stride * count:
                return None
            out = []
            for i in range(count):
                name, length = struct.unpack_from("QI", table, i * stride)
                if name:
                    raw = self._read(pid, name, length)
                    if not raw:
                        return None
                    out.append(raw)
            return out
        return None

    def _verdict(self, targets: list[bytes] | None) -> bool:
        if targets is None:
            return False
        for raw in targets:
            family, address, port = parse_sockaddr(raw)
            if family == 0:  # AF_UNSPEC: dissolves an association, reaches nobody
                continue
            if family not in (_AF_INET, _AF_INET6) or not self.allow.allows(address, port):
                where = f"{address}:{port}" if address else f"address family {family}"
                print(
                    f"kg serve worker {self.pid}: refused a connection to {where} "
                    "(not an --allow-service host)",
                    file=sys.stderr,
                )
                return False
        return True

    def _one(self) -> None:
        notif = _Notif()
        if self._libc.ioctl(self.listener, _NOTIF_RECV, ctypes.byref(notif)) != 0:
            return  # the caller was interrupted, or the worker died
        targets = self._targets(notif)
        ident = ctypes.c_uint64(notif.id)
        if self._libc.ioctl(self.listener, _NOTIF_ID_VALID, ctypes.byref(ident)) != 0:
            return  # the call went away while we read its memory
        allowed = self._verdict(targets)
        resp = _Resp(notif.id, 0, 0, _USER_NOTIF_FLAG_CONTINUE)
        if allowed:
            self.allowed += 1
        else:
            self.refused += 1
            resp = _Resp(notif.id, 0, -13, 0)  # EACCES, as the no-network filter answers
        self._libc.ioctl(self.listener, _NOTIF_SEND, ctypes.byref(resp))
