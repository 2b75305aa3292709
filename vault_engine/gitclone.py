"""The vault as a git clone: its git folder, and memvault's merge drivers declared in ``.gitattributes``
and registered in the clone's config.

``.gitattributes`` (written by ``memvault init`` and ``memvault git setup``, and
committed, so every clone has it) says which driver merges which file:

- ``memvault-journal``: ``journal/*.jsonl``, the union of both sides' events;
- ``memvault-memory``: every ``*.md`` file, merged field by field when it is a memory
  (anything else by git's own text merge);
- ``memvault-generated``: the ``INDEX.md`` pages, never merged: this side's copy is
  kept and the next sync writes the page again from the merged memories.

A driver is a command in the clone's own git config (never committed: a
repository cannot make git run commands), so each clone registers them:
``memvault init``, ``memvault git setup``, and the first memvault command run on
a clone whose ``.gitattributes`` names them.  A clone without the registration
merges as plain git does, conflict markers and all: nothing breaks, it only
stops being automatic.  What git runs then is :mod:`vault_engine.sharing.drivers`.
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import fsio
from .errors import VaultError

ATTRIBUTES_FILE = ".gitattributes"
BEGIN = "# memvault:begin - how git merges memvault's files (memvault git setup)"
END = "# memvault:end"
ATTRIBUTES = f"""{BEGIN}
journal/*.jsonl merge=memvault-journal
*.md merge=memvault-memory
INDEX.md merge=memvault-generated
{END}
"""
DRIVERS = {
    "memvault-journal": ("journal", "memvault: the events of both sides, each once, in time order"),
    "memvault-memory": ("memory", "memvault: a memory merged field by field"),
    "memvault-generated": ("generated", "memvault: generated page, written again by the next sync"),
}
KINDS = tuple(kind for kind, _ in DRIVERS.values())


def attributes_declared(root: Path) -> bool:
    """Whether the vault's ``.gitattributes`` names memvault's drivers."""
    try:
        return BEGIN in (root / ATTRIBUTES_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def with_attributes(text: str) -> str:
    """``text`` (a ``.gitattributes``) with memvault's block, replacing an older one."""
    if BEGIN in text and END in text:
        start, end = text.index(BEGIN), text.index(END) + len(END)
        return text[:start] + ATTRIBUTES.rstrip("\n") + text[end:]
    separator = "" if not text or text.endswith("\n") else "\n"
    return text + separator + ATTRIBUTES


def git_dir(root: Path) -> Path | None:
    """The clone's git folder when ``root`` is the top of a git work tree (a ``.git`` folder or file)."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():
        try:
            line = dot.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        if line.startswith("gitdir:"):
            found = Path(line.partition(":")[2].strip())
            return found if found.is_absolute() else (root / found).resolve()
    return None


def registered(root: Path) -> bool:
    """Whether the clone's config registers every driver (a read of its config file, no git run)."""
    folder = git_dir(root)
    if folder is None:
        return False
    config = folder / "config"
    if not config.is_file() and (folder / "commondir").is_file():  # a linked worktree: the main config
        config = (folder / (folder / "commondir").read_text().strip()).resolve() / "config"
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return all(f'[merge "{name}"]' in text for name in DRIVERS)


@dataclass(frozen=True, slots=True)
class Setup:
    """What :func:`setup` did."""

    attributes_written: bool
    drivers_registered: bool
    git: bool  # the vault is a git clone


def setup(root: Path, command: list[str], *, write_attributes: bool = True) -> Setup:
    """Declare the drivers in ``.gitattributes`` (``write_attributes``) and register them in the clone's
    config, to run ``command`` (this installation's memvault).  Idempotent.

    Raises:
        VaultError: git is missing or refuses the config change.
    """
    written = False
    if write_attributes:
        path = root / ATTRIBUTES_FILE
        try:
            # A link (committed by anyone) is never read: its target's text would be written here, then pushed.
            before = fsio.read_no_follow(path).decode("utf-8") if path.exists() and not path.is_symlink() else ""
        except (OSError, UnicodeDecodeError) as exc:
            raise VaultError(f"cannot read {ATTRIBUTES_FILE}: {exc}", path=path) from None
        after = with_attributes(before)
        if after != before or path.is_symlink():
            fsio.write_atomic(path, after)
            written = True
    if git_dir(root) is None:
        return Setup(written, False, git=False)
    changed = False
    for name, (kind, description) in DRIVERS.items():
        driver = shlex.join([*command, "--vault", str(root), "git", "merge-driver", kind]) + " %O %A %B %P"
        for key, value in (("name", description), ("driver", driver)):
            if _git_config(root, f"merge.{name}.{key}") != value:
                _git(root, "config", "--local", f"merge.{name}.{key}", value)
                changed = True
    return Setup(written, changed, git=True)


def ensure_registered(root: Path, command: list[str]) -> bool:
    """Register the drivers in a clone whose ``.gitattributes`` names them and whose config does not
    (a fresh clone); True when it did.  Never writes a tracked file; never raises."""
    try:
        if registered(root) or git_dir(root) is None or not attributes_declared(root):
            return False
        return setup(root, command, write_attributes=False).drivers_registered
    except (VaultError, OSError):
        return False


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        raise VaultError(f"git {args[0]} failed: {exc}") from None
    if done.returncode != 0:
        raise VaultError(f"git {args[0]} failed: {done.stderr.strip() or done.returncode}")
    return done.stdout


def _git_config(root: Path, key: str) -> str | None:
    try:
        return _git(root, "config", "--local", "--get", key).rstrip("\n")
    except VaultError:
        return None
