"""What sync reads of the disk: every memory file's id and digest, parsing only what changed.

The stat cache (``.memvault/sync-files.json``) maps a path to ``[mtime_ns, size, digest, id]``
from the last sync, so a file with the same mtime and size is not even read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import store
from ..errors import MemoryFileError, VaultError
from ..format.memory import content_digest
from ..store import Entry
from .plan import Located

STAT_CACHE = "sync-files.json"


@dataclass(frozen=True, slots=True)
class DiskFile:
    """One memory file as sync sees it; ``entry`` is set only when the file had to be parsed."""

    path: str
    digest: str
    memory_id: str
    entry: Entry | None


@dataclass(slots=True)
class DiskState:
    files: dict[str, DiskFile]  # memory id -> file
    problems: list[VaultError]
    parsed: int
    stat_cache: dict[str, list[Any]]


def _read_one(root: Path, rel: str, path: Path, known: Sequence[Any] | None,
              problems: list[VaultError]) -> tuple[DiskFile, list[Any], bool] | None:
    """One file's (DiskFile, stat-cache entry, parsed?), or None when it cannot be used."""
    try:
        info = path.stat()
    except OSError:
        return None
    if known and len(known) == 4 and known[0] == info.st_mtime_ns and known[1] == info.st_size:
        return DiskFile(rel, str(known[2]), str(known[3]), None), list(known), False
    try:
        data = store.read_bytes(root, rel)
        digest = content_digest(data)
        if known and len(known) == 4 and known[2] == digest:
            return DiskFile(rel, digest, str(known[3]), None), [info.st_mtime_ns, info.st_size, digest, known[3]], False
        entry = store.entry_from_bytes(rel, data)
    except MemoryFileError as exc:
        problems.append(exc)
        if not known or len(known) != 4:
            return None
        # A file that is invalid for a while (mid-edit) keeps what the indexes
        # hold; its cached stat stays old, so it is read again next time.
        return DiskFile(rel, str(known[2]), str(known[3]), None), list(known), False
    memory_id = entry.memory.id
    return DiskFile(rel, digest, memory_id, entry), [info.st_mtime_ns, info.st_size, digest, memory_id], True


def _choose(chosen: dict[str, DiskFile], candidate: DiskFile, dropped: dict[str, list[str]]) -> None:
    current = chosen.get(candidate.memory_id)
    if current is None:
        chosen[candidate.memory_id] = candidate
        return
    keep, _ = store.resolve_duplicate(candidate.memory_id, current.path, candidate.path)
    chosen[candidate.memory_id] = current if keep == current.path else candidate
    dropped.setdefault(candidate.memory_id, []).append(current.path if keep == candidate.path else candidate.path)


def read_disk(root: Path, stat_cache: Mapping[str, Sequence[Any]]) -> DiskState:
    """Every memory file's id and digest, parsing only files whose bytes changed.

    ``stat_cache`` maps a path to ``[mtime_ns, size, digest, id]`` from the last sync;
    a file with the same mtime and size is not even read.
    """
    problems: list[VaultError] = []
    files: list[tuple[str, Path]] = []
    for rel, path, problem in store.iter_markdown(root):
        if problem is not None or path is None:
            problems.append(MemoryFileError(problem or "unreadable", path=rel))
        else:
            files.append((rel, path))
    state = DiskState({}, problems, 0, {})
    _read_files(root, files, stat_cache, state)
    return state


def _read_files(root: Path, files: Iterable[tuple[str, Path]], stat_cache: Mapping[str, Sequence[Any]],
                state: DiskState) -> None:
    """Read ``files`` into ``state``: one file per id (duplicates reported), the stat cache, the parse count."""
    dropped: dict[str, list[str]] = {}
    for rel, path in files:
        found = _read_one(root, rel, path, stat_cache.get(rel), state.problems)
        if found is None:
            continue
        candidate, state.stat_cache[rel], was_parsed = found
        state.parsed += was_parsed
        _choose(state.files, candidate, dropped)
    for memory_id, paths in dropped.items():  # each naming the copy in use, once all are seen
        state.problems += [store.duplicate_problem(memory_id, state.files[memory_id].path, p) for p in paths]


def _through_symlink(root: Path, rel: str) -> bool:
    """Whether ``rel`` is a symlink or lies below one."""
    path = root
    for part in rel.split("/"):
        path = path / part
        if path.is_symlink():
            return True
    return False


def read_paths(root: Path, rels: Iterable[str], stat_cache: Mapping[str, Sequence[Any]],
               records: Mapping[str, tuple[str, str]]) -> tuple[DiskState, dict[str, Located]]:
    """Like :func:`read_disk` for just ``rels``; also what the index held for them.

    Returns the files found (by id) and the index records that they, or the
    files gone from ``rels``, concern: planning over the two gives the same
    changes a full walk would, without touching any other file.
    """
    wanted = sorted({rel for rel in rels if store.is_memory_path(rel)})
    changed = set(wanted)
    # The cache keeps every other file's entry; the changed ones are re-read (or gone).
    state = DiskState({}, [], 0, {rel: list(v) for rel, v in stat_cache.items() if rel not in changed})
    # A symlink, or a folder that is one, is never followed (as in a full walk): the file may live
    # outside the vault, and file watchers report changes below a symlinked folder as the vault's own.
    present = [(rel, root / rel) for rel in wanted if not _through_symlink(root, rel) and (root / rel).is_file()]
    _read_files(root, present, stat_cache, state)
    chosen, problems = state.files, state.problems
    for memory_id, file in list(chosen.items()):
        held = records.get(memory_id)
        if held and held[0] != file.path and held[0] not in changed and (root / held[0]).is_file():
            keep, duplicate = store.resolve_duplicate(memory_id, held[0], file.path)
            problems.append(duplicate)
            if keep == held[0]:
                del chosen[memory_id]
    by_path = {path: memory_id for memory_id, (path, _digest) in records.items() if path in changed}
    concerned = set(chosen) | set(by_path.values())
    indexed = {i: Located(*records[i]) for i in concerned if i in records}
    return state, indexed


def load_stat_cache(path: Path) -> dict[str, list[Any]]:
    """The stat cache; unreadable, or any entry not ``[mtime_ns, size, digest, id]``, is left out (re-read)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {rel: known for rel, known in data.items()
            if isinstance(known, list) and len(known) == 4 and all(type(v) is int for v in known[:2])
            and all(isinstance(v, str) for v in known[2:])}
