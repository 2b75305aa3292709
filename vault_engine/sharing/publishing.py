"""What ``memvault git sync`` may publish: an allow-list, never ``.gitignore``.

A sync commits and pushes without a person looking at the diff, so what it
stages is decided here, by the path alone and by what the path is on disk:

- the vault's own files (:data:`PUBLISHED_FILES`, those of its template) and everything
  below its content folders (:data:`PUBLISHED_FOLDERS`);
- a file elsewhere only when a person already tracks it (``git add`` by hand
  once: their choice, not a sync's);
- never a hidden name (``.memvault/`` and its indexes, locks, buffered
  conversations; ``.obsidian/``; temp files), wherever it is, whatever a
  ``.gitignore`` that came with a merge says;
- never a symlink, nor a path under a symlinked folder: what it points to may
  be outside the vault;
- never a file holding conflict markers: it is named for a person to fix.

A teammate who pushes a ``.gitignore`` without ``.memvault/`` therefore
exposes nothing: those paths fail the allow-list before git sees them.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PUBLISHED_FOLDERS = frozenset({"memories", "episodes", "profile", "journal", "trash"})
PUBLISHED_FILES = frozenset({".gitattributes", ".gitignore", "memvault.toml", "README.md", "INDEX.md",
                             ".obsidian/types.json"})
HIDDEN_ALLOWED = frozenset({".gitkeep", ".gitattributes", ".gitignore"})  # hidden names memvault itself commits
NEVER = frozenset({".memvault", ".git", ".obsidian", "node_modules"})
MARKER_SCAN_BYTES = 16 * 1024 * 1024  # a larger file is not read for markers (nor is it a memvault file)


def publishable(rel: str, *, tracked: bool = False) -> bool:
    """Whether a sync may stage ``rel`` (a path relative to the vault, ``/``-separated), by name alone."""
    if rel in PUBLISHED_FILES:
        return True
    parts = rel.split("/")
    if any(not p or p in (".", "..") for p in parts) or parts[0] in NEVER:
        return False
    if any(p.startswith(".") and p not in HIDDEN_ALLOWED for p in parts):
        return False
    if len(parts) == 1:
        return rel in PUBLISHED_FILES or (tracked and not rel.startswith("."))
    return parts[0] in PUBLISHED_FOLDERS or tracked


def through_symlink(root: Path, rel: str) -> bool:
    """Whether ``rel`` is a symlink, or lies under a symlinked folder of the vault (a missing path: False)."""
    here = root
    for part in rel.split("/"):
        here = here / part
        try:
            info = os.lstat(here)
        except OSError:
            return False
        if stat.S_ISLNK(info.st_mode):
            return True
    return False


def has_markers(path: Path) -> bool:
    """Whether the file holds git's conflict markers (a line starting ``<<<<<<<`` and one ``>>>>>>>``)."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MARKER_SCAN_BYTES:
            return False
        data = path.read_bytes()
    except OSError:
        return False
    lines = data.split(b"\n")
    return any(line.startswith(b"<<<<<<<") for line in lines) and any(line.startswith(b">>>>>>>") for line in lines)
