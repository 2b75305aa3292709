"""What changed in a vault since the last look, from the kernel: a long-lived process's fresh reads for free.

Every read first makes the indexes current (:mod:`.freshness`): a walk that stats every
markdown file, about 3 ms at 400 memories and 70 ms at 10,000.  A process that serves many
reads (``memvault serve``, ``memvault mcp``, the warm server of the agents' hooks) asks the
kernel instead: it holds a Linux inotify watch on each folder the walk enters, and before a
read it takes the events queued since the last one without waiting (:meth:`ChangeFeed.dirty`).
No event about a memory file means no file the walk would report has changed, so the walk is
skipped; any such event, a lost event (the kernel's queue overflowed) or a folder created or
moved makes the next read walk as before.  The kernel queues an event when the write happens,
so an edit made before a read is seen by that read: the answer is as fresh as with the walk.

The feed is a shortcut, never a source of truth: the walk decides what changed.  Where the
kernel cannot be trusted to see every change, there is no feed and every read walks:
not Linux, a vault on a network or FUSE filesystem (another machine's writes raise no event
here), no inotify instance or watch left (``fs.inotify.max_user_instances``, ``max_user_watches``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
import threading
import weakref
from pathlib import Path

from .. import store

# <sys/inotify.h>
IN_MODIFY = 0x00000002
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

FILE_EVENTS = IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
WATCHED = FILE_EVENTS | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW
# Any of these and the folders are watched anew: a folder came, went or moved (its path is stale).
REWATCH = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED
EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name
# Filesystems whose changes all pass through this kernel (a network or FUSE one may change elsewhere).
LOCAL_FILESYSTEMS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "f2fs",
                               "reiserfs", "jfs", "bcachefs", "ramfs"})


class ChangeFeed:
    """The inotify watches on a vault's folders (see the module); thread-safe."""

    def __init__(self, root: Path, fd: int, libc: ctypes.CDLL):
        self.root = root
        self._fd = fd
        self._libc = libc
        self._lock = threading.Lock()
        self._folders: dict[int, str] = {}  # watch descriptor -> folder relative to the vault ("" its root)
        self._dirty = True  # nothing is known before the first walk
        self._closer = weakref.finalize(self, os.close, fd)
        self._watch_all()

    @classmethod
    def open(cls, root: Path) -> ChangeFeed | None:
        """A feed of the vault at ``root``; None where the kernel cannot give one (see the module)."""
        if not sys.platform.startswith("linux") or filesystem_type(root) not in LOCAL_FILESYSTEMS:
            return None
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.inotify_init1.argtypes = [ctypes.c_int]
            libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
            fd = int(libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC))
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        feed = cls(root, fd, libc)
        return feed if feed.available else None

    @property
    def available(self) -> bool:
        """Whether the feed can tell (False once closed, or once no watch was left: every read walks)."""
        return self._closer.alive and bool(self._folders)

    def dirty(self) -> bool:
        """Whether a memory file may have changed since the last call (True: walk); takes the queued events.
        A caller that could not bring the indexes current after a True calls :meth:`mark_dirty`."""
        with self._lock:
            if not self.available:
                return True
            changed, rewatch = self._drain()
            if rewatch:
                self._watch_all()
                changed = True
            was, self._dirty = self._dirty or changed, False
            return was

    def mark_dirty(self) -> None:
        """The next :meth:`dirty` says True (the last walk's changes were not all indexed)."""
        with self._lock:
            self._dirty = True

    def close(self) -> None:
        with self._lock:
            self._folders.clear()
            self._closer()

    def _drain(self) -> tuple[bool, bool]:
        """(a memory file may have changed, the folders must be watched anew) from the queued events."""
        changed = rewatch = False
        while True:
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                return changed, rewatch
            except OSError:
                return True, True
            offset = 0
            while offset + EVENT.size <= len(data):
                wd, mask, _cookie, size = EVENT.unpack_from(data, offset)
                name = data[offset + EVENT.size : offset + EVENT.size + size].rstrip(b"\0")
                offset += EVENT.size + size
                if mask & IN_Q_OVERFLOW:
                    changed = True
                elif mask & IN_IGNORED and wd not in self._folders:
                    continue  # a watch this feed removed
                elif mask & REWATCH or (mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO)):
                    changed = rewatch = True  # a folder came, went or moved: its files, and its path
                elif self._matters(wd, name):
                    changed = True

    def _matters(self, wd: int, name: bytes) -> bool:
        """Whether an event about file ``name`` in the folder of ``wd`` is about a file the walk reports."""
        folder = self._folders.get(wd)
        if folder is None:
            return True
        try:
            text = name.decode("utf-8")
        except UnicodeDecodeError:
            return False  # the walk skips such names
        return bool(text) and text[0] != "." and store.is_memory_name(text, not folder)

    def _watch_all(self) -> None:
        """Watch the vault's root and every folder the walk enters now, each before it is listed (a folder
        watched already keeps its watch, under its current path; the watches of folders gone are removed)."""
        folders: dict[int, str] = {}
        full = False

        def watch(folder: str) -> None:
            nonlocal full
            if full:
                return
            wd = int(self._libc.inotify_add_watch(self._fd, os.fsencode(self.root / folder), WATCHED))
            if wd >= 0:
                folders[wd] = folder
            elif folder == "" or ctypes.get_errno() == errno.ENOSPC:  # no watch left: every read walks
                full = True
            # else: gone since it was listed; its parent's event says so

        for _folder in store.walk(self.root, entered=watch):
            if full:
                break
        # The watches of folders gone (all of them when no watch is left) are removed; the IN_IGNORED each
        # removal queues is then about no folder watched, and skipped.
        dropped = set(self._folders) | set(folders) if full else set(self._folders) - set(folders)
        for wd in dropped:
            self._libc.inotify_rm_watch(self._fd, wd)
        self._folders = {} if full else folders
        self._dirty = True


def filesystem_type(path: Path) -> str:
    """The type of the filesystem holding ``path`` (``ext4``, ``nfs``, ``fuse.sshfs``; "" when unknown)."""
    try:
        target = os.path.realpath(path)
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    best, kind = -1, ""
    for line in lines:
        fields, _, rest = line.partition(" - ")
        parts = fields.split()
        if len(parts) < 5 or not rest:
            continue
        point = parts[4].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:
            best, kind = len(point), rest.split()[0]
    return kind

