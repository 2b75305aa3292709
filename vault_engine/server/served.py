"""Where a vault's server listens: ``.memvault/serve.json``, written by the server, read by every client
of the vault on this machine (the agents' hooks, ``memvault status``), and the lock that lets one
server win when two start at once (``serve.lock``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import store

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
    return root / store.STATE_DIR / SERVE_FILE


def read_served(root: Path) -> Served | None:
    """The server recorded for the vault at ``root``, if any (it may have ended without removing the file)."""
    try:
        data = json.loads(serve_file(root).read_text(encoding="utf-8"))
        return Served(str(data["host"]), int(data["port"]), str(data["token"]), int(data["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def alive(pid: int) -> bool:
    """Whether process ``pid`` is running (one of another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
