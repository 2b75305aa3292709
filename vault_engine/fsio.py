"""Atomic file writes.

Every file memvault writes goes through :func:`write_atomic` (or
:func:`write_many_atomic` for bulk writes): the content goes to a uniquely
named temp file in the target's folder, is flushed to disk, then replaces the
target with ``os.replace``.  A crash at any point leaves either the old file
or the new one, never a torn one; a stray temp file is all that can remain,
and its name (``.<name>.<random>.tmp``) keeps it out of every scan.  The next
holder of the lock its writer held removes it (:func:`remove_temps`).  A writer
may have the temp file read back and checked (``verify``) before it replaces
anything: a check that fails leaves the target as it was.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from .errors import VaultBusy, VaultError
from .patterns import lazy_pattern

TEMP_SUFFIX = ".tmp"
_TEMP_NAME = lazy_pattern(r"\.(?P<target>.+)\.[0-9a-f]{12}" + re.escape(TEMP_SUFFIX))


_NAME_MAX = 255  # bytes in one file name (ext4, APFS, NTFS, tmpfs)


def temp_path_for(target: Path) -> Path:
    """A unique temp file name beside ``target`` (hidden, so scans skip it).

    The temp name is the target's plus 18 bytes: for a target name near the file system's
    limit, the middle of the name is left out (its start and its extension stay, which is
    all :func:`temp_target`'s callers look at).
    """
    name = target.name
    room = _NAME_MAX - 18
    encoded = name.encode("utf-8", "surrogateescape")
    if len(encoded) > room:
        _, dot, extension = name.rpartition(".")
        tail = (dot + extension).encode("utf-8", "surrogateescape")[-16:] if dot else b""
        head = encoded[: room - len(tail) - 1].decode("utf-8", "ignore").encode("utf-8", "surrogateescape")
        name = (head + b"~" + tail).decode("utf-8", "surrogateescape")
    return target.with_name(f".{name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")


def temp_target(name: str) -> str | None:
    """The name of the file a temp file of :func:`temp_path_for` was to replace (None: not such a name)."""
    match = _TEMP_NAME.fullmatch(name)
    return match["target"] if match else None


def remove_temps(folder: Path, targets: Callable[[str], bool]) -> list[Path]:
    """Delete the temp files a crash left in ``folder`` (not below it) for target names ``targets`` accepts.

    Call it only while holding the lock that every writer of those targets holds: the temp
    file of a write under way would go too.
    """
    removed: list[Path] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        target = temp_target(name)
        if target is None or not targets(target):
            continue
        try:
            (folder / name).unlink()
        except OSError:  # gone meanwhile, a folder, or not ours to remove: left alone
            continue
        removed.append(folder / name)
    if removed:
        _fsync_dir(folder)
    return removed


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


Verify = Callable[[bytes], None]  # raises when the bytes read back from a temp file are not what was meant


def _read_all(fd: int, size: int) -> bytes:
    chunks, offset = [], 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _write_temp(target: Path, data: bytes, fsync: bool, mode: int = 0o644, verify: Verify | None = None) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_path_for(target)
    fd = os.open(temp, (os.O_RDWR if verify is not None else os.O_WRONLY) | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if fsync:
            os.fsync(fd)
        if verify is not None:  # what the file holds, read back, before it replaces the target
            verify(_read_all(fd, os.fstat(fd).st_size))
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    os.close(fd)
    return temp


def _io_error(exc: OSError, path: Path) -> VaultError:
    return VaultError(f"cannot write file: {reason(exc)}", path=path)


_touched: contextvars.ContextVar[set[Path] | None] = contextvars.ContextVar("memvault_touched", default=None)


@contextlib.contextmanager
def recording() -> Iterator[set[Path]]:
    """Collect every path written or removed inside the block (so sync can look at just those)."""
    paths: set[Path] = set()
    token = _touched.set(paths)
    try:
        yield paths
    finally:
        _touched.reset(token)


def _record(*targets: Path) -> None:
    paths = _touched.get()
    if paths is not None:
        paths.update(targets)


def write_atomic(target: Path, data: bytes | str, *, mode: int = 0o644, verify: Verify | None = None) -> None:
    """Replace ``target`` with ``data`` atomically and durably (a new file gets ``mode``, before the umask).

    With ``verify``, the temp file is read back and handed to it before it replaces ``target``:
    when ``verify`` raises, the temp file is removed, ``target`` is left as it was, and the error propagates.
    """
    _record(target)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        temp = _write_temp(target, payload, fsync=True, mode=mode, verify=verify)
        try:
            os.replace(temp, target)
        except OSError:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
    except OSError as exc:
        raise _io_error(exc, target) from None
    _fsync_dir(target.parent)


def replace_unchanged(target: Path, data: bytes | str, expected: bytes, *, verify: Verify | None = None,
                      shown: str | None = None) -> None:
    """:func:`write_atomic`, only while ``target`` still holds ``expected`` (the text the writer read).

    The check is made on the open file right before the rename, and the replaced file is read
    again right after it: an editor's append that landed in that window (a ``>>`` or an editor
    that writes the file it opened) would be lost with the old file, so its text is put back and
    the write refused; a file renamed away meanwhile gets no second copy at its old name.

    Raises:
        VaultBusy: the file changed, moved or vanished since it was read (nothing of it is lost;
            a retry reads it again); ``shown`` is the path its message names (default: the file's name).
        VaultError: the file cannot be written.
    """
    label = shown or target.name
    _record(target)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        temp = _write_temp(target, payload, fsync=True, verify=verify)
    except OSError as exc:
        raise _io_error(exc, target) from None
    try:
        try:
            old = os.open(target, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
                raise
            raise _changed(label, moved=True) from None
        try:
            before = os.fstat(old)
            if _read_all(old, before.st_size) != expected:
                raise _changed(label, moved=False)
            ours = os.stat(temp).st_ino
            os.replace(temp, target)
            _undo_if_touched(target, old, expected, ours, label)
        finally:
            os.close(old)
    except OSError as exc:
        raise _io_error(exc, target) from None
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()
    _fsync_dir(target.parent)


def _changed(label: str, *, moved: bool) -> VaultBusy:
    what = "moved or deleted" if moved else "changed"
    return VaultBusy(f"{what} by another program while memvault was updating it; left as it is; try again",
                     path=label)


def _undo_if_touched(target: Path, old: int, expected: bytes, ours: int, label: str) -> None:
    """After the rename: when the replaced file was renamed away or written to in the moment before
    it, take the write back (the renamed file stands alone; the written text is put back)."""
    after = os.fstat(old)
    if after.st_nlink > 0:  # renamed (or linked) elsewhere before the rename: ours is a second copy
        with contextlib.suppress(OSError):
            if os.stat(target, follow_symlinks=False).st_ino == ours:
                os.unlink(target)
        raise _changed(label, moved=True)
    late = _read_all(old, after.st_size)
    if late == expected:
        return
    for _ in range(5):  # put their text back, until it stops growing under us
        write_atomic(target, late, mode=stat.S_IMODE(after.st_mode))
        again = _read_all(old, os.fstat(old).st_size)
        if again == late:
            break
        late = again
    raise _changed(label, moved=False)


def write_many_atomic(items: Sequence[tuple[Path, bytes | str]], verify: Sequence[Verify] | None = None) -> None:
    """Write many files, each atomically, with one flush to disk for all of them.

    All temp files are written first, flushed together, then renamed into
    place, so the cost of durability is paid once, not once per file.  With
    ``verify`` (one per item, as for :func:`write_atomic`) every temp file is
    read back first; when one does not pass, none of the files is written.
    """
    _record(*(target for target, _ in items))
    temps: list[tuple[Path, Path]] = []
    current = Path("?")  # the file being written when something fails
    try:
        for number, (target, data) in enumerate(items):
            current = target
            payload = data.encode("utf-8") if isinstance(data, str) else data
            check = verify[number] if verify is not None else None
            temps.append((_write_temp(target, payload, fsync=False, verify=check), target))
        os.sync()
        for temp, target in temps:
            current = target
            os.replace(temp, target)
    except BaseException as exc:
        for temp, _ in temps:
            with contextlib.suppress(OSError):
                temp.unlink()
        if isinstance(exc, OSError):
            raise _io_error(exc, current) from None
        raise
    for folder in {target.parent for _, target in temps}:
        _fsync_dir(folder)


def read_no_follow(path: Path, *, root: Path | None = None) -> bytes:
    """The bytes of ``path``, never through a symlink: a vault's file that is a link may point anywhere
    (a link committed to a shared vault, to a file of the machine that checks it out).  With ``root``
    (a folder ``path`` lies in) no folder between them may be a link either: one ``lstat`` each, far
    cheaper than resolving the whole path.

    Raises:
        OSError: unreadable, or a symlink on the way (``ELOOP``).
    """
    if root is not None:
        for folder in list(path.parents)[: len(path.relative_to(root).parts) - 1]:
            if stat.S_ISLNK(os.lstat(folder).st_mode):
                raise OSError(errno.ELOOP, f"{folder.name} is a symlink", str(folder))
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        return _read_all(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def reason(exc: OSError) -> str:
    """What an ``OSError`` of reading or writing a vault's file says, in a message's words."""
    if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link, or read_no_follow a linked folder
        return "it is a symlink; memvault never reads or writes through a link"
    return "disk is full" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))


def listed(folder: Path, pattern: str) -> tuple[list[Path], list[Path]]:
    """The regular files of ``folder`` matching ``pattern`` (hidden names left out), sorted; and the
    symlinks a reader must not follow: those among them, or ``folder`` itself when it is one."""
    if folder.is_symlink():
        return [], [folder]
    if not folder.is_dir():
        return [], []
    found = sorted(p for p in folder.glob(pattern) if not p.name.startswith("."))
    return [p for p in found if not p.is_symlink()], [p for p in found if p.is_symlink()]


def append_line(target: Path, line: str) -> None:
    """Append text to ``target`` durably; a torn last line is closed first.  Never through a symlink."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(target, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
        try:
            size = os.fstat(fd).st_size
            prefix = b""
            if size:
                last = os.pread(fd, 1, size - 1)
                if last != b"\n":
                    prefix = b"\n"
            payload = prefix + line.encode("utf-8")
            os.write(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _io_error(exc, target) from None


def remove(target: Path) -> None:
    """Delete a file (missing is fine) and make the removal durable."""
    _record(target)
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    _fsync_dir(target.parent)


def others_can_write(folder: Path) -> str | None:
    """Why another user could put files in ``folder`` (or the nearest folder above it that exists, or
    any folder above that), or None when only this user (and root) can: each belongs to this user or
    root and is writable by no one else, unless it is a sticky folder above it (``/tmp``: others may
    add entries there, not replace ours).  What memvault reads back from a cache there it would trust; POSIX only."""
    if os.name != "posix":
        return None
    me, my_group = os.geteuid(), os.getegid()
    try:
        path = folder.expanduser().resolve()
    except (OSError, RuntimeError):
        return f"{folder} cannot be resolved"
    for part in (path, *path.parents):
        try:
            found = part.stat()
        except (FileNotFoundError, NotADirectoryError):
            continue  # made later, by this user (or never: its writers say why)
        except OSError as exc:
            return f"{part} cannot be looked at ({reason(exc)})"
        if found.st_uid not in (me, 0):
            return f"{part} belongs to another user"
        if found.st_mode & stat.S_ISVTX and part != path:  # not the folder itself: others may add files there
            continue
        if found.st_mode & stat.S_IWOTH:
            return f"{part} is writable by every user"
        if found.st_mode & stat.S_IWGRP and found.st_gid != my_group:
            return f"{part} is writable by its group"
    return None
