"""memvault context: the memories that apply to a task, within a budget, with the reasons."""

from __future__ import annotations

from pathlib import Path

import click

from .options import Settings, common, echo, echo_json, emit
from .root import cli


@cli.command()
@click.argument("task_text", metavar="[TASK]", required=False)
@click.option("--task", "task", help="What the agent is about to do (free text); or give it as TASK.")
@click.option("--path", help="The file or folder the task is about (matched against path selectors).")
@click.option("--operation", help="The operation, e.g. edit, commit, review (matched against operation selectors).")
@click.option("--phase", help="The phase, e.g. plan, implement, verify (matched against phase selectors).")
@click.option("--kind", help="The task kind, e.g. testing, refactor (matched against task selectors).")
@click.option("--project", help="Project key (default: the current repository's; see `memvault project`).")
@click.option("--budget", type=click.IntRange(0, None),
              help="Most characters to deliver (default: context.budget_chars, 6000).")
@click.option("--format", "fmt", type=click.Choice(("md", "json")), default="md", show_default=True,
              help="md: ready to paste into a prompt; json: the structure.")
@click.option("--out", "out", type=click.Path(dir_okay=False), help="Write the manifest to FILE instead of stdout.")
@click.option("--no-record", is_flag=True, help="Preview only: do not journal the delivery.")
@click.option("--overview", is_flag=True,
              help="A session's start: every current memory of the project may apply, not only those the task finds.")
@click.option("--sender", metavar="NAME",
              help="Who asks (default: [vault] sender, else git's user.name); memories of other senders are marked.")
@common
@click.pass_obj
def context(settings: Settings, task_text: str | None, task: str | None, path: str | None, operation: str | None,
            phase: str | None, kind: str | None, project: str | None, budget: int | None, fmt: str, out: str | None,
            no_record: bool, overview: bool, sender: str | None) -> None:
    """Render the context manifest for a task: what to always apply, and what may apply.

    \b
    Example:
        memvault context "add a login rate limit" --path src/auth/login.py
        memvault context --task "write release notes" --format json --budget 3000
        memvault context --task "deploy the api" --sender ada
    """
    from ..context.director import TaskRequest, as_json_text, build, describe
    from ..fsio import write_atomic

    if task is not None and task_text is not None and task != task_text:
        raise click.UsageError("give the task once: as TASK or as --task, not both", ctx=click.get_current_context())
    task = task if task is not None else task_text
    if task is None:
        raise click.UsageError("Missing the task: memvault context TASK (or --task TASK)",
                               ctx=click.get_current_context())

    vault = settings.open_vault(query=task)
    key = project
    if key is None:
        from ..context.project import identify

        key = identify(Path.cwd()).key
    request = TaskRequest(task, path=path, operation=operation, phase=phase, kind=kind, project=key, budget=budget,
                          overview=overview, sender=sender)
    manifest = build(vault, request, record=not no_record)
    as_json = settings.as_json or fmt == "json"
    text = as_json_text(manifest) + "\n" if as_json else manifest.markdown
    if out:
        write_atomic(Path(out), text)
        echo(f"wrote {out}: {describe(manifest)}", err=True)
    else:
        (echo_json if as_json else echo)(text, nl=False)
        echo(describe(manifest), err=True)
    if manifest.note:
        echo(f"note: {manifest.note}", err=True)


@cli.group()
def export() -> None:
    """Write memories where agents already look."""


@export.command("agents-md")
@click.option("--file", "file", type=click.Path(dir_okay=False), default="AGENTS.md", show_default=True,
              help="The file agents read (AGENTS.md, CLAUDE.md, ...).")
@click.option("--task", default="Work on this project", show_default=True, help="The task the manifest is for.")
@click.option("--path", help="Matched against path selectors.")
@click.option("--project", help="Project key (default: the current repository's).")
@click.option("--budget", type=click.IntRange(0, None), help="Most characters (default: context.budget_chars).")
@click.option("--overview", is_flag=True, help="Every current memory of the project may apply (what an agent "
                                               "reading the file at its start should know; memvault install codex).")
@common
@click.pass_obj
def export_agents_md(settings: Settings, file: str, task: str, path: str | None, project: str | None,
                     budget: int | None, overview: bool) -> None:
    """Put the context manifest in a marked block of FILE, replacing only that block.

    \b
    Example:
        memvault export agents-md --file CLAUDE.md
    """
    from ..context.director import TaskRequest, build, describe
    from ..context.export import write_agents_file

    key = project
    if key is None:
        from ..context.project import identify

        key = identify(Path.cwd()).key
    manifest = build(settings.open_vault(), TaskRequest(task, path=path, project=key, budget=budget, overview=overview),
                     record=False)
    changed = write_agents_file(Path(file), manifest.markdown)
    data = {"file": file, "changed": changed, "ids": manifest.ids, "used": manifest.used, "budget": manifest.budget}
    emit(settings, data, lambda: echo(f"{'updated' if changed else 'unchanged'} {file}: {describe(manifest)}"))
