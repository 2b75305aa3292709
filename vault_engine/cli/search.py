"""memvault search: hybrid search with filters and an explanation of every score."""

from __future__ import annotations

from pathlib import Path

import click

from ..format.memory import TYPES
from .options import Settings, common, echo, emit, trust_option
from .root import cli


@cli.command()
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 1000), help="Most hits to return (default: retrieval.limit).")
@click.option("--project", help="Only this project's memories and the global ones (default: the current "
                                "repository's; see `memvault project`).")
@click.option("--all-projects", is_flag=True, help="Search every project's memories, not only the current one's.")
@click.option("--path", help="Only memories whose path selectors match PATH (or that have none).")
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES), help="Only this type (repeatable).")
@trust_option("Only these trust levels (repeatable; any: all). Default: system and learned; "
              "external sources only when asked for, and labelled.")
@click.option("--weak", is_flag=True,
              help="When no memory clears the relevance floor, list the closest anyway (marked weak).")
@click.option("--explain", is_flag=True, help="Show each lane's rank and each boost.")
@common
@click.pass_obj
def search(settings: Settings, query: str, limit: int | None, project: str | None, all_projects: bool,
           path: str | None, types: tuple[str, ...], trust: tuple[str, ...], weak: bool, explain: bool) -> None:
    """Find memories by meaning and by exact words.

    In a repository the search covers its memories and the global ones (as
    context does); --all-projects covers every project.

    \b
    Example:
        memvault search "why does the deploy fail on staging" --project github.com/acme/api
        memvault search E1102 --explain --all-projects
    """
    from ..context.project import current_project
    from ..retrieval.searcher import SearchQuery
    from ..vault.scope import search_project

    if project and all_projects:
        raise click.UsageError("--project and --all-projects exclude each other: --project narrows the search "
                               "to one project, --all-projects widens it to every project")
    vault = settings.open_vault(query=query)
    scope = search_project(project, all_projects, lambda: current_project(Path.cwd(), vault.root))
    result = vault.search(SearchQuery(query, limit=limit, project=scope, path=path, types=types, trust=trust,
                                        weak=weak, count_external=True))
    searched = f"searched {scope} and global memories; --all-projects to widen" if scope else None

    def human() -> None:
        if result.notice:
            echo(result.notice + (" (--weak lists them)" if result.weak_left_out else ""), err=True)
        if explain and searched:
            echo(searched, err=True)
        for hit in result.hits:
            label = (" [external]" if hit.trust == "external" else "") + (" [weak]" if hit.weak else "")
            echo(f"{hit.score:.3f}  {hit.id}  {hit.title}{label}")
            detail = hit.snippet or hit.summary
            if detail:
                echo(f"       {detail}")
            if hit.trigger:
                echo(f"       when: {hit.trigger}")
            if hit.conflicts:
                echo(f"       conflicts with {', '.join(hit.conflicts)}: states another value")
            if explain:
                echo(f"       path: {hit.path}")
                for reason in hit.why:
                    echo(f"       - {reason}")
        if not result.hits:
            echo(f"no matches ({searched})" if searched else "no matches", err=True)
        for hit in result.revivable:
            echo(f"in the trash, matches strongly: {hit.id}  {hit.title}  "
                 f"(memvault trash restore {hit.id})", err=True)
            if explain:
                echo(f"       score {hit.score:.2f} >= retrieval.revive_score and evidence {hit.evidence:.2f} clears "
                     f"the relevance floor: trashed memories are never hits, a strong match is offered for "
                     f"revival; path: {hit.path}", err=True)

    emit(settings, result.to_json(), human)
