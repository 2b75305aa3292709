"""Sharing a vault through git: ``memvault git setup`` and the merge driver git runs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .options import Settings, common, echo, emit
from .root import cli


@cli.group("git")
def git_group() -> None:
    """Share the vault through git: merges that never conflict on memvault's own files."""


@git_group.command("setup")
@common
@click.pass_obj
def setup(settings: Settings) -> None:
    """Declare memvault's merge drivers in .gitattributes and register them in this clone.

    The journal merges as the union of both sides' events, a memory field by
    field, INDEX.md pages are written again after the merge. memvault init does
    this for a new vault, and the first command on a fresh clone registers the
    drivers; run it once for a vault made before, and commit .gitattributes.

    \b
    Example:
        memvault git setup && git add .gitattributes && git commit -m "memvault merge drivers"
    """
    from ..gitclone import ATTRIBUTES_FILE
    from ..gitclone import setup as run_setup
    from ..invocation import memvault_command

    root = settings.open_vault().root
    done = run_setup(root, memvault_command())

    def human() -> None:
        echo(f"{'wrote' if done.attributes_written else 'unchanged'} {root / ATTRIBUTES_FILE}")
        if not done.git:
            echo("not a git clone: run git init (or clone the shared vault), then memvault git setup")
        else:
            echo(f"merge drivers {'registered' if done.drivers_registered else 'already registered'} "
                 "in this clone's git config")

    emit(settings, {"vault": str(root), "attributes_written": done.attributes_written, "git": done.git,
                    "drivers_registered": done.drivers_registered}, human)


@git_group.command("merge-driver", hidden=True)
@click.argument("kind", type=click.Choice(("journal", "memory", "generated")))
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("path", required=False, default="")
@common
@click.pass_obj
def merge_driver(_settings: Settings, kind: str, base: Path, ours: Path, theirs: Path, path: str) -> None:
    """What git runs to merge one of memvault's files (%O %A %B %P); not for people."""
    from ..sharing.drivers import run_driver

    # git runs a driver at the top of the work tree, which %P is relative to.
    sys.exit(run_driver(kind, base, ours, theirs, path, Path.cwd()))


@git_group.command("sync")
@click.option("--remote", default="origin", show_default=True, help="The remote the vault is shared through.")
@common
@click.pass_obj
def sync(settings: Settings, remote: str) -> None:
    """Commit this machine's changes, merge the others', re-index, push.

    Quiet when there is nothing to do; one line when the remote cannot be
    reached (exit 75: the work stays committed here, the next run retries).
    Safe to run from a timer.

    \b
    Example:
        memvault git sync
    """
    from ..sharing.gitsync import git_sync

    result = git_sync(settings.open_vault(write=True), remote=remote)

    def human() -> None:
        if not result.changed:
            return
        parts = [f"committed {result.committed} files" if result.committed else "",
                 f"merged {result.merged} commits" if result.merged else "",
                 f"re-indexed {result.reindexed} memories" if result.reindexed else "",
                 "pushed" if result.pushed else ""]
        if any(parts):
            echo("; ".join(p for p in parts if p) + f" ({result.seconds:.1f} s)")
        kept = result.reconciled.kept if result.reconciled else []
        if kept:
            echo(f"kept {len(kept)} memories another machine forgot for good, because their text changed since "
                 "(or the forget names none): " + ", ".join(kept) + "; memvault status lists them")
        if result.recovered:
            echo("removed git locks a killed sync left: " + ", ".join(result.recovered))
        if result.restored:
            echo("replaced symlinks a commit put in the journal by their last versions: " + ", ".join(result.restored))
        if result.refused:
            echo(f"not published, symlinks: {', '.join(result.refused)}", err=True)
        if result.conflicts:
            echo(f"{len(result.conflicts)} file(s) to fix by hand (conflict markers, nothing of them staged): "
                 + ", ".join(result.conflicts) + "; fix them, then run memvault git sync again: it finishes the "
                 "merge", err=True)

    emit(settings, result.to_json(), human)
    if result.conflicts:
        sys.exit(1)
