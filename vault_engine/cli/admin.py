"""Vault-level commands: init, status, trash, journal, sync, repair."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

import click

from ..server.views import entry_json, status_json
from .options import Settings, common, echo, emit
from .root import cli


@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--no-git", is_flag=True, help="Do not run git init.")
@common
@click.pass_obj
def init(settings: Settings, path: str | None, no_git: bool) -> None:
    """Create a vault from the template at PATH (default: --vault, $MEMVAULT_DIR or the current folder)."""
    from ..config import environment
    from ..location import to_create
    from ..store import create_vault

    target = (Path(path).expanduser().resolve() if path else
              to_create(Path(settings.vault_path) if settings.vault_path else None, environment(), Path.cwd()))
    created = create_vault(target, git=not no_git)
    if created and not no_git:  # git's merge drivers for the vault's files, for sharing it
        from ..gitclone import ensure_registered
        from ..invocation import memvault_command

        ensure_registered(target, memvault_command())
    message = f"created vault at {target}" if created else f"vault already exists at {target}"
    emit(settings, {"vault": str(target), "created": created}, lambda: echo(message))


@cli.command()
@common
@click.pass_obj
def status(settings: Settings) -> None:
    """Vault location, counts, hot-tier usage, journal and index state."""
    report = settings.open_vault().status()

    def human() -> None:
        echo(f"vault:     {report.vault}")
        kinds = ", ".join(f"{k} {v}" for k, v in report.by_type.items()) or "none"
        echo(f"memories:  {report.memories} ({kinds})")
        echo("lifecycle: " + (", ".join(f"{k} {v}" for k, v in report.by_lifecycle.items()) or "-"))
        echo("tiers:     " + (", ".join(f"{k} {v}" for k, v in report.by_tier.items()) or "-"))
        share = report.hot_chars / report.hot_budget * 100 if report.hot_budget else 0
        echo(f"hot tier:  {report.hot_chars} / {report.hot_budget} characters ({share:.0f}%)")
        echo(f"trash:     {report.trash}")
        echo(f"journal:   {report.journal_events} events")
        echo(f"index:     {report.index}")
        echo(f"model:     {report.embedding_model}")
        echo(f"invalid:   {len(report.invalid)} files")
        queue = report.captures
        if queue.get("pending") or queue.get("failed"):
            age = queue.get("oldest_seconds")
            echo(f"captures:  {queue.get('pending', 0)} pending" + (f" (oldest {_age(age)})" if age is not None else "")
                 + (f", {queue['failed']} failed" if queue.get("failed") else ""))
        else:
            echo("captures:  none pending")
        if queue.get("last_error"):
            echo(f"  last capture error: {queue['last_error']}")
        for line in report.invalid + report.journal_warnings + report.kept_from_purges:
            echo(f"  {line}")

    emit(settings, status_json(report), human)


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


@cli.group()
def trash() -> None:
    """List, restore or empty the trash."""


@trash.command("list")
@common
@click.pass_obj
def trash_list(settings: Settings) -> None:
    """Trashed memories with their expiry dates."""
    entries = settings.open_vault().trash_list()

    def human() -> None:
        for entry in entries:
            data = entry_json(entry)
            echo(f"{entry.memory.id}  expires {data['expires_at'] or '-'}  {entry.memory.title}")
        echo(f"{len(entries)} in the trash", err=True)

    emit(settings, {"trash": [entry_json(e) for e in entries]}, human)


@trash.command("restore")
@click.argument("memory_id", metavar="ID")
@common
@click.pass_obj
def trash_restore(settings: Settings, memory_id: str) -> None:
    """Bring ID back from the trash to where it was."""
    result = settings.open_vault(write=True).restore(memory_id)
    emit(settings, {"action": result.action, "id": result.id, "path": result.path},
         lambda: echo(f"restored {result.id} to {result.path}"))


@trash.command("empty")
@click.option("--expired", is_flag=True, help="Only delete items whose expiry date has passed.")
@common
@click.pass_obj
def trash_empty(settings: Settings, expired: bool) -> None:
    """Delete trashed memories for good."""
    purged = settings.open_vault(write=True).trash_empty(expired_only=expired)
    emit(settings, {"purged": purged}, lambda: echo(f"deleted {len(purged)} trashed memories"))


@cli.group()
def journal() -> None:
    """Inspect and replay the experience journal."""


@journal.command("replay")
@click.option("--apply", "apply_", is_flag=True, help="Rewrite files whose lifecycle or counters disagree.")
@common
@click.pass_obj
def journal_replay(settings: Settings, apply_: bool) -> None:
    """Rebuild lifecycle and counters from the journal; show (or --apply) the differences."""
    vault = settings.open_vault(write=apply_)
    diffs = vault.replay_apply() if apply_ else vault.replay_diff()
    data = {"applied": apply_, "differences": [asdict(d) for d in diffs], "warnings": vault.journal.warnings}

    def human() -> None:
        for d in diffs:
            echo(f"{d.path}: {d.key}: file {d.file_value!r}, journal {d.journal_value!r}")
        verb = "fixed" if apply_ else "found"
        echo(f"{verb} {len(diffs)} differences" + ("" if apply_ or not diffs else " (use --apply to fix)"))

    emit(settings, data, human)
    for warning in vault.journal.warnings:
        echo(f"warning: {warning}", err=True)
    if diffs and not apply_:
        sys.exit(1)


@cli.command("sync")
@click.option("--full", is_flag=True, help="Rebuild both indexes from scratch (vectors come from the cache).")
@click.option("--background", is_flag=True, hidden=True,
              help="Run as the vault's background filler: exit at once when one already runs.")
@common
@click.pass_obj
def sync_(settings: Settings, full: bool, background: bool) -> None:
    """Bring the search indexes in line with the files (only changed files are re-read).

    The full text is current first; then the vectors of what changed are
    computed (a bar on a terminal). Ctrl-C while they are computed keeps
    what is done: search works meanwhile and says how far the vectors are.
    """
    vault = settings.open_vault()
    if background:
        from ..vault.indexes import run_filler

        run_filler(vault)
        return
    report = vault.sync(full=full)
    plan = report.plan
    data = {
        "added": list(plan.added), "modified": list(plan.modified), "moved": list(plan.moved),
        "deleted": list(plan.deleted), "unchanged": plan.unchanged, "parsed": report.parsed,
        "embedded": report.embedded, "cached": report.cached, "pending": report.pending,
        "invalid": [p.one_line() for p in report.problems], "notice": report.notice,
    }
    if report.notice and not settings.as_json:
        echo(report.notice, err=True)
    emit(settings, data, lambda: echo(f"synced: {plan.summary()}; {report.vectors_line()}"))
    for problem in report.problems:
        echo(f"warning: {problem.one_line()}", err=True)


@cli.group("cache")
def cache() -> None:
    """The embedding cache this user's vaults share (one vector per embedded text)."""


