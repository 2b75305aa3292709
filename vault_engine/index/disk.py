"""What sync reads of the disk: every memory file's id and digest, parsing only what changed.

The stat cache (``.memvault/sync-files.json``) maps a path to ``[mtime_ns, size, digest, id,
inode, ctime_ns]`` from the last sync, so a file whose stat is unchanged is not even read.  The inode
catches a file replaced by another (an editor's save by rename, ``rsync``) and the change time an edit
that kept or restored the modification time.  A stat recorded close to the file's last
change is *racy*: a second edit of the same size in the same clock tick would leave it as it was, so
it is recorded with change time 0 and the next reader compares the file's bytes instead.  Close is
within 0.1 s on a file system that stamps times finer than a second (:data:`FINE_RACY_NS`), 2 s on one
that stamps whole seconds (:data:`RACY_NS`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import copies, store
from ..errors import MemoryFileError, VaultError
from ..format.memory import content_digest
from ..store import Entry
from .plan import Located

STAT_CACHE = "sync-files.json"
RACY_NS = 2_000_000_000  # a file system that stamps whole seconds does so to 1-2 s (FAT, some network shares)
FINE_RACY_NS = 100_000_000  # one that stamps finer, to the kernel's clock tick (1-10 ms)


def stat_entry(info: os.stat_result, digest: str, memory_id: str) -> list[Any]:
    """The stat cache's entry for a file read with stat ``info`` (racy: change time 0, see the module)."""
    changed = max(info.st_mtime_ns, info.st_ctime_ns)
    # The change time is the file system's own stamp (no tool sets it): whole seconds show a coarse one.
    window = RACY_NS if info.st_ctime_ns % 1_000_000_000 == 0 else FINE_RACY_NS
    ctime = 0 if changed >= time.time_ns() - window else info.st_ctime_ns
    return [info.st_mtime_ns, info.st_size, digest, memory_id, info.st_ino, ctime]


def unchanged(known: Sequence[Any], info: os.stat_result) -> bool:
    """Whether ``info`` is the stat the cache recorded (an older entry of four fields never is)."""
    return (len(known) == 6 and known[0] == info.st_mtime_ns and known[1] == info.st_size
            and known[4] == info.st_ino and known[5] == info.st_ctime_ns)


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
              problems: list[VaultError]) -> tuple[DiskFile | None, list[Any], bool] | None:
    """One file's (DiskFile, stat-cache entry, parsed?); no DiskFile for a file refused (its stat is
    recorded all the same, with no id), None when it cannot even be stat'ed."""
    try:
        info = path.stat()
    except OSError:
        return None
    indexed = bool(known and known[3])  # a refused file's entry names no id: it is read again, and refused again
    if known and indexed and unchanged(known, info):
        return DiskFile(rel, str(known[2]), str(known[3]), None), list(known), False
    data = None
    try:
        data = store.read_bytes(root, rel)
        digest = content_digest(data)
        if known and indexed and known[2] == digest:
            return DiskFile(rel, digest, str(known[3]), None), stat_entry(info, digest, known[3]), False
        entry = store.entry_from_bytes(rel, data)
    except MemoryFileError as exc:
        problems.append(exc)
        if not known or not indexed:
            # Recorded, so that the check before a read (:mod:`.freshness`) passes it by until it changes.
            return None, stat_entry(info, content_digest(data) if data is not None else "", ""), False
        # A file that is invalid for a while (mid-edit) keeps what the indexes
        # hold; its cached stat stays old, so it is read again next time.
        return DiskFile(rel, str(known[2]), str(known[3]), None), list(known), False
    memory_id = entry.memory.id
    return DiskFile(rel, digest, memory_id, entry), stat_entry(info, digest, memory_id), True


