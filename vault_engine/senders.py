"""Senders: who a memory came from, and whether that is someone other than whoever asks.

A memory's ``sender`` key names the person (or host) whose work wrote it:
``ada``, ``Bob Stone``, ``ci-runner``.  The user, their agents and their tools
all write with the same sender; ``source`` says which of them it was
(``user``, ``tool:mcp``, ``session:...``).  In a vault a team shares through
git, the context marks a memory whose sender is not the current one, so an
agent knows it is reading what someone else learned.

The current sender is ``MEMVAULT_VAULT_SENDER``, else the ``user.name`` git uses
in the vault's repository, else ``[vault] sender`` in ``memvault.toml`` (a file
every clone of a shared vault has: a name committed there must not make
everyone write as that person), else unknown.  A memory
without ``sender`` (every memory written before the key existed) is never
marked, and nothing is marked while the current sender is unknown: there is
no telling who is "another" then.
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

from .gitclone import git_dir

log = logging.getLogger(__name__)

MAX_SENDER = 200  # characters a sender name keeps
GIT_TIMEOUT = 5.0
ANOTHER = "from another sender"


def clean(name: str | None) -> str | None:
    """``name`` on one line, its whitespace collapsed and at most :data:`MAX_SENDER` characters; None when blank."""
    if name is None:
        return None
    text = " ".join(str(name).split())[:MAX_SENDER].strip()
    return text or None


def same(first: str | None, second: str | None) -> bool:
    """Whether two sender names name the same sender (case and spacing aside)."""
    a, b = clean(first), clean(second)
    return a is not None and b is not None and a.casefold() == b.casefold()


def other_sender(sender: str | None, current: str | None) -> str | None:
    """The memory's sender when it is someone other than ``current``; None when it is the same,
    when the memory names none, or when the current sender is unknown."""
    theirs, mine = clean(sender), clean(current)
    if theirs is None or mine is None or same(theirs, mine):
        return None
    return theirs


def why(sender: str) -> str:
    """The reason line a context gives a memory of another sender."""
    return f"{ANOTHER}: {sender}"


def current_sender(root: Path, configured: str, *, from_environment: bool = False) -> str | None:
    """Who this vault writes as: ``configured`` when this machine chose it (``MEMVAULT_VAULT_SENDER``:
    ``from_environment``), else git's ``user.name`` in the vault's repository, else ``configured`` from
    ``memvault.toml``, else None.  In a vault a team shares, ``memvault.toml`` is everyone's: a sender
    committed there would make every clone write as that one person, so each person's git name
    comes first."""
    chosen = clean(configured)
    if chosen is not None and from_environment:
        return chosen
    return _git_user_name(root) or chosen


def _git_user_name(root: Path) -> str | None:
    if git_dir(root) is None:
        return None
    try:
        done = subprocess.run(["git", "-C", str(root), "config", "--get", "user.name"], capture_output=True,
                              text=True, timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("git config user.name failed: %s", exc)
        return None
    return clean(done.stdout) if done.returncode == 0 else None
