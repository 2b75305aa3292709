"""``memvault git sync``: this machine's changes committed, the others' merged in, the result pushed.

In order, each step only when it has something to do:

1. commit what changed in the vault (memvault's writes, a person's edits), with a
   message that counts the changes;
2. fetch the remote; unreachable: one line, and the work stays committed here;
3. merge the remote branch with memvault's drivers (:mod:`.drivers`); the files a
   merge adds beside a memory (conflict versions) are committed with it, and what
   only the whole vault shows is reconciled (:mod:`.reconcile`);
4. bring the indexes in line with the merged files (only what changed is read
   again) and commit the index pages that sync writes again;
5. push.

Nothing to do, nothing printed.  A merge that leaves conflicts in files that are
not memvault's (a person's own notes) is left for the person, as git leaves it.
"""

from __future__ import annotations

import socket
import subprocess
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import VaultError
from ..invocation import memvault_command
from .drivers import ensure_registered, git_dir
from .reconcile import Reconciled, reconcile

if TYPE_CHECKING:
    from pathlib import Path

    from ..vault import Vault

NETWORK_TIMEOUT = 60.0  # seconds for a fetch or a push


class RemoteUnavailable(VaultError):
    """The remote cannot be reached; everything is committed locally."""

    exit_code = 75


@dataclass(slots=True)
class GitSyncResult:
    """What one :func:`git_sync` did."""

    committed: int = 0  # files committed from this machine
    merged: int = 0  # commits merged in from the remote
    conflicts: list[str] = field(default_factory=list)  # files git could not merge (not memvault's)
    reindexed: int = 0  # memories the indexes read again
    pushed: bool = False
    seconds: float = 0.0
    reconciled: Reconciled | None = None  # what the merge's reconciliation changed

    @property
    def changed(self) -> bool:
        return bool(self.committed or self.merged or self.conflicts or self.pushed)

    def to_json(self) -> dict[str, object]:
        reconciled = self.reconciled
        return {"committed": self.committed, "merged": self.merged, "conflicts": list(self.conflicts),
                "reindexed": self.reindexed, "pushed": self.pushed, "seconds": round(self.seconds, 3),
                "purged": list(reconciled.purged) if reconciled else [],
                "conflict_versions": list(reconciled.conflicts) if reconciled else []}


def git_sync(vault: Vault, *, remote: str = "origin") -> GitSyncResult:
    """Commit, fetch, merge, re-index and push (see the module).

    Raises:
        VaultError: the vault is not a git clone, or a git step failed.
        RemoteUnavailable: fetch or push could not reach ``remote`` (the work is committed locally).
    """
    started = time.perf_counter()
    root = vault.root
    if git_dir(root) is None:
        raise VaultError("the vault is not a git clone: git init (or clone the shared vault) first", path=root)
    ensure_registered(root, memvault_command())
    result = GitSyncResult()
    result.committed = _commit(root, f"memvault: {{n}} changes from {socket.gethostname()}")
    branch = _git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    if remote not in _git(root, "remote").split():
        _reconcile(vault, result, None)  # a merge made by hand (git pull) is settled all the same
        result.seconds = time.perf_counter() - started
        return result
    try:
        _git(root, "fetch", "-q", remote, timeout=NETWORK_TIMEOUT)
    except VaultError as exc:
        raise RemoteUnavailable(f"cannot reach {remote} ({exc.one_line()}); the changes stay committed here") \
            from None
    upstream = f"{remote}/{branch}"
    has_upstream = _git_ok(root, "rev-parse", "--verify", "-q", upstream)
    if has_upstream:
        behind = int(_git(root, "rev-list", "--count", f"HEAD..{upstream}").strip() or 0)
        if behind:
            before = _git(root, "rev-parse", "HEAD").strip()
            merge = subprocess.run(["git", "-C", str(root), "merge", "-q", "--no-edit", upstream],
                                   capture_output=True, text=True, timeout=300)
            if merge.returncode != 0:
                unmerged = _unmerged(root)
                if not unmerged:
                    raise VaultError(f"git merge failed: {merge.stderr.strip() or merge.stdout.strip()}")
                result.conflicts = _settle_deletions(vault, unmerged)
                if result.conflicts:
                    result.seconds = time.perf_counter() - started
                    return result
                _git(root, "commit", "-q", "--no-edit", "--no-verify")
            result.merged = behind
            result.committed += _commit(root, "memvault: versions kept beside memories the merge changed ({n})")
            _reconcile(vault, result, before)
        else:
            _reconcile(vault, result, None)
    else:
        _reconcile(vault, result, None)
    ahead = int(_git(root, "rev-list", "--count", f"{upstream}..HEAD").strip() or 0) if has_upstream else 1
    if ahead:
        try:
            _git(root, "push", "-q", remote, f"HEAD:{branch}", timeout=NETWORK_TIMEOUT)
        except VaultError as exc:
            raise RemoteUnavailable(f"cannot push to {remote} ({exc.one_line()}); the changes stay committed "
                                    "here") from None
        result.pushed = True
    result.seconds = time.perf_counter() - started
    return result


