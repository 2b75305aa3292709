"""``memvault project``: the project key of a folder."""

from __future__ import annotations

from pathlib import Path

import click

from .options import Settings, common, echo, emit
from .root import cli


@cli.command()
@click.argument("path", required=False, default=".",
                type=click.Path(exists=True, file_okay=True, dir_okay=True, path_type=Path))
@common
@click.pass_obj
def project(settings: Settings, path: Path) -> None:
    """The project key of PATH (default: the current folder).

    The key comes from the git `origin` remote, else the repository's first
    commit, else the folder; every worktree of a repository gets the same key.

    \b
    Example:
        memvault project
        memvault project ~/src/api --json
    """
    from ..context.project import identify

    found = identify(path)
    data = {"key": found.key, "how": found.how, "detail": found.detail,
            "root": str(found.root) if found.root is not None else None}
    emit(settings, data, lambda: echo(f"{found.key}  ({found.how}: {found.detail})"))
