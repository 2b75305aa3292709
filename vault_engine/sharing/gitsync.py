"""``memvault git sync``: this machine's changes committed, the others' merged in, the result pushed.

In order, each step only when it has something to do:

1. commit what changed in the vault (memvault's writes, a person's edits), with a
   message that counts the changes: only what :mod:`.publishing` allows, never
   ``.memvault/``, a symlink or a file with conflict markers;
2. fetch the remote; unreachable: one line, and the work stays committed here;
3. merge the remote branch with memvault's drivers (:mod:`.drivers`); the files a
   merge adds beside a memory (conflict versions) are committed with it, and what
   only the whole vault shows is reconciled (:mod:`.reconcile`);
4. bring the indexes in line with the merged files (only what changed is read
   again) and commit the index pages that sync writes again;
5. push.

Nothing to do, nothing printed.  Before any of it, a sync makes the clone fit to
sync: the git locks a killed sync left are removed when certainly stale
(:mod:`.gitrepo`), the ``.gitattributes`` block is written again when a commit
dropped it, a journal file a commit made a symlink is a file again.

A merge that leaves conflicts in files that are not memvault's (a person's own
notes) is left for the person, as git leaves it: unmerged, nothing staged with
markers, the files named.  The next sync stages each file the person fixed (no
markers left) and concludes the merge itself; memvault's own files a merge left
with markers (merged without the drivers) are merged by the drivers then.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import fsio, locks
from ..errors import VaultBusy, VaultError
from ..gitclone import git_dir, setup
from ..invocation import memvault_command
from ..store import JOURNAL_DIR, STATE_DIR
from .drivers import run_driver
from .gitrepo import STALE_AFTER, git, git_ok, recover_stale_locks
from .merge import counted_on_both_sides, feedback_events, merge_memory
from .publishing import has_markers, publishable, through_symlink
from .reconcile import Reconciled, reconcile

if TYPE_CHECKING:
    from ..format.value import Memory
    from ..vault import Vault

NETWORK_TIMEOUT = 60.0  # seconds for a fetch or a push
SYNC_LOCK = "git-sync.lock"  # in the state folder: one sync of a vault at a time


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
    recounted: list[str] = field(default_factory=list)  # memories both sides gave the same feedback at once
    refused: list[str] = field(default_factory=list)  # symlinks (or paths under one) never published
    recovered: list[str] = field(default_factory=list)  # stale git locks a killed sync left, removed
    attributes_restored: bool = False  # .gitattributes had lost memvault's block; written again
    restored: list[str] = field(default_factory=list)  # journal files a commit made symlinks, files again

    @property
    def changed(self) -> bool:
        return bool(self.committed or self.merged or self.conflicts or self.pushed or self.refused or self.recovered
                    or self.restored or self.recounted
                    or (self.reconciled is not None and self.reconciled.kept))

    def to_json(self) -> dict[str, object]:
        reconciled = self.reconciled
        return {"committed": self.committed, "merged": self.merged, "conflicts": list(self.conflicts),
                "reindexed": self.reindexed, "pushed": self.pushed, "seconds": round(self.seconds, 3),
                "purged": list(reconciled.purged) if reconciled else [],
                "conflict_versions": list(reconciled.conflicts) if reconciled else [],
                "purges_declined": list(reconciled.kept) if reconciled else [],
                "refused_symlinks": list(self.refused), "recovered_locks": list(self.recovered),
                "attributes_restored": self.attributes_restored, "restored_links": list(self.restored),
                "recounted": list(self.recounted)}


def git_sync(vault: Vault, *, remote: str = "origin", stale_after: float = STALE_AFTER) -> GitSyncResult:
    """Commit, fetch, merge, re-index and push (see the module).

    Raises:
        VaultError: the vault is not a git clone, or a git step failed.
        VaultBusy: another ``git sync`` of this vault is running.
        RemoteUnavailable: fetch or push could not reach ``remote`` (the work is committed locally).
    """
    started = time.perf_counter()
    root = vault.root
    folder = git_dir(root)
    if folder is None:
        raise VaultError("the vault is not a git clone: git init (or clone the shared vault) first", path=root)
    try:
        held = locks.lock_held_open(root / STATE_DIR / SYNC_LOCK)
    except BlockingIOError:
        raise VaultBusy("another memvault git sync of this vault is running; try again when it is done") from None
    try:
        result = GitSyncResult()
        result.recovered = [p.relative_to(folder if p.is_relative_to(folder) else root).as_posix()
                            for p in recover_stale_locks(root, folder, stale_after=stale_after)]
        result.attributes_restored = setup(root, memvault_command()).attributes_written
        _sync(vault, folder, remote, result)
    finally:
        os.close(held)
    result.seconds = time.perf_counter() - started
    return result


def _sync(vault: Vault, folder: Path, remote: str, result: GitSyncResult) -> None:
    root = vault.root
    _unlink_journal(root, result)
    if (folder / "MERGE_HEAD").exists():  # a merge left for a person, or cut short by a kill
        before = _git(root, "rev-parse", "HEAD").strip()
        result.conflicts = _settle(vault, _unmerged(root), resumed=True)
        if result.conflicts:
            return
        result.committed += _commit(root, "", result, merge=True)
        result.merged += 1
        _reconcile(vault, result, before)
    result.committed += _commit(root, f"memvault: {{n}} changes from {socket.gethostname()}", result)
    if result.conflicts:
        return
    branch = _git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    if remote not in _git(root, "remote").split():
        _reconcile(vault, result, None)  # a merge made by hand (git pull) is settled all the same
        return
    try:
        _git(root, "fetch", "-q", remote, timeout=NETWORK_TIMEOUT)
    except VaultError as exc:
        raise RemoteUnavailable(f"cannot reach {remote} ({exc.one_line()}); the changes stay committed here") \
            from None
    upstream = f"{remote}/{branch}"
    has_upstream = _git_ok(root, "rev-parse", "--verify", "-q", upstream)
    behind = int(_git(root, "rev-list", "--count", f"HEAD..{upstream}").strip() or 0) if has_upstream else 0
    if behind:
        before = _git(root, "rev-parse", "HEAD").strip()
        merge = subprocess.run(["git", "-C", str(root), "merge", "-q", "--no-edit", "--no-verify", upstream],
                               capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        if merge.returncode != 0:
            unmerged = _unmerged(root)
            if not unmerged and not (folder / "MERGE_HEAD").exists():
                raise VaultError(f"git merge failed: {merge.stderr.strip() or merge.stdout.strip()}")
            result.conflicts = _settle(vault, unmerged, resumed=False)
            if result.conflicts:
                return
            _commit(root, "", result, merge=True)
        result.merged += behind
        result.committed += _commit(root, "memvault: versions kept beside memories the merge changed ({n})", result)
        result.recounted = _recount(root, before, upstream)
        result.committed += _commit(root, "memvault: feedback both sides recorded, counted twice ({n})", result)
        _reconcile(vault, result, before)
    else:
        _reconcile(vault, result, None)
    if result.conflicts:
        return
    ahead = int(_git(root, "rev-list", "--count", f"{upstream}..HEAD").strip() or 0) if has_upstream else 1
    if ahead:
        try:
            _git(root, "push", "-q", remote, f"HEAD:{branch}", timeout=NETWORK_TIMEOUT)
        except VaultError as exc:
            raise RemoteUnavailable(f"cannot push to {remote} ({exc.one_line()}); the changes stay committed "
                                    "here") from None
        result.pushed = True


def _reconcile(vault: Vault, result: GitSyncResult, before: str | None) -> None:
    """Settle what only the whole vault shows (:mod:`.reconcile`), re-index what the merge since
    ``before`` (a commit; None: no merge here) and the reconciliation changed, commit both."""
    root = vault.root
    _unlink_journal(root, result)  # a link the merge brought
    result.attributes_restored |= setup(root, memvault_command()).attributes_written  # a block the merge dropped
    result.reconciled = reconcile(vault)
    result.committed += _commit(root, "memvault: the merge reconciled ({n})", result)
    if before is None:  # whatever a pull by hand changed: the stat cache finds it
        result.reindexed = vault.sync().parsed
    else:
        changed = _git(root, "diff", "--relative", "--name-only", before, "HEAD", "--", ".").split()
        result.reindexed = vault.sync(paths=[p for p in changed if p.endswith(".md")]).parsed
    result.committed += _commit(root, "memvault: index pages after the merge ({n})", result)


def _recount(root: Path, ours: str, theirs: str) -> list[str]:
    """The memory files both sides of a merge changed to the same bytes, each by feedback of its own (two
    machines reporting one outcome in the same second): git took such a file once without asking the
    driver; its counters now hold both increments (:func:`.merge.counted_on_both_sides`).  The files
    changed (relative to the vault)."""
    try:
        base = _git(root, "merge-base", ours, theirs).strip()
    except VaultError:  # no common ancestor: git merged nothing it could take once
        return []
    changed = {side: set(_git(root, "diff", "--relative", "--name-only", base, side, "--", ".").split())
               for side in (ours, theirs)}
    same = [p for p in sorted(changed[ours] & changed[theirs]) if _driver_kind(p) == "memory"
            and _stage_of(root, f"{ours}:./{p}") == _stage_of(root, f"{theirs}:./{p}")]
    if not same:
        return []
    events = {side: [feedback_events(_text(root, base, p), _text(root, side, p)) for p in sorted(changed[side])
                     if _driver_kind(p) == "journal"] for side in (ours, theirs)}
    fixed = []
    for rel in same:
        text = _text(root, ours, rel)
        memory = _memory(root, rel)
        if memory is None or (root / rel).read_text(encoding="utf-8", errors="surrogateescape") != text \
                or not counted_on_both_sides(memory.id, events[ours], events[theirs]):
            continue
        merged = merge_memory(_text(root, base, rel), text, text, rel)
        if merged.clean and merged.text != text:
            fsio.write_atomic(root / rel, merged.text.encode("utf-8", errors="surrogateescape"))
            fixed.append(rel)
    return fixed


def _text(root: Path, commit: str, rel: str) -> str:
    """``rel`` (relative to the vault) as of ``commit``; empty when it was not there."""
    data = _stage_of(root, f"{commit}:./{rel}")
    return (data or b"").decode("utf-8", errors="surrogateescape")


def _unmerged(root: Path) -> dict[str, str]:
    """The files a merge left unmerged (relative to the vault), with git's two-letter state (``UD``:
    deleted on the other side, ``DU``: deleted on this side, ``UU``: both changed, ...)."""
    out: dict[str, str] = {}
    for state, path in _status(root):
        if "U" in state or state in ("AA", "DD"):
            out[path] = state
    return out


def _status(root: Path) -> list[tuple[str, str]]:
    """(git's two-letter state, path) of every changed or untracked file (not the ignored ones)."""
    out = _git(root, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all", "--", ".")
    return [(item[:2], item[3:]) for item in out.split("\0") if len(item) > 3]


def _settle(vault: Vault, unmerged: dict[str, str], *, resumed: bool) -> list[str]:
    """Settle what a merge left unmerged; the files still to fix by hand (nothing of them is staged).

    - a memory one side deleted while the other changed it: deleted when a permanent forget of
      exactly this text came with the merge (:func:`.reconcile.purge_applies`), else kept, so that
      nothing a person wrote is lost (a plain forget moves a file to the trash, which git follows
      as a rename, not a deletion);
    - memvault's own files (the journal, a memory, an index page) that git merged without the
      drivers (a clone that lost them, a ``.gitattributes`` that lost its block): merged by the
      drivers now, from the three versions git keeps;
    - ``resumed`` (a later sync): a file a person fixed (no conflict markers left) is staged.

    Everything else is left unmerged, as git left it, and named.
    """
    from .reconcile import purge_applies

    root = vault.root
    left = []
    links = _linked_stages(root)
    # A file on one side, a link on the other: git keeps the file beside it, as ``PATH~HEAD`` (or
    # ``PATH~BRANCH``); that copy is the version that wins.
    aside = {p: p.rpartition("~")[0] for p in unmerged if p.rpartition("~")[0] in links}
    for path, state in sorted(unmerged.items()):
        if path in aside:
            continue
        if path in links:  # a symlink never wins a merge: the version that is a file does, or none
            _settle_link(root, path, links[path], [p for p, of in sorted(aside.items()) if of == path])
        elif through_symlink(root, path):
            left.append(path)
        elif state in ("UD", "DU") and path.endswith(".md"):
            memory = _memory(root, path)
            if memory is not None and purge_applies(vault, memory):
                _git(root, "rm", "-q", "--", path)
            else:
                _git(root, "add", "--", path)
        elif state in ("UU", "AA") and _driver_kind(path) is not None and _merge_by_driver(root, path):
            _git(root, "add", "--", path)
        elif resumed and not has_markers(root / path):
            _git(root, "add", "-A", "--", path)
        else:
            left.append(path)
    return left


def _linked_stages(root: Path) -> dict[str, dict[int, bool]]:
    """The unmerged paths of which one version is a symlink: stage -> whether that version is a link."""
    out: dict[str, dict[int, bool]] = {}
    for item in _git(root, "ls-files", "-u", "-z", "--", ".").split("\0"):
        if not item:
            continue
        info, _, path = item.partition("\t")
        mode, _sha, stage = info.split()
        out.setdefault(path, {})[int(stage)] = mode == "120000"
    return {path: stages for path, stages in out.items() if any(stages.values())}


def _settle_link(root: Path, path: str, stages: dict[int, bool], copies: list[str]) -> None:
    """Resolve a conflict where one side made ``path`` a symlink: this side's file, else the other's
    (``copies``: where git put a side's file beside the link), else none."""
    found = [_stage(root, stage, path) if stage in stages and not stages[stage] else None for stage in (2, 3)]
    found += [_stage(root, stage, copy) for copy in copies for stage in (2, 3)]
    for copy in copies:
        (root / copy).unlink(missing_ok=True)
        _git(root, "rm", "-q", "--cached", "--", copy)
    data = next((d for d in found if d is not None), None)
    if data is None:
        (root / path).unlink(missing_ok=True)
        _git(root, "rm", "-q", "--cached", "--", path)
        return
    fsio.write_atomic(root / path, data)  # replaces the link itself
    _git(root, "add", "--", path)


def _unlink_journal(root: Path, result: GitSyncResult) -> None:
    """Replace each journal month file that is a symlink (a commit made it one) by its last version that
    was a file in the history: memvault never reads or appends through a link, and the vault's events
    must go on being recorded."""
    folder = root / JOURNAL_DIR
    if folder.is_symlink() or not folder.is_dir():
        return
    for path in sorted(folder.glob("*.jsonl")):
        if not path.is_symlink():
            continue
        rel = f"{JOURNAL_DIR}/{path.name}"
        fsio.write_atomic(path, _last_file_version(root, rel))
        result.restored.append(rel)


def _last_file_version(root: Path, rel: str) -> bytes:
    """The bytes of ``rel`` in the latest commit where it was a regular file (none: empty)."""
    for commit in _git(root, "log", "-n", "50", "--format=%H", "--", rel).split():
        entry = _git(root, "ls-tree", commit, "--", rel).split()
        if entry and entry[0] == "100644":
            data = _stage_of(root, f"{commit}:{rel}")
            if data is not None:
                return data
    return b""


def _driver_kind(path: str) -> str | None:
    """Which of memvault's drivers merges ``path`` (as ``.gitattributes`` declares them); None: none."""
    parts = path.split("/")
    if len(parts) == 2 and parts[0] == "journal" and parts[1].endswith(".jsonl"):
        return "journal"
    if parts[-1] == "INDEX.md":
        return "generated"
    return "memory" if path.endswith(".md") else None


def _merge_by_driver(root: Path, path: str) -> bool:
    """Merge ``path`` from the three versions git keeps of it (``:1:`` ancestor, ``:2:`` ours,
    ``:3:`` theirs) with memvault's driver; True when the result is clean and in the work tree."""
    kind = _driver_kind(path)
    if kind is None:
        return False
    with tempfile.TemporaryDirectory(prefix="memvault-merge-") as tmp:
        files = []
        for stage in (1, 2, 3):
            data = _stage(root, stage, path)
            if data is None and stage != 1:
                return False
            target = Path(tmp) / str(stage)
            target.write_bytes(data or b"")
            files.append(target)
        try:
            clean = run_driver(kind, files[0], files[1], files[2], path, root) == 0
        except (VaultError, OSError):
            return False
        if clean:
            fsio.write_atomic(root / path, files[1].read_bytes())
    return clean


def _stage(root: Path, stage: int, path: str) -> bytes | None:
    return _stage_of(root, f":{stage}:{path}")


def _stage_of(root: Path, name: str) -> bytes | None:
    """The bytes of a git object named ``name`` (``:2:path``, ``COMMIT:path``); None: no such object."""
    done = subprocess.run(["git", "-C", str(root), "cat-file", "blob", name], capture_output=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    return done.stdout if done.returncode == 0 else None


def _memory(root: Path, rel: str) -> Memory | None:
    from ..store import read_entry

    try:
        memory = read_entry(root, rel).memory
    except VaultError:
        return None
    return None if memory.plain else memory


def _commit(root: Path, message: str, result: GitSyncResult, *, merge: bool = False) -> int:
    """Stage what :mod:`.publishing` allows of the changes in the work tree and commit; the number
    of files committed (0: nothing).  ``merge``: conclude the merge under way, with git's message.

    A symlink, or a file holding conflict markers, is never staged: it is named in ``result``.
    """
    tracked = set(_git(root, "ls-files", "-z", "--", ".").split("\0"))
    stage = []
    for state, rel in _status(root):
        if state[1] == " " or not publishable(rel, tracked=rel in tracked):
            continue  # staged already (a merge's result, a deletion the merge settled), or never published
        if through_symlink(root, rel):
            if rel not in result.refused:
                result.refused.append(rel)
            continue
        if has_markers(root / rel):
            if rel not in result.conflicts:
                result.conflicts.append(rel)
            continue
        stage.append(rel)
    if stage:
        _git(root, "--literal-pathspecs", "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul",
             input="\0".join(stage))
    staged = [p for p in _git(root, "diff", "--cached", "--name-only", "-z", "--no-renames").split("\0") if p]
    if not merge:
        # A path someone staged by hand outside the allow-list is not published by a sync.
        strays = [p for p in staged if not publishable(p, tracked=p in tracked) or through_symlink(root, p)]
        if strays:
            _git(root, "--literal-pathspecs", "reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul",
                 input="\0".join(strays))
            staged = [p for p in staged if p not in strays]
        if not staged:
            return 0
        _git(root, "commit", "-q", "--no-verify", "-m", message.format(n=len(staged)))
    else:
        _git(root, "commit", "-q", "--no-verify", "--no-edit")
    return len(staged)


def _git(root: Path, *args: str, timeout: float = 120.0, input: str | None = None) -> str:
    return git(root, *args, timeout=timeout, input=input)


def _git_ok(root: Path, *args: str) -> bool:
    return git_ok(root, *args)
