"""CPU-heavy work that would hold the interpreter lock runs in a few child processes.

A worker thread (iam_console/workers.py) keeps the event loop free while it waits on the network,
but not while it computes inside a C library that keeps Python's interpreter lock: an RS256
signature with a 4096-bit key holds it for about 6 ms, generating a 4096-bit key for about a second,
and every other thread of the server (the event loop's included) waits that long. Those calls
(`sign_jwt` here, saml/saml_xml.py's signatures, applications/certs.py's key generation) run
instead in IAM_CPU_PROCESSES child processes of the server:

- the children run at a lower scheduling priority (IAM_CPU_NICE): when the cores are short, the
  server's own threads, which answer everyone else's requests, are served first;
- one organization has at most IAM_CPU_PER_ORGANIZATION calls in the children at once (by default
  half of them, at least one): its further calls wait their turn on their own worker threads, so
  one tenant's burst of signatures never takes every child from the others;
- the calling thread waits without holding the interpreter lock.

With IAM_CPU_PROCESSES=0 the calls run in the calling thread. docs/security.md, "Availability".
"""

from __future__ import annotations

import functools
import os
import pickle
import queue
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any, ParamSpec, TypeVar

from iam_console import fair_share
from iam_console.core.errors import ServiceError
from iam_console.settings import PROJECT_ROOT, settings

T = TypeVar("T")
P = ParamSpec("P")
WAIT_SECONDS = 30.0  # the longest one call waits for its organization's turn, for a child, or for its answer
BIG_RSA_BITS = 2048  # an RSA key above this signs in a child (2048 bits: under 1 ms; 3072: 2 ms; 4096: 6 ms)
_FRAME = struct.Struct(">Q")  # a message's length, before the message (a pickle)

_lock = threading.Lock()
_idle: queue.Queue[_Child | None] | None = None  # None: a child not started yet (or one that failed)
_turns: dict[str, threading.BoundedSemaphore] = {}


def run(organization: str, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """fn(*args, **kwargs) in a child process, as one of `organization`'s calls; fn is a function
    of a module (the child imports it by name) whose arguments and result pickle."""
    if settings.cpu_processes <= 0:
        return fn(*args, **kwargs)
    turn, idle = _turn(organization), _children()
    if not turn.acquire(timeout=WAIT_SECONDS):
        raise ServiceError("The organization %s has too many signatures and keys in the making: try again "
                           "shortly", organization)
    try:
        try:
            child = idle.get(timeout=WAIT_SECONDS)
        except queue.Empty:
            raise ServiceError("The server has too many signatures and keys in the making: try again shortly") \
                from None
        try:
            child = child if child is not None and child.alive() else _Child.start()
            started = time.perf_counter()
            result = child.call(functools.partial(fn, *args, **kwargs))
            fair_share.charge(organization, time.perf_counter() - started)  # the child computed for it
        except BaseException:
            if child is not None:
                child.stop()
            idle.put(None)
            raise
        idle.put(child)
    finally:
        turn.release()
    return result


def _turn(organization: str) -> threading.BoundedSemaphore:
    with _lock:
        turn = _turns.get(organization)
        if turn is None:
            turn = _turns[organization] = threading.BoundedSemaphore(per_organization())
        return turn


def per_organization() -> int:
    return settings.cpu_per_organization or max(1, settings.cpu_processes // 2)


def _children() -> queue.Queue[_Child | None]:
    global _idle
    with _lock:
        if _idle is None:
            _idle = queue.Queue()
            for _ in range(settings.cpu_processes):
                _idle.put(None)  # started on first use
        return _idle


def shutdown() -> None:
    """The children stop (the server's shutdown, a test's end); later calls start new ones."""
    global _idle
    with _lock:
        idle, _idle = _idle, None
    while idle is not None and not idle.empty():
        child = idle.get_nowait()
        if child is not None:
            child.stop()


def _forget_the_parents() -> None:
    """In a forked process (a server worker): the parent's children are the parent's to use."""
    global _idle, _lock, _turns
    _idle, _lock, _turns = None, threading.Lock(), {}


os.register_at_fork(after_in_child=_forget_the_parents)


class _Child:
    """One child process (`python -m iam_console.cpu_work`): it reads calls from its standard input
    and writes their results to its standard output, one at a time, until its input closes."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process = process

    @classmethod
    def start(cls) -> _Child:
        return cls(subprocess.Popen([sys.executable, "-m", __name__, str(settings.cpu_nice)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=PROJECT_ROOT))

    def alive(self) -> bool:
        return self.process.poll() is None

    def call(self, call: Callable[[], T]) -> T:
        assert self.process.stdin is not None and self.process.stdout is not None
        _write(self.process.stdin, pickle.dumps(call))
        ready, _, _ = select.select([self.process.stdout], [], [], WAIT_SECONDS)
        if not ready:
            raise ServiceError("The signature or key took too long to make")
        ok, value = pickle.loads(_read(self.process.stdout))
        if not ok:
            raise value
        return value

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def _write(out: IO[bytes], message: bytes) -> None:
    out.write(_FRAME.pack(len(message)) + message)
    out.flush()


def _read(source: IO[bytes]) -> bytes:
    header = source.read(_FRAME.size)
    if len(header) < _FRAME.size:
        raise EOFError("the child process ended")
    return source.read(_FRAME.unpack(header)[0])


def _serve(nice: int) -> None:
    """The child's loop."""
    if nice > 0:
        os.nice(nice)
    source, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # what a library prints goes to the server's log, not into the answers
    while True:
        try:
            call = pickle.loads(_read(source))
        except EOFError:
            return
        try:
            answer = pickle.dumps((True, call()))
        except Exception as exc:
            try:
                answer = pickle.dumps((False, exc))
            except Exception:
                answer = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        _write(out, answer)


# --- what goes to the children ---

def big_rsa(bits: int) -> bool:
    """Whether signing with, or making, an RSA key of this size is worth a child process."""
    return bits > BIG_RSA_BITS


def signs_in_child(key) -> bool:
    """Whether a signature with this parsed private key goes to a child: RSA above 2048 bits."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    return isinstance(key, rsa.RSAPrivateKey) and big_rsa(key.key_size)


def signature(key_pem: str, organization: str, fn: Callable[..., T], *args) -> T:
    """fn(*args), a signature with the private key `key_pem`: in a child, as one of
    `organization`'s calls, when the key is worth it (`signs_in_child`), else in the calling
    thread. The JWT and SAML signers all go through here."""
    if signs_in_child(private_key(key_pem)):
        return run(organization, fn, *args)
    return fn(*args)


@functools.lru_cache(maxsize=64)
def private_key(pem: str):
    """A private key in PEM, parsed once per process and kept (parsing checks an RSA key, which
    costs more than signing with it): the server's signers and the children use it alike."""
    from cryptography.hazmat.primitives import serialization

    return serialization.load_pem_private_key(pem.encode(), password=None)


def sign_jwt(pem: str, claims: dict[str, Any], algorithm: str, headers: dict[str, Any]) -> str:
    """A JWT signed with the private key `pem` (parsed once per process and kept)."""
    import jwt

    return jwt.encode(claims, private_key(pem), algorithm=algorithm, headers=headers)


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, whose exit closes our input
    _serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
