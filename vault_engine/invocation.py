"""How another program runs this installation of memvault: an agent's hooks, git's merge drivers."""

from __future__ import annotations

import sys
from pathlib import Path


def memvault_command() -> list[str]:
    """This installation's ``memvault`` script when it is the one running, else ``python -m vault_engine``
    with this interpreter: either way the same code, whatever ``PATH`` says when the command runs."""
    script = Path(sys.argv[0])
    if script.name == "memvault" and script.is_file():
        return [str(script.resolve())]
    return [sys.executable, "-m", "vault_engine"]


# Files every install of memvault replaces (pip writes each file anew, so an upgrade or a reinstall
# changes their identity even when the text is the same).
_MARKERS = ("__init__.py", "version.py")


def installed_code() -> tuple[tuple[int, int, int], ...]:
    """The identity (inode, size, modification time) of this installation's marker files as they are on
    disk now: it differs from the one a process read at its start once memvault was upgraded or
    reinstalled under it (that process still runs the old code)."""
    package = Path(__file__).resolve().parent
    out = []
    for name in _MARKERS:
        try:
            found = (package / name).stat()
            out.append((found.st_ino, found.st_size, found.st_mtime_ns))
        except OSError:
            out.append((0, 0, 0))
    return tuple(out)
