"""What an editor writes to a memory file after memvault replaced it is kept."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from vault_engine import fsio, late_writes
from vault_engine.late_writes import LateWrites


def _replaced_while_open(path: Path, new: bytes) -> int:
    """The file at ``path`` opened (as an editor holds it), then replaced by memvault: the editor's descriptor."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    fsio.replace_unchanged(path, new, path.read_bytes())
    return fd


def test_an_append_landing_after_the_replacement_is_appended_to_the_new_file(tmp_path: Path) -> None:
    path = tmp_path / "m.md"
    path.write_bytes(b"---\nid: m-a\n---\nold body\n")
    fd = _replaced_while_open(path, b"---\nid: m-a\nsuperseded_by: m-b\n---\nold body\n")
    os.write(fd, b"Edited by hand.\n")  # too late for the check right after the rename
    os.close(fd)
    late_writes.default(fsio._merge_late).check(final=True)
    assert path.read_bytes() == b"---\nid: m-a\nsuperseded_by: m-b\n---\nold body\nEdited by hand.\n"


def test_the_background_watch_keeps_it_without_being_asked(tmp_path: Path) -> None:
    path = tmp_path / "m.md"
    path.write_bytes(b"body")
    fd = _replaced_while_open(path, b"new body")
    os.write(fd, b"\nhand line")
    os.close(fd)
    deadline = time.monotonic() + 5
    while b"hand line" not in path.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert path.read_bytes() == b"new body\nhand line"


def test_a_change_that_is_no_append_is_kept_beside_the_file(tmp_path: Path) -> None:
    path = tmp_path / "m.md"
    path.write_bytes(b"first version\n")
    fd = os.open(path, os.O_WRONLY)
    fsio.replace_unchanged(path, b"memvault's version\n", b"first version\n")
    os.pwrite(fd, b"FIRST", 0)  # rewritten in place, not appended
    os.close(fd)
    late_writes.default(fsio._merge_late).check(final=True)
    assert path.read_bytes() == b"memvault's version\n"
    kept = sorted(tmp_path.glob(".m.md.edit-*"))
    assert [p.read_bytes() for p in kept] == [b"FIRST version\n"]


def test_a_file_left_alone_is_never_touched_again(tmp_path: Path) -> None:
    path = tmp_path / "m.md"
    path.write_bytes(b"old")
    fsio.replace_unchanged(path, b"new", b"old")
    before = path.stat()
    late_writes.default(fsio._merge_late).check(final=True)
    assert path.read_bytes() == b"new" and path.stat().st_ino == before.st_ino
    assert not list(tmp_path.glob(".m.md.edit-*"))


def test_at_most_a_bounded_number_of_files_is_watched(tmp_path: Path) -> None:
    merged: list[bytes] = []
    watcher = LateWrites(lambda _target, _expected, late: merged.append(late))
    for n in range(late_writes.MAX_WATCHED + 10):
        path = tmp_path / f"{n}.md"
        path.write_bytes(b"x")
        with open(path, "rb") as handle:
            watcher.watch(handle.fileno(), path, b"x", start=False)
    assert watcher.pending() == late_writes.MAX_WATCHED
    watcher.check(final=True)
    assert watcher.pending() == 0 and merged == []


def test_a_late_append_is_kept_when_the_process_exits_at_once(tmp_path: Path) -> None:
    """The last look at exit: a command that replaced a file and ended before the watch's next poll."""
    path = tmp_path / "m.md"
    path.write_bytes(b"body\n")
    script = (
        "import os, sys\nfrom pathlib import Path\nfrom vault_engine import fsio\n"
        "p = Path(sys.argv[1])\nfd = os.open(p, os.O_WRONLY | os.O_APPEND)\n"
        "fsio.replace_unchanged(p, b'new body\\n', b'body\\n')\nos.write(fd, b'hand line\\n')\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=60)
    assert path.read_bytes() == b"new body\nhand line\n"
