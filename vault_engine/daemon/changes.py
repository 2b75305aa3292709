"""Which filesystem changes matter to the watcher, and when the vault last changed.

:func:`is_relevant` decides from a path alone whether a change can alter what sync sees (no
filesystem access); :class:`Activity` remembers when anything outside the derived state last changed,
for a daemon that waits for a quiet vault before its scheduled ``maintain``
(:func:`~vault_engine.daemon.watch.watch`, ``quiet_vault``).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from watchfiles import Change

from .. import store
from ..patterns import lazy_pattern

# Editor leftovers that are never memories: vim swap files (.foo.md.swp, .swo, ...) and
# backups (foo.md~), emacs autosaves (#foo.md#), temp files of atomic saves (foo.md.tmp),
# JetBrains safe writes (foo.md___jb_tmp___), downloads in progress.  Hidden names
# (.#foo.md, .foo.md.1a2b.tmp) are excluded before this is consulted.
_TEMP_NAME = lazy_pattern(
    r"(~|\.sw[a-p]|\.tmp|\.temp|\.bak|\.orig|\.part|\.crdownload|___jb_\w+___)$|^#.*#$", re.IGNORECASE
)
_VIM_PROBE_FIRST, _VIM_PROBE_STEP = 4913, 123  # vim tries 4913, 5036, 5159, ... to test a folder is writable


def is_temp_name(name: str) -> bool:
    """Whether a file name is an editor's swap, backup, lock or temp file."""
    if _TEMP_NAME.search(name):
        return True
    if name.isdigit() and name.isascii():
        number = int(name)
        return number >= _VIM_PROBE_FIRST and (number - _VIM_PROBE_FIRST) % _VIM_PROBE_STEP == 0
    return False


def is_relevant(root: Path | str, change: Change, path: str) -> bool:
    """Whether a change to ``path`` can change what sync sees (pure: no filesystem access).

    Relevant: any change to a ``.md`` file that sync reads as a memory (the
    rules of :func:`store.iter_markdown`: not hidden, not under ``.memvault/``,
    ``.git/``, ``.obsidian/`` or the root ``journal/``, not ``INDEX.md``, not
    the root ``README.md``), and any other non-temp name appearing or
    disappearing, because a folder moved in, away or renamed carries its
    memories with it without an event per file.  A path whose kind cannot be
    known any more (deleted) is treated as a possible folder.
    """
    prefix = os.path.join(str(root), "")
    if not path.startswith(prefix):
        return False
    parts = path[len(prefix) :].split(os.sep)
    name = parts[-1]
    if not name or any(part.startswith(".") for part in parts):
        return False
    if parts[0] in store.SKIP_DIRS or is_temp_name(name):
        return False
    if name.endswith(".md"):
        return name != store.INDEX_PAGE and not (len(parts) == 1 and name in store.ROOT_FILES)
    return change != Change.modified


class Activity:
    """When the vault last changed outside its derived state (``.memvault/``) and ``.git/``: a person's
    edit, an agent's hook writing its journal line; the watch's start counts as a change."""

    def __init__(self) -> None:
        self.last = time.monotonic()

    def saw(self, root: str, path: str) -> None:
        parts = os.path.relpath(path, root).split(os.sep)
        if parts[0] not in (store.STATE_DIR, ".git", os.pardir):
            self.last = time.monotonic()

    def idle(self) -> float:
        return time.monotonic() - self.last
