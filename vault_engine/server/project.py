"""The project a server was started in: the default of its requests, and the root of relative paths."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import VaultError

if TYPE_CHECKING:
    from ..context.project import ProjectIdentity

log = logging.getLogger("vault_engine.server")


class CurrentProject:
    """The repository around the working folder: its key (for defaults) and root (to relativise paths).

    Identified on first use, once. ``key`` names the project instead (``memvault serve --project``);
    ``vault_root`` is the vault served, whose own folder is not a project (see :meth:`work_key`).
    """

    def __init__(self, folder: Path | None = None, *, key: str | None = None, vault_root: Path | None = None):
        self._folder = folder
        self._key = key or None
        self._vault_root = vault_root
        self._lock = threading.Lock()
        self._identity: ProjectIdentity | None = None
        self._done = False

    def identity(self) -> ProjectIdentity | None:
        with self._lock:
            if not self._done:
                from ..context.project import identify

                try:
                    self._identity = identify(self._folder or Path.cwd())
                except (OSError, VaultError) as exc:
                    log.warning("cannot identify the current project: %s", exc)
                self._done = True
                if self._identity is not None and self._key is None:
                    log.info("current project: %s (%s)", self._identity.key, self._identity.how)
            return self._identity

    def key(self) -> str | None:
        """The project of context requests that name none: the named one, else the folder's key."""
        if self._key is not None:
            return self._key
        identity = self.identity()
        return identity.key if identity is not None else None

    def work_key(self) -> str | None:
        """The project searches and new memories default to: the named one, else the folder's repository
        (None outside any repository and in the vault's own folder: search every project, remember globally)."""
        if self._key is not None:
            return self._key
        from ..context.project import work_key

        identity = self.identity()
        if identity is None:
            return None
        return work_key(identity, self._folder or Path.cwd(), self._vault_root)

    def relative(self, path: str) -> str:
        """``path`` relative to the repository root when it is an absolute path inside it."""
        if not os.path.isabs(path):
            return path
        identity = self.identity()
        if identity is None or identity.root is None:
            return path
        for base, target in ((identity.root, Path(path)), (identity.root.resolve(), Path(path).resolve())):
            with contextlib.suppress(ValueError, OSError):
                return target.relative_to(base).as_posix()
        return path
