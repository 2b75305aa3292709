"""The merge driver git runs (``memvault git merge-driver KIND``): one file merged as git asks.

Which driver merges which file, and how a clone registers them, is :mod:`vault_engine.gitclone`.
"""

from __future__ import annotations

from pathlib import Path

from .. import fsio
from ..errors import VaultError
from ..format.memory import read_back, render
from ..gitclone import KINDS
from .merge import merge_journal, merge_memory


def run_driver(kind: str, base: Path, ours: Path, theirs: Path, path: str, root: Path) -> int:
    """Merge one file as git asks (``%O %A %B %P``): the result replaces ``ours``; 0 when clean.

    A memory's conflict version (see :func:`.merge.merge_memory`) is written as a file of its own
    next to ``path`` in the work tree at ``root``, to be committed with the merge.
    """
    old, mine, yours = (p.read_bytes().decode("utf-8", errors="surrogateescape") for p in (base, ours, theirs))
    if kind == "journal":
        ours.write_bytes(merge_journal(old, mine, yours).encode("utf-8", errors="surrogateescape"))
        return 0
    if kind == "generated":
        return 0  # this side's copy; the next sync writes the page from the merged memories
    if kind != "memory":
        raise VaultError(f"unknown merge driver kind {kind!r}; expected {', '.join(KINDS)}")
    merged = merge_memory(old, mine, yours, path=path)
    ours.write_bytes(merged.text.encode("utf-8", errors="surrogateescape"))
    if merged.conflict is not None:
        from .. import store

        folder = Path(path).parent.as_posix()
        rel = store.choose_path(root, folder if folder != "." else "memories/global", merged.conflict)
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        fsio.write_atomic(target, render(merged.conflict), verify=read_back(rel, merged.conflict))
    return 0 if merged.clean else 1
