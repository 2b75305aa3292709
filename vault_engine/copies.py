"""Files holding one id: which copy keeps the id, and how each other copy is reported.

An id belongs to one memory.  When several files hold it (a file copied by
hand, one written by another program, a move a crash cut short), exactly one
copy is in use everywhere (``show``, search, context, governance) and each
other copy is reported once, naming the copy in use.  The copy in use is:

1. the copy the indexes hold (the catalog's path for the id): a memory already
   indexed keeps its id, whatever file appears later;
2. except when that copy is in the trash and a copy outside it holds the same
   memory (title and text): a restore a crash cut short, which the copy
   outside the trash finishes;
3. when the indexes hold none of them (no index yet, a fresh clone of a shared
   vault): the copy outside the trash; then the copy holding the title or the
   text the journal last recorded for the id (its ``add``, ``import``,
   ``correct`` or ``repair`` event; the journal records no paths); then the
   oldest by its ``created`` stamp (a copy without one last); then the copy
   whose file name ends with its id's end, as memvault names the files it
   writes (``deploy-notes-5gbmp3.md``); then the first by path.

Every criterion is read from the files, the indexes and the journal, never
from the order files were made or scanned in, so every reader chooses the same
copy.  Two copies holding the same memory are told apart by date, name and
path alone, which is harmless: they say the same, and ``maintain`` removes one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from .errors import JournalError, MemoryFileError
from .format.memory import Memory, memory_text, normalize_text, text_digest
from .journal import Journal

TRASH_PREFIX = "trash/"
ID_SUFFIX = 6  # characters of the id's random end a new file name carries (store.choose_path)
JOURNAL_DIR = "journal"  # store.JOURNAL_DIR
# The events that record a memory's title and text: (kind, the payload key naming the memory, when not ``memory``).
RECORDING = {"add": None, "import": None, "correct": "new", "reid": None}


@dataclass(frozen=True, slots=True)
class Known:
    """What memvault recorded of an id: the path the indexes hold it at, else the title and the digest
    of the text its journal last recorded."""

    path: str | None = None
    title: str | None = None
    digest: str | None = None



class Copy(Protocol):
    """One file holding an id: its path and the memory it holds."""

    @property
    def path(self) -> str: ...

    @property
    def memory(self) -> Memory: ...


C = TypeVar("C", bound=Copy)


def named_for(memory_id: str, path: str) -> bool:
    """Whether the file name at ``path`` ends with ``memory_id``'s end, as memvault names the files it writes."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    return stem.endswith((f"-{memory_id[-ID_SUFFIX:]}", f"-{memory_id.replace('.', '-')}"))


def same_memory(a: Memory, b: Memory) -> bool:
    """Whether two copies hold one memory (title and text; what a move leaves in two places)."""
    return a.title == b.title and normalize_text(memory_text(a)) == normalize_text(memory_text(b))


def _recorded(memory: Memory, known: Known | None) -> bool:
    """Whether ``memory`` holds the title or the text the journal last recorded for its id."""
    if known is None or (known.title is None and known.digest is None):
        return False
    return memory.title == known.title or text_digest(memory_text(memory)) == known.digest


def _rank(memory_id: str, copy: Copy, known: Known | None) -> tuple[bool, bool, bool, float, bool, str]:
    """Where a copy comes when the indexes hold none (see the module, 3.)."""
    created = copy.memory.created
    return (copy.path.startswith(TRASH_PREFIX), not _recorded(copy.memory, known), created is None,
            created.timestamp() if created else 0.0, not named_for(memory_id, copy.path), copy.path)


def keeper(memory_id: str, copies: Sequence[C], known: Known | None = None) -> C:
    """The copy of ``memory_id`` in use among ``copies`` (see the module), ``known`` what memvault
    recorded of the id (None: nothing)."""
    ordered = sorted(copies, key=lambda c: _rank(memory_id, c, known))
    held = next((c for c in copies if known is not None and c.path == known.path), None)
    if held is None:
        return ordered[0]
    if held.path.startswith(TRASH_PREFIX):
        restored = next((c for c in ordered if not c.path.startswith(TRASH_PREFIX)
                         and same_memory(c.memory, held.memory)), None)
        if restored is not None:
            return restored
    return held


def known(root: Path, memory_ids: Sequence[str], indexed: Mapping[str, str]) -> dict[str, Known]:
    """What memvault recorded of each of ``memory_ids``: the path ``indexed`` (id -> path) holds it at,
    else what the journal of the vault at ``root`` last recorded of its title and text (read only
    for ids the indexes do not hold)."""
    out = {i: Known(path=indexed[i]) for i in memory_ids if i in indexed}
    wanted = {i for i in memory_ids if i not in indexed}
    if not wanted:
        return out
    try:
        for event in Journal(root / JOURNAL_DIR).events(RECORDING):
            key = RECORDING[event.kind]
            memory_id = event.payload.get(key) if key else event.memory
            title, digest = event.payload.get("title"), event.payload.get("text_sha256")
            if memory_id in wanted and isinstance(title, str) and isinstance(digest, str):
                out[memory_id] = Known(title=title, digest=digest)
    except JournalError:  # an unreadable journal tells nothing; the files alone decide
        pass
    return out


def duplicate_problem(memory_id: str, keep: str, drop: str, same: bool = False) -> MemoryFileError:
    """The problem reporting ``drop``, a copy of ``memory_id`` ignored for ``keep`` (the copy in use);
    ``same``: it holds the same memory (what an interrupted move leaves)."""
    fix = "the same memory: `memvault maintain` removes it" if same else "`memvault repair` gives it an id of its own"
    return MemoryFileError(f"duplicate id {memory_id} (also in {keep}); this copy is ignored ({fix})", path=drop)
