"""What the caches could not do, said once per process.

A cache never fails the work it speeds up (the embedding cache, the model's int8 graph): when
one cannot be written, or is found damaged and is made again, the work goes on, and the user is
told in one line.  Those events happen deep below the command or request that caused them, in a
sync, a fill, the first load of the model; so they are noted here and taken by whoever speaks to
the user: the command line prints what is left on stderr after a command, a server puts it in
the ``notice`` field of the answer that took it.  Each notice is given once per process: a
server that searches a thousand times over an unwritable cache says so once.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_given: set[str] = set()  # every kind noted in this process: a kind is noted once
_waiting: list[str] = []  # noted, not yet taken


def note(kind: str, line: str) -> None:
    """Note ``line`` (one line, starting ``notice:`` or ``warning:``) unless a notice of ``kind``
    was noted before in this process."""
    with _lock:
        if kind in _given:
            return
        _given.add(kind)
        _waiting.append(" ".join(line.split()))


def take() -> list[str]:
    """The notices noted and not taken yet (each is taken once)."""
    with _lock:
        lines = list(_waiting)
        _waiting.clear()
        return lines


def forget_all() -> None:
    """Start afresh, as a new process would (for tests that run many commands in one process)."""
    with _lock:
        _given.clear()
        _waiting.clear()
