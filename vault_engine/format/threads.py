"""Threads: memories that are consecutive turns of one conversation.

A memory whose ``source`` is ``conversation:<session>#<position>`` is one turn
of the conversation ``<session>``; ``<position>`` orders the turns (compared
naturally: ``D1:9`` comes before ``D1:10``, ``D2:1`` after both).  A turn read
alone often means little ("Yes, last Friday!"); read with the turn before and
after it, it says what it is about.  So the indexes see each turn with its
neighbours: a ``context`` vector lane holds the turn between them (the mean of
the three turns' vectors), and a low-weight ``context`` full-text field holds
the neighbours' words.  The memory file itself never changes: context is
derived, like every index.

Only the immediate neighbours count, so a change to one turn re-indexes at
most the turns before and after it (sync takes care of that).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..patterns import lazy_pattern

_SOURCE = lazy_pattern(r"(?:conversation|session):(?P<thread>[^#\s]+)#(?P<position>\S+)")
_PIECES = lazy_pattern(r"(\d+)")


@dataclass(frozen=True, slots=True)
class Turn:
    """One memory's place in a thread, with the text its neighbours see of it."""

    id: str
    position: str
    text: str


def thread_of(source: str) -> tuple[str, str] | None:
    """(thread key, position) of a ``conversation:<session>#<position>`` source, else None."""
    match = _SOURCE.fullmatch(source.strip())
    if match is None:
        return None
    return match.group("thread"), match.group("position")


def position_key(position: str) -> tuple[tuple[int, int | str], ...]:
    """Natural sort key: digit runs compare as numbers."""
    return tuple((0, int(piece)) if piece.isdigit() else (1, piece) for piece in _PIECES.split(position) if piece)


def order(turns: Iterable[Turn]) -> list[Turn]:
    return sorted(turns, key=lambda t: (position_key(t.position), t.id))


def neighbours(turns: Iterable[Turn]) -> dict[str, tuple[Turn | None, Turn | None]]:
    """Each turn's (previous, next) turn in its thread."""
    ordered = order(turns)
    out: dict[str, tuple[Turn | None, Turn | None]] = {}
    for at, turn in enumerate(ordered):
        before = ordered[at - 1] if at > 0 else None
        after = ordered[at + 1] if at + 1 < len(ordered) else None
        out[turn.id] = (before, after)
    return out


def turn_text(title: str, summary: str) -> str:
    """What a neighbour contributes: its summary, or its title."""
    return (summary or title).strip()


def context_of(memory_id: str, around: Mapping[str, tuple[Turn | None, Turn | None]]) -> tuple[str, str]:
    """(text before, text after) a memory in its thread; empty strings outside any thread."""
    before, after = around.get(memory_id, (None, None))
    return (before.text if before else "", after.text if after else "")


def context_parts(own: str, before: str, after: str) -> list[str]:
    """The ``context`` lane's parts: the turn between its neighbours (none when it has none)."""
    if not before and not after:
        return []
    return [part for part in (before, own, after) if part]


def neighbours_by_id(members: Mapping[str, Iterable[Turn]]) -> dict[str, tuple[str | None, str | None]]:
    """Each turn's (previous id, next id), over every thread of ``members`` (thread key -> turns)."""
    out: dict[str, tuple[str | None, str | None]] = {}
    for turns in members.values():
        for memory_id, (before, after) in neighbours(turns).items():
            out[memory_id] = (before.id if before else None, after.id if after else None)
    return out
