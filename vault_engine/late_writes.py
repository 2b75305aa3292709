"""Writes that land on a file after memvault replaced it.

A person's editor (or a shell's ``>>``) may open a memory file, be put aside by the scheduler,
and write to it only after memvault renamed its new version over that file: the text then goes
to the replaced file, which no folder lists any more, and would be lost.
:func:`~vault_engine.fsio.replace_unchanged` checks the replaced file right after the rename;
this module keeps watching it for a short while (``WATCH_SECONDS``), and once more when the
process exits, so that what lands later is not lost either:

- text appended to the replaced file (it still starts with what memvault had read) is appended
  to the file that replaced it;
- any other change is kept beside the file, as ``.<name>.edit-<time>`` (a hidden file no scan
  reads), with a warning in the log: memvault does not guess how to merge it.

Each watched file keeps a descriptor open while it is watched; at most ``MAX_WATCHED`` are kept
(a bulk rewrite checks and closes the oldest first).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

WATCH_SECONDS = 2.0
POLL_SECONDS = 0.02
MAX_WATCHED = 64

log = logging.getLogger(__name__)


@dataclass
class _Watched:
    fd: int
    target: Path
    expected: bytes
    until: float


Merge = Callable[[Path, bytes, bytes], None]  # (target, what was read, what the replaced file holds now)


class LateWrites:
    """The replaced files watched by this process, checked by one background thread."""

    def __init__(self, merge: Merge, clock: Callable[[], float] = time.monotonic):
        self.merge = merge
        self.clock = clock
        self._watched: list[_Watched] = []
        self._lock = threading.Lock()
        self._merging = threading.RLock()  # one look at a time: a text is never merged twice
        self._thread: threading.Thread | None = None

    def watch(self, fd: int, target: Path, expected: bytes, *, start: bool = True) -> None:
        """Watch the replaced file open as ``fd`` (this call takes a duplicate of it)."""
        entry = _Watched(os.dup(fd), target, expected, self.clock() + WATCH_SECONDS)
        with self._lock:
            self._watched.append(entry)
            oldest = self._watched[:-MAX_WATCHED]
            del self._watched[:-MAX_WATCHED]
            if start and (self._thread is None or not self._thread.is_alive()):
                self._thread = threading.Thread(target=self._run, name="memvault-late-writes", daemon=True)
                self._thread.start()
        for entry in oldest:
            self._finish(entry)

    def check(self, *, final: bool = False) -> None:
        """Look at every watched file once; those past their time (all of them when ``final``) are closed."""
        with self._lock:
            entries = list(self._watched)
        now = self.clock()
        for entry in entries:
            if final or now >= entry.until:
                with self._lock:
                    if entry not in self._watched:
                        continue
                    self._watched.remove(entry)
                self._finish(entry)
            else:
                self._look(entry)

    def pending(self) -> int:
        with self._lock:
            return len(self._watched)

    def _run(self) -> None:
        while self.pending():
            time.sleep(POLL_SECONDS)
            self.check()

    def _look(self, entry: _Watched) -> None:
        with self._merging:
            self._look_once(entry)

    def _look_once(self, entry: _Watched) -> None:
        try:
            size = os.fstat(entry.fd).st_size
            if size == len(entry.expected):
                late = _read(entry.fd, size)
                if late == entry.expected:
                    return
            else:
                late = _read(entry.fd, size)
        except OSError:
            return
        try:
            self.merge(entry.target, entry.expected, late)
        except Exception as exc:  # never raised into whoever happens to write next
            log.warning("%s: text written to it after memvault replaced it could not be kept: %s", entry.target, exc)
        entry.expected = late  # merged: only what lands after this is new

    def _finish(self, entry: _Watched) -> None:
        self._look(entry)
        with contextlib.suppress(OSError):
            os.close(entry.fd)


def _read(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, max(size - offset, 65536), offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def kept_aside(target: Path) -> Path:
    """Where a late change that is no append is kept: hidden beside the file."""
    return target.with_name(f".{target.name}.edit-{time.time_ns()}")


_default: LateWrites | None = None
_default_lock = threading.Lock()


def default(merge: Merge) -> LateWrites:
    """This process's watcher (one per process; checked a last time when the process exits)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = LateWrites(merge)
            atexit.register(_default.check, final=True)
        return _default
