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
"""

from __future__ import annotations

import ctypes
import platform
import struct

from kg.errors import ForbiddenError, StoreError

#: Per architecture: (AUDIT_ARCH value, socket, io_uring_setup, seccomp) system call numbers.
_ARCHES = {
    "x86_64": (0xC000003E, 41, 425, 317),
    "aarch64": (0xC00000B7, 198, 425, 277),
}
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
    program = _filter(arch, nr_socket, nr_uring)
    code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *op) for op in program))
    prog = _Program(len(program), ctypes.cast(code, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise StoreError(f"cannot guard the query workers: prctl failed (errno {errno})")
    flags = _SECCOMP_FILTER_FLAG_TSYNC
    if libc.syscall(nr_seccomp, _SECCOMP_SET_MODE_FILTER, flags, ctypes.byref(prog)) != 0:
        raise StoreError(
            f"cannot guard the query workers: the kernel refused a seccomp filter (errno "
            f"{ctypes.get_errno()}); start kg serve with --allow-service '*' to run unguarded"
        )


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
