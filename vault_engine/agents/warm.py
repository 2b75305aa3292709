"""The warm server a hook starts: later hooks find the model loaded, with no ``memvault serve`` running.

A hook that finds no server of its vault answers in this process (loading the
model costs 0.3-0.6 s) and starts ``memvault serve --port 0 --idle-exit SECONDS``
in the background for the hooks that follow.  It is the same server as
``memvault serve``: loopback only, a new token in ``.memvault/serve.json``
(mode 0600), the indexes kept current while files change.  It is safe to start
from every hook at once: one server per vault (``.memvault/serve.lock``, held
while it serves; a second one started at the same moment exits at once), it
runs in its own session with stdio on ``/dev/null`` (the agent never waits for
it, nothing is left as a zombie), and it exits once no request came for
``[server] warm_minutes`` (0: no warm server is started).  While it serves it
also drains the capture queue (:mod:`vault_engine.captures`).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from ..config import load

STARTED_FILE = ".memvault/warm-started"  # when a hook last started one (so hooks do not start one each)
START_GAP = 20.0  # seconds a started server gets to open the vault and write serve.json


def warm_seconds(root: Path) -> float:
    """How long a warm server of ``root`` may stay idle (0: none is started)."""
    try:
        return max(0.0, float(load(root).server.warm_minutes) * 60)
    except Exception:  # a config error is the vault's to report, not a hook's
        return 0.0


def start(root: Path, idle_seconds: float) -> subprocess.Popen[bytes] | None:
    """Start a warm server of ``root`` unless one was started in the last :data:`START_GAP` seconds; the
    process (never waited for), or None."""
    from ..invocation import memvault_command

    marker = root / STARTED_FILE
    try:
        if time.time() - marker.stat().st_mtime < START_GAP:
            return None
    except OSError:
        pass
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        return subprocess.Popen([*memvault_command(), "--vault", str(root), "serve", "--port", "0",
                                 "--idle-exit", f"{idle_seconds:g}"], cwd=str(root), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                                close_fds=True)
    except OSError:
        return None
