"""Which vault a command means: ``--vault``, ``MEMVAULT_DIR``, a vault above the working folder, or the default.

One rule for every entry point: the command line (:func:`~vault_engine.store.discover`, which
creates the default vault on first use), the agents' hooks and ``memvault mcp``'s handshake
(:func:`find`, which creates nothing and imports nothing heavy: a hook runs on every prompt).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from .config import CONFIG_FILE, Environment
from .errors import VaultNotFound

Origin = Literal["--vault", "MEMVAULT_DIR", "folder", "default"]


def template_dir(env: Environment) -> Path:
    """The template vault shipped with memvault (or ``MEMVAULT_TEMPLATE``'s)."""
    candidates = [Path(env.template)] if env.template else []
    here = Path(__file__).resolve().parent
    candidates += [here / "_template", here.parent / "vault_template"]
    for candidate in candidates:
        if (candidate / CONFIG_FILE).is_file():
            return candidate
    raise VaultNotFound("the template vault is missing from this installation; reinstall memvault")


def is_vault(path: Path) -> bool:
    return (path / CONFIG_FILE).is_file()


def default_vault(env: Environment) -> Path:
    """``~/.memvault/vault``."""
    return Path(env.home or str(Path.home())) / ".memvault" / "vault"


def pick(explicit: Path | None, env: Environment, cwd: Path) -> tuple[Path, Origin]:
    """The vault the rules choose and where the choice came from; it need not exist yet (a ``--vault``
    or ``MEMVAULT_DIR`` that is no vault, or the default not yet created)."""
    given = _given(explicit, env)
    if given is not None:
        return given
    try:
        here = cwd.resolve()
    except OSError:
        here = cwd
    try:
        template: Path | None = template_dir(env).resolve()
    except VaultNotFound:
        template = None
    for folder in (here, *here.parents):
        if is_vault(folder) and folder != template:
            return folder, "folder"
    return default_vault(env), "default"


def find(explicit: Path | None, env: Environment, cwd: Path) -> Path | None:
    """The vault the command line would open, found without creating or opening it; None when it is not
    there (yet)."""
    path, _ = pick(explicit, env, cwd)
    return path if is_vault(path) else None


def to_create(explicit: Path | None, env: Environment, cwd: Path) -> Path:
    """Where ``memvault init`` with no PATH creates a vault: ``--vault``, else ``MEMVAULT_DIR`` (so the
    commands after it find the vault it made), else the working folder."""
    given = _given(explicit, env)
    return given[0] if given is not None else cwd.resolve()


def _given(explicit: Path | None, env: Environment) -> tuple[Path, Origin] | None:
    """The vault the person named: ``--vault``, else ``MEMVAULT_DIR``; None when neither."""
    if explicit is not None:
        return explicit.expanduser().resolve(), "--vault"
    if env.vault_dir:
        return Path(env.vault_dir).expanduser().resolve(), "MEMVAULT_DIR"
    return None
