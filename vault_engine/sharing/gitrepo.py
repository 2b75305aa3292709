"""Running git on the vault's clone, and the locks a killed git leaves behind.

git takes ``.git/index.lock`` (and ``HEAD.lock``, a branch's ``.lock``) for the
length of one command and removes it when done.  A git killed mid-command (a
sync's process group killed by a timer, a reboot) leaves the lock, and every
later git command that writes fails with "Another git process seems to be
running" until someone deletes it by hand.

A sync removes such a lock itself, but only when it is certain to be stale:

- the sync holds ``.memvault/git-sync.lock``, so no other memvault sync of
  this vault is running;
- the lock is older than :data:`STALE_AFTER` seconds (a git writing it right
  now has just made it);
- no running git process works in this clone (its working folder, or a
  ``-C`` argument, is the vault), checked through ``/proc``.  Where there is
  no ``/proc`` (macOS) nothing can be checked, and only a lock older than
  :data:`STALE_WITHOUT_PROC` seconds is taken for stale.

Anything else is left alone, and the sync fails with git's own message.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from ..errors import VaultError

STALE_AFTER = 30.0  # seconds: a git lock older than this, with no git working in the clone, is stale
STALE_WITHOUT_PROC = 600.0  # the same where running processes cannot be listed


def git(root: Path, *args: str, timeout: float = 120.0, input: str | None = None) -> str:
    """``git -C root ARGS``'s output (``input`` on its stdin).  Raises VaultError with git's message when it
    fails."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=timeout,
                              input=input, stdin=subprocess.DEVNULL if input is None else None)
    except subprocess.TimeoutExpired:
        raise VaultError(f"git {args[0]} took longer than {timeout:.0f} s") from None
    except OSError as exc:
        raise VaultError(f"git {args[0]} failed: {exc}") from None
    if done.returncode != 0:
        raise VaultError(f"git {args[0]} failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def git_ok(root: Path, *args: str) -> bool:
    try:
        git(root, *args)
    except VaultError:
        return False
    return True


def lock_files(folder: Path) -> list[Path]:
    """The lock files a killed git can leave in the clone's git folder ``folder``."""
    found = [p for p in (folder / "index.lock", folder / "HEAD.lock", folder / "ORIG_HEAD.lock",
                         folder / "MERGE_HEAD.lock", folder / "config.lock") if p.exists()]
    heads = folder / "refs" / "heads"
    if heads.is_dir():
        found += sorted(heads.rglob("*.lock"))
    return found


def recover_stale_locks(root: Path, folder: Path, *, stale_after: float = STALE_AFTER) -> list[Path]:
    """Remove the git locks in ``folder`` (the git folder of the clone at ``root``) that are stale (see the
    module), and the ``.merge_file_*`` copies a killed merge left at the top of the work tree for its
    drivers; the ones removed.  The caller holds the vault's sync lock."""
    locks = lock_files(folder) + sorted(root.glob(".merge_file_*"))
    if not locks:
        return []
    working = git_working_in(root)
    if working is None:
        stale_after = max(stale_after, STALE_WITHOUT_PROC)
    elif working:
        return []
    removed = []
    now = time.time()
    for lock in locks:
        try:
            if now - lock.lstat().st_mtime < stale_after:
                continue
            lock.unlink()
        except OSError:
            continue
        removed.append(lock)
    return removed


def git_working_in(root: Path) -> list[int] | None:
    """The ids of running git processes that work in the clone at ``root``; None: cannot tell (no /proc)."""
    proc = Path("/proc")
    if not (proc / "self" / "cmdline").exists():
        return None
    real = str(root.resolve())
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            name = os.path.basename(argv[0].decode("utf-8", "replace")) if argv and argv[0] else ""
            if not name.startswith("git"):
                continue
            cwd = os.readlink(entry / "cwd")
        except OSError:  # gone meanwhile, or another user's
            continue
        arguments = [a.decode("utf-8", "replace") for a in argv[1:]]
        if cwd == real or cwd.startswith(real + "/") or real in arguments or str(root) in arguments:
            found.append(int(entry.name))
    return found
