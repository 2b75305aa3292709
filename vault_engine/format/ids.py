"""Identifiers: lowercase ULIDs with a kind prefix (``m-`` memories, ``e-`` events).

A ULID is 48 bits of milliseconds and 80 random bits in Crockford base32, so
ids sort by creation time and never collide in practice.  Within one process
ids are strictly increasing even inside the same millisecond.  A derived event
id (:func:`derived_event_id`) has the same shape but comes from a hash, so an
event reported twice gets the same id and the journal keeps it once.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time

from ..patterns import lazy_pattern

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_lock = threading.Lock()
_last: tuple[int, int] = (0, 0)

MEMORY_PREFIX = "m-"
EVENT_PREFIX = "e-"

# Ids written by people may be any lowercase word-ish token; they never become paths.
ID_PATTERN = lazy_pattern(r"^[a-z0-9][a-z0-9._-]{0,127}$")


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def ulid() -> str:
    """A new lowercase ULID (26 characters), monotonic within this process."""
    global _last
    with _lock:
        ms = time.time_ns() // 1_000_000
        last_ms, last_rand = _last
        if ms <= last_ms:
            ms, rand = last_ms, last_rand + 1
            if rand >> 80:  # the random part ran out within one millisecond: borrow the next one
                ms, rand = ms + 1, 0
        else:
            rand = int.from_bytes(os.urandom(10), "big")
        _last = (ms, rand)
    return _encode(ms, 10) + _encode(rand, 16)


def new_memory_id() -> str:
    """A fresh memory id (``m-`` + ULID)."""
    return MEMORY_PREFIX + ulid()


def new_event_id() -> str:
    """A fresh journal event id (``e-`` + ULID)."""
    return EVENT_PREFIX + ulid()


def derived_event_id(*parts: str) -> str:
    """A stable event id for ``parts`` (``e-`` + 26 base32 characters of their sha256).

    The same parts always give the same id: the journal's dedup by event id
    then records a repeated report once.
    """
    digest = hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).digest()
    return EVENT_PREFIX + _encode(int.from_bytes(digest[:16], "big"), 26)


def derived_memory_id(*parts: str) -> str:
    """A stable memory id for ``parts`` (``m-`` + 26 base32 characters of their sha256): two machines
    that derive a memory from the same parts (a merge's conflict version) name it alike."""
    digest = hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).digest()
    return MEMORY_PREFIX + _encode(int.from_bytes(digest[:16], "big"), 26)


def is_valid_id(value: str) -> bool:
    """Whether ``value`` is usable as a memory id (safe, lowercase, no path parts)."""
    # fullmatch: with match() the "$" would also accept a trailing newline
    return bool(ID_PATTERN.fullmatch(value)) and ".." not in value