def _reconcile(vault: Vault, result: GitSyncResult, before: str | None) -> None:
    """Settle what only the whole vault shows (:mod:`.reconcile`), re-index what the merge since
    ``before`` (a commit; None: no merge here) and the reconciliation changed, commit both."""
    root = vault.root
    result.reconciled = reconcile(vault)
    result.committed += _commit(root, "memvault: the merge reconciled ({n})")
    if before is None:  # whatever a pull by hand changed: the stat cache finds it
        result.reindexed = vault.sync().parsed
    else:
        changed = _git(root, "diff", "--relative", "--name-only", before, "HEAD", "--", ".").split()
        result.reindexed = vault.sync(paths=[p for p in changed if p.endswith(".md")]).parsed
    result.committed += _commit(root, "memvault: index pages after the merge ({n})")


def _unmerged(root: Path) -> dict[str, str]:
    """The files a merge left unmerged (relative to the vault), with git's two-letter state (``UD``:
    deleted on the other side, ``DU``: deleted on this side, ``UU``: both changed, ...)."""
    out: dict[str, str] = {}
    for line in _git(root, "status", "--porcelain", "--", ".").splitlines():
        state, path = line[:2], line[3:]
        if "U" in state or state in ("AA", "DD"):
            out[path] = state
    return out


def _settle_deletions(vault: Vault, unmerged: dict[str, str]) -> list[str]:
    """Settle the memory files one side deleted while the other changed them; the files still unmerged.

    A memory the other machine forgot for good (its purge is in the merged journal) stays deleted;
    any other changed memory is kept, so that nothing a person wrote is lost (a plain forget moves a
    file to the trash, which git follows as a rename, not a deletion).
    """
    purged = {e.memory for e in vault.journal.events(("purge",)) if e.payload.get("permanent")}
    root = vault.root
    left = []
    for path, state in sorted(unmerged.items()):
        if state not in ("UD", "DU") or not path.endswith(".md"):
            left.append(path)
            continue
        memory_id = _memory_id(root / path)
        if memory_id is not None and memory_id in purged:
            _git(root, "rm", "-q", "--", path)
        else:
            _git(root, "add", "--", path)
    return left


def _memory_id(path: Path) -> str | None:
    from ..format.memory import parse

    try:
        memory = parse(path.read_text(encoding="utf-8"), str(path)).memory
    except (OSError, UnicodeDecodeError, VaultError):
        return None
    return None if memory.plain else memory.id


def _commit(root: Path, message: str) -> int:
    """Commit every change in the work tree; the number of files committed (0: nothing to commit)."""
    _git(root, "add", "-A", "--", ".")  # the vault's folder only, when it sits inside a larger repository
    staged = _git(root, "diff", "--cached", "--name-only", "--", ".").split()
    if not staged:
        return 0
    _git(root, "commit", "-q", "--no-verify", "-m", message.format(n=len(staged)), "--", ".")
    return len(staged)


def _git(root: Path, *args: str, timeout: float = 120.0) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise VaultError(f"git {args[0]} took longer than {timeout:.0f} s") from None
    except OSError as exc:
        raise VaultError(f"git {args[0]} failed: {exc}") from None
    if done.returncode != 0:
        raise VaultError(f"git {args[0]} failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def _git_ok(root: Path, *args: str) -> bool:
    try:
        _git(root, *args)
    except VaultError:
        return False
    return True
