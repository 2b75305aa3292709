"""The vault's locks: the writer lock, the search indexes' lock, and single-holder locks.

Each is an ``flock`` on a file under ``.memvault/``: the kernel releases it however its
holder ends, so a lock is never left behind by a killed process.  The holder writes its
pid into the file; the indexes' lock also what it has done so far (:meth:`WriterLock.beat`),
so that whoever waits for it can tell a holder at work from one that hangs.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .errors import VaultBusy


def lock_held_open(path: Path) -> int:
    """``path`` locked (``flock``, never waiting) for as long as the descriptor returned stays open: the
    kernel releases it however its holder ends.

    Raises:
        BlockingIOError: another process holds it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise BlockingIOError(f"{path} is locked by another process") from None
    return fd


class WriterLock:
    """A vault-wide lock (``flock`` on a file under ``.memvault/``, such as the writer lock ``lock``).

    Re-entrant within one thread; another thread or process waits for it, then gets
    :class:`VaultBusy`.  Readers never take it.  A plain lock is waited for ``timeout`` seconds.
    A ``patient`` lock (the search indexes') is waited for as long as its holder makes progress:
    the holder says so with :meth:`beat`, and only ``timeout`` seconds without a beat give up.
    Its waiters also say that they wait (:meth:`wanting`), so that a holder that can stop part-way
    (a background fill of vectors, :meth:`wanted`) lets go at its next step instead of making
    them wait for all of its work.
    """

    def __init__(self, path: Path, timeout: float, what: str = "writing", *, patient: bool = False):
        self.path = path
        self.timeout = timeout
        self.what = what
        self.patient = patient
        self._fd: int | None = None
        self._depth = 0
        self._beats = 0
        self._thread_lock = threading.RLock()  # flock alone does not exclude threads sharing this object

    @property
    def _want_path(self) -> Path:
        return self.path.with_name(f"{self.path.stem}.wanted")

    def held(self) -> bool:
        """Whether a writer (another process, or this one) holds the lock right now; never waits."""
        return _flocked(self.path, fcntl.LOCK_SH)

    def wanted(self) -> bool:
        """Whether another holder waits for this patient lock right now (see :meth:`wanting`); never waits."""
        return self.patient and _flocked(self._want_path, fcntl.LOCK_EX)

    @contextlib.contextmanager
    def wanting(self) -> Iterator[None]:
        """Say that this process wants the lock while the block runs (a shared ``flock`` on the lock's
        ``.wanted`` file, released however the process ends).  A sync says so for all of its steps, so
        a background fill it made let go does not take the lock back between them."""
        if not self.patient:
            yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._want_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)  # a check (wanted) holds it exclusively for an instant only
            yield
        finally:
            os.close(fd)

    def beat(self, note: str) -> None:
        """Tell the waiters that the holder is making progress (``note``: how far, e.g. ``vectors 120/510``):
        written into the lock file, where a waiter reads it.  Nothing when this process does not hold it."""
        fd = self._fd
        if fd is None:
            return
        self._beats += 1
        data = f"{os.getpid()}\n{self._beats} {note}\n".encode()
        with contextlib.suppress(OSError):
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))

    @contextlib.contextmanager
    def hold(self, timeout: float | None = None, *, patient: bool | None = None, announce: bool = True,
             on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """Hold the lock, waiting for it up to ``timeout`` seconds (default: the lock's own); on a patient
        lock (unless ``patient`` is False) up to ``timeout`` seconds *without progress* of its holder, each
        beat of which is handed to ``on_wait``.  While it waits it says it wants the lock (``announce``:
        a background fill taking the lock back says nothing, lest two fills make way for each other)."""
        waiter = _Waiter(self, self.timeout if timeout is None else timeout,
                         self.patient if patient is None else patient, on_wait)
        with contextlib.ExitStack() as want:
            def waits() -> None:
                if waiter.patient and announce and not waiter.announced:
                    waiter.announced = True
                    want.enter_context(self.wanting())

            if not self._thread_lock.acquire(blocking=False):
                waits()
                while not self._thread_lock.acquire(timeout=waiter.pause()):
                    waiter.check()
            try:
                fd = self._lock_file(waiter, waits) if not self._depth else None
            except BaseException:
                self._thread_lock.release()
                raise
        try:
            if fd is None:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._fd, self._depth, beats = fd, 1, self._beats
            try:
                yield
            finally:
                self._depth = 0
                self._fd = None
                if self._beats != beats:  # what it said is over: the file names the last holder only
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, len(f"{os.getpid()}\n"))
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
        finally:
            self._thread_lock.release()

    @contextlib.contextmanager
    def try_hold(self) -> Iterator[bool]:
        """Hold the lock if it is free right now (or this thread holds it): True; else False, at once."""
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(self.hold(timeout=0, patient=False))
                held = True
            except VaultBusy:
                held = False
            yield held

    def _lock_file(self, waiter: _Waiter, waits: Callable[[], None]) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waits()
                try:
                    waiter.check()
                except BaseException:
                    os.close(fd)
                    raise
                time.sleep(waiter.pause())
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd

    def busy(self, waited: float, patient: bool) -> VaultBusy:
        """The error of a waiter that gave up after ``waited`` seconds (of no progress, when ``patient``)."""
        if not patient:
            return VaultBusy(f"vault is busy: another memvault process is {self.what} "
                             f"(waited {waited:g}s for {self.path}); try again")
        pid, _note = lock_note(self.path)
        who = f" (pid {pid})" if pid else ""
        return VaultBusy(f"vault is busy: another memvault process{who} is {self.what} and has made no progress "
                         f"for {waited:g}s ({self.path}); try again, or stop that process if it hangs")


def _flocked(path: Path, kind: int) -> bool:
    """Whether another open file holds a lock on ``path`` that excludes a ``kind`` lock; never waits."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also releases the lock just taken
    return False


def lock_note(path: Path) -> tuple[int | None, str]:
    """The pid of a lock file's holder (None: unknown) and what its last beat said ("" : none)."""
    try:
        text = path.read_bytes()[:4096].decode("utf-8", "replace")
    except OSError:
        return None, ""
    first, _, rest = text.partition("\n")
    beat = rest.split("\n", 1)[0].split(" ", 1)
    return (int(first) if first.strip().isdigit() else None), (beat[1] if len(beat) == 2 else "")


class _Waiter:
    """One wait for a lock: when to give up, and (patient) the holder's beats seen so far."""

    def __init__(self, lock: WriterLock, timeout: float, patient: bool, on_wait: Callable[[str], None] | None):
        self.lock = lock
        self.timeout = max(timeout, 0.0)
        self.patient = patient and self.timeout > 0
        self.on_wait = on_wait
        self.announced = False
        self.deadline = time.monotonic() + self.timeout
        self.seen: bytes | None = None
        self.delay = 0.005

    def pause(self) -> float:
        """How long to sleep before looking again (growing to 0.1 s, never past the deadline)."""
        self.delay = min(self.delay * 2, 0.1)
        return max(0.0, min(self.delay, self.deadline - time.monotonic()))

    def check(self) -> None:
        """Give up when the time is out; a patient wait's time starts again at each beat of the holder."""
        now = time.monotonic()
        if self.patient:
            try:
                content = self.lock.path.read_bytes()[:4096]
            except OSError:
                content = b""
            if content != self.seen:
                if self.seen is not None:
                    self.deadline = now + self.timeout
                self.seen = content
                note = lock_note(self.lock.path)[1]
                if note and self.on_wait is not None:
                    self.on_wait(note)
        if now >= self.deadline:
            raise self.lock.busy(self.timeout, self.patient)
