"""Three-way merges of memvault's own files, as git's merge drivers call them.

Each function takes the common ancestor (``base``), this machine's version
(``ours``) and the other's (``theirs``), and returns the merged text.  Every rule
is symmetric: merging A into B and B into A gives the same bytes, so every
machine of a shared vault converges on one history and one set of files.

**Journal** (``journal/YYYY-MM.jsonl``, :func:`merge_journal`): the union of
both sides' events, each once (by event id), in time order (``ts``, then id).
An event one side removed since the ancestor (a permanent forget purges its
text from the journal) stays removed; an event one side rewrote since the
ancestor keeps the rewrite (both rewrote it: the shorter line, which is the
purged one).  Lines that are no event (a torn line) are kept once each, last.

**Memory files** (:func:`merge_memory`), field by field from the ancestor:

- lists (``tags``, ``links``, ``paths``, ``tasks``, ``operations``, ``phases``,
  ``evidence``): what either side added is in, what either side removed is out;
- counters (``proof_count``, ``applied``): the ancestor's count plus both
  sides' increments, so no observation is lost or counted twice;
- ``updated``, ``last_applied``: the later;
- ``lifecycle``: the one side's change; both changed it: superseded, then
  proven, then trial (a supersession on one machine holds);
- every other field: the one side's change; both changed it differently: the
  side updated later (equal times: the greater value, so the rule is symmetric);
- the body: git's own three-way text merge.  When both sides changed the same
  lines differently, the version updated later stays current and the other one
  is returned as a *conflict version* (:class:`MemoryMerge`), which the driver
  keeps as a memory of its own, linked both ways, for a person to settle.

**The same change on both sides.** Two machines that record the same outcome for
a memory in the same second write the same bytes; git then takes the file once
and never runs a driver.  After such a merge, the sync asks the journal
(:func:`counted_on_both_sides`): when each side recorded feedback of its own (no
event in common), both increments count (:func:`merge_memory` of the ancestor
and the one version twice).

Two different memories that both sides added at one path (files made before
names carried the id's end) are both kept: the smaller id keeps the path, the
other gets a file of its own.

A side that is not a memvault memory (a plain note, a file that does not parse)
is merged as text by git, conflict markers and all, as without memvault.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import VaultError
from ..format.ids import derived_memory_id
from ..format.memory import ParsedFile, parse, render
from ..format.value import CONFLICT_OF, Memory

SET_FIELDS = ("tags", "links", "paths", "tasks", "operations", "phases", "evidence")
COUNTER_FIELDS = ("proof_count", "applied")
LATEST_FIELDS = ("updated", "last_applied")
LIFECYCLE_ORDER = {"superseded": 2, "proven": 1, "trial": 0}
SCALAR_FIELDS = ("title", "type", "klass", "scope", "project", "authority", "trust", "recall", "tier", "importance",
                 "summary", "trigger", "supersedes", "superseded_by", "source", "sender", "occurred_at", "created",
                 "trashed_at", "expires_at", "trashed_from")


# ---------------------------------------------------------------- the journal


def merge_journal(base: str, ours: str, theirs: str) -> str:
    """The merged journal file (see the module docstring)."""
    sides = [_events(text) for text in (base, ours, theirs)]
    (old, old_other), (mine, mine_other), (yours, yours_other) = sides
    merged: dict[str, tuple[tuple[str, str], str]] = {}
    for event_id in {*mine, *yours}:
        in_base = event_id in old
        if in_base and (event_id not in mine or event_id not in yours):
            continue  # removed on one side since the ancestor
        candidates = {side[event_id] for side in (mine, yours) if event_id in side}
        if in_base:
            changed = {c for c in candidates if c[1] != old[event_id][1]}
            candidates = changed or candidates
        merged[event_id] = min(candidates, key=lambda c: (len(c[1]), c[1]))
    lines = [line for _key, line in sorted(merged.values())]
    others = sorted(line for line in {*mine_other, *yours_other} if line not in old_other
                    or (line in mine_other and line in yours_other))
    return "".join(line + "\n" for line in [*lines, *others])


def _events(text: str) -> tuple[dict[str, tuple[tuple[str, str], str]], list[str]]:
    """id -> ((ts, id), line) for every event line of ``text``; and the lines that are no event."""
    events: dict[str, tuple[tuple[str, str], str]] = {}
    other: list[str] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            record = None
        if isinstance(record, dict) and isinstance(record.get("id"), str) and isinstance(record.get("ts"), str):
            events[record["id"]] = ((record["ts"], record["id"]), line)
        else:
            other.append(line)
    return events, other


def feedback_events(base: str, side: str) -> dict[str, set[str]]:
    """memory id -> the ids of the feedback events journal text ``side`` holds and ``base`` (its version
    at the merge's common ancestor) does not."""
    old, _ = _events(base)
    out: dict[str, set[str]] = {}
    for event_id, (_key, line) in _events(side)[0].items():
        if event_id in old:
            continue
        record = json.loads(line)
        if record.get("kind") == "feedback" and isinstance(record.get("memory"), str):
            out.setdefault(record["memory"], set()).add(event_id)
    return out


def counted_on_both_sides(memory_id: str, ours: Iterable[dict[str, set[str]]],
                          theirs: Iterable[dict[str, set[str]]]) -> bool:
    """Whether each side recorded feedback on ``memory_id`` since the ancestor, none of it the same event
    (``ours``, ``theirs``: :func:`feedback_events` of each side's changed journal files)."""
    mine = {e for found in ours for e in found.get(memory_id, ())}
    yours = {e for found in theirs for e in found.get(memory_id, ())}
    return bool(mine) and bool(yours) and not mine & yours


# ---------------------------------------------------------------- memory files


@dataclass(frozen=True, slots=True)
class MemoryMerge:
    """A merged memory file: its text, and a memory to keep in a file of its own beside it: the
    conflict version of a body conflict, or the other of two memories both sides added at one path."""

    text: str
    conflict: Memory | None = None
    clean: bool = True  # False: merged as plain text and conflict markers remain


CONFLICT_KEY = CONFLICT_OF  # a conflict version's frontmatter key: the id of the memory it lost to


def merge_memory(base: str, ours: str, theirs: str, path: str = "<memory>") -> MemoryMerge:
    """The merged memory file (see the module docstring)."""
    parsed = [_parse(text, path) for text in (base, ours, theirs)]
    old, mine, yours = parsed
    if mine is None or yours is None or (old is None and base.strip()):
        text, clean = merge_text(base, ours, theirs)
        return MemoryMerge(text, clean=clean)
    if old is None:  # both sides added the file: no ancestor, compare with nothing
        old = ParsedFile(Memory(id=mine.memory.id, title="", type=mine.memory.type), "")
    a, b, o = mine.memory, yours.memory, old.memory
    if a.id != b.id:  # two memories at one path (both sides added it): the smaller id keeps the path
        if base.strip():
            text, clean = merge_text(base, ours, theirs)
            return MemoryMerge(text, clean=clean)
        stays, moves = (mine, b) if a.id < b.id else (yours, a)
        return MemoryMerge(stays.text, moves)
    later = _later(a, b)
    fields: dict[str, Any] = {}
    for name in SET_FIELDS:
        fields[name] = _merge_set(getattr(o, name), getattr(a, name), getattr(b, name))
    fields["proof_count"] = max(0, o.proof_count + (a.proof_count - o.proof_count) + (b.proof_count - o.proof_count))
    fields["applied"] = {k: max(0, o.applied.get(k, 0) + (a.applied.get(k, 0) - o.applied.get(k, 0))
                                + (b.applied.get(k, 0) - o.applied.get(k, 0)))
                         for k in dict.fromkeys([*o.applied, *a.applied, *b.applied])}
    for name in LATEST_FIELDS:
        values = [v for v in (getattr(a, name), getattr(b, name)) if v is not None]
        fields[name] = max(values) if values else None
    fields["lifecycle"] = _merge_scalar(o.lifecycle, a.lifecycle, b.lifecycle,
                                        lambda x, y: max(x, y, key=lambda v: LIFECYCLE_ORDER.get(v, -1)))
    for name in SCALAR_FIELDS:
        fields[name] = _merge_scalar(getattr(o, name), getattr(a, name), getattr(b, name),
                                     lambda x, y, name=name: getattr(later, name) if later is not None
                                     else max(x, y, key=_sortable))
    fields["extra"] = _merge_extra(o.extra, a.extra, b.extra, later)
    body, clean = merge_text(o.body, a.body, b.body)
    conflict = None
    if not clean:  # the version updated later stays current; the other is kept as a conflict version
        winner = later or max(a, b, key=lambda m: m.body)
        loser = b if winner is a else a
        body = winner.body
        # Named by what it holds: every machine that makes this merge makes the same conflict version.
        conflict = conflict_version(loser, derived_memory_id(loser.id, "conflict", loser.body))
        fields["links"] = (*fields["links"], conflict.id)
    merged = a.replace(body=body, **fields)
    original = mine if merged == a else (yours if merged == b else None)
    return MemoryMerge(render(merged, original), conflict)


def conflict_version(loser: Memory, new: str) -> Memory:
    """The version of ``loser.id`` that lost a body conflict, as a memory of its own linked to the winner."""
    return loser.replace(id=new, title=f"{loser.title} (conflicting version)", links=(loser.id,),
                         lifecycle="trial", tier="cold", supersedes=None, superseded_by=None,
                         extra={**loser.extra, CONFLICT_KEY: loser.id})


def _parse(text: str, path: str) -> ParsedFile | None:
    if not text.strip():
        return None
    try:
        parsed = parse(text, path)
    except VaultError:
        return None
    return None if parsed.memory.plain else parsed


def _later(a: Memory, b: Memory) -> Memory | None:
    """The side updated later; None when both were updated at the same moment."""
    if a.updated is not None and b.updated is not None and a.updated != b.updated:
        return a if a.updated > b.updated else b
    if (a.updated is None) != (b.updated is None):
        return a if a.updated is not None else b
    return None


def _sortable(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    return json.dumps(value, sort_keys=True, default=str)


def _merge_scalar(base: Any, ours: Any, theirs: Any, both: Any) -> Any:
    if ours == theirs:
        return ours
    if ours == base:
        return theirs
    if theirs == base:
        return ours
    return both(ours, theirs)


def _merge_set(base: Sequence[Any], ours: Sequence[Any], theirs: Sequence[Any]) -> tuple[Any, ...]:
    """What either side added, less what either removed; the ancestor's order, then the additions sorted."""
    key = _sortable
    old = {key(v): v for v in base}
    mine = {key(v): v for v in ours}
    yours = {key(v): v for v in theirs}
    kept = [v for k, v in old.items() if k in mine and k in yours]
    added = {k: v for side in (mine, yours) for k, v in side.items() if k not in old}
    return (*kept, *(added[k] for k in sorted(added)))


def _merge_extra(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any],
                 later: Memory | None) -> dict[str, Any]:
    """The keys of a person's own, merged as scalar fields (a key one side removed is removed)."""
    missing = object()
    out: dict[str, Any] = {}
    for name in dict.fromkeys([*ours, *theirs, *base]):
        value = _merge_scalar(base.get(name, missing), ours.get(name, missing), theirs.get(name, missing),
                              lambda x, y, name=name: (later.extra.get(name, missing) if later is not None
                                                       else max(x, y, key=_sortable)))
        if value is not missing:
            out[name] = value
    return out


# ---------------------------------------------------------------- text


def merge_text(base: str, ours: str, theirs: str) -> tuple[str, bool]:
    """git's three-way text merge (``git merge-file``): the merged text, and whether it is clean."""
    if ours == theirs:
        return ours, True
    if ours == base:
        return theirs, True
    if theirs == base:
        return ours, True
    with tempfile.TemporaryDirectory(prefix="memvault-merge-") as folder:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(folder) / name
            path.write_bytes(text.encode("utf-8"))
            paths.append(str(path))
        done = subprocess.run(["git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", *paths],
                              capture_output=True, timeout=60)
    if done.returncode < 0 or done.returncode > 127:
        raise VaultError(f"git merge-file failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode("utf-8", errors="surrogateescape"), done.returncode == 0
