"""Settings files as ``memvault install`` reads and writes them: a person's files, kept as they were.

A settings file may hold tokens (``~/.claude.json``), be a symlink into a dotfiles repository, be
read-only on purpose, or use CRLF line endings.  So every file is read as it is (line endings
kept), parsed as JSON proper (no ``NaN``), and written back through its symlink with its mode and
owner; :func:`apply` checks every target is writable before writing any, and puts back the ones it
wrote when a later one fails: all files or none.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, VaultError
from ..fsio import write_atomic


@dataclass(frozen=True, slots=True)
class FileChange:
    """One settings file: its text now (None: absent) and after the change (None: removed)."""

    path: Path
    before: str | None
    after: str | None
    what: str  # one line: what the change is

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the change."""
        lines = difflib.unified_diff((self.before or "").splitlines(keepends=True),
                                     (self.after or "").splitlines(keepends=True),
                                     fromfile=str(self.path) if self.before is not None else "/dev/null",
                                     tofile=str(self.path) if self.after is not None else "/dev/null")
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "changed": self.changed, "what": self.what,
                "action": ("unchanged" if not self.changed else "create" if self.before is None
                           else "remove" if self.after is None else "update")}


def apply(changes: list[FileChange]) -> list[FileChange]:
    """Write the changed files, all or none (see the module); the ones written.

    Raises:
        InvalidInput: a file that cannot be written (read-only, its folder not writable, an I/O
            error); the files written before it are put back as they were.
    """
    todo = [change for change in changes if change.changed]
    for change in todo:
        _check_writable(change)
    done: list[FileChange] = []
    try:
        for change in todo:
            _write(change.path, change.after)
            done.append(change)
    except (OSError, VaultError) as exc:
        for change in reversed(done):
            with contextlib.suppress(OSError, VaultError):
                _write(change.path, change.before)
        detail = exc.one_line() if isinstance(exc, VaultError) else (exc.strerror or str(exc))
        raise InvalidInput(f"cannot write the file ({detail}); nothing was changed",
                           path=str(change.path)) from None
    return done


def _real(path: Path) -> Path:
    """Where ``path`` is written: the file a symlink points to (the link is kept), else ``path``."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _check_writable(change: FileChange) -> None:
    real = _real(change.path)
    try:
        info = real.stat()
    except FileNotFoundError:
        folder = next((p for p in (real.parent, *real.parent.parents) if p.exists()), None)
        if folder is not None and not os.access(folder, os.W_OK):
            raise InvalidInput(f"cannot create the file: {folder} is not writable; nothing was changed",
                               path=str(change.path)) from None
        return
    except OSError as exc:
        raise InvalidInput(f"cannot read file: {exc.strerror}; nothing was changed", path=str(change.path)) from None
    if not info.st_mode & stat.S_IWUSR or not os.access(real, os.W_OK):
        raise InvalidInput(f"the file is read-only (mode {stat.S_IMODE(info.st_mode):04o}); nothing was changed "
                           "(make it writable to install)", path=str(change.path))
    if not os.access(real.parent, os.W_OK):
        raise InvalidInput(f"its folder {real.parent} is not writable; nothing was changed", path=str(change.path))


def _write(path: Path, text: str | None) -> None:
    """``path`` made to hold ``text`` (None: removed), its mode, owner and symlink kept."""
    real = _real(path)
    if text is None:
        if path.is_symlink():  # the link stays: what it points to is emptied rather than left dangling
            text = "{}\n" if path.suffix == ".json" else ""
        else:
            path.unlink(missing_ok=True)
            return
    try:
        info: os.stat_result | None = real.stat()
    except FileNotFoundError:
        info = None
    real.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(info.st_mode) if info is not None else 0o644
    write_atomic(real, text.encode("utf-8"), mode=mode)
    if info is not None:
        os.chmod(real, mode)  # exactly as it was, whatever the umask
        if (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
            with contextlib.suppress(OSError):  # only root may give a file away; the mode is kept either way
                os.chown(real, info.st_uid, info.st_gid)


def read_text(path: Path) -> str | None:
    """The file's text as it is (CRLF kept: what is written back keeps the file's line endings)."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise InvalidInput("file is not valid UTF-8; not touched", path=str(path)) from None
    except OSError as exc:
        raise InvalidInput(f"cannot read file: {exc.strerror}", path=str(path)) from None


def loads_json(text: str, path: Path) -> Any:
    """``text`` parsed as JSON proper: NaN, Infinity and numbers past a double are refused (Python's
    parser takes them, and they would be written back as ``NaN`` or ``Infinity``, which is not JSON)."""
    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    def number(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            raise ValueError(f"{literal} is too large for a JSON number")
        return value

    try:
        return json.loads(text, parse_constant=constant, parse_float=number)
    except (ValueError, RecursionError) as exc:
        raise InvalidInput(f"not valid JSON ({exc}); not touched", path=str(path)) from None


def lf_edit(text: str, edit: Callable[[str], str]) -> str:
    """``edit`` made to a file written with CRLF as to one written with LF, then written back with CRLF."""
    if "\r\n" not in text or text.count("\r\n") != text.count("\n"):
        return edit(text)
    return edit(text.replace("\r\n", "\n")).replace("\n", "\r\n")


def endings_of(before: str | None, after: str | None) -> str | None:
    """``after`` with the line endings of ``before``: a file written with CRLF keeps CRLF (one that
    mixes both is left as the edit made it: its own lines keep theirs, as read)."""
    if before is None or after is None or "\r\n" not in before or before.count("\r\n") != before.count("\n"):
        return after
    return after.replace("\r\n", "\n").replace("\n", "\r\n")
