"""How another program runs this installation of memvault (an agent's hooks, git's merge drivers), and
whether it was upgraded under a process that still runs the old code."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import NoReturn


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
_PACKAGE = Path(__file__).resolve().parent


def installed_code() -> tuple[tuple[int, int, int], ...]:
    """The identity (inode, size, modification time) of this installation's marker files as they are on
    disk now: it differs from the one a process read at its start once memvault was upgraded or
    reinstalled under it (that process still runs the old code)."""
    out = []
    for name in _MARKERS:
        try:
            found = (_PACKAGE / name).stat()
            out.append((found.st_ino, found.st_size, found.st_mtime_ns))
        except OSError:
            out.append((0, 0, 0))
    return tuple(out)


AT_IMPORT = installed_code()  # the install as this process found it (a daemon imports this module as it starts)


def upgraded_since_start() -> bool:
    """Whether memvault was upgraded or reinstalled on disk since this process read :data:`AT_IMPORT`."""
    return installed_code() != AT_IMPORT


UPGRADE_POLL = 1.0  # seconds between looks at the install, for a daemon that restarts itself on an upgrade


def stop_on_upgrade(stop: threading.Event) -> threading.Event:
    """Set ``stop`` once this installation is upgraded or reinstalled on disk (:func:`upgraded_since_start`);
    the returned event tells that this was why.  Looks every :data:`UPGRADE_POLL` seconds, in a daemon
    thread that ends with ``stop``."""
    upgraded = threading.Event()

    def look() -> None:
        while not stop.wait(UPGRADE_POLL):
            if upgraded_since_start():
                upgraded.set()
                stop.set()

    threading.Thread(target=look, name="memvault-upgrade-watch", daemon=True).start()
    return upgraded


def restart() -> NoReturn:
    """Run this command again in this process with the code now installed (the same arguments, the same
    process id, so a service manager sees no exit)."""
    command = memvault_command()
    os.execv(command[0], [*command, *sys.argv[1:]])
