"""Commands on memories: add, import, show, list, correct, forget, rollback, feedback."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from ..errors import InvalidInput
from ..format.memory import AUTHORITIES, CLASSES, LIFECYCLES, OUTCOMES, RECALLS, SCOPES, TIERS, TRUSTS, TYPES
from ..limits import MAX_DOCUMENT, MAX_TEXT, check_length
from ..server.requests import DEPTHS
from ..server.views import add_json, change_json, entry_json, entry_line, feedback_json
from ..vault.results import escaped_notice
from .options import Settings, common, echo, emit, read_stdin, trust_option
from .root import cli

if TYPE_CHECKING:
    from ..format.kinds import Authority, MemoryClass, MemoryType, Recall, Scope, Tier, Trust
    from ..vault import FeedbackResult
    from ..vault.results import RunRollback


LONGER = f"a longer text is a document: memvault ingest-doc takes up to {MAX_DOCUMENT} characters"


def _choice(values: tuple[str, ...]) -> click.Choice[str]:
    return click.Choice(values, case_sensitive=True)


def _text(text: str, what: str) -> str:
    """TEXT, or standard input for ``-``, refused past :data:`~vault_engine.limits.MAX_TEXT` before anything
    is opened."""
    if text == "-":
        return read_stdin(MAX_TEXT, what, hint=LONGER)
    check_length(text, MAX_TEXT, what, hint=LONGER)
    return text


@cli.command()
@click.argument("text")
@click.option("--title", help="Title (default: the first line of TEXT).")
@click.option("--type", "type_", type=_choice(TYPES), default="fact", show_default=True, help="Kind of memory.")
@click.option("--class", "klass", type=_choice(CLASSES), help="What kind of knowledge this is.")
@click.option("--scope", type=_choice(SCOPES),
              help="global (every project) or project. Default: project when --project is given or in a "
                   "repository (global for core-profile and user-preference memories); else global.")
@click.option("--project", help="Project key, e.g. github.com/acme/api (default: the current repository's).")
@click.option("--path", "paths", multiple=True, help="Path glob where it applies (repeatable).")
@click.option("--task", "tasks", multiple=True, help="Task kind where it applies (repeatable).")
@click.option("--operation", "operations", multiple=True, help="Operation where it applies (repeatable).")
@click.option("--phase", "phases", multiple=True, help="Phase where it applies (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable).")
@click.option("--trust", type=_choice(TRUSTS), default="learned", show_default=True,
              help="How far the source is trusted.")
@click.option("--authority", type=_choice(AUTHORITIES), default="explicit", show_default=True,
              help="explicit (a person said so; starts proven) or inferred (starts trial).")
@click.option("--recall", type=_choice(RECALLS), help="passive (always in context), active or both.")
@click.option("--tier", type=_choice(TIERS), help="hot (resident) or cold (searchable).")
@click.option("--importance", type=click.FloatRange(0, 1), default=0.5, show_default=True, help="0 to 1.")
@click.option("--source", default="user", show_default=True, help="user | conversation:S | document:URI | tool:NAME")
@click.option("--summary", help="One-line summary (default: the leading sentences, up to 240 characters).")
@click.option("--trigger", help="When this memory should come to mind.")
@click.option("--force", is_flag=True, help="Keep text that looks like a one-off instruction.")
@click.option("--allow-forgotten", is_flag=True, help="Re-learn text that was permanently forgotten.")
@common
@click.pass_obj
def add(settings: Settings, text: str, title: str | None, type_: MemoryType, klass: MemoryClass | None,
        scope: Scope | None, project: str | None, paths: tuple[str, ...], tasks: tuple[str, ...],
        operations: tuple[str, ...], phases: tuple[str, ...], tags: tuple[str, ...], trust: Trust,
        authority: Authority, recall: Recall | None, tier: Tier | None, importance: float, source: str,
        summary: str | None, trigger: str | None, force: bool, allow_forgotten: bool) -> None:
    """Remember TEXT; prints the new id.

    Memories added by a person are explicit and start proven. The same text
    added twice adds evidence to the existing memory instead of a duplicate.
    In a repository a memory belongs to its project unless --scope global
    (see `memvault project`).

    \b
    Example:
        memvault add "Use pytest fixtures, not setUp" --path 'tests/**'
        memvault add "I prefer short answers" --scope global
    """
    from ..context.project import current_project
    from ..vault import NewMemory

    text = _text(text, "memory text")
    vault = settings.open_vault(write=True)
    here = current_project(Path.cwd(), vault.root) if not project and scope != "global" else None
    request = NewMemory(
        text=text, title=title, type=type_, klass=klass, scope=scope, project=project, paths=paths,
        tasks=tasks, operations=operations, phases=phases, tags=tags, trust=trust, authority=authority,
        recall=recall, tier=tier, importance=importance, source=source, summary=summary, trigger=trigger,
        current_project=here,
    )
    result = vault.add(request, allow_one_off=force, allow_forgotten=allow_forgotten)

    def human() -> None:
        echo(result.id)
        if result.notice:
            echo(result.notice, err=True)
        if result.created and here and result.project == here:
            echo(f"in project {here}: {result.path} (--scope global for every project)", err=True)

    emit(settings, add_json(result), human)


IMPORT_KINDS = ("claude-code-memory", "codex-memories", "agents-md", "claude-md")


@cli.command("import")
@click.argument("paths", metavar="FILE|PATH...", nargs=-1, required=True)
@click.option("--from", "kind", type=_choice(IMPORT_KINDS),
              help="Read the memories another tool keeps (Claude Code's auto memory, Codex's memories, "
                   "a hand-written AGENTS.md or CLAUDE.md) instead of memvault's JSONL.")
@click.option("--dry-run", is_flag=True, help="With --from: show what would be created or updated; write nothing.")
@click.option("--project", help="With --from: the project key the memories belong to (default: the git "
                                "repository of each file's folder; global for user-level files).")
@common
@click.pass_obj
def import_(settings: Settings, paths: tuple[str, ...], kind: str | None, dry_run: bool,
            project: str | None) -> None:
    """Bulk add from JSONL, or bring in memories kept for other agents.

    FILE (or - for stdin) is JSONL: one memory per line (frontmatter keys
    plus "body"). Valid lines are imported; each bad line is reported as
    FILE:LINE and the exit code is 1 when any line failed. A record imported
    before changes nothing, so importing a file again is safe.

    With --from, each PATH is read as that kind: each bullet, numbered list or
    paragraph of an AGENTS.md/CLAUDE.md (memvault's own exported block aside),
    each topic file of Claude Code's auto memory, each entry of Codex's
    memory_summary.md and MEMORY.md becomes one memory, typed (rule,
    preference, fact, procedure) from its words. Importing again updates
    what changed and duplicates nothing.

    \b
    Example:
        memvault import memories.jsonl
        memvault import --from claude-md --dry-run ./CLAUDE.md
        memvault import --from claude-code-memory ~/.claude/projects/*/memory
        memvault import --from codex-memories ~/.codex/memories
    """
    if kind is not None:
        _import_from(settings, kind, paths, dry_run, project)
        return
    if dry_run or project:
        raise click.UsageError("--dry-run and --project go with --from")
    if len(paths) != 1:
        raise click.UsageError("the JSONL form takes one FILE (or -); several paths are for --from")
    file = paths[0]
    vault = settings.open_vault(write=True)
    if file == "-":
        result = vault.import_jsonl(_lines(sys.stdin, "<stdin>"), "<stdin>")
    else:
        try:
            with open(file, encoding="utf-8-sig") as handle:  # a BOM is not part of line 1
                _refuse_prose(handle, file)
                result = vault.import_jsonl(_lines(handle, file), file)
        except OSError as exc:
            raise InvalidInput(f"cannot read file: {exc.strerror}", path=file) from None
        except UnicodeDecodeError:
            raise InvalidInput("not UTF-8 text: JSONL is UTF-8, one memory per line", path=file) from None
    data = {
        "imported": result.added,
        "merged": result.merged,
        "unchanged": result.unchanged,
        "errors": [e.one_line() for e in result.errors],
        "escaped": [{"line": e.line, "fields": dict(e.fields)} for e in result.escaped],
    }

    def human() -> None:
        echo(f"imported {len(result.added)} memories, {len(result.merged)} merged as evidence, "
             f"{len(result.unchanged)} imported before, {len(result.errors)} lines failed")

    emit(settings, data, human)
    if result.escaped:
        echo(escaped_notice(file, result.escaped), err=True)
    for error in result.errors:
        echo(f"error: {error.one_line()}", err=True)
    if result.errors:
        sys.exit(1)


def _refuse_prose(handle: TextIO, file: str) -> None:
    """Refuse, before anything is imported, a file whose first line is no JSON object but markdown or
    prose (notes someone meant to import): one line saying how notes come in.  ``handle`` is left at its
    start."""
    number, first = next(((n, line.strip()) for n, line in enumerate(handle, start=1) if line.strip()), (1, ""))
    handle.seek(0)
    if first and not first.startswith(("{", "[")):
        raise InvalidInput("not JSONL (one JSON object per line, such as {\"body\": \"...\"}): to bring in the "
                           "bullets and paragraphs of a markdown file as memories, run "
                           f"memvault import --from agents-md {file}", path=file, line=number)


def _import_from(settings: Settings, kind: str, paths: tuple[str, ...], dry_run: bool, project: str | None) -> None:
    """``import --from``: the files another tool keeps, planned, shown, and applied unless ``dry_run``."""
    from ..config import environment
    from ..ingest.memory_import import import_memories

    if "-" in paths:
        raise click.UsageError("--from reads files and folders: name them (not -)")
    home = environment().home
    vault = settings.open_vault(write=not dry_run)
    report = import_memories(vault, kind, [Path(p) for p in paths], dry_run=dry_run, project=project,
                             home=Path(home) if home else None)
    verbs = {"create": "would create" if dry_run else "created", "update": "would update" if dry_run else "updated",
             "unchanged": "unchanged", "skip": "skipped", "failed": "failed"}

    def human() -> None:
        for item in report.items:
            what = item.memory or item.type
            why = f"  ({item.reason})" if item.reason else ""
            where = item.project or "global"
            echo(f"{verbs[item.action]:<12} {what}  {item.source}  [{item.entry.kind}, {where}]{why}")
        counts = ", ".join(f"{report.count(a)} {verbs[a]}" for a in verbs if report.count(a))
        echo(f"{len(report.files)} files read: {counts or 'nothing to import'}")

    emit(settings, report.to_json(), human)
    if report.count("failed"):
        sys.exit(1)


def _lines(stream: TextIO, where: str) -> Iterator[str]:
    """The lines of ``stream``, none read past :data:`~vault_engine.limits.MAX_DOCUMENT` characters: of a longer
    line, the first ``MAX_DOCUMENT + 1`` stand for it (the import refuses it) and the rest is skipped unread."""
    try:
        while line := stream.readline(MAX_DOCUMENT + 1):
            if len(line) > MAX_DOCUMENT and not line.endswith("\n"):
                while (rest := stream.readline(MAX_DOCUMENT + 1)) and not rest.endswith("\n"):
                    pass
            yield line.removesuffix("\n")
    except UnicodeDecodeError:
        raise InvalidInput("file is not valid UTF-8", path=where) from None


@cli.command()
@click.argument("memory_id", metavar="ID")
@click.option("--depth", type=click.IntRange(min(DEPTHS), max(DEPTHS)), default=1, show_default=True,
              help="0: summary and trigger; 1: + a detailed summary, metadata and links; 2: + the full body.")
@click.option("--project", help="Show it only when it is a global memory or this project's (default: the current "
                                "repository's; see `memvault project`).")
@click.option("--all-projects", is_flag=True, help="Show a memory of any project, not only the current one's.")
@common
@click.pass_obj
def show(settings: Settings, memory_id: str, depth: int, project: str | None, all_projects: bool) -> None:
    """Show one memory by id, reading only as deep as needed.

    The detailed summary (depth 1) is written by the language model on the
    first request and kept in the detail cache under .memvault/; later
    requests read it from there. Showing a memory never changes its file.
    In a repository another project's memory is not shown (as search does
    not find it); --all-projects shows it.
    """
    from ..context.project import current_project
    from ..server.service import read
    from ..vault.scope import search_project

    if project and all_projects:
        raise click.UsageError("--project and --all-projects exclude each other")
    vault = settings.open_vault()
    scope = search_project(project, all_projects, lambda: current_project(Path.cwd(), vault.root))
    result = read(vault, memory_id, depth, scope)
    if result.warning:
        echo(result.warning, err=True)
    view = result.view
    emit(settings, view, lambda: echo(view["text"].rstrip("\n")))


@cli.command("list")
@click.option("--type", "type_", type=_choice(TYPES), help="Only this type.")
@click.option("--scope", type=_choice(SCOPES), help="Only this scope.")
@click.option("--project", help="Only memories of this project key.")
@click.option("--lifecycle", type=_choice(LIFECYCLES), help="Only this lifecycle.")
@click.option("--tier", type=_choice(TIERS), help="Only this tier.")
@trust_option("Only these trust levels (repeatable; any: all, the default).")
@click.option("--trash", "include_trash", is_flag=True, help="Include trashed memories.")
@common
@click.pass_obj
def list_(settings: Settings, type_: str | None, scope: str | None, project: str | None,
          lifecycle: str | None, tier: str | None, trust: tuple[str, ...], include_trash: bool) -> None:
    """List memories, filtered by any of the options."""
    entries, problems = settings.open_vault().list(
        type=type_, scope=scope, project=project, lifecycle=lifecycle, tier=tier, trust=trust,
        include_trash=include_trash,
    )
    data: dict[str, Any] = {
        "memories": [entry_json(e) for e in entries],
        "invalid": [p.one_line() for p in problems],
    }

    def human() -> None:
        for entry in entries:
            echo(entry_line(entry))
        echo(f"{len(entries)} memories", err=True)

    emit(settings, data, human)
    for problem in problems:
        echo(f"warning: {problem.one_line()}", err=True)


@cli.command()
@click.argument("memory_id", metavar="ID")
@click.argument("text")
@click.option("--title", help="New title (default: made from TEXT when the old title was made from the "
                                "old text; a title someone wrote is kept).")
@common
@click.pass_obj
def correct(settings: Settings, memory_id: str, text: str, title: str | None) -> None:
    """Correct a memory: a new version replaces it; the old one is kept as superseded."""
    text = _text(text, "correction text")
    result = settings.open_vault(write=True).correct(memory_id, text, title)
    emit(settings, change_json(result),
         lambda: echo(f"{result.id} supersedes {result.related}{_overviews_line(result.overviews)}"))


def _overviews_line(overviews: Sequence[str]) -> str:
    """A second line naming the overviews moved to the trash with a memory ("" when none)."""
    if not overviews:
        return ""
    return (f"\nalso moved to the trash: {', '.join(overviews)}, the overview that quoted its old text "
            "(maintain writes one again from the memories left)")


@cli.command()
@click.argument("memory_id", metavar="ID")
@click.option("--permanent", is_flag=True,
              help="Delete the file and scrub its text from the journal; the text is never re-learned.")
@common
@click.pass_obj
def forget(settings: Settings, memory_id: str, permanent: bool) -> None:
    """Forget a memory: move it to the trash (reversible), or purge it with --permanent."""
    result = settings.open_vault(write=True).forget(memory_id, permanent=permanent)
    message = (f"purged {memory_id}" if permanent
               else f"moved {memory_id} to {result.path} (undo: memvault rollback {memory_id})")
    message += _overviews_line(result.overviews)
    emit(settings, change_json(result), lambda: echo(message))


@cli.command()
@click.argument("memory_id", metavar="ID", required=False)
@click.option("--event", "event_id", metavar="EVENT", help="Undo exactly this journal event (from maintain's output).")
@click.option("--run", "run_id", metavar="RUN", help="Undo every action of one maintain run (its id: maintain's "
                                                     "last line), the last first.")
@common
@click.pass_obj
def rollback(settings: Settings, memory_id: str | None, event_id: str | None, run_id: str | None) -> None:
    """Undo the last correct, forget, superseding feedback or maintenance action of ID.

    With --run, undo a whole maintain run: its actions in reverse order,
    each as --event would; what cannot be undone (trash it purged for good)
    is listed with the reason, and the exit code is 1.
    """
    if run_id and (memory_id or event_id):
        raise click.UsageError("--run undoes a whole maintain run: give no ID or --event with it")
    if not (memory_id or event_id or run_id):
        raise click.UsageError("name a memory ID or give --event EVENT (or --run RUN)")
    vault = settings.open_vault(write=True)
    if run_id:
        _rollback_run(settings, vault.rollback_run(run_id))
        return
    result = vault.rollback(memory_id, event_id=event_id)

    def human() -> None:
        if result.action == "restored":
            echo(f"restored {result.id} to {result.path}")
        elif result.action == "reinstated":
            echo(f"{result.id} is current again; the feedback that superseded it is undone")
        elif result.action.startswith("undid "):
            others = f" (also {result.related})" if result.related else ""
            echo(f"{result.action} of {result.id}{others}")
            for conflict in result.conflicts:
                echo(f"  kept as is: {conflict}")
        else:
            echo(f"{result.id} is current again; {result.related} moved to the trash")

    emit(settings, change_json(result), human)


def _rollback_run(settings: Settings, result: RunRollback) -> None:
    """Print what ``rollback --run`` undid and kept; exit 1 when anything was kept."""
    data = {"run": result.run, "undone": [asdict(step) for step in result.undone],
            "kept": [asdict(step) for step in result.kept]}

    def human() -> None:
        for step in result.undone:
            echo(f"undid {step.kind:<9} {step.memory}  ({step.event})")
            for conflict in step.conflicts:
                echo(f"  kept as is: {conflict}")
        for step in result.kept:
            echo(f"kept  {step.kind:<9} {step.memory}  ({step.event}): {step.why}")
        echo(f"run {result.run}: {len(result.undone)} undone, {len(result.kept)} could not be undone")

    emit(settings, data, human)
    if result.kept and any(step.why != "rolled back before" for step in result.kept):
        raise SystemExit(1)


def _change_json(result: Any) -> dict[str, Any]:
    return {"action": result.action, "id": result.id, "path": result.path, "related": result.related,
            "event": result.event, "conflicts": list(getattr(result, "conflicts", ()))}


@cli.command()
@click.argument("memory_id", metavar="ID")
@click.option("--outcome", type=_choice(OUTCOMES), help="How the memory worked out (required).")
@click.option("--application", metavar="EVENT_ID",
              help="The application event that delivered ID; the same outcome for it counts once.")
@common
@click.pass_obj
def feedback(settings: Settings, memory_id: str, outcome: str | None, application: str | None) -> None:
    """Report how memory ID worked out when it was applied.

    used-successfully promotes a trial memory to proven; ignored and
    overridden only count; corrected and contributed-to-failure supersede an
    inferred memory (undo: memvault rollback ID). Explicit memories only count.

    \b
    Example:
        memvault feedback m-01hx... --outcome used-successfully --application e-01hy...
    """
    if outcome is None:  # checked here: click's own message for a missing choice spans several lines
        raise click.UsageError(f"Missing option '--outcome' (one of {', '.join(OUTCOMES)})",
                               ctx=click.get_current_context())
    result = settings.open_vault(write=True).feedback(memory_id, outcome, application=application)
    emit(settings, feedback_json(result), lambda: echo(feedback_line(result)))


def feedback_line(result: FeedbackResult) -> str:
    """One line: what a feedback did, e.g. ``recorded ignored for m-1: proven (ignored 2 times)``."""
    count = result.applied.get(result.outcome, 0)
    tally = f"{result.outcome.replace('-', ' ')} {count} time{'' if count == 1 else 's'}"
    if result.action == "already-recorded":
        return (f"already recorded {result.outcome} for {result.id} in {result.application}: "
                f"{result.lifecycle} ({tally})")
    change = result.lifecycle if result.old_lifecycle == result.lifecycle \
        else f"{result.old_lifecycle} -> {result.lifecycle}"
    undo = f"; undo: memvault rollback {result.id}" if result.action == "superseded" else ""
    return f"recorded {result.outcome} for {result.id}: {change} ({tally}{undo})"