@cache.command("status")
@common
@click.pass_obj
def cache_status(settings: Settings) -> None:
    """Where the embedding cache is, what it holds and its bound."""
    from ..vault.indexes import embedding_cache_status

    state = embedding_cache_status(settings.open_vault())
    data = {"path": str(state.path), "vectors": state.vectors, "bytes": state.bytes, "max_bytes": state.max_bytes,
            "models": dict(state.per_model), "problem": state.problem, "graphs": dict(state.graphs)}

    def human() -> None:
        echo(f"cache:   {state.path}")
        echo(f"vectors: {state.vectors}" + "".join(f"\n  {model}: {n}" for model, n in state.per_model.items()))
        bound = f"{state.max_bytes / 1e6:.0f} MB" if state.max_bytes else "off ([cache] embeddings_mb = 0)"
        echo(f"size:    {state.bytes / 1e6:.1f} MB of {bound}")
        for name, size in state.graphs.items():
            echo(f"graph:   {name} ({size / 1e6:.0f} MB; the model's int8 graph, derived again when deleted)")
        if state.problem:
            echo(f"warning: {state.problem}", err=True)

    emit(settings, data, human)


@cache.command("clear")
@common
@click.pass_obj
def cache_clear(settings: Settings) -> None:
    """Empty the embedding cache (the vaults' indexes keep their vectors)."""
    from ..vault.indexes import clear_embedding_cache

    cleared = clear_embedding_cache(settings.open_vault())
    emit(settings, {"cleared": cleared}, lambda: echo(f"cleared {cleared} vectors from the embedding cache"))


@cli.command("repair")
@click.option("--dry-run", is_flag=True, help="Say which files would get a new id; change nothing.")
@common
@click.pass_obj
def repair(settings: Settings, dry_run: bool) -> None:
    """Give each file that holds another memory's id an id of its own.

    Of several files holding one id, the one already indexed keeps it; each other
    file (a copy made by hand, a file from elsewhere) is ignored until repaired.
    Undo one with: memvault rollback NEW-ID.
    """
    done = settings.open_vault(write=not dry_run).repair(dry_run=dry_run)

    def human() -> None:
        for item in done:
            echo(f"{item.path}: {item.old} -> {item.new} ({item.old} stays with {item.kept})")
        echo(f"{'would give' if dry_run else 'gave'} {len(done)} files an id of their own")

    emit(settings, {"dry_run": dry_run, "repaired": [item.to_json() for item in done]}, human)
