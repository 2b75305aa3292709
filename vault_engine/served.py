"""Where a vault's server listens: ``.memvault/serve.json``, written by the server, read by every client
of the vault on this machine (the agents' hooks, ``memvault status``), and the lock that lets one
server win when two start at once (``serve.lock``)."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import STATE_DIR

API_VERSION = 1
SERVE_FILE = "serve.json"
SERVE_LOCK = "serve.lock"


@dataclass(frozen=True, slots=True)
class Served:
    """Where a running server listens, as written to ``.memvault/serve.json``."""

    host: str
    port: int
    token: str
    pid: int

    def to_json(self) -> dict[str, Any]:
        return {"version": API_VERSION, "host": self.host, "port": self.port, "pid": self.pid, "token": self.token}

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


def serve_file(root: Path) -> Path:
    return root / STATE_DIR / SERVE_FILE


LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})  # where a server of memvault listens: nowhere else


def read_served(root: Path) -> Served | None:
    """The server recorded for the vault at ``root``, if any (it may have ended without removing the file).

    Only a file the server could have written counts: a regular file of this user that no one else may
    read or write (the server writes it 0600), naming a loopback address.  A ``serve.json`` that came
    with a teammate's commit (git checks files out 0644) or any other one would send this user's
    prompts, with a token, wherever it says, and show its answers to the agent as memories."""
    path = serve_file(root)
    try:
        found = os.lstat(path)
        if (not stat.S_ISREG(found.st_mode) or found.st_mode & 0o077
                or (hasattr(os, "geteuid") and found.st_uid != os.geteuid())):
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        served = Served(str(data["host"]), int(data["port"]), str(data["token"]), int(data["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return served if served.host in LOOPBACK and 0 < served.port < 65536 else None


def alive(pid: int) -> bool:
    """Whether process ``pid`` is running (one of another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