def _choose(root: Path, memory_id: str, held: Sequence[DiskFile], known: copies.Known | None,
            problems: list[VaultError]) -> DiskFile:
    """The file of ``memory_id`` in use among ``held`` (see :mod:`vault_engine.copies`), ``known`` what
    memvault recorded of the id; files not parsed yet are parsed.  Each other copy is reported in
    ``problems``, naming the one in use."""
    parsed: dict[str, tuple[DiskFile, Entry]] = {}
    keep: DiskFile | None = None
    for file in held:
        try:
            entry = file.entry or store.read_entry(root, file.path)
        except MemoryFileError:  # reported where it was read
            if known is not None and file.path == known.path:  # invalid for a while (mid-edit): it keeps
                keep = file  # what the indexes hold
            continue
        if entry.memory.id == memory_id:
            parsed[file.path] = (file, entry)
    if keep is None and parsed:
        chosen = copies.keeper(memory_id, [entry for _, entry in parsed.values()], known)
        keep = dataclasses.replace(parsed[chosen.path][0], entry=chosen)
    keep = keep or held[0]
    kept = parsed.get(keep.path)
    for file in held:
        if file.path != keep.path:
            other = parsed.get(file.path)
            same = kept is not None and other is not None and copies.same_memory(other[1].memory, kept[1].memory)
            problems.append(copies.duplicate_problem(memory_id, keep.path, file.path, same))
    return keep


def read_disk(root: Path, stat_cache: Mapping[str, Sequence[Any]],
              records: Mapping[str, tuple[str, str]] | None = None) -> DiskState:
    """Every memory file's id and digest, parsing only files whose bytes changed.

    ``stat_cache`` maps a path to its stat, digest and id at the last sync (see the module);
    a file with the same stat is not even read.  ``records`` (the catalog's: id ->
    (path, digest)) say which file of an id the indexes hold: of several files with one id, that
    one keeps it (the whole rule: :mod:`vault_engine.copies`).
    """
    problems: list[VaultError] = []
    files: list[tuple[str, Path]] = []
    for rel, path, problem in store.iter_markdown(root):
        if problem is not None or path is None:
            problems.append(MemoryFileError(problem or "unreadable", path=rel))
        else:
            files.append((rel, path))
    state = DiskState({}, problems, 0, {})
    _read_files(root, files, stat_cache, state, records or {})
    return state


def _read_files(root: Path, files: Iterable[tuple[str, Path]], stat_cache: Mapping[str, Sequence[Any]],
                state: DiskState, records: Mapping[str, tuple[str, str]]) -> None:
    """Read ``files`` into ``state``: one file per id (duplicates reported), the stat cache, the parse count."""
    found: dict[str, list[DiskFile]] = {}
    for rel, path in files:
        read = _read_one(root, rel, path, stat_cache.get(rel), state.problems)
        if read is None:
            continue
        candidate, state.stat_cache[rel], was_parsed = read
        state.parsed += was_parsed
        if candidate is None:
            continue
        found.setdefault(candidate.memory_id, []).append(candidate)
    clashing = [memory_id for memory_id, held in found.items() if len(held) > 1]
    indexed = {i: records[i][0] for i in clashing if i in records}
    known = copies.known(root, clashing, indexed) if clashing else {}
    for memory_id, held in found.items():  # each other copy reported once all are seen, naming the one in use
        state.files[memory_id] = (_choose(root, memory_id, held, known.get(memory_id), state.problems)
                                  if len(held) > 1 else held[0])


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
    _read_files(root, present, stat_cache, state, records)
    chosen, problems = state.files, state.problems
    for memory_id, file in list(chosen.items()):
        held = records.get(memory_id)
        if held and held[0] != file.path and held[0] not in changed and (root / held[0]).is_file():
            keep = _choose(root, memory_id, [file, DiskFile(held[0], held[1], memory_id, None)],
                           copies.Known(path=held[0]), problems)
            if keep.path == held[0]:
                del chosen[memory_id]
    by_path = {path: memory_id for memory_id, (path, _digest) in records.items() if path in changed}
    concerned = set(chosen) | set(by_path.values())
    indexed = {i: Located(*records[i]) for i in concerned if i in records}
    return state, indexed


def load_stat_cache(path: Path) -> dict[str, list[Any]]:
    """The stat cache; unreadable, or any entry not ``[mtime_ns, size, digest, id, inode, ctime_ns]`` (or
    the four fields of older releases, whose files are read once more), is left out (re-read)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {rel: known for rel, known in data.items() if _entry_shape(known)}


def _entry_shape(known: Any) -> bool:
    """Whether ``known`` is a stat cache entry (read before every search: no generator per entry)."""
    if type(known) is not list or len(known) not in (4, 6):
        return False
    if type(known[0]) is not int or type(known[1]) is not int or type(known[2]) is not str or type(known[3]) is not str:
        return False
    return len(known) == 4 or (type(known[4]) is int and type(known[5]) is int)
