"""``memvault import --from KIND PATH...``: the memories people already keep for their agents, brought in.

Plan, then apply: every file is read and parsed (:mod:`.memory_files`) and the
whole plan made before anything is written, so a bad path or a file that is not
what ``--from`` says stops the import with nothing half done, and ``--dry-run``
shows the plan and stops there.

Each entry becomes one memory whose ``source`` is ``document:<file>#<anchor>``.
Importing again is idempotent: an entry whose text a memory from the same file
already holds is unchanged (even if the entry moved: a bullet inserted above
others leaves them be); an edited entry updates the memory whose text it is most
like, else the memory of its anchor (a correction: the old text stays in its
history); anything else is created (see :func:`plan`).
An entry gone from the file leaves its memory as it is (say ``memvault forget``
to drop it).  Every text is redacted of secrets by the write path (``add``,
``correct``), and one-off instructions are left out as ``memvault add`` leaves
them out.

Where each goes: ``--project`` when given; else the project of the folder the file
belongs to (its git repository, as ``memvault project`` names it), global for a
user-level file (``~/.claude/CLAUDE.md``, Codex's memories, the auto memory of a
folder that is gone).  Hand-written files are the person's word (``authority:
explicit``); what an agent wrote down itself (Claude Code's auto memory, Codex's
memories) is ``inferred`` and starts on trial.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import VaultError
from ..format.kinds import MemoryClass, MemoryType
from ..format.memory import memory_text, text_digest
from ..format.redact import redact
from ..format.text import is_one_off
from ..limits import MAX_TEXT
from .memory_files import Entry, MemoryFile, read_memory_files

if TYPE_CHECKING:
    from ..vault import Vault

AGENT_WRITTEN = frozenset({"claude-code-memory", "codex-memories"})
# An entry's kind as a memory: (type, class in a project, class when global).
_TYPES: dict[str, tuple[MemoryType, MemoryClass | None, MemoryClass | None]] = {
    "rule": ("collaboration-policy", "project-convention", "collaboration-habit"),
    "preference": ("collaboration-policy", "user-preference", "user-preference"),
    "profile": ("fact", "user-fact", "user-fact"),
    "fact": ("fact", None, None),
    "procedure": ("procedure", None, None),
}


@dataclass(slots=True)
class Planned:
    """What the import does with one entry: ``create``, ``update``, ``unchanged`` or ``skip``."""

    action: str
    source: str
    entry: Entry
    type: MemoryType
    klass: MemoryClass | None
    project: str | None
    memory: str | None = None  # the memory it is (unchanged), updates, or became (once applied)
    reason: str | None = None  # why it is skipped, or failed

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "source": self.source, "kind": self.entry.kind, "type": self.type,
                "class": self.klass, "project": self.project, "title": self.entry.title,
                "memory": self.memory, **({"reason": self.reason} if self.reason else {})}


@dataclass(slots=True)
class ImportReport:
    """The plan of one import and, unless it was a dry run, what became of it."""

    kind: str
    dry_run: bool
    files: list[str] = field(default_factory=list)
    items: list[Planned] = field(default_factory=list)

    def count(self, action: str) -> int:
        return sum(1 for item in self.items if item.action == action)

    def to_json(self) -> dict[str, Any]:
        return {"from": self.kind, "dry_run": self.dry_run, "files": self.files,
                "counts": {a: self.count(a) for a in ("create", "update", "unchanged", "skip", "failed")},
                "items": [item.to_json() for item in self.items]}


def source_of(file: MemoryFile, entry: Entry) -> str:
    return f"document:{file.path}#{entry.anchor}"


def import_memories(vault: Vault, kind: str, paths: Sequence[Path], *, dry_run: bool = False,
                    project: str | None = None, home: Path | None = None) -> ImportReport:
    """Bring the memories of ``paths`` (files of ``kind``) into the vault; with ``dry_run``, only the plan.

    Raises:
        InvalidInput: an unknown kind, a missing path, or a file that is not what ``kind`` says
            (nothing is written then).
    """
    files = read_memory_files(kind, [p.expanduser().absolute() for p in paths], home)
    report = ImportReport(kind, dry_run, [str(f.path) for f in files])
    report.items = plan(vault, files, project)
    if not dry_run:
        apply(vault, kind, report.items)
    return report


def plan(vault: Vault, files: Sequence[MemoryFile], project: str | None) -> list[Planned]:
    """What importing ``files`` would do (reads the vault, writes nothing).

    Each entry is matched to a memory imported from the same file in three passes, each memory
    matched once: the same text (unchanged, wherever the entry moved), then the most alike text
    (an edited entry: updated), then the same anchor (updated); an entry matched by none is created.
    """
    from ..context.project import current_project

    active = [e for e in vault.scan().active() if e.memory.lifecycle != "superseded"]
    out: list[Planned] = []
    for file in files:
        prefix = f"document:{file.path}#"
        mine = {e.memory.id: e for e in active if e.memory.source.startswith(prefix)}
        key = project
        if key is None and not file.user_level and file.folder is not None:
            key = current_project(file.folder, vault.root)
        items = [_planned(file, entry, key) for entry in file.entries]
        live = [i for i in items if i.action == "create"]
        by_text = {text_digest(memory_text(e.memory)): e.memory.id for e in mine.values()}
        for item in live:  # the same text
            found = by_text.get(text_digest(_clean(item.entry.text)))
            if found is not None and found in mine:
                item.action, item.memory = "unchanged", found
                del mine[found]
        for item in live:  # the most alike text: an edited entry
            if item.action == "create" and mine:
                words = _words(item.entry.text)
                best = max(mine.values(), key=lambda e: _alike(words, _words(memory_text(e.memory))))
                if _alike(words, _words(memory_text(best.memory))) >= ALIKE:
                    item.action, item.memory = "update", best.memory.id
                    del mine[best.memory.id]
        by_source = {e.memory.source: e.memory.id for e in mine.values()}
        for item in live:  # the same anchor
            found = by_source.get(item.source)
            if item.action == "create" and found is not None and found in mine:
                item.action, item.memory = "update", found
                del mine[found]
        out += items
    return out


ALIKE = 0.5  # share of words an edited entry keeps with the memory it updates (Jaccard)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def _alike(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _clean(text: str) -> str:
    return redact(text.strip("\n")).rstrip()


def _planned(file: MemoryFile, entry: Entry, project: str | None) -> Planned:
    """The entry as a new memory, or skipped when no memory may hold it."""
    type_, in_project, alone = _TYPES[entry.kind]
    item = Planned("create", source_of(file, entry), entry, type_, in_project if project else alone, project)
    text = _clean(entry.text)
    phrase = is_one_off(text)
    if phrase:
        item.action, item.reason = "skip", f"'{phrase}' marks a one-off instruction, not a lasting memory"
    elif len(text) > MAX_TEXT:
        item.action, item.reason = "skip", f"longer than {MAX_TEXT} characters"
    return item


def apply(vault: Vault, kind: str, items: Sequence[Planned]) -> None:
    """Carry out ``items``' creates and updates; one that fails is marked ``failed`` and the others go on."""
    from ..vault.results import NewMemory

    for item in items:
        entry = item.entry
        try:
            if item.action == "create":
                request = NewMemory(
                    entry.text, title=entry.title, type=item.type, klass=item.klass,
                    scope="project" if item.project else "global", project=item.project, source=item.source,
                    authority="inferred" if kind in AGENT_WRITTEN else "explicit", summary=entry.summary,
                    tags=("imported", kind))
                item.memory = vault.add(request).id
            elif item.action == "update" and item.memory is not None:
                item.memory = vault.correct(item.memory, entry.text, entry.title).id
        except VaultError as exc:
            item.action, item.reason = "failed", exc.one_line()
